"""Uniform fault handling and client-side rate limiting for every remote provider.

One policy for all providers (the SDKs' own retries are switched off with
``max_retries=0`` so that this is the only one):

* every attempt runs under a per-call timeout (option ``timeout``, seconds, default 120);
* 408, 409, 425, 429, 5xx (including 529 "overloaded"), timeouts, connection errors (a body
  cut short of its ``Content-Length`` included) and a body that is not valid JSON are
  retried with exponential backoff and full jitter (``backoff_base`` * 2**n, capped at
  ``backoff_max``), honouring ``Retry-After`` (seconds or an HTTP date) and
  ``retry-after-ms`` when the server sends them;
* at most ``max_attempts`` attempts (default 6);
* anything else (400, 401, 403, 404, 422, a content refusal or safety block) fails at once.

Failures surface as :class:`~commet.models.base.ModelCallError` with a ``kind``
(``rate_limit``, ``http_500``, ``auth``, ``http_400``, ``refusal``, ``timeout``,
``connection`` ...), the HTTP ``status`` and ``retryable``. Messages are scrubbed of the
API key (and of anything that looks like a key) and the original exception is not
chained, so tracebacks and logs never carry credentials.

:class:`RateLimiter` is an async, FIFO-fair token bucket over requests per minute
(``rpm``) and tokens per minute (``tpm``); its clock and sleep are injectable for tests. The
engine can move its bucket into the results store (:meth:`RateLimiter.share`), so that every
process using that store draws on one budget.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import math
import os
import random
import re
import ssl
import time
from abc import abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from commet.models import pricing
from commet.models.base import (
    ImagePart,
    Model,
    ModelCallError,
    ModelRequest,
    ModelResponse,
    UnknownModelError,
    Usage,
    unknown_options,
)
from commet.models.endpoints import split_base_urls

log = logging.getLogger(__name__)
_timeout_scope = getattr(asyncio, "timeout", None)  # Python 3.11+

T = TypeVar("T")

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})

#: Tokens that look like provider credentials (OpenAI / Anthropic ``sk-...``, Google ``AIza...``).
_KEY_PATTERNS = re.compile(r"(sk-[A-Za-z0-9_\-*.]{6,}|AIza[0-9A-Za-z_\-]{10,}|Bearer\s+[A-Za-z0-9_\-.~+/=]{8,})")


# --------------------------------------------------------------------------- helpers


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every secret and anything shaped like an API key replaced by ``***``."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return _KEY_PATTERNS.sub("***", text)


def parse_retry_after(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms``, or ``Retry-After`` (delta seconds or HTTP date)."""
    if not headers:
        return None
    lower = {str(k).lower(): str(v) for k, v in headers.items()}
    ms = lower.get("retry-after-ms")
    if ms is not None:
        try:
            value = float(ms) / 1000.0
            if value >= 0 and math.isfinite(value):
                return value
        except ValueError:
            pass
    raw = lower.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        value = float(raw)
        return value if value >= 0 and math.isfinite(value) else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def _option_float(options: Mapping[str, str], key: str, default: float | None) -> float | None:
    raw = options.get(key)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise UnknownModelError(f"option {key}={raw!r} must be a number") from None


def _option_int(options: Mapping[str, str], key: str, default: int | None) -> int | None:
    value = _option_float(options, key, None if default is None else float(default))
    return None if value is None else int(value)


def status_kind(status: int) -> str:
    if status == 429:
        return "rate_limit"
    if status in (401, 403):
        return "auth"
    return f"http_{status}"


def _find_status_and_headers(exc: BaseException) -> tuple[int | None, Mapping[str, str] | None]:
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):
        code = getattr(exc, "code", None)  # google-genai APIError
        status = code if isinstance(code, int) and 100 <= code < 600 else None
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) if response is not None else getattr(exc, "headers", None)
    if status is None and response is not None:
        code = getattr(response, "status_code", None)
        status = code if isinstance(code, int) else None
    return status, headers


def _is_timeout(exc: BaseException) -> bool:
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return True
    return any("Timeout" in cls.__name__ for cls in type(exc).__mro__)


