"""A participant's way through a questionnaire, replayed from their stored answers.

Each turn opens with the engine's :func:`open_turn` (condition ``original``, the study's
undecided policy: ``stop`` by default, as ``commet eval``) from the previous turn's stored
outcome, and answers are scored with :func:`apply_branch_rules`, so a person meets exactly the
turns a model would after giving the same answers: where a model's story stops at an answer
the judge left undecided, the person's story ends there too and the next story begins.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from commet.apps.study.build import Questionnaire, QuestionnairePictures, shows_image
from commet.conditions import FeedbackCondition, UndecidedFeedback
from commet.engine.conversation import PreviousOutcome, open_turn, user_text
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

    @property
    def message(self) -> str:
        """The turn's text as a model gets it (feedback, story, question and options)."""
        return user_text(self.feedback, self.turn)


@dataclass(frozen=True)
class StoryProgress:
    """A StoryTurn as far as a participant got: the turns shown, and whether it stopped at an undecided answer."""

    turns: list[ShownTurn]  # answered turns, then the one to answer (while the story is open)
    stopped: bool  # the next turn would rest on an undecided answer: the story ended there, as a model's does

    @property
    def open(self) -> bool:
        return not self.stopped and bool(self.turns) and self.turns[-1].answer is None


def shown_turns(storyturn: StoryTurn, answers: Mapping[int, sqlite3.Row], policy: QuestionnairePictures,
                undecided: UndecidedFeedback) -> StoryProgress:
    """The answered turns of a StoryTurn, then the first unanswered one (if the story goes on)."""
    shown: list[ShownTurn] = []
    previous: PreviousOutcome | None = None
    picture = shows_image(storyturn, policy)
    for k, turn in enumerate(storyturn.turns):
        opening = open_turn(turn, previous, FeedbackCondition.original, undecided=undecided)
        if opening is None:
            return StoryProgress(shown, stopped=True)
        row = answers.get(k)
        shown.append(ShownTurn(k, turn, opening.feedback, opening.feedback_kind, turn.image if picture else None, row))
        if row is None:
            break
        correct = None if row["correct"] is None else bool(row["correct"])
        previous = PreviousOutcome(correct, row["branch"], tuple(turn.answers))
    return StoryProgress(shown, stopped=False)


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
        earlier = [(t.message, t.answer["response"]) for t in self.turns[:-1] if t.answer is not None]
        current = self.current
        return build_judge_request(self.storyturn, current.index, current.message, response, earlier)


def position(questionnaire: Questionnaire, storyturns: Mapping[str, StoryTurn], answers: Sequence[sqlite3.Row],
             undecided: UndecidedFeedback) -> Position | None:
    """The first StoryTurn still open (a question to answer), or None when every story is answered or stopped."""
    grouped = by_story(answers)
    for number, story_id in enumerate(questionnaire.storyturns, start=1):
        storyturn = storyturns[story_id]
        got = grouped.get(story_id, {})
        if len(got) < len(storyturn.turns):
            progress = shown_turns(storyturn, got, questionnaire.image_policy, undecided)
            if progress.open:
                return Position(number, storyturn, progress.turns)
    return None


def question_count(questionnaire: Questionnaire, storyturns: Mapping[str, StoryTurn]) -> int:
    return sum(len(storyturns[i].turns) for i in questionnaire.storyturns)
