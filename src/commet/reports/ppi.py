"""Prediction-powered inference (PPI, PPI++) for a judged accuracy, with a stratified sample of human labels.

A run has N StoryTurns, each judged: ``f`` (the judge's count of correct answers in it, or 1 when
the judge scored the whole StoryTurn right) over ``x`` (its answers, or 1 for story accuracy).
People labelled a stratified random sample of the StoryTurns, which gives ``y``, the true count,
for those. The estimate of the accuracy ``theta = sum(y) / sum(x)`` over the run is

    theta = ( lam * sum_all f  +  sum_h N_h * mean_{labelled in h} (y - lam * f) ) / sum_all x

(Angelopoulos et al. 2023, "Prediction-powered inference"; with ``lam`` fitted, PPI++: Angelopoulos,
Duchi and Zrnic 2023). The first term is what the judge says; the second, the rectifier, is the
judge's error measured where people looked, scaled to each stratum's size. ``lam = 1`` is PPI;
PPI++ picks the ``lam`` in [0, 1] that minimises the variance (``lam = 0`` ignores the judge).

Its variance has two parts that add up exactly (law of total variance):

* labels: which StoryTurns were labelled, ``sum_h N_h^2 (1 - n_h/N_h) s_h^2 / n_h / X^2`` (stratified
  sampling without replacement; zero when every StoryTurn is labelled). ``s_h^2`` is the sample variance of
  the rectifier ``y - lam f`` over the stratum's labels and two pseudo-units at the ends of the range one
  answer's rectifier can take there (one answer right, one wrong, at the stratum's judged rate ``r_h``:
  ``-lam r_h`` and ``1 - lam r_h``), as Agresti and Caffo (2000) add a success and a failure to each sample.
  Without them a stratum whose few labels all agree with the judge would count as judged without error
  (with 6 labels where the judge errs on 28 % of the StoryTurns that happens 14 % of the time), and with
  the smaller pseudo-count used before (1/8 added to the sum of squares) the interval covered the true
  question accuracy in 88-91 % of simulated runs at 12-15 labels; with them it covers it in at least 95 %
  at every budget ``commet calibrate`` accepts (bench/bench_calibration.py). Their weight falls as 1/n_h.
  They stand for one error among the stratum's labels, which is far too many where the labels of the whole
  sample show its deciders (the rules judge) hardly ever err: with ``bound`` (each unit's answers' upper error
  rates, Wilson's 95 % upper end for each decider over every labelled answer of the sample, summed) they add
  at most twice the stratum's mean bound on a unit's squared error (:func:`pseudo_ceiling`), so that a stratum
  decided by a judge the labels found reliable needs few labels of its own (the optimal design then puts the
  labels where the judge errs: :mod:`commet.reports.design`);
* stories: which StoryTurns the run has (as the report's bootstrap), ``N/(N-1) m2 N / X^2`` with
  ``m2`` the mean of ``(y - theta x)^2``, itself estimated by PPI (judge everywhere, corrected by
  the labels).

The interval is ``theta +- t sqrt(labels + stories)``, clipped to [0, 1], with ``t`` Student's quantile at
Satterthwaite's degrees of freedom for the sum (each stratum's part has ``n_h - 1``, the StoryTurns'
``N - 1``): with few labels per stratum the normal quantile would cover too rarely. A census (every
StoryTurn labelled) has no labels part; its interval is then exact: Clopper-Pearson's for story accuracy,
and for question accuracy Clopper-Pearson's at the estimate's effective number of answers (Korn and
Graubard 1998), so that 30 StoryTurns all right give [88.4, 100] %, not a point. Everything is computed
on arrays with a leading batch axis (one row per run), so a simulation of a thousand runs is
one call (bench/bench_ppi_coverage.py). The docs (docs/calibration.md) say when it is valid.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from math import lgamma
from statistics import NormalDist

import numpy as np

from commet.errors import CommetError

LEVEL = 0.95


class Estimator(str, Enum):
    """``ppi``: the judge's figure corrected by its measured error (lam = 1); ``ppi++``: lam fitted to the labels."""

    ppi = "ppi"
    ppi_plus = "ppi++"


class NotEnoughLabels(CommetError, ValueError):
    """A stratum with StoryTurns but fewer than two labelled ones (and not all of them): its error is unknown."""


@dataclass(frozen=True)
class PPIEstimates:
    """Per batch row: the corrected accuracy (0..1), its interval and what went into it."""

    theta: np.ndarray
    low: np.ndarray
    high: np.ndarray
    se_labels: np.ndarray  # standard error from which StoryTurns were labelled
    se_stories: np.ndarray  # standard error from which StoryTurns the run has
    judge_only: np.ndarray  # sum f / sum x
    lam: np.ndarray


