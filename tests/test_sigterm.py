"""SIGTERM (what Slurm, Kubernetes and ``timeout`` send) stops a run as Ctrl-C does: what finished is
committed, the run is marked ``interrupted``, the program says how to resume and exits 143; the same
command resumes it to the results of a run never stopped. Ctrl-C (a real SIGINT) does the same with 130.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import commet
from commet.sources import load_dataset
from tests.judge_server import JudgeServer, verdict, write_dataset, write_replies

SOURCE = str(Path(commet.__file__).resolve().parents[1])
ENV = {**os.environ, "PYTHONPATH": SOURCE, "COLUMNS": "200", "OPENAI_API_KEY": "sk-sigterm-0123456789abcdef"}


def commet_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "commet.cli", *args], capture_output=True, text=True, env=ENV,
                          timeout=300)


def count(db: Path, sql: str) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as con:
            return int(con.execute(sql).fetchone()[0])
    except sqlite3.OperationalError:  # not created yet
        return 0


def stopped_midway(args: list[str], db: Path, progress_sql: str, signum: int,
                   at_least: int = 3) -> subprocess.CompletedProcess[str]:
    """Start ``commet ARGS``, send ``signum`` once ``progress_sql`` counts ``at_least``, and wait for it to end."""
    process = subprocess.Popen([sys.executable, "-m", "commet.cli", *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=ENV)
    deadline = time.monotonic() + 120
    while count(db, progress_sql) < at_least:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no progress"
        time.sleep(0.05)
    process.send_signal(signum)
    stdout, stderr = process.communicate(timeout=60)
    return subprocess.CompletedProcess(args, process.returncode, stdout, stderr)


def status(db: Path, run: str) -> str:
    with sqlite3.connect(db) as con:
        return con.execute("SELECT status FROM runs WHERE name = ?", (run,)).fetchone()[0]


def turns(db: Path, run: str) -> list[tuple]:
    with sqlite3.connect(db) as con:
        return con.execute("SELECT t.story_id, t.turn, t.response, t.outcome, t.correct FROM turns t JOIN runs r "
                           "ON r.id = t.run_id WHERE r.name = ? ORDER BY 1, 2", (run,)).fetchall()


@pytest.fixture(scope="module")
def replies(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A replay file answering every turn of the sample with its first expected answer."""
    path = tmp_path_factory.mktemp("sigterm") / "answers.json"
    path.write_text(json.dumps({st.id: [turn.answers[0] for turn in st.turns] for st in load_dataset("sample")}))
    return path


@pytest.mark.parametrize("workers", [1, 2])
def test_sigterm_stops_eval_like_ctrl_c_exit_143_and_the_run_resumes(workers: int, replies: Path,
                                                                      tmp_path: Path) -> None:
    reference = tmp_path / "reference.sqlite"
    clean = commet_cli("eval", "--model", f"replay:{replies}", "--db", str(reference), "--run", "r", "--quiet")
    assert clean.returncode == 0, clean.stderr
    db = tmp_path / "s.sqlite"
    slow = ["eval", "--model", f"replay:{replies}?delay=0.2", "--db", str(db), "--run", "r", "--quiet",
            "--concurrency", "2", "--workers", str(workers)]
    stopped = stopped_midway(slow, db, "SELECT COUNT(*) FROM model_calls", signal.SIGTERM)
    assert stopped.returncode == 143, stopped.stderr
    assert "Traceback" not in stopped.stderr
    assert stopped.stderr.strip() == "terminated (SIGTERM); run the same command again to resume"
    assert status(db, "r") == "interrupted"
    kept = count(db, "SELECT COUNT(*) FROM model_calls")
    assert kept >= 3
    resumed = commet_cli("eval", "--model", f"replay:{replies}", "--db", str(db), "--run", "r", "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    assert f"{kept} answered from the store" in resumed.stdout or workers > 1  # (workers: calls in flight vary)
    assert status(db, "r") == "done"
    assert turns(db, "r") == turns(reference, "r")


@pytest.mark.parametrize("signum, code, line", [
    (signal.SIGTERM, 143, "terminated (SIGTERM); run the same command again to resume"),
    (signal.SIGINT, 130, "interrupted; run the same command again to resume"),
])
def test_a_signal_stops_rejudge_and_marks_its_run_interrupted(signum: int, code: int, line: str,
                                                              tmp_path: Path) -> None:
    write_dataset(tmp_path / "ds")
    db = tmp_path / "r.sqlite"
    done = commet_cli("eval", "--model", write_replies(tmp_path / "replies.json"), "--dataset", str(tmp_path / "ds"),
                      "--db", str(db), "--run", "base", "--quiet", "--undecided-feedback", "wrong")
    assert done.returncode == 0, done.stderr

    def slow(model: str, answer: str, expected: list[str], question: str) -> str:
        time.sleep(3)
        return verdict(True, 1)

    with JudgeServer(slow) as server:
        args = ["rejudge", "--db", str(db), "--run", "base", "--judge", server.spec(), "--as", "again",
                "--dataset", str(tmp_path / "ds"), "--concurrency", "1"]
        stopped = stopped_midway(args, db, "SELECT COUNT(*) FROM runs WHERE name = 'again'", signum, at_least=1)
    assert stopped.returncode == code, stopped.stderr
    assert "Traceback" not in stopped.stderr and stopped.stderr.strip() == line
    assert status(db, "again") == "interrupted"


def test_sigterm_while_a_command_waits_for_input_exits_143_without_a_traceback(replies: Path, tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite"
    assert commet_cli("eval", "--model", f"replay:{replies}", "--db", str(db), "--run", "r", "--quiet",
                      "--limit", "2").returncode == 0
    process = subprocess.Popen([sys.executable, "-m", "commet.cli", "label", "--run", "r", "--labeller", "ann",
                                "--db", str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=ENV)
    assert process.stdout is not None
    seen = b""
    while b"q quit" not in seen:  # waiting for the first label (the prompt of keys ends without a newline)
        chunk = os.read(process.stdout.fileno(), 4096)
        assert chunk, process.communicate()
        seen += chunk
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 143, stderr
    assert "Traceback" not in stderr
