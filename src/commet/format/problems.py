"""Located problems: every format or validation finding names file, line, story, turn and field."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Problem:
    """One finding, printed as ``file:line story=ID turn=K field=F: severity: message``."""

    file: str
    line: int | None
    story: str | None
    turn: int | None
    field: str | None
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        line = self.line if self.line is not None else 0
        story = self.story if self.story is not None else "-"
        turn = self.turn if self.turn is not None else "-"
        field = self.field or "-"
        return f"{self.file}:{line} story={story} turn={turn} field={field}: {self.severity}: {self.message}"


class FormatError(ValueError):
    """Input that cannot be read. ``str()`` is the first problem as one located line."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__(str(problems[0]) if problems else "format error")
