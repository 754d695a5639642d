"""commet.text: one normalisation for every script, shared by the rules judge and validate's leak check."""

from __future__ import annotations

import pytest

from commet.judges.rules.labels import labels_only, leading_label
from commet.judges.rules.marks import MarkKind, read_reply
from commet.text import _APOSTROPHES, contains_phrase, fold, normalize, word_spans, words


@pytest.mark.parametrize(("text", "expected"), [
    ("red_wicker_basket", ["red", "wicker", "basket"]),
    ("Red-wicker  basket!", ["red", "wicker", "basket"]),
    ("don't dogs' 'tis", ["don't", "dogs", "tis"]),
    ("नमस्ते दुनिया", ["नमस्ते", "दुनिया"]),  # vowel signs and viramas stay in their words
    ("苹果在篮子里", ["苹", "果", "在", "篮", "子", "里"]),  # a script without spaces: a word per character
    ("答えはBです", ["答", "え", "は", "b", "で", "す"]),
    ("B选项", ["b", "选", "项"]),
    ("Ｂ．かご", ["b", "か", "ご"]),  # full-width letters are ASCII once folded
    ("Straße CAFÉ", ["strasse", "café"]),
    ("", []),
])
def test_words_in_any_script(text: str, expected: list[str]) -> None:
    assert words(text) == expected


def test_ascii_text_folds_and_splits_as_any_text_does() -> None:
    """ASCII text takes a shorter way (no NFKC, lower for casefold, findall for the spans): the same result."""
    import random
    import string
    import unicodedata

    rng = random.Random(20261204)
    assert all(unicodedata.normalize("NFKC", chr(c)) == chr(c) and chr(c).casefold() == chr(c).lower()
               for c in range(128))
    for _ in range(5000):
        text = "".join(rng.choices(string.printable + "`'", k=rng.randint(0, 30)))
        general = unicodedata.normalize("NFKC", text).casefold().translate(_APOSTROPHES)
        assert fold(text) == general
        assert words(text) == [general[start:end] for start, end in word_spans(general)]


def test_phrases_are_found_whole_in_any_script() -> None:
    assert contains_phrase(normalize("The pear is in the red_wicker_basket."), normalize("red wicker basket"))
    assert contains_phrase(normalize("苹果在篮子里"), normalize("篮子"))
    assert not contains_phrase(normalize("the basketball"), normalize("basket"))
    assert not contains_phrase(normalize("anything"), "")


@pytest.mark.parametrize(("reply", "label", "rest", "marked"), [
    ("A. the basket", "a", "the basket", True),
    ("(b)", "b", "", True),
    ("[[B]]", "b", "", True),
    ("Option B: x", "b", "x", True),
    ("B – the box", "b", "the box", True),
    ("A\u200bthe box", "a", "the box", True),  # an invisible separator after a label
    ("A → the box", "a", "the box", True),
    ("A·the box", "a", "the box", True),
    ("选项B", "b", "", False),
    ("Bです", "b", "です", False),
    ("a basket", "a", "basket", False),  # "a" may be the article: the caller decides
])
def test_labels_with_any_separator(reply: str, label: str, rest: str, marked: bool) -> None:
    text = read_reply(reply).clean
    found = leading_label(text)
    assert found is not None and (found.label, text[found.rest:].strip(), found.marked) == (label, rest, marked)


@pytest.mark.parametrize("reply", ["bx", "büro", "123", "(a", "I'm"])
def test_words_are_no_labels(reply: str) -> None:
    assert leading_label(read_reply(reply).clean) is None


@pytest.mark.parametrize("reply", ["A-B", "A–B", "A→B", "A·B", "A\u200bB", "A ⇒ B", "A, then B", "(A) (B)", "A and B"])
def test_labels_joined_by_separators_are_several_labels(reply: str) -> None:
    assert labels_only(read_reply(reply).tokens, ["a", "b"]) == ["a", "b"]


@pytest.mark.parametrize(("reply", "kind"), [
    ("~~B~~ A", MarkKind.STRIKE), ("<del>B</del> A", MarkKind.STRIKE), ("B\u0336 A", MarkKind.STRIKE),
    ("❌ B ✅ A", MarkKind.CROSS_OR_TICK), ("B ✔", MarkKind.CROSS_OR_TICK), ("☑ A", MarkKind.CROSS_OR_TICK),
    ("B؟", MarkKind.QUESTION), ("¿B?", MarkKind.QUESTION), ("B\u037e", MarkKind.QUESTION), ("B？", MarkKind.QUESTION),
    ("B❓", MarkKind.QUESTION), ("B‽", MarkKind.QUESTION), ("🍿", MarkKind.PICTURE), ("B 🙄", MarkKind.PICTOGRAPH),
    ("B ;)", MarkKind.PICTOGRAPH), ("B :P", MarkKind.PICTOGRAPH), ("B 👎", MarkKind.PICTOGRAPH), ("🇧", MarkKind.PICTOGRAPH),
    ("¯\\_(ツ)_/¯", MarkKind.SHRUG), ("Yes /s", MarkKind.SARCASM), ("He NEVER lies", MarkKind.CAPITALS),
    ("\u202eB", MarkKind.REORDERED),
])
def test_marks_that_change_meaning_are_found_before_formatting_goes(reply: str, kind: MarkKind) -> None:
    assert kind in {mark.kind for mark in read_reply(reply).marks}


@pytest.mark.parametrize("reply", ["Answer:D", "(A):(B)", "A;)", "B: (a) the box"])
def test_colons_and_brackets_inside_text_are_no_emoticons(reply: str) -> None:
    assert MarkKind.PICTOGRAPH not in {mark.kind for mark in read_reply(reply).marks}


def test_rows_of_a_markdown_table_are_found_and_a_spoiler_is_no_table() -> None:
    reply = read_reply("Here:\n| A | yes |\n|---|---|\n| B | no |\n\nDone ||A||")
    rows = [reply.text[start:end] for start, end in reply.table_rows]
    assert len(rows) == 3 and rows[0] == "| a | yes |" and rows[2] == "| b | no |"  # and the |---| line
    assert reply.in_table(reply.text.index("| b")) and not reply.in_table(reply.text.index("done"))


def test_formatting_is_blanked_in_place() -> None:
    reply = read_reply("**Answer:** *such* a red_wicker_basket\n- B")
    assert len(reply.clean) == len(reply.text)
    assert reply.tokens == ["answer", "such", "a", "red", "wicker", "basket", "b"]
    assert [reply.text[s:e] for s, e in reply.emphasis] == ["answer:", "such"]
