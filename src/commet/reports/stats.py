"""Uncertainty: seeded bootstrap intervals over StoryTurns, paired comparisons and McNemar's exact test.

A figure with no variation at all (0/n, n/n: every StoryTurn wrong, or every one right; or every
StoryTurn with the same share of its questions right) gives every bootstrap resample the same
value, so a bootstrap interval would be a point and claim a certainty no finite sample has; such a
figure gets the exact (Clopper-Pearson) 95 % interval over its StoryTurns instead, which has the
closed form [0, 1 - (alpha/2)^(1/n)] for 0/n and [(alpha/2)^(1/n), 1] for n/n (n: the units
counted, e.g. StoryTurns or feedback cases). So does a paired difference whose pairs all agree.

Every figure of a report is a ratio of per-story sums (correct stories / stories, correct
questions / questions, effective feedback / feedback cases), so one resampling scheme serves
them all: StoryTurns are drawn with replacement (a cluster bootstrap: a story's questions
stay together) and the ratio is recomputed. The draws come from ``random.Random(seed)``, so
the same store always gives the same intervals; the resampled sums are NumPy array sums over
blocks of resamples (2,000 resamples of 600 StoryTurns in milliseconds, not the half second
of a Python loop, at the end of every ``commet eval``). Whole-number counts are summed as
integers, so the intervals are exactly those of the plain Python computation.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate
from math import exp, lgamma, log, log1p

import numpy as np

#: the cell of a figure that cannot be computed (no StoryTurn scored, a kappa undefined, control turns not told):
#: said so, with a note why, in every format; never a 0, a nan, or the '-' of an empty group
NOT_KNOWN = "not known"
DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 0
LEVEL = 0.95
#: index draws made at once (resamples x StoryTurns): memory stays small for any dataset, and a block is
#: a few milliseconds of work (draws made ahead in a thread hold an event loop no longer than that)
BLOCK_DRAWS = 1 << 16
#: draws kept for the next figure with the same StoryTurn count (8 bytes each)
CACHED_DRAWS = 4 << 20
#: the largest resample count matrix kept (resamples x StoryTurns, 4 bytes each): with it, a figure of whole-number
#: counts is one matrix product instead of drawing (or gathering) every index again
COUNTS_LIMIT = 8 << 20


@dataclass(frozen=True)
class Estimate:
    """A proportion ``k / n`` as a percentage, with its bootstrap interval (percent, None when n == 0)."""

    k: float
    n: float
    low: float | None = None
    high: float | None = None

    @property
    def value(self) -> float | None:
        return 100.0 * self.k / self.n if self.n else None

    @property
    def interval(self) -> tuple[float | None, float | None]:
        """The 95 % interval as every report prints it: ``[low, high]``."""
        return self.low, self.high


@dataclass(frozen=True)
class Range(Estimate):
    """Story accuracy while some answers are undecided: its own fields count them wrong, ``upper`` counts
    them right. A Range is an Estimate, so wherever one plain figure is read it reads the honest lower bound."""

    upper: Estimate = Estimate(0, 0)

    @property
    def interval(self) -> tuple[float | None, float | None]:
        """From the low end of the figure counting undecided answers wrong to the high end of the one
        counting them right (when that one has data)."""
        return (self.low, self.upper.high) if self.upper.value is not None else (self.low, self.high)

    @property
    def hinging(self) -> int:
        """StoryTurns whose verdict depends on undecided answers."""
        return round(self.upper.k - self.k)


@dataclass(frozen=True)
class Corrected(Estimate):
    """An estimate that is not a plain count: the judged accuracy corrected by people's labels (PPI), or a judge's
    accuracy over a weighted sample. ``k`` is the estimated number right of ``n``; ``basis`` says what it rests
    on ("PPI, 40 StoryTurns labelled") and is printed after it instead of k/n."""

    basis: str = ""


def fixed(value: float, digits: int, *, sign: bool = False) -> str:
    """``value`` with ``digits`` decimals, never as a negative zero ("-0.000" for a kappa of -0.0001)."""
    rounded = round(value, digits) + 0.0  # -0.0 + 0.0 is +0.0
    return f"{rounded:{'+' if sign else ''}.{digits}f}"


def _quantile(sorted_values: Sequence[float] | np.ndarray, q: float) -> float:
    """Linear-interpolation quantile of already sorted values (numpy's default method)."""
    position = q * (len(sorted_values) - 1)
    lower = int(position)
    upper = min(lower + 1, len(sorted_values) - 1)
    return float(sorted_values[lower] + (sorted_values[upper] - sorted_values[lower]) * (position - lower))


def _resample_indices(n: int, resamples: int, seed: int) -> Iterable[np.ndarray]:
    """Blocks of rows of ``n`` indices drawn with replacement, ``resamples`` rows in all.

    Each index is a 64-bit draw reduced modulo n (unbiased to 1 part in 2**64); the draws are
    ``random.Random(seed).randbytes`` read as little-endian words, one stream whatever the block
    size, so the same seed gives the same resamples on every run and every machine. A report
    asks for the same draws for many figures: up to ``CACHED_DRAWS`` of them are kept.
    """
    if n * resamples <= CACHED_DRAWS:
        return _kept_indices(n, resamples, seed)
    return _draw_indices(n, resamples, seed)


def prepare_draws(n: int, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> None:
    """Make, and keep, the draws a report on ``n`` StoryTurns will ask for, before it asks.

    (``commet eval`` calls it in a thread while the run waits on answers.)
    """
    if n <= 0:
        return
    if n * resamples <= COUNTS_LIMIT:  # what the report's figures of whole numbers are computed from
        _resample_counts(n, resamples, seed)
    else:
        _resample_indices(n, resamples, seed)  # draws beyond what is kept are made lazily, as a report asks


@functools.lru_cache(maxsize=4)
def _kept_indices(n: int, resamples: int, seed: int) -> tuple[np.ndarray, ...]:
    blocks = tuple(_draw_indices(n, resamples, seed))
    for block in blocks:
        block.flags.writeable = False
    return blocks


def _draw_indices(n: int, resamples: int, seed: int) -> Iterator[np.ndarray]:
    next_words = _python_words(seed)
    rows = max(1, BLOCK_DRAWS // max(n, 1))
    for start in range(0, resamples, rows):
        count = min(rows, resamples - start)
        yield (next_words(n * count).reshape(count, n) % np.uint64(n)).astype(np.intp)


def _python_words(seed: int) -> Callable[[int], np.ndarray]:
    """The function giving the next ``count`` 64-bit words of ``random.Random(seed).randbytes`` (little-endian).

    Python's generator and NumPy's ``MT19937`` are the same Mersenne Twister: started from the state
    ``random.Random(seed)`` holds, NumPy's raw 32-bit outputs are the words that ``getrandbits``, behind
    ``randbytes``, concatenates least significant first; NumPy makes them without building a Python integer
    of 40 MB for each of a large report's resample matrices (a third of the time).
    """
    state = random.Random(seed).getstate()[1]
    generator = np.random.MT19937()
    generator.state = {"bit_generator": "MT19937",
                       "state": {"key": np.asarray(state[:-1], dtype=np.uint32), "pos": state[-1]}}
    return lambda count: generator.random_raw(2 * count).astype("<u4").view("<u8")


@functools.lru_cache(maxsize=2)
def _resample_counts(n: int, resamples: int, seed: int) -> np.ndarray:
    """How often each of ``n`` StoryTurns is drawn in each resample (the draws of :func:`_resample_indices`), as
    float32 (a count is below 2**24): a resample's sum of whole numbers is then one matrix product, exact while
    every partial sum stays below 2**24 (:func:`_resampled_sums`)."""
    counts = np.empty((resamples, n), dtype=np.float32)
    row = 0
    for block in _draw_indices(n, resamples, seed):
        rows = block.shape[0]
        cells = (block + np.arange(rows, dtype=np.intp)[:, None] * n).ravel()
        counts[row:row + rows] = np.bincount(cells, minlength=rows * n).reshape(rows, n)
        row += rows
    counts.flags.writeable = False
    return counts


def _resampled_sums(counts: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``counts @ values`` for whole-number ``values`` (one column per figure), exactly: in float32 when no sum
    can reach 2**24 (every partial sum of integers is then exact, whatever the order), else in float64.

    A row of ``counts`` draws ``n`` StoryTurns in all (its counts add up to n), so no partial sum of a row's
    products passes ``n * max|value|``: the bound that decides, not ``n * sum|values|`` (which sent every
    question-accuracy figure of a large report through a float64 copy of the whole matrix).
    """
    bound = float(np.abs(values).max()) * counts.shape[1] if values.size else 0.0
    if bound < 2.0 ** 24:
        return (counts @ values.astype(np.float32)).astype(np.float64)
    return counts.astype(np.float64) @ values.astype(np.float64)


def _exact_array(values: Sequence[float]) -> np.ndarray:
    """``values`` as int64 when they are all whole numbers (sums then exact), else as float64."""
    array = np.asarray(values, dtype=np.float64)
    if array.size and np.all(array == np.round(array)) and np.all(np.abs(array) < 2.0 ** 53):
        return array.astype(np.int64)
    return array


def _whole_numbers(nums: Sequence[float], dens: Sequence[float]) -> tuple[np.ndarray, np.ndarray] | None:
    """Numerators and denominators as int64 arrays when all are whole numbers, else None."""
    num_array, den_array = _exact_array(nums), _exact_array(dens)
    if num_array.dtype != np.int64 or den_array.dtype != np.int64:
        return None
    return num_array, den_array


@functools.lru_cache(maxsize=256)
def _binary_resamples(n: int, k: int, resamples: int, seed: int) -> np.ndarray:
    """Bootstrap proportions of a 0/1 sample with ``k`` ones out of ``n`` (kept: a report asks for the same
    counts in several tables, e.g. a run's overall story accuracy in Tables 1 or 2 and in its source's table).

    Resampling n items with replacement puts Binomial(n, k/n) ones in the resample, so each
    replicate is one inverse-CDF draw: the same distribution as index resampling, in O(n + resamples).
    The uniform draws are ``random.Random(seed).random()``'s, made from the same 32-bit words at once.
    """
    p = k / n
    if p in (0.0, 1.0):
        proportions = np.full(resamples, 100.0 * p)
        proportions.flags.writeable = False
        return proportions
    log_p, log_q, log_factorial = log(p), log1p(-p), _log_factorials(n)
    log_all = log_factorial[n]
    cdf = list(accumulate(exp(log_all - log_factorial[j] - log_factorial[n - j] + j * log_p + (n - j) * log_q)
                          for j in range(n + 1)))
    drawn = np.minimum(np.searchsorted(np.asarray(cdf), _uniforms(resamples, seed) * cdf[-1], side="left"), n)
    proportions = 100.0 * drawn / n
    proportions.flags.writeable = False
    return proportions


@functools.lru_cache(maxsize=16)
def _log_factorials(n: int) -> tuple[float, ...]:
    """``lgamma(j + 1)`` for j = 0..n: the binomial terms of every figure over n StoryTurns share them."""
    return tuple(lgamma(j + 1) for j in range(n + 1))


@functools.lru_cache(maxsize=4)
def _uniforms(resamples: int, seed: int) -> np.ndarray:
    """``resamples`` draws of ``random.Random(seed).random()``, made at once (every 0/1 figure uses the same)."""
    words = _python_words(seed)(resamples).view("<u4")
    uniform = ((words[0::2] >> 5) * 67108864.0 + (words[1::2] >> 6)) * (1.0 / 9007199254740992.0)
    uniform.flags.writeable = False
    return uniform


def bootstrap_ratio(numerators: Sequence[float], denominators: Sequence[float] | None = None, *,
                    resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED, level: float = LEVEL) -> Estimate:
    """``sum(num) / sum(den)`` over StoryTurns with a percentile bootstrap interval (in percent).

    ``denominators`` defaults to 1 per StoryTurn (a plain proportion such as story accuracy).
    """
    dens = list(denominators) if denominators is not None else [1.0] * len(numerators)
    nums = list(numerators)
    if len(nums) != len(dens):
        raise ValueError("numerators and denominators differ in length")
    k, n = sum(nums), sum(dens)
    if not n:
        return Estimate(k, n)
    if all(x * n == k * d for x, d in zip(nums, dens, strict=True) if d):
        # no variation (every StoryTurn's own ratio is the figure: 0/n, n/n, or each story one of its two questions
        # right): every resample repeats the figure, so the interval is the exact one instead, over the StoryTurns
        # resampled (a story's questions stand or fall together: as many independent answers, at least, as stories
        # that have one; as the judge-corrected figure's census, commet.reports.ppi)
        return Estimate(k, n, *exact_interval(k, n, level, units=sum(1 for d in dens if d)))
    if all(d == 1 for d in dens) and all(x in (0, 1) for x in nums):
        ratios = np.sort(_binary_resamples(len(nums), int(k), resamples, seed))
    elif (whole := _whole_numbers(nums, dens)) is not None and len(nums) * resamples <= COUNTS_LIMIT:
        sums, totals = _resampled_sums(_resample_counts(len(nums), resamples, seed), np.stack(whole, axis=1)).T
        kept = totals != 0
        ratios = np.sort(100.0 * sums[kept] / totals[kept])
    else:
        num_array, den_array = _exact_array(nums), _exact_array(dens)
        blocks = []
        for idx in _resample_indices(len(nums), resamples, seed):
            totals = den_array[idx].sum(axis=1)
            kept = totals != 0
            blocks.append(100.0 * num_array[idx].sum(axis=1)[kept] / totals[kept])
        ratios = np.sort(np.concatenate(blocks))
    tail = (1.0 - level) / 2
    return Estimate(k, n, _quantile(ratios, tail), _quantile(ratios, 1.0 - tail))


def exact_interval(k: float, n: float, level: float = LEVEL, *, units: int) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval, in percent, of a ratio ``k / n`` whose ``units`` (StoryTurns) all have
    that same ratio: at a boundary the closed form (:func:`exact_boundary_interval`), else Clopper-Pearson's at
    the units, ``round(units * k / n)`` of them (as a census at the effective size, Korn and Graubard 1998)."""
    if k == 0 or k == n:
        return exact_boundary_interval(k, n, level, units=units)
    from commet.reports.ppi import clopper_pearson

    units = max(1, units)
    low, high = clopper_pearson(round(units * k / n), units, level)
    return 100.0 * low, 100.0 * high


def exact_boundary_interval(k: float, n: float, level: float = LEVEL, *, units: int | None = None
                            ) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval, in percent, of a proportion at a boundary: ``k == 0`` or ``k == n``.

    The Clopper-Pearson bounds are Beta quantiles; at the boundaries they have a closed form:
    0/u and u/u give [0, 1 - (alpha/2)^(1/u)] and [(alpha/2)^(1/u), 1], ``u`` the independent units:
    ``units`` where given (the StoryTurns of a ratio over questions), else ``n`` rounded (at least 1).
    """
    units = max(1, units if units is not None else round(n))
    bound = 100.0 * ((1.0 - level) / 2) ** (1.0 / units)
    if k == 0:
        return 0.0, 100.0 - bound
    if k == n:
        return bound, 100.0
    raise ValueError(f"{k}/{n} is not at a boundary")


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts ``b`` (A right, B wrong) and ``c``.

    ``2 * P(X <= min(b, c))`` for X ~ Binomial(b + c, 1/2), capped at 1, summed in log space in
    linear time: the largest term of the lower tail, C(m, k) / 2^m, comes from ``lgamma``, and each
    smaller one from the last by the ratio ``i / (m - i + 1)`` (a sum of exact big integers, as
    before, grows quadratically: 5 to 13 s at b + c = 10,200, against 40 microseconds).
    """
    m, k = b + c, min(b, c)
    if m == 0 or 2 * k >= m:
        return 1.0
    log_top = lgamma(m + 1) - lgamma(k + 1) - lgamma(m - k + 1) - m * log(2.0)
    total, term = 1.0, 1.0
    for i in range(k, 0, -1):  # term_i-1 / term_i = i / (m - i + 1), below 1 in the lower tail
        term *= i / (m - i + 1)
        total += term
        if term < 1e-17 * total:
            break
    log_tail = log_top + log(total)
    return min(1.0, 2.0 * exp(log_tail)) if log_tail < 700 else 1.0


@dataclass(frozen=True)
class PairedComparison:
    """Two runs scored on the same StoryTurns: accuracies, their difference with a CI, McNemar."""

    items: int
    accuracy_a: float
    accuracy_b: float
    difference: float  # percentage points, A minus B
    low: float
    high: float
    both_right: int
    a_only: int  # A right, B wrong
    b_only: int  # A wrong, B right
    both_wrong: int
    p_value: float
    #: the interval is the exact one of the discordant rate (the pairs all differ alike: no bootstrap can vary)
    exact: bool = False

    @property
    def significant(self) -> bool:
        """A real difference at the 5% level: McNemar rejects and the bootstrap interval excludes zero."""
        return self.p_value < 0.05 and (self.low > 0 or self.high < 0)


def paired_comparison(a: Sequence[bool], b: Sequence[bool], *, resamples: int = DEFAULT_RESAMPLES,
                      seed: int = DEFAULT_SEED, level: float = LEVEL) -> PairedComparison:
    """Paired bootstrap of the accuracy difference and McNemar's exact test; ``a[i]``, ``b[i]`` score item i."""
    if not a:
        raise ValueError("no StoryTurns in common")
    n = len(a)
    pairs = list(zip(a, b, strict=True))
    diffs = [int(x) - int(y) for x, y in pairs]
    tail = (1.0 - level) / 2
    exact = len(set(diffs)) == 1
    if exact:
        # no variation (the runs agree on every StoryTurn, or one is right on each where the other is wrong): every
        # resample repeats the difference, so the interval is the exact one of the discordant rate instead (0 of n
        # discordant: within the Clopper-Pearson bound on either side; n of n: from its lower bound to 100)
        discordant_low, discordant_high = exact_boundary_interval(n if diffs[0] else 0, n, level)
        low, high = {0: (-discordant_high, discordant_high), 1: (discordant_low, discordant_high),
                     -1: (-discordant_high, -discordant_low)}[diffs[0]]
    else:
        diff_array = np.asarray(diffs, dtype=np.int64)
        samples = np.sort(np.concatenate([100.0 * diff_array[idx].sum(axis=1) / n
                                          for idx in _resample_indices(n, resamples, seed)]))
        low, high = _quantile(samples, tail), _quantile(samples, 1.0 - tail)
    a_only = sum(bool(x and not y) for x, y in pairs)
    b_only = sum(bool(y and not x) for x, y in pairs)
    both_right = sum(bool(x and y) for x, y in pairs)
    return PairedComparison(
        items=n, accuracy_a=100.0 * sum(a) / n, accuracy_b=100.0 * sum(b) / n, difference=100.0 * sum(diffs) / n,
        low=low, high=high, both_right=both_right, a_only=a_only, b_only=b_only,
        both_wrong=n - both_right - a_only - b_only, p_value=mcnemar_exact(a_only, b_only), exact=exact)
