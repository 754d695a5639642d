"""Signing in, shared by both web apps: passwords, the sign-in throttle, device cookies.

* Passwords are hashed with scrypt and a random salt (:func:`hash_password`); an unknown name costs one scrypt
  run, as a known one does (:func:`unknown_user_hash`).
* Failed sign-ins are throttled per client address first, then per (name, client) with a capped exponential
  backoff, and per name by a delay that never refuses (:class:`LoginThrottle`): a guesser elsewhere never locks the
  owner out. A browser a reviewer signed in from holds a signed device cookie for that name
  (:class:`DeviceCookies`), which exempts its sign-ins from its address's block. The client address is used in
  memory for this only and never stored (:func:`client_address`).
* Password checks run in their own threads, off the event loop (:func:`password_check`), each attempt counted by
  the throttle before its check (:func:`throttled_check`), so the loop keeps answering and attempts sent together
  never pass the limits together.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import hmac
import os
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from fastapi import Request, Response

from commet.apps.web import cookie_body, cookie_signature, normalise_name, opened_cookie, store_key


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
        listed = opened_cookie(self._key, f"device|{self.cookie}", value.removeprefix(DEVICE_PREFIX), MAX_DEVICE_CHARS)
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
            body = cookie_body(entries)
            if len(body) <= MAX_DEVICE_CHARS or len(entries) == 1:
                break
            entries.pop()
        if len(body) > MAX_DEVICE_CHARS:
            return  # a name too long to keep (NFKC can lengthen one): no exemption, nothing else lost
        signed = f"{DEVICE_PREFIX}{body}.{cookie_signature(self._key, f'device|{self.cookie}', body)}"
        response.set_cookie(self.cookie, signed, max_age=self.max_age_s,
                            path=self.path, httponly=True, samesite="strict", secure=self.secure)
