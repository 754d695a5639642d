"""Judges: the interface, the rules judge, and (in their own modules) LLM judges and panels."""

from commet.judges.base import Judge, JudgeRequest, UnknownJudgeError, Verdict
from commet.judges.registry import create_judge
from commet.judges.rules import RulesJudge

__all__ = ["Judge", "JudgeRequest", "RulesJudge", "UnknownJudgeError", "Verdict", "create_judge"]
