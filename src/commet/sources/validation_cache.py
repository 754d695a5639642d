"""The validated dataset kept by content: a second run on the same data neither reads nor validates it again.

Loading and validating a dataset is a pure function of its files (the StoryTurns, ``dataset.json``, the
pictures), of the options (``--strict``) and of the code; for 20,000 StoryTurns it takes seconds. A dataset
that passed (no error: warnings are kept with it) is stored in the content cache
(:class:`~commet.format.content_cache.ContentCache`, kind :data:`CACHE_KIND`) with what it was made from:
each input file's sha256 and ``stat`` (size, times to the nanosecond, inode, device), the folders whose
listing decides which files are read, and where each picture was found. The entry's key holds the
dataset's resolved path, the options and the code's version (:func:`code_version`: the sources of the
modules that read and validate, Python's, pydantic's and Pillow's versions), so a new release or an
edited checkout validates again.

A later load uses the entry only when its inputs are the same: when every file's ``stat`` is unchanged
(the fast path: no file is read) or, where one changed (touched, copied back), when its sha256 still is
(the content fallback, after which the entry is written again with the new ``stat``). A file changed
less than :data:`RACY_S` before the entry was made may have changed again within the file system's
timestamp resolution: it is checked by content until it is old enough (git's "racily clean" rule). A
folder whose listing changed has its pictures found again; any other difference is a miss and the
dataset is loaded and validated in full. The dataset's files are hashed before they are read for
validation; each picture's ``stat`` is taken before the picture checks read it, and the bytes they check are
the bytes hashed (:meth:`~commet.format.dataset.Dataset.picture_file`: read once, not once for the checks and
once for the cache). An entry is not written when a ``stat`` moved meanwhile, so an entry never pairs one
content with another's verdict. ``commet eval`` writes its entry when its run has ended
(:func:`writes_deferred`), not before its first request; a process killed before then writes none, and the
next load validates again. A small dataset's first load is instead begun by ``commet eval`` in a forked child as
it starts (:func:`checked_ahead`), which writes the entry at once while the program builds its models; the
program's own load then reads it as a second run does. A refused dataset (an error) is never stored: it is read
and refused, with every located problem, each time. A damaged or unreadable entry is a miss (the content cache
checks each entry's sha256, and an entry that does not unpickle as expected is ignored).

Only datasets read from files by CoMMET's own readers are kept (a canonical folder, a canonical or pipe
file, ``sample``): a Hub dataset, a table read by ``--columns`` or an ``--adapter`` has its own caches and
its own code, and goes the full way each time.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import os
import pickle
import sys
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from commet.format.content_cache import ContentCache, content_key
from commet.format.dataset import METADATA_FILE, RACY_S, STORYTURNS_FILE, Dataset, Signature
from commet.format.problems import Problem
from commet.sources.bounded import file_signature
from commet.sources.jsonl import bundled_sample_path

if TYPE_CHECKING:
    from commet.forked import ForkedWork

#: the content cache's kind (folder) holding validated datasets
CACHE_KIND = "validated-datasets"
#: the entry layout's version: entries of another are never read
ENTRY_VERSION = 1
#: a first load is begun in a forked child (:func:`checked_ahead`) only where the files read (StoryTurns and
#: ``dataset.json``) take up to this many bytes: about 1,150 StoryTurns of bench/bench_openai_server.py's, above which
#: handing the dataset over (pickled by the child, unpickled by the program) costs more than the overlap saves on
#: this project's 2-core machines (bench/bench_startup.py: with the child, 1,000 StoryTurns start 19 ms sooner and
#: 2,000 28 ms later)
AHEAD_MAX_BYTES = 700_000
#: suffixes :func:`~commet.sources.loading.load_dataset` reads as tables (not kept here)
TABLE_SUFFIXES = (".parquet", ".csv", ".tsv")

Loaded = tuple[Dataset | None, list[Problem]]
#: ``(size, mtime_ns, ctime_ns, inode, device)`` of a file or folder; None where it does not exist
Stat = Signature | None
#: a file's or folder's :data:`Stat` now
_stat = file_signature


def _sha256(path: str) -> str | None:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


@dataclass
class Entry:
    """A validated dataset and what it was made from (the pickled payload of a cache entry)."""

    dataset: Dataset
    problems: list[Problem]
    #: path -> (stat, sha256) of each file read; a file that was absent (``dataset.json``) has (None, None)
    files: dict[str, tuple[Stat, str | None]]
    #: path -> stat of each folder whose listing says which files are read
    folders: dict[str, Stat]
    #: image id -> the file it was found in
    pictures: dict[str, str]
    #: when the inputs were hashed (``time.time_ns()``)
    made_ns: int
    #: the dataset's content hash with its pictures (key True), which a run showing them records (made at the
    #: first load: reading every picture again at every run takes 0.2 s for 5,000; a run without pictures makes
    #: its own hash, from the StoryTurns alone)
    hashes: dict[bool, str] = field(default_factory=dict)
    #: read from a single file: whether its folder's ``images`` is there says where its pictures are looked for, so a
    #: change of that folder's listing is a miss (a canonical folder's pictures are always under the folder)
    single: bool = False
    version: int = ENTRY_VERSION
    #: inputs found the same with a new ``stat`` (or now old enough to be trusted by it): written again
    refreshed: bool = field(default=False, compare=False)


@cache
def code_version() -> str:
    """A hash of the code a validated dataset depends on: the sources of ``commet.format`` (and of a sibling
    ``commet.sources`` where there is one), ``commet.taxonomy`` and ``commet.text``; CoMMET's, Python's,
    pydantic's and Pillow's versions. Reading the sources (about 0.5 MB) takes a few milliseconds, and an
    edited checkout (a version number that did not move) validates again."""
    import PIL
    import pydantic

    from commet.version import __version__

    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(f"{__version__}|{sys.version}|{pydantic.VERSION}|{PIL.__version__}".encode())
    sources = [package / "taxonomy.py", package / "text.py"]
    for folder in ("format", "sources"):
        sources += sorted((package / folder).rglob("*.py"))
    for source in sources:
        with contextlib.suppress(OSError):
            digest.update(source.relative_to(package).as_posix().encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()


def _inputs(path: str | Path) -> tuple[str, list[str], list[str]] | None:
    """``(resolved dataset path, files read, folders whose listing matters)`` of a dataset CoMMET's own readers
    read from files; None for any other (a Hub dataset, a table, a path that is not there)."""
    from commet.sources.hub_names import is_hub_spec

    if isinstance(path, str) and path != "sample" and is_hub_spec(path):
        return None
    where = bundled_sample_path() if str(path) == "sample" else Path(path)
    try:
        resolved = where.resolve()
        if resolved.is_dir():
            data = resolved / STORYTURNS_FILE
            if not data.is_file():
                return None  # a Hugging Face folder or a folder of tables
            return str(resolved), [str(data), str(resolved / METADATA_FILE)], [str(resolved), str(resolved / "images")]
        if not resolved.is_file() or resolved.suffix.lower() in TABLE_SUFFIXES:
            return None
    except (OSError, ValueError, RuntimeError):
        return None
    parent = resolved.parent
    return str(resolved), [str(resolved)], [str(parent), str(parent / "images")]


def _key(path: str | Path, resolved: str, strict: bool, decode: bool) -> str:
    """The entry's key: the path as given (and the folder it is relative to: the dataset keeps it as given, in
    its located problems and its pictures' folder), where it leads, the options and the code."""
    given = str(path)
    base = "" if os.path.isabs(given) or given == "sample" else os.getcwd()
    return content_key(resolved.encode(), "validated-dataset", ENTRY_VERSION, code_version(), strict, decode, given,
                       base)


