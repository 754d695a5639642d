"""The paper's analyses for any set of stored runs, each as a :class:`Section` (a titled table).

* story accuracy per category on the text-complete subset (paper, Table 1) and on the
  image-dependent subset (Table 2), in the paper's column order, one row per run;
* a summary per run (not a paper table): story and question accuracy (test questions; the comprehension
  control turns the dataset marks counted apart), undecided answers;
* feedback effectiveness (Table 3) and original versus correctness-only feedback (Table 14),
  in :mod:`commet.reports.feedback`;
* one table per StoryTurn source (``stories.source``: the bundled sample versus generated
  ones, like Tables 11 and 12);
* question accuracy by turn index, and the most common wrong answers per question;
* for runs with a calibration sample (``commet calibrate``), the judged story and question accuracy
  beside the same corrected by people's labels, and each judge against the people
  (:mod:`commet.reports.calibration`).

Every table reports each run on its own row. Only when asked (``pool=True``) do Tables 3 and
14 and the wrong answers pool runs of the same model, feedback condition, dataset and judge (never
two runs with the same answers), and a pooled row names the runs it pools.

Story accuracy counts only StoryTurns whose conversation finished (a failed model call is not
a wrong answer). An undecided answer is never counted right: where stories hinge on one, the
figure is a :class:`~commet.reports.stats.Range` (undecided counted wrong .. counted right)
and :attr:`Report.notices` says which judge would decide them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from commet.engine.outcome import StoryOutcome
from commet.reports.feedback import (
    FEEDBACK_COLUMNS,
    FeedbackCases,
    FeedbackCount,
    feedback_cases,
    feedback_conditions_section,
    feedback_section,
)
from commet.reports.metrics import CONTROL_QUESTIONS_COLUMN, SUBSETS
from commet.reports.rundata import (
    RUN_HEADER,
    Bootstrap,
    Cell,
    Controls,
    Notice,
    Report,
    RunData,
    Section,
    StoryResult,
    TurnResult,
    Unit,
    answer_identity,
    cycle_collection_paused,
    load_run,
    ordered_categories,
    run_columns,
    run_label,
    storyturns_differ,
    units,
)
from commet.reports.sections import SectionKey, source_key
from commet.reports.stats import NOT_KNOWN, PairedComparison, paired_comparison
from commet.store import short_ids
from commet.store.sqlite import RunRecord, Store
from commet.taxonomy import TABLE1_CATEGORIES, TABLE2_CATEGORIES
from commet.text import normalize, printable

__all__ = [  # the reports' data types are read from here too
    "FEEDBACK_COLUMNS", "RUN_HEADER", "Bootstrap", "Cell", "FeedbackCases", "FeedbackCount", "Notice", "Report",
    "RunData",
    "Section", "StoryResult", "TurnResult", "Unit", "feedback_cases", "load_run", "ordered_categories", "run_label",
    "units",
]

PAPER_CATEGORIES = {SUBSETS[0]: TABLE1_CATEGORIES, SUBSETS[1]: TABLE2_CATEGORIES}

#: A judge that decides what the rules leave undecided, suggested in the undecided notice.
SUGGESTED_JUDGE = "openai:gpt-4o"
#: What the notice suggests where an LLM judge left answers undecided: a majority of three providers' models
#: (a command that runs as printed, given their keys)
SUGGESTED_PANEL = "panel:openai:gpt-4o,anthropic:claude-sonnet-4-5,google:gemini-2.5-pro"
#: the Control questions cell of a run reported without its dataset (the store does not mark control turns)
CONTROLS_UNKNOWN = NOT_KNOWN
#: the column of the StoryTurns left out of every accuracy; every table's Stories counts them, as the summary's
NOT_SCORED = "Not scored"
NOT_SCORED_NOTE = ("Stories: the run's StoryTurns in the table, as in the summary; Not scored: those with a call that "
                   "failed for good or not finished, left out of every accuracy.")
#: an accuracy over StoryTurns none of which was scored is not computable: said so (an empty group is '-')
NOT_KNOWN_NOTE = f"{NOT_KNOWN}: StoryTurns there, none scored (each had a call that failed for good), so no accuracy."


def scored_stories(boot: Bootstrap, everyone: list[StoryResult]) -> Cell:
    """Story accuracy of ``everyone``'s scored StoryTurns; :data:`NOT_KNOWN` when there are StoryTurns but none
    scored (never a 0 or a blank that reads as an empty group), an empty figure ('-', blank k and n 0 in CSV) when
    there are none."""
    scored = [s for s in everyone if s.counted]
    return NOT_KNOWN if everyone and not scored else boot.stories(scored)


def summary_section(runs: list[RunData], boot: Bootstrap) -> Section:
    """Per run, over all its StoryTurns: story and question accuracy with intervals, undecided and unscored
    (every count from :attr:`RunData.counts`, as eval, the notices and the HTML report print them). Question
    accuracy counts the test questions; the comprehension control turns (known from the run's dataset) are
    counted apart, never pooled with them."""
    rows: list[list[Cell]] = []
    for data in runs:
        scored, counts = data.scored, data.counts
        controls = [[t for t in s.turns if t.control is not None] for s in scored]
        rows.append([*run_columns(data), str(counts.stories),
                     *((NOT_KNOWN, NOT_KNOWN) if counts.stories and not scored
                       else (boot.stories(scored), boot.questions([s.turns for s in scored]))),
                     boot.questions(controls, controls=True) if any(t.answered for c in controls for t in c)
                     else CONTROLS_UNKNOWN if not data.controls_known else "-",
                     str(counts.undecided_answers), str(counts.hinging), str(counts.stopped), str(counts.not_scored)])
    known = all(d.controls_known for d in runs)
    return Section(SectionKey.SUMMARY, "Summary per run, all StoryTurns (%, 95% CI; not a paper table)",
                   [*RUN_HEADER, "Stories", "Story accuracy", "Question accuracy", CONTROL_QUESTIONS_COLUMN,
                    "Undecided answers", "Stories hinging on undecided", "Stopped at undecided", NOT_SCORED], rows,
                   "Stories: the run's StoryTurns; story accuracy counts those scored, a StoryTurn right only when "
                   "every question of it is (its comprehension controls too). Question accuracy: the answered test "
                   "questions; Control questions: the comprehension control turns (the story states the answer; "
                   "the dataset marks them), counted apart"
                   + ("" if known else f" ({CONTROLS_UNKNOWN}: give the run's --dataset to tell them; until then "
                                        "every answered turn counts as a test question)")
                   + ". Story accuracy a-b: undecided "
                   "answers counted wrong (a) and counted right (b); undecided is never counted right in a single "
                   "figure. Stopped: StoryTurns whose conversation ended at an undecided answer the next feedback "
                   "depended on, with none wrong before (in the range; one with a wrong answer before counts "
                   "wrong). Not scored: StoryTurns "
                   "with a call that failed for good or not started, left out of every accuracy. Intervals: "
                   "percentile bootstrap over StoryTurns (a story's questions are resampled together); at 0% or "
                   "100% the exact (Clopper-Pearson) interval."
                   + (f" {NOT_KNOWN_NOTE}" if any(not d.scored and d.counts.stories for d in runs) else ""))


def subset_section(runs: list[RunData], subset: str, boot: Bootstrap) -> Section:
    """Story accuracy overall and per category on one subset (Table 1: text-complete; Table 2:
    image-dependent), the paper's columns first and in its order, an empty one shown as '-'."""
    members = {d.run.name: [s for s in d.stories if s.subset == subset] for d in runs}
    paper = PAPER_CATEGORIES[subset]
    categories = ordered_categories((s for stories in members.values() for s in stories), paper)
    unscored = any(not s.counted for stories in members.values() for s in stories)
    rows: list[list[Cell]] = []
    for data in runs:
        everyone = members[data.run.name]
        if not everyone:
            continue
        stories = [s for s in everyone if s.counted]
        rows.append([data.run.name, data.run.model, data.pictures_label(everyone), data.feedback, str(len(everyone)),
                     *([str(len(everyone) - len(stories))] if unscored else []),
                     scored_stories(boot, everyone), *(scored_stories(boot, [s for s in everyone if s.category == c])
                                                       for c in categories)])
    extra = categories[len(paper):]
    table = "Table 1" if subset == SUBSETS[0] else "Table 2"
    note = "Image: whether these StoryTurns were shown their pictures (Yes), not (No), or some of them (mixed)."
    if unscored:
        note += " " + NOT_SCORED_NOTE
    if any(cell == NOT_KNOWN for row in rows for cell in row):
        note += " " + NOT_KNOWN_NOTE
    if extra:
        note += f" {', '.join(extra)}: categories the paper's {table} does not have."
    return Section(SectionKey(subset), f"{table}: {subset} subset, story accuracy (%, 95% CI)",
                   ["Run", "Model", "Image", "Feedback", "Stories", *([NOT_SCORED] if unscored else []), "Overall",
                    *categories], rows, note)


def source_sections(runs: list[RunData], boot: Bootstrap) -> list[Section]:
    """One table per StoryTurn source (the bundled booklet-like sample, generated items, ...), as the paper
    separates the original booklet tasks (Tables 11 and 12) from CoMMET."""
    sources = sorted({s.source for d in runs for s in d.stories})
    sections = []
    for source in sources:
        members = {d.run.name: [s for s in d.stories if s.source == source] for d in runs}
        unscored = any(not s.counted for everyone in members.values() for s in everyone)
        rows: list[list[Cell]] = []
        for data in runs:
            everyone = members[data.run.name]
            stories = [s for s in everyone if s.counted]
            if everyone:
                rows.append([*run_columns(data), str(len(everyone)),
                             *([str(len(everyone) - len(stories))] if unscored else []),
                             scored_stories(boot, everyone),
                             *(scored_stories(boot, [s for s in everyone if s.subset == subset]) for subset in SUBSETS)])
        sections.append(Section(
            source_key(source), f"Source {source}: story accuracy (%, 95% CI; paper Tables 11 and 12)",
            [*RUN_HEADER, "Stories", *([NOT_SCORED] if unscored else []), "Overall", "Text-complete (Table 12)",
             "Image-dependent (Table 11)"], rows,
            f"Only StoryTurns whose source is {source!r}; Images is the run's picture setting."
            + (" " + NOT_SCORED_NOTE if unscored else "")
            + (" " + NOT_KNOWN_NOTE if any(cell == NOT_KNOWN for row in rows for cell in row) else "")))
    return sections


def turns_section(runs: list[RunData], boot: Bootstrap) -> Section:
    """Question accuracy by turn index (1 = first turn): where in a story models fail; test questions only."""
    depth = max((len(s.turns) for d in runs for s in d.scored), default=0)
    cells = [[boot.questions([[s.turns[k]] for s in data.scored if len(s.turns) > k]) for k in range(depth)]
             for data in runs]
    kept = [k for k in range(depth) if any(mine[k].n for mine in cells)]  # columns with test questions
    rows: list[list[Cell]] = [[*run_columns(data), *(mine[k] for k in kept)] for data, mine in zip(runs, cells,
                                                                                                 strict=True)]
    return Section(SectionKey.TURNS, "Question accuracy by turn (%, 95% CI)",
                   [*RUN_HEADER, *(f"Turn {k + 1}" for k in kept)], rows,
                   "Only StoryTurns with at least that many turns count toward a column, and only test questions "
                   "(comprehension control turns are in the summary's Control questions); a-b: undecided answers "
                   "counted wrong - counted right.")


def wrong_answers_section(runs: list[RunData], top: int = 3, *, pool: bool = False) -> Section:
    """The most common wrong replies per task and expected answer, per run (or pooled runs of one model and
    dataset): a reply is counted against the answer its own question expected, never another story's."""
    groups: dict[tuple[str, str, str], dict[str, list[tuple[str, int, str]]]] = defaultdict(
        lambda: defaultdict(list))
    for unit in units(runs, (lambda d: (d.run.model, d.run.dataset_name)) if pool else None):
        seen: set[str] = set()  # pooled runs answered from the store share answers: each counts once
        for data, story in unit.pairs():
            if not story.counted:
                continue
            for turn in story.turns:
                identity = answer_identity(data, story, turn)
                if turn.wrong and turn.response is not None and identity not in seen:
                    seen.add(identity)
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
    return Section(SectionKey.WRONG_ANSWERS, f"Most common wrong answers per task and expected answer (top {top})",
                   ["Runs" if pool else "Run", "Task", "Expected", "Wrong answer", "Count", "Turns"], rows,
                   "Replies are grouped after normalising, separately for each expected answer; Count: answers "
                   "(story and turn) given that reply, each stored answer once (pooled runs answered from the store "
                   "share answers).")


def _shorten(text: str, limit: int = 90) -> str:
    """One line of at most ``limit`` characters, control characters shown (a reply is any text a model gave)."""
    text = printable(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


#: said once before the runs' undecided notices (each run's then says only its own figures and command)
UNDECIDED_INTRO = ("Undecided answers are never counted right: while a run has some, its story accuracy is a range "
                   "(undecided counted wrong - counted right), and a story stopped at one (--undecided-feedback stop) "
                   "has questions never asked. Each command below decides them with another judge (any judge spec; "
                   "every earlier call and verdict comes from the store).")


def undecided_notices(store: Store, runs: list[RunData]) -> list[Notice]:
    """Warnings first (a run whose stories mostly hinge on undecided answers), then, said once, what undecided
    answers do to the figures, then for each run that has some its counts (:attr:`RunData.counts`) and the
    command that decides them, the run by its short id."""
    warnings: list[Notice] = []
    hints: list[Notice] = []
    ids = short_ids(r.name for r in store.runs())
    for data in runs:
        counts = data.counts
        unasked = counts.stopped + counts.stopped_after_wrong  # stories with questions never asked
        if not counts.undecided_answers and not unasked:
            continue
        run_id, judge = ids.get(data.run.name, data.run.short_id), data.run.judge
        if 2 * counts.hinging > counts.scored:
            warnings.append(Notice(f"Run {run_id}: {counts.hinging} of {counts.scored} scored stories hinge on "
                                   "undecided answers, so its story accuracy is mostly not judged.", warning=True))
        what = []
        if counts.undecided_answers:
            answers = "1 answer" if counts.undecided_answers == 1 else f"{counts.undecided_answers} answers"
            what.append(f"{answers} left undecided by the {judge} judge")
        if counts.stopped:
            what.append(f"{counts.stopped} {'story' if counts.stopped == 1 else 'stories'} stopped at an undecided "
                        "answer")
        if counts.stopped_after_wrong:  # a wrong answer before the undecided one, or the one it stopped at since
            # decided wrong (a run re-judged from a stopped one): "at an undecided answer" would not be true of both
            after = counts.stopped_after_wrong
            what.append(f"{after} {'more' if counts.stopped else 'story' if after == 1 else 'stories'} stopped with a "
                        "wrong answer (counted wrong)")
        hinging = f"{counts.hinging} of {counts.scored} scored stories hinge on them" if counts.hinging else \
            "no story's verdict hinges on them"
        stated = f"Run {run_id}: {', '.join(what[:-1]) + ' and ' if len(what) > 1 else ''}{what[-1]}; {hinging}"
        judge_spec = SUGGESTED_JUDGE if judge == "rules" else SUGGESTED_PANEL
        if unasked:  # questions never asked: re-judging cannot decide them, finishing asks them
            command = f"commet eval --db {store.path} --finish {run_id} --judge {judge_spec}"
            stated += (". To decide them and ask the stopped stories' remaining questions:" if counts.undecided_answers
                       else ". To ask the stopped stories' remaining questions:")
        else:
            command = f"commet rejudge --db {store.path} --run {run_id} --judge {judge_spec}"
            stated += "." + (" To decide them (or run with --judge MODEL):" if judge == "rules" else
                             " To decide them with a majority of three LLM judges:")
        hints.append(Notice(stated, command, local_path=str(store.path)))
    return warnings + ([Notice(UNDECIDED_INTRO)] if hints else []) + hints


@cycle_collection_paused()
def build_report(store: Store, runs: list[RunRecord], *, bootstrap: Bootstrap | None = None,
                 pool: bool = False, brief: bool = False,
                 feedback_cases: FeedbackCases = FeedbackCases.correctness, controls: Controls | None = None) -> Report:
    """Every analysis for the given runs, one row per run (``pool``: Tables 3 and 14 and the wrong answers
    pool runs of one model, feedback condition and dataset); sections without rows are left out.

    ``brief``: only Tables 1 and 2 and the summary (what ``commet eval`` prints at the end of a run), so
    a finished run's last line is not kept waiting for tables nobody sees. ``controls``: the comprehension control
    turns of the runs' dataset (:func:`commet.reports.grouping.control_turns`), kept out of question accuracy.
    """
    boot = bootstrap or Bootstrap()
    data = [load_run(store, r, controls) for r in runs]
    sections = [*(subset_section(data, subset, boot) for subset in SUBSETS), summary_section(data, boot)]
    if not brief:  # the calibration and paired-difference analyses are imported only here (a brief report
        # follows every run, and its process need not load them)
        from commet.reports.calibration import calibrate, calibration_section, judges_section
        from commet.reports.differences import differences_section, paired_comparisons

        sections += [
            feedback_section(data, boot, pool=pool, cases=feedback_cases),
            feedback_conditions_section(data, boot, pool=pool, cases=feedback_cases),
            *source_sections(data, boot), turns_section(data, boot), wrong_answers_section(data, pool=pool),
        ]
        calibrated = [c for r in runs if (c := calibrate(store, r, bootstrap=boot, controls=controls)) is not None]
        if calibrated:  # runs with a calibration sample: the judged figures beside the corrected ones
            sections += [calibration_section(calibrated, boot), judges_section(calibrated)]
        compared = paired_comparisons(store, runs, controls)
        if compared:  # pairs of runs with a paired sample: their judge-corrected differences
            sections.append(differences_section(compared))
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
    """Paired bootstrap and McNemar's exact test on story correctness, matched by StoryTurn id (ValueError for runs
    made on different StoryTurns).

    The StoryTurns compared are those both runs scored (as story accuracy counts them) whose result
    does not hinge on an undecided answer in either run: an undecided answer is neither counted
    wrong nor right here, as a paired test has no range to show; how many were left out is said.
    """
    boot = bootstrap or Bootstrap()
    data_a, data_b = load_run(store, a), load_run(store, b)
    scored_a = {s.story_id: s for s in data_a.scored}
    scored_b = {s.story_id: s for s in data_b.scored}
    common = [story_id for story_id in scored_a if story_id in scored_b]
    if differ := storyturns_differ(data_a, data_b):
        raise ValueError(f"runs {a.name!r} (dataset {a.dataset_name!r}) and {b.name!r} (dataset {b.dataset_name!r}) "
                         f"were made on different StoryTurns ({differ}); a paired comparison needs runs of one "
                         "dataset")
    decided = [i for i in common if not scored_a[i].hinges and not scored_b[i].hinges]
    if not decided:
        hinging = f" ({len(common)} hinge on undecided answers: re-judge them)" if common else ""
        raise ValueError(f"runs {a.name!r} and {b.name!r} have no decided StoryTurn in common{hinging}")
    paired = paired_comparison([scored_a[i].outcome is StoryOutcome.right for i in decided],
                               [scored_b[i].outcome is StoryOutcome.right for i in decided],
                               resamples=boot.resamples, seed=boot.seed)
    return RunComparison(data_a, data_b, paired, len(scored_a) - len(common), len(scored_b) - len(common),
                         len(common) - len(decided))
