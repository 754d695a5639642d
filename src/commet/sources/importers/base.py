"""What every importer shares: the records a benchmark file is read into, and the two protocols.

An importer only reads its benchmark's published files into :class:`SourceStory` records
(a story, its questions, where each came from). Turning those into StoryTurns under either
protocol, declaring the benchmark's tasks and recording its licence happens here, once, so
that every benchmark follows the same rules.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TypedDict

from commet.format.dataset import METADATA_FILE, Dataset
from commet.format.model import Feedback, Option, Rubric, StoryTurn, Turn
from commet.format.problems import FormatError, Problem
from commet.format.validate import ANSWER_IN_STORY
from commet.sources.bounded import InputFileError, depth_position, packed_kind, read_regular_file
from commet.sources.inputs import DEFAULT_MAX_BYTES
from commet.sources.table_files import KeyTwice, key_twice_line, refuse_key_twice
from commet.taxonomy import MENTAL_STATES, Task, Taxonomy
from commet.text import normalize

#: Correctness feedback between questions of the conversation protocol, in the paper's wording
#: (Appendix I: "Your answer is wrong.") with its positive counterpart.
RIGHT_FEEDBACK = "Your answer is right."
WRONG_FEEDBACK = "Your answer is wrong."


class Protocol(str, Enum):
    """How a story's questions are asked."""

    #: All of a story's questions in one multi-turn conversation, with correctness feedback.
    conversation = "conversation"
    #: Each question in a fresh one-turn conversation, as the original papers ask them.
    independent = "independent"


def declared_task(task_id: str, name: str, category: str, mental_states: tuple[str, ...],
                  description: str) -> Task:
    """A task the imported dataset declares (open taxonomy): its id, reporting category and states; the
    booklet's feedback kind and picture use do not apply."""
    return Task(task_id, name, category, mental_states, description, feedback="", picture="no")


@dataclass(frozen=True)
class Benchmark:
    """A published ToM benchmark: where it comes from and under which licence."""

    name: str  # the FORMAT word of `commet import`
    title: str
    licence: str
    url: str
    citation: str
    source_help: str  # which published file or folder to pass as SOURCE


@dataclass
class SourceQuestion:
    """One question as the benchmark publishes it, with the options it shows and its metadata."""

    text: str  # the question as asked, options included where the original prompt lists them
    answer: str  # the expected answer: the right option's text, or the open answer
    line: int | None = None
    options: list[Option] = field(default_factory=list)
    meta: dict[str, object] = field(default_factory=dict)
    rubric: Rubric | None = None
    #: for an open answer that is one of a closed set named in the story (ToMi's containers, OpenToM's two
    #: places): that set, which the judge decides by and the model is never shown (``Turn.candidates``)
    candidates: list[str] = field(default_factory=list)
    #: every expected answer when the question is a branch point (the booklet's "which do you like better?"):
    #: any one is right and fixes the story's branch; ``answer`` is the first
    branches: list[str] = field(default_factory=list)
    #: sources that script their own turns (the booklet): the narration told between the previous question and
    #: this one, the feedback this turn starts with, and its picture
    story: str = ""
    feedback: Feedback | None = None
    image: str | None = None

    @property
    def answers(self) -> list[str]:
        return list(self.branches) or [self.answer]


@dataclass
class SourceStory:
    """One story with its questions, read from the benchmark's file."""

    key: str  # unique within the import; becomes part of the StoryTurn id
    task: Task
    story: str
    questions: list[SourceQuestion]
    line: int | None = None
    meta: dict[str, object] = field(default_factory=dict)
    #: the source scripts the feedback between its questions (``SourceQuestion.feedback``): no generic
    #: correctness feedback is added in the conversation protocol
    scripted: bool = False
    image_dependent: bool = False
    pictures: dict[str, bytes] = field(default_factory=dict)  # image id -> bytes of the pictures its turns show


