"""Result commands: ``report``, ``compare``, ``sweep``, ``runs``, ``export``."""

from __future__ import annotations

import asyncio
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from commet.cli import ForceOption, _load, console, fail, fail_problems, load_or_fail


def open_store(db: Path):  # noqa: ANN202 - returns Store
    from commet.store import Store

    if not db.exists():
        fail(f"no results store at {db}")
    return Store(db)


class ReportFormat(str, Enum):
    table = "table"
    markdown = "markdown"
    csv = "csv"
    latex = "latex"
    html = "html"


def print_report(db: Path, names: list[str] | None, fmt: str = "table", *, out: Path | None = None,
                 dataset: str | None = None, seed: int | None = None, resamples: int | None = None,
                 brief: bool = False, by: list[str] | None = None) -> None:
    """Build the full report for ``names`` (all runs when empty) and print it, or write it to ``out``.

    ``brief`` prints the accuracy table turned on its side (one row per figure, which fits a
    terminal) and the table with intervals: what ``commet eval`` shows at the end of a run.
    """
    from commet.reports import Bootstrap, build_report, render_report, select_runs
    from commet.reports.render import to_rich_tables

    boot = Bootstrap(**{k: v for k, v in (("seed", seed), ("resamples", resamples)) if v is not None})
    with open_store(db) as store:
        try:
            runs = select_runs(store, names)
        except KeyError as exc:
            fail(str(exc.args[0]))
        report = build_report(store, runs, bootstrap=boot, compact=fmt == "table")
    loaded = _load(dataset) if dataset is not None else None
    if by:
        _add_groupings(report, by, loaded)
    if fmt == "table" and out is None:
        if brief:
            console.print(_sideways(report.sections[0]))
            console.print(to_rich_tables(report)[1])
            console.print(f"[dim]commet report --db {db} shows the paper's tables for this run.[/dim]")
            return
        for table in to_rich_tables(report):
            console.print(table)
        return
    text = render_report(report, fmt, dataset=loaded)
    if out is None:
        typer.echo(text, nl=False)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {fmt} report on {len(report.runs)} run(s) to {out}", err=True)


def _add_groupings(report, keys: list[str], dataset) -> None:  # noqa: ANN001 - Report, Dataset | None
    """Append one ``--by KEY`` table per key (commet.reports.grouping)."""
    from commet.reports.grouping import by_key_section, check_dataset

    try:
        if dataset is not None:
            check_dataset(report.runs, dataset)
        report.sections.extend(by_key_section(report.runs, key, report.bootstrap, dataset) for key in keys)
    except ValueError as exc:
        fail(str(exc))


def _sideways(section):  # noqa: ANN001, ANN202 - a report Section in, a rich Table out
    """A section with runs as columns and figures as rows."""
    from rich.table import Table

    from commet.reports.render import cell_text

    first_figure = section.header.index("Stories")
    table = Table(title=section.title, caption=section.note or None)
    table.add_column("")
    for row in section.rows:
        table.add_column(f"{row[1]}\nimages {row[2]}, feedback {row[3]}", justify="right")
    for index in range(first_figure, len(section.header)):
        table.add_row(section.header[index], *(cell_text(row[index], section, "terminal") for row in section.rows))
    return table


def _format_for(fmt: ReportFormat | None, out: Path | None) -> str:
    from commet.reports.sweep import FORMATS_BY_SUFFIX

    if fmt is not None:
        return fmt.value
    return FORMATS_BY_SUFFIX.get(out.suffix.lower(), "table") if out is not None else "table"


def report(
    db: Annotated[Path, typer.Option(help="SQLite results file.")] = Path("commet.sqlite"),
    run: Annotated[list[str] | None, typer.Option(help="Run name; repeat for several (default: all).")] = None,
    fmt: Annotated[ReportFormat | None, typer.Option(
        "--format", help="Output format (default: from --out's suffix, else table).")] = None,
    out: Annotated[Path | None, typer.Option(help="Write to this file instead of the terminal.")] = None,
    dataset: Annotated[str | None, typer.Option(
        help="Dataset folder or 'sample': embeds the pictures in HTML transcripts.")] = None,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    resamples: Annotated[int, typer.Option(min=100, help="Bootstrap resamples.")] = 2000,
    by: Annotated[list[str] | None, typer.Option(
        help="Also group accuracy by this per-turn or StoryTurn metadata key or field (e.g. question_type); "
             "repeatable; metadata keys need --dataset.")] = None,
) -> None:
    """The paper's tables for stored runs with 95% bootstrap CIs: story accuracy per subset and category,
    feedback effectiveness, per-source split, accuracy by turn, common wrong answers; HTML adds plots and
    transcripts."""
    print_report(db, run, _format_for(fmt, out), out=out, dataset=dataset, seed=seed, resamples=resamples, by=by)


