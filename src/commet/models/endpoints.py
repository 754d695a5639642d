"""Several endpoints behind one model: data-parallel replicas (vLLM, SGLang) or several keys' quotas.

``openai:MODEL?base_url=http://a:8000/v1,http://b:8000/v1`` (a comma-separated list) sends
each request to the healthy endpoint with the fewest requests in flight (ties in turn). An
endpoint that fails at the endpoint level (connection refused or cut, a timeout, a 5xx) twice
in a row is taken out for a cool-down (2 s, doubling up to 60 s) and then tried again; a
request that failed there moves on to another healthy endpoint at once, within the same
attempt. Requests and replies are the same whichever endpoint answers, so results are those
of a single endpoint (replicas must serve the same model).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Container
from dataclasses import dataclass
from typing import Generic, TypeVar

from commet.models.base import ModelSpecError

log = logging.getLogger(__name__)
T = TypeVar("T")

#: consecutive endpoint failures that take an endpoint out
FAILURES_TO_EJECT = 2
COOLDOWN_FIRST_S = 2.0
COOLDOWN_MAX_S = 60.0


def split_base_urls(raw: str | None) -> list[str]:
    """The endpoints a ``base_url`` option names (comma-separated), in order, without repeats."""
    if not raw:
        return []
    urls = list(dict.fromkeys(url.strip() for url in raw.split(",") if url.strip()))
    if not urls:
        raise ModelSpecError(f"base_url {raw!r} names no endpoint")
    return urls


@dataclass
class Endpoint(Generic[T]):
    url: str
    client: T
    in_flight: int = 0
    failures: int = 0  # consecutive endpoint-level failures
    out_until: float = 0.0
    cooldown: float = COOLDOWN_FIRST_S
    sent: int = 0  # requests sent here (a figure for tests and logs)


class EndpointPool(Generic[T]):
    """Picks an endpoint per request by least outstanding work; takes failing ones out for a while."""

    def __init__(self, endpoints: list[Endpoint[T]], *, clock: Callable[[], float] = time.monotonic):
        if not endpoints:
            raise ValueError("an endpoint pool needs at least one endpoint")
        self.endpoints = endpoints
        self._clock = clock
        self._turn = 0

    def healthy(self, exclude: Container[str] = frozenset()) -> list[Endpoint[T]]:
        now = self._clock()
        return [e for e in self.endpoints if e.out_until <= now and e.url not in exclude]

    def pick(self, exclude: Container[str] = frozenset()) -> Endpoint[T]:
        """The healthy endpoint with the fewest requests in flight; when none is healthy, the one back soonest."""
        if len(self.endpoints) == 1:  # the only one: never taken out (:meth:`done`), whatever was tried
            chosen = self.endpoints[0]
        else:
            candidates = self.healthy(exclude)
            if not candidates:
                rest = [e for e in self.endpoints if e.url not in exclude] or self.endpoints
                candidates = [min(rest, key=lambda e: e.out_until)]
            self._turn = (self._turn + 1) % len(self.endpoints)
            order = {e.url: (i - self._turn) % len(self.endpoints) for i, e in enumerate(self.endpoints)}
            chosen = min(candidates, key=lambda e: (e.in_flight, order[e.url]))
        chosen.in_flight += 1
        chosen.sent += 1
        return chosen

    def done(self, endpoint: Endpoint[T], *, failed: bool) -> None:
        """The request sent to ``endpoint`` ended: an endpoint-level failure, or an answer of any kind."""
        endpoint.in_flight -= 1
        if len(self.endpoints) == 1:
            return  # nowhere else to go: the retry policy alone decides
        if not failed:
            endpoint.failures = 0
            endpoint.cooldown = COOLDOWN_FIRST_S
            return
        endpoint.failures += 1
        if endpoint.failures >= FAILURES_TO_EJECT and endpoint.out_until <= self._clock():
            endpoint.out_until = self._clock() + endpoint.cooldown
            log.info("endpoint %s taken out for %.0f s after %d failures", endpoint.url, endpoint.cooldown,
                        endpoint.failures)
            endpoint.cooldown = min(COOLDOWN_MAX_S, endpoint.cooldown * 2)
