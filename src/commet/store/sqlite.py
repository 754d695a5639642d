"""The results store: one SQLite file (WAL) holding runs, every call, every judgment, every turn.

Model calls and LLM judgments double as caches keyed by a hash of (model or judge identity,
request): a run that is killed and started again replays each story from the start, and
every call that had completed is answered from the store. Each call is committed with its
log row as soon as it returns or, while the engine runs (:meth:`Store.write_batches`),
together with the other writes of the same commit window (``COMMIT_WINDOW_S``, 10 ms): a
crash loses at most the calls in flight and those of the last window. API keys are never
part of what is stored.

Per call the store does as little as it can on the event loop's path: the rows of one window
go in as one ``executemany`` per statement, with one timestamp, in one transaction, and a
cache miss is answered from an in-memory index of the keys stored (no SELECT).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import re
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from enum import Enum
from pathlib import Path
from typing import TypeVar

from commet.format.inputs import valid_text
from commet.store.errors import StoreError, StoreFullError, is_disk_full
from commet.store.opening import connect_read_only, stand_in_for_missing_tables
from commet.store.records import (
    STORY_COLUMNS,
    TURN_COLUMNS,
    CachedCall,
    CachedJudgment,
    StoryRecord,
    TurnRecord,
)
from commet.store.run_ids import SHORT_ID_LENGTH, find_run, full_id
from commet.store.settings import RunSettings, RunSettingsError

T = TypeVar("T")
SCHEMA_VERSION = 1
#: how long an opener or writer waits for another process's lock on the file before giving up
BUSY_TIMEOUT_S = 30.0
#: most cache keys per table held in the in-memory index (about 50 bytes each); a larger table is asked
KEY_INDEX_LIMIT = 500_000
#: inside ``write_batches``: the longest a write waits for its commit (one commit per window, not per write)
COMMIT_WINDOW_S = 0.01
#: story claims read their candidates' rows this many at a time (see ``Store.claim_stories``)
CLAIM_WINDOW = 64
#: inside ``write_batches``: how often a thread copies the write-ahead log into the file (see there)
CHECKPOINT_INTERVAL_S = 0.5
log = logging.getLogger(__name__)
Statement = tuple[str, tuple[object, ...]]
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


class LeaseState(str, Enum):
    """A story's lease in the ``leases`` table (stored as its value)."""

    #: being run by its owner
    held = "held"
    #: ended unfinished (failed) in the current session: no other process of the session takes it again
    ended = "ended"


def table_names(db: sqlite3.Connection) -> set[str]:
    """The tables of an open SQLite file (raises :class:`sqlite3.Error` for what is not one)."""
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class RunStatus(str, Enum):
    """Where a run stands. Only a run whose every StoryTurn was scored is ``done``."""

    running = "running"
    done = "done"
    #: ended with StoryTurns whose calls failed for good; a rerun retries them
    incomplete = "incomplete"
    #: stopped by Ctrl-C (SIGINT); a rerun resumes
    interrupted = "interrupted"
    #: stopped by an unexpected error; a rerun resumes
    failed = "failed"
    #: stopped before its estimated spend would pass ``--max-cost``; a rerun with a higher limit resumes
    stopped_spend_limit = "stopped-spend-limit"

    def __str__(self) -> str:  # printed and exported as stored
        return self.value


@dataclass(frozen=True)
class FailureKind:
    """One kind of final failure in a run as it stands: how many turns, and the first message."""

    kind: str
    what: str  # "model" or "judge"
    turns: int
    first_story: str
    first_turn: int
    first_message: str