def compare(
    run_a: Annotated[str, typer.Argument(help="First run name.")],
    run_b: Annotated[str, typer.Argument(help="Second run name.")],
    db: Annotated[Path, typer.Option(help="SQLite results file.")] = Path("commet.sqlite"),
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    resamples: Annotated[int, typer.Option(min=100, help="Bootstrap resamples.")] = 2000,
) -> None:
    """Paired comparison of two runs on the same StoryTurns: paired bootstrap CI of the story-accuracy
    difference and McNemar's exact test."""
    from rich.table import Table

    from commet.reports import Bootstrap, compare_runs

    with open_store(db) as store:
        records = [store.get_run(name) for name in (run_a, run_b)]
        for name, record in zip((run_a, run_b), records, strict=True):
            if record is None:
                fail(f"no run named {name!r} in {db}")
        try:
            result = compare_runs(store, records[0], records[1],  # type: ignore[arg-type]
                                  bootstrap=Bootstrap(resamples=resamples, seed=seed))
        except ValueError as exc:
            fail(str(exc))
    p = result.paired
    table = Table(title=f"Paired comparison on {p.items} StoryTurns", show_header=True)
    for column in ("", "A right", "A wrong"):
        table.add_column(column, justify="right")
    table.add_row("B right", str(p.both_right), str(p.b_only))
    table.add_row("B wrong", str(p.a_only), str(p.both_wrong))
    console.print(f"A = {run_a}: story accuracy {p.accuracy_a:.2f}%", highlight=False, markup=False)
    console.print(f"B = {run_b}: story accuracy {p.accuracy_b:.2f}%", highlight=False, markup=False)
    console.print(table)
    console.print(f"difference A - B: {p.difference:+.2f} points, 95% paired bootstrap CI "
                  f"[{p.low:+.2f}, {p.high:+.2f}]; McNemar exact p = {p.p_value:.4g} "
                  f"(discordant: {p.a_only} A only, {p.b_only} B only)", highlight=False, markup=False)
    if result.only_a or result.only_b:
        console.print(f"left out: {result.only_a} StoryTurns finished only in A, {result.only_b} only in B",
                      highlight=False, markup=False)
    verdict = ("a real difference at the 5% level" if p.significant
               else "no evidence of a real difference at the 5% level")
    console.print(f"verdict: {verdict}", highlight=False, markup=False)


def sweep(
    config: Annotated[Path, typer.Argument(help="Sweep config (TOML): models, images, feedback, datasets, ...")],
    quiet: Annotated[bool, typer.Option(help="No per-run lines.")] = False,
    force: ForceOption = False,
) -> None:
    """Run a grid of evaluations into one store (resumable like eval), then write the report.

    Every dataset is validated first, as by `commet validate`; one with errors stops the sweep
    before any run is written.
    """
    from commet.engine import RunConflictError
    from commet.format.problems import FormatError
    from commet.judges.base import UnknownJudgeError
    from commet.models.base import UnknownModelError
    from commet.reports.sweep import SweepConfigError, load_config, run_sweep

    try:
        settings = load_config(config)
    except SweepConfigError as exc:
        fail(str(exc))

    def announce(index: int, total: int, name: str) -> None:
        if not quiet:
            typer.echo(f"[{index + 1}/{total}] {name}", err=True)

    datasets = {d: load_or_fail(d, force) for d in settings.datasets}
    try:
        names = asyncio.run(run_sweep(settings, announce, datasets=datasets))
    except FormatError as exc:
        fail_problems(exc)
    except (RunConflictError, UnknownModelError, UnknownJudgeError, RuntimeError) as exc:
        fail(str(exc))
    print_report(settings.db, names, settings.report_format(), out=settings.out,
                 dataset=settings.datasets[0] if len(settings.datasets) == 1 else None)


def runs(db: Annotated[Path, typer.Option(help="SQLite results file.")] = Path("commet.sqlite")) -> None:
    """List the runs in a store."""
    from rich.table import Table

    with open_store(db) as store:
        table = Table(title=f"Runs in {db}")
        for column in ("name", "model", "judge", "dataset", "status", "stories", "started", "finished"):
            table.add_column(column, overflow="fold")
        for r in store.runs():
            table.add_row(r.name, r.model, r.judge, r.dataset_name, r.status, str(r.story_count), r.started_at,
                          r.finished_at or "")
    console.print(table)


def export(
    run: Annotated[str, typer.Option(help="Run name.")],
    out: Annotated[Path, typer.Option(help="Output JSONL file.")],
    db: Annotated[Path, typer.Option(help="SQLite results file.")] = Path("commet.sqlite"),
) -> None:
    """Write one JSON line per turn: prompt as sent, images, response, expected, verdict."""
    from commet.reports.export import export_run

    with open_store(db) as store:
        record = store.get_run(run)
        if record is None:
            fail(f"no run named {run!r} in {db}")
        count = export_run(store, record, out)
    typer.echo(f"wrote {count} turns to {out}")


def register(app: typer.Typer) -> None:
    app.command()(report)
    app.command()(compare)
    app.command()(sweep)
    app.command()(runs)
    app.command()(export)
