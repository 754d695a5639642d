"""Hugging Face datasets by name, and folders of tables ``datasets`` reads (docs/official-data.md).

A dataset spec ``hf:OWNER/NAME[@REVISION][:config=CONFIG][:split=SPLIT]`` names a Hub dataset
(``hf:rrchen2026/Theory_of_Mind_CoMMET``, ``hf:me/tom@v1.0:split=test``); ``hf:PATH`` names a
local folder (a downloaded snapshot) read the same way. It is loaded by ``datasets.load_dataset``
with its caches: online it downloads (or revalidates) as ``datasets`` does; with
``HF_HUB_OFFLINE=1`` (or ``HF_DATASETS_OFFLINE=1``) it reads the Hub cache's snapshot of that
revision (``hf download`` or an earlier load put it there), else, without a revision, the last
version ``datasets`` prepared in its own cache. Without a split every split is read, in order.

Rows become StoryTurns through :mod:`commet.sources.layouts`. The paper's own release,
``rrchen2026/Theory_of_Mind_CoMMET``, is recognised by that name (also written without ``hf:``)
and by a dataset card that cites the paper, so ``commet stats`` sets its figures beside the paper's.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from types import SimpleNamespace
from typing import Any

from commet.extras import require
from commet.format.dataset import METADATA_FILE, Dataset, image_file_candidates
from commet.format.origin import Provenance, TableRead
from commet.format.pictures import MAX_IMAGE_BYTES, PictureError
from commet.format.problems import FormatError, Problem
from commet.sources.adapters import Adapter
from commet.sources.bounded import InputFileError, inside, read_regular_file
from commet.sources.columns import ColumnMapping, column_of
from commet.sources.folders import (
    ARCHIVE_SUFFIXES,
    archive_refusal,
    check_cells,
    check_folder,
    check_parquet,
    snapshot_blobs,
)
from commet.sources.hub_names import EXAMPLE, GRAMMAR, OFFICIAL, PREFIX, is_official
from commet.sources.jsonl import apply_metadata
from commet.sources.layouts import Source, Table, dataset_from_tables
from commet.sources.picture_tables import split_picture_tables
from commet.sources.table_files import (
    absent,
    bad_json_line,
    declares_features,
    discard_prepared,
    folders_of,
    locate_storyturns,
    located,
    misread_rows,
    row_files,
    wrapper_column,
)


class HubError(FormatError):
    """A Hub dataset that cannot be had: one line saying why and what to do."""

    def __init__(self, where: str, message: str, line: int | None = None):
        super().__init__([Problem(where, line, None, None, None, message)])


@dataclass(frozen=True)
class HubSpec:
    """A parsed ``hf:`` spec: a Hub repository or a local folder, and what of it to read."""

    repo: str | None
    folder: Path | None = None
    revision: str | None = None
    config: str | None = None
    split: str | None = None

    def __str__(self) -> str:
        text = PREFIX + (self.repo if self.repo is not None else str(self.folder))
        text += f"@{self.revision}" if self.revision else ""
        text += f":config={self.config}" if self.config else ""
        return text + (f":split={self.split}" if self.split else "")

    @property
    def name(self) -> str:
        return self.repo.split("/")[-1] if self.repo is not None else Path(str(self.folder)).resolve().name


_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}")
_REVISION = re.compile(r"[A-Za-z0-9._/-]{1,200}")  # a branch, tag or commit (git refs cannot hold ':')
_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def parse_hub_spec(text: str) -> HubSpec:
    """The spec ``text`` names; :class:`HubError` with the grammar when it is not one."""
    body = text[len(PREFIX):] if text.startswith(PREFIX) else text

    def bad(why: str) -> HubError:
        return HubError(text, f"{why}: a Hub dataset is written {GRAMMAR}, e.g. {EXAMPLE} (or hf:PATH for a "
                              "downloaded snapshot folder)")

    head, *options = body.split(":")
    if head.startswith(("/", "./", "../", "~")) or (head and Path(head).is_dir()):
        folder = Path(head).expanduser()
        if not folder.is_dir():
            raise HubError(text, f"no such folder {str(folder)!r}")
        folder = folder.resolve()  # recorded with runs and studies: the same folder from anywhere
        repo, revision = None, ""
    else:
        repo, at, revision = head.partition("@")
        if not _REPO.fullmatch(repo):
            raise bad(f"{repo!r} is not OWNER/NAME")
        if at and not (_REVISION.fullmatch(revision) and ".." not in revision):
            raise bad(f"{revision!r} is not a revision")
        folder = None
    values: dict[str, str] = {}
    for option in options:
        key, equals, value = option.partition("=")
        if key not in ("config", "split") or not equals or not _PART.fullmatch(value) or key in values:
            raise bad(f"{option!r} is not config=NAME or split=NAME (each at most once)")
        values[key] = value
    return HubSpec(repo, folder, revision or None, values.get("config"), values.get("split"))


def _datasets() -> Any:
    """The ``datasets`` module (a one-line error naming the extra when it is not installed)."""
    return require("datasets", "a Hugging Face dataset")


# ----------------------------------------------------------------------------------------------- pictures


@dataclass(frozen=True)
class PictureFiles:
    """Picture files a dataset's rows name, read only inside the folders the dataset lives in.

    Why: a row's ``Image`` cell may carry a path instead of bytes, and a turn may name its picture
    by file name; neither may make CoMMET read a file elsewhere on the machine (``/etc/...``, ``..``).
    """

    #: the folder the dataset lives in (a local folder, or that revision's snapshot in the Hub cache): names
    #: are looked up there, and no file outside it is read (None: no file at all)
    base: Path | None

    #: the folders (from ``base``, POSIX) that hold the data files read: an ``Image`` cell's path or a file name may
    #: be written from the data file's folder (``data/``) rather than from the top
    data_dirs: tuple[str, ...] = ()

    def read_path(self, path: str) -> bytes | None:
        """The picture file ``path`` names (relative to the folder or to a folder of its data files, or an absolute
        path into it); None when no such file is there; :class:`PictureError` (nothing read) when it lies outside,
        is refused by its kind or size, or names two different files (from the top and from a data folder)."""
        if self.base is None:
            raise PictureError(f"{path[:120]!r} names a file, and this dataset has no folder to read it from "
                               "(refused, not read)")
        found: dict[str, bytes] = {}
        for folder in (".", *(d for d in self.data_dirs if d != ".")):
            relative = path if folder == "." or PurePosixPath(path).is_absolute() else str(PurePosixPath(folder) / path)
            data = self._read(relative, path)
            if data is not None:
                found.setdefault(relative, data)
        if len(set(found.values())) > 1:
            raise PictureError(f"{path[:120]!r} names different files: {', '.join(found)} (write the path from the "
                               "dataset folder; refused, not guessed)")
        return next(iter(found.values()), None)

    def _read(self, relative: str, path: str) -> bytes | None:
        assert self.base is not None
        try:
            found = inside(self.base, relative, absolute=True, links_into=snapshot_blobs(self.base))
        except InputFileError as exc:
            raise PictureError(str(exc)) from None
        if not os.path.lexists(found):
            return None
        try:
            return read_regular_file(found, max_bytes=MAX_IMAGE_BYTES, what="picture")  # size checked on the handle
        except (InputFileError, OSError) as exc:
            raise PictureError(f"{path[:120]!r} {exc}") from None

    def read_name(self, name: str) -> bytes | None:
        """The picture a turn names by file name (in ``images/`` or the folder), None when there is none;
        :class:`PictureError` when the file there is refused (a link out, a FIFO, too large): said as such."""
        if self.base is None or Path(name).is_absolute() or ".." in Path(name).parts or not name.isprintable():
            return None
        for folder in ("images", "."):
            for candidate in image_file_candidates(name):
                data = self.read_path(str(PurePosixPath(folder) / candidate))
                if data is not None:
                    return data
        return None


# ----------------------------------------------------------------------------------------------- tables


def _decoded(value: Any, feature: Any, files: PictureFiles) -> Any:
    """A cell with its pictures' bytes read (confined) and class labels as their names."""
    if value is None:
        return None
    kind = type(feature).__name__
    if kind == "Image":
        if isinstance(value, dict) and value.get("bytes") is None and value.get("path"):
            return {**value, "bytes": files.read_path(str(value["path"]))}  # PictureError: told with its row
        return value
    if kind == "ClassLabel" and isinstance(value, int) and value >= 0:
        return feature.int2str(value)
    if kind == "Json" and isinstance(value, str):  # a column of mixed types (datasets >= 4), kept as JSON text
        try:
            return json.loads(value)
        except ValueError:
            return value
    if isinstance(feature, dict) and isinstance(value, dict):
        return {k: _decoded(v, feature[k], files) if k in feature else v for k, v in value.items()}
    inner = feature[0] if isinstance(feature, list) and feature else getattr(feature, "feature", None)
    if isinstance(value, list) and inner is not None:
        return [_decoded(v, inner, files) for v in value]
    return value


