"""Result commands: ``report``, ``runs``, ``export``."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from commet.cli import console, fail


def open_store(db: Path):  # noqa: ANN202 - returns Store
    from commet.store import Store

    if not db.exists():
        fail(f"no results store at {db}")
    return Store(db)


def print_report(db: Path, names: list[str] | None, fmt: str = "table") -> None:
    from commet.reports import accuracy_table, run_metrics, select_runs, to_csv, to_markdown
    from commet.reports.tables import to_rich

    with open_store(db) as store:
        try:
            runs = select_runs(store, names)
        except KeyError as exc:
            fail(str(exc.args[0]))
        header, rows = accuracy_table([run_metrics(store, r) for r in runs], counts=fmt != "table")
    if fmt == "markdown":
        typer.echo(to_markdown(header, rows), nl=False)
    elif fmt == "csv":
        typer.echo(to_csv(header, rows), nl=False)
    else:
        console.print(to_rich(header, rows))


class ReportFormat(str, Enum):
    table = "table"
    markdown = "markdown"
    csv = "csv"


def report(
    db: Annotated[Path, typer.Option(help="SQLite results file.")] = Path("commet.sqlite"),
    run: Annotated[list[str] | None, typer.Option(help="Run name; repeat for several (default: all).")] = None,
    fmt: Annotated[ReportFormat, typer.Option("--format", help="Output format.")] = ReportFormat.table,
) -> None:
    """Story accuracy overall, per category and subset, question accuracy and undecided counts, side by side."""
    print_report(db, run, fmt.value)


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
    app.command()(runs)
    app.command()(export)
