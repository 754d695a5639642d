"""Layout (d), rows holding a StoryTurn's turns as lists: right/wrong feedback given as lists and pictures listed per
story are read where the mapping is certain, and refused with one located line naming what to write where not.

Feedback is said before a later question about the answer before it, so a right (or wrong) list of one item per
question (the first empty) or of one item per later question places each text for sure; a list whose first item
has text could mean the feedback after each answer, and is refused. A picture list of one item per question
(null for a turn without a picture) puts item k on turn k; a list of another length is refused.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
import typer
from click.testing import CliRunner
from PIL import Image

from commet.cli import app as typer_app
from commet.sources.loading import load_dataset

app = typer.main.get_command(typer_app)
QUESTIONS = ["Where is the ball?", "Where will Anna look for it?", "What colour is the ball?"]
LOCATED = re.compile(r"^(?P<file>.+?):(?P<line>\d+) story=(?P<story>\S+) turn=(?P<turn>\S+) field=(?P<field>\S+): "
                     r"error: (?P<message>.+)$")


def _png(colour: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (6, 6), colour).save(out, "PNG")
    return out.getvalue()


def _table(folder: Path, **columns: object) -> Path:
    """One row per StoryTurn, its lists as JSON text in a CSV file; ``columns`` overrides or adds cells."""
    row: dict[str, object] = {"id": "s1", "task": "false_belief_location", "category": "Belief",
                              "image_dependent": "true",
                              "stories": json.dumps(["Anna puts the red ball in the box and leaves.", "", ""]),
                              "questions": json.dumps(QUESTIONS), "answers": json.dumps([["box"], ["box"], ["red"]])}
    row.update(columns)
    (folder / "data").mkdir(parents=True)
    (folder / "red.png").write_bytes(_png((255, 0, 0)))
    (folder / "blue.png").write_bytes(_png((0, 0, 255)))
    with (folder / "data" / "test.csv").open("w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=list(row))
        writer.writeheader()
        writer.writerow({k: v if isinstance(v, str) else json.dumps(v) for k, v in row.items()})
    return folder


@pytest.mark.parametrize("right, wrong", [
    (["Yes.", "Right again."], ["No.", "Wrong again."]),  # one per later question
    (["", "Yes.", "Right again."], [None, "No.", "Wrong again."]),  # one per question, the first empty
])
def test_right_and_wrong_feedback_lists_are_read(tmp_path: Path, right: list[object], wrong: list[object]) -> None:
    data = load_dataset(str(_table(tmp_path, feedback_right=right, feedback_wrong=wrong)))
    turns = data.storyturns[0].turns
    assert turns[0].feedback is None
    assert (turns[1].feedback.right, turns[1].feedback.wrong) == ("Yes.", "No.")  # type: ignore[union-attr]
    assert (turns[2].feedback.right, turns[2].feedback.wrong) == ("Right again.", "Wrong again.")  # type: ignore[union-attr]
    table = data.tables_read[0]
    assert "feedback_right" not in table.unread and "feedback_wrong" not in table.unread
    assert "feedback_right=feedback_right" in (data.origin.layout if data.origin else "")


def test_pictures_listed_per_story_go_on_their_turns(tmp_path: Path) -> None:
    data = load_dataset(str(_table(tmp_path, images=[None, "blue.png", "red.png"])))
    st = data.storyturns[0]
    assert [t.image for t in st.turns] == [None, "blue.png", "red.png"]
    assert data.images["red.png"] == (tmp_path / "red.png").read_bytes()
    assert data.images["blue.png"] == (tmp_path / "blue.png").read_bytes()


def test_pictures_listed_per_story_as_an_image_sequence_column(tmp_path: Path) -> None:
    """The Hub's way: a ``Sequence(Image())`` column holding the picture bytes, one item per question."""
    datasets = pytest.importorskip("datasets")
    red, blue = _png((255, 0, 0)), _png((0, 0, 255))
    features = datasets.Features({
        "id": datasets.Value("string"), "task": datasets.Value("string"), "category": datasets.Value("string"),
        "image_dependent": datasets.Value("bool"), "stories": [datasets.Value("string")],
        "questions": [datasets.Value("string")], "answers": [[datasets.Value("string")]],
        "feedback_right": [datasets.Value("string")], "feedback_wrong": [datasets.Value("string")],
        "images": [datasets.Image()]})
    rows = [{"id": "s1", "task": "false_belief_location", "category": "Belief", "image_dependent": True,
             "stories": ["Anna puts the red ball in the box and leaves.", "", ""], "questions": QUESTIONS,
             "answers": [["box"], ["box"], ["red"]], "feedback_right": ["Yes.", "Right again."],
             "feedback_wrong": ["No.", "Wrong again."],
             "images": [{"bytes": blue, "path": "first.png"}, None, {"bytes": red, "path": "third.png"}]}]
    (tmp_path / "data").mkdir()
    datasets.Dataset.from_list(rows, features=features).to_parquet(str(tmp_path / "data" / "test.parquet"))
    st = load_dataset(str(tmp_path)).storyturns[0]
    assert [t.image for t in st.turns] == ["first.png", None, "third.png"]
    assert st.turns[2].feedback is not None and st.turns[2].feedback.wrong == "Wrong again."
    assert st.turns[1].feedback is not None and st.turns[1].feedback.right == "Yes."


