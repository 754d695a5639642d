"""How the results store writes: one connection, write transactions, and commit windows.

Every part of :class:`~commet.store.sqlite.Store` stands on :class:`StoreCommits`: the queries
commit what is pending before they read (:meth:`StoreCommits.flush`), the writes and the leases
hand their statements to :meth:`StoreCommits._write`, and read-modify-write steps run inside
:meth:`StoreCommits.transaction`. Each call is committed with its log row as soon as it returns
or, while the engine runs (:meth:`StoreCommits.write_batches`), together with the other writes
of the same commit window (``COMMIT_WINDOW_S``, 10 ms): a crash loses at most the calls in flight
and those of the last window.

Per call the store does as little as it can on the event loop's path: the rows of one window go
in as one ``executemany`` per statement, with one timestamp, in one transaction.
"""

from __future__ import annotations

import asyncio
import logging
import re
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from commet.sources.inputs import valid_text
from commet.store.errors import StoreError, StoreFullError, is_disk_full
from commet.store.schema import now

#: inside ``write_batches``: the longest a write waits for its commit (one commit per window, not per write)
COMMIT_WINDOW_S = 0.01
#: inside ``write_batches``: how often a thread copies the write-ahead log into the file (see there)
CHECKPOINT_INTERVAL_S = 0.5
#: SQLite's own ``wal_autocheckpoint`` (pages), set again when a batch block ends
DEFAULT_AUTOCHECKPOINT_PAGES = 1000
log = logging.getLogger(__name__)
Statement = tuple[str, tuple[object, ...]]
_TABLE = re.compile(r"\b(?:INTO|UPDATE)\s+(\w+)")


def grouped(statements: list[Statement]) -> dict[str, list[tuple[object, ...]]] | None:
    """The statements' parameters by SQL text, or None when some table is written by two different texts."""
    groups: dict[str, list[tuple[object, ...]]] = {}
    table_sql: dict[str, str] = {}
    for sql, params in statements:
        table = _written_table(sql)
        if table is None or table_sql.setdefault(table, sql) != sql:
            return None
        groups.setdefault(sql, []).append(params)
    return groups


@lru_cache(maxsize=256)
def _written_table(sql: str) -> str | None:
    """The table an INSERT or UPDATE writes (the store's statements are a few texts, each looked at once)."""
    match = _TABLE.search(sql)
    return None if match is None else match[1]


def upsert(table: str, row: Mapping[str, object]) -> Statement:
    """An INSERT OR REPLACE of ``row`` (column names come from code, never from data)."""
    return _upsert_sql(table, tuple(row)), tuple(row.values())


@lru_cache(maxsize=256)
def _upsert_sql(table: str, columns: tuple[str, ...]) -> str:
    return f"INSERT OR REPLACE INTO {table}({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


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


class StoreCommits:
    """The connection of a store and how its writes reach the file (the base of every part of ``Store``).

    A subclass opens ``db`` (a connection in autocommit mode, ``isolation_level=None``) before it writes.
    """

    db: sqlite3.Connection

    def __init__(self, path: Path):
        self.path = path
        self._batching = 0
        self._checkpoints: _Checkpointer | None = None  # while write batches are on
        self._pending: list[Statement] = []
        self._pending_rows: dict[tuple[str, str], Mapping[str, object]] = {}  # (table, key) -> row, read back
        self._flush_timer: asyncio.TimerHandle | None = None  # the end of the commit window under way
        self._closed = False
        self._flush_error: BaseException | None = None
        self._stamp: str | None = None  # the timestamp of the writes waiting for the next commit

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
        if self._flush_timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self.flush()
                return
            self._flush_timer = loop.call_later(COMMIT_WINDOW_S, self._flush_soon)

    def _flush_soon(self) -> None:
        self._flush_timer = None
        if self._closed:  # (a write scheduled by a task that ended after the store was closed)
            return
        try:
            self.flush()
        except StoreFullError:  # raised by the next write or flush, and said there once
            log.debug("could not commit %d pending writes to %s: the disk is full", len(self._pending), self.path)
        except Exception as exc:  # noqa: BLE001 - kept and raised by the next write or flush
            log.error("could not commit %d pending writes to %s: %s", len(self._pending), self.path, exc)

    def flush(self) -> None:
        """Commit the pending writes now (raises what the commit raises; the rows stay pending).

        A window under way ends here: the next write opens a new one. (Its timer left running, each
        commit made before a window's end, by a query or a transaction, added one more timer for
        good: with a 50 ms window, most of the bench's commits came within 12 ms of each other.)
        """
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
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
        groups = grouped(statements)
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
        """One write transaction (``BEGIN IMMEDIATE``: the file's write lock from its start), after the
        pending writes; writes made inside commit or roll back with it."""
        self.flush()
        with self._begin_commit():
            yield self.db