def _picture_files(dataset: Dataset) -> dict[str, tuple[str, Stat, str]] | None:
    """Image id -> (the file it is read from, its ``stat`` and sha256) for every picture the StoryTurns show, as the
    picture checks found them (:meth:`~commet.format.dataset.Dataset.picture_file`: the ``stat`` taken before the
    bytes they checked were read, and those bytes' hash); None when a picture is not a file (in memory, or not
    found: such a dataset is not kept)."""
    if dataset.images:
        return None
    found: dict[str, tuple[str, Stat, str]] = {}
    for storyturn in dataset.storyturns:
        for image_id in storyturn.images:
            if image_id not in found:
                record = dataset.picture_file(image_id)
                if record is None and dataset.picture_digest(image_id) is not None:  # not read by the checks
                    record = dataset.picture_file(image_id)
                if record is None:
                    return None
                file, stat, digest = record
                found[image_id] = (str(file), stat, digest.hex())
    return found


def _trusted(cache: ContentCache, key: str) -> bool:
    """Whether the entry of ``key`` and its folders were written by this user alone: an entry is unpickled, and
    one planted by someone else (a cache folder shared with a group, ``COMMET_CACHE_DIR`` on a common disk)
    could run code. (Where there are no POSIX owners, Windows, the user's own profile holds the folder.)"""
    if not hasattr(os, "getuid") or cache.folder is None:
        return True
    entry = cache.folder / key[:2] / key
    for path in (cache.folder, entry.parent, entry):
        try:
            info = os.stat(path)
        except OSError:
            return False
        if info.st_uid != os.getuid() or info.st_mode & 0o022:
            return False
    return True


