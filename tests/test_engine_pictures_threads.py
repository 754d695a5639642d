"""An engine run prepares its pictures in threads as stories first show them, never on the event loop;
the bytes sent (and so every cache key) are those made on the loop before."""

from __future__ import annotations

import hashlib
import io
import json
import threading
from base64 import b64decode
from pathlib import Path

import pytest
from PIL import Image

from commet.engine import EvalSettings, evaluate_async
from commet.format.dataset import Dataset
from commet.format.model import StoryTurn, Turn
from commet.models import images as images_module
from commet.models.base import Model, ModelRequest, ModelResponse
from commet.models.images import prepare_image
from commet.store import Store


class Looking(Model):
    """A tiny model that reads pictures (a provider's part): answers "Apple." and keeps what it was sent, its
    pictures serialised as every wire format does (base64)."""

    free = True

    def __init__(self) -> None:
        self.spec = "test:looking"
        self.seen: list[tuple[str, str]] = []  # (image id, sha256 of the bytes) of each picture of each request

    async def generate(self, request: ModelRequest) -> ModelResponse:
        for message in request.messages:
            for image in message.images:
                assert b64decode(image.base64) == image.data
                self.seen.append((image.image_id, hashlib.sha256(image.data).hexdigest()))
        return ModelResponse(text="Apple.")


def photo(seed: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (300 + seed, 200), (seed * 40 % 256, 90, 160)).save(out, format="PNG")
    return out.getvalue()


def dataset(stories: int = 8) -> Dataset:
    pictures = {f"p{i}.png": photo(i) for i in range(stories // 2)}
    storyturns = [StoryTurn(id=f"s{i}", task="diverse_desire", category="Desire", image_dependent=i % 2 == 0,
                            turns=[Turn(story=f"Story {i}.", question="Apple or pear?",
                                        image=f"p{i // 2}.png" if i % 2 == 0 else None, answers=["Apple"]),
                                   Turn(story="Later.", question="And now?", answers=["Pear"])])
                  for i in range(stories)]
    return Dataset(storyturns=storyturns, name="pictures", images=pictures)


async def test_pictures_are_made_in_threads_once_each_with_the_bytes_of_before(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[tuple[int, str]] = []
    real = images_module.prepare_image

    def recording(data: bytes, **options: object) -> tuple[bytes, str]:
        made.append((len(data), threading.current_thread().name))
        return real(data, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(images_module, "prepare_image", recording)
    data = dataset()
    db = tmp_path / "r.sqlite"
    model = Looking()
    summary = await evaluate_async(model, data, db=db, run="r", settings=EvalSettings(images="on"), concurrency=4)
    assert summary.results.complete
    assert len(made) == len(data.images)  # each picture once, though every later turn's request carries it too
    assert len(model.seen) == 2 * len(data.images)  # shown in both turns of its story
    assert all(thread.startswith("commet-pictures") for _, thread in made)
    assert not any(t.name.startswith("commet-pictures") for t in threading.enumerate())  # the threads end
    with Store(db) as store:
        shown = {json.loads(row.images_json)[0]["id"]: json.loads(row.images_json)[0]["sha256"]
                 for row in store.turn_rows(summary.run.id) if row.images_json != "[]"}
    assert shown == {name: hashlib.sha256(prepare_image(data.images[name])[0]).hexdigest() for name in data.images}


async def test_a_run_that_shows_no_picture_makes_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []
    monkeypatch.setattr(images_module, "prepare_image", lambda data, **options: made.append("x") or (b"", ""))
    summary = await evaluate_async("baseline:first-option", dataset(), db=tmp_path / "r.sqlite", run="r",
                                   settings=EvalSettings(images="off"))
    assert summary.results.complete and made == []


async def test_pictures_of_the_next_stories_are_made_before_they_start(tmp_path: Path) -> None:
    """When a slot takes a story, the threads start on the pictures of that story and the next ones in
    the queue, so stories rarely wait for theirs. A picture made ahead for a story that never asks
    for it, or whose making fails, leaves nothing behind."""
    import asyncio
    import gc
    import logging

    from commet.engine.pictures import PictureCache
    from commet.engine.runner import PICTURE_LOOKAHEAD, Engine

    data = dataset(16)
    events: list[tuple[str, str]] = []  # ("make", image id) when a thread is asked to make a picture,
    real_making = PictureCache._making  # ("start", story id) when a slot takes a story

    def making(self: PictureCache, image_id: str):  # noqa: ANN202 - the real one, observed
        if image_id not in self._pending:
            events.append(("make", image_id))
        return real_making(self, image_id)

    real_prefetch = Engine._prefetch_pictures

    def prefetch(self: Engine, storyturns: list[StoryTurn]) -> None:
        events.append(("start", storyturns[0].id))
        assert len(storyturns) <= 1 + PICTURE_LOOKAHEAD
        real_prefetch(self, storyturns)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(PictureCache, "_making", making)
        patch.setattr(Engine, "_prefetch_pictures", prefetch)
        summary = await evaluate_async(Looking(), data, db=tmp_path / "r.sqlite", run="r",
                                       settings=EvalSettings(images="on"), concurrency=2)
    assert summary.results.complete
    made = [image for kind, image in events if kind == "make"]
    assert sorted(made) == sorted(data.images)  # each picture made once
    started = [story for kind, story in events if kind == "start"]
    assert sorted(started) == sorted(st.id for st in data.storyturns)
    # every story with a picture, but the first two (one per slot), found it asked for before it started
    shows = {st.id: st.turns[0].image for st in data.storyturns if st.turns[0].image}
    early = [story for story in started if story in shows][2:]
    assert early and all(events.index(("make", shows[story])) < events.index(("start", story)) for story in early)

    # made ahead and never asked for (a story another process claims), or failing: nothing left behind
    cache = PictureCache(Dataset(storyturns=[], name="x", images={"ok.png": photo(1), "bad.png": b"not a picture"}),
                         max_side=1024, fmt="png")
    logged: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = logged.append  # type: ignore[method-assign]
    logging.getLogger("asyncio").addHandler(handler)
    try:
        cache.prefetch(["ok.png", "bad.png"])
        await asyncio.gather(*cache._pending.values(), return_exceptions=True)
        with pytest.raises(Exception):  # noqa: B017 - Pillow's own error, raised where the picture is asked for
            await cache.ready_part("bad.png")
        assert (await cache.ready_part("ok.png")).data == prepare_image(photo(1))[0]
        cache.prefetch(["bad.png"])  # asked for again, never awaited
        cache.close()
        del cache
        gc.collect()
        await asyncio.sleep(0)
    finally:
        logging.getLogger("asyncio").removeHandler(handler)
    assert not [r for r in logged if "never retrieved" in r.getMessage()]
