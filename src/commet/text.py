"""Text utilities shared by every layer: the one normalisation of CoMMET, and finding options in questions.

One normalisation (:func:`normalize`, from :func:`words`) compares texts for the rules judge, the
leak check of ``commet validate``, feedback keyed by answer and the reports. It is Unicode-aware:
NFKC and casefold (full-width letters become ASCII), words in any script with their combining
marks, a character of a script written without spaces (Chinese, Japanese, Thai) a word of its
own, underscores and hyphens separating words (``red_wicker_basket`` is ``red wicker basket``),
and a reply of just "A" is never emptied. Everything here is one pass or a pattern that cannot
backtrack, whatever the text.
"""

from __future__ import annotations

import functools
import re
import unicodedata

_ARTICLES = {"a", "an", "the"}
MAX_OPTION_WORDS = 8
_QUOTES = " '\"\u2018\u2019\u201c\u201d\u300c\u300d"
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
_LEAD_WORD = re.compile(r"(?i)^(?:so\s+|and\s+|now\s+)?(?:which|what|who|whose|where|when|why|how|is|are|was|were|do|"
                        r"does|did|will|would|can|could|should|if|before|after)\b")
_YES_NO_LEAD = re.compile(r"(?i)^(?:so\s+|and\s+|now\s+)?(?:is|are|was|were|do|does|did|will|would|can|could|should)\b")
#: a trailing clause after the last option ("..., the box or the basket when she comes back?"); the look-behind
#: keeps the match linear on long runs of spaces
_TRAILING_CLAUSE = re.compile(r"(?i)(?<!\s)\s+(?:when|before|after|because|while|if)(?=\s)")
_OR_WORD = re.compile(r"(?i)\bor\b")
#: where a labelled option starts: "A. x", "A) x", "(a) x", "a: x" after a line start, '?', ':' or a space
_LABEL_MARK = re.compile(r"(?:^|(?<=[\s?:;/]))(?:\((?P<p>[A-Za-z]|\d)\)|(?P<d>[A-Za-z]|\d)[.):])(?=\s)")


#: control characters other than line breaks and tabs (C0, DEL, C1: escape sequences, carriage returns, bells),
#: and the invisible marks that reorder or break what a terminal shows (bidirectional overrides and isolates,
#: line and paragraph separators)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with its control characters shown as ``\\x1b``, ``\\u202e`` and the like (line breaks and tabs kept).

    Replies, answers and ids are untrusted text: a terminal would obey an escape sequence in them
    (colour, hidden text, a moved cursor), a carriage return would overwrite the line it is on and a
    right-to-left override would show the rest of the line reversed.
    """
    return _CONTROL.sub(_shown, text)


def fold(text: str) -> str:
    """NFKC and casefold, with typographic apostrophes made plain: the comparison form of any script."""
    if text.isascii():  # (NFKC leaves ASCII as it is, and casefold is lower there; most text is ASCII)
        return text.lower().replace("`", "'")
    return unicodedata.normalize("NFKC", text).casefold().translate(_APOSTROPHES)


#: code point ranges of scripts written without spaces between words (Han, kana, Bopomofo, Thai, Lao, Khmer,
#: Myanmar, Tibetan): each character is a word of its own, so that a phrase is found inside a sentence
_UNSPACED_SCRIPTS = ((0x0E00, 0x0EFF), (0x0F00, 0x0FFF), (0x1000, 0x109F), (0x1780, 0x17FF), (0x2E80, 0x2FDF),
                     (0x3005, 0x3007), (0x3021, 0x3029), (0x3040, 0x30FF), (0x3100, 0x312F), (0x31A0, 0x31FF),
                     (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0xFF66, 0xFF9F), (0x20000, 0x3FFFF))
#: the words of ASCII text (the fast path of :func:`word_spans`): apostrophes only between letters
_ASCII_WORD = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z0-9]+)*")


@functools.lru_cache(maxsize=8192)
def char_kind(ch: str) -> str:
    """What one (folded) character is to a word: ``w`` a letter or digit, ``u`` a letter of a script written
    without spaces (a word of its own), ``m`` a combining mark (part of the letter before it), ``'`` an
    apostrophe, ``s`` anything else (spaces, punctuation, symbols, underscores and hyphens: word joiners of
    names such as ``red_wicker_basket`` separate words)."""
    if ch == "'":
        return "'"
    category = unicodedata.category(ch)
    if category[0] in "LN":
        code = ord(ch)
        return "u" if code >= 0x0E00 and any(low <= code <= high for low, high in _UNSPACED_SCRIPTS) else "w"
    return "m" if category[0] == "M" else "s"


def word_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each word of ``text``, which is taken as it is (fold it first to compare), in one pass.

    A word is a run of letters and digits with their combining marks (Devanagari vowel signs, Thai
    vowels), with apostrophes kept only between letters ("don't"); a character of a script written
    without spaces (Chinese, Japanese, Thai) is a word of its own. Underscores, hyphens and other
    punctuation separate words, so ``red_wicker_basket`` and ``red-wicker basket`` have the words of
    ``red wicker basket``.
    """
    if text.isascii():
        return [match.span() for match in _ASCII_WORD.finditer(text)]
    found: list[tuple[int, int]] = []
    start = -1
    kinds = [char_kind(ch) for ch in text]
    for i, kind in enumerate(kinds):
        if kind == "w" and start >= 0 and kinds[i - 1] == "u":
            found.append((start, i))
            start = i
        elif kind == "w" and start < 0:
            start = i
        elif kind in "wm" and start >= 0:
            continue
        elif kind == "u":
            if start >= 0:
                found.append((start, i))
            start = i
        elif kind == "'" and start >= 0 and kinds[i - 1] in "wm" and i + 1 < len(kinds) and kinds[i + 1] == "w":
            continue
        elif start >= 0:
            found.append((start, i))
            start = -1
    if start >= 0:
        found.append((start, len(text)))
    return found


