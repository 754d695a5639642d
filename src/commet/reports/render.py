"""Text renderings of a :class:`~commet.reports.analyses.Report`: terminal (rich), Markdown and CSV.

An :class:`Estimate` cell reads ``66.67 [62.83, 70.50] (400/600)`` in Markdown, shorter in the
terminal, and ``k/n (pct%) [low, high]`` in the feedback tables. In CSV every estimate column
becomes five numeric columns (value, CI low, CI high, k, n); sections follow one another,
each after a blank line and a ``# title`` line, the classic accuracy table first.
"""

from __future__ import annotations

import csv
import io
from typing import Literal

from commet.format.dataset import Dataset
from commet.reports.analyses import Cell, Report, Section
from commet.reports.stats import Estimate

Style = Literal["terminal", "full"]


def _number(value: float) -> str:
    return f"{value:g}" if value == int(value) else f"{value:.2f}"


def estimate_text(cell: Estimate, *, fraction: bool = False, style: Style = "full") -> str:
    """One estimate as text; '-' when it has no data."""
    if cell.value is None:
        return "-"
    digits = 1 if style == "terminal" else 2
    interval = f"[{cell.low:.{digits}f}, {cell.high:.{digits}f}]"
    if fraction:
        return f"{_number(cell.k)}/{_number(cell.n)} ({cell.value:.1f}%) {interval}"
    if style == "terminal":
        return f"{cell.value:.1f} {interval}"
    return f"{cell.value:.2f} {interval} ({_number(cell.k)}/{_number(cell.n)})"


def cell_text(cell: Cell, section: Section, style: Style = "full") -> str:
    return estimate_text(cell, fraction=section.fraction, style=style) if isinstance(cell, Estimate) else cell


def to_rich_tables(report: Report) -> list[object]:
    """One rich Table per section."""
    from rich.table import Table

    tables: list[object] = []
    for section in report.sections:
        table = Table(title=section.title, caption=section.note or None)
        for column in section.header:
            table.add_column(column, overflow="fold")
        for row in section.rows:
            table.add_row(*(cell_text(c, section, "terminal") for c in row))
        tables.append(table)
    return tables


def _markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines.extend("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows)
    return "\n".join(lines) + "\n"


def to_markdown_report(report: Report, title: str = "CoMMET report") -> str:
    parts = [f"# {title}\n", f"Runs: {', '.join(f'`{d.run.name}`' for d in report.runs)}. Intervals: 95% "
             f"percentile bootstrap over StoryTurns ({report.bootstrap.resamples} resamples, seed "
             f"{report.bootstrap.seed}).\n"]
    for section in report.sections:
        parts.append(f"## {section.title}\n")
        parts.append(_markdown_table(section.header, [[cell_text(c, section) for c in row] for row in section.rows]))
        if section.note:
            parts.append(f"\n{section.note}\n")
    return "\n".join(parts)


def _csv_columns(section: Section) -> tuple[list[str], list[list[str]]]:
    estimate_columns = {i for row in section.rows for i, c in enumerate(row) if isinstance(c, Estimate)}
    header: list[str] = []
    for i, name in enumerate(section.header):
        header.extend([name, f"{name} CI low", f"{name} CI high", f"{name} k", f"{name} n"]
                      if i in estimate_columns else [name])
    rows = []
    for row in section.rows:
        out: list[str] = []
        for i, c in enumerate(row):
            if isinstance(c, Estimate):
                out.extend(["" if v is None else f"{round(v, 4):g}" for v in (c.value, c.low, c.high, c.k, c.n)])
            elif i in estimate_columns:
                out.extend([c, "", "", "", ""])
            else:
                out.append(c)
        rows.append(out)
    return header, rows


def to_csv_report(report: Report) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for number, section in enumerate(report.sections):
        if number:
            buffer.write(f"\n# {section.title}\n")
        header, rows = _csv_columns(section)
        writer.writerow(header)
        writer.writerows(rows)
    return buffer.getvalue()


def render_report(report: Report, fmt: str, *, dataset: Dataset | None = None) -> str:
    """The report as text in ``fmt``: table (plain terminal text), markdown, csv, latex or html."""
    if fmt == "markdown":
        return to_markdown_report(report)
    if fmt == "csv":
        return to_csv_report(report)
    if fmt == "latex":
        from commet.reports.latex import to_latex_report

        return to_latex_report(report)
    if fmt == "html":
        from commet.reports.html import to_html_report

        return to_html_report(report, dataset=dataset)
    if fmt != "table":
        raise ValueError(f"unknown report format {fmt!r}")
    from rich.console import Console

    console = Console(file=io.StringIO(), width=200, record=True)
    for table in to_rich_tables(report):
        console.print(table)
    return console.export_text()
