"""How many StoryTurns of each stratum people label: the calibration sample's allocation.

Two designs, both stratified random samples, so the estimator (:func:`commet.reports.ppi.stratified_ppi`, which
weights each stratum by its size) is unbiased under either; they differ in how precise it is for a budget:

* ``proportional`` (the default): half of the budget shared equally among the strata (so every judge is
  measured, however few answers it decided), the other half in proportion to what is left of each stratum after
  that equal share (largest remainders);
* ``optimal``: Neyman's allocation (Neyman 1934; Cochran, *Sampling Techniques*, 5.5) for the interval as it is
  reported: the ``n_h`` that minimise the expected labels variance, ``sum_h N_h^2 (1 - n_h/N_h) / n_h`` times the
  stratum's reported variance (``n_h S_h^2`` plus about one square from its two pseudo-units, over ``n_h + 1``:
  :func:`expected_variance`), found by marginal allocation (each label where it lowers it most). ``S_h`` is the
  spread of the judge's error in stratum ``h``: ``sqrt(p (1 - p))`` with ``p`` the stratum's error rate estimated
  from the labels given so far, shrunk towards a prior for its kind of stratum (:data:`PRIOR_ERROR`: the rules judge
  rarely errs, an LLM judge more often, an undecided answer is a coin). Without the pseudo-units' term this is
  ``n_h`` in proportion to ``N_h S_h``. Strata where the judge is certain cost fewer labels; those where it errs
  get the rest. It can continue as labels come in: a larger ``--sample`` keeps the StoryTurns drawn so far and
  re-allocates the total with the labels found.

Every stratum gets at least :data:`MIN_LABELS` StoryTurns (or all of a smaller one): with two, the variance of a
stratum's error is a single difference and the interval covers too rarely at small budgets (bench/
bench_calibration.py); a budget below that is refused.
"""

from __future__ import annotations

import heapq
from math import floor, sqrt

from commet.errors import CommetError
from commet.store.calibration import Design

#: the fewest labelled StoryTurns a stratum needs (or all of it) for the corrected figure and for a sample
MIN_LABELS = 2
#: an optimal design's prior error rate of the judge per kind of stratum, worth :data:`PRIOR_WEIGHT` labels
PRIOR_ERROR = {"rules": 0.02, "judge": 0.15, "undecided": 0.5}
PRIOR_WEIGHT = 4.0


class CalibrationError(CommetError, ValueError):
    """A sample that cannot be drawn as asked (too small for its strata, a run with nothing to label)."""


def minimum(sizes: dict[str, int]) -> int:
    """The smallest sample every stratum can live with: :data:`MIN_LABELS` each, or all of a smaller stratum."""
    return sum(min(size, MIN_LABELS) for size in sizes.values())


def _check(sizes: dict[str, int], n: int) -> None:
    needed = minimum(sizes)
    if needed > n:
        raise CalibrationError(f"a sample of {n} cannot give each of the {len(sizes)} strata {MIN_LABELS} StoryTurns "
                               f"({', '.join(f'{h}: {sizes[h]}' for h in sorted(sizes))}): draw at least {needed}")


def _share(rest: int, taken: dict[str, int], sizes: dict[str, int], weight: dict[str, float]) -> dict[str, int]:
    """Add ``rest`` StoryTurns to ``taken`` in proportion to ``weight`` (largest remainders), none beyond a
    stratum's size; a stratum that fills up passes its share on to the others."""
    taken = dict(taken)
    while rest > 0:
        room = {h: sizes[h] - taken[h] for h in sorted(sizes) if sizes[h] > taken[h]}
        total = sum(weight[h] for h in room)
        shares = {h: rest * (weight[h] / total if total > 0 else 1 / len(room)) for h in room}
        given = {h: min(room[h], floor(shares[h])) for h in room}
        if not any(given.values()):  # the last few: largest remainders first
            for h in sorted(room, key=lambda h: (-(shares[h] - floor(shares[h])), h))[:rest]:
                given[h] = 1
        for h, count in given.items():
            taken[h] += count
        rest -= sum(given.values())
    return taken


def allocate(sizes: dict[str, int], n: int, design: Design = Design.proportional, *,
             spread: dict[str, float] | None = None, already: dict[str, int] | None = None) -> dict[str, int]:
    """How many StoryTurns to draw from each stratum for a sample of ``n`` (all when ``n`` covers the run).

    ``spread``: the optimal design's ``S_h`` per stratum (:func:`error_spread`); ``already``: StoryTurns drawn
    before (a sample that continues), never taken back."""
    if n >= sum(sizes.values()):
        return dict(sizes)
    _check(sizes, n)
    strata = sorted(sizes)
    floor_of = {h: max(min(sizes[h], MIN_LABELS), (already or {}).get(h, 0)) for h in strata}
    if sum(floor_of.values()) > n:
        raise CalibrationError(f"the sample already has {sum((already or {}).values())} StoryTurns and needs "
                               f"{sum(floor_of.values())} with the minimum per stratum: draw at least that many")
    if design is Design.optimal:
        return _optimal(sizes, n, {h: (spread or {}).get(h, 0.5) for h in strata}, floor_of)
    each = max(MIN_LABELS, n // (2 * len(strata)))
    taken = {h: max(floor_of[h], min(sizes[h], each)) for h in strata}
    if sum(taken.values()) > n:
        taken = dict(floor_of)
    left = {h: sizes[h] - taken[h] for h in strata}
    return _share(n - sum(taken.values()), taken, sizes, {h: float(left[h]) for h in strata})


def expected_variance(size: int, n: int, spread: float) -> float:
    """A stratum's expected share of the interval's labels variance (times X^2) with ``n`` of its ``size`` labelled:
    ``N^2 (1 - n/N) / n`` times the variance the estimator reports, its error's ``S^2`` over the ``n`` labels plus
    about one square from its two pseudo-units (:func:`commet.reports.ppi.stratified_ppi`), over ``n + 1``."""
    if n >= size:
        return 0.0
    return size ** 2 * (1 - n / size) / n * (n * spread ** 2 + 1) / (n + 1)


def _optimal(sizes: dict[str, int], n: int, spread: dict[str, float], floor_of: dict[str, int]) -> dict[str, int]:
    """Neyman's allocation for the interval as it is reported: from each stratum's floor, every further label goes
    where it lowers :func:`expected_variance` most (marginal allocation, optimal for a sum of convex terms)."""
    taken = dict(floor_of)
    gains = [(-(expected_variance(sizes[h], taken[h], spread[h]) - expected_variance(sizes[h], taken[h] + 1,
                                                                                     spread[h])), h)
             for h in sorted(sizes) if taken[h] < sizes[h]]
    heapq.heapify(gains)
    for _ in range(n - sum(taken.values())):
        _, h = heapq.heappop(gains)
        taken[h] += 1
        if taken[h] < sizes[h]:
            heapq.heappush(gains, (-(expected_variance(sizes[h], taken[h], spread[h])
                                     - expected_variance(sizes[h], taken[h] + 1, spread[h])), h))
    return taken


def error_spread(kind: str, errors: int, labelled: int) -> float:
    """``S_h`` of a stratum for the optimal design: ``sqrt(p (1 - p))`` of its error rate ``p``, the ``errors`` of
    the ``labelled`` StoryTurns so far shrunk towards :data:`PRIOR_ERROR` of its ``kind``."""
    p = (errors + PRIOR_WEIGHT * PRIOR_ERROR[kind]) / (labelled + PRIOR_WEIGHT)
    return sqrt(p * (1 - p))
