"""The one way either web app answers with a file from disk: :func:`confined_bytes`.

Every route that serves a file (the review app's ``/images/``, ``/calibration/picture`` and
``/static/``, the study app's participant pictures and ``/static/``) reads it through
:func:`confined_bytes`, which serves only a name from the route's list of what it exists for
(:class:`DatasetPictures`: the pictures the dataset references; :func:`static_file`: the app's
own style sheets and scripts). Whatever the request says, it never reaches a file by an absolute
path, ``..``, a symbolic link (anywhere on the way) or a name outside that list, and a file is
read only when it is a regular file within the size limit, checked on the open descriptor. A
dataset picture is also served only when its bytes are a picture (PNG, JPEG, GIF or WebP), so
the review store, the dataset file or any other file a dataset names as a picture is never sent.
A refusal is a plain 404, saying nothing about what exists.
"""

from __future__ import annotations

import mimetypes
import os
from collections.abc import Collection
from functools import cached_property, lru_cache
from pathlib import Path, PurePosixPath

from fastapi import HTTPException, Response

from commet.format.dataset import IMAGES_DIR, Dataset, image_file_candidates
from commet.format.pictures import MAX_IMAGE_BYTES, PictureError, opened_picture
from commet.sources.bounded import InputFileError, read_regular_file

#: Largest static asset (style sheet, script) served.
MAX_STATIC_BYTES = 4 * 1024 * 1024
#: The media type of each picture format served.
PICTURE_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}


def _plain_relative(name: str) -> PurePosixPath | None:
    """``name`` as a relative path of plain parts ('/' between them), or None when it could climb or jump."""
    if not name or len(name) > 1024 or not name.isprintable() or "\\" in name or name.startswith("/"):
        return None
    path = PurePosixPath(name)
    if any(part in ("", ".", "..") for part in name.split("/")) or path.is_absolute():
        return None
    return path


def confined_bytes(root: Path, name: str, allowed: Collection[str], *, max_bytes: int) -> bytes:
    """The bytes of the file ``name`` (relative, '/'-separated) inside ``root``, when ``name`` is in ``allowed``.

    Anything else is a 404 and nothing is read: a name not in ``allowed``, an absolute path, ``..``, a
    symbolic link at any step below ``root``, something other than a regular file, a file over ``max_bytes``
    (checked on the open descriptor, so a file swapped after the check is refused too)."""
    relative = _plain_relative(name)
    if relative is None or name not in allowed:
        raise HTTPException(404)
    top = root.resolve()
    candidate = top.joinpath(*relative.parts)
    try:
        if candidate.resolve(strict=True) != candidate:  # a link (or a link loop) somewhere below root
            raise HTTPException(404)
        return read_regular_file(candidate, max_bytes=max_bytes, what="served file", follow_links=False)
    except (OSError, RuntimeError, InputFileError):  # RuntimeError: a link loop (Python < 3.13)
        raise HTTPException(404) from None


def picture_response(data: bytes) -> Response:
    """``data`` answered as the picture it is, or 404 when it is not a picture CoMMET shows."""
    try:
        with opened_picture(data) as image:
            media = PICTURE_TYPES[str(image.format)]
    except (PictureError, KeyError):
        raise HTTPException(404) from None
    # not kept by the browser: a picture seen by a reviewer signed in on a shared computer is gone when they sign
    # out (the review store's items are unpublished); the study app sends every answer so
    return Response(data, media_type=media, headers={"Cache-Control": "no-store"})


class DatasetPictures:
    """The pictures a dataset references, the only dataset files the web apps serve."""

    def __init__(self, dataset: Dataset):
        self.dataset = dataset

    @cached_property
    def ids(self) -> frozenset[str]:
        """Every image id a turn of the dataset shows."""
        return frozenset(image for storyturn in self.dataset for image in storyturn.images)

    @cached_property
    def file_names(self) -> dict[str, str]:
        """The name under ``images/`` each referenced picture may be saved as, to its image id."""
        return {name: image_id for image_id in sorted(self.ids) for name in image_file_candidates(image_id)}

    @cached_property
    def allowed(self) -> frozenset[str]:
        """The relative paths a referenced picture may be read from: in ``images/`` or the folder itself."""
        return frozenset(self.file_names) | {f"{IMAGES_DIR}/{name}" for name in self.file_names}

    def by_id(self, image_id: str) -> Response:
        """The picture ``image_id`` names (in memory or a file in the dataset folder), if the dataset references it."""
        if image_id not in self.ids:
            raise HTTPException(404)
        for name in image_file_candidates(image_id):
            if name in self.dataset.images:
                return picture_response(self.dataset.images[name])
        if self.dataset.root is None:
            raise HTTPException(404)
        for name in image_file_candidates(image_id):
            for relative in (f"{IMAGES_DIR}/{name}", name):
                if _exists(self.dataset.root, relative):
                    return picture_response(confined_bytes(self.dataset.root, relative, self.allowed,
                                                           max_bytes=MAX_IMAGE_BYTES))
        raise HTTPException(404)

    def by_file_name(self, name: str) -> Response:
        """The file ``images/<name>``, when it is where a referenced picture is saved."""
        if self.dataset.root is None or name not in self.file_names:
            raise HTTPException(404)
        return picture_response(confined_bytes(self.dataset.root, f"{IMAGES_DIR}/{name}", self.allowed,
                                               max_bytes=MAX_IMAGE_BYTES))


def _exists(root: Path, relative: str) -> bool:
    path = _plain_relative(relative)
    return path is not None and os.path.lexists(root.joinpath(*path.parts))


@lru_cache(maxsize=8)
def _static_names(folder: Path) -> frozenset[str]:
    """The app's own assets: the regular files directly in its ``static/`` folder (as installed)."""
    return frozenset(entry.name for entry in os.scandir(folder) if entry.is_file(follow_symlinks=False))


def static_file(folder: Path, name: str) -> Response:
    """One of the app's own static assets (style sheet, script), by its file name."""
    data = confined_bytes(folder, name, _static_names(folder), max_bytes=MAX_STATIC_BYTES)
    media = mimetypes.guess_type(name)[0] or "application/octet-stream"
    return Response(data, media_type=media, headers={"Cache-Control": "no-cache"})
