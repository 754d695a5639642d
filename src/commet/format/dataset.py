"""Datasets: a folder with ``storyturns.jsonl``, ``images/`` and ``dataset.json``.

:func:`load_dataset` also reads a single canonical JSONL file, any of the pipe inputs
(JSON list of turn-string lists, JSONL of such lists, JSON/JSONL records with a
``storyturn`` field), the bundled ``sample`` and a Hugging Face ``save_to_disk`` folder.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from commet.format.model import StoryTurn
from commet.format.pipe import RawStoryTurn, parse_storyturn, to_pipe_record
from commet.format.problems import FormatError, Problem
from commet.taxonomy import BOOKLET, Taxonomy, TaxonomyError, taxonomy_dict

STORYTURNS_FILE = "storyturns.jsonl"
METADATA_FILE = "dataset.json"
IMAGES_DIR = "images"
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".webp", ".gif")
FORMAT_VERSION = "storyturn-1"


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

    def image_path(self, image_id: str) -> Path | None:
        """The file an image id refers to, or None when it does not exist."""
        folders = [d for d in (self.images_dir, self.root) if d is not None]
        for folder in folders:
            for name in image_file_candidates(image_id):
                candidate = folder / name
                if candidate.is_file() and candidate.resolve().is_relative_to(folder.resolve()):
                    return candidate
        return None

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

    def content_hash(self) -> str:
        """A hash of the StoryTurns and the picture bytes they use: runs record it to tell datasets apart."""
        digest = hashlib.sha256()
        for storyturn in self.storyturns:
            digest.update(storyturn.model_dump_json().encode())
            for image_id in storyturn.images:
                if self.has_image(image_id):
                    digest.update(hashlib.sha256(self.image_bytes(image_id)).digest())
        return digest.hexdigest()

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
                target_name = source.name if source is not None else _image_filename(image_id)
                target = folder / IMAGES_DIR / target_name
                if source is None or source.resolve() != target.resolve():
                    target.write_bytes(self.image_bytes(image_id))
        return folder

    def save_pipe(self, path: str | Path) -> Path:
        """Write pipe records (JSONL), one StoryTurn per line, keeping every StoryTurn-level field."""
        path = Path(path)
        with path.open("w", encoding="utf-8") as out:
            for storyturn in self.storyturns:
                out.write(json.dumps(to_pipe_record(storyturn), ensure_ascii=False) + "\n")
        return path

    def save_hf(self, folder: str | Path) -> Path:
        """Write a Hugging Face ``datasets`` folder (``save_to_disk``) with pictures embedded."""
        from commet.format.hf import save_hf

        return save_hf(self, Path(folder))


def _image_filename(image_id: str) -> str:
    stem = image_id.replace(":", "_").replace("/", "_")
    return stem if stem.lower().endswith(IMAGE_EXTENSIONS) else stem + ".png"


def bundled_sample_path() -> Path:
    return Path(str(resources.files("commet") / "data" / "sample"))


def _json_values_with_lines(text: str, file: str) -> Iterator[tuple[int, object]]:
    """Top-level values of a JSON list, or of a JSONL file, each with its 1-based line number."""
    decoder = json.JSONDecoder()
    try:
        whole = decoder.decode(text)
    except json.JSONDecodeError:
        whole = None  # not one JSON document: read it as JSONL below
    if isinstance(whole, list) and not (whole and all(isinstance(x, str) for x in whole)):
        index = text.index("[") + 1
        while True:
            while index < len(text) and text[index] in " \t\r\n,":
                index += 1
            if index >= len(text) or text[index] == "]":
                return
            value, end = decoder.raw_decode(text, index)
            yield text.count("\n", 0, index) + 1, value
            index = end
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise FormatError([Problem(file, number, None, None, None, f"invalid JSON: {exc.msg}")]) from None


def _pydantic_problem(exc: ValidationError, file: str, line: int, story: str | None) -> Problem:
    error = exc.errors()[0]
    loc = [str(p) for p in error["loc"]]
    turn = None
    if len(loc) >= 2 and loc[0] == "turns" and loc[1].isdigit():
        turn = int(loc[1])
        loc = loc[2:]
    return Problem(file, line, story, turn, ".".join(loc) or None, error["msg"])


def read_storyturns(path: str | Path) -> Dataset:
    """Read one file of StoryTurns in the canonical or the pipe format, keeping line numbers."""
    path = Path(path)
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FormatError([Problem(file, None, None, None, None, "file not found")]) from None
    except UnicodeDecodeError as exc:
        raise FormatError([Problem(file, None, None, None, None, f"not UTF-8 text: {exc.reason}")]) from None
    dataset = Dataset(storyturns=[], name=path.stem, source_file=file,
                      root=path.parent if (path.parent / IMAGES_DIR).is_dir() else None)
    for position, (line, value) in enumerate(_json_values_with_lines(text, file)):
        default_id = f"{path.stem}-{position + 1:04d}"
        if isinstance(value, list):
            storyturn, warnings = parse_storyturn(RawStoryTurn(turns=value, line=line), file=file, default_id=default_id)
        elif isinstance(value, dict) and "storyturn" in value:
            raw = RawStoryTurn(turns=value["storyturn"], id=_opt_str(value.get("id")), task=value.get("task"),
                               category=value.get("category"), image_dependent=value.get("image_dependent"),
                               mental_states=value.get("mental_states"), source=value.get("source"), line=line,
                               turn_extras=value.get("turn_extras"))
            if not isinstance(raw.turns, list):
                raise FormatError([Problem(file, line, raw.id, None, "storyturn", "must be a list of turn strings")])
            storyturn, warnings = parse_storyturn(raw, file=file, default_id=default_id)
        elif isinstance(value, dict):
            try:
                storyturn = StoryTurn.model_validate(value)
            except ValidationError as exc:
                raise FormatError([_pydantic_problem(exc, file, line, _opt_str(value.get("id")))]) from None
            warnings = []
        else:
            raise FormatError([Problem(file, line, None, None, None,
                                       "expected a StoryTurn object or a list of turn strings")])
        dataset.storyturns.append(storyturn)
        dataset.lines.setdefault(storyturn.id, line)
        dataset.line_list.append(line)
        dataset.warnings.extend(warnings)
    return dataset


def _opt_str(value: object) -> str | None:
    return None if value is None else str(value)


def apply_metadata(dataset: Dataset, text: str, file: str, default_name: str) -> None:
    """Read a ``dataset.json`` text into ``dataset``: name, version, licence, languages and declared taxonomy."""
    try:
        meta = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError([Problem(file, exc.lineno, None, None, None, f"invalid JSON: {exc.msg}")]) from None
    if not isinstance(meta, dict):
        raise FormatError([Problem(file, 1, None, None, None, "must be a JSON object")])
    dataset.name = str(meta.get("name", default_name))
    dataset.version = str(meta.get("version", "0"))
    dataset.licence = str(meta.get("license", meta.get("licence", "unspecified")))
    dataset.description = str(meta.get("description", ""))
    languages = meta.get("language", ["en"])
    languages = [languages] if isinstance(languages, str) else languages
    if not isinstance(languages, list) or not all(isinstance(x, str) and x for x in languages):
        raise FormatError([Problem(file, _key_line(text, "language"), None, None, "language",
                                   "must be a language code or a list of them (such as \"en\")")])
    dataset.languages = list(languages)
    try:
        dataset.taxonomy = Taxonomy.from_json(meta)
    except TaxonomyError as exc:
        parts = exc.field.split(".")
        line = _key_line(text, parts[1] if len(parts) > 1 and parts[0] == "tasks" else parts[0])
        raise FormatError([Problem(file, line, None, None, exc.field, str(exc))]) from None


def _key_line(text: str, key: str) -> int | None:
    """The line where ``"key":`` first appears in a JSON text (for located errors), else None."""
    index = text.find(json.dumps(key) + ":")
    if index < 0:
        index = text.find(json.dumps(key))
    return text.count("\n", 0, index) + 1 if index >= 0 else None


def load_dataset(path: str | Path) -> Dataset:
    """Load a dataset from a folder, a file, a Hugging Face folder, or ``"sample"``."""
    if str(path) == "sample":
        path = bundled_sample_path()
    path = Path(path)
    if path.is_dir() and (path / STORYTURNS_FILE).is_file():
        dataset = read_storyturns(path / STORYTURNS_FILE)
        dataset.root = path
        meta_path = path / METADATA_FILE
        if meta_path.is_file():
            apply_metadata(dataset, meta_path.read_text(encoding="utf-8"), str(meta_path), path.name)
        else:
            dataset.name = path.name
        return dataset
    if path.is_dir() and ((path / "dataset_info.json").is_file() or (path / "state.json").is_file()
                          or (path / "dataset_dict.json").is_file()):
        from commet.format.hf import load_hf

        return load_hf(path)
    if path.is_dir():
        raise FormatError([Problem(str(path), None, None, None, None,
                                   f"not a dataset folder: no {STORYTURNS_FILE} and no Hugging Face dataset files")])
    return read_storyturns(path)