@dataclass(frozen=True)
class RunRecord:
    id: int
    name: str
    model: str
    judge: str
    settings: RunSettings
    config_hash: str
    dataset_name: str
    dataset_hash: str
    package_version: str
    status: RunStatus
    story_count: int
    started_at: str
    finished_at: str | None

    @property
    def short_id(self) -> str:
        """The run's short id (:mod:`commet.store.run_ids`; ``commet runs`` lengthens ids two runs share)."""
        return full_id(self.name)[:SHORT_ID_LENGTH]

    def __post_init__(self) -> None:
        if not isinstance(self.status, RunStatus):  # "done" from a caller: the enum (or its ValueError)
            object.__setattr__(self, "status", RunStatus(self.status))


#: SQLite's own ``wal_autocheckpoint`` (pages), set again when a batch block ends
DEFAULT_AUTOCHECKPOINT_PAGES = 1000


class _Checkpointer:
    """A thread that copies the write-ahead log into the database file every ``CHECKPOINT_INTERVAL_S``.

    It has its own connection and asks for PASSIVE checkpoints, which never wait for readers or
    writers: the engine's commits keep appending to the log meanwhile, and SQLite restarts the
    log from its beginning once a checkpoint has caught up, so the log stays small. SQLite
    releases the GIL while it copies and syncs, so the copy runs beside the event loop. A
    checkpoint that cannot run (another process is checkpointing) is tried at the next tick.
    """

    def __init__(self, path: Path):
        self.path = path
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="commet-store-checkpoints", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join()

    def _run(self) -> None:
        try:
            db = sqlite3.connect(str(self.path), isolation_level=None, timeout=0)
        except sqlite3.Error as error:
            log.warning("no background checkpoints for %s: %s", self.path, error)
            return
        try:
            while not self._stopping.wait(CHECKPOINT_INTERVAL_S):
                try:
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                except sqlite3.Error as error:  # busy: another checkpoint runs; the next tick tries again
                    log.debug("checkpoint of %s skipped: %s", self.path, error)
        finally:
            db.close()


