"""``commet generate llm``: the paper's one-shot LLM construction pipeline (StoryTurns plus pictures)."""

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from commet.cli.common import echo, fail, fail_option
from commet.format.problems import FormatError

if TYPE_CHECKING:
    from commet.generation.llm.pipeline import GenerationFailure, GenerationReport


class Variant(str, Enum):
    auto = "auto"
    text_complete = "text-complete"
    image_dependent = "image-dependent"


def llm(
    model: Annotated[str, typer.Option(help="Chat model spec that writes the StoryTurns, e.g. google:gemini-3-pro.")],
    image_model: Annotated[str, typer.Option(help="Picture backend: openai:gpt-image-1, "
                                                  "google:gemini-2.5-flash-image or diffusers:MODEL.")],
    task: Annotated[str, typer.Option(help="Task id, e.g. diverse_desire (the 18 ids: docs/tasks.md in the "
                                           "repository, or `commet stats sample`).")],
    out: Annotated[Path, typer.Option(help="Dataset folder to create or extend.")],
    count: Annotated[int, typer.Option(min=1, help="How many StoryTurns to generate.")] = 1,
    exemplars: Annotated[str, typer.Option(help="Dataset holding the one-shot exemplar of the task.")] = "sample",
    variant: Annotated[Variant, typer.Option(help="Text-complete or image-dependent items.")] = Variant.auto,
    temperature: Annotated[float, typer.Option(help="Sampling temperature of the chat model.")] = 1.0,
    max_tokens: Annotated[int, typer.Option(help="Maximum tokens per reply.")] = 4096,
    seed: Annotated[int | None, typer.Option(help="Base sampling seed (item n uses seed + n).")] = None,
    attempts: Annotated[int, typer.Option(min=1, help="Replies per item before giving up (errors are sent "
                                                      "back for repair).")] = 3,
    concurrency: Annotated[int, typer.Option(min=1, help="Items in flight at once.")] = 4,
    id_prefix: Annotated[str, typer.Option(help="Prefix of the new StoryTurn ids.")] = "llm",
    db: Annotated[Path | None, typer.Option(help="Keep every chat reply in this SQLite store: the same command "
                                                 "run again after a crash makes no repeated chat call.")] = None,
) -> None:
    """Generate StoryTurns of a task by one-shot prompting, draw their pictures, lint and validate them."""
    from commet.generation.llm.images import create_image_model
    from commet.generation.llm.pipeline import (
        GeneratedItem,
        GenerationError,
        GenerationOptions,
        existing_dataset,
        generate_storyturns,
        write_generated,
    )
    from commet.models.base import ModelSpecError, SettingError
    from commet.models.registry import create_model
    from commet.sources.loading import load_dataset

    try:
        examples = load_dataset(exemplars)
        previous = existing_dataset(out)
    except FormatError as exc:
        fail(str(exc))
    try:
        chat = create_model(model)
        painter = create_image_model(image_model)
    except ModelSpecError as exc:
        fail(str(exc))
    try:
        options = GenerationOptions(task=task, count=count, variant=variant.value, temperature=temperature,
                                    max_tokens=max_tokens, seed=seed, attempts=attempts, concurrency=concurrency,
                                    id_prefix=id_prefix)
    except SettingError as exc:
        fail_option(exc)

    def report(result: "GeneratedItem | GenerationFailure") -> None:
        if isinstance(result, GeneratedItem):
            flags = f", {len(result.lint)} lint finding(s)" if result.lint else ""
            echo(f"generated {result.storyturn.id} ({len(result.images)} picture(s), "
                       f"{result.attempts} repl{'y' if result.attempts == 1 else 'ies'}{flags})")
            for finding in result.lint:
                echo(f"  {finding}")
        else:
            echo(f"failed {result.story_id}: {result.error}", err=True)

    async def run() -> "GenerationReport":
        try:
            taken = {st.id for st in previous} if previous is not None else set()
            if db is None:
                return await generate_storyturns(chat, painter, examples, options, taken_ids=taken, on_done=report)
            from commet.store.sqlite import Store

            with Store(db) as cache:
                return await generate_storyturns(chat, painter, examples, options, taken_ids=taken, on_done=report,
                                                 cache=cache)
        finally:
            await chat.aclose()
            await painter.aclose()

    import asyncio

    try:
        result = asyncio.run(run())
    except GenerationError as exc:
        fail(str(exc))
    dataset, problems = write_generated(out, result)
    for problem in problems:
        echo(str(problem), err=True)
    errors = sum(p.severity == "error" for p in problems)
    echo(f"wrote {len(result.items)} new StoryTurn(s) to {out} ({len(dataset)} in all); "
               f"{len(result.failures)} failed; validation: {errors} error(s)")
    if result.failures or errors:
        raise typer.Exit(1)


def register_into(generate_app: typer.Typer) -> None:
    """Add :func:`llm` to the ``generate`` group as ``commet generate llm``."""
    generate_app.command("llm")(llm)
