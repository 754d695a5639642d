"""Layout (b): one row per turn (or per question), grouped into StoryTurns by a story id column and ordered by
a turn column (file order without one), each row with its own picture (docs/official-data.md, "The layouts").
"""

from __future__ import annotations

import json
import re

from pydantic import ValidationError

from commet.format.dataset import Dataset
from commet.format.model import AnswerFeedback, Feedback, StoryTurn
from commet.format.origin import RowsRead
from commet.format.pipe import (
    decide_branches,
    options_in_question,
    parse_feedback,
)
from commet.sources.cells import list_cell, options_cell
from commet.sources.columns import (
    REQUIRED_TURN_ROWS,
    STORY_ROLES,
    Role,
)
from commet.sources.table import (
    Layout,
    Source,
    Table,
    _fail,
    _meta,
    _pictures,
    _problem,
    _register,
    _Story,
    _story_fields,
    _suffix,
    _text,
    row_said,
)

# ----------------------------------------------------------------------------------------------- (b)


def _turn_number(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    digits = re.findall(r"\d+", str(value)) if isinstance(value, str) else []
    return int(digits[-1]) if len(digits) >= 1 else None


def _ordered(table: Table, roles: dict[Role, str], story_id: str,
             members: list[tuple[int, dict[str, object]]]) -> list[tuple[int, dict[str, object]]]:
    """A story's rows in turn order; a turn that is not a number, or given twice, is a located error."""
    if Role.TURN not in roles:
        return members
    column = roles[Role.TURN]
    keyed: dict[int, int] = {}
    for line, row in members:
        number = _turn_number(row.get(column))
        if number is None:
            raise _fail(table, line, story_id, None, column, f"turn {row.get(column)!r} is not a number")
        if number in keyed:
            raise _fail(table, line, story_id, None, column,
                        f"turn {number} of this story is also on {row_said(table, keyed[number])}")
        keyed[number] = line
    return sorted(members, key=lambda member: _turn_number(member[1].get(column)) or 0)


Member = tuple[int, dict[str, object]]  # a row with its line (1-based, within its table)


def story_groups(table: Table, roles: dict[Role, str], unnamed: str | None = None,
                 first: int = 0) -> dict[str, list[Member]]:
    """The table's rows grouped by story id, each story's rows in turn order and agreeing on the story's fields;
    without an id column each row makes a story ``unnamed-NNNN`` (numbered from ``first`` + 1) when ``unnamed``
    is given. Shared by every layout
    that has a row per turn (pipe turns, chat messages), so they group and check alike."""
    groups: dict[str, list[Member]] = {}
    for index, row in enumerate(table.rows):
        story_id = _text(row.get(roles[Role.ID])) if Role.ID in roles or unnamed is None \
            else f"{unnamed}-{first + index + 1:04d}"
        if story_id is None:
            raise _fail(table, index + 1, None, None, roles[Role.ID], "no story id")
        groups.setdefault(story_id, []).append((index + 1, row))
    ordered = {}
    for story_id, members in groups.items():
        ordered[story_id] = _ordered(table, roles, story_id, members)
        _same_for_the_story(table, roles, story_id, ordered[story_id])
    return ordered


def _same_for_the_story(table: Table, roles: dict[Role, str], story_id: str,
                        members: list[tuple[int, dict[str, object]]]) -> None:
    """Every row of a story must agree on its task, category, image-dependence, mental states and source."""
    for role in STORY_ROLES[1:]:
        if role not in roles:
            continue
        column = roles[role]
        first_line, first = members[0][0], members[0][1].get(column)
        for line, row in members[1:]:
            if row.get(column) not in (None, "") and first not in (None, "") and row.get(column) != first:
                raise _fail(table, line, story_id, None, column,
                            f"rows of this story disagree on its {role.value}: {first!r} (row {first_line}) "
                            f"and {row.get(column)!r}")


def _keyed_feedback(value: dict[object, object]) -> Feedback | None:
    """Feedback written as an object: Feedback's own fields (``right``, ``wrong``, ``by_answer``, ``always``), or
    texts keyed by the previous answer (``{"basket": "...", "box": "..."}``, the booklet's "If the previous answer
    is A: ..."); ``correct``/``incorrect`` are right/wrong. Mixing the two kinds of key is refused (a key that
    is an answer ``right`` would be read as correctness)."""
    items = {str(key).strip(): v for key, v in value.items() if v not in (None, "", [])}
    alias = {"correct": "right", "incorrect": "wrong"}
    own = {alias.get(key.lower(), key.lower()) for key in items} <= set(Feedback.model_fields)
    if own:
        feedback = Feedback.model_validate({alias.get(k.lower(), k.lower()): v for k, v in items.items()})
    else:
        if any(key.lower() in (*Feedback.model_fields, *alias) for key in items):
            raise ValueError(f"feedback keys {sorted(items)} mix right/wrong with previous answers: which is meant "
                             "is not guessed")
        if not all(isinstance(v, str) for v in items.values()):
            raise ValueError("feedback keyed by the previous answer must map each answer to its text")
        feedback = Feedback(by_answer=[AnswerFeedback(answer=key, text=str(v).strip()) for key, v in items.items()])
    return None if feedback.is_empty() else feedback


def _turn_feedback(table: Table, line: int, story_id: str, k: int, column: str | None,
                   value: object) -> Feedback | None:
    if value is None or value == "":
        return None
    try:
        if isinstance(value, str):
            structured = _structured_object(value)
            return parse_feedback(value) if structured is None else _keyed_feedback(structured)
        if isinstance(value, dict):
            return _keyed_feedback(value)
    except (ValueError, ValidationError) as exc:
        raise _fail(table, line, story_id, k, column, str(exc).splitlines()[0]) from None
    raise _fail(table, line, story_id, k, column, f"feedback must be text, not {type(value).__name__}")


def _structured_object(text: str) -> dict[object, object] | None:
    """A feedback cell holding JSON text of an object (read as one, never as unconditional text), else None."""
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return None
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError as exc:
        raise ValueError(f"feedback looks like a JSON object but is not one ({exc.msg})") from None
    return value if isinstance(value, dict) else None


def _right_wrong(table: Table, line: int, story_id: str, k: int, roles: dict[Role, str], row: dict[str, object],
                 feedback: Feedback | None) -> Feedback | None:
    """The turn's feedback from its own right/wrong columns (``feedback_right``/``feedback_wrong``, ``if_right``..);
    a row with text there and in its feedback column too is a located error (which one holds it is not guessed)."""
    texts = {kind: _text(row.get(roles[role])) if role in roles else None
             for kind, role in (("right", Role.FEEDBACK_RIGHT), ("wrong", Role.FEEDBACK_WRONG))}
    if not any(texts.values()):
        return feedback
    if feedback is not None:
        raise _fail(table, line, story_id, k, roles[Role.FEEDBACK], "feedback in both this column and the "
                    f"right/wrong columns ({', '.join(roles[r] for r in (Role.FEEDBACK_RIGHT, Role.FEEDBACK_WRONG) if r in roles)}): "
                    "which holds the turn's feedback is not guessed; map one with --columns")
    return Feedback(right=texts["right"], wrong=texts["wrong"])


def _options(table: Table, line: int, story_id: str, k: int, column: str | None, value: object,
             question: str) -> list[dict[str, object]]:
    """A turn's options: its options cell read in any common notation (:func:`~commet.sources.cells.options_cell`),
    else those its question writes; a cell that cannot be read is a located error, never dropped."""
    try:
        options = options_cell(value)
    except ValueError as exc:
        raise _fail(table, line, story_id, k, column, str(exc)) from None
    return options if options else [o.model_dump() for o in options_in_question(question)]


def turn_rows_required(roles: dict[Role, str]) -> tuple[Role, ...]:
    """The roles rows of turns need: a story id, unless no row can refer to another (no id, turn or feedback
    column: each row is a whole one-turn StoryTurn, as in a table of single questions, ids ``NAME-0001``..); such
    a row then needs its story column (a one-turn StoryTurn without its story is a table half read)."""
    if any(role in roles for role in (Role.ID, Role.TURN, Role.FEEDBACK, Role.FEEDBACK_RIGHT, Role.FEEDBACK_WRONG)):
        return REQUIRED_TURN_ROWS
    return (*(role for role in REQUIRED_TURN_ROWS if role is not Role.ID), Role.STORY)


def _turn_rows(table: Table, layout: Layout, dataset: Dataset, source: Source, first: int = 0) -> None:
    roles = layout.roles
    used = set(roles.values()) | set(layout.pictures)
    unnamed = None if Role.ID in roles else source.name  # one StoryTurn per row (turn_rows_required)
    for story_id, members in story_groups(table, roles, unnamed, first).items():
        line = members[0][0]
        if unnamed is not None and not _text(members[0][1].get(roles[Role.STORY])):
            raise _fail(table, line, story_id, None, roles[Role.STORY],
                        "no story, and no story id column: this row may be a later turn of another row's story, "
                        "which is not guessed; name the column that says which story a row belongs to with "
                        "--columns id=COLUMN (and turn=COLUMN), or make the StoryTurns with --adapter FILE.py:FUNCTION")
        story = _story_fields(table, roles, members[0][1], line, story_id, source, dataset.taxonomy)
        dataset.storyturns.append(_assemble(table, layout, story_id, story, members, dataset, source, used))
        dataset.rows_read.append(RowsRead(table.where, story_id, tuple((line,) for line, _ in members)))
        dataset.lines.setdefault(story_id, line)
        dataset.line_list.append(line)


def _assemble(table: Table, layout: Layout, story_id: str, story: _Story,
              members: list[tuple[int, dict[str, object]]], dataset: Dataset, source: Source,
              used: set[str]) -> StoryTurn:
    """One StoryTurn from its rows: answers written as text split into branches as the pipe format's are."""
    roles, pictures_of = layout.roles, layout.pictures

    def cell(row: dict[str, object], role: Role) -> object:
        return row.get(roles[role]) if role in roles else None

    questions: list[str] = []
    feedbacks: list[Feedback | None] = []
    raw_answers: list[str | list[str]] = []
    turns: list[dict[str, object]] = []
    for k, (line, row) in enumerate(members):
        question = _text(cell(row, Role.QUESTION))
        if question is None:
            raise _fail(table, line, story_id, k, roles[Role.QUESTION], "empty question")
        value = cell(row, Role.ANSWER)
        listed = list_cell(value) if isinstance(value, str) else None
        if listed is not None and listed and all(isinstance(a, str) for a in listed):
            value = listed  # branches written as JSON text of a list
        answer: str | list[str] = [str(a).strip() for a in value if str(a).strip()] if isinstance(value, list) \
            else _text(value) or ""
        if not answer:
            raise _fail(table, line, story_id, k, roles[Role.ANSWER], "empty answer")
        feedback = _turn_feedback(table, line, story_id, k, roles.get(Role.FEEDBACK), cell(row, Role.FEEDBACK))
        feedback = _right_wrong(table, line, story_id, k, roles, row, feedback)
        questions.append(question)
        feedbacks.append(feedback)
        raw_answers.append(answer)
        image_id = None
        pictures = [p for column in pictures_of for p in _pictures(row.get(column))]
        if len(pictures) > 1:
            raise _fail(table, line, story_id, k, roles[Role.IMAGE], f"{len(pictures)} pictures in one row: a turn "
                        "shows one picture (one row per StoryTurn names its turns' pictures; see layout (a))")
        if pictures:
            picture = pictures[0]
            named = _text(cell(row, Role.IMAGE_ID)) or picture.name
            fallback = f"{story_id}-{k}{_suffix(picture.data)}"
            image_id = _register(dataset, named or fallback, picture.data, source, fallback)
        elif Role.IMAGE_ID in roles and _text(cell(row, Role.IMAGE_ID)):
            image_id = _register(dataset, str(_text(cell(row, Role.IMAGE_ID))), None, source, f"{story_id}-{k}.png")
        turns.append({"story": _text(cell(row, Role.STORY)) or "", "feedback": feedback, "question": question,
                      "image": image_id, "options": _options(table, line, story_id, k, roles.get(Role.OPTIONS), cell(row, Role.OPTIONS), question),
                      "meta": _meta(row, used, table.columns)})
    texts = [a if isinstance(a, str) else "" for a in raw_answers]
    decision = decide_branches(texts, questions, feedbacks)
    for k, (turn, answer) in enumerate(zip(turns, raw_answers, strict=True)):
        turn["answers"] = list(answer) if isinstance(answer, list) else decision.answers[k]
    dataset.warnings.extend(_problem(table, members[k][0], story_id, k, roles[Role.ANSWER], message, "warning")
                            for k, message in decision.notes if isinstance(raw_answers[k], str))
    known = dataset.taxonomy.task(story.task)
    states = story.mental_states if story.mental_states is not None else (
        list(known.mental_states) if known is not None else [])
    try:
        return StoryTurn.model_validate({"id": story_id, "task": story.task, "category": story.category,
                                         "mental_states": states, "image_dependent": story.image_dependent,
                                         "source": story.source, "turns": turns})
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = [str(part) for part in error["loc"]]
        turn_index = int(loc[1]) if len(loc) > 1 and loc[0] == "turns" and loc[1].isdigit() else None
        line = members[turn_index][0] if turn_index is not None and turn_index < len(members) else members[0][0]
        raise _fail(table, line, story_id, turn_index, ".".join(loc[2:] if turn_index is not None else loc) or None,
                    error["msg"]) from None
