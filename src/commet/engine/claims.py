"""Stories claimed in the store, so that any number of processes split one run without repeating a call.

Each process (``commet eval`` run twice on one run and store, or the workers of ``--workers``)
takes the stories it runs by writing a lease row in the same transaction that checks there is
none (:meth:`commet.store.sqlite.Store.claim_stories`). A lease names its owner
(``host/pid/nonce``) and expires ``ttl`` seconds after the owner last renewed it; a lease whose
owner is dead (same host, no such process) or expired is taken over, so a killed process's
stories are finished by the others, and a rerun started at once does not wait for the expiry.
When a process has no claimable story left it waits while other live processes hold the
remaining ones (they may die), and returns once every story of its list is finished or ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import socket
import uuid
from collections import deque
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from commet.format.model import StoryTurn
from commet.judges.base import Judge
from commet.models.base import Model
from commet.models.ratelimit import RateLimiter
from commet.store.errors import StoreFullError
from commet.store.sqlite import Store

log = logging.getLogger(__name__)

#: seconds a lease lasts without renewal (renewed every third of that)
LEASE_TTL_S = 30.0
#: seconds between looks at the store while other processes hold the remaining stories
WAIT_POLL_S = 0.5
#: seconds between looks at the store while another process makes the same call
CALL_POLL_S = 0.02


def new_owner() -> str:
    """A lease owner id: host, process id and a nonce (two engines in one process differ)."""
    return f"{socket.gethostname()}/{os.getpid()}/{uuid.uuid4().hex[:8]}"


def owner_alive(owner: str) -> bool:
    """False only when the owner surely is dead: it ran on this host and its process is gone."""
    host, _, rest = owner.partition("/")
    pid_text = rest.partition("/")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return True  # another machine: only the expiry tells
    pid = int(pid_text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a killed process not yet reaped by its parent is a zombie: dead
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return True


class StoryClaims:
    """Hands this process's story slots the next story it could claim, in the order of ``todo``."""

    def __init__(self, store: Store, run_id: int, todo: list[tuple[int, StoryTurn]], *, chunk: int,
                 ttl: float = LEASE_TTL_S, poll: float = WAIT_POLL_S, crowded: bool = False):
        self.store = store
        self.run_id = run_id
        self.owner = new_owner()
        self.ttl = ttl
        self.poll = poll
        self.chunk = max(1, chunk)
        self._by_id = {st.id: (position, st) for position, st in todo}
        self._candidates = [st.id for _, st in todo]  # in the order given (the engine's plan)
        self._ready: deque[str] = deque()
        self._lock = asyncio.Lock()
        self.stopped = False
        #: other processes run this run too: calls are then leased one by one (see :meth:`one_call`)
        self.crowded = crowded

    @contextlib.asynccontextmanager
    async def one_call(self, key: str) -> AsyncIterator[None]:
        """Inside: no other process makes call ``key`` (the caller then looks in the cache first).

        Only while other processes run the run (``crowded``): then equal requests of two
        processes (equal StoryTurns, equal first turns) are made once, at the price of one write
        transaction per call; a process alone skips it.
        """
        if not self.crowded:
            yield
            return
        while not self.store.lease_call(key, self.owner, ttl=self.ttl, alive=owner_alive):
            await asyncio.sleep(CALL_POLL_S)
        try:
            yield
        finally:
            self.store.end_call_lease(key)

    async def next(self) -> tuple[int, StoryTurn] | None:
        """The next story claimed for this process, or None when nothing is left to run."""
        async with self._lock:
            while not self.stopped:
                if self._ready:
                    return self._by_id[self._ready.popleft()]
                if not self._candidates:
                    return None
                claimed, gone, crowded = self.store.claim_stories(
                    self.run_id, self._candidates, owner=self.owner, ttl=self.ttl, limit=self.chunk,
                    alive=owner_alive)
                self.crowded = self.crowded or crowded
                taken = gone | set(claimed)
                self._candidates = [story_id for story_id in self._candidates if story_id not in taken]
                self._ready.extend(claimed)
                if not claimed and self._candidates:  # all held by other live processes: they may die
                    await asyncio.sleep(self.poll)
            return None

    def upcoming(self, count: int) -> list[StoryTurn]:
        """The next ``count`` stories :meth:`next` would hand out, as far as this process knows (another
        process may still claim some of those not yet claimed here)."""
        ids = [*itertools.islice(self._ready, count)]
        ids += self._candidates[:count - len(ids)]
        return [self._by_id[story_id][1] for story_id in ids]

    def ended(self, story_id: str) -> None:
        self.store.end_lease(self.run_id, story_id, self.owner)

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(self.ttl / 3)
            self.store.renew_leases(self.run_id, self.owner, self.ttl)

    @contextmanager
    def held(self) -> Iterator[None]:
        """Inside: leases are renewed; on the way out the stories still held are given back."""
        self.store.start_session(self.run_id, self.owner, owner_alive)
        renewer = asyncio.get_running_loop().create_task(self._renew())
        try:
            yield
        finally:
            renewer.cancel()
            self.stopped = True
            self._ready.clear()
            try:
                self.store.release_leases(self.run_id, self.owner)
                self.store.start_session(self.run_id, self.owner, owner_alive)  # the last one out clears the rows
            except StoreFullError:  # said once by whoever raises it
                log.debug("could not give back the leases of %s: the disk is full", self.owner)
            except Exception as exc:  # noqa: BLE001 - the leases then expire on their own
                log.warning("could not give back the leases of %s: %s", self.owner, exc)


@dataclass(frozen=True)
class Shard:
    """``--shard INDEX/COUNT``: a deterministic share of a run's StoryTurns (INDEX from 0).

    The StoryTurns are dealt like cards, longest first (ties by position), so every shard
    gets about the same number of turns; the same dataset always gives the same shares.
    """

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ValueError(f"shard {self.index}/{self.count}: need 0 <= INDEX < COUNT")

    @classmethod
    def parse(cls, text: str) -> Shard:
        index, sep, count = text.partition("/")
        if not sep or not index.strip().isdigit() or not count.strip().isdigit():
            raise ValueError(f"shard {text!r} must look like INDEX/COUNT, e.g. 0/3")
        return cls(int(index), int(count))

    def share(self, stories: list[tuple[int, StoryTurn]]) -> list[tuple[int, StoryTurn]]:
        dealt = sorted(stories, key=lambda item: (-len(item[1].turns), item[0]))[self.index::self.count]
        return sorted(dealt, key=lambda item: item[0])


def _limiters(thing: object, seen: set[int] | None = None) -> Iterator[RateLimiter]:
    """The rate limiters of a model or judge (LLM judges, cascades and panels hold models)."""
    seen = set() if seen is None else seen
    if id(thing) in seen:
        return
    seen.add(id(thing))
    limiter = getattr(thing, "limiter", None)
    if isinstance(limiter, RateLimiter):
        yield limiter
    for name in ("model", "fallback", "rules"):
        inner = getattr(thing, name, None)
        if isinstance(inner, (Model, Judge)):
            yield from _limiters(inner, seen)
    for member in getattr(thing, "members", None) or ():
        yield from _limiters(member, seen)


def share_rate_budgets(store: Store, *things: Model | Judge) -> None:
    """Keep the ``rpm``/``tpm`` budgets of these models and judges in the store, shared by every
    process that uses it (workers, a second ``commet eval``, sweep cells)."""
    for thing in things:
        for limiter in _limiters(thing):
            limiter.share(store.update_budget)
