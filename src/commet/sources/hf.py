"""Hugging Face datasets, both ways (docs/huggingface.md).

Export (:func:`save_hf`) writes a Hub-ready folder: ``data/test-*.parquet`` with one row per
StoryTurn and its turns nested, each turn's picture as an ``Image`` feature, feedback, options
and rubric as Arrow structs, a dataset card ``README.md`` (YAML: licence, task categories,
languages, configs and splits) and ``dataset.json``. ``datasets.load_dataset(folder)`` reads it
and ``hf upload`` publishes it as is.

Import (:func:`load_hf`) reads such folders, single ``.parquet`` files, ``save_to_disk`` folders
(one split or a ``DatasetDict``) and the older CoMMET layout (feedback and meta as JSON strings,
pictures in an ``image_files`` column), with pyarrow only, so pictures are bytes, never decoded
PIL objects. Optional columns may be missing; a missing required column, an unreadable file or a
malformed value is a :class:`FormatError` naming file, row, story, turn and field.

Free-form ``meta`` dicts (StoryTurn and turn) cannot have one Arrow type (their keys and value
types vary by row), so they are lists of ``{key, string, int, float, bool, json}`` entries: a
scalar sits in the field of its type, anything else (null, lists, objects) as JSON text in
``json``. Key order and types survive, so the round trip is lossless.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypedDict

from pydantic import ValidationError

from commet.extras import require
from commet.format.model import StoryTurn
from commet.format.problems import FormatError, Problem
from commet.sources.bounded import InputFileError, files_under, inside, read_regular_file
from commet.sources.bounded import loads as bounded_loads
from commet.sources.card import (
    CARD_FILE,
    DATA_DIR,
    SPLIT,
    SplitSizes,
    card_data_files,
    dataset_card,
    metadata_from_card,
    split_of,
)
from commet.sources.cells import options_cell
from commet.sources.folders import check_cells, check_parquet

if TYPE_CHECKING:
    import datasets
    import pyarrow

    from commet.format.dataset import Dataset

SCHEMA_METADATA_KEY = b"commet"  # parquet schema metadata: the dataset.json object
SHARD_BYTES = 256 * 1024 * 1024  # picture bytes per parquet file (the Hub prefers files well under 1 GB)
ROW_GROUP_ROWS = 100  # small row groups keep the Hub viewer fast on rows with pictures

META_FIELDS = ("string", "int", "float", "bool", "json")


def _require(module: str) -> ModuleType:
    return require(module, "the Hugging Face format")


def _features() -> datasets.Features:
    hub = _require("datasets")
    value = hub.Value
    string = value("string")
    meta = [{"key": string, "string": string, "int": value("int64"), "float": value("float64"),
             "bool": value("bool"), "json": string}]
    features: datasets.Features = hub.Features({
        "id": string,
        "task": string,
        "category": string,
        "mental_states": [string],
        "image_dependent": value("bool"),
        "source": string,
        "meta": meta,
        "turns": [{
            "story": string,
            "feedback": {"right": string, "wrong": string, "by_answer": [{"answer": string, "text": string}],
                         "always": string},
            "question": string,
            "image_id": string,
            "image": hub.Image(),
            "answers": [string],
            "options": [{"label": string, "text": string}],
            "candidates": [string],
            "rubric": {"key_inference": string, "false_inferences": [string]},
            "meta": meta,
        }],
    })
    return features


def encode_meta(meta: dict[str, object]) -> list[dict[str, object]]:
    """A free-form dict as typed ``{key, string|int|float|bool|json}`` entries, in key order."""
    entries = []
    for key, value in meta.items():
        entry: dict[str, object] = {"key": key, **dict.fromkeys(META_FIELDS)}
        if isinstance(value, bool):
            entry["bool"] = value
        elif isinstance(value, int) and -(2**63) <= value < 2**63:
            entry["int"] = value
        elif isinstance(value, float):
            entry["float"] = value
        elif isinstance(value, str):
            entry["string"] = value
        else:
            entry["json"] = json.dumps(value, ensure_ascii=False)
        entries.append(entry)
    return entries


def decode_meta(entries: object) -> dict[str, object]:
    """The dict :func:`encode_meta` wrote; also accepts a plain dict or the older JSON-string layout."""
    if entries is None:
        return {}
    if isinstance(entries, str):
        value = bounded_loads(entries) if entries.strip() else {}
        if not isinstance(value, dict):
            raise ValueError("must be a JSON object")
        return value
    if isinstance(entries, dict):
        return {k: v for k, v in entries.items() if v is not None}
    if not isinstance(entries, list):
        raise ValueError("must be a list of {key, string, int, float, bool, json} entries")
    meta: dict[str, object] = {}
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("key"), str):
            raise ValueError("each entry needs a string 'key'")
        set_fields = [f for f in META_FIELDS if entry.get(f) is not None]
        if len(set_fields) > 1:
            raise ValueError(f"entry {entry['key']!r} has more than one value ({', '.join(set_fields)})")
        if not set_fields:
            meta[entry["key"]] = None
        elif set_fields[0] == "json":
            meta[entry["key"]] = bounded_loads(entry["json"])
        else:
            meta[entry["key"]] = entry[set_fields[0]]
    return meta


# ----------------------------------------------------------------------------------------------- export

class _PictureCell(TypedDict):
    """A turn's picture as the ``Image`` feature stores it."""

    bytes: bytes
    path: str


