"""The engine: runs a dataset through a model, one conversation per StoryTurn, judged online.

Many StoryTurns are in flight at once (``concurrency`` workers); the turns of one story run
strictly in order because each turn's feedback depends on the judged previous answer.
Every model call and LLM judgment goes through the store's cache, so a killed run started
again with the same settings resumes without repeating completed calls, and a repeat of a
finished run makes no call at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from commet import models
from commet.conditions import ImagePolicy, JudgeImages
from commet.engine.claims import Shard, StoryClaims, share_rate_budgets
from commet.engine.conversation import PreviousOutcome, judge_request, open_turn
from commet.engine.failures import CallSource, FailureNotice, FailureWatch
from commet.engine.judging import judge_cached, record_scored_turn
from commet.engine.pictures import PictureCache
from commet.engine.schedule import planned_order
from commet.errors import CommetError
from commet.format.dataset import Dataset
from commet.format.model import StoryTurn
from commet.format.pictures import PictureError
from commet.format.problems import printable
from commet.judges.base import Judge, JudgeRequest, Verdict
from commet.models.retry import RETRY_OBSERVER
from commet.store.errors import StoreFullError
from commet.store.records import ShownTurn, StoryRecord, StoryStatus, TurnRecord
from commet.store.settings import READ_FROM, EvalSettings, stored_settings
from commet.store.sqlite import FailureKind, RunRecord, RunStatus, Store

log = logging.getLogger(__name__)
#: ``json.dumps`` of a turn's pictures and answers, without its keyword checks at every turn
_turn_json = json.JSONEncoder().encode


#: seconds between the starts of the story slots (see :class:`Engine`)
START_INTERVAL_S = 0.001
#: stories ahead (in the order they are handed out) whose pictures are made before they start
PICTURE_LOOKAHEAD = 4


class RunConflictError(CommetError, ValueError):
    """A run name already used with other settings, model, judge or dataset; the message lists what differs."""


class SpendLimitError(CommetError, ValueError):
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
    """Live counters of this call (not of earlier calls on the same run), passed to the progress callback."""

    stories_total: int = 0
    stories_done: int = 0
    #: StoryTurns already scored by earlier calls on the run when this one started (a resumed run)
    stories_kept: int = 0
    questions: int = 0
    questions_right: int = 0
    model_calls: int = 0
    cached_calls: int = 0
    #: calls that failed for good (the model's and the judge's)
    errors: int = 0
    #: replies of this call's model calls that held code points which are not text (made U+FFFD), and how many
    repaired_replies: int = 0
    replaced_code_points: int = 0


@dataclass(frozen=True)
class RunResults:
    """The whole run as it stands in the store: every call that ever worked on it, not only this one's."""

    stories: int
    stories_done: int
    #: done with every turn judged (none left undecided by a judge that failed)
    stories_scored: int
    stories_failed: int
    stories_correct: int
    questions: int
    questions_right: int
    #: final failures per kind (model calls that failed for good, judges that could not decide)
    failures: list[FailureKind] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Every StoryTurn was scored: all done, none left with a failed call."""
        return self.stories_scored == self.stories

    @property
    def stories_not_scored(self) -> int:
        return self.stories - self.stories_scored


def run_results(store: Store, run_id: int, story_ids: set[str]) -> RunResults:
    """A run's results as stored now, over the StoryTurns ``story_ids`` it is meant to cover (eval's and
    rejudge's one account: what counts as scored, which calls failed for good)."""
    totals = store.run_totals(run_id)
    done = store.finished_stories(run_id) & story_ids
    return RunResults(stories=len(story_ids), stories_done=len(done),
                      stories_scored=len(done - store.stories_with_judge_errors(run_id)),
                      stories_failed=totals["stories_failed"], stories_correct=totals["stories_correct"],
                      questions=totals["questions"], questions_right=totals["questions_right"],
                      failures=store.run_failures(run_id))


