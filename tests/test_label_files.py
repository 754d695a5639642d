"""Label files are strict CSV, compared as the store compares them, refused whole at the right line
(issue 44, points 5 and 7): a real results store made by ``commet eval`` with a baseline model.

Also a store whose ``labels`` or calibration tables have another shape, or whose calibration sample
is damaged: one line naming the table and what to do, from every command that reads them.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.cli import app
from commet.store import Store

runner = CliRunner()
HEADER = "run,story_id,turn,label,labeller\n"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, list[str]]:
    root = tmp_path_factory.mktemp("labels")
    db = root / "c.sqlite"
    result = runner.invoke(app, ["eval", "--dataset", "sample", "--model", "baseline:first-option", "--db", str(db)])
    assert result.exit_code == 0, result.output
    with Store(db) as store:
        run = store.runs()[0]
        stories = sorted({row.story_id for row in store.turn_rows(run.id) if row.response is not None and row.turn == 1})
    return db, run.name, stories


@pytest.fixture
def store(made: tuple[Path, str, list[str]], tmp_path: Path) -> Path:
    copy = tmp_path / "c.sqlite"
    shutil.copyfile(made[0], copy)
    return copy


def labels_in(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as connection:
        if not connection.execute("SELECT 1 FROM sqlite_master WHERE name = 'labels'").fetchone():
            return []
        return connection.execute("SELECT story_id, turn, label, labeller FROM labels ORDER BY 1, 2, 4").fetchall()


def imported(db: Path, tmp_path: Path, text: str | bytes) -> tuple[int, str]:
    file = tmp_path / "labels.csv"
    file.write_bytes(text if isinstance(text, bytes) else text.encode())
    result = runner.invoke(app, ["label", "import", str(file), "--db", str(db)])
    return result.exit_code, result.output


def refused(db: Path, tmp_path: Path, text: str | bytes, *says: str) -> str:
    before = labels_in(db)
    code, output = imported(db, tmp_path, text)
    assert code == 2 and all(part in output for part in says), output
    assert output.strip().count("\n") == 0 and "Traceback" not in output, output
    assert labels_in(db) == before, "a refused file wrote labels"
    return output


def test_a_good_file_is_imported(store: Path, made: tuple[Path, str, list[str]], tmp_path: Path) -> None:
    _, run, (s1, s2, *_) = made
    code, output = imported(store, tmp_path, f'\ufeff{HEADER}"{run}",{s1},1,correct," ann "\r\n"{run}",{s2},0,Incorrect,bob\n')
    assert code == 0 and "imported 2 labels" in output, output
    assert labels_in(store) == [(s1, 1, "correct", "ann"), (s2, 0, "incorrect", "bob")]


def test_a_quote_left_open_is_a_located_error_and_nothing_is_written(store: Path, made: tuple, tmp_path: Path) -> None:
    _, run, (s1, s2, s3, *_) = made
    text = f'{HEADER}"{run}",{s1},0,correct,ann\n"{run}",{s2},0,correct,"ann\n"{run}",{s3},0,incorrect,bob\n'
    refused(store, tmp_path, text, "labels.csv:3:", "a quote opened in this record runs on to line 4")
    refused(store, tmp_path, text.rsplit("\n", 2)[0] + "\nbob,x\n", "labels.csv:3:", "never closed")
    refused(store, tmp_path, f'{HEADER}"{run}",{s1},0,correct,"ann"x\n', "labels.csv:2:", "not strict CSV")
    refused(store, tmp_path, f'{HEADER}"{run}",{s1},0,correct\n', "labels.csv:2:", "4 fields where the header has 5")
    refused(store, tmp_path, f'{HEADER}"{run}",{s1},0,correct,"ann\nr"\n', "labels.csv:2:", "labeller", "line break")
    refused(store, tmp_path, f"run,story_id,label,labeller\n\"{run}\",{s1},correct,ann\n", "labels.csv:1:", "turn")
    refused(store, tmp_path, "", "empty")


def test_ids_are_compared_as_the_store_compares_them(store: Path, made: tuple, tmp_path: Path) -> None:
    _, run, (s1, *_) = made
    conflict = refused(store, tmp_path, f"{HEADER}\"{run}\",{s1},1,correct,ann\n\"{run}\",{s1},01,incorrect,ann\n",
                       "labels.csv:3:", "conflicting labels", "lines 2 and 3")
    assert "correct and incorrect" in conflict
    refused(store, tmp_path, f"{HEADER}\"{run}\",{s1},1,correct,ann\n\"{run}\", {s1} ,001,correct, ann\n", "a second label",
            "lines 2 and 3")
    for turn in ("\u0661", "1.0", "-1", "0x1", "", "1e0", "99999999999"):
        refused(store, tmp_path, f"{HEADER}\"{run}\",{s1},{turn},correct,ann\n", "labels.csv:2:", "turn")


def test_nul_bytes_and_huge_fields_are_told_at_their_line(store: Path, made: tuple, tmp_path: Path) -> None:
    _, run, (s1, s2, *_) = made
    refused(store, tmp_path, f"{HEADER}\"{run}\",{s1},0,correct,ann\n\"{run}\",{s2},0,correct,a\0n\n".encode(),
            "labels.csv:3:", "NUL")
    huge = "a" * 10_000_000
    refused(store, tmp_path, f"{HEADER}\"{run}\",{s1},0,correct,{huge}\n", "labels.csv:2:", "field limit")
    refused(store, tmp_path, f"{HEADER}\"{run}\",{s1},0,correct,ann\n\"{run}\",{s2},0,correct,{huge}\n", "labels.csv:3:")
    refused(store, tmp_path, b"run,story_id\xff\n", "not UTF-8")


def test_a_table_of_another_shape_is_one_line_in_every_command(store: Path, made: tuple, tmp_path: Path) -> None:
    _, run, (s1, *_) = made
    with sqlite3.connect(store) as connection:
        connection.execute("CREATE TABLE labels (id INTEGER PRIMARY KEY, note TEXT)")
    good = tmp_path / "good.csv"
    good.write_text(f"{HEADER}\"{run}\",{s1},0,correct,ann\n")
    # a proportional draw reads no labels, so the sample is recorded and `report` reads labels for it
    for command in (["label", "import", str(good)], ["calibrate", "--run", run, "--sample", "8", "--design",
                                                      "proportional"],
                    ["judges"], ["report"], ["label", "--run", run, "--labeller", "ann"]):
        result = runner.invoke(app, [*command, "--db", str(store)], input="q\n")
        assert result.exit_code == 2 and "labels table has another shape" in result.output, (command, result.output)
        assert "ALTER TABLE labels RENAME" in result.output and "Traceback" not in result.output


def test_a_damaged_calibration_sample_is_one_line(store: Path, made: tuple) -> None:
    _, run, _ = made
    drawn = runner.invoke(app, ["calibrate", "--db", str(store), "--run", run, "--sample", "8", "--resamples", "100"])
    assert drawn.exit_code == 0, drawn.output
    for damage in ("UPDATE calibration_samples SET population_json = 'not json'",
                   "UPDATE calibration_samples SET population_json = '[1, 2]'",
                   "UPDATE calibration_samples SET seed = 'x'"):
        with sqlite3.connect(store) as connection:
            connection.execute(damage)
        for command in (["calibrate", "--run", run], ["label", "--run", run, "--labeller", "ann", "--calibration"]):
            result = runner.invoke(app, [*command, "--db", str(store)], input="q\n")
            assert result.exit_code == 2 and "calibration sample" in result.output and "--redraw" in result.output, (
                damage, command, result.output)
        with sqlite3.connect(store) as connection:
            connection.execute("UPDATE calibration_samples SET population_json = '{}', seed = 0")


def test_the_review_apps_calibration_pages_say_a_table_of_another_shape(store: Path, tmp_path: Path) -> None:
    import httpx

    from commet.apps.review.app import create_app
    from commet.apps.review.db import ReviewDB
    from tests.review_server import PASSWORD, serving, write_dataset
    from tests.test_review_security import csrf_of

    with sqlite3.connect(store) as connection:
        connection.execute("CREATE TABLE labels (id INTEGER PRIMARY KEY, note TEXT)")
    reviews = ReviewDB(tmp_path / "review.sqlite")
    reviews.add_user("alice", PASSWORD)
    with serving(create_app(write_dataset(tmp_path / "ds"), reviews, results=store)) as base, \
            httpx.Client(base_url=base, follow_redirects=False) as client:
        client.post("/login", data={"csrf": csrf_of(client.get("/login").text), "name": "alice", "password": PASSWORD})
        page = client.get("/calibration")
        assert page.status_code == 409 and "labels table has another shape" in page.text


def test_the_review_apps_calibration_pages_say_a_damaged_sample(store: Path, made: tuple, tmp_path: Path) -> None:
    """A calibration sample row the store cannot read (its population not JSON) is a 409 page saying to draw the
    sample again, on every Calibration page, never a server error."""
    import httpx

    from commet.apps.review.app import create_app
    from commet.apps.review.db import ReviewDB
    from tests.review_server import PASSWORD, serving, write_dataset
    from tests.test_review_security import csrf_of

    _, run, _ = made
    drawn = runner.invoke(app, ["calibrate", "--db", str(store), "--run", run, "--sample", "8", "--resamples", "100"])
    assert drawn.exit_code == 0, drawn.output
    with sqlite3.connect(store) as connection:
        connection.execute("UPDATE calibration_samples SET population_json = 'not json'")
    reviews = ReviewDB(tmp_path / "review.sqlite")
    reviews.add_user("alice", PASSWORD)
    with serving(create_app(write_dataset(tmp_path / "ds"), reviews, results=store)) as base, \
            httpx.Client(base_url=base, follow_redirects=False) as client:
        client.post("/login", data={"csrf": csrf_of(client.get("/login").text), "name": "alice", "password": PASSWORD})
        for path in ("/calibration", f"/calibration/label?run={run}"):
            page = client.get(path)
            assert page.status_code == 409 and "calibration sample" in page.text and "--redraw" in page.text, (
                path, page.status_code, page.text[:300])
