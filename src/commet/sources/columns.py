"""Which column of a table is which part of a StoryTurn: roles, the ``--columns`` mapping, guesses.

Tables written by others (a Hub dataset, a folder of JSON lines or CSV) name their columns as they
like. A column plays a *role* (``question``, ``answer``, ``task``, ...). Roles are found by the
column's name (``story_id``, ``question``, ``Task Type``, ...); when they cannot be, the loader
stops with one message listing the columns, their types and the first row, and the
``--columns role=column,...`` mapping to write, pre-filled with guesses from the columns' content
(never used without the user writing them). A mapping the user gives overrides the names.

Values are read tolerantly where their meaning is certain: the paper's category spellings
(``Belief_Emotion``, ``belief-emotion``, ``NLCE``, ``Non-Literal Communication with Emotion``),
task ids or names in any case with spaces or hyphens, and image-dependence written as a boolean,
``yes``/``no`` or ``image-dependent``/``text-complete``. Anything else is a located error.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

from commet.errors import CommetError
from commet.taxonomy import CATEGORIES, TASKS, Taxonomy


class Role(str, Enum):
    """What a column holds."""

    TURNS = "turns"  # one row per StoryTurn: its turns in the paper's pipe format (a list, or one string)
    MESSAGES = "messages"  # chat messages ({role, content}, OpenAI or Hugging Face): turns recovered from them
    ID = "id"  # the StoryTurn's id; with one row per turn, the story the row belongs to
    TURN = "turn"  # the turn's position in its story (one row per turn)
    STORY = "story"
    FEEDBACK = "feedback"
    FEEDBACK_RIGHT = "feedback_right"  # the booklet's "If right: ..." text in a column of its own (rows per turn)
    FEEDBACK_WRONG = "feedback_wrong"  # its "If wrong: ..." text
    QUESTION = "question"
    ANSWER = "answer"
    OPTIONS = "options"
    IMAGE = "image"  # a picture (Image), a list of pictures, or a picture's file name
    IMAGE_ID = "image_id"  # the id a turn names its picture by
    TASK = "task"
    CATEGORY = "category"
    IMAGE_DEPENDENT = "image_dependent"
    MENTAL_STATES = "mental_states"
    SOURCE = "source"


#: Roles of a whole StoryTurn (with one row per turn, every row of a story must agree on them).
STORY_ROLES = (Role.ID, Role.TASK, Role.CATEGORY, Role.IMAGE_DEPENDENT, Role.MENTAL_STATES, Role.SOURCE)

#: Column names (lower case, words joined by ``_``) that play each role, most telling first.
NAMES: dict[Role, tuple[str, ...]] = {
    Role.TURNS: ("storyturn", "storyturns", "story_turn", "story_turns", "turns", "pipe_turns"),
    Role.MESSAGES: ("messages", "conversation", "conversations", "chat", "dialogue", "dialog", "chat_messages"),
    Role.ID: ("story_id", "storyturn_id", "story_turn_id", "id", "sid", "story_index", "story_idx", "story_no",
              "story_number", "item_id", "uid"),
    Role.TURN: ("turn", "turn_id", "turn_index", "turn_idx", "turn_no", "turn_number", "turn_order", "round",
                "step", "question_index", "question_idx", "question_no", "question_number", "order"),
    Role.STORY: ("story", "story_text", "narrative", "context", "passage", "text", "stories", "story_texts"),
    Role.FEEDBACK: ("feedback", "feedback_text", "feedbacks"),
    Role.FEEDBACK_RIGHT: ("feedback_right", "feedback_if_right", "feedback_correct", "if_right", "if_correct",
                          "right_feedback", "correct_feedback", "feedback_when_right", "feedback_when_correct"),
    Role.FEEDBACK_WRONG: ("feedback_wrong", "feedback_if_wrong", "feedback_incorrect", "if_wrong", "if_incorrect",
                          "wrong_feedback", "incorrect_feedback", "feedback_when_wrong", "feedback_when_incorrect"),
    Role.QUESTION: ("question", "question_text", "query", "prompt", "questions"),
    Role.ANSWER: ("answers", "answer", "expected_answer", "expected_answers", "gold_answer", "correct_answer",
                  "ground_truth", "gold", "target", "label"),
    Role.OPTIONS: ("options", "choices", "candidates", "answer_options"),
    Role.IMAGE: ("image", "images", "picture", "pictures", "img", "imgs", "image_file", "image_files",
                 "file_name", "file_names"),
    Role.IMAGE_ID: ("image_id", "image_name", "picture_id", "picture_name", "image_path"),
    Role.TASK: ("task", "task_id", "task_type", "task_name", "tom_task", "booklet_task"),
    Role.CATEGORY: ("category", "mental_state_category", "dominant_mental_state", "tom_category", "ability",
                    "mental_state"),
    Role.IMAGE_DEPENDENT: ("image_dependent", "image_dependence", "needs_image", "image_required",
                           "requires_image"),
    Role.MENTAL_STATES: ("mental_states", "states", "mental_state_list"),
    Role.SOURCE: ("source", "origin"),
}


class ColumnsError(CommetError, ValueError):
    """A ``--columns`` mapping that cannot be used (the message says which part and why)."""


def column_key(name: str) -> str:
    """A column name as :data:`NAMES` spells them: lower case, words of CamelCase split (``StoryID`` is
    ``story_id``), every run of other characters one ``_``."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name)
    return re.sub(r"[^a-z0-9]+", "_", words.lower()).strip("_")


