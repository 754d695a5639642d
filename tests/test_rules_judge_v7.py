"""Rules judge v7: a yes or no run on into its clause's subject answers by itself; it is not that clause's negation.

A set of 901 replies written blind to the judge's code and to the earlier sets (tests/data/rules_judge_v7_blind.jsonl:
replies as model families write them on the 18 tasks: headings, typos, hedged prose, Chinese mixed in, bold answers,
quotes of the story, references to earlier turns and to the feedback, why answers, belief statements without yes or
no, feelings by synonym, characters where a place is asked) found no wrong decided verdict. Probes after reading the
code found one class: a yes or no typed without punctuation into its clause, before the subject ("No she does", "No Mia
knows", "No really she knows") or at the end ("She is lying no"), was counted as that clause's own negation, so
"No she does" read as "she doesn't" and the judge decided a contradiction. Such a word now answers by itself and
the clause must say the same ("No she doesn't" is a no; "No she does" is undecided), while "no" before a noun
stays a negation ("No one knows", "She is no liar"). A second class of the same probes: the "so" of "think so" and
"says so" was read as a conclusion marker, so "He doesn't think so yes" decided "yes".
The tests below use other wording than the probes.
"""

from __future__ import annotations

import pytest

from commet.judges.base import JudgeRequest
from commet.judges.rules import RulesJudge, decide
from tests.test_judges_calibration import SAMPLE, bench

STORY = ("Omar puts his kite in the shed and goes to school. While he is away, his sister Lina moves the kite to "
         "the attic.")
KNOW = "Does Omar know that the kite is in the attic?"
LIE = "Is Lina lying when she says the kite is in the shed?"
LIE_STORY = STORY + " Later Lina tells Omar, \"The kite is in the shed,\" although she knows it is in the attic."
THINK = "Does Omar think the kite is in the shed?"


def _ask(question: str, expected: str, response: str, story: str = STORY) -> str:
    request = JudgeRequest(story_id="s", task="t", turn=0, context=(), story=story, question=question,
                           expected=(expected,), response=response, options=(), options_shown=True)
    return decide(request)[0]


@pytest.mark.parametrize(("name", "size", "decided"), [("rules_judge_v7_blind.jsonl", 500, 150),
                                                       ("rules_judge_v7_probes.jsonl", 55, 25)])
async def test_no_wrong_decided_verdict_on_the_v7_sets(name: str, size: int, decided: int) -> None:
    cases = bench.load_labelled(bench.CALIBRATION.with_name(name))
    assert len(cases) >= size and {case.label for case in cases} == {"correct", "incorrect", "unclear"}
    figures = await bench.measure(RulesJudge(), cases, SAMPLE)
    assert [(o.case.response, o.case.label, o.rationale) for o in figures.wrong] == []
    assert len(figures.decided) > decided  # the plain replies of the set are still read


@pytest.mark.parametrize(("question", "expected", "reply", "story"), [
    (KNOW, "no", "No he does", STORY),
    (KNOW, "no", "no he knows", STORY),
    (KNOW, "no", "No he does know that", STORY),
    (KNOW, "no", "No Omar knows", STORY),
    (KNOW, "no", "Non he does", STORY),
    (THINK, "yes", "Yes he doesn't", STORY),
    (LIE, "yes", "No she is", LIE_STORY),
    (LIE, "yes", "No Lina is lying", LIE_STORY),
    (LIE, "yes", "Yes she isn't", LIE_STORY),
    (KNOW, "no", "No honestly he knows", STORY),
    (KNOW, "no", "No clearly he does", STORY),
    (KNOW, "no", "He knows no", STORY),
    (KNOW, "no", "Omar does no", STORY),
    (THINK, "yes", "He doesn't think so yes", STORY),
    (LIE, "yes", "She is lying no", LIE_STORY),
    (LIE, "yes", "Lina lies no", LIE_STORY),
    ("Is the kite in the shed?", "no", "No it is", STORY),
    ("Is the kite in the shed?", "no", "Yes it isn't", STORY),
])
def test_a_run_on_yes_or_no_that_the_clause_after_it_contradicts_is_undecided(
        question: str, expected: str, reply: str, story: str) -> None:
    assert _ask(question, expected, reply, story) == "undecided"


@pytest.mark.parametrize(("question", "expected", "reply", "story", "outcome"), [
    (KNOW, "no", "No he doesn't", STORY, "correct"),
    (KNOW, "no", "no he does not know", STORY, "correct"),
    (KNOW, "no", "Yes he does", STORY, "incorrect"),
    (KNOW, "no", "Yes he knows", STORY, "incorrect"),
    (LIE, "yes", "Yes she is", LIE_STORY, "correct"),
    (LIE, "yes", "No she isn't", LIE_STORY, "incorrect"),
    (LIE, "yes", "No Lina isn't lying", LIE_STORY, "incorrect"),
    (KNOW, "no", "No really he doesn't", STORY, "correct"),
    (KNOW, "no", "He doesn't know no", STORY, "correct"),
    (KNOW, "no", "He knows yes", STORY, "incorrect"),
    (LIE, "yes", "She is lying yes", LIE_STORY, "correct"),
    (LIE, "yes", "She isn't lying no", LIE_STORY, "incorrect"),
    ("Is the kite in the shed?", "no", "No it isn't", STORY, "correct"),
])
def test_a_run_on_yes_or_no_that_the_clause_after_it_repeats_is_decided(
        question: str, expected: str, reply: str, story: str, outcome: str) -> None:
    assert _ask(question, expected, reply, story) == outcome


@pytest.mark.parametrize(("question", "expected", "reply", "outcome"), [
    (KNOW, "no", "Nobody knows.", "correct"),
    (KNOW, "no", "No one knows.", "correct"),
    (LIE, "yes", "Lina is no liar.", "incorrect"),
])
def test_no_before_a_noun_is_still_a_negation(question: str, expected: str, reply: str, outcome: str) -> None:
    assert _ask(question, expected, reply, LIE_STORY) == outcome


@pytest.mark.parametrize(("reply", "outcome"), [
    ("He doesn't think so yes", "undecided"),
    ("Lina says so no", "undecided"),
    ("I don't believe so yes", "undecided"),
    ("He was at school so no", "correct"),
    ("He was at school so yes", "incorrect"),
])
def test_so_after_a_verb_of_thinking_is_no_conclusion(reply: str, outcome: str) -> None:
    """"think so", "says so": the "so" stands for a clause; a yes or no after it is no "so"-conclusion."""
    assert _ask(KNOW, "no", reply) == outcome
