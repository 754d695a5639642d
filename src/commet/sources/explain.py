"""How a dataset was read, said in full (``commet stats --explain``): the first thing to read when its
counts differ from what they should be (the paper's 591 StoryTurns, 1,976 questions, 844 pictures).

For a table written by others: each table (split, config) with its layout, which column gave each field
of a StoryTurn, which columns were kept as metadata and which were not read, then each StoryTurn with the
rows that made it, turn by turn. For a file of StoryTurns: each StoryTurn's file and line.
"""

from __future__ import annotations

from commet.format.dataset import Dataset


def _rows(turns: tuple[tuple[int, ...], ...]) -> str:
    """Rows turn by turn: ``rows 3, 1, 2`` when each turn is one row; one row for them all is said once."""
    flat = [row for rows in turns for row in rows]
    if not flat:
        return "the whole table"
    if len(set(flat)) == 1:
        return f"row {flat[0]} (all {len(turns)} turn(s))"
    return "rows " + ", ".join("+".join(map(str, rows)) if rows else "-" for rows in turns) + " (turn by turn)"


def explanation(dataset: Dataset) -> dict[str, object]:
    """The explanation as data (``--json``): where, the tables and the StoryTurns with their rows."""
    origin = dataset.origin
    tables = [{"table": t.where, "rows": t.rows, "read as": t.how, "fields": [{"field": f, "column": c}
                                                                             for f, c in t.fields],
               "kept as metadata": list(t.kept), "not read": list(t.unread)} for t in dataset.tables_read]
    if dataset.rows_read:
        stories = [{"storyturn": r.storyturn, "table": r.where, "turns": len(r.turns),
                    "rows": [list(rows) for rows in r.turns]} for r in dataset.rows_read]
    else:
        stories = []
        for index, st in enumerate(dataset.storyturns):
            file, line = dataset.where(index)
            stories.append({"storyturn": st.id, "table": file, "turns": len(st.turns), "rows": [[line]] if line
                            else []})
    return {"from": origin.location if origin is not None else dataset.source_file,
            "layout": origin.layout if origin is not None else "StoryTurns as written (canonical or pipe format)",
            "columns": origin.columns if origin is not None else None,
            "adapter": origin.adapter if origin is not None else None,
            "tables": tables, "storyturns": stories,
            "counts": {"storyturns": len(dataset.storyturns),
                       "turns": sum(len(st.turns) for st in dataset.storyturns),
                       "pictures": len({image for st in dataset.storyturns for image in st.images})}}


def explain_lines(dataset: Dataset) -> list[str]:
    """The explanation as lines for a terminal."""
    data = explanation(dataset)
    lines = [f"read from {data['from']}: {data['layout']}"]
    if data["adapter"]:
        lines.append(f"StoryTurns made by the adapter {data['adapter']} (its source is part of the dataset's hash)")
    made: dict[str, int] = {}
    for read in dataset.rows_read:
        made[read.where] = made.get(read.where, 0) + 1
    for table in dataset.tables_read:
        lines.append(f"table {table.where} ({table.rows} rows, {made.get(table.where, 0)} StoryTurns): {table.how}")
        if table.fields:
            lines.append("  fields: " + ", ".join(f"{field} <- {column}" for field, column in table.fields))
        lines.append("  kept as metadata: " + (", ".join(table.kept) or "nothing"))
        lines.append("  not read: " + (", ".join(table.unread) or "nothing"))
    counts = data["counts"]
    assert isinstance(counts, dict)
    lines.append(f"{counts['storyturns']} StoryTurns, {counts['turns']} turns, {counts['pictures']} pictures; "
                 "each StoryTurn and the rows that made it:")
    if dataset.rows_read:
        lines += [f"  {r.storyturn} <- {r.where} {_rows(r.turns)}" for r in dataset.rows_read]
    else:
        for index, st in enumerate(dataset.storyturns):
            file, line = dataset.where(index)
            lines.append(f"  {st.id} <- {file}{f':{line}' if line else ''} ({len(st.turns)} turn(s))")
    return lines
