"""The review store: one SQLite file with reviewers, items, edit history, picture checks and versions.

Nothing is ever overwritten: text edits, picture checks, error filings, picture versions and
decisions are appended with their author and time; the "current" state is derived. An
item's ``revision`` grows with every text edit and every change of a current picture.

Review runs as the paper ran it (section 3.2.2): one expert reviews and corrects an item
first; once a revision has an accept, two more reviewers review it independently (the app
hides other reviewers' verdicts from a reviewer until they have given theirs). An item is
*final* when three reviewers accept the same revision of its text and pictures and nobody
rejects it; any edit or new picture starts a new revision, so it reopens the item.

Every write a reviewer makes from a page names the revision that page showed; a write on a
stale revision is refused (:class:`StaleRevision`, with the changes made since) in the same
transaction that would have written it, so no update is ever lost. An accept carries the
reviewer's five Table 5 checks of every current picture: all must be given and passed, and
no picture may be marked for regeneration.
"""

from __future__ import annotations

import csv
import hashlib
import io
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote

from commet.apps.web import (
    SESSION_SCHEMA,
    check_app_store,
    csv_safe,
    hash_password,
    normalise_name,
    revoke_sessions,
    set_up_store,
    verify_password,
)
from commet.errors import CommetError
from commet.format.dataset import Dataset
from commet.format.loading import load_dataset
from commet.format.model import StoryTurn
from commet.format.problems import Problem
from commet.format.validate import validate_dataset
from commet.store.sqlite import META_TABLE

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

SCHEMA = META_TABLE + """
CREATE TABLE IF NOT EXISTS users (
  id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, password_hash TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS items (
  id TEXT PRIMARY KEY, position INTEGER NOT NULL, original TEXT NOT NULL, current TEXT NOT NULL,
  revision INTEGER NOT NULL DEFAULT 1, imported_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS edits (
  id INTEGER PRIMARY KEY, item_id TEXT NOT NULL REFERENCES items(id), user_id INTEGER NOT NULL REFERENCES users(id),
  at TEXT NOT NULL, revision INTEGER NOT NULL, turn INTEGER, field TEXT NOT NULL, old TEXT NOT NULL, new TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pictures (
  id INTEGER PRIMARY KEY, item_id TEXT NOT NULL REFERENCES items(id), image_id TEXT NOT NULL, version INTEGER NOT NULL,
  source TEXT NOT NULL CHECK (source IN ('dataset', 'regenerated', 'upload')), file TEXT, data BLOB, sha256 TEXT,
  prompt TEXT, model TEXT, user_id INTEGER REFERENCES users(id), at TEXT NOT NULL,
  UNIQUE (item_id, image_id, version));
CREATE TABLE IF NOT EXISTS current_pictures (
  item_id TEXT NOT NULL, image_id TEXT NOT NULL, picture_id INTEGER NOT NULL REFERENCES pictures(id),
  PRIMARY KEY (item_id, image_id));
CREATE TABLE IF NOT EXISTS picture_checks (
  id INTEGER PRIMARY KEY, picture_id INTEGER NOT NULL REFERENCES pictures(id),
  user_id INTEGER NOT NULL REFERENCES users(id), criterion TEXT NOT NULL, passed INTEGER NOT NULL, at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS prominent_errors (
  id INTEGER PRIMARY KEY, picture_id INTEGER NOT NULL REFERENCES pictures(id),
  user_id INTEGER NOT NULL REFERENCES users(id), criterion TEXT, at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS error_filings (
  id INTEGER PRIMARY KEY, item_id TEXT NOT NULL REFERENCES items(id), picture_id INTEGER REFERENCES pictures(id),
  revision INTEGER NOT NULL, user_id INTEGER NOT NULL REFERENCES users(id), category TEXT NOT NULL,
  note TEXT NOT NULL, at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS regen_requests (
  id INTEGER PRIMARY KEY, picture_id INTEGER NOT NULL REFERENCES pictures(id),
  user_id INTEGER NOT NULL REFERENCES users(id), note TEXT NOT NULL, at TEXT NOT NULL,
  done_picture_id INTEGER REFERENCES pictures(id));
CREATE TABLE IF NOT EXISTS decisions (
  id INTEGER PRIMARY KEY, item_id TEXT NOT NULL REFERENCES items(id), user_id INTEGER NOT NULL REFERENCES users(id),
  revision INTEGER NOT NULL, decision TEXT NOT NULL CHECK (decision IN ('accept', 'reject')), note TEXT NOT NULL,
  at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS decisions_item ON decisions (item_id, user_id);
CREATE INDEX IF NOT EXISTS checks_picture ON picture_checks (picture_id, user_id);
CREATE INDEX IF NOT EXISTS filings_item ON error_filings (item_id);
"""


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class ReviewError(CommetError, ValueError):
    """A request the store refuses (unknown item, invalid edit): shown to the reviewer."""


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
        return sum(self.counts.values())

    def percent(self, key: str) -> float:
        return 100.0 * self.counts[key] / self.images if self.images else 0.0


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


#: The largest integer SQLite stores; a larger Python int in a query raises OverflowError.
SQLITE_MAX_INT = 2**63 - 1


