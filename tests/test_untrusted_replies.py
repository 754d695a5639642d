"""What a model sends cannot stop a run: text is made valid where it comes in, bodies are checked, judging
long replies leaves the event loop free.

A real OpenAI-compatible server on 127.0.0.1 sends lone surrogates (``"\\ud800"``: code points that
are not text, which SQLite, the next request's body and the terminal cannot encode) in its JSON
reply, in its finish reason, in an error message; a judge model sends one escaped inside its
verdict's JSON; a replay file holds them. Each run ends normally, with U+FFFD in their place and
the count said per call. Bodies that are not chat completions (numbers of 5,000 digits, 100,000
nested brackets, fields of other types, 9 MiB) are a failed call, never a crash.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import typer
from click.testing import CliRunner

import commet
from commet.cli import app as typer_app
from commet.judges import base as judges_base
from commet.judges.base import JudgeRequest
from commet.judges.rules import RulesJudge
from commet.judges.rules.marks import MAX_REPLY_CHARS
from tests.fakeservers import FakeServer, RecordedRequest, Reply, error_reply, openai_reply
from tests.judge_server import JudgeServer, prompt_text, verdict, write_dataset, write_replies

app = typer.main.get_command(typer_app)
SOURCE = str(Path(commet.__file__).resolve().parents[1])


def surrogate_body(text: str, *, finish_reason: str = "stop") -> bytes:
    """A chat completion whose JSON says ``text`` and ``finish_reason`` with their escapes as written (the JSON
    encoder of a server that lets lone surrogates through)."""
    body = json.dumps(openai_reply("@TEXT@", finish_reason="@REASON@").body)
    return body.replace('"@TEXT@"', f'"{text}"').replace('"@REASON@"', f'"{finish_reason}"').encode()


def commet_program(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "commet.cli", *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": SOURCE, "COLUMNS": "300"})


def stored(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as con:
        return con.execute(sql).fetchall()


def no_surrogate_anywhere(db: Path) -> None:
    """Every text in the store encodes as UTF-8 (SQLite returns what it was given)."""
    with sqlite3.connect(db) as con:
        con.text_factory = bytes
        for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            for row in con.execute(f"SELECT * FROM {table.decode()}"):
                for value in row:
                    if isinstance(value, bytes):
                        value.decode("utf-8")  # raises on a surrogate stored as CESU bytes


def test_lone_surrogates_in_a_servers_json_reply_are_replaced_and_counted(tmp_path: Path) -> None:
    replies = {  # by question: a lone high, a lone low, a real pair (an emoji, valid), one in the finish reason
        "Which": (r"I like \ud800 the kite", "stop"),
        "So": (r"Sam \udc80\udc81 picks", "stop"),
        "Why": (r"Because \ud83d\ude00 she saw it", r"st\ud800op"),
    }

    def respond(request: RecordedRequest) -> Reply:
        question = prompt_text(request.json["messages"][-1]["content"])
        text, reason = next((v for k, v in replies.items() if k in question), ("The basket", "stop"))
        return Reply(body=surrogate_body(text, finish_reason=reason))

    db = tmp_path / "s.sqlite"
    with FakeServer("openai", responder=respond) as server:  # the real program: its exit code, its stderr
        args = ["eval", "--model", f"openai:fake?base_url={server.url}/v1", "--db", str(db), "--quiet",
                "--undecided-feedback", "wrong"]  # every turn is asked, whatever the judge leaves undecided
        first = commet_program(*args)
        assert first.returncode == 0, first.stderr
        assert "Traceback" not in first.stderr
        second = commet_program(*args)  # the run is done: answered from the store, no crash either
        # the next turn's request carried the repaired reply, as valid JSON
        assert all("\ufffd" in r.raw.decode("utf-8") for r in server.requests
                   if any("\ufffd" in prompt_text(m["content"]) for m in r.json["messages"] if m["role"] == "assistant"))
    assert second.returncode == 0, second.stderr
    assert "already complete" in second.stdout and "replaced" not in second.stdout
    assert stored(db, "SELECT status FROM runs") == [("done",)]
    responses = [r for (r,) in stored(db, "SELECT response_text FROM model_calls")]
    assert "I like \ufffd the kite" in responses and "Sam \ufffd\ufffd picks" in responses
    assert "Because \U0001F600 she saw it" in responses  # a pair is a character, not two replacements
    assert ("st\ufffdop",) in stored(db, "SELECT finish_reason FROM model_calls")
    no_surrogate_anywhere(db)
    # counted per call: a warning naming story and turn for each repaired reply, and the summary's total
    calls = stored(db, "SELECT response_text || coalesce(finish_reason, '') FROM model_calls")
    repaired, points = sum("\ufffd" in text for (text,) in calls), sum(text.count("\ufffd") for (text,) in calls)
    warnings = [line for line in first.stderr.splitlines() if "not Unicode text" in line]
    assert len(warnings) == repaired >= 3 and points > repaired
    assert all(line.startswith("story ") and " turn " in line and "replaced by U+FFFD" in line for line in warnings)
    assert f"{repaired} replies held {points} code point(s) that are not Unicode text" in first.stdout


def test_a_lone_surrogate_in_an_error_message_is_one_failure_line(tmp_path: Path) -> None:
    raw = json.dumps(error_reply(400, "@M@").body).replace('"@M@"', r'"bad request \ud800 here"').encode()
    db = tmp_path / "e.sqlite"
    with FakeServer("openai", responder=lambda request: Reply(status=400, body=raw)) as server:
        result = CliRunner().invoke(app, ["eval", "--model", f"openai:fake?base_url={server.url}/v1", "--db", str(db),
                                          "--quiet", "--limit", "2"])
    assert result.exit_code == 3, result.output
    assert "Traceback" not in result.output
    assert "http_400" in result.stderr and "bad request" in result.stderr
    assert stored(db, "SELECT status FROM runs") == [("incomplete",)]
    no_surrogate_anywhere(db)


def test_a_judge_models_verdict_with_an_escaped_surrogate_is_stored_valid(tmp_path: Path) -> None:
    write_dataset(tmp_path / "data")
    spec = write_replies(tmp_path / "replies.json")
    db = tmp_path / "j.sqlite"

    def decide(model: str, answer: str, expected: list[str], question: str) -> str:
        # the judge's text holds the six characters \ud800 inside its JSON: decoding them gives a lone surrogate
        return verdict(True, 1, reason="the answer says @").replace("@", "so \\ud800")

    with JudgeServer(decide) as server:
        result = CliRunner().invoke(app, ["eval", "--model", spec, "--dataset", str(tmp_path / "data"), "--db", str(db),
                                          "--judge", server.spec(), "--quiet"])
    assert result.exit_code == 0, result.output
    by_the_model = stored(db, "SELECT rationale, details_json FROM judgments WHERE judge LIKE 'llm:%'")
    assert by_the_model and all(rationale == "the answer says so \ufffd" for rationale, _ in by_the_model)
    assert all(json.loads(details)["replaced_code_points"] == 1 for _, details in by_the_model)
    no_surrogate_anywhere(db)


def test_a_replay_file_with_lone_surrogates_runs_and_counts_them(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text('{"sample-common_desire-1": ["The \\ud800 kite", "x\\udfff"]}', encoding="utf-8")
    db = tmp_path / "r.sqlite"
    result = CliRunner().invoke(app, ["eval", "--model", f"replay:{tmp_path / 'r.json'}", "--db", str(db),
                                      "--quiet", "--limit", "1", "--undecided-feedback", "wrong"])
    assert result.exit_code == 0, result.output
    assert "2 replies held 2 code point(s) that are not Unicode text" in result.stdout
    assert sorted(r for (r,) in stored(db, "SELECT response_text FROM model_calls")) == ["The \ufffd kite", "x\ufffd"]
    no_surrogate_anywhere(db)


@pytest.mark.parametrize("body, says", [pytest.param(*case, id=name) for name, case in {
    "5000-digit usage": (b'{"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}], "usage": '
                         b'{"prompt_tokens": ' + b"9" * 5000 + b"}}", "not a chat completion"),
    "nested 100,000 deep": (b"[" * 100_000 + b"]" * 100_000, "not a chat completion"),
    "content a list": (json.dumps({"choices": [{"message": {"content": ["a", "list"]}}]}).encode(),
                       "not a chat completion"),
    "finish reason a number": (json.dumps({"choices": [{"message": {"content": "x"}, "finish_reason": 7}]}).encode(),
                               "not a chat completion"),
    "tokens a text": (json.dumps({"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": "many"}}
                                 ).encode(), "not a chat completion"),
    "choices a text": (json.dumps({"choices": "none"}).encode(), "not a chat completion"),
    "9 MiB": (b'{"choices": [{"message": {"content": "' + b"a" * (9 * 1024 * 1024) + b'"}}]}', "more than 8 MiB"),
}.items()])
def test_a_body_that_is_not_a_chat_completion_is_a_failed_call(body: bytes, says: str, tmp_path: Path) -> None:
    db = tmp_path / "b.sqlite"
    with FakeServer("openai", responder=lambda request: Reply(body=body)) as server:
        result = CliRunner().invoke(app, ["eval", "--model", f"openai:fake?base_url={server.url}/v1&max_attempts=1",
                                          "--db", str(db), "--quiet", "--limit", "1"])
    assert result.exit_code == 3, result.output
    assert "Traceback" not in result.output and "bad_response" in result.stderr and says in result.stderr
    assert stored(db, "SELECT status FROM runs") == [("incomplete",)]


# ----------------------------------------------------------------------------- the event loop stays free


def longest_callback(replies: list[str]) -> tuple[float, list[str]]:
    """Judge ``replies`` with the rules judge, all at once on one event loop, beside a task that keeps the loop
    busy with short steps; return the most CPU time one callback of the loop took (what every conversation
    in flight waits for; CPU, not wall time, so other work on the machine does not count) and the verdicts."""
    worst = 0.0
    run_callback = asyncio.events.Handle._run

    def timed(handle: asyncio.events.Handle) -> None:  # every callback the loop runs, timed in the loop's thread
        nonlocal worst
        before = time.thread_time()
        run_callback(handle)
        worst = max(worst, time.thread_time() - before)

    async def main() -> list[str]:
        judge = RulesJudge()
        asked = [JudgeRequest("s", "t", 0, (), "Ana puts her ball in the basket.",
                              "Where will Ana look, the basket or the box?", ("The basket",), reply) for reply in replies]
        verdicts = await asyncio.gather(*(judge.judge(request) for request in asked))
        return [f"{v.outcome}: {v.rationale}" for v in verdicts]

    asyncio.events.Handle._run = timed  # type: ignore[method-assign]
    try:
        verdicts = asyncio.run(main())
    finally:
        asyncio.events.Handle._run = run_callback  # type: ignore[method-assign]
    return worst, verdicts


def test_a_long_reply_is_judged_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(30)
    words = [" ".join(rng.choice(["the", "basket", "or", "box", "I", "think", "Ana", ".", "it", "is"])
                      for _ in range(4000))[:MAX_REPLY_CHARS - 1] for _ in range(8)]
    replies = [*words, "The basket.", "The box."]  # the longest replies the rules judge reads, and short ones
    off_loop, verdicts = longest_callback(replies)
    monkeypatch.setattr(judges_base, "OFF_LOOP_CHARS", 10**12)  # the same judgments on the loop
    on_loop, same_verdicts = longest_callback(replies)
    assert verdicts == same_verdicts  # where it runs changes no verdict
    assert verdicts[-2].startswith("correct") and verdicts[-1].startswith("incorrect")
    # on the loop, one callback is one whole judgment of a long reply (about 7 ms here); off it, a step
    assert off_loop < on_loop / 3, (off_loop, on_loop)


def test_a_reply_of_a_label_and_thousands_of_blanks_does_not_freeze_the_run(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text(json.dumps({"sample-common_desire-1": ["A" + " " * 2000 + "B", "x"]}))
    command = [sys.executable, "-m", "commet.cli", "eval", "--model", f"replay:{tmp_path / 'r.json'}", "--limit", "1",
               "--db", str(tmp_path / "a.sqlite"), "--quiet"]
    try:
        finished = subprocess.run(command, capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail("one reply kept the run busy for more than 20 s")
    assert finished.returncode == 0, finished.stderr


@pytest.mark.parametrize("reply", [
    '{"verdict": "correct", "matched_answer": ' + "9" * 5000 + ', "reason": "x"}',
    "[" * 100_000 + "]" * 100_000,
], ids=["5000-digit number", "nested 100,000 deep"])
def test_a_judge_reply_that_cannot_be_read_leaves_the_turn_undecided(reply: str, tmp_path: Path) -> None:
    write_dataset(tmp_path / "data")
    spec = write_replies(tmp_path / "replies.json")
    db = tmp_path / "u.sqlite"
    with JudgeServer(lambda *args: reply) as server:
        result = CliRunner().invoke(app, ["eval", "--model", spec, "--dataset", str(tmp_path / "data"), "--db", str(db),
                                          "--judge", server.spec(), "--quiet"])
    assert result.exit_code == 3, result.output
    assert "judge_unparseable" in result.stderr and "a number too long or nesting too deep" in result.stderr
    assert stored(db, "SELECT status FROM runs") == [("incomplete",)]
