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

* labels: which StoryTurns were labelled, ``sum_h N_h^2 (1 - n_h/N_h) s_h^2(y - lam f) / n_h / X^2``
  (stratified sampling without replacement; zero when every StoryTurn is labelled). ``s_h^2`` is the
  sample variance of the rectifier with 1/4 added to its sum of squares (half a wrongly judged unit,
  squared): without it a stratum whose labels all agree with the judge would count as judged without
  error, and the interval would cover too rarely with a good judge (bench/bench_ppi_coverage.py:
  0.93 instead of 0.95 for a 99 %-accurate judge); its weight falls as 1/n_h;
* stories: which StoryTurns the run has (as the report's bootstrap), ``N/(N-1) m2 N / X^2`` with
  ``m2`` the mean of ``(y - theta x)^2``, itself estimated by PPI (judge everywhere, corrected by
  the labels).

The interval is ``theta +- t sqrt(labels + stories)``, clipped to [0, 1], with ``t`` Student's quantile at
Satterthwaite's degrees of freedom for the sum (each stratum's part has ``n_h - 1``, the StoryTurns'
``N - 1``): with few labels per stratum the normal quantile would cover too rarely. Everything is computed
on arrays with a leading batch axis (one row per run), so a simulation of a thousand runs is
one call (bench/bench_ppi_coverage.py). The docs (docs/calibration.md) say when it is valid.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from statistics import NormalDist

import numpy as np

from commet.errors import CommetError

LEVEL = 0.95
#: added to each stratum's sum of squared rectifier deviations: (1/2)^2, half of one answer (or StoryTurn) judged
#: wrongly, the largest variance one yes/no can have (as Wilson's and Agresti-Coull's intervals add pseudo-counts)
PSEUDO_SQUARES = 0.125


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
    """Student's t quantile for a two-sided ``level`` at ``df`` degrees of freedom (Cornish-Fisher expansion in
    1/df, Abramowitz and Stegun 26.7.5: 0.03 below the exact value at df = 2, 0.004 at 3, within 0.001 from 5);
    ``df`` below 2 counts as 2, an infinite one gives the normal quantile."""
    z = z_value(level)
    terms = ((z ** 3 + z) / 4, (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96,
             (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384,
             (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160)
    inverse = 1 / np.maximum(np.asarray(df, float), 2.0)
    quantile: np.ndarray = z + sum(term * inverse ** (power + 1) for power, term in enumerate(terms))
    return quantile


def stratified_ppi(x: np.ndarray, f: np.ndarray, y: np.ndarray, labelled: np.ndarray, strata: np.ndarray, *,
                   estimator: Estimator = Estimator.ppi, level: float = LEVEL) -> PPIEstimates:
    """PPI (or PPI++) of ``sum y / sum x`` over each row's units.

    Arrays are (rows, units): ``x`` the unit's size, ``f`` the judge's numerator, ``y`` the human one (any
    value where not labelled), ``labelled`` whether ``y`` is known, ``strata`` the unit's stratum (integer codes
    from 0). Every stratum of a row needs two labelled units, or all of its units labelled; else
    :class:`NotEnoughLabels`.
    """
    x, f = np.atleast_2d(np.asarray(x, float)), np.atleast_2d(np.asarray(f, float))
    labelled = np.atleast_2d(np.asarray(labelled, bool))
    y = np.where(labelled, np.atleast_2d(np.asarray(y, float)), 0.0)
    strata = np.broadcast_to(np.atleast_2d(np.asarray(strata, np.intp)), x.shape)
    rows, count = x.shape
    groups = int(strata.max()) + 1 if strata.size else 1
    member = strata[:, None, :] == np.arange(groups)[None, :, None]  # (rows, strata, units)
    big_n = member.sum(axis=2).astype(float)  # N_h
    weight = labelled[:, None, :] & member
    small_n = weight.sum(axis=2).astype(float)  # n_h
    short = (big_n > 0) & (small_n < 2) & (small_n < big_n)
    if short.any():
        raise NotEnoughLabels(f"{int(short.sum())} stratum/strata with fewer than two labelled units")
    safe_n = np.maximum(small_n, 1.0)

    def mean(values: np.ndarray) -> np.ndarray:  # per stratum, over its labelled units: (rows, strata)
        means: np.ndarray = np.einsum("rhu,ru->rh", weight, values) / safe_n
        return means

    def spread(a: np.ndarray, b: np.ndarray) -> np.ndarray:  # sample covariance per stratum (ddof 1)
        centred_a = a[:, None, :] - mean(a)[:, :, None]
        centred_b = b[:, None, :] - mean(b)[:, :, None]
        covariance: np.ndarray = (weight * centred_a * centred_b).sum(axis=2) / np.maximum(small_n - 1, 1.0)
        return covariance

    # stratified sampling without replacement: each stratum's variance of a mean, times N_h^2
    design = np.where(small_n > 0, big_n ** 2 * (1 - small_n / np.maximum(big_n, 1)) / safe_n, 0.0)
    if estimator is Estimator.ppi_plus:
        var_f = (design * spread(f, f)).sum(axis=1)
        cov_yf = (design * spread(y, f)).sum(axis=1)
        lam = np.clip(np.divide(cov_yf, var_f, out=np.ones(rows), where=var_f > 0), 0.0, 1.0)
    else:
        lam = np.ones(rows)
    total_x = x.sum(axis=1)
    rectified = y - lam[:, None] * f
    total = lam * f.sum(axis=1) + (big_n * mean(rectified)).sum(axis=1)
    theta = total / total_x
    # each stratum's share of the variance; its sum of squares gets a pseudo-count of half a unit of y squared, so a
    # stratum where no label disagrees with the judge does not claim the judge is perfect there (see the module text)
    squares = spread(rectified, rectified) * np.maximum(small_n - 1, 1.0) + PSEUDO_SQUARES
    parts = design * squares / np.maximum(small_n - 1, 1.0) / total_x[:, None] ** 2
    var_labels = parts.sum(axis=1)
    # stories: the mean square of y - theta x over the run, by PPI (judge everywhere, corrected where labelled)
    judged = (f - theta[:, None] * x) ** 2
    true = (y - theta[:, None] * x) ** 2
    m2 = np.maximum((judged.sum(axis=1) + (big_n * mean(true - judged)).sum(axis=1)) / count, 0.0)
    var_stories = m2 * count / max(count - 1, 1) * count / total_x ** 2
    # Satterthwaite's degrees of freedom of the sum: each stratum's part has n_h - 1, the StoryTurns' part N - 1
    spread_df = (parts ** 2 / np.maximum(small_n - 1, 1.0)).sum(axis=1) + var_stories ** 2 / max(count - 1, 1)
    total_var = var_labels + var_stories
    df = np.divide(total_var ** 2, spread_df, out=np.full(rows, np.inf), where=spread_df > 0)
    half = t_value(df, level) * np.sqrt(total_var)
    return PPIEstimates(theta=theta, low=np.clip(theta - half, 0.0, 1.0), high=np.clip(theta + half, 0.0, 1.0),
                        se_labels=np.sqrt(var_labels), se_stories=np.sqrt(var_stories),
                        judge_only=f.sum(axis=1) / total_x, lam=lam)


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
