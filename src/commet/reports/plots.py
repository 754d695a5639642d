"""Plots for the HTML report (matplotlib, rendered off-screen to PNG bytes).

Each function returns None when there is nothing to draw.
"""

from __future__ import annotations

import io
import re
import textwrap
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from commet.engine.outcome import StoryOutcome
from commet.reports.analyses import FEEDBACK_COLUMNS, Cell, Report, RunData, ordered_categories, run_label
from commet.reports.metrics import SUBSETS
from commet.reports.sections import SectionKey
from commet.reports.stats import Estimate, Range

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def _figure(width: float, height: float) -> tuple[Figure, Axes]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(width, height), dpi=100)


def _png(fig: Figure) -> bytes:
    """The figure as PNG bytes, the picture grown to hold everything drawn.

    A legend beside the axes and long run names do not fit a fixed canvas: ``tight_layout`` cannot
    make room for them (it warned on the user's terminal, and titles, legends and labels were cut).
    """
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight", pad_inches=0.1)
    plt.close(fig)
    return buffer.getvalue()


#: characters per line of a run name or column name on a plot (longer ones are wrapped)
LABEL_WIDTH = 36
#: the legend entry of the hatched outlines (a figure that hinges on undecided answers)
UNDECIDED_RANGE = "undecided answers counted right"
#: written where a figure has no StoryTurns (a table's "-"): no bar is drawn, and none is zero
NO_DATA = "n/a"


def _wrapped(text: str) -> str:
    """``text`` in lines of at most ``LABEL_WIDTH`` characters, broken after a blank, ',' or '@' where it can
    be (run names have no blanks: ``model@dataset:images=on,feedback=...``)."""
    lines = [""]
    for piece in re.findall(r"[^\s,@]*[\s,@]?", text):
        if lines[-1] and len(lines[-1]) + len(piece.rstrip()) > LABEL_WIDTH:
            lines.append("")
        lines[-1] += piece
    return "\n".join(chunk for line in lines for chunk in textwrap.wrap(line.strip(), LABEL_WIDTH) or [""]).strip()


def _mark_empty_and_zero(ax: Axes, xs: list[float], estimates: list[Estimate]) -> None:
    """A bar of no data and a bar of 0 % both have no height: each gets a label, so neither reads as the other."""
    for x, estimate in zip(xs, estimates, strict=True):
        if estimate.value is None:
            ax.text(x, 1, NO_DATA, rotation=90, ha="center", va="bottom", fontsize="x-small", color="dimgray")
        elif estimate.value == 0:
            ax.text(x, 1, "0", ha="center", va="bottom", fontsize="x-small")


def _labels(runs: list[RunData]) -> list[str]:
    labels = [run_label(d) for d in runs]
    return labels if len(set(labels)) == len(labels) else [d.run.name for d in runs]


def _error_span(estimate: Estimate) -> tuple[float, float]:
    """How far the interval the tables print (:attr:`Estimate.interval`, a :class:`Range`'s included) reaches
    below and above the value; none for an empty estimate (no value)."""
    value, (low, high) = estimate.value, estimate.interval
    if value is None or low is None or high is None:
        return 0.0, 0.0
    return value - low, high - value


def _figure_cell(cell: Cell) -> Estimate:
    """A table cell that is plotted: the plotted columns hold figures, never text."""
    if not isinstance(cell, Estimate):
        raise TypeError(f"a plotted cell holds text, not a figure: {cell!r}")
    return cell


def _legend_below(fig: Figure, ax: Axes, handles: list[Artist], labels: list[str]) -> None:
    """The legend under the plot and its tick labels, from its left edge: a phone shows a plot's left part first
    (the plot scrolls sideways), and a legend beside the axes was off-screen there."""
    tight = ax.get_tightbbox()  # the axes with their tick labels and title, in display units
    if tight is None:
        fig.legend(handles, labels, fontsize="small", loc="upper left", bbox_to_anchor=(0.0, 0.0))
        return
    box = tight.transformed(fig.transFigure.inverted())
    fig.legend(handles, labels, fontsize="small", loc="upper left", bbox_to_anchor=(box.x0, box.y0 - 0.01))


