"""Real HTTP servers on 127.0.0.1 speaking the providers' wire formats, for tests.

``FakeServer`` runs a ``ThreadingHTTPServer`` in a daemon thread, records every request
(method, path, headers, JSON body, arrival time) and answers first from a script of queued
:class:`Reply` objects, then from a responder function (default: a success reply in the
chosen provider's format). Nothing leaves the machine.

Faults a :class:`Reply` can script besides an error status: ``delay`` (answer late),
``hang`` (never answer: hold the connection until the server stops, then drop it) and
``truncate`` (announce the whole body's ``Content-Length``, send only its first
``truncate`` bytes and close the connection). A body given as ``bytes`` is sent as is, so
a well-framed but cut JSON document is ``Reply(body=b'{"choices": [')``.
"""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    #: never answer; the connection is dropped when the server stops
    hang: bool = False
    #: send only this many bytes of the body (Content-Length still announces all of it), then close
    truncate: int | None = None


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    raw: bytes
    #: ``time.monotonic()`` when the request had been read
    at: float = 0.0
    #: ``time.monotonic()`` when its headers had been read, before its body (a body of pictures on a loaded machine
    #: is read long after the client started to send it)
    started: float = 0.0

    @property
    def json(self) -> Any:
        return json.loads(self.raw or b"null")


# ----------------------------------------------------------------------------- wire formats


def openai_reply(text: str = "Apple", *, finish_reason: str = "stop", prompt_tokens: int = 11,
                 completion_tokens: int = 3, model: str = "fake", refusal: str | None = None) -> Reply:
    return Reply(body={
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "finish_reason": finish_reason,
                     "message": {"role": "assistant", "content": text, "refusal": refusal}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    })


def anthropic_reply(text: str = "Apple", *, stop_reason: str = "end_turn", input_tokens: int = 12,
                    output_tokens: int = 4, model: str = "fake") -> Reply:
    return Reply(body={
        "id": "msg_1", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": text}], "stop_reason": stop_reason, "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    })


def google_reply(text: str = "Apple", *, finish_reason: str = "STOP", prompt_tokens: int = 13,
                 output_tokens: int = 5, block_reason: str | None = None) -> Reply:
    body: dict[str, Any] = {
        "usageMetadata": {"promptTokenCount": prompt_tokens, "candidatesTokenCount": output_tokens,
                          "totalTokenCount": prompt_tokens + output_tokens},
        "modelVersion": "fake",
    }
    if block_reason:
        body["promptFeedback"] = {"blockReason": block_reason}
    else:
        body["candidates"] = [{"content": {"role": "model", "parts": [{"text": text}]},
                               "finishReason": finish_reason, "index": 0}]
    return Reply(body=body)


def error_reply(status: int, message: str = "error", *, headers: dict[str, str] | None = None,
                style: str = "openai") -> Reply:
    if style == "anthropic":
        body: Any = {"type": "error", "error": {"type": "api_error", "message": message}}
    elif style == "google":
        body = {"error": {"code": status, "message": message, "status": "ERROR"}}
    else:
        body = {"error": {"message": message, "type": "error", "code": None}}
    return Reply(status=status, body=body, headers=headers or {})


DEFAULT_REPLIES: dict[str, Callable[[], Reply]] = {
    "openai": openai_reply, "anthropic": anthropic_reply, "google": google_reply,
}


# ----------------------------------------------------------------------------- server


class FakeServer:
    """``with FakeServer("openai") as server: ... server.url ... server.requests``."""

    def __init__(self, style: str = "openai", responder: Callable[[RecordedRequest], Reply] | None = None,
                 *, tls: ssl.SSLContext | None = None):
        self.style = style
        self.tls = tls  # serve https with this server context
        self.responder = responder or (lambda request: DEFAULT_REPLIES[style]())
        self.script: deque[Reply] = deque()
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def queue(self, *replies: Reply) -> FakeServer:
        self.script.extend(replies)
        return self

    @property
    def port(self) -> int:
        assert self._server is not None
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        started = time.monotonic()
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        request = RecordedRequest(handler.command, handler.path, {k.lower(): v for k, v in handler.headers.items()},
                                  raw, time.monotonic(), started)
        with self._lock:
            self.requests.append(request)
            reply = self.script.popleft() if self.script else None
        if reply is None:
            reply = self.responder(request)
        if reply.delay:
            time.sleep(reply.delay)
        if reply.hang:
            self._stopping.wait(60.0)
            handler.close_connection = True
            return
        payload = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
        try:
            handler.send_response(reply.status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(payload)))
            for key, value in reply.headers.items():
                handler.send_header(key, value)
            handler.end_headers()
            if reply.truncate is not None:
                handler.wfile.write(payload[: reply.truncate])
                handler.wfile.flush()
                handler.close_connection = True
                return
            handler.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout tests)

    def start(self) -> FakeServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802
                owner._handle(self)

            do_GET = do_POST  # noqa: N815

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self._stopping.clear()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        if self.tls is not None:
            self._server.socket = self.tls.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # release hanging handlers
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
