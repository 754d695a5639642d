"""The files behind a table ``datasets`` read from a folder: which file and line each row came from, the folders
that hold them, what a load made in ``datasets``' cache (removed when the dataset is refused), and what in them
``datasets`` misreads or names no line of (a JSON file wrapping its rows, a card declaring other features, a JSON
line that does not parse).

Why: ``datasets`` concatenates a split's files (``data/test-00000-of-00002.parquet``, ``-00001-``) into one
table and names no file in what it gives back. A located error must name the file and its line, so the rows each
file holds are counted from the files themselves (parquet's footer, JSON lines, a JSON list, CSV records); where a
count cannot be had exactly (compressed files, other JSON shapes) or the counts do not add up to the rows
``datasets`` gave, the table keeps its own name and row numbers, never a guessed file.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

from commet.format.dataset import Dataset
from commet.format.problems import Problem
from commet.sources.bounded import InputFileError, read_regular_file

#: a text data file up to this size is counted line by line for this (larger: the table's own row numbers)
MAX_COUNTED_BYTES = 256 * 1024 * 1024

RowFiles = tuple[tuple[str, int], ...]  # (file, rows it holds), in the order datasets read them


def _rows_in(file: Path) -> int | None:
    """How many rows ``datasets`` makes of ``file``, when that can be told exactly; None otherwise."""
    name = file.name.lower()
    if name.endswith(".parquet"):
        import pyarrow.parquet as pq

        try:
            return int(pq.ParquetFile(file).metadata.num_rows)
        except Exception:  # noqa: BLE001 - an unreadable footer is refused by the folder check, named
            return None
    if not name.endswith((".jsonl", ".ndjson", ".json", ".csv", ".tsv")):
        return None
    try:
        text = read_regular_file(file, max_bytes=MAX_COUNTED_BYTES, what="data file").decode("utf-8-sig")
    except (InputFileError, OSError, UnicodeDecodeError):
        return None
    if name.endswith((".csv", ".tsv")):
        records = [r for r in csv.reader(io.StringIO(text), delimiter="\t" if name.endswith(".tsv") else ",") if r]
        return max(len(records) - 1, 0)  # less the header
    if name.endswith(".json"):
        with contextlib.suppress(ValueError):
            value = json.loads(text)
            return len(value) if isinstance(value, list) else None
    return sum(1 for line in text.splitlines() if line.strip())


def row_files(files: Sequence[Path], rows: int) -> RowFiles:
    """Each file with the rows it holds, when every count is known and they add up to ``rows``; else ()."""
    counted = [(str(file), _rows_in(file)) for file in files]
    known = [(file, count) for file, count in counted if count is not None]
    if len(known) != len(counted) or sum(count for _, count in known) != rows:
        return ()
    return tuple(known)


def file_and_line(files: RowFiles, line: int) -> tuple[str, int] | None:
    """The file and its 1-based row of the table's ``line``-th row, None when ``files`` cannot say."""
    first = 1
    for file, count in files:
        if line < first + count:
            return file, line - first + 1
        first += count
    return None


def located(problems: list[Problem], tables: dict[str, RowFiles]) -> list[Problem]:
    """``problems`` about rows of ``tables`` (by the table's name), each said at its file and row."""
    out = []
    for problem in problems:
        files = tables.get(problem.file)
        found = file_and_line(files, problem.line) if files and problem.line else None
        out.append(replace(problem, file=found[0], line=found[1]) if found else problem)
    return out


def locate_storyturns(data: Dataset, tables: dict[str, RowFiles]) -> None:
    """Give each StoryTurn read from a table of several files its file and row (for the validation's lines)."""
    if not tables:
        return
    first_rows = {read.storyturn: (read.where, read.turns[0][0]) for read in data.rows_read if read.turns and
                  read.turns[0]}
    files, lines = [], []
    for index, st in enumerate(data.storyturns):
        file, line = data.where(index)
        where, row = first_rows.get(st.id, (None, None))
        found = file_and_line(tables[where], row) if where in tables and row else None
        files.append(found[0] if found else file)
        lines.append(found[1] if found else line)
    data.file_list, data.line_list = files, [line if line is not None else 0 for line in lines]


