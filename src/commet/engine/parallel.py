"""One run spread over several worker processes sharing the store.

At high request rates the client's CPU (SDK request building, HTTP, parsing) is the limit
of one event loop; worker processes, each with its own model and judge clients and its own
connection to the SQLite file (WAL), scale it with cores. Each StoryTurn is still one
conversation in one process, so results are the same as with one process.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from commet.engine.runner import Engine, EvalSettings, Progress, RunSummary
from commet.format.dataset import Dataset
from commet.judges.registry import create_judge
from commet.models.registry import create_model
from commet.store.sqlite import RunStatus, Store

POLL_S = 0.25


@dataclass(frozen=True)
class WorkerJob:
    """What one worker process needs: specs (clients are built in the process), data, its positions."""

    model: str
    judge: str
    dataset: Dataset
    db: str
    run: str
    settings: EvalSettings
    concurrency: int
    positions: tuple[int, ...]


def run_worker(job: WorkerJob) -> None:
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C reaches the whole group: the parent marks the run, says so
        asyncio.run(_run_worker(job))


async def _run_worker(job: WorkerJob) -> None:
    model, judge = create_model(job.model), create_judge(job.judge)
    try:
        with Store(job.db) as store:
            engine = Engine(model=model, judge=judge, store=store, dataset=job.dataset, settings=job.settings,
                            concurrency=job.concurrency)
            run = store.get_run(job.run)
            assert run is not None
            stories = job.dataset.storyturns
            await engine.run_stories(run, [(p, stories[p]) for p in job.positions])
    finally:
        await model.aclose()
        await judge.aclose()


async def evaluate_in_workers(model: str, dataset: Dataset, *, judge: str, db: str, run: str | None,
                              settings: EvalSettings, concurrency: int, workers: int,
                              on_progress: Callable[[Progress], None] | None = None) -> RunSummary:
    """Open (or resume) the run here, run its pending StoryTurns in ``workers`` processes, then close it."""
    parent_model, parent_judge = create_model(model), create_judge(judge)
    try:
        with Store(db) as store:
            engine = Engine(model=parent_model, judge=parent_judge, store=store, dataset=dataset, settings=settings)
            record = engine.open_run(run)
            todo = [position for position, _ in engine.pending(record)]
            if todo:
                store.set_run_status(record.id, RunStatus.running)
                shards = [tuple(todo[i::workers]) for i in range(workers) if todo[i::workers]]
                per_worker = max(1, -(-concurrency // len(shards)))
                jobs = [WorkerJob(model, judge, dataset, db, record.name, settings, per_worker, shard)
                        for shard in shards]
                with engine.marked_if_stopped(record):
                    await _supervise(jobs, store, record.id, engine.progress, on_progress)
            return engine.finish(record)
    finally:
        await parent_model.aclose()
        await parent_judge.aclose()


async def _supervise(jobs: list[WorkerJob], store: Store, run_id: int, progress: Progress,
                     on_progress: Callable[[Progress], None] | None) -> None:
    start = store.progress_counts(run_id)
    loop = asyncio.get_running_loop()
    with ProcessPoolExecutor(max_workers=len(jobs), mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [loop.run_in_executor(pool, run_worker, job) for job in jobs]
        pending = set(futures)
        while pending:
            _, pending = await asyncio.wait(pending, timeout=POLL_S)
            _update(progress, start, store.progress_counts(run_id))
            if on_progress:
                on_progress(progress)
        for future in futures:
            future.result()  # a worker's exception surfaces here


def _update(progress: Progress, start: dict[str, int], now: dict[str, int]) -> None:
    progress.stories_done = now["stories"]
    progress.questions = now["questions"] - start["questions"]
    progress.questions_right = now["right"] - start["right"]
    progress.model_calls = now["model_calls"] - start["model_calls"]
    progress.cached_calls = now["cached"] - start["cached"]
    progress.errors = now["errors"] - start["errors"]
