"""Files of StoryTurns: a canonical JSONL file, the pipe inputs (a JSON list of turn-string lists, JSONL of such
lists, JSON/JSONL records with a ``storyturn`` field) and a folder's ``dataset.json``.

Each file is read within bounds (:mod:`commet.sources.bounded`) and every record keeps its line, so that a
problem is said where it is: file, line, column, story, turn and field. The records become StoryTurns
through the format's own parsers (:mod:`commet.format.pipe`, :class:`~commet.format.model.StoryTurn`).
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import fields, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from commet.format.dataset import IMAGES_DIR, Dataset
from commet.format.model import StoryTurn
from commet.format.origin import Provenance
from commet.format.pipe import FIELDS, RawStoryTurn, parse_storyturn, printed_turns
from commet.format.problems import FormatError, Problem
from commet.sources.bounded import InputFileError, JSONLimitError, loads_bounded, read_regular_file
from commet.sources.inputs import decode_text
from commet.sources.picture_files import FOLDER_READER
from commet.taxonomy import Taxonomy, TaxonomyError


def bundled_sample_path() -> Path:
    return Path(str(resources.files("commet") / "data" / "sample"))

#: Largest dataset text file read (StoryTurns, pipe records): 20,000 StoryTurns take about 40 MB.
MAX_DATASET_FILE_BYTES = 512 * 1024 * 1024
#: Largest ``dataset.json`` read (a declared taxonomy of a few hundred tasks is well under a megabyte).
MAX_METADATA_FILE_BYTES = 16 * 1024 * 1024


def read_text(path: Path, *, max_bytes: int = MAX_DATASET_FILE_BYTES) -> str:
    """A dataset file's text: UTF-8 without byte-order mark, line endings made ``\n``; located errors otherwise.

    Read by :func:`~commet.sources.bounded.read_regular_file`: a FIFO, a device or a file over
    ``max_bytes`` is refused before any of it is read.
    """
    file = str(path)

    def refuse(message: str, line: int | None = None, column: int | None = None) -> FormatError:
        return FormatError([Problem(file, line, None, None, None, message, column=column)])

    try:
        data = read_regular_file(path, max_bytes=max_bytes, what="dataset file")
    except FileNotFoundError:
        raise refuse("no such file or folder") from None
    except InputFileError as exc:
        raise refuse(str(exc)) from None
    return decode_text(data, file)  # the same checks as every other input file's


def _position(text: str, index: int) -> tuple[int, int]:
    """1-based line and column of a character index."""
    return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1


def _json_problem(file: str, text: str, offset: int, exc: json.JSONDecodeError) -> Problem:
    """A located problem for JSON that does not parse (``offset``: where the parsed text starts in ``text``)."""
    line, column = _position(text, offset + exc.pos)
    if isinstance(exc, JSONLimitError):
        story, turn, field = _where_in_record(exc.value, exc.path)
        return Problem(file, line, story, turn, field, exc.msg, column=column if exc.exact else None)
    message = exc.msg
    if message.startswith("Unexpected UTF-8 BOM"):
        message = "a UTF-8 byte-order mark inside the file (files joined together?)"
    elif message == "Expecting value" and exc.doc[: exc.pos].rstrip().endswith(","):
        message += " (a trailing comma?)"
    return Problem(file, line, None, None, None, f"invalid JSON: {message}", column=column)


def _where_in_record(value: object, path: list[str | int] | None) -> tuple[str | None, int | None, str | None]:
    """Story, turn and field of a key path inside a decoded record (a canonical or pipe record, a list of turns)."""
    if path is None:
        return None, None, None
    keys = list(path)
    shown = 2  # key components named in the field (a path 64 levels deep is named by its top)
    first = keys[0] if keys else None
    if isinstance(value, list) and len(keys) > 1 and isinstance(first, int) and isinstance(value[first], (dict, list)):
        value = value[first]  # a JSON document listing records: into the record
        keys.pop(0)
    story = value.get("id") if isinstance(value, dict) and isinstance(value.get("id"), str) else None
    if isinstance(value, dict) and keys and keys[0] in ("storyturn", "turns", "turn_extras"):
        container = str(keys.pop(0))
        turns = value[container]
    elif isinstance(value, list):
        container, turns = "storyturn", value
    else:
        return story, None, ".".join(str(k) for k in keys[:shown]) or None
    turn = keys.pop(0) if keys and isinstance(keys[0], int) else None
    if container == "storyturn" and isinstance(turn, int) and not keys and isinstance(turns[turn], str):
        text = turns[turn]  # a pipe turn string: which of its five fields
        at = next((i for i, char in enumerate(text) if 0xD800 <= ord(char) <= 0xDFFF), 0)
        return story, turn, FIELDS[min(text.count("|", 0, at), len(FIELDS) - 1)]
    return story, turn if isinstance(turn, int) else None, ".".join(str(k) for k in keys[:shown]) or container


PRINTED_FORM_WARNING = ("read as the paper's printed form (quoted turns separated by commas, quotes inside them "
                        "not escaped); save it as JSON (commet convert) to silence this")


def _json_values_with_lines(text: str, file: str) -> tuple[list[tuple[int, object]], list[Problem]]:
    """Top-level records of a JSON document (a list of records, or one record) or of a JSONL file.

    Each record comes with its 1-based line. A file is JSONL when it is not one JSON document and
    its first non-blank line is a JSON value on its own; otherwise a JSON error is reported where
    the document breaks (line and column), not at line 1.
    """
    if not text.strip():
        return [], []
    first = len(text) - len(text.lstrip())
    try:
        whole = loads_bounded(text)[0]
    except JSONLimitError as exc:
        return [], [_json_problem(file, text, 0, exc)]
    except json.JSONDecodeError as exc:
        whole_error = exc
    else:
        if isinstance(whole, list) and not (whole and all(isinstance(x, str) for x in whole)):
            values: list[tuple[int, object]] = []
            index = first + 1
            while True:
                while index < len(text) and text[index] in " \t\n,":
                    index += 1
                if index >= len(text) or text[index] == "]":
                    return values, []
                value, end = loads_bounded(text, index, whole=False)
                values.append((_position(text, index)[0], value))
                index = end
        return [(_position(text, first)[0], whole)], []
    lines = text.split("\n")
    first_line = next(line for line in lines if line.strip())
    try:
        loads_bounded(first_line)
    except JSONLimitError:
        pass  # a JSONL file whose first record is refused: said at its line below
    except json.JSONDecodeError:
        if printed_turns(first_line) is None:
            return [], [_json_problem(file, text, 0, whole_error)]
    return _jsonl_values(text, lines, file)


def _jsonl_values(text: str, lines: list[str], file: str) -> tuple[list[tuple[int, object]], list[Problem]]:
    """The records of a JSONL file, one a line, with one problem per mistake: a record pretty-printed over
    several lines is one problem (not one per line), and so is a run of adjacent lines that do not parse."""
    values: list[tuple[int, object]] = []
    problems: list[Problem] = []
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    number = 0
    while number < len(lines):
        line, offset = lines[number], starts[number]
        number += 1
        if not line.strip():
            continue
        try:
            values.append((number, loads_bounded(line)[0]))
            continue
        except JSONLimitError as exc:
            problems.append(_json_problem(file, text, offset, exc))
            continue
        except json.JSONDecodeError as exc:
            error = exc
        turns = printed_turns(line)
        if turns is not None:  # the paper's printed form (Table 13): quotes inside turns are not escaped
            values.append((number, turns))
            problems.append(Problem(file, number, None, None, None, PRINTED_FORM_WARNING, "warning"))
            continue
        spread = _record_over_lines(text, offset, starts)
        if isinstance(spread, int):
            problems.append(Problem(file, number, None, None, None,
                                    f"one record spread over lines {number} to {spread}: a JSONL file holds one "
                                    "record per line (write each on one line, or make the file one JSON list)"))
            number = spread
            continue
        bad = number
        while bad < len(lines) and not _is_record(lines[bad]):
            bad += 1  # the lines after it up to the next record belong to the same mistake
        while bad > number and not lines[bad - 1].strip():
            bad -= 1
        if spread is not None:  # a record spread over lines that breaks further down: said where it breaks
            problem = _json_problem(file, text, 0, spread)
            problem = replace(problem, message=f"{problem.message} (in a record spread over lines {number} to {bad}; "
                                               "a JSONL file holds one record per line)")
        else:
            problem = _json_problem(file, text, offset, error)
            skipped = sum(1 for line in lines[number:bad] if line.strip())
            if skipped:
                problem = replace(problem, message=f"{problem.message} (and the {skipped} line(s) after it, up to the "
                                                   "next record, do not parse either)")
        problems.append(problem)
        number = bad
    return values, problems


def _is_record(line: str) -> bool:
    """Whether a line holds one JSON object or list of its own (a JSONL record), right or wrong."""
    try:
        return isinstance(loads_bounded(line)[0], (dict, list))
    except JSONLimitError:
        return True
    except json.JSONDecodeError:
        return printed_turns(line) is not None


def _record_over_lines(text: str, offset: int, starts: list[int]) -> int | json.JSONDecodeError | None:
    """For a line that does not parse alone: the last line of a JSON value that starts there and ends on a later
    line with nothing after it; or the error where such a value, begun there, breaks on a later line; or None."""
    first_line = bisect.bisect_right(starts, offset)
    try:
        _, end = loads_bounded(text, offset, whole=False)
    except json.JSONDecodeError as exc:
        next_line = starts[first_line] if first_line < len(starts) else len(text)
        continued = exc.pos > next_line and text[next_line:exc.pos + 1].strip()  # the value went on below
        return exc if continued else None
    last = bisect.bisect_right(starts, end - 1)  # 1-based line of the value's last character
    line_end = starts[last] - 1 if last < len(starts) else len(text)
    if last <= first_line or text[end:line_end].strip():
        return None
    return last


def _pydantic_problems(exc: ValidationError, file: str, line: int, story: str | None,
                       turn_key: str = "turns") -> list[Problem]:
    """One located problem per pydantic error (``turns.2.answers`` becomes turn 2, field ``answers``), except that
    the missing and unknown fields of one object are one problem: a misspelt key (``Question``) or a record
    that is not a StoryTurn at all is one mistake, not a line per field."""
    problems: list[Problem] = []
    shape: dict[tuple[int | None, str], tuple[list[str], list[str]]] = {}  # (turn, object) -> missing, unknown
    for error in exc.errors():
        loc = [str(p) for p in error["loc"]]
        turn = None
        if len(loc) >= 2 and loc[0] == turn_key and loc[1].isdigit():
            turn = int(loc[1])
            loc = loc[2:] or [turn_key]
        if error["type"] in ("missing", "extra_forbidden") and loc:
            missing, unknown = shape.setdefault((turn, ".".join(loc[:-1])), ([], []))
            (missing if error["type"] == "missing" else unknown).append(loc[-1])
            continue
        message = error["msg"]
        if "input" in error and error["type"].endswith("_type"):
            message += f", got {_json_type(error['input'])}"
        problems.append(Problem(file, line, story, turn, ".".join(loc) or None, message))
    for (turn, parent), (missing, unknown) in shape.items():
        prefix = f"{parent}." if parent else ""
        if len(missing) + len(unknown) == 1:
            problems.append(Problem(file, line, story, turn, prefix + (missing or unknown)[0],
                                    "Field required" if missing else "unknown field"))
            continue
        said = [f"missing required field(s) {', '.join(missing)}"] if missing else []
        said += [f"unknown field(s) {', '.join(repr(name) for name in unknown)}"] if unknown else []
        problems.append(Problem(file, line, story, turn, prefix + ",".join(missing or unknown), "; ".join(said)))
    return problems


@cache
def _pipe_record_model() -> type[BaseModel]:
    """A pipe record's shape, checked strictly: ``storyturn`` (the turn strings) plus the StoryTurn-level
    fields :class:`RawStoryTurn` declares, so that the two cannot drift apart. Made when a pipe record is
    first read, not at import: a run on a dataset kept validated reads none."""
    hints = get_type_hints(RawStoryTurn)
    record_fields: dict[str, Any] = {"storyturn": (list[str], ...)}
    for raw_field in fields(RawStoryTurn):
        if raw_field.name not in ("turns", "line"):  # the line is where the record was read, not a field of it
            record_fields[raw_field.name] = (hints[raw_field.name], raw_field.default)
    # per turn: options, rubric, meta, of any shape here: parse_storyturn checks them and says where
    record_fields["turn_extras"] = (list[object] | None, None)
    return create_model("PipeRecord", __config__=ConfigDict(extra="forbid", strict=True),
                        __doc__="A pipe record's shape (``storyturn`` plus StoryTurn-level fields), checked strictly.",
                        **record_fields)



def _record_storyturn(value: object, *, file: str, line: int, default_id: str) -> tuple[StoryTurn, list[Problem]]:
    """One StoryTurn from a decoded JSON record (pipe list, pipe record or canonical object)."""
    story = value.get("id") if isinstance(value, dict) and isinstance(value.get("id"), str) and value["id"] else None
    if isinstance(value, str) and value.count("|") == len(FIELDS) - 1:
        value = [value]  # a one-turn StoryTurn as the paper prints it: one quoted pipe turn
    if isinstance(value, list) and value and not any(isinstance(item, str) for item in value):
        raise FormatError([Problem(file, line, None, None, None, "expected a StoryTurn object or a list of turn "
                                                                 f"strings; this line is a list holding {_json_type(value[0])}, "
                                                                 "not a StoryTurn")])
    if isinstance(value, list):
        return parse_storyturn(RawStoryTurn(turns=value, line=line), file=file, default_id=default_id)
    if not isinstance(value, dict):
        raise FormatError([Problem(file, line, None, None, None, "expected a StoryTurn object or a list of turn "
                                                                 f"strings, got {_json_type(value)}")])
    if "storyturn" in value:
        try:
            record = dict(_pipe_record_model().model_validate(value))
        except ValidationError as exc:
            raise FormatError(_pydantic_problems(exc, file, line, story, turn_key="storyturn")) from None
        raw = RawStoryTurn(turns=record.pop("storyturn"), line=line, **record)
        return parse_storyturn(raw, file=file, default_id=default_id)
    try:
        return StoryTurn.model_validate(value, strict=True), []
    except ValidationError as exc:
        raise FormatError(_pydantic_problems(exc, file, line, story)) from None


def _json_type(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "true/false", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def read_storyturns(path: str | Path) -> Dataset:
    """Read one file of StoryTurns in the canonical or the pipe format, keeping line numbers.

    Every record is read; the problems of all unreadable records are raised together.
    """
    path = Path(path)
    file = str(path)
    text = read_text(path)
    dataset = Dataset(storyturns=[], name=path.stem, source_file=file, folder_reader=FOLDER_READER,
                      root=path.parent if (path.parent / IMAGES_DIR).is_dir() else None)
    values, problems = _json_values_with_lines(text, file)
    dataset.warnings.extend(p for p in problems if p.severity == "warning")
    problems = [p for p in problems if p.severity != "warning"]
    stem = path.stem
    for position, (line, value) in enumerate(values):
        try:
            storyturn, warnings = _record_storyturn(value, file=file, line=line,
                                                    default_id=f"{stem}-{position + 1:04d}")
        except FormatError as exc:
            problems.extend(exc.problems)
            continue
        dataset.storyturns.append(storyturn)
        dataset.lines.setdefault(storyturn.id, line)
        dataset.line_list.append(line)
        dataset.warnings.extend(warnings)
    if problems:
        raise FormatError(problems)
    return dataset


def _read_metadata(dataset: Dataset, meta_path: Path) -> None:
    """Name, version, licence, description, languages and declared taxonomy from ``dataset.json``."""
    apply_metadata(dataset, read_text(meta_path, max_bytes=MAX_METADATA_FILE_BYTES), str(meta_path), dataset.name)


def apply_metadata(dataset: Dataset, text: str, file: str, default_name: str) -> None:
    """Read a ``dataset.json`` text into ``dataset`` (an object; other keys are kept out).

    A declared taxonomy (``tasks``, ``categories``, ``mental_states``; docs/storyturn.md section 8)
    becomes ``dataset.taxonomy``; without one the dataset uses the booklet's.
    """
    try:
        meta = loads_bounded(text)[0]
    except json.JSONDecodeError as exc:
        raise FormatError([_json_problem(file, text, 0, exc)]) from None
    if not isinstance(meta, dict):
        raise FormatError([Problem(file, 1, None, None, None, f"dataset.json must be a JSON object, got {_json_type(meta)}")])
    problems = []
    for key, kinds in (("name", (str,)), ("version", (str, int, float)), ("licence", (str,)), ("license", (str,)),
                       ("description", (str,))):
        if key in meta and (not isinstance(meta[key], kinds) or isinstance(meta[key], bool)):
            line = _key_line(text, key)
            problems.append(Problem(file, line, None, None, key, f"must be {'a string' if kinds == (str,) else 'a string or a number'}, "
                                                                  f"got {_json_type(meta[key])}"))
    languages = meta.get("language", ["en"])
    languages = [languages] if isinstance(languages, str) else languages
    if not isinstance(languages, list) or not languages or not all(isinstance(x, str) and x for x in languages):
        problems.append(Problem(file, _key_line(text, "language"), None, None, "language",
                                "must be a language code or a list of them (such as \"en\")"))
    if problems:
        raise FormatError(problems)
    try:
        taxonomy = Taxonomy.from_json(meta)
    except TaxonomyError as exc:
        parts = exc.field.split(".")
        line = _key_line(text, parts[1] if len(parts) > 1 and parts[0] == "tasks" else parts[0])
        raise FormatError([Problem(file, line, None, None, exc.field, str(exc))]) from None
    dataset.name = str(meta.get("name", default_name))
    dataset.version = str(meta.get("version", "0"))
    dataset.licence = str(meta.get("license", meta.get("licence", "unspecified")))
    dataset.description = str(meta.get("description", ""))
    dataset.languages = list(languages)
    dataset.taxonomy = taxonomy
    dataset.provenance = Provenance.from_json(meta.get("source")) or dataset.provenance


def _key_line(text: str, key: str) -> int:
    match = re.search(rf'"{re.escape(key)}"\s*:', text)
    return _position(text, match.start())[0] if match else 1
