"""A reply read for the rules judge: its comparison form, and the marks in it that change its meaning.

Formatting is removed only after the marks that change meaning have been looked for: a struck-through
option (markdown ``~~B~~``, ``<s>``, Unicode combining overlays such as B\u0336), crosses, ticks and
checkboxes (``❌ B ✅ A``, ``[x] A [ ] B``), question marks of every script (found by their Unicode
names: ``?``, ``؟``, ``¿``, ``❓``, the Greek ``;``), emoji of faces, hands, signs and the like, and
emoticons (``;)``, ``:P``), controls that reorder the text as shown, a shrug ``¯\\_(ツ)_/¯``, the
sarcasm tag ``/s``, emphasis on a word (``*such*``) and words in capitals (``NEVER``). The judge decides
nothing where such a mark bears on the answer, unless the mark is part of the expected answer itself. A
picture of a thing (``popcorn 🍿``) may only show the option the words name.

Everything here is one pass over the text (or fixed-width patterns that cannot backtrack), and the
text is bounded (:data:`MAX_REPLY_CHARS`) before anything looks at it.
"""

from __future__ import annotations

import bisect
import enum
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache

from commet.judges.rules.lexicon import split_contractions
from commet.text import word_spans

#: replies longer than this are left to another judge (a chat model's reasoning and answer are far shorter)
MAX_REPLY_CHARS = 12_000

#: characters that stand between an option's label and its text, or between two labels, besides spaces and
#: ordinary punctuation: dashes (any Unicode dash), arrows, middle dots and bullets, invisible separators
SEPARATOR = "·"
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
_SARCASM_TAG = re.compile(r"(?<![\w/])/(?:s|sarc|sarcasm|j|jk)(?![\w/])")
_STRIKE_TAG = re.compile(r"<(?:s|del|strike)>", re.IGNORECASE)
_HTML_TAG = re.compile(r"</?(?:s|del|strike|b|i|u|em|strong|mark|sup|sub|span|p|br|answer|final_answer|response|result"
                       r"|output|choice)\s?/?>", re.IGNORECASE)
_SHRUG = "(ツ)"
#: checkboxes ("[x] A  [ ] B", "- [ ] the box", "( ) A (x) B"): ticks and crosses in ASCII
_CHECKBOX = re.compile(r"\[[ x*]\]|\( \)|\(x\)")
#: emoticons in the folded text, between spaces (or the text's ends): ":)", ";)", ":-(", ":p", ":'(", "^^", "<3"
_EMOTICON = re.compile(r"(?<!\S)(?:[:;=][-']?[()\[\]dpo3/\\|*]|\^_?\^|<3|-_-|t_t|;_;|o_o|¬¬)(?![\w'])")
#: words of the Unicode names of pictographs that say something about an answer rather than show a thing
_MEANINGFUL_PICTURES = frozenset({
    "FACE", "FACES", "HAND", "HANDS", "FINGER", "FINGERS", "THUMBS", "FIST", "PALM", "PALMS", "GESTURING",
    "SHRUGGING", "FACEPALMING", "POUTING", "FROWNING", "BOWING", "RAISING", "PERSON", "PEOPLE", "MAN",
    "WOMAN", "BOY", "GIRL", "BABY", "CHILD", "ADULT", "KISS", "COUPLE", "FAMILY", "SKULL", "GHOST", "CLOWN",
    "POO", "ALIEN", "ROBOT", "DEVIL", "OGRE", "GOBLIN", "MONKEY", "EYE", "EYES", "MOUTH", "TONGUE", "EAR",
    "NOSE", "HEART", "HEARTS", "CROSS", "CHECK", "MARK", "QUESTION", "EXCLAMATION", "WARNING", "PROHIBITED",
    "ENTRY", "NO", "NOT", "SIGN", "SYMBOL", "LETTER", "LETTERS", "DIGIT", "NUMBER", "KEYCAP", "REGIONAL",
    "SQUARED", "CIRCLED", "NEGATIVE", "BUTTON", "ARROW", "ARROWS", "BALLOT", "SPEECH", "THOUGHT", "ANGER",
    "COLLISION", "DIZZY", "SWEAT", "DASH", "SPARKLES", "SPARKLE", "ZZZ", "HUNDRED", "THINKING", "ZIPPER",
    "SHUSHING", "LYING", "MELTING", "SALUTING", "PEEKING", "EMOJI", "MODIFIER", "FLAG", "RED", "WHITE",
    "BLACK", "HEAVY", "PLUS", "MINUS", "DIVISION", "MULTIPLICATION", "EQUALS", "INFINITY", "TOP", "BACK",
    "END", "SOON", "ON", "OK", "NG", "VS", "COOL", "FREE", "NEW", "UP", "SOS", "ID", "CL", "IDEOGRAPH",
})
#: what joins two words into one name ("green_bucket_2", "toy-chest"), when it stands alone between them
_JOINERS = ("_", "-")
#: characters of arithmetic ("2+1", "3 × 2 = 6"): what they join is one sum, not a number and a comment
_OPERATORS = frozenset(" +=*×÷^%<>≤≥±")
_SENTENCE_ENDS = ".!?\n。！？;；"
#: abbreviations whose full stop ends no sentence
_ABBREVIATIONS = frozenset({"mr", "mrs", "ms", "dr", "st", "prof", "vs", "etc", "approx"})


