"""The transcripts of an HTML report as compact data: every StoryTurn of every run, read by the page's script.

A report on 20,000 StoryTurns holds some 60,000 prompts and replies. Written as HTML elements they
made a 46 MB page that took seconds to open and hundreds of megabytes to build. Here they are
columns of numbers pointing into one table of distinct texts (a prompt ten runs showed is stored
once), gzip-compressed and embedded as base64. The page unpacks them in the browser
(``DecompressionStream``), then draws only the StoryTurns on screen, and a story's turns only
when it is opened.

Each StoryTurn carries its :class:`~commet.reports.outcome.StoryOutcome`, the one the tables count,
and the first turn not answered right (0 when every turn was), by which the page filters and sorts.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Sequence

from commet.reports.analyses import RunData, StoryResult
from commet.reports.outcome import StoryOutcome
from commet.reports.pictures import DatasetFinder, Pictures

#: The outcomes and turn verdicts in the order the data numbers them.
OUTCOMES = tuple(StoryOutcome)
VERDICTS = ("right", "wrong", "undecided", "no reply")
STORY_COLUMNS = ("run", "id", "task", "category", "subset", "source", "outcome", "turn", "turns", "shown")
TURN_COLUMNS = ("prompt", "response", "verdict", "feedback", "expected", "judge", "rationale", "error", "images")


class Texts:
    """Distinct texts, each stored once and named by its position (-1 for no text)."""

    def __init__(self) -> None:
        self.positions: dict[str | None, int] = {None: -1}
        self.values: list[str] = []

    def __call__(self, text: str | None) -> int:
        position = self.positions.get(text)
        if position is None:
            position = self.positions[text] = len(self.values)
            self.values.append(text)  # type: ignore[arg-type]  # (None is in positions from the start)
        return position


def first_turn_not_right(story: StoryResult) -> int:
    """The number (from 1) of the first turn whose answer was not judged right; 0 when every turn was."""
    return next((k + 1 for k, turn in enumerate(story.turns) if turn.correct is not True or not turn.answered), 0)


def transcript_data(runs: Sequence[RunData], pictures: Pictures, finder: DatasetFinder) -> dict[str, object]:
    """Every run's StoryTurns and turns, column by column; texts as positions in ``texts``."""
    texts = Texts()
    stories: dict[str, list[int]] = {name: [] for name in STORY_COLUMNS}
    turns: dict[str, list[object]] = {name: [] for name in TURN_COLUMNS}
    outcome_number = {outcome: number for number, outcome in enumerate(OUTCOMES)}
    verdict_number = {verdict: number for number, verdict in enumerate(VERDICTS)}
    notes = []
    for run_number, data in enumerate(runs):
        found = finder.for_run(data)
        settings = data.run.settings
        missing = 0
        for story in data.stories:
            stories["run"].append(run_number)
            for name, value in (("id", story.story_id), ("task", story.task), ("category", story.category),
                                ("subset", story.subset), ("source", story.source)):
                stories[name].append(texts(value))
            stories["outcome"].append(outcome_number[story.outcome])
            stories["turn"].append(first_turn_not_right(story))
            stories["turns"].append(len(story.turns))
            stories["shown"].append(int(data.pictures_shown(story)))
            for turn in story.turns:
                images = []
                for image in turn.images:
                    key = pictures.key(image.get("id", ""), image.get("sha256", ""), found.sources, settings)
                    missing += key is None
                    images.append([texts(image.get("id", "")), texts(image.get("sha256", "")[:12]), key or ""])
                turns["images"].append(images)
                turns["verdict"].append(verdict_number[turn.verdict])
                for name, text in (("prompt", turn.prompt), ("response", turn.response),
                                   ("feedback", turn.feedback_kind), ("expected", " / ".join(turn.expected)),
                                   ("judge", turn.judge), ("rationale", turn.rationale), ("error", turn.error)):
                    turns[name].append(texts(text))
        note = found.note
        if found.sources and missing:
            note += f" {missing} picture(s) of this run were not found there and are shown by id."
        notes.append({"name": data.run.name, "images": data.images, "note": note})
    return {"outcomes": [str(o) for o in OUTCOMES], "verdicts": list(VERDICTS), "runs": notes,
            "stories": stories, "turns": turns, "texts": texts.values, "pictures": pictures.uris}


def packed(data: dict[str, object]) -> str:
    """``data`` as JSON (ASCII: a lone surrogate in a reply stays a valid escape), gzip-compressed, base64."""
    text = json.dumps(data, separators=(",", ":"))
    return base64.b64encode(gzip.compress(text.encode("ascii"), compresslevel=6, mtime=0)).decode("ascii")


def unpacked(blob: str) -> dict[str, object]:
    """The data :func:`packed` wrote (what the page's script reads; for tests and tools)."""
    return json.loads(gzip.decompress(base64.b64decode(blob)))  # type: ignore[no-any-return]
