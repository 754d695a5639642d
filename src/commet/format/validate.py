"""Dataset validation: every problem located to file, line, story, turn and field."""

from __future__ import annotations

import re
from pathlib import Path

from commet.format.dataset import Dataset, load_dataset
from commet.format.model import StoryTurn
from commet.format.problems import FormatError, Problem

_LEAD_WORDS = re.compile(r"^(?:(?:yes|no)\s+)?(?:because\s+)?")  # the inference is what must not leak
_CONDITIONAL_LOOKING = re.compile(r"(?i)^\s*if\b[^:]{0,80}:")
#: Turn metadata marking an answer that is meant to be found in the story (reading-comprehension
#: benchmarks such as ToMi): the leak check does not apply to it.
ANSWER_IN_STORY = "answer_in_story"


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9' ]+", " ", text.lower()).split())


def _contains_phrase(haystack: str, needle: str) -> bool:
    return bool(needle) and re.search(rf"(?<![a-z0-9']){re.escape(needle)}(?![a-z0-9'])", haystack) is not None


def validate_storyturn(st: StoryTurn, dataset: Dataset, line: int | None = None) -> list[Problem]:
    """Problems of one StoryTurn (structure, feedback, branches, images, leaks)."""
    file = dataset.source_file
    line = line if line is not None else dataset.lines.get(st.id)
    problems: list[Problem] = []

    def add(turn: int | None, field: str | None, message: str, severity: str = "error") -> None:
        problems.append(Problem(file, line, st.id, turn, field, message, severity))  # type: ignore[arg-type]

    taxonomy = dataset.taxonomy  # declared in dataset.json, else the 18 booklet tasks
    where = "declared in dataset.json" if taxonomy.declared else "of the booklet taxonomy"
    task = taxonomy.task(st.task)
    if task is None:
        add(None, "task", f"unknown task {st.task!r} (not one of the tasks {where})")
    elif st.category not in task.categories:
        add(None, "category", f"category {st.category!r} does not match task {st.task!r} "
                              f"(expected {task.category_for(st.image_dependent)!r})", "warning")
    if st.category not in taxonomy.categories and task is not None:
        add(None, "category", f"unknown category {st.category!r} (not one of the categories {where})")
    for state in st.mental_states:
        if state not in taxonomy.mental_states:
            add(None, "mental_states", f"unknown mental state {state!r}", "warning")
    if st.image_dependent and not st.images:
        add(None, "image_dependent", "image-dependent StoryTurn has no image")

    branch_counts = {k: len(t.answers) for k, t in enumerate(st.turns) if t.is_branch_point}
    if len(set(branch_counts.values())) > 1:
        first_turn, first_count = next(iter(branch_counts.items()))
        for k, count in branch_counts.items():
            if count != first_count:
                add(k, "answer", f"{count} branch answers, but turn {first_turn} has {first_count}: "
                                 "branch counts must line up across the story")

    for k, turn in enumerate(st.turns):
        fb = turn.feedback
        if fb is not None and not fb.is_empty():
            if k == 0:
                conditional = fb.right or fb.wrong or fb.by_answer
                add(k, "feedback", "feedback on the first turn: there is no previous answer to react to",
                    "error" if conditional else "warning")
            if fb.always and _CONDITIONAL_LOOKING.match(fb.always):
                add(k, "feedback", f"unrecognised feedback condition in {fb.always[:40]!r}; "
                                   "write 'If right: ...; If wrong: ...' or 'If the previous answer is A: ...'")
            if k > 0 and fb.by_answer:
                previous = {_norm(a): a for a in st.turns[k - 1].answers}
                keyed = {_norm(entry.answer) for entry in fb.by_answer}
                for entry in fb.by_answer:
                    if _norm(entry.answer) not in previous:
                        add(k, "feedback", f"feedback keyed by answer {entry.answer!r}, which is not an expected "
                                           f"answer of turn {k - 1} ({'; '.join(st.turns[k - 1].answers)})")
                for norm, answer in previous.items():
                    if norm not in keyed and fb.right is None:
                        add(k, "feedback", f"no feedback for the previous answer {answer!r}", "warning")
            for name, text in (("right", fb.right), ("wrong", fb.wrong)):
                if text is not None and not text.strip():
                    add(k, "feedback", f"empty 'If {name}' feedback text")
        if turn.image and not dataset.has_image(turn.image):
            add(k, "image", f"image {turn.image!r} not found")
        if not turn.question.strip():
            add(k, "question", "empty question")
        story = _norm(turn.story)
        question = _norm(turn.question)
        for answer in turn.answers:
            if not answer.strip():
                add(k, "answer", "empty answer")
                continue
            norm = _LEAD_WORDS.sub("", _norm(answer))
            if not _contains_phrase(story, norm) or _contains_phrase(question, norm) or turn.meta.get(ANSWER_IN_STORY):
                continue
            if len(norm.split()) >= 3:
                add(k, "answer", f"answer {answer!r} appears verbatim in this turn's story text (leak)")
            else:
                add(k, "answer", f"answer {answer!r} appears in this turn's story text and is not an option "
                                 "named by the question (possible leak)", "warning")
    return problems


def validate_dataset(dataset: Dataset) -> list[Problem]:
    problems = list(dataset.warnings)
    seen: dict[str, int | None] = {}
    for index, st in enumerate(dataset.storyturns):
        line = dataset.line_list[index] if index < len(dataset.line_list) else dataset.lines.get(st.id)
        if st.id in seen:
            problems.append(Problem(dataset.source_file, line, st.id, None, "id",
                                    f"duplicate id (first at line {seen[st.id]})"))
        else:
            seen[st.id] = line
        problems.extend(validate_storyturn(st, dataset, line))
    return problems


def validate_path(path: str | Path) -> list[Problem]:
    """Load and validate; a file that cannot be read yields its located problem instead of raising."""
    try:
        dataset = load_dataset(path)
    except FormatError as exc:
        return exc.problems
    return validate_dataset(dataset)


def has_errors(problems: list[Problem]) -> bool:
    return any(p.severity == "error" for p in problems)
