"""``google:MODEL``: Gemini through the official ``google-genai`` SDK.

Calls ``genai.Client(...).aio.models.generate_content`` with the SDK's retries off
(``HttpRetryOptions(attempts=1)``); :mod:`commet.models.retry` is the policy. System
messages become ``system_instruction``, pictures become inline parts
(``types.Part.from_bytes``) in the order of the message's parts, assistant turns use the
``model`` role. A blocked prompt (``prompt_feedback.block_reason``) or a safety-type finish
(SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII, IMAGE_SAFETY ...) is a
non-retryable ``ModelCallError(kind="refusal")``. Thought parts are not part of the answer;
their tokens count as output tokens.

Options: ``base_url`` (sent as ``http_options.base_url``), ``api_version`` (default the SDK's,
``v1beta``), ``api_key_env`` (default ``GEMINI_API_KEY``, then ``GOOGLE_API_KEY``),
``thinking_budget`` (tokens; changes outputs) and the transport options of
:mod:`commet.models.remote` (``TRANSPORT_OPTIONS``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from commet.models import base
from commet.models.remote import RemoteModel, RemoteService

REFUSAL_FINISH = frozenset({"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY",
                            "IMAGE_PROHIBITED_CONTENT", "MODEL_ARMOR", "LANGUAGE"})


def _enum_name(value: Any) -> str | None:
    if value is None:
        return None
    return str(getattr(value, "name", value)).rsplit(".", 1)[-1]


def to_google(messages: Sequence[base.Message]) -> tuple[str | None, list[Any]]:
    """(system instruction, list of ``types.Content``)."""
    from google.genai import types

    system = [m.text_content for m in messages if m.role == "system"]
    contents = []
    for message in messages:
        if message.role == "system":
            continue
        parts = message.blocks(lambda image: types.Part.from_bytes(data=image.data, mime_type=image.mime),
                               lambda text: types.Part.from_text(text=text))
        contents.append(types.Content(role="model" if message.role == "assistant" else "user", parts=parts))
    return ("\n\n".join(system) if system else None), contents


class GoogleService(RemoteService):
    """The Gemini API as chat and picture models reach it: the key variables, the SDK, and a
    google-genai client with its own retries off (ours apply) and our base URL, API version and timeout."""

    provider = "google"
    default_key_envs = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    sdk_module = "google.genai"

    def __init__(self, name: str, options: Mapping[str, str]):
        super().__init__(name, options)
        genai, types = self.sdk(), self.sdk("google.genai.types")
        http: dict[str, Any] = {"retry_options": types.HttpRetryOptions(attempts=1)}
        if self.base_url:
            http["base_url"] = self.base_url
        if self.options.get("api_version"):
            http["api_version"] = self.options["api_version"]
        if self.policy.timeout is not None:
            http["timeout"] = int(self.policy.timeout * 1000)  # milliseconds
        self._types = types
        self._client = genai.Client(api_key=self.api_key, vertexai=False, http_options=types.HttpOptions(**http))

    async def aclose(self) -> None:
        await self._client.aio.aclose()


class GoogleModel(GoogleService, RemoteModel):
    output_options = frozenset({"api_version", "thinking_budget"})

    def build_config(self, request: base.ModelRequest, system: str | None) -> Any:
        settings = request.settings
        config: dict[str, Any] = {"temperature": settings.temperature, "max_output_tokens": settings.max_tokens}
        if system:
            config["system_instruction"] = system
        if settings.top_p is not None:
            config["top_p"] = settings.top_p
        if settings.seed is not None:
            config["seed"] = settings.seed
        if self.options.get("thinking_budget"):
            config["thinking_config"] = self._types.ThinkingConfig(thinking_budget=int(self.options["thinking_budget"]))
        return self._types.GenerateContentConfig(**config)

    async def _call(self, request: base.ModelRequest) -> base.ModelResponse:
        system, contents = to_google(request.messages)
        response = await self._client.aio.models.generate_content(
            model=self.name, contents=contents, config=self.build_config(request, system))
        meta = response.usage_metadata
        usage = base.Usage()
        if meta is not None:
            usage = base.Usage(meta.prompt_token_count or 0,
                               (meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0))
        feedback = response.prompt_feedback
        block = _enum_name(feedback.block_reason) if feedback is not None else None
        if block and block != "BLOCKED_REASON_UNSPECIFIED":
            raise base.ModelCallError(f"the provider blocked the prompt (block_reason={block})", kind="refusal")
        if not response.candidates:
            raise base.ModelCallError("response had no candidates", kind="empty_response", retryable=True)
        candidate = response.candidates[0]
        finish = _enum_name(candidate.finish_reason)
        if finish in REFUSAL_FINISH:
            raise base.ModelCallError(f"the provider stopped the answer (finish_reason={finish})", kind="refusal")
        parts = candidate.content.parts if candidate.content is not None and candidate.content.parts else []
        text = "".join(p.text for p in parts if p.text and not p.thought)
        return base.ModelResponse(text=text, usage=usage, finish_reason=finish.lower() if finish else None)


def create(name: str, options: dict[str, str]) -> GoogleModel:
    return GoogleModel(name, options)
