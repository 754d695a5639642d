"""The labelled calibration set: well-formed, the rules judge never marks a wrong answer right, figures printed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from commet.judges import RulesJudge, create_judge
from commet.sources import load_dataset
from tests.judge_server import JudgeServer, verdict

BENCH = Path(__file__).resolve().parent.parent / "bench" / "judge_calibration.py"


def _bench():  # noqa: ANN202 - the bench script as a module
    spec = importlib.util.spec_from_file_location("judge_calibration", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench = _bench()
CASES = bench.load_cases()
SAMPLE = load_dataset("sample")


def test_calibration_set_is_well_formed() -> None:
    assert len(CASES) >= 150
    labels = [c.label for c in CASES]
    assert set(labels) == {"correct", "incorrect"} and min(labels.count("correct"), labels.count("incorrect")) >= 60
    assert len({(c.story_id, c.turn, c.response, c.active_branch) for c in CASES}) == len(CASES)
    for case in CASES:
        turn = SAMPLE.get(case.story_id).turns[case.turn]
        assert case.note and case.response
        if case.active_branch is not None:
            assert turn.is_branch_point and 0 <= case.active_branch < len(turn.answers), case
    explanations = [c for c in CASES if len(c.response.split()) > 6]
    assert len(explanations) >= 60  # short answers and explanatory ones


async def test_rules_judge_never_marks_a_wrong_answer_right() -> None:
    figures = await bench.measure(RulesJudge(), CASES, SAMPLE)
    print("\n" + bench.summary("rules", figures))
    wrong_but_right = [(o.case.story_id, o.case.turn, o.case.response) for o in figures.false_positives]
    assert wrong_but_right == []
    assert figures.false_negatives == []  # what it decides, it decides right
    assert figures.coverage >= 0.45  # and it still decides the plain short answers (49 % here)


async def test_a_cascade_is_measured_the_same_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """A lenient LLM judge behind the rules: its mistakes, not the rules', are the false positives."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-test-key")
    with JudgeServer(lambda model, answer, expected, question: verdict(True, 1)) as server:
        judge = create_judge(server.spec("lenient"))
        figures = await bench.measure(judge, CASES, SAMPLE)
        await judge.aclose()
        undecided_by_rules = server.calls
    print("\n" + bench.summary(judge.name, figures))
    assert figures.coverage == 1.0
    assert undecided_by_rules == sum(o.judge != "rules" for o in figures.outcomes)
    assert figures.false_positives and all(o.judge != "rules" for o in figures.false_positives)
