"""An engine run prepares its pictures in threads as stories first show them, never on the event loop;
the bytes sent (and so every cache key) are those made on the loop before."""

from __future__ import annotations

import hashlib
import io
import json
import threading
from pathlib import Path

import pytest
from PIL import Image

from commet.engine import EvalSettings, evaluate_async
from commet.format.dataset import Dataset
from commet.format.model import StoryTurn, Turn
from commet.models import images as images_module
from commet.models.images import prepare_image
from commet.store import Store


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
    summary = await evaluate_async("baseline:first-option", data, db=db, run="r", settings=EvalSettings(images="on"),
                                   concurrency=4)
    assert summary.results.complete
    assert len(made) == len(data.images)  # each picture once, though the judge's requests carry it too
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
