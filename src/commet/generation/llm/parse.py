"""From the generator's JSON reply to a canonical StoryTurn plus the pictures it asked for."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from pydantic import ValidationError

from commet.errors import CommetError
from commet.format.model import AnswerFeedback, Feedback, StoryTurn, Turn
from commet.taxonomy import Task

#: a fenced block; blanks after the opening fence are stripped from the body afterwards (a ``\s*`` before the lazy
#: body tried every split of a long run of blanks: quadratic)
_FENCE = re.compile(r"```(?:json)?(.*?)```", re.DOTALL)


class ReplyError(CommetError, ValueError):
    """A reply that cannot become a StoryTurn; the message is fed back to the model to repair it."""


@dataclass(frozen=True)
class PictureRequest:
    """A turn's picture as the generator described it."""

    turn: int
    segment: str
    scene: str


@dataclass
class ParsedReply:
    storyturn: StoryTurn
    pictures: list[PictureRequest]
    declared_task: str | None


def extract_json(text: str) -> dict[str, object]:
    """The first JSON object in ``text`` (code fences and chatter around it are ignored)."""
    fenced = _FENCE.search(text)
    body = fenced.group(1).lstrip() if fenced else text
    start = body.find("{")
    if start < 0:
        raise ReplyError("no JSON object found in the reply")
    try:
        value, _ = json.JSONDecoder().raw_decode(body, start)
    except json.JSONDecodeError as exc:
        raise ReplyError(f"invalid JSON: {exc.msg} at character {exc.pos}") from None
    if not isinstance(value, dict):
        raise ReplyError("the reply must be a JSON object")
    return value


def _text(value: object, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ReplyError(f"{where} must be a string")
    return value.strip()


def _feedback(value: object, where: str) -> Feedback | None:
    if value is None or value == "" or value == {}:
        return None
    if isinstance(value, str):
        return Feedback(always=value.strip())
    if not isinstance(value, dict):
        raise ReplyError(f"{where} must be null or an object with right/wrong or by_answer")
    unknown = set(value) - {"right", "wrong", "by_answer", "always"}
    if unknown:
        raise ReplyError(f"{where} has unknown key(s) {', '.join(sorted(unknown))}")
    by_answer_raw = value.get("by_answer") or {}
    if isinstance(by_answer_raw, dict):
        by_answer = [AnswerFeedback(answer=str(k).strip(), text=_text(v, f"{where}.by_answer"))
                     for k, v in by_answer_raw.items()]
    elif isinstance(by_answer_raw, list):
        try:
            by_answer = [AnswerFeedback.model_validate(entry) for entry in by_answer_raw]
        except ValidationError:
            raise ReplyError(f"{where}.by_answer must map answers to texts") from None
    else:
        raise ReplyError(f"{where}.by_answer must map answers to texts")
    feedback = Feedback(right=_text(value.get("right"), f"{where}.right") or None,
                        wrong=_text(value.get("wrong"), f"{where}.wrong") or None,
                        always=_text(value.get("always"), f"{where}.always") or None, by_answer=by_answer)
    return None if feedback.is_empty() else feedback


def _answers(value: object, where: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(a, str) and a.strip() for a in value):
        raise ReplyError(f"{where} must be a non-empty list of non-empty strings")
    return [a.strip() for a in value]


def parse_reply(text: str, *, task: Task, story_id: str, source: str) -> ParsedReply:
    """Parse one reply into a StoryTurn of ``task``; image ids are ``<story_id>_<turn>.png``."""
    try:
        return _parse(extract_json(text), task=task, story_id=story_id, source=source)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "reply"
        raise ReplyError(f"{where}: {error['msg']}") from None


def _parse(data: dict[str, object], *, task: Task, story_id: str, source: str) -> ParsedReply:
    raw_turns = data.get("turns")
    if not isinstance(raw_turns, list) or not raw_turns:
        raise ReplyError('"turns" must be a non-empty list')
    turns: list[Turn] = []
    pictures: list[PictureRequest] = []
    for k, raw in enumerate(raw_turns):
        where = f"turns[{k}]"
        if not isinstance(raw, dict):
            raise ReplyError(f"{where} must be an object")
        question = _text(raw.get("question"), f"{where}.question")
        if not question:
            raise ReplyError(f"{where}.question is empty")
        story = _text(raw.get("story"), f"{where}.story")
        image = None
        picture = raw.get("picture")
        if picture:
            if not isinstance(picture, dict):
                raise ReplyError(f"{where}.picture must be null or an object with segment and scene")
            segment = _text(picture.get("segment"), f"{where}.picture.segment") or story
            scene = _text(picture.get("scene"), f"{where}.picture.scene") or segment
            if not scene:
                raise ReplyError(f"{where}.picture needs a scene")
            image = f"{story_id}_{k + 1}.png"
            pictures.append(PictureRequest(k, segment, scene))
        turns.append(Turn(story=story, feedback=_feedback(raw.get("feedback"), f"{where}.feedback"),
                          question=question, image=image, answers=_answers(raw.get("answers"), f"{where}.answers")))
    image_dependent = bool(data.get("image_dependent", False))
    states = data.get("mental_states")
    mental_states = [s for s in states if isinstance(s, str)] if isinstance(states, list) else []
    storyturn = StoryTurn(id=story_id, task=task.id, category=task.category_for(image_dependent),
                          mental_states=mental_states or list(task.mental_states), image_dependent=image_dependent,
                          source=source, turns=turns)
    declared = data.get("task")
    return ParsedReply(storyturn, pictures, declared if isinstance(declared, str) else None)