def _cell(value: Any, feature: Any, files: PictureFiles, where: str, split: str | None, row: int, column: str) -> Any:
    """:func:`_decoded`, a refused picture file said with its split, row and column."""
    try:
        return _decoded(value, feature, files)
    except PictureError as exc:
        at = f"{where}[{split}]" if split else where
        raise FormatError([Problem(at, row, None, None, column, f"picture file {exc}")]) from None


def _items(cell: object) -> list[dict[str, object]]:
    return [item for item in cell if isinstance(item, dict)] if isinstance(cell, list) else []


def tables_of(loaded: Any, where: str, files: PictureFiles, config: str | None = None,
              split_files: dict[str, list[Path]] | None = None) -> list[Table]:
    """The splits of what ``datasets.load_dataset`` returned (a Dataset or a DatasetDict), as tables; ``config``
    names the config they belong to when the dataset has several (their ``where`` then says it); ``split_files``,
    the files of each split, lets a located error name the file of a row (:mod:`commet.sources.table_files`)."""
    splits = list(loaded.items()) if hasattr(loaded, "keys") else [(getattr(loaded, "split", None), loaded)]
    tables = []
    for split, data in splits:
        split = str(split) if split is not None else None
        features = data.features
        read = (split_files or {}).get(split or "", [])
        shards = row_files(read, len(data)) if read else ()
        at = f"{where}[{split}]" if split else where
        rows: list[dict[str, object]] = []
        try:
            for batch in data.with_format("arrow").iter(batch_size=256):
                check_cells(batch, at, len(rows) + 1)
                for row in batch.to_pylist():
                    rows.append({name: _cell(row.get(name), features[name], files, where, split, len(rows) + 1,
                                             name) for name in features})
        except FormatError as exc:  # a cell or picture file refused: said at its file and row
            raise FormatError(located(exc.problems, {at: shards})) from None
        wrapped = wrapper_column(features)
        if wrapped is not None:  # {"data": [rows]}: the rows are the list's items
            features, shards = wrapped[1], ()
            rows = [dict(item) for row in rows for item in _items(row.get(wrapped[0]))]
        columns = [column_of(name, feature) for name, feature in features.items()]
        parts = [p for p in (config, split if len(splits) > 1 or config else None) if p]
        tables.append(Table(f"{where}[{'/'.join(parts)}]" if parts else where, split, columns, rows, config,
                            files=shards))
    return tables


