"""``openai:MODEL``: OpenAI and every OpenAI-compatible chat server (vLLM, SGLang, Ollama, LM Studio).

Uses the official ``openai`` SDK (``AsyncOpenAI``) with its own retries switched off; the
run's single retry/timeout policy is :mod:`commet.models.retry`, its rate limits :mod:`commet.models.ratelimit`.

Options (query string of the spec):

* ``base_url``: server root, e.g. ``http://127.0.0.1:8000/v1``. With a ``base_url`` and no
  key in the environment a dummy key is sent (local servers ignore it). Several roots,
  comma-separated (``base_url=http://a:8000/v1,http://b:8000/v1``), spread the requests over
  replicas by least outstanding work and take failing ones out for a while
  (:mod:`commet.models.endpoints`).
* ``api_key_env``: environment variable holding the key (default ``OPENAI_API_KEY``).
* ``image_detail``: ``auto`` / ``low`` / ``high``, sent with every picture (changes outputs).
* ``reasoning_effort``: passed through for reasoning models (changes outputs).
* ``token_param``: ``max_tokens`` or ``max_completion_tokens``. Default:
  ``max_completion_tokens`` on the official endpoint (newer models reject ``max_tokens``),
  ``max_tokens`` for a custom ``base_url`` (what most compatible servers understand).
* ``transport``: ``direct`` (default when aiohttp is installed) or ``sdk``, see below.
* transport: ``timeout``, ``max_attempts``, ``backoff_base``, ``backoff_max``, ``rpm``, ``tpm``,
  ``price_in``, ``price_out``.

Two transports, the same requests. With ``transport=sdk`` every call goes through the SDK
client's ``client.post``. With ``transport=direct`` (the default) the body is POSTed over one
aiohttp session to the URL and with the headers the SDK client would use (key, organisation,
project, user agent, platform headers): the SDK's per-request machinery (options model, URL and
header merge, httpx request, auth hook, response wrapper) costs about 2 ms of CPU per call,
more than a whole call's budget when a local server answers hundreds of calls a second
(``bench/bench_openai_server.py``). That URL and those headers are computed the way the SDK
computes them (:func:`sdk_target`) without importing it: ``import openai`` alone costs about
a second of CPU at start-up. A configuration this does not reproduce with certainty (a
``base_url`` the SDK would normalise) builds the SDK client and takes them from it. Tests
check that both transports send the same bytes and headers and meet faults the same way, and
that the computed headers equal the SDK client's.

Pictures travel as ``data:`` URLs in ``image_url`` content parts, in the order of the
message's parts. A ``content_filter`` finish or a ``refusal`` field is a non-retryable
``ModelCallError(kind="refusal")``.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from commet.errors import CommetError
from commet.extras import install_command
from commet.models import base
from commet.models.endpoints import Endpoint, EndpointPool
from commet.models.errors import classify
from commet.models.remote import RemoteModel, RemoteService

if TYPE_CHECKING:
    import ssl as ssl_module

    import aiohttp


def data_url(part: base.ImagePart) -> str:
    return f"data:{part.mime};base64,{part.base64}"


#: stand for a picture's data URL and for the messages while a body is JSON-encoded (nonces: no text can hold them
#: by chance); a picture's mark names its message and its part
_PICTURE_MARK = f"commet-picture-{secrets.token_hex(8)}-"
_PICTURE_SLOT = re.compile(f'"{_PICTURE_MARK}(\\d+)\\.(\\d+)"')
_MESSAGES_MARK = f"commet-messages-{secrets.token_hex(8)}"
#: ``json.dumps(value, ensure_ascii=False)``, as the SDK encodes a body, without making an encoder at each call
_body_json = json.JSONEncoder(ensure_ascii=False).encode
#: one string as that encoder writes it (the function it calls for every string)
_string_json = json.encoder.encode_basestring


def body_ends(params: dict[str, Any]) -> tuple[str, str]:
    """The JSON of a body's every field but its messages (``params["messages"]`` only keeps their place), as the
    two texts before and after the messages (:func:`json_body` joins the messages between)."""
    head, _, tail = _body_json({**params, "messages": _MESSAGES_MARK}).partition(f'"{_MESSAGES_MARK}"')
    return head, tail


def json_body(ends: tuple[str, str], messages: Sequence[base.Message],
              message_json: Callable[[base.Message, int], str]) -> bytes:
    """``json.dumps({**params, "messages": <the messages>}, ensure_ascii=False)`` as UTF-8, byte for byte, made from
    the other fields' JSON (``ends``: :func:`body_ends` of ``params``), each message's own JSON
    (``message_json(message, index)``, with a mark for each picture) and each picture's data URL.

    Every later turn of a conversation (and every judge call) sends the earlier messages and pictures again:
    each message keeps its JSON (:meth:`OpenAIChatModel.message_json`), so the encoder sees a message once, and the
    data URLs (base64 needs no escaping; made once per picture, ``ImagePart.base64``) are joined in as bytes
    (at 1 MB a picture, the encoder's scan of its base64 was about 5 ms per picture and call).
    """
    head, tail = ends
    text = f"{head}[{', '.join([message_json(message, i) for i, message in enumerate(messages)])}]{tail}"
    if _PICTURE_MARK not in text:
        return text.encode()
    pieces = _PICTURE_SLOT.split(text)  # text, message index, part index, text, ..., text
    out = []
    for i in range(0, len(pieces) - 1, 3):
        out += [pieces[i].encode(), _url_json(messages[int(pieces[i + 1])].parts[int(pieces[i + 2])])]
    out.append(pieces[-1].encode())
    return b"".join(out)


def message_body_json(message: base.Message, index: int, image_detail: str | None) -> str:
    """One message of a Chat Completions body as the JSON encoder writes it (``ensure_ascii=False``), each picture
    a mark naming ``index`` and its part (:func:`json_body` puts the data URL in its place)."""
    parts = message.parts
    if len(parts) == 1 and isinstance(parts[0], base.TextPart):  # most messages: as the encoder writes them
        return f'{{"role": {_string_json(message.role)}, "content": {_string_json(parts[0].text)}}}'

    def mark(part: base.ImagePart) -> str:
        return f"{_PICTURE_MARK}{index}.{next(positions)}"

    positions = (j for j, part in enumerate(message.parts) if isinstance(part, base.ImagePart))
    return _body_json(to_openai_messages((message,), image_detail=image_detail, url=mark)[0])


def _url_json(part: base.Part) -> bytes:
    """A picture's data URL as the JSON encoder writes it: only the media type can need escaping."""
    assert isinstance(part, base.ImagePart)
    return f'"data:{_string_json(part.mime)[1:-1]};base64,{part.base64}"'.encode()


def to_openai_messages(messages: Sequence[base.Message], *, image_detail: str | None = None,
                       url: Callable[[base.ImagePart], str] = data_url) -> list[dict[str, Any]]:
    """Chat Completions messages: plain strings for text-only turns, content parts with pictures."""
    def image_block(part: base.ImagePart) -> dict[str, object]:
        image = {"url": url(part)}
        if image_detail:
            image["detail"] = image_detail
        return {"type": "image_url", "image_url": image}

    out: list[dict[str, Any]] = []
    for message in messages:
        pictures = message.images
        if not pictures or message.role != "user":
            if pictures:
                raise base.ModelCallError(f"pictures are only supported in user messages, not {message.role}",
                                          kind="bad_request")
            out.append({"role": message.role, "content": message.text_content})
            continue
        out.append({"role": message.role, "content": message.blocks(image_block, base.text_block)})
    return out


class OpenAIService(RemoteService):
    """The OpenAI API (or a compatible server) as chat and picture models reach it: the key variable and the SDK."""

    provider = "openai"
    default_key_envs = ("OPENAI_API_KEY",)
    sdk_module = "openai"


class OpenAIChatModel(OpenAIService, RemoteModel):
    output_options = frozenset({"image_detail", "reasoning_effort"})
    transport_options = frozenset({"token_param", "transport"})
    many_endpoints = True

    def __init__(self, name: str, options: Mapping[str, str]):
        super().__init__(name, options)
        detail = self.options.get("image_detail")
        if detail not in (None, "auto", "low", "high"):
            raise base.ModelSpecError("openai: image_detail must be auto, low or high")
        self.image_detail = detail
        default_param = "max_tokens" if self.base_url else "max_completion_tokens"
        self.token_param = self.options.get("token_param", default_param)
        if self.token_param not in ("max_tokens", "max_completion_tokens"):
            raise base.ModelSpecError("openai: token_param must be max_tokens or max_completion_tokens")
        has_aiohttp = _has_aiohttp()
        transport = self.options.get("transport", "direct" if has_aiohttp else "sdk")
        if transport not in ("direct", "sdk"):
            raise base.ModelSpecError("openai: transport must be direct or sdk")
        if transport == "direct" and not has_aiohttp:
            raise base.ModelSpecError(f"openai: transport=direct needs aiohttp: {install_command('openai')}")

        def connect(base_url: str | None) -> tuple[Any, DirectChatTransport | None]:
            target = sdk_target(self.api_key, base_url) if transport == "direct" else None
            if target is not None:  # the SDK client's URL and headers, without importing the SDK
                return None, DirectChatTransport(target.url, lambda: target.headers)
            import openai

            if transport == "direct":
                http_client = _idle_http_client(openai)
            else:
                # aiohttp (the SDK's ``openai[aiohttp]`` transport) costs about half the client CPU per
                # call of the default httpx pool at high concurrency (bench/bench_openai_server.py).
                http_client = openai.DefaultAioHttpClient() if has_aiohttp else openai.DefaultAsyncHttpxClient()
            client = openai.AsyncOpenAI(api_key=self.api_key, base_url=base_url, max_retries=0,
                                        timeout=self.policy.timeout, http_client=http_client)
            if transport != "direct":
                return client, None
            return client, DirectChatTransport(f"{str(client.base_url).rstrip('/')}/chat/completions",
                                               lambda: {**client.default_headers, **client.auth_headers})

        self.pool: EndpointPool[tuple[Any, DirectChatTransport | None]] = EndpointPool(
            [Endpoint(url or "default", connect(url)) for url in self._endpoint_urls()])
        self._client, self._direct = self.pool.endpoints[0].client
        self._encoding = ("openai", self.image_detail)  # this model's key in ``Message.encodings``
        #: by ``id`` of a request's settings: those settings and the body's fields around its messages
        self._body_ends: dict[int, tuple[base.GenerationSettings, tuple[str, str]]] = {}

    def _endpoint_urls(self) -> list[str | None]:
        """The base URLs to spread requests over; None: the SDK's default endpoint."""
        return [*self.base_urls] if self.base_urls else [None]

    def build_params(self, request: base.ModelRequest, url: Callable[[base.ImagePart], str] = data_url) -> dict[str, Any]:
        return self._params(request, to_openai_messages(request.messages, image_detail=self.image_detail, url=url))

    def request_body(self, request: base.ModelRequest) -> bytes:
        """``json.dumps(self.build_params(request), ensure_ascii=False)`` as UTF-8, byte for byte (:func:`json_body`).

        The fields around the messages depend only on this model and the request's settings: they are encoded
        once per settings object (a run has one for the model, one for its judge). The entry holds the object,
        so no other object can take its id while the entry is kept."""
        kept = self._body_ends.get(id(request.settings))
        if kept is None:
            if len(self._body_ends) >= 64:  # settings objects made per call (a tool): keep the newest few
                self._body_ends.clear()
            kept = self._body_ends[id(request.settings)] = (request.settings,
                                                              body_ends(self._params(request, None)))
        return json_body(kept[1], request.messages, self.message_json)

    def message_json(self, message: base.Message, index: int) -> str:
        """The message at ``index`` of a conversation as this model's body holds it (:func:`message_body_json`),
        made once per message."""
        key = (self._encoding, index)
        made = message.encodings.get(key)
        if made is None:
            made = message.encodings[key] = message_body_json(message, index, self.image_detail)
        return made

    def _params(self, request: base.ModelRequest, messages: list[dict[str, Any]] | None) -> dict[str, Any]:
        settings = request.settings
        params: dict[str, Any] = {
            "model": self.name,
            "messages": messages,
            "temperature": settings.temperature,
            self.token_param: settings.max_tokens,
        }
        if settings.top_p is not None:
            params["top_p"] = settings.top_p
        if settings.seed is not None:
            params["seed"] = settings.seed
        if self.options.get("reasoning_effort"):
            params["reasoning_effort"] = self.options["reasoning_effort"]
        return params

    async def _call(self, request: base.ModelRequest) -> base.ModelResponse:
        body = self.request_body(request)
        tried: set[str] = set()
        while True:
            endpoint = self.pool.pick(tried)
            failed = True  # a cancellation (the attempt's timeout) counts against the endpoint
            try:
                raw = await self._send(*endpoint.client, body)
                failed = False
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                failed = endpoint_failure(classify(exc)[0])
                tried.add(endpoint.url)
                if not (failed and self.pool.healthy(tried)):
                    raise
                continue  # another endpoint takes this request at once
            finally:
                self.pool.done(endpoint, failed=failed)
            return parse_completion(raw)

    def _send(self, client: Any, direct: DirectChatTransport | None, body: bytes) -> Awaitable[bytes]:
        """The post of ``body`` to await (no coroutine of its own: each layer is resumed at every wait of the post)."""
        if direct is not None:
            return direct.post(body)
        else:
            # ``client.post`` is the SDK's documented way to send a request body as is: it keeps the
            # SDK's auth, base URL, timeouts and error classes, but skips ``chat.completions.create``'s
            # recursive TypedDict transform of the messages and, with ``cast_to=bytes``, the pydantic
            # construction of the whole ChatCompletion; a body given as bytes is sent as is, without
            # the SDK's deep copy and re-serialisation of the whole conversation.
            sent: Awaitable[bytes] = client.post("/chat/completions", content=body, cast_to=bytes,
                                                 options={"headers": {"Content-Type": "application/json"}})
            return sent

    async def aclose(self) -> None:
        for endpoint in self.pool.endpoints:
            client, direct = endpoint.client
            if direct is not None:
                await direct.aclose()
            if client is not None:
                await client.close()


def endpoint_failure(error: base.ModelCallError) -> bool:
    """A failure of the endpoint rather than of the request: worth another endpoint."""
    return error.family in (base.CallErrorKind.connection, base.CallErrorKind.timeout) or (error.status or 0) >= 500


class HTTPStatusFailure(CommetError):
    """A non-2xx answer; :func:`commet.models.errors.classify` reads ``status_code`` and ``headers``."""

    def __init__(self, status: int, headers: Mapping[str, str], body: bytes):
        super().__init__(f"Error code: {status} - {body[:1000].decode('utf-8', 'replace')}")
        self.status_code = status
        self.headers = headers


#: the largest response body read (a chat completion is a few KB; 500,000 tokens of reply about 2 MB): what a
#: server sends beyond it is not read into memory, and the call fails as a bad response
MAX_BODY_BYTES = 8 * 1024 * 1024


def _too_large() -> base.ModelCallError:
    return base.ModelCallError(f"the server sent a body of more than {MAX_BODY_BYTES // (1024 * 1024)} MiB; "
                               "a chat completion is far smaller", kind="bad_response")


class DirectChatTransport:
    """POST chat completion bodies to the SDK client's URL, with its headers, over one aiohttp session.

    The session is opened on first use, inside the running event loop, and ``headers()`` is
    called then (the SDK's ``X-Stainless-Async`` header names the running async library).
    Timeouts and retries are the run's :class:`~commet.models.retry.RetryPolicy`. A proxy from
    the environment (``HTTPS_PROXY``, ``NO_PROXY``, ...) is looked up once, and https trusts
    ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` when set, else the certifi CA bundle, as the SDK's
    httpx client does.
    """

    def __init__(self, url: str, headers: Callable[[], Mapping[str, object]], *, connections: int = 1000):
        import aiohttp  # noqa: F401 - imported with the model, not on the first call's path

        self.url = url
        self._headers = headers
        self.connections = connections
        self.headers: dict[str, str] = {}
        self.proxy = env_proxy(self.url)
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        import aiohttp

        self.headers = {name: value for name, value in self._headers().items() if isinstance(value, str)}
        self.headers["Content-Type"] = "application/json"
        ssl: ssl_module.SSLContext | bool = False  # plain http: no TLS context to build
        if self.url.startswith("https:"):
            import os
            import ssl as ssl_module

            import certifi

            ssl = ssl_module.create_default_context(cafile=os.environ.get("SSL_CERT_FILE") or certifi.where(),
                                                    capath=os.environ.get("SSL_CERT_DIR") or None)
        # the headers as the session's own: a request given none copies them as they are, where headers given with
        # each request were merged into them again at every call
        self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=self.connections, ssl=ssl),
                                              timeout=aiohttp.ClientTimeout(total=None), headers=self.headers)
        return self._session

    async def post(self, body: bytes) -> bytes:
        session = self._session or self._open()
        async with session.post(self.url, data=body, proxy=self.proxy) as response:
            if (response.content_length or 0) > MAX_BODY_BYTES:
                raise _too_large()
            raw = await response.content.read(MAX_BODY_BYTES + 1)
            while len(raw) <= MAX_BODY_BYTES and (more := await response.content.read(MAX_BODY_BYTES + 1 - len(raw))):
                raw += more
            if len(raw) > MAX_BODY_BYTES:
                raise _too_large()
            if response.status >= 300:
                raise HTTPStatusFailure(response.status, response.headers, raw)
            return raw

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def create(name: str, options: dict[str, str]) -> OpenAIChatModel:
    return OpenAIChatModel(name, options)