def _read(cache: ContentCache, key: str) -> Entry | None:
    if not _trusted(cache, key):
        return None
    payload = cache.get(key)
    if payload is None:
        return None
    collecting = gc.isenabled()
    gc.disable()  # tens of thousands of objects, none garbage: the collector's passes would walk them all
    try:
        entry = pickle.loads(zlib.decompress(payload))
    except Exception:  # noqa: BLE001 - an entry of another code or a damaged one: a miss, never an error
        return None
    finally:
        if collecting:
            gc.enable()
    return entry if isinstance(entry, Entry) and entry.version == ENTRY_VERSION else None


def _checked(entry: Entry) -> Entry | None:
    """The entry when its inputs are the ones on disk now (see the module's docstring), else None. Where a file's
    ``stat`` moved and its content did not, or a file is no longer too recent to be trusted by its ``stat``, the
    entry comes back ``refreshed``: with the ``stat`` taken now, worth writing again for the next load's fast path."""
    checked_ns = time.time_ns()  # before any stat of this check: the next one's racy limit
    racy_before = entry.made_ns - int(RACY_S * 1e9)
    settled_before = checked_ns - int(RACY_S * 1e9)
    files: dict[str, tuple[Stat, str | None]] = {}
    refreshed = False
    for path, (stat, digest) in entry.files.items():
        now = _stat(path)
        if (now is None) != (stat is None):
            return None
        if now is None or stat is None:
            files[path] = (None, None)
            continue
        if now != stat or max(stat[1], stat[2]) >= racy_before:
            if _sha256(path) != digest:
                return None
            refreshed = refreshed or now != stat or max(now[1], now[2]) < settled_before
        files[path] = (now, digest)
    folders = {folder: _stat(folder) for folder in entry.folders}
    if folders != entry.folders:
        if entry.single:
            return None
        if any(str(entry.dataset.image_path(image_id)) != file for image_id, file in entry.pictures.items()):
            return None
        refreshed = True
    if refreshed:
        entry.files, entry.folders, entry.made_ns, entry.refreshed = files, folders, checked_ns, True
    return entry


def _hashed(paths: list[str]) -> dict[str, tuple[Stat, str | None]]:
    return {path: (_stat(path), _sha256(path)) for path in paths}


def cached_load_and_validate(path: str | Path, *, strict: bool, decode: bool = False, load: Callable[[str | Path], Dataset],
                             validate: Callable[[Dataset], tuple[list[Problem], str | None]],
                             read_error: type[Exception]) -> Loaded | None:
    """The dataset at ``path`` and its problems, from the cache or made by ``load`` and ``validate`` (then kept
    when it has no error: ``validate`` gives the problems and, where they hold none, the content hash, as
    :func:`commet.format.validate.validate_and_hash`); None when the dataset is not one this cache keeps (the
    caller loads it itself).

    ``read_error`` is what ``load`` raises for a dataset it cannot read (its ``problems`` are returned).
    """
    inputs = _inputs(path)
    if inputs is None:
        return None
    resolved, files, folders = inputs
    store = ContentCache(CACHE_KIND)
    if store.folder is None:
        return None
    key = _key(path, resolved, strict, decode)
    entry = _read(store, key)
    entry = _checked(entry) if entry is not None else None
    if entry is not None:
        if entry.refreshed:
            entry.refreshed = False
            _write(store, key, entry)
        _remember(entry)
        return entry.dataset, entry.problems
    made_ns = time.time_ns()
    folder_stats = {folder: _stat(folder) for folder in folders}
    hashed = _hashed(files)  # before reading: a file changed meanwhile is a content the entry does not claim
    try:
        dataset = load(path)
    except read_error as exc:
        return None, list(getattr(exc, "problems", []))
    problems, digest = validate(dataset)  # each picture's stat taken before the bytes it checks are read and hashed
    if digest is None:
        return dataset, problems  # a refused dataset is never kept
    found = _picture_files(dataset)
    if found is None:
        return dataset, problems  # pictures not in files: not kept
    picture_hashes = {file: (stat, sha256) for file, stat, sha256 in found.values()}
    unchanged = all(_stat(file) == stat for file, (stat, _) in {**hashed, **picture_hashes}.items()) and all(
        _stat(folder) == stat for folder, stat in folder_stats.items())
    if unchanged:  # (the dataset keeps its hash, and knows its pictures from the checks' reads)
        entry = Entry(dataset=dataset, problems=problems, files={**hashed, **picture_hashes}, folders=folder_stats,
                      pictures={image_id: file for image_id, (file, _, _) in found.items()}, made_ns=made_ns,
                      single=len(files) == 1, hashes={True: digest})  # a run showing pictures records it (the default)
        _write(store, key, entry)
    return dataset, problems


