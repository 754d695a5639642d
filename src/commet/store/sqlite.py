"""The results store: one SQLite file (WAL) holding runs, every call, every judgment, every turn.

Model calls and LLM judgments double as caches keyed by a hash of (model or judge identity,
request): a run that is killed and started again replays each story from the start, and
every call that had completed is answered from the store. Each call is committed as soon
as it returns, in the same transaction as its log row, so a crash loses at most the
call in flight. API keys are never part of what is stored.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

SCHEMA_VERSION = 1

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

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # runs -----------------------------------------------------------------------------------------
    def get_run(self, name: str) -> RunRecord | None:
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
        self.db.execute("UPDATE runs SET status = ?, finished_at = ? WHERE id = ?", (status, finished, run_id))

    # model calls ----------------------------------------------------------------------------------
    def cached_model_call(self, key: str) -> sqlite3.Row | None:
        return self.db.execute("SELECT * FROM model_calls WHERE key = ?", (key,)).fetchone()

    def record_model_call(self, *, run_id: int, story_id: str, turn: int, key: str, model: str,
                          request: dict[str, object], response_text: str | None, finish_reason: str | None = None,
                          input_tokens: int = 0, output_tokens: int = 0, latency_s: float = 0.0, attempts: int = 1,
                          cached: bool = False, error_kind: str | None = None, error: str | None = None) -> None:
        """Store a completed call (cache row + log row in one transaction), a cache hit, or a failure."""
        with self.transaction() as db:
            if response_text is not None and not cached:
                db.execute(
                    "INSERT OR REPLACE INTO model_calls(key, model, request_json, response_text, finish_reason,"
                    " input_tokens, output_tokens, latency_s, attempts, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                    (key, model, json.dumps(request, sort_keys=True), response_text, finish_reason, input_tokens,
                     output_tokens, latency_s, attempts, now()),
                )
            db.execute(
                "INSERT INTO call_log(run_id, story_id, turn, kind, key, cached, error_kind, error, latency_s,"
                " created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (run_id, story_id, turn, "model", key, int(cached), error_kind, error, latency_s, now()),
            )

    # judgments ------------------------------------------------------------------------------------
    def cached_judgment(self, key: str) -> sqlite3.Row | None:
        return self.db.execute("SELECT * FROM judgments WHERE key = ?", (key,)).fetchone()

    def record_judgment(self, *, run_id: int, story_id: str, turn: int, key: str, judge: str,
                        request: dict[str, object], outcome: str | None, branch: int | None, rationale: str,
                        details: dict[str, object], latency_s: float, cached: bool = False,
                        store: bool = True, error: str | None = None) -> None:
        with self.transaction() as db:
            if store and not cached and outcome is not None and error is None:
                db.execute(
                    "INSERT OR REPLACE INTO judgments(key, judge, request_json, outcome, branch, rationale,"
                    " details_json, latency_s, created_at) VALUES (?,?,?,?,?,?,?,?,?)",
                    (key, judge, json.dumps(request, sort_keys=True), outcome, branch, rationale,
                     json.dumps(details, sort_keys=True), latency_s, now()),
                )
            if store:
                db.execute(
                    "INSERT INTO call_log(run_id, story_id, turn, kind, key, cached, error_kind, error, latency_s,"
                    " created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                    (run_id, story_id, turn, "judge", key, int(cached), "judge_error" if error else None, error,
                     latency_s, now()),
                )

    # turns and stories ----------------------------------------------------------------------------
    def record_turn(self, run_id: int, story_id: str, turn: int, **fields: object) -> None:
        columns = ["run_id", "story_id", "turn", *fields]
        values = [run_id, story_id, turn, *fields.values()]
        self.db.execute(
            f"INSERT OR REPLACE INTO turns({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", values
        )

    def record_story(self, run_id: int, story_id: str, **fields: object) -> None:
        columns = ["run_id", "story_id", *fields]
        values = [run_id, story_id, *fields.values()]
        self.db.execute(
            f"INSERT OR REPLACE INTO stories({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", values
        )

    def finished_stories(self, run_id: int) -> set[str]:
        rows = self.db.execute("SELECT story_id FROM stories WHERE run_id = ? AND status = 'done'", (run_id,))
        return {r["story_id"] for r in rows}

    def turn_rows(self, run_id: int) -> list[sqlite3.Row]:
        return list(self.db.execute(
            "SELECT t.* FROM turns t JOIN stories s ON s.run_id = t.run_id AND s.story_id = t.story_id "
            "WHERE t.run_id = ? ORDER BY s.position, t.turn", (run_id,)))

    def story_rows(self, run_id: int) -> list[sqlite3.Row]:
        return list(self.db.execute("SELECT * FROM stories WHERE run_id = ? ORDER BY position", (run_id,)))

    def call_counts(self, run_id: int) -> dict[str, int]:
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
        stories = self.db.execute("SELECT COUNT(*) FROM stories WHERE run_id = ?", (run_id,)).fetchone()[0]
        turns = self.db.execute("SELECT COUNT(*), COALESCE(SUM(correct = 1), 0) FROM turns WHERE run_id = ? AND "
                                "response IS NOT NULL", (run_id,)).fetchone()
        calls = self.call_counts(run_id)
        return {"stories": stories, "questions": turns[0], "right": turns[1], "model_calls": calls["model_calls"],
                "cached": calls["model_cached"], "errors": calls["model_errors"]}

    def usage(self, run_id: int) -> dict[str, int]:
        row = self.db.execute(
            "SELECT COALESCE(SUM(m.input_tokens), 0) AS input_tokens, COALESCE(SUM(m.output_tokens), 0) AS output_tokens"
            " FROM turns t JOIN model_calls m ON m.key = t.model_key WHERE t.run_id = ?", (run_id,)).fetchone()
        return {"input_tokens": int(row["input_tokens"]), "output_tokens": int(row["output_tokens"])}


def _run(row: sqlite3.Row) -> RunRecord:
    return RunRecord(
        id=row["id"], name=row["name"], model=row["model"], judge=row["judge"],
        settings=json.loads(row["settings_json"]), config_hash=row["config_hash"], dataset_name=row["dataset_name"],
        dataset_hash=row["dataset_hash"], package_version=row["package_version"], status=row["status"],
        story_count=row["story_count"], started_at=row["started_at"], finished_at=row["finished_at"],
    )
