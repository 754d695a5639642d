"""Judge-corrected differences between two runs: prediction-powered inference on a paired sample.

A comparison of two models rests on two judged figures. When the judge errs differently on the two
models' answers (one model's style fools it more), the difference of the judged figures is biased
and no interval over StoryTurns corrects that. A paired calibration sample (``commet calibrate --run
A --pair B``) draws StoryTurns that both runs finished, stratified by who decided the answers of
both and what the judges concluded of each (:func:`commet.reports.calibration.pair_stratum`); people
label the answers of both runs on them. With ``g_i = f_Ai / X_A - f_Bi / X_B`` the judged
difference of StoryTurn ``i`` (``f`` the judge's count of right answers, ``X`` the run's answers;
for story accuracy ``f`` is 0 or 1 and ``X`` the StoryTurns) and ``z_i`` the same from the people's
labels, the difference of the accuracies is estimated as

    D = sum_all g_i + sum_h N_h mean_{labelled in h} (z_i - g_i)

(PPI, Angelopoulos et al. 2023, applied to the difference: unbiased for any judge, since the
rectifier measures both judges' errors on the same StoryTurns). Its variance has the same two
parts as :func:`commet.reports.ppi.stratified_ppi`'s: which StoryTurns were labelled (stratified,
each stratum's labels with two pseudo-units at the ends of one answer's error in either run), and
which StoryTurns the runs have (the linearised difference of the two ratios, ``u_i = (y_Ai -
theta_A x_Ai) / X_A - (y_Bi - theta_B x_Bi) / X_B``, its mean square by PPI); the interval is Student's
at Satterthwaite's degrees of freedom, and the test rejects "no difference" when 0 is outside it. A
domain (a category of a subset: the paper's Tables 1 and 2) is estimated the same way with ``x``,
``f`` and ``y`` zero outside it (domain estimation in a stratified sample, Cochran 5A.14).
bench/bench_calibration.py checks the test's size by simulation: at most 5 % rejections of a true
null at every budget, for judges from 99 %/99 % to 70 %/97 % on either run.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from commet.reports.calibration import design_units, people_truth, population, question_counts
from commet.reports.design import MIN_LABELS
from commet.reports.ppi import LEVEL, NotEnoughLabels, strata_masks, t_value
from commet.reports.rundata import Cell, Controls, Section, StoryResult, load_run
from commet.reports.sections import SectionKey
from commet.reports.stats import fixed
from commet.store.calibration import load_sample
from commet.store.sqlite import RunRecord, Store


@dataclass(frozen=True)
class DifferenceEstimates:
    """Per batch row: the corrected difference ``theta_A - theta_B`` (-1..1), its interval, the two corrected
    accuracies and the judged difference."""

    difference: np.ndarray
    low: np.ndarray
    high: np.ndarray
    se: np.ndarray
    se_labels: np.ndarray  # from which StoryTurns were labelled
    se_stories: np.ndarray  # from which StoryTurns the runs have
    first: np.ndarray
    second: np.ndarray
    judged: np.ndarray

    @property
    def rejects(self) -> np.ndarray:
        """Whether "no difference" is rejected at the interval's level (0 outside the interval)."""
        rejected: np.ndarray = (self.low > 0) | (self.high < 0)
        return rejected


