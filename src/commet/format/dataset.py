"""Datasets: a folder with ``storyturns.jsonl``, ``images/`` and ``dataset.json``.

:func:`load_dataset` also reads a single canonical JSONL file, any of the pipe inputs
(JSON list of turn-string lists, JSONL of such lists, JSON/JSONL records with a
``storyturn`` field), the bundled ``sample``, and Hugging Face data: ``save_to_disk`` folders,
parquet folders (with or without a dataset card) and single ``.parquet`` files.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from importlib import resources
from pathlib import Path
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from commet.format.model import StoryTurn
from commet.format.pipe import FIELDS, RawStoryTurn, parse_storyturn, printed_turns, to_pipe_record
from commet.format.problems import FormatError, Problem
from commet.taxonomy import BOOKLET, Taxonomy, TaxonomyError, taxonomy_dict

STORYTURNS_FILE = "storyturns.jsonl"
METADATA_FILE = "dataset.json"
IMAGES_DIR = "images"
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".webp", ".gif")
FORMAT_VERSION = "storyturn-1"
MAX_JSON_DEPTH = 64  # StoryTurns nest about 6 levels; deeper input is refused before it can exhaust the stack


def image_file_candidates(image_id: str) -> list[str]:
    """File names an image id may be saved under: as written, ``:`` as ``_``, with or without extension."""
    stems = [image_id]
    if ":" in image_id:
        stems.append(image_id.replace(":", "_"))
    names: list[str] = []
    for stem in stems:
        names.append(stem)
        if not stem.lower().endswith(IMAGE_EXTENSIONS):
            names.extend(stem + ext for ext in IMAGE_EXTENSIONS)
    return names


@dataclass
class Dataset:
    """StoryTurns plus where their pictures live and where each came from (for located errors)."""

    storyturns: list[StoryTurn]
    name: str = "dataset"
    version: str = "0"
    licence: str = "unspecified"
    description: str = ""
    root: Path | None = None
    source_file: str = "<memory>"
    lines: dict[str, int] = field(default_factory=dict)  # first line of each id
    line_list: list[int] = field(default_factory=list)  # line of each StoryTurn, in order
    warnings: list[Problem] = field(default_factory=list)
    images: dict[str, bytes] = field(default_factory=dict)  # in-memory pictures (HF datasets, generators)
    taxonomy: Taxonomy = BOOKLET  # the tasks and categories it declares (dataset.json), else the booklet's
    languages: list[str] = field(default_factory=lambda: ["en"])  # ISO 639-1 codes of its text

    def __len__(self) -> int:
        return len(self.storyturns)

    def __iter__(self) -> Iterator[StoryTurn]:
        return iter(self.storyturns)

    def get(self, story_id: str) -> StoryTurn:
        for storyturn in self.storyturns:
            if storyturn.id == story_id:
                return storyturn
        raise KeyError(story_id)

    @property
    def images_dir(self) -> Path | None:
        return self.root / IMAGES_DIR if self.root is not None else None

    def locate_image(self, image_id: str) -> tuple[Path | None, str | None]:
        """The regular file an image id refers to, or None and why not.

        Why: a picture must be a regular file inside the dataset folder; a path that leaves it
        (``..``, an absolute path, a symbolic link pointing out) is refused, never read.
        """
        if self.root is None:
            return None, "not found (no images/ folder next to the dataset file)"
        if not image_id.isprintable() or image_id != image_id.strip():
            return None, "has control characters or surrounding blanks in its id"
        top = self.root.resolve()
        for folder in (self.root / IMAGES_DIR, self.root):
            for name in image_file_candidates(image_id):
                candidate = folder / name
                try:
                    if not os.path.lexists(candidate):
                        continue
                    if not candidate.resolve().is_relative_to(top):
                        what = "is a symbolic link pointing" if candidate.is_symlink() else "leads"
                        return None, f"{what} out of the dataset folder (refused, not read)"
                    mode = candidate.stat().st_mode
                except FileNotFoundError:
                    return None, f"is a broken symbolic link ({candidate})"
                except (OSError, RuntimeError) as exc:  # RuntimeError: a symbolic link loop (Python < 3.13)
                    return None, f"cannot be looked at ({candidate}: {getattr(exc, 'strerror', None) or exc})"
                if stat.S_ISDIR(mode):
                    return None, f"is a folder, not a picture file ({candidate})"
                if not stat.S_ISREG(mode):
                    return None, f"is not a regular file ({candidate})"
                return candidate, None
        parts = Path(image_id).parts
        if Path(image_id).is_absolute() or ".." in parts:
            return None, "leads out of the dataset folder (refused, not read)"
        return None, "not found"

    def image_path(self, image_id: str) -> Path | None:
        """The file an image id refers to, or None when it does not exist or is refused."""
        return self.locate_image(image_id)[0]

    def has_image(self, image_id: str) -> bool:
        return any(n in self.images for n in image_file_candidates(image_id)) or self.image_path(image_id) is not None

    def image_bytes(self, image_id: str) -> bytes:
        for name in image_file_candidates(image_id):
            if name in self.images:
                return self.images[name]
        path = self.image_path(image_id)
        if path is None:
            raise FileNotFoundError(f"image {image_id!r} not found in {self.images_dir or 'memory'}")
        return path.read_bytes()

    def content_hash(self, *, pictures: bool = True) -> str:
        """A hash of the StoryTurns and the picture bytes they use: runs record it to tell datasets apart.

        ``pictures=False`` leaves the pictures out, for a run that shows none (its results do not
        depend on them, so its pictures are neither read nor hashed).
        """
        digest = hashlib.sha256()
        pictures_seen: dict[str, bytes | None] = {}  # one read and hash per picture
        for storyturn in self.storyturns:
            digest.update(storyturn.model_dump_json().encode())
            if not pictures:
                continue
            for image_id in storyturn.images:
                if image_id not in pictures_seen:
                    pictures_seen[image_id] = self._picture_digest(image_id)
                picture = pictures_seen[image_id]
                if picture is not None:
                    digest.update(picture)
        return digest.hexdigest()

    def hash_matches(self, digest: str) -> bool:
        """Whether ``digest`` is this dataset's content hash, with its pictures or without (a run that showed none)."""
        return digest in (self.content_hash(pictures=False), self.content_hash())

    def _picture_digest(self, image_id: str) -> bytes | None:
        """sha256 of a picture's bytes, None when the dataset has no such picture."""
        for name in image_file_candidates(image_id):
            if name in self.images:
                return hashlib.sha256(self.images[name]).digest()
        path = self.image_path(image_id)
        return hashlib.sha256(path.read_bytes()).digest() if path is not None else None

    def metadata(self) -> dict[str, object]:
        """The ``dataset.json`` object: a declared taxonomy is written as ``tasks``/``categories``/
        ``mental_states`` (read back as the declaration); the booklet's is written as ``taxonomy`` for reference."""
        meta: dict[str, object] = {
            "name": self.name,
            "version": self.version,
            "license": self.licence,
            "description": self.description,
            "language": list(self.languages),
            "format": FORMAT_VERSION,
        }
        if self.taxonomy.declared:
            meta.update(self.taxonomy.to_json())
        else:
            meta["taxonomy"] = taxonomy_dict()
        return meta

    def save(self, folder: str | Path) -> Path:
        """Write the canonical dataset folder (JSONL, images, metadata)."""
        folder = Path(folder)
        (folder / IMAGES_DIR).mkdir(parents=True, exist_ok=True)
        with (folder / STORYTURNS_FILE).open("w", encoding="utf-8") as out:
            for storyturn in self.storyturns:
                out.write(storyturn.model_dump_json(exclude_defaults=True) + "\n")
        (folder / METADATA_FILE).write_text(json.dumps(self.metadata(), indent=2) + "\n", encoding="utf-8")
        for storyturn in self.storyturns:
            for image_id in storyturn.images:
                if not self.has_image(image_id):
                    continue
                source = self.image_path(image_id)
                target = folder / IMAGES_DIR / self.saved_image_name(image_id)
                if source is None or source.resolve() != target.resolve():
                    target.write_bytes(self.image_bytes(image_id))
        return folder

    def saved_image_name(self, image_id: str) -> str:
        """The file name :meth:`save` gives a picture in the folder's ``images/``."""
        source = self.image_path(image_id)
        return source.name if source is not None else _image_filename(image_id)

    def save_pipe(self, path: str | Path) -> Path:
        """Write pipe records (JSONL), one StoryTurn per line, keeping every StoryTurn-level field."""
        path = Path(path)
        with path.open("w", encoding="utf-8") as out:
            for storyturn in self.storyturns:
                out.write(json.dumps(to_pipe_record(storyturn), ensure_ascii=False) + "\n")
        return path

