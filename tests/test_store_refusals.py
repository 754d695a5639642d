"""Files that are not a readable results store: one line naming the file, exit 2, the file untouched."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.cli import app
from commet.engine import evaluate
from commet.store import Store, StoreError

COMMANDS = [
    ["runs"],
    ["report"],
    ["export", "--run", "b", "--out", "x.jsonl"],
    ["eval", "--model", "baseline:first-option", "--dataset", "sample", "--run", "b", "--quiet"],
]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def foreign(path: Path) -> Path:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE runs (x INTEGER)")
    db.execute("INSERT INTO runs VALUES (1)")
    db.commit()
    db.close()
    return path


def newer(path: Path) -> Path:
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    return path


def text(path: Path) -> Path:
    path.write_text("run,accuracy\nb,0.5\n")
    return path


@pytest.mark.parametrize(("make", "message"), [
    (text, "not a CoMMET results store (SQLite: file is not a database)"),
    (foreign, "not a CoMMET results store (it has tables but no CoMMET schema version)"),
    (newer, "written by a newer CoMMET (store schema 99); this version reads schema 1: upgrade commet"),
])
def test_a_file_that_is_not_a_store_is_refused_untouched_by_every_command(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make, message: str) -> None:
    monkeypatch.chdir(tmp_path)
    path = make(tmp_path / "r.sqlite")
    before = digest(path)
    with pytest.raises(StoreError, match="r.sqlite: "):
        Store(path)
    for command in COMMANDS:
        result = CliRunner().invoke(app, [*command, "--db", str(path)])
        assert result.exit_code == 2, (command, result.output)
        assert result.output.strip() == f"error: {path}: {message}", command
    assert digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.sqlite"]  # no -wal, no -shm, no export


def test_a_run_with_damaged_settings_is_named_with_its_file_and_field(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "r.sqlite"
    evaluate("baseline:first-option", "sample", judge="rules", db=db, run="b")
    with Store(db) as store:
        original = store.db.execute("SELECT settings_json FROM runs").fetchone()[0]
    for damage, message in [("json_set(settings_json, '$.images', 'sometimes')",
                             "run 'b': stored setting images='sometimes' is not one of on, off, needed"),
                            ("'{not json'", "run 'b': stored settings are not JSON"),
                            ("'[1, 2]'", "run 'b': stored settings are not a JSON object"),
                            (None, "run 'b': stored status 'paused' is not one of running, done, incomplete, "
                                   "interrupted, failed, stopped-spend-limit")]:
        with Store(db) as store:
            if damage is None:  # the settings as written, the status outside its choices
                store.db.execute("UPDATE runs SET settings_json = ?, status = 'paused'", (original,))
            else:
                store.db.execute(f"UPDATE runs SET settings_json = {damage}")
        for command in COMMANDS:
            result = CliRunner().invoke(app, [*command, "--db", str(db)])
            assert result.exit_code == 2, (command, result.output)
            line = result.output.strip()
            assert line.startswith(f"error: {db}: {message}") and "\n" not in line, (command, line)
    assert not (tmp_path / "x.jsonl").exists()


def test_a_new_file_opened_by_two_stores_at_once_gets_one_schema(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    first, second = Store(path), Store(path)  # the second sees the whole schema, not a part of it
    assert first.runs() == second.runs() == []
    first.close()
    second.close()
    assert Store(path).db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "1"


def test_a_folder_given_as_the_store_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "results"
    folder.mkdir()
    for command in COMMANDS:
        result = CliRunner().invoke(app, [*command, "--db", str(folder)])
        assert result.exit_code == 2, (command, result.output)
        assert result.output.strip() == f"error: {folder}: is a folder, expected a results file (.sqlite)", command
    assert list(folder.iterdir()) == []


def test_a_damaged_stored_verdict_is_named_not_scored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "r.sqlite"
    evaluate("baseline:first-option", "sample", judge="rules", db=db, run="b")
    with Store(db) as store:
        story, turn = store.db.execute("SELECT story_id, turn FROM turns WHERE outcome = 'correct' "
                                       "ORDER BY story_id, turn LIMIT 1").fetchone()
        store.db.execute("UPDATE turns SET outcome = 'maybe' WHERE story_id = ? AND turn = ?", (story, turn))
    for command in (["report"], ["export", "--run", "b", "--out", "x.jsonl"]):
        result = CliRunner().invoke(app, [*command, "--db", str(db)])
        assert result.exit_code == 2, (command, result.output)
        assert result.output.strip() == (f"error: {db}: run 1, story {story!r}, turn {turn}: stored outcome 'maybe' "
                                         "is not one of correct, incorrect, undecided"), command
    assert not (tmp_path / "x.jsonl").exists()
    with Store(db) as store:  # a cached verdict (what an LLM judge's rerun would reuse) is checked the same way
        store.record_judgment(run_id=1, story_id=story, turn=turn, key="k" * 64, judge="openai:j", request_json="{}",
                              outcome="correct", branch=None, rationale="", details={}, latency_s=0.0)
        store.flush()
        assert store.cached_judgment("k" * 64).verdict().outcome == "correct"
        store.db.execute("UPDATE judgments SET outcome = 'yes'")
    with Store(db) as store, pytest.raises(StoreError) as refused:
        store.cached_judgment("k" * 64)
    assert str(refused.value) == f"{db}: judgment kkkkkkkkkkkk: stored outcome 'yes' is not one of correct, incorrect, undecided"