class MarkKind(enum.Enum):
    """A mark that changes what a reply means."""

    QUESTION = "a question mark"
    STRIKE = "struck-through text"
    CROSS_OR_TICK = "a cross or a tick"
    PICTOGRAPH = "an emoji or pictograph"
    SHRUG = "a shrug"
    SARCASM = "a sarcasm tag"
    REORDERED = "a control that reorders the text as shown"
    CAPITALS = "a word in capitals"
    EMPHASIS = "an emphasised word"
    PICTURE = "a picture of a thing"  # an emoji that shows an object ("🍿"): it may only show the answer itself


@dataclass(frozen=True)
class Mark:
    kind: MarkKind
    start: int  # offset in Reply.text
    text: str


@dataclass
class Reply:
    """A reply in comparison form, with its words (and their offsets) and its marks.

    ``text`` is the reply folded (NFKC, casefold, plain apostrophes) with invisible characters,
    arrows, dashes and middle dots after a word made :data:`SEPARATOR`; ``clean`` is ``text`` with
    markdown and HTML formatting blanked out character for character, so offsets are shared.
    """

    raw: str
    text: str
    clean: str
    tokens: list[str]
    starts: list[int]  # offset in ``text`` of each token
    ends: list[int]  # offset in ``text`` after each token
    marks: list[Mark] = field(default_factory=list)
    emphasis: list[tuple[int, int]] = field(default_factory=list)  # (start, end) of emphasised text
    sentence_ends: list[int] = field(default_factory=list)  # offsets of the characters that end sentences
    #: (start, end) of each line of a markdown table ("| A | yes |"): cells, never a statement of the answer
    table_rows: list[tuple[int, int]] = field(default_factory=list)

    def marks_from(self, offset: int, kinds: set[MarkKind] | None = None) -> list[Mark]:
        """Marks at or after ``offset`` (of the given kinds)."""
        return [m for m in self.marks if m.start >= offset and (kinds is None or m.kind in kinds)]

    def token_at(self, offset: int) -> int:
        """Index of the first token starting at or after ``offset``."""
        return bisect.bisect_left(self.starts, offset)

    def gap(self, i: int) -> str:
        """The text between token ``i - 1`` and token ``i`` (punctuation, spaces, separators)."""
        return self.clean[self.ends[i - 1] if i > 0 else 0: self.starts[i] if i < len(self.starts) else len(self.clean)]

    def boundary(self, i: int) -> str:
        """What stands before token ``i``: "sentence" (a full stop, '!', '?', a line break), "clause" (a comma,
        semicolon, colon, dash, bracket or separator) or "" (spaces only, one underscore or hyphen joining two
        words into one name, or arithmetic: "green_bucket_2" and "2+1" are no "green_bucket" or "2" and a comment)."""
        low = self.ends[i - 1] if i > 0 else 0
        high = self.starts[i] if i < len(self.starts) else len(self.clean)
        at = bisect.bisect_left(self.sentence_ends, low)
        if at < len(self.sentence_ends) and self.sentence_ends[at] < high:
            return "sentence"
        gap = self.clean[low:high]
        if 0 < i < len(self.starts) and (gap in _JOINERS or gap.strip() and not set(gap) - _OPERATORS):
            return ""  # "green_bucket_2", "2+1", "2 = 2": one name, one sum
        return "clause" if gap.strip() else ""

    def clauses_from(self, first: int) -> Iterator[list[str]]:
        """The tokens of each clause from token ``first`` on, split where :meth:`boundary` has punctuation."""
        begin = first
        for end in range(first + 1, len(self.tokens) + 1):
            if end < len(self.tokens) and not self.boundary(end):
                continue
            yield self.tokens[begin:end]
            begin = end

    def in_table(self, offset: int) -> bool:
        """Whether ``offset`` lies in a row of a markdown table."""
        at = bisect.bisect_right(self.table_rows, (offset, len(self.clean) + 1)) - 1
        return at >= 0 and self.table_rows[at][0] <= offset < self.table_rows[at][1]


