"""Re-judging: score a run's stored responses again with another judge, without calling the model.

The new run copies the old run's settings (judge changed) and its turns reuse the stored
prompts and responses. Judging runs with the same concurrency and caching as ``commet eval``:
a judge request never depends on earlier verdicts, so ``concurrency`` workers take the calls
of every story from one list, in story order, and a story's branch rules are applied, in turn
order, once its last verdict is in. Feedback that was sent online stays as it was (the
conversation happened); the report lists the turns where the new verdicts would have chosen
other feedback. Judgments go through the store's cache, so re-judging twice costs no call.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from commet.conditions import JudgeImages
from commet.engine.claims import Shard
from commet.engine.conversation import (
    PreviousOutcome,
    choose_feedback,
    judge_request,
)
from commet.engine.judging import judge_cached, record_scored_turn
from commet.engine.pictures import PictureCache
from commet.engine.runner import RunResults, run_results
from commet.errors import CommetError
from commet.format.dataset import Dataset
from commet.judges.base import Judge, JudgeRequest, Verdict, decided_by
from commet.models.base import ImagePart
from commet.store.records import StoryRecord, StoryStatus, TurnRecord
from commet.store.settings import EvalSettings
from commet.store.sqlite import RunRecord, RunStatus, Store


class RejudgeError(CommetError, ValueError):
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
    #: the new run as stored, accounted as eval accounts a run: complete, or which calls failed for good
    results: RunResults | None = None


def default_name(source: RunRecord, judge: Judge) -> str:
    return f"{source.name}~{judge.name}"


def _open_run(store: Store, source: RunRecord, judge: Judge, name: str) -> RunRecord:
    digest = hashlib.sha256(json.dumps({"rejudged_from": source.config_hash, "judge": judge.name},
                                       sort_keys=True).encode()).hexdigest()
    existing = store.get_run(name) or store.create_run(
        name=name, model=source.model, judge=judge.name,
        settings=source.settings.recorded_with(rejudged_from=source.name), config_hash=digest,
        dataset_name=source.dataset_name, dataset_hash=source.dataset_hash,
        package_version=source.package_version, story_count=source.story_count)
    if existing.config_hash != digest:
        raise RejudgeError(f"run {name!r} already exists with other settings; pick another name with --as")
    return existing


def source_settings(source: RunRecord) -> EvalSettings:
    """The settings run ``source`` was made with, as the store read them (:class:`~commet.store.settings.RunSettings`:
    validated, a stored value that does not is refused when the run is read). A human run has none to judge
    again by: its answers were judged in the study, each to a participant's copy of a StoryTurn."""
    if source.settings.eval_settings is None:
        raise RejudgeError(f"run {source.name!r} was answered by people (a human run of a study): its answers "
                           "are judged in the study; nothing was re-judged")
    return source.settings.eval_settings


async def rejudge(store: Store, source_name: str, judge: Judge, dataset: Dataset, *,
                  new_name: str | None = None, concurrency: int = 8,
                  on_progress: Callable[[int], None] | None = None) -> RejudgeReport:
    """Re-judge run ``source_name`` with ``judge`` into a new run (or resume one with the same settings).

    ``concurrency`` judge calls run at once; ``on_progress`` gets the number of turns judged so far.
    """
    source = store.get_run(source_name)
    if source is None:
        raise RejudgeError(f"no run named {source_name!r} in {store.path}")
    if not dataset.hash_matches(source.dataset_hash):
        raise RejudgeError(f"dataset {dataset.name!r} is not the one run {source_name!r} used "
                           f"({source.dataset_name!r}); pass the same dataset with --dataset")
    settings = source_settings(source)  # before anything is written
    run = _open_run(store, source, judge, new_name or default_name(source, judge))
    report = RejudgeReport(source=source, run=run)
    job = _Rejudging(store, run, judge, dataset, settings, report, on_progress)
    store.set_run_status(run.id, RunStatus.running)
    try:
        return await _judge_again(store, source, job, concurrency)
    except (asyncio.CancelledError, KeyboardInterrupt):  # as eval: a stopped run says why, and resumes
        store.set_run_status(run.id, RunStatus.interrupted)
        raise
    except Exception:
        store.set_run_status(run.id, RunStatus.failed)
        raise


async def _judge_again(store: Store, source: RunRecord, job: _Rejudging, concurrency: int) -> RejudgeReport:
    """Judge every answered turn of ``source`` into the job's run; close it as eval closes a run."""
    report, run, dataset, settings = job.report, job.run, job.dataset, job.settings
    by_story: dict[str, list[TurnRecord]] = {}
    for row in store.turn_rows(source.id):
        by_story.setdefault(row.story_id, []).append(row)
    stories = store.story_rows(source.id)
    calls = deque(call for story in stories for call in job.prepare(story, by_story.get(story.story_id, [])))
    with store.write_batches():
        await asyncio.gather(*(job.worker(calls) for _ in range(min(max(1, concurrency), len(calls)))))
        for story in stories:  # stories with no answered turn have no call to finish them
            if job.pending.get(story.story_id) == 0:
                job.finish(story.story_id)
    position = {story.story_id: story.position for story in stories}
    report.feedback_changes.sort(key=lambda change: (position[change.story_id], change.turn))
    report.changed.sort(key=lambda change: (position[change[0]], change[1]))
    report.results = run_results(store, run.id, _covered(store, source, dataset, settings))
    # as eval: done only when every StoryTurn was scored; a judge that failed for good leaves it incomplete,
    # and the same command retries the failed judgments (they are not cached)
    store.set_run_status(run.id, RunStatus.done if report.results.complete else RunStatus.incomplete)
    report.run = store.get_run(run.name) or run
    report.decided_by = decided_by(job.decided)
    return report


