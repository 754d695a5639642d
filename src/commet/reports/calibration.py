"""Judge calibration of a run: a random sample of its StoryTurns labelled by people, the judge's error measured on
it, and the run's story and question accuracy corrected for that error (prediction-powered inference).

The sampling unit is the StoryTurn, because story accuracy is a property of a whole StoryTurn
(right only when every answer is right) while labels are given to answers: a StoryTurn of the
sample counts as labelled when every one of its answers has a human verdict, and then both its
true story outcome (all answers right) and its true count of right answers are known. The
StoryTurns are stratified by who decided their answers and what the judge concluded:

* ``rules only, judged right`` / ``rules only, judged wrong``: every answer decided by the rules judge;
* ``JUDGE, judged right`` / ``JUDGE, judged wrong``: some answer decided by an LLM judge or panel;
* ``undecided answers``: some answer left undecided (counted wrong by the judge-only figure).

:mod:`commet.reports.design` says how many StoryTurns each stratum gets (``proportional``: half
shared equally, half in proportion to what is left of each; ``optimal``: Neyman's allocation from
the judge's estimated error; at least :data:`~commet.reports.design.MIN_LABELS` each); within a
stratum the StoryTurns are the first in the order of ``sha256(seed:story_id)``, and
the order to label in is the same order across strata. The estimator
(:func:`commet.reports.ppi.stratified_ppi`) weights each stratum by its size, so the unequal
shares cost nothing in validity. An ``active`` sample has no shares: each StoryTurn is drawn, by priority, with a
chance that grows with the judge's uncertainty about it, and the estimate weights each label by one over that chance
(:mod:`commet.reports.active`). The population is the run's finished StoryTurns: a StoryTurn
stopped at an undecided answer has questions nobody asked, so its truth is unknowable until it
is finished (``commet eval --finish``); failed ones are not scored anywhere.

A paired sample (``--pair``) has for population the StoryTurns both runs finished, in pair strata
(:func:`pair_stratum`); each run's figure is then over those, and :mod:`commet.reports.differences`
estimates the difference of the two runs from it.

Per judge (the judge each answer's verdict came from), over the labelled answers: the confusion
of its verdicts with the people's, its accuracy on the answers it decided (weighted by the
strata's sampling rates; Wilson interval at the weights' effective size), Cohen's kappa (a
stratified bootstrap over the labelled StoryTurns) and, over the whole run, how many answers it
left undecided. Labels given outside the sample (``commet label --disputed``) are never used
here: they were not drawn at random.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from commet.conditions import Design
from commet.reports.active import (
    SPLIT,
    active_ppi,
    answer_error,
    inclusion,
    priority_order,
    story_uncertainty,
    uniform,
    weights,
)
from commet.reports.agreement import original_run, people_verdicts
from commet.reports.design import MIN_LABELS, CalibrationError, Term, allocate, error_model, minimum
from commet.reports.ppi import (
    Estimator,
    NotEnoughLabels,
    PPIEstimates,
    error_bound,
    kappa_from_cells,
    stratified_ppi,
    wilson,
)
from commet.reports.rundata import (
    Bootstrap,
    Cell,
    Controls,
    RunData,
    Section,
    StoryResult,
    TurnResult,
    load_run,
)
from commet.reports.sections import SectionKey
from commet.reports.stats import NOT_KNOWN, Corrected, fixed
from commet.store.calibration import CalibrationSample, SampledStory, load_sample
from commet.store.labelling import unsure_answers
from commet.store.records import StoryStatus
from commet.store.sqlite import RunRecord, Store

RULES = "rules"
UNDECIDED = "undecided answers"


def story_stratum(story: StoryResult) -> str:
    """Who decided the StoryTurn's answers and what the judge concluded (see the module text)."""
    answered = [t for t in story.turns if t.answered]
    if any(t.undecided for t in answered):
        return UNDECIDED
    deciders = sorted({t.judge or "?" for t in answered} - {RULES})
    who = "+".join(deciders) if deciders else "rules only"
    return f"{who}, judged {'right' if story.correct is True else 'wrong'}"


def population(data: RunData) -> list[StoryResult]:
    """The StoryTurns a calibration of this run is about: finished, with at least one answer."""
    return [s for s in data.stories if s.status is StoryStatus.done and any(t.answered for t in s.turns)]


def pair_stratum(story: StoryResult, other: StoryResult, names: tuple[str, str]) -> str:
    """A paired sample's stratum of a StoryTurn of two runs (``names``: this run's and the other's): who decided
    the answers of both, and what the judges concluded of each (named in the runs' sorted order, so that both runs
    of the pair give it the same name)."""
    answered = [t for s in (story, other) for t in s.turns if t.answered]
    if any(t.undecided for t in answered):
        return UNDECIDED
    deciders = sorted({t.judge or "?" for t in answered} - {RULES})
    who = "+".join(deciders) if deciders else "rules only"
    pairs = sorted(zip(names, (story, other), strict=True))
    return f"{who}, judged " + " / ".join(f"{name} {'right' if s.correct is True else 'wrong'}" for name, s in pairs)


