"""The results store: one SQLite file (WAL) holding runs, every call, every judgment, every turn.

Model calls and LLM judgments double as caches keyed by a hash of (model or judge identity,
request): a run that is killed and started again replays each story from the start, and
every call that had completed is answered from the store. Each call is committed with its
log row as soon as it returns or, while the engine runs (:meth:`Store.write_batches`),
together with the other writes of the same pass of the event loop, right after that pass:
a crash loses at most the calls in flight and those of the last pass. API keys are never
part of what is stored.

Per call the store does as little as it can on the event loop's path: the rows of one pass
go in as one ``executemany`` per statement, with one timestamp, in one transaction, and a
cache miss is answered from an in-memory index of the keys stored (no SELECT).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

SCHEMA_VERSION = 1
#: most cache keys per table held in the in-memory index (about 50 bytes each); a larger table is asked
KEY_INDEX_LIMIT = 500_000
log = logging.getLogger(__name__)
Statement = tuple[str, tuple[object, ...]]

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    name TEXT UNIQUE NOT NULL,
    model TEXT NOT NULL,
    judge TEXT NOT NULL,
    settings_json TEXT NOT NULL,
    config_hash TEXT NOT NULL,
    dataset_name TEXT NOT NULL,
    dataset_hash TEXT NOT NULL,
    package_version TEXT NOT NULL,
    status TEXT NOT NULL,
    story_count INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT
);
CREATE TABLE IF NOT EXISTS model_calls (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    request_json TEXT NOT NULL,
    response_text TEXT NOT NULL,
    finish_reason TEXT,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    latency_s REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS judgments (
    key TEXT PRIMARY KEY,
    judge TEXT NOT NULL,
    request_json TEXT NOT NULL,
    outcome TEXT NOT NULL,
    branch INTEGER,
    rationale TEXT NOT NULL,
    details_json TEXT NOT NULL,
    latency_s REAL NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS call_log (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    story_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    cached INTEGER NOT NULL,
    error_kind TEXT,
    error TEXT,
    latency_s REAL NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS call_log_run ON call_log(run_id, kind);
CREATE TABLE IF NOT EXISTS turns (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    story_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    prompt TEXT NOT NULL,
    images_json TEXT NOT NULL,
    feedback_kind TEXT NOT NULL,
    response TEXT,
    expected_json TEXT NOT NULL,
    outcome TEXT,
    correct INTEGER,
    branch INTEGER,
    active_branch INTEGER,
    judge TEXT,
    rationale TEXT,
    model_key TEXT,
    judgment_key TEXT,
    error_kind TEXT,
    error TEXT,
    PRIMARY KEY (run_id, story_id, turn)
);
CREATE TABLE IF NOT EXISTS stories (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    story_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    task TEXT NOT NULL,
    category TEXT NOT NULL,
    image_dependent INTEGER NOT NULL,
    source TEXT NOT NULL,
    status TEXT NOT NULL,
    correct INTEGER,
    PRIMARY KEY (run_id, story_id)
);
"""


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class RunRecord:
    id: int
    name: str
    model: str
    judge: str
    settings: dict[str, object]
    config_hash: str
    dataset_name: str
    dataset_hash: str
    package_version: str
    status: str
    story_count: int
    started_at: str
    finished_at: str | None


