"""The text lint tells premises from leaks (issue: 14 of 36 generated items carried a badge reviewers learnt to ignore)."""

from __future__ import annotations

from commet.format.model import Feedback, StoryTurn, Turn
from commet.generation.llm.lint import lint_reveals


def _st(task: str, turns: list[Turn]) -> StoryTurn:
    return StoryTurn(id="s", task=task, category="Belief", turns=turns)


def _leaks(st: StoryTurn) -> list[tuple[int, str]]:
    return [(f.turn, f.message) for f in lint_reveals(st)]


def test_a_belief_stated_as_the_premise_of_a_false_belief_story_is_not_a_leak() -> None:
    premise = _st("diverse_belief", [
        Turn(story="Kim's cat is hiding. Kim thinks the cat is in the garage; it is really under the bed.",
             question="Where will Kim look for her cat?", answers=["In the garage"]),
        Turn(story="", question="Why will she look there?", answers=["Because she thinks the cat is in the garage"]),
    ])
    assert _leaks(premise) == []


def test_a_stated_answer_to_this_or_a_later_question_is_a_leak() -> None:
    same_turn = _st("false_belief_location", [
        Turn(story="Ana puts her ball in the basket and goes out. Ana will look in the basket when she is back.",
             question="Where will Ana look for her ball?", answers=["The basket"]),
    ])
    [(turn, message)] = _leaks(same_turn)
    assert turn == 0 and "this turn's story" in message and "'The basket'" in message

    later = _st("false_belief_location", [
        Turn(story="Ana thinks her ball is in the basket. She will look for it in the basket.",
             question="Is the ball in the basket now?", answers=["No"]),
        Turn(story="Ben moved it to the box.", question="Where is the ball really?", answers=["In the box"]),
        Turn(story="", question="Where will Ana look for her ball?", answers=["The basket"]),
    ])
    [(turn, message)] = _leaks(later)
    assert turn == 2 and "the story of turn 1" in message

    feeling = _st("emotion_reminder", [
        Turn(story="Lena sees the pony and feels scared.", question="How does Lena feel?", answers=["Scared"]),
    ])
    assert [turn for turn, _ in _leaks(feeling)] == [0]


def test_feedback_and_desire_premises_are_not_leaks() -> None:
    desire = _st("diverse_desire", [
        Turn(story="Meet Sam. There is an apple and a cookie.", question="Which snack do you like, the apple or the "
             "cookie?", answers=["The apple", "The cookie"]),
        Turn(story="Sam likes the cookie best.",
             feedback=Feedback(by_answer=[{"answer": "The apple", "text": "You like the apple? Sam does not."},
                                          {"answer": "The cookie", "text": "You like the cookie? Sam does not."}]),
             question="Which snack will Sam pick?", answers=["The cookie"]),
    ])
    assert _leaks(desire) == []
    explained = _st("false_belief_location", [
        Turn(story="Ana puts her ball in the basket and goes out. She did not see Ben move the ball to the box.",
             question="Where will Ana look?", answers=["The basket"]),
        Turn(story="", question="Why?", answers=["Because she did not see Ben move the ball to the box"]),
    ])
    assert _leaks(explained) == []  # the premise is told, not the explanation
    told = explained.model_copy(update={"turns": [explained.turns[0].model_copy(update={
        "story": "Ana puts her ball in the basket and goes out. She looks in the basket because she did not see "
                 "Ben move the ball to the box."}), explained.turns[1]]})
    assert [turn for turn, _ in _leaks(told)] == [0, 1]
