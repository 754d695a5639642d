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
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from pydantic import ValidationError

from commet.extras import require
from commet.format.bounded import files_under
from commet.format.bounded import loads as bounded_loads
from commet.format.model import StoryTurn
from commet.format.problems import FormatError, Problem

if TYPE_CHECKING:
    import pyarrow

    from commet.format.dataset import Dataset

SPLIT = "test"
DATA_DIR = "data"
CARD_FILE = "README.md"
SCHEMA_METADATA_KEY = b"commet"  # parquet schema metadata: the dataset.json object
SHARD_BYTES = 256 * 1024 * 1024  # picture bytes per parquet file (the Hub prefers files well under 1 GB)
ROW_GROUP_ROWS = 100  # small row groups keep the Hub viewer fast on rows with pictures

META_FIELDS = ("string", "int", "float", "bool", "json")


def _require(module: str):  # noqa: ANN202 - returns the module
    return require(module, "the Hugging Face format")


def _features():  # noqa: ANN202 - returns datasets.Features
    datasets = _require("datasets")
    value = datasets.Value
    string = value("string")
    meta = [{"key": string, "string": string, "int": value("int64"), "float": value("float64"),
             "bool": value("bool"), "json": string}]
    return datasets.Features({
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
            "image": datasets.Image(),
            "answers": [string],
            "options": [{"label": string, "text": string}],
            "candidates": [string],
            "rubric": {"key_inference": string, "false_inferences": [string]},
            "meta": meta,
        }],
    })


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
    rows = _rows(dataset)
    shards = _shards(rows)
    data_dir = folder / DATA_DIR
    data_dir.mkdir(parents=True, exist_ok=True)
    for old in data_dir.glob(f"{SPLIT}-*.parquet"):
        old.unlink()
    for index, shard in enumerate(shards):
        table = datasets.Dataset.from_list(shard, features=features).data.table
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), SCHEMA_METADATA_KEY: metadata})
        pq.write_table(table, data_dir / f"{SPLIT}-{index:05d}-of-{len(shards):05d}.parquet",
                       row_group_size=ROW_GROUP_ROWS)
    (folder / CARD_FILE).write_text(dataset_card(dataset), encoding="utf-8")
    (folder / METADATA_FILE).write_text(json.dumps(dataset.metadata(), indent=2, ensure_ascii=False) + "\n",
                                        encoding="utf-8")
    return folder


_HUB_LICENSES = {"apache-2.0", "mit", "cc-by-4.0", "cc-by-sa-4.0", "cc-by-nc-4.0", "cc-by-nc-sa-4.0",
                 "cc-by-nd-4.0", "cc-by-nc-nd-4.0", "cc0-1.0", "cc-by-3.0", "cc-by-sa-3.0", "cc-by-nc-3.0",
                 "odc-by", "odbl", "pddl", "gpl-3.0", "bsd-3-clause", "bsd-2-clause", "openrail", "llama2",
                 "unknown", "other"}


def hub_license(licence: str) -> str:
    """The Hub's licence id for an SPDX-style licence ("CC-BY-4.0" -> "cc-by-4.0"; unknown ones -> "other")."""
    lowered = licence.strip().lower()
    if lowered in ("", "unspecified", "unknown"):
        return "unknown"
    return lowered if lowered in _HUB_LICENSES else "other"