class Store:
    """A SQLite results file. Use one Store per process; writes commit immediately.

    ``read_only``: for commands that only read (report, runs, export, judges, compare): nothing is
    written, not even the schema, so the store reads on read-only media and while another process
    holds a write transaction (:mod:`commet.store.opening`); a missing file is refused.
    """

    def __init__(self, path: str | Path, *, read_only: bool = False):
        self.path = Path(path)
        self.read_only = read_only
        if self.path.is_dir():
            raise StoreError(f"{self.path}: is a folder, expected a results file (.sqlite)")
        if self.path.exists() and not self.path.is_file():  # SQLite would block on a FIFO, read /dev/zero
            raise StoreError(f"{self.path}: is not a regular file, expected a results file (.sqlite)")
        if read_only:
            self._open_read_only()
        else:
            self._open_for_writing()
        self._batching = 0
        self._checkpoints: _Checkpointer | None = None  # while write batches are on
        self._pending: list[Statement] = []
        self._pending_rows: dict[tuple[str, str], Mapping[str, object]] = {}  # (table, key) -> row, read back
        self._flush_scheduled = False
        self._closed = False
        self._flush_error: BaseException | None = None
        self._in_flight: dict[str, asyncio.Future[None]] = {}
        self._stamp: str | None = None  # the timestamp of the writes waiting for the next commit
        #: per cache table, ``hash(key)`` of every row this connection knows of (None: too many to hold). A
        #: row another process adds later is not seen (``fresh=True`` asks SQLite): that call is made again
        self._known_keys: dict[str, set[int] | None] = {}

    def _open_read_only(self) -> None:
        if not self.path.is_file():
            raise StoreError(f"{self.path}: no results store there")
        try:
            self.db = connect_read_only(self.path, busy_timeout_s=BUSY_TIMEOUT_S)
        except sqlite3.OperationalError as error:  # no permission, ...
            raise StoreError(f"{self.path}: cannot open the results store (SQLite: {error})") from None
        except sqlite3.DatabaseError as error:
            raise StoreError(f"{self.path}: not a CoMMET results store (SQLite: {error})") from None
        self.db.row_factory = sqlite3.Row
        try:
            self._check_schema(before_setup=False)
            stand_in_for_missing_tables(self.db, SCHEMA)
        except (sqlite3.DatabaseError, StoreError) as error:
            self.db.close()
            if isinstance(error, StoreError):
                raise
            raise StoreError(f"{self.path}: not a CoMMET results store (SQLite: {error})") from None

    def _open_for_writing(self) -> None:
        if self.path.parent and not self.path.parent.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            # the busy wait is set before anything else: a second process opening the file while the
            # first writes (or switches it to WAL) waits for the lock instead of failing at once
            self.db = sqlite3.connect(
                str(self.path), isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_S
            )
        except sqlite3.Error as error:
            raise StoreError(f"{self.path}: cannot open the results store (SQLite: {error})") from None
        self.db.row_factory = sqlite3.Row
        try:
            self.db.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
            self._open_schema()
        except (sqlite3.DatabaseError, StoreError) as error:
            self.db.close()
            if isinstance(error, StoreError):
                raise
            if is_disk_full(error):  # a new store on a full disk
                raise StoreFullError(self.path) from None
            if isinstance(error, sqlite3.OperationalError):  # locked past the busy timeout, no permission, ...
                raise StoreError(f"{self.path}: cannot open the results store (SQLite: {error})") from None
            raise StoreError(f"{self.path}: not a CoMMET results store (SQLite: {error})") from None

    def _open_schema(self) -> None:
        """Check the file is a store this version reads, then WAL mode and the tables; retried while
        another process holds the file's setup lock.

        The check comes before anything is written: another program's SQLite file is refused
        untouched. The tables and the schema version are created in one transaction, so a second
        process opening a new file sees either nothing or the whole schema. SQLite answers
        "database is locked" without calling the busy handler in a few setup cases (a journal-mode
        switch racing another opener, WAL recovery), so setup retries for as long as the busy
        timeout would have waited.
        """
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                self._check_schema(before_setup=True)
                if self.db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA synchronous=NORMAL")
                self.db.execute("PRAGMA foreign_keys=ON")
                self.db.executescript(
                    f"BEGIN IMMEDIATE;{SCHEMA}INSERT OR IGNORE INTO meta(key, value) "
                    f"VALUES ('schema_version', '{SCHEMA_VERSION}');COMMIT;")
                self._check_schema(before_setup=False)
                return
            except sqlite3.OperationalError as error:
                if self.db.in_transaction:
                    self.db.rollback()
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _check_schema(self, *, before_setup: bool) -> None:
        """Refuse a file of a newer schema, or another program's SQLite file (tables but no CoMMET
        schema version, or tables lacking columns this version reads)."""
        tables = table_names(self.db)
        if before_setup and not tables:
            return  # a new file
        version = self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() \
            if "meta" in tables else None
        if version is None or not str(version[0]).isdigit():
            raise StoreError(f"{self.path}: not a CoMMET results store (it has tables but no CoMMET schema version)")
        if int(version[0]) > SCHEMA_VERSION:
            raise StoreError(f"{self.path}: written by a newer CoMMET (store schema {version[0]}); "
                             f"this version reads schema {SCHEMA_VERSION}: upgrade commet")
        for table, columns in _schema_columns().items():
            if table not in tables:
                continue  # added by a later release of this schema version: setup creates it
            have = {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}
            missing = [column for column in columns if column not in have]
            if missing:
                raise StoreError(f"{self.path}: not a CoMMET results store (table {table} lacks "
                                 f"{', '.join(missing)})")

    def close(self) -> None:
        """Commit what is pending and close; the connection is closed even when the commit fails (which is
        raised: the rows of a failed commit are lost, and a rerun makes those calls again)."""
        try:
            self.flush()
        finally:
            self._closed = True
            self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @asynccontextmanager
    async def single_flight(self, key: str) -> AsyncIterator[None]:
        """Inside: no other call with this cache key runs in this process; a second one waits.

        Runs at once in one process (sweep cells, stories with equal turns) ask the same
        request at the same moment; the second waits for the first and then finds its answer
        in the cache (or, if the first failed, makes the call itself).
        """
        while (waiting := self._in_flight.get(key)) is not None:
            await asyncio.shield(waiting)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = done
        try:
            yield
        finally:
            del self._in_flight[key]
            done.set_result(None)

    @contextmanager
    def write_batches(self) -> Iterator[None]:
        """Inside: the writes of ``COMMIT_WINDOW_S`` share one commit, made by the event loop after it.

        Hundreds of calls a second finish in bursts; one commit per window instead of one per
        call (or per pass of the loop: about 2.5 calls at 64 stories in flight) takes the commits
        off the path between a reply and the next request (bench/bench_openai_server.py). A
        process killed inside a window loses at most that window's rows: a rerun asks those
        calls again. Reads of the cache see pending rows. A failed commit keeps its rows, is
        logged, and is raised by the next write and when the block ends.

        The write-ahead log is copied into the file by a thread of its own (``_Checkpointer``),
        not by whichever commit passes SQLite's 1,000-page mark: that copy ends with a sync of
        the file and held the event loop for 10 to 20 ms, eight times in the bench's run.
        """
        self._batching += 1
        if self._batching == 1:  # blocks of engines running side by side (a sweep) may end in any order
            self.db.execute("PRAGMA wal_autocheckpoint=0")
            self._checkpoints = _Checkpointer(self.path)
            self._checkpoints.start()
        try:
            yield
        finally:
            self._batching -= 1
            if not self._batching:
                try:
                    self.flush()
                finally:
                    if self._checkpoints is not None:
                        self._checkpoints.stop()
                        self._checkpoints = None
                    self.db.execute(f"PRAGMA wal_autocheckpoint={DEFAULT_AUTOCHECKPOINT_PAGES}")

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
            loop.call_later(COMMIT_WINDOW_S, self._flush_soon)

    def _flush_soon(self) -> None:
        if self._closed:  # (a write scheduled by a task that ended after the store was closed)
            return
        try:
            self.flush()
        except StoreFullError:  # raised by the next write or flush, and said there once
            log.debug("could not commit %d pending writes to %s: the disk is full", len(self._pending), self.path)
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
        if self.db.in_transaction:  # the caller's: a failed statement cannot be run again alone
            self._run(self._valid(statements))
            return
        try:
            with self._begin_commit():
                self._run(statements)
        except UnicodeEncodeError:  # rolled back: once more with the text made valid
            with self._begin_commit():
                self._run(self._valid(statements))

    def _run(self, statements: list[Statement]) -> None:
        groups = _grouped(statements)
        if groups is None:
            for sql, params in statements:
                self.db.execute(sql, params)
        else:
            for sql, rows in groups.items():
                self.db.executemany(sql, rows)

    def _valid(self, statements: list[Statement]) -> list[Statement]:
        """The statements with every text made valid Unicode (lone surrogates, which SQLite cannot take, made
        U+FFFD), and a warning when any was. Text from models is made valid where it comes in; this is what
        is left (a file name that is not UTF-8, say)."""
        replaced = 0
        valid: list[Statement] = []
        for sql, params in statements:
            row = []
            for value in params:
                if isinstance(value, str):
                    value, count = valid_text(value)
                    replaced += count
                row.append(value)
            valid.append((sql, tuple(row)))
        if replaced:
            log.warning("%s: %d code point(s) of the text written were not Unicode text (lone surrogates); "
                        "stored as U+FFFD", self.path, replaced)
        return valid

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

    @contextmanager
    def _located(self) -> Iterator[None]:
        """A damaged stored value read inside names this file first."""
        try:
            yield
        except StoreError as error:
            raise StoreError(f"{self.path}: {error}") from None

    @contextmanager
    def _begin_commit(self) -> Iterator[None]:
        """One transaction; a full disk, at any statement or at the commit, is a :class:`StoreFullError`
        (the transaction rolled back: what was committed before stays, the rows pending stay pending)."""
        try:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._roll_back()
                raise
            try:
                self.db.execute("COMMIT")
            except sqlite3.Error:
                self._roll_back()
                raise
        except sqlite3.OperationalError as error:
            if is_disk_full(error):
                raise StoreFullError(self.path) from None
            raise

    def _roll_back(self) -> None:
        if self.db.in_transaction:  # (SQLite may have rolled back itself after a full disk)
            self.db.execute("ROLLBACK")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.flush()
        with self._begin_commit():
            yield self.db

    # runs -----------------------------------------------------------------------------------------
    def get_run(self, name: str) -> RunRecord | None:
        self.flush()
        row = self.db.execute("SELECT * FROM runs WHERE name = ?", (valid_text(name)[0],)).fetchone()
        return _run(row, self.path) if row else None

    def find_run(self, wanted: str) -> RunRecord:
        """The run ``wanted`` names: its name, the start of its short id or of its name (unique), else
        :class:`~commet.store.run_ids.RunLookupError` with candidates."""
        return find_run(self.runs(), wanted, where=self.path)

    def runs(self) -> list[RunRecord]:
        return [_run(r, self.path) for r in self.db.execute("SELECT * FROM runs ORDER BY id")]

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
        self._write([_insert("model_calls", {
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
            "rationale": rationale, "details_json": json.dumps(details, sort_keys=True),
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
            statements.append(_insert(table, row))
            if self._batching:
                self._pending_rows[(table, key)] = row
            self._remember_key(table, key)
        statements.append(_insert("call_log", log))
        self._write(statements)

    # turns and stories ----------------------------------------------------------------------------
    def record_turn(self, record: TurnRecord) -> None:
        self._write([_insert("turns", record.columns())])

    def record_story(self, record: StoryRecord) -> None:
        self._write([_insert("stories", record.columns())])

    # leases: which process runs which story ----------------------------------------------------
    def claim_stories(self, run_id: int, story_ids: list[str], *, owner: str, ttl: float, limit: int,
                      alive: Callable[[str], bool]) -> tuple[list[str], set[str], bool]:
        """Claim up to ``limit`` of ``story_ids`` (in order) for ``owner``, in one write transaction.

        A story can be claimed when it is not finished and has no lease, or its lease is held
        by an owner whose lease expired or who is dead (``alive`` says no). Returns (claimed,
        gone, crowded): ``gone`` are stories finished or ended in this session, never to be
        claimed (of those looked at: the candidates are read ``CLAIM_WINDOW`` at a time, until
        ``limit`` are claimed, so a claim costs the same at the end of a long run as at its
        start); ``crowded`` whether another live process holds stories of the run.
        Checking and writing in one ``BEGIN IMMEDIATE`` transaction is what makes two processes
        never claim the same story.
        """
        claimed: list[str] = []
        gone: set[str] = set()
        with self.transaction() as db:
            stamp = time.time()
            for start in range(0, len(story_ids), CLAIM_WINDOW):
                if len(claimed) >= limit:
                    break
                window = story_ids[start:start + CLAIM_WINDOW]
                marks = ", ".join("?" * len(window))
                finished = {r[0] for r in db.execute(  # as :meth:`stories_with_judge_errors`: a judge error is retried
                    f"SELECT story_id FROM stories AS s WHERE run_id = ? AND story_id IN ({marks}) "
                    "AND status IN ('done', 'stopped') AND NOT EXISTS (SELECT 1 FROM turns AS t WHERE "
                    "t.run_id = s.run_id AND t.story_id = s.story_id AND t.response IS NOT NULL "
                    "AND t.error_kind IS NOT NULL)", (run_id, *window))}
                leases = {r["story_id"]: r for r in db.execute(
                    f"SELECT story_id, owner, state, expires_at FROM leases WHERE run_id = ? AND story_id IN ({marks})",
                    (run_id, *window))}
                for story_id in window:
                    lease = leases.get(story_id)
                    if story_id in finished or lease is not None and lease["state"] == LeaseState.ended:
                        gone.add(story_id)
                        continue
                    if len(claimed) >= limit:
                        continue
                    if (lease is not None and lease["owner"] != owner and lease["expires_at"] > stamp
                            and alive(lease["owner"])):
                        continue
                    db.execute("INSERT OR REPLACE INTO leases(run_id, story_id, owner, state, expires_at) "
                               "VALUES (?, ?, ?, ?, ?)", (run_id, story_id, owner, LeaseState.held, stamp + ttl))
                    claimed.append(story_id)
            crowded = any(alive(other) for (other,) in db.execute(
                "SELECT DISTINCT owner FROM leases WHERE run_id = ? AND owner != ? AND state = ? AND expires_at > ?",
                (run_id, owner, LeaseState.held, stamp)))
        return claimed, gone, crowded

    def lease_call(self, key: str, owner: str, *, ttl: float, alive: Callable[[str], bool]) -> bool:
        """Take the right to make call ``key`` (processes sharing a run); False while a live other has it."""
        with self.transaction() as db:
            stamp = time.time()
            row = db.execute("SELECT owner, expires_at FROM call_leases WHERE key = ?", (key,)).fetchone()
            if row is not None and row["owner"] != owner and row["expires_at"] > stamp and alive(row["owner"]):
                return False
            db.execute("INSERT OR REPLACE INTO call_leases(key, owner, expires_at) VALUES (?, ?, ?)",
                       (key, owner, stamp + ttl))
            return True

    def end_call_lease(self, key: str) -> None:
        """Free call ``key`` (batched with its cache row: the others see the answer as the lease goes)."""
        self._write([("DELETE FROM call_leases WHERE key = ?", (key,))])

    def renew_leases(self, run_id: int, owner: str, ttl: float) -> None:
        """Push the expiry of every lease ``owner`` holds in the run (and of its calls) ``ttl`` seconds ahead."""
        with self.transaction() as db:
            db.execute("UPDATE leases SET expires_at = ? WHERE run_id = ? AND owner = ? AND state = ?",
                       (time.time() + ttl, run_id, owner, LeaseState.held))
            db.execute("UPDATE call_leases SET expires_at = ? WHERE owner = ?", (time.time() + ttl, owner))

    def end_lease(self, run_id: int, story_id: str, owner: str) -> None:
        """A story's end (batched with its story row): its lease is marked ended, so no other process of
        this session runs it again, not even when it ended unscored (a failed call is retried by the
        next session, see :meth:`start_session`)."""
        self._write([("UPDATE leases SET state = ? WHERE run_id = ? AND story_id = ? AND owner = ?",
                      (LeaseState.ended, run_id, story_id, owner))])

    def release_leases(self, run_id: int, owner: str) -> None:
        """Give back the stories ``owner`` still holds (a stop before they were finished)."""
        self._write([("DELETE FROM leases WHERE run_id = ? AND owner = ? AND state = ?",
                      (run_id, owner, LeaseState.held))])

    def start_session(self, run_id: int, owner: str, alive: Callable[[str], bool]) -> bool:
        """Start (or, at the end, close) a session of the run unless another live process is running it.

        A new session forgets which stories ended, so that those left unscored are tried again
        (as a rerun of a finished command does); joining a running session keeps them, so a
        failure is not tried again by every process. Returns whether the session was reset.
        """
        with self.transaction() as db:
            stamp = time.time()
            others = [r for r in db.execute("SELECT owner, expires_at FROM leases WHERE run_id = ? AND state = ? "
                                            "AND owner != ?", (run_id, LeaseState.held, owner))]
            if any(r["expires_at"] > stamp and alive(r["owner"]) for r in others):
                return False
            db.execute("DELETE FROM leases WHERE run_id = ? AND state = ?", (run_id, LeaseState.ended))
            return True

    # shared budgets (rate limits of all processes using this store) --------------------------------
    def update_budget(self, key: str, update: Callable[[tuple[float, float, float] | None],
                                                       tuple[tuple[float, float, float], T]]) -> T:
        """Read-modify-write the budget row ``key`` (requests, tokens, updated) in one write transaction."""
        with self.transaction() as db:
            row = db.execute("SELECT requests, tokens, updated FROM rate_budget WHERE key = ?", (key,)).fetchone()
            state, result = update(None if row is None else (row[0], row[1], row[2]))
            db.execute("INSERT OR REPLACE INTO rate_budget(key, requests, tokens, updated) VALUES (?, ?, ?, ?)",
                       (key, *state))
        return result

    # shards ---------------------------------------------------------------------------------------
    def record_shard(self, run_id: int, index: int, count: int) -> None:
        self._write([("INSERT OR IGNORE INTO shards(run_id, shard_index, shard_count) VALUES (?, ?, ?)",
                      (run_id, index, count))])

    def shards(self, run_id: int) -> list[tuple[int, int]]:
        self.flush()
        return [(r[0], r[1]) for r in self.db.execute(
            "SELECT shard_index, shard_count FROM shards WHERE run_id = ? ORDER BY shard_index", (run_id,))]

    def finished_stories(self, run_id: int) -> set[str]:
        self.flush()
        rows = self.db.execute("SELECT story_id FROM stories WHERE run_id = ? AND status IN ('done', 'stopped')",
                               (run_id,))
        return {r["story_id"] for r in rows}

    def run_totals(self, run_id: int) -> dict[str, int]:
        """Stories failed and right, questions answered and right, over the StoryTurns recorded so far."""
        self.flush()
        stories = self.db.execute(
            "SELECT COALESCE(SUM(status = 'failed'), 0), COALESCE(SUM(status = 'done' AND correct = 1), 0)"
            " FROM stories WHERE run_id = ?", (run_id,)).fetchone()
        turns = self.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(t.correct = 1), 0) FROM turns t JOIN stories s"
            " ON s.run_id = t.run_id AND s.story_id = t.story_id WHERE t.run_id = ? AND t.response IS NOT NULL",
            (run_id,)).fetchone()
        return {"stories_failed": int(stories[0]), "stories_correct": int(stories[1]), "questions": int(turns[0]),
                "questions_right": int(turns[1])}

    def stories_with_judge_errors(self, run_id: int) -> set[str]:
        """StoryTurns recorded ``done`` with a turn whose judge failed for good (left undecided)."""
        self.flush()
        rows = self.db.execute("SELECT DISTINCT story_id FROM turns WHERE run_id = ? AND response IS NOT NULL "
                               "AND error_kind IS NOT NULL", (run_id,))
        return {r["story_id"] for r in rows}

    def run_failures(self, run_id: int) -> list[FailureKind]:
        """The run's final failures as they stand now, per kind, with the first message of each kind.

        A model call that failed for good leaves a turn with an error and no response; a judge
        that failed for good leaves an answered turn with an ``error_kind`` (its message is in
        the call log). Failures a later rerun fixed are not counted: turn rows are replaced.
        """
        self.flush()
        rows = self.db.execute(
            "SELECT t.story_id, t.turn, t.response, t.error_kind, t.error,"
            " (SELECT c.error FROM call_log c WHERE c.run_id = t.run_id AND c.story_id = t.story_id"
            "  AND c.turn = t.turn AND c.kind = 'judge' AND c.error IS NOT NULL ORDER BY c.id DESC LIMIT 1)"
            " AS judge_error"
            " FROM turns t JOIN stories s ON s.run_id = t.run_id AND s.story_id = t.story_id"
            " WHERE t.run_id = ? AND t.error_kind IS NOT NULL ORDER BY s.position, t.turn", (run_id,))
        kinds: dict[str, FailureKind] = {}
        for r in rows:
            what = "model" if r["response"] is None else "judge"
            message = (r["error"] if what == "model" else r["judge_error"]) or r["error_kind"]
            known = kinds.get(r["error_kind"])
            if known is None:
                kinds[r["error_kind"]] = FailureKind(r["error_kind"], what, 1, r["story_id"], r["turn"], message)
            else:
                kinds[r["error_kind"]] = FailureKind(known.kind, known.what, known.turns + 1, known.first_story,
                                                     known.first_turn, known.first_message)
        return list(kinds.values())

    def turn_rows(self, run_id: int) -> list[TurnRecord]:
        """The run's turns of finished or ended stories, in story order then turn order."""
        self.flush()
        cursor = self.db.cursor()
        cursor.row_factory = None  # plain tuples, in the record's field order
        columns = ", ".join(f"t.{name}" for name in TURN_COLUMNS)
        with self._located():
            return [TurnRecord.from_values(values) for values in cursor.execute(
                f"SELECT {columns} FROM turns t JOIN stories s ON s.run_id = t.run_id AND s.story_id = t.story_id "
                "WHERE t.run_id = ? ORDER BY s.position, t.turn", (run_id,))]

    def story_rows(self, run_id: int) -> list[StoryRecord]:
        """The run's stories in their dataset order."""
        self.flush()
        cursor = self.db.cursor()
        cursor.row_factory = None
        with self._located():
            return [StoryRecord.from_values(values) for values in cursor.execute(
                f"SELECT {', '.join(STORY_COLUMNS)} FROM stories WHERE run_id = ? ORDER BY position", (run_id,))]

    def set_story_count(self, run_id: int, count: int) -> None:
        """A run's number of StoryTurns (a human run grows as more people finish)."""
        self._write([("UPDATE runs SET story_count = ? WHERE id = ?", (count, run_id))])

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


def _insert(table: str, row: Mapping[str, object]) -> Statement:
    """An INSERT OR REPLACE of ``row`` (column names come from code, never from data)."""
    return (f"INSERT OR REPLACE INTO {table}({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
            tuple(row.values()))


@functools.cache
def _schema_columns() -> dict[str, tuple[str, ...]]:
    """Each table of :data:`SCHEMA` and its columns, read from the schema itself (built in memory once)."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(SCHEMA)
        return {table: tuple(row[1] for row in db.execute(f"PRAGMA table_info({table})")) for table in table_names(db)}
    finally:
        db.close()


def _run(row: sqlite3.Row, path: Path) -> RunRecord:
    """The run of ``row``; settings that cannot be read name the file, the run and the field."""
    try:
        stored = json.loads(row["settings_json"])
        if not isinstance(stored, dict):
            raise RunSettingsError(f"run {row['name']!r}: stored settings are not a JSON object")
        settings = RunSettings.from_stored(stored, run=row["name"])
    except RunSettingsError as error:
        raise RunSettingsError(f"{path}: {error}") from None
    except ValueError as error:
        raise RunSettingsError(f"{path}: run {row['name']!r}: stored settings are not JSON ({error})") from None
    try:
        status = RunStatus(row["status"])
    except ValueError:
        raise StoreError(f"{path}: run {row['name']!r}: stored status {row['status']!r} is not one of "
                         f"{', '.join(s.value for s in RunStatus)}") from None
    return RunRecord(
        id=row["id"], name=row["name"], model=row["model"], judge=row["judge"],
        settings=settings,
        config_hash=row["config_hash"], dataset_name=row["dataset_name"],
        dataset_hash=row["dataset_hash"], package_version=row["package_version"], status=status,
        story_count=row["story_count"], started_at=row["started_at"], finished_at=row["finished_at"],
    )
