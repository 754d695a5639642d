"""Tables written by others, made into StoryTurns: the layouts CoMMET recognises.

A table (the rows of one split, with its columns) comes from a Hub dataset, a folder of parquet,
JSON lines or CSV files, or an image folder with ``metadata.jsonl`` / ``metadata.csv`` (there each
row's picture is already an ``Image`` cell). Its rows make StoryTurns in one of three layouts:

* **CoMMET's own**: one row per StoryTurn, its turns a list of structs (``commet convert --to hf``);
* **(a) one row per StoryTurn**, its turns in the paper's pipe format
  (``story | feedback | question | image | answer``): a list of such strings, or one string holding
  them (a JSON or Python list, the paper's printed ``"turn", "turn"`` form, one turn a line); the
  pictures the turns name come from an ``Image`` column (one or a list, matched by file name, else
  in order) or from files of the data folder;
* **(b) one row per turn (or per question)**, grouped into StoryTurns by a story id column and
  ordered by a turn column (file order without one), each row with its own picture.

Which columns play which role is found from their names (:mod:`commet.format.columns`), or given
with ``--columns``; otherwise one message lists the columns and the mapping to write. Tasks and
categories are read tolerantly; a row without a category takes its task's, and a task that is not
one of the 18 booklet tasks needs a category column (a located error says so). When the data's
tasks or task-category pairs are not the booklet's, the dataset declares its own taxonomy (the
booklet's, extended by what the data holds), so that it validates and reports as it is.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from pydantic import ValidationError

from commet.format.adapters import Adapter, Rows, apply_adapter
from commet.format.cells import options_cell
from commet.format.columns import (
    MAPPING_HELP_LIMIT,
    REQUIRED_PIPE,
    REQUIRED_TURN_ROWS,
    STORY_ROLES,
    Column,
    ColumnMapping,
    ColumnsError,
    Role,
    by_content,
    by_name,
    canonical_category,
    canonical_task,
    expand_columns,
    fits,
    mapping_help,
    mapping_of,
    numbered_pictures,
    parse_flag,
    subset_flag,
)
from commet.format.dataset import Dataset, Origin, RowsRead, TableRead, image_file_candidates
from commet.format.model import Feedback, StoryTurn
from commet.format.pipe import (
    RawStoryTurn,
    decide_branches,
    options_in_question,
    parse_feedback,
    parse_storyturn,
    printed_turns,
)
from commet.format.problems import FormatError, Problem, Severity
from commet.taxonomy import BOOKLET, Task, Taxonomy

CATEGORY_HINT = "map the column that holds it with --columns category=COLUMN"
MAX_LIST_TEXT = 2_000_000  # a one-string list of turns longer than this is not parsed as a Python literal


@dataclass
class Table:
    """The rows of one split and its columns; pictures are ``{bytes, path}`` cells (bytes read where found)."""

    where: str  # names the table in located errors: a file, a folder, ``hf:OWNER/NAME[split]``
    split: str | None
    columns: list[Column]
    rows: list[dict[str, object]]
    config: str | None = None  # the Hub config (subset) it belongs to, when the dataset has several

    def subset_flag(self) -> bool | None:
        """Image-dependence its config or split name says (``image_dependent``, ``text-complete``), else None."""
        for name in (self.config, self.split):
            flag = subset_flag(name or "")
            if flag is not None:
                return flag
        return None


#: Reads a picture file a string cell names (confined to the data's folder), None when there is none.
PictureReader = Callable[[str], "bytes | None"]


@dataclass
class Source:
    """Where the tables come from: what to call the dataset, its default ``source``, how to load it again."""

    name: str
    source: str
    location: str
    read_picture: PictureReader = field(default=lambda name: None)


def _problem(table: Table, line: int | None, story: str | None, turn: int | None, field: str | None,
             message: str, severity: Severity = "error") -> Problem:
    return Problem(table.where, line, story, turn, field, message, severity)


def _fail(table: Table, line: int | None, story: str | None, turn: int | None, field: str | None,
          message: str) -> FormatError:
    return FormatError([_problem(table, line, story, turn, field, message)])


# ----------------------------------------------------------------------------------------------- layout


@dataclass(frozen=True)
class Layout:
    """How the rows make StoryTurns: the kind, the role of each column used, the picture columns (a row's
    pictures, in order, when there are several) and the columns no role reads."""

    kind: str  # "commet", "a" or "b"
    roles: dict[Role, str]
    pictures: tuple[str, ...] = ()
    unused: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()  # of the unused columns, those whose plain values are kept as metadata

    def mapping(self) -> ColumnMapping:
        return mapping_of(self.roles, self.pictures)

    def describe(self) -> str:
        roles = self.roles
        if self.kind == "commet":
            text = "CoMMET's own layout: one row per StoryTurn, turns nested"
        elif self.kind == "a":
            where = f"; pictures from {', '.join(map(repr, self.pictures))}" if self.pictures else ""
            text = (f"layout (a): one row per StoryTurn, turns in the paper's pipe format from {roles[Role.TURNS]!r}"
                    f"{where}; columns {self.mapping()}")
        else:
            order = f"ordered by {roles[Role.TURN]!r}" if Role.TURN in roles else "in file order (no turn column)"
            text = (f"layout (b): one row per turn, grouped into StoryTurns by {roles[Role.ID]!r}, {order}; "
                    f"columns {self.mapping()}")
        return text + self.not_used()

    def not_used(self) -> str:
        """The columns no role reads, said (nothing is dropped silently)."""
        if not self.unused:
            return ""
        kept = [c for c in self.unused if c in self.kept]
        dropped = [c for c in self.unused if c not in self.kept]
        said = ([f"kept as metadata: {', '.join(kept)}"] if kept else []) + \
            ([f"not read: {', '.join(dropped)}"] if dropped else [])
        return f"; other columns {'; '.join(said)}"


def detect_layout(table: Table, given: ColumnMapping | None, taxonomy: Taxonomy = BOOKLET) -> Layout:
    """The layout of ``table``: from the roles ``given`` (``--columns``) and those its column names say.

    Raises :class:`ColumnsError` for a mapping naming a column the table lacks or of the wrong type,
    and :class:`FormatError` with the mapping help when the roles needed are not found.
    """
    names = {c.name: c for c in table.columns}
    explicit = given.as_dict() if given is not None else {}
    pictures: list[str] = expand_columns(given.all(Role.IMAGE), list(names)) if given is not None and \
        given.all(Role.IMAGE) else []
    if pictures:
        explicit[Role.IMAGE] = pictures[0]
    for role, column in [*explicit.items(), *((Role.IMAGE, c) for c in pictures[1:])]:
        if column not in names:
            raise ColumnsError(f"--columns: {table.where} has no column {column!r} (columns: "
                               f"{', '.join(names) or 'none'})")
        if not fits(role, names[column]):
            raise ColumnsError(f"--columns: column {column!r} ({names[column].kind}) cannot be the {role.value}")
    taken = set(explicit.values()) | set(pictures)
    free = [c for c in table.columns if c.name not in taken]
    found = {role: column for role, column in by_name(free).items() if role not in explicit}
    if Role.IMAGE not in explicit and Role.IMAGE not in found:
        pictures = numbered_pictures(free)
        if pictures:
            found[Role.IMAGE] = pictures[0]
    roles = {**found, **explicit}
    turns = names.get(roles.get(Role.TURNS, ""))
    if turns is not None and turns.nested_turns:
        if "task" not in names and Role.TASK not in roles:
            raise _fail(table, None, None, None, "task",
                        f"missing required column 'task' (columns: {', '.join(names)})")
        return _layout(table, "commet", {role: column for role, column in roles.items() if role in STORY_ROLES},
                       (), {"turns", "task", "category", "mental_states", "image_dependent", "source", "id", "meta",
                            "image_files"})
    required: tuple[Role, ...]
    if Role.TURNS in roles:
        required, kind = REQUIRED_PIPE, "a"
        roles = {r: c for r, c in roles.items() if r in (Role.TURNS, Role.IMAGE, *STORY_ROLES)}
    elif Role.QUESTION in roles and Role.ANSWER in roles:
        required, kind = REQUIRED_TURN_ROWS, "b"
        roles.pop(Role.TURNS, None)
    else:
        raise _help(table, roles, "no column of pipe-format turns, and no question and answer columns", taxonomy)
    missing = [role.value for role in required if role not in roles]
    if missing:
        raise _help(table, roles, f"no {', no '.join(missing)} column found", taxonomy)
    if Role.IMAGE in roles and not pictures:
        pictures = [roles[Role.IMAGE]]
    return _layout(table, kind, roles, tuple(pictures) if Role.IMAGE in roles else ())


def _layout(table: Table, kind: str, roles: dict[Role, str], pictures: tuple[str, ...],
            read: set[str] | None = None) -> Layout:
    """The layout, with the columns it leaves unread (plain ones are kept as metadata in layouts (a) and (b))."""
    used = set(roles.values()) | set(pictures) | (read or set())
    unused = tuple(c.name for c in table.columns if c.name not in used)
    kept = tuple(c.name for c in table.columns if c.name in unused and kind != "commet" and not c.picture
                 and (c.text or c.number or c.flag))
    return Layout(kind, roles, pictures, unused, kept)


def _help(table: Table, roles: dict[Role, str], reason: str, taxonomy: Taxonomy) -> FormatError:
    """The mapping help: the guessed mapping only when the loader reads the table with it (never a blank or a
    guess it would then refuse); else why none was found, and the adapter that reads any rows."""
    guesses = by_content(table.columns, table.rows[:200], taxonomy, roles)
    required = REQUIRED_PIPE if Role.TURNS in guesses else REQUIRED_TURN_ROWS
    missing = [role.value for role in required if role not in guesses]
    mapping: ColumnMapping | None = None
    refused: str | None = f"no column can be the {', the '.join(missing)}" if missing else None
    if not missing:
        mapping = mapping_of(guesses)
        try:
            layout = detect_layout(table, mapping, taxonomy)
            trial = Dataset(storyturns=[], taxonomy=taxonomy)
            if layout.kind == "a":
                _pipe_rows(table, layout, trial, Source("trial", "trial", table.where), 0)
            elif layout.kind == "b":
                _turn_rows(table, layout, trial, Source("trial", "trial", table.where))
        except (FormatError, ColumnsError) as exc:
            problems = getattr(exc, "problems", None)
            first = problems[0] if problems else None
            refused = f"the best guesses, --columns {mapping}, do not read it: " + (
                f"row {first.line} field {first.field}: {first.message}" if first is not None else str(exc))
            refused = refused if len(refused) < 400 else refused[:397] + "..."
            mapping = None
    message = mapping_help(table.columns, table.rows[0] if table.rows else None, len(table.rows), mapping, reason,
                           refused)
    return FormatError([Problem(table.where, None, None, None, "columns", message, message_limit=MAPPING_HELP_LIMIT)])


# ----------------------------------------------------------------------------------------------- values


def _text(value: object) -> str | None:
    """A cell as text (numbers too: ids and turns are often integers), None when empty."""
    if value is None or isinstance(value, (bytes, dict, list)):
        return None
    text = str(value).strip()
    return text or None


def pipe_turns(value: object) -> list[str] | None:
    """The turn strings a cell holds: a list, or one string (JSON or Python list, the paper's printed form,
    one turn a line, or a single turn); None when it holds none of these."""
    if isinstance(value, list):
        return [str(t) for t in value] if all(isinstance(t, str) for t in value) and value else None
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.startswith("["):
        parsed: object = None
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            if len(text) < MAX_LIST_TEXT:
                try:
                    parsed = ast.literal_eval(text)
                except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                    parsed = None
        if isinstance(parsed, (list, tuple)):
            return pipe_turns(list(parsed))
    printed = printed_turns(text)
    if printed:
        return printed
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and all(line.count("|") >= 4 for line in lines):
        return lines
    return None


@dataclass
class _Story:
    """What a StoryTurn takes from its row (or the rows of its story), the category resolved."""

    task: str
    category: str
    image_dependent: bool
    mental_states: list[str] | None
    source: str


def _story_fields(table: Table, roles: dict[Role, str], row: dict[str, object], line: int, story_id: str,
                  source: Source, taxonomy: Taxonomy) -> _Story:
    def cell(role: Role) -> object:
        return row.get(roles[role]) if role in roles else None

    raw_task = _text(cell(Role.TASK))
    if raw_task is None:
        raise _fail(table, line, story_id, None, roles.get(Role.TASK, "task"), "no task")
    task = canonical_task(raw_task, taxonomy) or raw_task
    flag = cell(Role.IMAGE_DEPENDENT)
    if Role.IMAGE_DEPENDENT in roles and flag not in (None, ""):
        image_dependent = parse_flag(flag)
        if image_dependent is None:
            raise _fail(table, line, story_id, None, roles[Role.IMAGE_DEPENDENT],
                        f"{flag!r} says neither image-dependent nor text-complete (true/false, yes/no, "
                        "image-dependent/text-complete)")
    else:
        image_dependent = bool(table.subset_flag())
    raw_category = _text(cell(Role.CATEGORY))
    known = taxonomy.task(task)
    if raw_category is not None:
        category = canonical_category(raw_category)
    elif known is not None:
        category = known.category_for(image_dependent)
    else:
        raise _fail(table, line, story_id, None, roles.get(Role.CATEGORY, "category"),
                    f"no category, and task {raw_task!r} is not a known task to take it from: {CATEGORY_HINT}")
    states = cell(Role.MENTAL_STATES)
    if isinstance(states, str):
        states = [s.strip() for s in re.split(r"[,;]", states) if s.strip()]
    if states is not None and not (isinstance(states, list) and all(isinstance(s, str) for s in states)):
        raise _fail(table, line, story_id, None, roles[Role.MENTAL_STATES], "must be a list of mental states")
    return _Story(task, category, image_dependent, states or None, _text(cell(Role.SOURCE)) or source.source)


def _meta(row: dict[str, object], used: set[str], columns: list[Column]) -> dict[str, object]:
    """The row's other plain values (text, numbers, booleans), kept as metadata under their column names (the
    ``read from`` line lists these columns, and those it does not read)."""
    return {c.name: row[c.name] for c in columns if c.name not in used and not c.picture
            and isinstance(row.get(c.name), (str, int, float, bool)) and row.get(c.name) != ""}


# ----------------------------------------------------------------------------------------------- pictures


@dataclass(frozen=True)
class _Picture:
    name: str | None  # the file name it was saved under, when known
    data: bytes | None


def _pictures(value: object) -> list[_Picture]:
    """The pictures of a cell: ``{bytes, path}`` cells, lists of them, or file names."""
    if value is None:
        return []
    if isinstance(value, list):
        return [p for item in value for p in _pictures(item)]
    if isinstance(value, dict):
        path = value.get("path")
        name = PurePosixPath(str(path).replace("\\", "/")).name if path else None
        data = value.get("bytes")
        return [_Picture(name or None, bytes(data) if isinstance(data, (bytes, bytearray)) else None)]
    if isinstance(value, (bytes, bytearray)):
        return [_Picture(None, bytes(value))]
    text = _text(value)
    return [_Picture(text, None)] if text else []


_MAGIC = ((b"\x89PNG", ".png"), (b"\xff\xd8", ".jpg"), (b"GIF8", ".gif"), (b"RIFF", ".webp"))


def _suffix(data: bytes | None) -> str:
    return next((suffix for magic, suffix in _MAGIC if data and data.startswith(magic)), ".png")


def _register(dataset: Dataset, image_id: str, data: bytes | None, source: Source, fallback: str) -> str:
    """Keep a picture under ``image_id`` (``fallback`` when another picture has that id); a picture named
    but not given is read from the data's folder, else left for validation to report as missing."""
    if data is None:
        data = source.read_picture(image_id)
        if data is None:
            return image_id
    if dataset.images.get(image_id, data) != data:
        image_id = fallback
    dataset.images[image_id] = data
    return image_id


