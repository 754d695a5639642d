"""Human labels: a ``labels`` table on the results file, written by ``commet label`` and CSV imports.

A label belongs to one stored turn of one run (run, story_id, turn) and keeps the response
it was given to, so it also applies to every re-judged copy of that run: judges are
compared with people on the same (story_id, turn, response).
"""

from __future__ import annotations

import codecs
import csv
import io
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from commet.format.inputs import read_bytes
from commet.store.errors import StoreError
from commet.store.records import TurnRecord
from commet.store.sqlite import RunRecord, Store, now, table_names

LABELS_SCHEMA = """
CREATE TABLE IF NOT EXISTS labels (
    run TEXT NOT NULL,
    story_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    response TEXT NOT NULL,
    label TEXT NOT NULL CHECK (label IN ('correct', 'incorrect')),
    labeller TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (run, story_id, turn, labeller)
);
CREATE INDEX IF NOT EXISTS labels_item ON labels(story_id, turn);
"""

LABELS = ("correct", "incorrect")
CSV_COLUMNS = ("run", "story_id", "turn", "label", "labeller")

class LabelError(StoreError):
    """A label that cannot be stored (unknown run or turn, bad value); names the file line for imports."""


@dataclass(frozen=True)
class Label:
    run: str
    story_id: str
    turn: int
    response: str
    label: str
    labeller: str


def ensure_table(db: sqlite3.Connection) -> None:
    """The labels table, statement by statement: inside an open transaction it is rolled back with it
    (``executescript`` would commit that transaction first)."""
    for statement in filter(str.strip, LABELS_SCHEMA.split(";")):
        db.execute(statement)


def set_label(store: Store, *, run: str, story_id: str, turn: int, response: str, label: str,
              labeller: str) -> None:
    """Store (or replace) one labeller's label for one turn."""
    ensure_table(store.db)
    _insert(store.db, run, story_id, turn, response, label, labeller)


def _insert(db: sqlite3.Connection, run: str, story_id: str, turn: int, response: str, label: str,
            labeller: str) -> None:
    if label not in LABELS:
        raise LabelError(f"label must be correct or incorrect, not {label!r}")
    if not labeller.strip():
        raise LabelError("a label needs a labeller name")
    db.execute("INSERT OR REPLACE INTO labels(run, story_id, turn, response, label, labeller, created_at)"
               " VALUES (?,?,?,?,?,?,?)", (run, story_id, turn, response, label, labeller.strip(), now()))


def all_labels(store: Store) -> list[Label]:
    if "labels" not in table_names(store.db):  # none yet (and nothing written: the store may be read-only)
        return []
    rows = store.db.execute("SELECT run, story_id, turn, response, label, labeller FROM labels"
                            " ORDER BY run, story_id, turn, labeller")
    return [Label(*row) for row in rows]


def labelled_by(store: Store, run: str, labeller: str) -> set[tuple[str, int]]:
    """(story_id, turn) of the answers of ``run`` this labeller has labelled."""
    ensure_table(store.db)
    return {(r[0], r[1]) for r in store.db.execute("SELECT story_id, turn FROM labels WHERE run = ? AND labeller = ?",
                                                    (run, labeller.strip()))}


def turns_to_label(store: Store, run: RunRecord, labeller: str) -> list[TurnRecord]:
    """The run's answered turns this labeller has not labelled yet, in story order (resumable labelling)."""
    done = labelled_by(store, run.name, labeller)
    return [row for row in store.turn_rows(run.id)
            if row.response is not None and (row.story_id, row.turn) not in done]


def _not_utf8(path: Path, data: bytes) -> str:
    """Where a file stops being UTF-8 (a byte-order mark allowed, as spreadsheets write one)."""
    start = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        data[start:].decode("utf-8")
    except UnicodeDecodeError as exc:
        at = start + exc.start
        line = data.count(b"\n", 0, at) + 1
        return f"{path}:{line}: not UTF-8 text: byte 0x{data[at]:02x} ({exc.reason}); save the file as UTF-8"
    return f"{path}: not UTF-8 text; save the file as UTF-8"


#: the largest labels file read (a million labels of 100 bytes)
MAX_LABELS_BYTES = 128 * 1024 * 1024


def import_csv(store: Store, path: str | Path) -> int:
    """Import labels from a CSV with columns run, story_id, turn, label, labeller; all or nothing."""
    path = Path(path)
    if not path.exists():
        raise LabelError(f"{path}: file not found")
    data = read_bytes(path, what="labels file", max_bytes=MAX_LABELS_BYTES)  # a FIFO, /dev/zero: refused unread
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise LabelError(_not_utf8(path, data)) from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise LabelError(f"{path}: missing column(s) {', '.join(missing)} (need {', '.join(CSV_COLUMNS)})")
        rows = [(reader.line_num, row) for row in reader]  # the line a record ends on (quoted newlines)
    except csv.Error as exc:
        raise LabelError(f"{path}:{reader.line_num}: not readable as CSV ({exc})") from None
    first_at: dict[tuple[str, ...], int] = {}
    for line, row in rows:  # one answer labelled twice by one person in one file: which label is meant?
        key = tuple((row[c] or "").strip() for c in ("run", "story_id", "turn", "labeller"))
        if key in first_at:
            raise LabelError(f"{path}:{line}: {key[3]!r} labels turn {key[2]} of story {key[1]!r} again "
                             f"(first at line {first_at[key]}); keep one line per answer and labeller")
        first_at[key] = line
    runs: dict[str, RunRecord | None] = {}
    count = 0
    with store.transaction() as db:  # a refused file leaves the store as it was, without a labels table
        ensure_table(db)
        for line, row in rows:
            name = (row["run"] or "").strip()
            if name not in runs:
                runs[name] = store.get_run(name)
            run = runs[name]
            if run is None:
                raise LabelError(f"{path}:{line}: no run named {name!r} in {store.path}")
            try:
                turn = int(row["turn"])
            except (TypeError, ValueError):
                raise LabelError(f"{path}:{line}: turn must be a number, not {row['turn']!r}") from None
            story_id = (row["story_id"] or "").strip()
            stored = db.execute("SELECT response FROM turns WHERE run_id = ? AND story_id = ? AND turn = ?",
                                (run.id, story_id, turn)).fetchone()
            if stored is None or stored["response"] is None:
                raise LabelError(f"{path}:{line}: run {name!r} has no answered turn {turn} of story {story_id!r}")
            try:
                _insert(db, name, story_id, turn, stored["response"], (row["label"] or "").strip().lower(),
                        row["labeller"] or "")
            except LabelError as exc:
                raise LabelError(f"{path}:{line}: {exc}") from None
            count += 1
    return count
