"""The review store: one SQLite file with reviewers, items, edit history, picture checks and versions.

Nothing is ever overwritten: text edits, picture checks, error filings, picture versions and
decisions are appended with their author and time; the "current" state is derived. An
item's ``revision`` grows with every text edit and every change of a current picture, and
a decision counts only for the revision it was made on. The paper's rule (section 3.2.2):
an item is final when three reviewers agree that its current revision is free of errors.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote

from commet.apps.web import hash_password, verify_password
from commet.format.dataset import Dataset, load_dataset
from commet.format.model import StoryTurn
from commet.format.problems import Problem
from commet.format.validate import validate_dataset

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

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
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
"""


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class ReviewError(ValueError):
    """A request the store refuses (unknown item, invalid edit): shown to the reviewer."""


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
    def label(self) -> str:
        if self.kind == "review":
            return f"{len(self.accepts)} of {REVIEWERS_FOR_CONSENSUS} accepts"
        return self.kind


class ReviewDB:
    """All reads and writes of the review store (one short connection per call; safe across threads)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        with self.connect() as db:
            db.executescript(SCHEMA)

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=30)
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("PRAGMA journal_mode = WAL")
        try:
            with db:
                yield db
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
        if len(password) < 8:
            raise ReviewError("a password needs at least 8 characters")
        try:
            with self.connect() as db:
                cursor = db.execute("INSERT INTO users (name, password_hash, created_at) VALUES (?, ?, ?)",
                                    (name.strip(), hash_password(password), now()))
        except sqlite3.IntegrityError:
            raise ReviewError(f"user {name!r} already exists") from None
        return int(cursor.lastrowid or 0)

    def authenticate(self, name: str, password: str) -> int | None:
        with self.connect() as db:
            row = db.execute("SELECT id, password_hash FROM users WHERE name = ?", (name.strip(),)).fetchone()
        if row is None:
            verify_password(password, hash_password("timing-equaliser"))  # same work for unknown names
            return None
        return int(row["id"]) if verify_password(password, row["password_hash"]) else None

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
            for st in dataset:
                if db.execute("SELECT 1 FROM items WHERE id = ?", (st.id,)).fetchone():
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

    def save_edit(self, item_id: str, user_id: int, changes: list[tuple[int | None, str, str, str]],
                  updated: StoryTurn) -> int:
        """Store ``updated`` as the current text, one history row per (turn, field, old, new); new revision."""
        with self.connect() as db:
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

    # ------------------------------------------------------------------ pictures

    def _picture(self, row: sqlite3.Row) -> Picture:
        return Picture(row["id"], row["item_id"], row["image_id"], row["version"], row["source"], row["file"],
                       row["prompt"], row["model"], row["author"], row["at"])

    def picture(self, picture_id: int) -> Picture:
        with self.connect() as db:
            row = db.execute("SELECT p.*, u.name AS author FROM pictures p LEFT JOIN users u ON u.id = p.user_id "
                             "WHERE p.id = ?", (picture_id,)).fetchone()
        if row is None:
            raise ReviewError(f"no picture {picture_id}")
        return self._picture(row)

    def picture_data(self, picture_id: int) -> bytes | None:
        with self.connect() as db:
            row = db.execute("SELECT data FROM pictures WHERE id = ?", (picture_id,)).fetchone()
        return row["data"] if row else None

    def current_pictures(self, item_id: str) -> dict[str, Picture]:
        with self.connect() as db:
            rows = db.execute("SELECT p.*, u.name AS author FROM current_pictures c JOIN pictures p ON p.id = c.picture_id "
                              "LEFT JOIN users u ON u.id = p.user_id WHERE c.item_id = ?", (item_id,)).fetchall()
        return {r["image_id"]: self._picture(r) for r in rows}

    def versions(self, item_id: str, image_id: str) -> list[Picture]:
        with self.connect() as db:
            rows = db.execute("SELECT p.*, u.name AS author FROM pictures p LEFT JOIN users u ON u.id = p.user_id "
                              "WHERE item_id = ? AND image_id = ? ORDER BY version", (item_id, image_id)).fetchall()
        return [self._picture(r) for r in rows]

    def add_version(self, item_id: str, image_id: str, data: bytes, *, source: str, user_id: int,
                    prompt: str | None = None, model: str | None = None) -> int:
        """Store a new picture version, make it current (new revision) and close open regeneration marks."""
        with self.connect() as db:
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
        self.select_version(item_id, new_id)
        return new_id

    def select_version(self, item_id: str, picture_id: int) -> None:
        picture = self.picture(picture_id)
        if picture.item_id != item_id:
            raise ReviewError("that picture belongs to another item")
        with self.connect() as db:
            current = db.execute("SELECT picture_id FROM current_pictures WHERE item_id = ? AND image_id = ?",
                                 (item_id, picture.image_id)).fetchone()
            if current is not None and current[0] == picture_id:
                return
            db.execute("INSERT OR REPLACE INTO current_pictures VALUES (?, ?, ?)", (item_id, picture.image_id, picture_id))
            db.execute("UPDATE items SET revision = revision + 1 WHERE id = ?", (item_id,))

    def mark_for_regeneration(self, picture_id: int, user_id: int, note: str) -> None:
        with self.connect() as db:
            db.execute("INSERT INTO regen_requests (picture_id, user_id, note, at) VALUES (?, ?, ?, ?)",
                       (picture_id, user_id, note, now()))

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

    def record_checks(self, picture_id: int, user_id: int, results: dict[str, bool], note: str) -> list[str]:
        """Store one verdict per criterion; each newly failed criterion files a Table 6 error. Returns those."""
        picture = self.picture(picture_id)
        previous = self.checks_by(picture_id, user_id)
        filed = [key for key, passed in results.items() if not passed and previous.get(key) is not False]
        with self.connect() as db:
            db.executemany("INSERT INTO picture_checks (picture_id, user_id, criterion, passed, at) VALUES (?, ?, ?, ?, ?)",
                           [(picture_id, user_id, key, int(passed), now()) for key, passed in results.items()])
        for key in filed:
            self.file_error(picture.item_id, user_id, key, note, picture_id=picture_id)
        return filed

    def checks_by(self, picture_id: int, user_id: int) -> dict[str, bool]:
        """A reviewer's latest verdict per criterion on one picture version."""
        with self.connect() as db:
            rows = db.execute("SELECT criterion, passed FROM picture_checks WHERE picture_id = ? AND user_id = ? "
                              "ORDER BY id", (picture_id, user_id)).fetchall()
        return {r["criterion"]: bool(r["passed"]) for r in rows}

    def checks(self, picture_id: int) -> dict[str, dict[str, bool]]:
        """criterion -> reviewer -> latest verdict, for one picture version."""
        with self.connect() as db:
            rows = db.execute("SELECT c.criterion, c.passed, u.name FROM picture_checks c JOIN users u ON u.id = c.user_id "
                              "WHERE picture_id = ? ORDER BY c.id", (picture_id,)).fetchall()
        out: dict[str, dict[str, bool]] = defaultdict(dict)
        for row in rows:
            out[row["criterion"]][row["name"]] = bool(row["passed"])
        return dict(out)

    def file_error(self, item_id: str, user_id: int, category: str, note: str, *, picture_id: int | None = None) -> None:
        if category not in ERROR_CATEGORIES:
            raise ReviewError(f"unknown error category {category!r}")
        if category in IMAGE_ERRORS and picture_id is None:
            raise ReviewError("a picture error needs the picture it is about")
        _, revision = self.item(item_id)
        with self.connect() as db:
            db.execute("INSERT INTO error_filings (item_id, picture_id, revision, user_id, category, note, at) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?)", (item_id, picture_id, revision, user_id, category, note, now()))

    def errors(self, item_id: str) -> list[sqlite3.Row]:
        with self.connect() as db:
            return db.execute("SELECT e.*, u.name AS author, p.image_id, p.version FROM error_filings e "
                              "JOIN users u ON u.id = e.user_id LEFT JOIN pictures p ON p.id = e.picture_id "
                              "WHERE e.item_id = ? ORDER BY e.id DESC", (item_id,)).fetchall()

    def decide(self, item_id: str, user_id: int, decision: str, note: str) -> None:
        if decision not in ("accept", "reject"):
            raise ReviewError("a decision is accept or reject")
        _, revision = self.item(item_id)
        with self.connect() as db:
            db.execute("INSERT INTO decisions (item_id, user_id, revision, decision, note, at) VALUES (?, ?, ?, ?, ?, ?)",
                       (item_id, user_id, revision, decision, note, now()))

    def decisions(self, item_id: str) -> list[sqlite3.Row]:
        with self.connect() as db:
            return db.execute("SELECT d.*, u.name AS author FROM decisions d JOIN users u ON u.id = d.user_id "
                              "WHERE item_id = ? ORDER BY d.id DESC", (item_id,)).fetchall()

    def status(self, item_id: str) -> ItemStatus:
        """Each reviewer's latest decision, counted only when it was made on the current revision."""
        _, revision = self.item(item_id)
        latest: dict[str, sqlite3.Row] = {}
        for row in reversed(self.decisions(item_id)):
            latest[row["author"]] = row
        status = ItemStatus(revision)
        for name, row in sorted(latest.items()):
            if row["revision"] == revision:
                (status.accepts if row["decision"] == "accept" else status.rejects).append(name)
        return status

    def my_decision(self, item_id: str, user_id: int) -> str | None:
        _, revision = self.item(item_id)
        with self.connect() as db:
            row = db.execute("SELECT decision FROM decisions WHERE item_id = ? AND user_id = ? AND revision = ? "
                             "ORDER BY id DESC LIMIT 1", (item_id, user_id, revision)).fetchone()
        return row["decision"] if row else None

    def disagreements(self) -> list[dict[str, object]]:
        """Items whose reviewers disagree: on the decision, or on a criterion of a current picture."""
        found: list[dict[str, object]] = []
        for item_id in self.item_ids():
            status = self.status(item_id)
            reasons: list[str] = []
            if status.accepts and status.rejects:
                reasons.append(f"accepted by {', '.join(status.accepts)}; rejected by {', '.join(status.rejects)}")
            for image_id, picture in self.current_pictures(item_id).items():
                for key, verdicts in self.checks(picture.id).items():
                    if len(set(verdicts.values())) > 1:
                        passed = [n for n, v in verdicts.items() if v]
                        failed = [n for n, v in verdicts.items() if not v]
                        reasons.append(f"{image_id} v{picture.version}: {IMAGE_ERRORS.get(key, key)} passed by "
                                       f"{', '.join(passed)}, failed by {', '.join(failed)}")
            if reasons:
                found.append({"item": item_id, "status": status, "reasons": reasons})
        return found

    # ------------------------------------------------------------------ statistics

    def stats(self) -> dict[str, object]:
        """Table 6 distribution (each erroneous picture counted once, under its most prominent error),
        filings per category, picture and item totals, and each reviewer's progress."""
        order = list(IMAGE_ERRORS)
        with self.connect() as db:
            filings = db.execute("SELECT picture_id, category FROM error_filings").fetchall()
            n_pictures = db.execute("SELECT COUNT(*) FROM current_pictures").fetchone()[0]
            revised = db.execute("SELECT COUNT(*) FROM (SELECT item_id, image_id FROM pictures GROUP BY item_id, image_id "
                                 "HAVING COUNT(*) > 1)").fetchone()[0]
            users = db.execute("SELECT id, name FROM users ORDER BY name").fetchall()
            per_user = {}
            for user in users:
                uid = user["id"]
                per_user[user["name"]] = {
                    "decided": db.execute("SELECT COUNT(DISTINCT item_id) FROM decisions WHERE user_id = ?",
                                          (uid,)).fetchone()[0],
                    "checked": db.execute(
                        "SELECT COUNT(*) FROM (SELECT c.picture_id FROM picture_checks c JOIN current_pictures cp "
                        "ON cp.picture_id = c.picture_id WHERE c.user_id = ? GROUP BY c.picture_id "
                        "HAVING COUNT(DISTINCT c.criterion) = ?)", (uid, len(CRITERIA))).fetchone()[0],
                    "errors": db.execute("SELECT COUNT(*) FROM error_filings WHERE user_id = ?", (uid,)).fetchone()[0],
                    "edits": db.execute("SELECT COUNT(DISTINCT revision || item_id) FROM edits WHERE user_id = ?",
                                        (uid,)).fetchone()[0],
                }
        by_picture: dict[int, Counter[str]] = defaultdict(Counter)
        for row in filings:
            if row["picture_id"] is not None and row["category"] in IMAGE_ERRORS:
                by_picture[row["picture_id"]][row["category"]] += 1
        prominent = Counter(min(c, key=lambda k: (-c[k], order.index(k))) for c in by_picture.values())
        erroneous = len(by_picture)
        table6 = [(key, label, prominent[key], 100.0 * prominent[key] / erroneous if erroneous else 0.0)
                  for key, label in IMAGE_ERRORS.items()]
        filed = Counter(row["category"] for row in filings)
        statuses = Counter(self.status(item_id).kind for item_id in self.item_ids())
        return {"table6": table6, "erroneous_pictures": erroneous, "pictures": n_pictures, "revised": revised,
                "filed": [(key, label, filed[key]) for key, label in ERROR_CATEGORIES.items()],
                "items": len(self.item_ids()), "statuses": dict(statuses), "reviewers": per_user}

    # ------------------------------------------------------------------ export

    def export(self, out: str | Path, *, dataset_root: str | Path | None = None) -> tuple[Dataset, list[Problem]]:
        """Write the final items (with their current pictures) as a dataset folder and validate it."""
        root = Path(dataset_root or self.meta("dataset_root") or ".")
        source = load_dataset(root) if (root / "storyturns.jsonl").is_file() else Dataset(storyturns=[], root=root)
        exported = Dataset(storyturns=[], name=self.meta("dataset_name") or "reviewed",
                           version=self.meta("dataset_version") or "0", licence=self.meta("dataset_licence") or "unspecified",
                           description=((self.meta("dataset_description") or "") + " Expert-reviewed with commet review.").strip())
        for item_id in self.item_ids():
            status = self.status(item_id)
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


def _prompt_of(st: StoryTurn, image_id: str) -> str | None:
    prompts = st.meta.get("image_prompts")
    value = prompts.get(image_id) if isinstance(prompts, dict) else None
    return value if isinstance(value, str) else None
