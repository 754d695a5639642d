"""Joining stores: the shards of a run (``commet eval --shard i/N`` on many machines) into one file.

Runs are matched by name and must have the same configuration (model, judge, settings,
dataset: the config hash, and the dataset hash); turn and story rows present in two inputs must
be identical; a shard (index of count) may come from one input only. Any conflict refuses the
whole merge and nothing is written (one transaction). Cached calls and judgments are keyed by
their request, so the first copy of a key is kept; keys whose stored answers differ are
counted in the report (a server that is not deterministic), never hidden. A run is ``done`` in
the output when all of its StoryTurns are finished there (and, for a sharded run, every shard
is in); otherwise it is ``incomplete``.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from commet.store.errors import StoreError
from commet.store.opening import connect_read_only
from commet.store.sqlite import BUSY_TIMEOUT_S, Store


class MergeError(StoreError):
    """Stores that cannot be merged: not a results store, other run configurations, conflicting rows."""


@dataclass
class MergeReport:
    runs: dict[str, str] = field(default_factory=dict)  # run name -> status in the output
    turns: int = 0  # turn rows added
    stories: int = 0  # story rows added
    calls: int = 0  # cached model calls and judgments added
    differing_cache_rows: int = 0  # cache keys whose answers differ between inputs (first kept)


#: columns compared between copies of a cached row (timestamps and latencies may differ)
_CACHE_ANSWER = {"model_calls": ("response_text", "finish_reason"), "judgments": ("outcome", "branch", "rationale")}


def merge_stores(out: str | Path, inputs: list[str | Path]) -> MergeReport:
    """Merge the results stores ``inputs`` into ``out`` (created when missing); see the module text."""
    # realpath, not Path.resolve: a link loop is then a path that is no file (refused below), not a RuntimeError
    out_path = Path(os.path.realpath(out))
    sources = []
    for path in inputs:
        resolved = Path(os.path.realpath(path))
        if resolved == out_path:
            raise MergeError(f"{path}: is the output store itself")
        if not resolved.is_file():
            raise MergeError(f"{path}: no such store file")
        try:  # opened as every store is read (a "#" or "?" in its name is part of the name, not of a URI)
            con = connect_read_only(resolved, busy_timeout_s=BUSY_TIMEOUT_S)
            con.row_factory = sqlite3.Row
            con.execute("SELECT name, config_hash FROM runs LIMIT 1").fetchall()
        except sqlite3.DatabaseError as exc:
            raise MergeError(f"{path}: not a CoMMET results store ({exc})") from None
        sources.append((str(path), con))
    report = MergeReport()
    created = not out_path.exists()
    try:
        with Store(out_path) as store, store.transaction() as db:
            shard_origin: dict[tuple[str, int, int], str] = {}
            for label, con in sources:
                _merge_one(db, label, con, report, shard_origin)
            for name in dict.fromkeys(name for _, con in sources for name in _run_names(con)):
                report.runs[name] = _close_run(db, name)
    except MergeError:
        if created:  # refused: leave no half-made output behind
            for leftover in (out_path, out_path.with_name(out_path.name + "-wal"),
                             out_path.with_name(out_path.name + "-shm")):
                leftover.unlink(missing_ok=True)
        raise
    finally:
        for _, con in sources:
            con.close()
    return report


def _run_names(db: sqlite3.Connection) -> list[str]:
    return [r[0] for r in db.execute("SELECT name FROM runs ORDER BY id")]


def _merge_one(db: sqlite3.Connection, label: str, con: sqlite3.Connection, report: MergeReport,
               shard_origin: dict[tuple[str, int, int], str]) -> None:
    for table, key_column in (("model_calls", "key"), ("judgments", "key")):
        for row in con.execute(f"SELECT * FROM {table}"):
            existing = db.execute(f"SELECT * FROM {table} WHERE {key_column} = ?", (row[key_column],)).fetchone()
            if existing is None:
                _insert(db, table, dict(row))
                report.calls += 1
            elif any(existing[c] != row[c] for c in _CACHE_ANSWER[table]):
                report.differing_cache_rows += 1
    for run in con.execute("SELECT * FROM runs ORDER BY id"):
        run_id = _target_run(db, label, dict(run))
        counts = {r[0]: r[1] for r in con.execute(
            "SELECT shard_index, shard_count FROM shards WHERE run_id = ?", (run["id"],))}
        for index, count in counts.items():
            seen = shard_origin.get((run["name"], index, count))
            if seen is not None:
                raise MergeError(f"{label}: run {run['name']!r} shard {index}/{count} is also in {seen}")
            other = db.execute("SELECT shard_count FROM shards WHERE run_id = ? AND shard_count != ?",
                               (run_id, count)).fetchone()
            if other is not None:
                raise MergeError(f"{label}: run {run['name']!r} was split into {count} shards here but into "
                                 f"{other[0]} in another input")
            if db.execute("SELECT 1 FROM shards WHERE run_id = ? AND shard_index = ? AND shard_count = ?",
                          (run_id, index, count)).fetchone():
                raise MergeError(f"{label}: run {run['name']!r} shard {index}/{count} is already in the output")
            shard_origin[(run["name"], index, count)] = label
            db.execute("INSERT INTO shards(run_id, shard_index, shard_count) VALUES (?, ?, ?)", (run_id, index, count))
        for table, keys in (("stories", ("story_id",)), ("turns", ("story_id", "turn"))):
            for row in con.execute(f"SELECT * FROM {table} WHERE run_id = ?", (run["id"],)):
                values = {**dict(row), "run_id": run_id}
                where = " AND ".join(f"{k} = ?" for k in ("run_id", *keys))
                existing = db.execute(f"SELECT * FROM {table} WHERE {where}",
                                      tuple(values[k] for k in ("run_id", *keys))).fetchone()
                if existing is None:
                    _insert(db, table, values)
                    report.stories += table == "stories"
                    report.turns += table == "turns"
                elif dict(existing) != values:
                    where_text = ", ".join(f"{k}={values[k]!r}" for k in keys)
                    raise MergeError(f"{label}: run {run['name']!r} {table[:-1]} {where_text} differs from the "
                                     "copy already merged")
        for row in con.execute("SELECT * FROM call_log WHERE run_id = ? ORDER BY id", (run["id"],)):
            values = {k: row[k] for k in row.keys() if k != "id"}  # noqa: SIM118 - sqlite3.Row iterates values
            _insert(db, "call_log", {**values, "run_id": run_id})


def _target_run(db: sqlite3.Connection, label: str, run: dict[str, object]) -> int:
    """The output's id for ``run``: the run of that name (same configuration), or a new copy."""
    existing = db.execute("SELECT * FROM runs WHERE name = ?", (run["name"],)).fetchone()
    if existing is None:
        values = {k: v for k, v in run.items() if k != "id"}
        return int(db.execute(f"INSERT INTO runs({', '.join(values)}) VALUES ({', '.join('?' * len(values))})",
                              tuple(values.values())).lastrowid or 0)
    for column in ("config_hash", "dataset_hash", "model", "judge", "story_count"):
        if existing[column] != run[column]:
            raise MergeError(f"{label}: run {run['name']!r} has another {column.replace('_', ' ')} than the run of "
                             f"that name already merged ({run[column]!r} vs {existing[column]!r}); not the same run")
    db.execute("UPDATE runs SET started_at = MIN(started_at, ?), finished_at = MAX(COALESCE(finished_at, ''), "
               "COALESCE(?, '')) WHERE id = ?", (run["started_at"], run["finished_at"], existing["id"]))
    return int(existing["id"])