@dataclass(frozen=True)
class ChatTarget:
    """Where a chat completion goes and the headers the SDK client sends with it."""

    url: str
    headers: dict[str, str]


#: the SDK's default endpoint (``AsyncOpenAI`` without ``base_url`` and without ``OPENAI_BASE_URL``)
OPENAI_API_BASE = "https://api.openai.com/v1"
#: a base URL the SDK (httpx's URL) keeps byte for byte: lower-case scheme and host names, a port
#: that is not the scheme's default, a path of characters kept as they are, without ``.``/``..``
#: segments or empty ones, no query, user info or fragment
_PLAIN_URL = re.compile(r"(?P<scheme>https?)://[a-z0-9-]+(?:\.[a-z0-9-]+)*(?::(?P<port>[1-9][0-9]{0,4}))?"
                        r"(?P<path>(?:/[A-Za-z0-9._~!$&'()*+,;=:@-]+)*/?)")
_DEFAULT_PORTS = {"http": "80", "https": "443"}


def plain_base_url(url: str) -> bool:
    """Whether the SDK would use ``url`` exactly as written (else it normalises it and is asked instead)."""
    match = _PLAIN_URL.fullmatch(url)
    return (match is not None and match["port"] != _DEFAULT_PORTS[match["scheme"]]
            and int(match["port"] or 0) <= 65535 and not re.search(r"/\.\.?(?:/|$)", match["path"]))


