"""Coverage of the judge-corrected (PPI) interval against the judge-only one, by simulation.

    python bench/bench_ppi_coverage.py [--runs 1000] [--stories 600] [--labels 100] [--seed 1]

Each simulated run has ``--stories`` StoryTurns of 1 to 5 turns; every answer is right with a
probability that varies from StoryTurn to StoryTurn (a Beta distribution, so answers of one
StoryTurn go together), so the true story and question accuracy of the model (the expectation
over StoryTurns) are known exactly. A judge with known error rates scores every answer: the
rules judge decides a share of them without error, an LLM judge the rest with a given
sensitivity and specificity, and a few are left undecided (counted wrong by the judged figure).
People label every answer of ``--labels`` StoryTurns drawn as ``commet calibrate`` draws them:
stratified by who decided the answers and the judge's story verdict, half shared equally among
the strata, half in proportion to what is left of each (:func:`commet.reports.design.allocate`). For each
judge it prints, over ``--runs`` runs, how often the
95 % interval covers the true accuracy: the PPI interval (:func:`commet.reports.ppi.stratified_ppi`)
and the judge-only one (the normal approximation of the report's bootstrap over StoryTurns), with
their mean widths. tests/test_calibration.py runs :func:`simulate` once with a biased judge.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np

from commet.reports.design import allocate
from commet.reports.ppi import Estimator, stratified_ppi, z_value

#: the per-StoryTurn probability that an answer is right: Beta(A, B); turns per StoryTurn: 1..5, uniform
ABILITY = (6.0, 2.0)
TURNS = (1, 5)


@dataclass(frozen=True)
class Judge:
    """A cascade: the rules decide ``rules_share`` of the answers without error; an LLM judge the rest, right about
    a right answer with probability ``sensitivity`` and about a wrong one with ``specificity``; ``undecided`` of
    the answers are left undecided."""

    name: str
    sensitivity: float
    specificity: float
    rules_share: float = 0.5
    undecided: float = 0.03


JUDGES = (Judge("unbiased (99% / 99%)", 0.99, 0.99), Judge("lenient (97% / 60%)", 0.97, 0.60),
          Judge("strict (75% / 95%)", 0.75, 0.95), Judge("noisy (85% / 85%)", 0.85, 0.85))


@dataclass(frozen=True)
class Coverage:
    """Share of runs whose 95 % interval holds the true accuracy, and the intervals' mean width (points)."""

    story_ppi: float
    story_judged: float
    question_ppi: float
    question_judged: float
    story_ppi_width: float
    story_judged_width: float


def true_accuracies() -> tuple[float, float]:
    """(story accuracy, question accuracy) of the simulated model: E[p^m] over Beta abilities and uniform turns,
    and E[p m] / E[m]."""
    a, b = ABILITY
    turns = np.arange(TURNS[0], TURNS[1] + 1)
    moments = [np.prod([(a + j) / (a + b + j) for j in range(m)]) for m in turns]  # E[p^m] of Beta(a, b)
    return float(np.mean(moments)), a / (a + b)


def _labelled(strata: np.ndarray, labels: int, rng: np.random.Generator, groups: int) -> np.ndarray:
    """Which StoryTurns people label: per run, as ``commet calibrate`` allocates them among the strata
    (:func:`commet.reports.design.allocate`), the first of each stratum in a random order."""
    runs, stories = strata.shape
    keys = rng.random((runs, stories))
    chosen = np.zeros((runs, stories), bool)
    for row in range(runs):
        sizes = {h: int((strata[row] == h).sum()) for h in range(groups) if (strata[row] == h).any()}
        for h, take in allocate(sizes, labels).items():
            members = np.flatnonzero(strata[row] == h)
            chosen[row, members[np.argsort(keys[row, members])[:take]]] = True
    return chosen


