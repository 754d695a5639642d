"""Corrected differences by hand and by simulation (the test's size), coverage at every budget, the optimal design,
and the exact edge cases (issue 46). The simulations are bench/bench_calibration.py's, with few runs and fixed seeds;
the bench prints the full tables (docs/calibration.md)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from commet.reports.design import CalibrationError, allocate, error_spread, expected_variance, minimum
from commet.reports.differences import paired_difference
from commet.reports.ppi import clopper_pearson, stratified_ppi
from commet.store.calibration import Design

BENCH = Path(__file__).resolve().parent.parent / "bench" / "bench_calibration.py"


@pytest.fixture(scope="module")
def bench():  # noqa: ANN201 - the bench module
    spec = importlib.util.spec_from_file_location("bench_calibration", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_a_paired_difference_by_hand() -> None:
    """Six StoryTurns; stratum 0 (four, two labelled), stratum 1 (two, both labelled: a census of it).
    A judged right 1, 1, 1, 1, 0, 0 (people: 1, 0 on the first two; 0, 1 on the last two); B judged 1, 0, 1, 0, 0, 1
    (people agree). theta_A = (4 + 4 mean(0, -1) + 2 mean(0, 1)) / 6 = 1/2, theta_B = 3/6: the difference is 0.
    Labels part: stratum 0's rectifiers (y_A - f_A - y_B + f_B) / 6 = (0, -1/6) with two pseudo-units, one answer's
    error in either run at the ends of its range (A's judged rate 1, B's 1/2): -1/6 - 1/12 and 0 + 1/12; in sixths
    (0, -1, -3/2, 1/2): mean -1/2, squares 5/2, variance 5/6; times N^2 (1 - n/N) / n = 4: 10/3 sixths squared =
    5/54."""
    ones = np.ones(6)
    fa, fb = np.array([1, 1, 1, 1, 0, 0]), np.array([1, 0, 1, 0, 0, 1])
    ya, yb = np.array([1, 0, 9, 9, 0, 1]), np.array([1, 0, 9, 9, 0, 1])  # 9: not labelled, never read
    labelled = np.array([True, True, False, False, True, True])
    strata = np.array([0, 0, 0, 0, 1, 1])
    found = paired_difference(ones, fa, ya, ones, fb, yb, labelled, strata)
    assert found.first[0] == pytest.approx(0.5) and found.second[0] == pytest.approx(0.5)
    assert found.difference[0] == pytest.approx(0.0) and found.judged[0] == pytest.approx(4 / 6 - 3 / 6)
    assert found.se_labels[0] ** 2 == pytest.approx(5 / 54)
    assert found.low[0] < 0 < found.high[0] and not found.rejects[0]
    # each run's corrected accuracy is the one stratified_ppi gives it alone
    assert found.first[0] == pytest.approx(stratified_ppi(ones, fa, ya, labelled, strata).theta[0])
    # everything labelled: the labels part vanishes and the difference is the people's
    census = paired_difference(ones, fa, ya, ones, fb, yb, np.ones(6, bool), strata)
    assert census.se_labels[0] == 0.0 and census.difference[0] == pytest.approx((ya - yb).mean())


def test_the_corrected_test_holds_its_size_where_the_judged_one_fails(bench) -> None:  # noqa: ANN001
    """Two models of equal accuracy on the same StoryTurns, A judged by a lenient judge and B by a strict one: the
    judged figures differ, so the test of the judged difference rejects "no difference" almost always; the
    corrected test at most 5 % of the time (plus the simulation's error) at every budget, and it finds a real
    difference once labels suffice."""
    lenient, strict = bench.Judge(0.97, 0.60), bench.Judge(0.70, 0.97)
    for labels in (18, 40, 120):
        found = bench.compare(lenient, strict, labels, runs=300, stories=300, seed=labels)
        assert found.corrected_rejects <= 8.0, (labels, found)
        assert found.judged_rejects >= 80.0, (labels, found)
        assert found.story_coverage >= 92.0 and found.question_coverage >= 92.0, (labels, found)
        assert found.category_rejects <= 8.0 and found.category_coverage >= 92.0, (labels, found)  # a domain
    real = bench.compare(bench.Judge(0.85, 0.85), bench.Judge(0.85, 0.85), 200, runs=200, stories=300, seed=5,
                         shift=0.15)
    assert real.corrected_rejects >= 60.0 and real.story_coverage >= 92.0, real


def test_coverage_holds_at_every_budget_calibrate_accepts(bench) -> None:  # noqa: ANN001
    """From the smallest budget (two labels a stratum) up, for the best and the worst judge of the bench: the
    interval covers the true story and question accuracy in at least 93 % of 400 runs (the bench: 95 % and more)."""
    for judge in (bench.Judge(0.99, 0.99), bench.Judge(0.70, 0.97)):
        for labels in (10, 16, 40):
            story, question, _, _ = bench.coverage(judge, labels, runs=400, stories=300, seed=labels)
            assert story >= 93.0 and question >= 93.0, (judge, labels, story, question)


def test_the_optimal_design_narrows_the_interval_at_the_same_budget(bench) -> None:  # noqa: ANN001
    judge = bench.Judge(0.85, 0.85)
    proportional = bench.coverage(judge, 60, runs=300, stories=600, seed=4, design=Design.proportional)
    optimal = bench.coverage(judge, 60, runs=300, stories=600, seed=4, design=Design.optimal)
    assert optimal[0] >= 93.0 and optimal[1] >= 93.0, optimal
    assert optimal[2] < proportional[2] and optimal[3] < proportional[3], (proportional, optimal)


def test_an_optimal_sample_continued_as_labels_come_in_still_covers(bench) -> None:  # noqa: ANN001
    story, question, _, _ = bench.continued(bench.Judge(0.75, 0.95), 20, 60, runs=300, stories=300, seed=6)
    assert story >= 93.0 and question >= 93.0, (story, question)


def test_optimal_allocation_follows_the_judges_error_and_never_takes_labels_back() -> None:
    sizes = {"rules only, judged right": 200, "JUDGE, judged wrong": 200, "undecided answers": 10}
    spread = {"rules only, judged right": error_spread("rules", 0, 0), "JUDGE, judged wrong": error_spread("judge", 0, 0),
              "undecided answers": error_spread("undecided", 0, 0)}
    taken = allocate(sizes, 40, Design.optimal, spread=spread)
    assert sum(taken.values()) == 40 and taken["JUDGE, judged wrong"] > taken["rules only, judged right"] >= 2
    # labels that found errors where the prior expected none move the next labels there
    seen = dict(spread, **{"rules only, judged right": error_spread("rules", 5, 10)})
    later = allocate(sizes, 80, Design.optimal, spread=seen, already=taken)
    assert all(later[h] >= taken[h] for h in sizes) and sum(later.values()) == 80
    assert later["rules only, judged right"] > allocate(sizes, 80, Design.optimal, spread=spread)["rules only, "
                                                                                                 "judged right"]
    # marginal allocation gives the smallest expected variance of all the splits of 40 between the two big strata
    best = min(expected_variance(200, k, spread["rules only, judged right"])
               + expected_variance(200, 40 - taken["undecided answers"] - k, spread["JUDGE, judged wrong"])
               for k in range(2, 40 - taken["undecided answers"] - 1))
    undecided = expected_variance(10, taken["undecided answers"], spread["undecided answers"])
    assert sum(expected_variance(sizes[h], taken[h], spread[h]) for h in sizes) == pytest.approx(best + undecided)
    assert minimum({"a": 10, "b": 1}) == 3
    with pytest.raises(CalibrationError, match="already has"):
        allocate(sizes, 12, Design.optimal, spread=spread, already={"JUDGE, judged wrong": 12})


def test_a_census_gives_exact_intervals() -> None:
    """30 StoryTurns, all labelled and all right: Clopper-Pearson's [88.4, 100] %, not a point; 29 of 30 too."""
    ones = np.ones(30)
    found = stratified_ppi(ones, ones, ones, np.ones(30, bool), np.zeros(30, int))
    assert (found.low[0], found.high[0]) == (pytest.approx(0.025 ** (1 / 30)), 1.0)
    assert found.low[0] == pytest.approx(0.8843, abs=1e-4)
    y = np.r_[np.ones(29), 0.0]
    one_wrong = stratified_ppi(ones, ones, y, np.ones(30, bool), np.zeros(30, int))
    assert (one_wrong.low[0], one_wrong.high[0]) == (pytest.approx(clopper_pearson(29, 30)[0]),
                                                     pytest.approx(clopper_pearson(29, 30)[1]))
    # question accuracy: 30 StoryTurns of 3 answers all right; the effective size is the StoryTurns (no variance)
    three = np.full(30, 3.0)
    answers = stratified_ppi(three, three, three, np.ones(30, bool), np.zeros(30, int))
    assert answers.low[0] == pytest.approx(0.025 ** (1 / 30)) and answers.high[0] == 1.0
    assert clopper_pearson(7, 10) == (pytest.approx(0.3475, abs=1e-4), pytest.approx(0.9333, abs=1e-4))
