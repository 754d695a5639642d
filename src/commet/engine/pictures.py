"""Pictures as every provider and LLM judge receives them: the run's size and format policy applied once."""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

from commet.format.content_cache import ContentCache
from commet.format.dataset import Dataset
from commet.format.pictures import PictureError
from commet.format.problems import FormatError, Problem
from commet.models.base import ImagePart

#: threads preparing pictures during a run: one a core (Pillow works without the GIL, and the event
#: loop needs little CPU beside them), at most this many
MAX_PICTURE_THREADS = 8


class PictureCache:
    """Prepared pictures of one dataset, by image id, made only where a model or a judge looks at them: each
    picture's content prepared once per process however many ids, turns, conversations and runs show it
    (:func:`commet.models.images.prepared_picture`, which also reads the prepared-picture cache where an earlier
    run made it: then neither decoded nor encoded). A model that reads no picture (a baseline) gets none made:
    the run records the picture file's own sha256 instead (:meth:`file_sha256`).

    Preparing a photograph (decode, resize, re-encode) takes 50 to 120 ms; on the event loop that
    held every story in flight each time (bench/bench_openai_server.py --picture-size 1024x768).
    A thread makes each picture while the other stories go on, and Pillow releases the GIL while it
    decodes and encodes, so the threads use the other cores. The engine asks for the pictures of a
    story and of the next few in its queue when a slot takes it (:meth:`prefetch`), and a story
    waits only for a picture not made yet (:meth:`ready_part`). The bytes are the same as made on
    the loop. (Making every picture of the run ahead, at its start, was measured too: 5 % faster
    with 2.3 MB pictures, slower with small ones, whose Python-level work then crowds the loop's
    start.)
    """

    def __init__(self, dataset: Dataset, *, max_side: int, fmt: str):
        self.dataset = dataset
        self.max_side = max_side
        self.fmt = fmt
        self._parts: dict[str, ImagePart] = {}
        self._file_hashes: dict[str, str] = {}
        self._pending: dict[str, asyncio.Future[ImagePart]] = {}
        self._threads: ThreadPoolExecutor | None = None

    def _prepare(self, image_id: str) -> ImagePart:
        from commet.models.images import prepared_picture

        made = prepared_picture(self.dataset.image_bytes(image_id), max_side=self.max_side, fmt=self.fmt)
        return ImagePart(data=made[0], mime=made[1], image_id=image_id)

    def file_sha256(self, image_id: str) -> str:
        """The sha256 of the picture file's own bytes: what a run records for a picture of a turn whose model reads
        none (nothing prepared, so no bytes sent to hash). The dataset's (:meth:`Dataset.picture_digest`), made
        when the picture checks read the file (or kept by the validation cache), not read again."""
        if image_id not in self._file_hashes:
            digest = self.dataset.picture_digest(image_id)
            self._file_hashes[image_id] = digest.hex() if digest is not None else hashlib.sha256(
                self.dataset.image_bytes(image_id)).hexdigest()  # no such picture: refused as reading it refuses it
        return self._file_hashes[image_id]

    def refused(self, position: int, turn: int, image_id: str, error: PictureError) -> FormatError:
        """The located error of a picture refused when prepared (a damaged stream in a whole file, which only
        decoding finds; :mod:`commet.format.pictures`): the ``position``-th StoryTurn's file, line, id and turn, as
        ``commet validate`` says what it finds."""
        storyturn = self.dataset.storyturns[position]
        file, line = self.dataset.where(position)
        return FormatError([Problem(file, line, storyturn.id, turn, "image", f"image {image_id!r} {error}")])

    def part(self, image_id: str) -> ImagePart:
        """The prepared picture, made here if it is not ready (callers outside an engine run)."""
        if image_id not in self._parts:
            self._parts[image_id] = self._prepare(image_id)
        return self._parts[image_id]

    async def ready_part(self, image_id: str) -> ImagePart:
        """The prepared picture; the event loop runs other stories while a thread makes it."""
        if image_id in self._parts:
            return self._parts[image_id]
        part = await asyncio.shield(self._making(image_id))  # stories sharing a picture wait for one making
        self._parts[image_id] = part
        return part

    def prefetch(self, image_ids: Iterable[str]) -> None:
        """Start making these pictures in the threads, for stories about to start (:meth:`ready_part` then
        finds them made, or being made). A failure is raised where the picture is asked for."""
        for image_id in image_ids:
            if image_id not in self._parts and image_id not in self._pending:
                self._making(image_id).add_done_callback(_seen)

    def _making(self, image_id: str) -> asyncio.Future[ImagePart]:
        pending = self._pending.get(image_id)
        if pending is None:
            if self._threads is None:
                workers = max(1, min(MAX_PICTURE_THREADS, os.cpu_count() or 1))
                self._threads = ThreadPoolExecutor(workers, thread_name_prefix="commet-pictures")
            pending = asyncio.get_running_loop().run_in_executor(self._threads, self._prepare, image_id)
            self._pending[image_id] = pending
        return pending

    def close(self) -> None:
        """Stop the threads (a run's end); keep the prepared-picture cache within its size."""
        if self._threads is not None:
            self._threads.shutdown(wait=True, cancel_futures=True)
            self._threads = None
        made = bool(self._parts or self._pending)
        self._pending.clear()
        if made:
            from commet.models.images import PREPARED_PICTURES

            ContentCache(PREPARED_PICTURES).trim()  # a no-op unless this process wrote to it


def _seen(future: asyncio.Future[ImagePart]) -> None:
    """Retrieve a prefetched picture's failure (a story claimed elsewhere may never ask for it)."""
    if not future.cancelled():
        future.exception()
