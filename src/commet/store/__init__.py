"""The results store (SQLite, WAL): runs, calls, judgments, turns and stories."""

from commet.store.errors import StoreError
from commet.store.sqlite import FailureKind, RunRecord, RunStatus, Store

__all__ = ["FailureKind", "RunRecord", "RunStatus", "Store", "StoreError"]
