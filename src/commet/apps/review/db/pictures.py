"""Pictures: every version of an item's pictures (from the dataset, regenerated or uploaded), which one is
current, the marks asking for a new one, and each reviewer's Table 5 checks of each version.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections import defaultdict

from commet.apps.review.db.connection import SQLITE_MAX_INT, ReviewStoreBase, now
from commet.apps.review.db.records import CRITERION_KEYS, CheckInput, Picture, ReviewError


class ReviewPictures(ReviewStoreBase):
    """The pictures of a review store and their checks (a part of ``ReviewDB``)."""

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
        """Mark the picture for regeneration; this reviewer's open mark with the same note is not made twice (a form
        sent twice)."""
        picture = self.picture(picture_id)
        with self.transaction(picture.item_id, seen_revision) as db:
            if not db.execute("SELECT 1 FROM regen_requests WHERE picture_id = ? AND user_id = ? AND note = ? AND "
                              "done_picture_id IS NULL", (picture_id, user_id, note)).fetchone():
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

    # ------------------------------------------------------------------ checks (Table 5)
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
        previous = latest_checks(db, picture.id, user_id)
        merged = {**previous, **given.results}
        failed = [key for key in CRITERION_KEYS if merged.get(key) is False]
        chosen = latest_prominent(db, picture.id, user_id)
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
        if prominent != latest_prominent(db, picture.id, user_id):
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
            return latest_checks(db, picture_id, user_id)

    def needs_prominent(self, picture_id: int, user_id: int) -> bool:
        """Whether the reviewer failed several criteria of the picture without naming the most prominent."""
        with self.connect() as db:
            failed = [k for k, ok in latest_checks(db, picture_id, user_id).items() if not ok]
            return len(failed) > 1 and latest_prominent(db, picture_id, user_id) not in failed

    def prominent_by(self, picture_id: int, user_id: int) -> str | None:
        with self.connect() as db:
            return latest_prominent(db, picture_id, user_id)

    def checks(self, picture_id: int) -> dict[str, dict[str, bool]]:
        """criterion -> reviewer -> latest verdict, for one picture version."""
        with self.connect() as db:
            rows = db.execute("SELECT c.criterion, c.passed, u.name FROM picture_checks c JOIN users u ON u.id = c.user_id "
                              "WHERE picture_id = ? ORDER BY c.id", (picture_id,)).fetchall()
        out: dict[str, dict[str, bool]] = defaultdict(dict)
        for row in rows:
            out[row["criterion"]][row["name"]] = bool(row["passed"])
        return dict(out)


def latest_checks(db: sqlite3.Connection, picture_id: int, user_id: int) -> dict[str, bool]:
    rows = db.execute("SELECT criterion, passed FROM picture_checks WHERE picture_id = ? AND user_id = ? ORDER BY id",
                      (picture_id, user_id)).fetchall()
    return {r["criterion"]: bool(r["passed"]) for r in rows}


def latest_prominent(db: sqlite3.Connection, picture_id: int, user_id: int) -> str | None:
    row = db.execute("SELECT criterion FROM prominent_errors WHERE picture_id = ? AND user_id = ? ORDER BY id DESC "
                     "LIMIT 1", (picture_id, user_id)).fetchone()
    return row["criterion"] if row else None

