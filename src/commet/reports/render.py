"""Text renderings of a :class:`~commet.reports.analyses.Report`: terminal (rich), Markdown and CSV.

An :class:`Estimate` cell reads ``66.67 [62.83, 70.50] (400/600)`` in Markdown, shorter in the
terminal, and ``k/n (pct%) [low, high]`` in the feedback tables. A :class:`Range` (stories
hinging on undecided answers) reads ``33.33–66.67 [low, high] (1–2/3)``: undecided counted
wrong, then counted right. CSV holds one table per file: every estimate column becomes five
numeric columns (value, CI low, CI high, k, n), plus three (value and k if undecided counted
right, stories hinging) in tables where some figure is a range.

In a terminal each table takes the first layout that fits the width: as is, transposed (one
column per row), or one small two-column table per row, so no header is ever broken into
single letters.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import TYPE_CHECKING

from commet.errors import CommetError
from commet.format.dataset import Dataset
from commet.reports.analyses import Cell, Notice, Report, Section
from commet.reports.cells import cell_text, run_legend, run_legend_lines, wrap_words
from commet.reports.stats import Estimate, Range
from commet.reports.tables import to_markdown
from commet.text import printable

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.table import Table
    from rich.text import Text

#: the widest a terminal rendering is measured at (tables are never that wide)
_UNBOUNDED = 100_000


# terminal -----------------------------------------------------------------------------------------------
def _text(value: str) -> Text | None:
    """Plain text for rich: story text and run names are never read as console markup, and their control
    characters are shown, not obeyed."""
    from rich.text import Text

    return Text(printable(value)) if value else None


def _plain_table(section: Section, title: str | None = None) -> Table:
    from rich.table import Table

    table = Table(title=_text(section.title if title is None else title), caption=_text(section.note))
    texts = [[cell_text(c, section, "terminal") for c in row] for row in section.rows]
    for index, column in enumerate(section.header):
        numeric = any(isinstance(row[index], Estimate) for row in section.rows)
        single_words = all(len(text.split()) <= 1 for text in [column, *(row[index] for row in texts)])
        table.add_column(_text(column) or "", justify="right" if numeric else "left", no_wrap=single_words)
    for row in texts:
        table.add_row(*map(_text, row))
    return table


#: the longest first cell (a run's short id) that heads a column of a transposed table as it is
_SHORT_HEADER = 12


def _transposed_table(section: Section) -> list[RenderableType]:
    """Figures as rows, one column per row of the section, each headed by the row's first cell (a run's short id
    in a terminal), or, when some is too long for a column header (a run name), by #1, #2, ... under a legend."""
    from rich.table import Table
    from rich.text import Text

    firsts = [printable(str(row[0])) for row in section.rows]
    short = all(len(first) <= _SHORT_HEADER for first in firsts) and len(set(firsts)) == len(firsts)
    table = Table(title=_text(section.title), caption=_text(section.note))
    table.add_column(_text(section.header[0]) or "")
    for number, first in enumerate(firsts, start=1):
        table.add_column(first if short else f"#{number}", justify="right")
    for index in range(1, len(section.header)):
        table.add_row(_text(section.header[index]),
                      *(_text(cell_text(row[index], section, "terminal")) for row in section.rows))
    if short:
        return [table]
    return [Text("\n".join(f"#{number}: {first}" for number, first in enumerate(firsts, start=1))), table]


def _row_tables(section: Section) -> list[RenderableType]:
    """One two-column table (figure, value) per row of the section, titled by the row's first cell."""
    from rich.table import Table
    from rich.text import Text

    tables: list[RenderableType] = []
    for number, row in enumerate(section.rows, start=1):
        table = Table(title=_text(f"{section.title} ({number}/{len(section.rows)})"), show_header=False,
                      title_justify="left")
        table.add_column(no_wrap=True)
        table.add_column(overflow="fold")
        for name, cell in zip(section.header, row, strict=True):
            table.add_row(_text(name), _text(cell_text(cell, section, "terminal")))
        tables.append(table)
    if section.note:
        tables.append(Text(section.note, style="dim"))
    return tables


