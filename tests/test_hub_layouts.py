"""Releases in layouts wider than (a), (b) and (c) (tests/layout_fixtures.py): each read as `hf:PATH` and, with
the Hub offline, from a Hub cache by the paper release's own name, field for field against the same
StoryTurns in a canonical folder; adapters, `--explain`, the content-keyed cache and `convert --to hf`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.cli import app
from commet.format.dataset import Dataset
from commet.format.problems import FormatError
from commet.sources import load_dataset
from commet.sources.cells import options_cell
from commet.sources.hub import OFFICIAL
from commet.store import Store
from tests import hub_fixtures, layout_fixtures
from tests.test_hub_datasets import comparable, hub, report_of  # noqa: F401 - hub is a fixture

LAYOUTS = {
    "picture-rows": (layout_fixtures.picture_rows, "layout (d)"),
    "picture-rows-lists": (lambda folder: layout_fixtures.picture_rows(folder, native=True), "layout (d)"),
    "numbered-pictures": (layout_fixtures.numbered_pictures, "layout (a)"),
    "subset-configs": (layout_fixtures.subset_configs, "[image_dependent] layout (b)"),
    "camel-options": (layout_fixtures.camel_options, "layout (b)"),
    "pictures-config": (layout_fixtures.pictures_config, "joined by 'image_id'"),
    "chat-openai": (layout_fixtures.chat_rows, "chat messages"),
    "chat-hf": (lambda folder: layout_fixtures.chat_rows(folder, style="hf"), "chat messages"),
    "sharegpt": (layout_fixtures.sharegpt_rows, "chat messages from 'conversations'"),
}
#: layouts that cannot carry options the question does not write (pipe strings, ShareGPT without an options column)
PIPE = ("numbered-pictures", "pictures-config", "sharegpt")


def expected(layout: str) -> Dataset:
    return hub_fixtures.reference() if layout in PIPE else layout_fixtures.reference()


def same_storyturns(data: Dataset, reference: Dataset) -> None:
    """StoryTurns, questions, answers (branches), options, image-dependence and pictures equal field for field."""
    got = {st.id: st for st in data.storyturns}
    assert sorted(got) == sorted(st.id for st in reference.storyturns)
    for st in reference.storyturns:
        assert comparable(got[st.id]) == comparable(st), st.id
    images = [image for st in reference.storyturns for image in st.images]
    assert len(images) == 20 and all(data.image_bytes(image) == reference.image_bytes(image) for image in images)
    assert (sum(len(st.turns) for st in data), sum(st.image_dependent for st in data)) == (145, 8)
    assert sum(len(t.answers) > 1 for st in data for t in st.turns) == 19


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_each_layout_reads_as_the_canonical_folder_by_path_and_by_the_release_name(layout: str, tmp_path: Path,
                                                                                  hub: Path) -> None:  # noqa: F811
    make, says = LAYOUTS[layout]
    folder = make(tmp_path / "release")
    by_path = load_dataset(f"hf:{folder}")
    same_storyturns(by_path, expected(layout))
    assert by_path.origin is not None and says in by_path.origin.layout
    hub_fixtures.hub_cache(hub, OFFICIAL.repo, folder)
    by_name = load_dataset(OFFICIAL.repo)  # offline, from the Hub cache, by the name a reader of the paper types
    same_storyturns(by_name, expected(layout))
    assert by_name.name == OFFICIAL.name
    assert by_name.provenance is not None and by_name.provenance.revision == hub_fixtures.COMMIT
    assert by_name.provenance.arxiv[0] == "2603.11915" and "Cheston Tan" in by_name.provenance.authors


@pytest.mark.parametrize("layout", ["picture-rows", "chat-hf"])
def test_eval_of_a_layout_equals_eval_of_the_canonical_folder(layout: str, tmp_path: Path, hub: Path) -> None:  # noqa: F811
    canonical = layout_fixtures.write_reference(tmp_path / "canonical", source="someone/release")
    folder = LAYOUTS[layout][0](tmp_path / "release")
    hub_fixtures.hub_cache(hub, "someone/release", folder)
    assert report_of(tmp_path, "hf:someone/release", name="by-name") == report_of(tmp_path, str(canonical),
                                                                                  name="canonical")


def test_options_in_every_common_notation() -> None:
    pairs = [{"label": "A", "text": "the box"}, {"label": "B", "text": "the basket"}]
    for text in ("A) the box B) the basket", "A. the box\nB. the basket", "(A) the box; (B) the basket",
                 json.dumps(pairs), json.dumps({"A": "the box", "B": "the basket"}), "A：the box B：the basket",
                 "[('A', 'x')]" and "A: the box / B: the basket"):
        assert options_cell(text) == pairs, text
    assert options_cell("(a) yes; (b) no") == [{"label": "a", "text": "yes"}, {"label": "b", "text": "no"}]
    assert options_cell('["yes", "no"]') == [{"label": None, "text": "yes"}, {"label": None, "text": "no"}]
    assert options_cell("") is None
    assert options_cell({"A": "yes", "B": None, "C": "no"}) == [{"label": "A", "text": "yes"},
                                                                 {"label": "C", "text": "no"}]  # a struct row
    with pytest.raises(ValueError, match="cannot read options"):
        options_cell("just one thing")


def test_an_options_cell_it_cannot_read_is_a_located_error(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    folder = layout_fixtures.camel_options(tmp_path / "release")
    table = folder / "data" / "test-00000-of-00001.parquet"
    import datasets

    rows = datasets.Dataset.from_parquet(str(table)).to_list()
    rows[3]["Options"] = "maybe"
    datasets.Dataset.from_list(rows, features=datasets.Dataset.from_parquet(str(table)).features).to_parquet(str(table))
    result = CliRunner().invoke(app, ["validate", f"hf:{folder}"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert re.search(r":4 story=sample-\S+ turn=\d field=Options: error: cannot read options 'maybe'", result.output), \
        result.output


def test_turn_numbers_that_fit_0_and_1_are_refused_and_an_adapter_reads_them(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    folder = layout_fixtures.picture_rows(tmp_path / "release", zero=False)
    result = CliRunner().invoke(app, ["validate", f"hf:{folder}"])
    assert result.exit_code == 2 and "field=turn_idx" in result.output and "from 0 and from 1" in result.output
    assert "--adapter FILE.py:FUNCTION" in result.output
    adapter = tmp_path / "adapt.py"
    adapter.write_text(ADAPTER, encoding="utf-8")
    data = load_dataset(f"hf:{folder}", adapter=f"{adapter}:storyturns")
    reference = layout_fixtures.reference()
    assert [comparable(st) | {"id": None} for st in data] == [comparable(st) | {"id": None} for st in reference]
    assert all(data.image_bytes(i) == reference.image_bytes(i) for st in reference for i in st.images)
    assert data.origin is not None and data.origin.adapter == f"{adapter.resolve()}:storyturns"
    checked = CliRunner().invoke(app, ["validate", f"hf:{folder}", "--adapter", f"{adapter}:storyturns"])
    assert checked.exit_code == 0, checked.output
    assert "adapter" in checked.output and "a table adapter" in checked.output
    db = tmp_path / "run.sqlite"
    run = CliRunner().invoke(app, ["eval", "--dataset", f"hf:{folder}", "--adapter", f"{adapter}:storyturns",
                                   "--model", "baseline:first-option", "--db", str(db), "--quiet"])
    assert run.exit_code == 0, run.output
    with Store(db) as store:
        stored = store.runs()[0]
    assert stored.settings.stored["dataset_adapter"] == f"{adapter.resolve()}:storyturns"
    assert stored.settings.stored["dataset_adapter_source"] == ADAPTER
    assert stored.dataset_hash == data.content_hash()
    adapter.write_text(ADAPTER + "\n# another version\n", encoding="utf-8")  # its source is part of the hash
    assert load_dataset(f"hf:{folder}", adapter=f"{adapter}:storyturns").content_hash() != data.content_hash()


ADAPTER = '''"""One row per picture, turns counted from 1, no id: made into StoryTurns (a table adapter)."""
import json


def storyturns(rows, split=None):
    stories = {}
    for row in rows:
        key = (row["task"], row["stories"], row["questions"], row["answers"])
        story = stories.setdefault(key, {"row": row, "pictures": {}})
        if row["image"] is not None:
            story["pictures"][row["turn_idx"] - 1] = row["image"]
    made = []
    for n, story in enumerate(stories.values()):
        row = story["row"]
        lists = [json.loads(row[key]) for key in ("stories", "feedbacks", "questions", "answers")]
        turns = []
        for k, (text, feedback, question, answers) in enumerate(zip(*lists)):
            picture = story["pictures"].get(k)
            turns.append(" | ".join([text, feedback, question, picture["path"] if picture else "", " ; ".join(answers)]))
        made.append({"storyturn": turns, "id": f"story-{n}", "task": row["task"], "category": row["category"],
                     "image_dependent": row["image_dependent"],
                     "turn_extras": [{"options": options} for options in json.loads(row["options"])],
                     "pictures": {p["path"]: p for p in story["pictures"].values()}})
    return made
'''


def test_a_record_adapter_and_its_located_errors(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    folder = layout_fixtures.numbered_pictures(tmp_path / "release")
    adapter = tmp_path / "record.py"
    adapter.write_text(
        "from commet.format.model import StoryTurn\n\n"
        "def to_storyturn(record):\n"
        "    if record['id'].endswith('-2'):\n"
        "        return None\n"
        "    if record['task'] == 'nope':\n"
        "        raise ValueError('no such task')\n"
        "    return {'storyturn': __import__('json').loads(record['storyturn']), 'id': record['id'],\n"
        "            'task': record['task'], 'category': record['category'],\n"
        "            'image_dependent': record['image_dependent'],\n"
        "            'pictures': {record[f'Image_{n}']['path']: record[f'Image_{n}'] for n in range(1, 5)\n"
        "                         if record[f'Image_{n}'] is not None}}\n", encoding="utf-8")
    data = load_dataset(f"hf:{folder}", adapter=f"{adapter}:to_storyturn")
    reference = hub_fixtures.reference()
    kept = [st for st in reference.storyturns if not st.id.endswith("-2")]
    assert [comparable(st) for st in data] == [comparable(st) for st in kept]
    assert data.origin is not None and "row(s) made no StoryTurn" in data.origin.layout
    for spec, says in ((f"{adapter}:nothing", "has no function 'nothing'"), ("adapt.txt:f", "no Python file"),
                       (str(adapter), "is not FILE.py:FUNCTION")):
        with pytest.raises(FormatError, match=says):
            load_dataset(f"hf:{folder}", adapter=spec)
    bad = tmp_path / "bad.py"
    bad.write_text("def to_storyturn(record):\n    return {'id': record['id'], 'task': 'sarcasm', 'turns': []}\n")
    result = CliRunner().invoke(app, ["validate", f"hf:{folder}", "--adapter", f"{bad}:to_storyturn"])
    assert result.exit_code == 2 and ":1 story=sample-common_desire-1" in result.output and "Traceback" not in \
        result.output, result.output


def test_stats_explain_says_which_rows_and_columns_made_what(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    folder = layout_fixtures.camel_options(tmp_path / "release")
    result = CliRunner().invoke(app, ["stats", f"hf:{folder}", "--explain"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "fields: id <- StoryID, turn <- TurnNo" in out and "options <- Options" in out
    assert "kept as metadata: Annotator" in out and "not read: nothing" in out
    assert re.search(r"sample-common_desire-1 <- \S+ rows \d+, \d+ \(turn by turn\)", out), out
    as_json = json.loads(CliRunner().invoke(app, ["stats", f"hf:{folder}", "--explain", "--json"]).output)
    assert as_json["counts"] == {"storyturns": 41, "turns": 145, "pictures": 20}
    assert len(as_json["storyturns"]) == 41 and as_json["tables"][0]["kept as metadata"] == ["Annotator"]
    read = CliRunner().invoke(app, ["validate", f"hf:{folder}"]).output
    assert "other columns kept as metadata: Annotator" in read


def test_a_mapping_is_printed_only_when_it_reads(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    rows = [{"grp": f"s{i // 2}", "k": i % 2, "txt": "Sam has a ball.", "q": "Where is the ball?",
             "kind": "False Belief", "reply": 7} for i in range(6)]
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = CliRunner().invoke(app, ["validate", str(tmp_path / "odd")])
    assert result.exit_code == 2 and "no --columns mapping found" in result.output, result.output
    assert "--adapter FILE.py:FUNCTION" in result.output and "COLUMN" not in result.output


def test_two_folders_of_one_name_and_a_folder_whose_files_change_read_their_own_rows(tmp_path: Path,
                                                                                   hub: Path) -> None:  # noqa: F811
    """The datasets cache is keyed by the folder's content: not by its name, its card's configs or its patterns."""
    import datasets

    first = layout_fixtures.camel_options(tmp_path / "one" / "release")
    second = layout_fixtures.camel_options(tmp_path / "two" / "release")  # the same name, card and file names
    table = second / "data" / "test-00000-of-00001.parquet"
    rows = datasets.Dataset.from_parquet(str(table))
    rows.filter(lambda row: not str(row["StoryID"]).startswith("sample-sarcasm")).to_parquet(str(table))
    assert len(load_dataset(f"hf:{first}")) == 41
    fewer = load_dataset(f"hf:{second}")
    assert len(fewer) < 41 and not any(st.id.startswith("sample-sarcasm") for st in fewer)
    assert len(load_dataset(f"hf:{first}")) == 41
    lines = (third := layout_fixtures.subset_configs(tmp_path / "three")) / "image_dependent" / "test.csv"
    assert len(load_dataset(f"hf:{third}")) == 41
    text = lines.read_text().splitlines()
    lines.write_text("\n".join(text[:1] + [line for line in text[1:] if "sarcasm" not in line]) + "\n")  # replaced
    changed = load_dataset(f"hf:{third}")
    assert len(changed) < 41 and not any(st.task == "sarcasm" and st.image_dependent for st in changed)


def test_convert_to_hf_keeps_split_names_and_the_source(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    folder = layout_fixtures.picture_rows(tmp_path / "release")
    (folder / "LICENSE").write_text("MIT License\n\nCopyright (c) 2026 The CoMMET authors\n")
    hub_fixtures.hub_cache(hub, OFFICIAL.repo, folder)
    out = tmp_path / "copy"
    result = CliRunner().invoke(app, ["convert", f"hf:{OFFICIAL.repo}", "--to", "hf", "--out", str(out)])
    assert result.exit_code == 0, result.output
    card = (out / "README.md").read_text()
    assert "- split: train" in card and "path: data/train-*.parquet" in card and "split: test" not in card
    assert f"`{OFFICIAL.repo}` at revision `{hub_fixtures.COMMIT}`" in card and "arXiv:2603.11915" in card
    assert "Ruirui Chen, Weifeng Jiang, Chengwei Qin, Cheston Tan" in card and "license: mit" in card
    assert "Copyright (c) 2026 The CoMMET authors" in card
    assert sorted(p.name for p in (out / "data").iterdir()) == ["train-00000-of-00001.parquet"]
    back = load_dataset(str(out))
    assert back.provenance is not None and back.provenance.repo == OFFICIAL.repo
    assert back.provenance.revision == hub_fixtures.COMMIT and back.provenance.licence.lower() == "mit"
    import datasets

    assert list(datasets.load_dataset(str(out))) == ["train"]


def docs_adapters() -> list[tuple[str, str]]:
    """The adapters docs/official-data.md shows, one per layout of issue 41: (heading, source)."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "official-data.md").read_text(encoding="utf-8")
    section = text[text.index("## Adapters"):text.index("## How it was read")]
    return re.findall(r"\*\*(\d)\. [^\n]*?\*\*.*?```python\n(.*?)```", section, re.S)


