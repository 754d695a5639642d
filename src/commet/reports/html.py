"""One self-contained HTML report: tables, plots and explorable transcripts, nothing fetched from outside.

The page works offline and from a file: plots are PNGs and pictures JPEG thumbnails, embedded as
``data:`` URIs; styles and a small script are inline. Every table is a plain table first (what a
page without scripts shows, in a region that scrolls sideways); the script then lays out each one
as the terminal does when it is too wide: transposed (a column per row), else one small table per
row. The transcripts are data the script draws on demand (:mod:`commet.reports.transcripts`), with
filters and sorting by run, task, category, outcome and turn. All story text goes through Jinja2's
autoescaping or the DOM's ``textContent``, never through markup.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from commet.engine.outcome import OUTCOME_MEANINGS, StoryOutcome
from commet.extras import require
from commet.format.dataset import Dataset
from commet.reports.analyses import Report
from commet.reports.cells import cell_text, estimate_text
from commet.reports.meanwhile import meanwhile
from commet.reports.pictures import DatasetFinder, Pictures, data_uri
from commet.reports.rundata import cycle_collection_paused
from commet.reports.stats import Estimate
from commet.reports.transcripts import packed, transcript_data

if TYPE_CHECKING:
    from markupsafe import Markup

#: Where a long name without spaces (a run name, a path) may break: after these characters (a hyphen only inside
#: a word: "--judge" stays whole).
_BREAK_AFTER = re.compile(r"([@:,/=_+]|(?<=\w)-)(?=\S)")
#: Where a command may break besides its spaces: inside a path only, never inside an option
_COMMAND_BREAK_AFTER = re.compile(r"(/)(?=\S)")
#: The groups a figure is written in ("66.67", "[62.83, 70.50]", "(400/600)"), each kept on one line.
_FIGURE_PARTS = re.compile(r"\[[^\]]*\]|\([^)]*\)|\S+")


def breakable(text: object) -> Markup:
    """``text`` escaped, with a line-break opportunity (``<wbr>``) after the punctuation of long names."""
    from markupsafe import Markup, escape

    return Markup(_BREAK_AFTER.sub(r"\1<wbr>", str(escape(str(text)))))


#: a command-line option in prose ("--undecided-feedback"): never broken at its hyphens
_OPTION = re.compile(r"(?<![\w-])(--[\w-]+)")


def prose(text: object) -> Markup:
    """Prose escaped and breakable (:func:`breakable`), its command-line options kept whole."""
    from markupsafe import Markup, escape

    parts = _OPTION.split(str(text))
    return Markup("".join(f'<span class="option">{escape(part)}</span>' if index % 2 else str(breakable(part))
                          for index, part in enumerate(parts)))


def command_breaks(text: object) -> Markup:
    """A command escaped, with line-break opportunities after the slashes of its paths only."""
    from markupsafe import Markup, escape

    return Markup(_COMMAND_BREAK_AFTER.sub(r"\1<wbr>", str(escape(str(text)))))


def figure_parts(text: str) -> list[tuple[str, str]]:
    """A table figure in its groups, each with its kind: value, interval or count."""
    return [(part, "ci" if part.startswith("[") else "k" if part.startswith("(") else "v")
            for part in _FIGURE_PARTS.findall(text)]


def _readable_width(png: bytes) -> int:
    """The narrowest a plot may be drawn and keep its text readable: 80% of its own width (a phone scrolls it)."""
    return round(0.8 * int.from_bytes(png[16:20], "big"))


def _sections(report: Report) -> list[dict[str, object]]:
    return [{"key": s.key, "title": s.title, "note": s.note, "header": s.header,
             "rows": [[{"text": cell_text(c, s), "numeric": isinstance(c, Estimate)} for c in row] for row in s.rows]}
            for s in report.sections]


def _headline(report: Report) -> list[dict[str, object]]:
    """Per run, what a reader wants first: story and question accuracy (as the summary table has them) and how many
    StoryTurns were scored, under the run's short id and settings."""
    from commet.store import short_ids

    ids = short_ids(d.run.name for d in report.runs)
    boot = report.bootstrap
    summary = next((s for s in report.sections if s.key == "summary"), None)
    rows = {str(row[0]): dict(zip(summary.header, row, strict=True)) for row in summary.rows} if summary else {}
    headline = []
    for data in report.runs:
        row = rows.get(data.run.name)
        story, question = (row["Story accuracy"], row["Question accuracy"]) if row else (
            boot.stories(data.scored), boot.questions([s.turns for s in data.scored]))
        counts = data.counts
        headline.append({"id": ids[data.run.name], "model": data.run.model, "images": data.images,
                         "feedback": data.feedback, "judge": data.run.judge,  # (a figure not known is said so)
                         **{key: estimate_text(cell) if isinstance(cell, Estimate) else str(cell)
                            for key, cell in (("story", story), ("question", question))},
                         "stories": counts.stories,
                         "scored": counts.scored, "hinging": counts.hinging})
    return headline


