"""The paper's analyses for any set of stored runs, each as a :class:`Section` (a titled table).

* story accuracy per category on the text-complete subset (paper, Table 1) and on the
  image-dependent subset (Table 2), in the paper's column order, one row per run;
* a summary per run (not a paper table): story and question accuracy, undecided answers;
* feedback effectiveness (Table 3) and original versus correctness-only feedback (Table 14);
* one table per StoryTurn source (``stories.source``: the bundled sample versus generated
  ones, like Tables 11 and 12);
* question accuracy by turn index, and the most common wrong answers per question.

Every table reports each run on its own row. Only when asked (``pool=True``) do Tables 3 and
14 and the wrong answers pool runs of the same model, feedback condition, dataset and judge (never
two runs with the same answers), and a pooled row names the runs it pools.

Story accuracy counts only StoryTurns whose conversation finished (a failed model call is not
a wrong answer). An undecided answer is never counted right: where stories hinge on one, the
figure is a :class:`~commet.reports.stats.Range` (undecided counted wrong .. counted right)
and :attr:`Report.notices` says which judge would decide them.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from commet.conditions import FeedbackCondition
from commet.reports.metrics import SUBSETS
from commet.reports.outcome import StoryOutcome, story_outcome
from commet.reports.stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Estimate,
    PairedComparison,
    Range,
    bootstrap_ratio,
    paired_comparison,
)
from commet.store.records import StoryStatus
from commet.store.sqlite import RunRecord, Store
from commet.taxonomy import CATEGORIES
from commet.text import normalize, printable

Cell = str | Estimate

#: The paper's column order: Table 1 (text-complete subset) and Table 2 (image-dependent subset).
TABLE1_CATEGORIES = ("Belief", "Emotion", "Intention", "Desire", "Percept", "Belief_Emotion", "Belief_Desire",
                     "NLCE", "MBK")
TABLE2_CATEGORIES = ("Percept", "Intention", "MBK", "NLC")
PAPER_CATEGORIES = {SUBSETS[0]: TABLE1_CATEGORIES, SUBSETS[1]: TABLE2_CATEGORIES}

#: A judge that decides what the rules leave undecided, suggested in the undecided notice.
SUGGESTED_JUDGE = "openai:gpt-4o"


@dataclass(frozen=True)
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

    @property
    def answered(self) -> bool:
        return self.response is not None

    @property
    def wrong(self) -> bool:
        """Judged incorrect (undecided and failed turns are not wrong answers)."""
        return self.answered and self.correct is False

    @property
    def undecided(self) -> bool:
        return self.answered and self.correct is None

    @property
    def feedback_on_undecided(self) -> bool:
        """The feedback this turn showed rested on an undecided previous answer (kinds ending in -undecided)."""
        return self.feedback_kind.endswith("-undecided")

    @property
    def verdict(self) -> str:
        """right, wrong, undecided, or no reply (the call failed): the words of the story outcomes."""
        if not self.answered:
            return "no reply"
        return {True: "right", False: "wrong"}.get(self.correct, "undecided")  # type: ignore[arg-type]


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
        return story_outcome(self.status, (t.correct for t in self.turns if t.answered), self.correct)

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


def load_run(store: Store, run: RunRecord) -> RunData:
    turns: dict[str, list[TurnResult]] = defaultdict(list)
    decoded: dict[str, Any] = {}  # most turns share their pictures' and expected answers' JSON: decoded once

    def parsed(text: str) -> Any:  # noqa: ANN401 - JSON
        if text not in decoded:
            decoded[text] = json.loads(text)
        return decoded[text]

    for row in store.turn_rows(run.id):
        turns[row.story_id].append(TurnResult(
            turn=row.turn, prompt=row.prompt, images=parsed(row.images_json),
            feedback_kind=row.feedback_kind, response=row.response, expected=parsed(row.expected_json),
            outcome=row.outcome, correct=row.correct,
            judge=row.judge, rationale=row.rationale, error=row.error))
    stories = [StoryResult(
        story_id=row.story_id, task=row.task, category=row.category,
        image_dependent=row.image_dependent, source=row.source, status=row.status,
        correct=row.correct, turns=turns.get(row.story_id, []))
        for row in store.story_rows(run.id)]
    return RunData(run, stories)


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

    def questions(self, groups: list[list[TurnResult]]) -> Estimate:
        """Question accuracy of answered turns, resampled by group (a story's turns stay together); a
        :class:`Range` when some answers are undecided."""
        answered = [[t for t in turns if t.answered] for turns in groups]
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


@dataclass
class Report:
    runs: list[RunData]
    sections: list[Section]
    bootstrap: Bootstrap = field(default_factory=Bootstrap)
    #: lines to show before the tables: runs mostly not judged, and how to decide undecided answers
    notices: list[str] = field(default_factory=list)

    def section(self, key: str) -> Section:
        return next(s for s in self.sections if s.key == key)


def ordered_categories(stories: Iterable[StoryResult], first: Iterable[str] = ()) -> list[str]:
    """``first`` (always, in order), then the other categories present in the taxonomy's order."""
    first = list(first)
    present = {s.category for s in stories} - set(first)
    return first + [c for c in CATEGORIES if c in present] + sorted(present - set(CATEGORIES))


def _run_columns(data: RunData) -> list[Cell]:
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


def units(runs: list[RunData], pool: Callable[[RunData], tuple[str, ...]] | None) -> list[Unit]:
    """One unit per run, or (``pool`` given) one per group of runs sharing ``pool``'s key and their judge.

    Runs judged differently are never pooled (one figure, one judge), nor are runs whose answers are the
    same: a re-judged copy and its run (or two copies of one run) stay rows of their own, else the same
    answers would count twice.
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
        while any(answers_of(other) == answers_of(data) for other in groups.get(key, [])):
            key = (*key, data.run.name)  # the same answers again: a row of its own
        groups.setdefault(key, []).append(data)
    return [Unit(members[0].run.name if len(members) == 1 else "pooled: " + ", ".join(d.run.name for d in members),
                 members) for members in groups.values()]


def summary_section(runs: list[RunData], boot: Bootstrap) -> Section:
    """Per run, over all its StoryTurns: story and question accuracy with intervals, undecided and unscored."""
    rows: list[list[Cell]] = []
    for data in runs:
        scored = data.scored
        rows.append([*_run_columns(data), str(len(scored)), boot.stories(scored),
                     boot.questions([s.turns for s in scored]),
                     str(sum(s.undecided for s in scored)), str(sum(s.hinges for s in scored)),
                     str(sum(s.outcome is StoryOutcome.stopped for s in scored)), str(len(data.stories) - len(scored))])
    return Section("summary", "Summary per run, all StoryTurns (%, 95% CI; not a paper table)",
                   [*RUN_HEADER, "Stories", "Story accuracy", "Question accuracy", "Undecided answers",
                    "Stories hinging on undecided", "Stopped at undecided", "Not scored"], rows,
                   "Story accuracy a-b: undecided answers counted wrong (a) and counted right (b); undecided is "
                   "never counted right in a single figure. Stopped: StoryTurns ended at an undecided answer the "
                   "next feedback depended on, with no answer wrong before it (counted in the range; one with a "
                   "wrong answer before counts wrong). Not scored: StoryTurns whose conversation did "
                   "not finish (failed calls), left out of every accuracy. Intervals: percentile bootstrap over "
                   "StoryTurns (a story's questions are resampled together).")


def subset_section(runs: list[RunData], subset: str, boot: Bootstrap) -> Section:
    """Story accuracy overall and per category on one subset (Table 1: text-complete; Table 2:
    image-dependent), the paper's columns first and in its order, an empty one shown as '-'."""
    members = {d.run.name: [s for s in d.scored if s.subset == subset] for d in runs}
    paper = PAPER_CATEGORIES[subset]
    categories = ordered_categories((s for stories in members.values() for s in stories), paper)
    rows: list[list[Cell]] = []
    for data in runs:
        stories = members[data.run.name]
        if not stories:
            continue
        rows.append([data.run.name, data.run.model, data.pictures_label(stories), data.feedback, str(len(stories)),
                     boot.stories(stories), *(boot.stories(s for s in stories if s.category == c)
                                              for c in categories)])
    extra = categories[len(paper):]
    table = "Table 1" if subset == SUBSETS[0] else "Table 2"
    note = "Image: whether these StoryTurns were shown their pictures (Yes), not (No), or some of them (mixed)."
    if extra:
        note += f" {', '.join(extra)}: categories the paper's {table} does not have."
    return Section(subset, f"{table}: {subset} subset, story accuracy (%, 95% CI)",
                   ["Run", "Model", "Image", "Feedback", "Stories", "Overall", *categories], rows, note)


@dataclass(frozen=True)
class FeedbackCount:
    """Feedback effectiveness counts of some StoryTurns (paper, Table 3)."""

    effective: int = 0
    cases: int = 0
    on_undecided: int = 0  # turns whose feedback rested on an undecided answer: left out
    next_undecided: int = 0  # cases whose next answer is undecided: left out

    def __add__(self, other: FeedbackCount) -> FeedbackCount:
        return FeedbackCount(self.effective + other.effective, self.cases + other.cases,
                             self.on_undecided + other.on_undecided, self.next_undecided + other.next_undecided)


def feedback_cases(story: StoryResult) -> FeedbackCount:
    """Turns answered wrongly whose next turn carries feedback (the cases), and how many of those next turns
    were answered right. Left out and counted: turns whose feedback rested on an undecided answer, and
    cases whose next answer is undecided (neither effective nor not)."""
    count = FeedbackCount()
    for before, after in zip(story.turns, story.turns[1:], strict=False):
        if after.feedback_on_undecided:
            count += FeedbackCount(on_undecided=1)
        elif before.wrong and after.feedback_kind != "none" and after.answered:
            if after.undecided:
                count += FeedbackCount(next_undecided=1)
            else:
                count += FeedbackCount(int(after.correct is True), 1)
    return count


def _feedback_estimate(stories: list[StoryResult], boot: Bootstrap) -> tuple[Estimate, FeedbackCount]:
    counts = [feedback_cases(s) for s in stories]
    total = sum(counts, FeedbackCount())
    return boot.ratio([c.effective for c in counts], [c.cases for c in counts]), total


#: Table 3's columns: (header, visual information required, pictures shown); the last is not in the paper.
FEEDBACK_COLUMNS = (("VI not required, with image", False, True), ("VI not required, no image", False, False),
                    ("VI required, with image", True, True), ("VI required, no image", True, False))
FEEDBACK_NOTE = ("Among turns answered wrongly whose next turn carries feedback (any feedback text), how many "
                 "next turns are answered right; undecided answers are not counted as wrong. VI: visual "
                 "information required (image-dependent StoryTurn); with/no image: whether the StoryTurn was "
                 "shown its pictures (images on; needed shows them only where VI is required).")


def _left_out_note(total: FeedbackCount) -> str:
    parts = []
    if total.on_undecided:
        parts.append(f"{total.on_undecided} turns whose feedback rested on an undecided answer (feedback kind "
                     "ending in -undecided)")
    if total.next_undecided:
        parts.append(f"{total.next_undecided} cases whose next answer is undecided")
    return f" Left out: {'; '.join(parts)}." if parts else ""


def _pool_note(pooled: bool) -> str:
    return (" Rows pool runs of the same model, feedback condition, dataset and judge (--pool), never two runs "
            "with the same answers (a re-judged copy); each names its runs."
            if pooled else " One row per run (--pool pools runs of the same model, feedback, dataset and judge).")


def feedback_section(runs: list[RunData], boot: Bootstrap, *, pool: bool = False) -> Section:
    """Feedback effectiveness (Table 3) per run, or per pooled runs of one model, condition and dataset; the
    paper's three columns always, 'VI required, no image' (not in the paper) only when a run has it."""
    chosen = units([d for d in runs if d.run.settings.feedback is not FeedbackCondition.none],
                   (lambda d: (d.run.model, d.feedback, d.run.dataset_name)) if pool else None)
    present = [col for col in FEEDBACK_COLUMNS[:3]] + [
        col for col in FEEDBACK_COLUMNS[3:]
        if any(s.image_dependent and not d.pictures_shown(s) for u in chosen for d, s in u.pairs())]
    rows: list[list[Cell]] = []
    total = FeedbackCount()
    for unit in chosen:
        cells: list[Cell] = []
        for _, vi, shown in present:
            estimate, count = _feedback_estimate([s for d, s in unit.pairs()
                                                  if s.image_dependent == vi and d.pictures_shown(s) == shown], boot)
            cells.append(estimate)
            total += count
        rows.append([unit.label, unit.model, unit.feedback, *cells])
    header = ["Runs" if pool else "Run", "Model", "Feedback", *(name for name, _, _ in present)]
    return Section("feedback", "Table 3: feedback effectiveness", header, rows,
                   FEEDBACK_NOTE + _left_out_note(total) + _pool_note(pool), fraction=True)


def feedback_conditions_section(runs: list[RunData], boot: Bootstrap, *, pool: bool = False) -> Section:
    """Original versus correctness-only feedback (Table 14), per run, for models run under both."""
    conditions = (FeedbackCondition.original, FeedbackCondition.correctness)
    both = {m for m in {d.run.model for d in runs}
            if all(any(d.run.model == m and d.run.settings.feedback is c for d in runs) for c in conditions)}
    chosen = units([d for d in runs if d.run.model in both and d.run.settings.feedback in conditions],
                   (lambda d: (d.run.model, d.images, d.feedback, d.run.dataset_name)) if pool else None)
    rows: list[list[Cell]] = []
    total = FeedbackCount()
    for unit in sorted(chosen, key=lambda u: (u.model, u.images, conditions.index(u.condition), u.label)):
        cells: list[Cell] = []
        for subset in SUBSETS:
            estimate, count = _feedback_estimate([s for _, s in unit.pairs() if s.subset == subset], boot)
            cells.append(estimate)
            total += count
        rows.append([unit.label, unit.model, unit.images, unit.feedback, *cells])
    return Section("feedback-conditions", "Table 14: original versus correctness-only feedback",
                   ["Runs" if pool else "Run", "Model", "Images", "Feedback", "Text-complete subset",
                    "Image-dependent subset"], rows,
                   FEEDBACK_NOTE.split(";")[0] + "." + _left_out_note(total) + _pool_note(pool), fraction=True)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "none"


def source_sections(runs: list[RunData], boot: Bootstrap) -> list[Section]:
    """One table per StoryTurn source (the bundled booklet-like sample, generated items, ...), as the paper
    separates the original booklet tasks (Tables 11 and 12) from CoMMET."""
    sources = sorted({s.source for d in runs for s in d.scored})
    sections = []
    for source in sources:
        rows: list[list[Cell]] = []
        for data in runs:
            stories = [s for s in data.scored if s.source == source]
            if stories:
                rows.append([*_run_columns(data), str(len(stories)), boot.stories(stories),
                             *(boot.stories(s for s in stories if s.subset == subset) for subset in SUBSETS)])
        sections.append(Section(
            f"source-{_slug(source)}", f"Source {source}: story accuracy (%, 95% CI; paper Tables 11 and 12)",
            [*RUN_HEADER, "Stories", "Overall", "Text-complete (Table 12)", "Image-dependent (Table 11)"], rows,
            f"Only StoryTurns whose source is {source!r}; Images is the run's picture setting."))
    return sections


def turns_section(runs: list[RunData], boot: Bootstrap) -> Section:
    """Question accuracy by turn index (1 = first turn): where in a story models fail."""
    depth = max((len(s.turns) for d in runs for s in d.scored), default=0)
    rows: list[list[Cell]] = []
    for data in runs:
        cells: list[Cell] = []
        for k in range(depth):
            cells.append(boot.questions([[s.turns[k]] for s in data.scored if len(s.turns) > k]))
        rows.append([*_run_columns(data), *cells])
    return Section("turns", "Question accuracy by turn (%, 95% CI)",
                   [*RUN_HEADER, *(f"Turn {k + 1}" for k in range(depth))], rows,
                   "Only StoryTurns with at least that many turns count toward a column; a-b: undecided answers "
                   "counted wrong - counted right.")


def wrong_answers_section(runs: list[RunData], top: int = 3, *, pool: bool = False) -> Section:
    """The most common wrong replies per task and expected answer, per run (or pooled runs of one model and
    dataset): a reply is counted against the answer its own question expected, never another story's."""
    groups: dict[tuple[str, str, str], dict[str, list[tuple[str, int, str]]]] = defaultdict(
        lambda: defaultdict(list))
    for unit in units(runs, (lambda d: (d.run.model, d.run.dataset_name)) if pool else None):
        for _, story in unit.pairs():
            if not story.counted:
                continue
            for turn in story.turns:
                if turn.wrong and turn.response is not None:
                    expected = " / ".join(turn.expected)
                    key = normalize(turn.response) or turn.response.strip()
                    groups[(unit.label, story.task, normalize(expected) or expected)][key].append(
                        (turn.response.strip(), turn.turn + 1, expected))
    rows: list[list[Cell]] = []
    for (label, task, _), replies in groups.items():
        for _, found in sorted(replies.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:top]:
            reply = Counter(r for r, _, _ in found).most_common(1)[0][0]
            expected = Counter(e for _, _, e in found).most_common(1)[0][0]
            turns = ", ".join(str(t) for t in sorted({t for _, t, _ in found}))
            rows.append([label, task, _shorten(expected), _shorten(reply), str(len(found)), turns])
    rows.sort(key=lambda r: (str(r[0]), str(r[1]), -int(str(r[4])), str(r[2]), str(r[3])))
    return Section("wrong-answers", f"Most common wrong answers per task and expected answer (top {top})",
                   ["Runs" if pool else "Run", "Task", "Expected", "Wrong answer", "Count", "Turns"], rows,
                   "Replies are grouped after normalising, separately for each expected answer; Count: answers "
                   "(story and turn) given that reply.")


def _shorten(text: str, limit: int = 90) -> str:
    """One line of at most ``limit`` characters, control characters shown (a reply is any text a model gave)."""
    text = printable(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def undecided_notices(store: Store, runs: list[RunData]) -> list[str]:
    """For each run with undecided answers: one line before the tables when more than half its stories hinge
    on them, and one plain sentence saying which ``--judge`` would decide them."""
    warnings: list[str] = []
    hints: list[str] = []
    for data in runs:
        scored = data.scored
        undecided = sum(s.undecided for s in scored)
        stopped = sum(s.stopped for s in scored)
        if not undecided and not stopped:
            continue
        hinging = sum(s.hinges for s in scored)
        name, judge = data.run.name, data.run.judge
        if 2 * hinging > len(scored):
            warnings.append(f"Run {name}: {hinging} of {len(scored)} stories hinge on undecided answers, so its "
                            "story accuracy is mostly not judged.")
        if judge == "rules":
            how = (f"re-judge them with `commet rejudge --db {store.path} --run {name} --judge {SUGGESTED_JUDGE}` "
                   "(any model spec) or run with --judge MODEL")
        else:
            how = (f"re-judge them with another LLM judge or a panel, e.g. `commet rejudge --db {store.path} "
                   f"--run {name} --judge panel:A,B,C`")
        answers = "1 answer of run {} was" if undecided == 1 else f"{undecided} answers of run {{}} were"
        after_wrong = sum(s.stopped and s.outcome is StoryOutcome.wrong for s in scored)
        wrong_first = f", {after_wrong} of them after a wrong answer (counted wrong)" if after_wrong else ""
        halted = f"; {stopped} stopped there under --undecided-feedback stop{wrong_first}" if stopped else ""
        hints.append(f"{answers.format(name)} left undecided by the {judge} judge "
                     f"({hinging} of {len(scored)} stories hinge on them{halted}, so their story accuracy is shown "
                     f"as a range: undecided counted wrong - counted right); {how}.")
    return warnings + hints


def build_report(store: Store, runs: list[RunRecord], *, bootstrap: Bootstrap | None = None,
                 pool: bool = False, brief: bool = False) -> Report:
    """Every analysis for the given runs, one row per run (``pool``: Tables 3 and 14 and the wrong answers
    pool runs of one model, feedback condition and dataset); sections without rows are left out.

    ``brief``: only Tables 1 and 2 and the summary (what ``commet eval`` prints at the end of a run), so
    a finished run's last line is not kept waiting for tables nobody sees.
    """
    boot = bootstrap or Bootstrap()
    data = [load_run(store, r) for r in runs]
    sections = [*(subset_section(data, subset, boot) for subset in SUBSETS), summary_section(data, boot)]
    if not brief:
        sections += [
            feedback_section(data, boot, pool=pool), feedback_conditions_section(data, boot, pool=pool),
            *source_sections(data, boot), turns_section(data, boot), wrong_answers_section(data, pool=pool),
        ]
    return Report(data, [s for s in sections if s.rows], boot, undecided_notices(store, data))


@dataclass(frozen=True)
class RunComparison:
    """Two runs on the StoryTurns both scored and decided: the paired statistics and what was left out."""

    a: RunData
    b: RunData
    paired: PairedComparison
    only_a: int  # scored in A only
    only_b: int
    #: scored in both, but right or wrong in A or B depending on undecided answers: not guessed, left out
    undecided: int


def compare_runs(store: Store, a: RunRecord, b: RunRecord, *, bootstrap: Bootstrap | None = None) -> RunComparison:
    """Paired bootstrap and McNemar's exact test on story correctness, matched by StoryTurn id.

    The StoryTurns compared are those both runs scored (as story accuracy counts them) whose result
    does not hinge on an undecided answer in either run: an undecided answer is neither counted
    wrong nor right here, as a paired test has no range to show; how many were left out is said.
    """
    boot = bootstrap or Bootstrap()
    data_a, data_b = load_run(store, a), load_run(store, b)
    scored_a = {s.story_id: s for s in data_a.scored}
    scored_b = {s.story_id: s for s in data_b.scored}
    common = [story_id for story_id in scored_a if story_id in scored_b]
    decided = [i for i in common if not scored_a[i].hinges and not scored_b[i].hinges]
    if not decided:
        hinging = f" ({len(common)} hinge on undecided answers: re-judge them)" if common else ""
        raise ValueError(f"runs {a.name!r} and {b.name!r} have no decided StoryTurn in common{hinging}")
    paired = paired_comparison([scored_a[i].outcome is StoryOutcome.right for i in decided],
                               [scored_b[i].outcome is StoryOutcome.right for i in decided],
                               resamples=boot.resamples, seed=boot.seed)
    return RunComparison(data_a, data_b, paired, len(scored_a) - len(common), len(scored_b) - len(common),
                         len(common) - len(decided))
