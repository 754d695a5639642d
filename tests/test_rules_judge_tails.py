"""Rules judge v5: what follows an answer is read, clause by clause, or the reply is undecided.

A probe found the judge accepting whatever followed an answer unless a listed word spoiled it: 79 wrong
decided verdicts in 973 replies ("Sally will look in the basket. Reverse that.", "Yes, she's lying. Flip
it.", "Sad, said no one ever.", "Most people's answer: the basket. I know better.", ", Anne wrongly
thinks.", a seat "D" of the story read as a stray option letter). tests/data/rules_judge_v5_tails.jsonl holds
that probe; rules_judge_v5_blind.jsonl 610 replies written after the fix, blind to the code. The tests below
use other wording than both sets.
"""

from __future__ import annotations

import pytest

from commet.judges.base import JudgeRequest
from commet.judges.rules import RulesJudge, decide
from tests.test_judges_calibration import SAMPLE, bench

STORY = "Zoe hides her cookie in the tin and goes to the park. While she is out, Max moves the cookie to the jar."
WHERE = "Where will Zoe look for her cookie?"
JARS = (("A", "the tin"), ("B", "the jar"))
LIE_STORY = "Pia ate the last cake and told Mum that the cat ate it."
LIE = "Is Pia lying to Mum?"


def _ask(question: str, expected: str, response: str, options: tuple[tuple[str | None, str], ...] = (),
         story: str = STORY) -> str:
    request = JudgeRequest(story_id="s", task="t", turn=0, context=(), story=story, question=question,
                           expected=(expected,), response=response, options=options, options_shown=True)
    return decide(request)[0]


@pytest.mark.parametrize("name", ["rules_judge_v5_tails.jsonl", "rules_judge_v5_blind.jsonl"])
async def test_no_wrong_decided_verdict_on_the_v5_sets(name: str) -> None:
    cases = bench.load_labelled(bench.CALIBRATION.with_name(name))
    assert len(cases) > 600 and sum(case.story != "" for case in cases) > 400  # stories apart from questions
    figures = await bench.measure(RulesJudge(), cases, SAMPLE)
    assert [(o.case.response, o.case.label, o.rationale) for o in figures.wrong] == []
    assert len(figures.decided) > 150  # it still reads the plain replies of both sets


@pytest.mark.parametrize("tail", [
    "Undo that.", "Scrap that.", "Take that back.", "Never mind.", "Kidding!", "Only joking.", "Psych!",
    "That's not serious.", "Not really.", "This is a fake answer.", "Pretend I didn't say that.", "Cross that out.",
    "As if I'd believe that.", "Lol no.", "Or not.", "I'm lying.", "You wish.", "Nope, the opposite.", "Sike.",
    "Wrong, obviously.", "In another universe.", "Ha.", "Oh well.", "Backwards, of course.",
])
def test_an_answer_taken_back_or_joked_about_is_undecided(tail: str) -> None:
    for answer in ("Zoe will look in the tin.", "A.", "The tin."):
        assert _ask(WHERE, "the tin", f"{answer} {tail}", JARS) == "undecided", f"{answer} {tail}"
    assert _ask(LIE, "Yes", f"Yes, she is lying. {tail}", story=LIE_STORY) == "undecided", tail


@pytest.mark.parametrize("reply", [
    "Zoe will look in the tin, Max reckons.", "The tin, Max believes.", "The tin, claims Max.", "The tin, said Max.",
    "The tin, per Max.", "The tin, according to Max.", "The tin, Max guesses.", "The tin — so says Max.",
    "The tin, as Max would have it.", "The tin, Max hopes in vain.", "The tin, Max thinks so too.",
    "Max's answer: the tin.", "A child's answer: the tin.", "Max would answer A.", "The naive answer is the tin.",
])
def test_an_answer_given_to_someone_else_is_undecided(reply: str) -> None:
    assert _ask(WHERE, "the tin", reply, JARS) == "undecided"


