"""Items and their revisions: the dataset imported once, the current text, and every edit kept with its
author, time and revision.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from commet.apps.review.db.connection import EDITS_SINCE, ReviewStoreBase, now
from commet.apps.review.db.records import ReviewError
from commet.format.dataset import Dataset
from commet.format.model import StoryTurn


class ReviewItems(ReviewStoreBase):
    """The items of a review store, their text and edit history (a part of ``ReviewDB``)."""

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

    def edits_since(self, item_id: str, revision: int) -> list[sqlite3.Row]:
        """The item's edits made after ``revision``, oldest first, with their authors."""
        with self.connect() as db:
            return db.execute(EDITS_SINCE, (item_id, revision)).fetchall()

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


def _prompt_of(st: StoryTurn, image_id: str) -> str | None:
    prompts = st.meta.get("image_prompts")
    value = prompts.get(image_id) if isinstance(prompts, dict) else None
    return value if isinstance(value, str) else None
