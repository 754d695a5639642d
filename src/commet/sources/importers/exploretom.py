"""ExploreToM (Sclar et al., 2024): the authors' ``ExploreToM-data-sample.csv``.

A CSV with a header; one row per question: ``story_structure`` (the raw story),
``infilled_story`` (the story as prose), ``question``, ``expected_answer``,
``qprop=params`` (a Python tuple: people asked about, object, relation),
``qprop=nth_order`` (-1 for factual or memory questions, else 1 or 2),
``qprop=non_unique_mental_state`` and story properties (``sprop=...``, ``param=...``). Rows
that share an infilled story are one story. Yes/no questions and the "knows about it / does
not know about it" questions get those two options; a container or room question whose answer is
one of the containers or rooms the raw story names (``story_structure``, in the authors' sentence
templates) is judged against them (judge-only candidates, never shown), and against the rest of the story's
answer vocabulary (its other places, yes and no): a reply that is exactly one of them is decided.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from commet.format.model import Option
from commet.sources.importers import base
from commet.text import normalize

TASK = base.declared_task("exploretom", "ExploreToM", "Belief", ("belief", "knowledge"),
                          "adversarially searched stories about who knows where things are and who knows what happened")
REQUIRED = ("infilled_story", "question", "expected_answer", "qprop=nth_order")
ANSWER_SETS = (("yes", "no"), ("knows about it", "does not know about it"))
#: what the raw story (``story_structure``) names, by the authors' sentence templates: containers and rooms
_CONTAINERS = (re.compile(r"moved the .+? to the ([^,.]+), which is also located in the "),
               re.compile(r"leaving the (.+?) in its original location"), re.compile(r"still inside (?:the )?([^,.]+)\."))
_ROOMS = (re.compile(r"(?:entered|left|is in) the ([^,.]+)\."), re.compile(r"which is also located in the ([^,.]+)\."),
          re.compile(r"moved the .+? to the ([^,.]+)(?:\.|, leaving|, still)"))


def read(source: Path, options: base.ImportOptions) -> list[base.SourceStory]:
    records = base.read_csv(source)
    header = next(records, (1, []))[1]
    missing = [name for name in REQUIRED if name not in header]
    if missing:
        raise base.source_error(source, 1, missing[0], "column missing from the header")
    stories: dict[str, base.SourceStory] = {}
    for line, record in records:
        row = dict(zip(header, record, strict=True))
        for name in REQUIRED:
            if not (row.get(name) or "").strip():
                raise base.source_error(source, line, name, "empty field")
        try:
            order = int(float(row["qprop=nth_order"]))
        except ValueError:
            raise base.source_error(source, line, "qprop=nth_order",
                                    f"not a number: {row['qprop=nth_order']!r}") from None
        text = row["infilled_story"].strip()
        story = stories.get(text)
        if story is None:
            meta: dict[str, object] = {name: row[name] for name in row
                                       if name and name.startswith(("sprop=", "param=story_type"))}
            story = base.SourceStory(key=f"{len(stories) + 1:05d}", task=TASK, story=text, questions=[], line=line,
                                     meta=meta)
            stories[text] = story
        story.questions.append(_question(row, order, line))
    return list(stories.values())


def places(structure: str, relation: str) -> list[str]:
    """The containers (a ``container_location`` question) or rooms (``room_location``) the raw story names: an
    answer among them is judged against them (``Turn.candidates``), a reply naming another is wrong."""
    if relation.endswith("container_location"):
        patterns = _CONTAINERS
    elif relation.endswith("room_location"):
        patterns = _ROOMS
    else:
        return []
    found: dict[str, None] = {}
    for sentence in re.split(r"(?<=\.)\s+", structure):
        for pattern in patterns:
            for match in pattern.finditer(sentence):
                found.setdefault(match.group(1).strip())
    return list(found)


def _relation(params: str) -> str:
    """The relation a question asks about (``container_location``, ``memory-...``), from ``qprop=params``."""
    try:
        value = ast.literal_eval(params)
    except (ValueError, SyntaxError):
        return "unknown"
    return str(value[-1]) if isinstance(value, tuple) and value else "unknown"


def _question(row: dict[str, str], order: int, line: int) -> base.SourceQuestion:
    answer = row["expected_answer"].strip()
    meta: dict[str, object] = {"question_type": _relation(row.get("qprop=params") or ""), "order": order,
                               "interesting": (row.get("qprop=non_unique_mental_state") or "").strip() == "True"}
    question = row["question"].strip()
    for answer_set in ANSWER_SETS:
        if answer.lower() in answer_set:
            options = [Option(text=text) for text in answer_set]
            prompt = f"Answer '{answer_set[0]}' or '{answer_set[1]}'."
            return base.SourceQuestion(text=f"{question} {prompt}", answer=answer.lower(), line=line, options=options,
                                       meta=meta)
    structure = row.get("story_structure") or ""
    named = places(structure, str(meta["question_type"]))
    known = {normalize(place) for place in named}
    if len(known) < 2 or normalize(answer) not in known:
        return base.SourceQuestion(text=question, answer=answer, line=line, meta=meta)
    # the rest of the story's answer vocabulary: its other places and the yes/no questions' answers
    vocabulary = [*places(structure, "container_location"), *places(structure, "room_location"),
                  *(word for answer_set in ANSWER_SETS for word in answer_set)]
    return base.SourceQuestion(text=question, answer=answer, line=line, meta=meta,
                               candidates=base.closed_vocabulary(named, vocabulary))
