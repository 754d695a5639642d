"""The program's two consoles, stdout's and stderr's, made when this module is first imported.

Their own module so that a command imports Rich's console (a tenth of the start-up of a run) only when it
prints through one: ``commet eval --quiet`` prints nothing before its first model request, and plain lines
go through :func:`commet.cli.common.echo` without Rich.
"""

from __future__ import annotations

import os
import sys

from commet.terminal import SafeConsole


def sized(stream: object) -> bool:
    """Whether output to ``stream`` has a width to lay out to: a terminal's, or ``COLUMNS`` (a pipe or file
    without it gets whole lines: one per message, tables at their full width)."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty()) or os.environ.get("COLUMNS", "").strip().isdigit()


# ":m:" in a spec is no emoji; a pipe without COLUMNS: 200 columns, wide enough for every table
# (SafeConsole: control characters from data are shown, never sent to the terminal)
console = SafeConsole(width=None if sized(sys.stdout) else 200, emoji=False)
err_console = SafeConsole(stderr=True, emoji=False)
