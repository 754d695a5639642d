"""``commet calibrate``: draw a run's calibration sample for people to label, then measure its judge and correct
the run's accuracy by prediction-powered inference (docs/calibration.md)."""

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from commet.cli.common import console, echo, fail, say
from commet.cli.reporting import ReportFormat, find_run_or_fail, open_store

if TYPE_CHECKING:
    from commet.reports.analyses import Report
    from commet.reports.calibration import Calibration
    from commet.reports.rundata import Notice
    from commet.store.calibration import CalibrationSample
    from commet.store.sqlite import RunRecord, Store


class EstimatorChoice(str, Enum):
    ppi = "ppi"
    ppi_plus = "ppi++"


def _draw(store: "Store", record: "RunRecord", size: int, seed: int) -> "CalibrationSample":
    from commet.reports.calibration import CalibrationError, draw_sample
    from commet.reports.rundata import load_run
    from commet.store.calibration import save_sample

    try:
        sample = draw_sample(load_run(store, record), size, seed)
    except CalibrationError as exc:
        fail(str(exc))
    return save_sample(store, sample)


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
    if c.partly:
        notices.append(Notice(f"{c.partly} sampled StoryTurns are partly labelled: a StoryTurn counts once every one "
                              "of its answers has a label."))
    unasked = counts.stopped + counts.stopped_after_wrong  # the report's "Stopped at undecided", and the wrong ones
    if unasked:
        after = f" and {counts.stopped_after_wrong} more after a wrong answer" if counts.stopped_after_wrong else ""
        story_turns = "StoryTurn" if counts.stopped == 1 else "StoryTurns"
        notices.append(Notice(f"{counts.stopped} {story_turns} stopped at an undecided answer{after} are outside the "
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
    estimator: Annotated[EstimatorChoice, typer.Option(
        help="ppi: the judged figure corrected by the judge's measured error; ppi++: with the power-tuning "
             "weight fitted to the labels.")] = EstimatorChoice.ppi,
    fmt: Annotated[ReportFormat | None, typer.Option(
        "--format", help="Output format (default: from --out's suffix, else table).")] = None,
    out: Annotated[Path | None, typer.Option(help="Write to this file (a folder for CSV: one file per table).")] = None,
    resamples: Annotated[int, typer.Option(min=100, help="Bootstrap resamples (judged figures, kappa).")] = 2000,
    db: Annotated[Path, typer.Option(help="SQLite results file.")] = Path("commet.sqlite"),
) -> None:
    """Judge calibration: draw a seeded, stratified random sample of a run's StoryTurns for people to label (`commet
    label --calibration` or the review app), then, per judge, its confusion with the people, accuracy and kappa with
    intervals and undecided rate, and the run's story and question accuracy corrected by prediction-powered
    inference beside the judged figures. Run it again as labels come in."""
    from commet.reports.analyses import Report
    from commet.reports.calibration import calibrate, calibration_section, judges_section, strata_section
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
        if existing is not None and not redraw and (sample not in (None, existing.size)
                                                    or seed not in (None, existing.seed)):
            fail(f"run {run!r} already has a calibration sample ({existing.size} StoryTurns, seed {existing.seed}, "
                 f"drawn {existing.created_at[:16]}); --redraw replaces it")
        if existing is None or redraw:
            seed = 0 if seed is None else seed
            drawn = _draw(store, record, sample or (existing.size if existing else 1), seed)
            say(f"drew {len(drawn.items)} StoryTurns of run {run} (seed {seed}) for people to label: "
                + "; ".join(f"{h}: {drawn.drawn(h)} of {n}" for h, n in sorted(drawn.population.items())))
        result = calibrate(store, record, estimator=Estimator(estimator.value), bootstrap=boot)
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
