"""``commet rejudge`` accounts for failures exactly as ``eval`` does.

A judge model on 127.0.0.1 answers every call with HTTP 401: re-judging exits 3, prints each kind
of failure with its first message, leaves the new run ``incomplete`` (not ``done``), counts no
failed call as a decision; the same command, once the judge answers, retries the failed judgments
and closes the run ``done``. (A signal during a rejudge: tests/test_sigterm.py.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import typer
from click.testing import CliRunner

from commet.cli import app as typer_app
from commet.engine import EvalSettings, evaluate
from commet.judges.prompts import PROMPT_VERSION
from tests.fakeservers import FakeServer, RecordedRequest, Reply, error_reply
from tests.judge_server import JudgeServer, verdict, write_dataset, write_replies

app = typer.main.get_command(typer_app)
LLM = f"llm:openai:judge-model@{PROMPT_VERSION}"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-rejudge-test-0123456789abcdef")


def status(db: Path, run: str) -> str:
    with sqlite3.connect(db) as con:
        return con.execute("SELECT status FROM runs WHERE name = ?", (run,)).fetchone()[0]


@pytest.fixture
def base(tmp_path: Path) -> Path:
    """A store with run 'base' of the judge server's two stories, judged by the rules (2 answers undecided)."""
    dataset = write_dataset(tmp_path / "ds")
    db = tmp_path / "r.sqlite"
    evaluate(write_replies(tmp_path / "replies.json"), dataset, judge="rules", db=db, run="base",
             settings=EvalSettings(undecided_feedback="wrong"))
    return db


def rejudge(db: Path, spec: str) -> object:
    return CliRunner().invoke(app, ["rejudge", "--db", str(db), "--run", "base", "--judge", spec, "--as", "llm",
                                    "--dataset", str(db.parent / "ds")])


def test_a_judge_answering_401_is_exit_3_with_its_message_and_an_incomplete_run(base: Path) -> None:
    def refuse(request: RecordedRequest) -> Reply:
        return error_reply(401, "Incorrect API key provided: sk-rejud***")

    with FakeServer("openai", responder=refuse) as server:
        result = rejudge(base, f"openai:judge-model?base_url={server.url}/v1")
        calls = len(server.requests)
    assert result.exit_code == 3, result.output
    assert "Traceback" not in result.output
    assert calls == 2  # auth failures are not retried: one call per undecided answer
    assert status(base, "llm") == "incomplete"
    assert "incomplete: 2 of 2 StoryTurns not scored (2 with a call that failed for good); calls that failed for " \
           "good:" in result.stderr
    failure = next(line for line in result.stderr.splitlines() if line.startswith("  judge_auth"))
    assert "judge, 2 turns" in failure and "HTTP 401" in failure and "Incorrect API key provided" in failure
    assert "sk-rejudge-test" not in result.output  # the key never shows
    assert "to do: the server refused the judge's API key (HTTP 401/403)" in result.stderr  # no rerun fixes a key
    assert "once that is done, run the same command again to continue (exit code 3)" in result.stderr
    assert "decided by: rules 4;" in result.stdout and LLM not in result.stdout.split("decided by:")[1].split(";")[0]
    assert "left undecided by judge calls that failed: 2" in result.stdout

    with JudgeServer(lambda *args: verdict(True, 1)) as server:  # the judge answers now: the same command retries
        again = rejudge(base, server.spec())
        assert server.calls == 2
    assert again.exit_code == 0, again.output
    assert status(base, "llm") == "done"
    assert f"decided by: rules 4, {LLM} 2" in again.stdout


def test_a_rejudge_of_a_run_with_failed_model_calls_is_incomplete_like_the_run(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "ds")
    db = tmp_path / "r.sqlite"
    replies = write_replies(tmp_path / "replies.json", {"fb": ["The shed."], "dd": ["I like the apple best.",
                                                                                   "Sam will pick the chocolate.",
                                                                                   "x"]})
    evaluate(replies, dataset, judge="rules", db=db, run="base")
    assert status(db, "base") == "incomplete"  # story fb: no reply for turns 1 and 2
    result = CliRunner().invoke(app, ["rejudge", "--db", str(db), "--run", "base", "--judge", "rules", "--as", "again",
                                      "--dataset", str(tmp_path / "ds")])
    assert result.exit_code == 3, result.output
    assert status(db, "again") == "incomplete"
    assert "replay_missing (model, 1 turn), first at story fb turn 1" in result.stderr
