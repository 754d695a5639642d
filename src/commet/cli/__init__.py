"""The ``commet`` command: a thin layer over the Python API.

Every user error (bad dataset, unknown model, run conflict) ends as one line on stderr and
exit code 2, never a traceback. Exit codes (docs/cli.md):

* 0: done; for ``eval``, every StoryTurn was scored;
* 2: bad input (nothing was run);
* 3: the run ended incomplete: some calls failed for good (a summary per kind is printed);
  running the same command again retries them;
* 4: the run stopped before its estimated spend would pass ``--max-cost``;
* 5: the disk is full (the store or an output file could not be written); free space and rerun to resume;
* 130: interrupted (Ctrl-C); running the same command again resumes;
* 143: stopped by SIGTERM (Slurm, Kubernetes, ``timeout``), as by Ctrl-C.

The modules that define commands leave out ``from __future__ import annotations``: Typer reads
every command's annotations at every start, and evaluating 700 of them from strings was 30 ms of
each ``commet`` command (names only needed for type checking are quoted instead).
"""

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from commet.cli.common import (  # noqa: F401 - the shared names stay importable from commet.cli
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    EXIT_SPEND_LIMIT,
    EXIT_TERMINATED,
    EXIT_USAGE,
    RESUME_LINE,
    AdapterOption,
    ColumnsOption,
    ForceOption,
    Program,
    _load,
    cache_written_after,
    check_dataset_path,
    check_run_name,
    click_errors,
    echo,
    fail,
    fail_option,
    fail_problems,
    failure_printer,
    load_or_fail,
    print_failures,
    refuse_bad_files,
    resumable,
    run_line,
    say,
    usage_error_line,
)
from commet.conditions import FeedbackCondition, ImagePolicy, JudgeImages, UndecidedFeedback
from commet.extras import MissingExtraError, missing_extra_message
from commet.sources.targets import ConvertTarget

if TYPE_CHECKING:
    from commet.engine import Shard
    from commet.format import Dataset
    from commet.judges.base import Judge
    from commet.models.base import Model
    from commet.store.settings import EvalSettings

#: this module's own commands (validate, stats, convert, schema, eval): :func:`build_app` puts them in the program
own_commands = typer.Typer()


def _print_version(value: bool) -> None:
    if value:
        from commet.version import __version__

        echo(f"commet {__version__} (Python {sys.version.split()[0]})")
        raise typer.Exit()


def _options(version: Annotated[bool, typer.Option(
        "--version", is_eager=True, callback=_print_version, help="Print the version and exit.")] = False) -> None:
    """CoMMET: multi-turn, multimodal Theory of Mind evaluation."""


@own_commands.command()
def validate(path: Annotated[str, typer.Argument(help="Dataset folder, JSONL/JSON file, HF folder, hf:OWNER/NAME "
                                                    "or 'sample'.")],
             columns: ColumnsOption = None,
             adapter: AdapterOption = None,
             explain: Annotated[bool, typer.Option(
                 "--explain", help="Also say how a table was read (as `commet stats --explain`), on stderr.")
             ] = False,
             strict: Annotated[bool, typer.Option(
                 "--strict", help="Hold the data to what its own authors must meet: an answer found verbatim in "
                                  "its own story is an error (a counted warning by default).")] = False,
             quick: Annotated[bool, typer.Option(
                 "--quick", help="Check each picture's header and structure only, as a run does before it starts, "
                                 "instead of decoding its pixels (a damaged stream inside a whole file is found "
                                 "only by decoding).")] = False) -> None:
    """Check a dataset; print every problem as `file:line story=ID turn=K field=F: message`."""
    from commet.format import has_errors
    from commet.sources.checked import load_and_validate

    check_dataset_path(path)
    with Program.starting_up():  # tens of thousands of objects, none garbage: no collection walks their making
        dataset, problems = load_and_validate(path, columns, strict=strict, adapter=adapter,
                                              decode_pictures=not quick)
    if dataset is not None and explain:
        from commet.cli.consoles import err_console
        from commet.sources.explain import explain_lines

        for line in explain_lines(dataset):
            err_console.print(line, markup=False, highlight=False, soft_wrap=True)
    elif dataset is not None and dataset.origin is not None:  # a table read by its columns: say how
        say(f"read from {dataset.origin.location}: {dataset.origin.layout}", err=True)
    for problem in problems:
        echo(str(problem))
    errors = sum(p.severity == "error" for p in problems)
    warnings = len(problems) - errors
    echo(f"{errors} errors, {warnings} warnings", err=True)
    raise typer.Exit(EXIT_USAGE if has_errors(problems) else 0)