def _attach_pipe_pictures(st: StoryTurn, pictures: list[_Picture], dataset: Dataset, source: Source,
                          table: Table, line: int, column: str | None) -> None:
    """Give the ids the turns name their pictures: by file name, else in order when names say nothing."""
    ids = list(dict.fromkeys(t.image for t in st.turns if t.image))
    chosen: dict[str, _Picture] = {}
    for image_id in ids:
        stem = PurePosixPath(image_id).stem
        candidates = set(image_file_candidates(image_id)) | set(image_file_candidates(PurePosixPath(image_id).name))
        match = next((p for p in pictures if p.name and (p.name in candidates or PurePosixPath(p.name).stem == stem)
                      and p not in chosen.values()), None)
        if match is not None:
            chosen[image_id] = match
    left_ids = [i for i in ids if i not in chosen]
    left = [p for p in pictures if p not in chosen.values()]
    if left_ids and len(left) == len(left_ids) and not any(p.name for p in left if p.name in left_ids):
        chosen.update(zip(left_ids, left, strict=True))  # unnamed pictures, one per id, in order
        left = []
    if left and column is not None:
        dataset.warnings.append(_problem(table, line, st.id, None, column,
                                         f"{len(left)} picture(s) named by no turn of this StoryTurn", "warning"))
    renamed: dict[str, str] = {}
    for k, image_id in enumerate(ids):
        picture = chosen.get(image_id)
        renamed[image_id] = _register(dataset, image_id, picture.data if picture else None, source,
                                      f"{st.id}-{k}{PurePosixPath(image_id).suffix or _suffix(None)}")
    for turn in st.turns:
        if turn.image:
            turn.image = renamed[turn.image]


