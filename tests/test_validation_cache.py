"""The validated dataset kept by content (issue 47): a second load of the same files reads neither them nor their
pictures' checks again; any change of a byte, of the code or of the cache's entry makes it load and validate in
full, and a refused dataset is never kept. Real files, a real cache folder (each test's own, tests/conftest.py)."""

from __future__ import annotations

import io
import json
import os
import pickle
import zlib
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

import commet.sources.checked as validate_module
import commet.sources.validation_cache as cache_module
from commet.cli import app
from commet.format.content_cache import ContentCache, cache_root
from commet.format.dataset import Dataset
from commet.format.problems import FormatError
from commet.format.validate import DatasetRefused
from commet.sources.checked import load_and_validate, load_checked


def png(colour: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (16, 12), colour).save(out, format="PNG")
    return out.getvalue()


def record(index: int, **turn: object) -> str:
    return json.dumps({"id": f"st-{index}", "task": "diverse_desire", "category": "Desire",
                       "turns": [{"story": f"Kim sees snack number {index}.", "question": "Pear or cookie?",
                                  "answers": ["Pear"], **turn}]})


def dataset_folder(root: Path, stories: int = 3) -> Path:
    """A canonical folder: ``stories`` StoryTurns, the first showing a picture, and a dataset.json."""
    (root / "images").mkdir(parents=True)
    (root / "images" / "a.png").write_bytes(png((200, 80, 40)))
    lines = [record(0, image="a")] + [record(i) for i in range(1, stories)]
    (root / "storyturns.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "dataset.json").write_text(json.dumps({"name": "tiny", "version": "1"}), encoding="utf-8")
    return root


@pytest.fixture
def validations(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each full validation, by the number of StoryTurns validated."""
    seen: list[int] = []
    real, real_and_hash = validate_module.validate_dataset, validate_module.validate_and_hash

    def counted(dataset: Dataset, *, strict: bool = False, decode_pictures: bool = False) -> list:  # type: ignore[type-arg]
        seen.append(len(dataset))
        return real(dataset, strict=strict, decode_pictures=decode_pictures)

    def counted_and_hashed(dataset: Dataset, *, strict: bool = False, decode_pictures: bool = False) -> tuple:  # type: ignore[type-arg]
        seen.append(len(dataset))
        return real_and_hash(dataset, strict=strict, decode_pictures=decode_pictures)

    monkeypatch.setattr(validate_module, "validate_dataset", counted)  # a dataset the cache does not keep
    monkeypatch.setattr(validate_module, "validate_and_hash", counted_and_hashed)  # one it keeps
    return seen


def entries() -> list[Path]:
    root = cache_root()
    assert root is not None
    return [p for p in (root / cache_module.CACHE_KIND).rglob("*") if p.is_file()]


def same(a: Dataset, b: Dataset) -> bool:
    return (a.storyturns == b.storyturns and a.lines == b.lines and a.name == b.name and a.root == b.root
            and a.source_file == b.source_file and a.warnings == b.warnings)


def test_the_same_files_are_read_from_the_cache_with_their_problems_and_hashes(tmp_path: Path,
                                                                                validations: list[int]) -> None:
    data = dataset_folder(tmp_path / "data")
    odd = json.loads(record(9))
    odd["mental_states"] = ["telepathy"]  # a warning, kept with the dataset (and gating a run unless forced)
    (data / "storyturns.jsonl").write_text((data / "storyturns.jsonl").read_text() + json.dumps(odd) + "\n")
    first, problems = load_and_validate(data)
    second, again = load_and_validate(data)
    assert validations == [4] and first is not None and second is not None and first is not second
    assert same(first, second) and again == problems and [p.severity for p in problems] == ["warning"]
    fresh = validate_module.load_dataset(data)  # made again from the files: the kept hashes are theirs
    for pictures in (True, False):
        assert second.content_hash(pictures=pictures) == fresh.content_hash(pictures=pictures)
    second.storyturns = second.storyturns[:1]  # other StoryTurns: hashed again, not the kept hash
    assert second.content_hash() == Dataset(storyturns=fresh.storyturns[:1], root=fresh.root).content_hash()
    with pytest.raises(DatasetRefused):  # the warning still gates a run unless forced, as before
        load_checked(data)
    assert load_checked(data, force=True)[1] == problems and validations == [4]


@pytest.mark.parametrize("change", ["storyturns", "metadata", "picture", "new picture file", "metadata added"])
def test_any_changed_byte_or_file_is_a_miss(tmp_path: Path, validations: list[int], change: str) -> None:
    data = dataset_folder(tmp_path / "data")
    if change == "metadata added":
        (data / "dataset.json").unlink()
    before, _ = load_and_validate(data)
    assert before is not None
    stories, meta, picture = data / "storyturns.jsonl", data / "dataset.json", data / "images" / "a.png"
    if change == "storyturns":  # one letter, the same size, the times put back: only the content says it
        times = os.stat(stories)
        stories.write_bytes(stories.read_bytes().replace(b"number 1.", b"number 7."))
        os.utime(stories, ns=(times.st_atime_ns, times.st_mtime_ns))
    elif change == "metadata":
        meta.write_text(json.dumps({"name": "tinz", "version": "1"}), encoding="utf-8")
    elif change == "picture":
        picture.write_bytes(png((201, 80, 40)))
    elif change == "new picture file":  # the id "a" now finds images/a (tried before images/a.png)
        (data / "images" / "a").write_bytes(png((1, 2, 3)))
    else:
        meta.write_text(json.dumps({"name": "tinz"}), encoding="utf-8")
    after, _ = load_and_validate(data)
    assert after is not None and len(validations) == 2
    if change == "storyturns":
        assert after.storyturns[1].turns[0].story == "Kim sees snack number 7."
    if change in ("metadata", "metadata added"):
        assert after.name == "tinz"
    if change in ("picture", "new picture file"):
        assert after.content_hash() != before.content_hash()
        assert after.content_hash() == validate_module.load_dataset(data).content_hash()


def test_a_touched_file_of_the_same_content_is_a_hit_and_old_files_need_no_reading(
        tmp_path: Path, validations: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    data = dataset_folder(tmp_path / "data")
    load_and_validate(data)
    hashed: list[str] = []
    real = cache_module._sha256
    monkeypatch.setattr(cache_module, "_sha256", lambda path: hashed.append(path) or real(path))
    written: list[str] = []
    real_write = cache_module._write
    monkeypatch.setattr(cache_module, "_write", lambda store, key, entry: written.append(key) or real_write(
        store, key, entry))
    load_and_validate(data)  # files written a moment ago: checked by content, and the entry is not written again
    assert validations == [3] and str(data / "storyturns.jsonl") in hashed and written == []
    os.utime(data / "storyturns.jsonl", ns=(1, 10**18))  # touched: the content says it is the same
    load_and_validate(data)
    assert validations == [3] and str(data / "storyturns.jsonl") in hashed and len(written) == 1
    monkeypatch.setattr(cache_module, "RACY_S", 0.0)  # files older than the entry: their stat is enough
    hashed.clear()
    load_and_validate(data)
    assert validations == [3] and hashed == []


def test_another_code_version_or_option_validates_again(tmp_path: Path, validations: list[int],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    data = dataset_folder(tmp_path / "data")
    load_and_validate(data)
    load_and_validate(data, strict=True)  # another option, another entry
    assert validations == [3, 3]
    monkeypatch.setattr(cache_module, "code_version", lambda: "a new release")
    load_and_validate(data)
    assert validations == [3, 3, 3]
    monkeypatch.undo()
    assert len(cache_module.code_version()) == 64  # the real one: the sources of the validating code hashed


def test_a_refused_dataset_is_never_kept(tmp_path: Path, validations: list[int]) -> None:
    data = dataset_folder(tmp_path / "data")
    good = (data / "storyturns.jsonl").read_bytes()
    (data / "storyturns.jsonl").write_bytes(good.replace(b'"Desire"', b'"Desirf"'))
    for _ in range(2):
        with pytest.raises(DatasetRefused) as refused:
            load_checked(data, force=True)
        assert "unknown category 'Desirf'" in str(refused.value.problems[0])
    assert validations == [3, 3] and entries() == []
    (data / "storyturns.jsonl").write_bytes(good)  # fixed: validated, then kept
    load_checked(data)
    load_checked(data)
    assert validations == [3, 3, 3] and len(entries()) == 1
    (data / "images" / "a.png").write_bytes(b"not a picture")  # broken after it was kept: refused again
    with pytest.raises(DatasetRefused, match="image"):
        load_checked(data)
    (data / "storyturns.jsonl").write_text("{not json\n", encoding="utf-8")  # unreadable: its located line
    with pytest.raises(FormatError) as unreadable:
        load_checked(data)
    assert unreadable.value.problems[0].line == 1 and len(entries()) == 1


def test_a_damaged_or_foreign_entry_is_ignored(tmp_path: Path, validations: list[int]) -> None:
    data = dataset_folder(tmp_path / "data")
    expected = load_and_validate(data)
    [entry] = entries()
    entry.write_bytes(entry.read_bytes()[:-1] + bytes([entry.read_bytes()[-1] ^ 1]))  # one flipped bit
    assert load_and_validate(data)[1] == expected[1] and len(validations) == 2
    store = ContentCache(cache_module.CACHE_KIND)
    for payload in (b"not compressed", zlib.compress(b"not a pickle"), zlib.compress(pickle.dumps({"dataset": 1}))):
        store.put(entry.name, payload)  # whole and checked by its digest, but not an entry: a miss
        again, problems = load_and_validate(data)
        assert again is not None and same(again, expected[0]) and problems == expected[1]  # type: ignore[arg-type]
    assert len(validations) == 5


def test_relative_paths_keep_their_own_entries(tmp_path: Path, validations: list[int],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A dataset keeps its path as given (in its located problems, its pictures' folder): the same folder given
    from another working folder is its own entry, and finds its pictures."""
    dataset_folder(tmp_path / "a" / "data")
    monkeypatch.chdir(tmp_path / "a")
    first, _ = load_and_validate("data")
    monkeypatch.chdir(tmp_path)
    second, _ = load_and_validate(str(Path("a") / "data"))
    assert first is not None and second is not None and len(validations) == 2
    assert second.root == Path("a") / "data" and second.image_bytes("a") == png((200, 80, 40))


def test_only_files_commet_reads_itself_are_kept(tmp_path: Path, validations: list[int]) -> None:
    """A single canonical file is kept like a folder; tables, Hub datasets and missing paths are left to their
    own readers (``datasets`` and the Hub keep their own caches), and a mapping of columns is never looked up."""
    data = dataset_folder(tmp_path / "data")
    single = data / "storyturns.jsonl"
    for _ in range(2):
        assert load_and_validate(single)[0] is not None
    assert len(validations) == 1
    (data / "notes.txt").write_text("x", encoding="utf-8")  # its folder's listing moved: where pictures are may have
    load_and_validate(single)
    assert len(validations) == 2
    assert cache_module._inputs(single) == (str(single.resolve()), [str(single.resolve())],
                                            [str(data.resolve()), str(data.resolve() / "images")])
    for other in (tmp_path / "rows.csv", tmp_path / "part.parquet", "hf:owner/name", tmp_path / "missing"):
        if isinstance(other, Path) and other.name != "missing":
            other.write_text("id\n", encoding="utf-8")
        assert cache_module._inputs(other) is None
    (tmp_path / "hf").mkdir()
    assert cache_module._inputs(tmp_path / "hf") is None  # a folder without storyturns.jsonl


def test_eval_refuses_a_dataset_changed_after_a_kept_run_and_writes_nothing(tmp_path: Path) -> None:
    """The command line: a second run on the same data starts from the cache; the same data with an error added
    is refused with its located line, exit 2, no store written."""
    data = dataset_folder(tmp_path / "data")
    runner = CliRunner()
    for db in ("one.sqlite", "two.sqlite"):
        done = runner.invoke(app, ["eval", "--model", "baseline:first-option", "--dataset", str(data),
                                   "--db", str(tmp_path / db), "--quiet"])
        assert done.exit_code == 0, done.output
    assert len(entries()) == 1
    stories = data / "storyturns.jsonl"
    stories.write_text(stories.read_text().replace('"Pear"]', '""]', 1), encoding="utf-8")
    done = runner.invoke(app, ["eval", "--model", "baseline:first-option", "--dataset", str(data),
                               "--db", str(tmp_path / "three.sqlite"), "--quiet"])
    assert done.exit_code == 2 and "st-0 turn=0 field=answer: error: empty answer" in done.output
    assert not (tmp_path / "three.sqlite").exists()


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX owners and modes")
def test_an_entry_others_could_have_written_is_not_read(tmp_path: Path, validations: list[int]) -> None:
    """An entry is unpickled: it is read only from folders this user alone may write in."""
    data = dataset_folder(tmp_path / "data")
    load_and_validate(data)
    [entry] = entries()
    assert entry.parent.stat().st_mode & 0o777 == 0o700 and entry.stat().st_mode & 0o022 == 0
    entry.parent.chmod(0o775)  # a group could have put it there
    load_and_validate(data)
    assert len(validations) == 2
    load_and_validate(data)  # written again, in a folder made private again
    assert len(validations) == 2 and entry.parent.stat().st_mode & 0o022 == 0
