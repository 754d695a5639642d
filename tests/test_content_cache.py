"""Pictures checked and prepared once per content (issue 47): verdicts and prepared bytes kept by content hash in
the cache folder, never handed back for other bytes, settings, code or libraries, and a damaged entry is a miss."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from pathlib import Path

import pytest
from PIL import Image

import commet.format.pictures as pictures_module
import commet.models.images as images_module
from commet.engine import EvalSettings, evaluate_async
from commet.format import Dataset, StoryTurn, Turn, load_dataset
from commet.format.content_cache import ContentCache, cache_root
from commet.format.validate import image_problems, validate_path
from commet.format.validation_cache import CACHE_KIND
from commet.models.images import prepare_image, prepared_picture
from commet.store import Store


def png(width: int, height: int, colour: tuple[int, int, int] = (200, 80, 40)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each full decode of a picture check, by the size of the bytes; this process's verdicts forgotten first."""
    seen: list[int] = []
    real = pictures_module._decoded

    def counted(data: bytes) -> tuple[str | None, bool]:
        seen.append(len(data))
        return real(data)

    monkeypatch.setattr(pictures_module, "_decoded", counted)
    monkeypatch.setattr(pictures_module, "_VERDICTS", {})
    return seen


def folder(tmp_path: Path, pictures: dict[str, bytes]) -> Path:
    (tmp_path / "images").mkdir()
    lines = []
    for index, (name, data) in enumerate(pictures.items()):
        (tmp_path / "images" / f"{name}.png").write_bytes(data)
        lines.append(json.dumps({"id": f"st-{index}", "task": "diverse_desire", "category": "Desire",
                                 "turns": [{"story": "Kim sees a snack.", "question": "Pear or cookie?",
                                            "image": name, "answers": ["Pear"]}]}))
    (tmp_path / "storyturns.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


def test_a_second_check_reads_each_verdict_and_decodes_nothing(tmp_path: Path, decodes: list[int]) -> None:
    good, truncated = png(64, 48), png(64, 48, (1, 2, 3))[:-30]
    data = folder(tmp_path, {"a": good, "b": truncated, "c": good})  # "c": the same content as "a"
    first = validate_path(data)
    assert sorted(decodes) == sorted([len(good), len(truncated)])  # each content once
    assert [p.message for p in first if p.field == "image"] == [
        f"image 'b' {pictures_module.picture_problem(truncated)}"]
    decodes.clear()
    pictures_module._VERDICTS.clear()  # a new process: only the cache folder remembers
    assert validate_path(data) == first and decodes == []


def test_a_verdict_is_never_read_for_other_bytes_limits_or_libraries(tmp_path: Path, decodes: list[int],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = load_dataset(folder(tmp_path, {"a": png(64, 48)}))
    dataset_images = ["a"]
    image_problems(loaded, dataset_images)
    assert len(decodes) == 1
    for change in (lambda: monkeypatch.setattr(pictures_module, "MAX_IMAGE_SIDE", 40),  # a stricter limit
                   lambda: monkeypatch.setattr(pictures_module, "CHECK_VERSION", 99),  # another check
                   lambda: monkeypatch.setattr(pictures_module, "imaging_versions", lambda: "pillow=0")):
        change()
        pictures_module._VERDICTS.clear()
        before = len(decodes)
        verdicts = image_problems(loaded, dataset_images)
        assert len(decodes) == before + 1  # decoded again, under the new key
    assert "a side longer than 40" in str(verdicts["a"])  # and the stricter limit's verdict is the one given


def test_a_damaged_entry_is_a_miss_and_caching_can_be_turned_off(tmp_path: Path, decodes: list[int],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    data = folder(tmp_path, {"a": png(64, 48)})
    validate_path(data)
    root = cache_root()
    assert root is not None
    entries = [p for p in (root / pictures_module.PICTURE_CHECKS).rglob("*") if p.is_file()]
    assert len(entries) == 1
    entries[0].write_bytes(entries[0].read_bytes()[:-1] + b"\x01")  # one flipped byte: the payload's digest fails
    pictures_module._VERDICTS.clear()
    shutil.rmtree(root / CACHE_KIND)  # the validated dataset, kept too: without it, the pictures are checked again
    assert validate_path(data) == [] and len(decodes) == 2
    monkeypatch.setenv("COMMET_CACHE_DIR", "")
    assert cache_root() is None and ContentCache("x").get("00") is None
    ContentCache("x").put("00", b"kept?")  # nothing, silently
    assert not (root / "x").exists()


def test_a_bomb_checked_outside_the_refusal_is_not_kept(decodes: list[int]) -> None:
    """The decompression-bomb warning is an error only inside ``bombs_refused``: a verdict made outside it is given
    but never kept, so it cannot later let a bomb through."""
    pictures_module.checked_picture(png(8, 8))
    pictures_module._VERDICTS.clear()
    pictures_module.checked_picture(png(8, 8))
    assert len(decodes) == 2
    with pictures_module.bombs_refused():
        pictures_module.checked_picture(png(8, 8))
    pictures_module._VERDICTS.clear()
    with pictures_module.bombs_refused():
        pictures_module.checked_picture(png(8, 8))
    assert len(decodes) == 3


def test_prepared_pictures_are_made_once_and_are_the_bytes_prepare_image_makes(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[tuple[int, str]] = []
    real = images_module.prepare_image

    def counted(data: bytes, *, max_side: int = 1024, fmt: str = "png") -> tuple[bytes, str]:
        made.append((max_side, fmt))
        return real(data, max_side=max_side, fmt=fmt)

    monkeypatch.setattr(images_module, "prepare_image", counted)
    source = png(300, 200)
    for max_side, fmt in ((1024, "png"), (100, "png"), (100, "jpeg"), (1024, "png"), (100, "jpeg")):
        assert prepared_picture(source, max_side=max_side, fmt=fmt) == prepare_image(source, max_side=max_side,
                                                                                     fmt=fmt)
    assert made == [(1024, "png"), (100, "png"), (100, "jpeg")]  # one making per content and settings
    monkeypatch.setattr(images_module, "PREPARE_VERSION", images_module.PREPARE_VERSION + 1)
    prepared_picture(source, max_side=1024, fmt="png")
    assert len(made) == 4  # other code: made again


async def test_a_run_prepares_each_content_once_and_a_second_run_none(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """One picture under two ids, shown in several turns of several stories: prepared once; a second run (another
    store) prepares nothing and records the same sha256 of the same bytes."""
    made: list[int] = []
    real = images_module.prepare_image

    def counted(data: bytes, **options: object) -> tuple[bytes, str]:
        made.append(len(data))
        return real(data, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(images_module, "prepare_image", counted)
    picture, other = png(120, 90), png(120, 90, (9, 9, 9))
    storyturns = [StoryTurn(id=f"s{i}", task="diverse_desire", category="Desire", image_dependent=True,
                            turns=[Turn(story="A snack.", question="Pear or cookie?", image=f"p{i % 3}.png",
                                        answers=["Pear"]),
                                   Turn(story="Later.", question="And now?", image=f"p{i % 3}.png", answers=["Pear"])])
                  for i in range(6)]
    data = Dataset(storyturns=storyturns, name="same", images={"p0.png": picture, "p1.png": picture, "p2.png": other})
    shown = []
    for db in ("a.sqlite", "b.sqlite"):
        summary = await evaluate_async("baseline:first-option", data, db=tmp_path / db, run="r",
                                       settings=EvalSettings(images="on"), concurrency=3)
        assert summary.results.complete
        with Store(tmp_path / db) as store:
            shown.append(sorted(row.images_json for row in store.turn_rows(summary.run.id)))
    assert sorted(made) == sorted([len(picture), len(other)])  # the first run: one making per content; the second none
    assert shown[0] == shown[1]
    assert json.loads(shown[0][0])[0]["sha256"] in {hashlib.sha256(prepare_image(p)[0]).hexdigest()
                                                     for p in (picture, other)}


def test_a_kind_is_trimmed_to_its_size_least_recently_used_first(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    cache = ContentCache("kind", root=tmp_path)
    assert cache.trim(0) == 0  # nothing written by this process: not even walked
    for index in range(5):
        cache.put(f"{index:02d}key", bytes(1000))
        os.utime(cache._path(f"{index:02d}key"), (1000 + index, 1000 + index))  # written in order
    assert cache.get("00key") == bytes(1000)  # the oldest, read now: the most recently used
    monkeypatch.setenv("COMMET_CACHE_MAX_MB", str(3.5 * 1032 / 1024**2))  # room for three entries (digest included)
    assert cache.trim() == 2 * 1032
    assert [cache.get(f"{i:02d}key") is not None for i in range(5)] == [True, False, False, True, True]
    assert cache.trim(0) == 0  # trimmed once per writing process
