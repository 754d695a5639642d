"""Pictures at no cost (issue 47): a check reads a picture's header and structure, never its pixels; a picture is
decoded and encoded once per content per process, however many ids, turns, conversations and runs show it, and
only for a model or a judge that looks at pictures (a baseline and the rules judge never make one)."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pytest
from PIL import Image, ImageFile

import commet.models.images as images_module
from commet.engine import EvalSettings, evaluate_async
from commet.format.pictures import picture_problem
from commet.format.problems import FormatError
from commet.judges.base import Judge, JudgeRequest, Verdict
from commet.sources.checked import validate_path
from commet.store import Store
from tests.test_engine_pictures_threads import Looking


def saved(image: Image.Image, fmt: str, **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, format=fmt, **options)
    return out.getvalue()


def photo(colour: tuple[int, int, int], fmt: str = "PNG") -> bytes:
    return saved(Image.new("RGB", (90, 60), colour), fmt)


def damaged_stream(png: bytes) -> bytes:
    """A whole PNG (every chunk there, IEND last) whose compressed pixels are garbled: only decoding finds it."""
    at = png.index(b"IDAT") + 4
    return png[:at + 2] + bytes(b ^ 0x5A for b in png[at + 2:at + 40]) + png[at + 40:]


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[int]]:
    """Every decode of pixels (Pillow's ``ImageFile.load``) and every making of a picture for the models
    (:func:`prepare_image`: decode, resize, encode), by the size of the bytes made from."""
    seen: dict[str, list[int]] = {"decoded": [], "prepared": []}
    real_load, real_prepare = ImageFile.ImageFile.load, images_module.prepare_image

    def load(self: ImageFile.ImageFile) -> object:
        seen["decoded"].append(self.size[0] * self.size[1])
        return real_load(self)

    def prepare(data: bytes, **options: object) -> tuple[bytes, str]:
        seen["prepared"].append(len(data))
        return real_prepare(data, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(ImageFile.ImageFile, "load", load)
    monkeypatch.setattr(images_module, "prepare_image", prepare)
    return seen


GOOD = {
    "png": photo((200, 80, 40)),
    "jpeg": photo((20, 180, 40), "JPEG"),
    "progressive jpeg": saved(Image.new("RGB", (90, 60), (1, 2, 3)), "JPEG", progressive=True),
    "webp": photo((20, 80, 240), "WEBP"),
    "gif": saved(Image.new("P", (16, 16), 3), "GIF"),
    "png with bytes after IEND": photo((5, 5, 5)) + b"trailing \xff\xda bytes",
    "jpeg with a video after it (a motion photo)": photo((9, 9, 9), "JPEG") + b"ftypmp42\xff\xda\x00\x01" * 50,
}
CUT = {
    "png without IEND": GOOD["png"][:-12],
    "png cut in its pixels": GOOD["png"][:len(GOOD["png"]) // 2],
    "png cut in its IEND chunk": GOOD["png"][:-3],
    "jpeg without its end marker": GOOD["jpeg"][:-2],
    "jpeg cut in its pixels": GOOD["jpeg"][:-40],
    "jpeg cut before its pixels": GOOD["jpeg"][:300],
    "progressive jpeg cut": GOOD["progressive jpeg"][:-30],
    "webp cut": GOOD["webp"][:-10],
}


def test_a_check_reads_header_and_structure_and_refuses_a_file_cut_short(work: dict[str, list[int]]) -> None:
    for name, data in GOOD.items():
        assert picture_problem(data) is None, name
    for name, data in CUT.items():
        assert "is truncated or corrupt" in str(picture_problem(data)), name
    assert picture_problem(damaged_stream(GOOD["png"])) is None  # whole: only decoding it finds the damage
    assert work["decoded"] == []  # no pixel decoded by any check
    for name, data in CUT.items():  # the run refuses them with the same words, before decoding
        with pytest.raises(Exception, match="is truncated or corrupt") as raised:
            images_module.prepare_image(data)
        assert str(raised.value) == picture_problem(data), name


def dataset_folder(root: Path, pictures: dict[str, bytes], stories: int = 6) -> Path:
    """StoryTurns of three turns, each turn showing one of the pictures (earlier ones sent again in each later
    turn's request), the pictures shown by several stories and under several ids."""
    (root / "images").mkdir(parents=True)
    for name, data in pictures.items():
        (root / "images" / f"{name}.png").write_bytes(data)
    names = sorted(pictures)
    lines = [json.dumps({"id": f"st-{i}", "task": "diverse_desire", "category": "Desire", "image_dependent": True,
                         "turns": [{"story": f"Kim sees a snack ({i}, {k}).", "question": "Pear or cookie?",
                                    "image": names[(i + k) % len(names)], "answers": ["Pear"]} for k in range(3)]})
             for i in range(stories)]
    (root / "storyturns.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


async def test_each_content_is_decoded_and_encoded_once_per_process(tmp_path: Path, work: dict[str, list[int]],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """No cache folder: whatever the turns, conversations, ids and runs showing a picture, this process decodes
    and encodes each content once (validation decodes none)."""
    monkeypatch.setenv("COMMET_CACHE_DIR", "")
    same, other = photo((200, 80, 40)), photo((10, 20, 30))
    folder = dataset_folder(tmp_path / "data", {"a": same, "b": same, "c": other})
    models = []
    for run in ("first", "second"):
        model = Looking()
        summary = await evaluate_async(model, folder, db=tmp_path / f"{run}.sqlite", run=run, concurrency=4,
                                       settings=EvalSettings(images="on", judge_images="on"))
        assert summary.results.complete
        models.append(model)
    assert sorted(work["prepared"]) == sorted([len(same), len(other)])
    assert len(work["decoded"]) == 2  # the decode inside each making, nothing else
    assert all(len(model.seen) == 6 * (1 + 2 + 3) for model in models)  # each turn re-sends the earlier pictures
    made = {name: hashlib.sha256(images_module.prepare_image(data)[0]).hexdigest()
            for name, data in (("a", same), ("b", same), ("c", other))}
    assert {(image_id.removesuffix(".png"), sha) for model in models for image_id, sha in model.seen} == {
        (name, sha) for name, sha in made.items()}


class LookingJudge(Judge):
    """A judge that looks at the pictures (an LLM judge's part): says correct, keeps the pictures it was given."""

    name = "test-looking-judge"
    cacheable = False

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def judge(self, request: JudgeRequest) -> Verdict:
        self.seen.extend(image.sha256 for image in request.images)
        return Verdict("correct", 0, "looked", self.name)


@pytest.mark.parametrize("baseline", ["baseline:first-option", "baseline:random-option"])
async def test_a_baseline_run_decodes_and_encodes_no_picture(tmp_path: Path, work: dict[str, list[int]],
                                                            baseline: str) -> None:
    """A baseline (and the rules judge) reads no picture: none is decoded or encoded, and each turn records the
    sha256 of the picture file it showed; a judge that looks at pictures gets them made, once per content."""
    pictures = {"a": photo((200, 80, 40)), "c": photo((10, 20, 30))}
    folder = dataset_folder(tmp_path / "data", pictures)
    summary = await evaluate_async(baseline, folder, db=tmp_path / "r.sqlite", run="r", concurrency=4,
                                   settings=EvalSettings(images="on", judge_images="on"))
    assert summary.results.complete
    assert work == {"decoded": [], "prepared": []}
    with Store(tmp_path / "r.sqlite") as store:
        recorded = {image["id"]: image["sha256"] for row in store.turn_rows(summary.run.id)
                    for image in json.loads(row.images_json)}
    assert recorded == {name: hashlib.sha256(data).hexdigest() for name, data in pictures.items()}

    judge = LookingJudge()
    summary = await evaluate_async(baseline, folder, judge=judge, db=tmp_path / "j.sqlite", run="j", concurrency=4,
                                   settings=EvalSettings(images="on", judge_images="on"))
    assert summary.results.complete and len(judge.seen) == 6 * (1 + 2 + 3)
    assert sorted(work["prepared"]) == sorted(len(data) for data in pictures.values())
    assert set(judge.seen) == {hashlib.sha256(images_module.prepare_image(data)[0]).hexdigest()
                               for data in pictures.values()}


async def test_a_damaged_stream_is_refused_where_it_is_decoded_with_its_place(tmp_path: Path,
                                                                             work: dict[str, list[int]]) -> None:
    """A whole file whose compressed pixels are garbled passes the check (only decoding finds it): a run that
    shows it to a model refuses it when it prepares it, with the StoryTurn's file, line, id, turn and field; a
    baseline never decodes it."""
    folder = dataset_folder(tmp_path / "data", {"a": photo((1, 2, 3)), "b": damaged_stream(photo((7, 8, 9)))})
    assert validate_path(folder) == []
    with pytest.raises(FormatError) as raised:
        await evaluate_async(Looking(), folder, db=tmp_path / "r.sqlite", run="r", concurrency=1,
                             settings=EvalSettings(images="on"))
    message = str(raised.value)
    assert "storyturns.jsonl:1 story=st-0 turn=1 field=image" in message, message
    assert "image 'b' is truncated or corrupt" in message, message
    assert len(work["decoded"]) == 2  # each content once, the damaged one too (its refusal is kept)
    summary = await evaluate_async("baseline:first-option", folder, db=tmp_path / "b.sqlite", run="b",
                                   settings=EvalSettings(images="on"))
    assert summary.results.complete and len(work["decoded"]) == 2


def test_validate_decodes_every_picture_unless_quick(tmp_path: Path) -> None:
    """``commet validate`` is the check to run before a run: it decodes the pixels too, so it finds the damaged
    stream a run finds only where it prepares the picture (one located line, exit 2); ``--quick`` checks as a run
    does before it starts. The kept validation of one never answers for the other."""
    from typer.testing import CliRunner

    from commet.cli import app

    folder = dataset_folder(tmp_path / "data", {"a": photo((1, 2, 3)), "b": damaged_stream(photo((7, 8, 9)))})
    [problem] = validate_path(folder, decode_pictures=True)
    assert (problem.story, problem.turn, problem.field) == ("st-0", 1, "image")
    assert "image 'b' is truncated or corrupt" in problem.message
    runner = CliRunner()
    for _ in range(2):  # the second time from the validation cache
        quick = runner.invoke(app, ["validate", "--quick", str(folder)])
        assert quick.exit_code == 0, quick.output
        full = runner.invoke(app, ["validate", str(folder)])
        assert full.exit_code == 2 and "Traceback" not in full.output, full.output
        assert "storyturns.jsonl:1 story=st-0 turn=1 field=image" in full.output, full.output
