"""`commet report --by KEY`: accuracy grouped by per-turn metadata of a dataset with declared tasks."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.cli import app

TURNS = [
    {"story": "Sally puts the marble in the basket and goes out. Anne moves it to the box.",
     "question": "Where is the marble now, the basket or the box?", "answers": ["The box"],
     "meta": {"question_type": "reality", "order": 0}},
    {"question": "Where will Sally look first, the basket or the box?", "answers": ["The basket"],
     "meta": {"question_type": "first_order", "order": 1}},
]


@pytest.fixture
def run_db(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "dataset.json").write_text(json.dumps({
        "name": "mini-tomi", "license": "MIT", "categories": ["Belief"],
        "tasks": {"tomi": {"categories": ["Belief"], "mental_states": ["belief"]}}}))
    with (folder / "storyturns.jsonl").open("w") as out:
        for k in range(3):
            out.write(json.dumps({"id": f"s{k}", "task": "tomi", "category": "Belief", "turns": TURNS}) + "\n")
    replies = {"s0": ["The box", "The basket"], "s1": ["The box", "The box"], "s2": ["The basket", "The box"]}
    (tmp_path / "replies.json").write_text(json.dumps(replies))
    db = tmp_path / "r.sqlite"
    result = CliRunner().invoke(app, ["eval", "--dataset", str(folder), "--model", f"replay:{tmp_path / 'replies.json'}",
                                      "--db", str(db)])
    assert result.exit_code == 0, result.output
    return db, folder


def rows(db: Path, folder: Path, key: str) -> dict[str, list[str]]:
    """The ``--by KEY`` table as CSV rows keyed by the grouping value."""
    result = CliRunner().invoke(app, ["report", "--db", str(db), "--format", "csv", "--dataset", str(folder),
                                      "--by", key, "--table", f"by-{key}"])
    assert result.exit_code == 0, result.output
    reader = list(csv.reader(io.StringIO(result.stdout.strip())))
    header = reader[0]
    return {r[header.index(key)]: r for r in reader[1:]}


def test_by_question_type_counts_each_turn_under_its_label(run_db: tuple[Path, Path]) -> None:
    db, folder = run_db
    by_type = rows(db, folder, "question_type")
    assert set(by_type) == {"reality", "first_order"}
    # replies: reality right in s0 and s1, first-order right in s0 only; no story has one label throughout
    assert by_type["reality"][5:7] == ["3", "66.6667"] and by_type["first_order"][5:7] == ["3", "33.3333"]
    assert by_type["reality"][-2:] == ["-", "-"]
    by_task = rows(db, folder, "task")  # a StoryTurn field: story accuracy too (s0 is the only right story)
    assert set(by_task) == {"tomi"} and by_task["tomi"][5:7] == ["6", "50"] and by_task["tomi"][11:13] == ["3", "33.3333"]
    table = CliRunner().invoke(app, ["report", "--db", str(db), "--dataset", str(folder), "--by", "question_type"])
    assert table.exit_code == 0 and "Accuracy by question_type" in table.output


def test_metadata_key_needs_the_runs_dataset(run_db: tuple[Path, Path], tmp_path: Path) -> None:
    db, folder = run_db
    result = CliRunner().invoke(app, ["report", "--db", str(db), "--by", "question_type"])
    assert result.exit_code == 2 and "--dataset" in result.output
    result = CliRunner().invoke(app, ["report", "--db", str(db), "--by", "question_type", "--dataset", "sample"])
    assert result.exit_code == 2 and "other StoryTurns" in result.output


def test_a_run_that_showed_no_pictures_is_reported_with_its_dataset(tmp_path: Path) -> None:
    """A run with ``--images off`` records the dataset's hash without its pictures; ``--dataset`` takes that hash
    as the dataset's (it was refused as "made on other StoryTurns")."""
    from PIL import Image

    folder = tmp_path / "pictured"
    (folder / "images").mkdir(parents=True)
    Image.new("RGB", (32, 24), (200, 30, 30)).save(folder / "images" / "room.png")
    (folder / "dataset.json").write_text(json.dumps({
        "name": "pictured", "license": "MIT", "categories": ["Belief"],
        "tasks": {"tomi": {"categories": ["Belief"], "mental_states": ["belief"]}}}))
    turns = [{**TURNS[0], "image": "room.png"}, TURNS[1]]
    (folder / "storyturns.jsonl").write_text(json.dumps({"id": "p0", "task": "tomi", "category": "Belief",
                                                         "turns": turns}) + "\n")
    (tmp_path / "replies.json").write_text(json.dumps({"p0": ["The box", "The box"]}))
    db = tmp_path / "off.sqlite"
    for images in ("off", "on"):
        result = CliRunner().invoke(app, ["eval", "--dataset", str(folder), "--model",
                                          f"replay:{tmp_path / 'replies.json'}", "--db", str(db), "--images", images])
        assert result.exit_code == 0, result.output
    result = CliRunner().invoke(app, ["report", "--db", str(db), "--format", "csv", "--dataset", str(folder),
                                      "--by", "question_type", "--table", "by-question_type"])
    assert result.exit_code == 0, result.output
    table = list(csv.reader(io.StringIO(result.stdout.strip())))
    images = table[0].index("Images")
    assert sorted(row[images] for row in table[1:]) == ["off", "off", "on", "on"]
