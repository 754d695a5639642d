"""``openai:MODEL``: OpenAI and every OpenAI-compatible chat server (vLLM, SGLang, Ollama, LM Studio).

Uses the official ``openai`` SDK (``AsyncOpenAI``) with its own retries switched off; the
run's single retry/timeout/rate-limit policy lives in :mod:`commet.models.retry`.

Options (query string of the spec):

* ``base_url``: server root, e.g. ``http://127.0.0.1:8000/v1``. With a ``base_url`` and no
  key in the environment a dummy key is sent (local servers ignore it).
* ``api_key_env``: environment variable holding the key (default ``OPENAI_API_KEY``).
* ``image_detail``: ``auto`` / ``low`` / ``high``, sent with every picture (changes outputs).
* ``reasoning_effort``: passed through for reasoning models (changes outputs).
* ``token_param``: ``max_tokens`` or ``max_completion_tokens``. Default:
  ``max_completion_tokens`` on the official endpoint (newer models reject ``max_tokens``),
  ``max_tokens`` for a custom ``base_url`` (what most compatible servers understand).
* ``http_clients``: number of HTTP connection pools used in turn (default 4; less client CPU
  per call at high concurrency).
* transport: ``timeout``, ``max_attempts``, ``backoff_base``, ``backoff_max``, ``rpm``, ``tpm``,
  ``price_in``, ``price_out``.

Pictures travel as ``data:`` URLs in ``image_url`` content parts, in the order of the
message's parts. A ``content_filter`` finish or a ``refusal`` field is a non-retryable
``ModelCallError(kind="refusal")``.
"""

from __future__ import annotations

import base64
import itertools
import ssl
from collections.abc import Mapping, Sequence
from typing import Any

from commet.models.base import (
    ImagePart,
    Message,
    ModelCallError,
    ModelRequest,
    ModelResponse,
    UnknownModelError,
    Usage,
)
from commet.models.retry import RemoteModel


def data_url(part: ImagePart) -> str:
    return f"data:{part.mime};base64,{base64.b64encode(part.data).decode('ascii')}"


def to_openai_messages(messages: Sequence[Message], *, image_detail: str | None = None) -> list[dict[str, Any]]:
    """Chat Completions messages: plain strings for text-only turns, content parts with pictures."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if not message.images or message.role != "user":
            if message.images:
                raise ModelCallError(f"pictures are only supported in user messages, not {message.role}",
                                     kind="bad_request")
            out.append({"role": message.role, "content": message.text_content})
            continue
        parts: list[dict[str, Any]] = []
        for part in message.parts:
            if isinstance(part, ImagePart):
                image: dict[str, Any] = {"url": data_url(part)}
                if image_detail:
                    image["detail"] = image_detail
                parts.append({"type": "image_url", "image_url": image})
            else:
                parts.append({"type": "text", "text": part.text})
        out.append({"role": message.role, "content": parts})
    return out


class OpenAIChatModel(RemoteModel):
    provider = "openai"
    default_key_envs = ("OPENAI_API_KEY",)
    output_options = frozenset({"image_detail", "reasoning_effort"})
    transport_options = frozenset({"token_param", "http_clients"})

    def __init__(self, name: str, options: Mapping[str, str]):
        super().__init__(name, options)
        detail = self.options.get("image_detail")
        if detail not in (None, "auto", "low", "high"):
            raise UnknownModelError("openai: image_detail must be auto, low or high")
        self.image_detail = detail
        default_param = "max_tokens" if self.base_url else "max_completion_tokens"
        self.token_param = self.options.get("token_param", default_param)
        if self.token_param not in ("max_tokens", "max_completion_tokens"):
            raise UnknownModelError("openai: token_param must be max_tokens or max_completion_tokens")
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - the extra is installed in tests
            raise UnknownModelError(f"openai provider needs the SDK: pip install 'commet-bench[openai]' ({exc})") from None
        from openai.types.chat import ChatCompletion

        self._completion_type = ChatCompletion
        shards = int(self.options.get("http_clients") or 4)
        if not 1 <= shards <= 64:
            raise UnknownModelError("openai: http_clients must be between 1 and 64")
        # Several HTTP clients, used in turn: httpx's connection pool scans every pooled
        # connection on each request, so a few small pools cost less CPU than one big one
        # at high concurrency. They share one TLS context (building one is slow).
        ssl_context = ssl.create_default_context()
        self._clients = [
            openai.AsyncOpenAI(api_key=self.api_key, base_url=self.base_url, max_retries=0,
                               timeout=self.policy.timeout,
                               http_client=openai.DefaultAsyncHttpxClient(verify=ssl_context))
            for _ in range(shards)]
        self._turn = itertools.count()

    @property
    def _client(self) -> Any:
        return self._clients[next(self._turn) % len(self._clients)]

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        settings = request.settings
        params: dict[str, Any] = {
            "model": self.name,
            "messages": to_openai_messages(request.messages, image_detail=self.image_detail),
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

    async def _call(self, request: ModelRequest) -> ModelResponse:
        # ``client.post`` is the SDK's documented way to send a request body as is: it keeps the
        # SDK's auth, base URL, timeouts, error classes and typed response, but skips
        # ``chat.completions.create``'s recursive TypedDict transform of the messages, which cost
        # several ms of CPU per call (measured with bench/bench_openai_server.py); our messages
        # are already plain JSON.
        completion = await self._client.post("/chat/completions", body=self.build_params(request),
                                             cast_to=self._completion_type)
        usage = Usage()
        if completion.usage is not None:
            usage = Usage(completion.usage.prompt_tokens or 0, completion.usage.completion_tokens or 0)
        if not completion.choices:
            raise ModelCallError("response had no choices", kind="empty_response", retryable=True)
        choice = completion.choices[0]
        refusal = getattr(choice.message, "refusal", None)
        if choice.finish_reason == "content_filter" or refusal:
            detail = f": {refusal}" if refusal else ""
            raise ModelCallError(f"the provider refused or filtered the answer{detail}", kind="refusal")
        return ModelResponse(text=choice.message.content or "", usage=usage, finish_reason=choice.finish_reason)

    async def aclose(self) -> None:
        for client in self._clients:
            await client.close()


def create(name: str, options: dict[str, str]) -> OpenAIChatModel:
    return OpenAIChatModel(name, options)
