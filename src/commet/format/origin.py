"""Where a dataset written by others came from and how its tables were read: its provenance (carried into what
CoMMET writes of it) and, per table and per StoryTurn, what ``commet stats --explain`` says.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Provenance:
    """Where a dataset written by others comes from: carried into what CoMMET writes of it (``convert --to hf``
    puts it in the card and ``dataset.json``), so that a copy names its origin and keeps its licence notice."""

    repo: str  # the Hub dataset (OWNER/NAME), or the folder it was read from
    revision: str | None = None  # the commit it was read at
    arxiv: tuple[str, ...] = ()  # arXiv ids of its paper(s)
    authors: tuple[str, ...] = ()
    licence: str = "unspecified"
    notice: str | None = None  # the source's licence file, to travel with copies (MIT and BSD require it)

    def to_json(self) -> dict[str, object]:
        return {"repo": self.repo, "revision": self.revision, "arxiv": list(self.arxiv), "authors": list(self.authors),
                "license": self.licence, "notice": self.notice}

    @classmethod
    def from_json(cls, value: object) -> Provenance | None:
        if not isinstance(value, dict) or not isinstance(value.get("repo"), str):
            return None
        def strings(key: str) -> tuple[str, ...]:
            items = value.get(key)
            return tuple(x for x in items if isinstance(x, str)) if isinstance(items, list) else ()

        notice, revision = value.get("notice"), value.get("revision")
        return cls(value["repo"], revision if isinstance(revision, str) else None, strings("arxiv"),
                   strings("authors"), str(value.get("license") or "unspecified"),
                   notice if isinstance(notice, str) else None)


@dataclass(frozen=True)
class TableRead:
    """How one table (a split of a config) was read: what ``commet stats --explain`` says of it.

    ``fields`` names, for each part of a StoryTurn, the column that gave it (``image`` may name several);
    ``kept`` are the other columns whose plain values became metadata, ``unread`` the columns nothing read.
    """

    where: str
    rows: int
    how: str
    fields: tuple[tuple[str, str], ...] = ()
    kept: tuple[str, ...] = ()
    unread: tuple[str, ...] = ()


@dataclass(frozen=True)
class RowsRead:
    """Which rows (1-based, of the table ``where``) made one StoryTurn, turn by turn."""

    where: str
    storyturn: str
    turns: tuple[tuple[int, ...], ...]
