"""Layouts the official CoMMET release (hf:rrchen2026/Theory_of_Mind_CoMMET, whose columns are not public) may
use, drawn from the paper's description of the booklet: one row per turn under other id and turn names, feedback
in right/wrong columns or keyed by the previous answer, display names, pictures under other names. Each is read
field by field as built, or refused with one located line naming what to pass (docs/official-data.md).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import datasets
import pytest
from PIL import Image
from typer.testing import CliRunner

from commet.cli import app
from commet.sources import load_dataset
from tests.test_hub_datasets import hub  # noqa: F401 - a fixture: the Hub offline, its caches in tmp_path

S1, Q1 = "Sally puts the marble in the basket and leaves.", "Where will Sally look for the marble?"
S2, Q2 = "Anne moves the marble to the box.", "Where is the marble now?"
BELIEF = {"task": "false_belief_location", "category": "Belief"}


def _rows(story: str = "story_id", turn: str = "turn", first: int = 1, **extra: dict[str, object]) -> list[dict]:
    """The two turns of one false-belief story, one row each, ``extra`` adding per-turn cells ({column: (t1, t2)})."""
    rows = [{story: "fb1", turn: first, "story": S1, "question": Q1, "answer": "basket"} | BELIEF,
            {story: "fb1", turn: first + 1, "story": S2, "question": Q2, "answer": "box"} | BELIEF]
    for column, values in extra.items():
        for row, value in zip(rows, values, strict=True):  # type: ignore[call-overload]
            row[column] = value
    return rows


def _folder(root: Path, rows: list[dict], split: str = "test") -> Path:
    path = root / "data" / f"{split}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    if split not in ("train", "test", "validation"):  # a split of another name is the card's to declare
        (root / "README.md").write_text(f"---\nconfigs:\n- config_name: default\n  data_files:\n  - split: {split}\n"
                                        f"    path: data/{split}.jsonl\n---\n", encoding="utf-8")
    return root


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 30, 30)).save(out, "PNG")
    return out.getvalue()


def _read(folder: Path) -> list:  # noqa: ANN401 - StoryTurns
    code = CliRunner().invoke(app, ["validate", str(folder)])
    assert code.exit_code == 0, code.output
    return list(load_dataset(str(folder)).storyturns)


def _refused(folder: Path, tmp_path: Path) -> str:
    """``validate`` and ``eval`` both refuse with one located line (exit 2), the store never written; the line."""
    db = tmp_path / "refused.sqlite"
    for command in (["validate", str(folder)], ["eval", "--dataset", str(folder), "--model", "baseline:first-option",
                                                "--db", str(db)]):
        result = CliRunner().invoke(app, command)
        assert result.exit_code == 2 and "Traceback" not in result.output, result.output
        errors = [line for line in result.output.splitlines() if ": error: " in line]
        assert len(errors) == 1 and "story=" in errors[0] and "field=" in errors[0], result.output
    assert not db.exists()
    return errors[0]


@pytest.mark.parametrize(("story", "turn", "first", "reverse"), [
    ("storyturn_id", "turn_number", 1, False), ("id", "turn", 0, False), ("story_id", "turn_id", 1, True),
    ("StoryID", "TurnIndex", 0, True)])
def test_rows_per_turn_under_other_id_and_turn_names(story: str, turn: str, first: int, reverse: bool,
                                                      tmp_path: Path, hub: Path) -> None:  # noqa: F811
    rows = _rows(story, turn, first)
    (st,) = _read(_folder(tmp_path / "d", rows[::-1] if reverse else rows))
    assert (st.id, st.task, str(st.category)) == ("fb1", "false_belief_location", "Belief")
    assert [(t.story, t.question, t.answers, t.feedback) for t in st.turns] == \
        [(S1, Q1, ["basket"], None), (S2, Q2, ["box"], None)]


@pytest.mark.parametrize(("right", "wrong"), [("feedback_right", "feedback_wrong"), ("if_right", "if_wrong"),
                                              ("IfCorrect", "IfIncorrect"), ("right_feedback", "wrong_feedback")])
def test_feedback_in_right_and_wrong_columns(right: str, wrong: str, tmp_path: Path, hub: Path) -> None:  # noqa: F811
    rows = _rows(**{right: (None, "Yes, the box."), wrong: ("", "No: Anne moved it to the box.")})
    (st,) = _read(_folder(tmp_path / "d", rows))
    assert st.turns[0].feedback is None
    feedback = st.turns[1].feedback
    assert feedback is not None and (feedback.right, feedback.wrong, feedback.always, feedback.by_answer) == \
        ("Yes, the box.", "No: Anne moved it to the box.", None, [])
    db = tmp_path / "run.sqlite"
    run = CliRunner().invoke(app, ["eval", "--dataset", str(tmp_path / "d"), "--model", "baseline:first-option",
                                   "--db", str(db), "--quiet"])
    assert run.exit_code == 0 and db.exists(), run.output


def test_feedback_as_json_text_keyed_by_the_previous_answer(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    rows = _rows(feedback=("", json.dumps({"basket": "You said basket.", "box": "You said box."})))
    rows[0]["answer"] = ["basket", "box"]  # a branch point: the next turn's feedback is keyed by its answer
    (st,) = _read(_folder(tmp_path / "d", rows))
    feedback = st.turns[1].feedback
    assert feedback is not None and feedback.always is None
    assert [(b.answer, b.text) for b in feedback.by_answer] == [("basket", "You said basket."),
                                                                 ("box", "You said box.")]


def test_feedback_as_json_text_of_right_and_wrong(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    rows = _rows(feedback=(None, json.dumps({"correct": "Well done.", "incorrect": "Look again."})))
    (st,) = _read(_folder(tmp_path / "d", rows))
    feedback = st.turns[1].feedback
    assert feedback is not None and (feedback.right, feedback.wrong, feedback.always) == \
        ("Well done.", "Look again.", None)


@pytest.mark.parametrize(("cells", "says"), [
    ({"feedback": ("", "If right: yes"), "if_wrong": ("", "no")}, "not guessed"),
    ({"feedback": ("", json.dumps({"right": "yes", "box": "no"}))}, "mix right/wrong"),
    ({"feedback": ("", '{"right": "yes",}')}, "not one"),
    ({"feedback": ("", json.dumps({"basket": "yes", "box": "no"}))}, "not an expected answer"),
])
def test_feedback_that_cannot_be_read_for_sure_is_refused(cells: dict, says: str, tmp_path: Path,
                                                           hub: Path) -> None:  # noqa: F811
    line = _refused(_folder(tmp_path / "d", _rows(**cells)), tmp_path)
    assert "turn=1" in line and "field=" in line and says in line, line


def test_display_names_and_mental_states_as_text(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    rows = _rows(task=("False Belief (Location)",) * 2, mental_states=("Belief, Knowledge",) * 2)
    (st,) = _read(_folder(tmp_path / "d", rows))
    assert (st.task, str(st.category), [str(s) for s in st.mental_states or []]) == \
        ("false_belief_location", "Belief", ["Belief", "Knowledge"])


@pytest.mark.parametrize("column", ["img", "picture", "image_file"])
def test_a_picture_column_under_other_names_puts_the_picture_on_its_turn(column: str, tmp_path: Path,
                                                                         hub: Path) -> None:  # noqa: F811
    folder = _folder(tmp_path / "d", _rows(**{column: ("marble.png", None)}))
    (folder / "data" / "marble.png").write_bytes(_png())
    (st,) = _read(folder)
    assert [t.image for t in st.turns] == ["marble.png", None]


def test_pipe_text_per_turn_is_refused_naming_the_mapping_that_reads_it(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    rows = [{"story_id": "fb1", "turn": k, "text": f"{s} | | {q} | | {a}"} | BELIEF
            for k, (s, q, a) in enumerate([(S1, Q1, "basket"), (S2, Q2, "box")], 1)]
    folder = _folder(tmp_path / "d", rows[::-1])
    line = _refused(folder, tmp_path)
    assert "write (it reads the table" in line and "--columns turns=text,id=story_id,turn=turn" in line, line
    result = CliRunner().invoke(app, ["validate", str(folder), "--columns", "turns=text"])
    assert result.exit_code == 0 and "the rows of a story id 'story_id' joined" in result.output, result.output
    (st,) = load_dataset(str(folder), columns="turns=text").storyturns  # rows of one story joined in turn order
    assert (st.id, st.task) == ("fb1", "false_belief_location")
    assert [(t.story, t.question, t.answers) for t in st.turns] == [(S1, Q1, ["basket"]), (S2, Q2, ["box"])]


def test_splits_named_for_tasks_give_their_storyturns_the_task(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    rows = [{k: v for k, v in row.items() if k != "task"} for row in _rows()]
    sarcasm = {"story_id": "sc1", "turn": 1, "story": "It rains. Tom says: what lovely weather.",
               "question": "What does Tom mean?", "answer": "the opposite", "category": "NLC"}
    folder = _folder(tmp_path / "d", rows, split="false_belief_location")
    _folder(tmp_path / "d", [sarcasm], split="Sarcasm")
    (folder / "README.md").write_text("---\nconfigs:\n- config_name: default\n  data_files:\n"
                                      "  - split: false_belief_location\n    path: data/false_belief_location.jsonl\n"
                                      "  - split: Sarcasm\n    path: data/Sarcasm.jsonl\n---\n", encoding="utf-8")
    stories = {st.id: st for st in _read(folder)}
    assert {i: (st.task, str(st.category), len(st.turns)) for i, st in stories.items()} == \
        {"fb1": ("false_belief_location", "Belief", 2), "sc1": ("sarcasm", "NLC", 1)}
    assert [t.question for t in stories["fb1"].turns] == [Q1, Q2]
    line = _refused(_folder(tmp_path / "plain", rows), tmp_path)  # a split named for no task says none
    assert "no task column" in line and "--adapter" in line, line


def test_pictures_listed_per_story_with_their_turn_numbers_are_refused(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    image = {"bytes": _png(), "path": "p.png"}
    table = datasets.Dataset.from_dict(
        {"story_id": ["fb1"], "stories": [[S1, S2]], "questions": [[Q1, Q2]], "answers": [["basket", "box"]],
         "images": [[image]], "image_turns": [[1]], **{k: [v] for k, v in BELIEF.items()}},
        features=datasets.Features({"story_id": datasets.Value("string"),
                                    **{c: datasets.Sequence(datasets.Value("string"))
                                       for c in ("stories", "questions", "answers")},
                                    "images": datasets.Sequence(datasets.Image()),
                                    "image_turns": datasets.Sequence(datasets.Value("int64")),
                                    "task": datasets.Value("string"), "category": datasets.Value("string")}))
    (tmp_path / "d" / "data").mkdir(parents=True)
    table.to_parquet(str(tmp_path / "d" / "data" / "test.parquet"))
    line = _refused(tmp_path / "d", tmp_path)
    assert "field=images" in line and "--columns turn=COLUMN" in line and "adapter" in line, line
    adapter = tmp_path / "pictures.py"
    adapter.write_text(PICTURES_BY_TURN, encoding="utf-8")
    (st,) = load_dataset(str(tmp_path / "d"), adapter=f"{adapter}:storyturns").storyturns
    assert [(t.story, t.question, t.answers, t.image is not None) for t in st.turns] == \
        [(S1, Q1, ["basket"], True), (S2, Q2, ["box"], False)]


# The adapters docs/official-data.md shows for the layouts refused above ("Layouts drawn from the paper").
PIPE_PER_TURN = '''
def storyturns(rows):
    stories = {}
    for row in sorted(rows, key=lambda row: (row["story_id"], int(row["turn"]))):
        story = stories.setdefault(row["story_id"], {"id": row["story_id"], "task": row["task"],
                                                     "category": row["category"], "storyturn": []})
        story["storyturn"].append(row["text"])
    return list(stories.values())
'''
PICTURES_BY_TURN = '''
def storyturns(record):
    shown = dict(zip(record["image_turns"], record["images"]))  # turn numbers counted from 1
    return {"id": record["story_id"], "task": record["task"], "category": record["category"], "mental_states": [],
            "image_dependent": bool(shown), "source": "CoMMET",
            "turns": [{"story": s, "question": q, "answers": [a], "image": shown.get(k + 1)}
                      for k, (s, q, a) in enumerate(zip(record["stories"], record["questions"], record["answers"]))]}
'''


def test_the_adapters_the_docs_show_read_the_refused_layouts(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    docs = (Path(__file__).parent.parent / "docs" / "official-data.md").read_text(encoding="utf-8")
    pipe = [{"story_id": "fb1", "turn": k, "text": f"{s} | | {q} | | {a}"} | BELIEF
            for k, (s, q, a) in reversed(list(enumerate([(S1, Q1, "basket"), (S2, Q2, "box")], 1)))]
    for name, source, folder in (("pipe", PIPE_PER_TURN, _folder(tmp_path / "pipe", pipe)),):
        assert source.strip() in docs, name
        adapter = tmp_path / f"{name}.py"
        adapter.write_text(source, encoding="utf-8")
        result = CliRunner().invoke(app, ["validate", str(folder), "--adapter", f"{adapter}:storyturns"])
        assert result.exit_code == 0, result.output
        (st,) = load_dataset(str(folder), adapter=f"{adapter}:storyturns").storyturns
        assert (st.id, st.task, str(st.category)) == ("fb1", "false_belief_location", "Belief")
        assert [(t.story, t.question, t.answers) for t in st.turns] == [(S1, Q1, ["basket"]), (S2, Q2, ["box"])]
    assert PICTURES_BY_TURN.strip() in docs
