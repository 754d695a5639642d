"""Layout (d): rows that each hold a whole StoryTurn's questions and answers as lists (a list column, or JSON
text of a list), such as one row per picture: the rows of one StoryTurn (one story id, or consecutive rows
holding the same lists) repeat its lists, and each row gives one picture and the turn that shows it.

A picture's turn is the row's turn number. Whether turn numbers count from 0 or from 1 is decided once for
the table: a 0 says from 0, a number equal to its StoryTurn's count of questions says from 1; numbers that
fit both are refused (a located error), never guessed. Rows of one StoryTurn that disagree on its lists, a
list of another length than the questions, or two pictures for one turn are located errors.
"""

from __future__ import annotations

from commet.format.dataset import Dataset
from commet.format.origin import RowsRead
from commet.sources.cells import list_cell
from commet.sources.columns import Role
from commet.sources.table import Layout, Source, Table, _fail, _story_fields, _text
from commet.sources.turn_rows import _assemble, _same_for_the_story, _turn_number

#: the per-turn roles a row may hold as lists (one item per question)
LIST_ROLES = (Role.QUESTION, Role.ANSWER, Role.STORY, Role.FEEDBACK, Role.FEEDBACK_RIGHT, Role.FEEDBACK_WRONG,
              Role.OPTIONS)
#: feedback is said before a later question, about the answer before it: a list of one fewer than the questions
#: is the feedback before the second question onwards (the first has none to follow), unambiguously
FEEDBACK_ROLES = (Role.FEEDBACK, Role.FEEDBACK_RIGHT, Role.FEEDBACK_WRONG)


def holds_lists(table: Table, column: str) -> bool:
    """Whether a question column holds lists of questions (every one of its first 50 filled cells is a list: one
    holding a null or a number is such a list still, refused at its item, never read as one question's text)."""
    cells = [row.get(column) for row in table.rows if row.get(column) not in (None, "", [])][:50]
    return bool(cells) and all(list_cell(c) is not None for c in cells)


def _groups(table: Table, layout: Layout, name: str, first: int) -> dict[str, list[tuple[int, dict[str, object]]]]:
    """Rows by StoryTurn: by the id column, else consecutive rows holding the same lists (questions, answers,
    stories, feedback, options)."""
    roles = layout.roles
    groups: dict[str, list[tuple[int, dict[str, object]]]] = {}
    previous: object = object()
    for index, row in enumerate(table.rows):
        if Role.ID in roles:
            story_id = _text(row.get(roles[Role.ID]))
            if story_id is None:
                raise _fail(table, index + 1, None, None, roles[Role.ID], "no story id")
        else:
            lists = tuple(repr(row.get(roles[role])) for role in LIST_ROLES if role in roles)
            if lists != previous or not groups:
                groups[f"{name}-{first + len(groups) + 1:04d}"] = []
            previous = lists
            story_id = list(groups)[-1]
        groups.setdefault(story_id, []).append((index + 1, row))
    return groups


