"""One count everywhere (issue 45, point 4): every output of one run reads the same figures.

Two real runs through the `commet` commands: the bundled sample under `--undecided-feedback stop` (stories
stopped at an undecided answer, one of them after a wrong answer) and a run whose model's port is closed
(it stops early: one StoryTurn failed, the rest never started). For each, eval's lines, its table, the
report's summary as CSV, its notices as Markdown, the HTML report's runs table, ``run_metrics`` and
``commet calibrate`` are read back and compared with the counts taken from the store by SQL here (not by
the code under test).
"""

from __future__ import annotations

import csv
import io
import json
import re
import socket
import sqlite3
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from commet.cli import app
from commet.sources import load_dataset
from commet.store import Store, short_ids
from tests.conftest import mixed_outcome_replies


def commet(*args: str, cwd: Path) -> Result:
    """``commet ARGS`` in this process (its output as a pipe gives it: whole lines)."""
    del cwd  # every path is given whole
    return CliRunner().invoke(app, list(args), env={"OPENAI_API_KEY": "sk-one-count-0123456789"})


def truth(db: Path) -> dict[str, int]:
    """The run's counts from the store's rows, by SQL: what every output must say."""
    with sqlite3.connect(db) as con:
        planned = con.execute("SELECT story_count FROM runs").fetchone()[0]
        rows = con.execute(
            "SELECT s.status, SUM(t.correct = 0), SUM(t.correct IS NULL AND t.response IS NOT NULL "
            "AND t.error_kind IS NULL), SUM(t.error_kind IS NOT NULL) FROM stories s LEFT JOIN turns t "
            "ON t.run_id = s.run_id AND t.story_id = s.story_id GROUP BY s.story_id").fetchall()
    failed = [r for r in rows if r[0] == "failed" or (r[3] or 0)]
    scored = [r for r in rows if r not in failed]
    return {"stories": planned, "scored": len(scored), "not scored": planned - len(scored),
            "stopped": sum(r[0] == "stopped" and not r[1] for r in scored),
            "stopped after wrong": sum(r[0] == "stopped" and bool(r[1]) for r in scored),
            "undecided answers": sum(r[2] or 0 for r in scored),
            "hinging": sum(not r[1] and (r[0] == "stopped" or bool(r[2])) for r in scored),
            "failed calls": sum(r[3] or 0 for r in rows)}


def brief_figure(text: str, name: str) -> int:
    found = re.search(rf"│ {re.escape(name)} +│ +(\d+) │", text)
    assert found, (name, text)
    return int(found.group(1))


def summary_row(tmp_path: Path, db: Path) -> dict[str, str]:
    done = commet("report", "--db", str(db), "--format", "csv", "--table", "summary", cwd=tmp_path)
    assert done.exit_code == 0, done.stderr
    return next(csv.DictReader(io.StringIO(done.stdout)))


def html_outcomes(tmp_path: Path, db: Path) -> dict[str, int]:
    pytest.importorskip("jinja2")
    pytest.importorskip("matplotlib")
    out = tmp_path / "r.html"
    done = commet("report", "--db", str(db), "--out", str(out), "--resamples", "100", cwd=tmp_path)
    assert done.exit_code == 0, done.stderr
    page = out.read_text()
    runs = page[page.index('id="runs-title"'):page.index('id="tables"')]
    cells = re.findall(r'<td class="num" data-outcome="([^"]+)">(?:<a[^>]*>)?(\d+)', runs)
    stories = re.search(r'<td class="num">(\d+)</td><td class="num" data-outcome', runs)
    assert stories and cells, runs[:2000]
    assert str(tmp_path) not in page.replace("<wbr>", "")  # no local absolute path in the file
    return {"stories": int(stories.group(1)), **{name: int(n) for name, n in cells}}


