"""The malformed-input corpus (tests/data/malformed, built by its make_corpus.py).

Every case goes through ``commet validate`` and ``commet eval`` in this process, against one real
SQLite store that already holds a finished run: both exit 2 with exactly the one located line the
manifest names (file, line, column, story, turn, field), no traceback, identical lines from both
commands, and the store gains no row. The valid controls pass both. The other commands that run
datasets (sweep, study build, review serve) go through the same gate.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path

import pytest
import typer
from click.testing import CliRunner

from commet.cli import app as typer_app

#: The click command built once (typer's runner rebuilds it on every call, about 75 ms each).
app = typer.main.get_command(typer_app)

CORPUS = Path(__file__).parent / "data" / "malformed"
CASES = json.loads((CORPUS / "cases.json").read_text(encoding="utf-8"))
CONTROLS = sorted(p for p in (CORPUS / "controls").iterdir() if p.is_dir())
LOCATED = re.compile(r"^(?P<file>.+?):(?P<line>\d+)(?::(?P<column>\d+))? story=(?P<story>.*) turn=(?P<turn>\S+) "
                     r"field=(?P<field>\S+): (?P<severity>error|warning): (?P<message>.+)$")
TABLES = ("runs", "model_calls", "judgments", "call_log", "turns", "stories")


def located(text: str) -> list[str]:
    return [line for line in text.splitlines() if LOCATED.match(line)]


def dataset_of(path: Path) -> str:
    """What to hand the CLI: a case's file, or its folder."""
    return str(path / "data.jsonl") if (path / "data.jsonl").is_file() else (
        str(path / "data.json") if (path / "data.json").is_file() else str(path))


