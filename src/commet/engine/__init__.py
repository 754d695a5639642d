"""The engine: one conversation per StoryTurn, online judging, resumable runs in a SQLite store.

``evaluate`` is the notebook-friendly entry point; ``commet eval`` is a thin layer over it.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import ParamSpec, TypeVar

from commet.conditions import FeedbackCondition, ImagePolicy, JudgeImages, UndecidedFeedback
from commet.engine.claims import Shard
from commet.engine.conversation import apply_branch_rules, choose_feedback, user_text
from commet.engine.failures import FailureNotice
from commet.engine.runner import (
    Engine,
    Progress,
    RunConflictError,
    RunResults,
    RunSummary,
    SpendLimitError,
)
from commet.format.dataset import Dataset
from commet.judges.base import Judge
from commet.judges.registry import create_judge
from commet.models.base import GenerationSettings, Model
from commet.models.registry import create_model
from commet.sources.checked import load_checked
from commet.store.settings import DEFAULT_SYSTEM_PROMPT, CorrectnessTexts, EvalSettings
from commet.store.sqlite import Store

P = ParamSpec("P")
R = TypeVar("R")


async def evaluate_async(model: str | Model, dataset: str | Path | Dataset = "sample", *, judge: str | Judge = "rules",
                         db: str | Path | Store = "commet.sqlite", run: str | None = None,
                         settings: EvalSettings | None = None, concurrency: int = 8, workers: int = 1,
                         on_progress: Callable[[Progress], None] | None = None,
                         max_cost: float | None = None, shard: Shard | None = None,
                         slots: asyncio.Semaphore | None = None,
                         on_failure: Callable[[FailureNotice], None] | None = None) -> RunSummary:
    """Run (or resume) one evaluation and return its summary; results are in the store.

    ``summary.results`` describes the whole run as stored (a second call on a finished run
    reports its real figures and makes no call); ``summary.progress`` counts this call's work.

    A ``dataset`` given as a path goes through :func:`commet.sources.checked.load_checked`: a dataset
    with errors raises :class:`commet.format.validate.DatasetRefused` before anything is written
    (warnings are let through; ``commet eval`` refuses them without ``--force``).

    ``workers`` > 1 spreads the StoryTurns over that many processes (see :mod:`commet.engine.parallel`);
    model and judge must then be given as specs and ``db`` as a path. ``max_cost`` (USD) stops the
    run cleanly, resumable, before its estimated spend would pass that limit. ``shard`` runs only
    that deterministic share of the StoryTurns (``commet merge`` joins the shards' stores).
    Any number of processes may run the same run on the same store at once: they split the
    StoryTurns through leases in the store (:mod:`commet.engine.claims`). ``slots``, shared by
    several runs at once (``commet sweep``), caps their StoryTurns in flight together. ``on_failure`` hears
    the first failure of each kind at once (a retried attempt or a call that failed for good); a run whose
    calls keep failing in a way no rerun fixes (a refused key, no such model, an unreachable server) stops
    early, resumable, with ``summary.stopped_by`` saying why (:mod:`commet.engine.failures`; one process only).
    """
    # a dataset given by path is checked as `commet validate` checks it: one with errors never runs
    data = dataset if isinstance(dataset, Dataset) else load_checked(dataset, force=True)[0]
    if workers > 1:
        if max_cost is not None:
            raise ValueError("a spend limit (max_cost) needs one process: drop workers or max_cost")
        if not (isinstance(model, str) and isinstance(judge, str) and not isinstance(db, Store)):
            raise ValueError("workers > 1 needs the model and judge as spec strings and db as a path")
        from commet.engine.parallel import evaluate_in_workers

        return await evaluate_in_workers(model, data, judge=judge, db=str(db), run=run,
                                         settings=settings or EvalSettings(), concurrency=concurrency,
                                         workers=workers, on_progress=on_progress, shard=shard)
    the_model = create_model(model) if isinstance(model, str) else model
    the_judge = create_judge(judge) if isinstance(judge, str) else judge
    store = db if isinstance(db, Store) else Store(db)
    try:
        engine = Engine(model=the_model, judge=the_judge, store=store, dataset=data, settings=settings,
                        concurrency=concurrency, on_progress=on_progress, max_cost=max_cost, shard=shard,
                        slots=slots, on_failure=on_failure)
        return await engine.run(run)
    finally:
        if isinstance(model, str):
            await the_model.aclose()
        if isinstance(judge, str):
            await the_judge.aclose()
        if not isinstance(db, Store):
            store.close()


def _waited(run: Callable[P, Coroutine[object, object, R]], doc: str) -> Callable[P, R]:
    """``run`` as a plain call with its parameters, which waits for its coroutine and returns the result."""

    @functools.wraps(run)
    def wait(*args: P.args, **kwargs: P.kwargs) -> R:
        work = run(*args, **kwargs)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(work)
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"commet-{run.__name__}") as pool:
            return pool.submit(asyncio.run, work).result()

    wait.__name__ = wait.__qualname__ = run.__name__.removesuffix("_async")
    wait.__doc__ = doc
    return wait


#: :func:`evaluate_async`, waited for, with the same parameters (typed as they are there)
evaluate = _waited(evaluate_async, """:func:`evaluate_async`, waited for: for scripts, and for notebooks whose event loop already runs.

    Where a loop is running in this thread (Jupyter, IPython), ``asyncio.run`` cannot be used,
    so the evaluation runs in a worker thread with its own loop and this call waits for it;
    ``await evaluate_async(...)`` is the form that leaves the notebook's loop free meanwhile.
    """)


__all__ = [
    "DEFAULT_SYSTEM_PROMPT", "CorrectnessTexts", "Engine", "EvalSettings", "FailureNotice", "FeedbackCondition",
    "GenerationSettings",
    "ImagePolicy", "JudgeImages", "Progress", "RunConflictError", "RunResults", "RunSummary", "Shard",
    "SpendLimitError", "UndecidedFeedback",
    "apply_branch_rules", "choose_feedback", "evaluate", "evaluate_async", "user_text",
]