def sdk_target(api_key: str | None, base_url: str | None) -> ChatTarget | None:
    """The URL and headers ``AsyncOpenAI(api_key=..., base_url=...)`` would use, computed without importing the SDK.

    Mirrors the SDK's client (``_base_client.platform_headers``, ``default_headers``,
    ``auth_headers``, ``OPENAI_BASE_URL`` / ``OPENAI_ORG_ID`` / ``OPENAI_PROJECT_ID``), asked
    from inside an asyncio loop. None when the result could differ from the SDK's (no key, a
    base URL the SDK would normalise, an SDK whose version cannot be read): the caller then
    asks the SDK itself.
    """
    import os

    if not api_key:
        return None
    base = base_url if base_url is not None else os.environ.get("OPENAI_BASE_URL") or OPENAI_API_BASE
    if not plain_base_url(base):
        return None
    version = _sdk_version()
    if version is None:
        return None
    headers = {"Accept": "application/json", "Content-Type": "application/json",
               "User-Agent": f"AsyncOpenAI/Python {version}", **_platform_headers(version),
               "X-Stainless-Async": "async:asyncio"}  # aiohttp runs only in asyncio
    for header, env in (("OpenAI-Organization", "OPENAI_ORG_ID"), ("OpenAI-Project", "OPENAI_PROJECT_ID")):
        value = os.environ.get(env)
        if value is not None:
            headers[header] = value
    headers["Authorization"] = f"Bearer {api_key}"
    return ChatTarget(f"{base.rstrip('/')}/chat/completions", headers)