def checked_ahead(path: str | Path, *, strict: bool, decode: bool = False, load: Callable[[str | Path], Dataset],
                  validate: Callable[[Dataset], tuple[list[Problem], str | None]],
                  read_error: type[Exception]) -> ForkedWork[None] | None:
    """A first load of a small dataset begun in a forked child (:mod:`commet.forked`), which keeps its entry here
    at once; None where none was begun (the dataset is not one this cache keeps, it has an entry already, it is
    larger than :data:`AHEAD_MAX_BYTES`, or no child can be forked).

    Why: a first run's start waits for the load, the checks and the hashing (60 ms for 540 StoryTurns) before its
    first request, while the program still has its HTTP client to import and its models to build (0.1 s); a
    child does the first while this process does the second, and the load that follows
    (:func:`cached_load_and_validate`, once :meth:`~commet.forked.ForkedWork.outcome` says the child has ended)
    reads the entry as a second run does: the same dataset and problems, by the same code. A dataset refused, or a
    child that failed, leaves no entry: that load then does the work itself. Above :data:`AHEAD_MAX_BYTES`, handing
    the dataset over (pickled by the child, unpickled here) costs more than the overlap saves, and the load is done
    here, on two cores, as before.
    """
    inputs = _inputs(path)
    store = ContentCache(CACHE_KIND)
    if inputs is None or store.folder is None:
        return None
    resolved, files, _ = inputs
    if store.has(_key(path, resolved, strict, decode)):
        return None  # (read by the load, and usually a hit)
    if sum(found[0] for file in files if (found := _stat(file)) is not None) > AHEAD_MAX_BYTES:
        return None  # (an absent dataset.json weighs nothing)

    def first_load() -> None:
        _DEFERRED.clear()  # the child's own copy: this process's deferral (writes_deferred) is not the child's
        cached_load_and_validate(path, strict=strict, decode=decode, load=load, validate=validate,
                                 read_error=read_error)

    from commet.forked import ForkedWork  # (here: a second run, the usual one, needs none)

    ahead = ForkedWork(first_load)
    return ahead if ahead.forked else None


def _remember(entry: Entry) -> None:
    """Hand the recorded content hashes to the dataset (a run records one, and making it again reads every picture
    and serialises every StoryTurn: 0.4 s for 20,000), and what was found of each picture file (its place, ``stat``
    and sha256: a run's picture hashes, :meth:`~commet.format.dataset.Dataset.picture_digest`)."""
    for shown, digest in entry.hashes.items():
        entry.dataset.remember_content_hash(digest, pictures=shown)
    for image_id, file in entry.pictures.items():
        stat, sha256 = entry.files.get(file, (None, None))
        if stat is not None and sha256 is not None:
            entry.dataset.remember_picture(image_id, Path(file), stat, entry.made_ns, bytes.fromhex(sha256))


#: the entries waiting to be written while :func:`writes_deferred` is in force (one list a block), else empty
_DEFERRED: list[list[tuple[ContentCache, str, Entry]]] = []


@contextlib.contextmanager
def writes_deferred() -> Iterator[None]:
    """Inside, a new or refreshed entry is written when the block ends, however it ends (an error, Ctrl-C), not when
    the dataset is loaded: ``commet eval`` sends its first request without pickling 20,000 StoryTurns first (0.35 s).
    What the entry holds is decided at the load (its inputs found unchanged then); a process killed before the end
    writes none, and the next load validates again. Outside, entries are written at once."""
    pending: list[tuple[ContentCache, str, Entry]] = []
    _DEFERRED.append(pending)
    try:
        yield
    finally:
        del _DEFERRED[next(at for at, waiting in enumerate(_DEFERRED) if waiting is pending)]  # (this very list)
        for store, key, entry in pending:
            _write(store, key, entry)


def _write(store: ContentCache, key: str, entry: Entry) -> None:
    if _DEFERRED:
        _DEFERRED[-1].append((store, key, entry))
        return
    _write_now(store, key, entry)


def _write_now(store: ContentCache, key: str, entry: Entry) -> None:
    try:
        # compressed (level 1: 20 ms for 20,000 StoryTurns): a tenth of the bytes to keep, read and check
        payload = zlib.compress(pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL), 1)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return  # something in the dataset that does not pickle (a custom object in metadata): not kept
    if store.folder is not None:  # folders only this user may write in (:func:`_trusted`)
        with contextlib.suppress(OSError):
            os.makedirs(store.folder / key[:2], mode=0o700, exist_ok=True)
            for folder in (store.folder, store.folder / key[:2]):
                os.chmod(folder, os.stat(folder).st_mode & ~0o022)
    store.put(key, payload)
    store.trim()
