"""A run's StoryTurns as the reports read them, loaded once from the store, and what every table shares.

:class:`RunData` holds a run and its :class:`StoryResult` s (each with its :class:`TurnResult` s);
:class:`Bootstrap` turns StoryTurns into estimates with intervals; :class:`Section` is one titled
table and :class:`Report` all of them; :func:`units` groups runs into table rows (pooled only on
request); :func:`answer_identity` says when two stored answers are the same one (a run answered
from the store shares its model calls with the run that made them).
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import PurePath
from typing import Any

from commet.conditions import FeedbackCondition
from commet.engine.outcome import RunCounts, StoryOutcome, StoryTally, count_run, story_outcome
from commet.reports.sections import SUBSETS
from commet.reports.stats import DEFAULT_RESAMPLES, DEFAULT_SEED, Estimate, Range, bootstrap_ratio
from commet.store.records import StoryStatus, TurnRecord
from commet.store.sqlite import RunRecord, Store
from commet.taxonomy import CATEGORIES

Cell = str | Estimate


@dataclass(frozen=True, slots=True)
class TurnResult:
    """One stored turn: what was sent, the reply, and how it was judged."""

    turn: int
    prompt: str
    images: list[dict[str, str]]
    feedback_kind: str
    response: str | None
    expected: list[str]
    outcome: str | None
    correct: bool | None
    judge: str | None
    rationale: str | None
    error: str | None
    #: the stored model call this answer came from (None: no model call, e.g. a person answered)
    model_key: str | None = None
    #: how its call failed for good (a model call without reply, or a judge without verdict), else None
    error_kind: str | None = None
    #: what this turn checks when it is a comprehension control (``turn.meta["control"]`` in the dataset the
    #: report was given: the story states its answer), else None; the store alone cannot tell
    control: str | None = None

    @property
    def answered(self) -> bool:
        return self.response is not None

    @property
    def wrong(self) -> bool:
        """Judged incorrect (undecided and failed turns are not wrong answers)."""
        return self.answered and self.correct is False

    @property
    def undecided(self) -> bool:
        """Answered and left undecided by a judge's verdict (a judge that failed leaves it not scored)."""
        return self.answered and self.correct is None and self.error_kind is None

    @property
    def failed(self) -> bool:
        """A call of this turn failed for good: the model's (no reply) or the judge's (no verdict)."""
        return self.error_kind is not None

    @property
    def feedback_on_undecided(self) -> bool:
        """The feedback this turn showed rested on an undecided previous answer (kinds ending in -undecided)."""
        return self.feedback_kind.endswith("-undecided")

    @property
    def verdict(self) -> str:
        """right, wrong, undecided, or no reply (the call failed): the words of the story outcomes."""
        if not self.answered:
            return "no reply"
        return "undecided" if self.correct is None else "right" if self.correct else "wrong"


@dataclass(frozen=True)
class StoryResult:
    """One StoryTurn of a run with its turns."""

    story_id: str
    task: str
    category: str
    image_dependent: bool
    source: str
    status: StoryStatus
    correct: bool | None
    turns: list[TurnResult]

    @property
    def done(self) -> bool:
        return self.status == StoryStatus.done

    @property
    def stopped(self) -> bool:
        """Ended at an undecided answer the next turn's feedback depended on (``--undecided-feedback stop``)."""
        return self.status == StoryStatus.stopped

    @cached_property
    def outcome(self) -> StoryOutcome:
        """Right, wrong, undecided, stopped or not scored: what every table, badge and transcript counts."""
        return story_outcome(self.status, (t.correct for t in self.turns if t.answered), self.correct,
                             failed_calls=sum(t.failed for t in self.turns))

    @property
    def counted(self) -> bool:
        """Counted in story accuracy: finished, or stopped at an undecided answer (wrong as counted, right if
        the undecided answers were right and nothing answered was wrong)."""
        return self.outcome.scored

    @property
    def subset(self) -> str:
        return SUBSETS[1] if self.image_dependent else SUBSETS[0]

    @property
    def undecided(self) -> int:
        return sum(t.undecided for t in self.turns)

    @property
    def correct_if_undecided_right(self) -> bool:
        """Scored with no answer judged wrong: correct if every undecided answer were right."""
        return self.outcome.right_if_undecided_right

    @property
    def hinges(self) -> bool:
        """Its verdict depends on undecided answers (wrong as counted, right if they were right)."""
        return self.outcome.in_range


