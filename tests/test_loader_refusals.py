"""What a table loader cannot read for sure is refused with one located line, never loaded wrong: data files
``datasets`` would leave unread, pictures whose names match no turn, answer keys that are none of the options,
and ``datasets``' own refusals said with the file and line they come from.
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

ROW = {"story_id": "s1", "story": "Sam puts the ball in the box. Ann moves it.", "task": "false_belief_location",
       "category": "Belief"}


def _rows(story: str, options: list[str] | None = None, answers: tuple[str, str] = ("the box", "the bag")) -> list[dict]:
    return [ROW | {"story_id": story, "turn": k, "question": f"Where is the ball, turn {k}?", "answer": answer,
                   "options": options} for k, answer in enumerate(answers)]


def _write(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _validate(target: Path | str, *extra: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["validate", str(target), *extra])
    assert "Traceback" not in result.output
    return result.exit_code, result.stdout, result.stderr


def _cache_entries(root: Path) -> list[Path]:
    folder = root / "datasets-cache" / "commet-folders"
    return sorted(folder.rglob("*.arrow")) if folder.exists() else []


# ------------------------------------------------------------------------------------- data files left unread


@pytest.mark.parametrize(("extra", "named"), [
    ("data/extra.jsonl", "data/extra.jsonl"),  # beside the split-named file
    ("stories.jsonl", "stories.jsonl"),  # at the top of the folder
    ("data/more/extra.jsonl", "data/more/extra.jsonl"),  # in a folder below
    ("data/extra.csv", "data/extra.csv"),  # another kind of table
])
def test_a_data_file_datasets_would_not_read_is_refused_naming_it(extra: str, named: str, tmp_path: Path,
                                                                  hub: Path) -> None:  # noqa: F811
    folder = tmp_path / "release"
    _write(folder / "data" / "test.jsonl", _rows("s1"))
    target = folder / extra
    if extra.endswith(".csv"):
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("story_id,turn,question,answer\ns9,0,Q?,A\n", encoding="utf-8")
    else:
        _write(target, _rows("s2"))
    code, out, err = _validate(folder)
    assert code == 2 and len(out.splitlines()) == 1 and "1 errors" in err, out + err
    assert out.startswith(f"{folder / named}:0 ") and f"datasets would not read {named} " in out
    assert "it reads data/test.jsonl" in out and "dataset card" in out and "load one file by its path" in out
    assert _cache_entries(tmp_path) == []  # refused before anything was read: no rows prepared, none cached


def test_a_card_naming_every_file_reads_them_all_and_one_file_loads_by_its_path(tmp_path: Path,
                                                                               hub: Path) -> None:  # noqa: F811
    folder = tmp_path / "release"
    _write(folder / "data" / "test.jsonl", _rows("s1"))
    _write(folder / "data" / "extra.jsonl", _rows("s2"))
    (folder / "README.md").write_text("---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n"
                                      "    path: data/*.jsonl\n---\n", encoding="utf-8")
    assert sorted(st.id for st in load_dataset(folder)) == ["s1", "s2"]
    assert [st.id for st in load_dataset(folder / "data" / "extra.jsonl", columns="id=story_id")] == ["s2"]


def test_files_all_read_and_datasets_own_json_files_are_not_counted(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    folder = tmp_path / "shards"
    _write(folder / "data" / "test-00000-of-00002.jsonl", _rows("s1"))
    _write(folder / "data" / "test-00001-of-00002.jsonl", _rows("s2"))
    (folder / "dataset.json").write_text(json.dumps({"name": "shards"}), encoding="utf-8")
    assert sorted(st.id for st in load_dataset(folder)) == ["s1", "s2"]


def test_a_json_file_of_metadata_beside_the_split_files_is_no_unread_data(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    """``croissant.json`` or a label map beside ``data/test.jsonl`` holds no rows (one object that is no table of
    columns): it is not refused as data datasets would not read; an object of equal columns is rows, refused."""
    folder = tmp_path / "release"
    _write(folder / "data" / "test.jsonl", _rows("s1"))
    (folder / "croissant.json").write_text(json.dumps({"@context": {"@vocab": "https://schema.org/"},
                                                       "name": "release", "distribution": [{"name": "x"}]}))
    (folder / "data" / "labels.json").write_text(json.dumps({"0": "box", "1": "bag"}))
    assert [st.id for st in load_dataset(folder)] == ["s1"]
    (folder / "data" / "columns.json").write_text(json.dumps({"story_id": ["s9"], "question": ["Q?"]}))
    code, out, _ = _validate(folder)
    assert code == 2 and "datasets would not read data/columns.json" in out, out


# ------------------------------------------------------------------------------------- datasets' own refusals


def test_a_line_datasets_cannot_parse_is_located_at_its_file_and_line(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    folder = tmp_path / "broken"
    path = _write(folder / "data" / "test.jsonl", _rows("s1") + _rows("s2"))
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2][:60]  # line 3 cut short
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, _ = _validate(folder)
    assert code == 2 and out.startswith(f"{path}:3 ") and "line 3 is not JSON" in out, out
    assert "An error occurred while generating" not in out


def test_splits_of_different_column_types_say_the_cast_and_what_to_do(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    folder = tmp_path / "splits"
    _write(folder / "data" / "test.jsonl", _rows("s1", ["the box", "the bag"]))
    _write(folder / "data" / "train.jsonl", _rows("s2", None))
    code, out, _ = _validate(folder)
    assert code == 2 and "Couldn't cast" in out and "the same columns and types" in out, out
    assert "An error occurred while generating" not in out


# ------------------------------------------------------------------------------------- pictures named by turns


def _png(colour: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 8), colour).save(out, format="PNG")
    return out.getvalue()


def _picture_columns(folder: Path, names: tuple[str | None, str | None]) -> Path:
    turns = ["Part 0. | | Where is it? | cat.png | the box", "Part 1. | | And now? |  | the bag",
             "Part 2. | | Where next? | dog.png | the box"]
    row = {"id": "p1", "task": "false_belief_location", "category": "Belief", "storyturn": turns,
           "Image_1": {"bytes": _png((200, 0, 0)), "path": names[0]},
           "Image_2": {"bytes": _png((0, 0, 200)), "path": names[1]}}
    features = datasets.Features({"id": datasets.Value("string"), "task": datasets.Value("string"),
                                  "category": datasets.Value("string"),
                                  "storyturn": datasets.Sequence(datasets.Value("string")),
                                  "Image_1": datasets.Image(), "Image_2": datasets.Image()})
    (folder / "data").mkdir(parents=True)
    datasets.Dataset.from_list([row], features=features).to_parquet(str(folder / "data" / "test.parquet"))
    return folder


@pytest.mark.parametrize("names", [("dog_photo.png", "cat_photo.png"), ("a.png", "b.png"), ("cat.png", "b.png")])
def test_pictures_named_otherwise_than_the_turns_say_are_refused_not_put_in_order(names: tuple[str, str],
                                                                                tmp_path: Path,
                                                                                hub: Path) -> None:  # noqa: F811
    folder = _picture_columns(tmp_path / "pics", names)
    code, out, _ = _validate(folder)
    unmatched, turn = ("dog.png", 2) if names[0] == "cat.png" else ("cat.png", 0)
    assert code == 2 and f":1 story=p1 turn={turn} field=Image_1" in out, out
    assert f"turn {turn} names picture {unmatched!r} and no picture of this row is named so" in out


@pytest.mark.parametrize("names", [("dog.png", "cat.png"), (None, None)])
def test_pictures_named_as_the_turns_say_or_unnamed_are_matched(names: tuple[str | None, str | None],
                                                                tmp_path: Path, hub: Path) -> None:  # noqa: F811
    data = load_dataset(_picture_columns(tmp_path / "pics", names))
    st = data.storyturns[0]
    red, blue = _png((200, 0, 0)), _png((0, 0, 200))
    cat, dog = (blue, red) if names[0] == "dog.png" else (red, blue)  # by name; in column order when unnamed
    assert data.image_bytes(st.turns[0].image) == cat and data.image_bytes(st.turns[2].image) == dog


# ------------------------------------------------------------------------------------- answer keys and options


@pytest.mark.parametrize(("answers", "refused"), [
    (("0", "1"), "'0'"), (("1", "2"), "'1'"),  # option numbers, from 0 or from 1: never guessed
    (("A", "B"), "'A'"),  # letters of options that carry none
    (("the basket", "the bag"), "'the basket'"),  # not an option at all
])
def test_a_table_answer_key_that_is_no_option_is_refused(answers: tuple[str, str], refused: str, tmp_path: Path,
                                                         hub: Path) -> None:  # noqa: F811
    folder = tmp_path / "keys"
    _write(folder / "data" / "test.jsonl", _rows("s1", ["the box", "the bag"], answers))
    code, out, _ = _validate(folder)
    assert code == 2 and f"story=s1 turn=0 field=answer: error: answer {refused} is none of this turn's options" \
        in out, out
    if refused in ("'0'", "'1'", "'A'"):
        assert "whether numbers count from 0 or 1 is not guessed" in out and "--adapter" in out


def test_a_table_answer_key_of_option_texts_loads(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    folder = tmp_path / "keys"
    _write(folder / "data" / "test.jsonl", _rows("s1", ["the box", "the bag"], ("The box", "the bag.")))
    code, out, _ = _validate(folder)
    assert code == 0 and "error" not in out, out


CANONICAL = {"id": "s1", "task": "false_belief_location", "category": "Belief",
             "turns": [{"story": "Sam puts the ball in the box.", "question": "Where will Sam look?",
                        "options": [{"label": "A", "text": "the box"}, {"label": "B", "text": "the bag"}]}]}


@pytest.mark.parametrize(("answer", "ok"), [
    ("A", True), ("(b)", True), ("B. the bag", True), ("the bag", True), ("The Box", True),
    ("In the bag", True), ("Sam will look in the box.", True),  # one option named within the answer's words
    ("C", False), ("the basket", False), ("A. the bag", False), ("1", False),
    ("Not the box but the bag", False), ("The box or the bag", False),  # two options named: which is a guess
])
def test_a_canonical_answer_must_be_an_option_text_or_label(answer: str, ok: bool, tmp_path: Path) -> None:
    st = json.loads(json.dumps(CANONICAL))
    st["turns"][0]["answers"] = [answer]
    path = tmp_path / "storyturns.jsonl"
    path.write_text(json.dumps(st) + "\n", encoding="utf-8")
    code, out, _ = _validate(path)
    if ok:
        assert code == 0, out
    else:
        assert code == 2 and f"{path}:1 story=s1 turn=0 field=answer: error: answer {answer!r} is none of this " \
                             "turn's options (A. the box; B. the bag)" in out, out


@pytest.mark.parametrize(("answer", "ok"), [("On the kitchen table.", True), ("In the kitchen", True),
                                            ("The kitchen or the kitchen table", False)])
def test_an_option_inside_a_longer_one_is_not_named_twice(answer: str, ok: bool, tmp_path: Path) -> None:
    st = json.loads(json.dumps(CANONICAL))
    st["turns"][0].update(options=[{"label": "A", "text": "the kitchen"}, {"label": "B", "text": "the kitchen table"}],
                          answers=[answer])
    path = tmp_path / "storyturns.jsonl"
    path.write_text(json.dumps(st) + "\n", encoding="utf-8")
    code, out, _ = _validate(path)
    assert (code == 0) == ok, out


def test_a_table_options_list_whose_items_carry_their_labels(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    """["A. the box", "B. the bag"] with the answer "B": the items' own labels, as one string of them would give;
    they were kept as unlabelled texts, and the letter refused."""
    folder = tmp_path / "labelled"
    _write(folder / "data" / "test.jsonl", _rows("s1", ["A. the box", "C. the bag"], ("A", "C")))
    code, out, _ = _validate(folder)
    assert code == 2, out  # A and C are no labels in sequence: texts, and the letters name none of them
    _write(folder / "data" / "test.jsonl", _rows("s1", ["A. the box", "B. the bag"], ("A", "B")))
    code, out, _ = _validate(folder)
    assert code == 0, out
    turn = load_dataset(str(folder)).storyturns[0].turns[0]
    assert [(o.label, o.text) for o in turn.options] == [("A", "the box"), ("B", "the bag")]


@pytest.mark.parametrize("importer", ["hitom", "opentom", "tombench", "bigtom", "exploretom", "fantom", "mmtomqa",
                                      "mumatom"])
def test_every_importer_gives_answers_among_its_options(importer: str) -> None:
    from commet.format.validate import validate_dataset
    from commet.sources.importers import import_benchmark

    folder = Path(__file__).parent / "data" / "importers" / importer
    source = next(p for p in sorted(folder.iterdir()) if p.suffix in (".json", ".jsonl", ".csv") or p.is_dir())
    data = import_benchmark(importer, source).dataset
    assert any(turn.options for st in data.storyturns for turn in st.turns)
    assert [p for p in validate_dataset(data) if "none of this turn's options" in p.message] == []


def test_the_sample_keeps_answers_among_its_options() -> None:
    from commet.format.validate import validate_dataset

    data = load_dataset("sample")
    assert [p for p in validate_dataset(data) if p.severity == "error"] == []


# ------------------------------------------------------------------------------------- importers' lines


def _import(kind: str, source: Path, out: Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["import", kind, str(source), "--out", str(out)])
    assert "Traceback" not in result.output
    return result.exit_code, result.output


TOMI_STORY = ["Oliver entered the kitchen.", "Emma entered the kitchen.", "The apple is in the red_box.",
              "Emma exited the kitchen.", "Oliver moved the apple to the green_basket."]


def test_tomi_questions_asked_on_in_one_numbered_story_see_the_whole_story(tmp_path: Path) -> None:
    lines = [f"{n} {s}" for n, s in enumerate(TOMI_STORY[:3], start=1)] + ["4 Where is the apple really?\tred_box\t3"]
    lines += [f"{n} {s}" for n, s in enumerate(TOMI_STORY[3:], start=5)]
    lines += ["7 Where will Emma look for the apple?\tred_box\t1", "1 Ava entered the hall.",
              "2 The pear is in the blue_box.", "3 Where is the pear really?\tblue_box\t2"]
    source = tmp_path / "test.txt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, output = _import("tomi", source, tmp_path / "out")
    assert code == 0, output
    first, second = load_dataset(tmp_path / "out").storyturns
    assert [t.story for t in first.turns] == ["\n".join(TOMI_STORY[:3]), "\n".join(TOMI_STORY[3:])]
    assert [t.answers for t in first.turns] == [["red_box"], ["red_box"]]
    assert [t.story for t in second.turns] == ["Ava entered the hall.\nThe pear is in the blue_box."]


@pytest.mark.parametrize(("lines", "line", "says"), [
    (["1 Ann is here.", "2 Where is Ann?\tthe hall\t1", "3 Ann left."], 3, "have no question after them"),
    (["1 Ann is here.", "2 Ann left.", "1 Bob is here.", "2 Where is Bob?\thall\t1"], 1,
     "have no question after them"),
    (["1 Ann is here.", "2 Where is Ann?    the hall    1"], 2, "(tabs, not spaces)"),
])
def test_tomi_lines_it_cannot_place_are_located(lines: list[str], line: int, says: str, tmp_path: Path) -> None:
    source = tmp_path / "test.txt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, output = _import("tomi", source, tmp_path / "out")
    assert code == 2 and f"{source}:{line} " in output and says in output, output
    assert not (tmp_path / "out").exists()


def test_hitom_choices_as_a_list_are_said_to_be_no_string(tmp_path: Path) -> None:
    record = {"story": "Ann put the pear in the box.", "question": "Where is the pear?", "answer": "box",
              "choices": ["A. box", "B. bag"], "prompting_type": "MC", "question_order": 0, "deception": False}
    source = tmp_path / "Hi-ToM_data.json"
    source.write_text(json.dumps({"data": [record]}, indent=1), encoding="utf-8")
    code, output = _import("hitom", source, tmp_path / "out")
    assert code == 2 and "data[0].choices: error: must be a string ('A. option, B. option, ...'), not list" in output


def test_a_storyturns_line_holding_a_list_of_numbers_is_said_to_be_no_storyturn(tmp_path: Path) -> None:
    path = tmp_path / "storyturns.jsonl"
    path.write_text(json.dumps(CANONICAL | {"turns": [CANONICAL["turns"][0] | {"answers": ["A"]}]}) + "\n[1, 2, 3]\n",
                    encoding="utf-8")
    code, out, _ = _validate(path)
    assert code == 2 and f"{path}:2 story=- turn=- field=-: error: expected a StoryTurn object or a list of turn " \
                         "strings; this line is a list holding a number, not a StoryTurn" in out, out


# ------------------------------------------------------------------------------------- the pipe format both ways


def _one(turns: list[dict]) -> dict:
    return {"id": "a1", "task": "false_belief_location", "category": "Belief", "turns": turns}


@pytest.mark.parametrize(("turns", "turn", "field"), [
    ([{"question": "Q?", "answers": ["x"]}, {"question": "Q2?", "answers": ["y"],
                                            "feedback": {"right": "Yes | no"}}], 1, "feedback"),
    ([{"question": "Q?", "answers": ["x"]}, {"question": "Q2?", "answers": ["y"],
                                            "feedback": {"right": "Yes; If wrong: fooled", "wrong": "No"}}], 1,
     "feedback"),
    ([{"story": "He said a | b.", "question": "Q?", "answers": ["x"]}], 0, "story"),
    ([{"question": "Box or bag?", "answers": ["Box; Bag"]}], 0, "answers"),  # one answer read back as two branches
])
def test_convert_to_pipe_refuses_what_would_read_back_otherwise(turns: list[dict], turn: int, field: str,
                                                                tmp_path: Path) -> None:
    source = tmp_path / "storyturns.jsonl"
    source.write_text(json.dumps(_one(turns)) + "\n", encoding="utf-8")
    out = tmp_path / "pipe" / "out.jsonl"
    result = CliRunner().invoke(app, ["convert", str(source), "--to", "pipe", "--out", str(out)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert f"{source}:1 story=a1 turn={turn} field={field}: error:" in result.output and "nothing written" in \
        result.output, result.output
    assert not out.parent.exists()


def test_convert_to_pipe_of_the_sample_reads_back_the_same(tmp_path: Path) -> None:
    out = tmp_path / "pipe.jsonl"
    result = CliRunner().invoke(app, ["convert", "sample", "--to", "pipe", "--out", str(out)])
    assert result.exit_code == 0, result.output
    again, sample = load_dataset(out), load_dataset("sample")
    assert [st.model_dump(exclude={"source"}) for st in again] == [st.model_dump(exclude={"source"}) for st in sample]
