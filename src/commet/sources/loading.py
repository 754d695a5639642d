"""Loading a dataset from any of its forms: a folder, a canonical or pipe file, a Hugging Face
folder or parquet file, a Hub dataset by name (``hf:OWNER/NAME``), a folder of JSON lines or CSV
tables, or ``"sample"``. The one entry point of :mod:`commet.sources`: it tells the forms apart and
calls the reader of each, files of StoryTurns (:mod:`commet.sources.jsonl`), the Hugging Face reader
(:mod:`commet.sources.hf`) and the tables (:mod:`commet.sources.hub`), which build a
:class:`~commet.format.dataset.Dataset`.

Which reader: a folder with ``storyturns.jsonl`` is canonical; parquet or ``save_to_disk`` data in
CoMMET's own layout (a ``turns`` column of structs) is read by :mod:`commet.sources.hf` with pyarrow
alone; any other table (parquet of other columns, JSON lines, CSV, an image folder with
``metadata.jsonl``) is read by ``datasets.load_dataset`` and made into StoryTurns by the layouts of
:mod:`commet.sources.layouts`, as are ``.csv`` files and JSON files given with ``--columns``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from commet.format.dataset import METADATA_FILE, STORYTURNS_FILE, Dataset
from commet.format.problems import FormatError, Problem
from commet.sources.bounded import files_under
from commet.sources.folders import ARCHIVE_SUFFIXES, archive_refusal
from commet.sources.hub_names import is_hub_spec
from commet.sources.jsonl import _read_metadata, bundled_sample_path, read_storyturns

if TYPE_CHECKING:  # imported where a dataset is loaded: a run on a dataset kept validated loads none
    from commet.sources.adapters import Adapter
    from commet.sources.columns import ColumnMapping

HF_MARKERS = ("dataset_info.json", "state.json", "dataset_dict.json")
#: Data files ``datasets`` reads from a folder (besides parquet): a folder holding one is a table dataset.
TABLE_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".jsonl.gz", ".csv.gz")
TABLE_FILES = (".csv", ".tsv")  # single files always read as tables (JSON ones only with --columns)
DATA_DEPTH = 3


def _load_hf_located(path: Path) -> Dataset:
    """The Hugging Face loader, with anything it raises about the folder turned into a located problem."""
    from commet.sources.hf import load_hf

    try:
        return load_hf(path)
    except FormatError:
        raise
    except RuntimeError as exc:  # the optional 'datasets' extra is missing
        raise FormatError([Problem(str(path), None, None, None, None, str(exc))]) from None
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError, NotImplementedError,
            RecursionError) as exc:
        detail = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
        raise FormatError([Problem(str(path), None, None, None, None, "cannot read this Hugging Face dataset "
                                                                      f"folder: {type(exc).__name__}: {detail}")]) from None


def load_folder(folder: Path, given: ColumnMapping | None, *, where: str | None = None,
                files: tuple[str, ...] = (), adapter: Adapter | None = None) -> Dataset:
    """:func:`commet.sources.hub.load_folder`, imported when a table is read: a file or folder of
    StoryTurns never loads the table readers (``datasets``' seam, the layouts)."""
    from commet.sources.hub import load_folder as load_tables

    return load_tables(folder, given, where=where, files=files, adapter=adapter)


def _hf_form(path: Path, is_dir: bool) -> bool:
    """Whether ``path`` is Hugging Face data: a parquet file, or a folder with its files (the Hugging Face
    reader, :mod:`commet.sources.hf`, is imported only when the markers alone cannot tell)."""
    if not is_dir:
        return path.suffix.lower() == ".parquet"
    if any((path / marker).is_file() for marker in HF_MARKERS):
        return True
    from commet.sources.hf import is_hf_folder

    return is_hf_folder(path)


def _table_files(folder: Path) -> bool:
    """Whether ``folder`` holds data files ``datasets`` reads (JSON lines, CSV, an image folder's metadata),
    at most :data:`DATA_DEPTH` folders down (each folder visited once, however symbolic links loop)."""
    return bool(files_under(folder, TABLE_SUFFIXES, DATA_DEPTH))


def _mapping(columns: str | ColumnMapping | None, where: str) -> ColumnMapping | None:
    from commet.sources.columns import ColumnMapping, ColumnsError

    try:
        return ColumnMapping.parse(columns) if isinstance(columns, str) else columns
    except ColumnsError as exc:
        raise FormatError([Problem(where, None, None, None, "columns", str(exc))]) from None


def _columns_not_used(path: Path, what: str) -> FormatError:
    return FormatError([Problem(str(path), None, None, None, "columns",
                                f"--columns and --adapter read the columns of a table; {what} has none to read")])


def load_dataset(path: str | Path, *, columns: str | ColumnMapping | None = None,
                 adapter: str | Adapter | None = None) -> Dataset:
    """Load a dataset from a folder, a file, a Hugging Face folder, ``hf:OWNER/NAME``, or ``"sample"``.

    ``columns`` (``role=column,...``, see :mod:`commet.sources.columns`) says which column of a table
    is which part of a StoryTurn, where the names do not say it. ``adapter`` (``FILE.py:FUNCTION``, see
    :mod:`commet.sources.adapters`) makes the StoryTurns of a table's rows where no mapping can.
    """
    from commet.sources.adapters import AdapterError, load_adapter
    from commet.sources.columns import ColumnsError

    mapping = _mapping(columns, str(path))
    try:
        made_by = load_adapter(adapter) if isinstance(adapter, str) else adapter
    except AdapterError as exc:
        raise FormatError([Problem(str(path), None, None, None, "adapter", str(exc))]) from None
    if made_by is not None and mapping is not None:
        raise FormatError([Problem(str(path), None, None, None, "adapter",
                                   "--adapter and --columns are two ways to read a table: give one")])
    try:
        if isinstance(path, str) and is_hub_spec(path):
            from commet.sources.hub import load_hub, parse_hub_spec

            return load_hub(parse_hub_spec(path), mapping, made_by)
        return _load_path(path, mapping, made_by)
    except ColumnsError as exc:
        raise FormatError([Problem(str(path), None, None, None, "columns", str(exc))]) from None


def _load_path(path: str | Path, mapping: ColumnMapping | None, adapter: Adapter | None = None) -> Dataset:
    if str(path) == "sample":
        path = bundled_sample_path()
    path = Path(path)
    try:
        is_dir = path.is_dir()
        exists = is_dir or os.path.lexists(path)
    except (OSError, ValueError) as exc:
        raise FormatError([Problem(str(path), None, None, None, None, f"cannot use this path: {exc}")]) from None
    if not exists:
        raise FormatError([Problem(str(path), None, None, None, None, "no such file or folder")])
    if is_dir and os.path.lexists(path / STORYTURNS_FILE):
        if mapping is not None or adapter is not None:
            raise _columns_not_used(path, "a canonical dataset folder")
        dataset = read_storyturns(path / STORYTURNS_FILE)
        dataset.root = path
        dataset.name = path.name
        meta_path = path / METADATA_FILE
        if os.path.lexists(meta_path):
            _read_metadata(dataset, meta_path)
        return dataset
    if _hf_form(path, is_dir):
        from commet.sources.hf import native_layout

        if mapping is None and adapter is None and native_layout(path):
            return _load_hf_located(path)
        if not is_dir:
            return load_folder(path.parent, mapping, where=str(path), files=(str(path),), adapter=adapter)
        if (path / "state.json").is_file() or (path / "dataset_dict.json").is_file():
            return _load_saved(path, mapping, adapter)
        return load_folder(path, mapping, adapter=adapter)
    if is_dir:
        if _table_files(path):
            return load_folder(path, mapping, adapter=adapter)
        archives = files_under(path, ARCHIVE_SUFFIXES, DATA_DEPTH)
        if archives:
            raise FormatError([archive_refusal(archives[0])])
        raise FormatError([Problem(str(path), None, None, None, None,
                                   f"not a dataset folder: no {STORYTURNS_FILE}, no Hugging Face dataset files "
                                   "(state.json, .parquet) and no data files (.jsonl, .json, .csv)")])
    if path.name.lower().endswith(ARCHIVE_SUFFIXES):
        raise FormatError([archive_refusal(path)])
    if path.suffix.lower() in TABLE_FILES or mapping is not None or adapter is not None or _holds_table_rows(path):
        return load_folder(path.parent, mapping, where=str(path), files=(str(path),), adapter=adapter)
    return read_storyturns(path)


#: keys of a record that make it a StoryTurn (canonical) or a pipe-format record
STORYTURN_KEYS = ("turns", "storyturn")


def _holds_table_rows(path: Path) -> bool:
    """Whether a JSON or JSON lines file holds the rows of a table (one per turn, per question), not StoryTurns:
    read whole, every record an object, none with ``turns`` or ``storyturn``, and the first with a question or
    chat messages column by name. One StoryTurn among them, or a record that does not parse, and the file is read
    as StoryTurns (whose reader locates each problem). A canonical file is told by its first line, unread further."""
    from commet.sources.columns import NAMES, Role, column_key
    from commet.sources.jsonl import _json_values_with_lines, read_text

    if path.suffix.lower() not in (".json", ".jsonl", ".ndjson"):
        return False
    try:
        text = read_text(path)
    except FormatError:
        return False  # the StoryTurns reader says why
    first = text.lstrip()[:1]
    if first == "{" and any(f'"{key}"' in text.split("\n", 1)[0] for key in STORYTURN_KEYS):
        return False  # the first line is a StoryTurn
    values, problems = _json_values_with_lines(text, str(path))
    if problems or not values or not all(isinstance(value, dict) for _, value in values):
        return False
    records = [value for _, value in values if isinstance(value, dict)]
    if any(key in record for record in records for key in STORYTURN_KEYS):
        return False
    said = {column_key(str(key)) for key in records[0]}
    return bool(said & {*NAMES[Role.QUESTION], *NAMES[Role.MESSAGES]})


def _load_saved(folder: Path, mapping: ColumnMapping | None, adapter: Adapter | None = None) -> Dataset:
    """A ``save_to_disk`` folder in another layout: its splits through ``datasets.load_from_disk``."""
    from commet.extras import require
    from commet.sources.hf import saved_data_files
    from commet.sources.hub import PictureFiles, _finish, _quiet, tables_of
    from commet.sources.layouts import Source

    datasets = require("datasets", "a Hugging Face dataset")
    saved_data_files(folder)  # every file state.json names inside the folder, or a located refusal
    try:
        with _quiet(datasets):
            loaded = datasets.load_from_disk(str(folder))
    except Exception as exc:  # noqa: BLE001 - datasets raises many kinds: one located line
        raise FormatError([Problem(str(folder), None, None, None, None,
                                   f"datasets cannot read this folder: {type(exc).__name__}: {exc}")]) from None
    reader = PictureFiles(folder)
    source = Source(name=folder.resolve().name, source=str(folder), location=str(folder), read_picture=reader.read_name)
    return _finish(tables_of(loaded, str(folder), reader), source, mapping, None, folder, False, adapter)
