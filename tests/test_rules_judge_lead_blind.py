"""A labelled set written by the lead blind to the v4 judge's code, before its follow-up (125 replies, 25 kinds:
other languages and scripts, JSON and \\boxed{} answers, think blocks, self-corrections, hedges, rhetorical and
elliptic yes/no replies, labels that disagree with their option's text): a decided verdict is never wrong, and an
``unclear`` reply is never decided."""

from __future__ import annotations

import asyncio
from collections import Counter

from commet.judges.rules import RulesJudge
from commet.sources import load_dataset
from tests.test_judges_calibration import bench

LEAD = bench.load_labelled(bench.CALIBRATION.with_name("rules_judge_lead_blind.jsonl"))


def test_the_lead_blind_set_has_no_wrong_verdict() -> None:
    assert len(LEAD) >= 120 and Counter(case.label for case in LEAD).keys() == {"correct", "incorrect", "unclear"}
    judge = RulesJudge()
    dataset = load_dataset("sample")
    wrong = []
    for case in LEAD:
        verdict = asyncio.run(judge.judge(bench.request_for(case, dataset))).correct
        if verdict is not None and (case.label == "unclear" or verdict != (case.label == "correct")):
            wrong.append((case.note, case.response, case.label, verdict))
    assert wrong == []