def _lists(table: Table, layout: Layout, story_id: str,
           members: list[tuple[int, dict[str, object]]]) -> dict[Role, list[object]]:
    """The StoryTurn's per-turn lists, the same on each of its rows; a story text given once is the first turn's."""
    roles = layout.roles
    first_line, first = members[0]
    for role in LIST_ROLES:
        if role in roles:
            for line, row in members[1:]:
                if row.get(roles[role]) != first.get(roles[role]):
                    raise _fail(table, line, story_id, None, roles[role],
                                f"rows of this StoryTurn disagree on its {role.value} (row {first_line} and this one)")
    questions = list_cell(first.get(roles[Role.QUESTION])) or []
    if not questions:
        raise _fail(table, first_line, story_id, None, roles[Role.QUESTION], "no questions")
    for k, question in enumerate(questions):
        if not isinstance(question, str) or not question.strip():
            raise _fail(table, first_line, story_id, k, roles[Role.QUESTION], f"item {k + 1} of the questions is "
                        f"{question!r}, not a question's text")
    found: dict[Role, list[object]] = {Role.QUESTION: questions}
    for role in LIST_ROLES[1:]:
        if role not in roles:
            continue
        value = first.get(roles[role])
        items = list_cell(value)
        if items is None and role is Role.STORY and isinstance(value, str):
            items = [value, *[""] * (len(questions) - 1)]  # one story text: told before the first question
        if items is None and value in (None, ""):
            continue
        if role in FEEDBACK_ROLES and items is not None and len(items) == len(questions) - 1:
            items = [None, *items]  # before the 2nd question onwards: the first has no answer before it
        if items is None or len(items) != len(questions):
            later = f" or {len(questions) - 1} (one per later question)" if role in FEEDBACK_ROLES else ""
            raise _fail(table, first_line, story_id, None, roles[role], f"must be a list of {len(questions)} (one per "
                        f"question){later}, not {str(value)[:60]!r}: which turn each item belongs to is not "
                        "guessed; write the list so, or make the StoryTurns with --adapter FILE.py:FUNCTION")
        if role in FEEDBACK_ROLES[1:] and _text(items[0]) is not None:
            raise _fail(table, first_line, story_id, 0, roles[role], f"{role.value} text for the first question, "
                        "which no answer comes before: item k is the feedback said before question k (the first "
                        f"empty), or give {len(questions) - 1} item{'s' if len(questions) > 2 else ''}, one per later "
                        "question; whether this list "
                        "means the feedback after each answer is not guessed (--adapter FILE.py:FUNCTION)")
        found[role] = items
    return found


def _base(table: Table, layout: Layout, groups: dict[str, list[tuple[int, dict[str, object]]]],
          counts: dict[str, int]) -> int:
    """Whether the table's turn numbers count from 0 or from 1 (decided from all of them, never guessed)."""
    column = layout.roles.get(Role.TURN)
    if column is None:
        return 0
    numbers = [(_turn_number(row.get(column)), counts[story]) for story, members in groups.items()
               for _, row in members if _pictured(layout, row) and _listed(layout, row) is None]
    if any(n == 0 for n, _ in numbers):
        return 0
    if any(n == count for n, count in numbers):
        return 1
    if not numbers:
        return 0
    raise _fail(table, None, None, None, column, "turn numbers fit counting from 0 and from 1 alike (no 0, and none "
                "equal to its StoryTurn's number of questions): which turn shows each picture is not certain; "
                "write an adapter (--adapter FILE.py:FUNCTION)")


def _pictured(layout: Layout, row: dict[str, object]) -> list[object]:
    return [row.get(c) for c in layout.pictures if row.get(c) not in (None, "", [])]


def _listed(layout: Layout, row: dict[str, object]) -> list[object] | None:
    """The row's pictures when its one picture column lists several (a list, or JSON text of one): a StoryTurn's
    pictures in turn order, one item per question; else None (one picture, placed by the row's turn)."""
    if len(layout.pictures) != 1:
        return None
    items = list_cell(row.get(layout.pictures[0]))
    return items if items is not None and len(items) > 1 else None


def _numbering(layout: Layout, row: dict[str, object], length: int) -> str | None:
    """A column no role reads (or the turn column) that holds, in this row, a list of as many whole numbers as the
    row has pictures (``image_turns: [2, 1]``): it may say which turn shows each, so their order is not trusted."""
    turn = layout.roles.get(Role.TURN)
    for column in (*layout.unused, *([turn] if turn is not None else [])):
        items = list_cell(row.get(column))
        if items is not None and len(items) == length and all(isinstance(i, int) and not isinstance(i, bool)
                                                              for i in items):
            return column
    return None