def test_feedback_as_a_list_of_right_wrong_structs(tmp_path: Path) -> None:
    """One ``feedbacks`` column, a list of ``{right, wrong}`` structs per StoryTurn (null for the first question)."""
    datasets = pytest.importorskip("datasets")
    text = datasets.Value("string")
    features = datasets.Features({
        "id": text, "task": text, "category": text, "stories": [text], "questions": [text], "answers": [[text]],
        "feedbacks": [{"right": text, "wrong": text}]})
    rows = [{"id": "s1", "task": "false_belief_location", "category": "Belief",
             "stories": ["Anna puts the red ball in the box and leaves.", "", ""], "questions": QUESTIONS,
             "answers": [["box"], ["box"], ["red"]],
             "feedbacks": [None, {"right": "Yes.", "wrong": "No."}, {"right": "Right again.", "wrong": "Wrong."}]}]
    (tmp_path / "data").mkdir()
    datasets.Dataset.from_list(rows, features=features).to_parquet(str(tmp_path / "data" / "test.parquet"))
    data = load_dataset(str(tmp_path))
    turns = data.storyturns[0].turns
    assert turns[0].feedback is None and turns[1].feedback is not None and turns[2].feedback is not None
    assert (turns[1].feedback.right, turns[2].feedback.wrong) == ("Yes.", "Wrong.")
    assert "feedbacks" not in data.tables_read[0].unread


@pytest.mark.parametrize("columns, field, turn, says", [
    ({"feedback_right": ["Yes.", "Right.", "Right again."]}, "feedback_right", "0",
     "or give 2 items, one per later question"),
    ({"feedback_wrong": "No."}, "feedback_wrong", "-", "must be a list of 3 (one per question) or 2"),
    ({"feedback_right": ["Yes."]}, "feedback_right", "-", "must be a list of 3 (one per question) or 2"),
    ({"images": ["blue.png", "red.png"]}, "images", "-",
     "a list of 2 pictures for 3 questions: which turn shows each is not certain; list one item per question"),
    ({"images": ["blue.png", "red.png", "red.png", "blue.png"]}, "images", "-", "a list of 4 pictures for 3"),
    # a column of numbers beside the pictures may place them otherwise (image_turns [3, 2, 1]): not guessed
    ({"images": ["red.png", "blue.png", "red.png"], "image_turns": [3, 2, 1]}, "images", "-",
     "column 'image_turns' holds a number for each picture"),
    # a list holding a NaN was not taken for a list: the row became one turn asking '["Where is the ball?", NaN]'
    ({"questions": '["Where is the ball?", NaN, "What colour is the ball?"]'}, "questions", "1",
     "item 2 of the questions is nan, not a question's text"),
])
def test_what_cannot_be_placed_for_sure_is_one_located_line(tmp_path: Path, columns: dict[str, object], field: str,
                                                             turn: str, says: str) -> None:
    folder = _table(tmp_path / "release", **columns)
    db = tmp_path / "run.sqlite"
    commands = [["validate", str(folder)]]
    if field == "images":  # eval refuses it the same, and writes no store (once is enough: the load is shared)
        commands.append(["eval", "--model", "baseline:first-option", "--dataset", str(folder), "--db", str(db),
                         "--quiet"])
    for argv in commands:
        result = CliRunner().invoke(app, argv)
        lines = [line for line in result.output.splitlines() if LOCATED.match(line)]
        assert result.exit_code == 2 and len(lines) == 1 and "Traceback" not in result.output, result.output
        found = LOCATED.match(lines[0])
        assert found is not None and found["file"].endswith("data/test.csv") and found["line"] == "1"
        assert (found["story"], found["turn"], found["field"]) == ("s1", turn, field), lines[0]
        assert says in found["message"], lines[0]
        assert "--adapter FILE.py:FUNCTION" in found["message"] or field == "questions", lines[0]
    assert not db.exists()