def design_units(data: RunData, partner: RunData | None) -> tuple[list[StoryResult], list[str]]:
    """The population of a sample and each StoryTurn's stratum: the run's own (:func:`population`,
    :func:`story_stratum`) or, for a sample paired with ``partner``, the StoryTurns both runs finished, in pair
    strata (:func:`pair_stratum`)."""
    stories = population(data)
    if partner is None:
        return stories, [story_stratum(s) for s in stories]
    theirs = {s.story_id: s for s in population(partner)}
    common = [s for s in stories if s.story_id in theirs]
    names = (data.run.name, partner.run.name)
    return common, [pair_stratum(s, theirs[s.story_id], names) for s in common]


def order_key(seed: int, story_id: str) -> str:
    """A StoryTurn's place in the seeded random order (the same on every machine and Python version)."""
    return hashlib.sha256(f"{seed}:{story_id}".encode()).hexdigest()


def draw_sample(data: RunData, size: int, seed: int, design: Design = Design.optimal, *,
                previous: CalibrationSample | None = None, partner: RunData | None = None,
                answer_errors: dict[Verdict, tuple[int, int]] | None = None,
                split: set[Answer] | None = None) -> CalibrationSample:
    """A stratified random sample of ``size`` of the run's finished StoryTurns (see the module text).

    ``previous``: a sample of the same seed to continue (its StoryTurns kept, in their order, the new ones after
    them); ``partner``: a paired sample, of the StoryTurns both runs finished
    (the partner's half is the same StoryTurns: :func:`partner_half`); ``answer_errors``: per decider and verdict
    (:func:`verdict_errors`), (answers on which it and the people differ, answers labelled), which the optimal and
    the active design weigh against their priors; ``split``: the answers a panel split on (:func:`split_answers`)."""
    stories, strata = design_units(data, partner)
    if not stories:
        both = f" and {partner.run.name!r} have" if partner is not None else " has"
        raise CalibrationError(f"run {data.run.name!r}{both} no finished StoryTurn with an answer to label")
    if size < 1:
        raise CalibrationError("--sample must be at least 1")
    by_stratum: dict[str, list[StoryResult]] = {}
    for story, stratum in zip(stories, strata, strict=True):
        by_stratum.setdefault(stratum, []).append(story)
    sizes = {h: len(members) for h, members in by_stratum.items()}
    already: dict[str, int] = {}
    if previous is not None:
        if previous.population != sizes or previous.seed != seed:
            raise CalibrationError("the run changed since its sample was drawn (or the seed differs): a sample "
                                   "continues only on the same StoryTurns and seed; draw again with --redraw")
        already = {h: previous.drawn(h) for h in sizes}
        if (previous.design is Design.active) is not (design is Design.active):
            raise CalibrationError(f"the run's sample is {previous.design.value}: a larger --sample continues it only "
                                   "with that design (its StoryTurns were drawn so); leave --design out, or --redraw "
                                   f"with --design {design.value}")
    if design is Design.active:
        if partner is not None:
            raise CalibrationError("the active design draws one run's sample: a paired sample (--pair) is "
                                   "proportional or optimal")
        return _draw_active(data, stories, strata, size, seed, previous, by_decider(answer_errors or {}),
                            split or set())
    model = _model(stories, strata, size, answer_errors or {}, split or set(), partner) if design is Design.optimal \
        else None
    counts = allocate(sizes, size, design, model=model, already=already)
    kept = {item.story_id for item in previous.items} if previous is not None else set()
    chosen = [(story, h) for h, members in by_stratum.items()
              for story in sorted(members, key=lambda s: order_key(seed, s.story_id))[:counts[h]]
              if story.story_id not in kept]
    chosen.sort(key=lambda pair: order_key(seed, pair[0].story_id))
    start = len(kept)
    items = (*(previous.items if previous is not None else ()),
             *(SampledStory(story.story_id, h, start + i) for i, (story, h) in enumerate(chosen)))
    return CalibrationSample(data.run.name, size, seed, sizes, items, design=design,
                             partner=partner.run.name if partner is not None else None)


Answer = tuple[str, int]  # (story id, turn)