class _TurnRow(TypedDict):
    """One turn as exported (an element of the ``turns`` column)."""

    story: str
    feedback: dict[str, Any] | None
    question: str
    image_id: str | None
    image: _PictureCell | None
    answers: list[str]
    options: list[dict[str, Any]]
    candidates: list[str]
    rubric: dict[str, Any] | None
    meta: list[dict[str, object]]


class _StoryRow(TypedDict):
    """One exported row: a StoryTurn with its turns nested."""

    id: str
    task: str
    category: str
    mental_states: list[str]
    image_dependent: bool
    source: str
    meta: list[dict[str, object]]
    turns: list[_TurnRow]


def _rows(dataset: Dataset) -> list[_StoryRow]:
    from commet.format.dataset import _image_filename

    rows: list[_StoryRow] = []
    for st in dataset.storyturns:
        turns: list[_TurnRow] = []
        for turn in st.turns:
            picture: _PictureCell | None = None
            if turn.image and dataset.has_image(turn.image):
                path = dataset.image_path(turn.image)
                picture = {"bytes": dataset.image_bytes(turn.image),
                           "path": path.name if path is not None else _image_filename(turn.image)}
            turns.append({
                "story": turn.story,
                "feedback": turn.feedback.model_dump() if turn.feedback is not None else None,
                "question": turn.question,
                "image_id": turn.image,
                "image": picture,
                "answers": list(turn.answers),
                "options": [o.model_dump() for o in turn.options],
                "candidates": list(turn.candidates),
                "rubric": turn.rubric.model_dump() if turn.rubric is not None else None,
                "meta": encode_meta(turn.meta),
            })
        rows.append({"id": st.id, "task": st.task, "category": st.category, "mental_states": list(st.mental_states),
                     "image_dependent": st.image_dependent, "source": st.source, "meta": encode_meta(st.meta),
                     "turns": turns})
    return rows


def _shards(rows: list[_StoryRow]) -> list[list[_StoryRow]]:
    shards: list[list[_StoryRow]] = [[]]
    size = 0
    for row in rows:
        row_bytes = sum(len(t["image"]["bytes"]) for t in row["turns"] if t["image"])
        if shards[-1] and size + row_bytes > SHARD_BYTES:
            shards.append([])
            size = 0
        shards[-1].append(row)
        size += row_bytes
    return shards