def words(text: str) -> list[str]:
    """The folded words of ``text`` in any script (:func:`word_spans` of its folded form)."""
    folded = fold(text)
    if folded.isascii():
        return _ASCII_WORD.findall(folded)  # the words word_spans finds in ASCII text
    return [folded[start:end] for start, end in word_spans(folded)]


def normalize(text: str, *, drop_articles: bool = True) -> str:
    """Folded words joined by single spaces, without articles by default (unless nothing else is left).

    The one normalisation of CoMMET: the rules judge, the leak check of ``commet validate``, feedback
    keyed by answer and the reports compare texts in this form.
    """
    tokens = words(text)
    if drop_articles:
        kept = [w for w in tokens if w not in _ARTICLES]
        tokens = kept or tokens
    return " ".join(tokens)


def contains_phrase(haystack: str, needle: str) -> bool:
    """Whole-word containment of normalised ``needle`` in normalised ``haystack`` (both as :func:`normalize`
    makes them: words joined by single spaces)."""
    return bool(needle) and f" {needle} " in f" {haystack} "


def _last_option_clause(question: str) -> str | None:
    """The last clause ending in '?' that holds the word "or", from its first ':'-part with an "or" to the '?'
    (and after the last ':' in it); None when there is none. One pass over the question."""
    found = None
    start = 0
    for position, char in enumerate(question):
        if char in ".!":
            start = position + 1
        elif char == "?":
            parts = question[start:position].split(":")
            first = next((i for i, part in enumerate(parts) if _OR_WORD.search(part)), None)
            if first is not None:
                found = ":".join(parts[first:]).rsplit(":", 1)[-1].strip()
            start = position + 1
    return found


def question_options(question: str) -> list[str]:
    """The options a question names ("..., the apple or the chocolate?" -> ["the apple", "the chocolate"]).

    Reads the last clause ending in '?' that contains "or": the last option follows the final
    "or" (up to a trailing "when ..." clause); earlier options are the comma-separated segments
    before it, read right to left until the question's lead-in ("Which snack will she pick").
    A yes/no lead-in ("Is she happy, sad or angry?") ends with the first option.
    """
    clause = _last_option_clause(question)
    if clause is None:
        return []
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
    every = [m.group("p") or m.group("d") for m in marks]
    for start in range(len(marks)):
        run = marks[start:start + 27]  # a run of one-character labels is at most 26 long (A to Z): linear time
        labels = every[start:start + 27]
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
