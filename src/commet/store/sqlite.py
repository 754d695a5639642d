"""The results store: one SQLite file (WAL) holding runs, every call, every judgment, every turn.

:class:`Store` is the one object every caller holds (the engine, re-judging, reports, exports,
the apps). It opens and checks the file here and is assembled from one part per concern, each
in its own module:

* :mod:`commet.store.commits`: the connection, write transactions and commit windows (the base);
* :mod:`commet.store.queries`: the read side (runs, turn and story rows, totals, failures, spend);
* :mod:`commet.store.writes`: the write side (runs, the call and judgment caches, turns, stories);
* :mod:`commet.store.leases`: leases of stories and calls, sessions, shared rate budgets.

Why mixins and not parts held by the store: every part works on one connection and one window
of pending writes (a query commits what is pending first, a lease's end is batched with the
story row it ends, a cache read sees the rows still waiting for their commit), so the parts
are views of one object rather than objects of their own; composing them would mean either
forwarding each of some forty methods or rewriting every caller (``store.writes.record_turn``),
and would add a hop to the per-call path the engine runs thousands of times a second.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from commet.store.commits import COMMIT_WINDOW_S
from commet.store.errors import StoreError, StoreFullError, is_disk_full
from commet.store.leases import CLAIM_WINDOW, LeaseState, StoreLeases
from commet.store.opening import connect_read_only, stand_in_for_missing_tables
from commet.store.queries import FailureKind, RunRecord, RunSpend, RunStatus
from commet.store.schema import META_TABLE, SCHEMA, SCHEMA_VERSION, now, schema_columns, table_names
from commet.store.writes import StoreWrites

__all__ = [  # what callers import from here, wherever it is defined
    "BUSY_TIMEOUT_S", "CLAIM_WINDOW", "COMMIT_WINDOW_S", "META_TABLE", "SCHEMA", "SCHEMA_VERSION", "FailureKind",
    "LeaseState", "RunRecord", "RunSpend", "RunStatus", "Store", "now", "table_names",
]

#: how long an opener or writer waits for another process's lock on the file before giving up
BUSY_TIMEOUT_S = 30.0


class Store(StoreWrites, StoreLeases):
    """A SQLite results file. Use one Store per process; writes commit immediately.

    ``read_only``: for commands that only read (report, runs, export, judges, compare): nothing is
    written, not even the schema, so the store reads on read-only media and while another process
    holds a write transaction (:mod:`commet.store.opening`); a missing file is refused.
    """

    def __init__(self, path: str | Path, *, read_only: bool = False):
        super().__init__(Path(path))
        self.read_only = read_only
        if self.path.is_dir():
            raise StoreError(f"{self.path}: is a folder, expected a results file (.sqlite)")
        if self.path.exists() and not self.path.is_file():  # SQLite would block on a FIFO, read /dev/zero
            raise StoreError(f"{self.path}: is not a regular file, expected a results file (.sqlite)")
        if read_only:
            self._open_read_only()
        else:
            self._open_for_writing()

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
        for table, columns in schema_columns().items():
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

