"""The per-turn judging step shared by the engine and re-judging: judge through the store's cache,
apply the story's branch rules, and record the scored turn."""

from __future__ import annotations

import time

from commet.engine.conversation import TurnScore, apply_branch_rules
from commet.format.model import Turn
from commet.judges.base import Judge, JudgeRequest, Verdict
from commet.store.records import ShownTurn, TurnRecord
from commet.store.sqlite import Store


async def judge_cached(store: Store, run_id: int, judge: Judge, request: JudgeRequest) -> tuple[Verdict, str | None, bool]:
    """Judge through the store's cache: (verdict, judgment key, from cache)."""
    if not judge.cacheable:
        return await judge.judge(request), None, False
    key = judge.cache_key(request)
    async with store.single_flight(f"judge:{key}"):
        return await _judge_once(store, run_id, judge, request, key)


async def _judge_once(store: Store, run_id: int, judge: Judge, request: JudgeRequest,
                      key: str) -> tuple[Verdict, str | None, bool]:
    cached = store.cached_judgment(key)
    if cached is not None:
        store.record_judgment(run_id=run_id, story_id=request.story_id, turn=request.turn, key=key,
                              judge=cached.judge, request_json="{}", outcome=cached.outcome, branch=cached.branch,
                              rationale=cached.rationale, details={}, latency_s=0.0, cached=True)
        return cached.verdict(), key, True
    started = time.perf_counter()
    verdict = await judge.judge(request)
    store.record_judgment(run_id=run_id, story_id=request.story_id, turn=request.turn, key=key,
                          judge=verdict.judge or judge.name, request_json=request.fingerprint_json, outcome=verdict.outcome,
                          branch=verdict.branch, rationale=verdict.rationale, details=verdict.stored_details(),
                          latency_s=time.perf_counter() - started, error=verdict.error or None)
    return verdict, key, False


def record_scored_turn(store: Store, run_id: int, story_id: str, k: int, turn: Turn, verdict: Verdict,
                       active_branch: int | None, *, shown: ShownTurn, response: str, judge_name: str,
                       judgment_key: str | None) -> TurnScore:
    """Apply the branch rules to a verdict and record the turn; returns the turn's score."""
    score = apply_branch_rules(turn, verdict, active_branch)
    store.record_turn(TurnRecord.of(
        run_id, story_id, k, shown, response=response, outcome=verdict.outcome, correct=score.correct,
        branch=score.branch, active_branch=score.active_branch, judge=verdict.judge or judge_name,
        rationale=score.reason, judgment_key=judgment_key, error_kind=verdict.error_kind))
    return score
