"""The paper's construction pipeline: one-shot StoryTurn generation, then a picture per chosen segment.

For each requested item the chat model gets the system prompt and one exemplar StoryTurn of
the task (:mod:`commet.generation.llm.prompts`) and must answer with one JSON object. The
reply is parsed (:mod:`.parse`), validated with :func:`commet.format.validate.validate_storyturn`
and linted for the paper's defects (:mod:`.lint`); a reply with errors is sent back with the
errors for a corrected version, up to ``attempts`` times. Accepted items then get their
pictures from the image backend (:mod:`.images`), one prompt per turn that asked for one.

Items are made ``concurrency`` at a time, every chat call goes through the model's retry
policy, and with a ``cache`` store every chat reply is kept there keyed by (model, request,
item id), as ``commet eval`` keeps its calls: a generation killed before it wrote its items and
started again with the same options makes no repeated chat call, while a later run that adds
items (new ids) asks afresh.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from commet.errors import CommetError
from commet.format.dataset import STORYTURNS_FILE, Dataset
from commet.format.model import StoryTurn
from commet.format.problems import Problem
from commet.format.validate import id_problem, validate_dataset, validate_storyturn
from commet.generation.llm.images import ImageModel
from commet.generation.llm.lint import LintFinding, lint_storyturn
from commet.generation.llm.parse import ParsedReply, ReplyError, parse_reply
from commet.generation.llm.prompts import (
    PROMPT_VERSION,
    SYSTEM_PROMPT,
    image_prompt,
    repair_prompt,
    user_prompt,
)
from commet.models.base import (
    GenerationSettings,
    Message,
    Model,
    ModelCallError,
    ModelRequest,
    SettingError,
    json_key,
)
from commet.sources.loading import load_dataset
from commet.store.sqlite import Store
from commet.taxonomy import Task, get_task

VARIANTS = ("auto", "text-complete", "image-dependent")
LOG_FILE = "generation.jsonl"


class GenerationError(CommetError, ValueError):
    """A problem with the request itself (unknown task, no exemplar): one clear line."""


@dataclass(frozen=True)
class GenerationOptions:
    task: str
    count: int = 1
    variant: str = "auto"
    temperature: float = 1.0
    max_tokens: int = 4096
    seed: int | None = None
    attempts: int = 3
    concurrency: int = 4
    id_prefix: str = "llm"

    def __post_init__(self) -> None:  # a bad sampling setting is refused here, not at the first call
        GenerationSettings.checked(temperature=self.temperature, max_tokens=self.max_tokens, seed=self.seed)
        problem = id_problem(f"{self.id_prefix}-{self.task}-0001")  # the ids it makes must pass validation
        if problem is not None:
            raise SettingError("id_prefix", f"{problem}, with the prefix {self.id_prefix!r}")


@dataclass
class GeneratedItem:
    storyturn: StoryTurn
    images: dict[str, bytes]
    lint: list[LintFinding]
    attempts: int
    transcript: list[dict[str, str]]


@dataclass
class GenerationFailure:
    number: int
    story_id: str
    error: str


@dataclass
class GenerationReport:
    items: list[GeneratedItem] = field(default_factory=list)
    failures: list[GenerationFailure] = field(default_factory=list)


def choose_exemplar(exemplars: Dataset, task: str, variant: str = "auto") -> StoryTurn:
    """The first StoryTurn of ``task``, preferring one of the requested variant."""
    candidates = [st for st in exemplars if st.task == task]
    if not candidates:
        raise GenerationError(f"no exemplar of task {task!r} in {exemplars.source_file}; "
                              "give a dataset that has one with --exemplars PATH")
    if variant != "auto":
        wanted = variant == "image-dependent"
        candidates = [st for st in candidates if st.image_dependent == wanted] or candidates
    return candidates[0]


def _problems_of(parsed: ParsedReply) -> tuple[list[str], list[LintFinding]]:
    """Validation errors and lint findings of a parsed reply (pictures count as present)."""
    st = parsed.storyturn
    probe = Dataset(storyturns=[st], images={image: b"" for image in st.images}, source_file="<reply>")
    errors = [f"turn {p.turn}: {p.field}: {p.message}" if p.turn is not None else f"{p.field}: {p.message}"
              for p in validate_storyturn(st, probe, decode_pictures=False, strict=True)
              if p.severity == "error"]
    findings = lint_storyturn(st, parsed.declared_task)
    errors += [str(f) for f in findings if f.severity == "error"]
    return errors, findings


def _segment_findings(parsed: ParsedReply) -> list[LintFinding]:
    findings = []
    for picture in parsed.pictures:
        story = " ".join(t.story for t in parsed.storyturn.turns[: picture.turn + 1])
        if re.sub(r"\W+", " ", picture.segment).strip().lower() not in re.sub(r"\W+", " ", story).lower():
            findings.append(LintFinding("picture_segment", picture.turn, "image", "the picture's segment is not an "
                                        "excerpt of the story so far; check the picture against the text"))
    return findings


async def ask(model: Model, request: ModelRequest, story_id: str, cache: Store | None) -> str:
    """The chat reply to ``request`` for item ``story_id``: from the cache when it was asked before."""
    if cache is None:
        return (await model.generate(request)).text
    key = json_key(call=json.dumps(model.cache_key(request)), item=json.dumps(story_id))
    async with cache.single_flight(key):
        cached = cache.cached_model_call(key)
        if cached is not None:
            return cached.response_text
        started = time.perf_counter()
        reply = await model.generate(request)
        cache.remember_model_call(key=key, model=model.spec, request_json=request.fingerprint_json,
                                  response_text=reply.text, finish_reason=reply.finish_reason,
                                  input_tokens=reply.usage.input_tokens, output_tokens=reply.usage.output_tokens,
                                  latency_s=time.perf_counter() - started, attempts=reply.attempts)
        return reply.text


async def generate_one(model: Model, image_model: ImageModel, task: Task, exemplar: StoryTurn, *, number: int,
                       story_id: str, options: GenerationOptions, cache: Store | None = None) -> GeneratedItem:
    """One StoryTurn with its pictures; raises ReplyError / ModelCallError when it cannot be made."""
    seed = None if options.seed is None else options.seed + number
    settings = GenerationSettings(temperature=options.temperature, max_tokens=options.max_tokens, seed=seed)
    messages = [Message.text("system", SYSTEM_PROMPT),
                Message.text("user", user_prompt(task, exemplar, variant=options.variant, number=number,
                                                 count=options.count))]
    parsed: ParsedReply | None = None
    findings: list[LintFinding] = []
    attempt = 0
    while parsed is None:
        attempt += 1
        reply = await ask(model, ModelRequest(tuple(messages), settings, tags={"story_id": story_id}), story_id, cache)
        messages.append(Message.text("assistant", reply))
        try:
            candidate = parse_reply(reply, task=task, story_id=story_id, source=f"llm:{model.spec}")
            errors, findings = _problems_of(candidate)
        except ReplyError as exc:
            errors = [str(exc).splitlines()[0]]
        if not errors:
            parsed = candidate
        elif attempt >= options.attempts:
            raise ReplyError(f"no usable reply after {attempt} attempts; last problems: {'; '.join(errors)}")
        else:
            messages.append(Message.text("user", repair_prompt("; ".join(errors))))
    transcript = [{"role": m.role, "text": m.text_content} for m in messages]
    findings += _segment_findings(parsed)
    st = parsed.storyturn
    prompts: dict[str, str] = {}
    for picture in parsed.pictures:
        image_id = st.turns[picture.turn].image
        assert image_id is not None
        prompts[image_id] = image_prompt(st, picture.turn, picture.segment, picture.scene)
    # an item's pictures are independent of each other: drawn at once
    drawn = await asyncio.gather(*(image_model.generate(text) for text in prompts.values()))
    images = dict(zip(prompts, drawn, strict=True))
    st.meta = {
        "generator": {"kind": "llm", "model": model.spec, "image_model": image_model.spec, "exemplar": exemplar.id,
                      "prompt_version": PROMPT_VERSION, "attempts": attempt},
        "image_prompts": prompts,
        "image_scenes": {st.turns[p.turn].image: p.scene for p in parsed.pictures},
        "image_segments": {st.turns[p.turn].image: p.segment for p in parsed.pictures},
        "lint": [f.to_dict() for f in findings],
    }
    return GeneratedItem(st, images, findings, attempt, transcript)


def next_ids(prefix: str, task: str, count: int, taken: set[str]) -> list[str]:
    """``count`` fresh ids ``prefix-task-0001`` ... that are not in ``taken``."""
    ids: list[str] = []
    number = 0
    while len(ids) < count:
        number += 1
        candidate = f"{prefix}-{task}-{number:04d}"
        if candidate not in taken:
            ids.append(candidate)
    return ids


async def generate_storyturns(model: Model, image_model: ImageModel, exemplars: Dataset, options: GenerationOptions,
                              *, taken_ids: set[str] | None = None,
                              on_done: Callable[[GeneratedItem | GenerationFailure], None] | None = None,
                              cache: Store | None = None) -> GenerationReport:
    """Generate ``options.count`` StoryTurns of ``options.task`` concurrently (chat replies kept in ``cache``)."""
    if options.variant not in VARIANTS:
        raise GenerationError(f"variant must be one of {', '.join(VARIANTS)}")
    try:
        task = get_task(options.task)
    except KeyError as exc:
        raise GenerationError(str(exc.args[0])) from None
    exemplar = choose_exemplar(exemplars, task.id, options.variant)
    ids = next_ids(options.id_prefix, task.id, options.count, taken_ids or set())
    report = GenerationReport()
    gate = asyncio.Semaphore(max(1, options.concurrency))

    async def one(number: int, story_id: str) -> None:
        async with gate:
            try:
                result: GeneratedItem | GenerationFailure = await generate_one(
                    model, image_model, task, exemplar, number=number, story_id=story_id, options=options,
                    cache=cache)
            except (ReplyError, ModelCallError) as exc:
                result = GenerationFailure(number, story_id, str(exc))
        if isinstance(result, GeneratedItem):
            report.items.append(result)
        else:
            report.failures.append(result)
        if on_done is not None:
            on_done(result)

    with cache.write_batches() if cache is not None else contextlib.nullcontext():
        await asyncio.gather(*(one(n, sid) for n, sid in enumerate(ids, start=1)))
    report.items.sort(key=lambda item: item.storyturn.id)
    return report


def existing_dataset(out: Path) -> Dataset | None:
    return load_dataset(out) if (out / STORYTURNS_FILE).is_file() else None


def write_generated(out: Path, report: GenerationReport) -> tuple[Dataset, list[Problem]]:
    """Add the generated items to the dataset folder ``out`` (created if needed) and validate it."""
    previous = existing_dataset(out)
    dataset = previous or Dataset(storyturns=[], name=out.name, description="Generated by `commet generate llm`.")
    dataset.root = out
    for item in report.items:
        dataset.storyturns.append(item.storyturn)
        dataset.images.update(item.images)
    dataset.save(out)
    with (out / LOG_FILE).open("a", encoding="utf-8") as log:
        for item in report.items:
            log.write(json.dumps({"id": item.storyturn.id, "attempts": item.attempts,
                                  "lint": [f.to_dict() for f in item.lint], "transcript": item.transcript},
                                 ensure_ascii=False) + "\n")
        for failure in report.failures:
            log.write(json.dumps({"id": failure.story_id, "error": failure.error}, ensure_ascii=False) + "\n")
    saved = load_dataset(out)
    return saved, validate_dataset(saved)
