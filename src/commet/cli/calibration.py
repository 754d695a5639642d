"""``commet calibrate``: draw a run's calibration sample for people to label, then measure its judge and correct
the run's accuracy by prediction-powered inference (docs/calibration.md)."""

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from commet.cli.common import _load, echo, fail, say
from commet.cli.consoles import console
from commet.cli.reporting import ReportFormat, find_run_or_fail, open_store
from commet.conditions import Design

if TYPE_CHECKING:
    from commet.reports.analyses import Report
    from commet.reports.calibration import Calibration
    from commet.reports.rundata import Notice
    from commet.store.calibration import CalibrationSample
    from commet.store.sqlite import RunRecord, Store


class EstimatorChoice(str, Enum):
    ppi = "ppi"
    ppi_plus = "ppi++"


def _draw(store: "Store", record: "RunRecord", size: int, seed: int, design: Design,
          previous: "CalibrationSample | None" = None, pair: "RunRecord | None" = None) -> "CalibrationSample":
    from commet.reports.calibration import (
        CalibrationError,
        draw_sample,
        partner_half,
        population,
        split_answers,
        verdict_errors,
    )
    from commet.reports.rundata import load_run
    from commet.store.calibration import save_samples

    data = load_run(store, record)
    # the labels so far tell the optimal and the active design where the judge errs
    per_answer = verdict_errors(store, record, population(data)) if design is not Design.proportional else None
    try:
        sample = draw_sample(data, size, seed, design, previous=previous,
                             partner=load_run(store, pair) if pair is not None else None, answer_errors=per_answer,
                             split=split_answers(store, record) if design is not Design.proportional else None)
    except CalibrationError as exc:
        fail(str(exc))
    return save_samples(store, sample, *([partner_half(sample)] if pair is not None else []))[0]


def _progress(db: Path, c: "Calibration") -> "list[Notice]":
    """Where the calibration stands, before its tables; commands name the run by its short id (whole on a line)."""
    from commet.reports.rundata import Notice

    run, counts = c.data.run.short_id, c.data.counts
    notices = [Notice(f"Run {run}: {c.labelled} of the {len(c.sample.items)} sampled StoryTurns labelled "
                      f"({c.answers_labelled} of {c.answers_drawn} answers; sample of seed {c.sample.seed} drawn "
                      f"{c.sample.created_at[:16]}).")]
    if c.labelled < len(c.sample.items):
        notices.append(Notice("Label them in order (or in the review app: commet review serve --dataset DIR "
                              f"--results {db}, page /calibration):",
                              f"commet label --db {db} --run {run} --labeller NAME --calibration"))
    if c.sample.partner and not c.pair_broken:
        notices.append(Notice(f"This sample is paired with run {c.sample.partner} (the StoryTurns both finished): "
                              "label its answers there too; the judge-corrected differences then come from:",
                              f"commet compare {run} {c.sample.partner} --db {db}"))
    if c.waiting:
        notices.append(Notice(f"{c.waiting} labelled StoryTurns come after the first unlabelled one in the active "
                              "sample's order and wait for it: its estimate uses the labelled beginning of the order."))
    if c.unsure:
        ranges = ""
        if c.unsure_range is not None:
            (s_low, s_high), (q_low, q_high) = c.unsure_range
            ranges = (f" Counted in with those answers all wrong or all right, the corrected story accuracy would be "
                      f"{100 * s_low:.1f}-{100 * s_high:.1f} % and question accuracy {100 * q_low:.1f}-"
                      f"{100 * q_high:.1f} %.")
        one = c.unsure == 1
        notices.append(Notice(f"{c.unsure} sampled {'StoryTurn is' if one else 'StoryTurns are'} left out of the "
                              "estimate: people marked answers of them unsure and nobody has labelled those answers. "
                              "Leaving them out assumes they are like the labelled StoryTurns of their strata; an "
                              f"answer people find hard may be one the judge gets wrong.{ranges} Label those answers "
                              "(they come last in the labelling order) to settle it."))
    if c.partly:
        notices.append(Notice(f"{c.partly} sampled StoryTurns are partly labelled: a StoryTurn counts once every one "
                              "of its answers has a label."))
    unasked = counts.stopped + counts.stopped_after_wrong  # the report's "Stopped at undecided", and the wrong ones
    if unasked:
        after = f"{counts.stopped_after_wrong} {{}}stopped with a wrong answer"
        story_turns = "StoryTurn" if counts.stopped == 1 else "StoryTurns"
        if not counts.stopped:  # (a run re-judged from a stopped one: the answer it stopped at since decided wrong)
            stopped = after.format("StoryTurn " if counts.stopped_after_wrong == 1 else "StoryTurns ")
        else:
            stopped = f"{counts.stopped} {story_turns} stopped at an undecided answer" + (
                " and " + after.format("more ") if counts.stopped_after_wrong else "")
        notices.append(Notice(f"{stopped} {'is' if unasked == 1 else 'are'} outside the "
                              "calibration (their last questions were never asked); finish them with (any judge spec):",
                              f"commet eval --db {db} --finish {run} --judge openai:gpt-4o"))
    if c.problem:
        notices.append(Notice(f"No corrected figure yet: {c.problem}."))
    return notices


