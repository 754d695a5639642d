"""Short run ids: shown by ``runs`` and ``eval``, accepted (or a unique prefix) by every ``--run``; what eval
says of a resumed or finished run; the progress line and ``runs`` in a real 80-column terminal."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import commet
import commet.reports
from commet.store import RunLookupError, Store, short_ids
from commet.store.run_ids import SHORT_ID_LENGTH, full_id
from tests.fakeservers import FakeServer, RecordedRequest, Reply, error_reply, openai_reply
from tests.test_cli_runs import commet as run_commet
from tests.test_cli_runs import false_beliefs, in_tmux


def made_runs(tmp_path: Path) -> tuple[Path, list[str]]:
    """A store with three runs of the sample (two of one model), as a user makes them."""
    db = tmp_path / "s.sqlite"
    data = commet.load_dataset("sample")
    names = []
    for model, images in (("baseline:random-option", "off"), ("baseline:random-option", "on"),
                          ("baseline:first-option", "off")):
        summary = commet.evaluate(model, data, db=db, settings=commet.EvalSettings(images=images, limit=4))
        names.append(summary.run.name)
    return db, names


def one_error_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.stderr
    return lines[0]


def test_a_short_id_is_stable_and_lengthened_only_where_two_runs_share_it() -> None:
    assert short_ids(["a"]) == {"a": full_id("a")[:SHORT_ID_LENGTH]}
    assert short_ids(["b", "a"])["a"] == full_id("a")[:7] == "ca97811"  # sha256("a"), as `sha256sum` gives it
    seen: dict[str, str] = {}
    for i in range(100_000):  # sha256 is fixed: this finds the same pair of names every time
        name = f"run-{i}"
        prefix = full_id(name)[:SHORT_ID_LENGTH]
        if prefix in seen:
            first, second = seen[prefix], name
            break
        seen[prefix] = name
    else:
        pytest.fail("no two names share a 7-character id among 100,000")
    ids = short_ids([first, second, "other"])
    assert len(ids[first]) == len(ids[second]) > SHORT_ID_LENGTH and ids[first] != ids[second]
    assert len(ids["other"]) == len(ids[first])  # one length for the whole listing


def test_every_run_option_takes_a_short_id_or_a_unique_prefix(tmp_path: Path) -> None:
    db, names = made_runs(tmp_path)
    ids = short_ids(names)
    exported = tmp_path / "turns.jsonl"
    result = run_commet("export", "--run", ids[names[0]], "--out", str(exported), "--db", str(db))
    assert result.returncode == 0, result.stderr
    by_name = tmp_path / "by-name.jsonl"
    assert run_commet("export", "--run", names[0], "--out", str(by_name), "--db", str(db)).returncode == 0
    other = tmp_path / "other.jsonl"
    assert run_commet("export", "--run", names[1], "--out", str(other), "--db", str(db)).returncode == 0
    assert exported.read_text() == by_name.read_text() != other.read_text()
    result = run_commet("report", "--db", str(db), "--run", ids[names[2]][:4], "--format", "markdown")
    assert result.returncode == 0 and names[2] in result.stdout and names[0] not in result.stdout
    result = run_commet("report", "--db", str(db), "--run", "baseline:first", "--format", "markdown")
    assert result.returncode == 0 and f"Runs (short id, name): `{ids[names[2]]}` `{names[2]}`." in result.stdout
    result = run_commet("report", "--db", str(db))
    legend = "".join(result.stdout.split())  # one run a line, a name longer than the terminal folded
    assert f"runs:{ids[names[0]]}{names[0]}{ids[names[1]]}{names[1]}" in legend
    result = run_commet("report", "--db", str(db), "--run", ids[names[1]], "--format", "latex")
    assert result.stdout.startswith(f"% CoMMET report: runs (short id, name) {ids[names[1]]} {names[1]}\n")
    result = run_commet("compare", ids[names[0]], ids[names[1]], "--db", str(db))
    compared = "".join(result.stdout.split())  # (a name longer than the terminal is folded)
    assert result.returncode == 0 and f"A={names[0]}" in compared and f"B={names[1]}" in compared
    result = run_commet("rejudge", "--run", ids[names[2]], "--judge", "rules", "--as", "again", "--db", str(db))
    assert result.returncode == 0, result.stderr
    with Store(db) as store:
        assert store.find_run("again").settings.rejudged_from == names[2]
    result = run_commet("judges", "--db", str(db), "--run", ids[names[0]], "--format", "markdown")
    assert result.returncode == 0, result.stderr


def test_a_name_several_runs_start_with_lists_them_and_an_unknown_one_suggests(tmp_path: Path) -> None:
    db, names = made_runs(tmp_path)
    ids = short_ids(names)
    line = one_error_line(run_commet("export", "--run", "baseline:random-option", "--out", "x.jsonl", "--db",
                                     str(db)))
    assert "2 runs in" in line and f"{ids[names[0]]} {names[0]}" in line and f"{ids[names[1]]} {names[1]}" in line
    line = one_error_line(run_commet("rejudge", "--run", "random-option@commet", "--judge", "rules", "--db",
                                     str(db)))
    assert "no run named 'random-option@commet'" in line and "did you mean" in line and names[0] in line
    line = one_error_line(run_commet("compare", "ffffffff", ids[names[0]], "--db", str(db)))
    assert "no run named 'ffffffff'" in line and "commet runs" in line
    assert not (tmp_path / "x.jsonl").exists()
    with Store(db) as store, pytest.raises(KeyError):  # the Python API's error is still a KeyError
        commet.reports.select_runs(store, ["nope"])
    with Store(db) as store, pytest.raises(RunLookupError, match="2 runs"):
        store.find_run("baseline:random-option")


def test_eval_says_when_it_resumed_a_run_and_when_the_run_was_already_complete(tmp_path: Path) -> None:
    dataset = false_beliefs(tmp_path / "stories.jsonl", 5)
    refuse = {"story": True}

    def answer(request: RecordedRequest) -> Reply:
        if refuse["story"] and "Story 3." in json.dumps(request.json):
            return error_reply(400, "refused for this test")  # fails for good: not retried
        return openai_reply("The basket.")

    with FakeServer("openai", responder=answer) as server:
        args = ["eval", "--model", f"openai:m?base_url={server.url}/v1", "--dataset", str(dataset), "--db",
                str(tmp_path / "s.sqlite"), "--run", "mine", "--quiet"]
        key = {"OPENAI_API_KEY": "sk-test-abcdefghijklmnop0123456789"}
        first = run_commet(*args, env=key)
        assert first.returncode == 3 and first.stdout.startswith(f"run mine (id {full_id('mine')[:7]}): this time ")
        refuse["story"] = False
        second = run_commet(*args, env=key)
        assert second.returncode == 0, second.stderr
        assert f"run mine (id {full_id('mine')[:7]}) resumed: 4 of 5 StoryTurns kept from before; this time " \
            in " ".join(second.stdout.split())
        third = run_commet(*args, env=key)
    assert third.returncode == 0
    assert "run mine (id " in third.stdout and "is already complete: all 5 StoryTurns were scored earlier; nothing " \
        "was run" in " ".join(third.stdout.split())


def test_runs_and_the_progress_line_fit_a_real_80_column_terminal(tmp_path: Path) -> None:
    db, names = made_runs(tmp_path)
    with sqlite3.connect(db) as con:  # a status word as long as any
        con.execute("UPDATE runs SET status = 'stopped-spend-limit' WHERE name = ?", (names[1],))
    (tmp_path / "runs").mkdir()
    screen = in_tmux(tmp_path / "runs", ["runs", "--db", str(db)], env={})
    lines = screen.rstrip().splitlines()
    assert "EXIT=0" in screen and max(len(line) for line in lines) <= 80
    text = "".join(line.strip() for line in lines)
    for name, short in short_ids(names).items():
        assert short in screen and name in text
    assert "stopped-spend-limit" in screen
    (tmp_path / "eval").mkdir()
    screen = in_tmux(tmp_path / "eval", ["eval", "--model", "baseline:first-option", "--db", str(tmp_path / "p.sqlite"),
                                "--images", "off"], env={})
    bar = [line for line in screen.splitlines() if re.match(r"stories [━╸╺\s]", line)]  # the progress bar's lines
    assert "EXIT=0" in screen and bar and all(len(line) <= 80 for line in bar)
    assert re.search(r"41/41 right \d+/144 calls \d+\+\d+ err 0 \d:\d\d:\d\d$", bar[-1].rstrip()), bar[-1]


def test_version() -> None:
    result = subprocess.run([sys.executable, "-m", "commet", "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith(f"commet {commet.__version__} (Python ")