@own_commands.command()
def stats(path: Annotated[str, typer.Argument(help="Dataset folder, file, hf:OWNER/NAME or 'sample'.")] = "sample",
          as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
          columns: ColumnsOption = None, adapter: AdapterOption = None,
          explain: Annotated[bool, typer.Option(
              "--explain", help="Say how a table was read: which rows made which StoryTurn and turns, which column "
                                "gave each field, which columns were kept as metadata or not read.")] = False) -> None:
    """Dataset statistics: StoryTurns, questions and pictures (beside the paper's 591 / 1,976 / 844 for its
    release), per task and category, turns and questions per StoryTurn."""
    from dataclasses import asdict

    from rich.table import Table

    from commet.cli.consoles import console
    from commet.format import dataset_stats
    from commet.sources.hub_names import OFFICIAL

    dataset = _load(path, columns, adapter)
    figures = dataset_stats(dataset)
    if explain:
        from commet.sources.explain import explain_lines, explanation

        echo(json.dumps(explanation(dataset), indent=2, ensure_ascii=False) if as_json else
                   "\n".join(explain_lines(dataset)))
        return
    official = dataset.origin is not None and dataset.origin.official
    if as_json:
        echo(json.dumps({**asdict(figures), **({"read": {"from": dataset.origin.location,
                                                               "layout": dataset.origin.layout}}
                                                     if dataset.origin is not None else {})}, indent=2))
        return
    if dataset.origin is not None:
        console.print(f"read from {dataset.origin.location}: {dataset.origin.layout}", markup=False, highlight=False)
    summary = Table(title="Dataset" + (f" (the paper's release, {OFFICIAL.repo})" if official else ""))
    summary.add_column("figure")
    summary.add_column("value", justify="right")
    paper = {"StoryTurns": OFFICIAL.storyturns, "questions": OFFICIAL.questions, "pictures": OFFICIAL.pictures,
             "text-complete": OFFICIAL.text_complete, "image-dependent": OFFICIAL.image_dependent}
    if official:
        summary.add_column("the paper", justify="right")
    rows = [("StoryTurns", figures.storyturns), ("questions", figures.questions), ("pictures", figures.images),
            *([("pictures missing", figures.pictures_missing)] if figures.pictures_missing else []),
            ("text-complete", figures.text_complete), ("image-dependent", figures.image_dependent),
            ("turns per StoryTurn (mean)", f"{figures.turns_mean:.2f}"),
            ("turns per StoryTurn (max)", figures.turns_max),
            ("questions per StoryTurn (mean)", f"{figures.questions_mean:.2f}"),
            ("questions per StoryTurn (max)", figures.questions_max)]
    for label, value in rows:
        summary.add_row(label, str(value), *([f"{paper[label]:,}" if label in paper else ""] if official else []))
    console.print(summary)
    tasks = Table(title="StoryTurns per task")
    for column in ("task", "StoryTurns", "mean turns"):
        tasks.add_column(column)
    for task, count in figures.per_task.items():
        tasks.add_row(task, str(count), f"{figures.turns_per_task.get(task, 0):.2f}")
    console.print(tasks)
    categories = Table(title="StoryTurns per category")
    categories.add_column("category")
    categories.add_column("StoryTurns", justify="right")
    for category, count in figures.per_category.items():
        categories.add_row(category, str(count))
    console.print(categories)


