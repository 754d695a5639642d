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
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

from commet.errors import CommetError
from commet.format.dataset import Dataset
from commet.format.problems import Problem
from commet.sources.bounded import InputFileError, first_key_twice, read_regular_file

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
        with contextlib.suppress(ValueError, RecursionError):
            json.loads(data)
            return None
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            json.loads(raw.decode("utf-8"), object_pairs_hook=refuse_key_twice)
        except UnicodeDecodeError:
            return BadLine(number, "is not UTF-8 text")
        except KeyTwice as exc:
            return BadLine(number, f"writes the key {exc.key!r} twice in one object")
        except RecursionError:
            return BadLine(number, "nests its values too deeply to be read")
        except ValueError as exc:
            return BadLine(number, f"is not JSON: {str(exc).splitlines()[0][:200]}")
    return None


class KeyTwice(CommetError, ValueError):
    """A JSON object that writes ``key`` twice (raised from the decoder's hook, located by the caller)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def refuse_key_twice(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A JSON object, refused when it writes a key twice (``datasets`` would keep one of the two, unsaid)."""
    found = dict(pairs)
    if len(found) != len(pairs):
        raise KeyTwice(first_key_twice(pairs))
    return found


#: CSV options of ``datasets`` (pandas) under which a file's records are not its header's fields: not checked
_CSV_RESHAPING = ("names", "column_names", "skiprows", "comment", "escapechar", "usecols", "index_col", "nrows")


def misread_rows(file: Path, config: object | None = None) -> BadLine | None:
    """What ``datasets`` would read without a word but wrongly, in a data file it is about to read: a CSV/TSV record
    with more or fewer fields than its header (pandas pads a short record with nulls and takes a long one's first
    fields for an index: its cells land in other columns), or a quote closed before the field ends (pandas joins
    the rest on); an object of a ``.json`` document that writes a key twice (``datasets`` keeps the last). None
    when none is found, or the file is compressed, past :data:`MAX_SCANNED_BYTES` or not UTF-8 (``datasets``
    says so itself). ``config`` is the CSV builder's (its ``sep``, ``delimiter`` and ``quotechar``)."""
    name = file.name.lower()
    if not name.endswith((".csv", ".tsv", ".json", ".jsonl", ".ndjson")):
        return None
    try:
        data = read_regular_file(file, max_bytes=MAX_SCANNED_BYTES, what="data file")
        text = "" if name.endswith((".jsonl", ".ndjson")) else data.decode("utf-8-sig")
    except (InputFileError, OSError, UnicodeDecodeError):
        return None
    if name.endswith(".json"):
        try:
            json.loads(text, object_pairs_hook=refuse_key_twice)
        except KeyTwice as exc:
            line = key_twice_line(text, exc.key)
            return BadLine(line, f"line {line} of the file writes the key {exc.key!r} twice in one object: which "
                                 "value is meant is not guessed")
        except RecursionError:
            return BadLine(1, f"its JSON {_TOO_DEEP}")
        except ValueError:
            return _too_deep(data)  # JSON lines, or not JSON: datasets reads or refuses it, bad_json_line says where
        return None
    if not name.endswith((".csv", ".tsv")):
        return _too_deep(data)
    if any(getattr(config, option, None) not in (None, [], 0, False) for option in _CSV_RESHAPING) or \
            getattr(config, "header", "infer") not in ("infer", 0):
        return None
    delimiter = getattr(config, "delimiter", None) or getattr(config, "sep", None) or \
        ("\t" if name.endswith(".tsv") else ",")
    quote = getattr(config, "quotechar", None) or '"'
    if len(delimiter) != 1 or len(quote) != 1:
        return None  # a regular expression or several characters: pandas' python engine, not checked here
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, quotechar=quote, strict=True)
    number = 0
    try:
        header = next(reader, None)
        if header is None:
            return None
        for number, row in enumerate(reader, start=1):  # rows counted as the loader locates them (header: 0)
            if row and len(row) != len(header):
                return BadLine(number, f"row {number} (line {reader.line_num} of the file) has {len(row)} fields "
                                       f"and the header {len(header)}: its cells would land in other columns (a "
                                       "separator too many or too few, or a quote not closed?)")
    except csv.Error as exc:
        return BadLine(number + 1, f"row {number + 1} (line {reader.line_num} of the file) is not CSV as written: "
                                   f"{exc} (a quote closed before its field ends?)")
    return None


#: a line with more brackets than this may nest deeper than a JSON reader can follow: it is parsed to see
DEEP_BRACKETS = 500
_TOO_DEEP = "nests its values too deeply to be read (pyarrow's JSON reader, which datasets uses, would crash on it)"


def _too_deep(data: bytes) -> BadLine | None:
    """The first JSON line nested deeper than Python's parser follows (pyarrow's reader has no such guard: past
    some ten thousand levels it overflows its stack and the process dies, with no error to report)."""
    if data.count(b"[") + data.count(b"{") <= DEEP_BRACKETS:
        return None
    for number, raw in enumerate(data.splitlines(), start=1):
        if raw.count(b"[") + raw.count(b"{") > DEEP_BRACKETS:
            try:
                json.loads(raw)
            except RecursionError:
                return BadLine(number, f"line {number} of the file {_TOO_DEEP}")
            except ValueError:
                continue
    return None


def key_twice_line(text: str, key: str) -> int:
    """The line where ``key`` is written a second time in one object, found by parsing ``text`` again with the
    pure-Python scanner, which knows where each object starts and ends (only once a key twice was found)."""
    from json import decoder, scanner

    class Found(Exception):
        def __init__(self, line: int) -> None:
            super().__init__(line)
            self.line = line

    parser = json.JSONDecoder()

    def parse_object(s_and_end: tuple[str, int], strict: bool, scan_once: Any, object_hook: Any, pairs_hook: Any,
                     memo: Any = None) -> tuple[object, int]:
        start = s_and_end[1]
        pairs, end = decoder.JSONObject(s_and_end, strict, scan_once, object_hook, list, memo)  # type: ignore[attr-defined]
        keys = [k for k, _ in pairs]
        if keys.count(key) > 1:
            spots = [m.start() for m in re.finditer(rf"{re.escape(json.dumps(key))}\s*:", text[start:end])]
            spot = start + (spots[-1] if len(spots) > 1 else 0)  # the later one (a nested object may hold it too)
            raise Found(text.count("\n", 0, spot) + 1)
        return dict(pairs), end

    # kept ignores: the pure-Python scanner's hooks are the decoder's attributes, which typeshed does not declare
    parser.parse_object = parse_object  # type: ignore[attr-defined]
    parser.scan_once = scanner.py_make_scanner(parser)  # type: ignore[attr-defined]
    try:
        parser.decode(text)
    except Found as found:
        return found.line
    except (ValueError, RecursionError):
        pass
    return 0


#: a data file up to this size is scanned for the line ``datasets`` could not read (only when it refused one), and
#: for what it would misread (:func:`misread_rows`) before it reads it
MAX_SCANNED_BYTES = 256 * 1024 * 1024