# ----------------------------------------------------------------------------------------------- (a)


def _pipe_rows(table: Table, layout: Layout, dataset: Dataset, source: Source, first: int) -> None:
    roles = layout.roles
    used = set(roles.values()) | set(layout.pictures)
    for index, row in enumerate(table.rows):
        line = index + 1
        story_id = _text(row.get(roles[Role.ID])) if Role.ID in roles else None
        story_id = story_id or f"{source.name}-{first + index + 1:04d}"
        turns = pipe_turns(row.get(roles[Role.TURNS]))
        if turns is None:
            raise _fail(table, line, story_id, None, roles[Role.TURNS],
                        "not the paper's pipe-format turns (story | feedback | question | image | answer): "
                        "a list of such strings, or one string holding them")
        story = _story_fields(table, roles, row, line, story_id, source, dataset.taxonomy)
        raw = RawStoryTurn(turns=turns, id=story_id, task=story.task, category=story.category,
                           image_dependent=story.image_dependent, mental_states=story.mental_states,
                           source=story.source, line=line)
        st, warnings = parse_storyturn(raw, file=table.where, default_id=story_id)
        if story.mental_states is None and dataset.taxonomy.task(st.task) is None:
            st.mental_states = []
        st.meta = _meta(row, used, table.columns)
        dataset.warnings.extend(warnings)
        _attach_pipe_pictures(st, [p for column in layout.pictures for p in _pictures(row.get(column))],
                              dataset, source, table, line, roles.get(Role.IMAGE))
        _add(dataset, st, line)
        dataset.rows_read.append(RowsRead(table.where, st.id, tuple((line,) for _ in st.turns)))


