"""Judge agreement, the paper's Tables 7 to 10: judges against each other and against people.

An item is one answer of one candidate run: (run, story_id, turn), where a re-judged copy
(``commet rejudge``) counts as its original run, as the paper counts (its Table 7 pools the
with- and without-image runs of one model: the same reply in both runs is two items). A
judge's verdict on an item is the turn's score in a run judged by that judge (``runs.judge``);
panel runs also contribute each member's own verdict (from the stored panel details), with
the story's branch rules applied as for the panel. Undecided verdicts are left out of every
comparison. The runs given (default: all) are the ones pooled; each table says which.

* pairwise agreement between judges: agree / disagree counts, percentage, Cohen's kappa
  (Tables 7 and 9);
* each judge against the people's labels on the items where the judges disagree
  (Tables 8 and 10), and on all labelled items.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import combinations
from typing import cast

from commet.engine.conversation import apply_branch_rules
from commet.format.model import Turn
from commet.judges.base import Verdict, decided_by, is_outcome
from commet.reports.metrics import SUBSETS, select_runs
from commet.reports.stats import fixed
from commet.store.labels import all_labels
from commet.store.sqlite import RunRecord, Store

HUMAN = "human"

#: One answer of one candidate run: (original run name, story_id, turn).
Item = tuple[str, str, int]


def original_run(store: Store, run: RunRecord | str) -> str:
    """The candidate run a run's answers come from: itself, or (re-judged copies) the run it was re-judged
    from, followed back to the first."""
    name = run if isinstance(run, str) else run.name
    seen = {name}
    record = store.get_run(name)
    while record is not None and record.settings.rejudged_from:
        name = record.settings.rejudged_from
        if name in seen:
            break
        seen.add(name)
        record = store.get_run(name)
    return name


def people_verdicts(store: Store) -> dict[Item, bool]:
    """The people's verdict per item: the majority of labellers (ties left out). A label given on a
    re-judged copy belongs to the original run's answer, and only while the stored reply is the same."""
    responses: dict[str, dict[tuple[str, int], str | None]] = {}
    votes: dict[Item, dict[str, bool]] = {}
    for label in all_labels(store):
        origin = original_run(store, label.run)
        if origin not in responses:
            record = store.get_run(origin)
            responses[origin] = {} if record is None else {
                (row.story_id, row.turn): row.response for row in store.turn_rows(record.id)}
        if responses[origin].get((label.story_id, label.turn)) != label.response:
            continue
        votes.setdefault((origin, label.story_id, label.turn), {})[label.labeller] = label.label == "correct"
    verdicts: dict[Item, bool] = {}
    for item, by_labeller in votes.items():
        right = sum(by_labeller.values())
        wrong = len(by_labeller) - right
        if right != wrong:
            verdicts[item] = right > wrong
    return verdicts


@dataclass(frozen=True)
class Agreement:
    a: str
    b: str
    agree: int
    disagree: int
    kappa: float | None

    @property
    def n(self) -> int:
        return self.agree + self.disagree

    @property
    def percent(self) -> float | None:
        return 100.0 * self.agree / self.n if self.n else None


@dataclass
class AgreementReport:
    judges: list[str]
    pooled: list[str] = field(default_factory=list)  # the original runs whose answers are the items
    items: int = 0
    who_decided: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)  # (run, its judge) -> counts
    decided: dict[str, int] = field(default_factory=dict)  # items each judge decided
    undecided: dict[str, int] = field(default_factory=dict)
    pairwise: list[Agreement] = field(default_factory=list)
    disagreements: int = 0  # items on which at least two judges disagree
    labelled: int = 0  # items with a human verdict
    failed: dict[str, int] = field(default_factory=dict)  # run -> answers whose judging failed (left out)
    human_on_disagreements: list[Agreement] = field(default_factory=list)
    human_on_all: list[Agreement] = field(default_factory=list)


def cohen_kappa(pairs: list[tuple[bool, bool]]) -> float | None:
    """Cohen's kappa of two raters' yes/no verdicts; None when undefined (no items, or chance agreement is 1)."""
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    a_yes = sum(a for a, _ in pairs) / n
    b_yes = sum(b for _, b in pairs) / n
    expected = a_yes * b_yes + (1 - a_yes) * (1 - b_yes)
    return None if expected == 1 else (observed - expected) / (1 - expected)


def compare(a: str, b: str, first: dict[Item, bool | None], second: dict[Item, bool | None],
            items: set[Item] | None = None) -> Agreement:
    """Agreement of two raters on the items both decided (restricted to ``items`` when given)."""
    shared = first.keys() & second.keys() if items is None else items & first.keys() & second.keys()
    pairs = [(x, y) for i in shared if (x := first[i]) is not None and (y := second[i]) is not None]
    agree = sum(x == y for x, y in pairs)
    return Agreement(a, b, agree, len(pairs) - agree, cohen_kappa(pairs))


def _member_correct(record: dict[str, object], expected: list[str], active_before: int | None) -> bool | None:
    outcome, branch = record.get("outcome"), record.get("branch")
    # a stored member verdict the judges cannot give is no decision
    verdict = Verdict(outcome if is_outcome(outcome) else "undecided", branch if isinstance(branch, int) else None)
    return apply_branch_rules(Turn(question="", answers=expected), verdict, active_before).correct


