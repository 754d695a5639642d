"""Panels: ``panel:A,B,C`` asks several judges and takes the majority vote.

Members are model specs (each a bare LLM judge) or ``rules``. A verdict wins when more than
half of ALL members give it (the same outcome and, when correct, the same branch);
otherwise the panel is undecided. Every member's verdict is kept in
``Verdict.details["members"]``, so one panel run also yields the members' pairwise
agreement (``commet judges``). ``panel:...`` sits behind the rules judge like any LLM
judge; ``llm-only:panel:...`` does not.
"""

from __future__ import annotations

import asyncio
from collections import Counter

from commet.judges.base import Judge, JudgeRequest, Outcome, UnknownJudgeError, Verdict
from commet.models.base import Usage


def member_record(verdict: Verdict) -> dict[str, object]:
    """A member's verdict as stored in the panel's details."""
    record: dict[str, object] = {"judge": verdict.judge, "outcome": verdict.outcome, "branch": verdict.branch,
                                 "rationale": verdict.rationale}
    if verdict.error:
        record["error"] = verdict.error
    return record


class PanelJudge(Judge):
    """Majority vote of ``members`` (asked concurrently)."""

    def __init__(self, members: list[Judge]):
        names = [m.name for m in members]
        if len(members) < 2:
            raise UnknownJudgeError("a panel needs at least two members: panel:A,B,C")
        if len(set(names)) != len(names):
            raise UnknownJudgeError(f"a panel's members must differ: {', '.join(names)}")
        self.members = members
        self.name = f"panel({','.join(names)})"
        self.reads_pictures = any(member.reads_pictures for member in members)

    async def judge(self, request: JudgeRequest) -> Verdict:
        verdicts = await asyncio.gather(*(m.judge(request) for m in self.members))
        for member, verdict in zip(self.members, verdicts, strict=True):
            verdict.judge = verdict.judge or member.name
        members = [member_record(v) for v in verdicts]
        costs = [v.spent() for v in verdicts]
        prices = [c[2] for c in costs]
        usage = Usage(sum(c[0] for c in costs), sum(c[1] for c in costs))
        cost = None if None in prices else sum(p for p in prices if p is not None)

        def vote(v: Verdict) -> tuple[Outcome, int | None]:
            if v.outcome != "correct":
                return v.outcome, None
            return "correct", 0 if v.branch is None and len(request.expected) == 1 else v.branch

        tally = Counter(vote(v) for v in verdicts if v.outcome != "undecided")
        summary = ", ".join(f"{v.judge}: {v.outcome}" for v in verdicts)
        winner = next(((key, n) for key, n in tally.most_common() if n * 2 > len(verdicts)), None)
        if winner is None:
            errors = [v.error for v in verdicts if v.error]
            # a failed member leaves the panel failed: not cached, so a later run asks again
            return Verdict("undecided", None, f"no majority ({summary})", self.name, {"members": members}, usage,
                           cost, "; ".join(errors) if errors else None, "judge_panel" if errors else None)
        (outcome, branch), count = winner
        reason = next(v.rationale for v in verdicts if vote(v) == (outcome, branch))
        return Verdict(outcome, branch, f"{count} of {len(verdicts)} members: {reason}", self.name,
                       {"members": members}, usage, cost)

    def price_known(self) -> bool:
        return all(member.price_known() for member in self.members)

    async def aclose(self) -> None:
        for member in self.members:
            await member.aclose()
