"""One self-contained HTML report: tables, plots and browsable transcripts, nothing fetched from outside.

Plots are PNGs and pictures thumbnails, both embedded as base64 ``data:`` URIs; each picture is
stored once and placed into every turn that showed it by a few lines of inline script. All
story text goes through Jinja2's autoescaping.
"""

from __future__ import annotations

import base64
import io

from commet.format.dataset import Dataset
from commet.reports.analyses import Report, RunData
from commet.reports.render import cell_text
from commet.reports.stats import Estimate

THUMBNAIL_SIDE = 360


def data_uri(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def thumbnail(data: bytes, side: int = THUMBNAIL_SIDE) -> str:
    """A picture shrunk to fit ``side`` pixels, as a JPEG data URI."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        image = image.convert("RGBA")
        canvas = Image.new("RGB", image.size, "white")
        canvas.paste(image, mask=image.getchannel("A"))
        canvas.thumbnail((side, side))
        buffer = io.BytesIO()
        canvas.save(buffer, format="JPEG", quality=82)
    return data_uri(buffer.getvalue(), "image/jpeg")


class _Pictures:
    """Picture ids to keys of the embedded picture table, loading each picture at most once."""

    def __init__(self, dataset: Dataset | None):
        self.dataset = dataset
        self.keys: dict[str, str | None] = {}
        self.uris: dict[str, str] = {}

    def key(self, image_id: str) -> str | None:
        if image_id not in self.keys:
            self.keys[image_id] = None
            if self.dataset is not None and self.dataset.has_image(image_id):
                key = f"p{len(self.uris)}"
                self.uris[key] = thumbnail(self.dataset.image_bytes(image_id))
                self.keys[image_id] = key
        return self.keys[image_id]


def _transcript(data: RunData, pictures: _Pictures) -> dict[str, object]:
    stories = []
    for story in data.stories:
        turns = []
        for t in story.turns:
            images = [{"id": im.get("id", ""), "sha256": im.get("sha256", "")[:12], "key": pictures.key(im.get("id", ""))}
                      for im in t.images]
            turns.append({"number": t.turn + 1, "verdict": t.verdict, "feedback_kind": t.feedback_kind,
                          "prompt": t.prompt, "response": t.response, "error": t.error, "judge": t.judge,
                          "rationale": t.rationale, "expected": " / ".join(t.expected),
                          "images": images, "no_picture": "no picture" if data.pictures_shown(story) else f"images {data.images}"})
        verdict = ("undecided" if story.stopped else "failed" if not story.done
                   else "correct" if story.correct else "incorrect")
        stories.append({"id": story.story_id, "task": story.task, "category": story.category, "subset": story.subset,
                        "source": story.source, "verdict": verdict, "turns": turns})
    return {"name": data.run.name, "stories": stories}


def to_html_report(report: Report, *, dataset: Dataset | None = None, title: str = "CoMMET report") -> str:
    """The whole report as one HTML document."""
    from jinja2 import Environment, PackageLoader

    from commet.reports.plots import all_plots

    env = Environment(loader=PackageLoader("commet.reports", "templates"), autoescape=True)
    sections = [{"key": s.key, "title": s.title, "note": s.note, "header": s.header,
                 "rows": [[{"text": cell_text(c, s), "numeric": isinstance(c, Estimate)} for c in row]
                          for row in s.rows]} for s in report.sections]
    runs = [{"name": d.run.name, "model": d.run.model, "judge": d.run.judge, "dataset": d.run.dataset_name,
             "images": d.images, "feedback": d.feedback, "status": d.run.status, "stories": len(d.stories)}
            for d in report.runs]
    plots = [{"title": name, "uri": data_uri(png, "image/png")} for name, png in all_plots(report)]
    pictures = _Pictures(dataset)
    transcripts = [_transcript(d, pictures) for d in report.runs]
    return env.get_template("report.html.j2").render(
        title=title, runs=runs, sections=sections, notices=report.notices, plots=plots, transcripts=transcripts,
        pictures=pictures.uris,
        have_pictures=dataset is not None, resamples=report.bootstrap.resamples, seed=report.bootstrap.seed)
