"""The review store's file and connections: the schema, the migration of older stores, a connection per
call, and the write transaction that refuses a write on a stale revision.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from commet.apps.review.db.records import ReviewError, StaleRevision, UnknownRevision
from commet.apps.web import SESSION_SCHEMA, check_app_store, normalise_name, set_up_store
from commet.store.sqlite import META_TABLE

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


#: the edits of an item after a revision, oldest first
EDITS_SINCE = ("SELECT e.*, u.name AS author FROM edits e JOIN users u ON u.id = e.user_id "
               "WHERE item_id = ? AND revision > ? ORDER BY e.id")


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


#: The largest integer SQLite stores; a larger Python int in a query raises OverflowError.
SQLITE_MAX_INT = 2**63 - 1


class ReviewStoreBase:
    """The file of a review store and its connections (the base of every part of ``ReviewDB``)."""

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
        that the item is still at that revision (raising :class:`StaleRevision` for an older one,
        :class:`UnknownRevision` for one it never reached)."""
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
                    if seen_revision is not None and seen_revision > row["revision"]:
                        raise UnknownRevision(f"item {item_id!r} has no revision {seen_revision} (it is at revision "
                                              f"{row['revision']})")
                    if seen_revision is not None and row["revision"] != seen_revision:
                        since = db.execute(EDITS_SINCE, (item_id, seen_revision)).fetchall()
                        raise StaleRevision(item_id, seen_revision, row["revision"], since)
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        finally:
            db.close()

    def meta(self, key: str) -> str | None:
        """A fact of this store (the dataset it was imported from: its root, name, version, licence)."""
        with self.connect() as db:
            row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row["value"] if row else None

