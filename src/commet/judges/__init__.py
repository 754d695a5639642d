"""Judges: the interface, the rules judge, and (in their own modules) LLM judges and panels."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from commet.judges.base import Judge, JudgeRequest, UnknownJudgeError, Verdict
from commet.judges.registry import create_judge

if TYPE_CHECKING:
    from commet.judges.rules import RulesJudge

__all__ = ["Judge", "JudgeRequest", "RulesJudge", "UnknownJudgeError", "Verdict", "create_judge"]


def __getattr__(name: str) -> Any:
    """``RulesJudge`` on first use: its lexicons and patterns are not loaded by a run with an LLM judge."""
    if name == "RulesJudge":
        from commet.judges.rules import RulesJudge

        return RulesJudge
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