@dataclass(frozen=True)
class ImportOptions:
    """Choices some benchmarks publish more than one way of."""

    language: str = "en"  # ToMBench: "en" or "zh"
    context: str = "short"  # FANToM: the "short" or the "full" conversation


def source_error(file: str | Path, line: int | None, field_name: str | None, message: str,
                 story: str | None = None) -> FormatError:
    """A located error for a bad benchmark file (CLI: one line, exit 2)."""
    return FormatError([Problem(str(file), line, story, None, field_name, message)])


def read_text(path: Path) -> str:
    """A UTF-8 text file (a byte-order mark allowed, as published files have one), or a located error. Read by the
    bounded reader: a FIFO, a device (``/dev/zero``) or a file over the size limit is refused unread, never waited
    on or read without end."""
    try:
        data = read_regular_file(path, max_bytes=DEFAULT_MAX_BYTES, what="benchmark file")
    except FileNotFoundError:
        raise source_error(path, None, None, "file not found") from None
    except InputFileError as exc:
        raise source_error(path, None, None, str(exc)) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        packed = packed_kind(data[:512])
        if packed is not None:
            raise source_error(path, None, None, f"a {packed} file, not text: decompress or extract it and give "
                                                 "the file inside") from None
        raise source_error(path, None, None, f"not UTF-8 text: {exc.reason}") from None


def read_json(path: Path) -> object:
    """A JSON document (NaN allowed, as pandas writes it), or a located error: invalid JSON, an object writing a
    key twice (``json`` keeps the last, unsaid: which the authors meant is not guessed), nesting too deep to read."""
    text = read_text(path)
    try:
        return json.loads(text, object_pairs_hook=refuse_key_twice)
    except json.JSONDecodeError as exc:
        raise source_error(path, exc.lineno, None, f"invalid JSON: {exc.msg}") from None
    except KeyTwice as exc:
        raise source_error(path, key_twice_line(text, exc.key), exc.key, _TWICE) from None
    except RecursionError:
        raise source_error(path, deep_line(text), None, "invalid JSON: nested too deeply to be read") from None


def deep_line(text: str, limit: int = 500) -> int | None:
    """The line where ``text``'s JSON nests deeper than ``limit`` (:func:`~commet.sources.bounded.depth_position`,
    strings skipped): where a document too deep to parse goes wrong."""
    position = depth_position(text, 0, limit)
    return text.count("\n", 0, position) + 1 if position else None