def _image_filename(image_id: str) -> str:
    stem = image_id.replace(":", "_").replace("/", "_")
    return stem if stem.lower().endswith(IMAGE_EXTENSIONS) else stem + ".png"


def bundled_sample_path() -> Path:
    return Path(str(resources.files("commet") / "data" / "sample"))


def read_text(path: Path) -> str:
    """A dataset file's text: UTF-8 without byte-order mark, line endings made ``\n``; located errors otherwise."""
    file = str(path)

    def refuse(message: str, line: int | None = None, column: int | None = None) -> FormatError:
        return FormatError([Problem(file, line, None, None, None, message, column=column)])

    try:
        mode = path.stat().st_mode
        if stat.S_ISDIR(mode):
            raise refuse("is a folder, not a file")
        if not stat.S_ISREG(mode):
            raise refuse("is not a regular file")
        data = path.read_bytes()
    except FileNotFoundError:
        raise refuse("no such file or folder") from None
    except OSError as exc:
        raise refuse(f"cannot read: {exc.strerror or exc}") from None
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)) and len(data) % 4 == 0:
        raise refuse("UTF-32 text (byte-order mark); save the file as UTF-8 without BOM", 1, 1)
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise refuse("UTF-16 text (byte-order mark); save the file as UTF-8 without BOM", 1, 1)
    if data.startswith(codecs.BOM_UTF8):
        raise refuse("the file starts with a UTF-8 byte-order mark; save it as UTF-8 without BOM", 1, 1)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        column = len(data[line_start:exc.start].decode("utf-8", errors="replace")) + 1
        raise refuse(f"not UTF-8 text: byte 0x{data[exc.start]:02x} ({exc.reason}); save the file as UTF-8",
                     data.count(b"\n", 0, exc.start) + 1, column) from None
    if "\x00" in text:
        at = text.index("\x00")
        raise refuse("NUL byte in the text (UTF-16 without byte-order mark, or not a text file)",
                     text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1)
    return text.replace("\r\n", "\n").replace("\r", "\n")