@contextlib.contextmanager
def _quiet(datasets: Any) -> Iterator[None]:
    """No progress bars or cache notices from ``datasets`` and ``huggingface_hub`` on the user's terminal."""
    from huggingface_hub.utils import logging as hub_logging

    ds_logging = datasets.utils.logging
    bars = getattr(datasets, "disable_progress_bars", None)
    were_off = datasets.utils.are_progress_bars_disabled() if hasattr(datasets.utils, "are_progress_bars_disabled") \
        else True
    levels = ds_logging.get_verbosity(), hub_logging.get_verbosity()
    if bars is not None:
        bars()
    ds_logging.set_verbosity(logging.CRITICAL)  # its errors ("Failed to read schema ...") are said in our own line
    hub_logging.set_verbosity_error()  # its retries ("Retrying in 1s") are said once, in our error line
    try:
        yield
    finally:
        ds_logging.set_verbosity(levels[0])
        hub_logging.set_verbosity(levels[1])
        if not were_off and hasattr(datasets, "enable_progress_bars"):
            datasets.enable_progress_bars()


def card_text(folder: Path) -> str:
    """The folder's dataset card as text, read within its size limit ("" without a readable one)."""
    from commet.sources.card import CARD_FILE, MAX_CARD_BYTES

    try:
        return read_regular_file(folder / CARD_FILE, max_bytes=MAX_CARD_BYTES, what="dataset card").decode(
            "utf-8", "replace")
    except (InputFileError, OSError):
        return ""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0][:300]}" if text else type(exc).__name__


