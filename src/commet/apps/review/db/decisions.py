"""Verdicts: error filings, accept or reject decisions (an accept needs every current picture checked and
passed, and no open regeneration mark), and each item's status derived from them.
"""

from __future__ import annotations

import sqlite3

from commet.apps.review.db.connection import now
from commet.apps.review.db.pictures import ReviewPictures, latest_checks
from commet.apps.review.db.records import (
    CRITERION_KEYS,
    ERROR_CATEGORIES,
    IMAGE_ERRORS,
    AcceptRefused,
    CheckInput,
    ItemStatus,
    Picture,
    ReviewError,
)


class ReviewDecisions(ReviewPictures):
    """Error filings, decisions and statuses (a part of ``ReviewDB``; a decision stores the picture checks its
    form carried, so it stands on the pictures)."""

    def file_error(self, item_id: str, user_id: int, category: str, note: str, *, picture_id: int | None = None,
                   seen_revision: int | None = None) -> bool:
        """File an error on the current revision; False (nothing added) when this reviewer already filed this very
        error (category, picture and note) on it: a form sent twice (a double click, a resent page) counts once."""
        if category not in ERROR_CATEGORIES:
            raise ReviewError(f"unknown error category {category!r}")
        if category in IMAGE_ERRORS and picture_id is None:
            raise ReviewError("a picture error needs the picture it is about")
        with self.transaction(item_id, seen_revision) as db:
            revision = db.execute("SELECT revision FROM items WHERE id = ?", (item_id,)).fetchone()[0]
            if db.execute("SELECT 1 FROM error_filings WHERE item_id = ? AND revision = ? AND user_id = ? AND "
                          "category = ? AND note = ? AND picture_id IS ?",
                          (item_id, revision, user_id, category, note, picture_id)).fetchone():
                return False
            db.execute("INSERT INTO error_filings (item_id, picture_id, revision, user_id, category, note, at) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?)", (item_id, picture_id, revision, user_id, category, note, now()))
        return True

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
            revision = db.execute("SELECT revision FROM items WHERE id = ?", (item_id,)).fetchone()[0]
            latest = db.execute("SELECT decision, note FROM decisions WHERE item_id = ? AND user_id = ? AND revision = ? "
                                "ORDER BY id DESC LIMIT 1", (item_id, user_id, revision)).fetchone()
            if not refused and (latest is None or tuple(latest) != (decision, note)):  # a form sent twice counts once
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
            mine = latest_checks(db, picture.id, user_id)
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

    def outdated_accept(self, item_id: str, user_id: int) -> int | None:
        """The revision of this reviewer's accept when it is their latest decision and the item has changed since
        (an accept counts for the revision it was given to only); None otherwise."""
        with self.connect() as db:
            row = db.execute("SELECT d.decision, d.revision, i.revision AS now FROM decisions d JOIN items i ON "
                             "i.id = d.item_id WHERE d.item_id = ? AND d.user_id = ? ORDER BY d.id DESC LIMIT 1",
                             (item_id, user_id)).fetchone()
        if row is None or row["decision"] != "accept" or row["revision"] == row["now"]:
            return None
        revision: int = row["revision"]
        return revision

    def my_decision(self, item_id: str, user_id: int) -> str | None:
        with self.connect() as db:
            row = db.execute("SELECT d.decision FROM decisions d JOIN items i ON i.id = d.item_id AND i.revision = "
                             "d.revision WHERE d.item_id = ? AND d.user_id = ? ORDER BY d.id DESC LIMIT 1",
                             (item_id, user_id)).fetchone()
        return row["decision"] if row else None