@own_commands.command()
def convert(
    source: Annotated[str, typer.Argument(help="Input: dataset folder, canonical JSONL, pipe JSON/JSONL, HF folder, "
                                               "hf:OWNER/NAME.")],
    to: Annotated[ConvertTarget, typer.Option(help="Output format.")],
    out: Annotated[Path, typer.Option(help="Output file (.jsonl/.json) or folder.")],
    task: Annotated[str | None, typer.Option(help="Task id for input StoryTurns that carry none.")] = None,
    no_pictures: Annotated[bool, typer.Option("--no-pictures", help="Write the StoryTurns without their pictures.")
                           ] = False,
    columns: ColumnsOption = None,
    adapter: AdapterOption = None,
) -> None:
    """Convert between the pipe format, canonical JSONL / dataset folders and Hugging Face folders.

    Pictures go with the StoryTurns: into the folder's images/, into images/ beside an output file (where
    the loaders look), or embedded in a Hugging Face folder. A picture that cannot be written (missing from
    the source, or a different file of that name already there) stops the conversion with exit code 2,
    unless --no-pictures is given.
    """
    from commet.sources.convert import ConvertError
    from commet.sources.convert import convert as convert_dataset

    dataset = _load(source, columns, adapter)
    if task is not None:
        from commet.taxonomy import TASKS_BY_ID

        if task not in TASKS_BY_ID:
            from commet.models.base import did_you_mean

            fail(f"unknown task {task!r}{did_you_mean(task, TASKS_BY_ID)}")
        for st in dataset.storyturns:
            if st.task == "unknown":
                st.task = task
                st.category = TASKS_BY_ID[task].category_for(st.image_dependent)
                st.mental_states = st.mental_states or list(TASKS_BY_ID[task].mental_states)
    for warning in dataset.warnings:
        echo(str(warning), err=True)
    try:
        result = convert_dataset(dataset, to, out, pictures=not no_pictures)
    except (ConvertError, RuntimeError) as exc:
        fail(str(exc))
    if no_pictures:
        where = "without pictures (--no-pictures)"
    elif result.pictures_at is None:
        where = "(the StoryTurns name no pictures)"
    elif to is ConvertTarget.hf:
        where = f"with {result.pictures} pictures embedded"
    else:
        total = result.pictures + result.unchanged
        kept = (" (all already there)" if result.unchanged == total else
                f" ({result.unchanged} already there)" if result.unchanged else "")
        where = f"and its {total} pictures to {result.pictures_at}/{kept}"
    echo(f"wrote {result.storyturns} StoryTurns to {out} {where}")


@own_commands.command()
def schema() -> None:
    """Print the JSON Schema of one canonical StoryTurn line."""
    from commet.format import storyturn_json_schema

    echo(json.dumps(storyturn_json_schema(), indent=2))


EVAL_EPILOG = ("Exit codes: 0 every StoryTurn scored; 2 bad input, nothing run; 3 some calls failed for good "
               "(summary printed; the same command retries them); 4 stopped by --max-cost (raise it and run the "
               "same command to resume); 5 the disk is full (free space; the same command resumes); 130 interrupted by "
               "Ctrl-C, 143 by SIGTERM (the same command resumes).")