def collect_verdicts(store: Store, run_names: list[str] | None = None,
                     subset: str | None = None) -> dict[str, dict[Item, bool | None]]:
    """judge name -> item -> verdict (True correct, False incorrect, None undecided) over the chosen runs."""
    verdicts: dict[str, dict[Item, bool | None]] = {}

    def put(judge: str, item: Item, value: bool | None) -> None:
        seen = verdicts.setdefault(judge, {})
        if seen.get(item) is None:
            seen[item] = value

    for run in select_runs(store, run_names):
        verdicts.setdefault(run.judge, {})
        origin = original_run(store, run)
        image_dependent = {s.story_id: s.image_dependent for s in store.story_rows(run.id)}
        active: dict[str, int | None] = {}
        for row in store.turn_rows(run.id):
            story_id = row.story_id
            active_before = active.get(story_id) if row.turn > 0 else None
            active[story_id] = row.active_branch
            if row.response is None or row.error_kind is not None:  # no answer, or its judging failed: no verdict
                continue
            if subset is not None and SUBSETS[int(image_dependent.get(story_id, False))] != subset:
                continue
            item = (origin, story_id, row.turn)
            put(run.judge, item, row.correct)
            if row.judgment_key is None:
                continue
            stored = store.cached_judgment(row.judgment_key)
            members = stored.details.get("members") if stored is not None else None  # a panel's verdicts
            for record in cast(list[dict[str, object]], members or []):
                put(str(record["judge"]), item, _member_correct(record, row.expected, active_before))
    return verdicts


def disputed_items(verdicts: dict[str, dict[Item, bool | None]]) -> set[Item]:
    """Items on which at least two judges gave different (decided) verdicts."""
    every_item: set[Item] = set().union(*(v.keys() for v in verdicts.values()))
    return {item for item in every_item
            if len({v[item] for v in verdicts.values() if v.get(item) is not None}) > 1}


def agreement_report(store: Store, run_names: list[str] | None = None, subset: str | None = None) -> AgreementReport:
    """Pairwise agreement of every judge found in the runs, and each judge against the people's labels."""
    verdicts = collect_verdicts(store, run_names, subset)
    judges = sorted(verdicts)
    runs = select_runs(store, run_names)
    report = AgreementReport(judges=judges, pooled=list(dict.fromkeys(original_run(store, r) for r in runs)))
    for run in runs:
        answered = [r for r in store.turn_rows(run.id) if r.response is not None]
        report.who_decided[(run.name, run.judge)] = decided_by(r.judge for r in answered if r.error_kind is None)
        if failed := sum(r.error_kind is not None for r in answered):
            report.failed[run.name] = failed
    for judge in judges:
        report.decided[judge] = sum(v is not None for v in verdicts[judge].values())
        report.undecided[judge] = sum(v is None for v in verdicts[judge].values())
    report.pairwise = [compare(a, b, verdicts[a], verdicts[b]) for a, b in combinations(judges, 2)]
    every_item: set[Item] = set().union(*(v.keys() for v in verdicts.values()))
    report.items = len(every_item)
    disputed = disputed_items(verdicts)
    report.disagreements = len(disputed)
    people = {item: value for item, value in people_verdicts(store).items() if item in every_item}
    report.labelled = len(people)
    humans: dict[Item, bool | None] = dict(people)
    report.human_on_disagreements = [compare(HUMAN, j, humans, verdicts[j], disputed) for j in judges]
    report.human_on_all = [compare(HUMAN, j, humans, verdicts[j]) for j in judges]
    return report


def _row(agreement: Agreement) -> list[str]:
    kappa = "-" if agreement.kappa is None else fixed(agreement.kappa, 3)
    percent = "-" if agreement.percent is None else f"{agreement.percent:.2f}%"
    return [f"{agreement.a} vs {agreement.b}", str(agreement.agree), str(agreement.disagree), str(agreement.n),
            percent, kappa]


AGREEMENT_HEADER = ["Pair", "Agree", "Disagree", "n", "Agreement", "Kappa"]


def report_tables(report: AgreementReport, run_name: Callable[[str], str] = str
                  ) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows) of every table, in the paper's order; ``run_name`` writes a run's name (a terminal
    gives its short id, with a legend)."""
    who = ("Who decided, per run", ["Run", "Run's judge", "Decided by", "Answers"],
           [[run_name(run), judge, decider, str(count)] for (run, judge), counts in report.who_decided.items()
            for decider, count in counts.items()])
    failed = "".join(f"; {count} answer(s) of {run_name(run)} left out: judging them failed (the same `commet eval` "
                     "or `commet rejudge` again retries them)" for run, count in report.failed.items())
    judges = (f"Judges compared ({report.items} answers of {len(report.pooled)} run(s) pooled: "
              f"{', '.join(map(run_name, report.pooled))}; one answer per run, story and turn{failed})",
              ["Judge", "Decided", "Undecided"],
              [[j, str(report.decided[j]), str(report.undecided[j])] for j in report.judges])
    return [
        who,
        judges,
        ("Agreement among judges (paper Tables 7 and 9)", AGREEMENT_HEADER, [_row(a) for a in report.pairwise]),
        (f"Agreement with people where the judges disagree ({report.disagreements} answers; "
         "paper Tables 8 and 10)", AGREEMENT_HEADER, [_row(a) for a in report.human_on_disagreements]),
        (f"Agreement with people on all labelled answers ({report.labelled})", AGREEMENT_HEADER,
         [_row(a) for a in report.human_on_all]),
    ]
