"""Shapes of a published table the loader reads whole or refuses with one located line (file, row, story, turn,
field), never half: shards named by split, option columns, nested turns under other names, picture paths from
the data folder, archives, ids written with other code points; and a refused table leaves nothing in
``datasets``' cache. Each table is built with ``datasets`` / pyarrow themselves.
"""

from __future__ import annotations

import io
import json
import tarfile
import unicodedata
import zipfile
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image
from typer.testing import CliRunner

from commet.cli import app
from commet.sources import load_dataset
from tests.test_hub_datasets import hub  # noqa: F401 - a fixture: the Hub offline, its caches in tmp_path

TURNS = [
    {"story_id": "s1", "turn": 1, "task": "false_belief_location", "category": "Belief", "story": "Sam puts a ball "
     "in the basket and leaves.", "question": "Where will Sam look?", "options": ["basket", "box"], "answer": "basket"},
    {"story_id": "s1", "turn": 2, "task": "false_belief_location", "category": "Belief", "story": "Ann moves it.",
     "question": "Where is the ball now?", "options": ["basket", "box"], "answer": "box"},
    {"story_id": "s2", "turn": 1, "task": "sarcasm", "category": "NLC", "story": "It rains. Tom says: lovely.",
     "question": "What does Tom mean?", "options": ["He likes it", "The opposite", "He asks"], "answer": "The opposite"},
]


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def _png(colour: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 8), colour).save(out, "PNG")
    return out.getvalue()