def read_json_lines(path: Path) -> Iterator[tuple[int, object]]:
    """Each non-blank line of a JSON Lines file with its line number, parsed; invalid JSON, a key written twice in
    one object or nesting too deep is a located error."""
    for number, raw in enumerate(read_text(path).splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            yield number, json.loads(raw, object_pairs_hook=refuse_key_twice)
        except json.JSONDecodeError as exc:
            raise source_error(path, number, None, f"invalid JSON: {exc.msg}") from None
        except KeyTwice as exc:
            raise source_error(path, number, exc.key, _TWICE) from None
        except RecursionError:
            raise source_error(path, number, None, "invalid JSON: nested too deeply to be read") from None


_TWICE = "this key is written twice in one object: which value is meant is not guessed"


def read_csv(path: Path, delimiter: str = ",") -> Iterator[tuple[int, list[str]]]:
    """Each record of a CSV file with the line it ends on, the header's first; a record with more or fewer fields
    than the header (its cells would be read under other columns) or a quote closed before its field ends is a
    located error."""
    reader = csv.reader(io.StringIO(read_text(path), newline=""), delimiter=delimiter, strict=True)
    width: int | None = None
    try:
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue
            width = len(row) if width is None else width
            if len(row) != width:
                raise source_error(path, reader.line_num, None, f"{len(row)} fields, the header has {width}: the "
                                   "cells would be read under other columns (a separator too many or too few, or a "
                                   "quote not closed?)")
            yield reader.line_num, row
    except csv.Error as exc:
        raise source_error(path, reader.line_num, None, f"not CSV as written: {exc}") from None


def json_line(text: str, needle: str) -> int | None:
    """The line of the first occurrence of ``needle`` (a key or value as written), for located errors."""
    index = text.find(needle)
    return text.count("\n", 0, index) + 1 if index >= 0 else None


def key_lines(text: str, key: str, count: int) -> list[int | None]:
    """The line of each record of a JSON list, found by a key every record starts with; None when unsure."""
    found = [text.count("\n", 0, m.start()) + 1 for m in re.finditer(rf'"{re.escape(key)}"\s*:', text)]
    return list(found) if len(found) == count else [None] * count


def slug(text: str) -> str:
    """A lower-case id made of letters, digits and underscores."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


#: what may stand between an option's own label and its text when a file repeats the label inside the option
#: ("A. x", "A: x", "A：x" with a full-width colon, "A、x", "A．x", "A) x", "(A) x", "（A）x", "[A] x"); a label followed
#: by a space alone ("A sad face") is a word, never stripped
_LABEL_AFTER = ".．:：、)）]】"
_LABEL_BRACKETS = {"(": ")）", "（": ")）", "[": "]】", "【": "]】"}


def without_own_label(text: str, label: str) -> str:
    """``text`` without the copy of its own ``label`` that some files write at its start (ToMBench's
    "A: 故事中有人说了不合适的话" for option A), in any of the notations of :data:`_LABEL_AFTER`; otherwise ``text``."""
    rest = text.lstrip()
    closers = _LABEL_AFTER
    if rest[:1] in _LABEL_BRACKETS:
        closers, rest = _LABEL_BRACKETS[rest[0]], rest[1:].lstrip()
    if len(rest) >= 2 and rest[0].upper() == label.upper() and rest[1] in closers:
        stripped = rest[2:].strip()
        return stripped or text.strip()
    return text.strip()


def closed_vocabulary(key_set: Sequence[str], vocabulary: Iterable[str]) -> list[str]:
    """Judge-only candidates for an open answer scored by exact match against a benchmark's closed answer
    vocabulary: ``key_set`` (the story's own choices, the expected answer among them) first, then every other
    word of the vocabulary, once (compared as the judge compares them). A reply that is exactly one of them is
    decided: right when it is the expected answer, wrong otherwise, as exact-match scoring decides it."""
    seen: dict[str, str] = {}
    for word in (*key_set, *vocabulary):
        seen.setdefault(normalize(word), word.strip())
    seen.pop("", None)
    return list(seen.values())


def option_lines(options: Sequence[Option], *, template: str = "{label}. {text}") -> str:
    """The options as the original prompts list them, one per line."""
    return "\n".join(template.format(label=o.label or "", text=o.text) for o in options)


def answer_option(options: Sequence[Option], label: str, *, file: str | Path, line: int | None,
                  story: str | None = None, field_name: str = "answer") -> Option:
    """The option a published answer letter names; a letter that names none is a located error."""
    wanted = label.strip().strip("()[]").rstrip(").:").upper()
    for option in options:
        if (option.label or "").upper() == wanted:
            return option
    known = ", ".join(o.label or "?" for o in options)
    raise source_error(file, line, field_name, f"answer {label!r} names no option (options: {known})", story)


def with_answer_label(question: SourceQuestion) -> SourceQuestion:
    """Record the right option's label in the question's metadata (``answer_label``)."""
    for option in question.options:
        if option.text == question.answer and option.label:
            question.meta.setdefault("answer_label", option.label)
            break
    return question


class _SharedFields(TypedDict):
    """The StoryTurn fields every StoryTurn of one source story shares."""

    task: str
    category: str
    mental_states: list[str]
    image_dependent: bool
    source: str


def build_storyturns(benchmark: Benchmark, stories: Iterable[SourceStory],
                     protocol: Protocol) -> tuple[list[StoryTurn], list[int]]:
    """StoryTurns under one protocol, with the source line of each (for located validation)."""
    storyturns: list[StoryTurn] = []
    lines: list[int] = []
    for story in stories:
        task = story.task
        key = story.key.replace("/", "_").replace("\\", "_")  # ids end up in file names and URLs
        common: _SharedFields = {"task": task.id, "category": task.category_for(story.image_dependent),
                                 "mental_states": list(task.mental_states), "image_dependent": story.image_dependent,
                                 "source": benchmark.name}
        if protocol is Protocol.conversation:
            turns = []
            for k, question in enumerate(story.questions):
                feedback = question.feedback if story.scripted else \
                    Feedback(right=RIGHT_FEEDBACK, wrong=WRONG_FEEDBACK) if k > 0 else None
                told = _joined(story.story if k == 0 else "", question.story)
                turns.append(_turn(told, question, feedback, k, question.image))
            storyturns.append(StoryTurn(id=f"{benchmark.name}-{key}", turns=turns,
                                        meta={**story.meta, "protocol": protocol.value}, **common))
            lines.append(story.line or 0)
            continue
        for group in _asked_together(story.questions):
            k = group[0]
            told = _joined(story.story, *_told_before(story.questions[:k + 1]))
            image = next((q.image for q in reversed(story.questions[:k + 1]) if q.image), None)
            alone: _SharedFields = {**common, "image_dependent": story.image_dependent and image is not None}
            alone["category"] = task.category_for(alone["image_dependent"])
            turns = [_turn(told, story.questions[k], None, k, image)]
            turns += [_turn(story.questions[j].story, story.questions[j], story.questions[j].feedback, j,
                            story.questions[j].image) for j in group[1:]]
            storyturns.append(StoryTurn(
                id=f"{benchmark.name}-{key}-q{k + 1}", turns=turns,
                meta={**story.meta, "protocol": protocol.value, "story": story.key}, **alone))
            lines.append(story.questions[k].line or story.line or 0)
    return storyturns, lines


def _asked_together(questions: Sequence[SourceQuestion]) -> list[list[int]]:
    """The questions of a story in fresh conversations: each alone, except a branch point and the branch points
    after it, whose right answer depends on the branch it fixed ("Which do you like better?", then "So which will
    Henry choose?"): alone, the second would accept any answer."""
    groups: list[list[int]] = []
    for k, question in enumerate(questions):
        previous = questions[groups[-1][-1]] if groups else None
        if previous is not None and len(question.answers) > 1 and len(previous.answers) == len(question.answers):
            groups[-1].append(k)
        else:
            groups.append([k])
    return groups


def _joined(*parts: str) -> str:
    return "\n\n".join(part.strip() for part in parts if part and part.strip())


def _told_before(questions: Sequence[SourceQuestion]) -> list[str]:
    """What a fresh conversation must tell before the last of ``questions``: each one's narration and the
    unconditional part of its feedback (conditional feedback depends on answers that were never given)."""
    told: list[str] = []
    for k, question in enumerate(questions):
        if k and question.feedback is not None and question.feedback.always:
            told.append(question.feedback.always)
        told.append(question.story)
    return told


def _turn(story: str, question: SourceQuestion, feedback: Feedback | None, position: int,
          image: str | None = None) -> Turn:
    # The benchmark's authors decided what its stories tell: an answer they take from the story (ToMi's container,
    # the booklet's "behind the chair") is the task, not a leak (the leak check guards stories written here)
    meta = {**question.meta, "position": position + 1, ANSWER_IN_STORY: True}
    return Turn(story=story, feedback=feedback, question=question.text, image=image, answers=question.answers,
                options=list(question.options), candidates=list(question.candidates), rubric=question.rubric,
                meta=meta)


@dataclass
class ImportResult:
    """An imported benchmark: the dataset (with the tasks it declares) and where it came from."""

    dataset: Dataset
    provenance: dict[str, object]

    def metadata(self) -> dict[str, object]:
        """``dataset.json``: the dataset's own metadata (declared taxonomy included) and its provenance."""
        return {**self.dataset.metadata(), "source": self.provenance}

    def save(self, folder: str | Path) -> Path:
        """Write the dataset folder (call it only once the whole import has succeeded)."""
        folder = self.dataset.save(folder)
        (folder / METADATA_FILE).write_text(json.dumps(self.metadata(), indent=2, ensure_ascii=False) + "\n",
                                            encoding="utf-8")
        return folder


def declared_tasks(stories: Iterable[SourceStory]) -> list[Task]:
    """The tasks the imported stories use, in order of first use: what the dataset declares.

    A task whose stories are reported under more than one category (a ToMBench file mixes abilities:
    its Strange Story Task has Belief, Desire, Emotion, Intention and NLC items) declares the first as
    its category and the others as further categories, with every mental state its stories probe.
    """
    tasks: dict[str, Task] = {}
    for story in stories:
        task = tasks.setdefault(story.task.id, story.task)
        if story.task.category not in task.categories or not set(story.task.mental_states) <= set(task.mental_states):
            others = tuple(dict.fromkeys([*task.other_categories, story.task.category]))
            tasks[task.id] = dataclasses.replace(
                task, other_categories=tuple(c for c in others if c != task.category),
                mental_states=tuple(dict.fromkeys([*task.mental_states, *story.task.mental_states])))
    return list(tasks.values())


def build_dataset(benchmark: Benchmark, stories: list[SourceStory], protocol: Protocol, source: Path,
                  language: str = "en", variant: str | None = None, taxonomy: Taxonomy | None = None) -> ImportResult:
    """The imported dataset in memory: StoryTurns, licence, declared tasks and provenance.

    Its name is ``FORMAT[-VARIANT]-PROTOCOL`` (``tombench-zh-independent``): each published version
    and protocol is a dataset of its own. Its tasks are those the stories use, declared in
    ``dataset.json``, unless ``taxonomy`` is given (the booklet's own 18 tasks).
    """
    if not stories:
        raise source_error(source, None, None, f"no {benchmark.title} questions found")
    storyturns, lines = build_storyturns(benchmark, stories, protocol)
    tasks = declared_tasks(stories)
    # a task's other categories too (a ToMBench file holds items of several abilities: one file alone declares them)
    categories = tuple(dict.fromkeys(category for task in tasks for category in (task.category, *task.other_categories)))
    states = tuple(dict.fromkeys([*MENTAL_STATES, *(s for task in tasks for s in task.mental_states)]))
    name = "-".join(part for part in (benchmark.name, variant, protocol.value) if part)
    taxonomy = taxonomy or Taxonomy(tuple(tasks), categories, states, declared=True)
    dataset = Dataset(storyturns=storyturns, name=name, version="1", licence=benchmark.licence, taxonomy=taxonomy,
                      languages=[language],
                      description=f"{benchmark.title}{f' ({variant})' if variant else ''} imported from "
                                  f"{source.name} ({protocol.value} protocol) by `commet import {benchmark.name}`.",
                      source_file=str(source), line_list=lines)
    for storyturn, line in zip(storyturns, lines, strict=True):
        dataset.lines.setdefault(storyturn.id, line)
    for story in stories:
        dataset.images.update(story.pictures)
    provenance: dict[str, object] = {
        "benchmark": benchmark.title, "format": benchmark.name, "url": benchmark.url,
        "citation": benchmark.citation, "licence": benchmark.licence, "file": source.name,
        "protocol": protocol.value, "variant": variant, "language": language, "stories": len(stories),
        "questions": sum(len(s.questions) for s in stories),
    }
    if protocol is Protocol.conversation:
        provenance["feedback"] = {"right": RIGHT_FEEDBACK, "wrong": WRONG_FEEDBACK}
    return ImportResult(dataset, provenance)
