"""What both web apps (expert review, human study) share: sessions, CSRF, origins, limits, passwords, exports.

* A signed-in session lives on the server, in a ``web_sessions`` table of the app's own SQLite
  file; the cookie holds only a random token (HttpOnly, SameSite=Lax) and the table only its
  SHA-256. Signing out deletes the row, and a password change deletes every row of that
  account, so a copied cookie stops working at once (:class:`Sessions`). An anonymous visitor
  (a sign-in form, a study participant) gets no row at all: its few values (the CSRF token, a
  message) travel in the cookie itself, signed with HMAC-SHA256 under a random key kept in the
  store, so page loads cannot fill the store.
* Every POST form carries a CSRF token bound to the session (:func:`csrf_token`,
  :func:`check_csrf`; for an anonymous visitor a signed double-submit cookie), and every POST
  whose ``Origin`` (or, without one, ``Referer``) names another site is refused before it
  reaches a route (:class:`SameOriginPosts`).
* Names are compared in one normal form everywhere (:func:`normalise_name`: NFKC, stripped,
  casefolded), for sign-in and for its throttle alike.
* Failed sign-ins are throttled per client address first, then per (name, client) with a capped
  exponential backoff, and per name by a delay that never refuses (:class:`LoginThrottle`): a
  guesser elsewhere never locks the owner out. A browser a reviewer signed in from holds a signed
  device cookie for that name (:class:`DeviceCookies`), which exempts its sign-ins from its
  address's block, so a guesser sharing the owner's address does not lock the owner out either.
  The client address is used in memory for this only and never stored. Password checks (scrypt) run in their
  own threads, each attempt counted by the throttle before its check (:func:`throttled_check`), so the event
  loop keeps answering and attempts sent together never pass the limits together. Request headers are
  bounded (:class:`HeaderSizeLimit`, 431).
* Cookies set over HTTPS are marked Secure (:class:`SecureCookiesOverHttps`); a store that fails under a
  request (full disk, lock, damaged file) is a 503 page, not a server error (:func:`store_unavailable`).
* Files are served only through :mod:`commet.apps.files` (one confinement function).
* Uploaded pictures are decoded under a pixel limit (:func:`decode_picture`); a
  decompression bomb is refused with 413 before its pixels are allocated.
* CSV and spreadsheet exports escape cells that a spreadsheet would run as a formula
  (:func:`csv_safe`, OWASP "CSV injection").
* Request bodies are bounded (:class:`BodySizeLimit`) and requests can be rate-limited per
  key (:class:`RateLimiter`). Passwords are hashed with scrypt and a random salt. Templates
  autoescape, so story text can never inject markup.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import hmac
import io
import ipaddress
import json
import logging
import os
import secrets
import sqlite3
import time
import unicodedata
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from fastapi import FastAPI, HTTPException, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from commet.errors import CommetError
from commet.format.pictures import MAX_IMAGE_SIDE, PictureError, bombs_refused, opened_picture
from commet.format.pictures import PictureTooLarge as PictureTooLargeToRead
from commet.store.sqlite import table_names

SESSION_COOKIE = "commet_session"  # the review app's; each app names its own (cookies ignore the port)
SESSION_MAX_AGE_S = 14 * 24 * 3600
ANONYMOUS_SESSION_MAX_AGE_S = 2 * 24 * 3600  # since last use
#: Largest picture (width x height) an upload may declare: 25 megapixels, five times a 2048x2048 picture.
MAX_UPLOAD_PIXELS = 25_000_000
#: First characters that make a spreadsheet cell a formula (OWASP CSV injection).
FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")


def normalise_name(name: str) -> str:
    """The one form a user name is compared in: NFKC, surrounding white space removed, casefolded."""
    return unicodedata.normalize("NFKC", name).strip().casefold()


#: C0 control characters other than tab and line feed, and DEL: removed from text a form sends
_CONTROLS = dict.fromkeys([*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])


def form_text(value: str) -> str:
    """Text a form sent, as both apps keep it: line breaks LF (a form sends CRLF), every other C0 control
    character (NUL, escape, ...) and DEL removed, surrounding white space stripped. A control character has no
    place in an answer or a review and would reach exports, spreadsheets and terminals; bytes that were not
    UTF-8 arrive as U+FFFD (the form parser's replacement character), which is kept as the visible mark it is."""
    return value.replace("\r\n", "\n").replace("\r", "\n").translate(_CONTROLS).strip()


def hash_password(password: str, *, salt: bytes | None = None) -> str:
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1, dklen=32)
    return f"scrypt${salt.hex()}${digest.hex()}"


@functools.cache
def unknown_user_hash() -> str:
    """A password hash made once per process, verified against for a name that has no account: an unknown name
    then costs one scrypt run, as a known one does (its time tells nothing about which names exist)."""
    return hash_password(secrets.token_urlsafe(16))


def verify_password(password: str, stored: str) -> bool:
    try:
        scheme, salt_hex, digest_hex = stored.split("$")
    except ValueError:
        return False
    if scheme != "scrypt":
        return False
    candidate = hash_password(password, salt=bytes.fromhex(salt_hex)).split("$")[2]
    return hmac.compare_digest(candidate, digest_hex)


SESSION_SCHEMA = """
CREATE TABLE IF NOT EXISTS web_sessions (
  id TEXT PRIMARY KEY, subject TEXT, data TEXT NOT NULL, created_at REAL NOT NULL, expires_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS web_sessions_subject ON web_sessions (subject);
CREATE TABLE IF NOT EXISTS web_keys (purpose TEXT PRIMARY KEY, secret TEXT NOT NULL);
"""
_SID = "_sid"  # the session's cookie value inside a loaded session dict (never stored in the row)
#: how an anonymous session's cookie begins: its values and their signature follow (no row on the server)
SIGNED_PREFIX = "a."
#: the most characters an anonymous session's values may take in its cookie (browsers keep 4 KiB a cookie)
MAX_SIGNED_CHARS = 3000


