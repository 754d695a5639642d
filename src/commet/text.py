"""Small text utilities shared by the rules judge and the baselines: normalising and finding options."""

from __future__ import annotations

import re

_ARTICLES = {"a", "an", "the"}
_QUESTION_LEAD = re.compile(r"(?i)^(?:which|what|who|where|how|is|are|was|were|do|does|did|will|would|can|should)\b")
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
    """The options a question names ("the apple or the chocolate?" -> ["the apple", "the chocolate"]).

    Looks at the last clause ending in '?' that contains "or", after its last comma-free lead-in
    ("Which snack will she pick, the apple or the chocolate?"; "How does he feel, happy or sad?").
    """
    matches = _OPTION_LIST.findall(question)
    if not matches:
        return []
    clause = matches[-1]
    if "," in clause:
        clause = clause.rsplit(",", 1)[1] if " or " in clause.rsplit(",", 1)[1] else clause
    for lead in (":",):
        if lead in clause:
            clause = clause.rsplit(lead, 1)[1]
    clause = re.sub(r"(?i)^\s*(?:which|what|who|where|how|is|are|do|does|will|would|can|should|did)\b[^,]*?"
                    r"\b(?:pick|choose|like|want|feel|go|look|think|be|get|take|give|sit|stand|put|search)\b",
                    "", clause)
    parts = [p.strip(" ,") for p in re.split(r"(?i),|\bor\b", clause)]
    parts = [p for p in parts if p]
    if len(parts) >= 2 and _QUESTION_LEAD.match(parts[0]):
        parts[0] = " ".join(parts[0].split()[-len(parts[1].split()):])
    options = [p for p in parts if len(p.split()) <= 6]
    return options if len(options) >= 2 else []
