"""Located problems: every format or validation finding names file, line, story, turn and field."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from commet.errors import CommetError

Severity = Literal["error", "warning"]


def printable(text: str) -> str:
    """``text`` with every non-printable character escaped (``\\n``, ``\\x1b``, ``\\u202e``).

    Why: a problem is one line on a terminal; a hostile id must neither split it nor drive the
    terminal (colours, cursor moves, right-to-left overrides).
    """
    if text.isprintable():
        return text
    out = []
    for char in text:
        if char.isprintable():
            out.append(char)
        elif char in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[char])
        elif ord(char) < 0x100:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) < 0x10000:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    return "".join(out)


#: Longest story id, field and file an error line shows whole; longer ones are shortened (an id may be megabytes).
MAX_SHOWN = 200
#: Longest message an error line shows whole (messages quote values from the data).
MAX_MESSAGE = 600
#: the one error of a dataset with no StoryTurns (validation, and the commands that read a dataset unvalidated)
EMPTY_DATASET = "empty dataset: no StoryTurns"


def shortened(text: str, limit: int = MAX_SHOWN) -> str:
    """``text`` itself, or its start and end around "...(N characters)..." when longer than ``limit``.

    Why: one bad value must give one line of bounded length (a 50 MB id was echoed whole).
    """
    if len(text) <= limit:
        return text
    tail = limit // 5
    return f"{text[:limit - tail - 30]}...({len(text):,} characters)...{text[-tail:]}"


@dataclass(frozen=True)
class Problem:
    """One finding, printed as ``file:line[:column] story=ID turn=K field=F: severity: message``."""

    file: str
    line: int | None
    story: str | None
    turn: int | None
    field: str | None
    message: str
    severity: Severity = "error"
    column: int | None = None
    #: whether this warning keeps a run from starting without ``--force``; a possible answer leak does not
    #: (data a user imports was not written by them: said, never refused)
    gates: bool = True
    #: the longest message shown whole: :data:`MAX_MESSAGE`, more for a message bounded where it is made
    #: (the columns help lists every column of a table, each shortened)
    message_limit: int = MAX_MESSAGE

    def __str__(self) -> str:
        line = self.line if self.line is not None else 0
        column = f":{self.column}" if self.column is not None else ""
        story = printable(shortened(self.story)) if self.story is not None else "-"
        turn = self.turn if self.turn is not None else "-"
        field = printable(shortened(self.field)) if self.field else "-"
        return (f"{printable(shortened(self.file, 4 * MAX_SHOWN))}:{line}{column} story={story} turn={turn} "
                f"field={field}: {self.severity}: {printable(shortened(self.message, self.message_limit))}")


class FormatError(CommetError, ValueError):
    """Input that cannot be read. ``str()`` is the first problem as one located line."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__(str(problems[0]) if problems else "format error")