def _model(stories: list[StoryResult], strata: list[str], size: int, errors: dict[Verdict, tuple[int, int]],
           split: set[Answer], partner: RunData | None) -> dict[str, tuple[Term, Term]]:
    """The optimal design's expected variance per stratum (:func:`commet.reports.design.error_model`): each answer's
    error rate by its decider and verdict from the labels so far (shrunk towards the decider's prior), and the bound
    a sample of ``size`` would give its decider (its answers of the run, labelled in proportion, erring at that rate,
    as :func:`calibrate` pools them). A paired sample's StoryTurn has both runs' answers, and no bound (its
    difference's pseudo-units are not bounded)."""
    theirs = {s.story_id: s for s in population(partner)} if partner is not None else {}
    answers = [[(t, (s.story_id, t.turn) in split) for t in s.turns if t.answered] + (
        [(t, False) for t in theirs[s.story_id].turns if t.answered] if theirs else []) for s in stories]
    keys = [[(decider(t, panel_split), t.correct is True) for t, panel_split in found] for found in answers]
    rate = {key: answer_error(key[0], *errors.get(key, (0, 0))) for found in keys for key in found}
    pooled, count = by_decider(errors), Counter(key[0] for found in keys for key in found)
    bound = {}
    for who, n in count.items():
        expected = pooled.get(who, (0, 0))[1] + size * n / len(stories)
        bound[who] = 1.0 if theirs else float(error_bound(answer_error(who, *pooled.get(who, (0, 0))) * expected,
                                                          expected))
    widest = max(len(found) for found in keys)
    rates, bounds = np.zeros((len(stories), widest)), np.zeros((len(stories), widest))
    for i, found in enumerate(keys):
        rates[i, :len(found)] = [rate[key] for key in found]
        bounds[i, :len(found)] = [bound[key[0]] for key in found]
    x = np.array([float(len(found)) for found in keys])
    f = np.array([float(sum(right for _, right in found)) for found in keys])
    codes = {h: i for i, h in enumerate(sorted(set(strata)))}
    found_model = error_model(rates, bounds, x, f, np.array([codes[h] for h in strata]))
    return {h: found_model[i] for h, i in codes.items()}


def decider(turn: TurnResult, split: bool = False) -> str:
    """Who decided an answer, for the active design's error rates: its judge, ``JUDGE split`` when a panel's members
    did not all give its verdict, or ``undecided``."""
    return "undecided" if turn.undecided else f"{turn.judge or '?'}{SPLIT if split else ''}"


def deciders(story: StoryResult, split: set[Answer]) -> list[str]:
    return [decider(t, (story.story_id, t.turn) in split) for t in story.turns if t.answered]


def split_answers(store: Store, record: RunRecord) -> set[Answer]:
    """The run's answers whose panel's members did not all give the same verdict (the stored judgment's details)."""
    found: set[Answer] = set()
    for row in store.turn_rows(record.id):
        stored = store.cached_judgment(row.judgment_key) if row.judgment_key is not None else None
        members = stored.details.get("members") if stored is not None else None
        votes = {(m.get("outcome"), m.get("branch")) for m in members if isinstance(m, dict)} if isinstance(
            members, list) else set()
        if len(votes) > 1:
            found.add((row.story_id, row.turn))
    return found


Verdict = tuple[str, bool]  # (decider, judged right)


def verdict_errors(store: Store, record: RunRecord, stories: list[StoryResult]) -> dict[Verdict, tuple[int, int]]:
    """Per decider and verdict (right or wrong, an undecided answer counting as wrong), (answers on which it differs
    from the people's, answers with a people's verdict), over every label given on the run's ``stories`` so far: the
    optimal and active designs' estimate of where the judge errs (they only move precision, never validity, so labels
    from anywhere may serve). A lenient judge errs where it says right, a strict one where it says wrong."""
    verdicts, origin, split = people_verdicts(store), original_run(store, record), split_answers(store, record)
    differ: Counter[Verdict] = Counter()
    seen: Counter[Verdict] = Counter()
    for story in stories:
        for turn in story.turns:
            human = verdicts.get((origin, story.story_id, turn.turn)) if turn.answered else None
            if human is not None:
                key = (decider(turn, (story.story_id, turn.turn) in split), turn.correct is True)
                seen[key] += 1
                differ[key] += int(key[1] is not human)
    return {key: (differ[key], seen[key]) for key in seen}