#: Roles a mapping may give several columns (in order) or a pattern of them: pictures in ``Image_1``..``Image_4``,
#: options in ``option_a``..``option_d`` (:mod:`commet.sources.option_columns`).
MULTI_ROLES = (Role.IMAGE, Role.OPTIONS)
_PATTERN = re.compile(r"[*?\[]")


@dataclass(frozen=True)
class ColumnMapping:
    """``role -> column``, in the order written; ``str()`` is the ``--columns`` text.

    ``image`` may name several columns (``image=Image_1,Image_2``) or a pattern (``image=Image_*``): a row's
    pictures are those columns' cells, in that order (a pattern's columns in natural order: ``Image_2``
    before ``Image_10``).
    """

    pairs: tuple[tuple[Role, str], ...] = ()

    @classmethod
    def parse(cls, text: str) -> ColumnMapping:
        """``role=column,role=column``; an unknown role, a role given twice, a column given two roles or an empty
        column is refused; a part without ``=`` after ``image=...`` is one more picture column."""
        pairs: list[tuple[Role, str]] = []
        for part in (p.strip() for p in text.split(",")):
            if not part:
                continue
            role_text, equals, column = part.partition("=")
            role_text, column = role_text.strip(), column.strip()
            if not equals and pairs and pairs[-1][0] in MULTI_ROLES:
                pairs.append((pairs[-1][0], role_text))
                continue
            if not equals or not column:
                raise ColumnsError(f"--columns: {part!r} is not ROLE=COLUMN (only image and options take several "
                                   "columns: image=Image_1,Image_2 or image=Image_*, options=option_a,option_b)")
            try:
                role = Role(role_text.lower().replace("-", "_"))
            except ValueError:
                raise ColumnsError(f"--columns: unknown role {role_text!r} (roles: "
                                   f"{', '.join(r.value for r in Role)})") from None
            if any(known is role for known, _ in pairs):
                raise ColumnsError(f"--columns: role {role.value!r} is given twice")
            other = next((known for known, named in pairs if named == column), None)
            if other is not None:  # (question=q,answer=q would make every expected answer the question)
                raise ColumnsError(f"--columns: column {column!r} is given two roles, {other.value} and {role.value}; "
                                   "a column has one role")
            pairs.append((role, column))
        if not pairs:
            raise ColumnsError("--columns: no ROLE=COLUMN given")
        return cls(tuple(pairs))

    def get(self, role: Role) -> str | None:
        return next((column for known, column in self.pairs if known is role), None)

    def all(self, role: Role) -> tuple[str, ...]:
        """Every column (or pattern) given for ``role``, in order."""
        return tuple(column for known, column in self.pairs if known is role)

    def as_dict(self) -> dict[Role, str]:
        """Each role's first column (a role with several columns is resolved by :func:`expand_columns`)."""
        found: dict[Role, str] = {}
        for role, column in self.pairs:
            found.setdefault(role, column)
        return found

    def __str__(self) -> str:
        parts: list[str] = []
        for index, (role, column) in enumerate(self.pairs):
            repeated = index and self.pairs[index - 1][0] is role
            parts.append(column if repeated else f"{role.value}={column}")
        return ",".join(parts)


