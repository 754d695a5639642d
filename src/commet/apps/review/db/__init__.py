"""The review store: one SQLite file with reviewers, items, edit history, picture checks and versions.

Nothing is ever overwritten: text edits, picture checks, error filings, picture versions and
decisions are appended with their author and time; the "current" state is derived. An
item's ``revision`` grows with every text edit and every change of a current picture.

Review runs as the paper ran it (section 3.2.2): one expert reviews and corrects an item
first; once a revision has an accept, two more reviewers review it independently (the app
hides other reviewers' verdicts from a reviewer until they have given theirs). An item is
*final* when three reviewers accept the same revision of its text and pictures and nobody
rejects it; any edit or new picture starts a new revision, so it reopens the item.

Every write a reviewer makes from a page names the revision that page showed; a write on a
stale revision is refused (:class:`StaleRevision`, with the changes made since) in the same
transaction that would have written it, so no update is ever lost. An accept carries the
reviewer's five Table 5 checks of every current picture: all must be given and passed, and
no picture may be marked for regeneration.

``ReviewDB`` is assembled from one part per concern, each a module of this package: the file and
its connections (``connection``), reviewers (``users``), items and their revisions (``items``),
pictures and their checks (``pictures``), filings, decisions and statuses (``decisions``), the
overview and Table 6 (``statistics``) and the exports (``exports``); the vocabulary and records
are in ``records``. Mixins rather than parts held by the store, as for the results store: every
part reads and writes the same file under the same revision rule, callers (the app, the CLI,
tests) call ``ReviewDB`` methods directly, and a decision both stores picture checks and reads
statuses, which parts held apart would have to pass to one another.
"""

from __future__ import annotations

from commet.apps.review.db.connection import EDITS_SINCE, SCHEMA, SQLITE_MAX_INT, now
from commet.apps.review.db.exports import ReviewExports
from commet.apps.review.db.records import (
    CRITERIA,
    CRITERION_KEYS,
    ERROR_CATEGORIES,
    IMAGE_ERRORS,
    REVIEWERS_FOR_CONSENSUS,
    STATUS_KINDS,
    TEXT_ERRORS,
    AcceptRefused,
    CheckInput,
    ItemStatus,
    OverviewRow,
    Picture,
    ReviewError,
    StaleRevision,
    Table6Column,
    UnknownRevision,
    check_password,
    check_user_name,
    open_for_me,
)
from commet.apps.review.db.users import ReviewUsers

__all__ = [
    "CRITERIA", "CRITERION_KEYS", "EDITS_SINCE", "ERROR_CATEGORIES", "IMAGE_ERRORS", "REVIEWERS_FOR_CONSENSUS",
    "SCHEMA", "SQLITE_MAX_INT", "STATUS_KINDS", "TEXT_ERRORS", "AcceptRefused", "CheckInput", "ItemStatus",
    "OverviewRow", "Picture", "ReviewDB", "ReviewError", "StaleRevision", "Table6Column", "UnknownRevision",
    "check_password",
    "check_user_name", "now", "open_for_me",
]


class ReviewDB(ReviewExports, ReviewUsers):
    """All reads and writes of the review store (one short connection per call; safe across threads)."""
