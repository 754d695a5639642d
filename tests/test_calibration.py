"""Prediction-powered inference against hand computation and by simulation; the calibration sample's allocation.

The end-to-end path (a real store, ``commet calibrate``, labels from ``commet label`` and from the review app in
Chromium) is tests/test_calibration_e2e.py.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from commet.reports.calibration import CalibrationError, allocate
from commet.reports.ppi import (
    Estimator,
    NotEnoughLabels,
    kappa_from_cells,
    stratified_ppi,
    t_value,
    wilson,
)

BENCH = Path(__file__).resolve().parent.parent / "bench" / "bench_ppi_coverage.py"


def _bench():  # noqa: ANN202 - the bench module
    spec = importlib.util.spec_from_file_location("bench_ppi_coverage", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_story_level_ppi_by_hand() -> None:
    """Six StoryTurns. Stratum A (judged right): f = 1, 1, 1, 1; people labelled the first two: right, wrong.
    Stratum B (judged wrong): f = 0, 0; both labelled: wrong, right (a census of B).

    theta = (sum f + N_A mean_A(y - f) + N_B mean_B(y - f)) / 6 = (4 + 4 * (-1/2) + 2 * (1/2)) / 6 = 1/2.
    Labels: A's rectifiers (0, -1) with the two pseudo-units at the ends of one answer's range there (judged rate
    1: -1 and 0): (0, -1, -1, 0), variance 1/3; times N_A^2 (1 - n_A/N_A) / n_A = 16 * 1/2 / 2 = 4; over X^2 = 36:
    4 * 1/3 / 36 = 1/27. B is a census: nothing. StoryTurns: m2 = mean of (f - 1/2)^2 over all = 1/4, corrected by the labelled (y - 1/2)^2 -
    (f - 1/2)^2 = 0 everywhere; times N/(N-1) * N / X^2 = 6/5 * 6/36: 1/4 * 1/5 = 1/20.
    """
    f = np.array([1, 1, 1, 1, 0, 0])
    y = np.array([1, 0, 0, 0, 0, 1])  # only the labelled ones count
    labelled = np.array([True, True, False, False, True, True])
    strata = np.array([0, 0, 0, 0, 1, 1])
    found = stratified_ppi(np.ones(6), f, y, labelled, strata)
    assert found.theta[0] == pytest.approx(0.5)
    assert found.se_labels[0] ** 2 == pytest.approx(1 / 27)
    assert found.se_stories[0] ** 2 == pytest.approx(1 / 20)
    assert found.judge_only[0] == pytest.approx(4 / 6) and found.lam[0] == 1.0
    # Satterthwaite: (1/27 + 1/20)^2 / ((1/27)^2 / 1 + (1/20)^2 / 5) degrees of freedom
    df = (1 / 27 + 1 / 20) ** 2 / ((1 / 27) ** 2 + (1 / 20) ** 2 / 5)
    half = float(t_value(df)) * np.sqrt(1 / 27 + 1 / 20)
    assert (found.low[0], found.high[0]) == (pytest.approx(max(0.0, 0.5 - half)), pytest.approx(min(1.0, 0.5 + half)))
    # the unlabelled units' y never matter
    assert stratified_ppi(np.ones(6), f, np.where(labelled, y, 7), labelled, strata).theta[0] == pytest.approx(0.5)


def test_question_level_ppi_by_hand() -> None:
    """Three StoryTurns in one stratum with 2, 3 and 1 answers, judged right 2, 1, 0; the first two labelled with 1
    and 3 right. theta = (3 + 3 * mean(1 - 2, 3 - 1)) / 6 = (3 + 3 * 1/2) / 6 = 3/4; with PPI++ the weight lam
    minimises the variance of y - lam f over the labelled pair: cov(y, f) / var(f) = (-1) / (1/2) -> clipped to 0,
    which is the classical estimate 3 * mean(y) / 6 = 3 * 2 / 6 = 1."""
    x, f, y = np.array([2, 3, 1]), np.array([2, 1, 0]), np.array([1, 3, 0])
    labelled = np.array([True, True, False])
    assert stratified_ppi(x, f, y, labelled, np.zeros(3)).theta[0] == pytest.approx(0.75)
    tuned = stratified_ppi(x, f, y, labelled, np.zeros(3), estimator=Estimator.ppi_plus)
    assert tuned.lam[0] == 0.0 and tuned.theta[0] == pytest.approx(1.0)


def test_every_unit_labelled_gives_the_truth_and_only_the_storyturns_spread() -> None:
    rng = np.random.default_rng(4)
    y = (rng.random(50) < 0.6).astype(float)
    f = np.where(rng.random(50) < 0.8, y, 1 - y)
    found = stratified_ppi(np.ones(50), f, y, np.ones(50, bool), (f > 0).astype(int))
    assert found.theta[0] == pytest.approx(y.mean()) and found.se_labels[0] == 0.0
    assert found.se_stories[0] ** 2 == pytest.approx(y.var(ddof=1) / 50)


def test_a_stratum_needs_two_labels_unless_all_are_labelled() -> None:
    f, strata = np.array([1, 1, 1, 0, 0]), np.array([0, 0, 0, 1, 1])
    with pytest.raises(NotEnoughLabels):
        stratified_ppi(np.ones(5), f, f, np.array([True, True, False, True, False]), strata)
    one_of_one = stratified_ppi(np.ones(3), np.array([1, 1, 0]), np.array([1, 0, 0]),
                                np.array([True, True, True]), np.array([0, 0, 1]))
    assert one_of_one.theta[0] == pytest.approx(1 / 3)


def test_student_t_quantiles() -> None:
    for df, exact in ((1, 12.7062), (2, 4.3027), (3, 3.1824), (5, 2.5706), (10, 2.2281), (30, 2.0423), (120, 1.9799)):
        assert float(t_value(df)) == pytest.approx(exact, abs=0.005 if df <= 3 else 0.002)
    assert 4.3027 < float(t_value(1.5)) < 12.7062  # between the exact ones: never the smaller
    assert float(t_value(np.inf)) == pytest.approx(1.959964, abs=1e-6)
    assert float(t_value(0.5)) == float(t_value(1))  # below 1: as 1 (conservative)


def test_wilson_and_kappa() -> None:
    low, high = wilson(0, 10)  # 0/10: [0, z^2 / (n + z^2)] = [0, 0.2775]
    assert low == 0.0 and high == pytest.approx(3.8415 / 13.8415, abs=1e-4)
    low, high = wilson(7, 10)
    assert (low, high) == (pytest.approx(0.3968, abs=1e-4), pytest.approx(0.8922, abs=1e-4))
    # 40 items: 20 both yes, 5 first only, 5 second only, 10 both no: po = 0.75, pe = 0.625^2 + 0.375^2 = 0.53125
    assert float(kappa_from_cells([20, 5, 5, 10])) == pytest.approx((0.75 - 0.53125) / (1 - 0.53125))
    assert np.isnan(kappa_from_cells([8, 0, 0, 0]))  # everyone said yes: chance agreement 1, kappa undefined


def test_allocation_shares_half_equally_and_half_in_proportion_to_what_is_left() -> None:
    # 20 of {a: 100, b: 10, c: 3}: max(2, 20 // 6) = 3 each, then 11 in proportion to what is left (97, 7, 0):
    # a gets 10 (10.26), b 0 (0.74); the last one to the largest remainder left: a (0.93 of 1)
    assert allocate({"a": 100, "b": 10, "c": 3}, 20) == {"a": 14, "b": 3, "c": 3}
    # the example: 80 of 80/89/36/25/10: 8 each, then 40 in proportion to 72/81/28/17/2
    assert allocate({"a": 80, "b": 89, "c": 36, "d": 25, "e": 10}, 80) == {"a": 23, "b": 25, "c": 13, "d": 11,
                                                                            "e": 8}
    assert allocate({"a": 4, "b": 1}, 10) == {"a": 4, "b": 1}  # the whole run
    assert sum(allocate({"a": 500, "b": 60, "c": 40, "d": 7, "e": 2}, 100).values()) == 100
    with pytest.raises(CalibrationError, match="draw at least 7"):  # 2 + 2 + 1 (all of c) + 2
        allocate({"a": 10, "b": 10, "c": 1, "d": 5}, 5)


def test_ppi_covers_the_truth_in_93_to_97_percent_of_simulated_runs() -> None:
    """bench/bench_ppi_coverage.py: 1,000 runs of 600 StoryTurns, 100 labelled per run, a judge right about 85 % of
    the answers it decides (the rules decide half without error; 3 % left undecided). The PPI interval covers the true
    story and question accuracy in 93 to 97 % of the runs; the judge-only interval, centred on a biased figure,
    almost never does."""
    bench = _bench()
    noisy = next(j for j in bench.JUDGES if j.sensitivity == j.specificity == 0.85)
    found = bench.simulate(noisy, runs=1000, stories=600, labels=100, seed=11)
    assert 0.93 <= found.story_ppi <= 0.97 and 0.93 <= found.question_ppi <= 0.97, found
    assert found.story_judged < 0.2 and found.question_judged < 0.2, found
    strict = next(j for j in bench.JUDGES if j.specificity > j.sensitivity)
    found = bench.simulate(strict, runs=1000, stories=600, labels=100, seed=12, estimator=Estimator.ppi_plus)
    assert 0.93 <= found.story_ppi <= 0.97 and 0.93 <= found.question_ppi <= 0.97, found
    assert found.story_judged < 0.2, found