def _runs(report: Report) -> list[dict[str, object]]:
    """The runs table's rows: settings, then how many StoryTurns came out each way (what the transcripts show)."""
    rows = []
    for d in report.runs:
        counts = d.counts  # the summary table's and eval's counts; not scored includes StoryTurns never started
        rows.append({"name": d.run.name, "model": d.run.model, "judge": d.run.judge, "dataset": d.run.dataset_name,
                     "images": d.images, "feedback": d.feedback, "status": d.run.status, "stories": counts.stories,
                     "outcomes": [(o, counts.not_scored if o is StoryOutcome.not_scored else counts.of(o))
                                  for o in StoryOutcome]})
    return rows


#: processes drawing a report's plots while this one packs its transcripts: each imports matplotlib (~0.3 s) and
#: draws a share of the plots, so that on two cores a large report's plots take about as long as its transcripts
#: (one process drawing all of them kept the report waiting a second after the transcripts were packed)
PLOTTING_PROCESSES = 2

Drawers = Sequence[tuple[str, Callable[[], bytes | None]]]


def _shares(drawers: Drawers, parts: int) -> list[Drawers]:
    """``drawers`` in ``parts`` runs of neighbours (none empty), the later ones the longer: the category bars
    come first and cost the most."""
    parts = max(1, min(parts, len(drawers)))
    bounds = [len(drawers) * part // parts for part in range(parts + 1)]
    return [drawers[start:end] for start, end in zip(bounds, bounds[1:], strict=False) if end > start]


def plots_meanwhile(report: Report) -> Callable[[], list[tuple[str, bytes]]]:
    """The report's plots, drawn by forked processes (:func:`~commet.reports.meanwhile.meanwhile`) while this one
    packs the transcripts: the plots and the transcripts are the two halves of a large report's HTML time.
    Returns the function that waits for them, in the page's order."""
    # imported once here, not in each plotting process (0.2 s each); importing pyplot chooses no backend
    import matplotlib.pyplot  # noqa: F401

    from commet.reports.plots import draw, plot_drawers

    shares = [meanwhile(partial(draw, share)) for share in _shares(plot_drawers(report), PLOTTING_PROCESSES)]
    return lambda: [plot for drawn in shares for plot in drawn()]


@cycle_collection_paused()
def to_html_report(report: Report, *, dataset: Dataset | None = None, title: str = "CoMMET report") -> str:
    """The whole report as one HTML document."""
    require("jinja2", "the HTML report")
    require("matplotlib", "the HTML report's plots")
    from jinja2 import Environment, PackageLoader

    plotted = plots_meanwhile(report)
    env = Environment(loader=PackageLoader("commet.reports", "templates"), autoescape=True)
    env.filters["breakable"] = breakable
    env.filters["figure"] = figure_parts
    env.filters["command"] = command_breaks
    env.filters["prose"] = prose
    pictures = Pictures()
    transcripts = transcript_data(report.runs, pictures, DatasetFinder(dataset))
    plots = [{"title": name, "uri": data_uri(png, "image/png"), "min_width": _readable_width(png)}
             for name, png in plotted()]
    return env.get_template("report.html.j2").render(
        title=title, headline=_headline(report), runs=_runs(report), sections=_sections(report), notices=[n.shareable() for n in report.notices], plots=plots,
        outcomes=[(o, OUTCOME_MEANINGS[o]) for o in StoryOutcome], transcripts=packed(transcripts),
        stories=sum(len(d.stories) for d in report.runs), resamples=report.bootstrap.resamples,
        seed=report.bootstrap.seed)
