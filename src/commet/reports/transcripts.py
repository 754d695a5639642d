"""The transcripts of an HTML report as compact data: every StoryTurn of every run, read by the page's script.

A report on 20,000 StoryTurns holds some 60,000 prompts and replies. Written as HTML elements they
made a 46 MB page that took seconds to open and hundreds of megabytes to build. Here they are
columns of numbers pointing into one table of distinct texts (a prompt ten runs showed is stored
once), gzip-compressed and embedded as base64. The page unpacks them in the browser
(``DecompressionStream``), then draws only the StoryTurns on screen, and a story's turns only
when it is opened.

Each StoryTurn carries its :class:`~commet.engine.outcome.StoryOutcome`, the one the tables count,
and the first turn not answered right (0 when every turn was), by which the page filters and sorts.

The data: ``runs`` (name, images setting, pictures note), ``stories`` (columns ``run``, ``id``,
``task``, ``category``, ``subset``, ``source``, ``outcome``, ``turn``, ``turns``, ``shown``: one entry
per StoryTurn, run after run, in dataset order), ``turns`` (columns ``prompt``, ``response``,
``verdict``, ``feedback``, ``expected``, ``judge``, ``rationale``, ``error``, ``images``: one entry per
turn, story after story), ``texts``, ``pictures`` (key to data URI), ``outcomes`` and ``verdicts``.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Sequence
from itertools import chain

from commet.engine.outcome import StoryOutcome
from commet.reports.analyses import RunData, StoryResult
from commet.reports.pictures import DatasetFinder, Pictures

#: The outcomes and turn verdicts in the order the data numbers them.
OUTCOMES = tuple(StoryOutcome)
VERDICTS = ("right", "wrong", "undecided", "no reply")


def first_turn_not_right(story: StoryResult) -> int:
    """The number (from 1) of the first turn whose answer was not judged right; 0 when every turn was."""
    return next((k + 1 for k, turn in enumerate(story.turns) if turn.correct is not True or not turn.answered), 0)


def numbered(columns: dict[str, list[str | None]]) -> tuple[dict[str, list[int]], list[str]]:
    """Each column of texts as positions in one list of the distinct texts (-1 for no text).

    (Half a million texts in a large report: the distinct ones are found and looked up by C loops,
    ``dict.fromkeys`` and ``map``, not Python ones.)
    """
    texts = [text for text in dict.fromkeys(chain.from_iterable(columns.values())) if text is not None]
    position: dict[str | None, int] = {text: number for number, text in enumerate(texts)}
    position[None] = -1
    return {name: list(map(position.__getitem__, column)) for name, column in columns.items()}, texts


def transcript_data(runs: Sequence[RunData], pictures: Pictures, finder: DatasetFinder) -> dict[str, object]:
    """Every run's StoryTurns and turns, column by column (the module's docstring lists the columns)."""
    listed = [(number, data, story) for number, data in enumerate(runs) for story in data.stories]
    turned = [turn for _, _, story in listed for turn in story.turns]
    story_texts: dict[str, list[str | None]] = {
        "id": [s.story_id for _, _, s in listed], "task": [s.task for _, _, s in listed],
        "category": [s.category for _, _, s in listed], "subset": [s.subset for _, _, s in listed],
        "source": [s.source for _, _, s in listed]}
    turn_texts: dict[str, list[str | None]] = {
        "prompt": [t.prompt for t in turned], "response": [t.response for t in turned],
        "feedback": [t.feedback_kind for t in turned], "expected": [" / ".join(t.expected) for t in turned],
        "judge": [t.judge for t in turned], "rationale": [t.rationale for t in turned],
        "error": [t.error for t in turned]}
    images: list[list[tuple[str, str, str | None]]] = []
    notes = []
    for data in runs:
        found, missing = finder.for_run(data), 0
        for story in data.stories:
            for turn in story.turns:
                shown = []
                for image in turn.images:
                    image_id, sha256 = image.get("id", ""), image.get("sha256", "")
                    key = pictures.key(image_id, sha256, found.sources, data.run.settings)
                    missing += key is None
                    shown.append((image_id, sha256[:12], key))
                images.append(shown)
        note = found.note
        if found.sources and missing:
            note += f" {missing} picture(s) of this run were not found there and are shown by id."
        notes.append({"name": data.run.name, "images": data.images, "note": note})
    picture_texts: list[str | None] = [text for shown in images for image_id, sha, _ in shown for text in (image_id, sha)]
    numbers, texts = numbered({**story_texts, **turn_texts, "pictures": picture_texts})
    picture_numbers = iter(numbers.pop("pictures"))
    outcome_number = {outcome: number for number, outcome in enumerate(OUTCOMES)}
    verdict_number = {verdict: number for number, verdict in enumerate(VERDICTS)}
    stories = {"run": [number for number, _, _ in listed], **{name: numbers[name] for name in story_texts},
               "outcome": [outcome_number[s.outcome] for _, _, s in listed],
               "turn": [first_turn_not_right(s) for _, _, s in listed], "turns": [len(s.turns) for _, _, s in listed],
               "shown": [int(d.pictures_shown(s)) for _, d, s in listed]}
    turns = {**{name: numbers[name] for name in turn_texts}, "verdict": [verdict_number[t.verdict] for t in turned],
             "images": [[[next(picture_numbers), next(picture_numbers), key or ""] for _, _, key in shown]
                        for shown in images]}
    return {"outcomes": [str(o) for o in OUTCOMES], "verdicts": list(VERDICTS), "runs": notes,
            "stories": stories, "turns": turns, "texts": texts, "pictures": pictures.uris}


def packed(data: dict[str, object]) -> str:
    """``data`` as JSON (ASCII: a lone surrogate in a reply stays a valid escape), gzip-compressed, base64."""
    text = json.dumps(data, separators=(",", ":"))
    return base64.b64encode(gzip.compress(text.encode("ascii"), compresslevel=6, mtime=0)).decode("ascii")


def unpacked(blob: str) -> dict[str, object]:
    """The data :func:`packed` wrote (what the page's script reads; for tests and tools)."""
    data = json.loads(gzip.decompress(base64.b64decode(blob)))
    if not isinstance(data, dict):
        raise ValueError("packed report data is a JSON object; this blob holds something else")
    return data