def check_app_store(path: Path, what: str, own_table: str) -> str | None:
    """Why ``path`` cannot be this app's SQLite store (``what``, e.g. "review store"), or None.

    Asked before anything is written, so a refused file is left as it was: a folder, a file that
    is not SQLite, another program's SQLite file (tables, none of them ``own_table``; a CoMMET
    results store included), or a file SQLite cannot open (no permission, locked). A missing
    file is fine: it becomes a new store.
    """
    if path.is_dir():
        return f"{path}: is a folder, expected a {what} (.sqlite)"
    if not path.exists():
        return None
    try:
        db = sqlite3.connect(path, timeout=30)
    except sqlite3.Error as exc:
        return f"{path}: cannot open the {what} (SQLite: {exc})"
    try:
        tables = table_names(db)
    except sqlite3.OperationalError as exc:  # locked, no permission
        return f"{path}: cannot open the {what} (SQLite: {exc})"
    except sqlite3.DatabaseError as exc:
        return f"{path}: not a {what} (SQLite: {exc})"
    finally:
        db.close()
    if tables and own_table not in tables:
        return f"{path}: not a {what} (it has tables, but not the {what}'s; give another file)"
    return None


#: how long opening an app's store keeps trying while another process sets the same file up
SETUP_TIMEOUT_S = 30.0


def set_up_store(path: Path, schema: str, migrate: Callable[[sqlite3.Connection], object] | None = None) -> None:
    """Make or update an app's SQLite store: write-ahead log, ``schema`` (CREATE ... IF NOT EXISTS), then ``migrate``.

    The tables are made in one IMMEDIATE transaction and ``migrate`` runs in another, so a second process
    opening the same new file (``review serve`` and ``review add-user`` at once) sees none or all of them and
    never migrates twice. SQLite answers "database is locked" without waiting in a few setup cases (a
    journal-mode switch racing another opener), so setup is tried again for up to ``SETUP_TIMEOUT_S``.
    """
    deadline = time.monotonic() + SETUP_TIMEOUT_S
    while True:
        db = sqlite3.connect(path, timeout=SETUP_TIMEOUT_S, isolation_level=None)
        try:
            if db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                db.execute("PRAGMA journal_mode = WAL")
            db.executescript(f"BEGIN IMMEDIATE;{schema}COMMIT;")
            if migrate is not None:
                db.execute("BEGIN IMMEDIATE")
                try:
                    migrate(db)
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
        finally:
            db.close()
        time.sleep(0.01)


def store_key(path: Path, purpose: str) -> bytes:
    """The random HMAC key this store keeps for ``purpose`` (``anonymous`` sessions, ``device`` cookies), made on
    first use (table ``web_keys``, set up by :class:`Sessions`): each purpose signs with its own key."""
    set_up_store(path, SESSION_SCHEMA)
    with _session_db(path) as db:
        db.execute("INSERT OR IGNORE INTO web_keys (purpose, secret) VALUES (?, ?)", (purpose, secrets.token_hex(32)))
        return bytes.fromhex(db.execute("SELECT secret FROM web_keys WHERE purpose = ?", (purpose,)).fetchone()[0])


def _sid_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def revoke_sessions(db: sqlite3.Connection, subject: str) -> int:
    """Delete every session of ``subject`` (e.g. ``user:3`` after a password change) in ``db``'s open transaction,
    the one that makes the change: a new password and the end of the old sessions commit together or not at all (a
    crash between two transactions would leave a thief's session alive). Returns how many."""
    return db.execute("DELETE FROM web_sessions WHERE subject = ?", (subject,)).rowcount


@contextmanager
def _session_db(path: Path) -> Iterator[sqlite3.Connection]:
    """The session table's file (made by :class:`Sessions`, in write-ahead-log mode)."""
    db = sqlite3.connect(path, timeout=30)
    try:
        with db:
            yield db
    finally:
        db.close()



def _encoded(value: object) -> str:
    """``value`` as compact JSON in unpadded URL-safe base64: the body of a signed cookie."""
    return base64.urlsafe_b64encode(json.dumps(value, separators=(",", ":")).encode()).decode().rstrip("=")