#: a JSON string (to its closing quote, or to the end of its line when it has none: a pattern that needed the
#: closing quote tried again from every quote of an unclosed string, quadratic in it) or a bracket
_JSON_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"?|[\[\]{}]')


def _depth_position(text: str, start: int, limit: int) -> int:
    """Where nesting first goes deeper than ``limit`` (strings skipped), or ``start``."""
    depth = 0
    for match in _JSON_TOKEN.finditer(text, start):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > limit:
                return match.start()
        elif token in "]}":
            depth -= 1
    return start


def _too_deep(value: object, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether a decoded JSON value nests deeper than ``limit`` (iterative: no recursion of its own)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return False


def _position(text: str, index: int) -> tuple[int, int]:
    """1-based line and column of a character index."""
    return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1


def _json_problem(file: str, text: str, offset: int, exc: json.JSONDecodeError | RecursionError) -> Problem:
    if isinstance(exc, RecursionError):
        line, column = _position(text, _depth_position(text, offset, MAX_JSON_DEPTH))
        return Problem(file, line, None, None, None, f"JSON nested more than {MAX_JSON_DEPTH} levels deep",
                       column=column)
    line, column = _position(text, offset + exc.pos)
    message = exc.msg
    if message.startswith("Unexpected UTF-8 BOM"):
        message = "a UTF-8 byte-order mark inside the file (files joined together?)"
    elif message == "Expecting value" and exc.doc[: exc.pos].rstrip().endswith(","):
        message += " (a trailing comma?)"
    return Problem(file, line, None, None, None, f"invalid JSON: {message}", column=column)


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
    decoder = json.JSONDecoder()
    first = len(text) - len(text.lstrip())
    try:
        whole = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        whole_error: json.JSONDecodeError | RecursionError = exc
    else:
        if isinstance(whole, list) and not (whole and all(isinstance(x, str) for x in whole)):
            values: list[tuple[int, object]] = []
            index = first + 1
            while True:
                while index < len(text) and text[index] in " \t\n,":
                    index += 1
                if index >= len(text) or text[index] == "]":
                    return values, []
                value, end = decoder.raw_decode(text, index)
                values.append((_position(text, index)[0], value))
                index = end
        return [(_position(text, first)[0], whole)], []
    lines = text.split("\n")
    first_line = next(line for line in lines if line.strip())
    try:
        json.loads(first_line)
    except (json.JSONDecodeError, RecursionError):
        if printed_turns(first_line) is None:
            return [], [_json_problem(file, text, 0, whole_error)]
    values, problems = [], []
    offset = 0
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                values.append((number, json.loads(line)))
            except (json.JSONDecodeError, RecursionError) as exc:
                turns = printed_turns(line)
                if turns is None:
                    problems.append(_json_problem(file, text, offset, exc))
                else:  # the paper's printed form (Table 13): quotes inside turns are not escaped
                    values.append((number, turns))
                    problems.append(Problem(file, number, None, None, None, PRINTED_FORM_WARNING, "warning"))
        offset += len(line) + 1
    return values, problems


def _pydantic_problems(exc: ValidationError, file: str, line: int, story: str | None,
                       turn_key: str = "turns") -> list[Problem]:
    """One located problem per pydantic error (``turns.2.answers`` becomes turn 2, field ``answers``)."""
    problems = []
    for error in exc.errors():
        loc = [str(p) for p in error["loc"]]
        turn = None
        if len(loc) >= 2 and loc[0] == turn_key and loc[1].isdigit():
            turn = int(loc[1])
            loc = loc[2:] or [turn_key]
        message = error["msg"]
        if error["type"] == "extra_forbidden":
            message = "unknown field"
        elif "input" in error and error["type"].endswith("_type"):
            message += f", got {_json_type(error['input'])}"
        problems.append(Problem(file, line, story, turn, ".".join(loc) or None, message))
    return problems


def _pipe_record_model() -> type[BaseModel]:
    """A pipe record's shape, checked strictly: ``storyturn`` (the turn strings) plus the StoryTurn-level
    fields :class:`RawStoryTurn` declares, so that the two cannot drift apart."""
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


PipeRecord = _pipe_record_model()


def _record_storyturn(value: object, *, file: str, line: int, default_id: str) -> tuple[StoryTurn, list[Problem]]:
    """One StoryTurn from a decoded JSON record (pipe list, pipe record or canonical object)."""
    story = value.get("id") if isinstance(value, dict) and isinstance(value.get("id"), str) and value["id"] else None
    if _too_deep(value):
        raise FormatError([Problem(file, line, story, None, None, f"JSON nested more than {MAX_JSON_DEPTH} levels deep")])
    if isinstance(value, str) and value.count("|") == len(FIELDS) - 1:
        value = [value]  # a one-turn StoryTurn as the paper prints it: one quoted pipe turn
    if isinstance(value, list):
        return parse_storyturn(RawStoryTurn(turns=value, line=line), file=file, default_id=default_id)
    if not isinstance(value, dict):
        raise FormatError([Problem(file, line, None, None, None, "expected a StoryTurn object or a list of turn "
                                                                 f"strings, got {_json_type(value)}")])
    if "storyturn" in value:
        try:
            record = dict(PipeRecord.model_validate(value))
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
    dataset = Dataset(storyturns=[], name=path.stem, source_file=file,
                      root=path.parent if (path.parent / IMAGES_DIR).is_dir() else None)
    values, problems = _json_values_with_lines(text, file)
    dataset.warnings.extend(p for p in problems if p.severity == "warning")
    problems = [p for p in problems if p.severity != "warning"]
    for position, (line, value) in enumerate(values):
        try:
            storyturn, warnings = _record_storyturn(value, file=file, line=line,
                                                    default_id=f"{path.stem}-{position + 1:04d}")
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
    apply_metadata(dataset, read_text(meta_path), str(meta_path), dataset.name)


def apply_metadata(dataset: Dataset, text: str, file: str, default_name: str) -> None:
    """Read a ``dataset.json`` text into ``dataset`` (an object; other keys are kept out).

    A declared taxonomy (``tasks``, ``categories``, ``mental_states``; docs/storyturn.md section 8)
    becomes ``dataset.taxonomy``; without one the dataset uses the booklet's.
    """
    try:
        meta = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
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


def _key_line(text: str, key: str) -> int:
    match = re.search(rf'"{re.escape(key)}"\s*:', text)
    return _position(text, match.start())[0] if match else 1
