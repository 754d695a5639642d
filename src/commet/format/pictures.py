"""The one check a picture passes before anything decodes it: validate, eval, the reports and the web apps.

A picture file is read by :func:`commet.sources.picture_files.read_picture_file` (a regular file, refused by
its size before reading): the checks here take bytes. Its bytes are opened by :func:`opened_picture`, which refuses, from the header alone and
before any pixel is allocated: an empty or oversized file, a format other than PNG, JPEG, GIF or
WebP, more than :data:`MAX_IMAGE_PIXELS` pixels, a side longer than :data:`MAX_IMAGE_SIDE`
(resizing a 1 x 49,000,000 picture to 1,024 pixels makes Pillow allocate about 2.4 GB of filter
weights: the pixel count alone does not bound the memory), and decoded pixels over
:data:`MAX_DECODED_BYTES`. :func:`picture_problem` (``commet validate``) and
:func:`commet.models.images.prepare_image` (every provider's bytes) both open pictures through
it, so a picture validate passes is one the run can prepare.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from PIL import Image, ImageOps, UnidentifiedImageError

from commet.errors import CommetError
from commet.format.content_cache import ContentCache, content_key, imaging_versions

#: Largest picture accepted, in pixels (a 20000x20000 PNG can be a few KiB and decode to 1.6 GB).
MAX_IMAGE_PIXELS = 50_000_000
#: Longest side accepted, in pixels: Lanczos resizing allocates about 48 bytes per pixel of the longer side.
MAX_IMAGE_SIDE = 20_000
#: Most memory the decoded pixels may take (Pillow keeps RGB as 4 bytes a pixel).
MAX_DECODED_BYTES = 200_000_000
#: Largest picture file accepted, in bytes.
MAX_IMAGE_BYTES = 50 * 1024 * 1024
#: Formats every part of CoMMET (engine, web apps, HTML report) handles.
IMAGE_FORMATS = ("PNG", "JPEG", "GIF", "WEBP")
#: The EXIF tag saying which way up a photograph was taken.
EXIF_ORIENTATION = 0x0112
#: Bytes Pillow keeps per pixel, by mode (others: 4).
_PIXEL_BYTES = {"1": 1, "L": 1, "P": 1, "I;16": 2, "I;16B": 2, "I;16L": 2, "I;16N": 2}


class PictureError(CommetError, ValueError):
    """A picture refused; ``str()`` reads after "image 'ID' " ("is an empty file (0 bytes)")."""


class PictureTooLarge(PictureError):
    """A picture refused for its size: bytes, pixels, a side or the memory its pixels would take.

    ``size``: its width and height when the header was read."""

    def __init__(self, message: str, size: tuple[int, int] | None = None):
        super().__init__(message)
        self.size = size


class PictureOutOfMemory(PictureTooLarge):
    """A picture this machine had not the memory to decode now: a verdict of the moment, never cached."""


@contextmanager
def bombs_refused() -> Iterator[None]:
    """Pillow's decompression-bomb warning (a picture over its own pixel limit) raised as an error.

    The warnings filter is process-wide: threads that check pictures inside this block, the
    thread that entered it waiting for them, refuse bombs the same way.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        yield


def size_problem(width: int, height: int, mode: str, *, max_pixels: int = MAX_IMAGE_PIXELS) -> str | None:
    """Why a picture of this size and mode is refused before decoding (pixels, longest side, memory), or None."""
    if width * height > max_pixels:
        return (f"declares {width}x{height} pixels, more than the limit of {max_pixels:,} "
                "(a decompression bomb?)")
    if max(width, height) > MAX_IMAGE_SIDE:
        return (f"is {width}x{height} pixels: a side longer than {MAX_IMAGE_SIDE:,} pixels (resizing it would take "
                f"about {48 * max(width, height) / 1e9:.1f} GB); crop or shrink it")
    memory = width * height * _PIXEL_BYTES.get(mode, 4)
    if memory > MAX_DECODED_BYTES:
        return f"is {width}x{height} pixels of mode {mode}: {memory:,} bytes decoded (at most {MAX_DECODED_BYTES:,})"
    return None