def _grouped_bars(groups: list[str], series: list[tuple[str, list[Estimate]]], title: str, ylabel: str) -> bytes:
    """Bars per group, one colour per series, with the estimates' intervals as error bars.

    A figure that hinges on undecided answers (a :class:`Range`, "a-b" in the tables) is a bar up
    to ``a`` (undecided counted wrong, the figure every table reads) and a hatched outline from
    ``a`` to ``b`` (counted right).
    """
    fig, ax = _figure(max(6.0, 0.35 * len(groups) * max(1, len(series)) + 2), 4.2)
    width = 0.8 / max(1, len(series))
    range_shown = False
    for i, (name, estimates) in enumerate(series):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        values = [e.value or 0.0 for e in estimates]
        spans = [_error_span(e) for e in estimates]
        errors = [[below for below, _ in spans], [above for _, above in spans]]
        bars = ax.bar(xs, values, width, yerr=errors, capsize=2, label=_wrapped(name))
        _mark_empty_and_zero(ax, xs, estimates)
        hinging = [(x, e.value, e.upper.value) for x, e in zip(xs, estimates, strict=True)
                   if isinstance(e, Range) and e.value is not None and e.upper.value is not None
                   and e.upper.value > e.value]
        if hinging:
            ax.bar([x for x, _, _ in hinging], [high - low for _, low, high in hinging], width,
                   bottom=[low for _, low, _ in hinging], fill=False, hatch="///", linewidth=0.8,
                   # the run's own colour; given as color too, so the colour cycle does not move on
                   color=bars.patches[0].get_facecolor(), edgecolor=bars.patches[0].get_facecolor())
            range_shown = True
    ax.set_xticks(range(len(groups)), [_wrapped(g) for g in groups], rotation=30, ha="right")
    ax.set_ylim(0, 105)
    ax.set_ylabel(ylabel)
    ax.set_title(title, loc="left")  # its start on screen where a phone shows the plot's left part
    handles, labels = ax.get_legend_handles_labels()
    if range_shown:  # one grey entry, after the runs, for the outlines of every colour
        from matplotlib.patches import Patch

        handles.append(Patch(fill=False, hatch="///", edgecolor="dimgray", linewidth=0.8))
        labels.append(UNDECIDED_RANGE)
    _legend_below(fig, ax, handles, labels)
    return _png(fig)


def category_bars(report: Report, subset: str) -> bytes | None:
    """Story accuracy per category on one subset, one bar per run, with 95% CIs."""
    runs = [d for d in report.runs if any(s.subset == subset for s in d.scored)]
    section = next((s for s in report.sections if s.key == subset), None)
    if not runs or section is None:  # (a report of chosen tables, --table, may not have this one)
        return None
    categories = ["Overall", *section.header[section.header.index("Overall") + 1:]]
    by_run = {row[0]: row[section.header.index("Overall"):] for row in section.rows}
    series = [(label, [c if isinstance(c, Estimate) else Estimate(0, 0) for c in by_run[d.run.name]])
              for label, d in zip(_labels(runs), runs, strict=True)]
    return _grouped_bars(categories, series, f"Story accuracy, {subset} subset (95% CI)", "story accuracy (%)")


def heatmap(report: Report) -> bytes | None:
    """Runs by categories, story accuracy over all finished StoryTurns (colour: undecided answers counted
    wrong; the text "a–b" as in the tables where counting them right gives more)."""
    runs = [d for d in report.runs if d.scored]
    if not runs:
        return None
    categories = ordered_categories(s for d in runs for s in d.scored)
    grid: list[list[float]] = []
    texts: list[list[str]] = []
    for d in runs:
        row, text = [], []
        for c in categories:
            members = [s for s in d.scored if s.category == c]
            if not members:  # this run has no StoryTurn of this category
                row.append(float("nan"))
                text.append(NO_DATA)
                continue
            low = 100.0 * sum(s.outcome is StoryOutcome.right for s in members) / len(members)
            high = 100.0 * sum(s.correct_if_undecided_right for s in members) / len(members)
            row.append(low)
            text.append(f"{low:.0f}" if high == low else f"{low:.0f}–{high:.0f}")
        grid.append(row)
        texts.append(text)
    fig, ax = _figure(max(6.0, 0.8 * len(categories) + 4), max(2.5, 0.45 * len(runs) + 1.5))
    image = ax.imshow(grid, cmap="viridis", vmin=0, vmax=100, aspect="auto")
    ax.set_xticks(range(len(categories)), categories, rotation=30, ha="right")
    ax.set_yticks(range(len(runs)), [_wrapped(label) for label in _labels(runs)])
    for i, row in enumerate(grid):
        for j, value in enumerate(row):
            colour = "dimgray" if value != value else "white" if value < 60 else "black"  # NaN: no data
            ax.text(j, i, texts[i][j], ha="center", va="center", color=colour, fontsize="small")
    fig.colorbar(image, ax=ax, label="story accuracy (%)")
    ax.set_title("Story accuracy by category")
    return _png(fig)


