"""Every file a dataset names is opened only inside its folder, its size checked before reading (issue 44, point 3).

Folders built here with pyarrow and ``datasets``: ``Image`` cells naming a file by an absolute path, ``..``,
a URL, a link pointing out or a 1.5 GiB sparse file; ``save_to_disk`` folders whose ``state.json`` or
``dataset_dict.json`` name files outside; image folders whose ``metadata.jsonl``/``metadata.csv`` do; cards
whose ``data_files`` patterns do. Each is refused with one located line that says why ("absolute path",
"climbs out", "symbolic link pointing out", "URL", its size), and nothing outside is read.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from commet.cli import app
from commet.format.problems import FormatError
from commet.sources import load_dataset
from commet.sources.bounded import InputFileError, inside
from tests.llm_gen_servers import small_png

PNG = small_png((1, 2, 3), (8, 8))
ROW = {"story_id": "s1", "task": "false_belief_location", "category": "Belief", "story": "Ana puts the ball in the box.",
       "question": "Where is the ball, the box or the bag?", "answer": "The box"}
FEATURES = datasets.Features({**{key: datasets.Value("string") for key in ROW}, "image": datasets.Image()})
runner = CliRunner()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "x.png").write_bytes(PNG)
    return folder


def image_cells(folder: Path, *paths: str) -> Path:
    """A parquet file whose Image cells carry only a path (as ``datasets`` writes for files it did not embed)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{**ROW, "story_id": f"s{i}"} for i in range(len(paths))]
    table = pa.table({**{key: [row[key] for row in rows] for key in ROW},
                      "image": pa.array([{"bytes": None, "path": path} for path in paths],
                                        type=pa.struct([("bytes", pa.binary()), ("path", pa.string())]))})
    table = table.replace_schema_metadata({"huggingface": json.dumps({"info": {"features": FEATURES.to_dict()}})})
    pq.write_table(table, folder / "data.parquet")
    return folder