@dataclass
class RunData:
    """A run and its StoryTurns, loaded once from the store."""

    run: RunRecord
    stories: list[StoryResult]
    #: whether its comprehension control turns are known (the report was given the run's dataset)
    controls_known: bool = False

    @cached_property
    def counts(self) -> RunCounts:
        """Every count the outputs print about this run (stories, stopped, undecided, not scored, failed calls)."""
        return count_run((StoryTally(s.status, s.outcome, s.undecided, sum(t.failed for t in s.turns))
                          for s in self.stories), self.run.story_count)

    @property
    def images(self) -> str:
        return self.run.settings.images_label

    @property
    def feedback(self) -> str:
        return str(self.run.settings.feedback or "")

    @cached_property
    def scored(self) -> list[StoryResult]:
        """The denominator of story accuracy: StoryTurns whose conversation finished or stopped at an undecided
        answer (a failed call is not scored)."""
        return [s for s in self.stories if s.counted]

    def pictures_shown(self, story: StoryResult) -> bool:
        """Whether this StoryTurn was run with its pictures: from the run's image policy (on, off, needed),
        else (human runs mixing policies) from the turns as stored."""
        policy = self.run.settings.images
        if policy is not None:
            return policy.shows_pictures(story.image_dependent)
        return any(turn.images for turn in story.turns)

    def pictures_label(self, stories: list[StoryResult]) -> str:
        """The paper's Image column for these StoryTurns: Yes, No, or mixed."""
        shown = {self.pictures_shown(s) for s in stories}
        return "mixed" if len(shown) > 1 else "Yes" if shown == {True} else "No"


#: the comprehension control turns of a dataset: story id -> turn index -> what the turn checks
Controls = Mapping[str, Mapping[int, str]]


def load_run(store: Store, run: RunRecord, controls: Controls | None = None) -> RunData:
    """The run's StoryTurns in dataset order, each with its turns (a report of 20,000 StoryTurns reads ~70,000
    turns here: fields are passed by position, and JSON shared by many turns is decoded once); ``controls``
    (from the run's dataset) marks its comprehension control turns."""
    decoded: dict[str, Any] = {}  # most turns share their pictures' and expected answers' JSON

    def parsed(text: str) -> Any:  # noqa: ANN401 - JSON
        value = decoded.get(text)
        if value is None:
            value = decoded[text] = json.loads(text)
        return value

    def results(rows: list[TurnRecord], marks: Mapping[int, str]) -> list[TurnResult]:
        return [TurnResult(row.turn, row.prompt, parsed(row.images_json), row.feedback_kind, row.response,
                           parsed(row.expected_json), row.outcome, row.correct, row.judge, row.rationale, row.error,
                           row.model_key, row.error_kind, marks.get(row.turn)) for row in rows]

    story_rows = store.story_rows(run.id)
    turns = store.turns_by_story(run.id)
    known = controls or {}
    stories = [StoryResult(row.story_id, row.task, row.category, row.image_dependent, row.source, row.status,
                           row.correct, results(turns.get(row.story_id, []), known.get(row.story_id, {})))
               for row in story_rows]
    return RunData(run, stories, controls_known=controls is not None)


