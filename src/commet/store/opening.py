"""Opening a results store to read it only: on read-only media, and while another process writes.

Why not the writer's way: opening for writing checks and creates the schema in a write
transaction, which waits (up to 30 s) for any process that holds the write lock, and fails on a
read-only disk. A reader needs neither: in WAL mode it reads beside a writer without waiting. The
connection is an ordinary one made ``query_only`` (so that, the last one out, it tidies the
write-ahead log away as a writer would; a ``mode=ro`` connection leaves the ``-wal`` and ``-shm``
files behind); where the file cannot be opened so, ``mode=ro``. On read-only media SQLite cannot
create the store's shared-memory file, so the store is opened as immutable there (nothing can be
writing it); a write-ahead log left behind by a killed writer cannot be read then, which is said
in a warning.
Tables a later release of the schema added (an older store lacks them) are stood in for by empty
temporary tables, so queries find them without anything being written to the file.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
from pathlib import Path
from urllib.parse import quote

log = logging.getLogger(__name__)
#: a ``CREATE TABLE IF NOT EXISTS name (...)`` statement of a schema script
_CREATE_TABLE = re.compile(r"CREATE TABLE IF NOT EXISTS (\w+)")


def connect_read_only(path: Path, *, busy_timeout_s: float) -> sqlite3.Connection:
    """A connection that only reads ``path`` (``query_only``); raises :class:`sqlite3.Error` for what cannot be
    opened."""
    uri = f"file:{quote(str(path.resolve()))}"
    last: sqlite3.OperationalError | None = None
    for query in ("?mode=rw", "?mode=ro"):
        db = sqlite3.connect(uri + query, uri=True, isolation_level=None, check_same_thread=False,
                             timeout=busy_timeout_s)
        try:
            db.execute("PRAGMA query_only=ON")
            db.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()  # the first read opens the file for real
            return db
        except sqlite3.OperationalError as error:  # cannot be opened this way (no permission, read-only media)
            db.close()
            last = error
        except sqlite3.Error:
            db.close()
            raise
    if os.access(path.parent, os.W_OK) and last is not None:  # not read-only media: the error is the answer
        raise last
    wal = path.with_name(path.name + "-wal")
    if wal.is_file() and wal.stat().st_size > 0:
        log.warning("%s: on a read-only disk its write-ahead log (%s) cannot be read; the last writes of the run "
                    "that left it may be missing", path, wal.name)
    db = sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA query_only=ON")
    return db


def stand_in_for_missing_tables(db: sqlite3.Connection, *schemas: str) -> list[str]:
    """Empty temporary tables for the tables of ``schemas`` the file lacks (an older store); their names."""
    have = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    have |= {row[0] for row in db.execute("SELECT name FROM sqlite_temp_master WHERE type = 'table'")}
    missing = [(table.group(1), statement) for schema in schemas for statement in filter(str.strip, schema.split(";"))
               if (table := _CREATE_TABLE.search(statement)) is not None and table.group(1) not in have]
    if missing:
        db.execute("PRAGMA query_only=OFF")  # temporary tables only: the file is not written
        try:
            for _, statement in missing:
                db.execute(statement.replace("CREATE TABLE", "CREATE TEMP TABLE", 1))
        finally:
            db.execute("PRAGMA query_only=ON")
    return [table for table, _ in missing]
