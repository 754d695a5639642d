"""A participant's way through a questionnaire, replayed from their stored answers.

Feedback is chosen with the engine's :func:`choose_feedback` (condition ``original``) from
the previous turn's stored outcome, and answers are scored with :func:`apply_branch_rules`,
so a person meets exactly the turns a model would after giving the same answers.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from commet.apps.study.build import Questionnaire, QuestionnairePictures, shows_image
from commet.conditions import FeedbackCondition, UndecidedFeedback
from commet.engine.conversation import PreviousOutcome, choose_feedback, user_text
from commet.engine.conversation import judge_request as build_judge_request
from commet.format.model import StoryTurn, Turn
from commet.judges.base import JudgeRequest


@dataclass(frozen=True)
class ShownTurn:
    """One turn as the participant saw it (or sees it now, when ``answer`` is None)."""

    index: int
    turn: Turn
    feedback: str
    feedback_kind: str
    image: str | None  # the picture shown, under the questionnaire's image policy
    answer: sqlite3.Row | None


def shown_turns(storyturn: StoryTurn, answers: Mapping[int, sqlite3.Row], policy: QuestionnairePictures) -> list[ShownTurn]:
    """The answered turns of a StoryTurn, then the first unanswered one (if any)."""
    shown: list[ShownTurn] = []
    previous: PreviousOutcome | None = None
    picture = shows_image(storyturn, policy)
    for k, turn in enumerate(storyturn.turns):
        # a volunteer's story never stops; feedback that rests on an undecided answer shows only its
        # unconditional part, so nobody is corrected for an answer that may have been right
        text, kind = choose_feedback(turn.feedback, previous, FeedbackCondition.original, undecided=UndecidedFeedback.SKIP)
        row = answers.get(k)
        shown.append(ShownTurn(k, turn, text, kind, turn.image if picture else None, row))
        if row is None:
            break
        correct = None if row["correct"] is None else bool(row["correct"])
        previous = PreviousOutcome(correct, row["branch"], tuple(turn.answers))
    return shown


def by_story(answers: Sequence[sqlite3.Row]) -> dict[str, dict[int, sqlite3.Row]]:
    grouped: dict[str, dict[int, sqlite3.Row]] = {}
    for row in answers:
        grouped.setdefault(row["story_id"], {})[row["turn"]] = row
    return grouped


@dataclass(frozen=True)
class Position:
    """Where a participant stands: the StoryTurn in progress and its turns so far."""

    number: int  # 1-based place of the StoryTurn in the questionnaire
    storyturn: StoryTurn
    turns: list[ShownTurn]  # answered turns, then the current one

    @property
    def current(self) -> ShownTurn:
        return self.turns[-1]

    @property
    def active_branch(self) -> int | None:
        answered = [t.answer for t in self.turns if t.answer is not None]
        return answered[-1]["active_branch"] if answered else None

    def judge_request(self, response: str) -> JudgeRequest:
        """The current turn's judge request, with the same context the engine gives a judge."""
        earlier = [(user_text(t.feedback, t.turn), t.answer["response"]) for t in self.turns[:-1]
                   if t.answer is not None]
        current = self.current
        return build_judge_request(self.storyturn, current.index, user_text(current.feedback, current.turn), response,
                                   earlier)


def position(questionnaire: Questionnaire, storyturns: Mapping[str, StoryTurn],
             answers: Sequence[sqlite3.Row]) -> Position | None:
    """The first StoryTurn with an unanswered turn, or None when every question is answered."""
    grouped = by_story(answers)
    for number, story_id in enumerate(questionnaire.storyturns, start=1):
        storyturn = storyturns[story_id]
        got = grouped.get(story_id, {})
        if len(got) < len(storyturn.turns):
            return Position(number, storyturn, shown_turns(storyturn, got, questionnaire.image_policy))
    return None


def question_count(questionnaire: Questionnaire, storyturns: Mapping[str, StoryTurn]) -> int:
    return sum(len(storyturns[i].turns) for i in questionnaire.storyturns)
