"""Honest trivial baselines: they read only the question and its options, never the story.

* ``baseline:first-option`` answers with the first option shown (the turn's listed options,
  "A. x B. y" in the question, or "..., the apple or the chocolate?" -> "The apple."), else a
  fixed short reply;
* ``baseline:random-option?seed=N`` picks a named option at random, else "Yes." or "No.",
  seeded per call content so results do not depend on concurrency or order.

* ``baseline:shortcut?train=DATASET&half=first`` learns, from one half of a dataset (per task, the
  first or the second half of its StoryTurns), the answer position, yes/no and answer text per
  (task, turn) and per question wording, and answers from that alone (see
  :mod:`commet.models.shortcut`); score it on the other half.

They give the floor a real model must beat; option ``reply`` sets the fixed reply.
"""

from __future__ import annotations

import asyncio
import hashlib
import random

from commet.models.base import (
    Model,
    ModelRequest,
    ModelResponse,
    ModelSpecError,
    UnknownModelError,
    did_you_mean,
    refuse_unknown_options,
)
from commet.text import labelled_options, question_options

DEFAULT_REPLY = "Yes."


def _offered_options(request: ModelRequest) -> list[str]:
    """The options shown in the last user message: listed under the question, labelled, or "x or y?"."""
    text = next((m.text_content.strip() for m in reversed(request.messages) if m.role == "user"), "")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    listed: list[str] = []
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
    reads_pictures = False  # answers from the text: no picture is prepared for it

    def __init__(self, reply: str = DEFAULT_REPLY):
        self.reply = reply
        self.spec = "baseline:first-option"

    def identity(self) -> dict[str, object]:
        return {"spec": self.spec, "reply": self.reply}

    async def generate(self, request: ModelRequest) -> ModelResponse:
        await asyncio.sleep(0)  # yield like a real call: stories interleave, commits and Ctrl-C get their turn
        options = _offered_options(request)
        return ModelResponse(text=_sentence(options[0]) if options else self.reply)


class RandomOptionBaseline(Model):
    free = True  # no paid call
    reads_pictures = False  # answers from the text: no picture is prepared for it

    def __init__(self, seed: int = 0):
        self.seed = seed
        self.spec = "baseline:random-option"

    def identity(self) -> dict[str, object]:
        return {"spec": self.spec, "seed": self.seed}

    async def generate(self, request: ModelRequest) -> ModelResponse:
        await asyncio.sleep(0)  # see FirstOptionBaseline.generate
        digest = hashlib.sha256(f"{self.seed}:{self.cache_key(request)}".encode()).digest()
        rng = random.Random(digest)
        options = _offered_options(request)
        return ModelResponse(text=_sentence(rng.choice(options)) if options else rng.choice(["Yes.", "No."]))


class ShortcutBaseline(Model):
    """Answers from answer regularities learned on half a dataset; reads the question, never the story."""

    reads_pictures = False  # answers from the question's text: no picture is prepared for it

    def __init__(self, train: str, half: str = "first"):
        from commet.format.problems import FormatError
        from commet.models.shortcut import ShortcutLearner, split_halves
        from commet.sources import load_dataset

        if half not in ("first", "second"):
            raise ModelSpecError(f"baseline:shortcut half must be 'first' or 'second', got {half!r}")
        try:
            storyturns = list(load_dataset(train))
        except (FormatError, OSError, RuntimeError) as exc:
            raise ModelSpecError(f"baseline:shortcut cannot load its training dataset {train!r}: {exc}") from None
        first, second = split_halves(storyturns)
        self.learner = ShortcutLearner().fit(first if half == "first" else second)
        self.task_of = {st.id: st.task for st in storyturns}
        self.train, self.half = train, half
        self.spec = "baseline:shortcut"

    def identity(self) -> dict[str, object]:
        return {"spec": self.spec, "train": self.train, "half": self.half}

    async def generate(self, request: ModelRequest) -> ModelResponse:
        await asyncio.sleep(0)  # see FirstOptionBaseline.generate
        text = next((m.text_content.strip() for m in reversed(request.messages) if m.role == "user"), "")
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        question = next((line for line in reversed(lines) if "?" in line), lines[-1] if lines else "")
        story_id, turn = request.tags.get("story_id"), request.tags.get("turn")
        task = self.task_of.get(str(story_id), "") if story_id is not None else ""
        index = turn if isinstance(turn, int) else -1
        return ModelResponse(text=self.learner.answer_text(question, _offered_options(request), task, index))


#: baseline name -> the options it takes
BASELINES = {"first-option": ("reply",), "random-option": ("seed",), "shortcut": ("train", "half")}


def create(name: str, options: dict[str, str]) -> Model:
    if name not in BASELINES:
        raise UnknownModelError(f"unknown baseline {name!r}{did_you_mean(name, BASELINES)} "
                                f"(known: {', '.join(BASELINES)})")
    refuse_unknown_options(f"baseline:{name}", options, BASELINES[name])
    if name == "first-option":
        return FirstOptionBaseline(reply=options.get("reply", DEFAULT_REPLY))
    if name == "random-option":
        try:
            return RandomOptionBaseline(seed=int(options.get("seed", "0")))
        except ValueError:
            raise ModelSpecError(f"baseline:random-option seed must be an integer, got {options['seed']!r}") from None
    if not options.get("train"):
        raise ModelSpecError("baseline:shortcut needs train=DATASET (a folder, file or 'sample')")
    return ShortcutBaseline(options["train"], options.get("half", "first"))