@own_commands.command("eval", epilog=EVAL_EPILOG)
@resumable
@cache_written_after
def eval_command(
    ctx: typer.Context,
    model: Annotated[str | None, typer.Option(
        help="Model spec, e.g. baseline:first-option, openai:gpt-4o, replay:FILE (required unless --finish).")] = None,
    dataset: Annotated[str | None, typer.Option(
        help="Dataset folder/file, hf:OWNER/NAME[@REVISION][:config=C][:split=S] or 'sample' (default: sample; "
             "with --finish, the run's).")] = None,
    judge: Annotated[str, typer.Option(help="Judge spec: rules, a model spec, or panel:A,B,C.")] = "rules",
    images: Annotated[ImagePolicy, typer.Option(
        help="Pictures: on (every turn that has one), off, or needed (only in image-dependent StoryTurns).")] =
    ImagePolicy.on,
    feedback: Annotated[FeedbackCondition, typer.Option(help="Feedback condition.")] = FeedbackCondition.original,
    concurrency: Annotated[int, typer.Option(min=1, help="StoryTurns in flight at once.")] = 8,
    workers: Annotated[int, typer.Option(min=1, help="Processes sharing the run (for very fast servers: "
                                                     "client CPU then scales with cores).")] = 1,
    db: Annotated[Path, typer.Option(help="SQLite results file.")] = Path("commet.sqlite"),
    run: Annotated[str | None, typer.Option(help=(
        "Run name. Default: model, dataset, images and feedback, then cfg= and a hash of everything that changes "
        "results (model options, judge, system prompt, temperature, max tokens, seed, dataset content), e.g. "
        "baseline:first-option@commet-sample:images=on,feedback=original,cfg=fe2e8cc2."))] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N StoryTurns.")] = None,
    system_prompt: Annotated[str | None, typer.Option(help="System prompt (default: the built-in one).")] = None,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.")] = 0.0,
    max_tokens: Annotated[int, typer.Option(help="Maximum tokens per reply.")] = 512,
    seed: Annotated[int | None, typer.Option(help="Sampling seed, where the provider supports it.")] = None,
    quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
    undecided_feedback: Annotated[UndecidedFeedback, typer.Option(
        help="When a turn's feedback depends on an answer the judge left undecided: stop the story there (stop; "
             "the report counts it in its range: wrong at the low end, right at the "
             "high end); show only its unconditional part (skip); or send the 'wrong' text (wrong).")
    ] = UndecidedFeedback.STOP,
    judge_images: Annotated[JudgeImages, typer.Option(
        help="Which StoryTurns' pictures an LLM judge sees (only pictures the model was shown): "
             "image-dependent ones (needed), all, or none.")] = JudgeImages.NEEDED,
    top_p: Annotated[float | None, typer.Option(
        help="Nucleus sampling: only the likeliest tokens whose probabilities add up to this (over 0, at most 1); "
             "default: the provider's.")] = None,
    image_max_side: Annotated[int, typer.Option(
        help="Largest side in pixels of a picture sent to the model (larger ones are scaled down).")] = 1024,
    image_format: Annotated[str, typer.Option(help="File format of the pictures sent to the model: png or jpeg.")
                            ] = "png",
    correctness_right: Annotated[str, typer.Option(
        help="The feedback after a right answer under --feedback correctness (the paper's words by default).")
    ] = "Your answer is right.",
    correctness_wrong: Annotated[str, typer.Option(
        help="The feedback after a wrong answer under --feedback correctness.")] = "Your answer is wrong.",
    max_cost: Annotated[float | None, typer.Option(
        min=0, help="Stop cleanly (resumable) before the run's estimated spend in USD would pass this.")] = None,
    force: ForceOption = False,
    shard: Annotated[str | None, typer.Option(
        help="INDEX/COUNT (INDEX from 0): run only this deterministic share of the StoryTurns, e.g. one task "
             "of a Slurm job array with its own --db; `commet merge` joins the shards' stores.")] = None,
    finish: Annotated[str | None, typer.Option(
        help="A run to finish: its StoryTurns stopped at (or holding) an undecided answer continue with --judge "
             "from that answer, asking their remaining questions (new calls); its decided verdicts and every "
             "earlier call come from the store. Model, dataset and settings are the run's; a new run "
             "(RUN~finish:JUDGE, or --run).")] = None,
    columns: ColumnsOption = None,
    adapter: AdapterOption = None,
) -> None:
    """Run a model over a dataset, judged online, into a resumable SQLite store; print the results.

    The dataset is validated first, as by `commet validate`; a dataset with errors is refused
    before anything is written.
    """
    check_run_name("--run", run)
    if finish is not None:
        from commet.cli.finishing import finish as finish_run
        from commet.cli.finishing import refuse_settings

        refuse_settings(ctx)
        finish_run(source=finish, model=model, dataset=dataset, judge=judge, db=db, run=run, concurrency=concurrency,
                   quiet=quiet, force=force)
        return
    if model is None:
        fail("commet eval needs --model (or --finish RUN)")
    with Program.starting_up():
        the_model, the_judge, settings, data, the_shard = _eval_inputs(
            ctx, model=model, dataset=dataset or "sample", judge=judge, db=db, force=force, columns=columns,
            adapter=adapter, max_cost=max_cost, workers=workers, shard=shard)
    from commet.cli.progress import live_progress
    from commet.cli.reporting import report_prepared_meanwhile
    from commet.engine import RunConflictError, RunSummary, SpendLimitError, evaluate_async

    stories = min(limit or len(data), len(data))

    import asyncio  # here, not at the top: `commet --version` and `--help` need no event loop

    async def evaluate_then_close() -> RunSummary:
        try:
            with report_prepared_meanwhile(asyncio.get_running_loop(), stories=stories):
                return await evaluate_async(
                    model if workers > 1 else the_model, data, judge=judge if workers > 1 else the_judge, db=db,
                    run=run, settings=settings, concurrency=concurrency, workers=workers, on_progress=on_progress,
                    max_cost=max_cost, shard=the_shard, on_failure=say_failure)
        finally:  # in the loop the clients were used in: their connections close cleanly
            await _close(the_model, the_judge)

    secrets = [getattr(m, "api_key", None) for m in (the_model, the_judge)]
    say_failure = failure_printer(secrets)

    with live_progress(enabled=not quiet, total=stories) as on_progress:
        try:
            summary = asyncio.run(evaluate_then_close())
        except (RunConflictError, SpendLimitError) as exc:
            fail(str(exc), lines=isinstance(exc, RunConflictError))  # what differs, as a table
    from commet.cli.reporting import print_report

    say(run_line(summary))
    say(_usage_line(db, summary.run.id, the_model))
    counts = print_report(db, [summary.run.name], brief=True, dataset=data)
    if summary.stopped_at_spend is not None:
        from commet.cli.consoles import console

        console.print(f"[bold]stopped before the spend limit[/bold]: estimated ${summary.stopped_at_spend:.4f} of "
                      f"${max_cost:.4f} spent; raise --max-cost and run the same command again to resume",
                      highlight=False)
        raise typer.Exit(EXIT_SPEND_LIMIT)
    if not summary.results.complete:
        print_failures(summary.results, counts[summary.run.name], secrets=secrets, stopped_by=summary.stopped_by)
        raise typer.Exit(EXIT_INCOMPLETE)