@functools.lru_cache(maxsize=1)
def _sdk_version() -> str | None:
    """The installed SDK's ``openai.__version__``, read from its ``_version.py`` without importing the package."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("openai")
    if spec is None or spec.origin is None:
        return None
    try:
        text = (Path(spec.origin).parent / "_version.py").read_text(encoding="utf-8")
    except OSError:
        return None
    match = re.search(r'^__version__\s*=\s*"([^"]+)"', text, re.MULTILINE)
    return match[1] if match else None


@functools.cache
def _platform_headers(version: str) -> dict[str, str]:
    """The SDK's ``X-Stainless-*`` platform headers (``openai._base_client.platform_headers``)."""
    import platform
    import sys

    def guarded(read: Callable[[], str], default: str) -> str:
        try:
            return read()
        except Exception:  # noqa: BLE001 - the SDK answers "unknown" when the platform module fails
            return default

    def os_name() -> str:
        system, name = platform.system().lower(), platform.platform().lower()
        if "iphone" in name or "ipad" in name:
            return "iOS"
        named = {"darwin": "MacOS", "windows": "Windows", "freebsd": "FreeBSD", "openbsd": "OpenBSD"}
        if system in named:
            return named[system]
        if "android" in name:
            return "Android"
        if system == "linux":
            try:
                distro = platform.freedesktop_os_release().get("ID", "").lower()
            except OSError:
                distro = ""
            return {"freebsd": "FreeBSD", "openbsd": "OpenBSD"}.get(distro, "Linux")
        return f"Other:{name}" if name else "Unknown"

    def arch() -> str:
        machine = platform.machine().lower()
        if machine in ("arm64", "aarch64"):
            return "arm64"
        if machine in ("arm", "x86_64"):
            return {"arm": "arm", "x86_64": "x64"}[machine]
        if sys.maxsize <= 2**32:
            return "x32"
        return f"other:{machine}" if machine else "unknown"

    return {"X-Stainless-Lang": "python", "X-Stainless-Package-Version": version,
            "X-Stainless-OS": guarded(os_name, "Unknown"), "X-Stainless-Arch": guarded(arch, "unknown"),
            "X-Stainless-Runtime": guarded(platform.python_implementation, "unknown"),
            "X-Stainless-Runtime-Version": guarded(platform.python_version, "unknown")}


