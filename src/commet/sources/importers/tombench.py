"""ToMBench (Chen et al., 2024): ``data/*.jsonl``, one file per task, Chinese and English fields.

Each line holds the ability (``"能力\\nABILITY"``, e.g. ``"Belief: Location false beliefs"``),
an index, the story, question and options A-D in Chinese (``故事``, ``问题``, ``选项A``..) and
in English (``STORY``, ``QUESTION``, ``OPTION-A``..), and the answer letter
(``"答案\\nANSWER"``). Two-option items leave C and D empty (``NaN``); options may start
with their own letter (``"A. ..."``, ``"A: ..."``, ``"A：..."``); English options that the translation made identical keep
their Chinese original in brackets. Consecutive lines with the same story are one story.
SOURCE is one task file or the ``data`` folder (every ``*.jsonl`` in it, by name).
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

from commet.format.model import Option
from commet.sources.importers import base
from commet.taxonomy import Task
from commet.text import normalize

#: ABILITY prefixes (the ATOMS dimensions ToMBench uses) -> reporting category.
CATEGORIES = {"belief": "Belief", "desire": "Desire", "emotion": "Emotion", "intention": "Intention",
              "knowledge": "Knowledge", "percept": "Percept", "non-literal communication": "NLC"}
ABILITY = "能力\nABILITY"
INDEX = "序号\nINDEX"
ANSWER = "答案\nANSWER"
FIELDS = {"en": ("STORY", "QUESTION", "OPTION-"), "zh": ("故事", "问题", "选项")}
LABELS = "ABCD"
HEADINGS = {"en": ("[Question]", "[Candidate Answers]"), "zh": ("[问题]", "[答案选项]")}


def variant(source: Path, options: base.ImportOptions) -> str:
    """The language: ``tombench-en-...`` and ``tombench-zh-...`` are two datasets."""
    return options.language


def language(source: Path, options: base.ImportOptions) -> str:
    return options.language


def files(source: Path) -> list[Path]:
    if source.is_dir():
        found = sorted(source.glob("*.jsonl"))
        if not found:
            raise base.source_error(source, None, None, "no *.jsonl task files in this folder")
        return found
    return [source]


def read(source: Path, options: base.ImportOptions) -> list[base.SourceStory]:
    if options.language not in FIELDS:
        raise base.source_error(source, None, "language", f"ToMBench has 'en' and 'zh', not {options.language!r}")
    stories: list[base.SourceStory] = []
    for path in files(source):
        stories.extend(_read_file(path, options.language))
    return stories


def task_for(path: Path, ability: str) -> Task:
    """The task a ToMBench file declares: named after the file, reported under its ability's dimension."""
    dimension = ability.split(":", 1)[0].strip().lower()
    category = CATEGORIES.get(dimension, ability.split(":", 1)[0].strip())
    states = ("non_literal_communication",) if category == "NLC" else (category.lower(),)
    return base.declared_task(f"tombench_{base.slug(path.stem)}", f"ToMBench {path.stem}", category, states,
                              f"ToMBench task '{path.stem}' ({ability})")


def _text(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value).strip()


def _options(record: dict[str, object], option_field: str) -> list[Option]:
    """The options A-D a record has (C and D may be empty), without the copy of their own letter some texts start
    with, in whatever notation ("A. x", "A: x", "A：x", "(A) x")."""
    choices: list[Option] = []
    for label in LABELS:
        text = base.without_own_label(_text(record.get(option_field + label)), label)
        if text:
            choices.append(Option(label=label, text=text))
    return choices


def _told_apart(english: list[Option], chinese: list[Option]) -> list[Option]:
    """English options that the translation made identical (生气 and 愤怒 both "Angry") keep their Chinese
    original in brackets, so that a reply naming one can be judged: the original options differ."""
    seen = Counter(normalize(option.text) for option in english)
    original = {option.label: option.text for option in chinese}
    return [Option(label=o.label, text=f"{o.text} ({original[o.label]})")
            if seen[normalize(o.text)] > 1 and original.get(o.label) else o for o in english]


def _read_file(path: Path, language: str) -> list[base.SourceStory]:
    story_field, question_field, option_field = FIELDS[language]
    stories: list[base.SourceStory] = []
    for number, record in base.read_json_lines(path):
        if not isinstance(record, dict):
            raise base.source_error(path, number, None, "expected one JSON object per line")
        for name in (ABILITY, story_field, question_field, ANSWER, *(option_field + label for label in LABELS)):
            if isinstance(record.get(name), (list, dict, bool)):  # text only: a list would become "['...']"
                raise base.source_error(path, number, name.replace("\n", " "),
                                        f"must be text, not {type(record[name]).__name__}")
        for name in (ABILITY, story_field, question_field, ANSWER):
            if not _text(record.get(name)):
                raise base.source_error(path, number, name.replace("\n", " "), "missing or empty")
        choices = _options(record, option_field)
        if language == "en":
            choices = _told_apart(choices, _options(record, FIELDS["zh"][2]))
        if len(choices) < 2:
            raise base.source_error(path, number, option_field + "A", "fewer than two options")
        right = base.answer_option(choices, _text(record[ANSWER]), file=path, line=number,
                                   field_name=ANSWER.replace("\n", " "))
        task = task_for(path, _text(record[ABILITY]))
        story_text = _text(record[story_field])
        if not stories or stories[-1].story != story_text or stories[-1].task.id != task.id:
            stories.append(base.SourceStory(key=f"{base.slug(path.stem)}-{len(stories) + 1:04d}", task=task,
                                            story=story_text, questions=[], line=number,
                                            meta={"language": language, "file": path.name}))
        asked, listed = HEADINGS[language]
        question = base.SourceQuestion(
            text=f"{asked}\n{_text(record[question_field])}\n\n{listed}\n{base.option_lines(choices)}",
            answer=right.text, line=number, options=choices,
            meta={"question_type": _text(record[ABILITY]), "index": record.get(INDEX)})
        stories[-1].questions.append(base.with_answer_label(question))
    return stories
