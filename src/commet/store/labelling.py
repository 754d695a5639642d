"""Labelling at keyboard speed: an answer marked unsure (asked again after the others), undo, and the pace.

An unsure mark is not a label: it only moves the answer to the end of its labeller's queue, so a
calibration sample is still labelled right or wrong throughout (``commet calibrate`` counts labels
only). Marks live beside the ``labels`` table of the results file; a label given later clears them.
"""

from __future__ import annotations

import sqlite3
import statistics
from datetime import datetime

from commet.store.labels import ensure_table, set_label
from commet.store.sqlite import Store, now

UNSURE_SCHEMA = """
CREATE TABLE IF NOT EXISTS label_unsure (
    run TEXT NOT NULL,
    story_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    labeller TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (run, story_id, turn, labeller)
)
"""
#: a gap between two labels longer than this is a break, not the time one label took
BREAK_S = 300.0
#: labels timed before a pace is told (the first gaps are the slowest)
PACE_AFTER = 3

Answer = tuple[str, int]  # (story_id, turn)


def _tables(db: sqlite3.Connection) -> None:
    ensure_table(db)
    db.execute(UNSURE_SCHEMA)


def give_label(store: Store, *, run: str, story_id: str, turn: int, response: str, label: str, labeller: str) -> None:
    """Store one label (correct or incorrect) and clear the answer's unsure mark."""
    _tables(store.db)
    set_label(store, run=run, story_id=story_id, turn=turn, response=response, label=label, labeller=labeller)
    store.db.execute("DELETE FROM label_unsure WHERE run = ? AND story_id = ? AND turn = ? AND labeller = ?",
                     (run, story_id, turn, labeller.strip()))


def mark_unsure(store: Store, *, run: str, story_id: str, turn: int, labeller: str) -> None:
    """Put an answer at the end of the labeller's queue (a label given to it before is taken back)."""
    _tables(store.db)
    remove(store, run=run, story_id=story_id, turn=turn, labeller=labeller)
    store.db.execute("INSERT INTO label_unsure(run, story_id, turn, labeller, created_at) VALUES (?, ?, ?, ?, ?)",
                     (run, story_id, turn, labeller.strip(), now()))


def remove(store: Store, *, run: str, story_id: str, turn: int, labeller: str) -> None:
    """Take back a labeller's label and unsure mark of one answer."""
    _tables(store.db)
    for table in ("labels", "label_unsure"):
        store.db.execute(f"DELETE FROM {table} WHERE run = ? AND story_id = ? AND turn = ? AND labeller = ?",
                         (run, story_id, turn, labeller.strip()))


def labels_by(store: Store, run: str, labeller: str) -> dict[Answer, str]:
    """This labeller's labels of ``run``: correct or incorrect per answer."""
    _tables(store.db)
    rows = store.db.execute("SELECT story_id, turn, label FROM labels WHERE run = ? AND labeller = ?",
                            (run, labeller.strip()))
    return {(row[0], row[1]): row[2] for row in rows}


def unsure_by(store: Store, run: str, labeller: str) -> set[Answer]:
    _tables(store.db)
    rows = store.db.execute("SELECT story_id, turn FROM label_unsure WHERE run = ? AND labeller = ?",
                            (run, labeller.strip()))
    return {(row[0], row[1]) for row in rows}


def unsure_answers(store: Store, run: str) -> set[Answer]:
    """The answers of ``run`` some labeller marked unsure (whether or not another labelled them)."""
    _tables(store.db)
    return {(row[0], row[1]) for row in store.db.execute("SELECT story_id, turn FROM label_unsure WHERE run = ?",
                                                          (run,))}


def last_given(store: Store, run: str, labeller: str) -> Answer | None:
    """The answer this labeller labelled (or marked unsure) last in ``run``: what undo takes back."""
    _tables(store.db)
    row = store.db.execute(
        "SELECT story_id, turn FROM (SELECT story_id, turn, created_at FROM labels WHERE run = ? AND labeller = ? "
        "UNION ALL SELECT story_id, turn, created_at FROM label_unsure WHERE run = ? AND labeller = ?) "
        "ORDER BY created_at DESC LIMIT 1", (run, labeller.strip(), run, labeller.strip())).fetchone()
    return (row[0], row[1]) if row else None


def seconds_per_label(store: Store, run: str, labeller: str) -> float | None:
    """The labeller's pace: the median time between consecutive labels, breaks left out; None until a few are timed."""
    _tables(store.db)
    times = sorted(datetime.fromisoformat(row[0]) for row in store.db.execute(
        "SELECT created_at FROM labels WHERE run = ? AND labeller = ?", (run, labeller.strip())))
    gaps = [(b - a).total_seconds() for a, b in zip(times, times[1:], strict=False)]
    gaps = [gap for gap in gaps if 0 < gap <= BREAK_S]
    return statistics.median(gaps) if len(gaps) >= PACE_AFTER else None


def time_left(seconds_each: float | None, left: int) -> str:
    """About how long ``left`` answers take at this pace, in words (empty before the pace is known)."""
    if seconds_each is None or left == 0:
        return ""
    seconds = seconds_each * left
    if seconds < 60:
        return "under a minute left"
    minutes = round(seconds / 60)
    return f"about {minutes} min left" if minutes < 90 else f"about {seconds / 3600:.1f} h left"
