"""The HTML report's plots: no figure reads as another, nothing drawn is cut off, no warning for the user."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from PIL import Image

from commet.engine import EvalSettings, evaluate_async
from commet.reports import plots
from commet.reports.stats import Estimate, Range
from tests.test_report_browser import store_path  # noqa: F401 - fixture

LONG = "baseline:first-option@commet-sample:images=on,feedback=original,cfg=fe2e8cc2"  # a default run name


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list:
    """The figures the plot functions make, kept for inspection (and still saved as PNG, warnings as errors)."""
    figures: list = []
    save = plots._png

    def keep(fig):  # noqa: ANN001, ANN202 - a matplotlib Figure
        figures.append(fig)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return save(fig)

    monkeypatch.setattr(plots, "_png", keep)
    return figures


def test_no_data_zero_and_undecided_ranges_each_read_as_what_they_are(drawn: list) -> None:
    groups = ["Overall", "Belief", "Emotion", "Desire"]
    series = [
        ("run a", [Estimate(3, 4, 50.0, 100.0), Estimate(0, 2, 0.0, 0.0), Estimate(0, 0),
                   Range(1, 4, 0.0, 50.0, upper=Estimate(3, 4, 50.0, 100.0))]),
        (LONG, [Estimate(2, 4), Estimate(0, 0), Estimate(1, 1), Estimate(2, 2)]),
    ]
    png = plots._grouped_bars(groups, series, "title", "story accuracy (%)")
    assert Image.open(io.BytesIO(png)).format == "PNG"
    ax = drawn[0].axes[0]
    width = 0.8 / 2
    at = {(round(t.get_position()[0], 3), t.get_text()) for t in ax.texts}
    # run a: Belief is 0 %, Emotion has no StoryTurn; the long run: Belief has none
    assert at == {(round(1 - width / 2, 3), "0"), (round(2 - width / 2, 3), plots.NO_DATA),
                  (round(1 + width / 2, 3), plots.NO_DATA)}
    outlines = [p for p in ax.patches if not p.get_fill()]  # the undecided part of run a's Desire: 25 % to 75 %
    assert len(outlines) == 1 and outlines[0].get_hatch() == "///"
    # its interval is the tables' "[low, high]": low of 25 % (undecided wrong) to high of 75 % (undecided right)
    desire_bar = [segment for collection in ax.collections for segment in collection.get_segments()
                  if segment[0][0] == pytest.approx(3 - width / 2)]
    assert [(y0, y1) for (_, y0), (_, y1) in desire_bar] == [(pytest.approx(0.0), pytest.approx(100.0))]
    colours = {tuple(p.get_facecolor()) for p in ax.patches if p.get_fill()}
    assert len(colours) == 2 and tuple(outlines[0].get_edgecolor()) in colours  # each run its own colour
    assert outlines[0].get_y() == pytest.approx(25.0) and outlines[0].get_height() == pytest.approx(50.0)
    labels = [t.get_text() for t in drawn[0].legends[0].get_texts()]
    assert labels[-1] == plots.UNDECIDED_RANGE and labels.count(plots.UNDECIDED_RANGE) == 1
    assert all(len(line) <= plots.LABEL_WIDTH for label in labels for line in label.split("\n"))
    assert LONG.replace("\n", "") == next(label for label in labels if label.startswith("baseline")).replace("\n", "")


def test_the_saved_picture_holds_the_legend_under_the_plot_from_its_left(drawn: list) -> None:
    """The legend is under the axes and their tick labels, from their left edge (a phone shows a plot's left part
    first: a legend beside the axes was off-screen there), and the picture holds all of it."""
    png = plots._grouped_bars(["Overall"], [(LONG, [Estimate(1, 2)]), ("run b", [Estimate(2, 2)])], "t", "y")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = drawn[0]
    renderer = FigureCanvasAgg(fig).get_renderer()
    legend = fig.legends[0].get_window_extent(renderer)  # pixels, from the canvas's bottom left
    axes = fig.axes[0].get_tightbbox(renderer)
    assert legend.y1 <= axes.y0 + 1 and abs(legend.x0 - axes.x0) < 0.1 * fig.dpi  # under it, at its left edge
    picture = fig.get_tightbbox(renderer)  # inches: what the saved picture holds (before its margin)
    assert picture.y0 * fig.dpi <= legend.y0 + 1 and Image.open(io.BytesIO(png)).height >= legend.height


def test_wrapping_breaks_run_names_where_they_can_be_read() -> None:
    assert plots._wrapped(LONG) == "baseline:first-option@\ncommet-sample:images=on,\nfeedback=original,cfg=fe2e8cc2"
    assert plots._wrapped("short name") == "short name"
    assert all(len(line) <= plots.LABEL_WIDTH for line in plots._wrapped("x" * 100).split("\n"))


def test_html_report_of_long_run_names_prints_no_warning(store_path: Path, tmp_path: Path) -> None:  # noqa: F811
    """The command a user runs on runs with their default (long) names: every plot drawn, nothing but the one
    line on the terminal."""
    done = subprocess.run([sys.executable, "-m", "commet.cli", "report", "--db", str(store_path),
                           "--format", "html", "--out", str(tmp_path / "r.html"), "--resamples", "100"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("wrote html report on 4 run(s)") and done.stderr.count("\n") == 1, done.stderr
    assert done.stdout == ""
    html = (tmp_path / "r.html").read_text()
    assert html.count('class="plot"') >= 4
    assert "n/a: no StoryTurns of that kind" in html and "hatched outlines and dashed lines" in html  # the key


def test_turn_lines_show_what_undecided_answers_leave_open(tmp_path: Path, drawn: list) -> None:
    """The rules judge leaves many of a baseline's replies undecided: each run gets its line counting them
    wrong (the tables' first figure) and a dashed one counting them right (their second), at every turn."""
    from commet.reports import Bootstrap, build_report
    from commet.sources import load_dataset
    from commet.store import Store

    asyncio.run(evaluate_async("baseline:random-option", load_dataset("sample"), judge="rules",
                               db=tmp_path / "s.sqlite", settings=EvalSettings(images="off")))
    with Store(tmp_path / "s.sqlite") as store:
        report = build_report(store, store.runs(), bootstrap=Bootstrap(resamples=100))
    section = next(s for s in report.sections if s.key == "turns")
    cells = [c for c in section.rows[0][4:] if isinstance(c, Estimate) and c.value is not None]
    assert any(isinstance(c, Range) and c.upper.value != c.value for c in cells)  # the case this is about
    assert plots.turn_lines(report) is not None
    solid, dashed = drawn[0].axes[0].get_lines()
    assert list(solid.get_ydata()) == pytest.approx([c.value for c in cells])
    assert list(dashed.get_ydata()) == pytest.approx(
        [c.upper.value if isinstance(c, Range) else c.value for c in cells])
    assert dashed.get_linestyle() == "--" and dashed.get_color() == solid.get_color()
    assert [t.get_text() for t in drawn[0].legends[0].get_texts()][-1] == plots.UNDECIDED_RANGE


def test_heatmap_cells_read_as_the_tables_do(tmp_path: Path, drawn: list) -> None:
    """Each cell: the category's story accuracy as the tables print it ("a–b" where undecided answers
    decide it), "n/a" where a run has no StoryTurn of that category."""
    from commet.reports import Bootstrap, build_report
    from commet.sources import load_dataset
    from commet.store import Store

    sample = load_dataset("sample")
    first = [st for st in sample.storyturns if st.category != "Emotion"]  # one run without any Emotion story
    asyncio.run(evaluate_async("baseline:random-option", sample, judge="rules", db=tmp_path / "s.sqlite",
                               settings=EvalSettings(images="off")))
    asyncio.run(evaluate_async("baseline:first-option", dataclasses.replace(sample, storyturns=first),
                               judge="rules", db=tmp_path / "s.sqlite", settings=EvalSettings(images="off")))
    with Store(tmp_path / "s.sqlite") as store:
        report = build_report(store, store.runs(), bootstrap=Bootstrap(resamples=100))
    assert plots.heatmap(report) is not None
    ax = drawn[0].axes[0]
    categories = [t.get_text() for t in ax.get_xticklabels()]
    cells = {(round(t.get_position()[1]), categories[round(t.get_position()[0])]): t.get_text() for t in ax.texts}
    boot = Bootstrap(resamples=100)
    for i, data in enumerate(d for d in report.runs if d.scored):
        for category in categories:
            members = [s for s in data.scored if s.category == category]
            if not members:
                assert cells[(i, category)] == plots.NO_DATA
                continue
            estimate = boot.stories(members)  # what a table prints for these StoryTurns
            expected = f"{estimate.value:.0f}"
            if isinstance(estimate, Range):
                expected += f"–{estimate.upper.value:.0f}"
            assert cells[(i, category)] == expected
    assert any("–" in text for text in cells.values()) and plots.NO_DATA in cells.values()
