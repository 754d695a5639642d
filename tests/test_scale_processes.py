"""Many processes on one run: leases in the store, workers that die with their parent, one rate budget.

Real `commet eval` subprocesses against a real OpenAI-compatible HTTP server on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import psutil

from commet.engine import evaluate_async
from commet.engine.claims import LEASE_TTL_S, new_owner, owner_alive
from commet.store.records import StoryRecord, StoryStatus
from commet.store.sqlite import Store
from tests.conftest import FALSE_BELIEF
from tests.fakeservers import FakeServer, RecordedRequest, Reply, openai_reply


def write_stories(path: Path, count: int) -> Path:
    """``count`` false-belief StoryTurns whose texts all differ (so no two make the same call)."""
    with path.open("w") as out:
        for i in range(count):
            record = json.loads(json.dumps(FALSE_BELIEF).replace("Ana", f"Ana{i}"))
            out.write(json.dumps({**record, "id": f"fb-{i}"}) + "\n")
    return path


def answer(request: RecordedRequest) -> Reply:
    """A deterministic reply from the last user message (right or wrong by its hash)."""
    last = request.json["messages"][-1]["content"]
    if "Is the ball" in last:
        return openai_reply("No.")
    return openai_reply("The box." if hashlib.sha256(last.encode()).digest()[0] % 3 else "The basket.")


def slow(delay: float):
    def respond(request: RecordedRequest) -> Reply:
        reply = answer(request)
        reply.delay = delay
        return reply

    return respond


def eval_cmd(dataset: Path, db: Path, url: str, *extra: str, options: str = "") -> list[str]:
    return [sys.executable, "-m", "commet.cli", "eval", "--model", f"openai:fake?base_url={url}/v1{options}",
            "--dataset", str(dataset), "--db", str(db), "--run", "shared", "--quiet", *extra]


def results(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as con:
        return con.execute("SELECT t.story_id, t.turn, t.prompt, t.response, t.correct, t.branch, t.feedback_kind "
                           "FROM turns t JOIN runs r ON r.id = t.run_id ORDER BY t.story_id, t.turn").fetchall()


def logged_calls(db: Path) -> int:
    try:
        with sqlite3.connect(db) as con:
            return con.execute("SELECT COUNT(*) FROM call_log WHERE kind = 'model' AND cached = 0").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_two_eval_processes_on_one_run_split_it_without_a_repeated_call(tmp_path: Path) -> None:
    dataset = write_stories(tmp_path / "stories.jsonl", 40)
    db = tmp_path / "shared.sqlite"
    with FakeServer("openai", slow(0.04)) as server:
        cmd = eval_cmd(dataset, db, server.url, "--concurrency", "2")
        first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        second = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        outputs = [process.communicate(timeout=120) for process in (first, second)]
        assert [first.returncode, second.returncode] == [0, 0], outputs
        bodies = Counter(request.raw for request in server.requests)
        assert len(server.requests) == 40 * 3
        assert sum(count - 1 for count in bodies.values()) == 0, "a call was made twice"
        made = [int(re.search(r"this time (\d+) model calls", out).group(1)) for out, _ in outputs]
        assert sum(made) == 120 and min(made) > 0, made  # both processes worked, each call once

        alone = tmp_path / "alone.sqlite"
        asyncio.run(evaluate_async(f"openai:fake?base_url={server.url}/v1", dataset, db=alone, run="shared",
                                   concurrency=8))
    assert results(db) == results(alone) and len(results(db)) == 120
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT status FROM runs").fetchone()[0] == "done"
        assert con.execute("SELECT COUNT(*) FROM leases").fetchone()[0] == 0  # all given back


def test_a_lease_is_taken_over_only_from_a_dead_or_expired_owner(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    with Store(tmp_path / "s.sqlite") as store:
        run = store.create_run(name="r", model="m", judge="j", settings={}, config_hash="h", dataset_name="d",
                               dataset_hash="d", package_version="0", story_count=4)
        me, other = new_owner(), new_owner()
        ghost = f"{me.split('/')[0]}/{dead.pid}/dead0000"
        assert owner_alive(other) and not owner_alive(ghost)
        assert store.claim_stories(run.id, ["a", "b"], owner=other, ttl=60, limit=5, alive=owner_alive)[0] == ["a", "b"]
        assert store.claim_stories(run.id, ["c"], owner=ghost, ttl=60, limit=5, alive=owner_alive)[0] == ["c"]
        assert store.claim_stories(run.id, ["d"], owner=other, ttl=-1, limit=5, alive=owner_alive)[0] == ["d"]
        claimed, gone, crowded = store.claim_stories(run.id, ["a", "b", "c", "d"], owner=me, ttl=60, limit=5,
                                                     alive=owner_alive)
        assert claimed == ["c", "d"] and gone == set() and crowded  # a, b: live and not expired; c: dead owner; d: expired
        store.record_story(StoryRecord(run.id, "c", position=2, task="t", category="Belief", image_dependent=False,
                                       source="s", status=StoryStatus.done, correct=True))
        store.end_lease(run.id, "c", me)
        store.end_lease(run.id, "d", me)  # ended unscored in this session: nobody retries it now
        claimed, gone, _ = store.claim_stories(run.id, ["c", "d"], owner=other, ttl=60, limit=5, alive=owner_alive)
        assert claimed == [] and gone == {"c", "d"}
        assert not store.start_session(run.id, me, owner_alive)  # `other` still holds a and b
        store.release_leases(run.id, other)
        assert store.start_session(run.id, me, owner_alive)  # a new session retries the failed story
        assert store.claim_stories(run.id, ["d"], owner=me, ttl=60, limit=5, alive=owner_alive)[0] == ["d"]


def _alive(pids: list[int]) -> list[int]:
    living = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                living.append(pid)
        except psutil.NoSuchProcess:
            pass
    return living


def test_workers_do_not_outlive_a_killed_parent(tmp_path: Path) -> None:
    dataset = write_stories(tmp_path / "stories.jsonl", 30)
    db = tmp_path / "killed.sqlite"
    with FakeServer("openai", slow(0.1)) as server:
        parent = subprocess.Popen(eval_cmd(dataset, db, server.url, "--workers", "2", "--concurrency", "4"),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        children: list[int] = []
        while time.monotonic() < deadline and parent.poll() is None:
            children = [c.pid for c in psutil.Process(parent.pid).children(recursive=True)]
            if logged_calls(db) >= 4 and len(children) >= 3:  # two workers at work and the resource tracker
                break
            time.sleep(0.05)
        assert parent.poll() is None, "the run finished before it could be killed"
        assert logged_calls(db) >= 4 and len(children) >= 2, children
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        killed_at = time.monotonic()
        while _alive(children) and time.monotonic() - killed_at < 5.0:
            time.sleep(0.05)
        survivors = _alive(children)
        for pid in survivors:  # clean up before failing
            psutil.Process(pid).kill()
        assert survivors == [], f"still running {time.monotonic() - killed_at:.1f} s after the parent died"
        calls_after = logged_calls(db)
        time.sleep(0.5)
        assert logged_calls(db) == calls_after  # nobody works on

        # a rerun started at once takes the dead workers' stories over without waiting for their leases
        # to expire, and repeats only the calls that were in flight (4 slots) when the parent was killed
        started = time.monotonic()
        subprocess.run(eval_cmd(dataset, db, server.url, "--workers", "2", "--concurrency", "4"), check=True,
                       capture_output=True, timeout=120)
        repeated = sum(count - 1 for count in Counter(r.raw for r in server.requests).values())
    assert repeated <= 4 and len(results(db)) == 90, repeated
    assert time.monotonic() - started < LEASE_TTL_S  # no wait for the dead owners' leases to expire


def test_a_rate_limit_holds_across_worker_processes(tmp_path: Path) -> None:
    rpm = 1200
    dataset = write_stories(tmp_path / "stories.jsonl", 40)
    db = tmp_path / "rate.sqlite"
    with FakeServer("openai", answer) as server:
        started = time.monotonic()
        subprocess.run(eval_cmd(dataset, db, server.url, "--workers", "2", "--concurrency", "16",
                                options=f"&rpm={rpm}"), check=True, capture_output=True, timeout=120)
        took = time.monotonic() - started
        arrivals = sorted(request.at for request in server.requests)
    assert len(arrivals) == 120
    steady_from = arrivals[0] + 1.2  # past the first second's burst (the bucket starts full)
    window = [t for t in arrivals if t >= steady_from]
    measured = (len(window) - 1) / (window[-1] - window[0]) * 60
    print(f"measured {measured:.0f} rpm, {took:.1f} s")
    assert abs(measured - rpm) <= 0.1 * rpm, f"{measured:.0f} requests per minute for a limit of {rpm}"
    assert took < 30


async def test_limiters_sharing_a_store_draw_on_one_budget(tmp_path: Path) -> None:
    from commet.models.ratelimit import RateLimiter

    with Store(tmp_path / "s.sqlite") as store:
        first, second = (RateLimiter(rpm=600, tpm=6000, key="openai:m@http://x") for _ in range(2))
        other = RateLimiter(rpm=600, key="openai:other@http://x")
        for limiter in (first, second, other):
            limiter.share(store.update_budget)
        started = time.monotonic()
        for _ in range(5):  # the bucket holds one second: 10 requests, 100 tokens
            await first.acquire(10)
            await second.acquire(10)
        assert time.monotonic() - started < 0.1
        await other.acquire(0)  # another model's budget is its own
        assert time.monotonic() - started < 0.1
        await second.acquire(10)  # the 11th request of the shared budget waits about 1/10 s
        waited = time.monotonic() - started
        assert 0.07 <= waited < 0.5, waited
        first.settle(10, 0)  # a request that used fewer tokens than estimated gives them back
        with sqlite3.connect(tmp_path / "s.sqlite") as con:
            tokens = con.execute("SELECT tokens FROM rate_budget WHERE key = 'openai:m@http://x'").fetchone()[0]
        assert tokens > 0  # 100 - 110 + refill + 10 returned


def test_a_process_finishes_the_stories_of_one_killed_beside_it(tmp_path: Path) -> None:
    dataset = write_stories(tmp_path / "stories.jsonl", 30)
    db = tmp_path / "shared.sqlite"
    with FakeServer("openai", slow(0.1)) as server:
        cmd = eval_cmd(dataset, db, server.url, "--concurrency", "2")
        doomed = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        survivor = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while logged_calls(db) < 12 and time.monotonic() < deadline and doomed.poll() is None:
            time.sleep(0.02)
        assert doomed.poll() is None, "the run finished before it could be killed"
        doomed.send_signal(signal.SIGKILL)
        doomed.wait()
        killed_at = time.monotonic()
        out, err = survivor.communicate(timeout=120)
        assert survivor.returncode == 0, err
        assert time.monotonic() - killed_at < LEASE_TTL_S  # the dead owner's stories were taken at once
        repeated = sum(count - 1 for count in Counter(r.raw for r in server.requests).values())
    assert repeated <= 2  # only what the killed process had in flight (2 slots)
    assert len(results(db)) == 90
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT status FROM runs").fetchone()[0] == "done"