class ReviewDB:
    """All reads and writes of the review store (one short connection per call; safe across threads)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        refused = check_app_store(self.path, "review store", "items")
        if refused is not None:
            raise ReviewError(refused)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        set_up_store(self.path, SCHEMA + SESSION_SCHEMA, self._migrate)

    def _migrate(self, db: sqlite3.Connection) -> None:
        """Bring a store made by an earlier version up to date (inside the setup's write transaction)."""
        columns = {row[1] for row in db.execute("PRAGMA table_info(users)")}
        if "name_key" not in columns:  # stores made before names had one normal form
            db.execute("ALTER TABLE users ADD COLUMN name_key TEXT")
            for user_id, name in db.execute("SELECT id, name FROM users").fetchall():
                db.execute("UPDATE users SET name_key = ? WHERE id = ?", (normalise_name(name), user_id))
            try:
                db.execute("CREATE UNIQUE INDEX IF NOT EXISTS users_name_key ON users (name_key)")
            except sqlite3.IntegrityError:
                raise ReviewError(f"{self.path}: two reviewer names differ only in case, width or surrounding "
                                  "spaces; rename one before starting this version") from None

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=30)
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA foreign_keys = ON")  # (the write-ahead log is the file's, set up once)
        try:
            with db:
                yield db
        finally:
            db.close()

    @contextmanager
    def transaction(self, item_id: str | None = None, seen_revision: int | None = None) -> Iterator[sqlite3.Connection]:
        """One write transaction that holds the write lock from its start; with ``seen_revision`` it first checks
        that the item is still at that revision (raising :class:`StaleRevision` otherwise)."""
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA foreign_keys = ON")
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                if item_id is not None:
                    row = db.execute("SELECT revision FROM items WHERE id = ?", (item_id,)).fetchone()
                    if row is None:
                        raise ReviewError(f"no item {item_id!r}")
                    if seen_revision is not None and row["revision"] != seen_revision:
                        since = db.execute("SELECT e.*, u.name AS author FROM edits e JOIN users u ON u.id = e.user_id "
                                           "WHERE item_id = ? AND revision > ? ORDER BY e.id",
                                           (item_id, seen_revision)).fetchall()
                        raise StaleRevision(item_id, seen_revision, row["revision"], since)
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        finally:
            db.close()

    # ------------------------------------------------------------------ meta, users

    def meta(self, key: str) -> str | None:
        with self.connect() as db:
            row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row["value"] if row else None

    def add_user(self, name: str, password: str) -> int:
        if not name.strip() or len(name) > 64:
            raise ReviewError("a user name needs 1 to 64 characters")
        _check_password(password)
        try:
            with self.connect() as db:
                cursor = db.execute("INSERT INTO users (name, name_key, password_hash, created_at) VALUES (?, ?, ?, ?)",
                                    (name.strip(), normalise_name(name), hash_password(password), now()))
        except sqlite3.IntegrityError:
            raise ReviewError(f"user {name!r} already exists") from None
        return int(cursor.lastrowid or 0)

    def set_password(self, name: str, password: str) -> int:
        """A new password for ``name``; every session of that reviewer is revoked. Returns the user id."""
        _check_password(password)
        with self.connect() as db:
            row = db.execute("SELECT id FROM users WHERE name_key = ?", (normalise_name(name),)).fetchone()
            if row is None:
                raise ReviewError(f"no user {name!r}")
            db.execute("UPDATE users SET password_hash = ? WHERE id = ?", (hash_password(password), row["id"]))
        revoke_sessions(self.path, f"user:{row['id']}")
        return int(row["id"])

    def authenticate(self, name: str, password: str) -> int | None:
        with self.connect() as db:
            row = db.execute("SELECT id, password_hash FROM users WHERE name_key = ?",
                             (normalise_name(name),)).fetchone()
        if row is None:
            verify_password(password, hash_password("timing-equaliser"))  # same work for unknown names
            return None
        return int(row["id"]) if verify_password(password, row["password_hash"]) else None

    def verify(self, user_id: int, password: str) -> bool:
        with self.connect() as db:
            row = db.execute("SELECT password_hash FROM users WHERE id = ?", (user_id,)).fetchone()
        return row is not None and verify_password(password, row["password_hash"])

    def user_name(self, user_id: int) -> str | None:
        with self.connect() as db:
            row = db.execute("SELECT name FROM users WHERE id = ?", (user_id,)).fetchone()
        return row["name"] if row else None

    def users(self) -> list[tuple[int, str]]:
        with self.connect() as db:
            return [(r["id"], r["name"]) for r in db.execute("SELECT id, name FROM users ORDER BY name")]

    # ------------------------------------------------------------------ import

    def import_dataset(self, dataset: Dataset) -> int:
        """Add the dataset's StoryTurns that are not in the store yet; returns how many were added."""
        if dataset.root is None:
            raise ReviewError("the review app needs a dataset folder (with storyturns.jsonl and images/)")
        added = 0
        with self.connect() as db:
            for key, value in (("dataset_root", str(dataset.root.resolve())), ("dataset_name", dataset.name),
                               ("dataset_version", dataset.version), ("dataset_licence", dataset.licence),
                               ("dataset_description", dataset.description)):
                db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))
            position = db.execute("SELECT COALESCE(MAX(position), 0) FROM items").fetchone()[0]
            known = {r[0] for r in db.execute("SELECT id FROM items")}
            for st in dataset:
                if st.id in known:
                    continue
                position += 1
                text = st.model_dump_json()
                db.execute("INSERT INTO items (id, position, original, current, imported_at) VALUES (?, ?, ?, ?, ?)",
                           (st.id, position, text, text, now()))
                for image_id in dict.fromkeys(st.images):
                    path = dataset.image_path(image_id)
                    file = path.name if path is not None and dataset.images_dir is not None \
                        and path.parent.resolve() == dataset.images_dir.resolve() else None
                    cursor = db.execute("INSERT INTO pictures (item_id, image_id, version, source, file, prompt, at) "
                                        "VALUES (?, ?, 1, 'dataset', ?, ?, ?)",
                                        (st.id, image_id, file, _prompt_of(st, image_id), now()))
                    db.execute("INSERT INTO current_pictures VALUES (?, ?, ?)", (st.id, image_id, cursor.lastrowid))
                added += 1
        return added

    # ------------------------------------------------------------------ items

    def item_ids(self) -> list[str]:
        with self.connect() as db:
            return [r["id"] for r in db.execute("SELECT id FROM items ORDER BY position")]

    def item(self, item_id: str) -> tuple[StoryTurn, int]:
        """The current StoryTurn and its revision."""
        with self.connect() as db:
            row = db.execute("SELECT current, revision FROM items WHERE id = ?", (item_id,)).fetchone()
        if row is None:
            raise ReviewError(f"no item {item_id!r}")
        return StoryTurn.model_validate_json(row["current"]), int(row["revision"])

    def require_revision(self, item_id: str, seen_revision: int) -> None:
        """Raise :class:`StaleRevision` unless the item is still at ``seen_revision``."""
        with self.transaction(item_id, seen_revision):
            pass

    def save_edit(self, item_id: str, user_id: int, changes: Sequence[tuple[int | None, str, str, str]],
                  updated: StoryTurn, *, seen_revision: int | None = None) -> int:
        """Store ``updated`` as the current text, one history row per (turn, field, old, new); new revision.

        With ``seen_revision`` the edit is refused when the item moved on since (no lost update)."""
        with self.transaction(item_id, seen_revision) as db:
            db.execute("UPDATE items SET current = ?, revision = revision + 1 WHERE id = ?",
                       (updated.model_dump_json(), item_id))
            revision = db.execute("SELECT revision FROM items WHERE id = ?", (item_id,)).fetchone()[0]
            db.executemany("INSERT INTO edits (item_id, user_id, at, revision, turn, field, old, new) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                           [(item_id, user_id, now(), revision, turn, name, old, new) for turn, name, old, new in changes])
        return int(revision)

    def edits(self, item_id: str) -> list[sqlite3.Row]:
        with self.connect() as db:
            return db.execute("SELECT e.*, u.name AS author FROM edits e JOIN users u ON u.id = e.user_id "
                              "WHERE item_id = ? ORDER BY e.id DESC", (item_id,)).fetchall()

    def neighbours(self, item_id: str) -> tuple[str | None, str | None]:
        """The items before and after ``item_id`` in the list."""
        with self.connect() as db:
            row = db.execute("SELECT position FROM items WHERE id = ?", (item_id,)).fetchone()
            if row is None:
                return None, None
            before = db.execute("SELECT id FROM items WHERE position < ? ORDER BY position DESC LIMIT 1",
                                (row[0],)).fetchone()
            after = db.execute("SELECT id FROM items WHERE position > ? ORDER BY position LIMIT 1", (row[0],)).fetchone()
        return (before[0] if before else None), (after[0] if after else None)

    def next_open_for(self, user_id: int, after: str | None = None) -> str | None:
        """The next item (after ``after``, wrapping round) that is not final and awaits this reviewer's verdict."""
        rows = self.overview(user_id)
        start = next((i + 1 for i, row in enumerate(rows) if row.id == after), 0)
        for row in rows[start:] + rows[:start]:
            if row.id != after and open_for_me(row):
                return row.id
        return None

    # ------------------------------------------------------------------ pictures

    def _picture(self, row: sqlite3.Row) -> Picture:
        return Picture(row["id"], row["item_id"], row["image_id"], row["version"], row["source"], row["file"],
                       row["prompt"], row["model"], row["author"], row["at"])

    def picture(self, picture_id: int) -> Picture:
        if not 0 <= picture_id <= SQLITE_MAX_INT:  # an id from a URL; SQLite cannot even compare a larger one
            raise ReviewError(f"no picture {picture_id}")
        with self.connect() as db:
            row = db.execute("SELECT p.*, u.name AS author FROM pictures p LEFT JOIN users u ON u.id = p.user_id "
                             "WHERE p.id = ?", (picture_id,)).fetchone()
        if row is None:
            raise ReviewError(f"no picture {picture_id}")
        return self._picture(row)

    def picture_data(self, picture_id: int) -> bytes | None:
        if not 0 <= picture_id <= SQLITE_MAX_INT:
            return None
        with self.connect() as db:
            row = db.execute("SELECT data FROM pictures WHERE id = ?", (picture_id,)).fetchone()
        return row["data"] if row else None

    def current_pictures(self, item_id: str) -> dict[str, Picture]:
        with self.connect() as db:
            rows = db.execute("SELECT p.*, u.name AS author FROM current_pictures c JOIN pictures p ON p.id = c.picture_id "
                              "LEFT JOIN users u ON u.id = p.user_id WHERE c.item_id = ? ORDER BY p.image_id",
                              (item_id,)).fetchall()
        return {r["image_id"]: self._picture(r) for r in rows}

    def versions(self, item_id: str, image_id: str) -> list[Picture]:
        with self.connect() as db:
            rows = db.execute("SELECT p.*, u.name AS author FROM pictures p LEFT JOIN users u ON u.id = p.user_id "
                              "WHERE item_id = ? AND image_id = ? ORDER BY version", (item_id, image_id)).fetchall()
        return [self._picture(r) for r in rows]

    def add_version(self, item_id: str, image_id: str, data: bytes, *, source: str, user_id: int,
                    prompt: str | None = None, model: str | None = None, seen_revision: int | None = None) -> int:
        """Store a new picture version, make it current (new revision) and close open regeneration marks."""
        with self.transaction(item_id, seen_revision) as db:
            version = db.execute("SELECT MAX(version) FROM pictures WHERE item_id = ? AND image_id = ?",
                                 (item_id, image_id)).fetchone()[0]
            if version is None:
                raise ReviewError(f"item {item_id!r} has no picture {image_id!r}")
            cursor = db.execute("INSERT INTO pictures (item_id, image_id, version, source, data, sha256, prompt, model, "
                                "user_id, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                (item_id, image_id, version + 1, source, data, hashlib.sha256(data).hexdigest(), prompt,
                                 model, user_id, now()))
            new_id = int(cursor.lastrowid or 0)
            db.execute("UPDATE regen_requests SET done_picture_id = ? WHERE done_picture_id IS NULL AND picture_id IN "
                       "(SELECT id FROM pictures WHERE item_id = ? AND image_id = ?)", (new_id, item_id, image_id))
            self._make_current(db, item_id, image_id, new_id, user_id, f"v{version + 1} ({source})")
        return new_id

    def select_version(self, item_id: str, picture_id: int, user_id: int, *, seen_revision: int | None = None) -> bool:
        """Make a stored version current again (a new revision); False when it already is."""
        picture = self.picture(picture_id)
        if picture.item_id != item_id:
            raise ReviewError("that picture belongs to another item")
        with self.transaction(item_id, seen_revision) as db:
            return self._make_current(db, item_id, picture.image_id, picture_id, user_id, f"v{picture.version}")

    @staticmethod
    def _make_current(db: sqlite3.Connection, item_id: str, image_id: str, picture_id: int, user_id: int,
                      label: str) -> bool:
        current = db.execute("SELECT c.picture_id, p.version FROM current_pictures c JOIN pictures p "
                             "ON p.id = c.picture_id WHERE c.item_id = ? AND c.image_id = ?", (item_id, image_id)).fetchone()
        if current is not None and current["picture_id"] == picture_id:
            return False
        db.execute("INSERT OR REPLACE INTO current_pictures VALUES (?, ?, ?)", (item_id, image_id, picture_id))
        db.execute("UPDATE items SET revision = revision + 1 WHERE id = ?", (item_id,))
        revision = db.execute("SELECT revision FROM items WHERE id = ?", (item_id,)).fetchone()[0]
        db.execute("INSERT INTO edits (item_id, user_id, at, revision, turn, field, old, new) VALUES (?, ?, ?, ?, NULL, ?, "
                   "?, ?)", (item_id, user_id, now(), revision, f"picture {image_id}",
                             f"v{current['version']}" if current is not None else "", label))
        return True

    def mark_for_regeneration(self, picture_id: int, user_id: int, note: str, *, seen_revision: int | None = None) -> None:
        picture = self.picture(picture_id)
        with self.transaction(picture.item_id, seen_revision) as db:
            db.execute("INSERT INTO regen_requests (picture_id, user_id, note, at) VALUES (?, ?, ?, ?)",
                       (picture_id, user_id, note, now()))

    def withdraw_regeneration(self, picture_id: int, user_id: int, *, seen_revision: int | None = None) -> int:
        """Close this reviewer's open marks on the picture (kept as it is); returns how many."""
        picture = self.picture(picture_id)
        with self.transaction(picture.item_id, seen_revision) as db:
            return db.execute("UPDATE regen_requests SET done_picture_id = ? WHERE picture_id = ? AND user_id = ? "
                              "AND done_picture_id IS NULL", (picture_id, picture_id, user_id)).rowcount

    def open_regen_requests(self, item_id: str) -> dict[str, list[sqlite3.Row]]:
        with self.connect() as db:
            rows = db.execute("SELECT r.*, u.name AS author, p.image_id FROM regen_requests r "
                              "JOIN users u ON u.id = r.user_id JOIN pictures p ON p.id = r.picture_id "
                              "WHERE p.item_id = ? AND r.done_picture_id IS NULL ORDER BY r.id", (item_id,)).fetchall()
        grouped: dict[str, list[sqlite3.Row]] = defaultdict(list)
        for row in rows:
            grouped[row["image_id"]].append(row)
        return grouped

    # ------------------------------------------------------------------ checks, errors, decisions

    def record_checks(self, picture_id: int, user_id: int, results: dict[str, bool], note: str = "", *,
                      prominent: str | None = None, seen_revision: int | None = None) -> list[str]:
        """Store one verdict per criterion; each newly failed criterion files a Table 6 error. Returns those.

        ``prominent`` names the most prominent failed criterion (Table 6 counts the picture under it); with
        one failed criterion it is that one, with several and none chosen the picture stays unclassified
        (see :meth:`needs_prominent`)."""
        picture = self.picture(picture_id)
        with self.transaction(picture.item_id, seen_revision) as db:
            return self._record_checks(db, picture, user_id, CheckInput(results, note, prominent))

    def _record_checks(self, db: sqlite3.Connection, picture: Picture, user_id: int, given: CheckInput) -> list[str]:
        unknown = set(given.results) - set(CRITERION_KEYS)
        if unknown:
            raise ReviewError(f"unknown criteria: {', '.join(sorted(unknown))}")
        current = db.execute("SELECT picture_id FROM current_pictures WHERE item_id = ? AND image_id = ?",
                             (picture.item_id, picture.image_id)).fetchone()
        if current is None or current[0] != picture.id:
            raise ReviewError(f"{picture.label} is no longer the current version of {picture.image_id}")
        previous = _latest_checks(db, picture.id, user_id)
        merged = {**previous, **given.results}
        failed = [key for key in CRITERION_KEYS if merged.get(key) is False]
        chosen = _latest_prominent(db, picture.id, user_id)
        if given.prominent and given.prominent not in CRITERION_KEYS:
            raise ReviewError(f"unknown criterion {given.prominent!r}")
        if given.prominent in failed:
            chosen = given.prominent
        elif len(failed) == 1:  # a choice that is no failed criterion (a form showing an older choice) is ignored
            chosen = failed[0]
        elif chosen not in failed:
            chosen = None
        changed = {key: passed for key, passed in given.results.items() if previous.get(key) != passed}
        db.executemany("INSERT INTO picture_checks (picture_id, user_id, criterion, passed, at) VALUES (?, ?, ?, ?, ?)",
                       [(picture.id, user_id, key, int(passed), now()) for key, passed in changed.items()])
        prominent = chosen if failed else None
        if prominent != _latest_prominent(db, picture.id, user_id):
            db.execute("INSERT INTO prominent_errors (picture_id, user_id, criterion, at) VALUES (?, ?, ?, ?)",
                       (picture.id, user_id, prominent, now()))
        filed = [key for key, passed in changed.items() if not passed]
        revision = db.execute("SELECT revision FROM items WHERE id = ?", (picture.item_id,)).fetchone()[0]
        db.executemany("INSERT INTO error_filings (item_id, picture_id, revision, user_id, category, note, at) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?)",
                       [(picture.item_id, picture.id, revision, user_id, key, given.note, now()) for key in filed])
        return filed

    def checks_by(self, picture_id: int, user_id: int) -> dict[str, bool]:
        """A reviewer's latest verdict per criterion on one picture version."""
        with self.connect() as db:
            return _latest_checks(db, picture_id, user_id)

    def needs_prominent(self, picture_id: int, user_id: int) -> bool:
        """Whether the reviewer failed several criteria of the picture without naming the most prominent."""
        with self.connect() as db:
            failed = [k for k, ok in _latest_checks(db, picture_id, user_id).items() if not ok]
            return len(failed) > 1 and _latest_prominent(db, picture_id, user_id) not in failed

    def prominent_by(self, picture_id: int, user_id: int) -> str | None:
        with self.connect() as db:
            return _latest_prominent(db, picture_id, user_id)

    def checks(self, picture_id: int) -> dict[str, dict[str, bool]]:
        """criterion -> reviewer -> latest verdict, for one picture version."""
        with self.connect() as db:
            rows = db.execute("SELECT c.criterion, c.passed, u.name FROM picture_checks c JOIN users u ON u.id = c.user_id "
                              "WHERE picture_id = ? ORDER BY c.id", (picture_id,)).fetchall()
        out: dict[str, dict[str, bool]] = defaultdict(dict)
        for row in rows:
            out[row["criterion"]][row["name"]] = bool(row["passed"])
        return dict(out)

    def file_error(self, item_id: str, user_id: int, category: str, note: str, *, picture_id: int | None = None,
                   seen_revision: int | None = None) -> None:
        if category not in ERROR_CATEGORIES:
            raise ReviewError(f"unknown error category {category!r}")
        if category in IMAGE_ERRORS and picture_id is None:
            raise ReviewError("a picture error needs the picture it is about")
        with self.transaction(item_id, seen_revision) as db:
            revision = db.execute("SELECT revision FROM items WHERE id = ?", (item_id,)).fetchone()[0]
            db.execute("INSERT INTO error_filings (item_id, picture_id, revision, user_id, category, note, at) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?)", (item_id, picture_id, revision, user_id, category, note, now()))

    def errors(self, item_id: str) -> list[sqlite3.Row]:
        with self.connect() as db:
            return db.execute("SELECT e.*, u.name AS author, p.image_id, p.version FROM error_filings e "
                              "JOIN users u ON u.id = e.user_id LEFT JOIN pictures p ON p.id = e.picture_id "
                              "WHERE e.item_id = ? ORDER BY e.id DESC", (item_id,)).fetchall()

    def decide(self, item_id: str, user_id: int, decision: str, note: str = "", *, seen_revision: int | None = None,
               checks: dict[int, CheckInput] | None = None) -> None:
        """Record accept or reject on the current revision, with the picture checks the form carried.

        The carried checks are stored first (also when the accept is then refused, so nothing the
        reviewer set is lost). An accept needs this reviewer's five passed checks on every current
        picture and no open regeneration mark; otherwise :class:`AcceptRefused` lists what is missing."""
        if decision not in ("accept", "reject"):
            raise ReviewError("a decision is accept or reject")
        refused: list[str] = []
        with self.transaction(item_id, seen_revision) as db:
            pictures = {p.id: p for p in self._current(db, item_id)}
            for picture_id, given in (checks or {}).items():
                if picture_id not in pictures:
                    raise ReviewError("those checks are for a picture that is not current")
                if given.results or given.prominent:
                    self._record_checks(db, pictures[picture_id], user_id, given)
            if decision == "accept":
                refused = self._accept_blockers(db, item_id, user_id, list(pictures.values()))
            if not refused:
                revision = db.execute("SELECT revision FROM items WHERE id = ?", (item_id,)).fetchone()[0]
                db.execute("INSERT INTO decisions (item_id, user_id, revision, decision, note, at) "
                           "VALUES (?, ?, ?, ?, ?, ?)", (item_id, user_id, revision, decision, note, now()))
        if refused:
            raise AcceptRefused(refused)

    def _current(self, db: sqlite3.Connection, item_id: str) -> list[Picture]:
        rows = db.execute("SELECT p.*, NULL AS author FROM current_pictures c JOIN pictures p ON p.id = c.picture_id "
                          "WHERE c.item_id = ? ORDER BY p.image_id", (item_id,)).fetchall()
        return [self._picture(r) for r in rows]

    @staticmethod
    def _accept_blockers(db: sqlite3.Connection, item_id: str, user_id: int, pictures: list[Picture]) -> list[str]:
        reasons = []
        for picture in pictures:
            mine = _latest_checks(db, picture.id, user_id)
            missing = [key for key in CRITERION_KEYS if key not in mine]
            failed = [key for key in CRITERION_KEYS if mine.get(key) is False]
            if missing:
                reasons.append(f"check {picture.label} against all five criteria ({len(missing)} not given)")
            if failed:
                reasons.append(f"{picture.label} fails " + ", ".join(IMAGE_ERRORS[k].lower() for k in failed))
        marks = db.execute("SELECT p.image_id, u.name FROM regen_requests r JOIN pictures p ON p.id = r.picture_id "
                           "JOIN users u ON u.id = r.user_id WHERE p.item_id = ? AND r.done_picture_id IS NULL "
                           "ORDER BY r.id", (item_id,)).fetchall()
        reasons += [f"{m['image_id']} is marked for regeneration by {m['name']}" for m in marks]
        return reasons

    def decisions(self, item_id: str) -> list[sqlite3.Row]:
        with self.connect() as db:
            return db.execute("SELECT d.*, u.name AS author FROM decisions d JOIN users u ON u.id = d.user_id "
                              "WHERE item_id = ? ORDER BY d.id DESC", (item_id,)).fetchall()

    def statuses(self) -> dict[str, ItemStatus]:
        """Every item's status: each reviewer's latest decision, counted only when made on the current revision."""
        with self.connect() as db:
            statuses = {r["id"]: ItemStatus(r["revision"]) for r in db.execute("SELECT id, revision FROM items")}
            rows = db.execute("SELECT d.item_id, d.revision, d.decision, u.name FROM decisions d JOIN users u "
                              "ON u.id = d.user_id WHERE d.id IN (SELECT MAX(id) FROM decisions GROUP BY item_id, "
                              "user_id) ORDER BY u.name").fetchall()
        for row in rows:
            status = statuses[row["item_id"]]
            if row["revision"] == status.revision:
                (status.accepts if row["decision"] == "accept" else status.rejects).append(row["name"])
        return statuses

    def status(self, item_id: str) -> ItemStatus:
        status = self.statuses().get(item_id)
        if status is None:
            raise ReviewError(f"no item {item_id!r}")
        return status

    def my_decision(self, item_id: str, user_id: int) -> str | None:
        with self.connect() as db:
            row = db.execute("SELECT d.decision FROM decisions d JOIN items i ON i.id = d.item_id AND i.revision = "
                             "d.revision WHERE d.item_id = ? AND d.user_id = ? ORDER BY d.id DESC LIMIT 1",
                             (item_id, user_id)).fetchone()
        return row["decision"] if row else None

    def overview(self, user_id: int) -> list[OverviewRow]:
        """One row per item, in list order, from a handful of queries (the items page of 500+ items)."""
        statuses = self.statuses()
        with self.connect() as db:
            items = db.execute("SELECT id, revision, json_extract(current, '$.task') AS task, "
                               "json_extract(current, '$.category') AS category, "
                               "json_array_length(current, '$.turns') AS turns FROM items ORDER BY position").fetchall()
            pictures = dict(db.execute("SELECT item_id, COUNT(*) FROM current_pictures GROUP BY item_id").fetchall())
            user = db.execute("SELECT name FROM users WHERE id = ?", (user_id,)).fetchone()
            viewer = user["name"] if user else None
            errors: dict[str, int] = defaultdict(int)
            for row in db.execute("SELECT e.item_id, e.revision, u.name FROM error_filings e LEFT JOIN users u "
                                  "ON u.id = e.user_id"):
                if not statuses[row["item_id"]].hides(viewer, row["name"], row["revision"]):
                    errors[row["item_id"]] += 1
            mine = {r["item_id"]: r["decision"] for r in db.execute(
                "SELECT d.item_id, d.decision FROM decisions d JOIN items i ON i.id = d.item_id AND i.revision = d.revision "
                "WHERE d.id IN (SELECT MAX(id) FROM decisions WHERE user_id = ? GROUP BY item_id)", (user_id,))}
        return [OverviewRow(r["id"], r["task"], r["category"], r["turns"], pictures.get(r["id"], 0), r["revision"],
                            statuses[r["id"]], mine.get(r["id"]), errors.get(r["id"], 0)) for r in items]

    def disagreements(self) -> list[dict[str, object]]:
        """Items whose reviewers disagree: on the decision, or on a criterion of a current picture."""
        statuses = self.statuses()
        with self.connect() as db:
            rows = db.execute(
                "SELECT c.criterion, c.passed, u.name, p.item_id, p.image_id, p.version FROM picture_checks c "
                "JOIN current_pictures cp ON cp.picture_id = c.picture_id JOIN pictures p ON p.id = c.picture_id "
                "JOIN users u ON u.id = c.user_id WHERE c.id IN (SELECT MAX(id) FROM picture_checks "
                "GROUP BY picture_id, user_id, criterion) ORDER BY u.name").fetchall()
            order = [r[0] for r in db.execute("SELECT id FROM items ORDER BY position")]
        verdicts: dict[tuple[str, str, int, str], dict[str, bool]] = defaultdict(dict)
        for row in rows:
            verdicts[(row["item_id"], row["image_id"], row["version"], row["criterion"])][row["name"]] = bool(row["passed"])
        reasons: dict[str, list[str]] = defaultdict(list)
        for item_id, status in statuses.items():
            if status.accepts and status.rejects:
                reasons[item_id].append(f"accepted by {', '.join(status.accepts)}; rejected by "
                                        f"{', '.join(status.rejects)}")
        for (item_id, image_id, version, key), by in sorted(verdicts.items(),
                                                              key=lambda kv: CRITERION_KEYS.index(kv[0][3])):
            if len(set(by.values())) > 1:
                passed = [n for n, v in by.items() if v]
                failed = [n for n, v in by.items() if not v]
                reasons[item_id].append(f"{image_id} v{version}: {IMAGE_ERRORS.get(key, key)} passed by "
                                        f"{', '.join(passed)}, failed by {', '.join(failed)}")
        return [{"item": item_id, "status": statuses[item_id], "reasons": reasons[item_id]}
                for item_id in order if reasons.get(item_id)]

    # ------------------------------------------------------------------ statistics

    def table6(self) -> list[Table6Column]:
        """Table 6: erroneous *images* (the picture an item's turns show, over all its versions) per most
        prominent error, as the reviewer chose it; one column for all images, one per reviewer, and the
        images of final and of not yet final items.

        A reviewer's category for an image is the prominent error they chose on the first version they
        found erroneous (a failed criterion that still stands). In the columns that pool reviewers an
        image takes the category of the reviewer who found it erroneous first; no category order is used
        to break ties."""
        statuses = self.statuses()
        with self.connect() as db:
            rows = db.execute("SELECT c.id, c.picture_id, c.user_id, c.criterion, c.passed, p.item_id, p.image_id, "
                              "p.version FROM picture_checks c JOIN pictures p ON p.id = c.picture_id "
                              "ORDER BY c.id").fetchall()
            chosen = {(r["picture_id"], r["user_id"]): r["criterion"] for r in db.execute(
                "SELECT picture_id, user_id, criterion FROM prominent_errors WHERE id IN "
                "(SELECT MAX(id) FROM prominent_errors GROUP BY picture_id, user_id)")}
            names = dict(db.execute("SELECT id, name FROM users ORDER BY name").fetchall())
        latest: dict[tuple[int, int, str], sqlite3.Row] = {}
        for row in rows:
            latest[(row["picture_id"], row["user_id"], row["criterion"])] = row
        # (reviewer, image) -> (version, first standing failure id, category)
        found: dict[tuple[int, tuple[str, str]], tuple[int, int, str | None]] = {}
        failed_by: dict[tuple[int, int], list[sqlite3.Row]] = defaultdict(list)
        for (picture_id, user_id, _), row in latest.items():
            if not row["passed"]:
                failed_by[(picture_id, user_id)].append(row)
        for (picture_id, user_id), failed in failed_by.items():
            image = (failed[0]["item_id"], failed[0]["image_id"])
            category = chosen.get((picture_id, user_id))
            if category is None and len(failed) == 1:
                category = failed[0]["criterion"]
            entry = (failed[0]["version"], min(r["id"] for r in failed), category)
            key = (user_id, image)
            if key not in found or entry[:2] < found[key][:2]:
                found[key] = entry
        first: dict[tuple[str, str], tuple[int, str | None]] = {}
        for (_, image), (_, first_id, category) in found.items():
            if image not in first or first_id < first[image][0]:
                first[image] = (first_id, category)

        def column(title: str, categories: list[str | None]) -> Table6Column:
            counted = Counter(c for c in categories if c in IMAGE_ERRORS)
            return Table6Column(title, {key: counted[key] for key in IMAGE_ERRORS},
                                sum(c not in IMAGE_ERRORS for c in categories))

        columns = [column("All images", [c for _, c in first.values()])]
        columns += [column(name, [c for (u, _), (_, _, c) in found.items() if u == uid]) for uid, name in names.items()]
        columns.append(column("Final items", [c for image, (_, c) in first.items() if statuses[image[0]].final]))
        columns.append(column("Not final", [c for image, (_, c) in first.items() if not statuses[image[0]].final]))
        return columns

    def stats(self) -> dict[str, object]:
        """Table 6, filings per category, picture and item totals, and each reviewer's progress."""
        statuses = self.statuses()
        with self.connect() as db:
            filings = db.execute("SELECT category FROM error_filings").fetchall()
            n_pictures = db.execute("SELECT COUNT(*) FROM current_pictures").fetchone()[0]
            revised = db.execute("SELECT COUNT(*) FROM (SELECT item_id, image_id FROM pictures GROUP BY item_id, image_id "
                                 "HAVING COUNT(*) > 1)").fetchone()[0]
            users = db.execute("SELECT id, name FROM users ORDER BY name").fetchall()
            per_user = {}
            for user in users:
                uid = user["id"]
                per_user[user["name"]] = {
                    "decided": sum(statuses[r[0]].decided(user["name"]) for r in db.execute(
                        "SELECT DISTINCT item_id FROM decisions WHERE user_id = ?", (uid,))),
                    "checked": db.execute(
                        "SELECT COUNT(*) FROM (SELECT c.picture_id FROM picture_checks c JOIN current_pictures cp "
                        "ON cp.picture_id = c.picture_id WHERE c.user_id = ? GROUP BY c.picture_id "
                        "HAVING COUNT(DISTINCT c.criterion) = ?)", (uid, len(CRITERIA))).fetchone()[0],
                    "errors": db.execute("SELECT COUNT(*) FROM error_filings WHERE user_id = ?", (uid,)).fetchone()[0],
                    "edits": db.execute("SELECT COUNT(DISTINCT revision || item_id) FROM edits WHERE user_id = ?",
                                        (uid,)).fetchone()[0],
                }
        filed = Counter(row["category"] for row in filings)
        kinds = Counter(status.kind for status in statuses.values())
        return {"table6": self.table6(), "pictures": n_pictures, "revised": revised,
                "filed": [(key, label, filed[key]) for key, label in ERROR_CATEGORIES.items()],
                "items": len(statuses), "statuses": dict(kinds), "reviewers": per_user}

    # ------------------------------------------------------------------ export

    def export(self, out: str | Path, *, dataset_root: str | Path | None = None) -> tuple[Dataset, list[Problem]]:
        """Write the final items (with their current pictures) as a dataset folder and validate it."""
        root = Path(dataset_root or self.meta("dataset_root") or ".")
        source = load_dataset(root) if (root / "storyturns.jsonl").is_file() else Dataset(storyturns=[], root=root)
        exported = Dataset(storyturns=[], name=self.meta("dataset_name") or "reviewed",
                           version=self.meta("dataset_version") or "0", licence=self.meta("dataset_licence") or "unspecified",
                           description=((self.meta("dataset_description") or "") + " Expert-reviewed with commet review.").strip())
        statuses = self.statuses()
        for item_id in self.item_ids():
            status = statuses[item_id]
            if not status.final:
                continue
            st, revision = self.item(item_id)
            st.meta = {**st.meta, "review": {"revision": revision, "reviewers": len(status.accepts)}}
            for image_id, picture in self.current_pictures(item_id).items():
                data = self.picture_data(picture.id) if picture.source != "dataset" else (
                    source.image_bytes(image_id) if source.has_image(image_id) else None)
                if data is not None:
                    exported.images[image_id] = data
            exported.storyturns.append(st)
        exported.save(out)
        saved = load_dataset(out)
        return saved, validate_dataset(saved)

    def items_csv(self, viewer: str | None = None) -> str:
        """One row per item (status, reviewers, errors filed): a spreadsheet of the review, formula-safe.

        For ``viewer`` (a reviewer's name), an item they review blind shows its status as awaiting their verdict
        and none of the other reviewers' decisions, filings or notes on its current revision, as the item page."""
        statuses = self.statuses()
        with self.connect() as db:
            items = db.execute("SELECT id, revision, json_extract(current, '$.task') AS task, "
                               "json_extract(current, '$.category') AS category FROM items ORDER BY position").fetchall()
            errors = defaultdict(list)
            for row in db.execute("SELECT e.item_id, e.category, e.revision, u.name FROM error_filings e "
                                  "JOIN users u ON u.id = e.user_id ORDER BY e.id"):
                if not statuses[row["item_id"]].hides(viewer, row["name"], row["revision"]):
                    errors[row["item_id"]].append(row["category"])
            notes = defaultdict(list)
            for row in db.execute("SELECT d.item_id, d.note, d.revision, u.name FROM decisions d JOIN users u "
                                  "ON u.id = d.user_id WHERE d.note != '' ORDER BY d.id"):
                if not statuses[row["item_id"]].hides(viewer, row["name"], row["revision"]):
                    notes[row["item_id"]].append(f"{row['name']}: {row['note']}")
        rows = []
        for r in items:
            status = statuses[r["id"]]
            blind = viewer is not None and status.blind_for(viewer)
            rows.append([r["id"], r["task"], r["category"], r["revision"], "awaiting your verdict" if blind else
                         status.kind, "" if blind else " ".join(status.accepts),
                         "" if blind else " ".join(status.rejects), " ".join(errors[r["id"]]),
                         " | ".join(notes[r["id"]])])
        return _csv(["item", "task", "category", "revision", "status", "accepted_by", "rejected_by", "errors_filed",
                     "decision_notes"], rows)

    def errors_csv(self, viewer: str | None = None) -> str:
        """Every error filing (who, when, which revision and picture, category, note), formula-safe; for ``viewer``,
        without the other reviewers' filings on the current revision of an item they review blind."""
        statuses = self.statuses()
        with self.connect() as db:
            rows = db.execute("SELECT e.at, e.item_id, e.revision, u.name, e.category, p.image_id, p.version, e.note "
                              "FROM error_filings e JOIN users u ON u.id = e.user_id LEFT JOIN pictures p "
                              "ON p.id = e.picture_id ORDER BY e.id").fetchall()
        shown = [list(r) for r in rows if not statuses[r["item_id"]].hides(viewer, r["name"], r["revision"])]
        return _csv(["at", "item", "revision", "reviewer", "category", "picture", "version", "note"], shown)


