"""The rules judge's contract: on a labelled set of replies, a decided verdict is never wrong.

tests/data/rules_judge_labelled.jsonl holds replies a careful person labelled against the
expected answer: plain answers, case and punctuation variants, paraphrases, letters and option
text, Chinese and Japanese, and the hard kinds (hedges, contrasts, self-corrections, idioms,
rhetorical questions, negated options, long replies whose conclusion differs from their opening).
The bundled sample's calibration set is held to the same contract.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from commet.engine.conversation import apply_branch_rules
from commet.format.model import Turn
from commet.judges.base import JudgeRequest
from commet.judges.rules import RulesJudge
from tests.test_judges_calibration import CASES, SAMPLE, bench

LABELLED = Path(__file__).resolve().parent / "data" / "rules_judge_labelled.jsonl"
ROWS = [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines() if line.strip()]


def _score(row: dict) -> bool | None:
    options = tuple((label, text) for label, text in row.get("options", []))
    request = JudgeRequest(story_id="s", task="t", turn=1, context=(), story="", question=row["question"],
                           expected=tuple(row["expected"]), response=row["response"],
                           active_branch=row.get("active_branch"), options=options)
    verdict = RulesJudge().decide(request)
    turn = Turn(question=row["question"], answers=row["expected"])
    return apply_branch_rules(turn, verdict, row.get("active_branch")).correct


def test_labelled_set_is_large_and_covers_every_kind() -> None:
    assert len(ROWS) >= 250
    kinds = Counter(row["kind"] for row in ROWS)
    for kind in ("hedge", "contrast", "self-correction", "idiom", "rhetorical", "negated-option", "both-options",
                 "long-conclusion", "letter", "option-text", "chinese", "japanese", "paraphrase", "case",
                 "punctuation", "plain", "exact-explanation", "contradiction"):
        assert kinds[kind] >= 1, kind
    labels = Counter(row["label"] for row in ROWS)
    assert labels["correct"] >= 100 and labels["incorrect"] >= 100
    assert len({(r["question"], r["response"], r.get("active_branch")) for r in ROWS}) == len(ROWS)


def test_rules_judge_makes_no_wrong_decided_verdict() -> None:
    wrong = []
    decided = 0
    for row in ROWS:
        score = _score(row)
        if score is None:
            continue
        decided += 1
        if score != (row["label"] == "correct"):
            wrong.append((row["question"], row["response"], row["label"], score))
    assert wrong == []
    # it must still decide the plain cases: a judge that never decides would pass the line above
    assert decided / len(ROWS) >= 0.4


@pytest.mark.parametrize("kind", ["plain", "letter", "option-text", "chinese", "japanese", "case"])
def test_plain_answers_are_decided(kind: str) -> None:
    rows = [row for row in ROWS if row["kind"] == kind]
    undecided = [row["response"] for row in rows if _score(row) is None]
    assert len(undecided) <= len(rows) // 4, undecided


async def test_sample_calibration_set_has_no_wrong_decided_verdict() -> None:
    figures = await bench.measure(RulesJudge(), CASES, SAMPLE)
    assert figures.false_positives == [] and figures.false_negatives == []
