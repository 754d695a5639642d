"""How one report cell (and the runs legend) reads as text, shared by every rendering (terminal, Markdown, CSV,
LaTeX, HTML).

An :class:`Estimate` reads ``66.67 [62.83, 70.50] (400/600)``, shorter in the terminal, and
``k/n (pct%) [low, high]`` in the feedback tables; a :class:`Range` (stories hinging on
undecided answers) reads ``33.33–66.67 [low, high] (1–2/3)``; a :class:`Corrected` estimate
(prediction-powered) reads ``71.20 [64.10, 78.30] (PPI, 40 StoryTurns labelled)``.
"""

from __future__ import annotations

import re
from typing import Literal

from commet.reports.analyses import Cell, Report, Section
from commet.reports.stats import Corrected, Estimate, Range
from commet.text import printable

Style = Literal["terminal", "full"]


def _number(value: float) -> str:
    return f"{value:g}" if value == int(value) else f"{value:.2f}"


def estimate_text(cell: Estimate, *, fraction: bool = False, style: Style = "full") -> str:
    """One estimate as text; '-' when it has no data."""
    if cell.value is None:
        return "-"
    digits = 1 if style == "terminal" else 2
    low, high = cell.interval
    interval = f"[{low:.{digits}f}, {high:.{digits}f}]"
    if isinstance(cell, Range) and cell.upper.value is not None:
        span = f"{cell.value:.{digits}f}–{cell.upper.value:.{digits}f}"
        if style == "terminal":
            return f"{span} {interval}"
        return f"{span} {interval} ({_number(cell.k)}–{_number(cell.upper.k)}/{_number(cell.n)})"
    if isinstance(cell, Corrected):
        return f"{cell.value:.{digits}f} {interval}" + ("" if style == "terminal" else f" ({cell.basis})")
    if fraction:
        return f"{_number(cell.k)}/{_number(cell.n)} ({cell.value:.1f}%) {interval}"
    if style == "terminal":
        return f"{cell.value:.1f} {interval}"
    return f"{cell.value:.2f} {interval} ({_number(cell.k)}/{_number(cell.n)})"


def cell_text(cell: Cell, section: Section, style: Style = "full") -> str:
    return estimate_text(cell, fraction=section.fraction, style=style) if isinstance(cell, Estimate) else cell


#: where a long name without spaces (a run name, a spec) may break: after these characters
_NAME_BREAKS = re.compile(r"(?<=[,@:/=;&?])")


def broken_at_punctuation(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken only after its punctuation (a run name breaks
    after "@", ":" or ","; never inside a hash); a part longer than ``width`` by itself is left whole."""
    lines = [""]
    for part in _NAME_BREAKS.split(text):
        if lines[-1] and len(lines[-1]) + len(part) > width:
            lines.append("")
        lines[-1] += part
    return lines


def wrap_words(text: str, width: int) -> str:
    """``text`` wrapped to ``width`` columns at its spaces, a word too long for a line broken only after its
    punctuation (as :func:`broken_at_punctuation`): never inside a word or a hash. Each line of ``text`` is
    wrapped apart, keeping its indentation."""
    out: list[str] = []
    for paragraph in text.split("\n"):
        indent = " " * (len(paragraph) - len(paragraph.lstrip(" ")))  # kept on every line of the paragraph
        room = max(width - len(indent), 1)
        lines = [""]
        for word in paragraph.split():
            pieces = _NAME_BREAKS.split(word) if len(word) > room else [word]
            for index, piece in enumerate(pieces):
                glue = " " if lines[-1] and index == 0 else ""
                if lines[-1] and len(lines[-1]) + len(glue) + len(piece) > room:
                    lines.append(piece)
                else:
                    lines[-1] += glue + piece
        out.extend(indent + line for line in lines)
    return "\n".join(out)


def run_legend_entries(report: Report, quote: str = "") -> list[str]:
    """Each run of the report as its short id and name (what every --run accepts), in report order."""
    from commet.store import short_ids

    ids = short_ids(d.run.name for d in report.runs)
    return [f"{quote}{ids[d.run.name]}{quote} {quote}{d.run.name}{quote}" for d in report.runs]


def run_legend_lines(report: Report, width: int | None) -> list[str]:
    """The runs of the report for a terminal ``width`` wide (None: unbounded): "runs:", then each run's short id
    and name, the name broken only after its punctuation, its parts under each other."""
    from commet.store import short_ids

    ids = short_ids(d.run.name for d in report.runs)
    lines = ["runs:"]
    for data in report.runs:
        lead = f"  {ids[data.run.name]}  "
        parts = broken_at_punctuation(printable(data.run.name), (width or 100_000) - len(lead))
        lines += [(lead if i == 0 else " " * len(lead)) + part for i, part in enumerate(parts)]
    return lines


def run_legend(report: Report, quote: str = "") -> str:
    """The runs of the report on one line (see :func:`run_legend_entries`)."""
    return "; ".join(run_legend_entries(report, quote))
