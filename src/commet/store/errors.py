"""The store's errors: a file CoMMET cannot read as its results store (:class:`StoreError`), and a store that
cannot be written because its disk is full (:class:`StoreFullError`)."""

from __future__ import annotations

from pathlib import Path

from commet.errors import CommetError


class StoreError(CommetError, ValueError):
    """A results file that is not a CoMMET store, comes from a newer version, or holds damaged rows.

    The message names the file (and the run and field where one is to blame); commands print it
    as one line and exit 2.
    """


class StoreFullError(CommetError):
    """The results store could not be written because its disk (or the user's quota) is full.

    Not a :class:`StoreError`: the file is fine and nothing committed is lost; the run resumes once
    there is space. The message names the file and the free space left; commands print it as one
    line and exit with their own code (``commet`` exit code 5, docs/cli.md).
    """

    def __init__(self, path: Path):
        self.path = path
        self.free = free_bytes(path)
        super().__init__(f"{path}: cannot write the results store: the disk is full ({free_space(path)})")

    def __reduce__(self) -> tuple[type[StoreFullError], tuple[Path]]:  # sent from a worker process to its parent
        return StoreFullError, (self.path,)


def free_bytes(path: Path) -> int | None:
    """Bytes free to this user on the file system of ``path`` (None when it cannot be told)."""
    import shutil

    for folder in (path, *path.parents):
        try:
            return shutil.disk_usage(folder).free
        except OSError:
            continue
    return None


def free_space(path: Path) -> str:
    """The free space of ``path``'s file system in words: "12.0 KiB free on its file system"."""
    count = free_bytes(path)
    if count is None:
        return "free space unknown"
    amount = next((f"{count / size:.1f} {unit}" for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20),
                                                                   ("KiB", 1 << 10)) if count >= size),
                  f"{count} bytes")
    return f"{amount} free on its file system"


def is_disk_full(error: BaseException) -> bool:
    """Whether an SQLite or OS error says the disk (or quota) is full."""
    import errno
    import sqlite3

    if isinstance(error, sqlite3.OperationalError):
        full = getattr(sqlite3, "SQLITE_FULL", 13)  # (the constant is Python 3.11's)
        return getattr(error, "sqlite_errorcode", None) == full or "database or disk is full" in str(error)
    return isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT)


def check_table_shape(db: object, table: str, columns: tuple[str, ...]) -> None:
    """A :class:`StoreError` naming ``table`` and what to do when the store's table lacks ``columns`` (another
    program's or version's table of that name); nothing when the table is missing or has them all.

    Asked before a table CoMMET added later (labels, calibration samples) is read or written, so a store
    whose table has another shape is one line, never a traceback from SQLite."""
    import sqlite3

    assert isinstance(db, sqlite3.Connection)
    try:
        present = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
    except sqlite3.Error as exc:
        raise StoreError(f"the results store's {table} table cannot be read (SQLite: {exc})") from None
    missing = [column for column in columns if column not in present]
    if present and missing:
        raise StoreError(f"the results store's {table} table has another shape (no column {', '.join(missing)}; it "
                         f"has {', '.join(sorted(present))}): it was not written by this CoMMET; rename it "
                         f"(sqlite3 FILE 'ALTER TABLE {table} RENAME TO {table}_old') and run the command again")
