"""The active design: each StoryTurn labelled with a probability that grows with the judge's uncertainty about it, and
the accuracy estimated with inverse-probability weights (Zrnic and Candès 2024, "Active statistical inference").

**Uncertainty.** Each answer's verdict has an error rate by who gave it: the rules judge rarely errs, an LLM judge
or a panel more often, a panel whose members split more often still, an undecided answer (counted wrong by the judged figure) is a coin:
:data:`PRIOR_ANSWER_ERROR`, with which the labels given so far on that decider's answers are shrunk
(:func:`answer_error`). A StoryTurn's weight is ``sqrt(sum of its answers' error rates)``, the expected size of the
judge's error on it (the inclusion probability that minimises the variance of the estimator below is proportional to
it), never below :data:`FLOOR_SHARE` of the mean weight, so that every StoryTurn can be drawn, a rules verdict the
labels have not yet caught wrong included.

**The draw** is priority sampling (Duffield, Lund and Thorup 2007): StoryTurn ``i`` has the priority ``w_i / u_i``,
``u_i`` uniform from ``sha256("active:SEED:STORY_ID")``, and the order to label in is by decreasing priority. The
first ``k`` of that order, for any ``k``, are a sample whose inclusion probabilities are ``pi_i = min(1, w_i /
tau)``, ``tau`` the ``(k + 1)``-th priority of the run; the estimate below is then exactly unbiased, its terms
uncorrelated, so labelling can stop at any point and a larger ``--sample`` continues the same order (the weights are
recorded with the sample and kept).

**The estimate** of the total of ``y`` (the people's count) is the judged total plus the judge's error where people
looked, weighted by one over its probability (the Horvitz-Thompson form of PPI, Zrnic and Candès' estimator with lam
= 1): ``sum_all f + sum_labelled (y - f) / pi``, over ``sum_all x``. Its labels variance is estimated without bias
by ``sum_labelled (y - f)^2 (1 - pi) / pi^2`` (ibid.); at small budgets a stratum whose few labels all agree with
the judge would make it vanish, so each stratum's part is shrunk towards a pseudo-label whose squared error is the
mean of the two ends of one answer's error (as :func:`commet.reports.ppi.stratified_ppi` adds two pseudo-units), at
every StoryTurn of the stratum, worth one label against its ``n_h`` labels: ``(n_h A_h + m_h sum_h (1/pi - 1)) /
(n_h + 1)``, ``A_h`` the unbiased estimate, ``m_h = (r_h^2 + (1 - r_h)^2) / 2`` at the stratum's judged rate
``r_h``. The StoryTurns part and the interval (Student's t at Satterthwaite's degrees of freedom, exact for a
census) are as in :func:`~commet.reports.ppi.stratified_ppi`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from commet.reports.ppi import LEVEL, PPIEstimates, interval

#: each kind of answer's prior error rate (the judge's verdict differs from the people's), worth :data:`PRIOR_ANSWERS`
PRIOR_ANSWER_ERROR = {"rules": 0.02, "judge": 0.15, "split": 0.3, "undecided": 0.5}
PRIOR_ANSWERS = 8.0
#: what the pseudo-label of each stratum's labels variance weighs against its labels (see the module text)
PSEUDO_LABELS = 1.0
#: the smallest weight, as a share of the mean: every StoryTurn can be drawn
FLOOR_SHARE = 0.5
RULES = "rules"
UNDECIDED = "undecided"
#: the suffix of a panel's decider key on answers its members split on (their majority decided, not all of them)
SPLIT = " split"


def decider_kind(decider: str) -> str:
    """The prior's kind of a decider key (:func:`commet.reports.calibration.decider`): rules, undecided, a panel
    whose members split, or any other judge (an LLM judge or a panel, by name)."""
    return decider if decider in (RULES, UNDECIDED) else "split" if decider.endswith(SPLIT) else "judge"


def answer_error(decider: str, errors: int = 0, labelled: int = 0) -> float:
    """An answer's error rate for the decider key ``decider``: its ``errors`` on ``labelled`` answers people labelled,
    shrunk towards the prior of its kind."""
    prior = PRIOR_ANSWER_ERROR[decider_kind(decider)]
    return (errors + PRIOR_ANSWERS * prior) / (labelled + PRIOR_ANSWERS)


def weights(uncertainty: np.ndarray) -> np.ndarray:
    """Per row, ``sqrt`` of each StoryTurn's summed error rates, floored at :data:`FLOOR_SHARE` of the row's mean."""
    root = np.sqrt(np.maximum(np.atleast_2d(np.asarray(uncertainty, float)), 0.0))
    floor = FLOOR_SHARE * root.mean(axis=1, keepdims=True)
    found: np.ndarray = np.maximum(root, np.maximum(floor, 1e-12))
    return found


def uniform(seed: int, story_id: str) -> float:
    """The StoryTurn's uniform draw in (0, 1) for the seed (the same on every machine); salted apart from the
    stratified designs' order so that the two draws of one seed are independent."""
    digest = hashlib.sha256(f"active:{seed}:{story_id}".encode()).hexdigest()
    return (int(digest[:13], 16) + 0.5) / 16 ** 13


