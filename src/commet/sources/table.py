"""What every table layout shares: the table, where it comes from, how its rows were read (the layout),
and the readers of cells (text, story fields, metadata, pictures) that make StoryTurns of rows.

:mod:`commet.sources.layouts` tells the layout of a table and reads one row per StoryTurn;
:mod:`commet.sources.turn_rows` reads one row per turn (or per question, or per picture).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from commet.format.dataset import Dataset, image_file_candidates
from commet.format.model import StoryTurn
from commet.format.pipe import (
    printed_turns,
)
from commet.format.problems import FormatError, Problem, Severity
from commet.sources.columns import (
    Column,
    ColumnMapping,
    Role,
    canonical_category,
    canonical_task,
    mapping_of,
    parse_flag,
    subset_flag,
)
from commet.taxonomy import Taxonomy

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
    options_of: str | None = None  # the options column made of option columns (``option_a..option_d``)
    files: tuple[tuple[str, int], ...] = ()  # its files and the rows each holds, when several (table_files)

    def subset_flag(self) -> bool | None:
        """Image-dependence its config or split name says (``image_dependent``, ``text-complete``), else None."""
        for name in (self.config, self.split):
            flag = subset_flag(name or "")
            if flag is not None:
                return flag
        return None

    def named_task(self, taxonomy: Taxonomy) -> str | None:
        """The task its config or split is named for (``false_belief_location``, ``Sarcasm``), else None: a
        release split by task gives its StoryTurns that task where no column says one."""
        for name in (self.config, self.split):
            task = canonical_task(name, taxonomy) if name else None
            if task is not None and taxonomy.task(task) is not None:
                return task
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


def row_said(table: Table, line: int) -> str:
    """A row of ``table`` as a message names it: ``row N`` (of the file the problem names), or its file and row when
    the table has several files."""
    from commet.sources.table_files import file_and_line

    found = file_and_line(table.files, line) if len(table.files) > 1 else None
    return f"{Path(found[0]).name} row {found[1]}" if found else f"row {line}"


def _fail(table: Table, line: int | None, story: str | None, turn: int | None, field: str | None,
          message: str) -> FormatError:
    return FormatError([_problem(table, line, story, turn, field, message)])


# ----------------------------------------------------------------------------------------------- layout


@dataclass(frozen=True)
class Layout:
    """How the rows make StoryTurns: the kind, the role of each column used, the picture columns (a row's
    pictures, in order, when there are several) and the columns no role reads."""

    kind: str  # "commet", "a", "b", "d" or "chat"
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
            by = f"the rows of a story id {roles[Role.ID]!r} joined" if Role.ID in roles else "one row per StoryTurn"
            text = (f"layout (a): {by}, turns in the paper's pipe format from {roles[Role.TURNS]!r}"
                    f"{where}; columns {self.mapping()}")
        elif self.kind == "chat":
            by = f"grouped into StoryTurns by {roles[Role.ID]!r}" if Role.ID in roles else "one row per StoryTurn"
            text = (f"chat messages from {roles[Role.MESSAGES]!r} ({by}): each user message a turn (feedback, story "
                    f"and question by their labels, else the last part or paragraph the question), the assistant "
                    f"message after it the answer; columns {self.mapping()}")
        elif self.kind == "d":
            by = f"grouped by {roles[Role.ID]!r}" if Role.ID in roles else "consecutive rows with the same lists"
            placed = f", each row's picture on the turn {roles[Role.TURN]!r} names" if Role.TURN in roles else ""
            text = (f"layout (d): rows holding their StoryTurn's questions and answers as lists ({by}){placed}; "
                    f"columns {self.mapping()}")
        else:
            order = f"ordered by {roles[Role.TURN]!r}" if Role.TURN in roles else "in file order (no turn column)"
            grouped = f"grouped into StoryTurns by {roles[Role.ID]!r}, {order}" if Role.ID in roles else \
                "each row a one-turn StoryTurn (no story id, turn or feedback column: no row refers to another)"
            text = f"layout (b): one row per turn, {grouped}; columns {self.mapping()}"
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

    raw_task = _text(cell(Role.TASK)) or table.named_task(taxonomy)
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
    named = [p.name for p in left if p.name]
    if left_ids and len(left) == len(left_ids) and not named:
        chosen.update(zip(left_ids, left, strict=True))  # unnamed pictures, one per id, in order
        left = []
    unmatched = [i for i in left_ids if named and source.read_picture(i) is None]
    if unmatched:  # named pictures whose names match no turn: matched in order, they could show the wrong scene
        number = next(k for k, t in enumerate(st.turns) if t.image == unmatched[0])
        raise _fail(table, line, st.id, number, column or "image",
                    f"turn {number} names picture {unmatched[0]!r} and no picture of this row is named so (they are "
                    f"named {', '.join(repr(n) for n in named[:4])}); pictures are matched by file name, and in "
                    "order only when none is named: name the files as the turns do, or map them with an adapter")
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


def _add(dataset: Dataset, st: StoryTurn, line: int) -> None:
    dataset.storyturns.append(st)
    dataset.lines.setdefault(st.id, line)
    dataset.line_list.append(line)
