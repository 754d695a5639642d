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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from commet.sources.inputs import read_bytes
from commet.store.errors import StoreError, check_table_shape
from commet.store.records import TurnRecord
from commet.store.sqlite import RunRecord, Store, now, table_names
from commet.text import printable

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
#: the columns every reader and writer of the table uses
LABEL_COLUMNS = ("run", "story_id", "turn", "response", "label", "labeller", "created_at")

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
    check_table_shape(db, "labels", LABEL_COLUMNS)
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
    check_table_shape(store.db, "labels", LABEL_COLUMNS)
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
    rows = _csv_rows(path, text)
    first_at: dict[tuple[str, str, int, str], tuple[int, str]] = {}
    for line, row in rows:  # one answer labelled twice by one person in one file: which label is meant?
        key = (row["run"], row["story_id"], _turn(path, line, row["turn"]), row["labeller"])
        if key in first_at:  # compared as the store keys them: turn 1 and 01 are one answer
            first, label = first_at[key]
            what = "conflicting labels" if label != row["label"].lower() else "a second label"
            raise LabelError(f"{path}:{line}: {what} for turn {key[2]} of story {key[1]!r} by {key[3]!r} "
                             f"(lines {first} and {line}: {label} and {row['label'].lower()}); keep one line per "
                             "answer and labeller")
        first_at[key] = (line, row["label"].lower())
    runs: dict[str, RunRecord | None] = {}
    count = 0
    with store.transaction() as db:  # a refused file leaves the store as it was, without a labels table
        ensure_table(db)
        for line, row in rows:
            name = row["run"]
            if name not in runs:
                runs[name] = store.get_run(name)
            run = runs[name]
            if run is None:
                raise LabelError(f"{path}:{line}: no run named {name!r} in {store.path}")
            turn = _turn(path, line, row["turn"])
            story_id = row["story_id"]
            stored = db.execute("SELECT response FROM turns WHERE run_id = ? AND story_id = ? AND turn = ?",
                                (run.id, story_id, turn)).fetchone()
            if stored is None or stored["response"] is None:
                raise LabelError(f"{path}:{line}: run {name!r} has no answered turn {turn} of story {story_id!r}")
            try:
                _insert(db, name, story_id, turn, stored["response"], row["label"].lower(), row["labeller"])
            except LabelError as exc:
                raise LabelError(f"{path}:{line}: {exc}") from None
            count += 1
    return count


def _turn(path: Path, line: int, text: str) -> int:
    """A turn number as the store keys it (``1`` and ``01`` are one turn); ASCII digits only."""
    if not (text.isascii() and text.isdigit()) or len(text) > 9:
        raise LabelError(f"{path}:{line}: turn must be a whole number (0, 1, ...), not {printable(text[:40])!r}")
    return int(text)


def _csv_rows(path: Path, text: str) -> list[tuple[int, dict[str, str]]]:
    """The records of a labels CSV, each with the line it starts on, its fields stripped; strict CSV.

    A quote left open (it would swallow the rows after it), text after a closing quote, a NUL, a field
    longer than the csv module's limit, a row with more or fewer fields than the header, or a control
    character in a name is a :class:`LabelError` at the line the record starts on, before anything is written."""
    if "\x00" in text:
        raise LabelError(f"{path}:{text.count(chr(10), 0, text.index(chr(0))) + 1}: holds a NUL byte (refused, "
                         "as every input file; save the file as CSV text)")
    consumed = 0

    def lines() -> Iterator[str]:
        nonlocal consumed
        for line in io.StringIO(text, newline=""):
            consumed += 1
            yield line

    reader = csv.reader(lines(), strict=True)
    records: list[tuple[int, list[str]]] = []
    while True:
        start = consumed + 1
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            if "unexpected end of data" in str(exc):
                raise LabelError(f"{path}:{start}: a quote opened in this record is never closed (it would take in "
                                 "every line after it); close it or remove it") from None
            if consumed > start:  # a record over several lines: a quote opened in it took in the lines after
                raise LabelError(f"{path}:{start}: a quote opened in this record runs on to line {consumed}, where "
                                 f"the CSV breaks ({exc}); close the quote or remove it") from None
            raise LabelError(f"{path}:{start}: not strict CSV: {exc}") from None
        if fields:
            records.append((start, fields))
    if not records:
        raise LabelError(f"{path}: empty; need a header line {','.join(CSV_COLUMNS)}")
    header_line, header = records[0]
    names = [name.strip().lower() for name in header]
    missing = [c for c in CSV_COLUMNS if c not in names]
    if missing:
        raise LabelError(f"{path}:{header_line}: missing column(s) {', '.join(missing)} (need {', '.join(CSV_COLUMNS)})")
    rows = []
    for line, fields in records[1:]:
        while len(fields) > len(names) and not fields[-1].strip():  # a spreadsheet's empty trailing cells
            fields.pop()
        if len(fields) != len(names):
            raise LabelError(f"{path}:{line}: {len(fields)} fields where the header has {len(names)}")
        row = {name: value.strip() for name, value in zip(names, fields, strict=True)}
        for column in ("story_id", "labeller"):  # (a run's name is looked up as it is)
            if not row[column].isprintable():
                raise LabelError(f"{path}:{line}: {column} {printable(row[column][:80])!r} holds a line break or "
                                 "control character")
        rows.append((line, row))
    return rows
