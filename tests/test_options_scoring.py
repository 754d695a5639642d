"""Options and letters end to end: the pipe importer reads labelled options, the rules judge
recognises letters, option text and Chinese answers, and `commet eval` scores exactly-right
replays at 100 % on a real SQLite store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.cli import app
from commet.format.model import Option
from commet.sources import load_dataset
from commet.store import Store

PIPE_STORIES = [
    {"id": "en-letters", "task": "false_belief_location", "category": "Belief", "storyturn": [
        "Ana puts her ball in the basket and goes outside. Ben moves it to the box. | | Where will Ana look for "
        "her ball? A. the basket B. the box | | A",
        " | If right: Yes.; If wrong: Ana did not see Ben. | Where is the ball now? (a) in the basket (b) in the box "
        "| | b",
    ]},
    {"id": "en-lines", "task": "implicit_false_belief", "category": "Belief", "storyturn": [
        "Kai hides a sticker under the cup. | | What does Kai think is under the cup?\nA) a sticker\nB) a coin"
        "\nC) nothing | | A) a sticker",
    ]},
]
CANONICAL = [
    {"id": "zh", "task": "false_belief_location", "category": "Belief", "source": "tombench-like", "turns": [
        {"story": "小明把球放进篮子里，然后出去了。小红把球移到了盒子里。", "question": "小明回来后会去哪里找球？",
         "options": [{"label": "A", "text": "篮子里"}, {"label": "B", "text": "盒子里"}], "answers": ["A"]},
        {"question": "球现在在哪里？", "options": [{"label": "A", "text": "篮子里"}, {"label": "B", "text": "盒子里"}],
         "answers": ["盒子里"]},
    ]},
    {"id": "en-options", "task": "diverse_desire", "category": "Desire", "turns": [
        {"story": "Sam may have one snack.", "question": "Which snack will Sam pick?",
         "options": [{"label": "A", "text": "the apple"}, {"label": "B", "text": "the chocolate"},
                     {"label": "C", "text": "the banana"}], "answers": ["the chocolate"]},
    ]},
]
LETTERS = {"en-letters": ["A", "(b)"], "en-lines": ["A"], "zh": ["A", "B"], "en-options": ["Option B"]}
TEXTS = {"en-letters": ["The basket.", "In the box."], "en-lines": ["A sticker"], "zh": ["篮子里", "盒子里。"],
         "en-options": ["The chocolate."]}
MIXED = {"en-letters": ["a", "B. the box"], "en-lines": ["a) a sticker"], "zh": ["答案是A", "B. 盒子里"],
         "en-options": ["b)"]}
WRONG = {"en-letters": ["B", "(a)"], "en-lines": ["C"], "zh": ["盒子里", "A"], "en-options": ["The apple."]}


@pytest.fixture
def options_dataset(tmp_path: Path) -> Path:
    folder = tmp_path / "opts"
    folder.mkdir()
    lines = [json.dumps(s, ensure_ascii=False) for s in PIPE_STORIES + CANONICAL]
    (folder / "storyturns.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_pipe_importer_reads_labelled_options(options_dataset: Path) -> None:
    data = load_dataset(options_dataset)
    first = data.get("en-letters").turns
    assert first[0].options == [Option(label="A", text="the basket"), Option(label="B", text="the box")]
    assert first[1].options == [Option(label="a", text="in the basket"), Option(label="b", text="in the box")]
    assert data.get("en-lines").turns[0].options == [Option(label="A", text="a sticker"),
                                                     Option(label="B", text="a coin"),
                                                     Option(label="C", text="nothing")]


@pytest.mark.parametrize(("replies", "accuracy"), [(LETTERS, 1.0), (TEXTS, 1.0), (MIXED, 1.0), (WRONG, 0.0)])
def test_eval_scores_letters_chinese_and_option_text(options_dataset: Path, tmp_path: Path,
                                                     replies: dict[str, list[str]], accuracy: float) -> None:
    replay = tmp_path / "replies.json"
    replay.write_text(json.dumps(replies, ensure_ascii=False), encoding="utf-8")
    db = tmp_path / "r.sqlite"
    result = CliRunner().invoke(app, ["eval", "--model", f"replay:{replay}", "--dataset", str(options_dataset),
                                      "--db", str(db), "--run", "r", "--quiet"])
    assert result.exit_code == 0, result.output
    with Store(db) as store:
        run = store.get_run("r")
        assert run is not None
        turns = store.turn_rows(run.id)
        stories = store.story_rows(run.id)
    assert len(turns) == 6 and all(t.outcome != "undecided" for t in turns), turns
    assert [s.status for s in stories] == ["done"] * 4
    assert sum(s.correct is True for s in stories) / len(stories) == accuracy


def test_options_not_in_the_question_are_shown_to_the_model(options_dataset: Path, tmp_path: Path) -> None:
    db = tmp_path / "b.sqlite"
    result = CliRunner().invoke(app, ["eval", "--model", "baseline:first-option", "--dataset", str(options_dataset),
                                      "--db", str(db), "--run", "b", "--quiet"])
    assert result.exit_code == 0, result.output
    with Store(db) as store:
        run = store.get_run("b")
        assert run is not None
        turns = {(t.story_id, t.turn): t.columns() for t in store.turn_rows(run.id)}
    shown = turns[("en-options", 0)]
    assert shown["prompt"].endswith("Which snack will Sam pick?\n\nA. the apple\nB. the chocolate\nC. the banana")
    assert shown["response"] == "The apple." and shown["correct"] == 0  # the first option shown, decided wrong
    assert turns[("en-letters", 0)]["prompt"].endswith("A. the basket B. the box")  # already in the question
    assert turns[("en-letters", 0)]["response"] == "The basket." and turns[("en-letters", 0)]["correct"] == 1


def test_schema_shows_options_rubric_and_turn_metadata() -> None:
    result = CliRunner().invoke(app, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.output)
    turn = schema["$defs"]["Turn"]["properties"]
    assert {"options", "rubric", "meta"} <= set(turn)
    assert schema["$defs"]["Option"]["required"] == ["text"]
    assert set(schema["$defs"]["Option"]["properties"]) == {"label", "text"}
    assert schema["$defs"]["Rubric"]["required"] == ["key_inference"]
    assert set(schema["$defs"]["Rubric"]["properties"]) == {"key_inference", "false_inferences"}
