"""Feedback effectiveness: the paper's Table 3 (per picture condition) and Table 14 (original versus
correctness-only feedback).

A case is a turn answered wrongly whose next turn carries correctness-based feedback (the
paper's section 4.3; :class:`FeedbackCases` ``any`` also counts unconditional lines); it is
effective when that next turn is answered right. Turns whose feedback rested on an undecided
answer, and cases whose next answer is undecided, are left out and counted in the note. Each
case counts once per StoryTurn, turn, picture condition and stored answers, so pooled runs that
share answers from the store never count one twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from commet.conditions import FeedbackCondition
from commet.reports.metrics import SUBSETS
from commet.reports.rundata import (
    Bootstrap,
    Cell,
    RunData,
    Section,
    StoryResult,
    TurnResult,
    answer_identity,
    units,
)
from commet.reports.sections import SectionKey
from commet.reports.stats import Estimate


class FeedbackCases(str, Enum):
    """Which feedback makes a wrong answer a case of Tables 3 and 14: feedback that depends on whether the answer
    was right (the paper's section 4.3: "correctness-based feedback", the default), or any feedback text,
    unconditional lines included."""

    correctness = "correctness"
    any = "any"

    def counts(self, kind: str) -> bool:
        """Whether a turn whose feedback kind is ``kind`` (after a wrong answer) makes a case."""
        if self is FeedbackCases.any:
            return kind != "none"
        return kind in CORRECTNESS_BASED


#: feedback kinds chosen because the previous answer was wrong (:func:`commet.engine.conversation.choose_feedback`):
#: the StoryTurn's "If wrong" text, or the correctness-only control's text
CORRECTNESS_BASED = frozenset({"wrong", "correctness-wrong"})


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


def feedback_turns(story: StoryResult, cases: FeedbackCases = FeedbackCases.correctness
                   ) -> list[tuple[TurnResult, TurnResult, FeedbackCount]]:
    """(turn before, turn after, its count) for each turn answered wrongly whose next turn carries the feedback
    ``cases`` counts (a case), and for each turn whose feedback rested on an undecided answer (left out, counted).
    A case counts 1 effective when its next turn is answered right; a case whose next answer is undecided
    is left out and counted (neither effective nor not)."""
    found = []
    for before, after in zip(story.turns, story.turns[1:], strict=False):
        if after.feedback_on_undecided:
            found.append((before, after, FeedbackCount(on_undecided=1)))
        elif before.wrong and cases.counts(after.feedback_kind) and after.answered:
            found.append((before, after, FeedbackCount(next_undecided=1) if after.undecided
                          else FeedbackCount(int(after.correct is True), 1)))
    return found


def feedback_cases(story: StoryResult, cases: FeedbackCases = FeedbackCases.correctness) -> FeedbackCount:
    """The feedback counts of one StoryTurn of one run (:func:`feedback_turns` added up)."""
    return sum((count for _, _, count in feedback_turns(story, cases)), FeedbackCount())


def _feedback_estimate(pairs: list[tuple[RunData, StoryResult]], boot: Bootstrap,
                       cases: FeedbackCases) -> tuple[Estimate, FeedbackCount]:
    """Feedback effectiveness of these StoryTurns, resampled by StoryTurn. Each case counts once per StoryTurn,
    turn, picture condition and stored answers: pooled runs that hold the same stored answers (an images-on and
    an images-needed run share their image-dependent StoryTurns) count them once."""
    seen: set[tuple[object, ...]] = set()
    per_story: dict[str, FeedbackCount] = {}
    for data, story in pairs:
        for before, after, count in feedback_turns(story, cases):
            key = (story.story_id, after.turn, data.pictures_shown(story), answer_identity(data, story, before),
                   answer_identity(data, story, after))
            if key not in seen:
                seen.add(key)
                per_story[story.story_id] = per_story.get(story.story_id, FeedbackCount()) + count
    counts = list(per_story.values())
    total = sum(counts, FeedbackCount())
    return boot.ratio([c.effective for c in counts], [c.cases for c in counts]), total


#: Table 3's columns: (header, visual information required, pictures shown); the last is not in the paper.
FEEDBACK_COLUMNS = (("VI not required, with image", False, True), ("VI not required, no image", False, False),
                    ("VI required, with image", True, True), ("VI required, no image", True, False))
#: what a case is, per FeedbackCases
CASES_NOTE = {
    FeedbackCases.correctness: "Among turns answered wrongly whose next turn carries correctness-based feedback (its "
                               "'If wrong' text or the correctness-only text, as the paper's section 4.3 counts; "
                               "unconditional lines alone are not a case: --feedback-cases any counts them)",
    FeedbackCases.any: "Among turns answered wrongly whose next turn carries any feedback text (unconditional lines "
                       "included: --feedback-cases any; the paper counts correctness-based feedback only)",
}
FEEDBACK_NOTE = ("how many next turns are answered right; undecided answers are not counted as wrong. VI: visual "
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
            "with the same answers (a re-judged copy); each names its runs. A case counts once per StoryTurn, turn, "
            "picture condition and stored answers: the same stored answers in two pooled runs (the image-dependent "
            "StoryTurns of an images-on and an images-needed run) are one case, not two."
            if pooled else " One row per run (--pool pools runs of the same model, feedback, dataset and judge).")


def feedback_section(runs: list[RunData], boot: Bootstrap, *, pool: bool = False,
                     cases: FeedbackCases = FeedbackCases.correctness) -> Section:
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
            estimate, count = _feedback_estimate([(d, s) for d, s in unit.pairs()
                                                  if s.image_dependent == vi and d.pictures_shown(s) == shown],
                                                 boot, cases)
            cells.append(estimate)
            total += count
        rows.append([unit.label, unit.model, unit.feedback, *cells])
    header = ["Runs" if pool else "Run", "Model", "Feedback", *(name for name, _, _ in present)]
    return Section(SectionKey.FEEDBACK, "Table 3: feedback effectiveness", header, rows,
                   f"{CASES_NOTE[cases]}, {FEEDBACK_NOTE}{_left_out_note(total)}{_pool_note(pool)}", fraction=True)


def feedback_conditions_section(runs: list[RunData], boot: Bootstrap, *, pool: bool = False,
                                cases: FeedbackCases = FeedbackCases.correctness) -> Section:
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
            estimate, count = _feedback_estimate([(d, s) for d, s in unit.pairs() if s.subset == subset], boot, cases)
            cells.append(estimate)
            total += count
        rows.append([unit.label, unit.model, unit.images, unit.feedback, *cells])
    return Section(SectionKey.FEEDBACK_CONDITIONS, "Table 14: original versus correctness-only feedback",
                   ["Runs" if pool else "Run", "Model", "Images", "Feedback", "Text-complete subset",
                    "Image-dependent subset"], rows,
                   f"{CASES_NOTE[cases]}, {FEEDBACK_NOTE.split(';')[0]}.{_left_out_note(total)}{_pool_note(pool)}",
                   fraction=True)
