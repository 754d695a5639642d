"""The engine's malformed-input corpus (tests/data/malformed/engine, built by its make_corpus.py).

Every file a command reads besides its dataset (replay, sweep, study, label and password files,
results stores), each with one problem, through every command that reads it: exit code 2, exactly
one line naming the file and where (line, column, story, turn) and what, no traceback, nothing
written, no hang. Files git cannot hold (a FIFO, a link to /dev/zero, a sparse file past a size
limit, a folder) are made here. Then replay files of odd but valid replies (lone surrogates,
escape sequences, 100 KB, NUL, right-to-left overrides): every run takes them, exit 0.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
from pathlib import Path

import pytest
import typer
from click.testing import CliRunner

from commet.cli import app as typer_app

app = typer.main.get_command(typer_app)

CORPUS = Path(__file__).parent / "data" / "malformed" / "engine"
CASES = json.loads((CORPUS / "cases.json").read_text(encoding="utf-8"))
REPLIES = sorted((CORPUS / "replies").glob("*.json"))
LOCATED = re.compile(r"^(?P<file>.+?):(?P<line>\d+)(?::(?P<column>\d+))? story=(?P<story>\S*) turn=(?P<turn>\S+) "
                     r"field=(?P<field>\S+): error: (?P<message>.+)$")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A store with two finished runs, a study file built from the sample, and a labels CSV that fits."""
    folder = tmp_path_factory.mktemp("world")
    store = folder / "store.sqlite"
    for name, model in (("a", "baseline:first-option"), ("b", "baseline:random-option")):
        done = CliRunner().invoke(app, ["eval", "--model", model, "--db", str(store), "--run", name, "--quiet",
                                        "--limit", "2"])
        assert done.exit_code == 0, done.output
    study = folder / "study.json"
    built = CliRunner().invoke(app, ["study", "build", "--dataset", "sample", "--out", str(study)])
    assert built.exit_code == 0, built.output
    labels = folder / "labels.csv"
    labels.write_text("run,story_id,turn,label,labeller\na,sample-common_desire-1,0,correct,ann\n")
    return {"store": store, "study": study, "labels": labels}


def input_file(case: dict, tmp_path: Path) -> Path:
    """The case's file: from the corpus, or made here when git cannot hold it."""
    if "file" in case:
        return CORPUS / "cases" / case["file"]
    special, path = case["special"], tmp_path / f"{case['name']}.input"
    if special == "fifo":
        os.mkfifo(path)
    elif special == "dev-zero":
        path.symlink_to("/dev/zero")
    elif special == "folder":
        path.mkdir()
    else:  # sparse:SIZE - no block of it is written
        with path.open("wb") as handle:
            handle.truncate(int(special.split(":")[1]))
    return path


def commands(kind: str, path: Path, world: dict[str, Path], out: Path) -> dict[str, list[str]]:
    """Every command that reads a file of this kind, with it in its place."""
    db = str(out / "new.sqlite")
    if kind == "replay":
        sweep = out / "sweep.toml"
        sweep.write_text(f'db = "{db}"\nmodels = [{json.dumps(f"replay:{path}")}]\n')
        return {"eval": ["eval", "--model", f"replay:{path}", "--db", db, "--quiet"],
                "eval --judge": ["eval", "--model", "baseline:first-option", "--judge", f"replay:{path}", "--db", db,
                                 "--quiet"],
                "sweep": ["sweep", str(sweep)]}
    if kind == "sweep":
        return {"sweep": ["sweep", str(path)]}
    if kind == "study":
        return {"study links": ["study", "links", str(path), "--db", db],
                "study export": ["study", "export", str(path), "--out", str(out / "answers.csv"), "--db", db],
                "study export-run": ["study", "export-run", str(path), "--study-db", db, "--db", str(world["store"])],
                "study serve": ["study", "serve", str(path), "--db", db, "--port", "0"]}
    if kind == "labels":
        return {"label import": ["label", "import", str(path), "--db", str(world["store"])]}
    if kind == "password":
        return {"study serve": ["study", "serve", str(world["study"]), "--db", db, "--port", "0",
                                "--organiser-password-file", str(path)]}
    store = str(path)
    return {"eval": ["eval", "--model", "baseline:first-option", "--db", store, "--quiet", "--limit", "1"],
            "report": ["report", "--db", store], "runs": ["runs", "--db", store],
            "export": ["export", "--run", "a", "--out", str(out / "a.jsonl"), "--db", store],
            "judges": ["judges", "--db", store], "compare": ["compare", "a", "b", "--db", store],
            "label import": ["label", "import", str(world["labels"]), "--db", store],
            "rejudge": ["rejudge", "--run", "a", "--judge", "rules", "--db", store]}


def snapshot(*folders: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else p.stat().st_mode.__str__()
            for folder in folders for p in sorted(folder.rglob("*")) if not p.is_symlink() or p.exists()}


def test_the_corpus_covers_every_kind_and_names_every_case_once() -> None:
    names = [case["name"] for case in CASES]
    assert len(names) == len(set(names)) and len(names) >= 40
    assert {case["kind"] for case in CASES} == {"replay", "sweep", "study", "labels", "password", "store"}
    assert all((CORPUS / "cases" / case["file"]).is_file() for case in CASES if "file" in case)


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_a_malformed_input_file_is_one_located_line_and_exit_2(case: dict, world: dict[str, Path],
                                                               tmp_path: Path) -> None:
    path = input_file(case, tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    ran = commands(case["kind"], path, world, out)
    before = snapshot(out, world["store"].parent, CORPUS)
    for name, args in ran.items():
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, (name, result.output)
        assert isinstance(result.exception, SystemExit) and "Traceback" not in result.output, (name, result.output)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and result.stdout == "", (name, result.output)
        if case["kind"] == "store":
            assert lines[0] == f"error: {path}: {case['says']}", (name, lines)
        else:
            match = LOCATED.match(lines[0])
            assert match is not None, (name, lines)
            assert match["file"] == str(path) and match["field"] == "-", (name, lines)
            assert int(match["line"]) == case["line"], (name, lines)
            assert match["column"] == (str(case["column"]) if case["column"] else None), (name, lines)
            assert match["story"] == (case["story"] or "-") and match["turn"] == (
                str(case["turn"]) if case["turn"] is not None else "-"), (name, lines)
            assert case["says"] in match["message"], (name, lines)
        # nothing written: no store, no study database, no answers file, inputs untouched
        assert snapshot(out, world["store"].parent, CORPUS) == {**before, **{k: v for k, v in snapshot(out).items()
                                                                            if k.endswith("sweep.toml")}}, name


@pytest.mark.parametrize("replies", REPLIES, ids=[path.stem for path in REPLIES])
def test_odd_but_valid_replies_run_to_the_end(replies: Path, tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    result = CliRunner().invoke(app, ["eval", "--model", f"replay:{replies}", "--db", str(db), "--quiet",
                                      "--limit", "1"])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    with sqlite3.connect(db) as con:
        (run, status), = con.execute("SELECT name, status FROM runs").fetchall()
        stored = [row[0] for row in con.execute("SELECT response_text FROM model_calls")]
    assert status == "done"
    assert stored and [text.encode("utf-8") for text in stored]  # valid text (encodes), whatever came in
    exported = CliRunner().invoke(app, ["export", "--db", str(db), "--run", run, "--out", str(tmp_path / "t.jsonl")])
    assert exported.exit_code == 0, exported.output
    report = CliRunner().invoke(app, ["report", "--db", str(db)])
    assert report.exit_code == 0 and "\x1b[31m" not in report.stdout  # a reply never drives the terminal
