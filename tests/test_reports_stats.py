"""Bootstrap intervals and McNemar's exact test against hand-computed values."""

from __future__ import annotations

import time
from fractions import Fraction
from math import comb

import pytest

from commet.reports.stats import (
    bootstrap_ratio,
    exact_boundary_interval,
    fixed,
    mcnemar_exact,
    paired_comparison,
)


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


def test_proportions_at_the_boundaries_get_the_exact_interval_not_a_point() -> None:
    """0/n and n/n: every resample repeats the figure, so the interval is Clopper-Pearson's, whose bounds at the
    boundaries are (alpha/2)^(1/n): 0/2 -> [0, 1 - 0.025^(1/2)] = [0, 84.19]; 3/3 -> [0.025^(1/3), 1] = [29.24, 100]."""
    none_right = bootstrap_ratio([0, 0])
    assert (none_right.low, none_right.high) == (0.0, pytest.approx(100 * (1 - 0.025 ** 0.5)))
    assert none_right.high == pytest.approx(84.1886, abs=1e-4)
    all_right = bootstrap_ratio([1, 1, 1])
    assert (all_right.low, all_right.high) == (pytest.approx(29.2402, abs=1e-4), 100.0)
    # the same for ratios (feedback cases, answers), over the StoryTurns that hold them: a story's questions stand
    # or fall together, so 0/7 cases in two stories (a third has none) -> [0, 1 - 0.025^(1/2)] = [0, 84.19], not
    # the [0, 40.96] of seven independent cases; 5/5 answers in two stories -> [0.025^(1/2), 1] = [15.81, 100]
    cases = bootstrap_ratio([0, 0, 0], [3, 0, 4])
    assert (cases.k, cases.n, cases.low) == (0, 7, 0.0) and cases.high == pytest.approx(84.1886, abs=1e-4)
    answers = bootstrap_ratio([2, 3], [2, 3])
    assert answers.low == pytest.approx(15.8114, abs=1e-4) and answers.high == 100.0
    assert exact_boundary_interval(0, 7) == (0.0, pytest.approx(40.9616, abs=1e-4))  # seven independent units
    # against Clopper-Pearson computed another way: the binomial tail at the bound is alpha/2
    for n in (1, 4, 19, 250):
        high = bootstrap_ratio([0] * n).high / 100
        assert (1 - high) ** n == pytest.approx(0.025)
    assert exact_boundary_interval(0, 1) == (0.0, 97.5)
    with pytest.raises(ValueError):
        exact_boundary_interval(1, 3)
    empty = bootstrap_ratio([])
    assert empty.value is None and empty.low is None


def test_fixed_never_prints_a_negative_zero() -> None:
    assert fixed(-0.0001, 3) == "0.000" and fixed(-0.0, 2) == "0.00" and fixed(-0.0004, 3, sign=True) == "+0.000"
    assert fixed(-0.0006, 3) == "-0.001" and fixed(0.25, 2, sign=True) == "+0.25"


def test_mcnemar_exact_on_hand_computed_tables() -> None:
    # b = 1, c = 7: p = 2 * (C(8,0) + C(8,1)) / 2**8 = 18 / 256
    assert mcnemar_exact(1, 7) == pytest.approx(18 / 256)
    assert mcnemar_exact(7, 1) == pytest.approx(18 / 256)
    # b = 0, c = 10: p = 2 / 2**10
    assert mcnemar_exact(0, 10) == pytest.approx(2 / 1024)
    assert mcnemar_exact(3, 3) == 1.0 and mcnemar_exact(0, 0) == 1.0


def _exact_mcnemar(b: int, c: int) -> Fraction:
    """The two-sided exact p-value in exact rational arithmetic: sum of C(m, i) over the lower tail / 2^m."""
    m = b + c
    return min(Fraction(1), 2 * Fraction(sum(comb(m, i) for i in range(min(b, c) + 1)), 2 ** m)) if m else Fraction(1)


def test_mcnemar_log_space_sum_equals_exact_rational_arithmetic() -> None:
    for b in range(0, 41):
        for c in range(0, 41, 3):
            assert mcnemar_exact(b, c) == pytest.approx(float(_exact_mcnemar(b, c)), rel=1e-12, abs=1e-300), (b, c)
    for b, c in ((5, 400), (180, 230), (600, 640), (1000, 1), (2500, 2600)):
        assert mcnemar_exact(b, c) == pytest.approx(float(_exact_mcnemar(b, c)), rel=1e-9), (b, c)
    assert mcnemar_exact(0, 5000) == 0.0  # 2 / 2**5000 underflows to zero, never an error


