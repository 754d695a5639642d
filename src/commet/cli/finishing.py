"""``commet eval --finish RUN --judge SPEC``: continue the StoryTurns RUN stopped at an undecided answer, with another
judge (:mod:`commet.engine.finish`). The model, dataset and settings are RUN's; the command reuses eval's output."""

from collections.abc import Callable
from pathlib import Path

import typer

from commet.cli.common import (
    EXIT_INCOMPLETE,
    fail,
    failure_printer,
    load_or_fail,
    print_failures,
    run_line,
    say,
    secrets_of,
)

#: eval's options beside its settings (:func:`commet.store.settings.setting_names`) that a finishing run takes
#: from the run it finishes
RUN_OPTIONS = ("max_cost", "shard", "workers")


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether option ``name`` was given (on the command line or from the environment), not left at its default.
    (Typer carries its own copy of click, so the source is compared by name.)"""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def refuse_settings(ctx: typer.Context) -> None:
    """--finish takes the run's own settings (an option given with it would make a different run) and a --judge."""
    from commet.store.settings import setting_names

    given = [name for name in (*setting_names(), *RUN_OPTIONS) if _given(ctx, name)]
    if given:
        fail(f"--finish continues the run with its own settings: drop {', '.join('--' + n.replace('_', '-') for n in given)}")
    if not _given(ctx, "judge"):
        fail("--finish needs --judge: the judge that decides what the run's judge left undecided (e.g. "
             "--judge openai:gpt-4o, a cascade behind the rules)")


def finish(*, source: str, model: str | None, dataset: str | None, judge: str, db: Path, run: str | None,
           concurrency: int, quiet: bool, force: bool) -> None:
    """Finish run ``source`` into a new run (see the module text), then print what eval prints."""
    from commet.cli.progress import live_progress
    from commet.cli.reporting import find_run_or_fail, open_store, print_report
    from commet.cli.run_dataset import DatasetNotFound, dataset_for
    from commet.engine.finish import FinishError, default_name, finishing_engine
    from commet.engine.runner import Progress, RunConflictError, RunSummary
    from commet.judges.base import UnknownJudgeError
    from commet.judges.registry import create_judge
    from commet.models.base import UnknownModelError
    from commet.models.registry import create_model
    from commet.store import short_ids

    with open_store(db) as store:
        record = find_run_or_fail(store, source)
        source_id = short_ids(r.name for r in store.runs())[record.name]
        source = record.name
        try:
            the_model = create_model(model or record.model)
        except UnknownModelError as exc:  # the stored spec leaves out options and paths: the user's --model has them
            fail(str(exc) if model else f"{exc} (the run's model {record.model!r} as stored; give --model as the "
                                        "run's eval command did)")
        try:
            the_judge = create_judge(judge)
        except UnknownJudgeError as exc:
            fail(str(exc))
        recorded = record.settings.dataset_path
        if dataset is not None:
            data = load_or_fail(dataset, force)
        elif recorded is not None and Path(recorded).exists():  # read as the run read it (a table by its columns)
            data = load_or_fail(recorded, force, record.settings.recorded.dataset_columns,
                                record.settings.recorded.dataset_adapter)
        else:
            try:
                data = dataset_for(record, None)
            except DatasetNotFound as exc:
                fail(str(exc))
        secrets = [getattr(the_model, "api_key", None), *secrets_of(the_judge)]
        try:
            engine = finishing_engine(store, source, the_model, the_judge, data, concurrency=concurrency,
                                      on_failure=failure_printer(secrets))
        except FinishError as exc:
            fail(str(exc))
        name = run or default_name(record, the_judge)

        async def go(on_progress: Callable[[Progress], None] | None) -> RunSummary:
            engine.on_progress = on_progress
            try:
                return await engine.run(name)
            finally:
                await the_model.aclose()
                await the_judge.aclose()

        with live_progress(enabled=not quiet, total=len(engine.mine())) as on_progress:
            import asyncio

            try:
                summary = asyncio.run(go(on_progress))
            except RunConflictError as exc:
                fail(str(exc), lines=True)  # what differs, as a table
    say(run_line(summary, finishes=source_id))
    counts = print_report(db, [source, summary.run.name], brief=True, dataset=data)
    if not summary.results.complete:
        print_failures(summary.results, counts[summary.run.name], secrets=secrets, stopped_by=summary.stopped_by)
        raise typer.Exit(EXIT_INCOMPLETE)
