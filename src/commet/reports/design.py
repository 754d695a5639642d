"""How many StoryTurns of each stratum people label: the calibration sample's allocation.

Two designs, both stratified random samples, so the estimator (:func:`commet.reports.ppi.stratified_ppi`, which
weights each stratum by its size) is unbiased under either; they differ in how precise it is for a budget:

* ``proportional``: half of the budget shared equally among the strata (so every judge is measured, however few
  answers it decided), the other half in proportion to what is left of each stratum after that equal share
  (largest remainders);
* ``optimal`` (the default): Neyman's allocation (Neyman 1934; Cochran, *Sampling Techniques*, 5.5) for the
  interval as it is reported: the ``n_h`` that minimise the expected labels variance of story and question accuracy
  together, ``sum_h sum_figure N_h^2 (1 - n_h/N_h) / n_h`` times the stratum's reported variance (``n_h S_h^2`` plus
  what its two pseudo-units add, over ``n_h + 1``: :func:`expected_variance`), found by marginal allocation (each
  label where it lowers it most). ``S_h^2`` comes from who decided each answer of the stratum's StoryTurns
  (:func:`error_model`): each answer's error rate by its decider and verdict (the labels so far on such answers,
  shrunk towards the decider's prior: the rules judge rarely errs, an LLM judge more often, an undecided answer is a
  coin), a StoryTurn's story error
  ``q (1 - q)`` with ``q`` the chance some answer errs, its question error the sum of its answers' ``p (1 - p)``.
  The pseudo-units' part is what :func:`~commet.reports.ppi.stratified_ppi` will add with the labels such a sample
  gives each decider (the pooled bound): small for the rules judge once its answers across the whole sample are
  labelled right, so strata the rules decided get fewer labels than their size would give them and the rest go
  where the LLM judge decided, most where it errs most. It can continue as labels come in: a larger ``--sample``
  keeps the StoryTurns drawn so far and re-allocates the total with the error rates the labels show.

Every stratum gets at least :data:`MIN_LABELS` StoryTurns (or all of a smaller one): with two, the variance of a
stratum's error is a single difference and the interval covers too rarely at small budgets (bench/
bench_calibration.py); a budget below that is refused.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from math import floor

import numpy as np

from commet.conditions import Design
from commet.errors import CommetError
from commet.reports.ppi import pseudo_ceiling

#: the fewest labelled StoryTurns a stratum needs (or all of it) for the corrected figure and for a sample
MIN_LABELS = 2


@dataclass(frozen=True)
class Term:
    """One figure's expected labels variance in a stratum: the variance of the judge's error on one of its
    StoryTurns (``S_h^2``), what its two pseudo-units add to its sum of squares, and the figure's total size
    ``X`` (the variance is of its total, over ``X^2``, so story and question accuracy add up)."""

    variance: float
    pseudo: float = 1.0
    scale: float = 1.0


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
             model: Mapping[str, Sequence[Term]] | None = None,
             already: dict[str, int] | None = None) -> dict[str, int]:
    """How many StoryTurns to draw from each stratum for a sample of ``n`` (all when ``n`` covers the run).

    ``model``: the optimal design's expected variance terms per stratum (:func:`error_model`; a stratum without
    them counts as a coin); ``already``: StoryTurns drawn before (a sample that continues), never taken back."""
    if n >= sum(sizes.values()):
        return dict(sizes)
    _check(sizes, n)
    strata = sorted(sizes)
    floor_of = {h: max(min(sizes[h], MIN_LABELS), (already or {}).get(h, 0)) for h in strata}
    if sum(floor_of.values()) > n:
        raise CalibrationError(f"the sample already has {sum((already or {}).values())} StoryTurns and needs "
                               f"{sum(floor_of.values())} with the minimum per stratum: draw at least that many")
    if design is Design.optimal:
        return _optimal(sizes, n, {h: tuple((model or {}).get(h, (Term(0.25),))) for h in strata}, floor_of)
    each = max(MIN_LABELS, n // (2 * len(strata)))
    taken = {h: max(floor_of[h], min(sizes[h], each)) for h in strata}
    if sum(taken.values()) > n:
        taken = dict(floor_of)
    left = {h: sizes[h] - taken[h] for h in strata}
    return _share(n - sum(taken.values()), taken, sizes, {h: float(left[h]) for h in strata})


def expected_variance(size: int, n: int, terms: Sequence[Term]) -> float:
    """A stratum's expected share of the interval's labels variance with ``n`` of its ``size`` labelled: per figure
    ``N^2 (1 - n/N) / n`` times the variance the estimator reports, its error's ``S^2`` over the ``n`` labels plus
    what its two pseudo-units add (:func:`commet.reports.ppi.stratified_ppi`), over ``n + 1``, divided by ``X^2``."""
    if n >= size:
        return 0.0
    return sum(size ** 2 * (1 - n / size) / n * (n * t.variance + t.pseudo) / (n + 1) / t.scale ** 2 for t in terms)


def _optimal(sizes: dict[str, int], n: int, model: dict[str, tuple[Term, ...]],
             floor_of: dict[str, int]) -> dict[str, int]:
    """Neyman's allocation for the interval as it is reported: from each stratum's floor, every further label goes
    where it lowers :func:`expected_variance` most (marginal allocation, optimal for a sum of convex terms)."""
    taken = dict(floor_of)

    def gain(h: str) -> float:
        return expected_variance(sizes[h], taken[h], model[h]) - expected_variance(sizes[h], taken[h] + 1, model[h])

    gains = [(-gain(h), h) for h in sorted(sizes) if taken[h] < sizes[h]]
    heapq.heapify(gains)
    for _ in range(n - sum(taken.values())):
        _, h = heapq.heappop(gains)
        taken[h] += 1
        if taken[h] < sizes[h]:
            heapq.heappush(gains, (-gain(h), h))
    return taken


def error_model(rate: np.ndarray, bound: np.ndarray, x: np.ndarray, f: np.ndarray,
                strata: np.ndarray) -> dict[int, tuple[Term, Term]]:
    """The optimal design's story and question :class:`Term` per stratum code, from who decided each answer.

    Arrays are (units, answers) for ``rate`` (each answer's decider's error rate, 0 where there is no answer) and
    ``bound`` (the upper error rate the labels of a sample of this size would show for it: the pooled bound of
    :func:`commet.reports.ppi.stratified_ppi`), (units,) for ``x`` (answers), ``f`` (judged right) and ``strata``.
    A StoryTurn's story error is a coin of ``q = 1 - prod(1 - p)``, its question error a sum of its answers' coins;
    the pseudo-units add what they add without a bound (two ends of one answer's error about a judge that is right,
    ``r^2 + (1 - r)^2`` at the stratum's judged rate ``r``), or less, twice the mean ceiling the bound allows."""
    q = 1 - np.prod(1 - rate, axis=1)
    variance = {"story": q * (1 - q), "question": (rate * (1 - rate)).sum(axis=1)}
    ceiling = {"story": pseudo_ceiling(np.ones(len(x)), bound.sum(axis=1)),
               "question": pseudo_ceiling(x, bound.sum(axis=1))}
    judged = {"story": (f >= x).astype(float), "question": f}
    size = {"story": np.ones(len(x)), "question": x}
    model: dict[int, tuple[Term, Term]] = {}
    for h in np.unique(strata):
        member = strata == h
        terms = []
        for figure in ("story", "question"):
            r = judged[figure][member].sum() / max(size[figure][member].sum(), 1e-12)
            pseudo = min(r * r + (1 - r) ** 2, 2 * float(ceiling[figure][member].mean()))
            terms.append(Term(float(variance[figure][member].mean()), pseudo, float(size[figure].sum())))
        model[int(h)] = (terms[0], terms[1])
    return model