def _unreadable(where: str, exc: BaseException, files: list[Path], folder: Path | None = None) -> HubError:
    """``datasets``' refusal as one line: the cause under its wrapper and the innermost one (a file's own error, the
    JSON line that does not parse or the split whose columns differ, comes wrapped in a ``DatasetGenerationError``
    that says only "an error occurred"), located at the first line of the data files it read that is not JSON
    (``datasets`` names neither file nor line)."""
    causes = [exc]
    while (inner := causes[-1].__cause__ or causes[-1].__context__) is not None and inner not in causes:
        causes.append(inner)
    said = "; ".join(dict.fromkeys(_first_line(cause) for cause in causes[1:2] + causes[-1:]))
    if any("cast" in str(cause).lower() for cause in causes):
        said += (" (a column holds different types in different files, splits or rows: give every file the same "
                 "columns and types, or load one file by its path)")
        if folder is not None and declares_features(folder):
            said += ("; or the dataset card's dataset_info (README.md) declares features the files do not have: "
                     "correct or remove them")
    for file in files:
        bad = bad_json_line(file)
        if bad is not None:
            return HubError(str(file), f"datasets cannot read this file: {bad} ({said})", bad.line)
    return HubError(where, f"datasets cannot read this folder: {said}")


def _refuse_misread(files: list[Path], config: object | None) -> None:
    """A data file ``datasets`` would read without a word but wrongly (:func:`misread_rows`) is refused before any
    is read, at its line."""
    for file in files:
        bad = misread_rows(file, config)
        if bad is not None:
            raise HubError(str(file), f"{bad.why}; nothing was read", bad.line)


def configs_to_read(path: str, config: str | None, revision: str | None = None) -> list[str | None]:
    """The configs a load reads: the one named; else the default (None) when the dataset has a default config
    or only one; else every config, in the card's order (a release split into ``text_complete`` and
    ``image_dependent`` configs is read whole, not refused for want of a name)."""
    if config is not None:
        return [config]
    datasets = _datasets()
    try:
        names = list(datasets.get_dataset_config_names(path, revision=revision))
        default = datasets.get_dataset_default_config_name(path, revision=revision)
    except Exception:  # noqa: BLE001 - no configs to list (a bare folder of files): load_dataset says what is wrong
        return [None]
    return [None] if default is not None or len(names) <= 1 else [str(name) for name in names]


#: files up to this size are hashed by their bytes; a larger one by its size and change times (its bytes would
#: cost a read of the whole file at every load, and a file past the table limits is refused anyway)
HASHED_BYTES = 16 * 1024 * 1024


def content_cache(folder: Path) -> Path:
    """A ``datasets`` cache folder for the data in ``folder``, named by a hash of its files' names and contents.

    Why: ``datasets`` keys the cache of a local folder by its name and data-files pattern, so two folders of one
    name, or a folder whose files were replaced, would be answered with rows prepared before from other files.
    A file up to :data:`HASHED_BYTES` counts by its bytes; a larger one by its size, inode and change times
    (``st_ctime_ns`` changes with every write and cannot be set back). Only regular files are opened: a FIFO or a
    link is counted by its name and kind, never read (reading a FIFO would wait for ever).
    """
    digest = hashlib.sha256()
    for file in sorted(_data_files(folder)):
        digest.update(str(file.relative_to(folder)).encode("utf-8", "surrogateescape") + b"\0")
        try:
            status = file.lstat()
        except OSError:
            continue
        if not stat.S_ISREG(status.st_mode) or status.st_size > HASHED_BYTES:
            digest.update(f"{status.st_mode}:{status.st_size}:{status.st_ino}:{status.st_mtime_ns}:"
                          f"{status.st_ctime_ns}".encode())
        else:
            with contextlib.suppress(OSError), file.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
        digest.update(b"\0")
    return Path(str(_datasets().config.HF_DATASETS_CACHE)).expanduser() / "commet-folders" / digest.hexdigest()[:32]


