"""``commet judges --probe position|length``: each judge's flip rate on a run's answers asked again in a form that must
not change the verdict (:mod:`commet.engine.probes`), with a 95% interval; a panel's members per answer."""

from pathlib import Path
from typing import TYPE_CHECKING

from commet.cli.common import echo, fail
from commet.cli.consoles import console

if TYPE_CHECKING:
    from commet.engine.probes import ProbeOutcome, ProbeResult
    from commet.reports.rundata import Cell, Section

#: the ways a verdict can change, as columns
CHANGES = (("Right → wrong", "correct", "incorrect"), ("Wrong → right", "incorrect", "correct"),
           ("Decided → undecided", None, "undecided"), ("Undecided → decided", "undecided", None))


def _changes(outcomes: "list[ProbeOutcome]") -> list[str]:
    counts = []
    for _, before, after in CHANGES:
        counts.append(str(sum(o.flipped and (before is None and o.before.outcome != "undecided" or
                                             o.before.outcome == before) and
                              (after is None and o.after.outcome != "undecided" or o.after.outcome == after)
                              for o in outcomes)))
    other_branch = sum(o.flipped and o.before.outcome == o.after.outcome == "correct" for o in outcomes)
    return [*counts, str(other_branch)]


def flip_section(probe: str, run: str, seed: int, results: "list[ProbeResult]", unchangeable: int) -> "Section":
    from commet.reports.ppi import wilson
    from commet.reports.rundata import Section
    from commet.reports.stats import Estimate, fixed

    rows: list[list[Cell]] = []
    for result in results:
        n, k, noise = len(result.outcomes), result.flips, result.noise_flips
        low, high = wilson(k, n)
        noise_low, noise_high = wilson(noise, n)
        test = result.bias()
        rows.append([result.judge, str(n), str(k), Estimate(k, n, 100 * low, 100 * high) if n else "-",
                     *_changes(result.outcomes), str(noise),
                     Estimate(noise, n, 100 * noise_low, 100 * noise_high) if n else "-",
                     f"{fixed(100 * test.excess, 2, sign=True)} [{fixed(100 * test.low, 2, sign=True)}, "
                     f"{fixed(100 * test.high, 2, sign=True)}]", f"{test.p_value:.3g}",
                     "biased" if test.flagged else "no evidence of bias"])
    what = ("the options and a branch point's expected answers in reverse order" if probe == "position"
            else "the reply padded with neutral text before and after")
    left = (f"; {unchangeable} of the run's answers have fewer than two options and expected answers and are not "
            "probed" if probe == "position" and unchangeable else "")
    return Section(f"probe-{probe}", f"Judge bias probe: {probe} (run {run}, seed {seed})",
                   ["Judge", "Answers", "Flips", "Flip rate (%, 95% CI)", *(name for name, _, _ in CHANGES),
                    "Other expected answer", "Re-asked flips", "Re-asked flip rate (%, 95% CI)",
                    "Bias beyond noise (points, 95% CI)", "p (one-sided)", "Verdict"], rows,
                   f"Each answer asked three times: as the run asked it, again unchanged, and with {what}. A flip: "
                   "another verdict than as asked (or, at a branch point, another expected answer). Re-asked flips "
                   "are the judge's own inconsistency; the bias is the probe's flips beyond them: McNemar's exact "
                   "one-sided test on the answers where only one of the two flipped (biased: p < 0.05), which a "
                   f"fair judge, however noisy, fails at most 5% of the time. Flip rates: Wilson's intervals{left}.")


def panel_sections(probe: str, results: "list[ProbeResult]") -> "list[Section]":
    """Per panel: the answers on which its members disagree or one of them changed its verdict."""
    from commet.engine.probes import member_verdicts
    from commet.reports.rundata import Section

    sections = []
    for result in results:
        members = sorted({m for o in result.outcomes for m in (*member_verdicts(o.before), *member_verdicts(o.after))})
        if not members:
            continue
        rows: list[list[Cell]] = []
        for o in result.outcomes:
            before, after = member_verdicts(o.before), member_verdicts(o.after, o.item.back)
            split = len(set(before.values())) > 1 or len(set(after.values())) > 1
            if not split and before == after:
                continue
            rows.append([o.item.story_id, str(o.item.turn + 1),
                         *(f"{before.get(m, '-')} → {after.get(m, '-')}" for m in members),
                         f"{o.before.outcome} → {o.after.outcome}",
                         "yes" if split else "no"])
        sections.append(Section(f"probe-{probe}-panel", f"{result.judge}: members per answer ({probe} probe)",
                                ["StoryTurn", "Turn", *members, "Panel", "Members disagree"], rows,
                                f"The {len(rows)} of {len(result.outcomes)} answers on which the members disagree "
                                "(as asked or as probed) or a member changed its verdict: as asked → as probed."))
    return sections


def probe_command(*, db: Path, runs: list[str], probe: str, judges: list[str], sample: int, seed: int,
                  concurrency: int, dataset: str | None, fmt: str) -> None:
    from commet.cli.reporting import find_run_or_fail, open_store
    from commet.cli.run_dataset import DatasetNotFound, dataset_for
    from commet.engine.probes import Probe, probe_items, run_probe
    from commet.engine.rejudge import RejudgeError
    from commet.format.problems import FormatError
    from commet.judges.base import UnknownJudgeError
    from commet.judges.registry import create_judge

    if len(runs) != 1:
        fail("--probe re-asks the answers of one run: give exactly one --run")
    with open_store(db) as store:
        record = find_run_or_fail(store, runs[0])
        if not judges:
            if record.judge != "rules":
                fail(f"give the judge(s) to probe with --judge SPEC (run {record.name!r} was judged by "
                     f"{record.judge})")
            judges = ["rules"]
        try:
            data = dataset_for(record, dataset)
            built = [create_judge(spec) for spec in judges]
            items, unchangeable = probe_items(store, record, data, Probe(probe), sample=sample, seed=seed)
        except (FormatError, RuntimeError, UnknownJudgeError, RejudgeError, DatasetNotFound) as exc:
            fail(str(exc))
        if not items:
            fail(f"run {record.name!r} has no answer the {probe} probe can change")

        async def go() -> "list[ProbeResult]":
            try:
                return [await run_probe(store, items, judge, concurrency=concurrency) for judge in built]
            finally:
                for judge in built:
                    await judge.aclose()

        import asyncio

        results = asyncio.run(go())
    sections = [flip_section(probe, record.name, seed, results, unchangeable), *panel_sections(probe, results)]
    _print(sections, fmt)
    spent = [f"{r.judge}: {r.input_tokens} in, {r.output_tokens} out"
             + ("" if r.cost is None else f", ${r.cost:.4f}") for r in results if r.input_tokens or r.output_tokens]
    if spent and fmt != "csv":
        console.print("judge tokens spent on the probe: " + "; ".join(spent), markup=False, highlight=False)


def _print(sections: "list[Section]", fmt: str) -> None:
    from commet.reports import to_csv, to_markdown
    from commet.reports.cells import cell_text
    from commet.reports.render import fitted_tables

    if fmt == "csv":
        header = ["Table", *sections[0].header]
        echo(to_csv(header, [[sections[0].title, *(cell_text(c, sections[0]) for c in row)]
                                   for row in sections[0].rows]), nl=False)
        return
    for section in sections:
        if fmt == "markdown":
            echo(f"### {section.title}\n\n" + to_markdown(section.header, [[cell_text(c, section) for c in row]
                                                                                for row in section.rows])
                       + f"\n{section.note}\n")
            continue
        for renderable in fitted_tables(section, console.width):
            console.print(renderable, markup=False, highlight=False)