def feedback_bars(report: Report) -> bytes | None:
    """Feedback effectiveness per model and condition, by visual-information need and image setting."""
    section = next((s for s in report.sections if s.key == SectionKey.FEEDBACK), None)
    if section is None:
        return None
    names = [name for name, _, _ in FEEDBACK_COLUMNS if name in section.header]
    groups = [f"{row[0]} ({row[1]})" for row in section.rows]
    series = [(name, [_figure_cell(row[section.header.index(name)]) for row in section.rows]) for name in names]
    return _grouped_bars(groups, series, "Feedback effectiveness (95% CI)", "wrong → right after feedback (%)")


def turn_lines(report: Report) -> bytes | None:
    """Question accuracy by turn index, one line per run (dashed: undecided answers counted right, where
    that differs)."""
    section = next((s for s in report.sections if s.key == SectionKey.TURNS), None)
    if section is None or len(section.header) <= 4:
        return None
    fig, ax = _figure(7.0, 4.0)
    turns = list(range(1, len(section.header) - 3))
    range_shown = False
    for label, row in zip(_labels(report.runs), section.rows, strict=True):
        points = [(t, c, c.value) for t, c in zip(turns, row[4:], strict=True)
                  if isinstance(c, Estimate) and c.value is not None]
        (line,) = ax.plot([t for t, _, _ in points], [v for _, _, v in points], marker="o", label=_wrapped(label))
        upper = [(t, c.upper.value if isinstance(c, Range) and c.upper.value is not None else v) for t, c, v in points]
        if any(high != v for (_, high), (_, _, v) in zip(upper, points, strict=True)):
            ax.plot([t for t, _ in upper], [v for _, v in upper], linestyle="--", color=line.get_color(), linewidth=1)
            range_shown = True
    ax.set_xticks(turns)
    ax.set_ylim(0, 105)
    ax.set_xlabel("turn")
    ax.set_ylabel("question accuracy (%)")
    ax.set_title("Where in a story models fail", loc="left")
    handles, labels = ax.get_legend_handles_labels()
    if range_shown:
        from matplotlib.lines import Line2D

        handles.append(Line2D([], [], color="dimgray", linestyle="--", linewidth=1))
        labels.append(UNDECIDED_RANGE)
    _legend_below(fig, ax, handles, labels)
    return _png(fig)


def plot_drawers(report: Report) -> list[tuple[str, Callable[[], bytes | None]]]:
    """(title, the function drawing it) for every plot, in the page's order: each is drawn on its own, so the
    HTML report can share them out among processes."""
    drawers: list[tuple[str, Callable[[], bytes | None]]] = [
        (f"Story accuracy per category, {subset} subset", partial(category_bars, report, subset)) for subset in SUBSETS]
    return [*drawers, ("Model by category", partial(heatmap, report)),
            ("Feedback effectiveness", partial(feedback_bars, report)), ("Accuracy by turn", partial(turn_lines, report))]


def draw(drawers: Sequence[tuple[str, Callable[[], bytes | None]]]) -> list[tuple[str, bytes]]:
    """(title, PNG) for each of ``drawers``' plots that has data."""
    plots = [(title, drawer()) for title, drawer in drawers]
    return [(title, png) for title, png in plots if png is not None]


def all_plots(report: Report) -> list[tuple[str, bytes]]:
    """(title, PNG) for every plot that has data."""
    return draw(plot_drawers(report))
