"""The rules judge on hostile replies: every pattern in commet.judges and commet.text is linear, and a reply of
100 KB (spaces, repeated labels, brackets, line breaks, emoji) is judged at once.

A reply of "A" and 4,000 spaces once made one pattern backtrack for 308 s of CPU while the run's other
conversations waited. These tests fail on any such pattern (minutes), not on speed: the limits are far above
what a linear pass takes on a busy machine (milliseconds); speed is measured by bench/judge_calibration.py.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import commet.judges
import commet.text
from commet.judges.base import JudgeRequest
from commet.judges.rules import decide
from commet.judges.rules.marks import MAX_REPLY_CHARS

SIZE = 100_000
#: far above a linear pass, far below what a backtracking pattern takes on these inputs (seconds to hours)
LIMIT_S = 2.0

HOSTILE = {
    "label and spaces": "A" + " " * SIZE,
    "spaces and a label": " " * SIZE + "A",
    "repeated labels": "A " * (SIZE // 2),
    "labels and dashes": "A-" * (SIZE // 2),
    "brackets": "([" * (SIZE // 4) + "A" + ")]" * (SIZE // 4),
    "line breaks": "A\n" * (SIZE // 2),
    "emoji": "🙄" * (SIZE // 2),
    "answer lines": "Final answer: A. " * (SIZE // 17),
    "bold": "**A** " * (SIZE // 6),
    "question marks": "A. the basket? " * (SIZE // 15),
    "zero-width": "A\u200b" * (SIZE // 2),
    "stars": "*" * SIZE,
    "underscores": "_" * SIZE,
    "tildes": "~" * SIZE,
    "chinese": "篮" * SIZE,
    "or": "the basket or " * (SIZE // 14),
    "yes": "yes, " * (SIZE // 5),
    "copy of the question": "Where will Sally look for her marble? " * (SIZE // 38),
}


def _request(reply: str) -> JudgeRequest:
    return JudgeRequest(story_id="s", task="t", turn=0, context=(), story="", question="Where will Sally look for her "
                        "marble?", expected=("the basket",), response=reply, options=(("A", "the basket"), ("B", "the box")))


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_reply_is_judged_at_once(name: str) -> None:
    """100 KB: undecided (past the judge's bound) at once; cut to the bound, still judged in linear time."""
    text = HOSTILE[name]
    started = time.perf_counter()
    assert decide(_request(text))[0] == "undecided"
    cut = text[:MAX_REPLY_CHARS]
    outcome = decide(_request(cut))[0]
    assert time.perf_counter() - started < LIMIT_S, name
    assert outcome in ("correct", "incorrect", "undecided")


def _patterns() -> list[tuple[str, re.Pattern[str]]]:
    modules = [commet.text]
    modules += [importlib.import_module(info.name) for info in pkgutil.walk_packages(commet.judges.__path__,
                                                                                      "commet.judges.")]
    return [(f"{module.__name__}.{name}", value) for module in modules for name, value in vars(module).items()
            if isinstance(value, re.Pattern)]


PATTERN_INPUTS = [*HOSTILE.values(), "," * SIZE, ", " * (SIZE // 2), "if " * (SIZE // 3), "<s" * (SIZE // 2),
                  "/" * SIZE, "A) b: (c) " * (SIZE // 10), "```" + "\n" * SIZE, "rules " * (SIZE // 6)]


@pytest.mark.parametrize(("name", "pattern"), _patterns(), ids=[name for name, _ in _patterns()])
def test_every_pattern_of_the_judges_and_the_text_utilities_is_linear(name: str, pattern: re.Pattern[str]) -> None:
    for text in PATTERN_INPUTS:
        started = time.perf_counter()
        pattern.search(text)
        pattern.findall(text)
        pattern.split(text)
        assert time.perf_counter() - started < LIMIT_S, (name, text[:20])


PIECES = ["A", "B", "a", "(", ")", ".", ":", ",", "-", "–", "→", "·", "*", "_", "~", "?", "؟", " ", "\n", "\u200b",
          "\u0336", "\u202e", "'", "yes", "no", "not", "the basket", "the box", "Final answer:", "so", "because", "🙄",
          "篮子", "答案是", "B选项", "**", "~~", "/s", "NEVER", "I would choose", "Answer", "isn't", "Option", "1.",
          "🍿", "| A |", "[x]", ";)", "2+1", "ではない", "Sí", "under", "It's", "wrong answer", "A-list"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30), st.sampled_from(["Where will Sally look for her marble?",
                                                                        "Is Leo lying?", "", "?", "小周会去哪里找？"]))
def test_any_reply_gets_a_verdict_and_never_an_exception(pieces: list[str], question: str) -> None:
    request = JudgeRequest(story_id="s", task="t", turn=0, context=(), story="", question=question,
                           expected=("the basket",) if "Sally" in question else ("Yes",), response="".join(pieces),
                           options=(("A", "the basket"), ("B", "the box")) if "Sally" in question else ())
    outcome, branch, why = decide(request)
    assert outcome in ("correct", "incorrect", "undecided") and why
    assert (branch is not None) == (outcome == "correct")