def folders_of(folder: Path, files: Sequence[Path]) -> tuple[str, ...]:
    """The folders (from ``folder``, POSIX) of the data files read that lie inside it, each once."""
    found: list[str] = []
    for file in files:
        relative = os.path.relpath(str(file.parent), str(folder))
        if not relative.startswith(".."):
            found.append(PurePosixPath(*Path(relative).parts).as_posix() if relative != "." else ".")
    return tuple(dict.fromkeys(found))


def absent(cache: Path, root: Path) -> list[Path]:
    """``cache`` and those of its parents below ``root`` (``datasets``' cache) that do not exist yet: what a load
    through ``cache`` makes."""
    missing = []
    for folder in (cache, *cache.parents):
        if folder.exists() or not folder.is_relative_to(root):
            break
        missing.append(folder)
    return missing


def discard_prepared(made: Sequence[Path]) -> None:
    """Remove what a refused load made in ``datasets``' cache (the prepared rows of a table that makes no dataset):
    a refusal writes nothing. The folders are CoMMET's content-keyed ones, made by this load."""
    if made:
        shutil.rmtree(made[0], ignore_errors=True)
    for folder in made[1:]:
        with contextlib.suppress(OSError):
            folder.rmdir()  # only while empty: another load may have put its own cache there meanwhile


def wrapper_column(features: Any) -> tuple[str, Any] | None:
    """The one column of a table that wraps its rows (a JSON file ``{"data": [{...}, ...]}``, which ``datasets``
    reads as one row), with its items' features; None for any other table. Only a column whose name is no role's
    (``data``, ``rows``, ``examples``), holding a list of structs, all alone: chat ``messages`` or ``turns`` are not
    wrappers."""
    from commet.sources.columns import NAMES, column_key

    if len(features) != 1:
        return None
    name, feature = next(iter(features.items()))
    inner = getattr(feature, "feature", None) if type(feature).__name__ in ("Sequence", "List", "LargeList") else \
        feature[0] if isinstance(feature, list) and feature else None
    if not isinstance(inner, dict) or any(column_key(name) in names for names in NAMES.values()):
        return None
    return name, inner


def declares_features(folder: Path) -> bool:
    """Whether the folder's dataset card declares features (``dataset_info``), which ``datasets`` casts the files to."""
    from commet.sources.card import front_matter

    info = front_matter(folder).get("dataset_info")
    entries = info if isinstance(info, list) else [info]
    return any(isinstance(entry, dict) and entry.get("features") for entry in entries)


@dataclass(frozen=True)
class BadLine:
    line: int
    why: str

    def __str__(self) -> str:
        return f"line {self.line} {self.why}"


def bad_json_line(file: Path) -> BadLine | None:
    """The first line of a JSON lines file (or a ``.json`` file of lines) that is not a JSON value; None when each
    is one, the file is one JSON document, is not JSON, or is past the size read for this."""
    if file.suffix.lower() not in (".jsonl", ".ndjson", ".json"):
        return None
    try:
        data = read_regular_file(file, max_bytes=MAX_SCANNED_BYTES, what="data file")
    except (InputFileError, OSError):
        return None
    if file.suffix.lower() == ".json":
        with contextlib.suppress(ValueError):
            json.loads(data)
            return None
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            return BadLine(number, "is not UTF-8 text")
        except ValueError as exc:
            return BadLine(number, f"is not JSON: {str(exc).splitlines()[0][:200]}")
    return None


#: a data file up to this size is scanned for the line ``datasets`` could not read (only when it refused one)
MAX_SCANNED_BYTES = 256 * 1024 * 1024
