"""The guards every CoMMET web app stands behind (:func:`guarded_app`): ASGI middlewares that refuse a request
before any route sees it.

* POSTs whose ``Origin`` (or, without one, ``Referer``) names another site are refused (:class:`SameOriginPosts`);
* request headers and bodies are bounded (:class:`HeaderSizeLimit`, 431; :class:`BodySizeLimit`, 413);
* HEAD is answered as GET, so every layer below sees a GET (:class:`HeadAsGet`);
* cookies set over HTTPS are marked Secure (:class:`SecureCookiesOverHttps`);
* a server answers only the host names it was started for (:class:`AllowedHosts`, :class:`HostAllowList`: DNS
  rebinding).

Their own module, apart from sessions and stores (:mod:`commet.apps.web`): they read only the request's headers.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI, HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send


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


async def _plain(send: Send, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


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