def save_hf(dataset: Dataset, folder: Path) -> Path:
    """Write the Hub-ready folder: ``data/test-*.parquet``, ``README.md`` (the card) and ``dataset.json``."""
    datasets = _require("datasets")
    pq = _require("pyarrow.parquet")
    from commet.format.dataset import METADATA_FILE

    features = _features()
    metadata = json.dumps(dataset.metadata(), ensure_ascii=False).encode()
    by_split: dict[str, list[_StoryRow]] = {}
    for st, row in zip(dataset.storyturns, _rows(dataset), strict=True):
        by_split.setdefault(split_of(dataset, st), []).append(row)
    data_dir = folder / DATA_DIR
    data_dir.mkdir(parents=True, exist_ok=True)
    for old in data_dir.glob("*-?????-of-?????.parquet"):  # an earlier export's files, whatever their split
        old.unlink()
    written: list[Path] = []
    splits: list[tuple[str, int, int]] = []
    for split, rows in by_split.items() or [(SPLIT, [])]:
        shards = _shards(rows)
        files = [data_dir / f"{split}-{index:05d}-of-{len(shards):05d}.parquet" for index in range(len(shards))]
        for file, shard in zip(files, shards, strict=True):
            table = datasets.Dataset.from_list(shard, features=features).data.table
            table = table.replace_schema_metadata({**(table.schema.metadata or {}), SCHEMA_METADATA_KEY: metadata})
            pq.write_table(table, file, row_group_size=ROW_GROUP_ROWS)
        splits.append((split, len(rows), sum(pq.read_table(file).nbytes for file in files)))
        written += files
    sizes = SplitSizes(features, sum(s[1] for s in splits), num_bytes=sum(s[2] for s in splits),
                       download_size=sum(file.stat().st_size for file in written), splits=tuple(splits))
    (folder / CARD_FILE).write_text(dataset_card(dataset, sizes), encoding="utf-8")
    (folder / METADATA_FILE).write_text(json.dumps(dataset.metadata(), indent=2, ensure_ascii=False) + "\n",
                                        encoding="utf-8")
    return folder


# ----------------------------------------------------------------------------------------------- import


PARQUET_DEPTH = 3  # data/train/x.parquet, CONFIG/SPLIT/0000.parquet: Hub layouts nest at most this deep


def parquet_files(folder: Path) -> list[Path]:
    """The ``.parquet`` files under ``folder``, at most :data:`PARQUET_DEPTH` folders down, in path order.

    Bounded so that pointing CoMMET at a big folder that is not a dataset answers at once; each folder
    and file visited once however symbolic links loop (:func:`~commet.sources.bounded.files_under`).
    """
    return files_under(folder, ".parquet", PARQUET_DEPTH)


def is_hf_folder(path: Path) -> bool:
    """Whether ``path`` looks like a ``save_to_disk`` folder or a folder of parquet files."""
    names = ("state.json", "dataset_dict.json", "dataset_info.json")
    return any((path / n).is_file() for n in names) or bool(parquet_files(path))


def native_layout(path: Path) -> bool:
    """Whether the parquet or ``save_to_disk`` data at ``path`` is in CoMMET's own layout (a ``turns`` column
    of structs); True too when its schema cannot be read, so that this module's reader names the broken file."""
    try:
        pa = _require("pyarrow")
        pq = _require("pyarrow.parquet")
        if path.is_file():
            schema = pq.read_schema(path)
        elif (path / "state.json").is_file() or (path / "dataset_dict.json").is_file():
            with pa.memory_map(str(saved_data_files(path)[0])) as source:  # (confined to the folder)
                schema = pa.ipc.open_stream(source).schema
        else:
            files = card_data_files(path) or parquet_files(path)
            schema = pq.read_schema(files[0])
    except Exception:  # noqa: BLE001 - a missing extra, a broken or absent file: the reader says which
        return True
    if "turns" not in schema.names:
        return False
    turns = schema.field("turns").type
    return bool((pa.types.is_list(turns) or pa.types.is_large_list(turns)) and pa.types.is_struct(turns.value_type))


def _read_error(file: Path, exc: BaseException) -> FormatError:
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return FormatError([Problem(str(file), None, None, None, None, f"cannot read {file.name}: {message}")])


def _parquet_tables(files: list[Path]) -> Iterator[tuple[Path, pyarrow.Table]]:
    pq = _require("pyarrow.parquet")
    for file in files:
        check_parquet(file)  # rows and decompressed size, from the footer, before reading
        try:
            yield file, pq.read_table(file)
        except Exception as exc:  # noqa: BLE001 - pyarrow raises ArrowInvalid, OSError, ...: one located line
            raise _read_error(file, exc) from None


#: Largest ``state.json`` or ``dataset_dict.json`` read (a few hundred bytes each, as ``datasets`` writes them).
MAX_STATE_BYTES = 1024 * 1024


def _listed(file: Path, key: str) -> list[object]:
    """The list under ``key`` of a ``save_to_disk`` JSON file, read within its size limit; a located error if not."""
    try:
        value = json.loads(read_regular_file(file, max_bytes=MAX_STATE_BYTES, what="save_to_disk JSON file"))[key]
        if not isinstance(value, list):
            raise TypeError(f"{key} is not a list")
        return value
    except (InputFileError, OSError, ValueError, KeyError, TypeError) as exc:
        raise _read_error(file, exc) from None