def _signature(key: bytes, context: str, body: str) -> str:
    """HMAC-SHA256 of a signed cookie's body under the store's key, bound to ``context`` (which cookie it is)."""
    digest = hmac.new(key, f"{context}|{body}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def _opened(key: bytes, context: str, value: str, max_chars: int) -> object:
    """What a signed cookie's ``body.signature`` holds; None when it is malformed, too long, or its signature is not
    this store's for ``context`` (forged, altered, another store's or another cookie's)."""
    body, dot, signature = value.partition(".")
    if not dot or len(body) > max_chars + 8 or not hmac.compare_digest(
            signature.encode(), _signature(key, context, body).encode()):
        return None
    try:
        return json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except ValueError:
        return None

class Sessions:
    """Sessions holding a small dict of strings: a signed-in one in a row of the app's SQLite file, an anonymous
    one in its own signed cookie.

    The key ``subject`` names whose session it is (``user:3``, ``organiser``) so that all of an account's
    sessions can be revoked; only such a session has a row. A session without one is anonymous: its values
    (a CSRF token, a message to show once) are the cookie, signed with HMAC-SHA256 under a random key made
    once per store (table ``web_keys``), valid for ``ANONYMOUS_SESSION_MAX_AGE_S`` since it was last saved.
    A visitor who never signs in therefore costs the server nothing, however many pages it loads.
    """

    def __init__(self, db_path: str | Path, *, secure: bool = False, max_age_s: int = SESSION_MAX_AGE_S,
                 cookie: str = SESSION_COOKIE):
        self.path = Path(db_path)
        # A browser sends a host's cookies to every port of it: two apps on one host (review on :8000, study on
        # :8001) sharing a cookie name would overwrite each other's session, signing their users out.
        self.cookie = cookie
        self.secure = secure
        self.max_age_s = max_age_s
        self._key = store_key(self.path, "anonymous")

    def load(self, request: Request) -> dict[str, str]:
        token = request.cookies.get(self.cookie)
        if token and token.startswith(SIGNED_PREFIX):
            return self._unsigned(token)
        if not token or len(token) > 128:
            return {}
        with _session_db(self.path) as db:
            row = db.execute("SELECT data FROM web_sessions WHERE id = ? AND expires_at > ?",
                             (_sid_hash(token), time.time())).fetchone()
        if row is None:
            return {}
        data = json.loads(row[0])
        return {**data, _SID: token} if isinstance(data, dict) else {}

    def save(self, response: Response, data: dict[str, str]) -> None:
        """Store ``data``: a signed-in session in its own row when it was loaded from one, else in a new row with a
        new token; an anonymous one in a freshly signed cookie (a row it came from, of an older version or of a
        session whose subject was removed, is deleted)."""
        subject = data.get("subject")
        token = data.get(_SID)
        if not subject:
            if token is not None and not token.startswith(SIGNED_PREFIX):
                self.drop(data)
            value = self._signed({k: v for k, v in data.items() if k != _SID})
            data[_SID] = value
            self._set_cookie(response, value, None)
            return
        payload = json.dumps({k: v for k, v in data.items() if k != _SID})
        now = time.time()
        with _session_db(self.path) as db:
            if token is not None and not token.startswith(SIGNED_PREFIX):
                updated = db.execute("UPDATE web_sessions SET data = ?, subject = ? WHERE id = ? AND expires_at > ?",
                                     (payload, subject, _sid_hash(token), now)).rowcount
                if updated:
                    self._set_cookie(response, token, subject)
                    return
            token = secrets.token_urlsafe(32)
            db.execute("DELETE FROM web_sessions WHERE expires_at <= ?", (now,))
            db.execute("INSERT INTO web_sessions (id, subject, data, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
                       (_sid_hash(token), subject, payload, now, now + self.max_age_s))
        data[_SID] = token
        self._set_cookie(response, token, subject)

    def _signed(self, values: dict[str, str]) -> str:
        """The cookie value of an anonymous session: its values and when they were saved, then their signature.
        Values that would make the cookie too long are left out, the CSRF token last of all."""
        kept = dict(values)
        while True:
            body = _encoded({"t": time.time(), "d": kept})
            if len(body) <= MAX_SIGNED_CHARS or not kept:
                break
            kept.pop(next((k for k in kept if k != "csrf"), "csrf"))
        return f"{SIGNED_PREFIX}{body}.{_signature(self._key, self.cookie, body)}"

    def _unsigned(self, value: str) -> dict[str, str]:
        """The values of an anonymous session's cookie; {} when it is forged, altered or too old."""
        saved = _opened(self._key, self.cookie, value.removeprefix(SIGNED_PREFIX), MAX_SIGNED_CHARS)
        if not isinstance(saved, dict):
            return {}
        try:
            age = time.time() - float(saved["t"])
            values = saved["d"]
        except (ValueError, KeyError, TypeError):
            return {}
        if not -60 <= age < ANONYMOUS_SESSION_MAX_AGE_S or not isinstance(values, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in values.items()) or "subject" in values:
            return {}
        return {**values, _SID: value}

    def _set_cookie(self, response: Response, token: str, subject: str | None) -> None:
        response.set_cookie(self.cookie, token, max_age=self.max_age_s if subject else ANONYMOUS_SESSION_MAX_AGE_S,
                            httponly=True,
                            samesite="lax", secure=self.secure)

    def drop(self, data: dict[str, str]) -> None:
        """Delete the session ``data`` was loaded from (before a sign-in replaces it, or at sign-out); an anonymous
        one has no row (its cookie is replaced or deleted)."""
        token = data.get(_SID)
        if token and not token.startswith(SIGNED_PREFIX):
            with _session_db(self.path) as db:
                db.execute("DELETE FROM web_sessions WHERE id = ?", (_sid_hash(token),))

    def clear(self, response: Response, data: dict[str, str]) -> None:
        """Sign out: the row is deleted (a copied cookie is dead too) and the cookie removed."""
        self.drop(data)
        response.delete_cookie(self.cookie)


DEVICE_COOKIE = "commet_device"  # the review app's; sent with its sign-in form only (path /login)
DEVICE_MAX_AGE_S = 180 * 24 * 3600
#: how a device cookie's value begins (its format's version): its entries and their signature follow
DEVICE_PREFIX = "d1."
#: the most names one browser's device cookie holds (reviewers sharing it), the most recently signed-in kept
MAX_DEVICE_NAMES = 8
#: the most characters a device cookie's entries may take (browsers keep 4 KiB a cookie)
MAX_DEVICE_CHARS = 2000


class DeviceCookies:
    """Device cookies (OWASP "Slow Down Online Guessing Attacks with Device Cookies"): proof that this browser
    signed in as a name before, so that its sign-ins are not refused for its address's failures.

    After each successful sign-in the browser gets one cookie (HttpOnly, SameSite=Strict, Secure when the
    sessions' cookie is, sent to the sign-in form's path only, kept ``max_age_s``) listing, for up to
    ``MAX_DEVICE_NAMES`` names, the normalised name, when it was issued and a random device id, signed with
    HMAC-SHA256 under a key of the store's own (``web_keys``, purpose ``device``). A sign-in again replaces that
    name's entry with a new id. An entry counts only for its own name, only unaltered, under this store's key
    and within ``max_age_s`` of its issue; what it is worth is decided by :class:`LoginThrottle` (its failures
    are counted per device and it stops counting after a few). Nothing is kept on the server."""

    def __init__(self, db_path: str | Path, *, secure: bool = False, max_age_s: int = DEVICE_MAX_AGE_S,
                 cookie: str = DEVICE_COOKIE, path: str = "/login", clock: Callable[[], float] = time.time):
        self.cookie, self.secure, self.max_age_s, self.path, self.clock = cookie, secure, max_age_s, path, clock
        self._key = store_key(Path(db_path), "device")

    def entries(self, request: Request) -> list[tuple[str, int, str]]:
        """The valid entries of the request's device cookie: (normalised name, issued at, device id), newest
        first; [] when it is missing, forged, altered or signed under another store's key."""
        value = request.cookies.get(self.cookie, "")
        if not value.startswith(DEVICE_PREFIX):
            return []
        listed = _opened(self._key, f"device|{self.cookie}", value.removeprefix(DEVICE_PREFIX), MAX_DEVICE_CHARS)
        now, found = self.clock(), []
        for entry in listed if isinstance(listed, list) else []:
            if isinstance(entry, list) and len(entry) == 3:
                name, issued, device = entry
                if isinstance(name, str) and isinstance(issued, int) and isinstance(device, str) and \
                        -60 <= now - issued < self.max_age_s:
                    found.append((name, issued, device))
        return found[:MAX_DEVICE_NAMES]

    def device(self, request: Request, name: str) -> str | None:
        """The id of the request's device cookie entry for ``name`` (any spelling), or None."""
        key = normalise_name(name)
        return next((device for entry_name, _, device in self.entries(request) if entry_name == key), None)

    def issue(self, request: Request, response: Response, name: str) -> None:
        """After ``name`` signed in: the cookie again, with a new entry for the name first (the request's other
        valid entries kept after it, the oldest dropped beyond ``MAX_DEVICE_NAMES`` or ``MAX_DEVICE_CHARS``)."""
        key = normalise_name(name)
        entries = [(key, int(self.clock()), secrets.token_urlsafe(16)),
                   *(entry for entry in self.entries(request) if entry[0] != key)][:MAX_DEVICE_NAMES]
        while True:
            body = _encoded(entries)
            if len(body) <= MAX_DEVICE_CHARS or len(entries) == 1:
                break
            entries.pop()
        if len(body) > MAX_DEVICE_CHARS:
            return  # a name too long to keep (NFKC can lengthen one): no exemption, nothing else lost
        signed = f"{DEVICE_PREFIX}{body}.{_signature(self._key, f'device|{self.cookie}', body)}"
        response.set_cookie(self.cookie, signed, max_age=self.max_age_s,
                            path=self.path, httponly=True, samesite="strict", secure=self.secure)


def csrf_token(session: dict[str, str]) -> str:
    """The session's CSRF token, created on first use (save the session afterwards)."""
    if "csrf" not in session:
        session["csrf"] = secrets.token_urlsafe(24)
    return session["csrf"]


def csrf_valid(session: dict[str, str], submitted: str | None) -> bool:
    expected = session.get("csrf")
    return bool(expected and submitted and hmac.compare_digest(expected, submitted))


def check_csrf(session: dict[str, str], submitted: str | None) -> None:
    if not csrf_valid(session, submitted):
        raise HTTPException(status_code=403, detail="missing or invalid CSRF token")


class SameOriginPosts:
    """ASGI middleware: 403 for a POST (any unsafe method) sent from another site.

    The request's ``Origin`` header, or its ``Referer`` when there is no ``Origin``, must name
    this server's host (the ``Host`` header); ``Origin: null`` (sandboxed frames, privacy
    redirects) is refused. Browsers send ``Origin`` with every cross-site POST, so a request
    without either header does not come from a page in a browser; it still needs a CSRF token.
    """

    SAFE = frozenset({"GET", "HEAD", "OPTIONS"})

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] not in self.SAFE:
            headers = dict(scope.get("headers") or [])
            source = headers.get(b"origin", headers.get(b"referer"))
            if source is not None and not _same_host(source, headers.get(b"host")):
                await _plain(send, 403, b"cross-site request refused (Origin or Referer names another site)")
                return
        await self.app(scope, receive, send)


