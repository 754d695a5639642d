"""The store's per-call work: cache misses answered without a SELECT, one timestamp and one executemany per commit."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from commet.store import Store, commits, leases, writes
from tests.test_store_batches import count, new_store, record


def selects(trace: list[str], table: str) -> int:
    return sum(sql.startswith(f"SELECT * FROM {table}") for sql in trace)


def test_a_cache_miss_asks_no_sqlite_and_a_hit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    store, run_id = new_store(path)
    record(store, run_id, "old")
    store.close()
    store = Store(path)
    trace: list[str] = []
    store.db.set_trace_callback(trace.append)
    assert store.cached_model_call("old").response_text == "reply old"  # the index is read once, then the row
    assert sum(sql == "SELECT key FROM model_calls" for sql in trace) == 1 and selects(trace, "model_calls") == 1
    for key in ("new-1", "new-2", "new-3"):
        assert store.cached_model_call(key) is None
    assert selects(trace, "model_calls") == 1  # three misses, no SELECT
    record(store, run_id, "new-1")
    assert store.cached_model_call("new-1").response_text == "reply new-1"
    assert store.cached_judgment("nothing") is None
    store.close()


def test_rows_written_by_another_process_are_seen_when_asked_fresh_or_by_a_new_store(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    store, run_id = new_store(path)
    assert store.cached_model_call("k") is None
    other = Store(path)
    record(other, run_id, "k")  # another process: this store's index does not know the row
    assert store.cached_model_call("k") is None
    assert store.cached_model_call("k", fresh=True).response_text == "reply k"  # processes sharing a run ask so
    other.close()
    store.close()
    with Store(path) as new:
        assert new.cached_model_call("k") is not None


def test_a_table_too_large_for_the_index_is_asked(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(writes, "KEY_INDEX_LIMIT", 2)
    path = tmp_path / "s.sqlite"
    store, run_id = new_store(path)
    for key in ("a", "b", "c"):
        record(store, run_id, key)
    store.close()
    store = Store(path)
    trace: list[str] = []
    store.db.set_trace_callback(trace.append)
    assert store.cached_model_call("zz") is None and selects(trace, "model_calls") == 1
    assert store.cached_model_call("c") is not None
    store.close()


async def test_one_commit_has_one_timestamp_and_one_executemany_per_statement(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    store, run_id = new_store(path)
    calls: list[tuple[str, int]] = []
    real = store.db
    with store.write_batches():
        for key in ("a", "b", "c"):
            record(store, run_id, key)
        await asyncio.sleep(3 * commits.COMMIT_WINDOW_S)  # the first window ends: committed
        store.db = _Spy(real, calls)  # the next window: watch what the commit sends
        for key in ("d", "e", "f"):
            record(store, run_id, key)
            await asyncio.sleep(0)  # passes of the loop inside one window
        await asyncio.sleep(3 * commits.COMMIT_WINDOW_S)
        store.db = real
    stamps = [row[0] for row in real.execute("SELECT created_at FROM model_calls ORDER BY key")]
    logged = [row[0] for row in real.execute("SELECT created_at FROM call_log ORDER BY id")]
    assert len(set(stamps[3:])) == 1 and stamps[3:] == logged[3:]  # d, e, f: one commit, one timestamp
    assert [n for sql, n in calls if "INTO model_calls" in sql] == [3]
    assert [n for sql, n in calls if "INTO call_log" in sql] == [3]
    assert count(path, "model_calls") == 6
    store.close()


def test_a_table_written_by_two_statements_keeps_the_exact_order(tmp_path: Path) -> None:
    """A turn recorded as an error, then scored, then as an error again in one batch: the last one wins."""
    path = tmp_path / "s.sqlite"
    store, run_id = new_store(path)
    base = {"prompt": "p", "images_json": "[]", "feedback_kind": "none", "expected_json": "[]"}
    statements = [
        commits.upsert("turns", {"run_id": run_id, "story_id": "s", "turn": 0, **base, "error": "first"}),
        commits.upsert("turns", {"run_id": run_id, "story_id": "s", "turn": 0, **base, "response": "r"}),
        commits.upsert("turns", {"run_id": run_id, "story_id": "s", "turn": 0, **base, "error": "last"}),
    ]
    assert commits.grouped(statements) is None
    store._execute(statements)
    assert store.db.execute("SELECT error, response FROM turns").fetchone()[:] == ("last", None)
    store.close()


class _Spy:
    """A connection stand-in that counts the rows each ``executemany`` sends (everything else passes through)."""

    def __init__(self, real: sqlite3.Connection, calls: list[tuple[str, int]]):
        self.real, self.calls = real, calls

    def executemany(self, sql: str, rows: list[tuple[object, ...]]) -> sqlite3.Cursor:
        rows = list(rows)
        self.calls.append((sql, len(rows)))
        return self.real.executemany(sql, rows)

    def __getattr__(self, name: str) -> object:
        return getattr(self.real, name)


def test_a_claim_reads_its_candidates_a_window_at_a_time_and_skips_finished_and_held_ones(tmp_path: Path) -> None:
    from commet.store.records import StoryRecord, StoryStatus

    store, run_id = new_store(tmp_path / "s.sqlite")
    ids = [f"s{i:03d}" for i in range(150)]
    finished = leases.CLAIM_WINDOW + 6  # the whole first window and the start of the second
    for position, story_id in enumerate(ids[:finished]):
        store.record_story(StoryRecord(run_id, story_id, position, "t", "Belief", False, "x", StoryStatus.done, True))
    claimed, gone, crowded = store.claim_stories(run_id, ids, owner="a", ttl=60, limit=5, alive=lambda _: True)
    assert claimed == ids[finished:finished + 5] and gone == set(ids[:finished]) and not crowded
    # another live process: the stories "a" holds are not its to take; "a" holding some makes it crowded
    claimed, gone, crowded = store.claim_stories(run_id, ids[finished:], owner="b", ttl=60, limit=5,
                                                 alive=lambda _: True)
    assert claimed == ids[finished + 5:finished + 10] and gone == set() and crowded
    # "a" has died: its stories go to the next claim
    claimed, _, crowded = store.claim_stories(run_id, ids[finished:], owner="c", ttl=60, limit=3,
                                              alive=lambda owner: owner != "a")
    assert claimed == ids[finished:finished + 3] and crowded  # "b" is alive and holds stories
    store.close()


async def test_one_call_per_key_at_a_time_and_a_failed_one_lets_the_next_in(tmp_path: Path) -> None:
    """single_flight: a second call with the same key waits until the first is out (answered or failed); other
    keys never wait."""
    store, _ = new_store(tmp_path / "s.sqlite")
    inside: dict[str, int] = {}
    most: dict[str, int] = {}
    events: list[str] = []

    async def call(name: str, key: str, fail: bool = False) -> None:
        try:
            async with store.single_flight(key):
                inside[key] = inside.get(key, 0) + 1
                most[key] = max(most.get(key, 0), inside[key])
                events.append(f"{name} in")
                await asyncio.sleep(0.01)
                inside[key] -= 1
                if fail:
                    raise RuntimeError(name)
            events.append(f"{name} out")
        except RuntimeError:
            events.append(f"{name} failed")

    await asyncio.gather(call("a", "k", fail=True), call("b", "k"), call("c", "other"))
    assert most == {"k": 1, "other": 1}
    assert events.index("a failed") < events.index("b in")  # the failed call let the waiting one in
    assert events.index("c in") < events.index("a failed")  # another key did not wait
    assert "b out" in events and store._in_flight == {}
    store.close()
