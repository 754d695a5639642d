"""Finishing a run: its StoryTurns stopped at an undecided answer continued with another judge.

Under ``--undecided-feedback stop`` a StoryTurn ends at an answer its judge left undecided, and
re-judging cannot ask the questions that were never asked. ``commet eval --finish RUN --judge
SPEC`` runs the same model, dataset and settings again into a new run in which every verdict
RUN decided is kept (not asked again: the same answer to the same conversation, found by its
stored model call) and everything else goes to the new judge: the undecided answers, and the
answers to the remaining questions, which are new model calls. Everything before comes from the
store: the model calls by their cache keys, the verdicts from RUN. A StoryTurn whose undecided
answer the new judge decides thus goes on from that turn with the feedback its verdict chooses;
one that still cannot be decided stops there again. StoryTurns RUN left with a failed call are
asked again too. The new run records where it comes from (``finished_from``).
"""

from __future__ import annotations

from collections.abc import Callable

from commet.engine.failures import FailureNotice
from commet.engine.rejudge import RejudgeError, source_settings
from commet.engine.runner import Engine, Progress
from commet.errors import CommetError
from commet.format.dataset import Dataset
from commet.judges.base import Judge, JudgeRequest, Verdict
from commet.models.base import Model
from commet.store.records import StoryStatus
from commet.store.sqlite import RunRecord, Store


class FinishError(CommetError, ValueError):
    """A run that cannot be finished as asked (unknown, answered by people, another model or dataset, nothing to do)."""


class Continuing(Judge):
    """The judge of a finishing run: ``judge`` for every answer whose verdict is not carried over from the run it
    finishes (the engine looks those up). Named after both, e.g. ``rules then rules+llm:openai:gpt-4o@judge-v2``;
    its verdicts are cached under ``judge``'s own keys."""

    def __init__(self, before: str, judge: Judge):
        self.inner = judge
        self.name = f"{before} then {judge.name}"
        self.cacheable = judge.cacheable

    def cache_key(self, request: JudgeRequest) -> str:
        return self.inner.cache_key(request)

    async def judge(self, request: JudgeRequest) -> Verdict:
        return await self.inner.judge(request)

    def price_known(self) -> bool:
        return self.inner.price_known()

    async def aclose(self) -> None:
        await self.inner.aclose()


def kept_verdicts(store: Store, source: RunRecord) -> dict[tuple[str, int, str], tuple[Verdict, str | None]]:
    """The verdicts ``source`` decided, by (story, turn, model call): they are carried over as they are."""
    kept: dict[tuple[str, int, str], tuple[Verdict, str | None]] = {}
    for row in store.turn_rows(source.id):
        if row.model_key and row.correct is not None and row.outcome is not None and row.error_kind is None:
            kept[(row.story_id, row.turn, row.model_key)] = (
                Verdict(row.outcome, row.branch, row.rationale or "", judge=row.judge or source.judge), row.judgment_key)
    return kept


def default_name(source: RunRecord, judge: Judge) -> str:
    return f"{source.name}~finish:{judge.name}"


def finishing_engine(store: Store, source_name: str, model: Model, judge: Judge, dataset: Dataset, *,
                     concurrency: int = 8, on_progress: Callable[[Progress], None] | None = None,
                     on_failure: Callable[[FailureNotice], None] | None = None) -> Engine:
    """The engine that finishes run ``source_name`` with ``judge`` (run it with :meth:`Engine.run`; see the module).

    Refused, before anything is written: an unknown run, one answered by people, another model (by its identity,
    as the store's cache keys it) or dataset, a run with nothing to finish, and a judge that can decide nothing
    the run's judge left undecided (the rules alone, or the run's own judge: it would give the same verdicts).
    ``on_failure`` hears each call that fails for good, at once (as ``commet eval``'s).
    """
    source = store.get_run(source_name)
    if source is None:
        raise FinishError(f"no run named {source_name!r} in {store.path}")
    identity = source.settings.recorded.model_identity
    if identity is None:
        raise FinishError(f"run {source_name!r} was not answered by a model (model {source.model!r}): its stopped "
                          "StoryTurns cannot be continued")
    try:
        settings = source_settings(source)
    except RejudgeError as exc:
        raise FinishError(str(exc)) from None
    if model.identity() != identity:
        raise FinishError(f"--model {model.spec!r} is not the model of run {source_name!r} ({source.model!r} with "
                          "other options): give --model exactly as the run's eval command did")
    if not dataset.hash_matches(source.dataset_hash):
        raise FinishError(f"dataset {dataset.name!r} is not the one run {source_name!r} used "
                          f"({source.dataset_name!r}); pass the same dataset with --dataset")
    rows = store.turn_rows(source.id)
    stories = store.story_rows(source.id)
    if not any(s.status is not StoryStatus.done for s in stories) and all(r.correct is not None for r in rows):
        raise FinishError(f"run {source_name!r} has no StoryTurn stopped at, or holding, an undecided answer: "
                          "nothing to finish")
    if judge.name in ("rules", source.judge):
        raise FinishError(f"--judge {judge.name} decides nothing that run {source_name!r}'s judge ({source.judge}) "
                          "left undecided: give a judge that can, e.g. --judge openai:gpt-4o (the rules, then that "
                          "model) or a panel")
    return Engine(model=model, judge=Continuing(source.judge, judge), store=store, dataset=dataset, settings=settings,
                  concurrency=concurrency, on_progress=on_progress, kept=kept_verdicts(store, source),
                  provenance={"finished_from": source.name}, on_failure=on_failure)