def _measure(table: RenderableType) -> tuple[int, int]:
    """(narrowest without breaking a word, natural) widths of a rich renderable."""
    from rich.measure import Measurement

    from commet.terminal import SafeConsole

    console = SafeConsole(width=_UNBOUNDED, file=io.StringIO())
    measured = Measurement.get(console, console.options.update_width(_UNBOUNDED), table)
    return measured.minimum, measured.maximum


def natural_width(table: RenderableType) -> int:
    """The width a rich renderable takes when nothing limits it."""
    return _measure(table)[1]


def _grouped_tables(section: Section) -> list[RenderableType] | None:
    """One compact table per value of the first column (e.g. per run), without that column; None when every
    row has its own value (nothing to group)."""
    from rich import box

    groups: dict[str, list[list[Cell]]] = {}
    for row in section.rows:
        groups.setdefault(str(row[0]), []).append(row[1:])
    if len(groups) == len(section.rows):
        return None
    tables: list[RenderableType] = []
    for value, rows in groups.items():
        part = Section(section.key, f"{section.title}: {value}", section.header[1:], rows, fraction=section.fraction)
        table = _plain_table(part)
        table.caption, table.title_justify = None, "left"
        table.box, table.show_edge, table.pad_edge = box.SIMPLE_HEAD, False, False
        tables.append(table)
    return tables


def fitted_tables(section: Section, width: int) -> list[RenderableType]:
    """The section in the first layout that fits ``width`` columns: as is; one table per value of the first
    column (cells wrapped at spaces, never inside a word); transposed; or one two-column table per row. A title
    wider than its table is printed above it, wrapped to ``width``, not squeezed into the table's width."""
    return [_wrapped_text(part, width) for renderable in _laid_out(section, width) for part in _title_apart(renderable)]


def _wrapped_text(renderable: RenderableType, width: int) -> RenderableType:
    """A paragraph (a note, a title apart) wrapped by :func:`wrap_words`: a run name in it breaks after its
    punctuation, never inside its hash; anything else as it is."""
    from rich.text import Text

    if not isinstance(renderable, Text):
        return renderable
    return Text(wrap_words(renderable.plain, width), style=renderable.style, no_wrap=True, overflow="fold")


def column_parts(section: Section, width: int, keep: int = 1) -> list[RenderableType]:
    """The section as tables side by side in reading order: each with the first ``keep`` columns and as many of
    the others as fit ``width`` (a wide table of short figures, e.g. one column per predictor), the note after
    the last; as is when it fits."""
    from rich.text import Text

    def part(columns: list[int], title: str) -> Table:
        return _plain_table(Section(section.key, title, [section.header[i] for i in columns],
                                    [[row[i] for i in columns] for row in section.rows], fraction=section.fraction))

    groups: list[list[int]] = []
    for index in range(keep, len(section.header)):
        if groups and natural_width(part([*range(keep), *groups[-1], index], "")) <= width:
            groups[-1].append(index)
        else:
            groups.append([index])
    if len(groups) == 1:
        return fitted_tables(section, width)
    tables: list[RenderableType] = []
    for number, group in enumerate(groups, start=1):
        tables.extend(_title_apart(part([*range(keep), *group], f"{section.title} ({number}/{len(groups)})")))
    return [_wrapped_text(t, width) for t in [*tables, *([Text(section.note, style="dim")] if section.note else [])]]


def _title_apart(renderable: RenderableType) -> list[RenderableType]:
    """A table whose title is wider than the table: the title as a paragraph of its own, then the table."""
    from rich.table import Table
    from rich.text import Text

    if not isinstance(renderable, Table) or renderable.title is None:
        return [renderable]
    title = renderable.title if isinstance(renderable.title, Text) else Text(str(renderable.title))
    if len(title.plain) <= natural_width(renderable):
        return [renderable]
    renderable.title = None
    return [Text(title.plain, style="italic"), renderable]


