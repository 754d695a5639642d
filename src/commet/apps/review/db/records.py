"""The review's vocabulary and records: the paper's Table 5 criteria and Table 6 categories, the text
defects, an item's status in the paper's order of review, and the records and refusals of the store.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from urllib.parse import quote

from commet.errors import CommetError

REVIEWERS_FOR_CONSENSUS = 3

#: Table 5 of the paper: (key, criterion, validation question). Each maps to the Table 6 category of the same key.
CRITERIA: tuple[tuple[str, str, str], ...] = (
    ("text_artifacts", "Absence of unintended text artifacts", "Is the image free of unintended text, labels?"),
    ("spatial", "Correct spatial relationships", "Are all objects and characters located as described in the story?"),
    ("narrative", "Narrative consistency", "Does the image accurately reflect the corresponding StoryTurn?"),
    ("duplication", "Object and character deduplication",
     "Is each object and character shown only as many times as specified in the story?"),
    ("clues", "Absence of unintended clues",
     "Is the image free of unintended visual clues that could reveal the expected answer?"),
)
CRITERION_KEYS = tuple(key for key, _, _ in CRITERIA)
#: Table 6 of the paper, in its order.
IMAGE_ERRORS: dict[str, str] = {
    "text_artifacts": "Unintended text artifacts",
    "spatial": "Incorrect spatial relationships",
    "narrative": "Narrative inconsistencies",
    "duplication": "Object/character duplication",
    "clues": "Unintended clues",
}
#: The textual defects of section 3.2.2 (the same codes as the generator's lint).
TEXT_ERRORS: dict[str, str] = {
    "feedback_same_turn": "Feedback in the same turn as its answer",
    "reveals_answer": "Story text reveals the answer",
    "other_task": "Belongs to another task",
    "text_other": "Other text error",
}
ERROR_CATEGORIES: dict[str, str] = {**IMAGE_ERRORS, **TEXT_ERRORS}
STATUS_KINDS = ("open", "review", "disagreement", "rejected", "final")


class ReviewError(CommetError, ValueError):
    """A request the store refuses (unknown item, invalid edit): shown to the reviewer."""


class UnknownRevision(CommetError, ValueError):
    """A write that names a revision the item never reached (a forged or mistyped form): answered with 400, not as a
    conflict, since nothing changed since it."""


class StaleRevision(ReviewError):
    """A write from a page that showed an older revision: refused, with what changed since."""

    def __init__(self, item_id: str, seen: int, current: int, since: list[sqlite3.Row]):
        super().__init__(f"{item_id} changed since you opened it (you saw revision {seen}; it is now revision "
                         f"{current}); nothing was saved")
        self.item_id, self.seen, self.current, self.since = item_id, seen, current, since


class AcceptRefused(ReviewError):
    """An accept while a picture is unchecked, fails a criterion or waits for regeneration."""

    def __init__(self, reasons: list[str]):
        super().__init__("Not accepted: " + "; ".join(reasons) + ".")
        self.reasons = reasons


@dataclass
class Picture:
    id: int
    item_id: str
    image_id: str
    version: int
    source: str
    file: str | None
    prompt: str | None
    model: str | None
    author: str | None
    at: str

    @property
    def url(self) -> str | None:
        """Where the app serves it: dataset files by name, stored versions by id (None: file missing)."""
        if self.source != "dataset":
            return f"/pictures/{self.id}.png"
        return f"/images/{quote(self.file)}" if self.file else None

    @property
    def label(self) -> str:
        return f"{self.image_id} v{self.version}"


@dataclass
class ItemStatus:
    revision: int
    accepts: list[str] = field(default_factory=list)
    rejects: list[str] = field(default_factory=list)

    @property
    def final(self) -> bool:
        return len(self.accepts) >= REVIEWERS_FOR_CONSENSUS and not self.rejects

    @property
    def kind(self) -> str:
        """final, disagreement, rejected, review (some accepts) or open."""
        if self.final:
            return "final"
        if self.accepts and self.rejects:
            return "disagreement"
        if self.rejects:
            return "rejected"
        return "review" if self.accepts else "open"

    @property
    def stage(self) -> str:
        """The paper's order: the first expert reviews and corrects, then two more review independently."""
        if self.final:
            return "final"
        return "independent review" if self.accepts else "first review"

    @property
    def label(self) -> str:
        if self.kind == "review":
            return f"{len(self.accepts)} of {REVIEWERS_FOR_CONSENSUS} accepts"
        return self.kind

    def decided(self, name: str) -> bool:
        return name in self.accepts or name in self.rejects

    def blind_for(self, name: str) -> bool:
        """Whether ``name`` must not see the other reviewers' verdicts yet (independent review, none of theirs)."""
        return bool(self.accepts) and not self.final and not self.decided(name)

    def hides(self, viewer: str | None, author: str | None, revision: int) -> bool:
        """Whether ``viewer`` must not see what ``author`` recorded on ``revision`` (a decision, a filing, a note):
        another reviewer's, on the current revision of an item ``viewer`` reviews blind. No viewer: nothing hidden."""
        return viewer is not None and author != viewer and revision == self.revision and self.blind_for(viewer)

    def label_for(self, name: str) -> str:
        """The status as ``name`` may see it: no counts while their independent verdict is outstanding."""
        return "awaiting your verdict" if self.blind_for(name) else self.label

    def symbol(self) -> str:
        return {"final": "✓", "disagreement": "≠", "rejected": "✗", "review": "◐", "open": "○"}[self.kind]


@dataclass
class CheckInput:
    """One reviewer's verdicts on one picture version as a form sent them."""

    results: dict[str, bool]
    note: str = ""
    prominent: str | None = None


@dataclass
class Table6Column:
    """Table 6 as one view counts it: images per most prominent error."""

    title: str
    counts: dict[str, int]
    unclassified: int = 0  # erroneous images whose reviewer has not named the most prominent error yet

    @property
    def images(self) -> int:
        """Erroneous images counted under an error category."""
        return sum(self.counts.values())

    @property
    def erroneous(self) -> int:
        """Every erroneous image of the column, with a most prominent error chosen or not: the table's total."""
        return self.images + self.unclassified

    def percent(self, key: str) -> float:
        """A category's (or ``"unclassified"``'s) share of the column's erroneous images."""
        count = self.unclassified if key == "unclassified" else self.counts[key]
        return 100.0 * count / self.erroneous if self.erroneous else 0.0


@dataclass
class OverviewRow:
    id: str
    task: str
    category: str
    turns: int
    pictures: int
    revision: int
    status: ItemStatus
    mine: str | None
    errors: int


def open_for_me(row: OverviewRow) -> bool:
    """An item that is not final and has no verdict of this reviewer on its current revision."""
    return not row.status.final and row.mine is None


def check_user_name(name: str) -> None:
    if not name.strip() or len(name) > 64:
        raise ReviewError("a user name needs 1 to 64 characters")


def check_password(password: str) -> None:
    """Refuse a password too short to keep; checked as soon as it is typed (before it is asked again)."""
    if len(password) < 8:
        raise ReviewError("a password needs at least 8 characters")

