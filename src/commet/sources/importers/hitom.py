"""Hi-ToM (Wu et al., 2023): ``Hi-ToM_data.json``, higher-order beliefs up to the fourth order.

The file is ``{"data": [record, ...]}``; each record holds a numbered ``story``, one
``question`` of ToM order ``question_order`` (0 to 4), ``choices`` written as
``"A. blue_drawer, B. green_crate, ..."`` and the ``answer`` (the right choice's text).
Records that tell the same story are one story with several questions. The published file holds every
question once per ``prompting_type`` (``CoTP`` and ``VP``: how the authors prompted, not what they asked):
a question is imported once, and the story's ``meta.prompting_types`` lists the types it came with.
"""

from __future__ import annotations

import re
from pathlib import Path

from commet.format.model import Option
from commet.sources.importers import base

TASKS = {
    False: base.declared_task("hitom_no_tell", "Hi-ToM without communication", "Belief", ("belief",),
                              "stories without communication between agents; belief questions of order 0 to 4"),
    True: base.declared_task("hitom_tell", "Hi-ToM with communication (deception)", "Belief",
                             ("belief", "intention"),
                             "stories where agents tell each other things, possibly lies; belief questions of "
                             "order 0 to 4"),
}

_CHOICE = re.compile(r"(?:^|,\s*)([A-Z])\.\s+")
REQUIRED = ("story", "question", "choices", "answer")


def parse_choices(choices: str) -> list[Option]:
    """``"A. x, B. y"`` -> options labelled A and B (texts may not contain ', X. ')."""
    marks = list(_CHOICE.finditer(choices))
    return [Option(label=m.group(1), text=choices[m.end(): marks[i + 1].start() if i + 1 < len(marks) else None].strip())
            for i, m in enumerate(marks)]


def read(source: Path, options: base.ImportOptions) -> list[base.SourceStory]:
    document = base.read_json(source)
    records = document.get("data") if isinstance(document, dict) else document
    if not isinstance(records, list):
        raise base.source_error(source, 1, "data", "expected {\"data\": [records]} or a list of records")
    lines = base.key_lines(base.read_text(source), "prompting_type", len(records))
    stories: dict[str, base.SourceStory] = {}
    asked: dict[str, set[tuple[str, str, object]]] = {}  # per story: (question, answer, order) imported
    for index, record in enumerate(records):
        line = lines[index]
        where = f"data[{index}]"
        if not isinstance(record, dict):
            raise base.source_error(source, line, where, "expected a record object")
        for name in REQUIRED:
            value = record.get(name)
            if value is not None and not isinstance(value, str):  # the published file writes each as a string
                example = " ('A. option, B. option, ...')" if name == "choices" else ""
                raise base.source_error(source, line, f"{where}.{name}",
                                        f"must be a string{example}, not {type(value).__name__}")
            if value is None or not value.strip():
                raise base.source_error(source, line, f"{where}.{name}", "missing or empty")
        choices = parse_choices(record["choices"])
        if len(choices) < 2:
            raise base.source_error(source, line, f"{where}.choices", "expected 'A. option, B. option, ...'")
        answer = record["answer"].strip()
        if answer not in {c.text for c in choices}:
            raise base.source_error(source, line, f"{where}.answer", f"answer {answer!r} is not one of the choices")
        story_text = record["story"].strip()
        story = stories.get(story_text)
        if story is None:
            deception = bool(record.get("deception"))
            story = base.SourceStory(
                key=f"{len(stories) + 1:04d}", task=TASKS[deception],
                story=story_text, questions=[], line=line,
                meta={"deception": deception, "story_length": record.get("story_length"),
                      "sample_id": record.get("sample_id"), "prompting_types": []})
            stories[story_text] = story
            asked[story_text] = set()
        prompting = record.get("prompting_type")
        kinds = story.meta["prompting_types"]
        if isinstance(kinds, list) and prompting is not None and prompting not in kinds:
            kinds.append(prompting)
        order = record.get("question_order")
        same = (record["question"].strip(), answer, order)
        if same in asked[story_text]:
            continue  # the question again, under another prompting type: asked once
        asked[story_text].add(same)
        question = base.SourceQuestion(
            text=f"{record['question'].strip()}\nChoices:\n{base.option_lines(choices)}", answer=answer, line=line,
            options=choices, meta={"question_type": f"order_{order}", "order": order})
        story.questions.append(base.with_answer_label(question))
    return list(stories.values())