def refused(folder: Path, *says: str) -> str:
    with pytest.raises(FormatError) as caught:
        load_dataset(str(folder))
    message = str(caught.value)
    assert all(part in message for part in says), message
    assert "DatasetGenerationError" not in message and "not found" not in message, message
    result = runner.invoke(app, ["validate", str(folder)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    return message


def test_image_cells_read_only_inside_the_folder(tmp_path: Path, outside: Path) -> None:
    ok = image_cells(tmp_path / "ok", "x.png", str((tmp_path / "ok" / "sub" / "y.png").resolve()))
    (ok / "x.png").write_bytes(PNG)
    (ok / "sub").mkdir()
    (ok / "sub" / "y.png").write_bytes(PNG)
    (ok / "README.md").write_text("---\nconfigs:\n- config_name: default\n  data_files: data.parquet\n---\n")
    loaded = load_dataset(str(ok))
    assert sorted(loaded.images) == ["x.png", "y.png"]  # relative and absolute-inside paths are read
    cases = {"absolute": (str(outside / "x.png"), "absolute path outside the dataset folder"),
             "dotdot": ("../outside/x.png", "climbs out of the dataset folder"),
             "deep": ("sub/../../outside/x.png", "climbs out of the dataset folder"),
             "url": ("https://example.org/x.png", "is a URL"), "file-url": ("file:///etc/passwd", "is a URL"),
             "hub-cache": (str(Path.home() / ".cache" / "huggingface" / "hub" / "x.png"), "absolute path outside")}
    for name, (path, says) in cases.items():
        refused(image_cells(tmp_path / name, path), says, "field=image", ":1 ")
    linked = image_cells(tmp_path / "linked", "x.png")
    os.symlink(outside / "x.png", linked / "x.png")
    refused(linked, "symbolic link pointing out of the dataset folder")


def test_a_huge_sparse_picture_is_refused_by_its_size_unread(tmp_path: Path) -> None:
    folder = image_cells(tmp_path / "big", "x.png")
    with open(folder / "x.png", "wb") as out:
        out.write(PNG)
        out.truncate(1536 * 1024 * 1024)  # 1.5 GiB, sparse: nothing but its size costs
    refused(folder, "1,610,612,736 bytes", "refused, not read")
    fifo = image_cells(tmp_path / "fifo", "x.png")
    os.mkfifo(fifo / "x.png")
    refused(fifo, "not a regular file")


def saved(folder: Path) -> Path:
    datasets.Dataset.from_list([ROW]).save_to_disk(str(folder))
    return folder


@pytest.mark.parametrize("name", ["../outside/data.arrow", "ABSOLUTE", "../../../outside/data.arrow", "http://x/a"])
def test_save_to_disk_state_json_names_only_files_inside(tmp_path: Path, outside: Path, name: str) -> None:
    folder = saved(tmp_path / "saved")
    state = json.loads((folder / "state.json").read_text())
    shutil.move(folder / state["_data_files"][0]["filename"], outside / "data.arrow")
    state["_data_files"][0]["filename"] = str(outside / "data.arrow") if name == "ABSOLUTE" else name
    (folder / "state.json").write_text(json.dumps(state))
    message = refused(folder, "state.json", "refused, not read")
    assert "Arrow data file listed in state.json is missing" not in message


def test_save_to_disk_links_and_splits_out_of_the_folder(tmp_path: Path, outside: Path) -> None:
    folder = saved(tmp_path / "linked")
    state = json.loads((folder / "state.json").read_text())
    data = folder / state["_data_files"][0]["filename"]
    shutil.move(data, outside / "data.arrow")
    os.symlink(outside / "data.arrow", data)
    refused(folder, "symbolic link pointing out")
    splits = tmp_path / "splits"
    splits.mkdir()
    saved(outside / "train")
    (splits / "dataset_dict.json").write_text(json.dumps({"splits": ["../outside/train"]}))
    refused(splits, "dataset_dict.json", "climbs out")


@pytest.mark.parametrize(("suffix", "file_name", "says"), [
    ("jsonl", "../../outside/x.png", "climbs out"), ("jsonl", "/etc/passwd", "absolute path"),
    ("jsonl", "https://example.org/a.png", "is a URL"), ("csv", "../../outside/x.png", "climbs out")])
def test_image_folder_metadata_names_only_files_inside(tmp_path: Path, outside: Path, suffix: str, file_name: str,
                                                       says: str) -> None:
    folder = tmp_path / "imagefolder"
    (folder / "train").mkdir(parents=True)
    (folder / "train" / "a.png").write_bytes(PNG)
    rows = [{"file_name": "a.png", **ROW}, {"file_name": file_name, **ROW, "story_id": "s2"}]
    if suffix == "jsonl":
        text = "".join(json.dumps(row) + "\n" for row in rows)
    else:
        text = ",".join(rows[0]) + "\n" + "".join(",".join(row.values()) + "\n" for row in rows)
    (folder / "train" / f"metadata.{suffix}").write_text(text)
    refused(folder, f"metadata.{suffix}:{2 if suffix == 'jsonl' else 3} ", "field=file_name", says)


@pytest.mark.parametrize(("pattern", "says"), [("../outside/*.parquet", "climbs out"),
                                               ("/tmp/**/*.parquet", "absolute path"),
                                               ("hf://datasets/o/n/x.parquet", "is a URL")])
def test_card_data_files_name_only_files_inside(tmp_path: Path, pattern: str, says: str) -> None:
    folder = image_cells(tmp_path / "card", "x.png")
    (folder / "x.png").write_bytes(PNG)
    (folder / "README.md").write_text(f"---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n"
                                      f"    path: {pattern}\n---\n")
    refused(folder, "README.md", "field=configs", says)


def test_inside_itself(tmp_path: Path) -> None:
    (tmp_path / "root" / "a").mkdir(parents=True)
    (tmp_path / "blobs").mkdir()
    (tmp_path / "blobs" / "b").write_bytes(b"b")
    os.symlink(tmp_path / "blobs" / "b", tmp_path / "root" / "a" / "b")
    root = tmp_path / "root"
    assert inside(root, "a/b", links_into=(tmp_path / "blobs",)) == (tmp_path / "blobs" / "b").resolve()
    for name, kwargs in (("a/b", {}), ("../blobs/b", {"links_into": (tmp_path / "blobs",)}),
                         (str(tmp_path / "blobs" / "b"), {"absolute": True, "links_into": (tmp_path / "blobs",)}),
                         (str(root / "a"), {}), ("", {}), ("a\x00b", {})):
        with pytest.raises(InputFileError):
            inside(root, name, **kwargs)  # type: ignore[arg-type]


def test_two_folders_of_one_name_and_card_are_each_read_as_they_are(tmp_path: Path) -> None:
    """``datasets``' shared cache answered the second folder with the first one's rows; each read has its own."""
    answers = []
    for parent, answer in (("first", "The box"), ("second", "The bag")):
        folder = tmp_path / parent / "release"
        folder.mkdir(parents=True)
        pq.write_table(pa.table({**{key: [value] for key, value in ROW.items()}, "answer": [answer]}),
                       folder / "data.parquet")
        (folder / "README.md").write_text("---\nconfigs:\n- config_name: default\n  data_files: data.parquet\n---\n")
        answers.append(load_dataset(str(folder)).storyturns[0].turns[0].answers)
    assert answers == [["The box"], ["The bag"]]
