"""ToMi (Le et al., 2019): bAbI-style ``*.txt`` stories with a parallel ``*.trace`` file.

Each example is numbered lines ``N sentence`` ending in ``N question<TAB>answer<TAB>supporting``;
numbering restarts at 1 for the next example. Consecutive examples that tell the same story
are one story with several questions. The ``.trace`` file beside the ``.txt`` (one line per
example) gives the question type (``first_order_1_tom``, ``second_order_0_no_tom``,
``reality``, ``memory``) and the story type (``true_belief``, ``false_belief``,
``second_order_false_belief``). Every answer is one of the containers the story names ("The pear is
in the red_box.", "Mila moved the pear to the green_basket."). ToMi scores by exact match, so the judge-only
candidates (``Turn.candidates``) of a where-question are ToMi's whole answer vocabulary: the story's containers
first, then every container and room the file names ("entered the kitchen") and ToMi's world lists them in
(``tomi_world.json``). A reply that is exactly one of them is decided, right or wrong, as ToMi decides it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from commet.format.problems import FormatError
from commet.sources.importers import base
from commet.text import normalize

STORY_TYPES = {
    "true_belief": "every agent saw every move",
    "false_belief": "an agent missed a move",
    "second_order_false_belief": "an agent has a false belief about another agent's belief",
}
TASKS = {kind: base.declared_task(f"tomi_{kind}", f"ToMi {kind.replace('_', ' ')}", "Belief", ("belief",), description)
         for kind, description in STORY_TYPES.items()}
UNTRACED = base.declared_task("tomi", "ToMi", "Belief", ("belief",), "ToMi story read without its .trace file")

_LINE = re.compile(r"^(\d+) (.*)$")
#: the sentences that name a container: where the object starts and where it is moved to
_CONTAINER_SENTENCES = (re.compile(r"^The .+ is in the (\S+)\.$"), re.compile(r"^\S+ moved the .+ to the (\S+)\.$"))
#: the sentences that name a room: "Aria entered the front_yard.", "Aiden exited the front_yard."
_ROOM_SENTENCE = re.compile(r"^\S+(?:, \S+)*(?: and \S+)? (?:entered|exited) the (\S+)\.$")
_QUESTION_TYPE = re.compile(r"^(first_order|second_order)_([01])_(tom|no_tom)$")


def _question_meta(kind: str) -> dict[str, object]:
    match = _QUESTION_TYPE.match(kind)
    if match:
        return {"question_type": match.group(1), "order": 1 if match.group(1) == "first_order" else 2,
                "tom": match.group(3) == "tom", "trace_question": kind}
    return {"question_type": kind, "order": 0, "tom": False, "trace_question": kind}


#: Without a trace file the question type follows from ToMi's four question templates.
#: question templates: fixed pieces with some text (one character or more, one line) between each two
_TEMPLATES = (
    (("Where was the ", " at the beginning?"), "memory"),
    (("Where is the ", " really?"), "reality"),
    (("Where does ", " think that ", " searches for the ", "?"), "second_order"),
    (("Where will ", " look for the ", "?"), "first_order"),
)


def _fits(question: str, pieces: tuple[str, ...]) -> bool:
    """Whether ``question`` is ``pieces`` with some text between each two (each piece found at its earliest
    place: linear, where the equivalent pattern with several ``.+`` backtracked cubically)."""
    first, *middle, last = pieces
    if "\n" in question or not question.startswith(first) or not question.endswith(last):
        return False
    at = len(first)
    for piece in middle:
        found = question.find(piece, at + 1)
        if found < 0:
            return False
        at = found + len(piece)
    return len(question) - len(last) >= at + 1


def _untraced_meta(question: str) -> dict[str, object]:
    kind = next((name for pieces, name in _TEMPLATES if _fits(question, pieces)), "unknown")
    return {"question_type": kind, "order": {"first_order": 1, "second_order": 2}.get(kind, 0)}


def containers(sentences: list[str]) -> list[str]:
    """The containers a story names, in order: ToMi's answers are always one of them, and ToMi is scored by exact
    match among them, so they are the judge's candidates (a reply naming the other container is wrong)."""
    found: dict[str, None] = {}
    for sentence in sentences:
        for pattern in _CONTAINER_SENTENCES:
            match = pattern.match(sentence)
            if match:
                found.setdefault(match.group(1))
    return list(found)


@cache
def world_vocabulary() -> tuple[str, ...]:
    """ToMi's containers (in each colour) and rooms, as its generator names them (``tomi_world.json``)."""
    world = json.loads(resources.files(__package__).joinpath("tomi_world.json").read_text("utf-8"))
    return (*(f"{colour}_{container}" for colour in world["colours"] for container in world["containers"]),
            *world["locations"])


def file_vocabulary(sentences: list[str]) -> list[str]:
    """Every container and room the given story sentences name, in order."""
    found = dict.fromkeys(containers(sentences))
    for sentence in sentences:
        match = _ROOM_SENTENCE.match(sentence)
        if match:
            found.setdefault(match.group(1))
    return list(found)