def saved_data_files(folder: Path) -> list[Path]:
    """The Arrow files of a ``save_to_disk`` folder, each split of a DatasetDict in its listed order, every one
    inside ``folder`` (a split or file name that is absolute, climbs with ``..`` or links out is refused before
    anything reads it, whichever reader then reads the folder)."""
    def located(base: Path, name: object, listed_in: Path) -> Path:
        try:
            return inside(base, str(name))
        except InputFileError as exc:
            raise FormatError([Problem(str(listed_in), None, None, None, None, f"names {exc}")]) from None

    splits = [folder]
    dict_file = folder / "dataset_dict.json"
    if dict_file.is_file():
        splits = [located(folder, name, dict_file) for name in _listed(dict_file, "splits")]
    top = folder.resolve()
    found: list[Path] = []
    for split in splits:
        state = split / "state.json"
        if not state.is_file():
            raise FormatError([Problem(str(split), None, None, None, None,
                                       "not a save_to_disk folder: state.json is missing")])
        entries = _listed(state, "_data_files")
        if not entries:
            raise FormatError([Problem(str(state), None, None, None, None, "lists no Arrow data file")])
        for entry in entries:
            if not isinstance(entry, dict) or "filename" not in entry:
                raise _read_error(state, ValueError("each _data_files entry needs a filename"))
            file = located(split, entry["filename"], state)
            if not file.resolve().is_relative_to(top):
                raise FormatError([Problem(str(state), None, None, None, None, f"names {entry['filename']!r}: "
                                           "outside the dataset folder (refused, not read)")])
            if not file.is_file():
                raise FormatError([Problem(str(file), None, None, None, None,
                                           "Arrow data file listed in state.json is missing")])
            found.append(file)
    return found


def _arrow_tables(folder: Path) -> Iterator[tuple[Path, pyarrow.Table]]:
    """The Arrow files of a ``save_to_disk`` folder (each split of a DatasetDict in its listed order)."""
    pa = _require("pyarrow")
    for file in saved_data_files(folder):
        try:
            with pa.memory_map(str(file)) as source:
                try:
                    table = pa.ipc.open_stream(source).read_all()
                except pa.ArrowInvalid:
                    source.seek(0)
                    table = pa.ipc.open_file(source).read_all()
        except Exception as exc:  # noqa: BLE001 - truncated or foreign files: one located line
            raise _read_error(file, exc) from None
        yield file, table


def load_hf(path: Path) -> Dataset:
    """A dataset from a Hub-style or parquet folder, a ``.parquet`` file or a ``save_to_disk`` folder."""
    from commet.format.dataset import METADATA_FILE, Dataset
    from commet.sources.jsonl import apply_metadata

    name = path.stem if path.is_file() else path.name
    dataset = Dataset(storyturns=[], name=name, source_file=str(path))
    if path.is_file():
        tables = _parquet_tables([path])
    elif (path / "state.json").is_file() or (path / "dataset_dict.json").is_file():
        tables = _arrow_tables(path)
    else:
        files = card_data_files(path) or parquet_files(path)
        if not files:
            raise FormatError([Problem(str(path), None, None, None, None,
                                       "no Arrow or parquet data: not a save_to_disk folder (state.json) "
                                       "and no .parquet file")])
        tables = _parquet_tables(files)
    metadata_file = path / METADATA_FILE if path.is_dir() else None
    if metadata_file is not None and metadata_file.is_file():
        apply_metadata(dataset, metadata_file.read_text(encoding="utf-8"), str(metadata_file), name)
        metadata_done = True
    else:
        metadata_done = False
    for file, table in tables:
        if not metadata_done:
            metadata_done = _metadata_from_table(dataset, table, file, name)
        _check_columns(table, file)
        for index, row in enumerate(_table_rows(table, str(file))):
            st = _storyturn(row, index, file, dataset, path if path.is_dir() else path.parent)
            dataset.storyturns.append(st)
            dataset.lines.setdefault(st.id, index + 1)
            dataset.line_list.append(index + 1)
            dataset.file_list.append(str(file))
    if not metadata_done and path.is_dir() and not metadata_from_card(dataset, path):
        _metadata_from_legacy_info(dataset, path, name)
    return dataset


