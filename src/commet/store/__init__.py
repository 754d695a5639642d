"""The results store (SQLite, WAL): runs, calls, judgments, turns and stories."""

from commet.store.sqlite import RunRecord, Store

__all__ = ["RunRecord", "Store"]
