"""``commet eval`` as a user meets it: real processes, a real terminal width, real servers on 127.0.0.1.

Exit codes that tell the truth (0 only when every StoryTurn was scored, 3 with a summary of
the failures otherwise), Ctrl-C at any moment (the resume line, exit 130, the run marked
``interrupted``, a rerun that resumes), commits as the run goes, and run names that explain
a clash.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from commet.cli import RESUME_LINE
from tests.conftest import FALSE_BELIEF
from tests.fakeservers import FakeServer, error_reply, openai_reply

KEY = "sk-test-abcdefghijklmnop0123456789"
TERMINAL = {"COLUMNS": "80", "LINES": "40"}


def commet(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "commet.cli", *args], capture_output=True, text=True,
                          env={**os.environ, **TERMINAL, **(env or {})}, timeout=timeout)


def start(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    # Ctrl-C's default action in the child: a test suite started in the background of a script
    # (``cmd &``) inherits SIGINT ignored, and a child that ignores it would never be interrupted
    return subprocess.Popen([sys.executable, "-m", "commet.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **TERMINAL, **(env or {})},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def false_beliefs(path: Path, count: int) -> Path:
    """``count`` three-turn StoryTurns that differ in their text, so no two share a model call."""
    with path.open("w") as out:
        for i in range(count):
            first = f"Story {i}. {FALSE_BELIEF['storyturn'][0]}"
            out.write(json.dumps({**FALSE_BELIEF, "id": f"fb-{i}",
                                  "storyturn": [first, *FALSE_BELIEF["storyturn"][1:]]}) + "\n")
    return path


def query(db: Path, sql: str, *params: object) -> list[tuple]:
    with sqlite3.connect(db) as con:
        try:
            return con.execute(sql, params).fetchall()
        except sqlite3.OperationalError:  # the file or its tables do not exist yet
            return []


def run_status(db: Path) -> str:
    return query(db, "SELECT status FROM runs")[0][0]


def calls_made(db: Path) -> int:
    rows = query(db, "SELECT COUNT(*) FROM call_log WHERE kind = 'model' AND cached = 0 AND error IS NULL")
    return rows[0][0] if rows else 0


def wait_for_calls(process: subprocess.Popen, db: Path, count: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while calls_made(db) < count and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.01)
    assert calls_made(db) >= count


@contextmanager
def held_mid_run(process: subprocess.Popen, db: Path, count: int, total: int) -> Iterator[int | None]:
    """Hold the store's write lock once the run has committed ``count`` calls: the run cannot commit
    (so cannot end) while held, and blocks at its next commit; a signal sent inside arrives mid-run
    however slowly this process is scheduled. Yields the calls committed by then, or None when
    the run had already ended before the lock was taken (a starved test process: try again)."""
    wait_for_calls(process, db, count)
    lock = sqlite3.connect(db, timeout=30, isolation_level=None)
    try:
        lock.execute("BEGIN IMMEDIATE")
        made = lock.execute("SELECT COUNT(*) FROM call_log WHERE kind = 'model' AND cached = 0 "
                            "AND error IS NULL").fetchone()[0]
        status = lock.execute("SELECT status FROM runs").fetchone()[0]
        yield made if status == "running" and made < total else None
    finally:
        if lock.in_transaction:
            lock.execute("ROLLBACK")
        lock.close()


def signal_mid_run(args: list[str], db: Path, sig: signal.Signals, *, after: int, total: int,
                   tries: int = 3) -> tuple[subprocess.Popen, str, int]:
    """Start ``commet ARGS``, send ``sig`` once ``after`` calls are committed (see :func:`held_mid_run`);
    returns the ended process, its stderr and the calls committed when the signal was sent."""
    for _ in range(tries):
        db.unlink(missing_ok=True)
        process = start(*args)
        with held_mid_run(process, db, after, total) as made:
            if made is not None:
                process.send_signal(sig)
        _, stderr = process.communicate(timeout=60)
        if made is not None:
            return process, stderr, made
    raise AssertionError(f"the run ended before it could be signalled, {tries} times")


# ---------------------------------------------------------------------------------------- failures


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("fault", ["401", "refused"])
def test_a_run_whose_every_call_fails_exits_3_says_why_and_a_rerun_retries(fault: str, tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    bad_key = error_reply(401, f"Incorrect API key provided: {KEY}")
    with FakeServer("openai", responder=lambda request: bad_key) as server:
        url = f"{server.url}/v1" if fault == "401" else f"http://127.0.0.1:{closed_port()}/v1"
        args = ["eval", "--model", f"openai:m?base_url={url}&max_attempts=2&backoff_base=0.01", "--db", str(db),
                "--limit", "4", "--quiet"]
        failed = commet(*args, env={"OPENAI_API_KEY": KEY})
        assert failed.returncode == 3, failed.stderr
        lines = failed.stderr.splitlines()
        kind, message = ("auth", "HTTP 401") if fault == "401" else ("connection", "connection error")
        # said at once, before the summary (the first failure of its kind; a refused connection's retry first)
        said = "failed for good: model openai:m (auth)" if fault == "401" else \
            "retrying model openai:m (connection, attempt 1 of 2"
        assert lines[0].startswith(said) and message in lines[0]
        incomplete = re.compile(r"incomplete: 4 of 4 StoryTurns not scored \((\d) with a call that failed for good"
                                r"(, (\d) not started)?\); calls that failed for good:\Z")
        start = next(i for i, line in enumerate(lines) if incomplete.match(line))
        found = incomplete.match(lines[start])
        assert int(found.group(1)) + int(found.group(3) or 0) == 4
        assert re.match(rf"  {kind} \(model, [1-4] turns?\), first at story ", lines[start + 1])
        assert message in lines[start + 1]
        assert lines[start + 2].startswith(f"stopped early: model calls kept failing the same way ({kind})")
        assert lines[start + 3].startswith("to do: ") and lines[-1] == \
            "once that is done, run the same command again to continue (exit code 3)"
        assert KEY not in failed.stdout + failed.stderr
        if fault == "401":
            assert "Incorrect API key provided: ***" in lines[start + 1]  # the server echoed the key: redacted
        assert run_status(db) == "incomplete"
        if fault == "refused":
            return
        server.responder = lambda request: openai_reply("The apple.")
        fixed = commet(*args, env={"OPENAI_API_KEY": KEY})
    assert fixed.returncode == 0, fixed.stderr
    assert "incomplete" not in fixed.stderr and run_status(db) == "done"
    assert query(db, "SELECT COUNT(*) FROM stories WHERE status IN ('done', 'stopped')")[0][0] == 4


def test_the_failure_summary_in_a_real_80_column_terminal(tmp_path: Path) -> None:
    """Under tmux (a real tty of 80 columns): the summary is there, whole, after the tables; exit 3."""
    db = tmp_path / "s.sqlite"
    with FakeServer("openai", responder=lambda request: error_reply(401, "bad key")) as server:
        screen = in_tmux(tmp_path, ["eval", "--model", f"openai:m?base_url={server.url}/v1", "--db", str(db),
                                    "--limit", "3"], env={"OPENAI_API_KEY": KEY})
    assert "EXIT=3" in screen
    text = " ".join(screen.split())  # prose is wrapped at spaces to the terminal, never inside a word
    assert re.search(r"incomplete: 3 of 3 StoryTurns not scored \(\d with a call that failed for good(, \d not "
                     r"started)?\); calls that failed for good:", text), text
    assert "│ Not scored │ 3 │" in text  # the table counts what the summary counts
    assert "once that is done, run the same command again to continue (exit code 3)" in text
    assert "stories" in screen and "Story accuracy" in screen  # the progress bar and the table were drawn


#: the whole pane, wrapped lines joined (-J)
TMUX_CAPTURE = ["capture-pane", "-p", "-J", "-S", "-200"]


def in_tmux(tmp_path: Path, args: list[str], *, env: dict[str, str], width: int = 80) -> str:
    """Run ``commet ARGS`` in a detached tmux session of ``width`` columns; return the screen as shown."""
    if not Path("/usr/bin/tmux").exists():
        pytest.skip("tmux is not installed")
    socket_name = f"commet-test-{os.getpid()}-{tmp_path.name}"
    script = tmp_path / "run.sh"
    exports = "".join(f"export {k}='{v}'\n" for k, v in {**env, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}.items())
    quoted = " ".join(f"'{a}'" for a in args)
    script.write_text(f"{exports}cd '{tmp_path}'\n'{sys.executable}' -m commet.cli {quoted}\necho EXIT=$?\n"
                      "sleep 30\n")
    tmux = ["tmux", "-L", socket_name]
    subprocess.run([*tmux, "new-session", "-d", "-x", str(width), "-y", "200", "bash", str(script)], check=True)
    try:
        deadline = time.monotonic() + 60
        screen = ""
        while time.monotonic() < deadline:
            screen = subprocess.run([*tmux, *TMUX_CAPTURE], capture_output=True, text=True).stdout
            if "EXIT=" in screen:
                break
            time.sleep(0.1)
        return screen
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)


# ---------------------------------------------------------------------------------------- Ctrl-C


def test_sigint_with_a_network_model_marks_the_run_interrupted_and_a_rerun_resumes(tmp_path: Path) -> None:
    dataset, db = false_beliefs(tmp_path / "stories.jsonl", 30), tmp_path / "s.sqlite"
    slow = openai_reply("The basket.")
    slow.delay = 0.05
    with FakeServer("openai", responder=lambda request: slow) as server:
        args = ["eval", "--model", f"openai:m?base_url={server.url}/v1", "--dataset", str(dataset), "--db", str(db),
                "--concurrency", "4", "--quiet"]
        process, stderr, made = signal_mid_run(args, db, signal.SIGINT, after=12, total=90)
        assert process.returncode == 130, stderr
        assert stderr.strip().splitlines()[-1] == RESUME_LINE and "Traceback" not in stderr
        assert run_status(db) == "interrupted"
        before = calls_made(db)
        assert 12 <= made <= before < 90  # the calls answered while the lock was held are committed too
        requests_before = len(server.requests)
        again = commet(*args)
        sent = len(server.requests) - requests_before
    assert again.returncode == 0, again.stderr
    assert run_status(db) == "done"
    assert calls_made(db) == query(db, "SELECT COUNT(*) FROM model_calls")[0][0] == 90  # none made twice
    assert sent <= 90 - before + 4  # at most the calls in flight at the interrupt were sent again


def test_sigint_and_sigkill_with_the_baseline(tmp_path: Path) -> None:
    """The offline baseline yields to the loop: SIGINT is handled mid-run, and rows are committed as the
    run goes (a SIGKILL keeps them); reruns resume to the same results as an uninterrupted run."""
    dataset = false_beliefs(tmp_path / "stories.jsonl", 600)
    interrupted, killed, clean = tmp_path / "int.sqlite", tmp_path / "kill.sqlite", tmp_path / "clean.sqlite"
    args = ["eval", "--model", "baseline:first-option", "--dataset", str(dataset), "--concurrency", "16", "--quiet"]

    process, stderr, _ = signal_mid_run([*args, "--db", str(interrupted)], interrupted, signal.SIGINT,
                                        after=150, total=1800)
    assert process.returncode == 130 and stderr.strip().splitlines()[-1] == RESUME_LINE
    assert run_status(interrupted) == "interrupted" and calls_made(interrupted) < 1800

    process, _, made = signal_mid_run([*args, "--db", str(killed)], killed, signal.SIGKILL, after=150, total=1800)
    assert process.returncode == -signal.SIGKILL
    assert 150 <= made == calls_made(killed) < 1800  # committed while running, not only at the end
    assert run_status(killed) == "running"

    for db in (interrupted, killed, clean):
        assert commet(*args, "--db", str(db)).returncode == 0
        assert run_status(db) == "done"
    turns = "SELECT story_id, turn, response, correct FROM turns ORDER BY story_id, turn"
    assert query(interrupted, turns) == query(killed, turns) == query(clean, turns)
    assert len(query(clean, turns)) == 1800


# ---------------------------------------------------------------------------------------- run names


def test_a_run_name_clash_lists_the_settings_that_differ_side_by_side(tmp_path: Path) -> None:
    db = str(tmp_path / "s.sqlite")
    base = ["eval", "--model", "baseline:random-option?seed=1", "--db", db, "--limit", "2", "--quiet"]
    assert commet(*base, "--run", "mine").returncode == 0
    clash = commet(*base, "--run", "mine", "--temperature", "0.7", "--max-tokens", "64")
    assert clash.returncode == 2
    lines = clash.stderr.splitlines()
    assert lines[0] == f"error: run 'mine' already exists in {db} with other settings:"
    header, *rows, advice = lines[1:]
    assert header.split() == ["setting", "stored", "run", "this", "command"]
    assert sorted(row.split() for row in rows) == [["generation.max_tokens", "512", "64"],
                                                   ["generation.temperature", "0.0", "0.7"]]
    assert advice.startswith("pick another --run name, or leave --run out")
    assert all(len(line) <= 80 for line in [header, *rows])  # the side-by-side table fits a terminal

    # without --run, each configuration gets its own default name: no clash, two runs
    assert commet(*base).returncode == 0
    assert commet(*base, "--temperature", "0.7").returncode == 0
    assert commet(*base, "--model", "baseline:random-option?seed=2").returncode == 0
    names = [r[0] for r in query(Path(db), "SELECT name FROM runs WHERE name != 'mine' ORDER BY id")]
    assert len(names) == 3 and len({name.rsplit(",cfg=", 1)[1] for name in names}) == 3
    assert all(name.startswith("baseline:random-option@commet-sample:images=on,feedback=original,limit=2,cfg=")
               for name in names)
