"""Chat-message rows: a column of messages (``role``, ``content``) in the OpenAI or Hugging Face chat format.

A row holds a conversation: each user message is one turn, the assistant message after it the
expected answer (branches written ``A ; B`` as in the pipe format); a turn whose answer is not in the
messages takes it from the row's answer column. Rows of one story (an id column) either each hold
their own turn or the whole conversation so far (each row's messages extend the previous row's).

A user message's content is text, or a list of parts: text parts (``{"type": "text", "text": ...}``),
and picture parts: OpenAI's ``image_url`` / ``input_image`` with a ``data:`` URL, or Hugging Face's
``{"type": "image"}``, whose picture is inline (``image``, ``path``) or the next of the row's picture
column (the pictures in the order their parts appear). A picture given only by a web address is a
located error (nothing is downloaded). The text is split into feedback, story and question by labels
(``Feedback:``, ``Story:``, ``Question:`` at the start of a part or paragraph), else the last text part
(or paragraph, or sentence ending in ``?``) is the question and the rest the story. A system message is
kept in the StoryTurn's metadata (``system``), never dropped.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import replace

from commet.format.dataset import Dataset
from commet.format.origin import RowsRead
from commet.sources.columns import Role
from commet.sources.table import Layout, Source, Table, _fail, _story_fields
from commet.sources.turn_rows import _assemble, story_groups

_LABEL = re.compile(r"^\s*(?:\*\*|__)?(feedback|story|context|question)(?:\s*(?:\*\*|__))?\s*[:：](?:\s*(?:\*\*|__))?\s*",
                    re.IGNORECASE)
_FIELDS = {"feedback": "feedback", "story": "story", "context": "story", "question": "question"}
IMAGE_TOKEN = "<image>"  # a picture's place in the text (LLaVA, ShareGPT): the next of the row's pictures


#: ShareGPT's speakers (``{"from": "human", "value": ...}``) as chat roles
_SPEAKERS = {"human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant", "model": "assistant",
             "bot": "assistant", "system": "system"}


def messages_of(value: object) -> list[dict[str, object]] | None:
    """The messages a cell holds (a list of ``{role, content}``, or of ShareGPT's ``{from, value}``, or JSON text
    of one); None for anything else."""
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if not isinstance(value, list) or not value or not all(isinstance(m, dict) for m in value):
        return None
    if all("role" in m and "content" in m for m in value):
        return [dict(m) for m in value]
    if all(str(m.get("from")).lower() in _SPEAKERS and "value" in m for m in value):
        return [{"role": _SPEAKERS[str(m["from"]).lower()], "content": m["value"]} for m in value]
    return None


def holds_messages(table: Table, column: str) -> bool:
    cells = [row.get(column) for row in table.rows if row.get(column) not in (None, "", [])][:50]
    return bool(cells) and all(messages_of(c) is not None for c in cells)


def _parts(content: object) -> list[dict[str, object]]:
    """A message's content as a list of parts (text content is one text part)."""
    if isinstance(content, str):
        stripped = content.strip()
        if stripped.startswith("[") and (parsed := messages_parts(stripped)) is not None:
            return parsed
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [p if isinstance(p, dict) else {"type": "text", "text": str(p)} for p in content]
    if content is None:
        return []
    raise ValueError(f"message content must be text or a list of parts, not {type(content).__name__}")


def messages_parts(text: str) -> list[dict[str, object]] | None:
    """Content parts written as JSON text (a list of ``{type, ...}``), else None."""
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    if isinstance(parsed, list) and all(isinstance(p, dict) and "type" in p for p in parsed):
        return parsed
    return None


def _data_url(url: str) -> bytes:
    if not url.startswith("data:"):
        raise ValueError(f"picture {url[:60]!r} is a web address: nothing is downloaded; give the picture itself "
                         "(a data: URL, an Image column) or write an adapter")
    try:
        return base64.b64decode(url.split(",", 1)[1], validate=True)
    except (IndexError, binascii.Error) as exc:
        raise ValueError(f"picture data URL cannot be read: {exc}") from None


def _picture(part: dict[str, object], row_pictures: list[object], index: int) -> object:
    """The picture of a picture part: inline (data URL, bytes, a picture cell), else the row's ``index``-th."""
    kind = part.get("type")
    url = part.get("image_url")
    if isinstance(url, dict):
        url = url.get("url")
    if kind in ("image_url", "input_image") and isinstance(url, str):
        return {"bytes": _data_url(url), "path": None}
    inline = part.get("image")
    if isinstance(inline, dict) and inline.get("bytes") is not None:
        return inline
    for key in ("image", "url", "path"):
        if isinstance(part.get(key), str) and part[key]:
            return {"bytes": _data_url(str(part[key])), "path": None}
    if index >= len(row_pictures):
        raise ValueError(f"picture part {index + 1} has no picture: the row's picture column holds "
                         f"{len(row_pictures)}")
    return row_pictures[index]


def split_text(texts: list[str]) -> dict[str, str]:
    """Feedback, story and question of a user message's text parts (labelled, else the last part is the question)."""
    paragraphs = [p for t in texts for p in re.split(r"\n\s*\n", t) if p.strip()]
    if any(_LABEL.match(p) for p in paragraphs):
        found: dict[str, list[str]] = {"feedback": [], "story": [], "question": []}
        current = "story"
        for paragraph in paragraphs:
            match = _LABEL.match(paragraph)
            if match:
                current = _FIELDS[match.group(1).lower()]
                paragraph = paragraph[match.end():]
            found[current].append(paragraph.strip())
        return {k: "\n\n".join(v).strip() for k, v in found.items()}
    if len(texts) > 1:
        return {"feedback": "", "story": "\n\n".join(t.strip() for t in texts[:-1]), "question": texts[-1].strip()}
    if len(paragraphs) > 1:
        return {"feedback": "", "story": "\n\n".join(paragraphs[:-1]).strip(), "question": paragraphs[-1].strip()}
    text = paragraphs[0].strip() if paragraphs else ""
    sentences = re.split(r"(?<=[.!?])\s+(?=\S)", text)
    if len(sentences) > 1 and sentences[-1].endswith("?"):
        return {"feedback": "", "story": " ".join(sentences[:-1]), "question": sentences[-1]}
    return {"feedback": "", "story": "", "question": text}