def _laid_out(section: Section, width: int) -> list[RenderableType]:
    from rich.text import Text

    plain = _plain_table(section)
    if natural_width(plain) <= width:
        return [plain]
    grouped = _grouped_tables(section)
    if grouped is not None and all(_measure(t)[0] <= width for t in grouped):
        return [*grouped, *([Text(section.note, style="dim")] if section.note else [])]
    if len(section.rows) > 1:
        transposed = _transposed_table(section)
        if natural_width(transposed[-1]) <= width:
            return transposed
    return _row_tables(section)


def _by_short_id(section: Section, report: Report) -> Section:
    """``section`` with each run name in its Run column written as the run's short id (as in the legend)."""
    from dataclasses import replace

    from commet.store import short_ids

    if not section.header or section.header[0] != "Run":
        return section
    ids = short_ids(d.run.name for d in report.runs)
    return replace(section, rows=[[ids.get(str(row[0]), row[0]), *row[1:]] for row in section.rows])


def notice_texts(notices: list[Notice]) -> list[Text]:
    """The notices for a terminal: each paragraph wrapped at spaces (plain; a warning bold), its command on a
    line of its own, indented and never wrapped, so it is pasted whole."""
    from rich.text import Text

    texts = []
    for notice in notices:
        texts.append(Text(printable(notice.text), style="bold" if notice.warning else ""))
        if notice.command is not None:
            texts.append(Text(f"  {printable(notice.command)}", no_wrap=True, overflow="ignore"))
    return texts


def to_rich_tables(report: Report, width: int | None = None) -> list[RenderableType]:
    """The notices, then every section; each laid out to fit ``width`` (None: each table at its full width)."""
    from rich.text import Text

    renderables: list[RenderableType] = [*notice_texts(report.notices)]
    if width is not None:  # a terminal: runs by their short id in the tables (the legend names them)
        report = Report(report.runs, [_by_short_id(s, report) for s in report.sections], report.bootstrap,
                        report.notices)
    renderables.append(Text("\n".join(run_legend_lines(report, width)), style="dim", no_wrap=True, overflow="fold"))
    for section in report.sections:
        renderables.extend([_plain_table(section)] if width is None else fitted_tables(section, width))
    return renderables


# markdown ------------------------------------------------------------------------------------------------
def to_markdown_report(report: Report, title: str = "CoMMET report") -> str:
    parts = [f"# {title}\n", f"Runs (short id, name): {run_legend(report, '`')}. Intervals: 95% "
             f"percentile bootstrap over StoryTurns ({report.bootstrap.resamples} resamples, seed "
             f"{report.bootstrap.seed}).\n"]
    parts.extend((f"**{n.text}**" if n.warning else n.text) + (f"\n\n    {n.command}\n" if n.command else "\n")
                 for n in report.notices)
    for section in report.sections:
        parts.append(f"## {section.title}\n")
        parts.append(to_markdown(section.header, [[cell_text(c, section) for c in row] for row in section.rows]))
        if section.note:
            parts.append(f"\n{section.note}\n")
    return "\n".join(parts)


# csv -----------------------------------------------------------------------------------------------------
def _csv_number(value: float | None) -> str:
    return "" if value is None else f"{round(value, 4) + 0.0:g}"  # (+ 0.0: never "-0")


def _csv_columns(section: Section) -> tuple[list[str], list[list[str]]]:
    estimate_columns = {i for row in section.rows for i, c in enumerate(row) if isinstance(c, Estimate)}
    ranges = any(isinstance(c, Range) for row in section.rows for c in row)
    # a range's printed interval runs from CI low to "if undecided right CI high" (see reports.cells)
    extra = ["if undecided right", "if undecided right CI high", "if undecided right k", "hinging"] if ranges else []
    header: list[str] = []
    for i, name in enumerate(section.header):
        header.extend([name, f"{name} CI low", f"{name} CI high", f"{name} k", f"{name} n",
                       *(f"{name} {e}" for e in extra)] if i in estimate_columns else [name])
    rows = []
    for row in section.rows:
        out: list[str] = []
        for i, c in enumerate(row):
            if isinstance(c, Estimate):
                out.extend(_csv_number(v) for v in (c.value, c.low, c.high, c.k, c.n))
                if ranges:
                    upper = c.upper if isinstance(c, Range) else c
                    hinging = c.hinging if isinstance(c, Range) else 0
                    out.extend([_csv_number(upper.value), _csv_number(upper.high), _csv_number(upper.k),
                                _csv_number(hinging) if c.value is not None else ""])
            elif i in estimate_columns:
                out.extend([c, "", "", "", "", *("" for _ in extra)])
            else:
                out.append(c)
        rows.append(out)
    return header, rows