def test_a_run_with_stopped_stories_reads_the_same_in_every_output(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    replay = tmp_path / "replies.json"  # right, wrong, undecided and stopped stories (both kinds of stop)
    replay.write_text(json.dumps(mixed_outcome_replies(load_dataset("sample"))))
    done = commet("eval", "--db", str(db), "--model", f"replay:{replay}", "--images", "off", "--feedback",
                  "correctness", "--quiet", cwd=tmp_path)
    assert done.exit_code == 0, done.stderr
    expected = truth(db)
    assert expected["stopped"] and expected["stopped after wrong"]  # both kinds of stop are in the case
    text = " ".join(done.stdout.split())
    assert brief_figure(text, "Stories") == expected["stories"]
    assert brief_figure(text, "Stopped at undecided") == expected["stopped"]
    assert brief_figure(text, "Undecided answers") == expected["undecided answers"]
    assert brief_figure(text, "Stories hinging on undecided") == expected["hinging"]
    assert brief_figure(text, "Not scored") == expected["not scored"] == 0
    stopped = "story" if expected["stopped"] == 1 else "stories"
    said = (f"{expected['undecided answers']} answers left undecided by the rules judge, {expected['stopped']} "
            f"{stopped} stopped at an undecided answer and {expected['stopped after wrong']} more stopped with a "
            f"wrong answer (counted wrong); {expected['hinging']} of {expected['scored']} scored stories hinge on "
            "them")
    assert said in text
    with Store(db) as store:
        [run] = store.runs()
        run_id = short_ids([run.name])[run.name]
    assert f"commet eval --db {db} --finish {run_id} --judge openai:gpt-4o" in done.stdout  # whole, on one line
    row = summary_row(tmp_path, db)
    assert (int(row["Stories"]), int(row["Stopped at undecided"]), int(row["Undecided answers"]),
            int(row["Stories hinging on undecided"]), int(row["Not scored"])) == (
        expected["stories"], expected["stopped"], expected["undecided answers"], expected["hinging"], 0)
    markdown = commet("report", "--db", str(db), "--format", "markdown", "--table", "summary", cwd=tmp_path).stdout
    assert said in " ".join(markdown.split()) and markdown.count("Undecided answers are never counted right") == 1
    shown = html_outcomes(tmp_path, db)
    assert shown["stories"] == expected["stories"] and shown["stopped"] == expected["stopped"]
    assert shown["not scored"] == 0 and sum(v for k, v in shown.items() if k != "stories") == expected["stories"]
    calibrated = commet("calibrate", "--db", str(db), "--run", run_id, "--sample", "6", cwd=tmp_path)
    assert calibrated.exit_code == 0, calibrated.stderr
    story_turns = "StoryTurn" if expected["stopped"] == 1 else "StoryTurns"
    assert (f"{expected['stopped']} {story_turns} stopped at an undecided answer and {expected['stopped after wrong']} "
            "more stopped with a wrong answer are outside the calibration") in " ".join(calibrated.stdout.split())
    from commet.reports import run_metrics

    with Store(db) as store:
        metrics = run_metrics(store, store.runs()[0])
    assert (metrics.stopped_stories, metrics.undecided_turns, metrics.stories.total) == (
        expected["stopped"], expected["undecided answers"], expected["scored"])


def test_a_run_stopped_by_a_closed_port_reads_the_same_in_every_output(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    db = tmp_path / "p.sqlite"
    done = commet("eval", "--db", str(db), "--model", f"openai:m?base_url=http://127.0.0.1:{port}/v1&max_attempts=1",
                  "--limit", "6", "--quiet", cwd=tmp_path)
    assert done.exit_code == 3, done.stderr
    expected = truth(db)
    assert expected["stories"] == 6 and expected["not scored"] == 6 and expected["failed calls"] >= 1
    out, err = " ".join(done.stdout.split()), " ".join(done.stderr.split())
    calls = expected["failed calls"]
    assert f"{calls} call{'' if calls == 1 else 's'} failed for good" in out and "errors" not in out
    assert brief_figure(out, "Stories") == 6 and brief_figure(out, "Not scored") == 6
    assert re.search(r"incomplete: 6 of 6 StoryTurns not scored \((\d+) with a call that failed for good", err), err
    row = summary_row(tmp_path, db)
    assert (row["Stories"], row["Not scored"]) == ("6", "6")
    shown = html_outcomes(tmp_path, db)
    assert shown["stories"] == 6 and shown["not scored"] == 6


def test_prose_wraps_at_spaces_and_after_a_name_s_punctuation_only() -> None:
    from commet.reports.cells import wrap_words

    name = "baseline:random-option@commet-sample:images=off,feedback=correctness,cfg=7d20289a"
    text = wrap_words(f"run {name} (id 5d91cf0) is already complete: all 41 StoryTurns were scored earlier", 40)
    lines = text.splitlines()
    assert all(len(line) <= 40 for line in lines) and "".join(lines).replace(" ", "") == (
        f"run {name} (id 5d91cf0) is already complete: all 41 StoryTurns were scored earlier").replace(" ", "")
    words = {w for line in lines for w in line.split()}
    assert any("7d20289a" in line for line in lines) and {"already", "complete:", "StoryTurns"} <= words  # whole
    assert lines[0].startswith("run baseline:")  # a long name starts where the line has room
    assert wrap_words("  connection (model, 1 turn), first at story s-1 turn 0", 20).splitlines() == [
        "  connection (model,", "  1 turn), first at", "  story s-1 turn 0"]  # an indented line keeps its indent
