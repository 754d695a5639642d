"""MuMA-ToM (Shi et al., 2025), text part: ``questions.json`` and ``texts.json``.

``questions.json`` maps each episode id to ``questions`` (``"1"``..``"4"``: the question
followed by lines ``A) ...``, ``B) ...``, ``C) ...``), ``answers`` (``"B) <option text>"``) and
``labels`` (``belief``, ``social_goal``, ``belief_of_goal``). ``texts.json`` beside it maps the
episode id to the text input; without it, the episode's ``description`` is used (the repository
writes it as a Python bytes literal, ``b'...'``). The videos are not imported.
SOURCE is the folder holding both files, or ``questions.json`` itself.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from commet.format.model import Option
from commet.sources.importers import base
from commet.text import normalize

TASK = base.declared_task("mumatom", "MuMA-ToM", "Belief", ("belief", "intention", "desire"),
                          "two agents in a household; infer beliefs, social goals and beliefs about others' goals")
#: an option line, stripped first: "A) text" (a lazy text before ``\s*$`` was quadratic in trailing blanks)
_OPTION = re.compile(r"([A-Z])\)(.*)", re.DOTALL)


def _description(value: object) -> str:
    """The episode description, decoding the repository's ``b'...'`` form."""
    text = str(value or "").strip()
    if text.startswith(("b'", 'b"')):
        try:
            literal = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return text
        if isinstance(literal, bytes):
            return literal.decode("utf-8", errors="replace").strip()
    return text


def read(source: Path, options: base.ImportOptions) -> list[base.SourceStory]:
    questions_path = source / "questions.json" if source.is_dir() else source
    texts_path = questions_path.parent / "texts.json"
    document = base.read_json(questions_path)
    if not isinstance(document, dict):
        raise base.source_error(questions_path, 1, None, "expected an object mapping episode ids to question records")
    texts = base.read_json(texts_path) if texts_path.is_file() else {}
    if not isinstance(texts, dict):
        raise base.source_error(texts_path, 1, None, "expected an object mapping episode ids to texts")
    raw = base.read_text(questions_path)
    stories: list[base.SourceStory] = []
    for episode, record in document.items():
        line = base.json_line(raw, f'"{episode}"')
        if not isinstance(record, dict):
            raise base.source_error(questions_path, line, None, "expected a record object", story=episode)
        story_text = str(texts.get(episode) or "").strip() or _description(record.get("description"))
        if not story_text:
            raise base.source_error(questions_path, line, "description", "no text for this episode in texts.json "
                                                                         "and no description", story=episode)
        asked, answers, labels = (record.get(name) for name in ("questions", "answers", "labels"))
        if not isinstance(asked, dict) or not isinstance(answers, dict):
            raise base.source_error(questions_path, line, "questions", "expected 'questions' and 'answers' objects",
                                    story=episode)
        if not asked:
            raise base.source_error(questions_path, line, "questions", "no questions for this episode", story=episode)
        if labels is not None and not isinstance(labels, dict):
            raise base.source_error(questions_path, line, "labels", "expected a 'labels' object", story=episode)
        story = base.SourceStory(key=str(episode), task=TASK, story=story_text, questions=[], line=line,
                                 meta={"episode": episode})
        for number, text in asked.items():
            story.questions.append(_question(questions_path, line, episode, number, text, answers.get(number),
                                             (labels or {}).get(number)))
        stories.append(story)
    return stories


def _question(path: Path, line: int | None, episode: str, number: str, text: object, answer: object,
              label: object) -> base.SourceQuestion:
    if not isinstance(text, str) or not isinstance(answer, str):
        raise base.source_error(path, line, f"questions.{number}", "question and answer must be texts", story=episode)
    stem: list[str] = []
    choices: list[Option] = []
    for row in text.splitlines():
        match = _OPTION.fullmatch(row.strip())
        if match and match.group(2).strip():
            choices.append(Option(label=match.group(1), text=match.group(2).strip()))
        elif not choices:
            stem.append(row)
    if len(choices) < 2:
        raise base.source_error(path, line, f"questions.{number}", "expected option lines 'A) ...', 'B) ...'",
                                story=episode)
    given = _OPTION.fullmatch(answer.strip())  # "C) cherry": the letter, and the option's text after it
    if given is None:
        raise base.source_error(path, line, f"answers.{number}", f"expected 'X) option', not {answer.strip()!r}",
                                story=episode)
    right = base.answer_option(choices, given.group(1), file=path, line=line, story=episode,
                               field_name=f"answers.{number}")
    said = given.group(2).strip()
    if said and normalize(said) != normalize(right.text):
        raise base.source_error(path, line, f"answers.{number}", f"answer {answer.strip()!r}: option "
                                f"{right.label}) is {right.text!r}", story=episode)
    return base.with_answer_label(base.SourceQuestion(
        text=text.strip(), answer=right.text, line=line, options=choices,
        meta={"question_type": str(label or "unknown"), "number": number}))