def _add(dataset: Dataset, st: StoryTurn, line: int) -> None:
    dataset.storyturns.append(st)
    dataset.lines.setdefault(st.id, line)
    dataset.line_list.append(line)


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
                        f"turn {number} of this story is also on row {keyed[number]}")
        keyed[number] = line
    return sorted(members, key=lambda member: _turn_number(member[1].get(column)) or 0)


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


def _turn_feedback(table: Table, line: int, story_id: str, k: int, column: str | None,
                   value: object) -> Feedback | None:
    if value is None or value == "":
        return None
    try:
        if isinstance(value, str):
            return parse_feedback(value)
        if isinstance(value, dict):
            feedback = Feedback.model_validate({key: v for key, v in value.items() if v not in (None, [])})
            return None if feedback.is_empty() else feedback
    except (ValueError, ValidationError) as exc:
        raise _fail(table, line, story_id, k, column, str(exc).splitlines()[0]) from None
    raise _fail(table, line, story_id, k, column, f"feedback must be text, not {type(value).__name__}")


def _options(table: Table, line: int, story_id: str, k: int, column: str | None, value: object,
             question: str) -> list[dict[str, object]]:
    """A turn's options: its options cell read in any common notation (:func:`~commet.format.cells.options_cell`),
    else those its question writes; a cell that cannot be read is a located error, never dropped."""
    try:
        options = options_cell(value)
    except ValueError as exc:
        raise _fail(table, line, story_id, k, column, str(exc)) from None
    return options if options else [o.model_dump() for o in options_in_question(question)]


