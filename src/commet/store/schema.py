"""What a results store file is: its tables, its schema version, its timestamps.

The schema is data, read by every part of the store (:mod:`commet.store.sqlite` creates and checks it,
:mod:`commet.store.opening` stands in for tables an older file lacks) and by the other SQLite files
of CoMMET (the review and study stores keep their own facts in the same ``meta`` table).
"""

from __future__ import annotations

import functools
import sqlite3
from datetime import datetime, timezone

SCHEMA_VERSION = 1
#: The key-value table each of CoMMET's SQLite files (results store, study, review) keeps its own
#: facts in: the schema version, the study it belongs to, the session key.
META_TABLE = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"

SCHEMA = META_TABLE + """
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
CREATE TABLE IF NOT EXISTS leases (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    story_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    state TEXT NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (run_id, story_id)
);
CREATE TABLE IF NOT EXISTS call_leases (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    expires_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS rate_budget (
    key TEXT PRIMARY KEY,
    requests REAL NOT NULL,
    tokens REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS shards (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    shard_index INTEGER NOT NULL,
    shard_count INTEGER NOT NULL,
    PRIMARY KEY (run_id, shard_index, shard_count)
);
"""


def table_names(db: sqlite3.Connection) -> set[str]:
    """The tables of an open SQLite file (raises :class:`sqlite3.Error` for what is not one)."""
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def now() -> str:
    """Now as the store writes it: UTC, ISO 8601 to the millisecond."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


@functools.cache
def schema_columns() -> dict[str, tuple[str, ...]]:
    """Each table of :data:`SCHEMA` and its columns, read from the schema itself (built in memory once)."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(SCHEMA)
        return {table: tuple(row[1] for row in db.execute(f"PRAGMA table_info({table})")) for table in table_names(db)}
    finally:
        db.close()
