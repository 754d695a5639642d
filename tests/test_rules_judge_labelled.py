"""The rules judge's contract: on the labelled sets, a decided verdict is never wrong.

tests/data/rules_judge_labelled.jsonl holds self-contained replies a careful person labelled
against the expected answer: plain answers, case and punctuation variants, paraphrases, letters
and option text, Chinese and Japanese, and the hard kinds (hedges, contrasts, self-corrections,
idioms, rhetorical questions, negated options, long replies whose conclusion differs from their
opening). The bundled sample's calibration set and tests/data/rules_judge_audit.jsonl (replies written
to break the judge, some of them ``unclear``: no decided verdict is right there) are held to the same
contract. All three are measured by bench/judge_calibration.py, which prints the decided share and the
precision.
"""

from __future__ import annotations

from collections import Counter

import pytest

from commet.judges.rules import RulesJudge
from tests.test_judges_calibration import CASES, SAMPLE, bench

LABELLED = bench.load_labelled()
AUDIT = bench.load_labelled(bench.AUDIT)


def test_labelled_set_is_large_and_covers_every_kind() -> None:
    assert len(LABELLED) >= 250
    kinds = Counter(case.note for case in LABELLED)
    for kind in ("hedge", "contrast", "self-correction", "idiom", "rhetorical", "negated-option", "both-options",
                 "long-conclusion", "letter", "option-text", "chinese", "japanese", "paraphrase", "case",
                 "punctuation", "plain", "exact-explanation", "contradiction"):
        assert kinds[kind] >= 1, kind
    labels = Counter(case.label for case in LABELLED)
    assert labels["correct"] >= 100 and labels["incorrect"] >= 100
    assert len({(c.question, c.response, c.active_branch) for c in LABELLED}) == len(LABELLED)


@pytest.mark.parametrize(("cases", "least_decided"), [(LABELLED, 0.4), (CASES, 0.4), (AUDIT, 0.3)],
                         ids=["labelled-replies", "sample-calibration", "audit"])
async def test_rules_judge_makes_no_wrong_decided_verdict(cases: list, least_decided: float) -> None:
    figures = await bench.measure(RulesJudge(), cases, SAMPLE)
    wrong = [(o.case.question or o.case.story_id, o.case.response, o.case.label) for o in figures.wrong]
    assert wrong == []
    # it must still decide the plain cases: a judge that never decides would pass the line above (the audit set
    # is mostly replies written to be hard)
    assert figures.coverage >= least_decided


@pytest.mark.parametrize("kind", ["plain", "letter", "option-text", "chinese", "japanese", "case"])
async def test_plain_answers_are_decided(kind: str) -> None:
    cases = [case for case in LABELLED if case.note == kind]
    figures = await bench.measure(RulesJudge(), cases, SAMPLE)
    undecided = [o.case.response for o in figures.outcomes if o.correct is None]
    assert len(undecided) <= len(cases) // 4, undecided
