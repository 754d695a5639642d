"""Failures are told at once and a run whose calls keep failing in a way no rerun fixes stops early.

Real ``commet eval`` processes against real servers on 127.0.0.1 (a closed port, one answering
401, one answering 503 then working), in a real 80-column terminal for what the user sees; the
watch's rules on their own below.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from commet.engine.failures import STOP_AFTER, CallSource, FailureWatch, advice
from commet.models.base import ModelCallError
from commet.models.retry import RetryNotice
from tests.fakeservers import FakeServer, RecordedRequest, Reply, error_reply, openai_reply
from tests.test_cli_runs import KEY, closed_port, commet, in_tmux, query, run_status

ENV = {"OPENAI_API_KEY": KEY}


def test_a_closed_port_is_said_at_once_and_stops_the_run_after_one_call_s_retries(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    args = ["eval", "--model", f"openai:m?base_url=http://127.0.0.1:{closed_port()}/v1&backoff_max=0.2",
            "--db", str(db), "--quiet"]
    result = commet(*args, env=ENV)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 3, result.stderr
    assert lines[0].startswith("retrying model openai:m (connection, attempt 1 of 6, next in ")  # the first line
    assert "Cannot connect to host" in lines[0] and "Traceback" not in result.stderr
    assert any(line.startswith("failed for good: model openai:m (connection) at story ") for line in lines)
    assert "stopped early: model calls kept failing the same way (connection)" in result.stderr
    assert "to do: the model's server cannot be reached: check that it is running and that base_url" in result.stderr
    assert "once that is done, run the same command again to continue (exit code 3)" in result.stderr
    # the first call failed for good and the run stopped: the other stories' calls were never made (at most
    # the ones already in flight at the concurrency of 8)
    assert query(db, "SELECT COUNT(*) FROM model_calls")[0][0] <= 8 and run_status(db) == "incomplete"


def test_a_refused_key_stops_the_run_with_advice_for_a_key_and_the_same_command_resumes(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    refuse = {"on": True}

    def answer(request: RecordedRequest) -> Reply:
        return error_reply(401, "Incorrect API key provided") if refuse["on"] else openai_reply("The basket.")

    with FakeServer("openai", responder=answer) as server:
        args = ["eval", "--model", f"openai:m?base_url={server.url}/v1", "--db", str(db), "--quiet"]
        stopped = commet(*args, env=ENV)
        made = len(server.requests)
        assert stopped.returncode == 3 and "Traceback" not in stopped.stderr
        assert stopped.stderr.startswith("failed for good: model openai:m (auth) at story ")
        notices = [line for line in stopped.stderr.splitlines() if line.startswith("failed for good:")]
        assert len(notices) == 1  # the first of its kind only, not one per call
        assert "to do: the server refused the model's API key (HTTP 401/403)" in stopped.stderr
        assert "running again with the same key cannot help" in stopped.stderr
        assert "run the same command again to retry them" not in stopped.stderr
        assert STOP_AFTER <= made <= STOP_AFTER + 8 < 41  # the stories in flight at most, not all 41
        assert run_status(db) == "incomplete"
        refuse["on"] = False  # the key is fixed: the same command continues the run
        resumed = commet(*args, env=ENV)
    assert resumed.returncode == 0, resumed.stderr
    assert run_status(db) == "done" and "failed for good" not in resumed.stderr


def test_a_judge_whose_key_is_refused_stops_the_run_and_names_the_judge(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    with FakeServer("openai", responder=lambda request: error_reply(403, "no access")) as server:
        result = commet("eval", "--model", "baseline:first-option", "--judge", f"openai:j?base_url={server.url}/v1",
                        "--db", str(db), "--quiet", env=ENV)
        made = len(server.requests)
    assert result.returncode == 3, result.stderr
    assert result.stderr.startswith("failed for good: judge llm:openai:j@judge-v2 (auth) at story ")
    assert "stopped early: judge calls kept failing the same way (auth)" in result.stderr
    assert "to do: the server refused the judge's API key (HTTP 401/403)" in result.stderr
    assert made < 20  # a judge call per undecided answer in flight, not one per undecided answer of the run


def test_the_first_retried_failure_is_printed_within_a_second_of_the_server_answering(tmp_path: Path) -> None:
    """A server that answers 503 for a while, then works: the retry is said as it happens (not at the end), the
    run is not stopped (503 is retried and fixes itself) and ends done."""
    db = tmp_path / "s.sqlite"
    with FakeServer("openai", responder=lambda request: openai_reply("The basket.")) as server:
        server.queue(*[error_reply(503, "overloaded")] * 3)
        process = subprocess.Popen(
            [sys.executable, "-m", "commet.cli", "eval", "--model",
             f"openai:m?base_url={server.url}/v1&backoff_base=1.5&backoff_max=1.5", "--db", str(db), "--quiet",
             "--limit", "4"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
            env={**__import__("os").environ, **ENV})
        heard: list[tuple[float, str]] = []
        reader = threading.Thread(target=lambda: heard.extend((time.monotonic(), line) for line in process.stderr))
        reader.start()
        process.wait(timeout=120)
        reader.join()
        first_request = server.requests[0].at
    assert process.returncode == 0, heard
    said_at, line = heard[0]
    assert line.startswith("retrying model openai:m (http_503, attempt 1 of 6, next in ") and "overloaded" in line
    assert said_at - first_request < 1.0
    assert run_status(db) == "done" and len([h for h in heard if h[1].startswith("retrying")]) == 1


def test_what_the_user_sees_in_an_80_column_terminal(tmp_path: Path) -> None:
    with FakeServer("openai", responder=lambda request: error_reply(401, "Incorrect API key provided")) as server:
        screen = in_tmux(tmp_path, ["eval", "--model", f"openai:m?base_url={server.url}/v1", "--db",
                                    str(tmp_path / "s.sqlite"), "--limit", "12"], env=ENV)
    assert "EXIT=3" in screen
    text = " ".join(screen.split())
    assert "failed for good: model openai:m (auth) at story" in text
    assert text.index("failed for good: model openai:m (auth)") < text.index("Story accuracy")  # said first
    assert "to do: the server refused the model's API key" in text


# ------------------------------------------------------------------------------------------ the watch's rules


def test_a_stopping_kind_stops_only_when_it_repeats_with_nothing_working_between() -> None:
    stops: list[bool] = []
    watch = FailureWatch(model_spec="m", stop=lambda: stops.append(True))
    watch.failed(CallSource.model, "m", "auth", "401", "s1", 0)
    watch.worked(CallSource.model)  # a call that works breaks the streak
    for story in range(STOP_AFTER - 1):
        watch.failed(CallSource.model, "m", "auth", "401", f"t{story}", 0)
    watch.failed(CallSource.judge, "j", "auth", "401", "u", 0)  # the judge's streak is its own
    assert not stops and watch.stopped_by is None
    watch.failed(CallSource.model, "m", "auth", "401", "last", 0)
    assert stops == [True] and watch.stopped_by is not None and watch.stopped_by.story_id == "last"
    watch.failed(CallSource.model, "m", "auth", "401", "more", 0)
    assert stops == [True]  # stopped once


def test_failures_a_rerun_can_fix_never_stop_a_run_and_each_kind_is_said_once() -> None:
    said: list[str] = []
    stops: list[bool] = []
    watch = FailureWatch(model_spec="m", notify=lambda notice: said.append(notice.line()),
                         stop=lambda: stops.append(True))
    for kind in ("http_400", "refusal", "timeout", "rate_limit", "http_500", "bad_response"):
        for story in range(5):
            watch.failed(CallSource.model, "m", kind, "it failed", f"s{story}", 1)
    assert not stops and len(said) == 6
    error = ModelCallError("connection error", kind="connection", retryable=True)
    for attempt in (1, 2):
        watch.retrying(RetryNotice("m", error, attempt, 6, 0.5))
        watch.retrying(RetryNotice("j", error, attempt, 6, 0.5))  # the judge's model: said for the judge
    assert said[6:] == ["retrying model m (connection, attempt 1 of 6, next in 0.5 s): connection error",
                        "retrying judge j (connection, attempt 1 of 6, next in 0.5 s): connection error"]


def test_an_unreachable_server_stops_at_once_only_before_anything_worked() -> None:
    stops: list[bool] = []
    fresh = FailureWatch(model_spec="m", stop=lambda: stops.append(True))
    fresh.failed(CallSource.model, "m", "connection", "refused", "s", 0)
    assert stops == [True]
    worked = FailureWatch(model_spec="m", stop=lambda: stops.append(False))
    worked.worked(CallSource.model)
    for story in range(STOP_AFTER - 1):  # the server went away mid-run: it may come back
        worked.failed(CallSource.model, "m", "connection", "refused", f"s{story}", 0)
    assert stops == [True] and worked.stopped_by is None
    assert "base_url" in advice("connection", CallSource.model) and "judge's" in advice("auth", CallSource.judge)


def test_a_store_of_a_stopped_run_keeps_what_was_done(tmp_path: Path) -> None:
    """Stopped early mid-run: the stories finished before are kept and a rerun does not ask them again."""
    db = tmp_path / "s.sqlite"
    calls = {"n": 0}

    def answer(request: RecordedRequest) -> Reply:
        calls["n"] += 1
        return openai_reply("The basket.") if calls["n"] <= 20 else error_reply(401, "key revoked")

    with FakeServer("openai", responder=answer) as server:
        args = ["eval", "--model", f"openai:m?base_url={server.url}/v1", "--db", str(db), "--quiet",
                "--concurrency", "1"]
        stopped = commet(*args, env=ENV)
        assert stopped.returncode == 3 and "stopped early" in stopped.stderr
        kept = query(db, "SELECT COUNT(*) FROM stories WHERE status IN ('done', 'stopped')")[0][0]
        assert kept >= 5 and query(db, "SELECT COUNT(*) FROM model_calls")[0][0] == 20
        calls["n"] = -1000  # works again
        again = commet(*args, env=ENV)
    assert again.returncode == 0 and f"resumed: {kept} of 41 StoryTurns kept from before" in " ".join(
        again.stdout.split())
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT status FROM runs").fetchone()[0] == "done"


def test_what_stopped_the_run_has_its_advice_when_no_failed_turn_was_kept(capsys) -> None:  # noqa: ANN001
    """The stop cancels the stories in flight, and with them, at times, every turn that failed that way: the
    advice comes from what stopped the run, not only from the failed turns the store kept."""
    from commet.cli.common import print_failures
    from commet.engine.failures import FailureNotice
    from commet.engine.outcome import RunCounts, StoryOutcome
    from commet.engine.runner import RunResults

    results = RunResults(stories=34, stories_done=3, stories_scored=3, stories_failed=0, stories_correct=1,
                         questions=9, questions_right=4)
    counts = RunCounts(34, {StoryOutcome.right: 1, StoryOutcome.wrong: 2}, 0, 0, 0, 0)
    stopped = FailureNotice(CallSource.judge, "llm:openai:j@judge-v2", "auth", "HTTP 403: no access", "s1", 1)
    print_failures(results, counts, secrets=[], stopped_by=stopped)
    said = capsys.readouterr().err
    assert "incomplete: 31 of 34 StoryTurns not scored (31 not started)" in said
    assert f"to do: {advice('auth', CallSource.judge)}" in said
    assert "once that is done, run the same command again to continue" in said
    assert "run the same command again to retry them" not in said
    print_failures(results, counts, secrets=[], stopped_by=None)
    assert "run the same command again to retry them" in capsys.readouterr().err