def _is_connection(exc: BaseException) -> bool:
    if isinstance(exc, (ConnectionError, OSError)):
        return True
    names = {cls.__name__ for cls in type(exc).__mro__}
    # openai/anthropic APIConnectionError, httpx/httpx2 TransportError / ConnectError / RemoteProtocolError,
    # aiohttp (google-genai's async transport when installed) ClientConnectionError / ClientPayloadError
    # (a body cut short of its Content-Length), http.client IncompleteRead
    return bool(names & {"APIConnectionError", "TransportError", "ConnectError", "RemoteProtocolError",
                         "ReadError", "WriteError", "NetworkError", "ServerDisconnectedError",
                         "ClientConnectionError", "ClientPayloadError", "IncompleteRead"})


def _is_bad_body(exc: BaseException) -> bool:
    """A success status whose body is not valid JSON (cut short or garbled on the way): worth a retry."""
    return isinstance(exc, json.JSONDecodeError) or any(
        cls.__name__ == "JSONDecodeError" for cls in type(exc).__mro__)


def _untrusted_certificate(exc: BaseException) -> BaseException | None:
    """The certificate failure behind ``exc``, if any (SDKs wrap it, one even as a timeout)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(current):
            return current
        current = current.__cause__ or current.__context__
    return None


def classify(exc: BaseException, secrets: Iterable[str] = ()) -> tuple[ModelCallError, float | None]:
    """Map any provider/transport exception to a ModelCallError (and a server-requested delay)."""
    if isinstance(exc, ModelCallError):
        return ModelCallError(redact(str(exc), secrets), kind=exc.kind, status=exc.status,
                              retryable=exc.retryable), None
    certificate = _untrusted_certificate(exc)
    if certificate is not None:  # will not fix itself: no retry
        return ModelCallError(redact(f"the server's TLS certificate is not trusted ({certificate}); for a private "
                                     "CA set SSL_CERT_FILE", secrets)[:2000], kind="tls", retryable=False), None
    status, headers = _find_status_and_headers(exc)
    name = type(exc).__name__
    if status is not None:
        message = redact(f"HTTP {status} from provider ({name}): {exc}", secrets)
        return (ModelCallError(message[:2000], kind=status_kind(status), status=status,
                               retryable=status in RETRYABLE_STATUS),
                parse_retry_after(headers))
    if _is_timeout(exc):
        return ModelCallError(redact(f"request timed out ({name})", secrets), kind="timeout",
                              retryable=True), None
    if _is_connection(exc):
        return ModelCallError(redact(f"connection error ({name}): {exc}", secrets)[:2000], kind="connection",
                              retryable=True), None
    if _is_bad_body(exc):
        return ModelCallError(redact(f"the provider sent a body that is not valid JSON ({name}): {exc}",
                                     secrets)[:2000], kind="bad_response", retryable=True), None
    return ModelCallError(redact(f"unexpected provider error ({name}): {exc}", secrets)[:2000], kind="error",
                          retryable=False), None


# --------------------------------------------------------------------------- rate limiter


class RateLimiter:
    """Async token buckets for requests/minute and tokens/minute, served first come first served.

    Each bucket refills continuously at ``limit/60`` per second and holds at most
    ``burst_seconds`` worth of budget (at least one request, resp. one request's tokens).
    A request whose token estimate exceeds the bucket waits for a full bucket and then
    overdraws it, so a big request is delayed rather than refused. Waiters queue behind an
    ``asyncio.Lock`` (FIFO), so a large request is never starved by small ones.

    Shared (:meth:`share`): the bucket's levels live in a row named ``key`` that a
    :data:`BudgetUpdate` reads and writes atomically (the results store's, across processes),
    on the wall clock; this process's lock then only orders its own waiters.
    """

    def __init__(self, rpm: float | None = None, tpm: float | None = None, *, burst_seconds: float = 1.0,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep, key: str = ""):
        if rpm is not None and rpm <= 0 or tpm is not None and tpm <= 0:
            raise UnknownModelError("rpm and tpm must be positive")
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

        def step(state: tuple[float, float, float] | None) -> tuple[tuple[float, float, float], float]:
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
            def give_back(state: tuple[float, float, float] | None) -> tuple[tuple[float, float, float], None]:
                requests, level, when = state or (self._req_capacity, self._tok_capacity, time.time())
                return (requests, min(self._tok_capacity, level + (estimated - actual)), when), None

            self._shared(self.key, give_back)
            return
        self._tok_level = min(self._tok_capacity, self._tok_level + (estimated - actual))


#: ``update(key, step)``: atomically read the bucket row ``key`` (requests, tokens, wall time;
#: None when new), pass it to ``step``, write back the state ``step`` returns, return its result.
BudgetUpdate = Callable[[str, Callable[[Any], tuple[tuple[float, float, float], Any]]], Any]


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


# --------------------------------------------------------------------------- retry policy


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

    @classmethod
    def from_options(cls, options: Mapping[str, str], *, secrets: Iterable[str] = ()) -> RetryPolicy:
        max_attempts = _option_int(options, "max_attempts", 6) or 1
        if max_attempts < 1:
            raise UnknownModelError("max_attempts must be at least 1")
        timeout = _option_float(options, "timeout", 120.0)
        return cls(
            max_attempts=max_attempts,
            timeout=timeout if timeout and timeout > 0 else None,
            backoff_base=_option_float(options, "backoff_base", 1.0) or 0.0,
            backoff_max=_option_float(options, "backoff_max", 60.0) or 0.0,
            secrets=tuple(s for s in secrets if s),
        )

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
                    async with _timeout_scope(self.timeout):
                        result = await call()
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
                final = ModelCallError(f"{what}: {error}{suffix}", kind=error.kind, status=error.status,
                                       retryable=error.retryable)
                final.attempts = attempt  # type: ignore[attr-defined]
                raise final from None
            delay = self.backoff(attempt)
            if retry_after is not None:
                delay = min(max(retry_after, 0.0), self.max_retry_after)
            log.info("%s failed (%s), attempt %d/%d, retrying in %.2f s", what, error.kind, attempt,
                     self.max_attempts, delay)
            await self.sleep(delay)


def _importable(module: str) -> bool:
    """Whether ``module`` is installed, found without importing it (``import openai`` alone costs a second
    of CPU, and the direct transport never needs it)."""
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def limiter_from_options(options: Mapping[str, str], **kwargs: Any) -> RateLimiter | None:
    """The limiter the ``rpm``/``tpm`` options ask for (``key``: its shared budget's name), or None."""
    rpm = _option_float(options, "rpm", None)
    tpm = _option_float(options, "tpm", None)
    if not rpm and not tpm:
        return None
    return RateLimiter(rpm or None, tpm or None, **kwargs)


#: Options every remote provider understands (they never change outputs, so not in identity()).
TRANSPORT_OPTIONS = frozenset({"max_attempts", "timeout", "backoff_base", "backoff_max", "rpm", "tpm",
                               "api_key_env", "price_in", "price_out"})


# --------------------------------------------------------------------------- shared remote model


def resolve_api_key(provider: str, options: Mapping[str, str], default_envs: tuple[str, ...],
                    base_url: str | None) -> str:
    """The key from ``?api_key_env=NAME`` or the provider's usual variables; never from the spec itself."""
    envs = (options["api_key_env"],) if options.get("api_key_env") else default_envs
    for env in envs:
        value = os.environ.get(env)
        if value:
            return value
    if base_url:
        return "not-needed"  # local servers (vLLM, Ollama, LM Studio) ignore the key
    raise UnknownModelError(f"{provider}: no API key: set the environment variable "
                            f"{' or '.join(envs)} (or choose another with ?api_key_env=NAME)")


class RemoteModel(Model):
    """What the HTTP providers share: options, key lookup, retry policy, limiter, identity, price.

    Subclasses set ``provider`` and ``default_key_envs`` and implement :meth:`_call`, which
    makes ONE attempt and returns a ModelResponse (raising the SDK's exception or a
    ModelCallError on failure).
    """

    provider: str = ""
    default_key_envs: tuple[str, ...] = ()
    #: options that change outputs and so belong in identity(); the rest are transport
    output_options: frozenset[str] = frozenset()
    #: provider-specific options that do not change outputs
    transport_options: frozenset[str] = frozenset()
    #: whether ``base_url`` may name several endpoints (:mod:`commet.models.endpoints`)
    many_endpoints: bool = False
    #: the SDK module the provider needs (its extra has the provider's name)
    sdk_module: str = ""

    def __init__(self, name: str, options: Mapping[str, str]):
        if not name:
            raise UnknownModelError(f"{self.provider}: a model name is required ({self.provider}:MODEL)")
        self.name = name
        self.options = dict(options)
        self.base_urls = split_base_urls(self.options.get("base_url"))
        self.base_url = self.base_urls[0] if self.base_urls else None
        self.api_key = self._check_prerequisites()
        self.spec = f"{self.provider}:{name}"
        self.policy = RetryPolicy.from_options(self.options, secrets=(self.api_key,) if self.api_key else ())
        self.limiter = limiter_from_options(self.options, key=self.rate_key)
        self.price = pricing.price_for(self.provider, name, self.options)

    @property
    def rate_key(self) -> str:
        """The name of this model's shared rate budget: provider, model and endpoint (never a key)."""
        return f"{self.spec}@{self.endpoints_identity or 'default'}"

    @property
    def endpoints_identity(self) -> str | None:
        """The endpoint(s) as recorded: one base_url, or the sorted list (its order changes nothing)."""
        return ",".join(sorted(self.base_urls)) if len(self.base_urls) > 1 else self.base_url

    def _resolve_key(self) -> str | None:
        return resolve_api_key(self.provider, self.options, self.default_key_envs, self.base_url)

    def _check_prerequisites(self) -> str | None:
        """The API key; every missing prerequisite (options, key, SDK) reported at once, in one line."""
        known = TRANSPORT_OPTIONS | self.output_options | self.transport_options | {"base_url"}
        problems = [p for p in (unknown_options(self.provider, self.options, known),) if p]
        if any("@" in url.split("//", 1)[-1].split("/", 1)[0] for url in self.base_urls):
            problems.append(f"{self.provider}: put credentials in an environment variable (option api_key_env), "
                            "not in base_url")
        if len(self.base_urls) > 1 and not self.many_endpoints:
            problems.append(f"{self.provider}: several base_url endpoints are supported by openai: "
                            "(OpenAI-compatible servers) only")
        key: str | None = None
        try:
            key = self._resolve_key()
        except UnknownModelError as exc:
            problems.append(str(exc))
        if self.sdk_module and not _importable(self.sdk_module):
            problems.append(f"{self.provider}: the SDK ({self.sdk_module}) is not installed: "
                            f"pip install 'commet-bench[{self.provider}]'")
        if len(problems) > 1:
            prefix = f"{self.provider}: "
            raise UnknownModelError(f"{prefix}{len(problems)} problems: "
                                    + "; ".join(p.removeprefix(prefix) for p in problems))
        if problems:
            raise UnknownModelError(problems[0])
        return key

    def identity(self) -> dict[str, object]:
        ident: dict[str, object] = {"spec": self.spec, "provider": self.provider, "model": self.name}
        if self.base_url:
            ident["base_url"] = self.endpoints_identity
        for key in sorted(self.output_options):
            if key in self.options:
                ident[key] = self.options[key]
        return ident

    def estimated_cost(self, usage: Usage) -> float | None:
        return pricing.cost(self.price, usage)

    @abstractmethod
    async def _call(self, request: ModelRequest) -> ModelResponse:
        """One attempt, no retries."""

    async def generate(self, request: ModelRequest) -> ModelResponse:
        estimate = estimate_tokens(request) if self.limiter is not None else 0
        response, attempts = await self.policy.run(lambda: self._call(request), limiter=self.limiter,
                                                   tokens=estimate, what=self.spec)
        if self.limiter is not None:
            self.limiter.settle(estimate, response.usage.input_tokens + response.usage.output_tokens)
        response.attempts = attempts
        return response
