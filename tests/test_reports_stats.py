"""Bootstrap intervals and McNemar's exact test against hand-computed values."""

from __future__ import annotations

import pytest

from commet.reports.stats import bootstrap_ratio, mcnemar_exact, paired_comparison


def test_bootstrap_is_seeded_and_contains_the_estimate() -> None:
    values = [1] * 30 + [0] * 20
    first = bootstrap_ratio(values, resamples=1000, seed=7)
    assert first == bootstrap_ratio(values, resamples=1000, seed=7)
    assert first.value == pytest.approx(60.0)
    assert first.low is not None and first.high is not None
    assert first.low < 60.0 < first.high
    assert first.low > 45.0 and first.high < 75.0  # about +-13.6 points for n = 50


def test_cluster_bootstrap_of_a_ratio() -> None:
    numerators, denominators = [2, 0, 3, 1, 1, 2], [3, 2, 3, 1, 2, 4]
    estimate = bootstrap_ratio(numerators, denominators, resamples=800, seed=1)
    assert (estimate.k, estimate.n) == (9, 15)
    assert estimate == bootstrap_ratio(numerators, denominators, resamples=800, seed=1)
    assert estimate.low <= 60.0 <= estimate.high  # type: ignore[operator]


def test_degenerate_proportions() -> None:
    assert bootstrap_ratio([1, 1, 1]).low == 100.0
    assert bootstrap_ratio([0, 0]).high == 0.0
    empty = bootstrap_ratio([])
    assert empty.value is None and empty.low is None


def test_mcnemar_exact_on_hand_computed_tables() -> None:
    # b = 1, c = 7: p = 2 * (C(8,0) + C(8,1)) / 2**8 = 18 / 256
    assert mcnemar_exact(1, 7) == pytest.approx(18 / 256)
    assert mcnemar_exact(7, 1) == pytest.approx(18 / 256)
    # b = 0, c = 10: p = 2 / 2**10
    assert mcnemar_exact(0, 10) == pytest.approx(2 / 1024)
    assert mcnemar_exact(3, 3) == 1.0 and mcnemar_exact(0, 0) == 1.0


def test_paired_comparison_counts_and_significance() -> None:
    # 20 items: 8 both right, 10 right only in A, 0 right only in B, 2 both wrong
    a = [True] * 18 + [False] * 2
    b = [True] * 8 + [False] * 12
    result = paired_comparison(a, b, resamples=1000, seed=3)
    assert (result.both_right, result.a_only, result.b_only, result.both_wrong) == (8, 10, 0, 2)
    assert result.difference == pytest.approx(50.0)
    assert result.p_value == pytest.approx(2 / 1024)
    assert result.low <= 50.0 <= result.high and result.low > 0
    assert result.significant
    same = paired_comparison(a, a, resamples=200)
    assert same.difference == 0 and same.p_value == 1.0 and not same.significant
