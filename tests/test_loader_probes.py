"""Malformed inputs of kinds a probe round found read wrongly, or with a traceback (loaders4): each is now one
located line, exit 2, nothing written.

* tables ``datasets`` would read without a word but wrongly: a CSV row with a field too few (pandas pads it with
  nulls) or too many (pandas takes its first fields for an index, every cell lands a column over), a quote
  closed before its field ends (pandas joins the rest on), a ``.json`` document writing a key twice (the last
  kept); a JSON line nested too deeply for Python's parser (a traceback when locating datasets' refusal);
* benchmark files: a key written twice in a Hi-ToM, ToMBench, MMToM-QA, OpenToM or MuMA-ToM record (``json``
  keeps the last: the answer could be the wrong one), JSON nested too deeply, an ExploreToM CSV row of another
  width than its header, and text the importer reads but validation refuses (a NUL byte: the folder was written
  before, and the command exited 1).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import typer
from click.testing import CliRunner

from commet.cli import app as typer_app

app = typer.main.get_command(typer_app)
IMPORTERS = Path(__file__).parent / "data" / "importers"
LOCATED = re.compile(r"^(?:error: )?(?P<file>.+?):(?P<line>\d+) story=(?P<story>\S+) turn=(?P<turn>\S+) "
                     r"field=(?P<field>\S+): error: (?P<message>.+)$")
HEADER = "story_id,turn,story,question,answer,task,category\n"
ROW1 = "s1,1,Anna puts the ball in the box.,Where is the ball?,box,false_belief_location,Belief\n"
ROW2 = "s1,2,,Where will Anna look?,box,false_belief_location,Belief\n"
RECORD = {"story_id": "s1", "turn": 1, "story": "Anna puts the ball in the box.", "question": "Where is the ball?",
          "answer": "box", "task": "false_belief_location", "category": "Belief"}


def _refused(argv: list[str]) -> re.Match[str]:
    result = CliRunner().invoke(app, argv)
    lines = [line for line in result.output.splitlines() if LOCATED.match(line)]
    assert result.exit_code == 2 and len(lines) == 1 and "Traceback" not in result.output, result.output
    found = LOCATED.match(lines[0])
    assert found is not None
    return found


TABLES = {  # name: (file, content, line, says)
    "csv-row-a-field-short": ("test.csv", HEADER + ROW1 + "s1,2,Where will Anna look?,box,false_belief_location\n",
                              2, "row 2 (line 3 of the file) has 5 fields and the header 7"),
    "csv-row-a-field-long": ("test.csv", HEADER + ROW1.replace("Belief", "Belief,x") + ROW2, 1,
                             "row 1 (line 2 of the file) has 8 fields and the header 7"),
    "csv-quote-closed-early": ("test.csv", HEADER + ROW1 + ROW2.replace(",Where will", ',"Where" will'), 2,
                               "is not CSV as written"),
    "tsv-row-a-field-short": ("test.tsv", (HEADER + ROW1 + ROW2).replace(",", "\t").replace("\tBelief\n", "\n", 1),
                              1, "row 1 (line 2 of the file) has 6 fields"),
    "json-key-twice": ("test.json", "[\n" + json.dumps(RECORD) + ",\n" +
                       json.dumps({**RECORD, "turn": 2})[:-1] + ', "answer": "basket"}\n]\n', 3,
                       "line 3 of the file writes the key 'answer' twice"),
    "jsonl-nested-too-deeply": ("test.jsonl", json.dumps(RECORD) + "\n" +
                                json.dumps({**RECORD, "turn": 2})[:-1] + ', "x": ' + "[" * 50000 + "]" * 50000 + "}\n",
                                2, "nests its values too deeply"),
}


@pytest.mark.parametrize("name", list(TABLES))
def test_a_table_datasets_would_misread_is_refused_at_its_row(name: str, tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    file, content, line, says = TABLES[name]
    (tmp_path / "release" / "data").mkdir(parents=True)
    (tmp_path / "release" / "data" / file).write_text(content, encoding="utf-8")
    before = sorted(tmp_path.rglob("*"))
    found = _refused(["validate", str(tmp_path / "release")])
    assert found["file"].endswith(f"data/{file}") and found["line"] == str(line), found[0]
    assert says in found["message"], found[0]
    assert sorted(tmp_path.rglob("*")) == before


def _twice(key: str) -> object:
    return lambda text: text.replace(f'"{key}":', f'"{key}": "x", "{key}":', 1)


IMPORTS = {  # name: (format, fixture, file changed, change, source, field, says)
    "hitom-key-twice": ("hitom", "hitom", "Hi-ToM_data.json", _twice("answer"), "Hi-ToM_data.json", "answer",
                        "written twice in one object"),
    "tombench-key-twice": ("tombench", "tombench", "False Belief Task.jsonl", _twice("STORY"),
                           "False Belief Task.jsonl", "STORY", "written twice in one object"),
    "mmtomqa-key-twice": ("mmtomqa", "mmtomqa", "questions.json", _twice("answer"), "questions.json", "answer",
                          "written twice in one object"),
    "opentom-key-twice": ("opentom", "opentom", "opentom_data/attitude.json", _twice("answer"), "opentom_data",
                          "answer", "written twice in one object"),
    "mumatom-key-twice": ("mumatom", "mumatom", "questions.json", _twice("description"), ".", "description",
                          "written twice in one object"),
    "hitom-nested-too-deeply": ("hitom", "hitom", "Hi-ToM_data.json", lambda text: "[" * 100000 + "]" * 100000,
                                "Hi-ToM_data.json", "-", "nested too deeply"),
    "exploretom-row-a-field-long": ("exploretom", "exploretom", "ExploreToM-data-sample.csv",
                                    lambda text: text.replace("\n", ",extra\n", 2).replace(",extra\n", "\n", 1),
                                    "ExploreToM-data-sample.csv", "-", "the header has"),
    "tomi-nul-byte": ("tomi", "tomi", "test.txt", lambda text: text.replace(" the ", " the\x00 ", 1), "test.txt",
                      "story", "control character U+0000"),
}


@pytest.mark.parametrize("name", list(IMPORTS))
def test_a_benchmark_file_read_wrongly_before_is_refused_located(name: str, tmp_path: Path) -> None:
    fmt, fixture, changed, change, source, field, says = IMPORTS[name]
    shutil.copytree(IMPORTERS / fixture, tmp_path / "bench")
    target = tmp_path / "bench" / changed
    target.write_text(change(target.read_text(encoding="utf-8")), encoding="utf-8")
    found = _refused(["import", fmt, str(tmp_path / "bench" / source), "--out", str(tmp_path / "out")])
    assert found["field"] == field and says in found["message"] and int(found["line"]) >= 1, found[0]
    assert Path(found["file"]).name in (Path(changed).name, "test.txt"), found[0]
    assert not (tmp_path / "out").exists()


def test_a_key_twice_is_located_on_the_line_that_writes_it_again(tmp_path: Path) -> None:
    """In a pretty-printed file, at the second writing of the key, not at the object's first line."""
    text = (IMPORTERS / "hitom" / "Hi-ToM_data.json").read_text(encoding="utf-8")
    records = json.loads(text)
    first = json.dumps(records, indent=2).splitlines()
    doubled = next(n for n, line in enumerate(first) if line.strip().startswith('"answer"'))
    lines = [*first[:doubled], '  "answer": "shelf",', *first[doubled:]]
    (tmp_path / "Hi-ToM_data.json").write_text("\n".join(lines), encoding="utf-8")
    found = _refused(["import", "hitom", str(tmp_path / "Hi-ToM_data.json"), "--out", str(tmp_path / "out")])
    assert found["line"] == str(doubled + 2), found[0]


