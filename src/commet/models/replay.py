"""``replay:PATH``: answers from a JSON file ``{story_id: [reply for turn 0, reply for turn 1, ...]}``.

Used by tests and to re-score recorded answers (for example a human study's) with the
same engine, feedback and judges as any model. Option ``delay`` (seconds) simulates latency.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

from commet.format.problems import FormatError, Problem
from commet.models.base import (
    Model,
    ModelCallError,
    ModelRequest,
    ModelResponse,
    UnknownModelError,
    refuse_unknown_options,
)
from commet.models.options import option_float
from commet.sources.inputs import MIB, decode_text, load_json, read_bytes


class ReplayModel(Model):
    free = True  # no paid call

    def __init__(self, replies: dict[str, list[str]], *, source: str, digest: str, delay: float = 0.0):
        self.replies = replies
        self.spec = f"replay:{source}"
        self.digest = digest
        self.delay = delay

    def identity(self) -> dict[str, object]:
        return {"spec": "replay", "sha256": self.digest}

    def cache_key(self, request: ModelRequest) -> str:
        """Replies depend on the story and turn, not only on the conversation: key on them too."""
        tags = f"{request.tags.get('story_id')}:{request.tags.get('turn')}"
        return hashlib.sha256(f"{super().cache_key(request)}:{tags}".encode()).hexdigest()

    async def generate(self, request: ModelRequest) -> ModelResponse:
        story_id = str(request.tags.get("story_id"))
        turn = int(request.tags.get("turn", 0))
        await asyncio.sleep(self.delay)  # even 0 yields: stories interleave, commits and Ctrl-C get their turn
        replies = self.replies.get(story_id)
        if replies is None or turn >= len(replies):
            raise ModelCallError(f"replay file has no reply for story {story_id!r} turn {turn}", kind="replay_missing")
        return ModelResponse(text=replies[turn])


#: the largest replay file read (about 250,000 StoryTurns of three 300-character replies)
MAX_REPLAY_BYTES = 256 * MIB


def create(name: str, options: dict[str, str]) -> ReplayModel:
    """A replay model from its file, read within bounds (:mod:`commet.sources.inputs`): no file there is an
    :class:`~commet.models.base.UnknownModelError`; a file that is not a regular file, too large, nested too
    deep, or not a map of story ids to lists of reply texts is refused with one located line (a
    :class:`~commet.format.problems.FormatError`)."""
    refuse_unknown_options("replay", options, ("delay",))
    delay = option_float(options, "delay", 0.0) or 0.0
    if not Path(name).exists():  # the spec names nothing there: a spec error, as an unknown model's
        raise UnknownModelError(f"replay file {name!r} not found")
    raw = read_bytes(name, what="replay file", max_bytes=MAX_REPLAY_BYTES)
    text = decode_text(raw, name)
    data = load_json(text, file=name, surrogates=True)  # (replies are made valid, and counted, per call)
    if not isinstance(data, dict):
        raise FormatError([Problem(name, 1, None, None, None, "a replay file maps story ids to lists of reply texts "
                                   f"({{\"story-1\": [\"reply 0\", \"reply 1\"]}}), not {_json_type(data)}")])
    for story_id, replies in data.items():
        if not isinstance(replies, list):
            raise FormatError([Problem(name, _key_line(text, story_id), story_id, None, None,
                                       f"expected a list of reply texts, not {_json_type(replies)}")])
        for turn, reply in enumerate(replies):
            if not isinstance(reply, str):
                raise FormatError([Problem(name, _key_line(text, story_id), story_id, turn, None,
                                           f"expected a reply text, not {_json_type(reply)}")])
    return ReplayModel(data, source=Path(name).name, digest=hashlib.sha256(raw).hexdigest(), delay=delay)


def _json_type(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a text", bool: "true/false", int: "a number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def _key_line(text: str, key: str) -> int:
    """The line of a story id's key in the replay file (1 when it cannot be told)."""
    at = text.find(json.dumps(key, ensure_ascii=False) + ":")
    if at < 0:
        at = text.find(json.dumps(key, ensure_ascii=False))
    return text.count("\n", 0, at) + 1 if at >= 0 else 1