def _table_rows(table: pyarrow.Table, where: str) -> Iterator[dict[str, Any]]:
    done = 0
    for batch in table.to_batches(max_chunksize=256):
        check_cells(batch, where, done + 1)  # a cell over its limit refused before it becomes Python values
        yield from batch.to_pylist()
        done += batch.num_rows


def _metadata_from_table(dataset: Dataset, table: pyarrow.Table, file: Path, name: str) -> bool:
    from commet.sources.jsonl import apply_metadata

    raw = (table.schema.metadata or {}).get(SCHEMA_METADATA_KEY)
    if raw is None:
        return False
    apply_metadata(dataset, raw.decode("utf-8", errors="replace"), f"{file}#schema-metadata", name)
    return True


def _metadata_from_legacy_info(dataset: Dataset, path: Path, name: str) -> None:
    """Older CoMMET folders kept dataset.json's object in ``dataset_info.json``'s description."""
    from commet.sources.jsonl import apply_metadata

    info = path / "dataset_info.json" if path.is_dir() else None
    if info is None or not info.is_file():
        return
    try:
        description = json.loads(info.read_text(encoding="utf-8")).get("description") or ""
        if isinstance(description, str) and description.lstrip().startswith("{"):
            json.loads(description)
            apply_metadata(dataset, description, str(info), name)
    except (ValueError, AttributeError):
        return  # a third party's description is prose: keep the defaults


REQUIRED_COLUMNS = ("task", "turns")
REQUIRED_TURN_FIELDS = ("question", "answers")


def _check_columns(table: pyarrow.Table, file: Path) -> None:
    """Missing required columns, once per file (before any row is read)."""
    pa = _require("pyarrow")
    names = table.schema.names
    for column in REQUIRED_COLUMNS:
        if column not in names:
            raise FormatError([Problem(str(file), None, None, None, column,
                                       f"missing required column {column!r} (columns: {', '.join(names) or 'none'})")])
    turns_type = table.schema.field("turns").type
    if not (pa.types.is_list(turns_type) or pa.types.is_large_list(turns_type)) or \
            not pa.types.is_struct(turns_type.value_type):
        raise FormatError([Problem(str(file), None, None, None, "turns",
                                   f"column 'turns' must be a list of structs, not {turns_type}")])
    turn_fields = [turns_type.value_type.field(i).name for i in range(turns_type.value_type.num_fields)]
    for name in REQUIRED_TURN_FIELDS:
        if name not in turn_fields:
            raise FormatError([Problem(str(file), None, None, None, f"turns.{name}",
                                       f"missing required turn field {name!r} (turn fields: {', '.join(turn_fields)})")])


def _picture(value: object, file: Path, root: Path) -> bytes | None:
    """The bytes of an ``Image`` cell ({bytes, path}); a path-only cell names a file beside the data file or at
    the top of ``root`` (the dataset folder), never outside it (:func:`~commet.sources.picture_files.read_picture_inside`)."""
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, dict):
        if value.get("bytes") is not None:
            return bytes(value["bytes"])
        path = value.get("path")
        if isinstance(path, str) and path:
            from commet.sources.picture_files import read_picture_inside

            return read_picture_inside(root, path, (file.parent, root))
        return None
    raise ValueError("must be an Image ({bytes, path})")


def _strict_bool(value: object) -> bool | None:
    """A boolean cell: true/false, 1/0, or missing (false); None for anything else (the text "false" is not false)."""
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    return None


def _shown_cell(value: object) -> str:
    """A cell's value as an error line shows it: its type and at most 40 characters of it."""
    text = repr(value)
    return f"{type(value).__name__} {text[:40]}{'...' if len(text) > 40 else ''}"


#: the fields of a turn in CoMMET's own layout (``answer`` for ``answers``, ``image`` as an id in the older layout)
TURN_FIELDS = ("story", "feedback", "question", "image_id", "image", "answers", "answer", "options", "candidates",
               "rubric", "meta")


def _unknown_turn_fields(turn: object) -> str | None:
    """Why a nested turn cannot be read as CoMMET's: it is no struct, or it has fields CoMMET's own layout does not
    read (``context``, ``choices``), which would be dropped without a word (a layout only half understood)."""
    if not isinstance(turn, dict):
        return f"a turn must be a struct of fields, not {_shown_cell(turn)}"
    unknown = [str(name) for name in turn if name not in TURN_FIELDS]
    if not unknown:
        return None
    return (f"turn field(s) {', '.join(map(repr, unknown))} are not CoMMET's own ({', '.join(TURN_FIELDS)}): "
            "they would be dropped, not read; rename them to CoMMET's (context -> story, choices -> options), or "
            "make the StoryTurns of these rows with --adapter FILE.py:FUNCTION (docs/official-data.md, Adapters)")


