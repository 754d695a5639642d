"""The results store (SQLite, WAL): runs, calls, judgments, turns and stories."""

from commet.store.errors import StoreError
from commet.store.run_ids import RunLookupError, short_ids
from commet.store.sqlite import FailureKind, RunRecord, RunStatus, Store

__all__ = ["FailureKind", "RunLookupError", "RunRecord", "RunStatus", "Store", "StoreError", "short_ids"]
