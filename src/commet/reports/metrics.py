"""Metrics from the store: story accuracy (all-or-nothing), question accuracy, undecided and failed counts.

A story is correct only when every question in it is judged correct. An undecided turn is
never counted as correct, nor a story stopped at one (``--undecided-feedback stop``); a story
with a call that failed for good is not scored as wrong either: it is left out of the accuracy
denominator and counted as failed. Every count is the run's :class:`~commet.engine.outcome.RunCounts`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from commet.engine.outcome import StoryOutcome
from commet.reports.sections import SUBSETS as SUBSETS  # (read from here by the tables)
from commet.store.sqlite import RunRecord, Store
from commet.taxonomy import CATEGORIES

if TYPE_CHECKING:
    from commet.reports.rundata import Controls

#: the column of the comprehension control questions, counted apart from the test questions (every table that has it)
CONTROL_QUESTIONS_COLUMN = "Control questions"


@dataclass
class Tally:
    correct: int = 0
    total: int = 0

    def add(self, correct: bool) -> None:
        self.correct += int(correct)
        self.total += 1

    @property
    def accuracy(self) -> float | None:
        return 100.0 * self.correct / self.total if self.total else None


@dataclass
class RunMetrics:
    run: RunRecord
    stories: Tally = field(default_factory=Tally)
    questions: Tally = field(default_factory=Tally)
    control_questions: Tally = field(default_factory=Tally)
    per_category: dict[str, Tally] = field(default_factory=dict)
    per_subset: dict[str, Tally] = field(default_factory=dict)
    undecided_turns: int = 0
    failed_turns: int = 0
    failed_stories: int = 0
    stopped_stories: int = 0
    stories_with_undecided: int = 0

    @property
    def categories(self) -> list[str]:
        known = [c for c in CATEGORIES if c in self.per_category]
        return known + sorted(set(self.per_category) - set(known))


def run_metrics(store: Store, run: RunRecord, controls: Controls | None = None) -> RunMetrics:
    """A run's accuracy tallies, over the StoryTurns story accuracy counts, with the counts every other output
    prints (:attr:`~commet.reports.rundata.RunData.counts`): a story is right only when its outcome is right
    (every turn, comprehension controls included); ``questions`` tallies the test questions (``controls``: the
    dataset's control turns, :func:`commet.reports.grouping.control_turns`; ``control_questions`` the rest)."""
    from commet.reports.rundata import load_run

    data = load_run(store, run, controls)
    counts = data.counts
    metrics = RunMetrics(run=run, undecided_turns=counts.undecided_answers, failed_turns=counts.failed_calls,
                         failed_stories=counts.failed, stopped_stories=counts.stopped,
                         stories_with_undecided=sum(1 for s in data.scored if s.undecided))
    for story in data.scored:
        correct = story.outcome is StoryOutcome.right
        metrics.stories.add(correct)
        metrics.per_category.setdefault(story.category, Tally()).add(correct)
        metrics.per_subset.setdefault(story.subset, Tally()).add(correct)
        for turn in story.turns:
            if turn.answered:
                (metrics.questions if turn.control is None else metrics.control_questions).add(turn.correct is True)
    return metrics


def select_runs(store: Store, names: list[str] | None) -> list[RunRecord]:
    """Runs by name, short id or unique prefix (all when ``names`` is empty); a name no run or several runs
    answer to raises :class:`~commet.store.RunLookupError` (a KeyError) naming candidates."""
    if not names:
        return store.runs()
    return [store.find_run(name) for name in names]