def _storyturn(row: dict[str, Any], index: int, file: Path, dataset: Dataset, root: Path | None = None) -> StoryTurn:
    from commet.format.pictures import PictureError
    from commet.sources.jsonl import _pydantic_problems

    story_id = row.get("id")
    story_id = str(story_id) if story_id not in (None, "") else f"{dataset.name}-{index + 1:04d}"
    field = "meta"
    turn_index: int | None = None
    try:
        side_images = {f["id"]: f["bytes"] for f in row.get("image_files") or [] if f.get("bytes") is not None}
        turns = []
        for turn_index, turn in enumerate(row["turns"] or []):
            unknown = _unknown_turn_fields(turn)
            if unknown:
                raise FormatError([Problem(str(file), index + 1, story_id, turn_index, "turns", unknown)])
            field = "image"
            image_id = turn.get("image_id")
            image = turn.get("image")
            if isinstance(image, str):  # older layout: the id, bytes in image_files
                image_id, image = image or None, side_images.get(image)
            picture = _picture(image, file, root or file.parent)
            if picture is not None and not image_id:
                suffix = Path(str((image or {}).get("path") or "")).suffix.lower() or ".png"
                image_id = f"{story_id}-{turn_index}{suffix}"
            if picture is not None:
                dataset.images[image_id] = picture
            field = "feedback"
            feedback = turn.get("feedback")
            if isinstance(feedback, str):
                feedback = bounded_loads(feedback) if feedback.strip() else None
            field = "answers"
            answers = turn["answers"] if turn.get("answers") is not None else turn.get("answer")
            if answers is None:
                raise ValueError("this turn has no answers (a turn needs 'answers', a list, or 'answer')")
            field = "options"
            options = turn.get("options") or []
            if isinstance(options, (dict, str)):  # {A: x, B: y} (a struct), or one string of labelled options
                options = options_cell(options) or []
            field = "meta"
            turns.append({
                "story": turn.get("story") or "", "feedback": feedback, "question": turn["question"],
                "image": image_id or None, "answers": [answers] if isinstance(answers, str) else answers,
                "options": [{"text": o} if isinstance(o, str) else o for o in options],
                "candidates": turn.get("candidates") or [],
                "rubric": turn.get("rubric"), "meta": decode_meta(turn.get("meta")),
            })
        turn_index = None
        field = "meta"
        meta = decode_meta(row.get("meta"))
        category = row.get("category")
        task = dataset.taxonomy.task(str(row["task"]))
        image_dependent = _strict_bool(row.get("image_dependent"))
        if image_dependent is None:
            raise FormatError([Problem(str(file), index + 1, story_id, None, "image_dependent",
                                       f"must be true or false (or 1 or 0), not {_shown_cell(row['image_dependent'])}: "
                                       "it decides whether the StoryTurn counts as image-dependent (Table 2)")])
        if category in (None, "") and task is not None:
            category = task.category_for(image_dependent)
        if category in (None, ""):
            raise FormatError([Problem(str(file), index + 1, story_id, None, "category",
                                       f"no category, and task {row['task']!r} is not a known task to take it from: "
                                       "map the column that holds it with --columns category=COLUMN")])
        states = row.get("mental_states")
        if states is None:
            states = list(task.mental_states) if task is not None else []
        return StoryTurn.model_validate({
            "id": story_id, "task": row["task"], "category": category, "mental_states": states,
            "image_dependent": image_dependent, "source": row.get("source") or "unknown", "turns": turns, "meta": meta,
        })
    except FormatError:
        raise
    except PictureError as exc:
        raise FormatError([Problem(str(file), index + 1, story_id, turn_index, "image", f"picture {exc}")]) from None
    except ValidationError as exc:
        raise FormatError(_pydantic_problems(exc, str(file), index + 1, story_id)[:1]) from None
    except (ValueError, TypeError, AttributeError) as exc:  # JSON text, wrong cell types in third-party data
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise FormatError([Problem(str(file), index + 1, story_id, turn_index, field,
                                   f"cannot read value: {message}")]) from None
