"""What both web apps (expert review, human study) share: sessions, CSRF, origins, limits, exports.

* A signed-in session lives on the server, in a ``web_sessions`` table of the app's own SQLite
  file; the cookie holds only a random token (HttpOnly, SameSite=Lax) and the table only its
  SHA-256. Signing out deletes the row, and a password change deletes every row of that
  account, so a copied cookie stops working at once (:class:`Sessions`). An anonymous visitor
  (a sign-in form, a study participant) gets no row at all: its few values (the CSRF token, a
  message) travel in the cookie itself, signed with HMAC-SHA256 under a random key kept in the
  store, so page loads cannot fill the store.
* Every POST form carries a CSRF token bound to the session (:func:`csrf_token`,
  :func:`check_csrf`; for an anonymous visitor a signed double-submit cookie); what every request meets before
  a route sees it (other sites' POSTs, header and body limits, Secure cookies over HTTPS, host names) is
  :mod:`commet.apps.guards`.
* Names are compared in one normal form everywhere (:func:`normalise_name`: NFKC, stripped,
  casefolded), for sign-in and for its throttle alike.
* Signing in (passwords, the sign-in throttle, device cookies, password checks off the event loop) is
  :mod:`commet.apps.signin`, built on this module's signed cookies and store keys.
* A store that fails under a request (full disk, lock, damaged file) is a 503 page, not a server error
  (:func:`store_unavailable`).
* Files are served only through :mod:`commet.apps.files` (one confinement function).
* Uploaded pictures are decoded under a pixel limit (:func:`decode_picture`); a
  decompression bomb is refused with 413 before its pixels are allocated.
* CSV and spreadsheet exports escape cells that a spreadsheet would run as a formula
  (:func:`csv_safe`, OWASP "CSV injection").
* Requests can be rate-limited per key (:class:`RateLimiter`). Templates autoescape, so story text can never inject markup.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
import json
import logging
import secrets
import sqlite3
import time
import unicodedata
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeGuard
from urllib.parse import urlsplit

from fastapi import HTTPException, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException

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


def cookie_body(value: object) -> str:
    """``value`` as compact JSON in unpadded URL-safe base64: the body of a signed cookie."""
    return base64.urlsafe_b64encode(json.dumps(value, separators=(",", ":")).encode()).decode().rstrip("=")


def cookie_signature(key: bytes, context: str, body: str) -> str:
    """HMAC-SHA256 of a signed cookie's body under the store's key, bound to ``context`` (which cookie it is)."""
    digest = hmac.new(key, f"{context}|{body}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def opened_cookie(key: bytes, context: str, value: str, max_chars: int) -> object:
    """What a signed cookie's ``body.signature`` holds; None when it is malformed, too long, or its signature is not
    this store's for ``context`` (forged, altered, another store's or another cookie's)."""
    body, dot, signature = value.partition(".")
    if not dot or len(body) > max_chars + 8 or not hmac.compare_digest(
            signature.encode(), cookie_signature(key, context, body).encode()):
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
            body = cookie_body({"t": time.time(), "d": kept})
            if len(body) <= MAX_SIGNED_CHARS or not kept:
                break
            kept.pop(next((k for k in kept if k != "csrf"), "csrf"))
        return f"{SIGNED_PREFIX}{body}.{cookie_signature(self._key, self.cookie, body)}"

    def _unsigned(self, value: str) -> dict[str, str]:
        """The values of an anonymous session's cookie; {} when it is forged, altered or too old."""
        saved = opened_cookie(self._key, self.cookie, value.removeprefix(SIGNED_PREFIX), MAX_SIGNED_CHARS)
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


#: SQLite's words for a store that cannot be used right now, and what a visitor is told of each
_STORE_TROUBLE = {"disk is full": "its disk is full", "disk i/o error": "it could not read or write its data; a "
                  "full disk does this too", "is locked": "its data is busy in another program",
                  "readonly": "its data cannot be written", "unable to open": "its data cannot be opened",
                  "malformed": "its data is damaged", "not a database": "its data is damaged"}


#: the session key holding where a reviewer was when the session ended, to go back to after signing in
AFTER_SIGN_IN = "after_sign_in"
#: pages a sign-in never leads back to (itself, signing out)
_NOT_BACK_TO = ("/login", "/logout")


def local_path(target: str | None) -> TypeGuard[str]:
    """Whether ``target`` is a path of this app to send a browser to: one leading ``/`` (``//host`` and ``/\\host``
    are other sites to a browser), printable, of reasonable length, and not the sign-in or sign-out page: a redirect
    from user-controlled text never leaves the app (no open redirect)."""
    if not target or len(target) > 2000 or not target.startswith("/") or target[1:2] in ("/", "\\"):
        return False
    if any(ord(ch) < 0x21 or ord(ch) == 0x7F for ch in target):
        return False
    return urlsplit(target).path not in _NOT_BACK_TO


def same_origin_path(referer: str | None, request: Request) -> str | None:
    """The path and query of ``referer`` when it is a page of this app (same scheme, host and port), else None."""
    if not referer:
        return None
    parts = urlsplit(referer)
    if (parts.scheme, parts.netloc) != (request.url.scheme, request.url.netloc):
        return None
    return parts.path + (f"?{parts.query}" if parts.query else "")


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