@dataclass
class RunSummary:
    """What a call to the engine returns: the run, this call's counters and the whole run's results."""

    run: RunRecord
    #: what this call did
    progress: Progress
    #: the whole run as stored
    results: RunResults
    call_counts: dict[str, int] = field(default_factory=dict)
    #: the estimated spend (USD) when a spend limit stopped the run before it was complete
    stopped_at_spend: float | None = None
    #: the failure that stopped the run early (it kept failing in a way no rerun fixes by itself)
    stopped_by: FailureNotice | None = None


def _dataset_path(dataset: Dataset) -> dict[str, str]:
    """Where the dataset was read from, recorded so that reports find its pictures again (not in the config hash);
    for a table written by others (a Hub dataset: ``hf:OWNER/NAME@COMMIT``), how it was read and its
    ``--columns`` mapping (which is in the hash, through the dataset's)."""
    if dataset.origin is not None:
        recorded = {"dataset_path": dataset.origin.location, "dataset_layout": dataset.origin.layout}
        recorded |= {"dataset_columns": dataset.origin.columns} if dataset.origin.columns else {}
        return recorded | ({"dataset_adapter": dataset.origin.adapter,
                            "dataset_adapter_source": dataset.origin.adapter_source or ""}
                           if dataset.origin.adapter else {})
    if dataset.root is not None:
        return {"dataset_path": str(dataset.root.resolve())}
    if dataset.source_file != "<memory>" and Path(dataset.source_file).exists():
        return {"dataset_path": str(Path(dataset.source_file).resolve())}
    return {}


def _package_version() -> str:
    from commet.version import __version__

    return __version__


def config_hash(model: models.Model, judge: Judge, settings: EvalSettings, dataset_hash: str,
                provenance: dict[str, str] | None = None) -> str:
    """The hash of everything a run's results depend on; ``provenance`` (a finishing run's source) only when given,
    so every other run keeps its hash."""
    payload: dict[str, object] = {"model": model.identity(), "judge": judge.name,
                                  "settings": settings.recorded(), "dataset": dataset_hash}
    if provenance:
        payload["provenance"] = provenance
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


#: hex digits of the configuration hash in a default run name
NAME_HASH_LENGTH = 8


def default_run_name(model: models.Model, settings: EvalSettings, dataset: Dataset, digest: str) -> str:
    """``MODEL@DATASET:images=..,feedback=..[,limit=N],cfg=HASH``.

    ``HASH`` is the start of the configuration hash: model identity and options, judge, system
    prompt, sampling settings, image policy and dataset content. Changing any of them gives a
    new run instead of a clash with the earlier one.
    """
    limit = f",limit={settings.limit}" if settings.limit is not None else ""
    return (f"{model.spec}@{dataset.name}:images={settings.images.value},feedback={settings.feedback}{limit},"
            f"cfg={digest[:NAME_HASH_LENGTH]}")


def run_configuration(model: models.Model, judge: Judge, settings: EvalSettings, dataset: Dataset,
                      dataset_hash: str, provenance: dict[str, str] | None = None) -> dict[str, object]:
    """Everything a run's results depend on, flattened to ``name: value`` (what a conflict compares)."""
    return _flatten({"model": model.identity(), "judge": judge.name,
                     "dataset": {"name": dataset.name, "sha256": dataset_hash},
                     **settings.recorded(), **(provenance or {})})


def stored_configuration(run: RunRecord) -> dict[str, object]:
    """:func:`run_configuration` of a stored run, from what the store recorded."""
    settings = dict(run.settings.stored)
    identity = settings.pop("model_identity", {"spec": run.model})
    for recorded in READ_FROM:
        settings.pop(recorded, None)
    return _flatten({"model": identity, "judge": run.judge,
                     "dataset": {"name": run.dataset_name, "sha256": run.dataset_hash}, **settings})