class Store:
    """A SQLite results file. Use one Store per process; writes commit immediately."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if self.path.parent and not self.path.parent.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA busy_timeout=10000")
        self.db.execute("PRAGMA foreign_keys=ON")
        self.db.executescript(SCHEMA)
        self.db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        self._batching = 0
        self._pending: list[Statement] = []
        self._pending_rows: dict[tuple[str, str], dict[str, object]] = {}  # (table, key) -> row, read back
        self._flush_scheduled = False
        self._flush_error: BaseException | None = None
        self._stamp: str | None = None  # the timestamp of the writes waiting for the next commit
        #: per cache table, ``hash(key)`` of every row this connection knows of (None: too many to hold). A
        #: row another process adds later is not seen: that call is made again, as by two processes at once
        self._known_keys: dict[str, set[int] | None] = {}

    def close(self) -> None:
        self.flush()
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def write_batches(self) -> Iterator[None]:
        """Inside: the writes of one pass of the event loop share one commit, made right after the pass.

        Hundreds of calls a second finish in bursts; one commit per burst instead of one per
        call takes the commits off the path between a reply and the next request. Reads of the
        cache see pending rows. A failed commit keeps its rows, is logged, and is raised by the
        next write and when the block ends.
        """
        self._batching += 1
        try:
            yield
        finally:
            self._batching -= 1
            if not self._batching:
                self.flush()

    def _write(self, statements: list[Statement]) -> None:
        if not self._batching:
            self.flush()  # rows a failed batch left behind go first
            self._execute(statements)
            return
        self._pending.extend(statements)
        if self._flush_error is not None:
            self.flush()  # the last commit failed: retry now, and raise to the writer if it fails again
            return
        if not self._flush_scheduled:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self.flush()
                return
            self._flush_scheduled = True
            loop.call_soon(self._flush_soon)

    def _flush_soon(self) -> None:
        try:
            self.flush()
        except Exception as exc:  # noqa: BLE001 - kept and raised by the next write or flush
            log.error("could not commit %d pending writes to %s: %s", len(self._pending), self.path, exc)

    def flush(self) -> None:
        """Commit the pending writes now (raises what the commit raises; the rows stay pending)."""
        self._flush_scheduled = False
        self._flush_error = None
        self._stamp = None
        if not self._pending:
            return
        try:
            self._execute(self._pending)
        except BaseException as exc:
            self._flush_error = exc
            raise
        self._pending = []
        self._pending_rows.clear()

    def _execute(self, statements: list[Statement]) -> None:
        """Run ``statements`` in one transaction: the caller's open ``transaction()``, else their own.

        Where each table is written by one SQL text, each text goes in as one ``executemany``:
        rows of one table keep their order, so the result is that of running them one by one
        (else they are run one by one).
        """
        groups = _grouped(statements)
        with nullcontext() if self.db.in_transaction else self._begin_commit():
            if groups is None:
                for sql, params in statements:
                    self.db.execute(sql, params)
            else:
                for sql, rows in groups.items():
                    self.db.executemany(sql, rows)

    def _timestamp(self) -> str:
        """Now; inside a batch, one timestamp for all the writes of the same commit."""
        if not self._batching:
            return now()
        if self._stamp is None:
            self._stamp = now()
        return self._stamp

    def _key_index(self, table: str) -> set[int] | None:
        """The hashes of the cache keys ``table`` holds, read once (None when there are too many to hold)."""
        if table not in self._known_keys:
            keys: set[int] = set()
            for (key,) in self.db.execute(f"SELECT key FROM {table}"):
                keys.add(hash(key))
                if len(keys) > KEY_INDEX_LIMIT:
                    break
            self._known_keys[table] = keys if len(keys) <= KEY_INDEX_LIMIT else None
        return self._known_keys[table]

    def _cached_row(self, table: str, key: str) -> sqlite3.Row | dict[str, object] | None:
        """The stored row of a cache key: pending, or committed (a key the index has never seen is a miss)."""
        pending = self._pending_rows.get((table, key))
        if pending is not None:
            return pending
        known = self._key_index(table)
        if known is not None and hash(key) not in known:
            return None
        return self.db.execute(f"SELECT * FROM {table} WHERE key = ?", (key,)).fetchone()

    def _remember_key(self, table: str, key: str) -> None:
        known = self._key_index(table)
        if known is not None:
            known.add(hash(key))

    @contextmanager
    def _begin_commit(self) -> Iterator[None]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.flush()
        try:
            with self._begin_commit():
                yield self.db
        finally:
            self._known_keys.clear()  # the caller's SQL may have written any table: read the keys again

    # runs -----------------------------------------------------------------------------------------
    def get_run(self, name: str) -> RunRecord | None:
        self.flush()
        row = self.db.execute("SELECT * FROM runs WHERE name = ?", (name,)).fetchone()
        return _run(row) if row else None

    def runs(self) -> list[RunRecord]:
        return [_run(r) for r in self.db.execute("SELECT * FROM runs ORDER BY id")]

    def create_run(self, *, name: str, model: str, judge: str, settings: dict[str, object], config_hash: str,
                   dataset_name: str, dataset_hash: str, package_version: str, story_count: int) -> RunRecord:
        with self.transaction() as db:
            db.execute(
                "INSERT INTO runs(name, model, judge, settings_json, config_hash, dataset_name, dataset_hash,"
                " package_version, status, story_count, started_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (name, model, judge, json.dumps(settings, sort_keys=True), config_hash, dataset_name, dataset_hash,
                 package_version, "running", story_count, now()),
            )
        run = self.get_run(name)
        assert run is not None
        return run

    def set_run_status(self, run_id: int, status: str) -> None:
        finished = now() if status == "done" else None
        self._write([("UPDATE runs SET status = ?, finished_at = ? WHERE id = ?", (status, finished, run_id))])

    # model calls ----------------------------------------------------------------------------------
    def cached_model_call(self, key: str) -> sqlite3.Row | dict[str, object] | None:
        return self._cached_row("model_calls", key)

    def record_model_call(self, *, run_id: int, story_id: str, turn: int, key: str, model: str,
                          request_json: str, response_text: str | None, finish_reason: str | None = None,
                          input_tokens: int = 0, output_tokens: int = 0, latency_s: float = 0.0, attempts: int = 1,
                          cached: bool = False, error_kind: str | None = None, error: str | None = None) -> None:
        """Store a completed call (cache row + log row in one transaction), a cache hit, or a failure."""
        stamp = self._timestamp()
        statements: list[Statement] = []
        if response_text is not None and not cached:
            row = {"key": key, "model": model, "request_json": request_json, "response_text": response_text,
                   "finish_reason": finish_reason, "input_tokens": input_tokens, "output_tokens": output_tokens,
                   "latency_s": latency_s, "attempts": attempts, "created_at": stamp}
            statements.append(_insert("model_calls", row))
            if self._batching:
                self._pending_rows[("model_calls", key)] = row
            self._remember_key("model_calls", key)
        statements.append(_insert("call_log", {
            "run_id": run_id, "story_id": story_id, "turn": turn, "kind": "model", "key": key, "cached": int(cached),
            "error_kind": error_kind, "error": error, "latency_s": latency_s, "created_at": stamp}))
        self._write(statements)

    # judgments ------------------------------------------------------------------------------------
    def cached_judgment(self, key: str) -> sqlite3.Row | dict[str, object] | None:
        return self._cached_row("judgments", key)

    def record_judgment(self, *, run_id: int, story_id: str, turn: int, key: str, judge: str,
                        request_json: str, outcome: str | None, branch: int | None, rationale: str,
                        details: dict[str, object], latency_s: float, cached: bool = False,
                        store: bool = True, error: str | None = None) -> None:
        if not store:
            return
        stamp = self._timestamp()
        statements: list[Statement] = []
        if not cached and outcome is not None and error is None:
            row = {"key": key, "judge": judge, "request_json": request_json, "outcome": outcome, "branch": branch,
                   "rationale": rationale, "details_json": json.dumps(details, sort_keys=True),
                   "latency_s": latency_s, "created_at": stamp}
            statements.append(_insert("judgments", row))
            if self._batching:
                self._pending_rows[("judgments", key)] = row
            self._remember_key("judgments", key)
        statements.append(_insert("call_log", {
            "run_id": run_id, "story_id": story_id, "turn": turn, "kind": "judge", "key": key, "cached": int(cached),
            "error_kind": "judge_error" if error else None, "error": error, "latency_s": latency_s,
            "created_at": stamp}))
        self._write(statements)

    # turns and stories ----------------------------------------------------------------------------
    def record_turn(self, run_id: int, story_id: str, turn: int, **fields: object) -> None:
        self._write([_insert("turns", {"run_id": run_id, "story_id": story_id, "turn": turn, **fields})])

    def record_story(self, run_id: int, story_id: str, **fields: object) -> None:
        self._write([_insert("stories", {"run_id": run_id, "story_id": story_id, **fields})])

    def finished_stories(self, run_id: int) -> set[str]:
        self.flush()
        rows = self.db.execute("SELECT story_id FROM stories WHERE run_id = ? AND status IN ('done', 'stopped')",
                               (run_id,))
        return {r["story_id"] for r in rows}

    def turn_rows(self, run_id: int) -> list[sqlite3.Row]:
        self.flush()
        return list(self.db.execute(
            "SELECT t.* FROM turns t JOIN stories s ON s.run_id = t.run_id AND s.story_id = t.story_id "
            "WHERE t.run_id = ? ORDER BY s.position, t.turn", (run_id,)))

    def story_rows(self, run_id: int) -> list[sqlite3.Row]:
        self.flush()
        return list(self.db.execute("SELECT * FROM stories WHERE run_id = ? ORDER BY position", (run_id,)))

    def call_counts(self, run_id: int) -> dict[str, int]:
        self.flush()
        row = self.db.execute(
            "SELECT SUM(kind='model' AND cached=0 AND error IS NULL) AS model_calls,"
            " SUM(kind='model' AND cached=1) AS model_cached,"
            " SUM(kind='model' AND error IS NOT NULL) AS model_errors,"
            " SUM(kind='judge' AND cached=0 AND error IS NULL) AS judge_calls,"
            " SUM(kind='judge' AND cached=1) AS judge_cached"
            " FROM call_log WHERE run_id = ?", (run_id,)).fetchone()
        return {k: int(row[k] or 0) for k in row.keys()}  # noqa: SIM118 - sqlite3.Row iterates values

    def progress_counts(self, run_id: int) -> dict[str, int]:
        """Counters of a run as stored: what worker processes report through the shared file."""
        self.flush()
        stories = self.db.execute("SELECT COUNT(*) FROM stories WHERE run_id = ?", (run_id,)).fetchone()[0]
        turns = self.db.execute("SELECT COUNT(*), COALESCE(SUM(correct = 1), 0) FROM turns WHERE run_id = ? AND "
                                "response IS NOT NULL", (run_id,)).fetchone()
        calls = self.call_counts(run_id)
        return {"stories": stories, "questions": turns[0], "right": turns[1], "model_calls": calls["model_calls"],
                "cached": calls["model_cached"], "errors": calls["model_errors"]}

    def spend(self, run_id: int) -> RunSpend:
        """Tokens and judge cost of the calls this run made (not those answered from the store)."""
        self.flush()
        model = self.db.execute(
            "SELECT COALESCE(SUM(m.input_tokens), 0), COALESCE(SUM(m.output_tokens), 0) FROM call_log c"
            " JOIN model_calls m ON m.key = c.key WHERE c.run_id = ? AND c.kind = 'model' AND c.cached = 0"
            " AND c.error IS NULL", (run_id,)).fetchone()
        judge_in = judge_out = 0
        judge_cost: float | None = 0.0
        for (details,) in self.db.execute(
                "SELECT j.details_json FROM call_log c JOIN judgments j ON j.key = c.key WHERE c.run_id = ?"
                " AND c.kind = 'judge' AND c.cached = 0", (run_id,)):
            data = json.loads(details)
            usage = data.get("usage") or {}
            judge_in += int(usage.get("input_tokens", 0))
            judge_out += int(usage.get("output_tokens", 0))
            cost = data.get("cost_usd", 0.0 if not usage else None)
            judge_cost = None if judge_cost is None or cost is None else judge_cost + float(cost)
        return RunSpend(int(model[0]), int(model[1]), judge_in, judge_out, judge_cost)

    def usage(self, run_id: int) -> dict[str, int]:
        self.flush()
        row = self.db.execute(
            "SELECT COALESCE(SUM(m.input_tokens), 0) AS input_tokens, COALESCE(SUM(m.output_tokens), 0) AS output_tokens"
            " FROM turns t JOIN model_calls m ON m.key = t.model_key WHERE t.run_id = ?", (run_id,)).fetchone()
        return {"input_tokens": int(row["input_tokens"]), "output_tokens": int(row["output_tokens"])}


@dataclass(frozen=True)
class RunSpend:
    """What a run's own calls used (answers from the store excluded): model tokens, judge tokens and cost."""

    model_input_tokens: int
    model_output_tokens: int
    judge_input_tokens: int
    judge_output_tokens: int
    judge_cost: float | None  # None: some judgment had no known price