def row_counts(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as con:
        return {table: con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in TABLES}


def one_run_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real store with one finished run, so that a refused eval that wrote anything would show (this corpus's
    and tests/test_malformed_input.py's)."""
    db = tmp_path_factory.mktemp("store") / "commet.sqlite"
    result = CliRunner().invoke(app, ["eval", "--model", "baseline:first-option", "--dataset", "sample",
                                      "--db", str(db), "--quiet"])
    assert result.exit_code == 0, result.output
    assert row_counts(db)["runs"] == 1
    return db


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return one_run_store(tmp_path_factory)


def test_the_corpus_is_large_and_names_every_case_once() -> None:
    names = [case["name"] for case in CASES]
    assert len(names) >= 60 and len(set(names)) == len(names)
    assert all((CORPUS / "cases" / case["path"]).exists() or os.path.islink(CORPUS / "cases" / case["path"])
               for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_malformed_input_is_refused_by_validate_and_eval(case: dict, store: Path) -> None:
    if case["name"].startswith("hf-"):
        pytest.importorskip("datasets")
    path = CORPUS / "cases" / case["path"]
    runner = CliRunner()

    checked = runner.invoke(app, ["validate", str(path)])
    assert checked.exit_code == 2, checked.output
    assert "Traceback" not in checked.output and isinstance(checked.exception, SystemExit)
    lines = located(checked.stdout)
    assert len(lines) == 1 and len(checked.stdout.strip().splitlines()) == 1, checked.output
    assert "1 errors, 0 warnings" in checked.stderr
    match = LOCATED.match(lines[0])
    assert match is not None
    want = case["expect"]
    assert match["severity"] == "error"
    if case["name"].startswith("hf-"):  # the HF loader may name a file inside the folder, and a row
        assert want["file"] in match["file"], lines[0]
    else:
        assert Path(match["file"]).name == want["file"], lines[0]
        assert match["line"] == str(want["line"] or 0), lines[0]
        assert match["column"] == (str(want["column"]) if want["column"] else None), lines[0]
        assert match["story"] == (want["story"] if want["story"] is not None else "-"), lines[0]
        assert match["turn"] == (str(want["turn"]) if want["turn"] is not None else "-"), lines[0]
        assert match["field"] == (want["field"] or "-"), lines[0]
    assert want["says"] in match["message"], lines[0]
    assert all(char.isprintable() for char in checked.output.replace("\n", "")), repr(checked.output)

    before = row_counts(store)
    evaluated = runner.invoke(app, ["eval", "--model", "baseline:first-option", "--dataset", dataset_of(path),
                                    "--db", str(store), "--quiet", "--force"])
    assert evaluated.exit_code == 2, evaluated.output
    assert "Traceback" not in evaluated.output and isinstance(evaluated.exception, SystemExit)
    assert located(evaluated.stderr) == lines and evaluated.stdout == ""
    assert row_counts(store) == before


@pytest.mark.parametrize("control", CONTROLS, ids=[c.name for c in CONTROLS])
def test_valid_controls_pass_validate_and_eval(control: Path, store: Path) -> None:
    runner = CliRunner()
    checked = runner.invoke(app, ["validate", dataset_of(control)])
    assert checked.exit_code == 0, checked.output
    assert checked.stdout == "" and "0 errors, 0 warnings" in checked.stderr
    before = row_counts(store)["runs"]
    evaluated = runner.invoke(app, ["eval", "--model", "baseline:first-option", "--dataset", dataset_of(control),
                                    "--db", str(store), "--quiet", "--run", f"control-{control.name}"])
    assert evaluated.exit_code == 0, evaluated.output
    assert row_counts(store)["runs"] == before + 1


def test_a_fifo_named_like_a_picture_is_refused_without_blocking(tmp_path: Path, store: Path) -> None:
    folder = tmp_path / "fifo"
    (folder / "images").mkdir(parents=True)
    os.mkfifo(folder / "images" / "pic1.png")  # opening it would block forever
    record = json.loads((CORPUS / "cases" / "image-missing" / "storyturns.jsonl").read_text())
    (folder / "storyturns.jsonl").write_text(json.dumps(record) + "\n")
    result = CliRunner().invoke(app, ["validate", str(folder)])
    assert result.exit_code == 2
    assert located(result.stdout) == [f"{folder / 'storyturns.jsonl'}:1 story=ok-1 turn=0 field=image: error: "
                                      f"image 'pic1' is not a regular file ({folder / 'images' / 'pic1.png'})"]


def warnings_only(tmp_path: Path) -> Path:
    """A dataset whose only problem is a warning: a category that does not match its task."""
    record = json.loads((CORPUS / "controls" / "crlf-jsonl" / "data.jsonl").read_text().splitlines()[0])
    path = tmp_path / "warn.jsonl"
    path.write_text(json.dumps({**record, "category": "Desire"}) + "\n")
    return path


def test_force_runs_a_dataset_with_warnings_only(tmp_path: Path) -> None:
    path, db = warnings_only(tmp_path), tmp_path / "w.sqlite"
    runner = CliRunner()
    checked = runner.invoke(app, ["validate", str(path)])
    assert checked.exit_code == 0 and "0 errors, 1 warnings" in checked.stderr
    refused = runner.invoke(app, ["eval", "--model", "baseline:first-option", "--dataset", str(path), "--db", str(db),
                                  "--quiet"])
    assert refused.exit_code == 2
    assert located(refused.stderr) == located(checked.stdout)
    assert "--force" in refused.stderr and not db.exists()
    forced = runner.invoke(app, ["eval", "--model", "baseline:first-option", "--dataset", str(path), "--db", str(db),
                                 "--quiet", "--force"])
    assert forced.exit_code == 0, forced.output
    assert located(forced.stderr) == located(checked.stdout) and "running despite 1 warning(s)" in forced.stderr
    assert row_counts(db)["runs"] == 1


@pytest.mark.parametrize("case", ["duplicate-id", "image-truncated-png", "id-path-traversal"])
def test_sweep_study_build_and_review_serve_refuse_like_eval(case: str, tmp_path: Path) -> None:
    path = CORPUS / "cases" / case
    dataset = dataset_of(path)
    expected = located(CliRunner().invoke(app, ["validate", dataset]).stdout)
    assert len(expected) == 1
    config = tmp_path / "sweep.toml"
    config.write_text(f'db = "sweep.sqlite"\nmodels = ["baseline:first-option"]\ndatasets = ["sample", {json.dumps(dataset)}]\n')
    commands = {
        "sweep": ["sweep", str(config), "--force"],
        "study build": ["study", "build", "--dataset", dataset, "--out", str(tmp_path / "study.json")],
        "review serve": ["review", "serve", "--dataset", dataset, "--db", str(tmp_path / "review.sqlite"),
                         "--port", "9"],
    }
    for name, args in commands.items():
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, (name, result.output)
        assert "Traceback" not in result.output
        assert located(result.stderr) == expected, (name, result.output)
    assert not (tmp_path / "sweep.sqlite").exists()  # not even the sample's run: every dataset is checked first
    assert not (tmp_path / "study.json").exists()
    assert not (tmp_path / "review.sqlite").exists()


def test_the_python_api_refuses_a_path_with_errors(tmp_path: Path) -> None:
    from commet.engine import evaluate
    from commet.format import DatasetRefused

    with pytest.raises(DatasetRefused) as refused:
        evaluate("baseline:first-option", CORPUS / "cases" / "duplicate-id" / "data.jsonl", db=tmp_path / "api.sqlite")
    assert [p.field for p in refused.value.problems] == ["id"]
    assert not (tmp_path / "api.sqlite").exists()