def _covered(store: Store, source: RunRecord, dataset: Dataset, settings: EvalSettings) -> set[str]:
    """The StoryTurns the source run covers, as eval counted them: the dataset (up to its limit), or the share
    of each shard the run recorded."""
    stories = list(enumerate(dataset.storyturns[: settings.limit] if settings.limit is not None
                             else dataset.storyturns))
    shards = store.shards(source.id)
    if shards:
        stories = [item for index, count in shards for item in Shard(index, count).share(stories)]
    return {storyturn.id for _, storyturn in stories}


@dataclass
class _Story:
    """A story being re-judged: its rows and the verdicts that have come in (None: nothing to judge)."""

    row: StoryRecord
    rows: list[TurnRecord]
    verdicts: list[tuple[Verdict, str | None, bool] | None]


class _Rejudging:
    """One re-judging job: ``concurrency`` workers take judge calls in story order from one list; a
    story's branch rules are applied and its turns recorded when its last verdict comes in."""

    def __init__(self, store: Store, run: RunRecord, judge: Judge, dataset: Dataset, settings: EvalSettings,
                 report: RejudgeReport, on_progress: Callable[[int], None] | None):
        self.store, self.run, self.judge, self.dataset, self.settings = store, run, judge, dataset, settings
        self.report = report
        self.on_progress = on_progress
        self.pictures = PictureCache(dataset, max_side=settings.image_max_side, fmt=settings.image_format)
        self.stories: dict[str, _Story] = {}
        self.pending: dict[str, int] = {}  # story -> verdicts still to come
        self.decided: list[str] = []
        self.judged = 0

    def prepare(self, story: StoryRecord, rows: list[TurnRecord]) -> list[tuple[str, int, JudgeRequest]]:
        """The judge calls of one story's answered turns: (story id, row index, request)."""
        story_id = story.story_id
        storyturn = self.dataset.get(story_id)
        policy = self.settings.judge_images
        with_pictures = self.judge.reads_pictures and (  # the rules judge reads none: none made for it
            policy is JudgeImages.ON or policy is JudgeImages.NEEDED and storyturn.image_dependent)
        earlier: list[tuple[str, str]] = []
        shown: list[ImagePart] = []
        calls = []
        for index, row in enumerate(rows):
            if with_pictures:
                shown.extend(self.pictures.part(image["id"]) for image in row.images)
            if row.response is None:  # the model call failed: nothing to judge
                continue
            calls.append((story_id, index, judge_request(storyturn, row.turn, row.prompt, row.response,
                                                         earlier, shown)))
            earlier.append((row.prompt, row.response))
        self.stories[story_id] = _Story(story, rows, [None] * len(rows))
        self.pending[story_id] = len(calls)
        return calls

    async def worker(self, calls: deque[tuple[str, int, JudgeRequest]]) -> None:
        while calls:
            story_id, index, request = calls.popleft()
            self.stories[story_id].verdicts[index] = await judge_cached(self.store, self.run.id, self.judge, request)
            self.pending[story_id] -= 1
            if self.pending[story_id] == 0:
                self.finish(story_id)

    def finish(self, story_id: str) -> None:
        """Apply the branch rules to a story's verdicts in turn order and record its turns and result."""
        state = self.stories[story_id]
        story, rows, report = state.row, state.rows, self.report
        storyturn = self.dataset.get(story_id)
        previous: PreviousOutcome | None = None
        active_branch: int | None = None
        all_correct = True
        for row, judged in zip(rows, state.verdicts, strict=True):
            k = row.turn
            turn = storyturn.turns[k]
            shown = row.what_was_shown
            if judged is None:
                self.store.record_turn(TurnRecord.of(self.run.id, story_id, k, shown, error_kind=row.error_kind,
                                                     error=row.error))
                all_correct = False
                continue
            verdict, key, from_cache = judged
            would = choose_feedback(turn.feedback, previous, self.settings.feedback,
                                    undecided=self.settings.undecided_feedback,
                                    texts=self.settings.correctness_texts)[1]
            if k > 0 and would != row.feedback_kind:
                report.feedback_changes.append(FeedbackChange(story_id, k, row.feedback_kind, would))
            score = record_scored_turn(self.store, self.run.id, story_id, k, turn, verdict, active_branch,
                                       shown=shown, response=row.response or "", judge_name=self.judge.name,
                                       judgment_key=key)
            active_branch = score.active_branch
            report.cached += int(from_cache)
            report.judge_calls += int(not from_cache)
            if row.correct != score.correct:
                report.changed.append((story_id, k, row.correct, score.correct))
            report.turns += 1
            if not verdict.error:  # a judge call that failed decided nothing
                self.decided.append(verdict.judge or self.judge.name)
            all_correct = all_correct and score.correct is True
            previous = PreviousOutcome(score.correct, score.branch, tuple(turn.answers))
            self.judged += 1
            if self.on_progress:
                self.on_progress(self.judged)
        self.pending[story_id] = -1  # finished
        self.store.record_story(replace(story, run_id=self.run.id,
                                        correct=all_correct if story.status is StoryStatus.done else None))
