"""What went wrong in a provider call, said once for every provider, with no secret in it.

Any provider or transport exception becomes a :class:`~commet.models.base.ModelCallError` with a
``kind`` (``rate_limit``, ``http_500``, ``auth``, ``http_400``, ``refusal``, ``timeout``,
``connection`` ...), the HTTP ``status`` and whether a retry may help (:func:`classify`).
Messages are scrubbed of the API key (and of anything that looks like a key) and the original
exception is not chained, so tracebacks and logs never carry credentials.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import math
import re
import ssl
import time
from collections.abc import Iterable, Mapping

from commet.models.base import CallErrorKind, ModelCallError

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})

#: Tokens that look like provider credentials (OpenAI / Anthropic ``sk-...``, Google ``AIza...``).
_KEY_PATTERNS = re.compile(r"(sk-[A-Za-z0-9_\-*.]{6,}|AIza[0-9A-Za-z_\-]{10,}|Bearer\s+[A-Za-z0-9_\-.~+/=]{8,})")


#: The shortest run of a secret's characters that is redacted wherever it appears (a key's last 8 characters in a
#: provider's ``key=...`` echo); a run of 6 characters of a random key is never ordinary text.
SECRET_RUN = 6
#: A secret's last characters right after a word that names a key (``key=...abcd``, ``token: abcd``): redacted
#: from 4 characters on.
_NAMED_VALUE = re.compile(r"(?i)\b(?:api[_-]?key|key|token|secret|password|authorization|bearer|credential)s?\b"
                          r"[\"']?\s*(?:[:=]\s*)?[\"']?[.*…]*([A-Za-z0-9_\-]{4,})")  # one way to match spaces


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every secret and anything shaped like an API key replaced by ``***``.

    A provider may echo part of a key in its own format: every run of at least ``SECRET_RUN`` characters that
    occurs in a secret is replaced too, and so is a piece of 4 or more of a secret's characters that follows a
    word naming a key (``key=``, ``token:``). Runs shorter than that elsewhere are left alone, so ordinary
    words and numbers are never mangled."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
            text = _redact_runs(text, secret)
            text = _NAMED_VALUE.sub(functools.partial(_named, secret=secret), text)
    return _KEY_PATTERNS.sub("***", text)


def _redact_runs(text: str, secret: str) -> str:
    """``text`` with each maximal stretch covered by runs of ``SECRET_RUN`` characters that occur in ``secret``
    replaced by ``***``."""
    if len(secret) < SECRET_RUN or len(text) < SECRET_RUN:
        return text
    pieces = {secret[i:i + SECRET_RUN] for i in range(len(secret) - SECRET_RUN + 1)}
    covered = [False] * len(text)
    for i in range(len(text) - SECRET_RUN + 1):
        if text[i:i + SECRET_RUN] in pieces:
            covered[i:i + SECRET_RUN] = [True] * SECRET_RUN
    if not any(covered):
        return text
    out, i = [], 0
    while i < len(text):
        if covered[i]:
            while i < len(text) and covered[i]:
                i += 1
            out.append("***")
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _named(match: re.Match[str], *, secret: str) -> str:
    value = match.group(1)
    if value not in secret:
        return match.group(0)
    start = match.start(1) - match.start(0)
    return match.group(0)[:start] + "***"


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


def status_kind(status: int) -> CallErrorKind:
    if status == 429:
        return CallErrorKind.rate_limit
    if status in (401, 403):
        return CallErrorKind.auth
    return CallErrorKind.http


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
        return ModelCallError(redact(str(exc), secrets), kind=exc.family, status=exc.status,
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
