"""Reviewers: accounts, passwords (a new one revokes every session of its reviewer), sign-in."""

from __future__ import annotations

import sqlite3

from commet.apps.review.db.connection import ReviewStoreBase, now
from commet.apps.review.db.records import ReviewError, check_password, check_user_name
from commet.apps.signin import hash_password, unknown_user_hash, verify_password
from commet.apps.web import normalise_name, revoke_sessions


class ReviewUsers(ReviewStoreBase):
    """The reviewers of a review store (a part of ``ReviewDB``)."""

    def add_user(self, name: str, password: str) -> int:
        check_user_name(name)
        check_password(password)
        try:
            with self.connect() as db:
                cursor = db.execute("INSERT INTO users (name, name_key, password_hash, created_at) VALUES (?, ?, ?, ?)",
                                    (name.strip(), normalise_name(name), hash_password(password), now()))
        except sqlite3.IntegrityError:
            raise ReviewError(f"user {name!r} already exists") from None
        return int(cursor.lastrowid or 0)

    def set_password(self, name: str, password: str) -> int:
        """A new password for ``name``; every session of that reviewer is revoked. Returns the user id."""
        check_password(password)
        with self.connect() as db:
            row = db.execute("SELECT id FROM users WHERE name_key = ?", (normalise_name(name),)).fetchone()
            if row is None:
                raise ReviewError(f"no user {name!r}")
            db.execute("UPDATE users SET password_hash = ? WHERE id = ?", (hash_password(password), row["id"]))
            revoke_sessions(db, f"user:{row['id']}")  # in the same transaction: both happen or neither
        return int(row["id"])

    def authenticate(self, name: str, password: str) -> int | None:
        with self.connect() as db:
            row = db.execute("SELECT id, password_hash FROM users WHERE name_key = ?",
                             (normalise_name(name),)).fetchone()
        if row is None:
            verify_password(password, unknown_user_hash())  # one scrypt run, as for a known name
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

    def user_id(self, name: str) -> int | None:
        """The id of the reviewer called ``name`` (in its normal form), None when there is none."""
        with self.connect() as db:
            row = db.execute("SELECT id FROM users WHERE name_key = ?", (normalise_name(name),)).fetchone()
        return int(row["id"]) if row else None

    def users(self) -> list[tuple[int, str]]:
        with self.connect() as db:
            return [(r["id"], r["name"]) for r in db.execute("SELECT id, name FROM users ORDER BY name")]

