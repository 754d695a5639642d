"""Results of pure work on picture bytes, kept on disk by content hash: a second run on the same data skips it.

Preparing a picture for the models (decoding, resizing, re-encoding: the bytes every provider gets,
:func:`commet.models.images.prepared_picture`) is a pure function of the picture's bytes, the
settings, the code and the imaging libraries. A :class:`ContentCache` keeps its results in the
user's cache folder under a key made of all of them (:func:`content_key`), so
it can never hand back a result of other bytes, settings or code: a change of any gives another
key. Each entry starts with the sha256 of its payload and is checked when read, and is written to a
temporary file then renamed, so a crash, a full disk or a damaged file is a miss, never a wrong
result. A cache that cannot be read or written (a read-only home, no space) is simply not used.

The folder: ``COMMET_CACHE_DIR`` when set (an empty value turns the cache off), else the user's
cache folder (``~/.cache/commet`` on Linux, via platformdirs). Each kind keeps at most
:data:`MAX_KIND_BYTES` (``COMMET_CACHE_MAX_MB``): a process that wrote entries trims the least
recently used ones when it is done (:meth:`ContentCache.trim`). Deleting the folder is always safe.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from functools import cache
from pathlib import Path

#: environment variable naming the cache folder ("" turns caching off)
CACHE_DIR_VARIABLE = "COMMET_CACHE_DIR"
#: most bytes one kind of result keeps (a dataset of photographs prepares megabytes a picture)
MAX_KIND_BYTES = 2 * 1024**3
#: environment variable setting that limit in MB
CACHE_MAX_VARIABLE = "COMMET_CACHE_MAX_MB"
_DIGEST_BYTES = 32


def cache_root() -> Path | None:
    """The folder every content cache lives in, or None when caching is off (``COMMET_CACHE_DIR=""``)."""
    chosen = os.environ.get(CACHE_DIR_VARIABLE)
    if chosen is not None:
        return Path(chosen).expanduser() if chosen.strip() else None
    import platformdirs

    return Path(platformdirs.user_cache_dir("commet", appauthor=False))


@cache
def imaging_versions() -> str:
    """Pillow's version and its libraries' (zlib, libjpeg, libjpeg-turbo, libwebp; None where absent): a picture's
    decoded pixels and encoded bytes depend on them, so every picture result is keyed by them too."""
    import PIL
    from PIL import features

    codecs = ",".join(f"{name}={features.version(name)}" for name in ("zlib", "jpg", "libjpeg_turbo", "webp"))
    return f"pillow={PIL.__version__},{codecs}"


def content_key(data: bytes, *settings: object) -> str:
    """The key of a result on ``data`` under ``settings`` (each written with ``repr``; the code's version among them)."""
    digest = hashlib.sha256(data)
    digest.update(repr(settings).encode())
    return digest.hexdigest()


class ContentCache:
    """One kind of result (``kind``: a folder name) under :func:`cache_root`; ``root`` for tests and tools."""

    def __init__(self, kind: str, root: Path | None = None):
        base = root if root is not None else cache_root()
        self.folder = base / kind if base is not None else None

    def _path(self, key: str) -> Path:
        assert self.folder is not None
        return self.folder / key[:2] / key

    def has(self, key: str) -> bool:
        """Whether an entry is stored under ``key`` (not read: it may still be damaged, which :meth:`get` finds)."""
        return self.folder is not None and self._path(key).is_file()

    def get(self, key: str) -> bytes | None:
        """The payload stored under ``key``, or None (no entry, caching off, a damaged entry)."""
        if self.folder is None:
            return None
        try:
            stored = self._path(key).read_bytes()
        except OSError:
            return None
        payload = stored[_DIGEST_BYTES:]
        if len(stored) < _DIGEST_BYTES or hashlib.sha256(payload).digest() != stored[:_DIGEST_BYTES]:
            return None
        with contextlib.suppress(OSError):
            os.utime(self._path(key))  # used now: the last to go when the kind is trimmed
        return payload

    def put(self, key: str, payload: bytes) -> None:
        """Store ``payload`` under ``key`` (whole or not at all; silently skipped where the folder cannot be written)."""
        if self.folder is None:
            return
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".part-")
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(hashlib.sha256(payload).digest() + payload)
                os.replace(temporary, path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError:
            return
        _WRITTEN.add(self.folder)

    def trim(self, max_bytes: int | None = None) -> int:
        """Delete the least recently used entries until the kind holds at most ``max_bytes`` (default:
        ``COMMET_CACHE_MAX_MB`` or :data:`MAX_KIND_BYTES`); the bytes deleted. A no-op unless this
        process wrote to the kind (a walk of its folder: tens of milliseconds for 20,000 entries)."""
        if self.folder is None or self.folder not in _WRITTEN:
            return 0
        _WRITTEN.discard(self.folder)
        if max_bytes is None:
            chosen = os.environ.get(CACHE_MAX_VARIABLE, "").strip()
            max_bytes = int(float(chosen) * 1024**2) if chosen.replace(".", "", 1).isdigit() else MAX_KIND_BYTES
        entries: list[tuple[float, int, str]] = []
        with contextlib.suppress(OSError):
            for sub in os.scandir(self.folder):
                if sub.is_dir(follow_symlinks=False):
                    for entry in os.scandir(sub.path):
                        with contextlib.suppress(OSError):
                            info = entry.stat(follow_symlinks=False)
                            entries.append((info.st_mtime, info.st_size, entry.path))
        total, deleted = sum(size for _, size, _ in entries), 0
        for _, size, path in sorted(entries):
            if total - deleted <= max_bytes:
                break
            with contextlib.suppress(OSError):
                os.unlink(path)
                deleted += size
        return deleted


#: the kinds' folders this process wrote to (:meth:`ContentCache.trim` walks only those)
_WRITTEN: set[Path] = set()