def by_decider(errors: dict[Verdict, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """:func:`verdict_errors` per decider, both verdicts together (the active design's rates)."""
    found: dict[str, tuple[int, int]] = {}
    for (who, _), (wrong, seen) in errors.items():
        before = found.get(who, (0, 0))
        found[who] = (before[0] + wrong, before[1] + seen)
    return found


def _active_order(stories: list[StoryResult], seed: int, rates: dict[str, float],
                  split: set[Answer]) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """The StoryTurns' weights and uniform draws (rows of one) and their order by decreasing priority."""
    weight = weights(np.array([[story_uncertainty(deciders(s, split), rates) for s in stories]]))
    draws = np.array([[uniform(seed, s.story_id) for s in stories]])
    return weight, draws, priority_order(weight[0], draws[0])


def _draw_active(data: RunData, stories: list[StoryResult], strata: list[str], size: int, seed: int,
                 previous: CalibrationSample | None, errors: dict[str, tuple[int, int]],
                 split: set[Answer]) -> CalibrationSample:
    """The first ``size`` StoryTurns by priority (:mod:`commet.reports.active`); a sample that continues keeps its
    error rates, so its order is the same and its StoryTurns stay first."""
    sizes = Counter(strata)
    if size < min(minimum(dict(sizes)), len(stories)):
        raise CalibrationError(f"a sample of {size} is below the {minimum(dict(sizes))} StoryTurns (two a stratum) "
                               "every design needs for its interval: draw at least that many")
    rates = dict(previous.rates or {}) if previous is not None else {
        d: answer_error(d, *errors.get(d, (0, 0))) for d in sorted({d for s in stories for d in deciders(s, split)})}
    _, _, order = _active_order(stories, seed, rates, split)
    chosen = order[:size]
    items = tuple(SampledStory(stories[i].story_id, strata[i], position) for position, i in enumerate(chosen))
    if previous is not None and items[:len(previous.items)] != previous.items:
        raise CalibrationError("the run changed since its active sample was drawn: its order is not the same; draw "
                               "again with --redraw")
    return CalibrationSample(data.run.name, size, seed, dict(sizes), items, design=Design.active, rates=rates)


def broken_pair(store: Store, sample: CalibrationSample) -> str:
    """Why a paired sample no longer is one (empty when it is, or is not paired): its partner's sample was drawn
    again on its own, or paired with a third run, since the two halves were drawn together."""
    if sample.partner is None:
        return ""
    other = load_sample(store, sample.partner)
    if other is not None and other.partner == sample.run and other.seed == sample.seed and [
            (i.story_id, i.position) for i in other.items] == [(i.story_id, i.position) for i in sample.items]:
        return ""
    since = "has no sample now" if other is None else "has been drawn again on its own" if other.partner is None \
        else f"is now paired with run {other.partner!r}"
    return (f"this sample was paired with run {sample.partner!r}, whose sample {since}: the pairing is broken. Draw "
            f"this run's again with --redraw (add --pair {sample.partner} to pair the two anew)")


def partner_half(sample: CalibrationSample) -> CalibrationSample:
    """The partner run's half of a paired sample: the same StoryTurns, strata and order."""
    assert sample.partner is not None
    return replace(sample, run=sample.partner, partner=sample.run)


@dataclass(frozen=True)
class JudgeCalibration:
    """One judge's verdicts against the people's on the labelled answers of the sample."""

    judge: str
    answers: int  # answers of the run whose verdict came from this judge
    undecided: int  # ... of which it left undecided
    confusion: dict[tuple[bool | None, bool], int]  # (its verdict, the people's) -> labelled answers
    accuracy: Corrected | None  # on the answers it decided, weighted to the run
    kappa: tuple[float, float, float] | None  # value, low, high

    @property
    def labelled(self) -> int:
        return sum(self.confusion.values())


@dataclass
class Calibration:
    """What a run's calibration sample and its labels say."""

    data: RunData
    sample: CalibrationSample
    estimator: Estimator
    stories: int = 0  # the population: finished StoryTurns with answers
    labelled: int = 0  # sampled StoryTurns with every answer labelled
    partly: int = 0  # sampled StoryTurns with some answers labelled
    answers_labelled: int = 0
    answers_drawn: int = 0
    stopped: int = 0  # StoryTurns stopped at an undecided answer: outside the population
    by_stratum: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # stratum -> (N, drawn, labelled)
    #: decider (:func:`decider`) -> (answers of the labelled StoryTurns where its verdict differs from the people's, an
    #: undecided one counting as wrong as the judged figure counts it, such answers): the pooled bound's evidence
    errors: dict[str, tuple[int, int]] = field(default_factory=dict)
    story: PPIEstimates | None = None
    question: PPIEstimates | None = None
    problem: str = ""  # why there is no corrected figure yet
    #: an active sample: labelled StoryTurns after its first unlabelled one, which wait for it (the estimate uses the
    #: labelled beginning of the order)
    waiting: int = 0
    judges: list[JudgeCalibration] = field(default_factory=list)
    pair_broken: bool = False  # a paired sample whose partner's half was drawn again (:func:`broken_pair`)
    #: sampled StoryTurns left out because people marked answers of them unsure and nobody labelled those answers
    unsure: int = 0
    #: the corrected story and question accuracy with them counted in, those answers all wrong and all right: how far
    #: leaving them out may move the figure (a stratified sample; None when there are none or no figure)
    unsure_range: tuple[tuple[float, float], tuple[float, float]] | None = None


def people_truth(store: Store, record: RunRecord, stories: list[StoryResult]) -> dict[str, list[bool]]:
    """The people's verdicts on every answer of each of ``stories`` of the run, for those whose every answer has
    one (the labelled StoryTurns)."""
    verdicts, origin = people_verdicts(store), original_run(store, record)
    found = {s.story_id: _human(verdicts, origin, s) for s in stories}
    return {sid: [bool(v) for v in h] for sid, h in found.items() if h and all(v is not None for v in h)}


def _human(verdicts: dict[tuple[str, str, int], bool], origin: str, story: StoryResult) -> list[bool | None]:
    return [verdicts.get((origin, story.story_id, t.turn)) for t in story.turns if t.answered]


def calibrate(store: Store, record: RunRecord, *, estimator: Estimator = Estimator.ppi,
              bootstrap: Bootstrap | None = None, controls: Controls | None = None) -> Calibration | None:
    """The run's calibration (None when it has no sample): progress, corrected accuracies, the judges
    (``controls``: the dataset's comprehension control turns, kept out of question accuracy)."""
    sample = load_sample(store, record.name)
    if sample is None:
        return None
    data = load_run(store, record, controls)
    partner = store.get_run(sample.partner) if sample.partner is not None else None
    if sample.partner is not None and partner is None:
        result = Calibration(data, sample, estimator, problem=f"the run {sample.partner!r} this sample is paired "
                             "with is gone: draw again with --redraw")
        return result
    if broken := broken_pair(store, sample):
        return Calibration(data, sample, estimator, problem=broken, pair_broken=True)
    stories, strata = design_units(data, load_run(store, partner, controls) if partner is not None else None)
    result = Calibration(data, sample, estimator, stories=len(stories),
                         stopped=sum(s.status is StoryStatus.stopped for s in data.stories))
    verdicts = people_verdicts(store)
    origin = original_run(store, record)
    sampled = {item.story_id for item in sample.items}
    humans = {s.story_id: _human(verdicts, origin, s) for s in stories if s.story_id in sampled}
    complete = {sid for sid, found in humans.items() if found and all(v is not None for v in found)}
    result.labelled, result.partly = len(complete), sum(any(v is not None for v in h) for h in humans.values()) - len(
        complete)
    marked = unsure_answers(store, origin)
    unsure = {s.story_id for s in stories if s.story_id in humans and s.story_id not in complete and all(
        v is not None or (s.story_id, t.turn) in marked for v, t in zip(
            humans[s.story_id], [t for t in s.turns if t.answered], strict=True))}
    result.unsure = len(unsure)
    result.answers_drawn = sum(len(h) for h in humans.values())
    result.answers_labelled = sum(v is not None for h in humans.values() for v in h)
    now = Counter(strata)
    drawn = Counter(item.stratum for item in sample.items)
    done = Counter(h for s, h in zip(stories, strata, strict=True) if s.story_id in complete)
    result.by_stratum = {h: (now[h], drawn[h], done[h]) for h in sorted(set(now) | set(drawn))}
    split = split_answers(store, record)
    differ, seen = Counter[str](), Counter[str]()
    for s in (s for s in stories if s.story_id in complete):
        for d, t, v in zip(deciders(s, split), [t for t in s.turns if t.answered], humans[s.story_id], strict=True):
            seen[d] += 1
            differ[d] += int((t.correct is True) is not v)
    result.errors = {d: (differ[d], seen[d]) for d in seen}
    if dict(now) != sample.population:
        result.problem = ("the run changed since its sample was drawn (StoryTurns per stratum now "
                          f"{dict(sorted(now.items()))}, then {dict(sorted(sample.population.items()))}): draw again "
                          "with --redraw")
        return result
    if sample.design is Design.active:
        result.estimator = Estimator.ppi
        used, weight_of, result.problem = _active_prefix(stories, sample, complete, split)
        result.waiting = len(complete) - len(used)
        if not result.problem:
            result.story, result.question = _active_estimates(stories, strata, humans, used, weight_of)
        result.judges = _judges(stories, strata, humans, used, bootstrap or Bootstrap(), weight_of)
        return result
    upper = {d: float(error_bound(*counts)) for d, counts in result.errors.items()}  # none labelled: 1
    bound = np.array([sum(upper.get(d, 1.0) for d in deciders(s, split)) for s in stories])
    result.story, result.question, result.problem = _estimates(stories, strata, humans, complete, estimator, bound)
    if unsure and result.story is not None:  # counted in, their unsure answers all wrong, then all right
        wrong, right = (_estimates(stories, strata, {sid: [end if v is None else v for v in h] if sid in unsure else h
                                                     for sid, h in humans.items()}, complete | unsure, estimator, bound)
                        for end in (False, True))
        result.unsure_range = ((_theta(wrong[0]), _theta(right[0])), (_theta(wrong[1]), _theta(right[1])))
    result.judges = _judges(stories, strata, humans, complete, bootstrap or Bootstrap())
    return result


def _theta(estimate: PPIEstimates | None) -> float:
    return float(estimate.theta[0]) if estimate is not None else float("nan")


def _active_prefix(stories: list[StoryResult], sample: CalibrationSample, complete: set[str],
                   split: set[Answer]) -> tuple[set[str], dict[str, float], str]:
    """An active sample's labelled beginning of its order, each such StoryTurn's inclusion probability, and why
    there is no figure yet (the order changed, or fewer labelled than two a stratum)."""
    weight, draws, order = _active_order(stories, sample.seed, sample.rates or {}, split)
    drawn = [item.story_id for item in sample.items]
    if [stories[i].story_id for i in order[:len(drawn)]] != drawn:
        return set(), {}, "the run changed since its active sample was drawn (its order is not the same): --redraw"
    k = 0
    while k < len(drawn) and drawn[k] in complete:
        k += 1
    _, pi = inclusion(weight, draws, k)
    used = set(drawn[:k])
    chances = {s.story_id: float(pi[0, i]) for i, s in enumerate(stories) if s.story_id in used}
    needed = min(minimum(sample.population), len(stories))
    if k < needed:
        return used, chances, (f"an active sample needs its first {needed} StoryTurns labelled, in its order "
                               f"(labelled from the start: {k})")
    return used, chances, ""


def question_counts(stories: list[StoryResult], truth: Sequence[Sequence[bool | None]],
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, f, y) of question accuracy per StoryTurn over its answered test questions: how many, judged right, right
    by the people's labels (``truth``: one per answered turn, empty where not labelled); the comprehension control
    turns are no test questions, as in every question accuracy."""
    tests = [[t.control is None for t in s.turns if t.answered] for s in stories]
    answered = [[t for t in s.turns if t.answered and t.control is None] for s in stories]
    return (np.array([float(len(a)) for a in answered]),
            np.array([float(sum(t.correct is True for t in a)) for a in answered]),
            np.array([float(sum(bool(v) for v, test in zip(found, mask, strict=False) if test))
                      for found, mask in zip(truth, tests, strict=True)]))


def _active_estimates(stories: list[StoryResult], strata: list[str], humans: dict[str, list[bool | None]],
                      used: set[str], chance: dict[str, float]) -> tuple[PPIEstimates, PPIEstimates]:
    """Story and question accuracy by inverse-probability-weighted PPI (:func:`commet.reports.active.active_ppi`)."""
    codes = {h: i for i, h in enumerate(sorted(set(strata)))}
    code = np.array([codes[h] for h in strata])
    labelled = np.array([s.story_id in used for s in stories])
    pi = np.array([chance.get(s.story_id, 1.0) for s in stories])
    truth = [[bool(v) for v in humans[s.story_id]] if s.story_id in used else [] for s in stories]
    story_f = np.array([float(s.correct is True) for s in stories])
    story_y = np.array([float(bool(found) and all(found)) for found in truth])
    question_x, question_f, question_y = question_counts(stories, truth)
    return (active_ppi(np.ones(len(stories)), story_f, story_y, labelled, pi, code),
            active_ppi(question_x, question_f, question_y, labelled, pi, code))


def _estimates(stories: list[StoryResult], strata: list[str], humans: dict[str, list[bool | None]],
               complete: set[str], estimator: Estimator,
               bound: np.ndarray) -> tuple[PPIEstimates | None, PPIEstimates | None, str]:
    """Story and question accuracy by stratified PPI, the pseudo-units bounded by ``bound`` (each StoryTurn's
    answers' deciders' upper error rates over the sample's labels: :func:`commet.reports.ppi.stratified_ppi`)."""
    codes = {h: i for i, h in enumerate(sorted(set(strata)))}
    code = np.array([codes[h] for h in strata])
    labelled = np.array([s.story_id in complete for s in stories])
    truth = [humans.get(s.story_id, []) if s.story_id in complete else [] for s in stories]
    story_f = np.array([float(s.correct is True) for s in stories])
    story_y = np.array([float(bool(found) and all(found)) for found in truth])
    question_x, question_f, question_y = question_counts(stories, truth)
    try:
        story = stratified_ppi(np.ones(len(stories)), story_f, story_y, labelled, code, estimator=estimator,
                               least=MIN_LABELS, bound=bound)
        question = stratified_ppi(question_x, question_f, question_y, labelled, code, estimator=estimator,
                                  least=MIN_LABELS, bound=bound)
    except NotEnoughLabels:
        short = [f"{h}: {int(labelled[code == i].sum())} of {int((code == i).sum())}" for h, i in codes.items()
                 if labelled[code == i].sum() < min(MIN_LABELS, (code == i).sum())]
        return None, None, (f"needs at least {MIN_LABELS} labelled StoryTurns in every stratum (or all of it; "
                            f"labelled: {'; '.join(short)})")
    return story, question, ""


def _judges(stories: list[StoryResult], strata: list[str], humans: dict[str, list[bool | None]],
            complete: set[str], boot: Bootstrap, chance: dict[str, float] | None = None) -> list[JudgeCalibration]:
    """Per judge, over the labelled StoryTurns weighted by one over their chance of being drawn (their stratum's
    sampling rate, or ``chance``: an active sample's inclusion probabilities)."""
    labelled_in = Counter(h for s, h in zip(stories, strata, strict=True) if s.story_id in complete)
    size = Counter(strata)
    answers: Counter[str] = Counter()
    undecided: Counter[str] = Counter()
    for story in stories:
        for turn in story.turns:
            if turn.answered:
                answers[turn.judge or "?"] += 1
                undecided[turn.judge or "?"] += int(turn.undecided)
    #: labelled StoryTurns: (stratum, weight, per judge: the (verdict, people's verdict) of each answer)
    found: list[tuple[str, float, list[tuple[str, bool | None, bool]]]] = []
    for story, h in zip(stories, strata, strict=True):
        if story.story_id in complete:
            pairs = [(t.judge or "?", t.correct, bool(v))
                     for t, v in zip([t for t in story.turns if t.answered], humans[story.story_id], strict=True)]
            found.append((h, 1 / chance[story.story_id] if chance is not None else size[h] / labelled_in[h], pairs))
    return [_one_judge(judge, answers[judge], undecided[judge], found, boot) for judge in sorted(answers)]


def _one_judge(judge: str, answers: int, undecided: int, found: list[tuple[str, float, list[tuple[str, bool | None,
               bool]]]], boot: Bootstrap) -> JudgeCalibration:
    confusion: Counter[tuple[bool | None, bool]] = Counter()
    cells = np.zeros((len(found), 4))  # per labelled StoryTurn: decided answers (both right, judge only, people only, neither)
    weights = np.array([weight for _, weight, _ in found])
    for row, (_, _, pairs) in enumerate(found):
        for who, verdict, human in pairs:
            if who != judge:
                continue
            confusion[(verdict, human)] += 1
            if verdict is not None:
                cells[row, {(True, True): 0, (True, False): 1, (False, True): 2, (False, False): 3}[(verdict, human)]] += 1
    decided = cells.sum(axis=1)
    accuracy = None
    if decided.sum() > 0:
        agree_w = float((weights * (cells[:, 0] + cells[:, 3])).sum())
        total_w = float((weights * decided).sum())
        effective = total_w ** 2 / float((weights ** 2 * decided).sum())  # Kish, counting each answer
        low, high = wilson(agree_w / total_w * effective, effective)
        agree = int((cells[:, 0] + cells[:, 3]).sum())
        accuracy = Corrected(agree_w / total_w * decided.sum(), float(decided.sum()), 100 * low, 100 * high,
                             basis=f"{agree} of {int(decided.sum())} labelled answers agree")
    kappa = None
    totals = (weights[:, None] * cells).sum(axis=0)
    point = float(kappa_from_cells(totals))
    if not np.isnan(point) and accuracy is not None:
        kappa = (point, *_kappa_interval(found, weights, cells, boot, accuracy, totals))
    return JudgeCalibration(judge, answers, undecided, dict(confusion), accuracy, kappa)


def _kappa_interval(found: list[tuple[str, float, list[tuple[str, bool | None, bool]]]], weights: np.ndarray,
                    cells: np.ndarray, boot: Bootstrap, accuracy: Corrected, totals: np.ndarray) -> tuple[float, float]:
    """Percentile interval of the weighted kappa, resampling the labelled StoryTurns within each stratum.

    Where the resamples show no spread (every labelled StoryTurn of each stratum alike: a judge that never
    disagrees with the people, one that never agrees, or strata of identical StoryTurns) a percentile interval
    would be a point, a certainty no finite sample has; the agreement's Wilson interval, carried to kappa with
    the chance agreement held at its observed value, is the interval instead (kappa is linear in the agreement).
    """
    rng = np.random.default_rng(boot.seed)
    strata = np.array([h for h, _, _ in found])
    resampled = np.zeros((boot.resamples, 4))
    for h in np.unique(strata):
        members = np.flatnonzero(strata == h)
        draws = members[rng.integers(0, len(members), size=(boot.resamples, len(members)))]
        resampled += np.einsum("rn,rnc->rc", weights[draws], cells[draws])
    kappas = kappa_from_cells(resampled)
    kappas = kappas[~np.isnan(kappas)]
    if kappas.size and np.ptp(kappas) > 1e-12:
        return float(np.quantile(kappas, 0.025)), float(np.quantile(kappas, 0.975))
    first, second = (totals[0] + totals[1]) / totals.sum(), (totals[0] + totals[2]) / totals.sum()
    chance = first * second + (1 - first) * (1 - second)
    low, high = ((bound or 0.0) / 100 for bound in (accuracy.low, accuracy.high))
    return max(-1.0, (low - chance) / (1 - chance)), min(1.0, (high - chance) / (1 - chance))


# sections ---------------------------------------------------------------------------------------------------------
def _corrected(estimate: PPIEstimates | None, units: int, basis: str) -> Cell:
    if estimate is None:
        return "-"
    theta = float(estimate.theta[0])
    return Corrected(theta * units, float(units), 100 * float(estimate.low[0]), 100 * float(estimate.high[0]),
                     basis=basis)


def calibration_section(calibrations: list[Calibration], boot: Bootstrap) -> Section:
    """Story and question accuracy as judged, beside the same corrected by the labels (PPI), per run."""
    rows: list[list[Cell]] = []
    problems = []
    for c in calibrations:
        stories = population(c.data)
        basis = (f"active PPI (inverse-probability weights), {c.labelled - c.waiting} StoryTurns labelled in order"
                 if c.sample.design is Design.active
                 else f"{c.estimator.value.upper()}, {c.labelled} StoryTurns labelled")
        answers = sum(sum(t.answered and t.control is None for t in s.turns) for s in stories)  # test questions
        rows.append([c.data.run.name, c.data.run.model, c.data.run.judge, str(c.stories),
                     f"{c.labelled} of {len(c.sample.items)}", boot.stories(stories),
                     _corrected(c.story, c.stories, basis), boot.questions([s.turns for s in stories]),
                     _corrected(c.question, answers, basis)])
        if c.problem:
            problems.append(f"{c.data.run.name}: {c.problem}.")
    note = ("Judged: the report's figures on the finished StoryTurns (a-b while answers are undecided). Corrected: "
            "prediction-powered inference from the people's labels on a stratified random sample of StoryTurns "
            "(commet calibrate); its interval holds both which StoryTurns the run has and which were labelled, so "
            "it widens with the judge's error and narrows with more labels (docs/calibration.md). StoryTurns "
            "stopped at an undecided answer are outside it. Question accuracy: test questions only (the "
            "comprehension control turns the dataset marks are counted apart, in the summary"
            + (")." if all(c.data.controls_known for c in calibrations) else
               "; without the run's --dataset they are not known and count as questions)."))
    return Section(SectionKey.CALIBRATION, "Judge-corrected accuracy (%, 95% CI; prediction-powered inference)",
                   ["Run", "Model", "Judge", "Stories", "Labelled", "Story accuracy (judged)",
                    "Story accuracy (corrected)", "Question accuracy (judged)", "Question accuracy (corrected)"], rows,
                   note + (" " + " ".join(problems) if problems else ""))


def _verdict_name(verdict: bool | None) -> str:
    return {True: "right", False: "wrong", None: "undecided"}[verdict]


CONFUSION = [(verdict, human) for verdict in (True, False, None) for human in (True, False)]


def judges_section(calibrations: list[Calibration]) -> Section:
    """Per run and judge: answers, undecided rate, the confusion with the people, accuracy and kappa."""
    rows: list[list[Cell]] = []
    unknown = False  # a kappa that cannot be computed: said, with why, not printed as 0 or nan
    for c in calibrations:
        for j in c.judges:
            rate = f"{fixed(100 * j.undecided / j.answers, 1)}%" if j.answers else "-"
            kappa = NOT_KNOWN if j.kappa is None else (f"{fixed(j.kappa[0], 3)} [{fixed(j.kappa[1], 3)}, "
                                                       f"{fixed(j.kappa[2], 3)}]")
            unknown = unknown or j.kappa is None
            rows.append([c.data.run.name, j.judge, str(j.answers), f"{j.undecided} ({rate})", str(j.labelled),
                         *(str(j.confusion.get(pair, 0)) for pair in CONFUSION),
                         j.accuracy if j.accuracy is not None else "-", kappa])
    header = ["Run", "Judge", "Answers", "Undecided", "Labelled",
              *(f"{_verdict_name(v).capitalize()} / people {_verdict_name(h)}" for v, h in CONFUSION),
              "Accuracy", "Kappa"]
    return Section(SectionKey.JUDGE_CALIBRATION, "Judges against people on the calibration sample", header, rows,
                   "Answers, Undecided: over the whole run, by the judge each verdict came from. Labelled and the "
                   "confusion (the judge's verdict / the people's): answers of the labelled sample. Accuracy: on the "
                   "answers the judge decided, weighted by the strata's sampling rates (Wilson 95% interval at the "
                   "weights' effective size); Kappa: Cohen's, with a stratified bootstrap interval over the labelled "
                   "StoryTurns (where the resamples cannot vary, as for a judge that always or never agrees, the "
                   "agreement's interval carried to kappa). Only labels on the random sample count (not those given "
                   "to disputed answers)."
                   + (f" Kappa {NOT_KNOWN}: the judge decided no labelled answer, or its verdicts or the people's on "
                      "them are all one way (chance agreement 1, where kappa is undefined)." if unknown else ""))


def strata_section(calibrations: list[Calibration]) -> Section:
    """The design: per stratum, StoryTurns in the run, drawn, labelled."""
    rows: list[list[Cell]] = [[c.data.run.name, h, str(n), str(d), str(k)]
                              for c in calibrations for h, (n, d, k) in c.by_stratum.items()]
    return Section(SectionKey.CALIBRATION_SAMPLE, "Calibration sample per stratum",
                   ["Run", "Stratum", "StoryTurns", "Drawn", "Labelled"], rows,
                   "Strata: who decided a StoryTurn's answers and what the judge concluded; labelled: every answer has "
                   "a people's verdict (the majority of its labellers).")


__all__ = ["Calibration", "CalibrationError", "Estimator", "JudgeCalibration", "allocate", "calibrate",
           "calibration_section", "draw_sample", "judges_section", "population", "story_stratum",
           "strata_section"]