def _data_files(folder: Path) -> list[Path]:
    """The files of a dataset folder, hidden folders (``.git``, ``.cache``) left out, each folder visited once."""
    found: list[Path] = []
    for top, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(Path(top) / name for name in names if not name.startswith("."))
    return found


#: files ``datasets`` reads as tables; a folder's file of these kinds that no builder reads is refused, never dropped
DATA_SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv", ".tsv", ".parquet", ".arrow", ".jsonl.gz", ".json.gz",
                 ".csv.gz", ".tsv.gz")
#: JSON files of a dataset folder that hold no rows: CoMMET's metadata and datasets' own
NOT_DATA = (METADATA_FILE, "dataset_info.json", "dataset_infos.json", "dataset_dict.json", "state.json")


def _files_read(builder: Any, folder: Path) -> list[Path]:
    """The local files a ``datasets`` builder will read (every split's), as it resolved them, named from ``folder``."""
    found = getattr(builder.config, "data_files", None) or {}
    return [folder / os.path.relpath(str(file), folder) for files in found.values() for file in files
            if "://" not in str(file)]


#: a ``.json`` file larger than this is taken for rows unread (metadata files are small)
METADATA_JSON_BYTES = 4 * 1024 * 1024


def _holds_rows(file: Path) -> bool:
    """Whether a data-like file may hold rows: every kind does but a ``.json`` file holding one object that is no
    table of columns (``croissant.json``, a label map: metadata, which ``datasets`` would not make rows of either);
    a list, JSON lines, an object of equal lists, or a file too large or unreadable to tell, may."""
    if not file.name.lower().endswith(".json"):
        return True
    try:
        if file.stat().st_size > METADATA_JSON_BYTES:
            return True
        value = json.loads(file.read_bytes())
    except (OSError, ValueError):
        return True  # JSON lines, or unreadable: datasets may read it as rows
    if not isinstance(value, dict):
        return True
    columns = list(value.values())
    return bool(columns) and all(isinstance(column, list) for column in columns) \
        and len({len(column) for column in columns}) == 1


def _refuse_unread(folder: Path, read: list[Path]) -> None:
    """Refuse (one located line) a folder holding a data file ``datasets`` would not read. Why: once some files
    are named for a split (``data/test.jsonl``), ``datasets`` reads only those and leaves the rest without a word.
    A card's ``configs:`` says which files make the dataset: what it leaves out is left out on purpose."""
    from commet.sources.card import front_matter

    if front_matter(folder).get("configs"):
        return
    archives = [file for file in _data_files(folder) if file.name.lower().endswith(ARCHIVE_SUFFIXES)]
    if archives:  # beside data files: rows it may hold would go unread without a word
        raise FormatError([archive_refusal(sorted(archives)[0])])
    taken = {os.path.realpath(file) for file in read}
    unread = sorted(file for file in _data_files(folder) if file.name.lower().endswith(DATA_SUFFIXES)
                    and file.name not in NOT_DATA and os.path.realpath(file) not in taken and _holds_rows(file))
    if unread:
        names = ", ".join(str(file.relative_to(folder)) for file in unread[:5])
        more = f" and {len(unread) - 5} more" if len(unread) > 5 else ""
        kept = ", ".join(sorted({str(file.relative_to(folder)) for file in read})[:5]) or "none"
        raise HubError(str(unread[0]), f"datasets would not read {names}{more} (it reads {kept}: once a file is "
                                       "named for a split, it reads only such files): load one file by its path, "
                                       "or say which files make which split in a dataset card (README.md with "
                                       "configs: - config_name: default, data_files: - split: test, path: ...); "
                                       "nothing was read")