def _content_text(content: object) -> str:
    return "\n\n".join(str(p.get("text") or "") for p in _parts(content) if p.get("type") in ("text", "input_text",
                                                                                                "output_text"))


def _chat_rows(table: Table, layout: Layout, dataset: Dataset, source: Source, first: int) -> None:
    roles = layout.roles
    column = roles[Role.MESSAGES]
    used = set(roles.values()) | set(layout.pictures)
    keys = {field: f"{column}.{field}" for field in ("story", "feedback", "question", "answer", "image")}
    virtual_layout = replace(layout, roles={**roles, Role.STORY: keys["story"], Role.FEEDBACK: keys["feedback"],
                                            Role.QUESTION: keys["question"], Role.ANSWER: keys["answer"],
                                            Role.IMAGE: keys["image"]}, pictures=(keys["image"],))
    for story_id, members in story_groups(table, roles, source.name, first).items():
        turns, system = _turns(table, layout, story_id, members, keys)
        if not turns:
            raise _fail(table, members[0][0], story_id, None, column, "no user message: no question")
        story = _story_fields(table, roles, members[0][1], members[0][0], story_id, source, dataset.taxonomy)
        st = _assemble(table, virtual_layout, story_id, story, turns, dataset, source, used | set(keys.values()))
        if system:
            st.meta["system"] = system
        dataset.storyturns.append(st)
        dataset.rows_read.append(RowsRead(table.where, story_id, tuple((line,) for line, _ in turns)))
        dataset.lines.setdefault(story_id, members[0][0])
        dataset.line_list.append(members[0][0])


def _turns(table: Table, layout: Layout, story_id: str, members: list[tuple[int, dict[str, object]]],
           keys: dict[str, str]) -> tuple[list[tuple[int, dict[str, object]]], str]:
    """The turns of one story as rows the turn-row reader takes (the recovered fields under ``keys``)."""
    roles = layout.roles
    column = roles[Role.MESSAGES]
    seen: list[dict[str, object]] = []
    turns: list[tuple[int, dict[str, object]]] = []
    system: list[str] = []
    for line, row in members:
        messages = messages_of(row.get(column))
        if messages is None:
            raise _fail(table, line, story_id, None, column, "not a list of chat messages ({role, content})")
        new = messages[len(seen):] if messages[:len(seen)] == seen and seen else messages
        offset = len(messages) - len(new)
        seen = messages
        pictures: list[object] = []
        for picture_column in layout.pictures:
            cell = row.get(picture_column)
            pictures += [p for p in (cell if isinstance(cell, list) else [cell]) if p is not None]
        placeholders = sum(1 for m in messages[:offset] for p in _parts_safe(m) if _is_picture(p))
        for message in new:
            role = str(message.get("role"))
            try:
                if role == "system":
                    system.append(_content_text(message.get("content")))
                elif role == "user":
                    texts, shown = [], []
                    for part in _parts(message.get("content")):
                        if _is_picture(part):
                            shown.append(_picture(part, pictures, placeholders))
                            placeholders += 1
                        elif part.get("type") in ("text", "input_text") and str(part.get("text") or "").strip():
                            text = str(part.get("text"))
                            for _ in range(text.count(IMAGE_TOKEN)):  # LLaVA / ShareGPT: "<image>" in the text
                                shown.append(_picture({"type": "image"}, pictures, placeholders))
                                placeholders += 1
                            texts.append(text.replace(IMAGE_TOKEN, "").strip())
                    if len(shown) > 1:
                        raise ValueError("a user message shows more than one picture: a turn shows one")
                    fields = split_text(texts)
                    turns.append((line, {**row, keys["story"]: fields["story"], keys["feedback"]: fields["feedback"],
                                         keys["question"]: fields["question"], keys["answer"]: None,
                                         keys["image"]: shown[0] if shown else None}))
                elif role == "assistant" and turns:
                    answer = _content_text(message.get("content")).strip()
                    known = turns[-1][1][keys["answer"]]
                    if known not in (None, "") and known != answer:
                        raise ValueError(f"the assistant answers {answer[:40]!r} where the answer is {str(known)[:40]!r}")
                    turns[-1][1][keys["answer"]] = answer
            except ValueError as exc:
                raise _fail(table, line, story_id, len(turns) - 1 if turns else None, column, str(exc)) from None
        if turns and turns[-1][1][keys["answer"]] in (None, "") and Role.ANSWER in roles:
            turns[-1][1][keys["answer"]] = row.get(roles[Role.ANSWER])
    return turns, "\n\n".join(s for s in dict.fromkeys(system) if s)


def _parts_safe(message: dict[str, object]) -> list[dict[str, object]]:
    try:
        parts = _parts(message.get("content"))
    except ValueError:
        return []
    tokens = sum(str(p.get("text") or "").count(IMAGE_TOKEN) for p in parts if p.get("type") in ("text", "input_text"))
    placeholders: list[dict[str, object]] = [{"type": "image"} for _ in range(tokens)]
    return [*parts, *placeholders]


def _is_picture(part: dict[str, object]) -> bool:
    return part.get("type") in ("image", "image_url", "input_image")
