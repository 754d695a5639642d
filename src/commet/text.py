"""Small text utilities shared by the rules judge and the baselines: normalising and finding options."""

from __future__ import annotations

import re

_ARTICLES = {"a", "an", "the"}
MAX_OPTION_WORDS = 8
_QUOTES = " '\"\u2018\u2019\u201c\u201d"
_LEAD_WORD = re.compile(r"(?i)^(?:so\s+|and\s+|now\s+)?(?:which|what|who|whose|where|when|why|how|is|are|was|were|do|"
                        r"does|did|will|would|can|could|should|if|before|after)\b")
_YES_NO_LEAD = re.compile(r"(?i)^(?:so\s+|and\s+|now\s+)?(?:is|are|was|were|do|does|did|will|would|can|could|should)\b")
_TRAILING_CLAUSE = re.compile(r"(?i)\s+(?:when|before|after|because|while|if)\s+")
_OPTION_LIST = re.compile(r"(?i)([^.?!:]*?\bor\b[^.?!]*)\?")


def normalize(text: str, *, drop_articles: bool = True) -> str:
    """Lower-case words without punctuation (apostrophes kept) and, by default, without articles."""
    words = re.sub(r"[^a-z0-9' ]+", " ", text.lower().replace("\u2019", "'")).split()
    if drop_articles:
        words = [w for w in words if w not in _ARTICLES]
    return " ".join(words)


def contains_phrase(haystack: str, needle: str) -> bool:
    """Whole-word containment of normalised ``needle`` in normalised ``haystack``."""
    return bool(needle) and re.search(rf"(?<![a-z0-9']){re.escape(needle)}(?![a-z0-9'])", haystack) is not None


def question_options(question: str) -> list[str]:
    """The options a question names ("..., the apple or the chocolate?" -> ["the apple", "the chocolate"]).

    Reads the last clause ending in '?' that contains "or": the last option follows the final
    "or" (up to a trailing "when ..." clause); earlier options are the comma-separated segments
    before it, read right to left until the question's lead-in ("Which snack will she pick").
    A yes/no lead-in ("Is she happy, sad or angry?") ends with the first option.
    """
    matches = _OPTION_LIST.findall(question)
    if not matches:
        return []
    clause = matches[-1].rsplit(":", 1)[-1].strip()
    before, _, last = clause.rpartition(" or ")
    last = _TRAILING_CLAUSE.split(last.strip(), maxsplit=1)[0].strip(" ,")
    segments = [seg.strip() for seg in before.split(",")]
    if not last or not before.strip() or len(last.split()) > MAX_OPTION_WORDS:
        return []
    options = [last]
    for position in range(len(segments) - 1, -1, -1):
        segment = segments[position]
        if not segment:
            continue
        if position > 0 and not _LEAD_WORD.match(segment) and len(segment.split()) <= MAX_OPTION_WORDS:
            options.insert(0, segment)
            continue
        if position == 0 and len(segments) == 1 or _YES_NO_LEAD.match(segment):
            options.insert(0, " ".join(segment.split()[-len(options[0].split()):]))
        break
    options = [option.strip(_QUOTES) for option in options]
    return options if len(options) >= 2 else []
