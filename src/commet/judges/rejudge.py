"""Re-judging: score a run's stored responses again with another judge, without calling the model.

The new run copies the old run's settings (judge changed) and its turns reuse the stored
prompts and responses. Branch rules are re-applied per story, in order, with the new
verdicts. Feedback that was sent online stays as it was (the conversation happened); the
report lists the turns where the new verdicts would have chosen other feedback.
Judgments go through the store's cache, so re-judging the same answers twice costs no call.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass, field

from commet.engine.conversation import PreviousOutcome, apply_branch_rules, choose_feedback, judge_request
from commet.format.dataset import Dataset
from commet.judges.base import Judge
from commet.judges.cache import judge_cached
from commet.judges.cascade import decided_by
from commet.store.sqlite import RunRecord, Store


class RejudgeError(ValueError):
    """A re-judging request that cannot be done (unknown run, other dataset, name taken)."""


@dataclass(frozen=True)
class FeedbackChange:
    story_id: str
    turn: int
    sent: str  # feedback kind sent online
    would_send: str  # feedback kind the new verdicts would have chosen


@dataclass
class RejudgeReport:
    source: RunRecord
    run: RunRecord
    turns: int = 0
    decided_by: dict[str, int] = field(default_factory=dict)
    judge_calls: int = 0  # verdicts computed now (rules decisions included)
    cached: int = 0  # verdicts answered from the store
    changed: list[tuple[str, int, bool | None, bool | None]] = field(default_factory=list)  # story, turn, old, new
    feedback_changes: list[FeedbackChange] = field(default_factory=list)


def default_name(source: RunRecord, judge: Judge) -> str:
    return f"{source.name}~{judge.name}"


def _open_run(store: Store, source: RunRecord, judge: Judge, name: str) -> RunRecord:
    digest = hashlib.sha256(json.dumps({"rejudged_from": source.config_hash, "judge": judge.name},
                                       sort_keys=True).encode()).hexdigest()
    existing = store.get_run(name)
    if existing is not None:
        if existing.config_hash != digest:
            raise RejudgeError(f"run {name!r} already exists with other settings; pick another name with --as")
        return existing
    return store.create_run(name=name, model=source.model, judge=judge.name,
                            settings={**source.settings, "rejudged_from": source.name}, config_hash=digest,
                            dataset_name=source.dataset_name, dataset_hash=source.dataset_hash,
                            package_version=source.package_version, story_count=source.story_count)


async def rejudge(store: Store, source_name: str, judge: Judge, dataset: Dataset, *,
                  new_name: str | None = None) -> RejudgeReport:
    """Re-judge run ``source_name`` with ``judge`` into a new run (or resume one with the same settings)."""
    source = store.get_run(source_name)
    if source is None:
        raise RejudgeError(f"no run named {source_name!r} in {store.path}")
    if dataset.content_hash() != source.dataset_hash:
        raise RejudgeError(f"dataset {dataset.name!r} is not the one run {source_name!r} used "
                           f"({source.dataset_name!r}); pass the same dataset with --dataset")
    run = _open_run(store, source, judge, new_name or default_name(source, judge))
    report = RejudgeReport(source=source, run=run)
    store.set_run_status(run.id, "running")
    by_story: dict[str, list[sqlite3.Row]] = {}
    for row in store.turn_rows(source.id):
        by_story.setdefault(row["story_id"], []).append(row)
    decided: list[str] = []
    for story in store.story_rows(source.id):
        rows = by_story.get(story["story_id"], [])
        correct = await _rejudge_story(store, run, judge, dataset, story["story_id"], rows, report, decided)
        store.record_story(run.id, story["story_id"], position=story["position"], task=story["task"],
                           category=story["category"], image_dependent=story["image_dependent"],
                           source=story["source"], status=story["status"],
                           correct=int(correct) if story["status"] == "done" else None)
    store.set_run_status(run.id, "done")
    report.run = store.get_run(run.name) or run
    report.decided_by = decided_by(decided)
    return report


async def _rejudge_story(store: Store, run: RunRecord, judge: Judge, dataset: Dataset, story_id: str,
                         rows: list[sqlite3.Row], report: RejudgeReport, decided: list[str]) -> bool:
    """Re-judge one story's turns in order; returns whether every question is now correct."""
    storyturn = dataset.get(story_id)
    condition = str(run.settings.get("feedback", "original"))
    previous: PreviousOutcome | None = None
    active_branch: int | None = None
    earlier: list[tuple[str, str]] = []
    all_correct = True
    for row in rows:
        k = row["turn"]
        turn = storyturn.turns[k]
        fields = {key: row[key] for key in ("prompt", "images_json", "feedback_kind", "expected_json", "model_key")}
        if row["response"] is None:  # the model call failed: nothing to judge
            store.record_turn(run.id, story_id, k, **fields, error_kind=row["error_kind"], error=row["error"])
            all_correct = False
            continue
        would = choose_feedback(turn.feedback, previous, condition)[1]  # type: ignore[arg-type]
        if k > 0 and would != row["feedback_kind"]:
            report.feedback_changes.append(FeedbackChange(story_id, k, row["feedback_kind"], would))
        request = judge_request(storyturn, k, row["prompt"], row["response"], earlier, active_branch)
        verdict, key, from_cache = await judge_cached(store, run.id, judge, request)
        report.cached += int(from_cache)
        report.judge_calls += int(not from_cache)
        score = apply_branch_rules(turn, verdict, active_branch)
        active_branch = score.active_branch
        store.record_turn(run.id, story_id, k, **fields, response=row["response"], outcome=verdict.outcome,
                          correct=None if score.correct is None else int(score.correct), branch=score.branch,
                          active_branch=active_branch, judge=verdict.judge or judge.name, rationale=score.reason,
                          judgment_key=key, error_kind=verdict.details.get("error_kind"), error=None)
        old = None if row["correct"] is None else bool(row["correct"])
        if old != score.correct:
            report.changed.append((story_id, k, old, score.correct))
        report.turns += 1
        decided.append(verdict.judge or judge.name)
        all_correct = all_correct and score.correct is True
        earlier.append((row["prompt"], row["response"]))
        previous = PreviousOutcome(score.correct, score.branch, tuple(turn.answers))
    return all_correct