def load_folder(folder: Path, given: ColumnMapping | None, *, where: str | None = None, config: str | None = None,
                split: str | None = None, dataset: Dataset | None = None, files: tuple[str, ...] = (),
                repo: str | None = None, adapter: Adapter | None = None) -> Dataset:
    """A local folder (or ``files`` in it) as ``datasets.load_dataset`` reads it, made into StoryTurns;
    ``repo`` names the Hub dataset when the folder is its snapshot. Every config is read when it has several
    and no default one. A refused load leaves nothing in ``datasets``' cache (what it prepared is removed)."""
    where = where or str(folder)
    if not files:
        check_folder(folder)  # nothing its card, metadata or links name outside it is read; tables within limits
    for file in files:
        if file.lower().endswith(".parquet"):
            check_parquet(Path(file))
    if files:
        return _load_tables(folder, given, where, config, split, dataset, files, repo, adapter)
    cache = content_cache(folder)
    made = absent(cache, Path(str(_datasets().config.HF_DATASETS_CACHE)).expanduser())
    try:
        data = _load_tables(folder, given, where, config, split, dataset, files, repo, adapter, cache)
    except BaseException:  # a refusal (or an interruption) keeps nothing it prepared
        discard_prepared(made)
        raise
    data.prepared = tuple(made)  # removed too if validation refuses the dataset (commet.sources.checked)
    return data


def _load_tables(folder: Path, given: ColumnMapping | None, where: str, config: str | None, split: str | None,
                 dataset: Dataset | None, files: tuple[str, ...], repo: str | None, adapter: Adapter | None,
                 cache_folder: Path | None = None) -> Dataset:
    """:func:`load_folder`'s reading, through ``cache_folder`` (a folder) or a scratch cache (named files)."""
    datasets = _datasets()
    reader = PictureFiles(folder)
    tables: list[Table] = []
    # datasets' shared cache answered a folder with the rows of another folder of the same name and card, read
    # earlier: a folder is read through a cache keyed by its content, named files through a cache of their own
    read: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="commet-datasets-") as scratch, _quiet(datasets):
        try:
            if files:
                builder = {".csv": "csv", ".tsv": "csv", ".parquet": "parquet"}.get(Path(files[0]).suffix.lower(),
                                                                                    "json")
                options = {"delimiter": "\t"} if files[0].lower().endswith(".tsv") else {}
                reader = replace(reader, data_dirs=folders_of(folder, [Path(f) for f in files]))
                _refuse_misread([Path(f) for f in files], SimpleNamespace(**options))
                loaded = datasets.load_dataset(builder, data_files=list(files), split=split, cache_dir=scratch,
                                               **options)
                tables = tables_of(loaded, where, reader)
            else:
                cache = str(cache_folder)
                # load_dataset's steps, so that the files the builders resolved are compared with the folder's
                # before any is read: datasets drops data files silently once some are named for a split
                builders = {name: datasets.load_dataset_builder(str(folder), name=name, cache_dir=cache)
                            for name in configs_to_read(str(folder), config)}
                read = [file for builder in builders.values() for file in _files_read(builder, folder)]
                _refuse_unread(folder, read)
                reader = replace(reader, data_dirs=folders_of(folder, read))
                for builder in builders.values():
                    _refuse_misread(_files_read(builder, folder), builder.config)
                for name, builder in builders.items():
                    builder.download_and_prepare()
                    split_files = {str(part): [folder / os.path.relpath(str(file), folder) for file in found]
                                   for part, found in (getattr(builder.config, "data_files", None) or {}).items()}
                    tables += tables_of(builder.as_dataset(split=split), where, reader, name, split_files)
        except FormatError:  # CoMMET's own refusals (an unread file, a picture cell), located already
            raise
        except Exception as exc:  # noqa: BLE001 - datasets raises many kinds (ValueError, FileNotFoundError, ...)
            raise _unreadable(where, exc, [Path(f) for f in files] or read, None if files else folder) from None
    card = card_text(folder)
    cached_as = "datasets--" + OFFICIAL.repo.replace("/", "--").lower()  # a snapshot folder of the Hub cache
    official = is_official(repo or "") or OFFICIAL.paper.split(":")[1] in card or OFFICIAL.repo.lower() in card.lower() \
        or any(part.lower() == cached_as for part in folder.resolve().parts)
    name = OFFICIAL.name if official else repo.split("/")[-1] if repo else \
        Path(files[0]).stem if len(files) == 1 else folder.resolve().name
    source = Source(name=name, source=repo or folder.resolve().name, location=where,
                    read_picture=reader.read_name)
    return _finish(tables, source, given, dataset, folder, official, adapter)