@lru_cache(maxsize=4096)
def char_mark(ch: str) -> MarkKind | str | None:
    """What one character is: a meaning mark (a combining stroke or enclosing mark is strike-through),
    ``"separator"`` (a dash, arrow, middle dot or invisible character), or None."""
    if ch.isascii():
        return MarkKind.QUESTION if ch == "?" else None
    name = unicodedata.name(ch, "")
    category = unicodedata.category(ch)
    if "QUESTION MARK" in name or "INTERROBANG" in name:
        return MarkKind.QUESTION
    if any(word in name for word in ("CHECK MARK", "BALLOT", "CROSS MARK", "MULTIPLICATION X", "SALTIRE")) \
            or name in ("MULTIPLICATION SIGN", "X MARK"):
        return MarkKind.CROSS_OR_TICK
    if category == "Me":
        return MarkKind.PICTOGRAPH if "KEYCAP" in name else MarkKind.STRIKE
    if category == "Mn" and "OVERLAY" in name:
        return MarkKind.STRIKE
    if "\u202a" <= ch <= "\u202e" or "\u2066" <= ch <= "\u2069":  # shown in another order than written
        return MarkKind.REORDERED
    if category == "Cf" or category == "Pd" or "ARROW" in name or ch in "\u00b7\u2022\u2027\u2219\u22c5\u30fb\u2043\u2212":
        return "separator"
    if "SHRUG" in name:
        return MarkKind.SHRUG
    if category in ("So", "Sk") and ord(ch) >= 0x2000 and not 0x2500 <= ord(ch) <= 0x25FF:
        # a picture of a thing ("popcorn 🍿") may illustrate the answer; faces, hands, people, hearts, letters,
        # signs and the like say something about it (irony, doubt, a no)
        return MarkKind.PICTOGRAPH if set(name.replace("-", " ").split()) & _MEANINGFUL_PICTURES or not name \
            else MarkKind.PICTURE
    return None


#: the scripts whose words the judge has grammar for (English, Spanish, German, French; Japanese and Chinese), by the
#: first word of a letter's Unicode name
_KNOWN_SCRIPTS = frozenset({"LATIN", "CJK", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "IDEOGRAPHIC", "DIGIT",
                            "FULLWIDTH", "HALFWIDTH", "SUPERSCRIPT", "SUBSCRIPT", "VULGAR", "ROMAN"})


@lru_cache(maxsize=4096)
def foreign_script(ch: str) -> bool:
    """Whether a letter is of a script the judge has no grammar for (Greek, Cyrillic, Hangul, Thai, Devanagari,
    Arabic, Hebrew, ...): a word written in it can be read only where it is an option's or an expected answer's
    own word, or a yes or no of the lexicon."""
    if ch.isascii() or not ch.isalpha():
        return False
    return unicodedata.name(ch, "UNKNOWN").split(" ", 1)[0] not in _KNOWN_SCRIPTS


def read_reply(raw: str) -> Reply:
    """The reply in comparison form with its marks (call only on text bounded by MAX_REPLY_CHARS)."""
    nfkc = unicodedata.normalize("NFKC", raw.replace("\u037e", "?"))  # NFKC makes the Greek question mark ';'
    chars = list(nfkc.casefold().translate(_APOSTROPHES))
    marks: list[Mark] = []
    if len(chars) != len(nfkc):  # casefolding changed the length ("ß" -> "ss"): fold character by character
        chars = [c.casefold().translate(_APOSTROPHES)[:1] or " " for c in nfkc]
    for i, ch in enumerate(chars):
        kind = char_mark(ch)
        if kind == "separator":
            chars[i] = SEPARATOR
        elif isinstance(kind, MarkKind):
            marks.append(Mark(kind, i, ch))
    text = "".join(chars)
    marks += [Mark(MarkKind.STRIKE, m.start(), m.group()) for m in _STRIKE_TAG.finditer(text)]
    marks += [Mark(MarkKind.SARCASM, m.start(), m.group()) for m in _SARCASM_TAG.finditer(text)]
    marks += [Mark(MarkKind.PICTOGRAPH, m.start(), m.group()) for m in _EMOTICON.finditer(text)]
    marks += [Mark(MarkKind.CROSS_OR_TICK, m.start(), m.group()) for m in _CHECKBOX.finditer(text)]
    shrug = text.find(_SHRUG)
    if shrug >= 0:
        marks.append(Mark(MarkKind.SHRUG, shrug, _SHRUG))
    clean, emphasis, struck = _without_formatting(text)
    marks += [Mark(MarkKind.STRIKE, start, text[start:end]) for start, end in struck]
    spans = word_spans(clean)
    marks += [Mark(MarkKind.CAPITALS, start, nfkc[start:end]) for start, end in word_spans(nfkc)
              if end - start >= 2 and nfkc[start:end].isupper()]
    tokens: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for start, end in spans:
        for part in split_contractions([clean[start:end]]):
            tokens.append(part)
            starts.append(start)
            ends.append(end)
    marks.sort(key=lambda mark: mark.start)
    return Reply(raw, text, clean, tokens, starts, ends, marks, emphasis, _sentence_ends(clean), _table_rows(text))


