"""One retry policy for every remote provider (the SDKs' own retries are switched off with
``max_retries=0`` so that this is the only one):

* every attempt runs under a per-call timeout (option ``timeout``, seconds, default 120);
* 408, 409, 425, 429, 5xx (including 529 "overloaded"), timeouts, connection errors (a body
  cut short of its ``Content-Length`` included) and a body that is not valid JSON are
  retried with exponential backoff and full jitter (``backoff_base`` * 2**n, capped at
  ``backoff_max``), honouring ``Retry-After`` (seconds or an HTTP date) and
  ``retry-after-ms`` when the server sends them;
* at most ``max_attempts`` attempts (default 6);
* anything else (400, 401, 403, 404, 422, a content refusal or safety block) fails at once.

What counts as which failure is :mod:`commet.models.errors`; rate limits are
:mod:`commet.models.ratelimit`.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

from commet.models.base import ModelCallError, ModelSpecError
from commet.models.errors import classify
from commet.models.options import option_float, option_int
from commet.models.ratelimit import RateLimiter

log = logging.getLogger(__name__)
_timeout_scope = getattr(asyncio, "timeout", None)  # Python 3.11+

T = TypeVar("T")


@dataclass(frozen=True)
class RetryNotice:
    """An attempt that failed and will be tried again: whose (``what``, the model's spec), why, and when."""

    what: str
    error: ModelCallError
    attempt: int
    max_attempts: int
    delay: float


#: Who hears of each attempt that failed and will be retried: the engine sets it for its own tasks (a context
#: variable, so concurrent runs and the tasks they start each hear only their own), to say at once why calls fail.
RETRY_OBSERVER: ContextVar[Callable[[RetryNotice], None] | None] = ContextVar("commet_retry_observer", default=None)


class _Deadlines:
    """The attempts of one policy under its timeout on one event loop, and one timer: at the earliest deadline.

    ``asyncio.timeout(delay)`` gives every attempt a timer of its own, pushed on the loop's heap and cancelled
    again, for an attempt that nearly always ends long before it (4 % of the engine's work per call,
    bench/bench_engine_instructions.py). The attempts of a policy all wait the same time, so their deadlines come
    in the order they start: each attempt enters an unarmed ``asyncio.Timeout`` and is noted here, and the one
    timer arms the scopes whose deadline has come (``Timeout.reschedule``). What a timeout then does to the
    attempt's task (the cancellation, the ``TimeoutError``, a cancellation from outside kept as one) is the
    standard library's.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, seconds: float):
        self.loop = loop
        self.seconds = seconds
        self._scopes: dict[Any, float] = {}  # asyncio.Timeout -> its deadline, oldest first
        self._timer: asyncio.TimerHandle | None = None

    def enter(self, scope: Any) -> None:
        deadline = self.loop.time() + self.seconds
        self._scopes[scope] = deadline
        if self._timer is None:
            self._timer = self.loop.call_at(deadline, self._expire, deadline)

    def leave(self, scope: Any) -> None:
        self._scopes.pop(scope, None)

    def _expire(self, due: float) -> None:
        """The timer's deadline ``due`` has come: arm every scope whose deadline has, and the timer for the next."""
        self._timer = None
        now = max(due, self.loop.time())
        while self._scopes:
            scope, deadline = next(iter(self._scopes.items()))
            if deadline > now:
                self._timer = self.loop.call_at(deadline, self._expire, deadline)
                return
            del self._scopes[scope]
            scope.reschedule(deadline)  # past: the scope cancels its task at the loop's next pass


@dataclass
class RetryPolicy:
    """Timeout + bounded retries with exponential backoff and full jitter."""

    max_attempts: int = 6
    timeout: float | None = 120.0
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    max_retry_after: float = 600.0
    secrets: tuple[str, ...] = ()
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep
    rng: random.Random = field(default_factory=random.Random)
    #: the attempts under way on the loop that last ran one (a run's loop: see :meth:`_deadlines_here`)
    _deadlines: _Deadlines | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def from_options(cls, options: Mapping[str, str], *, secrets: Iterable[str] = ()) -> RetryPolicy:
        max_attempts = option_int(options, "max_attempts", 6) or 1
        if max_attempts < 1:
            raise ModelSpecError("max_attempts must be at least 1")
        timeout = option_float(options, "timeout", 120.0)
        return cls(
            max_attempts=max_attempts,
            timeout=timeout if timeout and timeout > 0 else None,
            backoff_base=option_float(options, "backoff_base", 1.0) or 0.0,
            backoff_max=option_float(options, "backoff_max", 60.0) or 0.0,
            secrets=tuple(s for s in secrets if s),
        )

    def _deadlines_here(self) -> _Deadlines:
        """A :class:`_Deadlines` of the running loop and this timeout: the last one, or a new one. Each keeps its own
        attempts and timer, so the attempts that an earlier one holds (of another loop, in another thread) keep
        theirs."""
        loop = asyncio.get_running_loop()
        deadlines = self._deadlines
        if deadlines is None or deadlines.loop is not loop or deadlines.seconds != self.timeout:
            assert self.timeout is not None
            deadlines = self._deadlines = _Deadlines(loop, self.timeout)
        return deadlines

    def backoff(self, attempt: int) -> float:
        """Full jitter: uniform in [0, min(cap, base * 2**(attempt-1))]."""
        ceiling = min(self.backoff_max, self.backoff_base * (2 ** (attempt - 1)))
        return self.rng.uniform(0.0, ceiling) if ceiling > 0 else 0.0

    async def run(self, call: Callable[[], Awaitable[T]], *, limiter: RateLimiter | None = None,
                  tokens: float = 0.0, what: str = "model call") -> tuple[T, int]:
        """Run ``call`` under the policy; return (result, attempts) or raise ModelCallError."""
        attempt = 0
        while True:
            attempt += 1
            if limiter is not None:
                await limiter.acquire(tokens)
            try:
                if self.timeout is None:
                    result = await call()
                elif _timeout_scope is not None:  # no extra task per call, unlike wait_for
                    deadlines = self._deadlines_here()
                    async with _timeout_scope(None) as scope:  # armed by ``deadlines`` when its time comes
                        deadlines.enter(scope)
                        try:
                            result = await call()
                        finally:
                            deadlines.leave(scope)
                else:  # Python 3.10
                    result = await asyncio.wait_for(call(), self.timeout)
                return result, attempt
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - every failure is classified below
                error, retry_after = classify(exc, self.secrets)
                if isinstance(exc, (asyncio.TimeoutError, TimeoutError)) and self.timeout is not None:
                    error = ModelCallError(f"{what} timed out after {self.timeout:g} s", kind="timeout",
                                           retryable=True)
            if not error.retryable or attempt >= self.max_attempts:
                suffix = f" (after {attempt} attempts)" if attempt > 1 else ""
                raise ModelCallError(f"{what}: {error}{suffix}", kind=error.family, status=error.status,
                                     retryable=error.retryable, attempts=attempt) from None
            delay = self.backoff(attempt)
            if retry_after is not None:
                delay = min(max(retry_after, 0.0), self.max_retry_after)
            log.info("%s failed (%s), attempt %d/%d, retrying in %.2f s", what, error.kind, attempt,
                     self.max_attempts, delay)
            observer = RETRY_OBSERVER.get()
            if observer is not None:
                observer(RetryNotice(what, error, attempt, self.max_attempts, delay))
            await self.sleep(delay)