def _same_host(source: bytes, host: bytes | None) -> bool:
    if host is None or source.strip() in (b"", b"null"):
        return False
    try:
        netloc = urlsplit(source.decode("latin-1").strip()).netloc
    except ValueError:
        return False
    return bool(netloc) and netloc.lower() == host.decode("latin-1").strip().lower()


class HeadAsGet:
    """ASGI middleware: a HEAD request is answered as its GET would be, headers only (uptime checks and
    ``curl -I`` get the page's status and headers, not 405)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, headers_only)


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

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise HTTPException(status_code=413, detail="request body too large")
            return message

        await self.app(scope, limited_receive, send)


#: Most bytes one request header (name and value) may have, and all of them together: a browser's cookies
#: and headers are a few kilobytes; common servers stop at 8 KiB a line and 32 KiB in all.
MAX_HEADER_BYTES = 16 * 1024
MAX_HEADERS_BYTES = 32 * 1024


class HeaderSizeLimit:
    """ASGI middleware: 431 (Request Header Fields Too Large) for a request whose headers are over the limits,
    before any route, session lookup or form parsing sees them."""

    def __init__(self, app: ASGIApp, max_header: int = MAX_HEADER_BYTES, max_total: int = MAX_HEADERS_BYTES):
        self.app = app
        self.max_header = max_header
        self.max_total = max_total

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            sizes = [len(key) + len(value) for key, value in scope.get("headers") or []]
            if sizes and (max(sizes) > self.max_header or sum(sizes) > self.max_total):
                if scope["type"] == "http":
                    await _plain(send, 431, b"request headers too large (at most 16 KiB each, 32 KiB in all)")
                else:
                    await send({"type": "websocket.close", "code": 1009})
                return
        await self.app(scope, receive, send)


class SecureCookiesOverHttps:
    """ASGI middleware: every cookie set in the answer to a request that came over HTTPS is marked ``Secure``.

    Behind a TLS-terminating proxy whose ``X-Forwarded-Proto`` the server believes (``--forwarded-allow-ips``), the
    request's scheme is https; its session and device cookies must then never travel over plain HTTP, whether or
    not the operator also passed ``--secure-cookies`` (which marks them on every request)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("scheme") != "https":
            await self.app(scope, receive, send)
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [
                    (key, value + b"; Secure") if key.lower() == b"set-cookie" and not _marked_secure(value)
                    else (key, value) for key, value in message.get("headers", [])]}
            await send(message)

        await self.app(scope, receive, secured)


