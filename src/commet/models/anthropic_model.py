"""``anthropic:MODEL``: Claude through the official ``anthropic`` SDK (``AsyncAnthropic``).

The SDK's retries are off (``max_retries=0``); :mod:`commet.models.retry` is the policy.
System messages go to ``system=`` (joined by blank lines), pictures travel as base64
``image`` content blocks in the order of the message's parts, and a ``refusal`` stop
reason is a non-retryable ``ModelCallError(kind="refusal")``.

Sampling settings: the Messages API version that SDK 2.x sends by default
(``2026-10-21``) rejects ``temperature`` / ``top_p`` / ``top_k`` outright, and the SDK no
longer has those arguments. So by default they are NOT sent and the provider's default
sampling applies (``identity()`` records ``sampling: provider-default`` so such answers are
never mixed with controlled ones in the cache). To control them on an older model, pin an
older API version: ``anthropic:claude-3-5-haiku-latest?api_version=2023-06-01`` then
``temperature`` (and ``top_p`` when set) are sent in the request body. ``seed`` is not
supported by the API and is ignored.

Options: ``base_url``, ``api_key_env`` (default ``ANTHROPIC_API_KEY``), ``api_version``,
``sampling`` (``auto`` / ``send`` / ``omit``) and the transport options of
:mod:`commet.models.remote` (``TRANSPORT_OPTIONS``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from commet.models import base
from commet.models.remote import RemoteModel

#: First API version that refuses sampling parameters.
NO_SAMPLING_FROM = "2026-10-21"


def image_block(part: base.ImagePart) -> dict[str, object]:
    return {"type": "image", "source": {"type": "base64", "media_type": part.mime,
                                        "data": part.base64}}


def to_anthropic(messages: Sequence[base.Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """(system prompt, Messages API messages)."""
    system = [m.text_content for m in messages if m.role == "system"]
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        if not message.images:
            out.append({"role": message.role, "content": message.text_content})
            continue
        if message.role != "user":
            raise base.ModelCallError("pictures are only supported in user messages", kind="bad_request")
        out.append({"role": "user", "content": message.blocks(image_block, base.text_block)})
    return ("\n\n".join(system) if system else None), out


class AnthropicModel(RemoteModel):
    provider = "anthropic"
    default_key_envs = ("ANTHROPIC_API_KEY",)
    sdk_module = "anthropic"
    output_options = frozenset({"api_version", "sampling"})

    def __init__(self, name: str, options: Mapping[str, str]):
        super().__init__(name, options)
        anthropic = self.sdk()
        self.api_version = self.options.get("api_version") or None
        mode = self.options.get("sampling", "auto")
        if mode not in ("auto", "send", "omit"):
            raise base.ModelSpecError("anthropic: sampling must be auto, send or omit")
        if mode == "auto":
            self.send_sampling = self.api_version is not None and self.api_version < NO_SAMPLING_FROM
        else:
            self.send_sampling = mode == "send"
        headers = {"anthropic-version": self.api_version} if self.api_version else None
        self._client = anthropic.AsyncAnthropic(api_key=self.api_key, base_url=self.base_url, max_retries=0,
                                                timeout=self.policy.timeout, default_headers=headers)

    def identity(self) -> dict[str, object]:
        ident = super().identity()
        ident["sampling"] = "sent" if self.send_sampling else "provider-default"
        return ident

    def build_params(self, request: base.ModelRequest) -> dict[str, Any]:
        system, messages = to_anthropic(request.messages)
        params: dict[str, Any] = {"model": self.name, "max_tokens": request.settings.max_tokens,
                                  "messages": messages}
        if system:
            params["system"] = system
        if self.send_sampling:
            extra: dict[str, Any] = {"temperature": request.settings.temperature}
            if request.settings.top_p is not None:
                extra["top_p"] = request.settings.top_p
            params["extra_body"] = extra
        return params

    async def _call(self, request: base.ModelRequest) -> base.ModelResponse:
        message = await self._client.messages.create(**self.build_params(request))
        if message.stop_reason == "refusal":
            raise base.ModelCallError("the provider refused to answer (stop_reason=refusal)", kind="refusal")
        text = "".join(getattr(block, "text", "") for block in message.content if block.type == "text")
        usage = message.usage
        input_tokens = (usage.input_tokens or 0) + (getattr(usage, "cache_creation_input_tokens", 0) or 0) \
            + (getattr(usage, "cache_read_input_tokens", 0) or 0)
        return base.ModelResponse(text=text, usage=base.Usage(input_tokens, usage.output_tokens or 0),
                                  finish_reason=message.stop_reason)

    async def aclose(self) -> None:
        await self._client.close()


def create(name: str, options: dict[str, str]) -> AnthropicModel:
    return AnthropicModel(name, options)