def _finish(tables: list[Table], source: Source, given: ColumnMapping | None, dataset: Dataset | None,
            folder: Path | None, official: bool, adapter: Adapter | None = None) -> Dataset:
    from commet.sources.card import metadata_from_card

    if not tables or not any(t.rows for t in tables):
        raise HubError(source.location, "no rows: the dataset is empty")
    data = dataset if dataset is not None else Dataset(storyturns=[], name=source.name)
    metadata = folder / METADATA_FILE if folder is not None else None
    if metadata is not None and metadata.is_file():  # CoMMET's own export: name, licence, declared taxonomy
        apply_metadata(data, metadata.read_text(encoding="utf-8"), str(metadata), source.name)
    elif folder is not None:
        metadata_from_card(data, folder)
    if official:
        data.name, data.licence = OFFICIAL.name, data.licence if data.licence != "unspecified" else OFFICIAL.licence
    stories, pictures = split_picture_tables([t for t in tables if t.rows])
    if pictures:
        source = replace(source, read_picture=pictures.reader(source.read_picture))
    shards = {table.where: table.files for table in stories if table.files}  # a row's file and line, said
    try:
        data = dataset_from_tables(stories, source, given, data, adapter)
    except PictureError as exc:  # a picture a turn names by file, refused: said as such, never "not found"
        raise HubError(source.location, f"picture file {exc}") from None
    except HubError:
        raise
    except FormatError as exc:
        raise FormatError(located(exc.problems, shards)) from None
    locate_storyturns(data, shards)
    for table in pictures.tables:
        data.tables_read.append(TableRead(table.where, len(table.rows), f"pictures joined by id: {pictures.said}"))
    data.provenance = provenance_of(folder, source.source, official, data.licence)
    assert data.origin is not None
    data.origin = replace(data.origin, official=official, layout=data.origin.layout + (
        f"; pictures from {', '.join(t.where for t in pictures.tables)}, joined by {pictures.said}" if pictures else ""))
    return data


# ----------------------------------------------------------------------------------------------- the Hub


def _offline() -> bool:
    return bool(_datasets().config.HF_HUB_OFFLINE)


def _snapshot(spec: HubSpec) -> Path | None:
    """The Hub cache's snapshot folder of the spec's revision, without asking the network; None without one."""
    from huggingface_hub import constants, snapshot_download

    if spec.repo is None:
        return None
    try:  # the cache named at the call (older huggingface_hub read its default once, at import)
        return Path(snapshot_download(spec.repo, repo_type="dataset", revision=spec.revision, local_files_only=True,
                                      cache_dir=constants.HF_HUB_CACHE))
    except Exception:  # noqa: BLE001 - not cached (LocalEntryNotFoundError), incomplete, unreadable
        return None


def _not_cached(spec: HubSpec) -> HubError:
    from huggingface_hub import constants

    datasets = _datasets()
    return HubError(str(spec), f"{spec.repo}{'@' + spec.revision if spec.revision else ''} is not in the Hugging "
                               f"Face cache and the Hub may not be asked (HF_HUB_OFFLINE): download it once online "
                               f"(hf download {spec.repo} --repo-type dataset), or point to a snapshot folder with "
                               f"hf:PATH (caches: {constants.HF_HUB_CACHE}, {datasets.config.HF_DATASETS_CACHE})")