def _marked_secure(set_cookie: bytes) -> bool:
    return any(part.strip().lower() == b"secure" for part in set_cookie.split(b";")[1:])


#: SQLite's words for a store that cannot be used right now, and what a visitor is told of each
_STORE_TROUBLE = {"disk is full": "its disk is full", "disk i/o error": "it could not read or write its data; a "
                  "full disk does this too", "is locked": "its data is busy in another program",
                  "readonly": "its data cannot be written", "unable to open": "its data cannot be opened",
                  "malformed": "its data is damaged", "not a database": "its data is damaged"}


def store_unavailable(exc: sqlite3.DatabaseError) -> StarletteHTTPException:
    """The 503 (with ``Retry-After``) a request gets when the app's SQLite store fails under it: a full disk, an I/O
    error, a lock held past the timeout, a read-only or damaged file. SQLite rolled the write back, so nothing was
    saved and the store is as it was; the visitor is told so instead of a bare "Internal Server Error", and the
    server's log gets one line (no traceback, nothing from the request). Any other error is raised again."""
    message = str(exc).lower()
    why = next((text for words, text in _STORE_TROUBLE.items() if words in message), None)
    if why is None:
        raise exc
    logging.getLogger("uvicorn.error").error("the app's SQLite store failed: %s (answered 503; nothing saved)", exc)
    return StarletteHTTPException(503, headers={"Retry-After": "60"}, detail=(
        f"The server cannot save anything right now ({why}). Nothing was saved. Go back to keep what you typed, "
        "and try again in a few minutes."))


def guarded_app(title: str, max_body_bytes: int, **options: Any) -> FastAPI:
    """A FastAPI app behind this layer's guards: no API docs, headers over their limits refused (431), bodies over
    ``max_body_bytes`` refused, POSTs from other origins refused, HEAD answered as GET (so every layer below sees a
    GET), cookies set over HTTPS marked Secure."""
    app = FastAPI(title=title, docs_url=None, redoc_url=None, openapi_url=None, **options)
    app.add_middleware(BodySizeLimit, max_bytes=max_body_bytes)
    app.add_middleware(SameOriginPosts)
    app.add_middleware(HeadAsGet)
    app.add_middleware(SecureCookiesOverHttps)
    app.add_middleware(HeaderSizeLimit)
    return app


def malformed_request(exc: RequestValidationError) -> StarletteHTTPException:
    """A request FastAPI could not bind (``/pictures/abc.png``, ``story=abc`` in a form) as the HTTP error the app's own
    error page shows: 404 when a path segment is wrong (no such page), else 400 naming the fields, never the raw
    JSON validation dump (which echoes the input)."""
    places = [error.get("loc", ()) for error in exc.errors()]
    if any(place and place[0] == "path" for place in places):
        return StarletteHTTPException(status_code=404)
    fields = sorted({str(place[-1]) for place in places if place})
    return StarletteHTTPException(status_code=400, detail="This request is malformed" + (
        f" ({', '.join(fields)} not understood)." if fields else "."))


