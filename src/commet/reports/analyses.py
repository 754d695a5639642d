"""The paper's analyses for any set of stored runs, each as a :class:`Section` (a titled table).

* story accuracy with 95% bootstrap intervals, overall and per category, on the text-complete
  subset (paper, Table 1) and the image-dependent subset (Table 2);
* feedback effectiveness (Table 3) and original versus correctness-only feedback (Table 14);
* a split by where StoryTurns come from (``stories.source``: the bundled sample versus generated
  ones, like Tables 11 and 12);
* question accuracy, accuracy by turn index, and the most common wrong answers per task.

Story accuracy counts only StoryTurns whose conversation finished (a failed model call is not
a wrong answer); an undecided turn is never correct.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from commet.reports.metrics import SUBSETS, run_metrics
from commet.reports.stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Estimate,
    PairedComparison,
    bootstrap_ratio,
    paired_comparison,
)
from commet.reports.tables import accuracy_table
from commet.store.sqlite import RunRecord, Store
from commet.taxonomy import CATEGORIES
from commet.text import normalize

Cell = str | Estimate


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
    def verdict(self) -> str:
        if not self.answered:
            return "failed"
        return {True: "correct", False: "incorrect"}.get(self.correct, "undecided")  # type: ignore[arg-type]


@dataclass(frozen=True)
class StoryResult:
    """One StoryTurn of a run with its turns."""

    story_id: str
    task: str
    category: str
    image_dependent: bool
    source: str
    status: str
    correct: bool | None
    turns: list[TurnResult]

    @property
    def done(self) -> bool:
        return self.status == "done"

    @property
    def subset(self) -> str:
        return SUBSETS[1] if self.image_dependent else SUBSETS[0]


@dataclass
class RunData:
    """A run and its StoryTurns, loaded once from the store."""

    run: RunRecord
    stories: list[StoryResult]

    @property
    def images(self) -> str:
        return str(self.run.settings.get("images", ""))

    @property
    def feedback(self) -> str:
        return str(self.run.settings.get("feedback", ""))

    @property
    def scored(self) -> list[StoryResult]:
        """StoryTurns whose conversation finished: the denominator of story accuracy."""
        return [s for s in self.stories if s.done]


def load_run(store: Store, run: RunRecord) -> RunData:
    turns: dict[str, list[TurnResult]] = defaultdict(list)
    for row in store.turn_rows(run.id):
        turns[row["story_id"]].append(TurnResult(
            turn=row["turn"], prompt=row["prompt"], images=json.loads(row["images_json"]),
            feedback_kind=row["feedback_kind"], response=row["response"], expected=json.loads(row["expected_json"]),
            outcome=row["outcome"], correct=None if row["correct"] is None else bool(row["correct"]),
            judge=row["judge"], rationale=row["rationale"], error=row["error"]))
    stories = [StoryResult(
        story_id=row["story_id"], task=row["task"], category=row["category"],
        image_dependent=bool(row["image_dependent"]), source=row["source"], status=row["status"],
        correct=None if row["correct"] is None else bool(row["correct"]), turns=turns.get(row["story_id"], []))
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

    def ratio(self, numerators: list[float], denominators: list[float] | None = None) -> Estimate:
        return bootstrap_ratio(numerators, denominators, resamples=self.resamples, seed=self.seed)

    def stories(self, stories: Iterable[StoryResult]) -> Estimate:
        """Story accuracy of the finished StoryTurns among ``stories``."""
        return self.ratio([int(s.correct is True) for s in stories if s.done])


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

    def section(self, key: str) -> Section:
        return next(s for s in self.sections if s.key == key)


def ordered_categories(stories: Iterable[StoryResult]) -> list[str]:
    present = {s.category for s in stories}
    return [c for c in CATEGORIES if c in present] + sorted(present - set(CATEGORIES))


def _run_columns(data: RunData) -> list[Cell]:
    return [data.run.name, data.run.model, data.images, data.feedback]


RUN_HEADER = ["Run", "Model", "Images", "Feedback"]


def overview_section(store: Store, runs: list[RunData], *, counts: bool = True) -> Section:
    """The classic accuracy table of ``commet report`` (kept column for column; ``counts=False``: bare %)."""
    header, rows = accuracy_table([run_metrics(store, d.run) for d in runs], counts=counts)
    return Section("overview", "Story accuracy (%)", header, [list(r) for r in rows],
                   "Undecided and Failed count turns; undecided turns never count as correct, "
                   "failed stories are not scored.")


def intervals_section(runs: list[RunData], boot: Bootstrap) -> Section:
    """Story and question accuracy with 95% bootstrap intervals over StoryTurns."""
    rows: list[list[Cell]] = []
    for data in runs:
        scored = data.scored
        answered = [[t for t in s.turns if t.answered] for s in scored]
        questions = boot.ratio([sum(t.correct is True for t in ts) for ts in answered], [len(ts) for ts in answered])
        rows.append([*_run_columns(data), str(len(scored)), boot.stories(scored), str(int(questions.n)), questions])
    return Section("intervals", "Story and question accuracy (%, 95% CI)",
                   [*RUN_HEADER, "Stories", "Story accuracy", "Questions", "Question accuracy"], rows,
                   "Intervals: percentile bootstrap over StoryTurns (a story's questions are resampled together).")


def subset_section(runs: list[RunData], subset: str, boot: Bootstrap) -> Section:
    """Story accuracy overall and per category on one subset (Table 1: text-complete; Table 2: image-dependent)."""
    members = {d.run.name: [s for s in d.scored if s.subset == subset] for d in runs}
    categories = ordered_categories(s for stories in members.values() for s in stories)
    rows: list[list[Cell]] = []
    for data in runs:
        stories = members[data.run.name]
        if not stories:
            continue
        rows.append([*_run_columns(data), str(len(stories)), boot.stories(stories),
                     *(boot.stories(s for s in stories if s.category == c) for c in categories)])
    table = "Table 1" if subset == SUBSETS[0] else "Table 2"
    return Section(subset, f"{subset.capitalize()} subset: story accuracy (%, 95% CI; paper {table})",
                   [*RUN_HEADER, "Stories", "Overall", *categories], rows)


def feedback_cases(story: StoryResult) -> tuple[int, int]:
    """(effective, cases): turns answered wrongly whose next turn carries feedback, and how many of those
    next turns were answered right."""
    effective = cases = 0
    for before, after in zip(story.turns, story.turns[1:], strict=False):
        if before.wrong and after.feedback_kind != "none" and after.answered:
            cases += 1
            effective += after.correct is True
    return effective, cases


def _feedback_estimate(stories: list[StoryResult], boot: Bootstrap) -> Estimate:
    counts = [feedback_cases(s) for s in stories]
    return boot.ratio([e for e, _ in counts], [c for _, c in counts])


FEEDBACK_COLUMNS = (("VI not required, with image", False, "on"), ("VI not required, no image", False, "off"),
                    ("VI required, with image", True, "on"), ("VI required, no image", True, "off"))
FEEDBACK_NOTE = ("Among turns answered wrongly whose next turn carries feedback (any feedback text), how many "
                 "next turns are answered right; undecided answers are not counted as wrong. VI: visual "
                 "information required (image-dependent StoryTurn); with/no image: the run's image setting.")


def _group(runs: list[RunData], key: Callable[[RunData], tuple[str, ...]]) -> dict[tuple[str, ...], list[RunData]]:
    groups: dict[tuple[str, ...], list[RunData]] = {}
    for data in runs:
        groups.setdefault(key(data), []).append(data)
    return groups


def image_condition(data: RunData, story: StoryResult) -> str:
    """'on' or 'off' for Table 3: the run's image setting, or, for runs that showed pictures only
    where needed (human studies), whether this StoryTurn was shown any picture."""
    if data.images in ("on", "off"):
        return data.images
    return "on" if any(turn.images for turn in story.turns) else "off"


def feedback_section(runs: list[RunData], boot: Bootstrap) -> Section:
    """Feedback effectiveness per model and feedback condition (Table 3), runs with the same model,
    condition and dataset pooled across the image settings."""
    several = len({d.run.dataset_name for d in runs}) > 1
    groups = _group([d for d in runs if d.feedback != "none"],
                    lambda d: (d.run.model, d.feedback, d.run.dataset_name))
    present = [col for col in FEEDBACK_COLUMNS
               if any(image_condition(d, s) == col[2] and s.image_dependent == col[1] for d in runs for s in d.stories)]
    rows: list[list[Cell]] = []
    for (model, feedback, dataset), members in groups.items():
        cells = [_feedback_estimate([s for d in members for s in d.stories
                                     if s.image_dependent == vi and image_condition(d, s) == images], boot)
                 for _, vi, images in present]
        rows.append([model, feedback, *([dataset] if several else []), *cells])
    header = ["Model", "Feedback", *(["Dataset"] if several else []), *(name for name, _, _ in present)]
    return Section("feedback", "Feedback effectiveness (paper Table 3)", header, rows, FEEDBACK_NOTE, fraction=True)


def feedback_conditions_section(runs: list[RunData], boot: Bootstrap) -> Section:
    """Original versus correctness-only feedback side by side (Table 14), for models run under both."""
    conditions = ("original", "correctness")
    both = {m for m in {d.run.model for d in runs} if all(any(d.run.model == m and d.feedback == c for d in runs)
                                                           for c in conditions)}
    groups = _group([d for d in runs if d.run.model in both and d.feedback in conditions],
                    lambda d: (d.run.model, d.images, d.feedback))
    rows: list[list[Cell]] = []
    for (model, images, feedback), members in sorted(groups.items(),
                                                     key=lambda kv: (kv[0][0], kv[0][1], conditions.index(kv[0][2]))):
        stories = [s for d in members for s in d.stories]
        rows.append([model, images, feedback, *(_feedback_estimate([s for s in stories if s.subset == subset], boot)
                                                for subset in SUBSETS)])
    return Section("feedback-conditions", "Original versus correctness-only feedback (paper Table 14)",
                   ["Model", "Images", "Feedback", "Text-complete subset", "Image-dependent subset"], rows,
                   FEEDBACK_NOTE.split(";")[0] + ".", fraction=True)


def source_section(runs: list[RunData], boot: Bootstrap) -> Section:
    """Story accuracy per StoryTurn source: bundled sample items versus generated ones (Tables 11 and 12)."""
    rows: list[list[Cell]] = []
    for data in runs:
        for source in sorted({s.source for s in data.scored}):
            stories = [s for s in data.scored if s.source == source]
            rows.append([*_run_columns(data), source, str(len(stories)), boot.stories(stories),
                         *(boot.stories(s for s in stories if s.subset == subset) for subset in SUBSETS)])
    return Section("sources", "Story accuracy per source (%, 95% CI; paper Tables 11 and 12)",
                   [*RUN_HEADER, "Source", "Stories", "Overall", *(s.capitalize() for s in SUBSETS)], rows)


def turns_section(runs: list[RunData], boot: Bootstrap) -> Section:
    """Question accuracy by turn index (1 = first turn): where in a story models fail."""
    depth = max((len(s.turns) for d in runs for s in d.scored), default=0)
    rows: list[list[Cell]] = []
    for data in runs:
        cells: list[Cell] = []
        for k in range(depth):
            at_k = [s.turns[k] for s in data.scored if len(s.turns) > k and s.turns[k].answered]
            cells.append(boot.ratio([int(t.correct is True) for t in at_k]))
        rows.append([*_run_columns(data), *cells])
    return Section("turns", "Question accuracy by turn (%, 95% CI)",
                   [*RUN_HEADER, *(f"Turn {k + 1}" for k in range(depth))], rows,
                   "Only StoryTurns with at least that many turns count toward a column.")


def wrong_answers_section(runs: list[RunData], top: int = 3) -> Section:
    """The most common wrong replies per task, pooled over the runs (replies grouped after normalising)."""
    groups: dict[str, dict[str, list[tuple[str, int, str]]]] = defaultdict(lambda: defaultdict(list))
    for data in runs:
        for story in data.scored:
            for turn in story.turns:
                if turn.wrong and turn.response is not None:
                    key = normalize(turn.response) or turn.response.strip()
                    groups[story.task][key].append((turn.response.strip(), turn.turn + 1, " / ".join(turn.expected)))
    rows: list[list[Cell]] = []
    for task, replies in sorted(groups.items(), key=lambda kv: (-sum(map(len, kv[1].values())), kv[0])):
        for _, found in sorted(replies.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:top]:
            reply = Counter(r for r, _, _ in found).most_common(1)[0][0]
            expected = Counter(e for _, _, e in found).most_common(1)[0][0]
            turns = ", ".join(str(t) for t in sorted({t for _, t, _ in found}))
            rows.append([task, _shorten(reply), str(len(found)), turns, _shorten(expected)])
    return Section("wrong-answers", f"Most common wrong answers per task (top {top})",
                   ["Task", "Wrong answer", "Count", "Turns", "Expected (most often)"], rows)


def _shorten(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def build_report(store: Store, runs: list[RunRecord], *, bootstrap: Bootstrap | None = None,
                 compact: bool = False) -> Report:
    """Every analysis for the given runs; sections without rows are left out (``compact``: terminal view)."""
    boot = bootstrap or Bootstrap()
    data = [load_run(store, r) for r in runs]
    sections = [
        overview_section(store, data, counts=not compact), intervals_section(data, boot),
        *(subset_section(data, subset, boot) for subset in SUBSETS),
        feedback_section(data, boot), feedback_conditions_section(data, boot), source_section(data, boot),
        turns_section(data, boot), wrong_answers_section(data),
    ]
    return Report(data, [s for s in sections if s.rows], boot)


@dataclass(frozen=True)
class RunComparison:
    """Two runs on the StoryTurns both finished: the paired statistics and what was left out."""

    a: RunData
    b: RunData
    paired: PairedComparison
    only_a: int  # finished in A only
    only_b: int


def compare_runs(store: Store, a: RunRecord, b: RunRecord, *, bootstrap: Bootstrap | None = None) -> RunComparison:
    """Paired bootstrap and McNemar's exact test on story correctness, matched by StoryTurn id."""
    boot = bootstrap or Bootstrap()
    data_a, data_b = load_run(store, a), load_run(store, b)
    right_a = {s.story_id: s.correct is True for s in data_a.scored}
    right_b = {s.story_id: s.correct is True for s in data_b.scored}
    common = [story_id for story_id in right_a if story_id in right_b]
    if not common:
        raise ValueError(f"runs {a.name!r} and {b.name!r} have no finished StoryTurn in common")
    paired = paired_comparison([right_a[i] for i in common], [right_b[i] for i in common],
                               resamples=boot.resamples, seed=boot.seed)
    return RunComparison(data_a, data_b, paired, len(right_a) - len(common), len(right_b) - len(common))
