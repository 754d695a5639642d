"""The dataset audit: can a dataset's answers be guessed without reasoning about minds?

Why: a benchmark item measures Theory of Mind only if it cannot be answered without
reasoning about minds. :func:`audit_dataset` trains predictors that do not reason about minds
on one part of a dataset (or on one of two datasets) and scores them on the other: the
story-blind :class:`~commet.models.shortcut.ShortcutLearner` (answer position, yes/no, answer
text) and the shallow readers of :mod:`commet.generation.shallow_readers` (order of mention,
one cue word, the feedback, the picture's sizes and places, a lookup on where each option is drawn, one on
the picture's screens joined with each option's size and place, a linear model over the words around each
option). It sets each one's accuracy beside chance per task: a dataset is well counterbalanced
when they agree. ``commet audit`` prints it.

Only closed turns are scored: a turn whose options are listed (``Turn.options`` or named
in the question, "... the apple or the cookie?") or whose expected answers are yes/no.
Turns where every option is right (a free pick that opens a branch) measure nothing and
are left out; after a branch point, the branch the predictor's own pick opened is followed.
Turns whose metadata says ``keyed`` (the booklet's "the same as / the other one than your
pick" items, designed to follow the respondent's earlier pick) or ``control`` (a check that the
story was followed, whose answer the story states and never varies: moral_false_belief's "how
does she feel?" after "she cries") are scored on lines of their own and never gated.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from commet.format.model import StoryTurn
from commet.generation.shallow_readers import (
    FAMILIES,
    INFORMATIONAL,
    LOOKUPS,
    Reading,
    fit_position_reader,
    fit_rule,
    readings,
)
from commet.generation.word_reader import WORDS, fit_word_reader
from commet.models.shortcut import ShortcutLearner, closed_turns, split_halves

#: The story-blind learner's family name in audit lines.
BLIND = "blind"
#: Every family an audit scores, gated ones first.
ALL_FAMILIES = (BLIND, *FAMILIES, *INFORMATIONAL)
OVERALL = "overall"


@dataclass(frozen=True)
class Line:
    """One (task, family) cell of an audit: closed turns scored, right answers, and chance."""

    task: str
    family: str
    turns: int
    correct: int
    chance: float  # expected right answers of a uniform random pick, summed over the scored turns
    designed: bool = False  # keyed to the respondent's own pick, or control turns: reported, never gated

    @property
    def accuracy(self) -> float:
        return self.correct / self.turns if self.turns else 0.0

    @property
    def chance_rate(self) -> float:
        return self.chance / self.turns if self.turns else 0.0

    @property
    def excess(self) -> float:
        """Accuracy above chance, in percentage points."""
        return 100 * (self.accuracy - self.chance_rate)

    def plus(self, other: Line) -> Line:
        return Line(self.task, self.family, self.turns + other.turns, self.correct + other.correct,
                    self.chance + other.chance, self.designed)


@dataclass(frozen=True)
class Audit:
    """The audit of a dataset, two-fold (``train`` and ``test``: the sizes of the two parts)."""

    dataset: str
    train: int
    test: int
    lines: list[Line]
    rules: dict[tuple[str, int, str], str] = field(default_factory=dict)  # (task, turn, family) -> rule, fold 1

    def tasks(self, designed: bool = False) -> list[str]:
        return sorted({line.task for line in self.lines if line.designed == designed})

    def line(self, task: str, family: str, designed: bool = False) -> Line:
        if task == OVERALL:
            return self.overall(family, designed)
        return next((x for x in self.lines if x.task == task and x.family == family and x.designed == designed),
                    Line(task, family, 0, 0, 0.0, designed))

    def overall(self, family: str, designed: bool = False) -> Line:
        total = Line(OVERALL, family, 0, 0, 0.0, designed)
        for line in self.lines:
            if line.family == family and line.designed == designed:
                total = total.plus(line)
        return total

    def over(self, task_points: float, overall_points: float, families: Sequence[str] = (BLIND, *FAMILIES)
             ) -> list[Line]:
        """The gated lines further above chance than allowed: per task, or over all tasks."""
        found = [x for x in self.lines if not x.designed and x.family in families and x.turns
                 and x.excess > task_points]
        found += [total for total in (self.overall(f) for f in families) if total.turns and total.excess > overall_points]
        return found


def _accepted(reading: Reading, pick: int, branch: int | None) -> tuple[frozenset[int] | None, int | None]:
    """The right options given the pick and the branch opened so far (None: a free pick, not scored)."""
    right = reading.right
    if len(right) > 1 and branch is None:  # the branch point: every listed answer is right
        accepted = frozenset().union(*right)
        branch = next((b for b, r in enumerate(right) if pick in r), 0)
        return (None if len(accepted) >= reading.n else accepted), branch
    if len(right) > 1:
        assert branch is not None
        return right[min(branch, len(right) - 1)], branch
    return right[0], branch


Scenes = Mapping[str, Mapping[str, object]]


def _readings(storyturns: Iterable[StoryTurn], scenes: Scenes | None) -> list[list[Reading]]:
    return [readings(st, scenes) for st in storyturns]


class Predictor(Protocol):
    """A shallow reader fitted to one (task, turn): a :class:`~commet.generation.shallow_readers.Rule` or a
    :class:`~commet.generation.word_reader.WordReader`."""

    def pick(self, item: Reading) -> int: ...

    def describe(self) -> str: ...


def _fit(train: list[list[Reading]], families: Sequence[str]) -> dict[tuple[str, int, str], Predictor]:
    groups: dict[tuple[str, int], list[Reading]] = defaultdict(list)
    for story in train:
        for reading in story:
            groups[(reading.task, reading.turn)].append(reading)
    def fit(items: list[Reading], family: str) -> Predictor:
        if family == WORDS:
            return fit_word_reader(items)
        return fit_position_reader(items, family) if family in LOOKUPS else fit_rule(items, family)
    return {(task, turn, family): fit(items, family) for (task, turn), items in groups.items() for family in families}


def audit_dataset(storyturns: Sequence[StoryTurn], name: str = "", other: Sequence[StoryTurn] | None = None,
                  scenes: Scenes | None = None, families: Sequence[str] = ALL_FAMILIES) -> Audit:
    """Two-fold: train every predictor on one part (the first half of each task's StoryTurns, or
    ``storyturns`` when ``other`` is given), score it on the other, then the other way round; the
    scores add up, so every StoryTurn is scored once by predictors that never saw it. ``scenes``
    (image id -> scene) lets the picture reader see the pictures' layout."""
    first, second = (list(storyturns), list(other)) if other is not None else split_halves(storyturns)
    shallow = [f for f in families if f != BLIND]
    totals: dict[tuple[str, str, bool], Line] = {}
    learned: dict[tuple[str, int, str], str] = {}
    parts = {"first": _readings(first, scenes), "second": _readings(second, scenes)}
    for fold, (train, test, train_readings, test_readings) in enumerate(
            ((first, second, parts["first"], parts["second"]), (second, first, parts["second"], parts["first"]))):
        learner = ShortcutLearner().fit(train) if BLIND in families else None
        rules = _fit(train_readings, shallow)
        if fold == 0:
            learned = {key: rule.describe() for key, rule in rules.items()}
        for storyturn, story in zip(test, test_readings, strict=True):
            shapes = {k: c for k, c in enumerate(closed_turns(storyturn)) if c is not None}
            for family in families:
                branch: int | None = None
                for reading in story:
                    if family == BLIND:
                        assert learner is not None
                        pick = learner.predict(shapes[reading.turn])
                    else:
                        rule = rules.get((reading.task, reading.turn, family))
                        pick = rule.pick(reading) if rule is not None else 0
                    accepted, branch = _accepted(reading, pick, branch)
                    if accepted is None:
                        continue
                    key = (reading.task, family, reading.keyed)
                    line = Line(reading.task, family, 1, int(pick in accepted), len(accepted) / reading.n, reading.keyed)
                    totals[key] = totals[key].plus(line) if key in totals else line
    return Audit(name, len(first), len(second), [totals[k] for k in sorted(totals)], learned)