async def _plain(send: Send, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class RateLimiter:
    """At most ``limit`` events per ``window_s`` per key (a user, a participant token; the study's panel link also
    counts new participants per client address). Keys live in memory only, at most ``max_keys`` (the least
    recently used dropped first)."""

    def __init__(self, limit: int = 120, window_s: float = 60.0, max_keys: int = 50_000):
        self.limit = limit
        self.window_s = window_s
        self.max_keys = max_keys
        self.events: OrderedDict[str, deque[float]] = OrderedDict()

    def wait_s(self, key: str) -> float:
        """0 when an event may happen now (and it is counted), else the seconds until one may."""
        now = time.monotonic()
        events = self.events.pop(key, None) or deque()
        self.events[key] = events
        while len(self.events) > self.max_keys:
            self.events.popitem(last=False)
        while events and now - events[0] >= self.window_s:
            events.popleft()
        if len(events) >= self.limit:
            return self.window_s - (now - events[0])
        events.append(now)
        return 0.0

    def check(self, key: str) -> None:
        """Count an event, or refuse it (429) while ``key`` is over its limit."""
        if self.wait_s(key):
            raise HTTPException(status_code=429, detail="too many requests; slow down")


@dataclass
class _Failures:
    count: int
    last: float


class LoginThrottle:
    """Failed sign-ins counted three ways, so that guessing is slow and the owner is never locked out.

    * **Per client address, whatever the name** (first): at most ``address_limit`` failures (default
      ``4 * free``) in any ``address_window_s``; past that, every attempt from the address is refused until
      the oldest failure leaves the window. Guessing one password over 40 names (spraying) counts here.
    * **Per (normalised name, address)**: the first ``free`` failures cost nothing; after that each attempt
      must wait ``base_s * 2 ** (failures - free)`` seconds since the last failure, at most ``max_delay_s``.
    * **Per name, whatever the address** (a botnet, or forged proxy headers where a proxy is trusted): after
      ``account_free`` failures (default ``4 * free``) each attempt on the name is *delayed* by the same
      backoff (:meth:`delay_s`, the server waits before it answers) and never refused, so guesses from many
      addresses are slowed while the owner, with the right password, still gets in.

    An attempt whose password is checked off the event loop is counted before the check (:meth:`reserve`) and
    settled after it (:meth:`settle`, :meth:`release`), so attempts in flight together count as they would one
    after another. Refusals (:meth:`wait_s`) come only from the first two, both tied to the guesser's own address. A success
    clears the pair and the name; entries are forgotten ``forget_s`` after their last failure. Addresses and
    names are held in memory only (at most ``max_keys`` of each kind, oldest dropped first).

    **Device cookies** (:class:`DeviceCookies`): an attempt that presents a valid device cookie entry for that
    very name (its ``device`` id) is exempt from the address's block, so the owner sharing a guesser's address
    (a NAT, a proxy, an ``ssh -L`` tunnel) still gets in from a browser it signed in from before. Its failures
    count for the pair and the name as any others, and for that device instead of the address; after
    ``device_free`` failures the device id is exempt no more until the process restarts (a copied or stolen
    cookie is worth that many guesses), and its attempts are blocked and counted with its address's like any
    other. Worn-out device ids are held in memory (at most ``max_keys``); a success issues a new id
    (:meth:`DeviceCookies.issue`), which starts again.
    """

    def __init__(self, *, free: int = 5, base_s: float = 1.0, max_delay_s: float = 30.0, forget_s: float = 900.0,
                 max_keys: int = 50_000, clock: Callable[[], float] = time.monotonic, account_free: int | None = None,
                 address_limit: int | None = None, address_window_s: float = 900.0, device_free: int = 5):
        self.free, self.base_s, self.max_delay_s, self.forget_s = free, base_s, max_delay_s, forget_s
        self.account_free = 4 * free if account_free is None else account_free
        self.address_limit = 4 * free if address_limit is None else address_limit
        self.address_window_s = address_window_s
        self.max_keys = max_keys
        self.clock = clock
        self.failures: OrderedDict[tuple[str, str], _Failures] = OrderedDict()
        self.accounts: OrderedDict[str, _Failures] = OrderedDict()
        self.addresses: OrderedDict[str, deque[float]] = OrderedDict()
        self.device_free = device_free
        self.devices: OrderedDict[tuple[str, str], _Failures] = OrderedDict()
        #: device ids worn out by ``device_free`` failures, apart from the counts: pushing one out of this table takes
        #: ``max_keys`` other worn-out ids (that many times ``device_free`` failures), not any ``max_keys`` attempts
        self.worn: OrderedDict[tuple[str, str], None] = OrderedDict()

    @staticmethod
    def key(name: str, client: str | None) -> tuple[str, str]:
        return normalise_name(name), client or "-"

    def trusted(self, name: str, device: str | None) -> bool:
        """Whether ``device`` (the id of a valid device cookie entry for ``name``, None without one) still exempts
        its attempts on ``name`` from the address's block: it failed fewer than ``device_free`` times."""
        if device is None or (normalise_name(name), device) in self.worn:
            return False
        entry = self.devices.get((normalise_name(name), device))
        return entry is None or entry.count < self.device_free

    def wait_s(self, name: str, client: str | None, device: str | None = None) -> float:
        """Seconds before this (name, client) may try again; 0 when it may try now (then :meth:`delay_s` applies).
        ``device``: the id of the attempt's valid device cookie entry for ``name``, which, while
        :meth:`trusted`, lifts the address's block (the pair's backoff stays)."""
        pair = self._wait(self.failures, self.key(name, client), self.free)
        return pair if self.trusted(name, device) else max(self._address_wait(client or "-"), pair)

    def delay_s(self, name: str) -> float:
        """Seconds the server waits before answering an attempt on ``name`` (right password or wrong): the
        per-name backoff, which slows guesses from everywhere and never refuses the owner."""
        return self._wait(self.accounts, normalise_name(name), self.account_free, since_last=False)

    def _address_wait(self, client: str) -> float:
        times = self.addresses.get(client)
        if not times:
            return 0.0
        now = self.clock()
        while times and now - times[0] >= self.address_window_s:
            times.popleft()
        if len(times) < self.address_limit:
            return 0.0
        return self.address_window_s - (now - times[0])

    def _wait(self, table: OrderedDict[Any, _Failures], key: object, free: int, *, since_last: bool = True) -> float:
        entry = table.get(key)
        if entry is None:
            return 0.0
        elapsed = self.clock() - entry.last
        if elapsed > self.forget_s:
            del table[key]
            return 0.0
        if entry.count < free:
            return 0.0
        delay = min(self.max_delay_s, self.base_s * 2.0 ** (entry.count - free))
        return max(0.0, delay - elapsed) if since_last else delay

    def failed(self, name: str, client: str | None, device: str | None = None) -> float:
        """A wrong password: counted for the pair and the name, and for the address, or, when the attempt came
        with a :meth:`trusted` device, for that device instead. Returns the time it was counted at."""
        trusted, now = self.trusted(name, device), self.clock()
        self._count(self.failures, self.key(name, client), now)
        self._count(self.accounts, normalise_name(name), now)
        if trusted and device is not None:
            key = (normalise_name(name), device)
            self._count(self.devices, key, now)
            if self.devices[key].count >= self.device_free:
                self.worn[key] = None
                while len(self.worn) > self.max_keys:
                    self.worn.popitem(last=False)
            return now
        times = self.addresses.pop(client or "-", None) or deque()
        times.append(now)
        while len(times) > self.address_limit:
            times.popleft()
        self.addresses[client or "-"] = times
        while len(self.addresses) > self.max_keys:
            self.addresses.popitem(last=False)
        return now

    def _count(self, table: OrderedDict[Any, _Failures], key: object, now: float) -> None:
        entry = table.pop(key, None)
        table[key] = _Failures((entry.count if entry else 0) + 1, now)
        while len(table) > self.max_keys:
            table.popitem(last=False)

    @staticmethod
    def _uncount(table: OrderedDict[Any, _Failures], key: object) -> None:
        entry = table.get(key)
        if entry is not None:
            entry.count -= 1
            if entry.count <= 0:
                del table[key]

    def reserve(self, name: str, client: str | None, device: str | None = None) -> Reserved | float:
        """Let an attempt through and count it as a failure at once, or refuse it: the seconds to wait.

        The password is checked off the event loop (:func:`password_check`), so other attempts are let through
        while it runs; counting each one before its check means attempts sent together are held to the same
        limits as attempts sent one after another. :meth:`settle` takes the count back when the password was
        right, :meth:`release` when no answer came (an error)."""
        wait = self.wait_s(name, client, device)
        if wait > 0:
            return wait
        counted_for = device if self.trusted(name, device) else None
        return Reserved(name, client, counted_for, self.failed(name, client, device))

    def release(self, attempt: Reserved) -> None:
        """Take back the failure :meth:`reserve` counted for ``attempt``, exactly (its pair, name, and address or
        device)."""
        self._uncount(self.failures, self.key(attempt.name, attempt.client))
        self._uncount(self.accounts, normalise_name(attempt.name))
        if attempt.device is not None:
            key = (normalise_name(attempt.name), attempt.device)
            self._uncount(self.devices, key)
            entry = self.devices.get(key)
            if entry is None or entry.count < self.device_free:
                self.worn.pop(key, None)
            return
        times = self.addresses.get(attempt.client or "-")
        if times is not None and attempt.at in times:
            times.remove(attempt.at)

    def settle(self, attempt: Reserved, right: bool) -> None:
        """The password of a reserved attempt was checked: a wrong one stays counted; a right one is no failure
        (its count is taken back) and clears the pair and the name (:meth:`succeeded`)."""
        if right:
            self.release(attempt)
            self.succeeded(attempt.name, attempt.client)

    def succeeded(self, name: str, client: str | None) -> None:
        """A right password: the pair and the name start again (the address's failures stay, as they happened)."""
        self.failures.pop(self.key(name, client), None)
        self.accounts.pop(normalise_name(name), None)


@dataclass(frozen=True)
class Reserved:
    """A sign-in attempt :meth:`LoginThrottle.reserve` let through, counted as a failure until it is settled."""

    name: str
    client: str | None
    device: str | None  # the trusted device its failure was counted for; None: counted for the address
    at: float  # when it was counted (the throttle's clock)


#: Threads that check passwords, apart from the threads that serve synchronous routes: scrypt takes about 40 ms of
#: CPU and 16 MiB a check, and releases the GIL, so checks run here and the event loop goes on answering; a flood of
#: sign-ins queues here instead of taking every thread the pages need.
PASSWORD_THREADS = ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1), thread_name_prefix="commet-password")