def test_the_adapters_in_the_docs_load_and_those_for_these_fixtures_read_them(tmp_path: Path,
                                                                            hub: Path) -> None:  # noqa: F811
    from commet.sources.adapters import load_adapter

    shown = docs_adapters()
    assert [number for number, _ in shown] == [str(n) for n in range(1, 8)]
    files = {}
    for number, source in shown:
        files[number] = tmp_path / f"adapter{number}.py"
        files[number].write_text(source, encoding="utf-8")
        name = re.findall(r"^def (\w+)\(", source, re.M)[-1]
        files[number] = Path(f"{files[number]}:{name}")
        load_adapter(str(files[number]))  # its file imports, its function says record or table
    numbered = layout_fixtures.numbered_pictures(tmp_path / "numbered")
    same_storyturns(load_dataset(f"hf:{numbered}", adapter=str(files["2"])), hub_fixtures.reference())
    pictures = layout_fixtures.pictures_config(tmp_path / "pictures")
    for number in ("6", "7"):
        same_storyturns(load_dataset(f"hf:{pictures}", adapter=str(files[number])), hub_fixtures.reference())


def test_chat_messages_under_a_name_not_foreseen_get_a_mapping_that_reads(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    folder = layout_fixtures.chat_rows(tmp_path / "release")
    data = folder / "data" / "test.jsonl"
    data.write_text(data.read_text().replace('"messages":', '"log":'))
    result = CliRunner().invoke(app, ["validate", f"hf:{folder}"])
    assert result.exit_code == 2, result.output
    mapping = re.search(r"--columns (\S+)$", result.output.splitlines()[0])
    assert mapping is not None and "messages=log" in mapping.group(1), result.output
    checked = CliRunner().invoke(app, ["validate", f"hf:{folder}", "--columns", mapping.group(1)])
    assert checked.exit_code == 0, checked.output
    same_storyturns(load_dataset(f"hf:{folder}", columns=mapping.group(1)), layout_fixtures.reference())


def test_rejudge_reads_an_adapted_dataset_again_as_the_run_recorded_it(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    folder = layout_fixtures.picture_rows(tmp_path / "release", zero=False)
    adapter = tmp_path / "adapt.py"
    adapter.write_text(ADAPTER, encoding="utf-8")
    db = tmp_path / "run.sqlite"
    run = CliRunner().invoke(app, ["eval", "--dataset", f"hf:{folder}", "--adapter", f"{adapter}:storyturns",
                                   "--model", "baseline:first-option", "--db", str(db), "--run", "r", "--quiet"])
    assert run.exit_code == 0, run.output
    again = CliRunner().invoke(app, ["rejudge", "--run", "r", "--judge", "rules", "--db", str(db), "--as", "r2"])
    assert again.exit_code == 0, again.output
    adapter.write_text(ADAPTER.replace("made = []", "made = []  # changed"), encoding="utf-8")
    changed = CliRunner().invoke(app, ["rejudge", "--run", "r", "--judge", "rules", "--db", str(db), "--as", "r3"])
    assert changed.exit_code != 0 and "cannot find the dataset" in changed.output  # another adapter: other data


def _jsonl(folder: Path, rows: list[dict[str, object]]) -> Path:
    folder.mkdir(parents=True)
    (folder / "test.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return folder


LIST_ROW = {"id": "s1", "task": "sarcasm", "questions": json.dumps(["Why?", "Is it?"]),
            "answers": json.dumps(["Because.", "Yes; No"]), "turn": 0}


@pytest.mark.parametrize(("both", "second", "says", "line"), [
    ({"answers": json.dumps(["Because."])}, {}, "field=answers: error: must be a list of 2", 1),
    ({}, {"questions": json.dumps(["Why?", "Is it not?"])}, "rows of this StoryTurn disagree on its question", 2),
    ({}, {"turn": 5}, "field=turn: error: turn 5 is not one of this StoryTurn's 2 turns", 2),
    ({}, {"turn": 0}, "turn=0 field=image: error: turn 0 already shows the picture of row 1", 2),
])
def test_rows_holding_lists_that_do_not_fit_are_located(both: dict, second: dict, says: str, line: int,
                                                        tmp_path: Path, hub: Path) -> None:  # noqa: F811
    picture = {"image": "pic.png"}
    folder = _jsonl(tmp_path / "lists", [LIST_ROW | picture | both, LIST_ROW | picture | {"turn": 1} | both | second])
    (folder / "pic.png").write_bytes(hub_fixtures.reference().images["sample-sarcasm-1-0.png"])
    result = CliRunner().invoke(app, ["validate", str(folder)])
    assert result.exit_code == 2 and says in result.output and "Traceback" not in result.output, result.output
    assert f":{line} story=s1" in result.output


def test_a_picture_id_given_twice_in_a_pictures_config_is_located(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    import datasets

    folder = layout_fixtures.pictures_config(tmp_path / "release")
    table = folder / "data" / "pictures.parquet"
    pictures = datasets.Dataset.from_parquet(str(table))
    rows = pictures.to_list()
    rows[1]["image_id"] = rows[0]["image_id"]
    datasets.Dataset.from_list(rows, features=pictures.features).to_parquet(str(table))
    result = CliRunner().invoke(app, ["validate", f"hf:{folder}"])
    assert result.exit_code == 2 and "[pictures/test]:2 story=- turn=- field=image_id" in result.output, result.output
    assert "names two different pictures" in result.output


def test_chat_text_is_split_into_feedback_story_and_question() -> None:
    from commet.sources.chat import split_text

    assert split_text(["Feedback: Right!\n\nStory: Sam hides the ball.", "Question: Where is it?"]) == {
        "feedback": "Right!", "story": "Sam hides the ball.", "question": "Where is it?"}
    assert split_text(["**Story:** Sam hides the ball.\n\n**Question:** Where?"])["question"] == "Where?"
    assert split_text(["Sam hides the ball.", "Where is it?"]) == {
        "feedback": "", "story": "Sam hides the ball.", "question": "Where is it?"}
    assert split_text(["Sam hides the ball. Ann comes in. Where will Ann look?"]) == {
        "feedback": "", "story": "Sam hides the ball. Ann comes in.", "question": "Where will Ann look?"}
    assert split_text(["Name the ball's colour."]) == {"feedback": "", "story": "", "question": "Name the ball's colour."}


def test_picture_columns_of_a_name_not_foreseen_are_said_and_a_pattern_reads_them(tmp_path: Path,
                                                                                 hub: Path) -> None:  # noqa: F811
    folder = layout_fixtures.numbered_pictures(tmp_path / "release", prefix="Frame_")
    result = CliRunner().invoke(app, ["validate", f"hf:{folder}"])
    assert result.exit_code == 2, result.output
    assert "not read: Frame_1, Frame_2, Frame_3, Frame_4" in result.output  # the read-from line says it
    assert "not found: no picture column, pictures config or file of the data's folder gives it" in result.output
    for mapping in ("image=Frame_*", "image=Frame_1,Frame_2,Frame_3,Frame_4"):
        data = load_dataset(f"hf:{folder}", columns=mapping)
        same_storyturns(data, hub_fixtures.reference())
        assert data.origin is not None and "image=Frame_1,Frame_2,Frame_3,Frame_4" in data.origin.layout
    assert load_dataset(f"hf:{layout_fixtures.numbered_pictures(tmp_path / 'pic', prefix='Pic')}").images  # by name
    with pytest.raises(FormatError, match="pattern 'Photo_\\*' matches no column"):
        load_dataset(f"hf:{folder}", columns="image=Photo_*")


def test_one_config_named_keeps_the_image_dependence_its_name_says(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    folder = layout_fixtures.subset_configs(tmp_path / "release")
    reference = {st.id: st for st in layout_fixtures.reference().storyturns}
    dependent = load_dataset(f"hf:{folder}:config=image_dependent")
    complete = load_dataset(f"hf:{folder}:config=text_complete")
    assert (len(dependent), len(complete)) == (8, 33)
    assert all(st.image_dependent for st in dependent) and not any(st.image_dependent for st in complete)
    assert all(comparable(st) == comparable(reference[st.id]) for st in [*dependent, *complete])
    assert "config" not in dependent.storyturns[0].meta  # one config read: nothing to tell apart