def z_value(level: float = LEVEL) -> float:
    return NormalDist().inv_cdf(0.5 + level / 2)


def t_value(df: np.ndarray | float, level: float = LEVEL) -> np.ndarray:
    """Student's t quantile for a two-sided ``level`` at ``df`` degrees of freedom: exact at 1 and 2 (closed forms),
    the Cornish-Fisher expansion in 1/df from 3 (Abramowitz and Stegun 26.7.5: 0.004 below the exact value at 3,
    within 0.001 from 5), linear in 1/df in between; ``df`` below 1 counts as 1, an infinite one gives the normal
    quantile."""
    z = z_value(level)
    terms = ((z ** 3 + z) / 4, (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96,
             (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384,
             (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160)
    freedom = np.maximum(np.asarray(df, float), 1.0)

    def expansion(inverse: np.ndarray) -> np.ndarray:
        found: np.ndarray = z + np.sum([term * inverse ** (power + 1) for power, term in enumerate(terms)], axis=0)
        return found

    p = 0.5 + level / 2
    one, two = np.tan(np.pi * (p - 0.5)), (2 * p - 1) / np.sqrt(2 * p * (1 - p))  # df 1: Cauchy; df 2
    few = np.interp(1 / freedom, [1 / 3, 1 / 2, 1.0], [float(expansion(np.asarray(1 / 3))), two, one])
    quantile: np.ndarray = np.where(freedom < 3, few, expansion(1 / np.maximum(freedom, 3.0)))
    return quantile


def clopper_pearson(k: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """Clopper and Pearson's exact interval of ``k`` of ``n`` (0..1): the proportions at which the binomial tail
    beyond ``k`` is ``(1 - level) / 2``, found by bisection on sums of binomial probabilities."""
    if n <= 0:
        return 0.0, 1.0
    alpha = (1 - level) / 2
    counts = np.arange(n + 1)
    log_choose = np.array([lgamma(n + 1) - lgamma(i + 1) - lgamma(n - i + 1) for i in range(n + 1)])

    def tail(p: float, start: int) -> float:  # P(X >= start) at proportion p
        with np.errstate(divide="ignore"):
            logs = log_choose + counts * np.log(p) + (n - counts) * np.log1p(-p)
        return float(np.exp(logs[start:]).sum())

    def bisect(rises: Callable[[float], bool]) -> float:  # the p where rises(p) turns true
        low, high = 0.0, 1.0
        for _ in range(60):
            mid = (low + high) / 2
            low, high = (low, mid) if rises(mid) else (mid, high)
        return (low + high) / 2

    lower = 0.0 if k <= 0 else bisect(lambda p: tail(p, k) >= alpha)
    upper = 1.0 if k >= n else bisect(lambda p: 1 - tail(p, k + 1) <= alpha)
    return lower, upper


def strata_masks(labelled: np.ndarray, strata: np.ndarray, shape: tuple[int, ...],
                 least: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per row and stratum (integer codes from 0): which units are in it and which of them are labelled (rows,
    strata, units), its size N_h and its labels n_h (rows, strata). A stratum with fewer than ``least`` (at least two)
    labelled units and not all of them labelled: :class:`NotEnoughLabels`."""
    labelled = np.broadcast_to(np.atleast_2d(np.asarray(labelled, bool)), shape)
    strata = np.broadcast_to(np.atleast_2d(np.asarray(strata, np.intp)), shape)
    groups = int(strata.max()) + 1 if strata.size else 1
    member = strata[:, None, :] == np.arange(groups)[None, :, None]
    weight = labelled[:, None, :] & member
    big_n, small_n = member.sum(axis=2).astype(float), weight.sum(axis=2).astype(float)
    short = (big_n > 0) & (small_n < max(2, least)) & (small_n < big_n)
    if short.any():
        raise NotEnoughLabels(f"{int(short.sum())} stratum/strata with fewer than {max(2, least)} labelled units")
    return member, weight, big_n, small_n


def error_bound(errors: np.ndarray | float, labelled: np.ndarray | float, level: float = LEVEL) -> np.ndarray:
    """The upper end of Wilson's interval of an error rate, ``errors`` of ``labelled`` answers (1 where none is
    labelled): how often a decider may err, by the labels, for :func:`stratified_ppi`'s ``bound``."""
    k, m = np.asarray(errors, float), np.asarray(labelled, float)
    safe = np.maximum(m, 1.0)
    z = z_value(level)
    p = np.clip(k / safe, 0.0, 1.0)
    upper = (p + z * z / (2 * safe) + z * np.sqrt(p * (1 - p) / safe + z * z / (4 * safe ** 2))) / (1 + z * z / safe)
    found: np.ndarray = np.where(m > 0, np.minimum(upper, 1.0), 1.0)
    return found


def pseudo_ceiling(x: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """Per unit, the most its error's square can be expected to be when its answers err at most at rates summing to
    ``bound`` (their deciders' :func:`error_bound`), each on its own: the number of its wrong verdicts ``K`` has
    ``E[K^2] <= bound + bound^2`` (a sum of independent yes/no errors), and never more than ``x^2``."""
    found: np.ndarray = np.minimum(x ** 2, bound + bound ** 2)
    return found


def stratified_ppi(x: np.ndarray, f: np.ndarray, y: np.ndarray, labelled: np.ndarray, strata: np.ndarray, *,
                   estimator: Estimator = Estimator.ppi, level: float = LEVEL, least: int = 2,
                   bound: np.ndarray | None = None) -> PPIEstimates:
    """PPI (or PPI++) of ``sum y / sum x`` over each row's units.

    Arrays are (rows, units): ``x`` the unit's size, ``f`` the judge's numerator, ``y`` the human one (any
    value where not labelled), ``labelled`` whether ``y`` is known, ``strata`` the unit's stratum (integer codes
    from 0). Every stratum of a row needs ``least`` (at least two) labelled units, or all of its units labelled;
    else :class:`NotEnoughLabels`. ``bound``: per unit, the sum of its answers' deciders' upper error rates pooled
    over every labelled answer of the sample (:func:`error_bound`); the two pseudo-units of a stratum then add at
    most twice its mean :func:`pseudo_ceiling` (see the module text), never more than without it.
    """
    x, f = np.atleast_2d(np.asarray(x, float)), np.atleast_2d(np.asarray(f, float))
    member, weight, big_n, small_n = strata_masks(labelled, strata, x.shape, least)
    labelled = np.broadcast_to(np.atleast_2d(np.asarray(labelled, bool)), x.shape)
    y = np.where(labelled, np.atleast_2d(np.asarray(y, float)), 0.0)
    rows, count = x.shape
    safe_n = np.maximum(small_n, 1.0)

    def mean(values: np.ndarray) -> np.ndarray:  # per stratum, over its labelled units: (rows, strata)
        means: np.ndarray = np.einsum("rhu,ru->rh", weight, values) / safe_n
        return means

    def spread(a: np.ndarray, b: np.ndarray) -> np.ndarray:  # sample covariance per stratum (ddof 1)
        centred_a = a[:, None, :] - mean(a)[:, :, None]
        centred_b = b[:, None, :] - mean(b)[:, :, None]
        covariance: np.ndarray = (weight * centred_a * centred_b).sum(axis=2) / np.maximum(small_n - 1, 1.0)
        return covariance

    if estimator is Estimator.ppi_plus:  # lam minimising the variance of the labels part
        weights = np.where(small_n > 0, big_n ** 2 * (1 - small_n / np.maximum(big_n, 1)) / safe_n, 0.0)
        var_f = (weights * spread(f, f)).sum(axis=1)
        cov_yf = (weights * spread(y, f)).sum(axis=1)
        lam = np.clip(np.divide(cov_yf, var_f, out=np.ones(rows), where=var_f > 0), 0.0, 1.0)
    else:
        lam = np.ones(rows)
    total_x = x.sum(axis=1)
    rectified = y - lam[:, None] * f
    total = lam * f.sum(axis=1) + (big_n * mean(rectified)).sum(axis=1)
    theta = total / total_x
    # the interval: each sampled stratum's labels with two pseudo-units at the ends of the range its rectifier can
    # take (y = 0 and y = x, at the stratum's mean x and f), as Agresti and Caffo add a success and a failure to
    # each sample (see the module text); a census stratum is known exactly and adds nothing
    sampled = (small_n < big_n) & (small_n > 0)
    safe_big = np.maximum(big_n, 1.0)
    f_bar = np.einsum("rhu,ru->rh", member, f) / safe_big
    x_bar = np.einsum("rhu,ru->rh", member, x) / safe_big
    rate = f_bar / np.maximum(x_bar, 1e-12)
    ends = (-lam[:, None] * rate, 1 - lam[:, None] * rate)
    size = small_n + 2 * sampled
    centred = (np.einsum("rhu,ru->rh", weight, rectified) + sampled * (ends[0] + ends[1])) / np.maximum(size, 1.0)
    squares = np.maximum(np.einsum("rhu,ru->rh", weight, rectified ** 2) + sampled * (ends[0] ** 2 + ends[1] ** 2)
                         - size * centred ** 2, 0.0)
    if bound is not None:  # the pseudo-units add no more than the pooled labels allow (see the module text)
        own = np.maximum(np.einsum("rhu,ru->rh", weight, rectified ** 2)
                         - mean(rectified) ** 2 * small_n, 0.0)  # the labels' own sum of squares
        ceiling = 2 * np.einsum("rhu,ru->rh", member, pseudo_ceiling(x, np.broadcast_to(bound, x.shape))) / safe_big
        squares = own + np.minimum(squares - own, ceiling)
    variance = squares / np.maximum(size - 1, 1.0)
    # stratified sampling without replacement: each stratum's variance of a mean, times N_h^2
    design = np.where(sampled, big_n ** 2 * (1 - small_n / safe_big) / safe_n, 0.0)
    parts = design * variance / total_x[:, None] ** 2
    # stories: the mean square of y - theta x over the run, by PPI (judge everywhere, corrected where labelled)
    judged = (f - theta[:, None] * x) ** 2
    true = (y - theta[:, None] * x) ** 2
    m2 = np.maximum((judged.sum(axis=1) + (big_n * mean(true - judged)).sum(axis=1)) / count, 0.0)
    var_stories = m2 * count / max(count - 1, 1) * count / total_x ** 2
    low, high, var_labels = interval(theta, parts, small_n, var_stories, count, level, labelled, x, y)
    return PPIEstimates(theta=theta, low=low, high=high,
                        se_labels=np.sqrt(var_labels), se_stories=np.sqrt(var_stories),
                        judge_only=f.sum(axis=1) / total_x, lam=lam)


def interval(theta: np.ndarray, parts: np.ndarray, small_n: np.ndarray, var_stories: np.ndarray, count: int,
             level: float, labelled: np.ndarray, x: np.ndarray, y: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The interval of each row from its labels' variance ``parts`` (one per stratum, with ``small_n`` labels) and
    the StoryTurns' ``var_stories``, with Satterthwaite's degrees of freedom (each stratum's part has n_h - 1, the
    StoryTurns' part N - 1); a census row's is exact (see the module text). Returns low, high and the labels'
    variance: what the stratified and the active estimates share."""
    var_labels = parts.sum(axis=1)
    spread_df = (parts ** 2 / np.maximum(small_n - 1, 1.0)).sum(axis=1) + var_stories ** 2 / max(count - 1, 1)
    total_var = var_labels + var_stories
    df = np.divide(total_var ** 2, spread_df, out=np.full(len(theta), np.inf), where=spread_df > 0)
    half = t_value(df, level) * np.sqrt(total_var)
    low, high = np.clip(theta - half, 0.0, 1.0), np.clip(theta + half, 0.0, 1.0)
    for row in np.flatnonzero(labelled.all(axis=1)):
        low[row], high[row] = census_interval(x[row], y[row], float(theta[row]), float(var_stories[row]), level)
    return low, high, var_labels


def census_interval(x: np.ndarray, y: np.ndarray, theta: float, variance: float, level: float) -> tuple[float, float]:
    """Clopper-Pearson's interval of a run whose every unit is labelled: of its right units when each is one yes/no,
    else at the estimate's effective size (Korn and Graubard 1998: theta (1 - theta) / variance answers, all the
    units when the variance is nil, never more than the answers)."""
    if np.all(x == 1) and np.all((y == 0) | (y == 1)):
        return clopper_pearson(int(y.sum()), len(y), level)
    size = len(x) if variance <= 0 else min(float(x.sum()), theta * (1 - theta) / variance)
    n = max(1, int(size))
    return clopper_pearson(round(theta * n), n, level)


def wilson(k: float, n: float, level: float = LEVEL) -> tuple[float, float]:
    """Wilson's score interval of ``k / n`` (0..1); ``n`` may be an effective sample size. Never a point."""
    if n <= 0:
        return 0.0, 1.0
    z = z_value(level)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low = 0.0 if k <= 0 else max(0.0, float(centre - half))  # (not 3e-17 by rounding)
    return low, 1.0 if k >= n else min(1.0, float(centre + half))


def kappa_from_cells(cells: np.ndarray) -> np.ndarray:
    """Cohen's kappa of two yes/no raters from the (weighted) counts of each pair of verdicts, per row.

    ``cells[..., :]`` = (both yes, first yes and second no, first no and second yes, both no); NaN where
    kappa is undefined (no items, or chance agreement 1: both raters said the same thing throughout).
    """
    cells = np.asarray(cells, float)
    total = cells.sum(axis=-1)
    safe = np.where(total > 0, total, 1.0)
    observed = (cells[..., 0] + cells[..., 3]) / safe
    first_yes = (cells[..., 0] + cells[..., 1]) / safe
    second_yes = (cells[..., 0] + cells[..., 2]) / safe
    expected = first_yes * second_yes + (1 - first_yes) * (1 - second_yes)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = (observed - expected) / (1 - expected)
    return np.where((total > 0) & (expected < 1 - 1e-12), kappa, np.nan)