R = TypeVar("R")


async def password_check(check: Callable[..., R], *args: Any) -> R:
    """``check(*args)`` (a password hash or verification) run in :data:`PASSWORD_THREADS`, not on the event loop."""
    return await asyncio.get_running_loop().run_in_executor(PASSWORD_THREADS, functools.partial(check, *args))


async def throttled_check(throttle: LoginThrottle, name: str, client: str | None, check: Callable[[], R],
                          device: str | None = None) -> tuple[R | None, float]:
    """A password check under ``throttle``: ``(check's answer, 0)`` when it was let through, ``(None, seconds to
    wait)`` when it was refused. The attempt is counted before the check runs off the loop (:meth:`LoginThrottle.
    reserve`), so attempts sent at once never pass the limits together; a falsy answer (None, False) is a wrong
    password, any other a right one."""
    reserved = throttle.reserve(name, client, device)
    if not isinstance(reserved, Reserved):
        return None, reserved
    try:
        answer = await password_check(check)
    except BaseException:
        throttle.release(reserved)
        raise
    throttle.settle(reserved, bool(answer))
    return answer, 0.0


def client_address(request: Request) -> str | None:
    """The peer address, for the sign-in throttle only (never logged or stored).

    The server (``serve_web_app``) reads ``X-Forwarded-For`` only from the proxies ``--forwarded-allow-ips``
    names; otherwise this is the TCP peer, whatever headers the request carries."""
    return request.client.host if request.client else None


#: Host names a server bound to a loopback or wildcard address is reached by on this machine.
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
_WILDCARDS = ("", "0.0.0.0", "::", "*")