def test_opentom_long_json_is_named_as_the_long_version(tmp_path: Path) -> None:
    """``opentom_long.json`` (the authors' file of OpenToM-L) was read as OpenToM-L's task but named
    ``opentom-conversation``, the normal narratives' dataset name: runs on the two shared a name."""
    published = Path(__file__).parent / "data" / "importers_published" / "opentom_json" / "opentom.json"
    shutil.copy(published, tmp_path / "opentom_long.json")
    result = CliRunner().invoke(app, ["import", "opentom", str(tmp_path / "opentom_long.json"), "--out",
                                      str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    metadata = json.loads((tmp_path / "out" / "dataset.json").read_text(encoding="utf-8"))
    assert metadata["name"] == "opentom-long-conversation" and list(metadata["tasks"]) == ["opentom_long"]


def test_an_image_folders_metadata_nested_too_deeply_is_located(tmp_path: Path) -> None:
    """The folder check parsed each metadata line for its ``file_name``: a line nested too deeply was a traceback."""
    folder = tmp_path / "release"
    folder.mkdir()
    row = {**RECORD, "file_name": "a.png"}
    deep = json.dumps(row)[:-1] + ', "x": ' + "[" * 60000 + "]" * 60000 + "}"
    (folder / "metadata.jsonl").write_text(json.dumps(row) + "\n" + deep + "\n", encoding="utf-8")
    found = _refused(["validate", str(folder)])
    assert found["file"].endswith("metadata.jsonl") and found["line"] == "2", found[0]
    assert "nests its values too deeply" in found["message"], found[0]


def test_an_answer_column_empty_in_every_row_is_said_so(tmp_path: Path) -> None:
    """It was "holds float64 ...: option numbers are not read as answers" (a CSV reader makes an empty column
    floats), which sent the user looking for numbers that are not there."""
    pytest.importorskip("datasets")
    (tmp_path / "release" / "data").mkdir(parents=True)
    (tmp_path / "release" / "data" / "test.csv").write_text(
        HEADER + ROW1.replace(",box,", ",,") + ROW2.replace(",box,", ",,"), encoding="utf-8")
    found = _refused(["validate", str(tmp_path / "release")])
    assert "column 'answer' is empty in every row" in found["message"] and "option numbers" not in found["message"]
