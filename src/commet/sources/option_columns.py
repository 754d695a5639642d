"""Options kept in one column each (``option_a``..``option_d``, ``OPTION-A``, ``choice1``..``choice4``), made into
one options cell per row before a table's layout is found.

Why: a release of multiple-choice questions often spreads a question's options over lettered or numbered columns
and gives the answer as a letter. Read column by column, the options would be kept as metadata and the answer
``B`` would be taken for the text a respondent must say: a silent misreading. A family is read only when it is
whole and unambiguous: at least two columns of text, their suffixes one run (``a, b, c..`` or ``1, 2, 3..``, or
``0, 1, 2..``) with no gap; each column's suffix is its option's label (letters in capitals), so an answer
written as a letter or number names its option. A table that also has an options column by name, or whose
option columns leave a gap, is refused with a located line naming what to pass (``--columns options=...``).
"""

from __future__ import annotations

import re
import string
from dataclasses import replace

from commet.sources.columns import (
    Column,
    ColumnMapping,
    ColumnsError,
    Role,
    by_name,
    column_key,
    expand_columns,
)
from commet.sources.table import Table, _fail

#: a column of one option: a word for options and a letter or number (``option_a``, ``OptionB``, ``choice_3``)
_OPTION_COLUMN = re.compile(r"(?:option|choice|opt|answer_option|candidate|alternative)s?_?([a-z]|\d+)")


def _holds_options(column: Column) -> bool:
    """Text or numbers, or nothing at all (``null``: a fourth option no question of the file has)."""
    return column.text or column.number or column.kind == "null"


def _suffix(column: Column) -> str | None:
    match = _OPTION_COLUMN.fullmatch(column_key(column.name))
    return match.group(1) if match is not None and _holds_options(column) else None


def _label(suffix: str) -> str:
    return str(int(suffix)) if suffix.isdigit() else suffix.upper()


def _labels(suffixes: list[str]) -> list[str] | None:
    """The labels of a family's columns, in their order: the suffixes when they are one run without gaps, else None."""
    if all(s.isdigit() for s in suffixes):
        numbers = sorted(int(s) for s in suffixes)
        return [str(n) for n in numbers] if numbers[0] in (0, 1) and numbers == list(
            range(numbers[0], numbers[0] + len(numbers))) else None
    letters = sorted(suffixes)
    if all(len(s) == 1 and s.isalpha() for s in letters) and "".join(letters) == string.ascii_lowercase[:len(letters)]:
        return [s.upper() for s in letters]
    return None


def fold_option_columns(table: Table, given: ColumnMapping | None) -> tuple[Table, ColumnMapping | None]:
    """``table`` with its option columns made into one options column (and ``given`` naming it), or as it is."""
    written = given.all(Role.OPTIONS) if given is not None else ()
    names = [c.name for c in table.columns]
    if len(written) == 1 and not re.search(r"[*?\[]", written[0]):
        return table, given  # one options column, named: read as it is
    if written:
        chosen = [c for name in expand_columns(written, names) for c in table.columns if c.name == name]
    else:
        chosen = [c for c in table.columns if _suffix(c) is not None]
        if len(chosen) < 2:
            return table, given
        named = by_name([c for c in table.columns if c not in chosen]).get(Role.OPTIONS)
        if named is not None:
            raise _fail(table, None, None, None, "options",
                        f"both an options column {named!r} and option columns {', '.join(c.name for c in chosen)}: "
                        f"say which to read, --columns options={named} or --columns options="
                        f"{','.join(c.name for c in chosen)}")
    suffixes = [_suffix(c) for c in chosen]
    labels = _labels([s for s in suffixes if s is not None]) if None not in suffixes else None
    if labels is None and not written:
        raise _fail(table, None, None, None, "options",
                    f"option columns {', '.join(c.name for c in chosen)} do not run a, b, c.. or 1, 2, 3.. without a "
                    "gap: name them in order with --columns options=COLUMN,COLUMN,..")
    if labels is None:  # columns given in an order of the user's: labelled A, B, C.. in that order
        ordered = list(zip(string.ascii_uppercase, chosen, strict=False))
    else:
        ordered = sorted(((_label(s or ""), c) for s, c in zip(suffixes, chosen, strict=True)),
                         key=lambda pair: labels.index(pair[0]))
    if len(ordered) < 2 or any(not _holds_options(c) for _, c in ordered):
        raise ColumnsError(f"--columns: options from several columns takes two or more columns of text "
                           f"({', '.join(c.name for _, c in ordered)})")
    name = f"{ordered[0][1].name}..{ordered[-1][1].name}"
    taken = {c.name for _, c in ordered}
    rows = [{**{k: v for k, v in row.items() if k not in taken},
             name: {label: row.get(c.name) for label, c in ordered}} for row in table.rows]
    column = Column(name=name, kind="struct {" + ", ".join(label for label, _ in ordered) + "}")
    columns = [c for c in table.columns if c.name not in taken]
    folded = replace(table, columns=[*columns, column], rows=rows, options_of=name)
    if given is not None and written:
        pairs = [(r, c) for r, c in given.pairs if r is not Role.OPTIONS] + [(Role.OPTIONS, name)]
        given = ColumnMapping(tuple(pairs))
    return folded, given