def _turn_rows(table: Table, layout: Layout, dataset: Dataset, source: Source) -> None:
    roles = layout.roles
    used = set(roles.values()) | set(layout.pictures)
    groups: dict[str, list[tuple[int, dict[str, object]]]] = {}
    for index, row in enumerate(table.rows):
        story_id = _text(row.get(roles[Role.ID]))
        if story_id is None:
            raise _fail(table, index + 1, None, None, roles[Role.ID], "no story id")
        groups.setdefault(story_id, []).append((index + 1, row))
    for story_id, members in groups.items():
        members = _ordered(table, roles, story_id, members)
        _same_for_the_story(table, roles, story_id, members)
        line = members[0][0]
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
        answer: str | list[str] = [str(a).strip() for a in value if str(a).strip()] if isinstance(value, list) \
            else _text(value) or ""
        if not answer:
            raise _fail(table, line, story_id, k, roles[Role.ANSWER], "empty answer")
        feedback = _turn_feedback(table, line, story_id, k, roles.get(Role.FEEDBACK), cell(row, Role.FEEDBACK))
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


# ----------------------------------------------------------------------------------------------- the dataset


def declared_taxonomy(storyturns: list[StoryTurn], base: Taxonomy = BOOKLET) -> Taxonomy:
    """``base``, or, when the StoryTurns have tasks, task-category pairs or mental states it lacks, ``base``
    extended by them (declared), so that data reports under its own categories."""
    pairs = list(dict.fromkeys((st.task, st.category) for st in storyturns))
    states = list(dict.fromkeys(s for st in storyturns for s in st.mental_states if s not in base.mental_states))
    if not states and all((task := base.task(t)) is not None and c in task.categories for t, c in pairs):
        return base
    tasks: list[Task] = []
    for task in base.tasks:
        extra = tuple(c for t, c in pairs if t == task.id and c not in task.categories)
        tasks.append(replace(task, other_categories=task.other_categories + extra) if extra else task)
    for task_id in dict.fromkeys(t for t, _ in pairs if base.task(t) is None):
        own = [c for t, c in pairs if t == task_id]
        tasks.append(Task(task_id, task_id.replace("_", " "), own[0], (), "", "", "", None, tuple(own[1:])))
    categories = (*base.categories, *dict.fromkeys(c for _, c in pairs if c not in base.categories))
    return Taxonomy(tuple(tasks), categories, (*base.mental_states, *states), declared=True)