def section_csv(section: Section) -> str:
    """One table as CSV (a header row, then one row per table row)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    header, rows = _csv_columns(section)
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def csv_files(report: Report) -> dict[str, str]:
    """File name -> content: one CSV per table (``KEY.csv``), and ``notices.txt`` when there are notices."""
    files = {f"{section.key}.csv": section_csv(section) for section in report.sections}
    if report.notices:
        files["notices.txt"] = "\n".join(map(str, report.notices)) + "\n"
    return files


FORMATS_BY_SUFFIX = {".html": "html", ".htm": "html", ".md": "markdown", ".csv": "csv", ".tex": "latex",
                     ".txt": "table"}


class ReportTargetError(CommetError, ValueError):
    """A report cannot be written where or as asked (a .pdf, a format that contradicts the file's suffix)."""


def output_format(fmt: str | None, out: Path | None) -> str:
    """The format to write: ``fmt``, else from ``out``'s suffix (a folder: CSV files), else the terminal table.

    With ``fmt`` csv, an ``out`` not ending in ``.csv`` is a folder (``results.v2`` included).

    Refuses a suffix no text format has (``x.pdf``, ``x.docx``) and a format that contradicts the suffix, so
    a report is never written as text into a file whose name promises something else.
    """
    if out is None:
        return fmt or "table"
    suffix = out.suffix.lower()
    if not suffix or out.is_dir():
        if fmt is None and out.is_dir():
            return "csv"
        return fmt or "table"
    if fmt == "csv" and suffix != ".csv":  # a folder whose name has a dot (results.v2): one file per table
        return fmt
    by_suffix = FORMATS_BY_SUFFIX.get(suffix)
    if by_suffix is None:
        raise ReportTargetError(f"cannot write a report to {out}: reports are text; use .md, .html, .tex, .txt, "
                                ".csv (one table) or a folder for CSV files (--format csv for a folder whose name "
                                "has a dot)")
    if fmt is not None and fmt != by_suffix:
        raise ReportTargetError(f"--format {fmt} does not match {out} (a {suffix} file holds {by_suffix})")
    return by_suffix


class OneTablePerFile(CommetError, ValueError):
    """CSV was asked for in one file or stream while the report has several tables."""


def render_report(report: Report, fmt: str, *, dataset: Dataset | None = None) -> str:
    """The report as text in ``fmt``: table (plain text, every table at its full width), markdown, csv (a
    report of exactly one table; see :func:`csv_files`), latex or html."""
    if fmt == "markdown":
        return to_markdown_report(report)
    if fmt == "csv":
        if len(report.sections) != 1:
            raise OneTablePerFile(f"CSV holds one table per file and this report has {len(report.sections)}")
        return section_csv(report.sections[0])
    if fmt == "latex":
        from commet.reports.latex import to_latex_report

        return to_latex_report(report)
    if fmt == "html":
        from commet.reports.html import to_html_report

        return to_html_report(report, dataset=dataset)
    if fmt != "table":
        raise ValueError(f"unknown report format {fmt!r}")
    from rich.text import Text

    from commet.terminal import SafeConsole

    renderables = to_rich_tables(report)
    width = max([80, *(natural_width(r) for r in renderables if not isinstance(r, Text))])
    console = SafeConsole(file=io.StringIO(), width=width, record=True)
    for renderable in renderables:
        console.print(renderable)
    return console.export_text()
