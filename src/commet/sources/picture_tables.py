"""A pictures config (or split) joined by id: a release whose StoryTurns name their pictures by id and keep
the pictures themselves in a table of their own (``image_id``, ``image``).

Such a table has one picture column, an id column and nothing a StoryTurn is made of (no question,
turns, answer or story column). Its pictures are found by the id a turn names, by the picture's file
name, or by that name without its extension; two different pictures under one id are a located error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from commet.format.problems import FormatError, Problem
from commet.sources.columns import Role, by_name
from commet.sources.table import PictureReader, Table

_STORY_ROLES = (Role.TURNS, Role.QUESTION, Role.ANSWER, Role.STORY)


@dataclass
class PictureTables:
    """The tables that hold only pictures, and their pictures by id."""

    tables: list[Table] = field(default_factory=list)
    by_id: dict[str, bytes] = field(default_factory=dict)
    aliases: dict[str, bytes] = field(default_factory=dict)  # by file name, and by file name without extension
    said: str = ""  # the columns the join uses, for the ``read from`` line

    def __bool__(self) -> bool:
        return bool(self.tables)

    def reader(self, fallback: PictureReader) -> Callable[[str], bytes | None]:
        """Reads a picture by the id a turn names: from these tables, else as ``fallback`` does (the folder's files)."""
        def read(name: str) -> bytes | None:
            if name in self.by_id:
                return self.by_id[name]
            for key in (PurePosixPath(name).name, PurePosixPath(name).stem):
                if key in self.aliases:
                    return self.aliases[key]
            return fallback(name)
        return read


def _id_column(table: Table, picture: str) -> str | None:
    found = by_name([c for c in table.columns if c.name != picture])
    named = found.get(Role.IMAGE_ID) or found.get(Role.ID)
    return named or next((c.name for c in table.columns if c.name != picture and (c.text or c.number)), None)


def _is_pictures(table: Table) -> bool:
    pictures = [c for c in table.columns if c.picture]
    if len(pictures) != 1 or pictures[0].kind.startswith("list") or len(table.columns) > 4:
        return False
    found = by_name(table.columns)
    return not any(role in found for role in _STORY_ROLES) and _id_column(table, pictures[0].name) is not None


def split_picture_tables(tables: list[Table]) -> tuple[list[Table], PictureTables]:
    """The tables that make StoryTurns, and the pictures tables (only beside others: a dataset of nothing but
    pictures is left to the layouts, which say what they miss)."""
    pictures = [t for t in tables if _is_pictures(t)]
    stories = [t for t in tables if t not in pictures]
    if not pictures or not stories:
        return tables, PictureTables()
    joined = PictureTables(pictures)
    said: list[str] = []
    ambiguous: set[str] = set()
    for table in pictures:
        picture = next(c.name for c in table.columns if c.picture)
        id_column = _id_column(table, picture)
        assert id_column is not None  # _is_pictures made sure of it
        said.append(f"{id_column!r} (and file names) of {picture!r}")
        for line, row in enumerate(table.rows, start=1):
            cell = row.get(picture)
            data = cell.get("bytes") if isinstance(cell, dict) else None
            if not isinstance(data, (bytes, bytearray)):
                raise FormatError([Problem(table.where, line, None, None, picture, "no picture in this row")])
            path = cell.get("path") if isinstance(cell, dict) else None
            value = row.get(id_column)
            key = str(value).strip() if value is not None and value != "" else None
            if key is not None:
                if joined.by_id.get(key, bytes(data)) != bytes(data):
                    raise FormatError([Problem(table.where, line, None, None, id_column,
                                               f"picture id {key!r} names two different pictures")])
                joined.by_id[key] = bytes(data)
            if path:  # by file name too, unless two pictures share it (then only by id)
                name = PurePosixPath(str(path).replace("\\", "/")).name
                for alias in dict.fromkeys((name, PurePosixPath(name).stem)):
                    if joined.aliases.get(alias, bytes(data)) != bytes(data):
                        ambiguous.add(alias)
                    joined.aliases[alias] = bytes(data)
    for alias in ambiguous:
        joined.aliases.pop(alias)
    joined.said = "; ".join(dict.fromkeys(said))
    return stories, joined