@contextmanager
def cycle_collection_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a report is built, then restored as it was.

    A report of 20,000 StoryTurns holds about a million objects, none in a reference cycle, and every
    full collection made while they pile up scans them all: a fifth of the time that report took to build
    and to write as HTML. Memory is unaffected: what a report drops is freed by reference counting.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def run_label(data: RunData) -> str:
    """A short readable label for plots: model, image setting and feedback condition."""
    return f"{data.run.model} (images {data.images}, {data.feedback})"


@dataclass(frozen=True)
class Bootstrap:
    """How intervals are computed: resamples and seed (the same seed for every figure)."""

    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED

    def ratio(self, numerators: Sequence[float], denominators: Sequence[float] | None = None) -> Estimate:
        return bootstrap_ratio(numerators, denominators, resamples=self.resamples, seed=self.seed)

    def stories(self, stories: Iterable[StoryResult]) -> Estimate:
        """Story accuracy of the finished StoryTurns among ``stories``; a :class:`Range` when some hinge on
        undecided answers."""
        done = [s for s in stories if s.counted]
        low = self.ratio([int(s.outcome is StoryOutcome.right) for s in done])
        if not any(s.hinges for s in done):
            return low
        high = self.ratio([int(s.correct_if_undecided_right) for s in done])
        return Range(low.k, low.n, low.low, low.high, upper=high)

    def questions(self, groups: list[list[TurnResult]], *, controls: bool = False) -> Estimate:
        """Question accuracy of answered test turns (``controls``: of the comprehension control turns instead:
        never pooled), resampled by group (a story's turns stay together); a :class:`Range` when some answers
        are undecided."""
        answered = [[t for t in turns if t.answered and (t.control is not None) is controls] for turns in groups]
        sizes = [len(turns) for turns in answered]
        low = self.ratio([sum(t.correct is True for t in turns) for turns in answered], sizes)
        if not any(t.undecided for turns in answered for t in turns):
            return low
        high = self.ratio([sum(t.correct is not False for t in turns) for turns in answered], sizes)
        return Range(low.k, low.n, low.low, low.high, upper=high)


@dataclass
class Section:
    """One table of a report; ``fraction`` cells read as k/n (feedback tables)."""

    key: str
    title: str
    header: list[str]
    rows: list[list[Cell]]
    note: str = ""
    fraction: bool = False


@dataclass(frozen=True)
class Notice:
    """A paragraph shown once before the tables, and the command that acts on it: every rendering keeps the
    command whole (a terminal prints it on a line of its own, so it is safe to paste)."""

    text: str
    command: str | None = None
    #: the run's figures are mostly not judged: shown emphasised (the rest is plain text)
    warning: bool = False
    #: a path of this machine in the command (the results store): a file meant to be shared names it by its
    #: file name only (:meth:`shareable`)
    local_path: str | None = None

    def shareable(self) -> Notice:
        """The notice with its local path written as the file's name (an HTML report holds no local path)."""
        if self.command is None or self.local_path is None:
            return self
        return replace(self, command=self.command.replace(self.local_path, PurePath(self.local_path).name))

    def __str__(self) -> str:
        """The notice on one line (CSV's notices.txt, LaTeX, stderr)."""
        return self.text if self.command is None else f"{self.text} {self.command}"


@dataclass
class Report:
    runs: list[RunData]
    sections: list[Section]
    bootstrap: Bootstrap = field(default_factory=Bootstrap)
    #: shown once before the tables: runs mostly not judged, and how to decide undecided answers
    notices: list[Notice] = field(default_factory=list)

    def section(self, key: str) -> Section:
        return next(s for s in self.sections if s.key == key)


def ordered_categories(stories: Iterable[StoryResult], first: Iterable[str] = ()) -> list[str]:
    """``first`` (always, in order), then the other categories present in the taxonomy's order."""
    first = list(first)
    present = {s.category for s in stories} - set(first)
    return first + [c for c in CATEGORIES if c in present] + sorted(present - set(CATEGORIES))


def run_columns(data: RunData) -> list[Cell]:
    return [data.run.name, data.run.model, data.images, data.feedback]