def _table_rows(text: str) -> list[tuple[int, int]]:
    """(start, end) of the lines that are rows of a markdown table: they open with '|' and hold two cells or more
    ("| A | yes |"; not a spoiler "||A||")."""
    rows: list[tuple[int, int]] = []
    start = 0
    while start <= len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        line = text[start:end].strip()
        if line.startswith("|") and sum(1 for cell in line.split("|") if cell.strip()) >= 2:
            rows.append((start, end))
        start = end + 1
    return rows


def _sentence_ends(text: str) -> list[int]:
    """Offsets of the characters that end a sentence: '!', '?', ';', a line break, a full stop that is not
    inside a number or a word ("3.5", "e.g") and does not follow an abbreviation ("Mrs.")."""
    found: list[int] = []
    word_start = 0
    for i, ch in enumerate(text):
        if ch.isalnum():
            if i == 0 or not text[i - 1].isalnum():
                word_start = i
            continue
        if ch not in _SENTENCE_ENDS:
            continue
        word = text[word_start:i] if i > 0 and text[i - 1].isalnum() else ""
        if ch == "." and (i + 1 < len(text) and text[i + 1].isalnum() or word in _ABBREVIATIONS
                          or len(word) == 1 and _opens_sentence(text, word_start, found)):
            continue  # "3.5", "Mrs.", and the full stop of a label that opens a sentence ("B. the box")
        found.append(i)
    return found


def _opens_sentence(text: str, start: int, ends: list[int]) -> bool:
    """Whether only spaces and formatting stand between the last sentence end (or the text's start) and ``start``."""
    begin = ends[-1] + 1 if ends else 0
    return not text[begin:start].strip(" \t\n(" + SEPARATOR)


def _without_formatting(text: str) -> tuple[str, list[tuple[int, int]], list[tuple[int, int]]]:
    """``text`` with markdown and HTML formatting blanked out (same length), the emphasised spans, and
    the struck-through spans (``~~x~~``)."""
    chars = list(text)
    for match in _HTML_TAG.finditer(text):
        chars[match.start():match.end()] = " " * (match.end() - match.start())
    _blank_line_formatting(chars)
    emphasis: list[tuple[int, int]] = []
    struck: list[tuple[int, int]] = []
    for delimiter, found in (("~", struck), ("*", emphasis), ("_", emphasis)):
        runs = _delimiter_runs(chars, delimiter)
        for (open_start, open_end), (close_start, close_end) in zip(runs[::2], runs[1::2], strict=False):
            found.append((open_end, close_start))
            for i in (*range(open_start, open_end), *range(close_start, close_end)):
                chars[i] = " "
        for start, end in runs[len(runs) - len(runs) % 2:]:  # an unpaired delimiter is formatting too
            for i in range(start, end):
                chars[i] = " "
    for i, ch in enumerate(chars):
        if ch in "#`>|":
            chars[i] = " "
    return "".join(chars), emphasis, struck


def _blank_line_formatting(chars: list[str]) -> None:
    """Blank list bullets ("- ", "* ", "+ ", "• ") at the start of each line."""
    at_line_start = True
    i = 0
    while i < len(chars):
        ch = chars[i]
        if ch == "\n":
            at_line_start = True
        elif at_line_start and ch in " \t":
            pass
        elif at_line_start and ch in "-*+•" + SEPARATOR and i + 1 < len(chars) and chars[i + 1] in " \t":
            chars[i] = " "
            at_line_start = False
        else:
            at_line_start = False
        i += 1


def _delimiter_runs(chars: list[str], delimiter: str) -> list[tuple[int, int]]:
    """(start, end) of each run of ``delimiter`` that opens or closes emphasis: next to a word character on
    one side; an underscore inside a word (``red_wicker_basket``) is no delimiter."""
    runs: list[tuple[int, int]] = []
    i = 0
    while i < len(chars):
        if chars[i] != delimiter:
            i += 1
            continue
        j = i
        while j < len(chars) and chars[j] == delimiter:
            j += 1
        before = chars[i - 1] if i > 0 else " "
        after = chars[j] if j < len(chars) else " "
        inside_word = before.isalnum() and after.isalnum()
        if not inside_word and (delimiter != "~" or j - i >= 2) and (not before.isspace() or not after.isspace()):
            runs.append((i, j))
        i = j
    return runs