def load_hub(spec: HubSpec, given: ColumnMapping | None = None, adapter: Adapter | None = None) -> Dataset:
    """The dataset ``spec`` names, read through ``datasets.load_dataset`` and made into StoryTurns (every config
    when it has several and no default one)."""
    datasets = _datasets()
    if spec.folder is not None:
        return load_folder(spec.folder, given, where=str(spec), config=spec.config, split=spec.split, adapter=adapter)
    assert spec.repo is not None
    snapshot = _snapshot(spec) if _offline() else None
    if snapshot is not None:
        data = load_folder(snapshot, given, where=str(spec), config=spec.config, split=spec.split, repo=spec.repo,
                           adapter=adapter)
        return _pinned(data, spec, snapshot)
    if _offline() and spec.revision is not None:  # the datasets cache keeps no revision: only the snapshot will do
        raise _not_cached(spec)
    loaded: list[tuple[str | None, Any]] = []
    with _quiet(datasets):
        try:
            names = configs_to_read(spec.repo, spec.config, spec.revision)
            for name in names:
                loaded.append((name, datasets.load_dataset(
                    spec.repo, name=name, revision=spec.revision, split=spec.split)))
        except ConnectionError as exc:
            if _offline():
                raise _not_cached(spec) from None
            raise HubError(str(spec), f"cannot reach the Hugging Face Hub ({_first_line(exc)}); to use a copy "
                                      "already downloaded, set HF_HUB_OFFLINE=1") from None
        except Exception as exc:  # noqa: BLE001 - DatasetNotFoundError, a config or split that is not there, ...
            if _offline() and "DatasetNotFound" not in type(exc).__name__:
                raise _not_cached(spec) from None
            raise HubError(str(spec), f"datasets cannot load {spec.repo}: {_first_line(exc)}") from None
    snapshot = _snapshot(spec)
    reader = PictureFiles(snapshot)  # that revision's snapshot only: never another dataset's files in the cache
    card = card_text(snapshot) if snapshot is not None else ""
    official = is_official(spec.repo) or OFFICIAL.paper.split(":")[1] in card
    source = Source(name=OFFICIAL.name if official else spec.name, source=spec.repo, location=str(spec),
                    read_picture=reader.read_name)
    tables = [table for name, part in loaded for table in tables_of(part, str(spec), reader, name)]
    data = _finish(tables, source, given, None, snapshot, official, adapter)
    return _pinned(data, spec, snapshot)


def _pinned(data: Dataset, spec: HubSpec, snapshot: Path | None) -> Dataset:
    """The dataset with its location naming the commit it was read at (the snapshot folder's name)."""
    assert data.origin is not None
    commit = snapshot.name if snapshot is not None and re.fullmatch(r"[0-9a-f]{40}", snapshot.name) else None
    data.origin = replace(data.origin, location=str(replace(spec, revision=commit or spec.revision)))
    if data.provenance is not None:
        data.provenance = replace(data.provenance, repo=spec.repo or data.provenance.repo,
                                  revision=commit or spec.revision)
    return data


_ARXIV = re.compile(r"arxiv(?:\.org/(?:abs|pdf)/|\s*:\s*|\s+)(\d{4}\.\d{4,5})", re.IGNORECASE)
_BIB_AUTHORS = re.compile(r"author\s*=\s*[{\"]([^}\"]+)[}\"]", re.IGNORECASE)
LICENCE_FILES = ("LICENSE", "LICENCE", "LICENSE.md", "LICENSE.txt", "LICENCE.md", "LICENCE.txt")
MAX_NOTICE_BYTES = 64 * 1024


def provenance_of(folder: Path | None, repo: str, official: bool, licence: str) -> Provenance:
    """Where a dataset comes from, as its card and folder say: arXiv ids (links, ``arxiv:`` tags), authors (a
    BibTeX ``author`` field), its licence and licence file; the paper's release adds what the paper says."""
    card = ""
    notice = None
    if folder is not None:
        with contextlib.suppress(OSError):
            card = (folder / "README.md").read_text(encoding="utf-8", errors="replace")[:1_000_000] \
                if (folder / "README.md").is_file() else ""
        for name in LICENCE_FILES:
            path = folder / name
            with contextlib.suppress(OSError):
                if path.is_file() and path.stat().st_size <= MAX_NOTICE_BYTES:
                    notice = path.read_text(encoding="utf-8", errors="replace").strip() or None
                    break
    arxiv = list(dict.fromkeys(_ARXIV.findall(card)))
    authors = [a.strip() for match in _BIB_AUTHORS.findall(card)[:1] for a in match.split(" and ") if a.strip()]
    if official:
        arxiv = list(dict.fromkeys([OFFICIAL.paper.split(":")[1], *arxiv]))
        authors = authors or list(OFFICIAL.authors)
    return Provenance(repo, None, tuple(arxiv), tuple(authors), licence, notice)
