"""Judging through the store's judgment cache: the engine and re-judging share this one path."""

from __future__ import annotations

import json
import time

from commet.judges.base import Judge, JudgeRequest, Verdict
from commet.store.sqlite import Store


async def judge_cached(store: Store, run_id: int, judge: Judge, request: JudgeRequest) -> tuple[Verdict, str | None, bool]:
    """Judge through the store's cache like the engine does: (verdict, judgment key, from cache)."""
    if not judge.cacheable:
        return await judge.judge(request), None, False
    key = judge.cache_key(request)
    cached = store.cached_judgment(key)
    if cached is not None:
        store.record_judgment(run_id=run_id, story_id=request.story_id, turn=request.turn, key=key,
                              judge=cached["judge"], request_json="{}", outcome=cached["outcome"], branch=cached["branch"],
                              rationale=cached["rationale"], details={}, latency_s=0.0, cached=True)
        return Verdict(cached["outcome"], cached["branch"], cached["rationale"], cached["judge"],
                       json.loads(cached["details_json"])), key, True
    started = time.perf_counter()
    verdict = await judge.judge(request)
    error = verdict.details.get("error")
    store.record_judgment(run_id=run_id, story_id=request.story_id, turn=request.turn, key=key,
                          judge=verdict.judge or judge.name, request_json=request.fingerprint_json, outcome=verdict.outcome,
                          branch=verdict.branch, rationale=verdict.rationale, details=verdict.details,
                          latency_s=time.perf_counter() - started, error=str(error) if error else None)
    return verdict, key, False
