"""What a folder handed to ``datasets`` may make it read: only files inside that folder.

``datasets.load_dataset(FOLDER)`` reads whatever the folder's card patterns (``configs: data_files``),
its image folders' ``metadata.jsonl``/``metadata.csv`` (``file_name``) and its links point at,
wherever that is on the machine. :func:`check_folder` looks before ``datasets`` does and refuses,
with one located line, a card pattern or a ``file_name`` that is absolute, a URL or climbs with
``..``, and any file or folder inside that is a symbolic link pointing out (said as such, never
as "not found"). A Hub cache snapshot's files are links into its repository's ``blobs`` folder:
those, and only those, are followed (:func:`snapshot_blobs`).
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

from commet.format.problems import FormatError, Problem
from commet.sources.bounded import InputFileError, inside, read_regular_file, walk_levels

#: How deep below the folder links and metadata files are looked for (Hub layouts nest 3 or 4 deep).
CHECK_DEPTH = 4
#: Largest ``metadata.jsonl``/``metadata.csv`` read for this check.
MAX_METADATA_BYTES = 64 * 1024 * 1024
METADATA_FILES = ("metadata.jsonl", "metadata.csv")


#: archives of data files (webdataset shards are ``.tar``): not read, refused naming the file
ARCHIVE_SUFFIXES = (".zip", ".tar", ".tgz", ".tar.gz", ".tar.bz2", ".tar.xz", ".tar.zst", ".7z", ".rar")


def archive_refusal(file: Path) -> Problem:
    """Why an archive is not read, and what to do: one located line."""
    kind = "a webdataset shard (a tar archive of samples)" if ".tar" in file.name.lower() else "an archive"
    return Problem(str(file), None, None, None, None,
                   f"{file.name} is {kind}: CoMMET reads the data files of a folder as they lie (parquet, JSON "
                   "lines, JSON, CSV/TSV, picture files), never inside an archive; extract it into the folder and "
                   "load the folder (rows read by their column names, with --columns ROLE=COLUMN,.. or with "
                   "--adapter FILE.py:FUNCTION, docs/official-data.md), nothing was read")


def snapshot_blobs(folder: Path) -> tuple[Path, ...]:
    """The ``blobs`` folder a Hub cache snapshot's links point into (``.../datasets--O--N/snapshots/REV``), else none."""
    if folder.parent.name == "snapshots" and folder.parent.parent.name.startswith("datasets--"):
        return (folder.parent.parent / "blobs",)
    return ()


def _refused(file: Path | str, line: int | None, message: str, field: str | None = None) -> FormatError:
    return FormatError([Problem(str(file), line, None, None, field, message)])


def _entries(folder: Path) -> list[Path]:
    """Every entry below ``folder`` (links not followed), at most :data:`CHECK_DEPTH` folders down, hidden ones left."""
    found: list[Path] = []

    def visit(entry: os.DirEntry[str]) -> bool:
        if entry.name.startswith("."):
            return False
        found.append(Path(entry.path))
        return entry.is_dir(follow_symlinks=False)

    walk_levels(folder, CHECK_DEPTH, visit)
    return found


def check_folder(folder: Path) -> None:
    """Refuse (:class:`FormatError`, one located line) a folder that would make ``datasets`` read outside it."""
    blobs = snapshot_blobs(folder)
    top = folder.resolve()
    for entry in _entries(folder):
        if entry.is_symlink():
            try:
                inside(top, str(entry.relative_to(folder)), links_into=blobs)
            except InputFileError as exc:
                raise _refused(entry, None, str(exc)) from None
        if entry.name in METADATA_FILES and entry.is_file():
            _check_metadata(entry)
        if entry.suffix.lower() == ".parquet" and entry.is_file():
            check_parquet(entry)
    _check_card(folder)


def _check_metadata(file: Path) -> None:
    """Each ``file_name`` (and ``*_file_name``) of an image folder's metadata names a file inside its folder."""
    try:
        text = read_regular_file(file, max_bytes=MAX_METADATA_BYTES, what="metadata file").decode("utf-8", "replace")
    except (InputFileError, OSError) as exc:
        raise _refused(file, None, f"cannot be read: {exc}") from None
    if file.suffix == ".jsonl":
        rows: list[tuple[int, object]] = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    rows.append((number, json.loads(line)))
                except ValueError:
                    continue  # (datasets says what is wrong with the line)
                except RecursionError:  # pyarrow's JSON reader would overflow its stack on it: refused here
                    raise _refused(file, number, "nests its values too deeply to be read") from None
    else:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        try:
            rows = [(reader.line_num, row) for row in reader]
        except csv.Error:
            return
    for number, row in rows:
        if not isinstance(row, dict):
            continue
        for key, value in row.items():
            if isinstance(key, str) and (key == "file_name" or key.endswith("_file_name")) and isinstance(value, str):
                try:  # (written words only: a link among the folder's files is refused by the walk above)
                    _pattern_inside(value)
                except InputFileError as exc:
                    raise _refused(file, number, f"{key} {exc}", key) from None


def _check_card(folder: Path) -> None:
    """The card's ``configs: data_files`` patterns name files inside the folder (no URL, absolute path or ``..``)."""
    from commet.sources.card import front_matter

    card = folder / "README.md"
    configs = front_matter(folder).get("configs") if card.is_file() else None
    for config in configs if isinstance(configs, list) else []:
        data_files = config.get("data_files") if isinstance(config, dict) else None
        for entry in data_files if isinstance(data_files, list) else [data_files]:
            paths = entry.get("path") if isinstance(entry, dict) else entry
            for pattern in [paths] if isinstance(paths, str) else paths if isinstance(paths, list) else []:
                if not isinstance(pattern, str):
                    continue
                try:
                    _pattern_inside(pattern)
                except InputFileError as exc:
                    raise _refused(card, None, f"configs: data_files {exc}", "configs") from None


