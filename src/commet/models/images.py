"""The run's image policy: the exact bytes every provider receives for a picture.

:func:`prepare_image` decodes the picture, applies its EXIF orientation (providers
disagree on whether they honour it), downsizes it so that its longer side is at most
``max_side`` pixels (Lanczos, aspect ratio kept), drops all metadata and re-encodes it
with fixed settings. The output is a pure function of the input bytes and the arguments
(for a given Pillow version), so every provider gets the same bytes and the engine can
record their sha256. Animated images keep their first frame.
"""

from __future__ import annotations

import io
import threading
from collections import OrderedDict

from PIL import Image, ImageOps

from commet.format.content_cache import ContentCache, content_key, imaging_versions
from commet.format.pictures import PictureError, PictureOutOfMemory, opened_picture

#: bump when :func:`prepare_image` makes other bytes from the same input and arguments: older entries of the
#: prepared-picture cache are then never read
PREPARE_VERSION = 1
#: the prepared-picture cache's kind (folder)
PREPARED_PICTURES = "prepared-pictures"

FORMATS = {"png": ("PNG", "image/png"), "jpeg": ("JPEG", "image/jpeg"), "jpg": ("JPEG", "image/jpeg"),
           "webp": ("WEBP", "image/webp")}


def _normalise_mode(image: Image.Image, pil_format: str) -> Image.Image:
    if image.mode == "P":
        image = image.convert("RGBA" if "transparency" in image.info else "RGB")
    if pil_format == "JPEG":
        if image.mode in ("RGBA", "LA"):
            background = Image.new("RGB", image.size, (255, 255, 255))
            background.paste(image.convert("RGBA"), mask=image.convert("RGBA").getchannel("A"))
            return background
        if image.mode not in ("RGB", "L"):
            return image.convert("RGB")
        return image
    if image.mode not in ("1", "L", "LA", "RGB", "RGBA"):
        has_alpha = "A" in image.getbands()
        return image.convert("RGBA" if has_alpha else "RGB")
    return image


def prepare_image(data: bytes, *, max_side: int = 1024, fmt: str = "png") -> tuple[bytes, str]:
    """Return ``(bytes, mime)``: ``data`` oriented, downsized to ``max_side`` and re-encoded as ``fmt``.

    The picture is opened by :func:`commet.format.pictures.opened_picture`, the check ``commet validate``
    makes: a picture over its limits (pixels, longest side, memory) raises
    :class:`~commet.format.pictures.PictureError` before it is decoded.
    """
    key = fmt.lower()
    if key not in FORMATS:
        raise ValueError(f"unsupported image format {fmt!r} (use one of: {', '.join(FORMATS)})")
    if max_side < 1:
        raise ValueError("max_side must be positive")
    pil_format, mime = FORMATS[key]
    with opened_picture(data) as opened:  # the limits `commet validate` checks, before any pixel is decoded
        opened.seek(0)
        image = ImageOps.exif_transpose(opened.copy())
    image = _normalise_mode(image, pil_format)
    width, height = image.size
    longest = max(width, height)
    if longest > max_side:
        scale = max_side / longest
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        if image.mode == "1":
            image = image.convert("L")
        image = image.resize(size, Image.Resampling.LANCZOS)
    image.info = {}
    out = io.BytesIO()
    if pil_format == "PNG":
        image.save(out, format="PNG", optimize=False, compress_level=6)
    elif pil_format == "JPEG":
        image.save(out, format="JPEG", quality=90, optimize=False, progressive=False, subsampling=0)
    else:
        image.save(out, format="WEBP", lossless=True, quality=80, method=4, exact=False)
    return out.getvalue(), mime


#: prepared pictures this process keeps in memory, in bytes (the least recently used go first beyond it)
MADE_IN_PROCESS_BYTES = 512 * 1024**2


class _Made:
    """Prepared pictures of this process by key, and one lock per key being made: two threads (two ids of one
    picture, two runs of a sweep) never make the same picture twice, and none waits for another picture."""

    def __init__(self) -> None:
        self.parts: OrderedDict[str, tuple[bytes, str]] = OrderedDict()
        self.size = 0
        self.guard = threading.Lock()
        self.locks: dict[str, threading.Lock] = {}
        #: why pictures were refused when prepared (a damaged stream only decoding finds), by key
        self.refused: dict[str, str] = {}

    def get(self, key: str) -> tuple[bytes, str] | None:
        with self.guard:
            made = self.parts.get(key)
            if made is not None:
                self.parts.move_to_end(key)
            return made

    def lock(self, key: str) -> threading.Lock:
        with self.guard:
            return self.locks.setdefault(key, threading.Lock())

    def put(self, key: str, made: tuple[bytes, str]) -> None:
        with self.guard:
            self.locks.pop(key, None)
            if key not in self.parts:
                self.parts[key] = made
                self.size += len(made[0])
            while self.size > MADE_IN_PROCESS_BYTES and len(self.parts) > 1:
                self.size -= len(self.parts.popitem(last=False)[1][0])


_MADE = _Made()


def prepared_picture(data: bytes, *, max_side: int = 1024, fmt: str = "png") -> tuple[bytes, str]:
    """:func:`prepare_image`, made once per content: kept in this process (up to :data:`MADE_IN_PROCESS_BYTES`)
    and by content hash in the user's cache folder (:mod:`commet.format.content_cache`), so a later turn, run or
    process reads the bytes a picture became instead of decoding and encoding it again (5 to 120 ms a picture).
    The key holds the arguments, this module's :data:`PREPARE_VERSION` and the imaging libraries' versions: the
    bytes are those :func:`prepare_image` makes."""
    key = content_key(data, "prepared-picture", PREPARE_VERSION, max_side, fmt.lower(), imaging_versions())
    made = _MADE.get(key)
    if made is not None:
        return made
    with _MADE.lock(key):  # a thread making this picture now: wait for it rather than make it again
        made = _MADE.get(key)
        if made is not None:
            return made
        refused = _MADE.refused.get(key)
        if refused is not None:
            raise PictureError(refused)
        cache = ContentCache(PREPARED_PICTURES)
        kept = cache.get(key)
        if kept is not None and fmt.lower() in FORMATS:
            made = kept, FORMATS[fmt.lower()][1]
        else:
            try:
                made = prepare_image(data, max_side=max_side, fmt=fmt)
            except PictureOutOfMemory:
                raise  # a verdict of the moment: tried again when asked again
            except PictureError as exc:
                _MADE.refused[key] = str(exc)  # the same bytes are refused the same way: decoded once
                raise
            cache.put(key, made[0])
        _MADE.put(key, made)
        return made
