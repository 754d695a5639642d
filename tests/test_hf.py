"""Hugging Face both ways: Hub-ready export, every import layout, lossless round trips, located errors."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from commet.cli import app
from commet.format import Dataset, FormatError, StoryTurn, validate_dataset
from commet.sources import hf, load_dataset
from commet.sources.hf import decode_meta, encode_meta, save_hf
from commet.taxonomy import Taxonomy

datasets = pytest.importorskip("datasets")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture(autouse=True)
def datasets_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What datasets prepares while reading tables (parquet of other layouts) goes to tmp_path, not ~/.cache."""
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "datasets-cache")


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))


def png(colour: tuple[int, int, int], size: tuple[int, int] = (24, 16)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


RICH_META = {"generator": "test", "seed": 7, "ratio": 0.25, "flag": False, "nothing": None,
             "scenes": {"pic:1": "pic_1.scene.json"}, "lint": [{"code": "L1", "turn": 2}], "big": 2**70}


def rich_dataset() -> Dataset:
    """Every field the format has: options, rubric, all feedback forms, per-turn meta, pictures, a declared taxonomy."""
    first = StoryTurn.model_validate({
        "id": "tomi-1", "task": "tomi_belief", "category": "Second-order belief", "mental_states": ["belief"],
        "image_dependent": True, "source": "ToMi", "meta": RICH_META,
        "turns": [
            {"story": "Sally puts the marble in the basket.", "question": "Which box is it in, A or B?",
             "image": "pic:1", "answers": ["A", "B"],
             "options": [{"label": "A", "text": "the basket"}, {"label": None, "text": "the box"}],
             "meta": {"question_type": "first_order", "order": 1}},
            {"feedback": {"by_answer": [{"answer": "A", "text": "Right, the basket."},
                                        {"answer": "B", "text": "Look again."}], "wrong": "Not quite."},
             "story": "Anne moves it.", "question": "Where will Sally look?", "image": "pic:2",
             "answers": ["The basket"], "rubric": {"key_inference": "Sally did not see the move",
                                                   "false_inferences": ["Sally saw it", "the marble moved itself"]},
             "meta": {"question_type": "second_order", "order": 2, "weights": [0.5, 0.5]}},
            {"feedback": {"right": "Yes.", "wrong": "No.", "always": "Listen."}, "question": "Why?",
             "answers": ["She was away"], "rubric": {"key_inference": "she was away"}},
        ]})
    second = StoryTurn.model_validate({
        "id": "tomi-2", "task": "tomi_reality", "category": "Reality",
        "turns": [{"story": "The marble is in the box.", "question": "Where is it really?", "answers": ["The box"],
                   "feedback": {}}]})
    dataset = Dataset([first, second], name="tomi-mini", version="2", licence="CC-BY-NC-4.0",
                      description="A test dataset.", images={"pic:1": png((200, 10, 10)), "pic:2": png((10, 10, 200))},
                      languages=["en", "zh"])
    dataset.taxonomy = Taxonomy.from_json({
        "categories": ["First-order belief", "Second-order belief", "Reality"],
        "tasks": {"tomi_belief": {"categories": ["First-order belief", "Second-order belief"], "name": "ToMi belief"},
                  "tomi_reality": {"categories": ["Reality"], "description": "Where is it really?"}}})
    return dataset


def assert_same(loaded: Dataset, original: Dataset, *, metadata: bool = True) -> None:
    assert [st.model_dump() for st in loaded] == [st.model_dump() for st in original]
    assert [st.model_dump_json() for st in loaded] == [st.model_dump_json() for st in original]  # key order too
    for image_id in ("pic:1", "pic:2"):
        assert loaded.image_bytes(image_id) == original.image_bytes(image_id)
    assert loaded.content_hash() == original.content_hash()
    if metadata:
        assert (loaded.name, loaded.version, loaded.licence, loaded.description, loaded.languages) == \
               (original.name, original.version, original.licence, original.description, original.languages)
        assert loaded.taxonomy == original.taxonomy


def test_meta_encoding_keeps_types_and_order() -> None:
    entries = encode_meta(RICH_META)
    assert [e["key"] for e in entries] == list(RICH_META)
    assert entries[1]["int"] == 7 and entries[2]["float"] == 0.25 and entries[3]["bool"] is False
    assert entries[4]["json"] == "null" and json.loads(entries[5]["json"]) == RICH_META["scenes"]
    assert decode_meta(entries) == RICH_META and list(decode_meta(entries)) == list(RICH_META)


def test_round_trip_commet_hub_folder_parquet_commet(tmp_path: Path) -> None:
    original = rich_dataset()
    folder = save_hf(original, tmp_path / "hub")
    assert_same(load_dataset(folder), original)
    # the folder without dataset.json: the parquet schema metadata carries the dataset's metadata
    bare = tmp_path / "bare"
    shutil.copytree(folder, bare)
    (bare / "dataset.json").unlink()
    assert_same(load_dataset(bare), original)
    # a third party's card without CoMMET's metadata: name, licence and languages from its YAML
    carded = tmp_path / "carded"
    (carded / "data").mkdir(parents=True)
    (shard,) = (folder / "data").glob("*.parquet")
    table = pq.read_table(shard)
    pq.write_table(table.replace_schema_metadata({b"huggingface": table.schema.metadata[b"huggingface"]}),
                   carded / "data" / "train.parquet")
    (carded / "README.md").write_text("---\nlicense: mit\nlanguage: [fr]\npretty_name: Theirs\n---\n# Theirs\n")
    theirs = load_dataset(carded)
    assert (theirs.name, theirs.licence, theirs.languages) == ("Theirs", "mit", ["fr"])
    # a plain folder of parquet files, no card
    shutil.copytree(folder / "data", tmp_path / "plain" / "shards")
    assert_same(load_dataset(tmp_path / "plain"), original)
    # a single parquet file
    (single,) = (folder / "data").glob("*.parquet")
    assert_same(load_dataset(single), original)
    # through `datasets` itself: load_dataset(folder) -> to_parquet / save_to_disk -> CoMMET (rows only)
    hub = datasets.load_dataset(str(folder), split="test", cache_dir=str(tmp_path / "cache"))
    hub.to_parquet(str(tmp_path / "again.parquet"))
    assert_same(load_dataset(tmp_path / "again.parquet"), original, metadata=False)
    hub.save_to_disk(str(tmp_path / "disk"))
    assert_same(load_dataset(tmp_path / "disk"), original, metadata=False)
    datasets.DatasetDict({"test": hub}).save_to_disk(str(tmp_path / "dict"))
    assert_same(load_dataset(tmp_path / "dict"), original, metadata=False)


def test_load_dataset_on_the_folder_gives_the_written_rows_with_image_features(tmp_path: Path) -> None:
    original = rich_dataset()
    folder = save_hf(original, tmp_path / "hub")
    hub = datasets.load_dataset(str(folder), split="test", cache_dir=str(tmp_path / "cache"))
    (single,) = (folder / "data").glob("*.parquet")
    assert hub.with_format("arrow")[:].to_pylist() == pq.read_table(single).to_pylist()
    turn_features = hub.features["turns"]
    inner = getattr(turn_features, "feature", None) or turn_features[0]
    assert isinstance(inner["image"], datasets.Image)
    picture = hub[0]["turns"][0]["image"]  # decoded by datasets into a PIL image
    assert picture.size == (24, 16) and picture.getpixel((0, 0)) == (200, 10, 10)
    first = hub[0]["turns"][1]
    assert first["feedback"]["by_answer"][1] == {"answer": "B", "text": "Look again."}
    assert first["rubric"]["false_inferences"] == ["Sally saw it", "the marble moved itself"]
    assert hub[0]["turns"][0]["options"][0] == {"label": "A", "text": "the basket"}
    assert {e["key"]: e["string"] for e in first["meta"]}["question_type"] == "second_order"


def test_dataset_card(tmp_path: Path) -> None:
    import yaml

    folder = save_hf(rich_dataset(), tmp_path / "hub")
    text = (folder / "README.md").read_text()
    front = yaml.safe_load(text.split("---")[1])
    assert front["license"] == "cc-by-nc-4.0" and front["language"] == ["en", "zh"]
    assert "visual-question-answering" in front["task_categories"]
    assert front["configs"] == [{"config_name": "default", "data_files": [{"split": "test", "path": "data/test-*.parquet"}]}]
    assert "| `tomi_belief` | ToMi belief | First-order belief, Second-order belief | 1 |" in text
    assert "commet eval --dataset" in text and "## Format" in text


@pytest.mark.parametrize("shard_bytes", [hf.SHARD_BYTES, 20_000])  # one parquet file, and several
def test_dataset_info_in_the_card_agrees_with_the_files_as_datasets_reads_them(
        tmp_path: Path, shard_bytes: int, monkeypatch: pytest.MonkeyPatch) -> None:
    import yaml

    monkeypatch.setattr(hf, "SHARD_BYTES", shard_bytes)
    folder = save_hf(load_dataset("sample"), tmp_path / "hub")
    files = sorted((folder / "data").glob("*.parquet"))
    assert (len(files) == 1) == (shard_bytes > 10**6), len(files)
    text = (folder / "README.md").read_text()
    info = yaml.safe_load(text.split("---")[1])["dataset_info"]
    assert datasets.Features._from_yaml_list(info["features"]) == hf._features()
    [split] = info["splits"]
    assert split["name"] == "test" and split["num_examples"] == 41
    assert info["download_size"] == sum(f.stat().st_size for f in files) and info["dataset_size"] == split["num_bytes"]
    loaded = datasets.load_dataset(str(folder), split="test", verification_mode="all_checks")  # checks the card
    assert loaded.features == hf._features() and len(loaded) == 41
    bare = tmp_path / "bare"  # the same files without dataset_info: what datasets itself counts
    shutil.copytree(folder, bare)
    (bare / "README.md").write_text(re.sub(r"dataset_info:\n(?:  .*\n|  \n)*", "", text))
    assert "dataset_info" not in (bare / "README.md").read_text() and "configs:" in (bare / "README.md").read_text()
    builder = datasets.load_dataset_builder(str(bare))
    builder.download_and_prepare()
    assert builder.info.splits["test"].num_bytes == split["num_bytes"]
    assert builder.info.splits["test"].num_examples == 41
    (folder / "README.md").write_text(text.replace("num_examples: 41", "num_examples: 40"))
    with pytest.raises(datasets.exceptions.NonMatchingSplitsSizesError):  # datasets does check the card
        datasets.load_dataset(str(folder), split="test", download_mode="force_redownload")


def test_convert_to_hf_cli_and_eval_on_the_folder(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["convert", "sample", "--to", "hf", "--out", str(tmp_path / "hub")])
    assert result.exit_code == 0, result.output
    assert load_dataset(tmp_path / "hub").content_hash() == load_dataset("sample").content_hash()
    result = runner.invoke(app, ["validate", str(tmp_path / "hub")])
    assert result.exit_code == 0, result.output


def third_party_folder(tmp_path: Path) -> Path:
    """A dataset someone saved with `datasets` directly: Image features, no id/category/feedback/meta/source."""
    features = datasets.Features({
        "task": datasets.Value("string"),
        "turns": [{"story": datasets.Value("string"), "question": datasets.Value("string"),
                   "answers": [datasets.Value("string")], "image": datasets.Image()}],
    })
    rows = {"task": ["reference_easy", "sarcasm"],
            "turns": [[{"story": "Mia can see only one of the two cups.", "question": "Which cup does she mean?",
                        "answers": ["The red cup"], "image": {"bytes": png((255, 0, 0)), "path": "cup.png"}}],
                      [{"story": "Dan gets cold soup and says 'Mmm, my favourite'.", "question": "Is he happy or sad?",
                        "answers": ["Sad"], "image": None}]]}
    folder = tmp_path / "third"
    datasets.Dataset.from_dict(rows, features=features).save_to_disk(str(folder))
    return folder


def test_third_party_save_to_disk_with_image_features_validates_and_evaluates(tmp_path: Path) -> None:
    folder = third_party_folder(tmp_path)
    loaded = load_dataset(folder)
    first = loaded.storyturns[0]
    assert (first.id, first.category, first.source) == ("third-0001", "Percept", "unknown")
    assert first.mental_states == ["percept", "intention"] and first.turns[0].image == "third-0001-0.png"
    assert loaded.image_bytes("third-0001-0.png") == png((255, 0, 0))
    assert [p for p in validate_dataset(loaded) if p.severity == "error"] == []
    result = CliRunner().invoke(app, ["eval", "--dataset", str(folder), "--model", "baseline:first-option",
                                      "--db", str(tmp_path / "r.sqlite")])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output


def write_table(path: Path, columns: dict) -> Path:
    import pyarrow as pa

    pq.write_table(pa.table(columns), path)
    return path


TURN = {"story": "s", "question": "q?", "answers": ["a"]}


@pytest.mark.parametrize(("make", "expected"), [
    (lambda d: write_table(d / "x.parquet", {"task": ["sarcasm"]}),  # no turns: which columns? (one line)
     ["x.parquet", "field=columns", "cannot tell which columns", "task (string)", "no --columns mapping found", "--adapter FILE.py:FUNCTION"]),
    (lambda d: write_table(d / "x.parquet", {"turns": [[TURN]]}), ["field=task", "missing required column 'task'"]),
    (lambda d: write_table(d / "x.parquet", {"task": ["sarcasm"], "turns": [[{"story": "s", "question": "q?"}]]}),
     ["field=turns.answers", "missing required turn field 'answers'"]),
    (lambda d: write_table(d / "x.parquet", {"task": ["sarcasm"], "turns": ["not a list"]}),  # read as layout (a)
     [":1 story=x-0001", "field=turns", "not the paper's pipe-format turns"]),
    (lambda d: write_table(d / "x.parquet", {"id": ["s1"], "task": ["nope"], "turns": [[TURN]]}),
     [":1 story=s1", "field=category", "not a known task"]),
    (lambda d: write_table(d / "x.parquet", {"id": ["s1", "s2"], "task": ["sarcasm"] * 2, "meta": ["{}", "{oops"],
                                            "turns": [[TURN], [TURN]]}), [":2 story=s2 turn=- field=meta", "cannot read"]),
    (lambda d: write_table(d / "x.parquet", {"id": ["s1"], "task": ["sarcasm"],
                                            "turns": [[TURN, {**TURN, "answers": []}]]}),
     [":1 story=s1 turn=1 field=answers"]),
    (lambda d: (d / "x.parquet").write_bytes(b"PAR1 this is not parquet") and d / "x.parquet",
     ["x.parquet", "cannot read x.parquet"]),
])
def test_bad_parquet_is_one_located_line(tmp_path: Path, make, expected: list[str]) -> None:  # noqa: ANN001
    path = make(tmp_path)
    with pytest.raises(FormatError) as caught:
        load_dataset(path)
    line = str(caught.value)
    assert all(part in line for part in expected), line
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert all(part in result.output.splitlines()[0] for part in expected)
    result = CliRunner().invoke(app, ["stats", str(path)])
    assert result.exit_code == 2 and result.output.strip().count("\n") == 0, result.output


def test_broken_save_to_disk_folders_are_located_errors(tmp_path: Path) -> None:
    folder = third_party_folder(tmp_path)
    (arrow,) = folder.glob("*.arrow")
    truncated = tmp_path / "truncated"
    shutil.copytree(folder, truncated)
    data = arrow.read_bytes()
    (truncated / arrow.name).write_bytes(data[: len(data) // 2])
    missing = tmp_path / "missing"
    shutil.copytree(folder, missing)
    (missing / arrow.name).unlink()
    no_state = tmp_path / "no-state"
    shutil.copytree(folder, no_state)
    (no_state / "state.json").unlink()
    garbage = tmp_path / "garbage"
    shutil.copytree(folder, garbage)
    (garbage / arrow.name).write_bytes(b"\x00" * 64)
    cases = {truncated: "cannot read", missing: "listed in state.json is missing",
             no_state: "no Arrow or parquet data", garbage: "cannot read"}
    for path, words in cases.items():
        with pytest.raises(FormatError) as caught:
            load_dataset(path)
        assert words in str(caught.value) and str(path) in str(caught.value), (path, str(caught.value))
        result = CliRunner().invoke(app, ["eval", "--dataset", str(path), "--model", "baseline:first-option",
                                          "--db", str(tmp_path / "r.sqlite")])
        assert result.exit_code == 2 and "Traceback" not in result.output, result.output
