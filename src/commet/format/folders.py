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

from commet.format.bounded import InputFileError, inside, read_regular_file
from commet.format.problems import FormatError, Problem

#: How deep below the folder links and metadata files are looked for (Hub layouts nest 3 or 4 deep).
CHECK_DEPTH = 4
#: Largest ``metadata.jsonl``/``metadata.csv`` read for this check.
MAX_METADATA_BYTES = 64 * 1024 * 1024
METADATA_FILES = ("metadata.jsonl", "metadata.csv")


def snapshot_blobs(folder: Path) -> tuple[Path, ...]:
    """The ``blobs`` folder a Hub cache snapshot's links point into (``.../datasets--O--N/snapshots/REV``), else none."""
    if folder.parent.name == "snapshots" and folder.parent.parent.name.startswith("datasets--"):
        return (folder.parent.parent / "blobs",)
    return ()


def _refused(file: Path | str, line: int | None, message: str, field: str | None = None) -> FormatError:
    return FormatError([Problem(str(file), line, None, None, field, message)])


def _entries(folder: Path) -> list[Path]:
    """Every entry below ``folder`` (links not followed), at most :data:`CHECK_DEPTH` folders down, hidden ones left."""
    found, level = [], [folder]
    for _ in range(CHECK_DEPTH + 1):
        below = []
        for directory in level:
            try:
                entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
            except OSError:
                continue
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                found.append(Path(entry.path))
                if entry.is_dir(follow_symlinks=False):
                    below.append(Path(entry.path))
        level = below
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
            _check_metadata(entry, blobs)
    _check_card(folder)


def _check_metadata(file: Path, blobs: tuple[Path, ...]) -> None:
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
                try:
                    inside(file.parent, value, links_into=blobs)
                except InputFileError as exc:
                    raise _refused(file, number, f"{key} {exc}", key) from None


def _check_card(folder: Path) -> None:
    """The card's ``configs: data_files`` patterns name files inside the folder (no URL, absolute path or ``..``)."""
    from commet.format.card import front_matter

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
