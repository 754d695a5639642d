"""Leases and shared budgets: which process runs which story and makes which call, and the rate limits
that every process using one store shares.

Several processes may run one run against one store (``commet eval --workers``, or the same
command started twice): a story is claimed under a lease before it runs, a call before it is
made, and a lease names its owner and expires unless renewed, so the stories of a process that
died are taken over. Every check-and-take is one ``BEGIN IMMEDIATE`` transaction, which is what
makes two processes never take the same story. Inside one process, :meth:`StoreLeases.single_flight`
keeps two tasks from making the same call at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import TypeVar

from commet.store.commits import StoreCommits

T = TypeVar("T")
#: story claims read their candidates' rows this many at a time (see ``Store.claim_stories``)
CLAIM_WINDOW = 64


class LeaseState(str, Enum):
    """A story's lease in the ``leases`` table (stored as its value)."""

    #: being run by its owner
    held = "held"
    #: ended unfinished (failed) in the current session: no other process of the session takes it again
    ended = "ended"



class StoreLeases(StoreCommits):
    """The leases of stories and calls, sessions of a run, and shared rate budgets (a part of ``Store``)."""

    def __init__(self, path: Path):
        super().__init__(path)
        #: the keys of the calls running, each with the future its waiters wait on (None until one waits)
        self._in_flight: dict[str, asyncio.Future[None] | None] = {}

    def single_flight(self, key: str) -> SingleFlight:
        """Inside: no other call with this cache key runs in this process; a second one waits.

        Runs at once in one process (sweep cells, stories with equal turns) ask the same
        request at the same moment; the second waits for the first and then finds its answer
        in the cache (or, if the first failed, makes the call itself).
        """
        return SingleFlight(self._in_flight, key)

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


class SingleFlight:
    """:meth:`StoreLeases.single_flight`: a plain context manager, as every model and judge call enters one. The
    future a second call waits on is made by that call: most calls meet no other with their key."""

    __slots__ = ("_in_flight", "_key")

    def __init__(self, in_flight: dict[str, asyncio.Future[None] | None], key: str):
        self._in_flight = in_flight
        self._key = key

    async def __aenter__(self) -> None:
        in_flight, key = self._in_flight, self._key
        while key in in_flight:
            waiting = in_flight[key]
            if waiting is None:
                waiting = in_flight[key] = asyncio.get_running_loop().create_future()
            await asyncio.shield(waiting)
        in_flight[key] = None

    async def __aexit__(self, *exc_info: object) -> None:
        done = self._in_flight.pop(self._key)
        if done is not None:
            done.set_result(None)