def _place_listed(table: Table, line: int, story_id: str, column: str | None, listed: list[object], count: int,
                  shown: dict[int, tuple[int, object]], numbering: str | None) -> None:
    """A list of pictures, one per question in order (null for a turn that shows none): item k on turn k. A list
    of another length cannot be placed for sure (which turn lacks a picture?), nor one beside a column of numbers
    that may place it otherwise, so either is refused, located."""
    if numbering is not None:
        raise _fail(table, line, story_id, None, column, f"column {numbering!r} holds a number for each picture, "
                    "which may say the turn that shows it: whether the pictures go on the turns in their order or "
                    "by those numbers is not guessed; make the StoryTurns with --adapter FILE.py:FUNCTION")
    if len(listed) != count:
        raise _fail(table, line, story_id, None, column, f"a list of {len(listed)} pictures for {count} questions: "
                    "which turn shows each is not certain; list one item per question, in order (null for a turn "
                    "that shows none), give one row per picture with its turn (--columns turn=COLUMN), or make the "
                    "StoryTurns with --adapter FILE.py:FUNCTION")
    for k, item in enumerate(listed):
        if item in (None, "", []):
            continue
        if k in shown:
            raise _fail(table, line, story_id, k, column, f"turn {k} already shows the picture of row {shown[k][0]}")
        shown[k] = (line, item)


def _story_rows(table: Table, layout: Layout, dataset: Dataset, source: Source, first: int) -> None:
    roles = layout.roles
    used = set(roles.values()) | set(layout.pictures)
    groups = _groups(table, layout, source.name, first)
    lists = {story: _lists(table, layout, story, members) for story, members in groups.items()}
    base = _base(table, layout, groups, {story: len(found[Role.QUESTION]) for story, found in lists.items()})
    picture_column = layout.pictures[0] if layout.pictures else None
    for story_id, members in groups.items():
        _same_for_the_story(table, roles, story_id, members)
        found, count = lists[story_id], len(lists[story_id][Role.QUESTION])
        first_line, first_row = members[0]
        shown: dict[int, tuple[int, object]] = {}
        for line, row in members:
            pictures = _pictured(layout, row)
            if not pictures:
                continue
            listed = _listed(layout, row)
            if listed is not None:
                _place_listed(table, line, story_id, picture_column, listed, count, shown, _numbering(layout, row,
                                                                                                    len(listed)))
                continue
            if len(pictures) > 1:
                raise _fail(table, line, story_id, None, picture_column, "more than one picture in a row of one "
                                                                          "picture per row")
            if Role.TURN in roles:
                number = _turn_number(row.get(roles[Role.TURN]))
                k = number - base if number is not None else -1
            elif count == 1:
                k = 0
            else:
                raise _fail(table, line, story_id, None, picture_column, "which turn shows this picture? map the "
                            "column of its turn number (--columns turn=COLUMN), or write an adapter")
            if not 0 <= k < count:
                raise _fail(table, line, story_id, None, roles.get(Role.TURN), f"turn {row.get(roles[Role.TURN])!r} "
                            f"is not one of this StoryTurn's {count} turns (counted from {base})")
            if k in shown:
                raise _fail(table, line, story_id, k, picture_column, f"turn {k} already shows the picture of row "
                                                                      f"{shown[k][0]}")
            shown[k] = (line, pictures[0])
        virtual = []
        for k in range(count):
            row = {**first_row, **{roles[role]: items[k] for role, items in found.items()}}
            row.update(dict.fromkeys(layout.pictures))
            if picture_column is not None and k in shown:
                row[picture_column] = shown[k][1]
            virtual.append((shown[k][0] if k in shown else first_line, row))
        story = _story_fields(table, roles, first_row, first_line, story_id, source, dataset.taxonomy)
        dataset.storyturns.append(_assemble(table, layout, story_id, story, virtual, dataset, source, used))
        dataset.rows_read.append(RowsRead(table.where, story_id, tuple(
            (shown[k][0],) if k in shown else (first_line,) for k in range(count))))
        dataset.lines.setdefault(story_id, first_line)
        dataset.line_list.append(first_line)
