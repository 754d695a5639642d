"""LLM judges: any model spec (``openai:MODEL``, ``anthropic:MODEL``, ``google:MODEL``, ...) as a judge.

:func:`commet.judges.registry.create_judge` puts one behind the rules judge (a cascade) or,
with ``llm-only:``, uses it alone.

The judge's name carries the model and the prompt version (``llm:openai:gpt-4o@judge-v2``);
it is stored with every judgment and is part of the cache key.
"""

from __future__ import annotations

import json
from functools import cached_property

from commet.judges.base import Judge, JudgeRequest, Verdict
from commet.judges.prompts import (
    PROMPT_VERSION,
    RETRY_PROMPT,
    SYSTEM_PROMPT,
    VerdictParseError,
    parse_verdict,
    user_prompt,
)
from commet.models.base import (
    GenerationSettings,
    Message,
    Model,
    ModelCallError,
    ModelRequest,
    TextPart,
    Usage,
    json_key,
)

#: Judges answer deterministically; the room is for reasoning models, whose thinking counts as output.
JUDGE_SETTINGS = GenerationSettings(temperature=0.0, max_tokens=2048)
#: one message for every judge call: a provider encodes it once (``Message.encodings``)
SYSTEM_MESSAGE = Message.text("system", SYSTEM_PROMPT)


class LLMJudge(Judge):
    """Asks a model for a JSON verdict; an unparseable reply is retried, then recorded as undecided."""

    def __init__(self, model: Model, *, version: str = PROMPT_VERSION, attempts: int = 3):
        self.model = model
        self.version = version
        self.attempts = max(1, attempts)
        self.name = f"llm:{model.spec}@{version}"

    @cached_property
    def _identity_json(self) -> tuple[str, str]:
        """The judge's name and its model's identity as canonical JSON, made once (they never change)."""
        return json.dumps(self.name), self.model.identity_json()

    def cache_key(self, request: JudgeRequest) -> str:
        """Judge name, prompt version, the model's full identity (output-changing options) and the inputs."""
        name, model = self._identity_json
        return json_key(judge=name, model=model, request=request.fingerprint_json)

    def price_known(self) -> bool:
        return self.model.price_known()

    async def judge(self, request: JudgeRequest) -> Verdict:
        prompt = Message("user", (TextPart(user_prompt(request)), *request.images))
        messages = [SYSTEM_MESSAGE, prompt]
        usage = Usage()
        raw, error, replaced = "", "", 0
        for attempt in range(1, self.attempts + 1):
            try:
                response = await self.model.generate(ModelRequest(tuple(messages), JUDGE_SETTINGS,
                                                                  tags={"story_id": request.story_id,
                                                                        "turn": request.turn}))
            except ModelCallError as exc:
                return Verdict("undecided", None, f"judge call failed: {exc}", self.name, {"attempts": attempt},
                               usage, self.model.estimated_cost(usage), str(exc), f"judge_{exc.kind}")
            usage = Usage(usage.input_tokens + response.usage.input_tokens,
                          usage.output_tokens + response.usage.output_tokens)
            raw = response.text
            replaced += response.replaced
            try:
                parsed = parse_verdict(raw, len(request.expected))
            except VerdictParseError as exc:
                error = str(exc)
                messages += [Message.text("assistant", raw), Message.text("user", RETRY_PROMPT.format(error=error))]
                continue
            return Verdict("correct" if parsed.correct else "incorrect", parsed.branch, parsed.reason, self.name,
                           {"attempts": attempt, **({"replaced_code_points": replaced} if replaced else {})},
                           usage, self.model.estimated_cost(usage))
        return Verdict("undecided", None, f"judge reply could not be parsed: {error}", self.name,
                       {"raw": raw[:2000], "attempts": self.attempts}, usage, self.model.estimated_cost(usage),
                       f"unparseable verdict after {self.attempts} attempts: {error}", "judge_unparseable")

    async def aclose(self) -> None:
        await self.model.aclose()


def llm_judge(spec: str) -> LLMJudge:
    """A bare LLM judge for a model spec (raises UnknownModelError for a bad spec)."""
    from commet.models.registry import create_model

    return LLMJudge(create_model(spec))
