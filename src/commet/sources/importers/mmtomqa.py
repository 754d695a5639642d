"""MMToM-QA (Jin et al., 2024), text part: ``Benchmark/questions.json`` (one JSON object per line).

Each line holds ``question`` (the apartment, the person's actions, then ``Question: ...
(a) ... (b) ... Please respond with either a or b.``), ``answer`` (``a`` or ``b``),
``question_type`` (1.1 to 1.3 belief inference, 2.1 to 2.4 goal inference), ``episode``,
``start_time``/``end_time`` (the video steps the text covers) and ``answer_list``. The text
before ``Question:`` is the story; belief (or goal) questions with the same episode and story
are one story.
The videos are not imported.
"""

from __future__ import annotations

from pathlib import Path

from commet.format.model import Option
from commet.sources.importers import base

QUESTION_TYPES = {
    "1.1": "true_belief_short_term", "1.2": "false_belief_short_term", "1.3": "belief_tracking_long_term",
    "2.1": "goal_given_true_belief", "2.2": "goal_given_false_belief", "2.3": "goal_given_updated_belief",
    "2.4": "goal_given_future_actions",
}
TASKS = {
    "1": base.declared_task("mmtomqa_belief", "MMToM-QA belief inference", "Belief", ("belief", "percept"),
                            "infer what a person in a household believes from their actions (text part)"),
    "2": base.declared_task("mmtomqa_goal", "MMToM-QA goal inference", "Goal", ("desire", "intention", "belief"),
                            "infer what a person in a household wants from their actions and beliefs (text part)"),
}
_CLOSING = "Please respond with either a or b"


def _two_options(asked: str) -> tuple[str, str] | None:
    """The texts of options (a) and (b) in "... (a) X (b) Y Please respond with either a or b.", or None.

    Plain string search, linear in the text (the pattern it replaces backtracked on long texts).
    """
    head, closing, tail = asked.rpartition(_CLOSING)
    if not closing or tail.strip() not in ("", "."):
        return None
    _, mark, options = head.partition("(a)")
    first, mark_b, second = options.partition("(b)")
    if not mark or not mark_b or not first.strip() or not second.strip():
        return None
    return first.strip(), second.strip()


def read(source: Path, options: base.ImportOptions) -> list[base.SourceStory]:
    stories: dict[tuple[object, str, str], base.SourceStory] = {}
    for number, record in base.read_json_lines(source):
        if not isinstance(record, dict) or not isinstance(record.get("question"), str):
            raise base.source_error(source, number, "question", "expected an object with a 'question' text")
        story_text, marker, asked = record["question"].partition("Question:")
        if not marker or not story_text.strip():
            raise base.source_error(source, number, "question", "no 'Question:' after the story text")
        texts = _two_options(asked)
        if texts is None:
            raise base.source_error(source, number, "question",
                                    "expected '(a) ... (b) ... Please respond with either a or b.'")
        choices = [Option(label="a", text=texts[0]), Option(label="b", text=texts[1])]
        right = base.answer_option(choices, str(record.get("answer", "")), file=source, line=number)
        kind = str(record.get("question_type"))
        if kind not in QUESTION_TYPES:
            raise base.source_error(source, number, "question_type", f"unknown question type {kind!r} "
                                                                     f"(known: {', '.join(QUESTION_TYPES)})")
        episode = record.get("episode")
        if isinstance(episode, (bool, list, dict)):
            raise base.source_error(source, number, "episode", f"expected an episode number or name, not {episode!r}")
        key = (episode, kind[0], story_text.strip())  # belief and goal questions are different tasks
        story = stories.get(key)
        if story is None:
            story = base.SourceStory(key=f"{episode}-{len(stories) + 1:04d}", task=TASKS[kind[0]],
                                     story=story_text.strip(), questions=[], line=number,
                                     meta={"episode": episode, "start_time": record.get("start_time"),
                                           "end_time": record.get("end_time")})
            stories[key] = story
        story.questions.append(base.with_answer_label(base.SourceQuestion(
            text=f"Question:{asked.rstrip()}", answer=right.text, line=number, options=choices,
            meta={"question_type": QUESTION_TYPES[kind], "type_code": kind})))
    return list(stories.values())