def _size_category(count: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if count < limit:
            return name
    return "1M<n<10M"


def dataset_card(dataset: Dataset) -> str:
    """The Hub dataset card: YAML front matter the Hub and ``datasets`` read, then the prose."""
    pictures = sum(1 for st in dataset.storyturns for t in st.turns if t.image)
    licence = hub_license(dataset.licence)
    yaml_lines = ["---", f"license: {licence}"]
    if licence == "other":
        yaml_lines.append(f"license_name: {json.dumps(re.sub(r'[^a-z0-9.-]+', '-', dataset.licence.lower()))}")
    yaml_lines += ["language:", *(f"- {json.dumps(code)}" for code in dataset.languages)]
    yaml_lines += ["task_categories:", *(["- visual-question-answering"] if pictures else []),
                   "- question-answering", "tags:", "- theory-of-mind", "- multi-turn", "- commet", "- storyturn",
                   *(["- multimodal"] if pictures else []),
                   f"pretty_name: {json.dumps(dataset.name)}", "size_categories:",
                   f"- {_size_category(len(dataset))}", "configs:", "- config_name: default", "  data_files:",
                   f"  - split: {SPLIT}", f"    path: {DATA_DIR}/{SPLIT}-*.parquet", "---", ""]
    taxonomy = dataset.taxonomy
    counts: dict[str, int] = {}
    for st in dataset.storyturns:
        counts[st.task] = counts.get(st.task, 0) + 1
    task_rows = [f"| `{t.id}` | {t.name} | {', '.join(t.categories)} | {counts.get(t.id, 0)} | "
                 f"{t.description.replace('|', '/')} |" for t in taxonomy.tasks if counts.get(t.id)]
    task_rows += [f"| `{task}` | (not declared) | | {n} | |" for task, n in counts.items() if taxonomy.task(task) is None]
    turns = sum(len(st.turns) for st in dataset.storyturns)
    name = dataset.name
    prose = f"""# {name}

{dataset.description or "StoryTurns for measuring Theory of Mind with CoMMET."}

{len(dataset)} StoryTurns, {turns} turns, {pictures} pictures. Version {dataset.version}; licence
{dataset.licence}; format `storyturn-1`.

## Format

One row per **StoryTurn**: a short story told across several turns of one conversation, one
question per turn, optional pictures, and feedback at the start of a turn that depends on how the
previous question was answered (CoMMET's `docs/storyturn.md` describes the format).

| column | type | meaning |
|---|---|---|
| `id`, `task`, `category` | string | StoryTurn id, task id, reporting category |
| `mental_states` | list of string | mental states the story probes |
| `image_dependent` | bool | the needed fact is only in a picture |
| `source` | string | where the StoryTurn comes from |
| `meta` | list of `{{key, string, int, float, bool, json}}` | free-form metadata; each value sits in the field of its type, other values as JSON text in `json` |
| `turns` | list of structs | the turns, in order |
| `turns.story`, `turns.question` | string | text told before the question, and the question |
| `turns.feedback` | `{{right, wrong, by_answer: [{{answer, text}}], always}}` or null | text shown at the start of the turn, chosen by the previous answer |
| `turns.image_id`, `turns.image` | string, Image | the picture shown with the turn |
| `turns.answers` | list of string | expected answers; more than one makes the turn a branch point |
| `turns.options` | list of `{{label, text}}` | choices offered by the question |
| `turns.candidates` | list of string | for judging only, never shown: the closed set an open answer is one of |
| `turns.rubric` | `{{key_inference, false_inferences}}` or null | what a right explanation must and must not say |
| `turns.meta` | as `meta` | per-turn metadata (question type, order of belief, ...) |

## Tasks

| task | name | categories | StoryTurns | what it probes |
|---|---|---|---|---|
{chr(10).join(task_rows)}

## Run it with CoMMET

CoMMET reads this folder (or any one of its parquet files) as it is:

```bash
pip install 'commet-bench[datasets]'
hf download OWNER/REPO --repo-type dataset --local-dir {name}   # a copy of this repository
commet validate {name}
commet eval --dataset {name} --model openai:gpt-4o-mini --judge openai:gpt-4o
commet report
```

From Python: `commet.load_dataset("{name}")`. With `datasets`:
`datasets.load_dataset("{name}", split="{SPLIT}")`.
"""
    return "\n".join(yaml_lines) + prose


# ----------------------------------------------------------------------------------------------- import


PARQUET_DEPTH = 3  # data/train/x.parquet, CONFIG/SPLIT/0000.parquet: Hub layouts nest at most this deep


def parquet_files(folder: Path) -> list[Path]:
    """The ``.parquet`` files under ``folder``, at most :data:`PARQUET_DEPTH` folders down, in path order.

    Bounded so that pointing CoMMET at a big folder that is not a dataset answers at once; each folder
    and file visited once however symbolic links loop (:func:`~commet.format.bounded.files_under`).
    """
    return files_under(folder, ".parquet", PARQUET_DEPTH)


def is_hf_folder(path: Path) -> bool:
    """Whether ``path`` looks like a ``save_to_disk`` folder or a folder of parquet files."""
    names = ("state.json", "dataset_dict.json", "dataset_info.json")
    return any((path / n).is_file() for n in names) or bool(parquet_files(path))


def _read_error(file: Path, exc: BaseException) -> FormatError:
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return FormatError([Problem(str(file), None, None, None, None, f"cannot read {file.name}: {message}")])


def _parquet_tables(files: list[Path]) -> Iterator[tuple[Path, pyarrow.Table]]:
    pq = _require("pyarrow.parquet")
    for file in files:
        try:
            yield file, pq.read_table(file)
        except Exception as exc:  # noqa: BLE001 - pyarrow raises ArrowInvalid, OSError, ...: one located line
            raise _read_error(file, exc) from None


def _arrow_tables(folder: Path) -> Iterator[tuple[Path, pyarrow.Table]]:
    """The Arrow files of a ``save_to_disk`` folder (each split of a DatasetDict in its listed order)."""
    pa = _require("pyarrow")
    splits = [folder]
    dict_file = folder / "dataset_dict.json"
    if dict_file.is_file():
        try:
            names = json.loads(dict_file.read_text(encoding="utf-8"))["splits"]
        except (ValueError, KeyError, TypeError) as exc:
            raise _read_error(dict_file, exc) from None
        splits = [folder / str(name) for name in names]
    for split in splits:
        state = split / "state.json"
        if not state.is_file():
            raise FormatError([Problem(str(split), None, None, None, None,
                                       "not a save_to_disk folder: state.json is missing")])
        try:
            files = [split / entry["filename"] for entry in json.loads(state.read_text(encoding="utf-8"))["_data_files"]]
        except (ValueError, KeyError, TypeError) as exc:
            raise _read_error(state, exc) from None
        if not files:
            raise FormatError([Problem(str(state), None, None, None, None, "lists no Arrow data file")])
        for file in files:
            if not file.is_file():
                raise FormatError([Problem(str(file), None, None, None, None,
                                           "Arrow data file listed in state.json is missing")])
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


def _card(folder: Path) -> dict[str, Any]:
    """The YAML front matter of the folder's dataset card ({} without a card, PyYAML or valid YAML)."""
    card = folder / CARD_FILE
    if not card.is_file():
        return {}
    match = re.match(r"---\s*\n(.*?)\n---", card.read_text(encoding="utf-8", errors="replace"), re.S)
    if match is None:
        return {}
    try:
        import yaml

        front = yaml.safe_load(match.group(1)) or {}
    except Exception:  # noqa: BLE001 - no PyYAML or a card that is not YAML: read the data without it
        return {}
    return front if isinstance(front, dict) else {}


def _card_data_files(folder: Path) -> list[Path] | None:
    """Parquet files of the card's first config (``configs: data_files``), or None without a usable card."""
    configs = _card(folder).get("configs")
    if not isinstance(configs, list) or not configs:
        return None
    config = next((c for c in configs if isinstance(c, dict) and c.get("default")), configs[0])
    data_files = config.get("data_files") if isinstance(config, dict) else None
    if isinstance(data_files, str):
        data_files = [{"path": data_files}]
    patterns: list[str] = []
    for entry in data_files or []:
        paths = entry.get("path") if isinstance(entry, dict) else entry
        patterns += [paths] if isinstance(paths, str) else [p for p in paths or [] if isinstance(p, str)]
    root = folder.resolve()
    files = [f for pattern in patterns if not Path(pattern).is_absolute() for f in sorted(folder.glob(pattern))
             if f.suffix == ".parquet" and f.resolve().is_relative_to(root)]  # a card cannot point outside
    return list(dict.fromkeys(files)) or None


def load_hf(path: Path) -> Dataset:
    """A dataset from a Hub-style or parquet folder, a ``.parquet`` file or a ``save_to_disk`` folder."""
    from commet.format.dataset import METADATA_FILE, Dataset, apply_metadata

    name = path.stem if path.is_file() else path.name
    dataset = Dataset(storyturns=[], name=name, source_file=str(path))
    if path.is_file():
        tables = _parquet_tables([path])
    elif (path / "state.json").is_file() or (path / "dataset_dict.json").is_file():
        tables = _arrow_tables(path)
    else:
        files = _card_data_files(path) or parquet_files(path)
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
        for index, row in enumerate(_table_rows(table)):
            st = _storyturn(row, index, file, dataset, path if path.is_dir() else path.parent)
            dataset.storyturns.append(st)
            dataset.lines.setdefault(st.id, index + 1)
            dataset.line_list.append(index + 1)
            dataset.file_list.append(str(file))
    if not metadata_done and path.is_dir() and not _metadata_from_card(dataset, path):
        _metadata_from_legacy_info(dataset, path, name)
    return dataset


def _metadata_from_card(dataset: Dataset, folder: Path) -> bool:
    """Name, licence and languages from a third party's dataset card, when it has one."""
    front = _card(folder)
    if not front:
        return False
    if isinstance(front.get("pretty_name"), str):
        dataset.name = front["pretty_name"]
    licence = front.get("license")
    if isinstance(licence, list) and licence:
        licence = licence[0]
    if isinstance(licence, str):
        named = front.get("license_name")
        dataset.licence = named if licence == "other" and named else licence
    languages = front.get("language")
    languages = [languages] if isinstance(languages, str) else languages
    if isinstance(languages, list) and languages and all(isinstance(x, str) for x in languages):
        dataset.languages = languages
    return True


def _table_rows(table: pyarrow.Table) -> Iterator[dict[str, Any]]:
    for batch in table.to_batches(max_chunksize=256):
        yield from batch.to_pylist()


def _metadata_from_table(dataset: Dataset, table: pyarrow.Table, file: Path, name: str) -> bool:
    from commet.format.dataset import apply_metadata

    raw = (table.schema.metadata or {}).get(SCHEMA_METADATA_KEY)
    if raw is None:
        return False
    apply_metadata(dataset, raw.decode("utf-8", errors="replace"), f"{file}#schema-metadata", name)
    return True


def _metadata_from_legacy_info(dataset: Dataset, path: Path, name: str) -> None:
    """Older CoMMET folders kept dataset.json's object in ``dataset_info.json``'s description."""
    from commet.format.dataset import apply_metadata

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
    the top of ``root`` (the dataset folder), never outside it (:func:`~commet.format.pictures.read_picture_inside`)."""
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, dict):
        if value.get("bytes") is not None:
            return bytes(value["bytes"])
        path = value.get("path")
        if isinstance(path, str) and path:
            from commet.format.pictures import read_picture_inside

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


def _storyturn(row: dict[str, Any], index: int, file: Path, dataset: Dataset, root: Path | None = None) -> StoryTurn:
    from commet.format.dataset import _pydantic_problems
    from commet.format.pictures import PictureError

    story_id = row.get("id")
    story_id = str(story_id) if story_id not in (None, "") else f"{dataset.name}-{index + 1:04d}"
    field = "meta"
    turn_index: int | None = None
    try:
        side_images = {f["id"]: f["bytes"] for f in row.get("image_files") or [] if f.get("bytes") is not None}
        turns = []
        for turn_index, turn in enumerate(row["turns"] or []):
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
            answers = turn["answers"]
            options = turn.get("options") or []
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
                                       f"no category, and task {row['task']!r} is not a known task to take it from")])
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