@contextmanager
def opened_picture(data: bytes, *, max_pixels: int = MAX_IMAGE_PIXELS,
                   formats: tuple[str, ...] | None = IMAGE_FORMATS) -> Iterator[Image.Image]:
    """The picture opened (header read, no pixel decoded) once every limit is checked; :class:`PictureError` if not.

    ``formats``: the formats accepted (None: any Pillow reads, for an upload that is re-encoded at once).

    Errors while the caller decodes inside the block (a truncated or corrupt file) are
    :class:`PictureError` too.
    """
    if not data:
        raise PictureError("is an empty file (0 bytes)")
    if len(data) > MAX_IMAGE_BYTES:
        raise PictureTooLarge(f"is {len(data):,} bytes (at most {MAX_IMAGE_BYTES:,})")
    try:
        with Image.open(io.BytesIO(data)) as image:
            problem = size_problem(image.size[0], image.size[1], image.mode, max_pixels=max_pixels)
            if problem:
                raise PictureTooLarge(problem, image.size)
            if formats is not None and image.format not in formats:
                raise PictureError(f"is a {image.format} picture (use {', '.join(IMAGE_FORMATS)})")
            yield image
    except PictureError:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise PictureTooLarge(f"is a decompression bomb: {exc}") from None
    except UnidentifiedImageError:
        raise PictureError("is not a picture (not PNG, JPEG, GIF or WebP data)") from None
    except MemoryError:
        raise PictureOutOfMemory("needs more memory to decode than there is") from None
    except Exception as exc:  # noqa: BLE001 - Pillow's decoders raise many kinds; each is a broken picture
        raise PictureError(f"is truncated or corrupt: {exc}") from None


def picture_problem(data: bytes) -> str | None:
    """Why picture bytes are refused (read after "image 'ID' "), or None: opened by :func:`opened_picture` and
    decoded in full (the first frame), as a run will."""
    with bombs_refused():
        return decode_problem(data)


def decode_problem(data: bytes) -> str | None:
    """:func:`picture_problem` for a caller already inside :func:`bombs_refused` (threads must not enter it:
    the warnings filter is process-wide)."""
    return _decoded(data)[0]


def _decoded(data: bytes) -> tuple[str | None, bool]:
    """:func:`decode_problem` and whether the verdict holds for these bytes anywhere (not a lack of memory)."""
    try:
        with opened_picture(data) as image:
            image.load()
            if image.getexif().get(EXIF_ORIENTATION, 1) != 1:  # turned upright as prepare_image will
                ImageOps.exif_transpose(image)
    except PictureOutOfMemory as exc:
        return str(exc), False
    except PictureError as exc:
        return str(exc), True
    return None, True


#: the picture-check cache's kind (folder)
PICTURE_CHECKS = "picture-checks"
#: bump when the check changes (what it decodes, what it refuses): older verdicts are then never read
CHECK_VERSION = 1
#: verdicts of this process, by content key: a picture shown under several ids, or checked again, is decoded once
_VERDICTS: dict[str, str | None] = {}
_OK, _REFUSED = b"\x00", b"\x01"


def _bombs_are_errors() -> bool:
    """Whether Pillow's decompression-bomb warning is an error here (inside :func:`bombs_refused`)."""
    return any(action == "error" and category is Image.DecompressionBombWarning
               for action, _, category, _, _ in warnings.filters)


def _check_key(data: bytes) -> str:
    return content_key(data, "picture-check", CHECK_VERSION, MAX_IMAGE_PIXELS, MAX_IMAGE_SIDE, MAX_DECODED_BYTES,
                       MAX_IMAGE_BYTES, IMAGE_FORMATS, Image.MAX_IMAGE_PIXELS, imaging_versions())


def known_verdict(data: bytes) -> tuple[bool, str | None, str]:
    """``(known, problem, key)``: the verdict of :func:`checked_picture` where it is kept (this process, the cache
    folder), without decoding; ``key`` names these bytes' check (pictures of the same content share it)."""
    key = _check_key(data)
    if key in _VERDICTS:
        return True, _VERDICTS[key], key
    stored = ContentCache(PICTURE_CHECKS).get(key)
    if stored is None or stored[:1] not in (_OK, _REFUSED):
        return False, None, key
    verdict = stored[1:].decode("utf-8", "replace") if stored[:1] == _REFUSED else None
    _VERDICTS[key] = verdict
    return True, verdict, key


def checked_picture(data: bytes) -> str | None:
    """:func:`decode_problem` (for a caller inside :func:`bombs_refused`), decoded once: the verdict is kept by
    content hash, in this process and in the user's cache folder (:mod:`commet.format.content_cache`), so a second
    run on the same pictures reads each one's verdict instead of decoding it (about 1 ms a small picture, 4 ms a
    megapixel). The key holds the limits, this check's version and the imaging libraries' versions: it never
    returns another check's verdict."""
    known, verdict, key = known_verdict(data)
    if known:
        return verdict
    verdict, lasting = _decoded(data)
    if lasting and _bombs_are_errors():  # (outside bombs_refused a bomb would pass: not a verdict to keep)
        _VERDICTS[key] = verdict
        ContentCache(PICTURE_CHECKS).put(key, _OK if verdict is None else _REFUSED + verdict.encode())
    return verdict