def simulate(judge: Judge, *, runs: int = 1000, stories: int = 600, labels: int = 100, seed: int = 1,
             estimator: Estimator = Estimator.ppi) -> Coverage:
    """Coverage of the PPI and judge-only 95 % intervals over ``runs`` simulated runs (see the module text)."""
    rng = np.random.default_rng(seed)
    turns = rng.integers(TURNS[0], TURNS[1] + 1, size=(runs, stories))
    most = TURNS[1]
    present = np.arange(most)[None, None, :] < turns[:, :, None]  # (runs, stories, turn)
    ability = rng.beta(*ABILITY, size=(runs, stories, 1))
    right = (rng.random((runs, stories, most)) < ability) & present
    by_rules = rng.random((runs, stories, most)) < judge.rules_share
    undecided = ~by_rules & (rng.random((runs, stories, most)) < judge.undecided / (1 - judge.rules_share))
    noise = rng.random((runs, stories, most))
    llm_says = np.where(right, noise < judge.sensitivity, noise >= judge.specificity)
    says_right = np.where(by_rules, right, llm_says & ~undecided) & present
    story_true = np.all(right | ~present, axis=2).astype(float)
    story_judged = np.all(says_right | ~present, axis=2).astype(float)
    question_true, question_judged = right.sum(axis=2).astype(float), says_right.sum(axis=2).astype(float)
    any_undecided = (undecided & present).any(axis=2)
    any_llm = (~by_rules & present).any(axis=2)
    strata = np.where(any_undecided, 4, 2 * any_llm + story_judged.astype(int))  # 0..3: (rules|llm) x (wrong|right)
    chosen = _labelled(strata, labels, rng, 5)
    story_ppi = stratified_ppi(np.ones((runs, stories)), story_judged, story_true, chosen, strata, estimator=estimator)
    question_ppi = stratified_ppi(turns.astype(float), question_judged, question_true, chosen, strata,
                                  estimator=estimator)
    story_truth, question_truth = true_accuracies()
    z = z_value()
    judged = story_judged.mean(axis=1)
    judged_half = z * np.sqrt(judged * (1 - judged) / stories)
    ratio = question_judged.sum(axis=1) / turns.sum(axis=1)  # a ratio over StoryTurns: its linearised variance
    residual = question_judged - ratio[:, None] * turns
    ratio_half = z * np.sqrt(residual.var(axis=1, ddof=1) / stories) / turns.mean(axis=1)

    def covers(low: np.ndarray, high: np.ndarray, truth: float) -> float:
        return float(np.mean((low <= truth) & (truth <= high)))

    return Coverage(
        story_ppi=covers(story_ppi.low, story_ppi.high, story_truth),
        story_judged=covers(judged - judged_half, judged + judged_half, story_truth),
        question_ppi=covers(question_ppi.low, question_ppi.high, question_truth),
        question_judged=covers(ratio - ratio_half, ratio + ratio_half, question_truth),
        story_ppi_width=float(np.mean(story_ppi.high - story_ppi.low)) * 100,
        story_judged_width=float(np.mean(2 * judged_half)) * 100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--stories", type=int, default=600)
    parser.add_argument("--labels", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    story, question = true_accuracies()
    print(f"true story accuracy {100 * story:.2f} %, question accuracy {100 * question:.2f} %; {args.runs} runs of "
          f"{args.stories} StoryTurns, {args.labels} StoryTurns labelled per run; 95 % intervals")
    print(f"{'judge (sensitivity / specificity)':<34} {'estimator':<9} {'story: PPI':>11} {'judged':>7} "
          f"{'question: PPI':>14} {'judged':>7} {'width PPI':>10} {'judged':>7} {'s':>6}")
    for judge in JUDGES:
        for estimator in Estimator:
            started = time.perf_counter()
            found = simulate(judge, runs=args.runs, stories=args.stories, labels=args.labels, seed=args.seed,
                             estimator=estimator)
            print(f"{judge.name:<34} {estimator.value:<9} {found.story_ppi:>11.3f} {found.story_judged:>7.3f} "
                  f"{found.question_ppi:>14.3f} {found.question_judged:>7.3f} {found.story_ppi_width:>10.1f} "
                  f"{found.story_judged_width:>7.1f} {time.perf_counter() - started:>6.2f}")


if __name__ == "__main__":
    main()