def read(source: Path, options: base.ImportOptions) -> list[base.SourceStory]:
    """ToMi's bAbI-style lines: a line numbered 1 starts a story, each later line continues it, and a question
    line asks about every line of its story told before it (a question does not end the story)."""
    text = base.read_text(source)
    examples: list[_Example] = []
    told: list[str] = []  # the story's lines up to the last question
    pending: list[str] = []  # its lines since then
    first = pending_from = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        match = _LINE.match(raw)
        if match is None:
            raise base.source_error(source, number, None, "expected 'N sentence' (a line number, a space, the text)")
        index, content = int(match.group(1)), match.group(2)
        if index == 1:
            if pending:
                raise _no_question(source, pending_from)
            first, told = number, []
        if "\t" not in content:
            if content.rstrip().endswith("?") or content.partition("?")[2].strip():
                raise base.source_error(source, number, "question",
                                        "a question line needs 'question<TAB>answer<TAB>support' (tabs, not spaces)")
            pending_from = pending_from if pending else number
            pending.append(content.strip())
            continue
        fields = content.split("\t")
        if len(fields) < 2 or not fields[0].strip() or not fields[1].strip():
            raise base.source_error(source, number, "question",
                                    "a question line needs 'question<TAB>answer<TAB>support'")
        if not told and not pending:
            raise base.source_error(source, number, "story", "question before any story line")
        examples.append(_Example(first, number, told, pending, fields[0].strip(), fields[1].strip()))
        told, pending = told + pending, []
    if pending:
        raise _no_question(source, pending_from)
    traces = _traces(source, len(examples))
    stories: list[base.SourceStory] = []
    for position, example in enumerate(examples):
        line, question, answer, sentences = example.first, example.question, example.answer, example.sentences
        trace = traces[position] if traces else None
        meta = _question_meta(trace[-2]) if trace else _untraced_meta(question)
        story_text = "\n".join(sentences)
        if example.told:  # a later question of the same numbered story: the lines since the last one are its turn's
            target = stories[-1]
            named = containers(sentences)
            target.questions.append(base.SourceQuestion(
                text=question, answer=answer, line=example.line, meta=meta, story="\n".join(example.new),
                candidates=named if answer in named and len(named) > 1 else []))
            continue
        if stories and stories[-1].story == story_text and (trace is None or stories[-1].meta.get("story_type") == trace[-1]):
            target = stories[-1]
        else:
            story_meta: dict[str, object] = {"story_type": trace[-1]} if trace else {}
            if trace is not None and trace[-1] not in TASKS:
                raise base.source_error(source.with_suffix(".trace"), position + 1, "story_type",
                                        f"unknown ToMi story type {trace[-1]!r} (known: {', '.join(TASKS)})")
            task = TASKS[trace[-1]] if trace is not None else UNTRACED
            target = base.SourceStory(key=f"{source.stem}-{len(stories) + 1:05d}", task=task, story=story_text,
                                      questions=[], line=line, meta=story_meta)
            stories.append(target)
        named = containers(sentences)
        target.questions.append(base.SourceQuestion(text=question, answer=answer, line=line, meta=meta,
                                                    candidates=named if answer in named and len(named) > 1 else []))
    vocabulary = [*file_vocabulary([s for example in examples for s in example.sentences]), *world_vocabulary()]
    known = {normalize(word) for word in vocabulary}
    for kept in stories:
        for item in kept.questions:
            if item.candidates or normalize(item.answer) in known:
                item.candidates = base.closed_vocabulary(item.candidates or [item.answer], vocabulary)
    return stories


@dataclass(frozen=True)
class _Example:
    """One question line and the story told before it: ``told`` up to the story's previous question (none for
    its first), ``new`` since then."""

    first: int  # the line its story starts at
    line: int  # the question's line
    told: list[str]
    new: list[str]
    question: str
    answer: str

    @property
    def sentences(self) -> list[str]:
        return self.told + self.new


def _no_question(source: Path, line: int) -> FormatError:
    return base.source_error(source, line, "question", "these story lines have no question after them (a ToMi "
                                                       "example ends with its question line): finish the example "
                                                       "or remove them")


def _traces(source: Path, count: int) -> list[list[str]] | None:
    """The trace lines (comma-separated fields) beside the .txt file, or None when there is none."""
    path = source.with_suffix(".trace")
    if not path.is_file():
        return None
    lines = [line.strip().split(",") for line in base.read_text(path).splitlines() if line.strip()]
    if len(lines) != count:
        raise base.source_error(path, len(lines), None,
                                f"{len(lines)} trace lines for {count} examples in {source.name}")
    for number, fields in enumerate(lines, start=1):
        if len(fields) < 2:
            raise base.source_error(path, number, None, "a trace line ends with 'question_type,story_type'")
    return lines
