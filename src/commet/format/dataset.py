"""The dataset: StoryTurns, where their pictures are, where each came from; saved as a folder with
``storyturns.jsonl``, ``images/`` and ``dataset.json``.

The format reads no dataset file. A dataset's pictures are bytes in memory (:attr:`Dataset.images`) or files of its
folder (:attr:`Dataset.root`), found and read by a :class:`PictureFolder`: whoever reads datasets from files
(:mod:`commet.sources`, which reads every form :func:`commet.sources.load_dataset` takes) supplies it, and
installs it for the datasets made after it in the process (:func:`install_folder_reader`).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from commet.format.model import StoryTurn
from commet.format.origin import Provenance, RowsRead, TableRead
from commet.format.pictures import PictureError
from commet.format.pipe import to_pipe_record
from commet.format.problems import Problem
from commet.taxonomy import BOOKLET, Taxonomy, taxonomy_dict

STORYTURNS_FILE = "storyturns.jsonl"
METADATA_FILE = "dataset.json"
IMAGES_DIR = "images"
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".webp", ".gif")
FORMAT_VERSION = "storyturn-1"
#: a file changed this recently before its ``stat`` was taken may change again unseen (within the file system's
#: timestamp resolution): its kept digest is not trusted by ``stat`` (git's "racily clean" rule)
RACY_S = 2.0
#: what says a file is unchanged: ``(size, mtime_ns, ctime_ns, inode, device)``
Signature = tuple[int, int, int, int, int]


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


class PictureFolder(Protocol):
    """How the picture files of a dataset folder are found and read (:mod:`commet.sources.picture_files`).

    A picture must be a regular file inside the dataset folder: a path that leaves it (``..``, an absolute
    path, a symbolic link pointing out) is refused, never read.
    """

    def locate(self, root: Path, image_id: str, *, top: Path | None = None) -> tuple[Path | None, str | None]:
        """The regular file in the folder ``root`` an image id refers to, or None and why not (``top``: ``root``
        resolved, by a caller locating many pictures)."""
        ...

    def read(self, path: Path) -> bytes:
        """A located picture file's bytes, read within the picture size limit (:class:`PictureError` if refused)."""
        ...

    def signature(self, path: Path) -> Signature | None:
        """What says the file at ``path`` (links followed) is unchanged, None where it cannot be looked at."""
        ...


#: the reader of folders' pictures a new dataset gets (:mod:`commet.sources.picture_files` installs it when imported)
_FOLDER_READER: list[PictureFolder] = []


def install_folder_reader(reader: PictureFolder) -> None:
    """Make ``reader`` the one datasets made from now on in this process find and read their pictures with."""
    _FOLDER_READER[:] = [reader]


def _installed_reader() -> PictureFolder | None:
    return _FOLDER_READER[0] if _FOLDER_READER else None


@dataclass(frozen=True)
class Origin:
    """How a dataset read from a table (a Hub dataset, a folder of parquet, JSON lines or CSV) was read.

    ``location`` loads it again (``hf:OWNER/NAME@COMMIT`` or a path); ``layout`` says how its rows
    became StoryTurns; ``columns`` is the ``--columns`` mapping the user gave, part of the content
    hash (another mapping reads other StoryTurns); ``official`` marks the paper's own release.
    """

    location: str
    layout: str
    columns: str | None = None
    official: bool = False
    adapter: str | None = None  # the --adapter FILE.py:FUNCTION that made the StoryTurns
    adapter_source: str | None = None  # its source text: part of the content hash, recorded with runs


@dataclass
class _PictureFiles:
    """What a dataset learnt of its picture files (:meth:`Dataset.picture_digest`): kept for one ``root`` and reader.

    A located file is used again while it is the very file located (its inode and device, links followed: a file
    swapped for another, or a link, is located again with every check); a digest while the file's ``stat`` is the
    one taken before its bytes were read, and that file had not changed within :data:`RACY_S` before.
    """

    root: Path
    reader: PictureFolder
    top: Path | None = None
    #: image id -> the file and the ``(inode, device)`` it had when located
    located: dict[str, tuple[Path, tuple[int, int]]] = field(default_factory=dict)
    #: file -> (its signature before it was read, ``time.time_ns()`` before that, the bytes' sha256)
    digests: dict[Path, tuple[Signature, int, bytes]] = field(default_factory=dict)


