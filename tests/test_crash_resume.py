"""A run killed with SIGKILL at an arbitrary moment resumes to the same results, repeating no call."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import FALSE_BELIEF

STORIES = 30


def make_inputs(tmp_path: Path) -> tuple[Path, Path]:
    dataset, replies = tmp_path / "stories.jsonl", {}
    with dataset.open("w") as out:
        for i in range(STORIES):
            out.write(json.dumps({**FALSE_BELIEF, "id": f"fb-{i}"}) + "\n")
            replies[f"fb-{i}"] = ["The basket." if i % 3 else "The box.", "No.", "The box."]
    replay = tmp_path / "replies.json"
    replay.write_text(json.dumps(replies))
    return dataset, replay


def eval_command(dataset: Path, replay: Path, db: Path) -> list[str]:
    return [sys.executable, "-m", "commet.cli", "eval", "--model", f"replay:{replay}?delay=0.05", "--dataset",
            str(dataset), "--db", str(db), "--run", "crash", "--concurrency", "4", "--quiet"]


def logged_calls(db: Path) -> int:
    with sqlite3.connect(db) as con:
        try:
            return con.execute("SELECT COUNT(*) FROM call_log WHERE kind='model' AND cached=0").fetchone()[0]
        except sqlite3.OperationalError:
            return 0


def results(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as con:
        return con.execute("SELECT story_id, turn, prompt, response, correct, branch, feedback_kind FROM turns "
                           "ORDER BY story_id, turn").fetchall()


def test_sigkill_then_rerun_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    dataset, replay = make_inputs(tmp_path)
    crashed, clean = tmp_path / "crashed.sqlite", tmp_path / "clean.sqlite"

    process = subprocess.Popen(eval_command(dataset, replay, crashed))
    deadline = time.monotonic() + 60
    while logged_calls(crashed) < 25 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.01)
    assert process.poll() is None, "the run finished before it could be killed"
    process.send_signal(signal.SIGKILL)
    process.wait()
    done_before = logged_calls(crashed)
    assert 25 <= done_before < STORIES * 3

    subprocess.run(eval_command(dataset, replay, crashed), check=True, capture_output=True)
    subprocess.run(eval_command(dataset, replay, clean), check=True, capture_output=True)

    assert results(crashed) == results(clean)
    assert len(results(clean)) == STORIES * 3
    with sqlite3.connect(crashed) as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        made = con.execute("SELECT COUNT(*) FROM call_log WHERE kind='model' AND cached=0").fetchone()[0]
        stored = con.execute("SELECT COUNT(*) FROM model_calls").fetchone()[0]
        status = con.execute("SELECT status FROM runs WHERE name='crash'").fetchone()[0]
    assert made == stored == STORIES * 3, "a completed call was made twice"
    assert status == "done"
