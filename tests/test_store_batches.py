"""The store's batched writes: one commit per commit window, read back while pending, never lost."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from pathlib import Path

import pytest

from commet.engine import evaluate_async
from commet.format.dataset import Dataset
from commet.format.model import StoryTurn, Turn
from commet.models.base import Model, ModelRequest, ModelResponse
from commet.store import Store
from commet.store.records import StoryRecord, StoryStatus, TurnRecord
from commet.store.sqlite import COMMIT_WINDOW_S


def new_store(path: Path) -> tuple[Store, int]:
    store = Store(path)
    run = store.create_run(name="r", model="m", judge="rules", settings={}, config_hash="h", dataset_name="d",
                           dataset_hash="h", package_version="0", story_count=1)
    return store, run.id


def record(store: Store, run_id: int, key: str) -> None:
    store.record_model_call(run_id=run_id, story_id="s", turn=0, key=key, model="m", request_json="{}",
                            response_text=f"reply {key}", latency_s=0.1)


def count(path: Path, table: str) -> int:
    with sqlite3.connect(path) as other:
        return other.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


async def test_one_commit_window_is_one_commit_and_pending_rows_are_read_back(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    store, run_id = new_store(path)
    commits: list[str] = []
    store.db.set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)
    with store.write_batches():
        for key in ("a", "b", "c"):
            record(store, run_id, key)
        store.record_turn(TurnRecord(run_id, "s", 0, prompt="p", images_json="[]", feedback_kind="none",
                                     expected_json="[]"))
        assert store.cached_model_call("b").response_text == "reply b"  # pending, read back
        assert count(path, "model_calls") == 0 and commits == []  # nothing committed inside the window
        await asyncio.sleep(0)  # a pass of the loop: still inside the window
        store.record_turn(TurnRecord(run_id, "s", 1, prompt="p", images_json="[]", feedback_kind="none",
                                     expected_json="[]"))
        assert count(path, "turns") == 0 and commits == []
        await asyncio.sleep(3 * COMMIT_WINDOW_S)  # the window ends
        assert count(path, "model_calls") == 3 and count(path, "call_log") == 3 and count(path, "turns") == 2
        assert commits == ["COMMIT"]
        record(store, run_id, "d")
    assert count(path, "model_calls") == 4  # the end of the block commits the rest
    assert store.cached_model_call("d").response_text == "reply d"
    store.close()


async def test_a_commit_made_before_the_window_ends_starts_a_new_full_window(tmp_path: Path) -> None:
    """A query or a transaction commits what is pending at once; that ends the window (its timer is cancelled),
    and the next write waits a whole window of its own. (The timer once stayed: each early commit added one more
    timer for good, and commits came more and more often.)"""
    path = tmp_path / "s.sqlite"
    store, run_id = new_store(path)
    committed: list[str] = []
    store.db.set_trace_callback(lambda sql: committed.append(sql) if sql == "COMMIT" else None)
    loop = asyncio.get_running_loop()
    with store.write_batches():
        record(store, run_id, "a")
        first = store._flush_timer
        assert first is not None and not first.cancelled()
        store.flush()  # what a query does before it reads
        assert first.cancelled() and store._flush_timer is None
        assert count(path, "model_calls") == 1 and len(committed) == 1
        written = loop.time()
        record(store, run_id, "b")
        second = store._flush_timer
        assert second is not None and second is not first and second.when() >= written + COMMIT_WINDOW_S
        await asyncio.sleep(3 * COMMIT_WINDOW_S)
        assert count(path, "model_calls") == 2 and len(committed) == 2 and store._flush_timer is None
    store.close()


def test_without_a_running_loop_batched_writes_commit_at_once(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    store, run_id = new_store(path)
    with store.write_batches():
        record(store, run_id, "a")
        assert count(path, "model_calls") == 1
    store.close()


async def test_a_failed_commit_keeps_its_rows_and_is_raised_until_it_succeeds(tmp_path: Path, caplog) -> None:
    path = tmp_path / "s.sqlite"
    store, run_id = new_store(path)
    store.db.execute("PRAGMA busy_timeout=20")
    locker = sqlite3.connect(path, isolation_level=None)
    with store.write_batches():
        locker.execute("BEGIN EXCLUSIVE")  # another process holds the file
        record(store, run_id, "a")
        with caplog.at_level(logging.ERROR, logger="commet.store.commits"):
            await asyncio.sleep(3 * COMMIT_WINDOW_S)
        assert "could not commit 2 pending writes" in caplog.text
        assert store.cached_model_call("a") is not None  # still pending, still answered from the cache
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            record(store, run_id, "b")  # the next write retries the commit and says it failed
        locker.execute("ROLLBACK")
        record(store, run_id, "c")  # commits a and b, then queues c
    locker.close()
    assert count(path, "model_calls") == 3 and count(path, "call_log") == 3
    store.close()


def test_writes_inside_a_transaction_commit_or_roll_back_with_it(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    store, run_id = new_store(path)
    with pytest.raises(RuntimeError), store.transaction():
        record(store, run_id, "a")
        store.record_story(StoryRecord(run_id, "s", position=0, task="t", category="c", image_dependent=False,
                                       source="x", status=StoryStatus.done, correct=True))
        raise RuntimeError("the export failed half way")
    assert count(path, "model_calls") == 0 and count(path, "stories") == 0
    with store.transaction():
        record(store, run_id, "a")
        assert count(path, "model_calls") == 0  # not before the transaction commits
    assert count(path, "model_calls") == 1
    store.close()


class Recorder(Model):
    """Answers "yes" and records which story each call came from."""

    spec = "recorder"

    def __init__(self) -> None:
        self.stories: list[str] = []

    async def generate(self, request: ModelRequest) -> ModelResponse:
        self.stories.append(str(request.tags["story_id"]))
        return ModelResponse("yes")


async def test_the_longest_storyturns_run_first(tmp_path: Path) -> None:
    def story(name: str, n: int) -> StoryTurn:
        return StoryTurn(id=name, task="diverse_desire", category="Desire", source="test",
                         turns=[Turn(story=f"{name} {k}.", question="Yes?", answers=["Yes"]) for k in range(n)])

    data = Dataset(storyturns=[story("one", 1), story("three", 3), story("two", 2), story("three-b", 3)],
                   name="order")
    model = Recorder()
    summary = await evaluate_async(model, data, db=tmp_path / "o.sqlite", run="r", concurrency=1)
    assert model.stories == ["three"] * 3 + ["three-b"] * 3 + ["two"] * 2 + ["one"]
    with Store(tmp_path / "o.sqlite") as store:  # positions (and so reports) keep the dataset's order
        assert [row.story_id for row in store.story_rows(summary.run.id)] == ["one", "three", "two", "three-b"]


async def test_inside_a_batch_block_a_thread_copies_the_log_into_the_file_not_the_commits(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite's own checkpoint ends a commit with a sync of the file (10-20 ms on the event loop); inside
    ``write_batches`` the commits leave it to a thread, and the log is still copied as the run goes."""
    from commet.store import commits

    monkeypatch.setattr(commits, "CHECKPOINT_INTERVAL_S", 0.05)
    path = tmp_path / "s.sqlite"
    store, run_id = new_store(path)
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size_before = path.stat().st_size
    with store.write_batches():
        assert store.db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
        assert any(t.name == "commet-store-checkpoints" for t in threading.enumerate())
        for i in range(300):
            record(store, run_id, f"key-{i}-" + "x" * 200)
            if i % 50 == 0:
                await asyncio.sleep(3 * commits.COMMIT_WINDOW_S)
        await asyncio.sleep(0.3)
        assert path.stat().st_size > size_before  # rows reached the file itself while the block runs
    assert store.db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
    assert not any(t.name == "commet-store-checkpoints" for t in threading.enumerate())
    assert count(path, "model_calls") == 300
    store.close()


async def test_batch_blocks_of_engines_side_by_side_may_end_in_any_order(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    store, run_id = new_store(path)
    first, second = store.write_batches(), store.write_batches()
    first.__enter__()
    second.__enter__()
    record(store, run_id, "a")
    first.__exit__(None, None, None)  # the first engine ends while the second still runs
    assert any(t.name == "commet-store-checkpoints" for t in threading.enumerate())
    second.__exit__(None, None, None)
    assert not any(t.name == "commet-store-checkpoints" for t in threading.enumerate())
    assert store.db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
    assert count(path, "model_calls") == 1
    store.close()