def _validate(target: Path, *extra: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(app, ["validate", str(target), *extra])
    assert "Traceback" not in result.output, result.output
    return result.exit_code, [line for line in result.stdout.splitlines() if ": error: " in line]


def _prepared(root: Path) -> list[Path]:
    folder = root / "datasets-cache" / "commet-folders"
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def _options(st_turn) -> list[tuple[str | None, str]]:  # noqa: ANN001 - a Turn
    return [(o.label, o.text) for o in st_turn.options]


# ------------------------------------------------------------------------------------- nothing left behind


def test_a_table_refused_after_datasets_prepared_it_leaves_nothing_in_its_cache(tmp_path: Path,
                                                                                hub: Path) -> None:  # noqa: F811
    kept = _jsonl(tmp_path / "good" / "data" / "test.jsonl", TURNS)
    assert _validate(kept.parent.parent)[0] == 0
    assert _prepared(tmp_path)  # a dataset read is kept in the content-keyed cache (what is removed otherwise)
    before = _prepared(tmp_path)
    unreadable = _jsonl(tmp_path / "odd" / "data" / "test.jsonl", [{"task": "sarcasm", "x": 1}])  # no question
    refused = _jsonl(tmp_path / "bad" / "data" / "test.jsonl", [TURNS[0] | {"answer": "the garden"}])  # no option
    for folder in (unreadable.parent.parent, refused.parent.parent):
        code, errors = _validate(folder)
        assert code == 2 and len(errors) == 1, errors
        assert _prepared(tmp_path) == before, folder  # what its load prepared is gone; the other dataset's kept


# ------------------------------------------------------------------------------------- shards and files


def _shards(folder: Path, parts: list[list[dict]]) -> list[Path]:
    paths = []
    for index, rows in enumerate(parts):
        path = folder / "data" / f"test-{index:05d}-of-{len(parts):05d}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        datasets.Dataset.from_list(rows).to_parquet(str(path))
        paths.append(path)
    return paths


def test_a_row_of_a_sharded_split_is_located_in_its_own_file(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    folder = tmp_path / "shards"
    second = _shards(folder, [TURNS[:2], TURNS[2:] + [TURNS[0] | {"story_id": "s3", "answer": "the garden"}]])[1]
    code, errors = _validate(folder)
    assert code == 2 and errors == [f"{second}:2 story=s3 turn=0 field=answer: error: answer 'the garden' is none of "
                                    "this turn's options ('basket'; 'box'): an answer must be an option's text or "
                                    "its label, or name exactly one option"]
    twice = tmp_path / "twice"
    first, again = _shards(twice, [TURNS, TURNS[:1]])
    code, errors = _validate(twice)
    assert code == 2 and errors == [f"{again}:1 story=s1 turn=- field=turn: error: turn 1 of this story is also on "
                                    f"{first.name} row 1"]


def test_a_truncated_shard_is_named(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    broken = _shards(tmp_path / "release", [TURNS[:2], TURNS[2:]])[1]
    broken.write_bytes(broken.read_bytes()[:-20])
    code, errors = _validate(tmp_path / "release")
    assert code == 2 and len(errors) == 1 and errors[0].startswith(f"{broken}:0 ") and "cannot read" in errors[0]


@pytest.mark.parametrize("name", ["test.zip", "test-000000.tar", "test.tar.gz"])
@pytest.mark.parametrize("beside_data", [False, True])
def test_an_archive_is_refused_naming_it(name: str, beside_data: bool, tmp_path: Path, hub: Path) -> None:  # noqa: F811
    folder = tmp_path / "release"
    (folder / "data").mkdir(parents=True)
    archive = folder / "data" / name
    if name.endswith(".zip"):
        with zipfile.ZipFile(archive, "w") as out:
            out.writestr("test.jsonl", json.dumps(TURNS[0]))
    else:
        with tarfile.open(archive, "w:gz" if name.endswith(".gz") else "w") as out:
            out.add(_jsonl(tmp_path / "0.json", [TURNS[0]]), arcname="000000.json")
    if beside_data:
        _jsonl(folder / "data" / "more.jsonl", TURNS)
    code, errors = _validate(folder)
    assert code == 2 and len(errors) == 1 and errors[0].startswith(f"{archive}:0 "), errors
    assert "extract it" in errors[0] and "--adapter FILE.py:FUNCTION" in errors[0]
    assert ("webdataset" in errors[0]) == (".tar" in name)
    assert _prepared(tmp_path) == []


# ------------------------------------------------------------------------------------- options and turns


def test_option_columns_are_one_options_cell_labelled_by_their_letters(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    rows = [{k: v for k, v in row.items() if k != "options"} | {
        f"Option{letter}": (row["options"][i] if i < len(row["options"]) else None) for i, letter in enumerate("ABCD")}
        | {"answer": "AB"[row["options"].index(row["answer"])]} for row in TURNS]
    data = load_dataset(_jsonl(tmp_path / "letters" / "data" / "test.jsonl", rows).parent.parent)
    turns = [turn for st in data.storyturns for turn in st.turns]
    assert [_options(t) for t in turns] == [[("A", "basket"), ("B", "box")]] * 2 + [
        [("A", "He likes it"), ("B", "The opposite"), ("C", "He asks")]]
    assert [t.answers for t in turns] == [["A"], ["B"], ["B"]]
    result = CliRunner().invoke(app, ["validate", str(tmp_path / "letters")])
    assert result.exit_code == 0 and "0 errors, 0 warnings" in result.stderr  # the label 'A' is no leak of "a ball"
    gap = [{k: v for k, v in row.items() if k != "OptionB"} for row in rows]
    code, errors = _validate(_jsonl(tmp_path / "gap" / "data" / "test.jsonl", gap).parent.parent)
    assert code == 2 and len(errors) == 1 and "field=options" in errors[0] and "--columns options=" in errors[0]
    both = [row | {"choices": ["x", "y"]} for row in rows]
    code, errors = _validate(_jsonl(tmp_path / "both" / "data" / "test.jsonl", both).parent.parent)
    assert code == 2 and len(errors) == 1 and "--columns options=choices" in errors[0]
    named = [{k.replace("Option", "pick_"): v for k, v in row.items()} for row in rows]
    folder = _jsonl(tmp_path / "named" / "data" / "test.jsonl", named).parent.parent
    again = load_dataset(folder, columns="options=pick_A,pick_B,pick_C")
    assert [_options(t) for st in again.storyturns for t in st.turns] == [_options(t) for t in turns]


def test_nested_turns_under_other_names_are_refused_not_half_read(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    def story(turn: dict) -> dict:
        return {"id": "s1", "task": "sarcasm", "category": "NLC", "turns": [turn]}

    labelled = story({"story": "It rains. Tom says: lovely.", "question": "What does Tom mean?",
                      "options": {"A": "He likes it", "B": "The opposite"}, "answer": "B"})
    data = load_dataset(_jsonl(tmp_path / "ok" / "data" / "test.jsonl", [labelled]).parent.parent)
    assert _options(data.storyturns[0].turns[0]) == [("A", "He likes it"), ("B", "The opposite")]
    assert data.storyturns[0].turns[0].answers == ["B"]
    other = story({"context": "It rains. Tom says: lovely.", "question": "What does Tom mean?", "answer": "no"})
    code, errors = _validate(_jsonl(tmp_path / "other" / "data" / "test.jsonl", [other]).parent.parent)
    assert code == 2 and len(errors) == 1 and "story=s1 turn=0 field=turns" in errors[0], errors
    assert "'context'" in errors[0] and "--adapter" in errors[0]


# ------------------------------------------------------------------------------------- files and ids


def test_a_json_file_of_table_rows_is_read_as_a_table(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    for name, text in (("rows.json", json.dumps(TURNS)), ("rows.jsonl", "".join(json.dumps(r) + "\n" for r in TURNS))):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        data = load_dataset(path)
        assert [(st.id, [(t.story, t.question, t.answers) for t in st.turns]) for st in data.storyturns] == [
            ("s1", [(r["story"], r["question"], [r["answer"]]) for r in TURNS[:2]]),
            ("s2", [(TURNS[2]["story"], TURNS[2]["question"], [TURNS[2]["answer"]])])]


def test_a_picture_path_from_the_data_folder_is_found_and_two_files_of_one_name_refused(
        tmp_path: Path, hub: Path) -> None:  # noqa: F811
    folder = tmp_path / "release"
    plain = datasets.Dataset.from_list(TURNS)
    features = datasets.Features({**plain.features, "image": datasets.Image()})
    cells = pa.array([{"bytes": None, "path": "p.png"} if row["turn"] == 1 else None for row in TURNS],
                     type=pa.struct([("bytes", pa.binary()), ("path", pa.string())]))
    table = plain.data.table.append_column("image", cells)  # an Image column of paths only, as the Hub keeps them
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "p.png").write_bytes(_png((200, 0, 0)))
    pq.write_table(table.replace_schema_metadata({b"huggingface": json.dumps(
        {"info": {"features": features.to_dict()}}).encode()}), folder / "data" / "test.parquet")
    data = load_dataset(folder)
    assert [bool(t.image) for st in data.storyturns for t in st.turns] == [True, False, True]
    assert {data.image_bytes(t.image) for st in data.storyturns for t in st.turns if t.image} == {_png((200, 0, 0))}
    (folder / "p.png").write_bytes(_png((0, 0, 200)))  # another picture of the same name at the top
    code, errors = _validate(folder)
    assert code == 2 and len(errors) == 1 and "names different files" in errors[0], errors


def test_ids_written_with_other_code_points_are_one_duplicate_id(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    rows = [TURNS[0] | {"story_id": unicodedata.normalize("NFC", "café")},
            TURNS[1] | {"story_id": unicodedata.normalize("NFD", "café")}]
    path = _jsonl(tmp_path / "ids" / "data" / "test.jsonl", rows)
    code, errors = _validate(path.parent.parent)
    assert code == 2 and len(errors) == 1 and errors[0].startswith(f"{path}:2 ") and "duplicate id" in errors[0]
    assert "NFC" in errors[0]


def test_a_json_file_wrapping_its_rows_is_read_as_those_rows(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    path = tmp_path / "wrapped" / "data" / "test.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"data": TURNS}), encoding="utf-8")
    data = load_dataset(path.parent.parent)
    assert [(st.id, [(t.question, t.answers, _options(t)) for t in st.turns]) for st in data.storyturns] == [
        (sid, [(r["question"], [r["answer"]], [(None, o) for o in r["options"]]) for r in TURNS if r["story_id"] == sid])
        for sid in ("s1", "s2")]


def test_what_datasets_cannot_cast_or_no_role_can_read_is_said(tmp_path: Path, hub: Path) -> None:  # noqa: F811
    numbers = [row | {"answer": row["options"].index(row["answer"])} for row in TURNS]  # option numbers
    code, errors = _validate(_jsonl(tmp_path / "numbers" / "data" / "test.jsonl", numbers).parent.parent)
    assert code == 2 and len(errors) == 3 and all("count from 0 or 1 is not guessed" in e for e in errors), errors
    assert [e.split(" field=")[0].rsplit("/", 1)[1] for e in errors] == [
        "test.jsonl:1 story=s1 turn=0", "test.jsonl:1 story=s1 turn=1", "test.jsonl:3 story=s2 turn=0"]
    counts = [{k: v for k, v in row.items() if k != "options"} | {"answer": 3} for row in TURNS]  # "How many?"
    data = load_dataset(_jsonl(tmp_path / "counts" / "data" / "test.jsonl", counts).parent.parent)
    assert [t.answers for st in data.storyturns for t in st.turns] == [["3"]] * 3
    struct = [row | {"question": {"text": row["question"]}} for row in TURNS]
    code, errors = _validate(_jsonl(tmp_path / "struct" / "data" / "test.jsonl", struct).parent.parent)
    assert code == 2 and len(errors) == 1 and "column 'question' holds struct {text}, which cannot be the question" \
        in errors[0], errors
    folder = _jsonl(tmp_path / "card" / "data" / "test.jsonl", TURNS).parent.parent
    (folder / "README.md").write_text("---\ndataset_info:\n  features:\n  - name: story_id\n    dtype: string\n---\n",
                                      encoding="utf-8")
    code, errors = _validate(folder)
    assert code == 2 and len(errors) == 1 and "dataset_info (README.md) declares features" in errors[0], errors
    assert not [p for p in _prepared(tmp_path) if "_card_" in p.name or "card" in p.parts]  # nothing of it kept


def test_a_table_of_single_questions_without_ids_makes_one_storyturn_per_row(tmp_path: Path,
                                                                              hub: Path) -> None:  # noqa: F811
    path = tmp_path / "questions" / "data" / "test.csv"
    path.parent.mkdir(parents=True)
    lines = ["STORY,QUESTION,OPTION-A,OPTION-B,ANSWER,task"] + [
        f'"{row["story"]}","{row["question"]}","{row["options"][0]}","{row["options"][1]}",'
        f'{"AB"[row["options"].index(row["answer"])]},{row["task"]}' for row in TURNS]
    path.write_text("\ufeff" + "\n".join(lines) + "\n", encoding="utf-8")
    data = load_dataset(path.parent.parent)
    assert [(st.id, [(t.story, t.question, t.answers, _options(t)) for t in st.turns]) for st in data.storyturns] == [
        (f"questions-{n:04d}", [(row["story"], row["question"], ["AB"[row["options"].index(row["answer"])]],
                                 [("A", row["options"][0]), ("B", row["options"][1])])]) for n, row in enumerate(TURNS, 1)]
    unnamed = [{k if k != "story" else "infilled_story": v for k, v in row.items() if k not in ("story_id", "turn")}
               for row in TURNS]  # its story under a name no role has: asked for, never left empty
    code, errors = _validate(_jsonl(tmp_path / "unnamed" / "data" / "test.jsonl", unnamed).parent.parent)
    assert code == 2 and len(errors) == 1 and "(no story column found)" in errors[0], errors
    assert "--columns story=infilled_story," in errors[0]
    later = [{k: v for k, v in row.items() if k not in ("story_id", "turn")} | ({"story": ""} if row["turn"] == 2 else {})
             for row in TURNS]  # a later turn's row, without its story or anything saying whose it is
    code, errors = _validate(_jsonl(tmp_path / "later" / "data" / "test.jsonl", later).parent.parent)
    assert code == 2 and len(errors) == 1 and ":2 story=later-0002 turn=- field=story" in errors[0], errors
    assert "--columns id=COLUMN" in errors[0]
    turns = [{k: v for k, v in row.items() if k != "story_id"} for row in TURNS]  # a turn column, and no story id
    code, errors = _validate(_jsonl(tmp_path / "turns" / "data" / "test.jsonl", turns).parent.parent)
    assert code == 2 and len(errors) == 1 and "no column can be the id" in errors[0], errors


@pytest.mark.parametrize("kind", ["gzip", "zip"])
def test_a_compressed_file_given_as_text_says_to_decompress_it(kind: str, tmp_path: Path) -> None:
    text = "".join(json.dumps(row) + "\n" for row in TURNS).encode()
    packed = tmp_path / f"storyturns.jsonl.{kind[:2]}"
    if kind == "gzip":
        import gzip

        packed.write_bytes(gzip.compress(text))
    else:
        with zipfile.ZipFile(packed, "w") as out:
            out.writestr("storyturns.jsonl", text)
    code, errors = _validate(packed)
    assert code == 2 and errors == [f"{packed}:0 story=- turn=- field=-: error: a {kind}"
                                    f"{'-compressed' if kind == 'gzip' else ' archive'} file, not text: decompress "
                                    "or extract it and give the file inside"]
    result = CliRunner().invoke(app, ["import", "bigtom", str(packed), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "not text: decompress" in result.output and not (tmp_path / "out").exists()
