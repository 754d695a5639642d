"""Judge calibration by simulation: coverage at every budget, the designs, corrected differences, bias probes.

    python bench/bench_calibration.py [--runs 1000] [--stories 600] [--seed 1] [--rules-share 0.5]
        [--rules-error 0] [--rules-error-alone] [--shares 0.5,0.7,0.85,0.95]
        [--part all|budgets|designs|savings|active|continued|differences|probes]

Simulated runs as in bench/bench_ppi_coverage.py: ``--stories`` StoryTurns of 1 to 5 turns, every answer right
with a StoryTurn-specific probability (Beta(6, 2), so the true story and question accuracy are known exactly),
judged by a cascade: the rules decide half of the answers (``--rules-share``) without error (``--rules-error``), an
LLM judge of a given sensitivity and specificity the rest, leaving 5 % of its answers undecided. People label every
answer of the StoryTurns drawn as ``commet calibrate`` draws them (:func:`commet.reports.design.allocate` with the
optimal design's model from who decided each answer, the same seeded order within each stratum) and the interval's
pseudo-units are bounded by each decider's record over the sample's labels, as ``commet calibrate`` does. It prints:

* ``budgets``: coverage of the 95 % PPI interval of story and question accuracy, and its mean width, at every budget
  from the smallest ``commet calibrate`` accepts (issue 46, point 3);
* ``designs``: the proportional and the optimal (Neyman) design at the same budgets: coverage and width;
  ``savings``: the optimal design against today's (proportional, pseudo-units unbounded) for rules shares from 50 to
  95 %: coverage, widths, and the labels today's design needs for the optimal design's width (point 2);
  ``active``: the active design (priority sampling by each StoryTurn's uncertainty, inverse-probability weights:
  :mod:`commet.reports.active`) beside both, and the labels each design needs for the proportional one's width;
  ``continued``: an optimal sample continued as labels come in (point 2);
* ``differences``: two models of equal accuracy on the same StoryTurns, judged by different judges; how often the
  corrected paired test rejects "no difference" (its size, at most 5 %) against the test of the judged figures, and
  the coverage of a true difference of 10 points (point 1);
* ``probes``: the position probe's false alarms for a fair judge that answers at random on a share of the answers,
  over many seeds, and its power against a biased one (point 4).

tests/test_calibration_designs.py and tests/test_calibration_active.py run small versions of each on every test run.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np

from commet.conditions import Design
from commet.engine.probes import bias_test
from commet.reports.active import active_ppi, answer_error, inclusion, weights
from commet.reports.design import allocate, error_model, minimum
from commet.reports.differences import paired_difference
from commet.reports.ppi import error_bound, stratified_ppi

ABILITY = (6.0, 2.0)
TURNS = (1, 5)


@dataclass(frozen=True)
class Judge:
    """The cascade: the rules decide ``rules_share`` of the answers, wrong on ``rules_error`` of them (with
    ``rules_error_alone``, only in the StoryTurns they decide whole: the pooled bound's assumption broken), an LLM
    judge the rest with the given sensitivity (right about a right answer) and specificity, leaving ``undecided``
    of its answers undecided."""

    sensitivity: float
    specificity: float
    rules_share: float = 0.5
    undecided: float = 0.05
    rules_error: float = 0.0
    rules_error_alone: bool = False

    @property
    def name(self) -> str:
        return f"{100 * self.sensitivity:.0f}/{100 * self.specificity:.0f}"


JUDGES = (Judge(0.99, 0.99), Judge(0.97, 0.60), Judge(0.85, 0.85), Judge(0.75, 0.95), Judge(0.70, 0.97))
BUDGETS = (10, 15, 20, 30, 50, 100, 200)


def truth(shift: float = 0.0) -> tuple[float, float]:
    """(story accuracy, question accuracy) of a model whose answers are right with probability p + shift, p ~
    Beta(ABILITY): E[(p + shift)^m] over uniform turns m, and E[p] + shift (computed on a fine grid)."""
    grid = np.linspace(0, 1, 20001)[1:-1]
    a, b = ABILITY
    density = grid ** (a - 1) * (1 - grid) ** (b - 1)
    density /= density.sum()
    p = np.clip(grid + shift, 0, 1)
    turns = np.arange(TURNS[0], TURNS[1] + 1)
    return float(np.mean([(density * p ** m).sum() for m in turns])), float((density * p).sum())


@dataclass
class Runs:
    """Simulated runs (rows) of the same StoryTurns (columns): sizes, judged and true counts, strata."""

    turns: np.ndarray
    story_f: np.ndarray
    story_y: np.ndarray
    question_f: np.ndarray
    question_y: np.ndarray
    undecided: np.ndarray  # some answer undecided
    by_llm: np.ndarray  # some answer decided by the LLM judge
    uncertainty: np.ndarray  # the active design's summed answer error rates, from the priors (nothing labelled yet)
    kind: np.ndarray  # (runs, stories, answers): who decided each answer (KINDS), -1 where there is none
    wrong: np.ndarray  # (runs, stories, answers): the judge's verdict differs from the truth (undecided: truly right)
    says: np.ndarray  # (runs, stories, answers): the judge's verdict is right


#: who decides an answer, by its code in Runs.kind: the decider keys of commet.reports.calibration.decider
KINDS = ("rules", "judge", "undecided")


def simulate(judge: Judge, rng: np.random.Generator, runs: int, stories: int, *, turns: np.ndarray | None = None,
             ability: np.ndarray | None = None, shift: float = 0.0) -> Runs:
    """``runs`` runs of ``stories`` StoryTurns (the given turns and abilities: another model on the same ones)."""
    most = TURNS[1]
    turns = rng.integers(TURNS[0], most + 1, size=(runs, stories)) if turns is None else turns
    ability = rng.beta(*ABILITY, size=(runs, stories, 1)) if ability is None else ability
    present = np.arange(most)[None, None, :] < turns[:, :, None]
    right = (rng.random((runs, stories, most)) < np.clip(ability + shift, 0, 1)) & present
    by_rules = rng.random((runs, stories, most)) < judge.rules_share
    undecided = ~by_rules & (rng.random((runs, stories, most)) < judge.undecided)
    noise = rng.random((runs, stories, most))
    llm_says = np.where(right, noise < judge.sensitivity, noise >= judge.specificity)
    alone = np.all(by_rules | ~present, axis=2, keepdims=True) if judge.rules_error_alone else True
    rules_says = right ^ ((rng.random((runs, stories, most)) < judge.rules_error) & alone)
    says = np.where(by_rules, rules_says, llm_says & ~undecided) & present
    rates = tuple(answer_error(k) for k in KINDS)
    kind = np.where(by_rules, 0, np.where(undecided, 2, 1))
    uncertainty = (np.take(rates, kind) * present).sum(axis=2)
    return Runs(turns, np.all(says | ~present, axis=2).astype(float), np.all(right | ~present, axis=2).astype(float),
                says.sum(axis=2).astype(float), right.sum(axis=2).astype(float), (undecided & present).any(axis=2),
                (~by_rules & present).any(axis=2), uncertainty, np.where(present, kind, -1), (says != right) & present, says)


def pooled_bound(r: Runs, chosen: np.ndarray) -> np.ndarray:
    """Per run and StoryTurn, the sum of its answers' deciders' upper error rates over the labelled StoryTurns'
    answers (as ``commet calibrate`` passes it to :func:`stratified_ppi`)."""
    seen = chosen[:, :, None] & (r.kind >= 0)
    rate = np.stack([error_bound((seen & r.wrong & (r.kind == k)).sum(axis=(1, 2)), (seen & (r.kind == k)).sum(
        axis=(1, 2))) for k in range(len(KINDS))], axis=1)  # (runs, kinds)
    per_answer = np.take_along_axis(rate, np.maximum(r.kind, 0).reshape(len(rate), -1), axis=1)
    found: np.ndarray = np.where(r.kind >= 0, per_answer.reshape(r.kind.shape), 0.0).sum(axis=2)
    return found


def design_model(r: Runs, row: int, strata: np.ndarray, labels: int,
                 errors: tuple[np.ndarray, np.ndarray] | None = None) -> dict:  # type: ignore[type-arg]
    """The optimal design's model of run ``row`` as ``commet calibrate`` builds it: each answer's error rate by its
    decider and verdict from ``errors`` (per kind and verdict, (kinds, 2) arrays: errors, answers labelled; none: the
    priors) and the bound a sample of ``labels`` gives each decider."""
    kind, verdict = r.kind[row], r.says[row].astype(int)
    wrong, seen = errors if errors is not None else (np.zeros((len(KINDS), 2)), np.zeros((len(KINDS), 2)))
    rate = np.array([[answer_error(k, int(wrong[i, v]), int(seen[i, v])) for v in (0, 1)] for i, k in enumerate(KINDS)])
    pooled = np.array([answer_error(k, int(wrong[i].sum()), int(seen[i].sum())) for i, k in enumerate(KINDS)])
    count = np.array([(kind == k).sum() for k in range(len(KINDS))])
    expected = seen.sum(axis=1) + labels * count / kind.shape[0]
    bound = error_bound(pooled * expected, expected)
    where = kind >= 0
    safe = np.maximum(kind, 0)
    return error_model(np.where(where, rate[safe, verdict], 0.0), np.where(where, bound[safe], 0.0),
                       r.turns[row].astype(float), r.question_f[row], strata[row])


def strata_of(r: Runs) -> np.ndarray:
    """A run's strata as ``commet calibrate`` makes them: (rules | LLM) x (judged wrong | right), or undecided."""
    return np.where(r.undecided, 4, 2 * r.by_llm + r.story_f.astype(int))


def draw(strata: np.ndarray, labels: int, rng: np.random.Generator, design: Design = Design.proportional,
         r: Runs | None = None) -> np.ndarray:
    """Which StoryTurns people label: per row, :func:`allocate`'s counts, the first of each stratum in a random
    order; the optimal design (which needs the runs ``r``) from its priors alone (nothing labelled yet)."""
    runs, stories = strata.shape
    chosen = np.zeros((runs, stories), bool)
    keys = rng.random((runs, stories))
    for row in range(runs):
        codes, sizes = np.unique(strata[row], return_counts=True)
        found = {int(h): int(n) for h, n in zip(codes, sizes, strict=True)}
        model = design_model(r, row, strata, labels) if design is Design.optimal and r is not None else None
        take = allocate(found, max(labels, minimum(found)), design, model=model)
        for h, count in take.items():
            members = np.flatnonzero(strata[row] == h)
            chosen[row, members[np.argsort(keys[row, members])[:count]]] = True
    return chosen


def coverage(judge: Judge, labels: int, *, runs: int, stories: int, seed: int, design: Design = Design.proportional,
             pooled: bool = True) -> tuple[float, float, float, float]:
    """(story coverage, question coverage, story width, question width) of the PPI interval, in % and points;
    ``pooled``: the pseudo-units bounded by the sample's labels of each decider (``commet calibrate``; before issue
    46's second pass they were not)."""
    rng = np.random.default_rng(seed)
    r = simulate(judge, rng, runs, stories)
    strata = strata_of(r)
    if design is Design.active:  # priority sampling by the StoryTurns' uncertainty, inverse-probability weights
        chosen, pi = inclusion(weights(r.uncertainty), rng.random(strata.shape), labels)
        story = active_ppi(np.ones_like(r.story_f), r.story_f, r.story_y, chosen, pi, strata)
        question = active_ppi(r.turns.astype(float), r.question_f, r.question_y, chosen, pi, strata)
    else:
        chosen = draw(strata, labels, rng, design, r)
        bound = pooled_bound(r, chosen) if pooled else None
        story = stratified_ppi(np.ones_like(r.story_f), r.story_f, r.story_y, chosen, strata, bound=bound)
        question = stratified_ppi(r.turns.astype(float), r.question_f, r.question_y, chosen, strata, bound=bound)
    story_truth, question_truth = truth()
    return (100 * float(np.mean((story.low <= story_truth) & (story_truth <= story.high))),
            100 * float(np.mean((question.low <= question_truth) & (question_truth <= question.high))),
            100 * float(np.mean(story.high - story.low)), 100 * float(np.mean(question.high - question.low)))


def continued(judge: Judge, first: int, total: int, *, runs: int, stories: int,
              seed: int) -> tuple[float, float, float, float]:
    """As :func:`coverage`, for an optimal sample of ``first`` labels continued to ``total`` with what the first
    labels showed (``commet calibrate --sample TOTAL`` after labelling the first sample)."""
    rng = np.random.default_rng(seed)
    r = simulate(judge, rng, runs, stories)
    strata = strata_of(r)
    keys = rng.random(strata.shape)
    chosen = np.zeros(strata.shape, bool)
    for row in range(runs):
        codes, sizes = np.unique(strata[row], return_counts=True)
        found = {int(h): int(n) for h, n in zip(codes, sizes, strict=True)}
        order = {h: np.flatnonzero(strata[row] == h)[np.argsort(keys[row, strata[row] == h])] for h in found}
        early = allocate(found, max(first, minimum(found)), Design.optimal, model=design_model(r, row, strata, first))
        seen = np.zeros(strata.shape[1], bool)
        for h, count in early.items():
            seen[order[h][:count]] = True
        answers = seen[:, None] & (r.kind[row] >= 0)
        errors = tuple(np.array([[(answers & extra & (r.kind[row] == k) & (r.says[row] == v)).sum() for v in (False, True)]
                                 for k in range(len(KINDS))]) for extra in (r.wrong[row], True))
        late = allocate(found, max(total, sum(early.values())), Design.optimal,
                        model=design_model(r, row, strata, total, errors), already=early)
        for h, count in late.items():
            chosen[row, order[h][:count]] = True
    bound = pooled_bound(r, chosen)
    story = stratified_ppi(np.ones_like(r.story_f), r.story_f, r.story_y, chosen, strata, bound=bound)
    question = stratified_ppi(r.turns.astype(float), r.question_f, r.question_y, chosen, strata, bound=bound)
    story_truth, question_truth = truth()
    return (100 * float(np.mean((story.low <= story_truth) & (story_truth <= story.high))),
            100 * float(np.mean((question.low <= question_truth) & (question_truth <= question.high))),
            100 * float(np.mean(story.high - story.low)), 100 * float(np.mean(question.high - question.low)))


def labels_for_width(judge: Judge, design: Design, width: tuple[float, float], budget: int, *, runs: int,
                     stories: int, seed: int) -> tuple[float, float]:
    """The labels ``design`` needs for the story and question ``width`` (points): its widths at budgets around
    ``budget``, interpolated in log-log (the width falls about as one over the square root of the labels)."""
    grid = sorted({max(10, round(budget * factor)) for factor in (0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.15, 1.3, 1.5, 1.75,
                                                                 2.0, 2.5)})
    found = np.array([coverage(judge, n, runs=runs, stories=stories, seed=seed, design=design)[2:] for n in grid])
    needed = []
    for column, target in enumerate(width):
        widths = found[:, column]
        if target < widths.min() or target > widths.max():  # outside the grid: say so rather than extrapolate
            needed.append(float("nan"))
            continue
        needed.append(float(np.exp(np.interp(-np.log(target), -np.log(widths), np.log(grid)))))
    return needed[0], needed[1]


def pair_strata(a: Runs, b: Runs) -> np.ndarray:
    """Strata of a paired sample: undecided in either run (8), else (rules | LLM in either) x A's verdict x B's."""
    return np.where(a.undecided | b.undecided, 8, 4 * (a.by_llm | b.by_llm) + 2 * a.story_f.astype(int)
                    + b.story_f.astype(int))


@dataclass(frozen=True)
class Comparison:
    """Over many simulated pairs of runs: rejections of "no difference" by the corrected and the judged test, and
    coverage of the true difference by the corrected interval (%), with its mean width (points)."""

    labels: float  # StoryTurns labelled in both runs, on average (never fewer than two a stratum)
    corrected_rejects: float
    judged_rejects: float
    story_coverage: float
    question_coverage: float
    width: float
    category_rejects: float  # the same test on a category of half the StoryTurns (a domain of the sample)
    category_coverage: float


def compare(first: Judge, second: Judge, labels: int, *, runs: int, stories: int, seed: int,
            shift: float = 0.0) -> Comparison:
    """Model B right ``shift`` more often than model A on every StoryTurn; A judged by ``first``, B by ``second``."""
    rng = np.random.default_rng(seed)
    turns = rng.integers(TURNS[0], TURNS[1] + 1, size=(runs, stories))
    ability = rng.beta(*ABILITY, size=(runs, stories, 1))  # the StoryTurns' difficulty, shared by both models
    a = simulate(first, rng, runs, stories, turns=turns, ability=ability)
    b = simulate(second, rng, runs, stories, turns=turns, ability=ability, shift=shift)
    strata = pair_strata(a, b)
    chosen = draw(strata, labels, rng)
    ones = np.ones_like(a.story_f)
    story = paired_difference(ones, a.story_f, a.story_y, ones, b.story_f, b.story_y, chosen, strata)
    x = a.turns.astype(float)
    question = paired_difference(x, a.question_f, a.question_y, x, b.question_f, b.question_y, chosen, strata)
    (story_a, question_a), (story_b, question_b) = truth(), truth(shift)
    half = np.broadcast_to(np.arange(stories) < stories // 2, a.story_f.shape).astype(float)  # a category
    category = paired_difference(half, a.story_f * half, a.story_y * half, half, b.story_f * half,
                                 b.story_y * half, chosen, strata)
    judged_sd = np.sqrt((a.story_f - b.story_f).var(axis=1, ddof=1) / stories)  # the paired test of judged figures
    judged_rejects = np.abs(story.judged) > 1.96 * judged_sd
    return Comparison(
        labels=float(chosen.sum(axis=1).mean()), corrected_rejects=100 * float(story.rejects.mean()),
        judged_rejects=100 * float(judged_rejects.mean()),
        story_coverage=100 * float(np.mean((story.low <= story_a - story_b) & (story_a - story_b <= story.high))),
        question_coverage=100 * float(np.mean((question.low <= question_a - question_b)
                                              & (question_a - question_b <= question.high))),
        width=100 * float(np.mean(story.high - story.low)), category_rejects=100 * float(category.rejects.mean()),
        category_coverage=100 * float(np.mean((category.low <= story_a - story_b)
                                              & (story_a - story_b <= category.high))))


def _ask(rng: np.random.Generator, honest: np.ndarray, biased: np.ndarray, first: np.ndarray, noise: float,
         reverse: bool) -> np.ndarray:
    """One asking of every answer: the honest verdict, a coin on a share ``noise`` (anew each time), and on the
    biased answers the verdict of the first option shown (the other one when the options are reversed)."""
    verdict = honest.copy()
    coin = rng.random(len(honest)) < noise
    verdict[coin] = rng.random(int(coin.sum())) < 0.5
    found: np.ndarray = np.where(biased, first ^ reverse, verdict)
    return found


def probe_alarms(noise: float, bias: float, *, answers: int, seeds: int, seed: int) -> float:
    """Share (%) of ``seeds`` probes of ``answers`` answers that flag a judge as biased: on each answer it gives a
    random verdict with probability ``noise`` (each asking anew) and, with probability ``bias``, the verdict the
    first option shown decides (so reversing the options changes it)."""
    rng = np.random.default_rng(seed)
    flagged = 0
    for _ in range(seeds):
        honest = rng.random(answers) < 0.7  # the reply is right
        biased = rng.random(answers) < bias  # decided by the first option shown: reversed, the other verdict
        first = rng.random(answers) < 0.5  # the verdict the first option shown gets
        before, again, probed = (_ask(rng, honest, biased, first, noise, reverse) for reverse in (False, False, True))
        flagged += bias_test(int((before != probed).sum()), int((before != again).sum()),
                             int(((before != probed) & (before != again)).sum()), answers).flagged
    return 100 * flagged / seeds


GRID = (20, 25, 30, 40, 50, 60, 75, 100, 125, 150, 200, 250, 300, 400, 500)


def today_needs(curve: np.ndarray, width: float) -> float:
    """The labels today's design needs for ``width`` (points): its ``curve`` of widths over :data:`GRID`,
    interpolated in log-log; NaN outside the grid (never extrapolated)."""
    if not curve.min() <= width <= curve.max():
        return float("nan")
    return float(np.exp(np.interp(-np.log(width), -np.log(curve), np.log(GRID))))


def savings_table(shares: list[float], common: dict[str, int], rules_error: float = 0.0, alone: bool = False) -> None:
    """The optimal design with the pooled bound against today's (proportional, pseudo-units unbounded) at 50, 100 and
    200 labels: coverage and width, and the labels today's design needs for the same width (issue 46, point 2)."""
    print(f"\n## Labels for the same interval: the optimal design against today's; {common['runs']} runs of "
          f"{common['stories']} StoryTurns per cell; the rules judge wrong on {100 * rules_error:.1f} % of its "
          f"answers{' in the StoryTurns it decides whole' if alone else ''}\n")
    print("| rules decide | judge (sens/spec) | labels | coverage story / question | today's width story / question "
          "| proportional + bound: width | optimal: width | today needs, story / question | fewer labels, story / "
          "question |\n|---|---|---|---|---|---|---|---|---|")
    for share in shares:
        for base in JUDGES:
            judge = Judge(base.sensitivity, base.specificity, rules_share=share, rules_error=rules_error,
                          rules_error_alone=alone)
            curve = np.array([coverage(judge, n, pooled=False, **common)[2:] for n in GRID])
            for labels in (50, 100, 200):
                today = coverage(judge, labels, pooled=False, **common)
                pooled = coverage(judge, labels, **common)
                best = coverage(judge, labels, design=Design.optimal, **common)
                needs = [today_needs(curve[:, column], best[2 + column]) for column in range(2)]
                print(f"| {100 * share:.0f} % | {judge.name} | {labels} | {best[0]:.1f} / {best[1]:.1f} | "
                      f"{today[2]:.1f} / {today[3]:.1f} | {pooled[2]:.1f} / {pooled[3]:.1f} | {best[2]:.1f} / "
                      f"{best[3]:.1f} | {needs[0]:.0f} / {needs[1]:.0f} | {100 * (1 - labels / needs[0]):.0f} % / "
                      f"{100 * (1 - labels / needs[1]):.0f} % |", flush=True)


def active_tables(judges: list[Judge], common: dict[str, int]) -> None:
    """The active design beside the proportional and the optimal one: coverage and width at every budget, then the
    labels each needs for the proportional design's width at 50, 100 and 200 labels."""
    designs = (Design.proportional, Design.optimal, Design.active)
    print(f"\n## Active, proportional and optimal designs; rules decide {100 * judges[0].rules_share:.0f} % of the "
          f"answers; {common['runs']} runs of {common['stories']} StoryTurns per cell\n")
    print("Each cell: proportional / optimal / active.\n")
    print("| judge (sens/spec) | labels | story coverage | question coverage | story width | question width |\n"
          "|---|---|---|---|---|---|")
    for judge in judges:
        for labels in BUDGETS:
            found = [coverage(judge, labels, design=design, **common) for design in designs]
            print(f"| {judge.name} | {labels} | " + " | ".join(" / ".join(f"{f[column]:.1f}" for f in found)
                                                            for column in range(4)) + " |", flush=True)
    print("\n## Labels for the same width as the proportional design's (interpolated; fewer is better)\n")
    print("| judge (sens/spec) | proportional labels | story width | optimal needs | active needs "
          "| question width | optimal needs | active needs |\n|---|---|---|---|---|---|---|---|")
    for judge in judges:
        for labels in (50, 100, 200):
            width = coverage(judge, labels, design=Design.proportional, **common)[2:]
            optimal = labels_for_width(judge, Design.optimal, width, labels, **common)
            active = labels_for_width(judge, Design.active, width, labels, **common)
            print(f"| {judge.name} | {labels} | {width[0]:.1f} | {optimal[0]:.0f} | {active[0]:.0f} | {width[1]:.1f} | "
                  f"{optimal[1]:.0f} | {active[1]:.0f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--stories", type=int, default=600)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--part", default="all",
                        choices=["all", "budgets", "designs", "savings", "active", "continued", "differences", "probes"])
    parser.add_argument("--rules-share", type=float, default=0.5,
                        help="share of the answers the rules judge decides in the cascade")
    parser.add_argument("--rules-error", type=float, default=0.0, help="share of its answers the rules judge gets wrong")
    parser.add_argument("--rules-error-alone", action="store_true",
                        help="the rules judge errs only in the StoryTurns it decides whole")
    parser.add_argument("--shares", default="0.5,0.7,0.85,0.95", help="the savings table's rules shares")
    args = parser.parse_args()
    started = time.perf_counter()
    common = {"runs": args.runs, "stories": args.stories, "seed": args.seed}
    judges = [Judge(j.sensitivity, j.specificity, rules_share=args.rules_share, rules_error=args.rules_error)
              for j in JUDGES]
    if args.part in ("all", "budgets", "designs"):
        print(f"\n## Coverage (%) and width (points) of the 95 % interval; {args.runs} runs of {args.stories} "
              "StoryTurns per cell\n")
        print("| judge (sens/spec) | labels | design | story coverage | question coverage | story width "
              "| question width |\n|---|---|---|---|---|---|---|")
        designs = [Design.proportional] if args.part == "budgets" else [Design.proportional, Design.optimal]
        for judge in judges:
            for labels in BUDGETS:
                for design in designs:
                    found = coverage(judge, labels, design=design, **common)
                    print(f"| {judge.name} | {labels} | {design.value} | {found[0]:.1f} | {found[1]:.1f} | "
                          f"{found[2]:.1f} | {found[3]:.1f} |", flush=True)
    if args.part in ("all", "savings"):
        savings_table([float(v) for v in args.shares.split(",")], common, args.rules_error, args.rules_error_alone)
    if args.part in ("all", "active"):
        active_tables(judges, common)
    if args.part in ("all", "continued"):
        print(f"\n## An optimal sample continued as labels come in: {args.runs} runs per cell\n")
        print("| judge (sens/spec) | first labels | then | story coverage | question coverage | story width "
              "| question width |\n|---|---|---|---|---|---|---|")
        for judge in judges:
            for first, total in ((20, 50), (30, 100), (50, 200)):
                found = continued(judge, first, total, **common)
                print(f"| {judge.name} | {first} | {total} | {found[0]:.1f} | {found[1]:.1f} | {found[2]:.1f} | "
                      f"{found[3]:.1f} |", flush=True)
    if args.part in ("all", "differences"):
        print(f"\n## Corrected differences: {args.runs} pairs of runs of {args.stories} StoryTurns per cell\n")
        print("| judge of A | judge of B | labels | B's answers right more often by | corrected rejects (%) "
              "| judged rejects (%) | story coverage | question coverage | story width | category: rejects "
              "| category: coverage |\n|---|---|---|---|---|---|---|---|---|---|---|")
        for first, second in ((JUDGES[0], JUDGES[0]), (JUDGES[1], JUDGES[3]), (JUDGES[2], JUDGES[4])):
            for labels in BUDGETS[2:]:  # a paired sample has up to nine strata: at least 18 labels
                for shift in (0.0, 0.1):
                    c = compare(first, second, labels, shift=shift, **common)
                    print(f"| {first.name} | {second.name} | {c.labels:.0f} | {100 * shift:.0f} points | "
                          f"{c.corrected_rejects:.1f} | {c.judged_rejects:.1f} | {c.story_coverage:.1f} | "
                          f"{c.question_coverage:.1f} | {c.width:.1f} | {c.category_rejects:.1f} | "
                          f"{c.category_coverage:.1f} |", flush=True)
    if args.part in ("all", "probes"):
        print("\n## Position probe: share of probes that flag the judge (2,000 seeds each)\n")
        print("| answers | random verdicts | bias | flagged (%) |\n|---|---|---|---|")
        for answers in (50, 100, 200):
            for noise, bias in ((0.0, 0.0), (0.2, 0.0), (0.5, 0.0), (0.2, 0.1), (0.0, 0.1)):
                print(f"| {answers} | {100 * noise:.0f} % | {100 * bias:.0f} % | "
                      f"{probe_alarms(noise, bias, answers=answers, seeds=2000, seed=args.seed):.1f} |", flush=True)
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