def _flatten(tree: dict[str, object], prefix: str = "") -> dict[str, object]:
    flat: dict[str, object] = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _shown(value: object, width: int = 36) -> str:
    text = "(none)" if value is None else (value if isinstance(value, str) else json.dumps(value))
    text = text.replace("\n", " ").replace("\r", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def conflict_message(name: str, where: object, stored: dict[str, object], wanted: dict[str, object]) -> str:
    """The settings that differ between a stored run and this command, side by side."""
    keys = [k for k in dict.fromkeys([*stored, *wanted]) if stored.get(k) != wanted.get(k)]
    rows = [("setting", "stored run", "this command")] + [(k, _shown(stored.get(k)), _shown(wanted.get(k)))
                                                          for k in keys]
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    table = "\n".join(f"  {row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]}" for row in rows)
    return (f"run {name!r} already exists in {printable(str(where))} with other settings:\n{table}\n"
            "pick another --run name, or leave --run out: the default name differs for each configuration")


class Engine:
    """Runs one (model, judge, settings, dataset) combination into a store.

    The ``concurrency`` story slots start ``start_interval`` seconds apart rather than all at
    once: 64 first requests fired together open 64 connections in the same instant and come
    back together, and the client then works through them one by one for several rounds
    (bench/bench_openai_server.py: about 40 ms more on each of the first calls and a slower
    first second). Spread by 1 ms, the first requests leave as they are built.
    """

    def __init__(self, *, model: models.Model, judge: Judge, store: Store, dataset: Dataset,
                 settings: EvalSettings | None = None, concurrency: int = 8,
                 on_progress: Callable[[Progress], None] | None = None,
                 start_interval: float = START_INTERVAL_S, max_cost: float | None = None,
                 shard: Shard | None = None, slots: asyncio.Semaphore | None = None, crowded: bool = False,
                 kept: Mapping[tuple[str, int, str], tuple[Verdict, str | None]] | None = None,
                 provenance: dict[str, str] | None = None,
                 on_failure: Callable[[FailureNotice], None] | None = None):
        self.model = model
        self.judge = judge
        self.store = store
        self.dataset = dataset
        self.settings = settings or EvalSettings()
        #: every conversation's opening: one message object, which a provider encodes once (``Message.encodings``)
        self._system_messages = ([models.Message.text("system", self.settings.system_prompt)]
                                 if self.settings.system_prompt else [])
        self.concurrency = max(1, concurrency)
        self.start_interval = max(0.0, start_interval)
        self.on_progress = on_progress
        self.progress = Progress()
        self.max_cost = max_cost
        self.budget: SpendBudget | None = None
        self._spend_limit_reached = False
        self.shard = shard
        self.slots = slots  # story slots shared with other engines on the same endpoint (a sweep)
        self.crowded = crowded  # other processes run this run from the start (--workers)
        self._claims: StoryClaims | None = None
        #: verdicts carried over from another run (commet eval --finish): (story, turn, model call) -> verdict, key
        self.kept = kept or {}
        #: where a run comes from when that changes its results (a finishing run's source): recorded and hashed
        self.provenance = provenance or {}
        self._pictures = PictureCache(dataset, max_side=self.settings.image_max_side, fmt=self.settings.image_format)
        #: failures said at once (``on_failure``), and the run stopped where they repeat (:mod:`.failures`)
        self.failures = FailureWatch(model_spec=model.spec, notify=on_failure, stop=self._stop_workers)
        self._workers: list[asyncio.Task[None]] = []

    # run bookkeeping ------------------------------------------------------------------------------
    def open_run(self, name: str | None) -> RunRecord:
        pictures = self.settings.images is not ImagePolicy.off  # a run without pictures never reads them
        dataset_hash = self.dataset.content_hash(pictures=pictures)
        digest = config_hash(self.model, self.judge, self.settings, dataset_hash, self.provenance)
        name = name or default_run_name(self.model, self.settings, self.dataset, digest)
        existing = self.store.get_run(name) or self.store.create_run(
            name=name, model=self.model.spec, judge=self.judge.name,
            settings=stored_settings(self.settings, model_identity=self.model.identity(), **_dataset_path(self.dataset),
                                     **self.provenance),
            config_hash=digest, dataset_name=self.dataset.name, dataset_hash=dataset_hash,
            package_version=_package_version(), story_count=len(self._stories()))
        # (created by another process a moment ago, or earlier: the stored configuration must be this one;
        # runs recorded before the hash left the pictures out of runs without pictures resume too)
        if existing.config_hash != digest and (pictures or existing.config_hash != config_hash(
                self.model, self.judge, self.settings, self.dataset.content_hash())):
            wanted = run_configuration(self.model, self.judge, self.settings, self.dataset, dataset_hash,
                                       self.provenance)
            raise RunConflictError(conflict_message(name, self.store.path, stored_configuration(existing), wanted))
        return existing

    def _stories(self) -> list[StoryTurn]:
        stories = self.dataset.storyturns
        return stories[: self.settings.limit] if self.settings.limit is not None else stories

    def mine(self) -> list[tuple[int, StoryTurn]]:
        """The (position, StoryTurn) pairs this engine runs: the run's, or its shard's share."""
        stories = list(enumerate(self._stories()))
        return self.shard.share(stories) if self.shard is not None else stories

    def pending(self, run: RunRecord) -> list[tuple[int, StoryTurn]]:
        """The (position, StoryTurn) pairs of this run (or shard) not scored yet; resets the progress counters.

        Not scored: never finished, or finished with a call that failed for good (a model call,
        or a judge that left a turn undecided), so a rerun retries those.
        """
        stories = self.mine()
        done = self.store.finished_stories(run.id) - self.store.stories_with_judge_errors(run.id)
        kept = len(done & {s.id for _, s in stories})
        self.progress = Progress(stories_total=len(stories), stories_done=kept, stories_kept=kept)
        if self.on_progress:  # a resumed run's bar starts where the run stands
            self.on_progress(self.progress)
        return [(position, st) for position, st in stories if st.id not in done]

    async def run(self, name: str | None = None) -> RunSummary:
        """Run (or resume) the run; on Ctrl-C or an error it is marked ``interrupted`` or ``failed``."""
        run = self.open_run(name)
        if self.max_cost is not None:
            unpriced = [what for what, known in (("model " + self.model.spec, self.model.price_known()),
                                                 ("judge " + self.judge.name, self.judge.price_known())) if not known]
            if unpriced:
                raise SpendLimitError(f"--max-cost needs known prices, but the {' and the '.join(unpriced)} "
                                      "has none (price unknown); give price_in/price_out as model options")
            self.budget = SpendBudget(self.max_cost, spent=self.spent_so_far(run))
        if self.shard is not None:
            self.store.record_shard(run.id, self.shard.index, self.shard.count)
        todo = self.pending(run)
        if todo:
            self.store.set_run_status(run.id, RunStatus.running)
            with self.marked_if_stopped(run):
                await self.run_stories(run, todo)
        unfinished = {st.id for _, st in self.mine()} - self.store.finished_stories(run.id)
        if self.budget is not None and unfinished:
            self.store.set_run_status(run.id, RunStatus.stopped_spend_limit)
            return RunSummary(self.store.get_run(run.name) or run, self.progress, self.results(run),
                              self.store.call_counts(run.id), stopped_at_spend=self.budget.spent)
        summary = self.finish(run)
        summary.stopped_by = self.failures.stopped_by
        return summary

    @contextmanager
    def marked_if_stopped(self, run: RunRecord) -> Iterator[None]:
        """Record why a run stopped before its end: ``interrupted`` (Ctrl-C, cancelled) or ``failed``."""
        try:
            yield
        except (asyncio.CancelledError, KeyboardInterrupt):
            self._mark(run, RunStatus.interrupted)
            raise
        except Exception:
            self._mark(run, RunStatus.failed)
            raise

    def _mark(self, run: RunRecord, status: RunStatus) -> None:
        """Record why the run stopped, if the store can still be written (on a full disk it cannot: the run
        then stays ``running`` in the file and resumes all the same); the error that stopped it is raised."""
        try:
            self.store.set_run_status(run.id, status)
        except StoreFullError:
            log.debug("run %s not marked %s: the disk is full", run.name, status)
        except Exception as exc:  # noqa: BLE001 - the error that stopped the run is the one to raise
            log.warning("could not mark run %s %s: %s", printable(run.name), status, exc)

    def spent_so_far(self, run: RunRecord) -> float:
        """The estimated spend of the calls this run has made (earlier sessions included)."""
        from commet.models.base import Usage

        spend = self.store.spend(run.id)
        model = self.model.estimated_cost(Usage(spend.model_input_tokens, spend.model_output_tokens))
        return (model or 0.0) + (spend.judge_cost or 0.0)

    async def run_stories(self, run: RunRecord, todo: list[tuple[int, StoryTurn]]) -> None:
        """Run the given StoryTurns, ``concurrency`` at a time, on a balanced plan (:mod:`commet.engine.schedule`).

        The StoryTurns are handed out in the order of a plan that gives every slot about the same
        number of turns (so all slots finish at about the same time), each to the first free slot;
        results do not depend on the order (each StoryTurn keeps its position). Each story is
        claimed in the store first (:mod:`commet.engine.claims`), so other processes on the same
        run take the others, and rate limits are one budget in the store shared with them.
        """
        share_rate_budgets(self.store, self.model, self.judge)
        order = planned_order([len(storyturn.turns) for _, storyturn in todo], self.concurrency)
        claims = StoryClaims(self.store, run.id, [todo[i] for i in order],
                             chunk=max(1, min(16, self.concurrency // 4)), crowded=self.crowded)
        self._claims = claims
        with self.store.write_batches(), claims.held():
            heard = RETRY_OBSERVER.set(self.failures.retrying)  # the workers' calls report their retries here
            try:
                workers = self._workers = [asyncio.create_task(self._worker(run, claims, slot * self.start_interval))
                                           for slot in range(min(self.concurrency, len(todo)))]
            finally:
                RETRY_OBSERVER.reset(heard)
            try:
                await asyncio.wait(workers)  # all end: done, failed, or cancelled by a stop (_stop_workers)
                for worker in workers:
                    if not worker.cancelled():
                        worker.result()  # the first error of a worker, raised here
            except BaseException:
                for worker in workers:
                    worker.cancel()
                # they end here, while the store is still open: a story that never waits (a baseline, answers
                # from the store) runs on to its end before it sees the cancellation, and writes as it goes
                await asyncio.gather(*workers, return_exceptions=True)
                raise
            finally:
                self._pictures.close()

    def _stop_workers(self) -> None:
        """Stop the run early (its failures repeat, :class:`FailureWatch`): every story in flight ends where it is,
        unfinished, so the same command continues it; what was done is kept."""
        for worker in self._workers:
            worker.cancel()

    def finish(self, run: RunRecord) -> RunSummary:
        """Close the run: ``done`` when every StoryTurn was scored, else ``incomplete`` (a rerun retries)."""
        results = self.results(run)
        self.store.set_run_status(run.id, RunStatus.done if results.complete else RunStatus.incomplete)
        final = self.store.get_run(run.name)
        assert final is not None
        return RunSummary(final, self.progress, results, self.store.call_counts(run.id))

    def results(self, run: RunRecord) -> RunResults:
        """The whole run's results as stored now (see :class:`RunResults`)."""
        return run_results(self.store, run.id, {st.id for _, st in self.mine()})  # a shard's: its share's

    async def _worker(self, run: RunRecord, claims: StoryClaims, start_after: float) -> None:
        if start_after:
            await asyncio.sleep(start_after)
        while not self._spend_limit_reached:
            async with self.slots or contextlib.nullcontext():
                item = await claims.next()
                if item is None:
                    return
                self._prefetch_pictures([item[1], *claims.upcoming(PICTURE_LOOKAHEAD)])
                loop_passed = [False]  # set by the loop's next pass: whether the story let it run
                mark = asyncio.get_running_loop().call_soon(loop_passed.__setitem__, 0, True)
                await self.run_story(run, *item)
            if not loop_passed[0]:
                # a story answered from the store (or by a local baseline) never waits: let Ctrl-C and
                # commits in. After one that waited for answers, this would only cost its slot one more
                # pass of the loop (about 1 ms at 64 stories in flight).
                mark.cancel()
                await asyncio.sleep(0)

    def _prefetch_pictures(self, storyturns: list[StoryTurn]) -> None:
        """Have the threads make the pictures these StoryTurns will show (this one's later turns, the next
        ones' first) to a model or judge that reads them: a story then rarely waits for its picture when it starts."""
        self._pictures.prefetch(turn.image for storyturn in storyturns
                                if self.settings.images.shows_pictures(storyturn.image_dependent)
                                and (self.model.reads_pictures or self.judge_sees_pictures(storyturn))
                                for turn in storyturn.turns if turn.image)

    async def _show_picture(self, image_id: str, parts: list[models.TextPart | models.ImagePart],
                            shown: list[models.ImagePart], judge_pictures: bool) -> str:
        """Add a turn's picture to the model's message and the judge's pictures where they read it (prepared once
        per content, :class:`PictureCache`); the sha256 the turn records: of the bytes sent, or of the picture
        file itself when neither model nor judge reads pictures (nothing was prepared, nothing sent)."""
        if not (self.model.reads_pictures or judge_pictures):
            return self._pictures.file_sha256(image_id)
        image = await self._pictures.ready_part(image_id)
        if self.model.reads_pictures:
            parts.append(image)
        if judge_pictures:
            shown.append(image)
        return image.sha256

    # one story ------------------------------------------------------------------------------------
    def judge_sees_pictures(self, storyturn: StoryTurn) -> bool:
        """Whether the judge gets the pictures the answerer saw in this StoryTurn (never a judge that reads none)."""
        policy = self.settings.judge_images
        return self.judge.reads_pictures and (
            policy is JudgeImages.ON or policy is JudgeImages.NEEDED and storyturn.image_dependent)

    async def run_story(self, run: RunRecord, position: int, storyturn: StoryTurn) -> None:
        messages: list[models.Message] = [*self._system_messages]
        previous: PreviousOutcome | None = None
        active_branch: int | None = None
        earlier: list[tuple[str, str]] = []
        shown: list[models.ImagePart] = []
        judge_pictures = self.judge_sees_pictures(storyturn)
        status, story_correct = StoryStatus.done, True
        for k, turn in enumerate(storyturn.turns):
            if self.budget is not None and not self.budget.may_start():
                self._spend_limit_reached = True
                return  # not finished: a rerun with a higher limit asks this story again
            cost = 0.0
            try:
                opening = open_turn(turn, previous, self.settings.feedback, undecided=self.settings.undecided_feedback,
                                    texts=self.settings.correctness_texts)
                if opening is None:  # the next turn would rest on a guess: not scored
                    status = StoryStatus.stopped
                    break
                text, feedback_kind = opening.message, opening.feedback_kind
                parts: list[models.TextPart | models.ImagePart] = [models.TextPart(text)]
                images: list[dict[str, str]] = []
                if turn.image and self.settings.images.shows_pictures(storyturn.image_dependent):
                    try:
                        sha256 = await self._show_picture(turn.image, parts, shown, judge_pictures)
                    except PictureError as exc:  # found only by decoding it: said where, as validation does
                        raise self._pictures.refused(position, k, turn.image, exc) from None
                    images.append({"id": turn.image, "sha256": sha256})
                messages.append(models.Message("user", tuple(parts)))
                request = models.ModelRequest(tuple(messages), self.settings.generation,
                                              tags={"story_id": storyturn.id, "turn": k})
                images_json, expected_json = _turn_json(images) if images else "[]", _turn_json(turn.answers)
                try:
                    reply, model_key, cost = await self._call_model(run, storyturn.id, k, request)
                except models.ModelCallError as exc:
                    self.store.record_turn(TurnRecord.of(
                        run.id, storyturn.id, k, ShownTurn(text, images_json, feedback_kind, expected_json),
                        error_kind=exc.kind, error=str(exc)))
                    self.progress.errors += 1
                    status, story_correct = StoryStatus.failed, False
                    self.failures.failed(CallSource.model, self.model.spec, exc.kind, str(exc), storyturn.id, k)
                    break
                self.failures.worked(CallSource.model)
                messages.append(models.Message.text("assistant", reply))
                request_for_judge = judge_request(storyturn, k, text, reply, earlier, shown if judge_pictures else (),
                                                  feedback=opening.shown_feedback)
                carried = self.kept.get((storyturn.id, k, model_key))  # the same answer to the same conversation
                if carried is not None:
                    (verdict, judgment_key), judge_cost = carried, 0.0
                else:
                    verdict, judgment_key, judge_cost = await self._call_judge(run, request_for_judge)
                    self._watch_judge(verdict, storyturn.id, k)
                cost += judge_cost
                score = record_scored_turn(self.store, run.id, storyturn.id, k, turn, verdict, active_branch,
                                           shown=ShownTurn(text, images_json, feedback_kind, expected_json, model_key),
                                           response=reply,
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
        self.store.record_story(StoryRecord(
            run.id, storyturn.id, position=position, task=storyturn.task, category=storyturn.category,
            image_dependent=storyturn.image_dependent, source=storyturn.source, status=status,
            correct=story_correct if status is StoryStatus.done else None))
        if self._claims is not None:
            self._claims.ended(storyturn.id)
        self.progress.stories_done += 1
        if self.on_progress:
            self.on_progress(self.progress)

    async def _call_model(self, run: RunRecord, story_id: str, turn: int,
                          request: models.ModelRequest) -> tuple[str, str, float]:
        """(reply, cache key, estimated USD of this call: 0 when answered from the store or unpriced)."""
        key = self.model.cache_key(request)
        async with self.store.single_flight(key):
            if self._claims is None or not self._claims.crowded:
                return await self._call_model_once(run, story_id, turn, request, key)
            async with self._claims.one_call(key):  # another process may be making this call
                return await self._call_model_once(run, story_id, turn, request, key)

    async def _call_model_once(self, run: RunRecord, story_id: str, turn: int, request: models.ModelRequest,
                               key: str) -> tuple[str, str, float]:
        # with other processes on the run, a row one of them just wrote counts: ask SQLite, not only the index
        cached = self.store.cached_model_call(key, fresh=self._claims is not None and self._claims.crowded)
        if cached is not None:
            self.store.record_model_call(run_id=run.id, story_id=story_id, turn=turn, key=key, model=self.model.spec,
                                         request_json="{}", response_text=cached.response_text, cached=True)
            self.progress.cached_calls += 1
            return cached.response_text, key, 0.0
        started = time.perf_counter()
        try:
            response = await self.model.generate(request)
        except models.ModelCallError as exc:
            self.store.record_model_call(run_id=run.id, story_id=story_id, turn=turn, key=key, model=self.model.spec,
                                         request_json=request.fingerprint_json, response_text=None,
                                         latency_s=time.perf_counter() - started, error_kind=exc.kind, error=str(exc))
            raise
        latency = time.perf_counter() - started
        if response.replaced:
            self.progress.repaired_replies += 1
            self.progress.replaced_code_points += response.replaced
            log.warning("story %s turn %d: the reply of %s held %d code point(s) that are not Unicode text (lone "
                        "surrogates); each was replaced by U+FFFD", printable(story_id), turn, self.model.spec,
                        response.replaced)
        self.store.record_model_call(
            run_id=run.id, story_id=story_id, turn=turn, key=key, model=self.model.spec,
            request_json=request.fingerprint_json, response_text=response.text, finish_reason=response.finish_reason,
            input_tokens=response.usage.input_tokens, output_tokens=response.usage.output_tokens,
            latency_s=latency, attempts=response.attempts)
        self.progress.model_calls += 1
        return response.text, key, self.model.estimated_cost(response.usage) or 0.0

    def _watch_judge(self, verdict: Verdict, story_id: str, turn: int) -> None:
        """Tell the failure watch how the judge's call went (a verdict the rules judge reached made no call)."""
        kind = verdict.error_kind
        if kind is not None and kind.startswith("judge_"):
            self.progress.errors += 1  # a call that failed for good, as a model's is
            self.failures.failed(CallSource.judge, verdict.judge or self.judge.name, kind.removeprefix("judge_"),
                                 verdict.error or verdict.rationale, story_id, turn)
        elif verdict.judge not in (None, "rules"):
            self.failures.worked(CallSource.judge)

    async def _call_judge(self, run: RunRecord, request: JudgeRequest) -> tuple[Verdict, str | None, float]:
        """(verdict, judgment key, estimated USD of this judgment: 0 when from the store or free)."""
        verdict, key, from_cache = await judge_cached(self.store, run.id, self.judge, request)
        return verdict, key, 0.0 if from_cache else (verdict.spent()[2] or 0.0)
