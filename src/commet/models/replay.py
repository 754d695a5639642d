"""``replay:PATH``: answers from a JSON file ``{story_id: [reply for turn 0, reply for turn 1, ...]}``.

Used by tests and to re-score recorded answers (for example a human study's) with the
same engine, feedback and judges as any model. Option ``delay`` (seconds) simulates latency.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

from commet.models.base import (
    Model,
    ModelCallError,
    ModelRequest,
    ModelResponse,
    ModelSpecError,
    UnknownModelError,
    refuse_unknown_options,
)
from commet.models.options import option_float


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


def create(name: str, options: dict[str, str]) -> ReplayModel:
    refuse_unknown_options("replay", options, ("delay",))
    path = Path(name)
    try:
        raw = path.read_bytes()
        data = json.loads(raw)
    except FileNotFoundError:
        raise UnknownModelError(f"replay file {name!r} not found") from None
    except json.JSONDecodeError as exc:
        raise ModelSpecError(f"replay file {name!r}: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    except UnicodeDecodeError as exc:
        raise ModelSpecError(f"replay file {name!r}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    if not isinstance(data, dict) or not all(isinstance(v, list) and all(isinstance(x, str) for x in v)
                                             for v in data.values()):
        raise ModelSpecError(f"replay file {name!r} must map story ids to lists of reply strings")
    delay = option_float(options, "delay", 0.0) or 0.0
    return ReplayModel(data, source=path.name, digest=hashlib.sha256(raw).hexdigest(), delay=delay)