RUN_HEADER = ["Run", "Model", "Images", "Feedback"]


@dataclass
class Unit:
    """The runs one table row stands for: one run, or runs pooled on request (named in ``label``)."""

    label: str
    runs: list[RunData]

    @property
    def model(self) -> str:
        return self.runs[0].run.model

    @property
    def feedback(self) -> str:
        return self.runs[0].feedback

    @property
    def condition(self) -> FeedbackCondition | None:
        """The feedback condition of the unit's runs (pooled runs share it)."""
        return self.runs[0].run.settings.feedback

    @property
    def images(self) -> str:
        return "+".join(dict.fromkeys(d.images for d in self.runs))

    def pairs(self) -> list[tuple[RunData, StoryResult]]:
        return [(d, s) for d in self.runs for s in d.stories]


def storyturns_differ(a: RunData, b: RunData) -> str | None:
    """How the StoryTurns two runs were made on differ (None: the same ones, as far as the store can tell).

    Runs that showed their pictures alike recorded one dataset hash exactly when their StoryTurns were the same;
    a run that showed none recorded the hash without them, so runs whose picture settings differ (``--images off``
    against ``on``: the pictures' effect) are checked by what the store holds of each StoryTurn both have: its
    turns, their expected answers and the first turn's text (later turns carry feedback that follows the run's
    own answers)."""
    if a.run.dataset_hash == b.run.dataset_hash:
        return None
    if a.run.settings.images == b.run.settings.images:
        return "their dataset hashes differ"
    theirs = {s.story_id: s for s in b.stories}
    for story in a.stories:
        other = theirs.get(story.story_id)
        if other is None:
            continue
        if len(story.turns) != len(other.turns):
            return f"story {story.story_id} has {len(story.turns)} turns in one and {len(other.turns)} in the other"
        for mine, yours in zip(story.turns, other.turns, strict=True):
            if mine.expected != yours.expected:
                return f"story {story.story_id} turn {mine.turn + 1}: the expected answers differ"
            if mine.turn == 0 and mine.prompt != yours.prompt:
                return f"story {story.story_id} turn 1: the text differs"
    return None


def units(runs: list[RunData], pool: Callable[[RunData], tuple[str, ...]] | None) -> list[Unit]:
    """One unit per run, or (``pool`` given) one per group of runs sharing ``pool``'s key and their judge.

    Runs judged differently are never pooled (one figure, one judge), nor are runs whose answers are the
    same: a re-judged copy and its run (or two copies of one run) stay rows of their own, else the same
    answers would count twice; nor runs made on different StoryTurns (another version of a dataset under
    one name: :func:`storyturns_differ`).
    """
    if pool is None:
        return [Unit(d.run.name, [d]) for d in runs]
    by_name = {d.run.name: d for d in runs}

    def answers_of(data: RunData) -> str:
        """The run whose answers these are, followed back through re-judged copies among ``runs``."""
        name, seen = data.run.name, set()
        while name in by_name and (source := by_name[name].run.settings.rejudged_from) and name not in seen:
            seen.add(name)
            name = source
        return name

    groups: dict[tuple[str, ...], list[RunData]] = {}
    for data in runs:
        key = (*pool(data), data.run.judge)
        while any(answers_of(other) == answers_of(data) or storyturns_differ(other, data)
                  for other in groups.get(key, [])):
            key = (*key, data.run.name)  # the same answers again, or other StoryTurns: a row of its own
        groups.setdefault(key, []).append(data)
    return [Unit(members[0].run.name if len(members) == 1 else "pooled: " + ", ".join(d.run.name for d in members),
                 members) for members in groups.values()]



def answer_identity(data: RunData, story: StoryResult, turn: TurnResult) -> str:
    """What makes two stored answers the same: the model call they came from (a run answered from the store
    shares it with the run that made it), else (no model call: people) the run, story and turn."""
    return turn.model_key or f"{data.run.name}\x00{story.story_id}\x00{turn.turn}"