def priority_order(weight: Sequence[float], draws: Sequence[float]) -> list[int]:
    """Indices of the StoryTurns by decreasing priority ``weight / draw``: the order to label in."""
    priority = np.asarray(weight, float) / np.asarray(draws, float)
    return [int(i) for i in np.argsort(-priority, kind="stable")]


def inclusion(weight: np.ndarray, draws: np.ndarray, labelled: int | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: which StoryTurns are among the first ``labelled`` by priority, and every StoryTurn's inclusion
    probability ``min(1, w / tau)`` (``tau`` the next priority; 1 throughout when every one is labelled)."""
    weight, draws = np.atleast_2d(weight), np.atleast_2d(draws)
    priority = weight / draws
    rows, count = priority.shape
    k = np.broadcast_to(np.asarray(labelled, int), (rows,))
    ranked = np.sort(-priority, axis=1)
    tau = np.where(k < count, -ranked[np.arange(rows), np.minimum(k, count - 1)], 0.0)
    chosen = priority > tau[:, None]
    pi = np.where(tau[:, None] > 0, np.minimum(1.0, weight / np.where(tau > 0, tau, 1.0)[:, None]), 1.0)
    return chosen, pi


def active_ppi(x: np.ndarray, f: np.ndarray, y: np.ndarray, labelled: np.ndarray, pi: np.ndarray,
               strata: np.ndarray, *, level: float = LEVEL) -> PPIEstimates:
    """The inverse-probability-weighted PPI estimate of ``sum y / sum x`` per row (see the module text).

    Arrays are (rows, units): ``x`` the unit's size, ``f`` the judge's count, ``y`` the people's (any value where not
    labelled), ``labelled`` whether it is, ``pi`` its inclusion probability, ``strata`` its stratum (codes from 0;
    they only shape the small-budget pseudo-units)."""
    x, f = np.atleast_2d(np.asarray(x, float)), np.atleast_2d(np.asarray(f, float))
    shape = x.shape
    labelled = np.broadcast_to(np.atleast_2d(np.asarray(labelled, bool)), shape)
    pi = np.broadcast_to(np.atleast_2d(np.asarray(pi, float)), shape)
    strata = np.broadcast_to(np.atleast_2d(np.asarray(strata, np.intp)), shape)
    y = np.where(labelled, np.atleast_2d(np.asarray(y, float)), 0.0)
    rows, count = shape
    inverse = np.where(labelled, 1.0 / np.maximum(pi, 1e-12), 0.0)
    error = y - f
    total_x = x.sum(axis=1)
    theta = (f.sum(axis=1) + (error * inverse).sum(axis=1)) / total_x
    groups = int(strata.max()) + 1 if strata.size else 1
    member = strata[:, None, :] == np.arange(groups)[None, :, None]  # (rows, strata, units)
    small_n = np.einsum("rhu,ru->rh", member, labelled.astype(float))
    estimate = np.einsum("rhu,ru->rh", member, error ** 2 * (1 - pi) * inverse ** 2)  # unbiased, per stratum
    rate = np.einsum("rhu,ru->rh", member, f) / np.maximum(np.einsum("rhu,ru->rh", member, x), 1e-12)
    pseudo = (rate ** 2 + (1 - rate) ** 2) / 2  # mean square of one answer's error at the ends of its range
    room = np.einsum("rhu,ru->rh", member, 1 / np.maximum(pi, 1e-12) - 1)  # sum over the stratum of 1/pi - 1
    parts = (small_n * estimate + PSEUDO_LABELS * pseudo * room) / (small_n + PSEUDO_LABELS) / total_x[:, None] ** 2
    judged = (f - theta[:, None] * x) ** 2
    true = (y - theta[:, None] * x) ** 2
    m2 = np.maximum((judged.sum(axis=1) + ((true - judged) * inverse).sum(axis=1)) / count, 0.0)
    var_stories = m2 * count / max(count - 1, 1) * count / total_x ** 2
    low, high, var_labels = interval(theta, parts, small_n, var_stories, count, level, labelled, x, y)
    return PPIEstimates(theta=theta, low=low, high=high, se_labels=np.sqrt(var_labels),
                        se_stories=np.sqrt(var_stories), judge_only=f.sum(axis=1) / total_x, lam=np.ones(rows))


def story_uncertainty(deciders: Sequence[str], rates: dict[str, float]) -> float:
    """A StoryTurn's summed answer error rates, from each answer's decider key (its judge, or ``undecided``)."""
    return sum(rates.get(d, answer_error(d)) for d in deciders)


__all__ = ["FLOOR_SHARE", "PRIOR_ANSWERS", "PRIOR_ANSWER_ERROR", "active_ppi", "answer_error", "decider_kind",
           "inclusion", "priority_order", "story_uncertainty", "uniform", "weights", "SPLIT"]