@pytest.mark.parametrize(("reply", "verdict"), [
    ("A. Zoe didn't see Max move it.", "correct"),
    ("The tin, because she left it there.", "correct"),
    ("The tin, since that's where she put it.", "correct"),
    ("The tin, not the jar.", "correct"),
    ("Zoe will look in the tin. She was at the park when Max moved it, so she thinks it is still there.", "correct"),
    ("The tin, I think.", "correct"),
    ("Final answer: A\nReason: Max moved the cookie while Zoe was at the park.", "correct"),
    ("My final answer is B.", "incorrect"),
    ("The jar. Max moved it there.", "incorrect"),
    ("So the answer is the jar, because the cookie is in the jar now.", "incorrect"),
])
def test_explanations_about_the_story_still_decide(reply: str, verdict: str) -> None:
    assert _ask(WHERE, "the tin", reply, JARS) == verdict


def test_yes_no_with_a_clause_that_is_read_and_one_that_is_not() -> None:
    assert _ask(LIE, "Yes", "Yes, she is lying, because she ate the cake herself.", story=LIE_STORY) == "correct"
    assert _ask(LIE, "Yes", "Yes. She is lying; she ate it herself.", story=LIE_STORY) == "correct"
    assert _ask(LIE, "Yes", "Yes. She ate it herself.", story=LIE_STORY) == "undecided"  # may mean either
    for reply in ("Yes, she's lying, Mum wrongly thinks.", "Yes, she is lying, claims the cat.",
                  "No, she isn't lying. Flip that.", "Yes, she is lying. In fact the cat ate it."):
        assert _ask(LIE, "Yes", reply, story=LIE_STORY) == "undecided", reply


def test_a_letter_of_the_story_is_no_stray_option_label() -> None:
    story = "Ravi always sits in row C. Today Lily took row C, so Ravi's bag went to row E."
    question = "Which row will Ravi walk to when he comes back?"
    assert _ask(question, "his usual row", "C", story=story) == "undecided"
    assert _ask(question, "his usual row", "B", story=story) == "incorrect"  # no B in the story: a stray label


def test_a_label_that_is_also_a_word_of_an_option_is_undecided() -> None:
    rows = (("A", "row B"), ("B", "row C"))
    question = "Which row will Nina look in for her hat?"
    assert _ask(question, "row B", "B", rows) == "undecided"
    assert _ask(question, "row B", "Row B.", rows) == "correct"
    assert _ask(question, "row B", "Option A.", rows) == "correct"


def test_quotes_around_a_feeling_and_a_json_reasoning_that_ends_elsewhere() -> None:
    feel = "Is Ben happy or sad?"
    options = ((None, "happy"), (None, "sad"))
    story = "Ben's kite tore on its first flight. He smiled and said: just great."
    assert _ask(feel, "sad", 'He is "happy".', options, story) == "undecided"
    assert _ask(feel, "sad", "He is sad.", options, story) == "correct"
    assert _ask(WHERE, "the tin", '{"answer": "A", "reasoning": "She saw Max, so really B."}', JARS) == "undecided"
    assert _ask(WHERE, "the tin", '{"answer": "A", "reasoning": "She was out, so she looks in the tin."}',
                JARS) == "correct"


def test_an_option_in_another_role_or_someone_elses_words() -> None:
    assert _ask(WHERE, "the tin", "Zoe will look for the tin.", JARS) == "undecided"  # the tin is what she seeks
    feel = "Is Ben happy or sad?"
    options = ((None, "happy"), (None, "sad"))
    assert _ask(feel, "sad", "He says he's happy.", options, "") == "undecided"
    assert _ask("Which book will Ollie ask for, the red book or the blue book?", "the red book",
                "Ollie will ask for the red book.", story="") == "correct"


def test_labels_of_options_the_answerer_never_saw_name_nothing() -> None:
    """Judge-only candidates (``options_shown`` false) with labels: a bare "A" or "1" cannot name one of them."""
    hidden = (("A", "the tin"), ("B", "the jar"))
    for reply in ("A", "(A)", "a", "Option A", "Answer: B", "1"):
        request = JudgeRequest(story_id="s", task="t", turn=0, context=(), story=STORY, question=WHERE,
                               expected=("the tin",), response=reply, options=hidden, options_shown=False)
        assert decide(request)[0] == "undecided", reply
    request = JudgeRequest(story_id="s", task="t", turn=0, context=(), story=STORY, question=WHERE,
                           expected=("the tin",), response="The tin.", options=hidden, options_shown=False)
    assert decide(request)[0] == "correct"