def _eval_inputs(ctx: typer.Context, *, model: str, dataset: str, judge: str, db: Path, force: bool,
                 columns: str | None, max_cost: float | None, workers: int, shard: str | None,
                 adapter: str | None = None) -> "tuple[Model, Judge, EvalSettings, Dataset, Shard | None]":
    """What ``commet eval`` runs: the model and judge, the settings from the options, the validated
    dataset and the shard; every refusal is one line and exit 2, before anything is written.

    (The options come as the command got them: ``ctx.params`` holds what click parsed, a path as
    text under older Typer releases; only the settings are read from it, by name.)"""
    from commet.engine import Shard
    from commet.judges.base import UnknownJudgeError
    from commet.judges.registry import create_judge
    from commet.models.base import ModelSpecError, SettingError
    from commet.models.registry import create_model
    from commet.sources.checked import check_ahead
    from commet.store.settings import EvalSettings, setting_names

    with check_ahead(dataset, columns=columns, adapter=adapter):  # a first load begun beside the models' making
        try:
            the_model = create_model(model)
            the_judge = create_judge(judge)
        except (ModelSpecError, UnknownJudgeError) as exc:
            fail(str(exc))
        try:  # every setting option, by its name (tests/test_settings.py keeps the options and the settings in step)
            settings = EvalSettings.from_options({name: ctx.params[name] for name in setting_names()})
        except SettingError as exc:
            fail_option(exc)
    data = load_or_fail(dataset, force, columns, adapter)
    if max_cost is not None and workers > 1:
        fail("--max-cost needs one process: drop --workers")
    try:
        the_shard = Shard.parse(shard) if shard is not None else None
    except ValueError as exc:
        fail(f"--shard: {exc}")
    if db.exists():  # a file that is not a results store is refused before the progress bar starts
        from commet.store import Store

        Store(db).close()
    return the_model, the_judge, settings, data, the_shard


