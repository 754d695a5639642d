"""Honest trivial baselines: they read only the question and its options, never the story.

* ``baseline:first-option`` answers with the first option shown (the turn's listed options,
  "A. x B. y" in the question, or "..., the apple or the chocolate?" -> "The apple."), else a
  fixed short reply;
* ``baseline:random-option?seed=N`` picks a named option at random, else "Yes." or "No.",
  seeded per call content so results do not depend on concurrency or order.

They give the floor a real model must beat; option ``reply`` sets the fixed reply.
"""

from __future__ import annotations

import hashlib
import random

from commet.models.base import Model, ModelRequest, ModelResponse, UnknownModelError
from commet.text import labelled_options, question_options

DEFAULT_REPLY = "Yes."


def _offered_options(request: ModelRequest) -> list[str]:
    """The options shown in the last user message: listed under the question, labelled, or "x or y?"."""
    text = next((m.text_content.strip() for m in reversed(request.messages) if m.role == "user"), "")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    listed = []
    while lines and lines[-1].startswith("- "):
        listed.insert(0, lines.pop()[2:].strip())
    if len(listed) >= 2:
        return listed
    labelled = labelled_options(text)
    if labelled:
        return [option for _, option in labelled[1]]
    return question_options(lines[-1]) if lines else []


def _sentence(option: str) -> str:
    option = option.strip()
    return option[:1].upper() + option[1:] + "."


class FirstOptionBaseline(Model):
    free = True  # no paid call

    def __init__(self, reply: str = DEFAULT_REPLY):
        self.reply = reply
        self.spec = "baseline:first-option"

    def identity(self) -> dict[str, object]:
        return {"spec": self.spec, "reply": self.reply}

    async def generate(self, request: ModelRequest) -> ModelResponse:
        options = _offered_options(request)
        return ModelResponse(text=_sentence(options[0]) if options else self.reply)


class RandomOptionBaseline(Model):
    free = True  # no paid call

    def __init__(self, seed: int = 0):
        self.seed = seed
        self.spec = "baseline:random-option"

    def identity(self) -> dict[str, object]:
        return {"spec": self.spec, "seed": self.seed}

    async def generate(self, request: ModelRequest) -> ModelResponse:
        digest = hashlib.sha256(f"{self.seed}:{self.cache_key(request)}".encode()).digest()
        rng = random.Random(digest)
        options = _offered_options(request)
        return ModelResponse(text=_sentence(rng.choice(options)) if options else rng.choice(["Yes.", "No."]))


def create(name: str, options: dict[str, str]) -> Model:
    if name == "first-option":
        return FirstOptionBaseline(reply=options.get("reply", DEFAULT_REPLY))
    if name == "random-option":
        try:
            return RandomOptionBaseline(seed=int(options.get("seed", "0")))
        except ValueError:
            raise UnknownModelError(f"baseline:random-option seed must be an integer, got {options['seed']!r}") from None
    raise UnknownModelError(f"unknown baseline {name!r} (known: first-option, random-option)")
