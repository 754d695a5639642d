"""What the results store writes and returns for a run's StoryTurns: typed, frozen records.

One shape per table, used by every writer (the engine, re-judging, the study export) and every
reader (reports, exports, labelling, re-judging), so a column is named and typed in one place.
Values are as stored: JSON columns stay JSON text (``images_json``, ``expected_json``) with
parsed views beside them, and SQLite's 0/1 integers are read as booleans.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from enum import Enum
from operator import attrgetter
from typing import Any, cast

from commet.judges.base import OUTCOMES, Outcome, Verdict, is_outcome
from commet.store.errors import StoreError


@dataclass(frozen=True, slots=True)
class ShownTurn:
    """What a turn showed the answerer: the prompt, its pictures, the feedback kind, the expected answers."""

    prompt: str
    images_json: str
    feedback_kind: str
    expected_json: str
    model_key: str | None = None  # the model call's cache key (None: no model call, e.g. a person answered)


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """One turn of one StoryTurn in a run: what was shown, the answer, and how it was judged.

    ``response`` None: the model call failed for good (``error_kind``, ``error``); ``outcome`` None:
    not judged. ``correct`` is the score after the branch rules (None: undecided).
    """

    run_id: int
    story_id: str
    turn: int
    prompt: str
    images_json: str
    feedback_kind: str
    expected_json: str
    response: str | None = None
    outcome: Outcome | None = None
    correct: bool | None = None
    branch: int | None = None
    active_branch: int | None = None
    judge: str | None = None
    rationale: str | None = None
    model_key: str | None = None
    judgment_key: str | None = None
    error_kind: str | None = None
    error: str | None = None

    @classmethod
    def of(cls, run_id: int, story_id: str, turn: int, shown: ShownTurn, *, response: str | None = None,
           outcome: Outcome | None = None, correct: bool | None = None, branch: int | None = None,
           active_branch: int | None = None, judge: str | None = None, rationale: str | None = None,
           judgment_key: str | None = None, error_kind: str | None = None, error: str | None = None) -> TurnRecord:
        """A turn from what it showed and how it was answered and judged."""
        return cls(run_id, story_id, turn, shown.prompt, shown.images_json, shown.feedback_kind, shown.expected_json,
                   response, outcome, correct, branch, active_branch, judge, rationale, shown.model_key,
                   judgment_key, error_kind, error)

    @property
    def what_was_shown(self) -> ShownTurn:
        return ShownTurn(self.prompt, self.images_json, self.feedback_kind, self.expected_json, self.model_key)

    @property
    def images(self) -> list[dict[str, str]]:
        """The pictures shown with this turn: ``{"id": ..., "sha256": ...}`` each."""
        return cast(list[dict[str, str]], json.loads(self.images_json))

    @property
    def expected(self) -> list[str]:
        return cast(list[str], json.loads(self.expected_json))

    def columns(self) -> dict[str, object]:
        """The row as the ``turns`` table stores it (booleans as 0/1)."""
        row = dict(zip(TURN_COLUMNS, _turn_values(self), strict=True))  # (asdict deep-copies: slower per write)
        row["correct"] = None if self.correct is None else int(self.correct)
        return row

    @classmethod
    def from_values(cls, values: tuple[Any, ...]) -> TurnRecord:
        """A record from the columns of :data:`TURN_COLUMNS`, in that order (the fast path for big runs)."""
        (run_id, story_id, turn, prompt, images_json, feedback_kind, expected_json, response, outcome, correct,
         branch, active_branch, judge, rationale, model_key, judgment_key, error_kind, error) = values
        if outcome is not None and outcome not in OUTCOMES:
            raise StoreError(f"run {run_id}, story {story_id!r}, turn {turn}: stored outcome {outcome!r} is not one "
                             f"of {', '.join(OUTCOMES)}")
        return cls(run_id, story_id, turn, prompt, images_json, feedback_kind, expected_json, response, outcome,
                   None if correct is None else bool(correct), branch, active_branch, judge, rationale, model_key,
                   judgment_key, error_kind, error)


class StoryStatus(str, Enum):
    """How a StoryTurn of a run ended (stored as its value)."""

    #: every turn was answered and judged
    done = "done"
    #: a turn's feedback would have rested on an undecided verdict (``--undecided-feedback stop``)
    stopped = "stopped"
    #: a call failed for good; a rerun asks the story again
    failed = "failed"

    def __str__(self) -> str:  # printed and exported as stored
        return self.value


@dataclass(frozen=True, slots=True)
class StoryRecord:
    """One StoryTurn's result in a run: where it stands and, when done, whether every turn was right."""

    run_id: int
    story_id: str
    position: int
    task: str
    category: str
    image_dependent: bool
    source: str
    status: StoryStatus
    correct: bool | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.status, StoryStatus):  # "done" from a caller: the enum (or its ValueError)
            object.__setattr__(self, "status", StoryStatus(self.status))

    def columns(self) -> dict[str, object]:
        row = dict(zip(STORY_COLUMNS, _story_values(self), strict=True))
        row["image_dependent"] = int(self.image_dependent)
        row["correct"] = None if self.correct is None else int(self.correct)
        return row

    @classmethod
    def from_values(cls, values: tuple[Any, ...]) -> StoryRecord:
        """A record from the columns of :data:`STORY_COLUMNS`, in that order."""
        run_id, story_id, position, task, category, image_dependent, source, status, correct = values
        try:
            story_status = StoryStatus(status)
        except ValueError:
            raise StoreError(f"run {run_id}, story {story_id!r}: stored status {status!r} is not one of "
                             f"{', '.join(s.value for s in StoryStatus)}") from None
        return cls(run_id, story_id, position, task, category, bool(image_dependent), source, story_status,
                   None if correct is None else bool(correct))


@dataclass(frozen=True, slots=True)
class CachedCall:
    """A stored model call, as the cache answers it."""

    response_text: str


@dataclass(frozen=True, slots=True)
class CachedJudgment:
    """A stored verdict, as the cache answers it: who judged, and what."""

    key: str
    judge: str
    outcome: Outcome
    branch: int | None
    rationale: str
    details_json: str

    @property
    def details(self) -> dict[str, object]:
        """The judge's details (a panel's members' verdicts, ...)."""
        return cast(dict[str, object], json.loads(self.details_json))

    def verdict(self) -> Verdict:
        return Verdict.from_stored(self.outcome, self.branch, self.rationale, self.judge, self.details)

    @classmethod
    def from_values(cls, key: str, judge: object, outcome: object, branch: object, rationale: object,
                    details_json: object) -> CachedJudgment:
        """A cached verdict from its stored columns; a stored outcome the judges cannot give is a StoreError."""
        if not is_outcome(outcome):
            raise StoreError(f"judgment {key[:12]}: stored outcome {outcome!r} is not one of {', '.join(OUTCOMES)}")
        return cls(key, str(judge), outcome, branch if isinstance(branch, int) else None,
                   str(rationale), str(details_json))


#: the columns of each table in the order of its record's fields (what ``from_values`` reads)
TURN_COLUMNS = tuple(field.name for field in fields(TurnRecord))
STORY_COLUMNS = tuple(field.name for field in fields(StoryRecord))
#: a record's fields in the order of its columns, read in one call (a row is written per turn and story)
_turn_values = attrgetter(*TURN_COLUMNS)
_story_values = attrgetter(*STORY_COLUMNS)
