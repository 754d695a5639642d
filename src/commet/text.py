"""Text utilities shared by the rules judge, the baselines and the importers: normalising and finding options.

Normalisation is Unicode-aware (NFKC, casefold), so that replies in any script compare: a
Chinese or Japanese answer written without spaces is one word, full-width letters become
ASCII, and a reply of just "A" is never emptied.
"""

from __future__ import annotations

import re
import unicodedata

_ARTICLES = {"a", "an", "the"}
MAX_OPTION_WORDS = 8
_QUOTES = " '\"\u2018\u2019\u201c\u201d\u300c\u300d"
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
_NON_WORD = re.compile(r"[^\w\s']+|_+")
_LEAD_WORD = re.compile(r"(?i)^(?:so\s+|and\s+|now\s+)?(?:which|what|who|whose|where|when|why|how|is|are|was|were|do|"
                        r"does|did|will|would|can|could|should|if|before|after)\b")
_YES_NO_LEAD = re.compile(r"(?i)^(?:so\s+|and\s+|now\s+)?(?:is|are|was|were|do|does|did|will|would|can|could|should)\b")
#: (a run of blanks is only tried from its start: from each of its blanks, a search of 100 KB of blanks was quadratic)
_TRAILING_CLAUSE = re.compile(r"(?i)(?<!\s)\s+(?:when|before|after|because|while|if)\s+")
_SENTENCE_END = re.compile(r"[.?!]")
_OR_WORD = re.compile(r"(?i)\bor\b")
#: where a labelled option starts: "A. x", "A) x", "(a) x", "a: x" after a line start, '?', ':' or a space
_LABEL_MARK = re.compile(r"(?:^|(?<=[\s?:;/]))(?:\((?P<p>[A-Za-z]|\d)\)|(?P<d>[A-Za-z]|\d)[.):])(?=\s)")


#: control characters other than line breaks and tabs (C0, DEL, C1): escape sequences, carriage returns, bells
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with its control characters shown as ``\\x1b`` and the like (line breaks and tabs kept).

    Replies, answers and ids are untrusted text: a terminal would obey an escape sequence in them
    (colour, hidden text, a moved cursor) and a carriage return would overwrite the line it is on.
    """
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


def fold(text: str) -> str:
    """NFKC and casefold, with typographic apostrophes made plain: the comparison form of any script."""
    return unicodedata.normalize("NFKC", text).casefold().translate(_APOSTROPHES)


def words(text: str) -> list[str]:
    """The folded words of ``text``: runs of letters and digits in any script (apostrophes kept inside words)."""
    return [w.strip("'") for w in _NON_WORD.sub(" ", fold(text)).split() if w.strip("'")]


def normalize(text: str, *, drop_articles: bool = True) -> str:
    """Folded words without punctuation and, by default, without articles (unless nothing else is left)."""
    tokens = words(text)
    if drop_articles:
        kept = [w for w in tokens if w not in _ARTICLES]
        tokens = kept or tokens
    return " ".join(tokens)


def contains_phrase(haystack: str, needle: str) -> bool:
    """Whole-word containment of normalised ``needle`` in normalised ``haystack``."""
    return bool(needle) and re.search(rf"(?<![\w']){re.escape(needle)}(?![\w'])", haystack) is not None


def question_options(question: str) -> list[str]:
    """The options a question names ("..., the apple or the chocolate?" -> ["the apple", "the chocolate"]).

    Reads the last clause ending in '?' that contains "or": the last option follows the final
    "or" (up to a trailing "when ..." clause); earlier options are the comma-separated segments
    before it, read right to left until the question's lead-in ("Which snack will she pick").
    A yes/no lead-in ("Is she happy, sad or angry?") ends with the first option.
    """
    asked = _last_either_or_question(question)
    if asked is None:
        return []
    clause = asked.rsplit(":", 1)[-1].strip()
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


def _last_either_or_question(text: str) -> str | None:
    """The last sentence of ``text`` that ends in '?' and holds the word "or" (from the end of the sentence before).

    One pass over the sentence ends, each sentence searched once: linear in the text (one pattern that
    matched the same thing backtracked cubically on a long question without a '?').
    """
    found, start = None, 0
    for end in _SENTENCE_END.finditer(text):
        if end.group() == "?" and _OR_WORD.search(text, start, end.start()):
            found = text[start:end.start()]
        start = end.end()
    return found


def _label_sequence(labels: list[str]) -> bool:
    """Labels that run A, B, C... (or a, b, c... or 1, 2, 3...) from the first, as option lists do."""
    first = labels[0]
    if first not in ("A", "a", "1"):
        return False
    return all(ord(label) == ord(first) + i if not first.isdigit() else label == str(i + 1)
               for i, label in enumerate(labels))


def labelled_options(text: str) -> tuple[str, list[tuple[str, str]]] | None:
    """Split a question with labelled options into (stem, [(label, text), ...]), or None.

    Reads "Where will she look? A. basket B. box", "(a) the basket (b) the box", one option per
    line ("A) ...", "B: ..."), or options separated by " / ". The labels must run A, B, C... (or
    a, b, c..., or 1, 2, 3...) from the first, so "Mr. B. Smith" is never an option list.
    """
    marks = list(_LABEL_MARK.finditer(text))
    for start in range(len(marks)):
        run = marks[start:]
        labels = [m.group("p") or m.group("d") for m in run]
        # the longest run from this mark whose labels are in sequence
        length = 0
        while length < len(labels) and _label_sequence(labels[: length + 1]):
            length += 1
        if length < 2:
            continue
        run = run[:length]
        options: list[tuple[str, str]] = []
        for i, mark in enumerate(run):
            end = run[i + 1].start() if i + 1 < len(run) else len(text)
            body = text[mark.end(): end].strip().rstrip("/;,").strip()
            if not body:
                break
            options.append((labels[i], body.strip(_QUOTES) or body))
        else:
            stem = text[: run[0].start()].strip()
            return stem, options
    return None
