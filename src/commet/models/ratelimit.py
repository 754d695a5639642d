"""Client-side rate limits: an async, FIFO-fair token bucket over requests per minute (``rpm``)
and tokens per minute (``tpm``); its clock and sleep are injectable for tests. The engine can
move its bucket into the results store (:meth:`RateLimiter.share`), so that every process using
that store draws on one budget.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, TypeVar

from commet.models.base import ImagePart, ModelRequest, ModelSpecError
from commet.models.options import option_float


class RateLimiter:
    """Async token buckets for requests/minute and tokens/minute, served first come first served.

    Each bucket refills continuously at ``limit/60`` per second and holds at most
    ``burst_seconds`` worth of budget (at least one request, resp. one request's tokens).
    A request whose token estimate exceeds the bucket waits for a full bucket and then
    overdraws it, so a big request is delayed rather than refused. Waiters queue behind an
    ``asyncio.Lock`` (FIFO), so a large request is never starved by small ones.

    Shared (:meth:`share`): the bucket's levels live in a row named ``key`` that a
    :class:`BudgetUpdate` reads and writes atomically (the results store's, across processes),
    on the wall clock; this process's lock then only orders its own waiters.
    """

    def __init__(self, rpm: float | None = None, tpm: float | None = None, *, burst_seconds: float = 1.0,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep, key: str = ""):
        if rpm is not None and rpm <= 0 or tpm is not None and tpm <= 0:
            raise ModelSpecError("rpm and tpm must be positive")
        self.rpm, self.tpm = rpm, tpm
        self.key = key
        self._shared: BudgetUpdate | None = None
        self._clock, self._sleep = clock, sleep
        self._req_capacity = max(1.0, rpm / 60.0 * burst_seconds) if rpm else 0.0
        self._tok_capacity = max(1.0, tpm / 60.0 * burst_seconds) if tpm else 0.0
        self._req_level = self._req_capacity
        self._tok_level = self._tok_capacity
        self._last = clock()
        self._lock: asyncio.Lock | None = None
        self._lock_loop: asyncio.AbstractEventLoop | None = None

    @property
    def enabled(self) -> bool:
        return bool(self.rpm or self.tpm)

    def share(self, update: BudgetUpdate) -> None:
        """Keep the bucket in the shared row ``self.key`` through ``update`` from now on."""
        self._shared = update

    def _take_shared(self, tokens: float) -> float:
        """One atomic look at the shared bucket: take the budget (0.0) or say how long to wait."""

        def step(state: BudgetState | None) -> tuple[BudgetState, float]:
            now = time.time()
            self._req_level, self._tok_level, self._last = state or (self._req_capacity, self._tok_capacity, now)
            self._refill(now)
            wait = self._wait_needed(tokens)
            if wait <= 1e-9:
                self._req_level -= 1.0 if self.rpm else 0.0
                self._tok_level -= tokens if self.tpm else 0.0
                wait = 0.0
            return (self._req_level, self._tok_level, now), wait

        assert self._shared is not None
        return self._shared(self.key, step)

    def _refill(self, now: float | None = None) -> None:
        now = self._clock() if now is None else now
        elapsed = max(0.0, now - self._last)
        self._last = now
        if self.rpm:
            self._req_level = min(self._req_capacity, self._req_level + elapsed * self.rpm / 60.0)
        if self.tpm:
            self._tok_level = min(self._tok_capacity, self._tok_level + elapsed * self.tpm / 60.0)

    def _wait_needed(self, tokens: float) -> float:
        wait = 0.0
        if self.rpm and self._req_level < 1.0:
            wait = max(wait, (1.0 - self._req_level) * 60.0 / self.rpm)
        if self.tpm:
            need = min(tokens, self._tok_capacity)
            if self._tok_level < need:
                wait = max(wait, (need - self._tok_level) * 60.0 / self.tpm)
        return wait

    def _get_lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock_loop is not loop:
            self._lock, self._lock_loop = asyncio.Lock(), loop
        return self._lock

    async def acquire(self, tokens: float = 0.0) -> None:
        """Wait until one request carrying about ``tokens`` tokens may be sent."""
        if not self.enabled:
            return
        if self._shared is not None:
            async with self._get_lock():
                while (wait := self._take_shared(tokens)) > 0:
                    await self._sleep(wait)
            return
        async with self._get_lock():
            while True:
                self._refill()
                wait = self._wait_needed(tokens)
                if wait <= 1e-9:
                    break
                await self._sleep(wait)
            if self.rpm:
                self._req_level -= 1.0
            if self.tpm:
                self._tok_level -= tokens

    def settle(self, estimated: float, actual: float) -> None:
        """Correct the token bucket once the real usage of a request is known."""
        if not self.tpm:
            return
        if self._shared is not None:
            def give_back(state: BudgetState | None) -> tuple[BudgetState, None]:
                requests, level, when = state or (self._req_capacity, self._tok_capacity, time.time())
                return (requests, min(self._tok_capacity, level + (estimated - actual)), when), None

            self._shared(self.key, give_back)
            return
        self._tok_level = min(self._tok_capacity, self._tok_level + (estimated - actual))


#: A shared bucket's row: requests and tokens left, and the wall time they were counted at.
BudgetState = tuple[float, float, float]
_Result = TypeVar("_Result")


class BudgetUpdate(Protocol):
    """``update(key, step)``: atomically read the bucket row ``key`` (None when new), pass it to ``step``,
    write back the state ``step`` returns, return its result (``Store.update_budget``)."""

    def __call__(self, key: str, step: Callable[[BudgetState | None], tuple[BudgetState, _Result]], /) -> _Result: ...


def estimate_tokens(request: ModelRequest, *, image_tokens: int = 800) -> int:
    """Rough request size for the tokens/minute budget: prompt chars / 4 + images + max_tokens."""
    chars = 0
    images = 0
    for message in request.messages:
        for part in message.parts:
            if isinstance(part, ImagePart):
                images += 1
            else:
                chars += len(part.text)
    return chars // 4 + images * image_tokens + request.settings.max_tokens


def limiter_from_options(options: Mapping[str, str], **kwargs: Any) -> RateLimiter | None:
    """The limiter the ``rpm``/``tpm`` options ask for (``key``: its shared budget's name), or None."""
    rpm = option_float(options, "rpm", None)
    tpm = option_float(options, "tpm", None)
    if not rpm and not tpm:
        return None
    return RateLimiter(rpm or None, tpm or None, **kwargs)
