"""A first run's start (issue 47): each picture located and read once per dataset, its sha256 made by whoever reads
it first and kept with the file's ``stat`` (a changed file is never taken for the old one), the picture checks in
threads only where they are slow, each short text normalised once per validation, and the validation cache's entry
written after ``commet eval``'s run (also after Ctrl-C), not before its first request, or for a small dataset by a
child forked as the program starts (tests/test_check_ahead.py). Real files, real processes."""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from PIL import Image

import commet
import commet.format.dataset as dataset_module
import commet.sources.validation_cache as cache_module
from commet.engine.pictures import PictureCache
from commet.format import validate
from commet.format.content_cache import cache_root
from commet.format.dataset import Dataset
from commet.format.model import StoryTurn, Turn
from commet.format.pictures import PictureError
from commet.sources import load_dataset, picture_files
from commet.sources.checked import load_checked
from commet.sources.picture_files import FOLDER_READER, FolderReader

SOURCE = str(Path(commet.__file__).resolve().parents[1])
#: a modification time well before the test (set back with ``os.utime``: the file's ctime still moves)
LONG_AGO_NS = 1_600_000_000 * 10**9


class _Later:
    """``time`` seen :data:`~commet.format.dataset.RACY_S` and more after the files of a test were written."""

    def __init__(self) -> None:
        self.shift_ns = int(3 * dataset_module.RACY_S * 1e9)

    def time_ns(self) -> int:
        return time.time_ns() + self.shift_ns

    def __getattr__(self, name: str) -> object:
        return getattr(time, name)


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """The files a test writes are old enough for their ``stat`` to be trusted (no test waits seconds)."""
    monkeypatch.setattr(dataset_module, "time", _Later())
    monkeypatch.setattr(cache_module, "time", _Later())


def png(colour: tuple[int, int, int], size: tuple[int, int] = (16, 12)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, format="PNG")
    return out.getvalue()


class CountingReader(FolderReader):
    """The folder reader, counting the picture files it reads."""

    def __init__(self) -> None:
        self.reads: list[Path] = []

    def read(self, path: Path) -> bytes:
        self.reads.append(path)
        return super().read(path)


def folder(root: Path, pictures: int = 3, stories: int = 6) -> Path:
    """A canonical dataset folder: ``stories`` StoryTurns sharing ``pictures`` pictures."""
    (root / "images").mkdir(parents=True)
    for index in range(pictures):
        (root / "images" / f"p{index}.png").write_bytes(png((40 * index, 90, 200)))
    stories_made = [StoryTurn(id=f"st-{i}", task="implicit_false_belief", category="Belief", image_dependent=True,
                              turns=[Turn(story=f"Anne moves ball {i}.", question="Where will Sally look?",
                                          answers=["basket"], image=f"p{i % pictures}")])
                    for i in range(stories)]
    Dataset(stories_made, name="cold").save(root)
    return root


def loaded(root: Path, reader: FolderReader) -> Dataset:
    dataset = load_dataset(root)
    dataset.folder_reader = reader
    return dataset


@pytest.mark.usefixtures("settled")
def test_each_picture_is_read_once_for_its_checks_its_hashes_and_a_run(tmp_path: Path) -> None:
    """The checks read every picture once; the content hash, the engine's file hashes and the cache's record come
    from that read (the very bytes checked), and equal a fresh reading's."""
    root = folder(tmp_path / "data")
    reader = CountingReader()
    dataset = loaded(root, reader)
    assert not validate.validate_dataset(dataset)
    assert sorted(p.name for p in reader.reads) == ["p0.png", "p1.png", "p2.png"]
    digest = dataset.content_hash()
    cache = PictureCache(dataset, max_side=1024, fmt="png")
    hashes = {image_id: cache.file_sha256(image_id) for image_id in ("p0", "p1", "p2")}
    assert len(reader.reads) == 3  # nothing read again
    fresh = load_dataset(root)
    assert digest == fresh.content_hash()
    assert hashes == {f"p{i}": hashlib.sha256((root / "images" / f"p{i}.png").read_bytes()).hexdigest()
                      for i in range(3)}
    path, stat, sha256 = dataset.picture_file("p1") or (None, None, None)
    assert path == root / "images" / "p1.png" and sha256 == hashlib.sha256(path.read_bytes()).digest()
    assert stat is not None and stat[0] == path.stat().st_size


@pytest.mark.parametrize("change", ["same size, time put back", "another size", "replaced by another file",
                                    "just written"])