def calibrate_command(
    run: Annotated[str, typer.Option(help="Run whose judge to calibrate.")],
    sample: Annotated[int | None, typer.Option(
        min=1, help="StoryTurns to draw for people to label (every answer of each); needed the first time.")] = None,
    seed: Annotated[int | None, typer.Option(
        help="Seed of the random draw (recorded with the sample).  [default: 0]")] = None,
    redraw: Annotated[bool, typer.Option(
        help="Draw a new sample in place of the run's (labels stay; only those on the new sample count).")] = False,
    design: Annotated[Design | None, typer.Option(
        help="How the sample is shared among the strata: optimal (Neyman: where the judge's error is, from who "
             "decided each answer and the labels so far) or proportional (half equally, half by what is left of "
             "each stratum); or active: each StoryTurn drawn with a probability that grows with the judge's "
             "uncertainty about it, estimated with inverse-probability weights. A larger --sample continues the "
             "run's sample with it.  [default: the sample's, else optimal]")] = None,
    pair: Annotated[str | None, typer.Option(
        help="Draw a paired sample with this run: StoryTurns both finished, labelled in both, for a judge-corrected "
             "`commet compare` (it replaces that run's sample too).")] = None,
    estimator: Annotated[EstimatorChoice, typer.Option(
        help="ppi: the judged figure corrected by the judge's measured error; ppi++: with the power-tuning "
             "weight fitted to the labels.")] = EstimatorChoice.ppi,
    fmt: Annotated[ReportFormat | None, typer.Option(
        "--format", help="Output format (default: from --out's suffix, else table).")] = None,
    out: Annotated[Path | None, typer.Option(help="Write to this file (a folder for CSV: one file per table).")] = None,
    resamples: Annotated[int, typer.Option(min=100, help="Bootstrap resamples (judged figures, kappa).")] = 2000,
    db: Annotated[Path, typer.Option(help="SQLite results file.")] = Path("commet.sqlite"),
    dataset: Annotated[str | None, typer.Option(
        help="The run's dataset: its comprehension control turns are kept out of the question accuracy.")] = None,
) -> None:
    """Judge calibration: draw a seeded, stratified random sample of a run's StoryTurns for people to label (`commet
    label --calibration` or the review app), then, per judge, its confusion with the people, accuracy and kappa with
    intervals and undecided rate, and the run's story and question accuracy corrected by prediction-powered
    inference beside the judged figures. Run it again as labels come in."""
    from commet.reports.analyses import Report
    from commet.reports.calibration import (
        broken_pair,
        calibrate,
        calibration_section,
        judges_section,
        strata_section,
    )
    from commet.reports.grouping import control_turns
    from commet.reports.ppi import Estimator
    from commet.reports.render import ReportTargetError, output_format
    from commet.reports.rundata import Bootstrap
    from commet.store.calibration import load_sample

    try:
        chosen = output_format(fmt.value if fmt is not None else None, out)
    except ReportTargetError as exc:
        fail(str(exc))
    if chosen == "csv" and out is None:
        fail("CSV holds one table per file: give --out DIR")
    boot = Bootstrap(resamples=resamples)
    with open_store(db) as store:
        record = find_run_or_fail(store, run)
        run = record.name
        existing = load_sample(store, run)
        if existing is None and sample is None:
            fail(f"run {run!r} has no calibration sample yet: draw one with --sample N (N StoryTurns; people label "
                 "every answer of each)")
        grows = existing is not None and not redraw and sample is not None and sample > existing.size
        if existing is not None and not redraw and not grows and (sample not in (None, existing.size)
                                                                  or seed not in (None, existing.seed)
                                                                  or design not in (None, existing.design.value)):
            fail(f"run {run!r} already has a calibration sample ({existing.size} StoryTurns, seed {existing.seed}, "
                 f"{existing.design.value}, drawn {existing.created_at[:16]}): a larger --sample continues it, "
                 "--redraw replaces it")
        if grows and seed not in (None, existing.seed if existing else None):
            fail("a sample continues with its own seed: leave --seed out, or --redraw")
        if grows and existing is not None and (broken := broken_pair(store, existing)):
            fail(f"run {run!r}: {broken}")  # continuing would overwrite the partner's own sample
        effective = design.value if design is not None else existing.design.value if existing is not None else None
        if effective == "active" and estimator is EstimatorChoice.ppi_plus:
            fail("--estimator ppi++ fits its weight to a stratified sample; an active sample's estimate is PPI with "
                 "inverse-probability weights: leave --estimator out")
        partner = None
        wanted = pair if pair is not None else existing.partner if grows and existing is not None else None
        if wanted is not None:
            partner = find_run_or_fail(store, wanted)
            if partner.name == run:
                fail("--pair names another run than --run")
        if (partner is not None and existing is not None and not redraw and not grows
                and existing.partner != partner.name):
            fail(f"run {run!r} already has a calibration sample; --redraw replaces it with one paired with "
                 f"{partner.name!r}")
        if existing is None or redraw or grows:
            seed = (existing.seed if grows and existing else 0) if seed is None else seed
            chosen_design = design or (existing.design if existing else Design.optimal)
            drawn = _draw(store, record, sample or (existing.size if existing else 1), seed, chosen_design,
                          existing if grows else None, partner)
            what = (f"added {len(drawn.items) - len(existing.items)} StoryTurns to the sample of run {run}, now "
                    f"{len(drawn.items)}" if grows and existing else f"drew {len(drawn.items)} StoryTurns of run {run}")
            paired = f", paired with run {partner.name}: label both runs' answers" if partner is not None else ""
            say(f"{what} (seed {seed}, {chosen_design.value} design{paired}) for people to label: "
                + "; ".join(f"{h}: {drawn.drawn(h)} of {n}" for h, n in sorted(drawn.population.items())))
            left = existing.partner if existing is not None and redraw else None
            if left is not None and left != (partner.name if partner is not None else None):
                say(f"run {left}'s half of the old paired sample is no longer paired: its corrected figures and the "
                    f"corrected comparison wait until it is drawn again (commet calibrate --run {left} --redraw)")
        controls = None
        if dataset is not None:
            loaded = _load(dataset)
            if not loaded.hash_matches(record.dataset_hash):
                fail(f"run {run!r} was made on other StoryTurns than {dataset}; give the dataset the run used")
            controls = control_turns(loaded)
        result = calibrate(store, record, estimator=Estimator(estimator.value), bootstrap=boot, controls=controls)
    assert result is not None
    report = Report([result.data], [strata_section([result]), calibration_section([result], boot),
                                    judges_section([result])], boot, _progress(db, result))
    _show(report, chosen, out)


def _show(report: "Report", fmt: str, out: Path | None) -> None:
    from commet.reports.composition import write_csv_folder
    from commet.reports.render import render_report, to_rich_tables

    if fmt == "table" and out is None:
        for renderable in to_rich_tables(report, console.width):
            console.print(renderable, highlight=False)
        return
    if fmt == "csv":
        assert out is not None
        try:
            write_csv_folder(report, out)
        except ValueError as exc:
            fail(str(exc))
        echo(f"wrote the calibration tables to {out}/", err=True)
        return
    text = render_report(report, fmt)
    if out is None:
        echo(text, nl=False)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    echo(f"wrote the calibration report to {out}", err=True)


def register(app: typer.Typer) -> None:
    app.command("calibrate")(calibrate_command)