def test_mcnemar_at_a_hundred_thousand_discordant_pairs_is_fast() -> None:
    """bench/bench_mcnemar.py measures it against the old sum of big integers; this only bounds it loosely."""
    started = time.perf_counter()
    p = mcnemar_exact(49_000, 51_000)
    assert time.perf_counter() - started < 1.0
    # normal approximation with continuity correction: z = (2000 - 1) / sqrt(100000) = 6.32 -> p ~ 2.6e-10
    assert 1e-10 < p < 1e-9


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


def _python_bootstrap(nums: list[float], dens: list[float], resamples: int, seed: int) -> tuple[float, float]:
    """The plain Python cluster bootstrap (one resample at a time) the vectorised one must reproduce."""
    import random

    rng, n, ratios = random.Random(seed), len(nums), []
    for _ in range(resamples):
        idx = [word % n for word in memoryview(rng.randbytes(8 * n)).cast("Q")]
        total = sum(dens[i] for i in idx)
        if total:
            ratios.append(100.0 * sum(nums[i] for i in idx) / total)
    ratios.sort()

    def quantile(q: float) -> float:
        position = q * (len(ratios) - 1)
        lower = int(position)
        upper = min(lower + 1, len(ratios) - 1)
        return ratios[lower] + (ratios[upper] - ratios[lower]) * (position - lower)

    return quantile(0.025), quantile(0.975)


def test_vectorised_bootstrap_equals_the_python_loop_exactly(monkeypatch) -> None:
    """Whole-number counts: the NumPy sums give bit for bit the intervals of the one-at-a-time loop,
    whatever the block size (one stream of draws)."""
    import random

    from commet.reports import stats

    rng = random.Random(5)
    dens = [rng.randint(0, 5) for _ in range(300)]
    nums = [rng.randint(0, d) for d in dens]
    expected = _python_bootstrap(nums, dens, 700, 11)
    estimate = bootstrap_ratio(nums, dens, resamples=700, seed=11)
    assert (estimate.low, estimate.high) == expected
    monkeypatch.setattr(stats, "BLOCK_DRAWS", 1000)  # 3 resamples per block, drawn afresh (not the kept draws)
    monkeypatch.setattr(stats, "CACHED_DRAWS", 0)
    assert bootstrap_ratio(nums, dens, resamples=700, seed=11) == estimate
    assert bootstrap_ratio(nums, dens, resamples=700, seed=12) != estimate


def test_resample_draws_are_python_s_own_words() -> None:
    """The draws come from NumPy's Mersenne Twister started at ``random.Random(seed)``'s state: word for word
    what ``randbytes`` gives, one stream across requests of any size, for any seed."""
    import random

    import numpy as np

    from commet.reports.stats import _python_words

    for seed in (0, 1, 11, 2**40 + 7, -3):
        rng, words = random.Random(seed), _python_words(seed)
        for count in (1, 3, 311, 65_536, 1):
            assert np.array_equal(words(count), np.frombuffer(rng.randbytes(8 * count), dtype="<u8")), (seed, count)


def test_vectorised_bootstrap_of_fractional_values_matches_to_rounding() -> None:
    import random

    rng = random.Random(8)
    dens = [rng.uniform(0.5, 3.0) for _ in range(120)]
    nums = [d * rng.random() for d in dens]
    low, high = _python_bootstrap(nums, dens, 500, 2)
    estimate = bootstrap_ratio(nums, dens, resamples=500, seed=2)
    assert estimate.low == pytest.approx(low, abs=1e-9) and estimate.high == pytest.approx(high, abs=1e-9)


def test_paired_comparison_interval_equals_the_python_loop() -> None:
    import random

    rng = random.Random(3)
    a = [rng.random() < 0.7 for _ in range(250)]
    b = [rng.random() < 0.5 for _ in range(250)]
    diffs = [int(x) - int(y) for x, y in zip(a, b, strict=True)]
    low, high = _python_bootstrap(diffs, [1] * len(diffs), 900, 4)
    result = paired_comparison(a, b, resamples=900, seed=4)
    assert (result.low, result.high) == (low, high)
