"""Metrics from the store: story accuracy (all-or-nothing), question accuracy, undecided and failed counts.

A story is correct only when every question in it is judged correct. An undecided turn is
never counted as correct, nor a story stopped at one (``--undecided-feedback stop``); a story
whose model call failed is not scored as wrong either: it is left out of the accuracy
denominator and counted as failed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from commet.reports.sections import SUBSET_KEYS
from commet.store.records import StoryStatus
from commet.store.sqlite import RunRecord, Store
from commet.taxonomy import CATEGORIES

#: the subsets' names ("text-complete", "image-dependent"), as StoryTurns are counted in them
SUBSETS: tuple[str, ...] = tuple(key.value for key in SUBSET_KEYS)


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


def run_metrics(store: Store, run: RunRecord) -> RunMetrics:
    metrics = RunMetrics(run=run)
    undecided_by_story: set[str] = set()
    for row in store.turn_rows(run.id):
        if row.error is not None and row.response is None:
            metrics.failed_turns += 1
            continue
        if row.correct is None:
            metrics.undecided_turns += 1
            undecided_by_story.add(row.story_id)
        metrics.questions.add(row.correct is True)
    for story in store.story_rows(run.id):
        if story.status == StoryStatus.stopped:  # ended at an undecided answer: never counted correct
            metrics.stopped_stories += 1
        elif story.status != StoryStatus.done:
            metrics.failed_stories += 1
            continue
        correct = story.correct is True
        metrics.stories.add(correct)
        metrics.per_category.setdefault(story.category, Tally()).add(correct)
        subset = SUBSETS[1] if story.image_dependent else SUBSETS[0]
        metrics.per_subset.setdefault(subset, Tally()).add(correct)
    metrics.stories_with_undecided = len(undecided_by_story)
    return metrics


def select_runs(store: Store, names: list[str] | None) -> list[RunRecord]:
    """Runs by name, short id or unique prefix (all when ``names`` is empty); a name no run or several runs
    answer to raises :class:`~commet.store.RunLookupError` (a KeyError) naming candidates."""
    if not names:
        return store.runs()
    return [store.find_run(name) for name in names]
