"""Hub datasets by name (`hf:OWNER/NAME`) and tables written by others, in layouts (a), (b) and (c).

The fixtures (tests/hub_fixtures.py) are built with `datasets` itself (parquet with `Image` features, an
image folder with metadata.jsonl) and hold the same StoryTurns as a canonical dataset folder; each is
placed in a Hub cache (read with the Hub offline) and as a snapshot folder, run through `commet eval`,
and must give the same report as the canonical folder.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import datasets
import huggingface_hub
import pytest
from typer.testing import CliRunner

from commet.cli import app
from commet.extras import install_command
from commet.format.problems import FormatError
from commet.reports.transcripts import unpacked
from commet.sources import load_dataset
from commet.sources.columns import ColumnMapping, ColumnsError, canonical_category, canonical_task, parse_flag
from commet.sources.hub import OFFICIAL, HubError, parse_hub_spec
from commet.store import Store
from commet.taxonomy import BOOKLET
from tests import hub_fixtures as fixtures

SRC = Path(__file__).resolve().parents[1] / "src"
REPO = "someone/tom-release"
LAYOUTS = {"a": fixtures.layout_a, "a-one-string": lambda f: fixtures.layout_a(f, one_string=True, named=False),
           "b": fixtures.layout_b, "c": fixtures.layout_c}
#: an image folder whose metadata has rows without a picture (turns that show none): datasets reads them from 5.0
OLD_IMAGE_FOLDERS = pytest.mark.skipif(int(datasets.__version__.split(".")[0]) < 5,
                                       reason="datasets < 5 needs every image-folder metadata row to name a file")


def layouts(*names: str) -> list:
    return [pytest.param(name, marks=OLD_IMAGE_FOLDERS) if name == "c" else name for name in names]


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The Hub unreachable (offline), its cache and the datasets cache in tmp_path; returns the Hub cache."""
    cache = tmp_path / "hub-cache"
    cache.mkdir()
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "datasets-cache")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    return cache


def comparable(st) -> dict:  # noqa: ANN001 - a StoryTurn
    """A StoryTurn without what a table cannot say the same way (its source, metadata from extra columns)."""
    data = st.model_dump()
    data["source"], data["meta"] = None, {}
    for turn in data["turns"]:
        turn["meta"] = {}
    return data


def report_of(tmp_path: Path, dataset: str, *extra: str, name: str = "run") -> str:
    """`commet eval` (the first-option baseline, rules judge) on ``dataset`` into its own store; its report."""
    db = tmp_path / f"{name}.sqlite"
    result = CliRunner().invoke(app, ["eval", "--dataset", dataset, "--model", "baseline:first-option",
                                      "--db", str(db), "--run", "r", "--quiet", *extra])
    assert result.exit_code == 0, result.output
    report = CliRunner().invoke(app, ["report", "--db", str(db), "--format", "markdown"])
    assert report.exit_code == 0, report.output
    return report.stdout.replace(str(db), "DB")


