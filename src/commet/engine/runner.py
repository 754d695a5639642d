"""The engine: runs a dataset through a model, one conversation per StoryTurn, judged online.

Many StoryTurns are in flight at once (``concurrency`` workers); the turns of one story run
strictly in order because each turn's feedback depends on the judged previous answer.
Every model call and LLM judgment goes through the store's cache, so a killed run started
again with the same settings resumes without repeating completed calls, and a repeat of a
finished run makes no call at all.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from commet.engine.conversation import (
    DEFAULT_SYSTEM_PROMPT,
    PAPER_CORRECTNESS_TEXTS,
    STOPPED_UNDECIDED,
    CorrectnessTexts,
    FeedbackCondition,
    PreviousOutcome,
    UndecidedFeedback,
    choose_feedback,
    judge_request,
    user_text,
)
from commet.engine.judging import judge_cached, record_scored_turn
from commet.engine.pictures import PictureCache
from commet.engine.schedule import SlotQueues
from commet.format.dataset import Dataset
from commet.format.model import StoryTurn
from commet.judges.base import Judge, JudgeRequest, Verdict, spent
from commet.models.base import (
    GenerationSettings,
    ImagePart,
    Message,
    Model,
    ModelCallError,
    ModelRequest,
    TextPart,
)
from commet.store.sqlite import RunRecord, Store


class ImagePolicy(str, Enum):
    """Which turns show their pictures: all (``on``), none (``off``), or only the turns of image-dependent
    StoryTurns (``needed``: the paper's third condition, Table 3 and Appendix D)."""

    on = "on"
    off = "off"
    needed = "needed"

    def __str__(self) -> str:
        return self.value

    def shows_pictures(self, image_dependent: bool) -> bool:
        """Whether a StoryTurn's turns show their pictures under this policy."""
        return self is ImagePolicy.on or (self is ImagePolicy.needed and image_dependent)


class JudgeImages(str, Enum):
    """Which StoryTurns' pictures an LLM judge sees (only ever pictures the answerer was shown)."""

    NEEDED = "needed"  # image-dependent StoryTurns: the answer rests on the picture
    ON = "on"
    OFF = "off"


class EvalSettings(BaseModel):
    """Everything about a run that changes its results; recorded with the run and hashed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    images: ImagePolicy = ImagePolicy.on
    feedback: FeedbackCondition = "original"
    undecided_feedback: UndecidedFeedback = UndecidedFeedback.STOP
    correctness_texts: CorrectnessTexts = PAPER_CORRECTNESS_TEXTS
    judge_images: JudgeImages = JudgeImages.NEEDED
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    generation: GenerationSettings = Field(default_factory=GenerationSettings)
    image_max_side: int = 1024
    image_format: Literal["png", "jpeg"] = "png"
    limit: int | None = None


#: seconds between the starts of the story slots (see :class:`Engine`)
START_INTERVAL_S = 0.001


class RunConflictError(ValueError):
    """A run name already used with other settings, model, judge or dataset."""


class SpendLimitError(ValueError):
    """A spend limit that cannot be kept: a model or judge in the run has no known price."""


class SpendBudget:
    """The run's estimated spend against a limit (``--max-cost``).

    A turn starts only while the spend so far, plus what the turns in flight and this one are
    expected to cost (the mean cost of this session's paid turns), stays within the limit; so
    the run stops cleanly before it would pass the limit, and a rerun with a higher limit
    resumes it. Spend of earlier sessions of the same run counts.
    """

    def __init__(self, limit: float, spent: float = 0.0):
        self.limit = limit
        self.spent = spent
        self._session = 0.0
        self._paid_turns = 0
        self._in_flight = 0

    def may_start(self) -> bool:
        mean = self._session / self._paid_turns if self._paid_turns else 0.0
        if self.spent + (self._in_flight + 1) * mean > self.limit or self.spent >= self.limit:
            return False
        self._in_flight += 1
        return True

    def finished(self, cost: float) -> None:
        self._in_flight -= 1
        self.spent += cost
        self._session += cost
        self._paid_turns += int(cost > 0)


@dataclass
class Progress:
    """Live counters, passed to the progress callback after every turn."""

    stories_total: int = 0
    stories_done: int = 0
    questions: int = 0
    questions_right: int = 0
    model_calls: int = 0
    cached_calls: int = 0
    errors: int = 0


@dataclass
class RunSummary:
    run: RunRecord
    progress: Progress
    call_counts: dict[str, int] = field(default_factory=dict)
    #: the estimated spend (USD) when a spend limit stopped the run before it was complete
    stopped_at_spend: float | None = None


def _dataset_path(dataset: Dataset) -> dict[str, str]:
    """Where the dataset was read from, recorded so that reports find its pictures again (not in the config hash)."""
    if dataset.root is not None:
        return {"dataset_path": str(dataset.root.resolve())}
    if dataset.source_file != "<memory>" and Path(dataset.source_file).exists():
        return {"dataset_path": str(Path(dataset.source_file).resolve())}
    return {}


def _package_version() -> str:
    from commet import __version__

    return __version__


def config_hash(model: Model, judge: Judge, settings: EvalSettings, dataset_hash: str) -> str:
    payload = {"model": model.identity(), "judge": judge.name, "settings": settings.model_dump(mode="json"),
               "dataset": dataset_hash}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def default_run_name(model: Model, settings: EvalSettings, dataset: Dataset) -> str:
    """``MODEL@DATASET:images=..,feedback=..``, plus ``,limit=N`` for a trial on the first N StoryTurns."""
    limit = f",limit={settings.limit}" if settings.limit is not None else ""
    return f"{model.spec}@{dataset.name}:images={settings.images.value},feedback={settings.feedback}{limit}"


class Engine:
    """Runs one (model, judge, settings, dataset) combination into a store.

    The ``concurrency`` story slots start ``start_interval`` seconds apart rather than all at
    once: 64 first requests fired together open 64 connections in the same instant and come
    back together, and the client then works through them one by one for several rounds
    (bench/bench_openai_server.py: about 40 ms more on each of the first calls and a slower
    first second). Spread by 1 ms, the first requests leave as they are built.
    """

    def __init__(self, *, model: Model, judge: Judge, store: Store, dataset: Dataset,
                 settings: EvalSettings | None = None, concurrency: int = 8,
                 on_progress: Callable[[Progress], None] | None = None,
                 start_interval: float = START_INTERVAL_S, max_cost: float | None = None):
        self.model = model
        self.judge = judge
        self.store = store
        self.dataset = dataset
        self.settings = settings or EvalSettings()
        self.concurrency = max(1, concurrency)
        self.start_interval = max(0.0, start_interval)
        self.on_progress = on_progress
        self.progress = Progress()
        self.max_cost = max_cost
        self.budget: SpendBudget | None = None
        self._spend_limit_reached = False
        self._pictures = PictureCache(dataset, max_side=self.settings.image_max_side, fmt=self.settings.image_format)

    # run bookkeeping ------------------------------------------------------------------------------
    def open_run(self, name: str | None) -> RunRecord:
        pictures = self.settings.images is not ImagePolicy.off  # a run without pictures never reads them
        dataset_hash = self.dataset.content_hash(pictures=pictures)
        digest = config_hash(self.model, self.judge, self.settings, dataset_hash)
        name = name or default_run_name(self.model, self.settings, self.dataset)
        existing = self.store.get_run(name)
        if existing is not None:
            # (runs recorded before the hash left the pictures out of runs without pictures resume too)
            if existing.config_hash != digest and (pictures or existing.config_hash != config_hash(
                    self.model, self.judge, self.settings, self.dataset.content_hash())):
                raise RunConflictError(
                    f"run {name!r} already exists in {self.store.path} with another model, judge, dataset or "
                    "settings; pick another --run name")
            return existing
        return self.store.create_run(
            name=name, model=self.model.spec, judge=self.judge.name,
            settings={**self.settings.model_dump(mode="json"), "model_identity": self.model.identity(),
                      **_dataset_path(self.dataset)},
            config_hash=digest, dataset_name=self.dataset.name, dataset_hash=dataset_hash,
            package_version=_package_version(), story_count=len(self._stories()))

    def _stories(self) -> list[StoryTurn]:
        stories = self.dataset.storyturns
        return stories[: self.settings.limit] if self.settings.limit is not None else stories

    def pending(self, run: RunRecord) -> list[tuple[int, StoryTurn]]:
        """The (position, StoryTurn) pairs of this run not finished yet; resets the progress counters."""
        stories = self._stories()
        done = self.store.finished_stories(run.id)
        self.progress = Progress(stories_total=len(stories), stories_done=len(done & {s.id for s in stories}))
        return [(position, st) for position, st in enumerate(stories) if st.id not in done]

    async def run(self, name: str | None = None) -> RunSummary:
        run = self.open_run(name)
        if self.max_cost is not None:
            unpriced = [what for what, known in (("model " + self.model.spec, self.model.price_known()),
                                                 ("judge " + self.judge.name, self.judge.price_known())) if not known]
            if unpriced:
                raise SpendLimitError(f"--max-cost needs known prices, but the {' and the '.join(unpriced)} "
                                      "has none (price unknown); give price_in/price_out as model options")
            self.budget = SpendBudget(self.max_cost, spent=self.spent_so_far(run))
        todo = self.pending(run)
        if todo:
            self.store.set_run_status(run.id, "running")
            await self.run_stories(run, todo)
        unfinished = {st.id for st in self._stories()} - self.store.finished_stories(run.id)
        if self.budget is not None and unfinished:
            self.store.set_run_status(run.id, "stopped-spend-limit")
            return RunSummary(self.store.get_run(run.name) or run, self.progress, self.store.call_counts(run.id),
                              stopped_at_spend=self.budget.spent)
        return self.finish(run)

    def spent_so_far(self, run: RunRecord) -> float:
        """The estimated spend of the calls this run has made (earlier sessions included)."""
        from commet.models.base import Usage

        spend = self.store.spend(run.id)
        model = self.model.estimated_cost(Usage(spend.model_input_tokens, spend.model_output_tokens))
        return (model or 0.0) + (spend.judge_cost or 0.0)

    async def run_stories(self, run: RunRecord, todo: list[tuple[int, StoryTurn]]) -> None:
        """Run the given StoryTurns, ``concurrency`` at a time, on a balanced plan (:mod:`commet.engine.schedule`).

        Each slot works through a list of StoryTurns planned so that all slots finish at about the
        same time (weighed by turns), and takes work from the busiest slot when its own runs out.
        Results do not depend on the order: each StoryTurn keeps its position.
        """
        queues = SlotQueues([len(storyturn.turns) for _, storyturn in todo], self.concurrency)
        with self.store.write_batches():
            workers = [asyncio.create_task(self._worker(run, todo, queues, slot, slot * self.start_interval))
                       for slot in range(queues.slots if todo else 0)]
            try:
                await asyncio.gather(*workers)
            except BaseException:
                for worker in workers:
                    worker.cancel()
                raise

    def finish(self, run: RunRecord) -> RunSummary:
        self.store.set_run_status(run.id, "done")
        final = self.store.get_run(run.name)
        assert final is not None
        return RunSummary(final, self.progress, self.store.call_counts(run.id))

    async def _worker(self, run: RunRecord, todo: list[tuple[int, StoryTurn]], queues: SlotQueues, slot: int,
                      start_after: float) -> None:
        if start_after:
            await asyncio.sleep(start_after)
        while not self._spend_limit_reached:
            item = queues.next(slot)
            if item is None:
                return
            await self.run_story(run, *todo[item])

    # one story ------------------------------------------------------------------------------------
    def image_part(self, image_id: str) -> ImagePart:
        """The picture as every provider receives it: the run's size and format policy applied once."""
        return self._pictures.part(image_id)

    def judge_sees_pictures(self, storyturn: StoryTurn) -> bool:
        """Whether the judge gets the pictures the answerer saw in this StoryTurn."""
        policy = self.settings.judge_images
        return policy is JudgeImages.ON or policy is JudgeImages.NEEDED and storyturn.image_dependent

    async def run_story(self, run: RunRecord, position: int, storyturn: StoryTurn) -> None:
        messages: list[Message] = []
        if self.settings.system_prompt:
            messages.append(Message.text("system", self.settings.system_prompt))
        previous: PreviousOutcome | None = None
        active_branch: int | None = None
        earlier: list[tuple[str, str]] = []
        shown: list[ImagePart] = []
        judge_pictures = self.judge_sees_pictures(storyturn)
        status, story_correct = "done", True
        for k, turn in enumerate(storyturn.turns):
            if self.budget is not None and not self.budget.may_start():
                self._spend_limit_reached = True
                return  # not finished: a rerun with a higher limit asks this story again
            cost = 0.0
            try:
                feedback_text, feedback_kind = choose_feedback(
                    turn.feedback, previous, self.settings.feedback, undecided=self.settings.undecided_feedback,
                    texts=self.settings.correctness_texts)
                if feedback_kind == STOPPED_UNDECIDED:  # the next turn would rest on a guess: not scored
                    status = "stopped"
                    break
                text = user_text(feedback_text, turn)
                parts: list[TextPart | ImagePart] = [TextPart(text)]
                images: list[dict[str, str]] = []
                if turn.image and self.settings.images.shows_pictures(storyturn.image_dependent):
                    image = self.image_part(turn.image)
                    parts.append(image)
                    shown.append(image)
                    images.append({"id": turn.image, "sha256": image.sha256})
                messages.append(Message("user", tuple(parts)))
                request = ModelRequest(tuple(messages), self.settings.generation, tags={"story_id": storyturn.id, "turn": k})
                row: dict[str, object] = {"prompt": text, "images_json": json.dumps(images), "feedback_kind": feedback_kind,
                                          "expected_json": json.dumps(turn.answers)}
                try:
                    reply, model_key, cost = await self._call_model(run, storyturn.id, k, request)
                except ModelCallError as exc:
                    self.store.record_turn(run.id, storyturn.id, k, **row, error_kind=exc.kind, error=str(exc))
                    self.progress.errors += 1
                    status, story_correct = "failed", False
                    break
                messages.append(Message.text("assistant", reply))
                request_for_judge = judge_request(storyturn, k, text, reply, earlier, shown if judge_pictures else ())
                verdict, judgment_key, judge_cost = await self._call_judge(run, request_for_judge)
                cost += judge_cost
                score = record_scored_turn(self.store, run.id, storyturn.id, k, turn, verdict, active_branch,
                                           fields={**row, "model_key": model_key}, response=reply,
                                           judge_name=self.judge.name, judgment_key=judgment_key)
                active_branch = score.active_branch
                self.progress.questions += 1
                self.progress.questions_right += int(score.correct is True)
                story_correct = story_correct and score.correct is True
                earlier.append((text, reply))
                previous = PreviousOutcome(score.correct, score.branch, tuple(turn.answers))
                if self.on_progress:
                    self.on_progress(self.progress)
            finally:
                if self.budget is not None:
                    self.budget.finished(cost)
        self.store.record_story(
            run.id, storyturn.id, position=position, task=storyturn.task, category=storyturn.category,
            image_dependent=int(storyturn.image_dependent), source=storyturn.source, status=status,
            correct=int(story_correct) if status == "done" else None)
        self.progress.stories_done += 1
        if self.on_progress:
            self.on_progress(self.progress)

    async def _call_model(self, run: RunRecord, story_id: str, turn: int,
                          request: ModelRequest) -> tuple[str, str, float]:
        """(reply, cache key, estimated USD of this call: 0 when answered from the store or unpriced)."""
        key = self.model.cache_key(request)
        cached = self.store.cached_model_call(key)
        if cached is not None:
            self.store.record_model_call(run_id=run.id, story_id=story_id, turn=turn, key=key, model=self.model.spec,
                                         request_json="{}", response_text=cached["response_text"], cached=True)
            self.progress.cached_calls += 1
            return cached["response_text"], key, 0.0
        started = time.perf_counter()
        try:
            response = await self.model.generate(request)
        except ModelCallError as exc:
            self.store.record_model_call(run_id=run.id, story_id=story_id, turn=turn, key=key, model=self.model.spec,
                                         request_json=request.fingerprint_json, response_text=None,
                                         latency_s=time.perf_counter() - started, error_kind=exc.kind, error=str(exc))
            raise
        latency = time.perf_counter() - started
        self.store.record_model_call(
            run_id=run.id, story_id=story_id, turn=turn, key=key, model=self.model.spec,
            request_json=request.fingerprint_json, response_text=response.text, finish_reason=response.finish_reason,
            input_tokens=response.usage.input_tokens, output_tokens=response.usage.output_tokens,
            latency_s=latency, attempts=response.attempts)
        self.progress.model_calls += 1
        return response.text, key, self.model.estimated_cost(response.usage) or 0.0

    async def _call_judge(self, run: RunRecord, request: JudgeRequest) -> tuple[Verdict, str | None, float]:
        """(verdict, judgment key, estimated USD of this judgment: 0 when from the store or free)."""
        verdict, key, from_cache = await judge_cached(self.store, run.id, self.judge, request)
        return verdict, key, 0.0 if from_cache else (spent(verdict.details)[2] or 0.0)
