"""Option labels in a reply: "B", "(b)", "b)", "[[B]]", "Option B", "选项B", "B – the box", "A → B".

A label is one letter or a number of one or two digits. What may follow it is anything that is not a
letter: a full stop, bracket or colon, but also any dash, arrow, middle dot or invisible separator
(:mod:`.marks` has made the last three :data:`~commet.judges.rules.marks.SEPARATOR`). Several labels
joined by such characters, or by "and"/"or"/"then", are several labels. Everything here walks the
text once, character by character: no pattern that can backtrack.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from commet.judges.rules.marks import SEPARATOR
from commet.text import char_kind

#: words that may stand before a label ("Option B", "la opción B", "选项B")
LABEL_WORDS = (("option",), ("choice",), ("opción",), ("opcion",), ("选", "项"), ("選", "択", "肢"), ("letter",))
#: words that join labels in a list ("A and B", "A or B", "A, then B")
JOINERS = frozenset({"and", "or", "then", "y", "o", "und", "oder", "et", "ou", "和", "或", "与", "及", "还", "是", "&"})
_OPENERS = "([{（【「"
_CLOSERS = ")]}）】」"
#: characters that end a label ("B.", "B)", "B:", "B -", "B·the box", "B，", "B、")
_LABEL_ENDS = ".:;,)]}）】」：，、。-" + SEPARATOR + "=>/"


@dataclass(frozen=True)
class LeadingLabel:
    """A label at the start of a text and where the text after it starts."""

    label: str
    rest: int  # offset of what follows the label and its punctuation
    marked: bool  # bracketed, or followed by punctuation or a separator (not only a space): surely a label
    worded: bool = False  # after a label word ("Option 3", "选项B"): a label, never a number or an article


def _label_char(text: str, i: int) -> int:
    """End of a label starting at ``i`` (one letter, or one or two digits), or -1."""
    if i >= len(text):
        return -1
    if text[i].isdigit() and text[i].isascii():
        end = i + 1
        if end < len(text) and text[end].isdigit() and text[end].isascii():
            end += 1
        return end
    if "a" <= text[i] <= "z":
        return i + 1
    return -1


def _skip(text: str, i: int, chars: str) -> int:
    while i < len(text) and text[i] in chars:
        i += 1
    return i


def leading_label(text: str, start: int = 0) -> LeadingLabel | None:
    """The label that opens ``text[start:]`` (a folded, formatting-free text), or None.

    "(b) the box", "[[B]]", "B. the box", "B) x", "B: x", "B - x", "B·x", "B x", "Option B: x", "选项B".
    A letter directly followed by another letter is a word, never a label.
    """
    i = _skip(text, start, " \t\n" + SEPARATOR)
    worded = False
    for words in LABEL_WORDS:
        j = i
        for word in words:
            if not text.startswith(word, j):
                break
            j = _skip(text, j + len(word), " ") if len(word) > 1 else j + len(word)
        else:
            i = _skip(text, j, " :：")
            worded = True
            break
    opened = 0
    while i < len(text) and text[i] in _OPENERS and opened < 2:
        i = _skip(text, i + 1, " ")
        opened += 1
    end = _label_char(text, i)
    if end < 0:
        return None
    label = text[i:end]
    after = _skip(text, end, " ")
    closed = 0
    while after < len(text) and text[after] in _CLOSERS and closed < opened:
        after = _skip(text, after + 1, " ")
        closed += 1
    if opened and closed < opened:
        return None
    nxt = text[after] if after < len(text) else ""
    if nxt == "-" and after == end and text[after + 1:after + 3].isascii() and text[after + 1:after + 3].isalpha():
        return None  # "A-list", "B-movie", "T-shirt": a word
    unspaced = bool(nxt) and char_kind(nxt) == "u"  # "b选项", "bです": a label before a script without spaces
    if nxt and (nxt.isalnum() and after == end or nxt == "'") and not unspaced:
        return None  # "bx", "b's": a word
    marked = bool(opened) or (nxt != "" and nxt in _LABEL_ENDS)
    rest = _skip(text, after, _LABEL_ENDS + " \t\n") if marked else after
    if unspaced:
        rest = after
        for words in LABEL_WORDS:  # "b选项": the label word after the label
            suffix = "".join(words)
            if text.startswith(suffix, after):
                rest = _skip(text, after + len(suffix), " .:：，,")
                marked = True
    return LeadingLabel(label, rest, marked, worded)


def labels_only(tokens: Sequence[str], offered: Sequence[str]) -> list[str] | None:
    """The labels a reply consists of ("A/B", "A, B", "A – B", "A → B", "A·B", "A and B", "(A) (B)",
    "Option A or option B"), or None when it holds any other word. ``offered`` are the folded labels."""
    labels: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        prefix = next((w for w in LABEL_WORDS if w[0] == token and tuple(tokens[i:i + len(w)]) == w), None)
        if prefix is not None:
            i += len(prefix)
            continue
        if token in offered:
            labels.append(token)
        elif token not in JOINERS:
            return None
        i += 1
    return labels or None