_TABLE = re.compile(r"\b(?:INTO|UPDATE)\s+(\w+)")


def _grouped(statements: list[Statement]) -> dict[str, list[tuple[object, ...]]] | None:
    """The statements' parameters by SQL text, or None when some table is written by two different texts."""
    groups: dict[str, list[tuple[object, ...]]] = {}
    table_sql: dict[str, str] = {}
    for sql, params in statements:
        match = _TABLE.search(sql)
        if match is None or table_sql.setdefault(match[1], sql) != sql:
            return None
        groups.setdefault(sql, []).append(params)
    return groups


def _insert(table: str, row: dict[str, object]) -> Statement:
    """An INSERT OR REPLACE of ``row`` (column names come from code, never from data)."""
    return (f"INSERT OR REPLACE INTO {table}({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
            tuple(row.values()))


def _run(row: sqlite3.Row) -> RunRecord:
    return RunRecord(
        id=row["id"], name=row["name"], model=row["model"], judge=row["judge"],
        settings=json.loads(row["settings_json"]), config_hash=row["config_hash"], dataset_name=row["dataset_name"],
        dataset_hash=row["dataset_hash"], package_version=row["package_version"], status=row["status"],
        story_count=row["story_count"], started_at=row["started_at"], finished_at=row["finished_at"],
    )
