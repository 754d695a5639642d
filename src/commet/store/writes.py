"""What the results store records: runs, model calls and judgments (which double as caches), turns, stories.

Model calls and LLM judgments are cache rows keyed by a hash of (model or judge identity,
request): a run that is killed and started again replays each story from the start, and every
call that had completed is answered from the store. A cache row is readable the moment it is
written, even while its commit window is open, and a cache miss is answered from an in-memory
index of the keys stored (no SELECT). API keys are never part of what is stored.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path

from commet.models.base import canonical_json
from commet.store.commits import Statement, upsert
from commet.store.queries import RunRecord, RunStatus, StoreQueries
from commet.store.records import CachedCall, CachedJudgment, StoryRecord, TurnRecord
from commet.store.schema import now

#: most cache keys per table held in the in-memory index (about 50 bytes each); a larger table is asked
KEY_INDEX_LIMIT = 500_000


class StoreWrites(StoreQueries):
    """The write side of a results store (a part of ``Store``); built on the queries, as a new run is
    answered as stored."""

    def __init__(self, path: Path):
        super().__init__(path)
        #: per cache table, ``hash(key)`` of every row this connection knows of (None: too many to hold). A
        #: row another process adds later is not seen (``fresh=True`` asks SQLite): that call is made again
        self._known_keys: dict[str, set[int] | None] = {}

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

    def _cached_row(self, table: str, key: str, *, fresh: bool = False) -> sqlite3.Row | Mapping[str, object] | None:
        """The stored row of a cache key: pending, or committed (a key the index has never seen is a miss,
        unless ``fresh``)."""
        pending = self._pending_rows.get((table, key))
        if pending is not None:
            return pending
        known = self._key_index(table)
        if known is not None and hash(key) not in known and not fresh:
            return None
        row: sqlite3.Row | None = self.db.execute(f"SELECT * FROM {table} WHERE key = ?", (key,)).fetchone()
        return row

    def _remember_key(self, table: str, key: str) -> None:
        known = self._key_index(table)
        if known is not None:
            known.add(hash(key))

    # runs -----------------------------------------------------------------------------------------
    def create_run(self, *, name: str, model: str, judge: str, settings: dict[str, object], config_hash: str,
                   dataset_name: str, dataset_hash: str, package_version: str, story_count: int) -> RunRecord:
        """The run named ``name``, created now, or as another process created it a moment earlier
        (two processes starting one run race here; the caller checks the stored configuration)."""
        with self.transaction() as db:  # (names made of a folder's name may hold lone surrogates: made valid)
            db.execute(*self._valid([(
                "INSERT OR IGNORE INTO runs(name, model, judge, settings_json, config_hash, dataset_name, dataset_hash,"
                " package_version, status, story_count, started_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (name, model, judge, json.dumps(settings, sort_keys=True), config_hash, dataset_name, dataset_hash,
                 package_version, "running", story_count, now()),
            )])[0])
        run = self.get_run(name)
        assert run is not None
        return run

    def set_run_status(self, run_id: int, status: RunStatus) -> None:
        finished = None if RunStatus(status) is RunStatus.running else now()
        self._write([("UPDATE runs SET status = ?, finished_at = ? WHERE id = ?", (status, finished, run_id))])

    def set_story_count(self, run_id: int, count: int) -> None:
        """A run's number of StoryTurns (a human run grows as more people finish)."""
        self._write([("UPDATE runs SET story_count = ? WHERE id = ?", (count, run_id))])

    # shards ---------------------------------------------------------------------------------------
    def record_shard(self, run_id: int, index: int, count: int) -> None:
        self._write([("INSERT OR IGNORE INTO shards(run_id, shard_index, shard_count) VALUES (?, ?, ?)",
                      (run_id, index, count))])

    # model calls ----------------------------------------------------------------------------------
    def cached_model_call(self, key: str, *, fresh: bool = False) -> CachedCall | None:
        """The stored call of ``key``; ``fresh`` also finds a row another process wrote since this one looked."""
        row = self._cached_row("model_calls", key, fresh=fresh)
        return None if row is None else CachedCall(str(row["response_text"]))

    def record_model_call(self, *, run_id: int, story_id: str, turn: int, key: str, model: str,
                          request_json: str, response_text: str | None, finish_reason: str | None = None,
                          input_tokens: int = 0, output_tokens: int = 0, latency_s: float = 0.0, attempts: int = 1,
                          cached: bool = False, error_kind: str | None = None, error: str | None = None) -> None:
        """Store a completed call (cache row + log row in one transaction), a cache hit, or a failure."""
        stamp = self._timestamp()
        row = None if response_text is None or cached else {
            "key": key, "model": model, "request_json": request_json, "response_text": response_text,
            "finish_reason": finish_reason, "input_tokens": input_tokens, "output_tokens": output_tokens,
            "latency_s": latency_s, "attempts": attempts, "created_at": stamp}
        self._record_call("model_calls", key, row, {
            "run_id": run_id, "story_id": story_id, "turn": turn, "kind": "model", "key": key, "cached": int(cached),
            "error_kind": error_kind, "error": error, "latency_s": latency_s, "created_at": stamp})

    def remember_model_call(self, *, key: str, model: str, request_json: str, response_text: str,
                            finish_reason: str | None, input_tokens: int, output_tokens: int, latency_s: float,
                            attempts: int) -> None:
        """Store a completed call in the cache only (calls made outside a run: the LLM pipeline)."""
        self._write([upsert("model_calls", {
            "key": key, "model": model, "request_json": request_json, "response_text": response_text,
            "finish_reason": finish_reason, "input_tokens": input_tokens, "output_tokens": output_tokens,
            "latency_s": latency_s, "attempts": attempts, "created_at": self._timestamp()})])
        self._remember_key("model_calls", key)

    # judgments ------------------------------------------------------------------------------------
    def cached_judgment(self, key: str) -> CachedJudgment | None:
        row = self._cached_row("judgments", key)
        if row is None:
            return None
        with self._located():
            return CachedJudgment.from_values(key, row["judge"], row["outcome"], row["branch"], row["rationale"],
                                              row["details_json"])

    def record_judgment(self, *, run_id: int, story_id: str, turn: int, key: str, judge: str,
                        request_json: str, outcome: str | None, branch: int | None, rationale: str,
                        details: dict[str, object], latency_s: float, cached: bool = False,
                        store: bool = True, error: str | None = None) -> None:
        if not store:
            return
        stamp = self._timestamp()
        row = None if cached or outcome is None or error is not None else {
            "key": key, "judge": judge, "request_json": request_json, "outcome": outcome, "branch": branch,
            "rationale": rationale, "details_json": canonical_json(details),
            "latency_s": latency_s, "created_at": stamp}
        self._record_call("judgments", key, row, {
            "run_id": run_id, "story_id": story_id, "turn": turn, "kind": "judge", "key": key, "cached": int(cached),
            "error_kind": "judge_error" if error else None, "error": error, "latency_s": latency_s,
            "created_at": stamp})

    def _record_call(self, table: str, key: str, row: Mapping[str, object] | None, log: Mapping[str, object]) -> None:
        """A call's cache row (None: nothing new to keep) and its log row, written together; the cache row
        is readable at once, even while the batch it is in waits for its commit."""
        statements: list[Statement] = []
        if row is not None:
            statements.append(upsert(table, row))
            if self._batching:
                self._pending_rows[(table, key)] = row
            self._remember_key(table, key)
        statements.append(upsert("call_log", log))
        self._write(statements)

    # turns and stories ----------------------------------------------------------------------------
    def record_turn(self, record: TurnRecord) -> None:
        self._write([upsert("turns", record.columns())])

    def record_story(self, record: StoryRecord) -> None:
        self._write([upsert("stories", record.columns())])