def host_name(header: str) -> str | None:
    """The host of a ``Host`` header (port and brackets removed, lower case, no trailing dot); None if malformed."""
    value = header.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        rest = value[end + 1:] if end > 0 else "?"
        if end < 0 or rest and not (rest.startswith(":") and rest[1:].isdigit()):
            return None
        return value[1:end]
    name, colon, port = value.partition(":")
    if colon and not port.isdigit() or not name or any(c in name for c in "/\\@ \t?#"):
        return None
    return name.rstrip(".")


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class AllowedHosts:
    """The host names a served app answers to; any other ``Host`` is refused (DNS rebinding).

    A page on another site can make a browser send requests to 127.0.0.1 under the attacker's
    own name (its DNS answer changed to 127.0.0.1 after the page loaded): the browser then treats
    the app as that site's, and reads its answers. Such a request carries the attacker's name in
    ``Host``, which no name of this server matches.
    """

    names: frozenset[str]
    suffixes: tuple[str, ...] = ()
    any_address: bool = False  # a server bound to every interface: any IP literal (a name is never rebinding-free)
    anything: bool = False  # ``--allowed-hosts '*'``: the check is off

    @classmethod
    def for_server(cls, host: str, extra: list[str] | tuple[str, ...] = ()) -> AllowedHosts:
        """What a server listening on ``host`` answers to: that address or name, this machine's loopback names
        when it listens on loopback or every interface, and ``extra`` (``--allowed-hosts``: names, ``*.domain``,
        or ``*`` for any)."""
        bound = host.strip().strip("[]").lower().rstrip(".")
        names = {bound} if bound not in _WILDCARDS else set()
        loopback = bound in _WILDCARDS or bound == "localhost" or _is_ip(bound) and ipaddress.ip_address(bound).is_loopback
        if loopback:
            names.update(LOOPBACK_NAMES)
        suffixes = []
        for entry in extra:
            entry = entry.strip().lower().rstrip(".")
            if entry.startswith("*.") and len(entry) > 2:
                suffixes.append(entry[1:])
            elif entry and entry != "*":
                names.add(entry.strip("[]"))
        return cls(frozenset(names), tuple(suffixes), any_address=bound in _WILDCARDS,
                   anything="*" in (e.strip() for e in extra))

    def allows(self, header: str | None) -> bool:
        if self.anything:
            return True
        name = host_name(header) if header is not None else None
        if name is None:
            return False
        return name in self.names or name.endswith(self.suffixes) or self.any_address and _is_ip(name)


class HostAllowList:
    """ASGI middleware: 400 for a request whose ``Host`` this server does not answer to (:class:`AllowedHosts`),
    before it reaches the app (no page, no cookie, no sign-in)."""

    def __init__(self, app: ASGIApp, allowed: AllowedHosts):
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            hosts = [value for key, value in scope.get("headers") or [] if key == b"host"]
            if len(hosts) != 1 or not self.allowed.allows(hosts[0].decode("latin-1")):
                if scope["type"] == "http":
                    await _plain(send, 400, b"this server does not answer to that host name (Host header refused); "
                                            b"its operator can add it with --allowed-hosts")
                else:
                    await send({"type": "websocket.close", "code": 1008})
                return
        await self.app(scope, receive, send)


class UploadTooLarge(CommetError, ValueError):
    """The upload declares more pixels than allowed (a decompression bomb): answered with 413."""


class NotAPicture(CommetError, ValueError):
    """The upload is not a picture Pillow can decode."""


def decode_picture(data: bytes, *, max_pixels: int = MAX_UPLOAD_PIXELS) -> bytes:
    """``data`` decoded and re-encoded as PNG, refusing pictures over ``max_pixels`` before decoding them.

    Opened by :func:`commet.format.pictures.opened_picture` (the check every dataset picture passes), so a
    side too long to resize or pixels too large for memory are refused from the header too; Pillow's own
    bomb guard is answered the same way."""
    too_large = f"at most {max_pixels:,} pixels and {MAX_IMAGE_SIDE:,} a side are accepted"
    try:
        with bombs_refused(), opened_picture(data, max_pixels=max_pixels, formats=None) as image:
            image.load()
            converted = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    except PictureTooLargeToRead as exc:
        raise UploadTooLarge(f"the picture is {exc.size[0]}x{exc.size[1]} pixels; {too_large}" if exc.size
                              else f"the picture declares far too many pixels; {too_large}") from None
    except PictureError:
        raise NotAPicture("that file is not a picture") from None
    out = io.BytesIO()
    converted.save(out, format="PNG")
    return out.getvalue()


def csv_safe(value: object) -> object:
    """``value`` with a leading ``'`` when it is text a spreadsheet would run as a formula (OWASP)."""
    if isinstance(value, str) and value.startswith(FORMULA_LEADS):
        return "'" + value
    return value


def templates(folder: Path) -> Jinja2Templates:
    """Jinja2 templates with autoescaping on for every file."""
    environment = Jinja2Templates(directory=str(folder))
    environment.env.autoescape = True
    return environment


SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # same-origin, not no-referrer: with no-referrer a browser sends "Origin: null" on form posts
    "Referrer-Policy": "same-origin",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
                               "script-src 'self'; form-action 'self'; frame-ancestors 'none'",
    # no other origin may embed an answer (a picture, a style sheet): a page on another port of the same host is the
    # same site, so its browser sends the session cookie, and a picture that loads would tell it who is signed in
    "Cross-Origin-Resource-Policy": "same-origin",
    # a window of another origin that opened the app (or that the app opened) gets no handle on it
    "Cross-Origin-Opener-Policy": "same-origin",
}