def _natural(name: str) -> tuple[object, ...]:
    return tuple(int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", name))


def expand_columns(written: Sequence[str], names: Sequence[str]) -> list[str]:
    """The columns ``written`` names (names or patterns such as ``Image_*``), in order, each once; a pattern's
    columns in natural order. A name or pattern that matches no column raises :class:`ColumnsError`."""
    found: list[str] = []
    for item in written:
        if _PATTERN.search(item):
            matched = sorted((n for n in names if fnmatch.fnmatchcase(n, item)), key=_natural)
            if not matched:
                raise ColumnsError(f"--columns: pattern {item!r} matches no column (columns: {', '.join(names)})")
        else:
            matched = [item] if item in names else []
            if not matched:
                raise ColumnsError(f"--columns: no column {item!r} (columns: {', '.join(names) or 'none'})")
        found.extend(n for n in matched if n not in found)
    return found


#: numbered picture columns (``Image_1``, ``img2``, ``picture-3``): one row's several pictures, in number order
_NUMBERED_PICTURE = re.compile(r"(image|img|picture|pic|photo)s?_?(\d+)")


def numbered_pictures(columns: Sequence[Column]) -> list[str]:
    """Columns named as one family of numbered pictures (``Image_1``..``Image_4``) that can hold pictures, in
    number order; [] when fewer than two."""
    family = [(int(m.group(2)), c.name) for c in columns
              if (m := _NUMBERED_PICTURE.fullmatch(column_key(c.name))) and fits(Role.IMAGE, c)]
    return [name for _, name in sorted(family)] if len(family) >= 2 else []


def mapping_of(roles: dict[Role, str], pictures: Sequence[str] = ()) -> ColumnMapping:
    """The mapping of ``roles`` in the order of :class:`Role` (a stable text to record and print); ``pictures``,
    when a row's pictures come from several columns, all of them."""
    pairs: list[tuple[Role, str]] = []
    for role in Role:
        if role is Role.IMAGE and len(pictures) > 1:
            pairs.extend((role, column) for column in pictures)
        elif role in roles:
            pairs.append((role, roles[role]))
    return ColumnMapping(tuple(pairs))


# ----------------------------------------------------------------------------------------------- columns


@dataclass(frozen=True)
class Column:
    """A column of a table: its name and what its values are."""

    name: str
    kind: str  # as shown to the user: "string", "int64", "Image", "list of string", "struct {a, b}", ...
    picture: bool = False  # Image, or a list of Image
    text: bool = False  # strings
    texts: bool = False  # a list of strings
    number: bool = False  # integers (or floats)
    flag: bool = False  # booleans
    nested_turns: bool = False  # a list of structs with question and answers: CoMMET's own turns


def describe_feature(feature: object) -> str:
    """A ``datasets`` feature in words ("list of Image", "struct {label, text}")."""
    if isinstance(feature, dict):
        return "struct {" + ", ".join(str(k) for k in feature) + "}"
    if isinstance(feature, list):
        return f"list of {describe_feature(feature[0]) if feature else 'nothing'}"
    kind = type(feature).__name__
    if kind == "Value":
        return str(getattr(feature, "dtype", "value"))
    if kind in ("Sequence", "List", "LargeList"):
        return f"list of {describe_feature(getattr(feature, 'feature', None))}"
    if kind == "ClassLabel":
        return "class label"
    return kind


def _inner(feature: object) -> object | None:
    """The element feature of a list feature, None for anything else."""
    if isinstance(feature, list):
        return feature[0] if feature else None
    if type(feature).__name__ in ("Sequence", "List", "LargeList"):
        inner = getattr(feature, "feature", None)
        return inner
    return None


def column_of(name: str, feature: object) -> Column:
    """What ``feature`` (a ``datasets`` feature) says of a column's values."""
    kind = describe_feature(feature)
    inner = _inner(feature)
    type_name = type(feature).__name__
    dtype = str(getattr(feature, "dtype", ""))
    inner_fields = inner if isinstance(inner, dict) else None
    if isinstance(feature, dict) and all(_inner(f) is not None for f in feature.values()):
        inner_fields = feature  # a Sequence of structs, which datasets stores as a struct of lists
    return Column(
        name=name, kind=kind,
        picture=type_name == "Image" or type(inner).__name__ == "Image",
        text=type_name in ("ClassLabel", "Json") or type_name == "Value" and dtype in ("string", "large_string"),
        texts=inner is not None and type(inner).__name__ == "Value" and str(getattr(inner, "dtype", "")) in (
            "string", "large_string"),
        number=type_name == "Value" and re.fullmatch(r"u?int\d+|float\d+|double", dtype) is not None,
        flag=type_name == "Value" and dtype == "bool",
        nested_turns=inner_fields is not None and "question" in inner_fields and (
            "answers" in inner_fields or "answer" in inner_fields),
    )


# ----------------------------------------------------------------------------------------------- values

#: Long names of the paper's abbreviated categories (its Table 1 and 2 captions), as :func:`_words` keys.
_CATEGORY_NAMES = {
    "nonliteralcommunication": "NLC",
    "nonliteralcommunicationemotion": "NLCE",
    "moralreasoningbeliefknowledge": "MBK",
    "moralbeliefknowledge": "MBK",
}


def _words(text: str) -> str:
    """Letters and digits only, lower case, joining words ("and", "with", "&") dropped."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return "".join(w for w in words if w not in ("and", "with"))


_CATEGORY_KEYS = {_words(c): c for c in CATEGORIES} | _CATEGORY_NAMES


def canonical_category(value: str) -> str:
    """The paper's spelling of a category ("belief-emotion" -> "Belief_Emotion", "nlce" -> "NLCE"); other
    values are kept as written (stripped)."""
    return _CATEGORY_KEYS.get(_words(value), value.strip())


def _task_keys(taxonomy: Taxonomy) -> dict[str, str]:
    keys: dict[str, str] = {}
    for task in (*TASKS, *taxonomy.tasks):
        keys.setdefault(_words(task.id), task.id)
        keys.setdefault(_words(task.name), task.id)
    return keys


def canonical_task(value: str, taxonomy: Taxonomy) -> str | None:
    """The task id a value names ("Diverse Belief", "diverse-belief" -> "diverse_belief"), None when none."""
    return _task_keys(taxonomy).get(_words(value)) if _words(value) else None


_TRUE = {"true", "yes", "y", "1", "imagedependent", "image", "dependent", "visual", "multimodal", "needed",
         "required"}
_FALSE = {"false", "no", "n", "0", "textcomplete", "text", "complete", "textonly", "none", "notneeded"}


def parse_flag(value: object) -> bool | None:
    """Image-dependence as written: a boolean, 0/1, yes/no, ``image-dependent``/``text-complete``; None when
    the value says neither (the caller reports it)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        key = _words(value)
        if key in _TRUE:
            return True
        if key in _FALSE:
            return False
    return None


def subset_flag(name: str) -> bool | None:
    """Image-dependence a split or config name says ("image_dependent", "text-complete"), else None."""
    key = _words(name)
    return True if key in ("imagedependent", "imagedep") else False if key in ("textcomplete", "textonly") else None


# ----------------------------------------------------------------------------------------------- detection


def by_name(columns: Sequence[Column]) -> dict[Role, str]:
    """Roles found from column names alone, each column used once, a role's most telling name first."""
    found: dict[Role, str] = {}
    used: set[str] = set()
    keyed = {column_key(c.name): c for c in columns}
    for role in Role:
        for name in NAMES[role]:
            column = keyed.get(name)
            if column is not None and column.name not in used and fits(role, column):
                found[role] = column.name
                used.add(column.name)
                break
    return found


def fits(role: Role, column: Column) -> bool:
    """Whether a column of this type can play ``role`` (a picture is no question, a number no story)."""
    if role is Role.IMAGE:
        return column.picture or column.text or column.texts
    if column.picture:
        return False
    if role is Role.TURNS:
        return column.text or column.texts or column.nested_turns
    if role is Role.MESSAGES:
        return column.text or column.kind.startswith("list of struct")
    if role in (Role.TURN, Role.ID):
        return column.text or column.number
    if role is Role.IMAGE_DEPENDENT:
        return column.flag or column.text or column.number
    if role is Role.OPTIONS:
        return column.text or column.kind.startswith(("list", "struct"))  # a struct: {A: x, B: y}
    if role is Role.ANSWER and re.fullmatch(r"u?int\d+", column.kind):
        return True  # "3" to "How many?" (a CSV reader makes such a column integers); beside options, validation
        # refuses a number that is no option's label (whether it counts from 0 or 1 is not guessed)
    if role in (Role.MENTAL_STATES, Role.ANSWER):
        return column.text or column.kind.startswith("list")  # answers per turn of a StoryTurn: lists of lists
    if role is Role.FEEDBACK:  # a struct {right, wrong}; a list of them: a StoryTurn's, one per turn (layout (d))
        return column.text or column.texts or column.kind.startswith(("struct", "list of struct"))
    if role in (Role.FEEDBACK_RIGHT, Role.FEEDBACK_WRONG):
        return column.text or column.texts  # a list: a StoryTurn's texts, one per turn (layout (d))
    if role in (Role.QUESTION, Role.STORY):
        return column.text or column.texts  # a list: a StoryTurn's questions (or stories), one per turn
    return column.text


@dataclass(frozen=True)
class _Profile:
    """What a sample of a column's values looks like (for guesses only)."""

    filled: int
    distinct: int
    mean_length: float
    questions: float  # share ending in "?"
    pipes: float  # share holding a whole pipe turn (four "|")
    tasks: float  # share naming a known task
    categories: float  # share naming one of the paper's categories
    flags: float  # share saying image-dependent or text-complete
    conditions: float  # share starting "If ..." (feedback)
    blanks: float  # share holding a blank (ids have none)


def _profile(values: list[object], taxonomy: Taxonomy) -> _Profile:
    texts = [v for v in values if isinstance(v, str) and v.strip()]
    flat = [t for v in values if isinstance(v, list) for t in v if isinstance(t, str)]
    strings = texts or flat
    share = (lambda hits: hits / len(strings)) if strings else (lambda hits: 0.0)  # noqa: E731
    filled = [v for v in values if v not in (None, "", [])]
    return _Profile(
        filled=len(filled), distinct=len({repr(v) for v in filled}),
        mean_length=sum(len(s) for s in strings) / len(strings) if strings else 0.0,
        questions=share(sum(s.rstrip().endswith("?") for s in strings)),
        pipes=share(sum(s.count("|") >= 4 for s in strings)),
        tasks=share(sum(canonical_task(s, taxonomy) is not None for s in texts)),
        categories=share(sum(canonical_category(s) in CATEGORIES for s in texts)),
        flags=(sum(parse_flag(v) is not None for v in filled) / len(filled)) if filled else 0.0,
        conditions=share(sum(s.lstrip().lower().startswith("if ") for s in texts)) if texts else 0.0,
        blanks=share(sum(" " in s.strip() for s in strings)),
    )


def by_content(columns: Sequence[Column], rows: Sequence[dict[str, object]], taxonomy: Taxonomy,
               known: dict[Role, str]) -> dict[Role, str]:
    """Guesses for the roles ``known`` lacks, from the values of the first rows: shown to the user to check,
    never used unless written back with ``--columns``."""
    guesses = dict(known)
    used = set(known.values())
    free = [c for c in columns if c.name not in used]
    profiles = {c.name: _profile([row.get(c.name) for row in rows], taxonomy) for c in free}

    def take(role: Role, candidates: Iterable[Column]) -> None:
        for column in candidates:
            if role not in guesses and column.name not in used and fits(role, column):
                guesses[role] = column.name
                used.add(column.name)
                return

    take(Role.IMAGE, (c for c in free if c.picture))
    take(Role.TURNS, (c for c in free if profiles[c.name].pipes >= 0.5 or c.nested_turns))
    take(Role.TASK, (c for c in free if profiles[c.name].tasks >= 0.5))
    take(Role.CATEGORY, (c for c in free if profiles[c.name].categories >= 0.5))
    take(Role.IMAGE_DEPENDENT, (c for c in free if c.flag or (c.text and profiles[c.name].flags >= 0.9)))
    if Role.TURNS not in guesses:
        count = len(rows)
        take(Role.TURN, sorted((c for c in free if c.number and 1 < profiles[c.name].distinct <= 20),
                               key=lambda c: profiles[c.name].distinct))
        grouping = [c for c in free if (c.text or c.number) and 1 < profiles[c.name].distinct < count
                    and profiles[c.name].filled == count]
        if Role.TURN in guesses:  # a story's rows have distinct turns: the largest groups that keep them so
            turn = guesses[Role.TURN]
            grouping = [c for c in grouping
                        if len({(repr(r.get(c.name)), repr(r.get(turn))) for r in rows}) == count]
            take(Role.ID, sorted(grouping, key=lambda c: profiles[c.name].distinct))
        else:  # identifier-like values (no blanks), the most distinct
            take(Role.ID, sorted(grouping, key=lambda c: (profiles[c.name].blanks, -profiles[c.name].distinct)))
        take(Role.QUESTION, sorted((c for c in free if profiles[c.name].questions >= 0.5),
                                   key=lambda c: -profiles[c.name].questions))
        take(Role.FEEDBACK, (c for c in free if c.text and profiles[c.name].conditions >= 0.5))
        texts = sorted((c for c in free if (c.text or c.texts) and profiles[c.name].filled),
                       key=lambda c: profiles[c.name].mean_length)
        take(Role.ANSWER, texts)
        take(Role.STORY, reversed(texts))
    return guesses


#: Roles without which rows cannot become StoryTurns: one row per StoryTurn, and one row per turn.
REQUIRED_PIPE = (Role.TURNS, Role.TASK)
REQUIRED_TURN_ROWS = (Role.ID, Role.QUESTION, Role.ANSWER, Role.TASK)
REQUIRED_STORY_ROWS = (Role.QUESTION, Role.ANSWER, Role.TASK)
REQUIRED_CHAT = (Role.MESSAGES, Role.TASK)  # rows holding a StoryTurn's lists: no id needed


def _short(value: object, width: int = 40) -> str:
    """A cell as the mapping help shows it: text cut short, pictures and lists summarised."""
    if isinstance(value, dict) and ("bytes" in value or "path" in value):
        size = len(value.get("bytes") or b"")
        return f"<picture {size / 1000:.1f} kB>" if size else "<picture>"
    if isinstance(value, list):
        if not value:
            return "[]"
        return f"[{len(value)} item{'s' if len(value) != 1 else ''}: {_short(value[0], width // 2)}{', …' if len(value) > 1 else ''}]"
    if isinstance(value, dict):
        return "{" + ", ".join(str(k) for k in list(value)[:6]) + "}"
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= width else text[: width - 2] + "…" + text[-1]


#: columns the mapping help lists (with the first row's cells); a wider table says how many more it has
HELP_COLUMNS = 40
#: the longest message the mapping help can make: HELP_COLUMNS names and cells, each shortened, and the mapping
MAPPING_HELP_LIMIT = 12_000


def _name(name: str, width: int = 60) -> str:
    """A column name as the mapping help shows it (a name is data: it may be long)."""
    return name if len(name) <= width else name[: width - 2] + "…" + name[-1]


ADAPTER_HINT = ("an adapter makes StoryTurns of any rows: --adapter FILE.py:FUNCTION, a Python function from a "
                "record (or the whole table) to StoryTurns (docs/official-data.md, \"Adapters\")")


def mapping_help(columns: Sequence[Column], first_row: dict[str, object] | None, rows: int,
                 mapping: ColumnMapping | None, reason: str, refused: str | None = None) -> str:
    """The one message of a table whose columns could not be told: the reason, each column with its type,
    the first row abbreviated, the roles, and the ``--columns`` mapping to write, one the loader has read the
    table with; without one (a role no column can play, or guesses the loader refuses, ``refused`` says why),
    that no mapping was found and how an adapter reads it."""
    shown = columns[:HELP_COLUMNS]
    more = f", and {len(columns) - len(shown)} more" if len(columns) > len(shown) else ""
    listed = ", ".join(f"{_name(c.name)} ({c.kind})" for c in shown) + more or "none"
    row = (", ".join(f"{_name(c.name)}={_short(first_row.get(c.name))}" for c in shown) + more
           if first_row else "(no rows)")
    if mapping is not None:
        advice = f"write (it reads the table; check that it reads it right): --columns {mapping}"
    else:
        advice = f"no --columns mapping found that reads it ({refused}); {ADAPTER_HINT}"
    return (f"cannot tell which columns make the StoryTurns ({reason}); columns ({rows} rows): {listed}; "
            f"row 1: {row}; roles: turns (the paper's pipe-format turns, one row per StoryTurn), messages (chat "
            f"messages, one row per StoryTurn or per question) or id (the story), "
            f"turn, story, feedback (or feedback_right and feedback_wrong), question, answer, options, image, image_id "
            f"(one row per turn), each with task, "
            f"category, image_dependent, mental_states, source; {advice}")
