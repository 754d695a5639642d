"""The one console every command prints through: text from data never drives the terminal.

Names, ids, replies, labellers, dataset cards: whatever reaches a terminal may come from a file
someone else wrote, and a terminal obeys the escape sequences in it (a new window title, a
cleared screen, hidden or recoloured text, a right-to-left override). :class:`SafeConsole` shows
every such character as ``\\x1b``, ``\\u202e`` (:func:`commet.text.printable`) at the last step,
whatever the renderable (a string, a ``Text``, a table cell, a progress line): every segment of
text it renders is passed through, and only Rich's own control segments (cursor moves of a
progress display, styles) stay control codes. Plain strings are made visible before markup and
layout too, so a table keeps its widths. :func:`for_stream` does the same for text written
without Rich (a report in Markdown or CSV) when it goes to a terminal.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import IO, TYPE_CHECKING, Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment

from commet.text import printable

if TYPE_CHECKING:
    from rich.text import Text


class SafeConsole(Console):
    """A Rich console whose output shows control characters from data visibly instead of sending them."""

    def render_str(self, text: str, **options: Any) -> Text:
        return super().render_str(printable(text), **options)

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            if segment.control or segment.text == "\n":
                yield segment
            else:
                shown = printable(segment.text)
                yield segment if shown is segment.text or shown == segment.text else Segment(shown, segment.style)


def for_stream(text: str, stream: IO[str]) -> str:
    """``text`` with control characters made visible when ``stream`` is a terminal; as it is for a file or pipe
    (a report redirected to a file keeps its data byte for byte)."""
    isatty = getattr(stream, "isatty", None)
    return printable(text) if callable(isatty) and isatty() else text