def test_a_picture_changed_on_disk_between_two_hashes_is_not_taken_for_the_old_one(
        tmp_path: Path, change: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Kept by the ``stat`` taken before the read: a rewrite (even to the same size with its time put back) or a new
    file in its place is read again; a file written within RACY_S of that ``stat`` is never trusted by it."""
    root = folder(tmp_path / "data")
    later = _Later()
    monkeypatch.setattr(dataset_module, "time", later)
    reader = CountingReader()
    dataset = loaded(root, reader)
    before = dataset.content_hash()
    picture = root / "images" / "p0.png"
    old = picture.read_bytes()
    if change == "same size, time put back":  # same size, same mtime: only the ctime tells (and the bytes)
        new = png((1, 2, 3))
        assert len(new) == len(old)
        picture.write_bytes(new)
        os.utime(picture, ns=(LONG_AGO_NS, LONG_AGO_NS))
    elif change == "another size":
        picture.write_bytes(png((1, 2, 3), (20, 10)))
        os.utime(picture, ns=(LONG_AGO_NS, LONG_AGO_NS))
    elif change == "replaced by another file":  # a new inode where the old one was
        (root / "images" / "new.png").write_bytes(png((9, 9, 9)))
        os.utime(root / "images" / "new.png", ns=(LONG_AGO_NS, LONG_AGO_NS))
        os.replace(root / "images" / "new.png", picture)
    reads = len(reader.reads)
    after = dataset.content_hash()
    assert after == load_dataset(root).content_hash()
    assert (after != before) == (change != "just written")
    if change == "just written":  # not changed, but written within RACY_S of its stat: read again, not trusted
        assert len(reader.reads) == reads  # (old enough: trusted)
        later.shift_ns = 0
        picture.write_bytes(old)  # now really just written
        reads = len(reader.reads)
        assert dataset.content_hash() == before
        assert len(reader.reads) == reads + 1  # too recent to trust its stat: read
        assert dataset.content_hash() == before and len(reader.reads) == reads + 2
    else:
        assert len(reader.reads) == reads + 1  # only the changed picture read again


def test_a_located_picture_swapped_for_a_link_out_is_refused_again(tmp_path: Path) -> None:
    """A located file is used again only while it is that very file: a link put in its place (pointing out of the
    folder) or its folder swapped for a link is looked at again with every check, and refused."""
    root = folder(tmp_path / "data")
    outside = tmp_path / "secret.png"
    outside.write_bytes(png((255, 0, 0)))
    dataset = load_dataset(root)
    assert dataset.image_bytes("p0").startswith(b"\x89PNG")
    (root / "images" / "p0.png").unlink()
    (root / "images" / "p0.png").symlink_to(outside)
    with pytest.raises(PictureError, match="is a symbolic link pointing out of the dataset folder"):
        dataset.image_bytes("p0")
    assert dataset.picture_digest("p0") is None
    os.rename(root / "images", tmp_path / "moved")
    (root / "images").symlink_to(tmp_path / "moved")
    assert dataset.image_path("p1") is None
    assert dataset.locate_image("p1")[1] == "leads out of the dataset folder (refused, not read)"
    (root / "images").unlink()
    with pytest.raises(FileNotFoundError):
        dataset.image_bytes("p1")


def reference_locate(root: Path, image_id: str) -> tuple[Path | None, str | None]:
    """What a picture's place is by resolving every candidate (the locate before issue 47's shortcut)."""
    top = root.resolve()
    for base in (root / "images", root):
        for name in [image_id, image_id + ".png"]:
            candidate = base / name
            if not os.path.lexists(candidate):
                continue
            if not candidate.resolve().is_relative_to(top):
                return None, "out"
            return (candidate, None) if candidate.is_file() else (None, "not a file")
    return None, "not found"


def test_locate_without_resolving_finds_what_resolving_finds(tmp_path: Path) -> None:
    """Plain files, subfolders, links inside and out, a linked images/ folder, '..' and absolute names: the
    shortcut (a path with no link and no '..' is its own resolved path) gives what resolving every path gives."""
    data = png((5, 5, 5))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.png").write_bytes(data)
    for layout in ("plain", "images linked inside", "images linked out"):
        root = tmp_path / layout.replace(" ", "-")
        root.mkdir()
        real_images = root / "real" if layout == "images linked inside" else (
            outside / "imgs" if layout == "images linked out" else root / "images")
        real_images.mkdir(parents=True)
        if real_images != root / "images":
            (root / "images").symlink_to(real_images)
        (real_images / "a.png").write_bytes(data)
        (real_images / "sub").mkdir()
        (real_images / "sub" / "b.png").write_bytes(data)
        (real_images / "in.png").symlink_to(real_images / "a.png")
        (real_images / "out.png").symlink_to(outside / "o.png")
        (real_images / "dir.png").mkdir()
        (root / "top.png").write_bytes(data)
        for image_id in ("a", "a.png", "sub/b.png", "in", "out", "dir.png", "top", "../outside/o.png",
                         "sub/../a.png", str(outside / "o.png"), "missing", "sub//b.png", "./a.png"):
            found, why = FOLDER_READER.locate(root, image_id)
            expected, reason = reference_locate(root, image_id)
            assert (found.resolve() if found else None) == (expected.resolve() if expected else None), (layout,
                                                                                                      image_id)
            assert (found is None) == (why is not None) and (why is None) == (reason is None), (layout, image_id)


def test_picture_checks_spread_over_threads_keep_order_and_each_pictures_own_verdict(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Contiguous shares in threads: every id's own result, in the ids' order, whatever order the threads end in;
    quick checks stay in the calling thread."""
    monkeypatch.setattr(validate.os, "cpu_count", lambda: 4)
    ids = [f"id-{i}" for i in range(203)]
    threads: set[str] = set()

    def slow(image_id: str) -> str:
        threads.add(threading.current_thread().name)
        time.sleep(random.Random(image_id).random() * 0.002)
        return f"verdict of {image_id}"

    monkeypatch.setattr(validate, "SEQUENTIAL_CHECKS_S", 0.0)
    assert validate._spread(slow, ids) == [f"verdict of {image_id}" for image_id in ids]
    assert len(threads - {"MainThread"}) > 1
    threads.clear()
    quick = validate._spread(lambda image_id: (threads.add(threading.current_thread().name), image_id)[1], ids)
    assert quick == ids and threads == {"MainThread"}  # well under THREADED_CHECK_S each: one by one