def _pattern_inside(pattern: str) -> None:
    shown = pattern if len(pattern) <= 120 else pattern[:100] + "..."
    if "://" in pattern or pattern.startswith(("hf:", "file:")):
        raise InputFileError(f"{shown!r} is a URL: only files inside the dataset folder are read (refused, not read)")
    if Path(pattern).is_absolute() or Path(pattern).drive:
        raise InputFileError(f"{shown!r} is an absolute path: only files inside the dataset folder are read "
                             "(refused, not read)")
    if ".." in Path(pattern).parts:
        raise InputFileError(f"{shown!r} climbs out of the dataset folder with '..' (refused, not read)")


# ----------------------------------------------------------------------------------------------- table limits

#: Most rows one table file may have: 20,000 StoryTurns written one row per turn are about 100,000.
MAX_TABLE_ROWS = 500_000
#: Most bytes one table file may hold once decompressed (its pictures included): what is read is kept.
MAX_TABLE_BYTES = 1024 * 1024 * 1024
#: Most bytes one text cell may hold (a story of a few kilobytes; a whole book is a few megabytes).
MAX_TEXT_CELL_BYTES = 8 * 1024 * 1024
#: Most bytes one binary cell may hold: a picture's limit.
MAX_BINARY_CELL_BYTES = 50 * 1024 * 1024


def check_parquet(file: Path) -> None:
    """Refuse a parquet file by what its footer declares, before its rows are read: more than
    :data:`MAX_TABLE_ROWS` rows, or more than :data:`MAX_TABLE_BYTES` once decompressed (a 9 MB file of one
    200 MB cell, a 4 MB file of a million rows: gigabytes once read). An unreadable footer (a truncated shard, a
    file that is no parquet) is refused naming the file: ``datasets``, reading a folder of shards, names none."""
    import pyarrow.parquet as pq

    try:
        metadata = pq.ParquetFile(file).metadata
    except Exception as exc:  # noqa: BLE001 - pyarrow raises ArrowInvalid, OSError, ...: one located line
        said = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
        raise _refused(file, None, f"cannot read {file.name}: {said}") from None
    if metadata.num_rows > MAX_TABLE_ROWS:
        raise _refused(file, None, f"has {metadata.num_rows:,} rows, more than the {MAX_TABLE_ROWS:,} a table may have "
                                   "(refused, not read); split it")
    size = 0
    for i in range(metadata.num_row_groups):
        group = metadata.row_group(i)
        for j in range(metadata.num_columns):
            chunk = group.column(j)
            size += chunk.total_uncompressed_size
            if chunk.total_uncompressed_size > MAX_BINARY_CELL_BYTES * max(1, group.num_rows):  # a cell over it
                raise _refused(file, None, f"column {chunk.path_in_schema!r} holds {chunk.total_uncompressed_size:,} "
                                           f"bytes in {group.num_rows:,} row(s): a cell over the "
                                           f"{MAX_BINARY_CELL_BYTES:,} bytes a cell may have (refused, not read)",
                               chunk.path_in_schema)
    if size > MAX_TABLE_BYTES:
        raise _refused(file, None, f"holds {size:,} bytes once decompressed, more than the {MAX_TABLE_BYTES:,} a "
                                   "table may have (refused, not read)")


def check_cells(batch: object, where: str, first_row: int) -> None:
    """Refuse a batch of rows (a ``pyarrow.RecordBatch``) with a cell over its limit, before it becomes Python
    values: text over :data:`MAX_TEXT_CELL_BYTES`, bytes over :data:`MAX_BINARY_CELL_BYTES`, nested cells too.
    The error names the row (``first_row`` is the batch's first) and the column."""
    import pyarrow as pa
    import pyarrow.compute as pc

    assert isinstance(batch, (pa.RecordBatch, pa.Table))

    def too_long(array: pa.Array) -> tuple[int, int, int] | None:  # (row, bytes, limit) of the first too long
        kind = array.type
        if pa.types.is_struct(kind):
            for index in range(kind.num_fields):
                found = too_long(pc.struct_field(array, [index]))
                if found is not None:
                    return found
            return None
        if pa.types.is_list(kind) or pa.types.is_large_list(kind):
            flat = pc.list_flatten(array)
            found = too_long(flat)
            if found is None:
                return None
            parents = pc.list_parent_indices(array)
            return int(parents[found[0]].as_py()), found[1], found[2]
        text = pa.types.is_string(kind) or pa.types.is_large_string(kind)
        if not (text or pa.types.is_binary(kind) or pa.types.is_large_binary(kind)):
            return None
        limit = MAX_TEXT_CELL_BYTES if text else MAX_BINARY_CELL_BYTES
        lengths = pc.binary_length(array)
        if len(lengths) == 0 or (pc.max(lengths).as_py() or 0) <= limit:
            return None
        row = int(pc.index(pc.greater(lengths, limit), True).as_py())
        return row, int(lengths[row].as_py()), limit

    for name, column in zip(batch.schema.names, batch.columns, strict=True):
        chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
        offset = 0
        for chunk in chunks:
            found = too_long(chunk)
            if found is not None:
                row, size, limit = found
                raise FormatError([Problem(where, first_row + offset + row, None, None, name,
                                           f"a cell of {size:,} bytes, more than the {limit:,} a cell may have "
                                           "(refused)")])
            offset += len(chunk)