def paired_difference(xa: np.ndarray, fa: np.ndarray, ya: np.ndarray, xb: np.ndarray, fb: np.ndarray,
                      yb: np.ndarray, labelled: np.ndarray, strata: np.ndarray, *, level: float = LEVEL,
                      least: int = 2) -> DifferenceEstimates:
    """PPI of ``sum ya / sum xa - sum yb / sum xb`` over each row's units, labelled in both runs together.

    Arrays are (rows, units) as for :func:`commet.reports.ppi.stratified_ppi`: ``x`` the unit's size in each run
    (0 outside a domain), ``f`` the judge's count, ``y`` the people's (any value where not labelled)."""
    xa, xb = np.atleast_2d(np.asarray(xa, float)), np.atleast_2d(np.asarray(xb, float))
    fa, fb = np.atleast_2d(np.asarray(fa, float)), np.atleast_2d(np.asarray(fb, float))
    member, weight, big_n, small_n = strata_masks(labelled, strata, xa.shape, least)
    labelled = np.broadcast_to(np.atleast_2d(np.asarray(labelled, bool)), xa.shape)
    ya = np.where(labelled, np.atleast_2d(np.asarray(ya, float)), 0.0)
    yb = np.where(labelled, np.atleast_2d(np.asarray(yb, float)), 0.0)
    count = xa.shape[1]
    safe_n, safe_big = np.maximum(small_n, 1.0), np.maximum(big_n, 1.0)

    def mean(values: np.ndarray) -> np.ndarray:  # per stratum over its labelled units
        means: np.ndarray = np.einsum("rhu,ru->rh", weight, values) / safe_n
        return means

    total_a, total_b = xa.sum(axis=1, keepdims=True), xb.sum(axis=1, keepdims=True)
    theta_a = (fa.sum(axis=1) + (big_n * mean(ya - fa)).sum(axis=1)) / total_a[:, 0]
    theta_b = (fb.sum(axis=1) + (big_n * mean(yb - fb)).sum(axis=1)) / total_b[:, 0]
    rectifier = (ya - fa) / total_a - (yb - fb) / total_b
    # labels: each sampled stratum's rectifiers with two pseudo-units, one answer's error in either run at the
    # ends of its range (the judged rate r: -r and 1 - r in run A, the other way round in B)
    inside = np.einsum("rhu,ru->rh", member, xa + xb) > 0  # a domain's strata: those with units in it
    sampled = (small_n < big_n) & (small_n > 0) & inside

    def rate(x: np.ndarray, f: np.ndarray) -> np.ndarray:
        found: np.ndarray = np.einsum("rhu,ru->rh", member, f) / np.maximum(np.einsum("rhu,ru->rh", member, x),
                                                                             1e-12)
        return found

    rate_a, rate_b = rate(xa, fa), rate(xb, fb)
    low_end = -rate_a / total_a - (1 - rate_b) / total_b
    high_end = (1 - rate_a) / total_a + rate_b / total_b
    size = small_n + 2 * sampled
    centred = (np.einsum("rhu,ru->rh", weight, rectifier) + sampled * (low_end + high_end)) / np.maximum(size, 1.0)
    squares = (np.einsum("rhu,ru->rh", weight, rectifier ** 2) + sampled * (low_end ** 2 + high_end ** 2)
               - size * centred ** 2)
    variance = np.maximum(squares, 0.0) / np.maximum(size - 1, 1.0)
    parts = np.where(sampled, big_n ** 2 * (1 - small_n / safe_big) / safe_n, 0.0) * variance
    var_labels = parts.sum(axis=1)
    # StoryTurns: the linearised difference of the two ratios, its mean square by PPI
    judged_u = ((fa - theta_a[:, None] * xa) / total_a - (fb - theta_b[:, None] * xb) / total_b) ** 2
    true_u = ((ya - theta_a[:, None] * xa) / total_a - (yb - theta_b[:, None] * xb) / total_b) ** 2
    m2 = np.maximum((judged_u.sum(axis=1) + (big_n * mean(true_u - judged_u)).sum(axis=1)) / count, 0.0)
    var_stories = m2 * count ** 2 / max(count - 1, 1)
    spread_df = (parts ** 2 / np.maximum(small_n - 1, 1.0)).sum(axis=1) + var_stories ** 2 / max(count - 1, 1)
    total_var = var_labels + var_stories
    df = np.divide(total_var ** 2, spread_df, out=np.full(len(total_var), np.inf), where=spread_df > 0)
    difference = theta_a - theta_b
    half = t_value(df, level) * np.sqrt(total_var)
    judged = fa.sum(axis=1) / total_a[:, 0] - fb.sum(axis=1) / total_b[:, 0]
    return DifferenceEstimates(difference=difference, low=np.maximum(difference - half, -1.0),
                               high=np.minimum(difference + half, 1.0), se=np.sqrt(total_var),
                               se_labels=np.sqrt(var_labels), se_stories=np.sqrt(var_stories), first=theta_a,
                               second=theta_b, judged=judged)


@dataclass(frozen=True)
class DifferenceRow:
    """One line of a corrected comparison: what is compared (a measure over a scope) and the estimates."""

    scope: str  # "all StoryTurns", or "SUBSET: CATEGORY" (the paper's Tables 1 and 2)
    measure: str  # "story accuracy" or "question accuracy"
    units: int  # StoryTurns in the scope
    labelled: int  # ... of which labelled in both runs
    estimate: DifferenceEstimates


@dataclass
class CorrectedComparison:
    """Run A against run B on their paired sample: the rows, or why there are none yet."""

    first: str
    second: str
    units: int = 0
    labelled: int = 0
    drawn: int = 0
    rows: list[DifferenceRow] = field(default_factory=list)
    problem: str = ""