def _close_run(db: sqlite3.Connection, name: str) -> str:
    """Set and return the merged run's status: done when complete, else incomplete."""
    run = db.execute("SELECT * FROM runs WHERE name = ?", (name,)).fetchone()
    finished = db.execute("SELECT COUNT(*) FROM stories WHERE run_id = ? AND status IN ('done', 'stopped')",
                          (run["id"],)).fetchone()[0]
    shards = db.execute("SELECT shard_index, shard_count FROM shards WHERE run_id = ?", (run["id"],)).fetchall()
    all_shards = not shards or {s[0] for s in shards} == set(range(shards[0][1]))
    if finished >= run["story_count"] and all_shards:
        db.execute("UPDATE runs SET status = 'done', finished_at = COALESCE(NULLIF(finished_at, ''), ?) WHERE id = ?",
                   (run["started_at"], run["id"]))
        return "done"
    db.execute("UPDATE runs SET status = 'incomplete', finished_at = NULL WHERE id = ?", (run["id"],))
    return "incomplete"


def _insert(db: sqlite3.Connection, table: str, row: dict[str, object]) -> None:
    """Insert ``row`` (column names come from the store's own schema, never from data)."""
    db.execute(f"INSERT INTO {table}({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values()))


def describe(report: MergeReport) -> list[str]:
    """The report as lines for the terminal."""
    lines = [f"run {name!r}: {status}" for name, status in report.runs.items()]
    lines.append(f"added {report.stories} story rows, {report.turns} turn rows, {report.calls} cached calls")
    if report.differing_cache_rows:
        lines.append(f"{report.differing_cache_rows} cached call(s) had other answers in a later input; the first "
                     "copy was kept (the server is not deterministic)")
    return lines