def _usage_line(db: Path, run_id: int, model: "Model") -> str:
    """The run's tokens and estimated cost, the judge's beside the model's ("price unknown" when it is)."""
    from commet.models.base import Usage
    from commet.store import Store

    with Store(db) as store:
        tokens = store.usage(run_id)
        spend = store.spend(run_id)

    def price(cost: float | None) -> str:
        return f"estimated cost ${cost:.4f}" if cost is not None else "price unknown"

    model_cost = model.estimated_cost(Usage(tokens["input_tokens"], tokens["output_tokens"]))
    line = f"tokens: {tokens['input_tokens']} in, {tokens['output_tokens']} out, {price(model_cost)}"
    if spend.judge_input_tokens or spend.judge_output_tokens:
        line += (f"; judge: {spend.judge_input_tokens} in, {spend.judge_output_tokens} out, "
                 f"{price(spend.judge_cost)}")
    return line


async def _close(*things: "Model | Judge") -> None:
    for thing in things:
        await thing.aclose()


#: Command modules, one per concern: each has ``register(app)`` or is a sub-app ``app``. A module's
#: optional dependencies are imported inside its commands, so every command is always listed.
COMMAND_MODULES = ("reporting", "generate", "judging", "calibration", "review", "study", "audit", "importing",
                   "scale")
#: each command of the program and the module of COMMAND_MODULES that adds it (None: this one's own): a command
#: line that names a command imports that module alone (tests/test_cli_lazy.py holds this to the whole program)
COMMAND_HOMES: dict[str, str | None] = {
    "validate": None, "stats": None, "convert": None, "schema": None, "eval": None,
    "report": "reporting", "compare": "reporting", "sweep": "reporting", "runs": "reporting", "export": "reporting",
    "generate": "generate", "rejudge": "judging", "label": "judging", "judges": "judging",
    "calibrate": "calibration", "review": "review", "study": "study", "audit": "audit", "import": "importing",
    "merge": "scale",
}


def build_app(only: "Collection[str] | None" = None) -> typer.Typer:
    """The ``commet`` program: every command, or only those named in ``only`` (names of :data:`COMMAND_HOMES`).

    Why not always all: building the whole program imports every command module and makes click
    commands of all 28 commands, tens of milliseconds before ``commet eval`` could send its first
    request. A command line that names its command needs that one alone, ``commet --version`` none,
    and their help and errors are the same (tests/test_cli_lazy.py compares them, command by command).
    """
    import importlib
    import importlib.util

    # Plain click help (``rich_markup_mode=None``), here and in every sub-app: no ``<bool>`` type column on
    # flags, no boxes, errors as one line.
    program = typer.Typer(help="CoMMET: multi-turn, multimodal Theory of Mind evaluation.", no_args_is_help=True,
                          pretty_exceptions_enable=False, add_completion=False, rich_markup_mode=None,
                          context_settings={"max_content_width": 120})
    program.callback()(_options)
    program.registered_commands += [info for info in own_commands.registered_commands
                                    if only is None or _name(info) in only]
    homes = None if only is None else {COMMAND_HOMES[command] for command in only}
    for name in COMMAND_MODULES:
        if (homes is not None and name not in homes) or importlib.util.find_spec(f"commet.cli.{name}") is None:
            continue
        module = importlib.import_module(f"commet.cli.{name}")
        if hasattr(module, "register"):
            module.register(program)
        else:
            module.app.rich_markup_mode = None
            program.add_typer(module.app, name=name)
    if only is not None:  # what a module registers beside the commands asked for is left out
        program.registered_commands = [i for i in program.registered_commands if _name(i) in only]
        program.registered_groups = [g for g in program.registered_groups if g.name in only]
    refuse_bad_files(program)
    return program