#: :func:`hashed_json`'s exclusion where no turn has candidates
_NO_TURN_CANDIDATES = {"turns": {"__all__": {"candidates"}}}


def hashed_json(storyturn: StoryTurn) -> str:
    """A StoryTurn as the content hash reads it: its JSON without the fields added since hashes were first
    recorded while they are empty (a turn's judge-only ``candidates``), so a dataset that does not use them
    keeps its hash, and runs made before keep their names and resume."""
    unused = {index: {"candidates"} for index, turn in enumerate(storyturn.turns) if not turn.candidates}
    if len(unused) == len(storyturn.turns):  # (the same, said once: quicker for the serialiser)
        return storyturn.model_dump_json(exclude=_NO_TURN_CANDIDATES)
    return storyturn.model_dump_json(exclude={"turns": unused} if unused else None)


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
    #: file of each StoryTurn, in order, where a dataset spans files (parquet shards, splits); else all ``source_file``
    file_list: list[str] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    images: dict[str, bytes] = field(default_factory=dict)  # in-memory pictures (HF datasets, generators)
    taxonomy: Taxonomy = BOOKLET  # the tasks and categories it declares (dataset.json), else the booklet's
    languages: list[str] = field(default_factory=lambda: ["en"])  # ISO 639-1 codes of its text
    origin: Origin | None = None  # how a table written by others was read (commet.sources.layouts)
    #: the split its rows came from when it has one (several splits: each StoryTurn's ``meta["split"]``)
    split: str | None = None
    provenance: Provenance | None = None  # where a dataset written by others comes from (its card, its release)
    tables_read: list[TableRead] = field(default_factory=list)  # the tables, and which column gave which field
    #: folders this load made in ``datasets``' cache (the prepared rows of a table): removed if the dataset is refused
    prepared: tuple[Path, ...] = field(default=(), repr=False, compare=False)
    rows_read: list[RowsRead] = field(default_factory=list)  # per StoryTurn, the rows that made it
    #: finds and reads the pictures of ``root`` (it travels with the dataset: copies, worker processes)
    folder_reader: PictureFolder | None = field(default_factory=_installed_reader, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.storyturns)

    def __iter__(self) -> Iterator[StoryTurn]:
        return iter(self.storyturns)

    def where(self, index: int) -> tuple[str, int | None]:
        """The file and line (row) the ``index``-th StoryTurn was read from."""
        file = self.file_list[index] if index < len(self.file_list) else self.source_file
        line = self.line_list[index] if index < len(self.line_list) else self.lines.get(self.storyturns[index].id)
        return file, line

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
        if self.root is None and self.origin is not None:  # a table: columns, a pictures config or its folder
            return None, ("not found: no picture column, pictures config or file of the data's folder gives it "
                          "(`commet stats --explain` lists the columns read and those not read)")
        if self.root is None:
            return None, "not found (no images/ folder next to the dataset file)"
        return self._located(image_id)[:2]

    def _picture_files(self) -> _PictureFiles:
        """The memo of this dataset's picture files, a new one when its ``root`` or reader changed."""
        reader = self._folder_reader()
        known = self.__dict__.get("_pictures")
        if not isinstance(known, _PictureFiles) or known.reader is not reader or (
                known.root is not self.root and known.root != self.root):
            with _MEMO_LOCK:  # the picture checks' threads ask at once
                known = self.__dict__.get("_pictures")
                if not isinstance(known, _PictureFiles) or known.root != self.root or known.reader is not reader:
                    assert self.root is not None
                    known = _PictureFiles(self.root, reader, top=self.root.resolve())
                    self.__dict__["_pictures"] = known
        return known

    def _located(self, image_id: str) -> tuple[Path | None, str | None, Signature | None]:
        """:meth:`locate_image` of a dataset with a folder, with the file's signature taken now: each picture is
        located (every check, the root resolved once) the first time, then looked at with one ``stat``."""
        memo = self._picture_files()
        known = memo.located.get(image_id)
        if known is not None:
            signature = memo.reader.signature(known[0])
            if signature is not None and signature[3:] == known[1]:
                return known[0], None, signature
        path, reason = memo.reader.locate(memo.root, image_id, top=memo.top)
        if path is None:
            memo.located.pop(image_id, None)  # never kept: a picture painted later is found then
            return None, reason, None
        signature = memo.reader.signature(path)
        if signature is not None:
            memo.located[image_id] = (path, signature[3:])
        return path, None, signature

    def image_path(self, image_id: str) -> Path | None:
        """The file an image id refers to, or None when it does not exist or is refused."""
        return self.locate_image(image_id)[0]

    def has_image(self, image_id: str) -> bool:
        return any(n in self.images for n in image_file_candidates(image_id)) or self.image_path(image_id) is not None

    def image_bytes(self, image_id: str) -> bytes:
        """The picture's bytes: in memory, or its file read within the size limit.

        Raises FileNotFoundError when the dataset has no such picture, :class:`PictureError` when
        its file is refused (outside the folder, not a regular file, too large).
        """
        for name in image_file_candidates(image_id):
            if name in self.images:
                return self.images[name]
        path, reason, signature = (*self.locate_image(image_id), None) if self.root is None else (
            self._located(image_id))
        if path is None:
            if reason == "not found":
                raise FileNotFoundError(f"image {image_id!r} not found in {self.images_dir or 'memory'}")
            raise PictureError(reason)
        return self._read_file(path, signature)[0]

    def _read_file(self, path: Path, signature: Signature | None) -> tuple[bytes, bytes]:
        """A located picture file's bytes and their sha256, kept with the file's ``signature`` taken before the read
        (:meth:`picture_digest`: whoever reads a picture first hashes it for the others)."""
        taken_ns = time.time_ns()
        memo = self._picture_files()
        data = memo.reader.read(path)
        digest = hashlib.sha256(data).digest()
        if signature is not None:
            memo.digests[path] = (signature, taken_ns, digest)
        return data, digest

    def _folder_reader(self) -> PictureFolder:
        reader = self.folder_reader or _installed_reader()
        if reader is None:
            raise RuntimeError(f"the pictures of {self.root} cannot be read: no folder reader was given to the dataset "
                               "or installed (importing commet.sources.picture_files installs it)")
        return reader

    def content_hash(self, *, pictures: bool = True) -> str:
        """A hash of the StoryTurns and the picture bytes they use: runs record it to tell datasets apart.

        ``pictures=False`` leaves the pictures out, for a run that shows none (its results do not
        depend on them, so its pictures are neither read nor hashed).
        """
        known = self.__dict__.get("_known_hashes", {}).get(pictures)
        if known is not None and known[0] == self._hashed_shape():
            return str(known[1])
        digest = hashlib.sha256()
        if self.origin is not None and self.origin.columns:  # the user's --columns: another mapping, other data
            digest.update(f"columns={self.origin.columns}\n".encode())
        if self.origin is not None and self.origin.adapter_source is not None:  # another adapter, other data
            digest.update(b"adapter=" + hashlib.sha256(self.origin.adapter_source.encode()).digest())
        pictures_seen: dict[str, bytes | None] = {}  # one read and hash per picture
        for storyturn in self.storyturns:
            digest.update(hashed_json(storyturn).encode())
            if not pictures:
                continue
            for image_id in storyturn.images:
                if image_id not in pictures_seen:
                    pictures_seen[image_id] = self.picture_digest(image_id)
                picture = pictures_seen[image_id]
                if picture is not None:
                    digest.update(picture)
        return digest.hexdigest()

    def remember_content_hash(self, digest: str, *, pictures: bool = True) -> None:
        """Keep ``digest`` as :meth:`content_hash` of this very content (the validation cache's, recorded when the
        same files were validated: :mod:`commet.sources.validation_cache`). It is given back while the dataset holds
        the same StoryTurns list, pictures and origin; a dataset given other StoryTurns is hashed again."""
        self.__dict__.setdefault("_known_hashes", {})[pictures] = (self._hashed_shape(), digest)

    def _hashed_shape(self) -> tuple[object, ...]:
        return id(self.storyturns), len(self.storyturns), id(self.images), len(self.images), self.origin, self.root

    def hash_matches(self, digest: str) -> bool:
        """Whether ``digest`` is this dataset's content hash, with its pictures or without (a run that showed none)."""
        return digest in (self.content_hash(pictures=False), self.content_hash())

    def picture_digest(self, image_id: str) -> bytes | None:
        """sha256 of a picture's bytes, None when the dataset has no such picture: a file's is read and hashed
        once, by whoever reads it first (the picture checks, :meth:`image_bytes`), and used again while the file's
        ``stat`` is the one taken before that read (not for a file changed within :data:`RACY_S` before it)."""
        for name in image_file_candidates(image_id):
            if name in self.images:
                return hashlib.sha256(self.images[name]).digest()
        if self.root is None:
            return None
        path, _, signature = self._located(image_id)
        if path is None:
            return None
        known = self._picture_files().digests.get(path)
        if known is not None and signature is not None and known[0] == signature and (
                max(signature[1], signature[2]) < known[1] - int(RACY_S * 1e9)):
            return known[2]
        return self._read_file(path, signature)[1]

    def picture_file(self, image_id: str) -> tuple[Path, Signature, bytes] | None:
        """The file a picture was read from, its signature taken before that read and the sha256 of the bytes
        read, as the last read found them (None for a picture not read from a file yet): what the validation
        cache records of the pictures the checks read."""
        if self.root is None or any(name in self.images for name in image_file_candidates(image_id)):
            return None
        memo = self._picture_files()
        known = memo.located.get(image_id)
        found = memo.digests.get(known[0]) if known is not None else None
        return (known[0], found[0], found[2]) if known is not None and found is not None else None

    def remember_picture(self, image_id: str, path: Path, signature: Signature, taken_ns: int, digest: bytes) -> None:
        """Keep what the validation cache found of a picture file (its ``signature``, taken after ``taken_ns``, and
        its sha256): a run on a cached dataset neither locates nor hashes it again."""
        memo = self._picture_files()
        memo.located[image_id] = (path, signature[3:])
        memo.digests[path] = (signature, taken_ns, digest)

    def __getstate__(self) -> dict[str, object]:
        """The dataset without what it learnt of its files and hashes (a copy, a worker process, a cache entry: found
        again, the hashes by the validation cache's own record)."""
        return {key: value for key, value in self.__dict__.items() if key not in ("_pictures", "_known_hashes")}

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
        if self.provenance is not None:
            meta["source"] = self.provenance.to_json()
        if self.taxonomy.declared:
            meta.update(self.taxonomy.to_json())
        else:
            meta["taxonomy"] = taxonomy_dict()
        return meta

    def save(self, folder: str | Path) -> Path:
        """Write the canonical dataset folder (JSONL, images, metadata).

        A dataset saved where another was (``--out`` given twice) replaces it whole: the pictures the replaced
        StoryTurns named and these do not are removed from ``images/``, so the folder holds no picture of another
        dataset that would be published or reviewed with it. Files the replaced dataset did not name are left, and
        so is everything when its StoryTurns cannot be read whole (nothing is removed on a guess)."""
        folder = Path(folder)
        replaced = _pictures_named(folder / STORYTURNS_FILE)
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
        named = {name for storyturn in self.storyturns for image_id in storyturn.images
                 for name in (*image_file_candidates(image_id), self.saved_image_name(image_id))}
        for name in sorted(replaced - named):
            stale = folder / IMAGES_DIR / name
            if stale.is_file() and not stale.is_symlink():
                stale.unlink()
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


def _pictures_named(storyturns_file: Path) -> set[str]:
    """The picture file names the StoryTurns saved in ``storyturns_file`` may use, or none when there is no such file
    or any of its lines cannot be read as a StoryTurn (:meth:`Dataset.save` then removes nothing)."""
    try:
        lines = storyturns_file.read_text(encoding="utf-8").splitlines() if storyturns_file.is_file() else []
        return {name for line in lines if line.strip()
                for image_id in StoryTurn.model_validate_json(line).images for name in image_file_candidates(image_id)}
    except (OSError, UnicodeDecodeError, ValueError):  # pydantic's ValidationError is a ValueError
        return set()


#: guards the making of a dataset's picture memo (:meth:`Dataset._picture_files`)
_MEMO_LOCK = threading.Lock()


def _image_filename(image_id: str) -> str:
    stem = image_id.replace(":", "_").replace("/", "_")
    return stem if stem.lower().endswith(IMAGE_EXTENSIONS) else stem + ".png"
