"""Dataset folders, Hugging Face folders, convert, schema and stats."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from commet.cli import app
from commet.format import dataset_stats, storyturn_json_schema
from commet.sources import load_dataset, read_storyturns
from commet.sources.hf import save_hf


def test_hugging_face_round_trip_keeps_stories_and_pictures(pipe_dataset: Path, tmp_path: Path) -> None:
    original = read_storyturns(pipe_dataset)
    original.name = "tiny"
    folder = save_hf(original, tmp_path / "hf")
    assert (folder / "data" / "test-00000-of-00001.parquet").is_file() and (folder / "README.md").is_file()
    loaded = load_dataset(folder)
    assert [st.model_dump() for st in loaded] == [st.model_dump() for st in original]
    assert loaded.name == "tiny"
    assert loaded.image_bytes("snack:table:1") == original.image_bytes("snack:table:1")
    assert loaded.content_hash() == original.content_hash()


def test_hf_folder_written_by_datasets_itself_is_read(tmp_path: Path) -> None:
    import datasets

    rows = {"id": ["x1"], "task": ["sarcasm"], "category": ["NLCE"], "mental_states": [["emotion"]],
            "image_dependent": [False], "source": ["hub"], "meta": ["{}"], "image_files": [[]],
            "turns": [[{"story": "Dan gets soup.", "feedback": "", "question": "Is he happy or sad?", "image": "",
                        "answers": ["Sad"]}]]}
    datasets.Dataset.from_dict(rows).save_to_disk(str(tmp_path / "hub"))
    loaded = load_dataset(tmp_path / "hub")
    assert loaded.storyturns[0].turns[0].answers == ["Sad"]


def test_convert_cli_to_every_target(pipe_dataset: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    for target, out in (("jsonl", tmp_path / "folder"), ("jsonl", tmp_path / "one.jsonl"),
                        ("pipe", tmp_path / "pipe.jsonl"), ("pipe", tmp_path / "pipe.json"), ("hf", tmp_path / "hf")):
        result = runner.invoke(app, ["convert", str(pipe_dataset), "--to", target, "--out", str(out)])
        assert result.exit_code == 0, result.output
    assert (tmp_path / "folder" / "storyturns.jsonl").is_file()
    assert (tmp_path / "folder" / "images" / "snack_table_1.png").is_file()
    meta = json.loads((tmp_path / "folder" / "dataset.json").read_text())
    assert len(meta["taxonomy"]) == 18
    original = [st.model_dump() for st in read_storyturns(pipe_dataset)]
    for path in ("folder", "one.jsonl", "pipe.jsonl", "pipe.json", "hf"):
        assert [st.model_dump() for st in load_dataset(tmp_path / path)] == original, path


def test_convert_fills_a_task_for_bare_lists(tmp_path: Path) -> None:
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps([["Dan gets soup. | | Is he happy or sad? | | Sad"]]))
    result = CliRunner().invoke(app, ["convert", str(bare), "--to", "jsonl", "--out", str(tmp_path / "o.jsonl"),
                                      "--task", "sarcasm"])
    assert result.exit_code == 0, result.output
    st = load_dataset(tmp_path / "o.jsonl").storyturns[0]
    assert (st.task, st.category) == ("sarcasm", "NLCE")


def test_schema_is_valid_json_schema_and_accepts_a_line(pipe_dataset: Path) -> None:
    import jsonschema

    schema = storyturn_json_schema()
    line = json.loads(read_storyturns(pipe_dataset).storyturns[0].model_dump_json())
    jsonschema.validate(line, schema)
    result = CliRunner().invoke(app, ["schema"])
    assert json.loads(result.output)["title"] == "StoryTurn"


def test_stats_figures(pipe_dataset: Path) -> None:
    stats = dataset_stats(read_storyturns(pipe_dataset))
    assert (stats.storyturns, stats.questions, stats.images) == (2, 5, 1)
    assert (stats.turns_mean, stats.turns_max) == (2.5, 3)
    assert (stats.text_complete, stats.image_dependent) == (2, 0)
    assert stats.per_task["diverse_desire"] == 1 and stats.per_task["sarcasm"] == 0
    assert len([t for t in stats.per_task if t != "unknown"]) == 18
    assert stats.per_category == {"Belief": 1, "Desire": 1}