def _name(info: "CommandInfo") -> str:
    """A command's name on the command line (its function's name, ``_`` as ``-``, unless it was given one)."""
    if info.name is not None or info.callback is None:
        return info.name or ""
    return typer.main.get_command_name(info.callback.__name__)


def program_for(args: list[str]) -> typer.Typer:
    """The program a command line needs: only the command it names first, no command for ``--version``, else
    the whole program (no command, ``--help``, a name that is no command, the shell asking for completions)."""
    if any(key.startswith("_") and key.endswith("_COMPLETE") for key in os.environ):
        return build_app()
    if args[:1] == ["--version"]:  # an eager option: printed before any command is looked at
        return build_app(())
    if args and args[0] in COMMAND_HOMES:
        return build_app((args[0],))
    return build_app()


if TYPE_CHECKING:
    from collections.abc import Collection

    from typer.models import CommandInfo

    #: the whole program (what tests and other Python code drive), built when first asked for
    app: typer.Typer


def __getattr__(name: str) -> typer.Typer:
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    built = globals()["app"] = build_app()
    return built


def main() -> None:
    """The ``commet`` program: what its command line needs of it (tests drive the whole ``app`` itself)."""
    Program.running = True
    Program.one_blas_thread()
    Program.stop_on_sigterm()
    Program.hold_collection()
    errors = click_errors()
    try:
        # not click's standalone mode: a usage error is then one line here, as every other refusal (click's own is
        # four: the usage, a hint, a blank line and the error)
        code = program_for(sys.argv[1:])(standalone_mode=False)
        sys.exit(code if isinstance(code, int) else 0)  # a command's typer.Exit(code), or 0 when it returned
    except errors.ClickException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # a group named alone (click >= 8.2): its help, as asked
            exc.show()
        else:
            echo(f"error: {usage_error_line(exc)}", err=True)
        sys.exit(exc.exit_code)
    except typer.Abort:  # EOF or Ctrl-C at a prompt, as click says it
        echo("Aborted!", err=True)
        sys.exit(1)
    except SystemExit as stop:
        # a command that is not resumable ends in click's "Aborted!" on a SIGTERM: its exit code says SIGTERM
        if Program.terminated and stop.code != EXIT_TERMINATED:
            sys.exit(EXIT_TERMINATED)
        raise
    except KeyboardInterrupt:  # before or after a command (starting up, closing): no traceback either
        sys.exit(EXIT_TERMINATED if Program.terminated else EXIT_INTERRUPTED)
    except (ImportError, MissingExtraError) as exc:  # an optional extra is missing: one line naming it
        message = str(exc) if isinstance(exc, MissingExtraError) else missing_extra_message(exc)
        if message is None:
            raise
        echo(f"error: {message}", err=True)
        sys.exit(EXIT_USAGE)
    finally:
        # The interpreter's last garbage collection at exit would walk every object still alive (a
        # run's dataset and results: about 60 ms for 600 StoryTurns) only to free memory the system
        # takes back anyway; stores and clients are closed by then. Frozen objects are left out of it.
        Program.freeze_objects()