def dataset_from_tables(tables: list[Table], source: Source, given: ColumnMapping | None = None,
                        dataset: Dataset | None = None, adapter: Adapter | None = None) -> Dataset:
    """The StoryTurns of ``tables`` (the splits of one dataset, in order; of several configs, config by config).

    The splits of one config must share a layout; each config may have its own. With several tables each
    StoryTurn keeps its split (and config) in ``meta``.
    """
    from commet.format.hf import _storyturn

    dataset = dataset if dataset is not None else Dataset(storyturns=[], name=source.name)
    dataset.source_file = tables[0].where if len(tables) == 1 else source.location
    if adapter is not None:
        return _adapted(tables, source, dataset, adapter)
    layouts: dict[str | None, Layout] = {}
    described: list[str] = []
    for table in tables:
        this = detect_layout(table, given, dataset.taxonomy)
        layout = layouts.setdefault(table.config, this)
        if this != layout:
            raise _fail(table, None, None, None, "columns", f"this split's columns differ from the first split's "
                                                           f"({this.describe()}; first: {layout.describe()})")
        if this is layout:
            described.append(f"[{table.config}] {this.describe()}" if table.config else this.describe())
        first = len(dataset.storyturns)
        if this.kind == "commet":
            for index, row in enumerate(table.rows):
                row = {**row, **{role.value: row.get(column) for role, column in this.roles.items()}}
                nested = row.get("turns")
                if isinstance(nested, dict):  # a Sequence of structs, stored as a struct of lists
                    row["turns"] = _transposed(nested)
                _add(dataset, _storyturn(row, index, Path(table.where), dataset), index + 1)
        elif this.kind == "a":
            _pipe_rows(table, this, dataset, source, first)
        else:
            _turn_rows(table, this, dataset, source)
        for st in dataset.storyturns[first:]:
            if len(tables) > 1 and table.split:
                st.meta.setdefault("split", table.split)
            if table.config:
                st.meta.setdefault("config", table.config)
        dataset.tables_read.append(TableRead(table.where, len(table.rows), this.describe(),
                                             tuple((r.value, c) for r, c in this.mapping().pairs),
                                             tuple(c for c in this.unused if c in this.kept),
                                             tuple(c for c in this.unused if c not in this.kept)))
        if this.kind == "commet":
            dataset.rows_read.extend(RowsRead(table.where, st.id, tuple((i + 1,) for _ in st.turns))
                                     for i, st in enumerate(dataset.storyturns[first:]))
    dataset.taxonomy = declared_taxonomy(dataset.storyturns, dataset.taxonomy)
    dataset.origin = Origin(location=source.location, layout="; ".join(described),
                            columns=str(given) if given is not None else None)
    return dataset


