"""The cascade: the rules judge decides what it can decide with certainty, a second judge the rest.

The default whenever an LLM judge or a panel is given. ``Verdict.judge`` names who decided
(``rules`` or the second judge's name), so reports can count the judgments each made.
"""

from __future__ import annotations

from commet.judges.base import Judge, JudgeRequest, Verdict
from commet.judges.rules import RulesJudge


class CascadeJudge(Judge):
    """Rules first; undecided replies go to ``fallback`` (an LLM judge or a panel)."""

    def __init__(self, fallback: Judge, rules: RulesJudge | None = None):
        self.rules = rules or RulesJudge()
        self.fallback = fallback
        self.name = f"{self.rules.name}+{fallback.name}"
        self.reads_pictures = fallback.reads_pictures

    async def judge(self, request: JudgeRequest) -> Verdict:
        first = await self.rules.judge(request)
        if first.outcome != "undecided":
            return first
        verdict = await self.fallback.judge(request)
        verdict.details = {**verdict.details, "rules": first.rationale}
        return verdict

    def price_known(self) -> bool:
        return self.fallback.price_known()

    async def aclose(self) -> None:
        await self.fallback.aclose()