def test_normalising_once_per_validation_changes_no_problem(tmp_path: Path) -> None:
    """Texts shared across StoryTurns (answers, options, labels, candidates, feedback keys, questions) give the
    same problems validated together as each StoryTurn alone."""
    lines = []
    for i in range(12):
        turns = [{"story": f"Story {i}: the red box and the Blue Box.", "question": "Which box? A. red box B. blue box",
                  "answers": ["The red box", "the Red Box!"][: 1 + i % 2],
                  "options": [{"label": "A", "text": "red box"}, {"label": "B", "text": "The red box"}][: 1 + i % 2]},
                 {"story": "Later.", "question": "And now?", "answers": ["blue", "Blue", "red"],
                  "candidates": ["blue", "red"] if i % 3 else ["blue", "Blue"],
                  "feedback": {"by_answer": [{"answer": "The red box", "text": "Right."},
                                             {"answer": "the RED box", "text": "Again."}]} if i % 4 else None}]
        lines.append(json.dumps({"id": f"s{i}", "task": "implicit_false_belief", "category": "Belief",
                                 "turns": turns}))
    (tmp_path / "storyturns.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    dataset = load_dataset(tmp_path)
    together = validate.validate_dataset(dataset, strict=True)
    alone = [problem for index, storyturn in enumerate(dataset.storyturns)
             for problem in validate.validate_storyturn(storyturn, dataset, dataset.where(index)[1], {}, strict=True)]
    assert together == alone and len(together) > 12


@pytest.mark.usefixtures("settled")
def test_a_cache_hit_carries_each_pictures_hash_so_a_run_reads_none(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    root = folder(tmp_path / "data")
    load_checked(root)
    reads: list[Path] = []
    real = picture_files.read_picture_file
    monkeypatch.setattr(picture_files, "read_picture_file", lambda path: (reads.append(path), real(path))[1])
    dataset, _ = load_checked(root)  # from the cache
    cache = PictureCache(dataset, max_side=1024, fmt="png")
    assert cache.file_sha256("p2") == hashlib.sha256((root / "images" / "p2.png").read_bytes()).hexdigest()
    assert dataset.picture_digest("p0") == hashlib.sha256((root / "images" / "p0.png").read_bytes()).digest()
    assert reads == []
    (root / "images" / "p0.png").write_bytes(png((0, 0, 0)))  # changed since: read (and hashed) again
    assert dataset.picture_digest("p0") == hashlib.sha256(png((0, 0, 0))).digest() and len(reads) == 1


def entries() -> list[Path]:
    root = cache_root()
    assert root is not None
    return [p for p in (root / cache_module.CACHE_KIND).rglob("*") if p.is_file()]


def test_a_deferred_entry_is_written_when_the_block_ends_however_it_ends(tmp_path: Path) -> None:
    data = folder(tmp_path / "data")
    with cache_module.writes_deferred():
        load_checked(data)
        assert entries() == []
    assert len(entries()) == 1
    for entry in entries():
        entry.unlink()
    with pytest.raises(KeyboardInterrupt), cache_module.writes_deferred():
        load_checked(data)
        raise KeyboardInterrupt
    assert len(entries()) == 1
    load_checked(data)  # outside the block: a hit (nothing to write), and a new dataset's entry is written at once
    assert len(entries()) == 1
    other = folder(tmp_path / "other")
    with cache_module.writes_deferred():  # nested blocks: each entry written when the outermost ends
        with cache_module.writes_deferred():
            pass
        load_checked(other)
        with cache_module.writes_deferred():
            pass
        assert len(entries()) == 1
    assert len(entries()) == 2


@pytest.mark.parametrize("large", [True, False], ids=["large: written after the run", "small: by a child ahead"])
def test_eval_writes_its_cache_entry_after_its_run_or_a_child_writes_it_ahead(large: bool, tmp_path: Path) -> None:
    """A real `commet eval` process. A dataset over ``AHEAD_MAX_BYTES``: no entry while its run goes on (written after
    it, not before its first request); after Ctrl-C it is there. A smaller one: a child forked as the program starts
    has written it by the first request (commet.sources.checked.check_ahead), and Ctrl-C leaves it as it was."""
    data = folder(tmp_path / "data", stories=12)
    if large:  # the same StoryTurns, with stories long enough to pass the limit
        lines = (data / "storyturns.jsonl").read_text(encoding="utf-8").splitlines()
        padding = " The day is long." * (cache_module.AHEAD_MAX_BYTES // (17 * len(lines)) + 1)
        rows = [json.loads(line) for line in lines]
        for row in rows:
            row["turns"][0]["story"] += padding
        (data / "storyturns.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        assert (data / "storyturns.jsonl").stat().st_size > cache_module.AHEAD_MAX_BYTES
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps({f"st-{i}": ["basket"] for i in range(12)}), encoding="utf-8")
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": SOURCE, "COMMET_CACHE_DIR": str(cache)}
    db = tmp_path / "run.sqlite"
    process = subprocess.Popen([sys.executable, "-m", "commet.cli", "eval", "--model", f"replay:{replies}?delay=0.3",
                                "--dataset", str(data), "--db", str(db), "--concurrency", "1", "--quiet"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    kind = cache / cache_module.CACHE_KIND
    deadline = time.monotonic() + 120
    while not calls(db):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no call"
        time.sleep(0.05)
    written = [p for p in kind.rglob("*") if p.is_file()] if kind.exists() else []
    assert len(written) == (0 if large else 1)  # large: not yet, the run goes on; small: the child's, already
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130 and "Traceback" not in stderr, stderr
    assert len([p for p in kind.rglob("*") if p.is_file()]) == 1


def calls(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as con:
            return int(con.execute("SELECT COUNT(*) FROM model_calls").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


@pytest.mark.parametrize("story, answer", [
    ("The ball is in the RED box.", "red box"), ("The ball is in the red-box.", "Red box!"),
    ("Yes, because it's in the basket.", "yes because it's in the basket"), ("She said: don't!", "don't"),
    ("Café au lait.", "cafe"), ("Café au lait.", "CAFÉ"), ("Die STRASSE ist lang.", "Straße"),
    ("ＡＢＣ corner", "abc corner"), ("球在箱子里。", "箱子"), ("球在箱子里。", "篮子"), ("red_wicker_basket", "wicker basket"),
    ("The apple is here.", "apples"), ("It is in the box, not the basket.", "the basket"), ("", "box"),
])
def test_the_leak_check_finds_what_a_full_normalisation_finds(story: str, answer: str) -> None:
    """Answers looked for only in stories holding each of their words: the leak verdict of a full normalisation."""
    storyturn = StoryTurn(id="s", task="implicit_false_belief", category="Belief",
                          turns=[Turn(story=story or "-", question="Where is it?", answers=[answer])])
    problems = validate.validate_storyturn(storyturn, Dataset([storyturn]), strict=True)
    leaked = any(p.field == "answer" and "story text" in p.message for p in problems)
    reference = validate.contains_phrase(validate._norm(story or "-"), validate._leaked_core(answer))
    assert leaked == reference
