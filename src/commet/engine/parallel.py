"""One run spread over several worker processes sharing the store.

At high request rates the client's CPU (SDK request building, HTTP, parsing) is the limit
of one event loop; worker processes, each with its own model and judge clients and its own
connection to the SQLite file (WAL), scale it with cores. Each StoryTurn is still one
conversation in one process, so results are the same as with one process. The workers claim
their stories in the store (:mod:`commet.engine.claims`) and share one rate budget there.

Workers never outlive the parent: on Linux the kernel kills them when the parent dies
(``PR_SET_PDEATHSIG``), and everywhere a watchdog thread in each worker exits it as soon as
its parent is gone. A parent that stops (an error, Ctrl-C) terminates them.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection

from commet.engine.claims import Shard
from commet.engine.runner import Engine, Progress, RunSummary
from commet.errors import CommetError
from commet.format.dataset import Dataset
from commet.judges.registry import create_judge
from commet.models.registry import create_model
from commet.store.errors import StoreFullError
from commet.store.settings import EvalSettings
from commet.store.sqlite import RunStatus, Store

POLL_S = 0.25
#: seconds between a worker's looks at whether its parent is still there
PARENT_WATCH_S = 0.2
#: seconds a terminated worker gets before it is killed
TERMINATE_GRACE_S = 3.0
PR_SET_PDEATHSIG = 1


class WorkerError(CommetError, RuntimeError):
    """A worker process failed; the message carries its error."""


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
    parent: int


def watch_parent(parent: int) -> None:
    """Exit this process when ``parent`` dies (kernel signal on Linux, a polling thread everywhere)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):  # the thread below still watches
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # died before the signal was armed
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_WATCH_S)
        os._exit(1)  # no cleanup: the parent is gone, the store keeps what was committed

    threading.Thread(target=watch, name="commet-parent-watch", daemon=True).start()


def run_worker(job: WorkerJob, errors: Connection) -> None:
    watch_parent(job.parent)
    try:
        asyncio.run(_run_worker(job))
    except KeyboardInterrupt:  # Ctrl-C reaches the whole group: the parent marks the run and says so
        pass
    except StoreFullError as exc:  # the parent raises it again: one line, not a worker's traceback
        errors.send(exc)
        raise SystemExit(1) from None
    except BaseException as exc:  # noqa: BLE001 - sent to the parent, which raises it
        errors.send(f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        raise SystemExit(1) from None
    finally:
        errors.close()


async def _run_worker(job: WorkerJob) -> None:
    model, judge = create_model(job.model), create_judge(job.judge)
    try:
        with Store(job.db) as store:
            engine = Engine(model=model, judge=judge, store=store, dataset=job.dataset, settings=job.settings,
                            concurrency=job.concurrency, crowded=True)
            run = store.get_run(job.run)
            assert run is not None
            stories = job.dataset.storyturns
            await engine.run_stories(run, [(p, stories[p]) for p in job.positions])
    finally:
        await model.aclose()
        await judge.aclose()


async def evaluate_in_workers(model: str, dataset: Dataset, *, judge: str, db: str, run: str | None,
                              settings: EvalSettings, concurrency: int, workers: int,
                              on_progress: Callable[[Progress], None] | None = None,
                              shard: Shard | None = None) -> RunSummary:
    """Open (or resume) the run here, run its pending StoryTurns in ``workers`` processes, then close it.

    Every worker gets all pending StoryTurns and claims them one chunk at a time in the store,
    so a worker that draws long stories simply claims fewer.
    """
    parent_model, parent_judge = create_model(model), create_judge(judge)
    try:
        with Store(db) as store:
            engine = Engine(model=parent_model, judge=parent_judge, store=store, dataset=dataset, settings=settings,
                            shard=shard)
            record = engine.open_run(run)
            if shard is not None:
                store.record_shard(record.id, shard.index, shard.count)
            todo = tuple(position for position, _ in engine.pending(record))
            if todo:
                store.set_run_status(record.id, RunStatus.running)
                count = min(workers, len(todo))
                per_worker = max(1, -(-concurrency // count))
                jobs = [WorkerJob(model, judge, dataset, db, record.name, settings, per_worker, todo, os.getpid())
                        for _ in range(count)]
                with engine.marked_if_stopped(record):
                    await _supervise(jobs, store, record.id, engine.progress, on_progress)
            return engine.finish(record)
    finally:
        await parent_model.aclose()
        await parent_judge.aclose()


async def _supervise(jobs: list[WorkerJob], store: Store, run_id: int, progress: Progress,
                     on_progress: Callable[[Progress], None] | None) -> None:
    start = store.progress_counts(run_id)
    context = multiprocessing.get_context("spawn")
    started: list[tuple[multiprocessing.process.BaseProcess, Connection]] = []
    try:
        for job in jobs:
            receiver, sender = context.Pipe(duplex=False)
            worker = context.Process(target=run_worker, args=(job, sender), name="commet-worker", daemon=True)
            worker.start()
            sender.close()
            started.append((worker, receiver))
        while any(process.is_alive() for process, _ in started):
            await asyncio.sleep(POLL_S)
            _update(progress, start, store.progress_counts(run_id))
            if on_progress:
                on_progress(progress)
        _update(progress, start, store.progress_counts(run_id))
        for process, receiver in started:
            process.join()
            message = _received(receiver)
            if isinstance(message, StoreFullError):
                raise message
            if process.exitcode != 0:
                raise WorkerError(message or f"a worker process ended with exit code {process.exitcode}")
    finally:
        for process, _ in started:
            if process.is_alive():
                process.terminate()
        for process, receiver in started:
            process.join(TERMINATE_GRACE_S)
            if process.is_alive():
                process.kill()
                process.join()
            receiver.close()
def _received(receiver: Connection) -> str | StoreFullError | None:
    """The error a worker sent before it ended, if any."""
    try:
        return receiver.recv() if receiver.poll() else None
    except EOFError:  # closed without a message: the worker ended well
        return None


def _update(progress: Progress, start: dict[str, int], now: dict[str, int]) -> None:
    progress.stories_done = now["stories"]
    progress.questions = now["questions"] - start["questions"]
    progress.questions_right = now["right"] - start["right"]
    progress.model_calls = now["model_calls"] - start["model_calls"]
    progress.cached_calls = now["cached"] - start["cached"]
    progress.errors = now["errors"] - start["errors"]