def _adapted(tables: list[Table], source: Source, dataset: Dataset, adapter: Adapter) -> Dataset:
    """The StoryTurns ``adapter`` makes of ``tables`` (:mod:`commet.format.adapters`), validated as any are."""
    empty = 0
    for table in tables:
        first = len(dataset.storyturns)
        made = apply_adapter(adapter, Rows(table.where, table.rows, table.split, table.config), dataset, source.name,
                             source.read_picture)
        empty += made
        for st in dataset.storyturns[first:]:
            if len(tables) > 1 and table.split:
                st.meta.setdefault("split", table.split)
            if table.config:
                st.meta.setdefault("config", table.config)
        dataset.tables_read.append(TableRead(table.where, len(table.rows), adapter.describe() + (
            f"; {made} row(s) made no StoryTurn" if made else "")))
    said = f"; {empty} row(s) made no StoryTurn (the adapter returned none)" if empty else ""
    dataset.taxonomy = declared_taxonomy(dataset.storyturns, dataset.taxonomy)
    dataset.origin = Origin(location=source.location, layout=adapter.describe() + said, adapter=adapter.spec,
                            adapter_source=adapter.source)
    return dataset


def _transposed(columns: dict[str, object]) -> list[dict[str, object]]:
    lists = {k: v for k, v in columns.items() if isinstance(v, list)}
    count = max((len(v) for v in lists.values()), default=0)
    return [{k: v[i] if i < len(v) else None for k, v in lists.items()} for i in range(count)]