@pytest.fixture(scope="module")
def canonical_report(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = fixtures.write_reference(tmp_path_factory.mktemp("canonical") / "reference")
    return report_of(folder.parent, str(folder))


@pytest.mark.parametrize("layout", layouts(*LAYOUTS))
def test_every_layout_reads_the_same_storyturns_and_pictures(layout: str, tmp_path: Path, hub: Path) -> None:
    folder = LAYOUTS[layout](tmp_path / layout)
    data = load_dataset(str(folder))
    reference = fixtures.reference()
    order = [st.id for st in reference.storyturns]
    assert sorted(st.id for st in data.storyturns) == sorted(order)
    got = sorted(data.storyturns, key=lambda st: order.index(st.id))
    assert [comparable(st) for st in got] == [comparable(st) for st in reference.storyturns]
    assert sum(len(st.images) for st in got) >= 20
    assert all(data.image_bytes(image) == reference.image_bytes(image) for st in got for image in st.images)
    assert data.taxonomy is BOOKLET  # tasks and categories as other people spell them, read as the booklet's
    assert data.origin is not None and ("layout (a)" in data.origin.layout if layout.startswith("a")
                                        else "layout (b)" in data.origin.layout)


@pytest.mark.parametrize("layout", layouts("a", "b", "c"))
def test_hub_cache_and_snapshot_folder_run_to_the_canonical_tables(layout: str, tmp_path: Path, hub: Path,
                                                                   canonical_report: str) -> None:
    snapshot = fixtures.hub_cache(hub, REPO, LAYOUTS[layout](tmp_path / "published"))
    by_name = report_of(tmp_path, f"hf:{REPO}", name="by-name")
    assert by_name == canonical_report
    assert report_of(tmp_path, f"hf:{snapshot}", name="by-folder") == canonical_report
    with Store(tmp_path / "by-name.sqlite") as store:
        settings = store.runs()[0].settings.stored
    assert settings["dataset_path"] == f"hf:{REPO}@{fixtures.COMMIT}"  # the commit it was read at
    assert settings["dataset_layout"].startswith("layout (")
    assert "dataset_columns" not in settings


def test_commets_own_export_by_name_is_the_folder_itself(tmp_path: Path, hub: Path) -> None:
    """`commet convert --to hf`, published and read back by name: the same StoryTurns, taxonomy and content hash."""
    from commet.sources.hf import save_hf
    from commet.sources.importers import import_benchmark

    tomi = import_benchmark("tomi", Path(__file__).parent / "data" / "importers" / "tomi" / "test.txt").dataset
    folder = save_hf(tomi, tmp_path / "published")
    fixtures.hub_cache(hub, REPO, folder)
    by_name = load_dataset(f"hf:{REPO}")
    assert by_name.content_hash() == load_dataset(folder).content_hash() == tomi.content_hash()
    assert by_name.taxonomy == tomi.taxonomy and by_name.taxonomy.declared and by_name.name == tomi.name
    assert by_name.origin is not None and by_name.origin.layout.startswith("CoMMET's own layout")


def test_a_revision_or_config_the_cache_lacks_is_one_line(tmp_path: Path, hub: Path) -> None:
    fixtures.hub_cache(hub, REPO, fixtures.layout_a(tmp_path / "published"))
    assert len(load_dataset(f"hf:{REPO}@main:split=test")) == 41
    for spec, says in ((f"hf:{REPO}@v2", "is not in the Hugging Face cache"),
                       ("hf:nobody/nothing", "is not in the Hugging Face cache"),
                       (f"hf:{REPO}:split=train", "datasets cannot read")):
        result = CliRunner().invoke(app, ["stats", spec])
        assert result.exit_code == 2 and says in result.output, result.output
        assert result.output.strip().count("\n") == 0 and "Traceback" not in result.output


def test_offline_by_environment_in_a_fresh_process_and_the_paper_release_by_its_bare_name(tmp_path: Path) -> None:
    """HF_HUB_OFFLINE=1 and the cache folders as a user sets them, before anything is imported."""
    cache = tmp_path / "hub-cache"
    fixtures.hub_cache(cache, OFFICIAL.repo, fixtures.layout_b(tmp_path / "published"))
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}", "HF_HUB_OFFLINE": "1",
           "HF_HUB_CACHE": str(cache), "HF_DATASETS_CACHE": str(tmp_path / "datasets-cache"),
           "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}
    stats = subprocess.run([sys.executable, "-m", "commet.cli", "stats", OFFICIAL.repo], env=env, capture_output=True,
                           text=True, timeout=120)
    assert stats.returncode == 0, stats.stderr
    assert "the paper" in stats.stdout and "1,976" in stats.stdout and "844" in stats.stdout
    figures = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in stats.stdout.splitlines()
               if line.count("│") == 4}
    assert (figures["StoryTurns"], figures["questions"], figures["pictures"]) == ("41", "145", "20")
    run = subprocess.run([sys.executable, "-m", "commet.cli", "eval", "--dataset", f"hf:{OFFICIAL.repo}", "--model",
                          "baseline:first-option", "--db", str(tmp_path / "r.sqlite"), "--quiet"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "baseline:first-option@CoMMET:" in run.stdout  # the release by its paper's name


def test_unknown_columns_give_one_message_whose_mapping_then_works(tmp_path: Path, hub: Path,
                                                                   canonical_report: str) -> None:
    renamed = {"story_id": "grp", "turn_no": "k", "story": "txt", "question": "q", "answer": "a", "image": "pic",
               "task": "kind", "category": "cat", "feedback": "fb", "image_dependent": "needs"}
    folder = fixtures.layout_b(tmp_path / "odd", columns=renamed)
    checked = CliRunner().invoke(app, ["validate", str(folder)])
    assert checked.exit_code == 2 and "Traceback" not in checked.output
    [line] = checked.stdout.strip().splitlines()
    assert "field=columns" in line and "cannot tell which columns" in line
    for column, kind in (("grp", "string"), ("k", "int64"), ("a", "list of string"), ("pic", "Image")):
        assert f"{column} ({kind})" in line, line
    assert "row 1: grp='sample-common_desire-1', k=2, kind='Common Desire'" in line and "a=[2 items: 'The kite'" in line
    mapping = re.search(r"--columns (\S+)$", line)
    assert mapping is not None, line
    assert dict(pair.split("=") for pair in mapping.group(1).split(",")) == {
        "id": "grp", "turn": "k", "story": "txt", "feedback": "fb", "question": "q", "answer": "a", "image": "pic",
        "task": "kind", "category": "cat", "image_dependent": "needs", "source": "source"}
    assert CliRunner().invoke(app, ["validate", str(folder), "--columns", mapping.group(1)]).exit_code == 0
    assert report_of(tmp_path, str(folder), "--columns", mapping.group(1)) == canonical_report
    with Store(tmp_path / "run.sqlite") as store:
        run = store.runs()[0]
    assert run.settings.stored["dataset_columns"] == mapping.group(1)
    html = CliRunner().invoke(app, ["report", "--db", str(tmp_path / "run.sqlite"), "--out", str(tmp_path / "r.html")])
    assert html.exit_code == 0, html.output  # the pictures found where the run read them, with its mapping
    page = (tmp_path / "r.html").read_text()
    transcripts = unpacked(re.search(r'id="transcript-data">([^<]*)<', page).group(1))  # type: ignore[union-attr]
    assert [run["note"] for run in transcripts["runs"]] == [f"Pictures from {folder} (recorded with the run)."]
    plain = load_dataset(str(fixtures.layout_b(tmp_path / "plain")))
    assert run.dataset_hash != plain.content_hash()  # the mapping is part of the dataset's hash
    mapped = load_dataset(str(folder), columns=mapping.group(1))
    assert [comparable(st) for st in mapped] == [comparable(st) for st in plain]


@pytest.mark.parametrize(("columns", "says"), [
    ("question=nope", "has no column 'nope'"), ("wibble=q", "unknown role 'wibble'"), ("q", "is not ROLE=COLUMN"),
    ("image=q,image=a", "given twice"), ("image=k", "cannot be the image"),
])
def test_a_bad_mapping_is_one_line(columns: str, says: str, tmp_path: Path, hub: Path) -> None:
    folder = fixtures.layout_b(tmp_path / "odd", columns={"question": "q", "answer": "a", "turn_no": "k"})
    for command in (["validate", str(folder)], ["eval", "--dataset", str(folder), "--model", "baseline:first-option",
                                                "--db", str(tmp_path / "x.sqlite")]):
        result = CliRunner().invoke(app, [*command, "--columns", columns])
        assert result.exit_code == 2 and says in result.output, result.output
        assert result.output.strip().count("\n") == (1 if command[0] == "validate" else 0), result.output
    assert not (tmp_path / "x.sqlite").exists()


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".csv":
        columns = list(dict.fromkeys(k for row in rows for k in row))
        datasets.Dataset.from_list([{c: row.get(c) for c in columns} for row in rows]).to_csv(str(path), index=False)
    else:
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


TURNS = [{"story_id": "s1", "turn": 1, "task": "Sarcasm", "image_dependent": "yes",
          "story": "Dan gets cold soup and says 'Mmm, my favourite'.", "question": "Is Dan happy or sad?",
          "answer": "Sad"},
         {"story_id": "s1", "turn": 2, "task": "Sarcasm", "image_dependent": "yes", "story": "",
          "question": "Did Dan mean what he said?", "answer": "No"}]


@pytest.mark.parametrize("file", ["data/test.jsonl", "data/test.csv"])
def test_json_lines_and_csv_folders_load_and_a_row_without_category_takes_its_tasks(file: str, tmp_path: Path,
                                                                                   hub: Path) -> None:
    folder = tmp_path / "release"
    write_rows(folder / file, TURNS)
    data = load_dataset(str(folder))
    [st] = data.storyturns
    assert (st.task, st.category, st.image_dependent, len(st.turns)) == ("sarcasm", "NLC", True, 2)
    assert [t.answers for t in st.turns] == [["Sad"], ["No"]]
    unknown = [{**row, "task": "irony"} for row in TURNS]
    write_rows(tmp_path / "unknown" / file, unknown)
    result = CliRunner().invoke(app, ["validate", str(tmp_path / "unknown")])
    assert result.exit_code == 2, result.output
    [line] = result.stdout.strip().splitlines()
    assert ":1 story=s1" in line and "field=category" in line and "--columns category=COLUMN" in line, line
    write_rows(tmp_path / "categorised" / file, [{**row, "mood": "NLCE", "image_dependent": "no"} for row in unknown])
    declared = load_dataset(str(tmp_path / "categorised"), columns="category=mood")
    assert declared.taxonomy.declared and declared.taxonomy.task("irony").categories == ("NLCE",)
    assert CliRunner().invoke(app, ["validate", str(tmp_path / "categorised"), "--columns", "category=mood"]
                              ).exit_code == 0


def test_commet_rows_in_json_lines_load_as_datasets_reads_them(tmp_path: Path, hub: Path) -> None:
    sample = load_dataset("sample")
    texts = [st for st in sample.storyturns if not st.images][:5]
    rows = [{**st.model_dump(exclude={"meta"}), "turns": [t.model_dump(exclude={"meta"}) for t in st.turns]}
            for st in texts]
    for row in rows:
        del row["category"]  # taken from the task
    write_rows(tmp_path / "release" / "data" / "test.jsonl", rows)
    data = load_dataset(str(tmp_path / "release"))
    assert [st.model_dump(exclude={"meta", "turns"}) for st in data] == \
           [st.model_dump(exclude={"meta", "turns"}) for st in texts]
    assert [[t.answers for t in st.turns] for st in data] == [[t.answers for t in st.turns] for st in texts]


def test_rows_of_one_story_that_contradict_each_other_are_located(tmp_path: Path, hub: Path) -> None:
    cases = {"twice": ([TURNS[0], {**TURNS[1], "turn": 1}], ":2 story=s1", "turn 1 of this story is also on row 1"),
             "disagree": ([TURNS[0], {**TURNS[1], "task": "Non Sarcasm"}], ":2 story=s1", "disagree on its task"),
             "flag": ([{**row, "image_dependent": "maybe"} for row in TURNS], ":1 story=s1", "neither image-dependent"),
             "turn": ([{**TURNS[0], "turn": "first"}, {**TURNS[1], "turn": "2"}], ":1 story=s1", "is not a number")}
    for name, (rows, where, says) in cases.items():
        write_rows(tmp_path / name / "data" / "test.jsonl", rows)
        with pytest.raises(FormatError) as caught:
            load_dataset(str(tmp_path / name))
        assert where in str(caught.value) and says in str(caught.value), str(caught.value)


@pytest.mark.skipif(not hasattr(datasets, "Json"), reason="datasets reads a column of mixed types from 4.x (Json)")
def test_a_column_of_mixed_types_is_read_as_its_values(tmp_path: Path, hub: Path) -> None:
    write_rows(tmp_path / "mixed" / "data" / "test.jsonl", [{**TURNS[0], "turn": "first"}, TURNS[1]])
    with pytest.raises(FormatError, match="turn 'first' is not a number"):
        load_dataset(str(tmp_path / "mixed"))
    write_rows(tmp_path / "fine" / "data" / "test.jsonl", [{**TURNS[1], "turn": 2}, {**TURNS[0], "turn": "1"}])
    [st] = load_dataset(str(tmp_path / "fine")).storyturns
    assert [t.question for t in st.turns] == [TURNS[0]["question"], TURNS[1]["question"]]


def test_picture_paths_outside_the_data_are_never_read(tmp_path: Path, hub: Path) -> None:
    secret = tmp_path / "secret.png"
    secret.write_bytes(fixtures.reference().images["sample-sarcasm-2-0.png"])
    rows = [{**TURNS[0], "category": "NLC", "image": {"bytes": None, "path": str(secret)}}, TURNS[1]]
    table = datasets.Dataset.from_list(rows, features=datasets.Features({
        **{k: datasets.Value("string") for k in TURNS[0] if k != "turn"}, "turn": datasets.Value("int64"),
        "category": datasets.Value("string"), "image": datasets.Image()}))
    (tmp_path / "release" / "data").mkdir(parents=True)
    table.data.table  # noqa: B018 - the path-only cell is what a row may carry
    import pyarrow.parquet as pq

    pq.write_table(table.data.table, tmp_path / "release" / "data" / "test.parquet")
    with pytest.raises(FormatError, match="absolute path outside the dataset folder"):  # refused with its row, unread
        load_dataset(str(tmp_path / "release"))
    result = CliRunner().invoke(app, ["validate", str(tmp_path / "release")])
    assert result.exit_code == 2 and "secret.png" in result.output and "refused, not read" in result.output


@pytest.mark.parametrize(("spec", "expected"), [
    ("hf:a/b", ("a/b", None, None, None)),
    ("hf:rrchen2026/Theory_of_Mind_CoMMET@main:split=test", ("rrchen2026/Theory_of_Mind_CoMMET", "main", None, "test")),
    ("hf:o/n@refs/pr/3:config=en:split=validation", ("o/n", "refs/pr/3", "en", "validation")),
    ("rrchen2026/theory_of_mind_commet", ("rrchen2026/theory_of_mind_commet", None, None, None)),
])
def test_the_hub_spec_grammar(spec: str, expected: tuple) -> None:
    parsed = parse_hub_spec(spec)
    assert (parsed.repo, parsed.revision, parsed.config, parsed.split) == expected
    assert parse_hub_spec(str(parsed)) == parsed


@pytest.mark.parametrize("spec", ["hf:justname", "hf:a/b@", "hf:a/b@x..y", "hf:a/b:splt=test", "hf:a/b:split=",
                                  "hf:a/b:split=a:split=b", "hf:a/b/c", "hf:./no-such-folder"])
def test_a_spec_that_is_not_one_says_the_grammar(spec: str, tmp_path: Path) -> None:
    with pytest.raises(HubError) as caught:
        parse_hub_spec(spec)
    assert "no such folder" in str(caught.value) or "hf:OWNER/NAME[@REVISION]" in str(caught.value)
    result = CliRunner().invoke(app, ["stats", spec])
    assert result.exit_code == 2 and result.output.strip().count("\n") == 0, result.output


def test_a_bare_hub_name_that_is_no_path_is_told_how_to_write_it() -> None:
    result = CliRunner().invoke(app, ["stats", "someone/some-tom-set"])
    assert result.exit_code == 2 and "hf:someone/some-tom-set" in result.output, result.output


def test_the_paper_spellings_of_categories_tasks_and_subsets() -> None:
    spellings = {"Belief_Emotion": "Belief_Emotion", "belief-emotion": "Belief_Emotion", "BELIEF EMOTION":
                 "Belief_Emotion", "Belief & Emotion": "Belief_Emotion", "nlce": "NLCE", "NLC": "NLC",
                 "Non-Literal Communication with Emotion": "NLCE", "non literal communication": "NLC", "MBK": "MBK",
                 "Moral Reasoning, Belief, and Knowledge": "MBK", "belief_desire": "Belief_Desire",
                 "percept": "Percept", "Knowledge": "Knowledge"}
    assert {value: canonical_category(value) for value in spellings} == spellings
    tasks = {"Diverse Belief": "diverse_belief", "diverse-belief": "diverse_belief", "SARCASM": "sarcasm",
             "sarcasm control (sincere)": "non_sarcasm", "false belief, reality known": "false_belief_location",
             "ironic praise": None}
    assert {value: canonical_task(value, BOOKLET) for value in tasks} == tasks
    flags = {True: True, 0: False, "yes": True, "No": False, "image-dependent": True, "Text complete": False,
             "maybe": None, 2: None, None: None}
    assert {value: parse_flag(value) for value in flags} == flags


def test_the_mapping_grammar() -> None:
    mapping = ColumnMapping.parse(" id = grp , turn=k,Image-Dependent=needs ")
    assert str(mapping) == "id=grp,turn=k,image_dependent=needs"
    for bad in ("", "id", "id=", "who=x", "id=a,id=b"):
        with pytest.raises(ColumnsError):
            ColumnMapping.parse(bad)


def test_without_the_datasets_extra_a_table_is_one_line_naming_it(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    write_rows(tmp_path / "release" / "data" / "test.jsonl", TURNS)
    monkeypatch.setitem(sys.modules, "datasets", None)  # import datasets now fails, as without the extra
    for command in (["stats", str(tmp_path / "release")], ["stats", "hf:a/b"]):
        result = CliRunner().invoke(app, command)
        assert result.exit_code == 2 and install_command("datasets") in result.output, result.output
        assert result.output.strip().count("\n") == 0


def test_study_build_records_the_hub_dataset_and_its_mapping(tmp_path: Path, hub: Path) -> None:
    from commet.apps.study.build import load_study

    fixtures.hub_cache(hub, REPO, fixtures.layout_b(tmp_path / "published", columns={"question": "q"}))
    out = tmp_path / "study.json"
    result = CliRunner().invoke(app, ["study", "build", "--dataset", f"hf:{REPO}", "--columns", "question=q",
                                      "--out", str(out), "--questionnaires", "2"])
    assert result.exit_code == 0, result.output
    stored = json.loads(out.read_text())["dataset"]
    assert stored["path"] == f"hf:{REPO}@{fixtures.COMMIT}" and stored["columns"] == "question=q"
    study, data = load_study(out)
    assert len(data) == 41 and study.dataset.hash == data.content_hash()


def test_review_serve_reviews_a_hub_dataset_as_a_folder_beside_its_store(tmp_path: Path, hub: Path) -> None:
    from commet.cli.review import _as_folder

    data = load_dataset(str(fixtures.layout_a(tmp_path / "published")))
    folder = _as_folder(data, tmp_path / "review-dataset")
    assert (folder.root / "storyturns.jsonl").is_file() and len(folder) == 41
    assert [comparable(st) for st in folder] == [comparable(st) for st in data]
    assert all(folder.image_bytes(i) == data.image_bytes(i) for st in data for i in st.images)
    assert _as_folder(data, tmp_path / "review-dataset").root == folder.root  # kept the second time


def test_offline_without_a_snapshot_the_last_load_datasets_prepared_is_read(tmp_path: Path, hub: Path) -> None:
    """What an earlier online `datasets.load_dataset("OWNER/NAME")` leaves in the datasets cache (config
    `default` under `OWNER___NAME/`), built here by datasets' own parquet builder."""
    import shutil

    from datasets.packaged_modules.parquet.parquet import Parquet

    published = fixtures.layout_a(tmp_path / "published")
    cache = Path(datasets.config.HF_DATASETS_CACHE)
    Parquet(cache_dir=str(cache), dataset_name="tom-release", hash="0123abcd",
            data_files={"test": [str(p) for p in (published / "data").glob("*.parquet")]}).download_and_prepare()
    [config] = (cache / "tom-release").iterdir()
    (cache / "someone___tom-release").mkdir()
    shutil.move(config, cache / "someone___tom-release" / "default")
    data = load_dataset(f"hf:{REPO}")
    assert len(data) == 41 and sum(len(st.images) for st in data) >= 20
    assert all(data.has_image(image) for st in data for image in st.images)
    with pytest.raises(FormatError, match="is not in the Hugging Face cache"):  # a revision: only a snapshot will do
        load_dataset(f"hf:{REPO}@v1")


@pytest.mark.parametrize("cell", [
    ["s | | q1? | | a", "t | | q2? | | b"],
    '["s | | q1? | | a", "t | | q2? | | b"]',
    "['s | | q1? | | a', 't | | q2? | | b']",
    '"s | | q1? | | a", "t | | q2? | | b"',
    "s | | q1? | | a\nt | | q2? | | b\n",
])
def test_pipe_turns_in_a_list_or_one_string(cell: object) -> None:
    from commet.sources.layouts import pipe_turns

    assert [t.strip() for t in pipe_turns(cell) or []] == ["s | | q1? | | a", "t | | q2? | | b"]
    assert pipe_turns("no pipes here") is None and pipe_turns([]) is None and pipe_turns([1, 2]) is None
