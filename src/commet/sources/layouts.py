"""Tables written by others, made into StoryTurns: the layouts CoMMET recognises.

A table (the rows of one split of one config, with its columns) comes from a Hub dataset, a folder of
parquet, JSON lines or CSV files, or an image folder with ``metadata.jsonl`` / ``metadata.csv`` (there
each row's picture is already an ``Image`` cell). Its rows make StoryTurns in one of these layouts:

* **CoMMET's own**: one row per StoryTurn, its turns a list of structs (``commet convert --to hf``);
* **(a) one row per StoryTurn**, its turns in the paper's pipe format
  (``story | feedback | question | image | answer``): a list of such strings, or one string holding
  them (a JSON or Python list, the paper's printed ``"turn", "turn"`` form, one turn a line); the
  pictures the turns name come from picture columns (one, a list, or numbered ``Image_1``..; matched by
  file name, else in order), from files of the data folder, or from a pictures config;
* **(b) one row per turn (or per question)**, grouped into StoryTurns by a story id column and
  ordered by a turn column (file order without one), each row with its own picture
  (:mod:`commet.sources.turn_rows`);
* **(d) rows holding a StoryTurn's lists** (questions, answers, ...), such as one row per picture
  (:mod:`commet.sources.story_rows`);
* **chat messages** in the OpenAI or Hugging Face format (:mod:`commet.sources.chat`).

Which columns play which role is found from their names (:mod:`commet.sources.columns`), or given
with ``--columns``; otherwise one message lists the columns and a mapping that reads the table, or
says that none does and points to an adapter (:mod:`commet.sources.adapters`), which makes StoryTurns
of any rows. Tasks and categories are read tolerantly; a row without a category takes its task's,
and a task that is not one of the 18 booklet tasks needs a category column (a located error says
so). When the data's tasks or task-category pairs are not the booklet's, the dataset declares its
own taxonomy (the booklet's, extended by what the data holds), so that it validates and reports as
it is.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from commet.format.dataset import Dataset, Origin
from commet.format.model import StoryTurn
from commet.format.origin import RowsRead, TableRead
from commet.format.pipe import (
    RawStoryTurn,
    parse_storyturn,
)
from commet.format.problems import FormatError, Problem
from commet.sources.adapters import Adapter, Rows, apply_adapter
from commet.sources.chat import _chat_rows, holds_messages
from commet.sources.columns import (
    MAPPING_HELP_LIMIT,
    NAMES,
    REQUIRED_CHAT,
    REQUIRED_PIPE,
    REQUIRED_STORY_ROWS,
    STORY_ROLES,
    ColumnMapping,
    ColumnsError,
    Role,
    by_content,
    by_name,
    column_key,
    expand_columns,
    fits,
    mapping_help,
    mapping_of,
    numbered_pictures,
)
from commet.sources.option_columns import fold_option_columns
from commet.sources.story_rows import _story_rows, holds_lists
from commet.sources.table import (
    CATEGORY_HINT,
    Layout,
    PictureReader,
    Source,
    Table,
    _add,
    _attach_pipe_pictures,
    _fail,
    _meta,
    _pictures,
    _story_fields,
    pipe_turns,
)
from commet.sources.turn_rows import _turn_rows, story_groups, turn_rows_required
from commet.taxonomy import BOOKLET, Task, Taxonomy

__all__ = ["CATEGORY_HINT", "Layout", "PictureReader", "Source", "Table", "dataset_from_tables", "declared_taxonomy",
           "detect_layout", "pipe_turns"]

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
    if table.options_of is not None and Role.OPTIONS not in explicit:  # option_a..option_d, made one column
        found = {role: column for role, column in found.items() if role is not Role.OPTIONS}
        found[Role.OPTIONS] = table.options_of
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
    if Role.MESSAGES in roles and Role.QUESTION not in roles and holds_messages(table, roles[Role.MESSAGES]):
        required, kind = REQUIRED_CHAT, "chat"
        roles = {r: c for r, c in roles.items() if r in (Role.MESSAGES, Role.TURN, Role.ANSWER, Role.OPTIONS,
                                                         Role.IMAGE, *STORY_ROLES)}
    elif Role.TURNS in roles:
        required, kind = REQUIRED_PIPE, "a"
        roles = {r: c for r, c in roles.items() if r in (Role.TURNS, Role.TURN, Role.IMAGE, *STORY_ROLES)}
    elif Role.QUESTION in roles and Role.ANSWER in roles and holds_lists(table, roles[Role.QUESTION]):
        required, kind = REQUIRED_STORY_ROWS, "d"  # each row holds its StoryTurn's questions as a list
        roles.pop(Role.TURNS, None)  # right/wrong feedback columns are lists too here (story_rows.LIST_ROLES)
    elif Role.QUESTION in roles and Role.ANSWER in roles:
        required, kind = turn_rows_required(roles), "b"
        roles.pop(Role.TURNS, None)
    else:
        raise _help(table, roles, "no column of pipe-format turns, and no question and answer columns" +
                    _unfit(table, roles), taxonomy)
    missing = [role.value for role in required if role not in roles  # a split named for a task gives it
               and not (role is Role.TASK and table.named_task(taxonomy) is not None)]
    if missing:
        raise _help(table, roles, f"no {', no '.join(missing)} column found", taxonomy)
    if Role.IMAGE in roles and not pictures:
        pictures = [roles[Role.IMAGE]]
    return _layout(table, kind, roles, tuple(pictures) if Role.IMAGE in roles else ())


def _unfit(table: Table, roles: dict[Role, str]) -> str:
    """Columns named for the question or the answer whose values cannot be one (an answer of option numbers)."""
    said = []
    for role in (Role.QUESTION, Role.ANSWER):
        column = next((c for c in table.columns if role not in roles and column_key(c.name) in NAMES[role]), None)
        if column is not None and not fits(role, column) and _blank(table, column.name):
            said.append(f"column {column.name!r} is empty in every row (read as {column.kind}, as a CSV reader reads "
                        f"a column of no values): write the {role.value}s")
        elif column is not None and not fits(role, column):
            numbers = ": option numbers are not read as answers, whether they count from 0 or 1 is not guessed; " \
                      "write the option's text or label, or make the StoryTurns with --adapter FILE.py:FUNCTION"
            said.append(f"column {column.name!r} holds {column.kind}, which cannot be the {role.value}" +
                        (numbers if role is Role.ANSWER and column.number else ""))
    return f": {'; '.join(said)}" if said else ""


def _blank(table: Table, column: str) -> bool:
    """Whether ``column`` holds no value in any row (null, or the NaN a CSV reader writes for an empty cell)."""
    return all(value is None or value != value for value in (row.get(column) for row in table.rows))


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
    if Role.QUESTION not in roles and Role.TURNS not in roles:  # a story column alone makes nothing: its column
        roles = {r: c for r, c in roles.items() if r is not Role.STORY}  # may hold pipe turns its name hides
    guesses = by_content(table.columns, table.rows[:200], taxonomy, roles)
    if Role.MESSAGES not in guesses and Role.QUESTION not in roles:  # chat messages under a name not foreseen
        chat = next((c.name for c in table.columns if c.name not in guesses.values() and fits(Role.MESSAGES, c)
                     and holds_messages(table, c.name)), None)
        if chat is not None:
            guesses = {r: c for r, c in guesses.items() if r not in (Role.QUESTION, Role.ANSWER, Role.STORY,
                                                                     Role.FEEDBACK, Role.TURNS)}
            guesses[Role.MESSAGES] = chat
    required = REQUIRED_CHAT if Role.MESSAGES in guesses and Role.QUESTION not in guesses else \
        REQUIRED_PIPE if Role.TURNS in guesses else REQUIRED_STORY_ROWS if Role.QUESTION in guesses and \
        holds_lists(table, guesses[Role.QUESTION]) else turn_rows_required(guesses)
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
            elif layout.kind == "d":
                _story_rows(table, layout, trial, Source("trial", "trial", table.where), 0)
            elif layout.kind == "chat":
                _chat_rows(table, layout, trial, Source("trial", "trial", table.where), 0)
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


# ----------------------------------------------------------------------------------------------- (a)


def _pipe_rows(table: Table, layout: Layout, dataset: Dataset, source: Source, first: int) -> None:
    """Rows of pipe turns: a StoryTurn a row, or, where rows share a story id, its rows' turns in turn order (the
    paper's text one turn a row), the rows agreeing on the story's fields."""
    roles = layout.roles
    used = set(roles.values()) | set(layout.pictures)
    unnamed = None if Role.ID in roles else source.name
    for story_id, members in story_groups(table, roles, unnamed, first).items():
        line, row = members[0]
        turns: list[str] = []
        made_by: list[tuple[int]] = []
        for member_line, member in members:
            these = pipe_turns(member.get(roles[Role.TURNS]))
            if these is None:
                raise _fail(table, member_line, story_id, None, roles[Role.TURNS],
                            "not the paper's pipe-format turns (story | feedback | question | image | answer): "
                            "a list of such strings, or one string holding them")
            turns.extend(these)
            made_by.extend((member_line,) for _ in these)
        story = _story_fields(table, roles, row, line, story_id, source, dataset.taxonomy)
        raw = RawStoryTurn(turns=turns, id=story_id, task=story.task, category=story.category,
                           image_dependent=story.image_dependent, mental_states=story.mental_states,
                           source=story.source, line=line)
        st, warnings = parse_storyturn(raw, file=table.where, default_id=story_id)
        if story.mental_states is None and dataset.taxonomy.task(st.task) is None:
            st.mental_states = []
        st.meta = _meta(row, used, table.columns)
        dataset.warnings.extend(warnings)
        _attach_pipe_pictures(st, [p for _, member in members for column in layout.pictures
                                   for p in _pictures(member.get(column))],
                              dataset, source, table, line, roles.get(Role.IMAGE))
        _add(dataset, st, line)
        dataset.rows_read.append(RowsRead(table.where, st.id, tuple(made_by)))


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
    from commet.sources.hf import _storyturn

    dataset = dataset if dataset is not None else Dataset(storyturns=[], name=source.name)
    dataset.source_file = tables[0].where if len(tables) == 1 else source.location
    dataset.split = tables[0].split if len(tables) == 1 else None
    if adapter is not None:
        return _adapted(tables, source, dataset, adapter)
    layouts: dict[str | None, Layout] = {}
    described: list[str] = []
    several_configs = len({table.config for table in tables}) > 1
    recorded = given
    for table in tables:
        table, given = fold_option_columns(table, recorded)
        this = detect_layout(table, given, dataset.taxonomy)
        layout = layouts.setdefault(table.config, this)
        if this != layout:
            raise _fail(table, None, None, None, "columns", f"this split's columns differ from the first split's "
                                                           f"({this.describe()}; first: {layout.describe()})")
        if this is layout:
            described.append(f"[{table.config}] {this.describe()}" if several_configs else this.describe())
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
        elif this.kind == "d":
            _story_rows(table, this, dataset, source, first)
        elif this.kind == "chat":
            _chat_rows(table, this, dataset, source, first)
        else:
            _turn_rows(table, this, dataset, source, first)
        for st in dataset.storyturns[first:]:
            if len(tables) > 1 and table.split:
                st.meta.setdefault("split", table.split)
            if several_configs and table.config:
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
                            columns=str(recorded) if recorded is not None else None)
    return dataset


def _adapted(tables: list[Table], source: Source, dataset: Dataset, adapter: Adapter) -> Dataset:
    """The StoryTurns ``adapter`` makes of ``tables`` (:mod:`commet.sources.adapters`), validated as any are."""
    empty = 0
    several_configs = len({table.config for table in tables}) > 1
    for table in tables:
        first = len(dataset.storyturns)
        made = apply_adapter(adapter, Rows(table.where, table.rows, table.split, table.config), dataset, source.name,
                             source.read_picture)
        empty += made
        for st in dataset.storyturns[first:]:
            if len(tables) > 1 and table.split:
                st.meta.setdefault("split", table.split)
            if several_configs and table.config:
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
