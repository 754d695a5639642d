"""The one console every command prints through: text from data never drives the terminal.

Names, ids, replies, labellers, dataset cards: whatever reaches a terminal may come from a file
someone else wrote, and a terminal obeys the escape sequences in it (a new window title, a
cleared screen, hidden or recoloured text, a right-to-left override). :class:`SafeConsole` shows
every such character as ``\\x1b``, ``\\u202e`` (:func:`commet.text.printable`) at the last step,
whatever the renderable (a string, a ``Text``, a table cell, a progress line): every segment of
text it renders is passed through, and only Rich's own control segments (cursor moves of a
progress display, styles) stay control codes. Plain strings are made visible before markup and
layout too, so a table keeps its widths. Text written without Rich goes through
``commet.cli.common.echo``, which does the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

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
                yield segment if shown == segment.text else Segment(shown, segment.style)

