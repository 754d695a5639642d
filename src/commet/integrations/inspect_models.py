"""CoMMET's models inside inspect_ai: ``--model commet/SPEC`` (``commet/baseline:first-option``,
``commet/replay:replies.json``, ``commet/hf:Qwen/Qwen2-VL-2B-Instruct``, any ``commet eval --model`` spec).

Why: inspect's own mock model counts tokens with tiktoken, which downloads its tables on first use,
so ``--model mockllm/model`` needs the network; CoMMET's baselines need nothing, so an inspect run
of ``commet/storyturns`` with ``--model commet/baseline:first-option`` runs offline, end to end
(docs/inspect.md). Replies carry the model's own token counts.

The StoryTurn protocol's solver tells the model which story and turn a call is for (the replay and
shortcut baselines read it), through :data:`CURRENT_TURN`.
"""

from __future__ import annotations

import base64
from contextvars import ContextVar
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ContentImage,
    ContentText,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)

from commet.models.base import (
    GenerationSettings,
    ImagePart,
    Message,
    Model,
    ModelRequest,
    Part,
    RequestTags,
    TextPart,
)

#: (story id, turn) of the call being made, set by the StoryTurn solver around each generate
CURRENT_TURN: ContextVar[tuple[str, int] | None] = ContextVar("commet_current_turn", default=None)


def _parts(content: Any) -> tuple[Part, ...]:
    if isinstance(content, str):
        return (TextPart(content),)
    parts: list[Part] = []
    for index, item in enumerate(content):
        if isinstance(item, ContentText):
            parts.append(TextPart(item.text))
        elif isinstance(item, ContentImage) and item.image.startswith("data:"):
            header, _, data = item.image.partition(",")
            mime = header[len("data:"):].split(";")[0] or "image/png"
            parts.append(ImagePart(base64.b64decode(data), mime, f"picture-{index}"))
        elif isinstance(item, ContentImage):
            raise ValueError("commet models take pictures as data URLs, not links")
    return tuple(parts)


def commet_message(message: ChatMessage) -> Message:
    """An inspect chat message as CoMMET's (text and pictures in order)."""
    role = message.role
    return Message("user" if role == "tool" else role, _parts(message.content))


@modelapi(name="commet")
class CommetModelAPI(ModelAPI):
    """Any CoMMET model spec as an inspect model provider."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(), **model_args: Any) -> None:
        from commet.models.registry import create_model

        super().__init__(model_name, base_url, api_key, [], config)
        self.model: Model = create_model(model_name)

    async def generate(self, input: list[ChatMessage], tools: list[Any], tool_choice: Any,  # noqa: A002 - inspect's
                       config: GenerateConfig) -> ModelOutput:
        turn = CURRENT_TURN.get()
        tags: RequestTags = {"story_id": turn[0], "turn": turn[1]} if turn is not None else {}
        settings = GenerationSettings.checked(temperature=config.temperature if config.temperature is not None else 0.0,
                                              max_tokens=config.max_tokens or 512, seed=config.seed)
        response = await self.model.generate(ModelRequest(tuple(commet_message(m) for m in input), settings, tags))
        output = ModelOutput.from_content(model=self.model_name, content=response.text,
                                          stop_reason="max_tokens" if response.finish_reason == "length" else "stop")
        usage = response.usage
        output.usage = ModelUsage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                                  total_tokens=usage.input_tokens + usage.output_tokens)
        return output

    async def aclose(self) -> None:
        await self.model.aclose()
