"""The one check a picture passes before anything decodes it: validate, eval, the reports and the web apps.

A picture file is read by :func:`commet.sources.picture_files.read_picture_file` (a regular file, refused by
its size before reading): the checks here take bytes. Its bytes are opened by :func:`opened_picture`, which refuses, from the header alone and
before any pixel is allocated: an empty or oversized file, a format other than PNG, JPEG, GIF or
WebP, more than :data:`MAX_IMAGE_PIXELS` pixels, a side longer than :data:`MAX_IMAGE_SIDE`
(resizing a 1 x 49,000,000 picture to 1,024 pixels makes Pillow allocate about 2.4 GB of filter
weights: the pixel count alone does not bound the memory), and decoded pixels over
:data:`MAX_DECODED_BYTES`. :func:`picture_problem` (``commet validate``) and
:func:`commet.models.images.prepare_image` (every provider's bytes) both open pictures through
it, so both refuse a picture for the same reasons, in the same words.

A check reads the header and the file's structure, never the pixels (tens of microseconds): a file cut
short (a PNG without its IEND chunk, a JPEG without an end-of-image marker after its picture data, a
WebP shorter than its RIFF header says) is refused there. What only decoding finds (a damaged
compressed stream in a whole file, a GIF cut inside a frame) is found where the pixels are decoded
anyway, when the run prepares the picture for a model that looks at it
(:func:`commet.models.images.prepared_picture`, once per content per process): a located error then.
"""

from __future__ import annotations

import io
import struct
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from commet.errors import CommetError

if TYPE_CHECKING:  # Pillow's Image module is imported where a picture is opened: a run's start needs no picture
    from PIL import Image, ImageFile

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
    from PIL import Image

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
    from PIL import Image, UnidentifiedImageError

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
            cut = cut_short(data, image)
            if cut:
                raise PictureError(f"is truncated or corrupt: {cut}")
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


def cut_short(data: bytes, image: ImageFile.ImageFile) -> str | None:
    """Why the file ends before its picture does (a download or copy cut short), or None: read from the file's
    structure, not its pixels (microseconds). ``image``: ``data`` just opened by Pillow (its header read)."""
    if image.format == "PNG":
        at = len(PNG_SIGNATURE)
        while at + 8 <= len(data):  # chunk by chunk (length, type, data, CRC) to the IEND chunk
            length, kind = struct.unpack_from(">I4s", data, at)
            at += 12 + length
            if kind == b"IEND":
                return None if at <= len(data) else "its IEND chunk is cut short"
        return "it ends before its IEND chunk (the file was cut short?)"
    if image.format == "JPEG":
        if not image.tile:  # Pillow stops reading at the start of the picture data (SOS)
            return "it ends before its picture data"
        scan = image.fp.tell() if image.fp is not None else 0  # where the picture data starts
        if data.find(JPEG_END, scan) < 0:  # the data never holds FF D9 (stuffed): only the end marker does
            return "no end-of-image marker after its picture data (the file was cut short?)"
    if image.format == "WEBP" and len(data) < 8 + int.from_bytes(data[4:8], "little"):
        return f"{len(data):,} bytes where its RIFF header says {8 + int.from_bytes(data[4:8], 'little'):,}"
    return None


#: what a PNG file starts with
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: the JPEG end-of-image marker (inside the compressed data an FF byte is always followed by 00 or a restart)
JPEG_END = b"\xff\xd9"


def picture_problem(data: bytes) -> str | None:
    """Why picture bytes are refused (read after "image 'ID' "), or None: :func:`opened_picture`'s checks (header
    and structure, no pixel decoded), the bytes a run prepares."""
    with bombs_refused():
        return header_problem(data)


def header_problem(data: bytes, *, decode: bool = False) -> str | None:
    """:func:`picture_problem` for a caller already inside :func:`bombs_refused` (threads must not enter it: the
    warnings filter is process-wide). ``decode``: also decode every frame's pixels, which alone finds a damaged
    compressed stream inside a whole file (``commet validate`` does; a run decodes only what a model looks at)."""
    from PIL import ImageSequence

    try:
        with opened_picture(data) as image:
            if decode:
                for frame in ImageSequence.Iterator(image):
                    frame.load()
    except PictureError as exc:
        return str(exc)
    return None