def open_for_me(row: OverviewRow) -> bool:
    """An item that is not final and has no verdict of this reviewer on its current revision."""
    return not row.status.final and row.mine is None


def _csv(header: list[str], rows: list[list[object]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows([[csv_safe("" if v is None else v) for v in row] for row in rows])
    return buffer.getvalue()


def _check_password(password: str) -> None:
    if len(password) < 8:
        raise ReviewError("a password needs at least 8 characters")


def _latest_checks(db: sqlite3.Connection, picture_id: int, user_id: int) -> dict[str, bool]:
    rows = db.execute("SELECT criterion, passed FROM picture_checks WHERE picture_id = ? AND user_id = ? ORDER BY id",
                      (picture_id, user_id)).fetchall()
    return {r["criterion"]: bool(r["passed"]) for r in rows}


def _latest_prominent(db: sqlite3.Connection, picture_id: int, user_id: int) -> str | None:
    row = db.execute("SELECT criterion FROM prominent_errors WHERE picture_id = ? AND user_id = ? ORDER BY id DESC "
                     "LIMIT 1", (picture_id, user_id)).fetchone()
    return row["criterion"] if row else None


def _prompt_of(st: StoryTurn, image_id: str) -> str | None:
    prompts = st.meta.get("image_prompts")
    value = prompts.get(image_id) if isinstance(prompts, dict) else None
    return value if isinstance(value, str) else None