def env_proxy(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``*_PROXY`` and ``NO_PROXY``), if any."""
    import urllib.parse
    import urllib.request

    parts = urllib.parse.urlsplit(url)
    proxy = urllib.request.getproxies().get(parts.scheme)
    if not proxy or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return proxy


def _idle_http_client(openai: Any) -> Any:
    """The SDK client's own HTTP client under ``transport=direct``: never sends, so never builds a pool.

    (A default one costs about 0.1 s per model at start-up for its connection pool and TLS
    context, which the direct transport does not use.)
    """
    import importlib

    async_client = next(cls for cls in openai.DefaultAsyncHttpxClient.__mro__ if cls.__name__ == "AsyncClient")
    httpx = importlib.import_module(async_client.__module__.split(".")[0])  # httpx, or httpx2 in newer SDKs

    # kept: the base class comes from a module chosen at run time (httpx or httpx2), which mypy cannot follow
    class NotUsed(httpx.AsyncBaseTransport):  # type: ignore[misc, name-defined]
        async def handle_async_request(self, request: Any) -> Any:
            raise RuntimeError("transport=direct sends through DirectChatTransport, not the SDK's HTTP client")

    return openai.DefaultAsyncHttpxClient(transport=NotUsed())


def _has_aiohttp() -> bool:
    import importlib.util

    return importlib.util.find_spec("aiohttp") is not None


def parse_completion(raw: bytes) -> base.ModelResponse:
    """The reply, usage and finish reason of a chat completion body; refusals and empties raise."""
    def not_a_completion() -> base.ModelCallError:  # made only when raised: most bodies are completions
        return base.ModelCallError("the server sent a body that is not a chat completion", kind="bad_response",
                                   retryable=True)

    try:
        completion = json.loads(raw)  # (a 5,000-digit number is a ValueError, 100,000 brackets a RecursionError)
        choices = completion.get("choices") or []
        choice = choices[0] if choices else {}
        message = choice.get("message") or {}
        refusal = message.get("refusal")
        usage = completion.get("usage") or {}
        tokens = [usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0]
    except (ValueError, AttributeError, TypeError, KeyError, IndexError, RecursionError):
        raise not_a_completion() from None
    text, reason = message.get("content") or "", choice.get("finish_reason")
    if not isinstance(text, str) or not isinstance(reason, (str, type(None))) or not isinstance(refusal, (
            str, type(None))) or not all([type(count) is int and 0 <= count < 2**53 for count in tokens]):
        raise not_a_completion()  # the fields a completion has, of other types
    if not choices:
        raise base.ModelCallError("response had no choices", kind="empty_response", retryable=True)
    if reason == "content_filter" or refusal:
        detail = f": {refusal}" if refusal else ""
        raise base.ModelCallError(f"the provider refused or filtered the answer{detail}", kind="refusal")
    return base.ModelResponse(text=text, usage=base.Usage(*tokens), finish_reason=reason)
