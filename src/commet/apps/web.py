"""What both web apps (expert review, human study) share: sessions, CSRF, limits, passwords.

* Sessions are signed cookies (itsdangerous), HttpOnly and SameSite=Lax; no server-side
  request metadata (IP, user agent) is ever read or stored.
* Every POST form carries a CSRF token bound to the session (:func:`csrf_token`,
  :func:`check_csrf`).
* Request bodies are bounded (:class:`BodySizeLimit`) and requests can be rate-limited
  per session key (:class:`RateLimiter`).
* Passwords are hashed with scrypt and a random salt.
* Templates autoescape, so story text can never inject markup.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import defaultdict, deque
from pathlib import Path

from fastapi import HTTPException, Request, Response
from fastapi.templating import Jinja2Templates
from itsdangerous import BadSignature, URLSafeTimedSerializer
from starlette.types import ASGIApp, Receive, Scope, Send

SESSION_COOKIE = "commet_session"
SESSION_MAX_AGE_S = 14 * 24 * 3600


def hash_password(password: str, *, salt: bytes | None = None) -> str:
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1, dklen=32)
    return f"scrypt${salt.hex()}${digest.hex()}"


def verify_password(password: str, stored: str) -> bool:
    try:
        scheme, salt_hex, digest_hex = stored.split("$")
    except ValueError:
        return False
    if scheme != "scrypt":
        return False
    candidate = hash_password(password, salt=bytes.fromhex(salt_hex)).split("$")[2]
    return hmac.compare_digest(candidate, digest_hex)


class Sessions:
    """Signed-cookie sessions holding a small dict (user or participant token, CSRF token)."""

    def __init__(self, secret: str, *, secure: bool = False):
        self.serializer = URLSafeTimedSerializer(secret, salt="commet-session")
        self.secure = secure

    def load(self, request: Request) -> dict[str, str]:
        raw = request.cookies.get(SESSION_COOKIE)
        if not raw:
            return {}
        try:
            data = self.serializer.loads(raw, max_age=SESSION_MAX_AGE_S)
        except BadSignature:
            return {}
        return data if isinstance(data, dict) else {}

    def save(self, response: Response, data: dict[str, str]) -> None:
        response.set_cookie(SESSION_COOKIE, self.serializer.dumps(data), max_age=SESSION_MAX_AGE_S, httponly=True,
                            samesite="lax", secure=self.secure)

    def clear(self, response: Response) -> None:
        response.delete_cookie(SESSION_COOKIE)


def csrf_token(session: dict[str, str]) -> str:
    """The session's CSRF token, created on first use (save the session afterwards)."""
    if "csrf" not in session:
        session["csrf"] = secrets.token_urlsafe(24)
    return session["csrf"]


def check_csrf(session: dict[str, str], submitted: str | None) -> None:
    expected = session.get("csrf")
    if not expected or not submitted or not hmac.compare_digest(expected, submitted):
        raise HTTPException(status_code=403, detail="missing or invalid CSRF token")


class BodySizeLimit:
    """ASGI middleware rejecting request bodies over ``max_bytes`` with 413, before they are read whole."""

    def __init__(self, app: ASGIApp, max_bytes: int = 256 * 1024):
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await _plain(send, 413, b"request body too large")
            return
        received = 0

        async def limited_receive() -> dict:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise HTTPException(status_code=413, detail="request body too large")
            return message

        await self.app(scope, limited_receive, send)


async def _plain(send: Send, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class RateLimiter:
    """At most ``limit`` events per ``window_s`` per key (a session or participant token, never an IP)."""

    def __init__(self, limit: int = 120, window_s: float = 60.0):
        self.limit = limit
        self.window_s = window_s
        self.events: dict[str, deque[float]] = defaultdict(deque)

    def check(self, key: str) -> None:
        now = time.monotonic()
        events = self.events[key]
        while events and now - events[0] > self.window_s:
            events.popleft()
        if len(events) >= self.limit:
            raise HTTPException(status_code=429, detail="too many requests; slow down")
        events.append(now)


def safe_child(root: Path, name: str) -> Path:
    """``root/name`` if it stays inside ``root`` and exists, else a 404 (no path traversal)."""
    if not name or "\x00" in name:
        raise HTTPException(status_code=404)
    root = root.resolve()
    candidate = (root / name).resolve()
    if not candidate.is_relative_to(root) or not candidate.is_file():
        raise HTTPException(status_code=404)
    return candidate


def templates(folder: Path) -> Jinja2Templates:
    """Jinja2 templates with autoescaping on for every file."""
    environment = Jinja2Templates(directory=str(folder))
    environment.env.autoescape = True
    return environment


SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
                               "script-src 'self'; form-action 'self'; frame-ancestors 'none'",
}