def corrected_comparison(store: Store, a: RunRecord, b: RunRecord, *, level: float = LEVEL,
                         controls: Controls | None = None) -> CorrectedComparison:
    """The judge-corrected differences of story and question accuracy of ``a`` and ``b``, overall and per category
    of each subset, from their paired sample (see the module text); ``controls``: the dataset's comprehension
    control turns, kept out of question accuracy."""
    result = CorrectedComparison(a.name, b.name)
    sample, other = load_sample(store, a.name), load_sample(store, b.name)
    if sample is None or other is None or sample.partner != b.name or other.partner != a.name:
        result.problem = (f"no paired sample of runs {a.name!r} and {b.name!r} yet: draw one with `commet calibrate "
                          f"--run {a.name} --pair {b.name} --sample N` and label both runs' answers on it")
        return result
    data_a, data_b = load_run(store, a, controls), load_run(store, b, controls)
    units, strata = design_units(data_a, data_b)
    if dict(Counter(strata)) != sample.population:
        result.problem = "the runs changed since their paired sample was drawn: draw again with --redraw"
        return result
    theirs = {s.story_id: s for s in population(data_b)}
    drawn = {item.story_id for item in sample.items} & {item.story_id for item in other.items}
    in_sample = [s for s in units if s.story_id in drawn]  # labels elsewhere (disputed answers) never count
    human_a = people_truth(store, a, in_sample)
    human_b = people_truth(store, b, [theirs[s.story_id] for s in in_sample])
    labelled = np.array([s.story_id in human_a and s.story_id in human_b for s in units])
    result.units, result.labelled, result.drawn = len(units), int(labelled.sum()), len(sample.items)
    codes = {h: i for i, h in enumerate(sorted(set(strata)))}
    code = np.array([codes[h] for h in strata])
    arrays = {run: _counts(stories, truth) for run, stories, truth in (
        ("a", units, human_a), ("b", [theirs[s.story_id] for s in units], human_b))}
    scopes = [("all StoryTurns", np.ones(len(units), bool))]
    for subset in sorted({s.subset for s in units}):
        for category in sorted({s.category for s in units if s.subset == subset}):
            scopes.append((f"{subset}: {category}", np.array([s.subset == subset and s.category == category
                                                               for s in units])))
    try:
        for scope, inside in scopes:
            for measure, (xa, fa, ya), (xb, fb, yb) in (("story accuracy", arrays["a"][0], arrays["b"][0]),
                                                        ("question accuracy", arrays["a"][1], arrays["b"][1])):
                estimate = paired_difference(xa * inside, fa * inside, ya * inside, xb * inside, fb * inside,
                                             yb * inside, labelled, code, level=level, least=MIN_LABELS)
                result.rows.append(DifferenceRow(scope, measure, int(inside.sum()), int((inside & labelled).sum()),
                                                 estimate))
    except NotEnoughLabels:
        result.rows = []
        result.problem = (f"needs at least {MIN_LABELS} StoryTurns labelled in both runs in every stratum of the "
                          f"paired sample ({result.labelled} of {result.drawn} labelled in both so far)")
    return result


Counts = tuple[np.ndarray, np.ndarray, np.ndarray]


def _counts(stories: list[StoryResult], truth: dict[str, list[bool]]) -> tuple[Counts, Counts]:
    """(x, f, y) of story accuracy and of question accuracy (test questions) per StoryTurn (y 0 where not
    labelled)."""
    story = (np.ones(len(stories)), np.array([float(s.correct is True) for s in stories]),
             np.array([float(s.story_id in truth and all(truth[s.story_id])) for s in stories]))
    return story, question_counts(stories, [truth.get(s.story_id, []) for s in stories])


def _points(value: float) -> str:
    return fixed(100 * value, 2, sign=True)


def differences_section(comparisons: list[CorrectedComparison]) -> Section:
    """Per pair of runs with a paired sample: the corrected differences overall and per category of each subset."""
    rows: list[list[Cell]] = []
    problems = []
    for c in comparisons:
        for row in c.rows:
            e = row.estimate
            rows.append([c.first, c.second, row.scope, row.measure, str(row.units), str(row.labelled),
                         fixed(100 * float(e.first[0]), 2), fixed(100 * float(e.second[0]), 2),
                         _points(float(e.judged[0])),
                         f"{_points(float(e.difference[0]))} [{_points(float(e.low[0]))}, {_points(float(e.high[0]))}]",
                         "A - B differs" if bool(e.rejects[0]) else "no evidence"])
        if c.problem:
            problems.append(f"{c.first} vs {c.second}: {c.problem}.")
    note = ("Differences A - B in points on the StoryTurns both runs finished, corrected for both judges' errors by "
            "prediction-powered inference on a paired sample labelled in both runs (commet calibrate --pair); "
            "95% interval (Student, Satterthwaite); 'differs': 0 is outside it (a test of size 5%, checked by "
            "simulation in bench/bench_calibration.py). Scopes after the first: each category of each subset (the "
            "paper's Tables 1 and 2). docs/calibration.md says when it is valid.")
    return Section(SectionKey.CORRECTED_DIFFERENCES, "Judge-corrected differences between runs (points, 95% CI)",
                   ["Run A", "Run B", "Scope", "Measure", "StoryTurns", "Labelled in both", "A (corrected, %)",
                    "B (corrected, %)", "Judged difference", "Corrected difference", "Verdict"], rows,
                   note + (" " + " ".join(problems) if problems else ""))


def paired_comparisons(store: Store, runs: list[RunRecord], controls: Controls | None = None,
                       ) -> list[CorrectedComparison]:
    """The corrected comparisons of the pairs among ``runs`` that share a paired sample (each pair once)."""
    names = {r.name: r for r in runs}
    found = []
    for record in runs:
        sample = load_sample(store, record.name)
        if sample is not None and sample.partner in names and record.name < sample.partner:
            found.append(corrected_comparison(store, record, names[sample.partner], controls=controls))
    return found
