"""Judge commands: ``rejudge``, ``label`` (and ``label import``), ``judges``."""

import asyncio
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from commet.cli.common import EXIT_INCOMPLETE, check_run_name, console, fail, print_failures, resumable
from commet.cli.reporting import open_store, print_report
from commet.text import printable

if TYPE_CHECKING:
    from commet.format.dataset import Dataset
    from commet.store.records import TurnRecord
    from commet.store.sqlite import RunRecord

DB_OPTION = typer.Option(help="SQLite results file.")


class AgreementFormat(str, Enum):
    table = "table"
    markdown = "markdown"
    csv = "csv"


class SubsetChoice(str, Enum):
    all = "all"
    text_complete = "text-complete"
    image_dependent = "image-dependent"


def _dataset_for(source: "RunRecord", dataset: str | None) -> "Dataset":
    """The dataset a run used: ``--dataset``, else the run's dataset name or the sample, checked by hash."""
    from commet.format import load_dataset
    from commet.format.problems import FormatError

    if dataset:
        return load_dataset(dataset)
    for candidate in (source.dataset_name, "sample"):
        try:
            data = load_dataset(candidate)
        except (FormatError, RuntimeError, OSError):
            continue
        if data.hash_matches(source.dataset_hash):
            return data
    fail(f"cannot find the dataset run {source.name!r} used ({source.dataset_name!r}); pass it with --dataset")


@resumable
def rejudge_command(
    run: Annotated[str, typer.Option(help="Run whose stored responses are judged again.")],
    judge: Annotated[str, typer.Option(help="Judge spec: rules, a model spec (rules + LLM cascade), "
                                            "llm-only:SPEC, or panel:A,B,C.")],
    new_name: Annotated[str | None, typer.Option("--as", help="Name of the new run (default: RUN~JUDGE).")] = None,
    dataset: Annotated[str | None, typer.Option(help="The run's dataset (default: found by name and hash).")] = None,
    db: Annotated[Path, DB_OPTION] = Path("commet.sqlite"),
    concurrency: Annotated[int, typer.Option(min=1, help="Judge calls in flight at once (as in eval).")] = 16,
) -> None:
    """Score a run's stored responses again with another judge, into a new run; the model is not called."""
    from rich.table import Table

    from commet.engine.rejudge import RejudgeError, RejudgeReport, rejudge
    from commet.format.problems import FormatError
    from commet.judges.base import UnknownJudgeError
    from commet.judges.registry import create_judge

    check_run_name("--as", new_name)
    with open_store(db) as store:
        source = store.get_run(run)
        if source is None:
            fail(f"no run named {run!r} in {db}")
        try:
            data = _dataset_for(source, dataset)
            the_judge = create_judge(judge)
        except (FormatError, RuntimeError, UnknownJudgeError) as exc:
            fail(str(exc))

        async def go() -> RejudgeReport:
            try:
                return await rejudge(store, run, the_judge, data, new_name=new_name, concurrency=concurrency)
            finally:
                await the_judge.aclose()

        try:
            result = asyncio.run(go())
        except RejudgeError as exc:
            fail(str(exc))
    decided = ", ".join(f"{name} {count}" for name, count in result.decided_by.items()) or "nothing"
    console.print(f"re-judged {result.turns} answers of run [bold]{escape(run)}[/bold] into run "
                  f"[bold]{escape(result.run.name)}[/bold] with {escape(result.run.judge)}", highlight=False)
    console.print(f"decided by: {escape(decided)}; {result.judge_calls} verdicts computed now, "
                  f"{result.cached} from the store; {len(result.changed)} answers scored differently", highlight=False)
    with open_store(db, read_only=True) as store:
        spend = store.spend(result.run.id)
    undecided = sum(failure.turns for failure in result.results.failures if failure.what == "judge") \
        if result.results is not None else 0
    if undecided:
        console.print(f"left undecided by judge calls that failed: {undecided}", highlight=False)
    cost = "price unknown" if spend.judge_cost is None else f"estimated cost ${spend.judge_cost:.4f}"
    console.print(f"judge tokens: {spend.judge_input_tokens} in, {spend.judge_output_tokens} out, {cost}",
                  highlight=False)
    if result.feedback_changes:
        table = Table(title=f"{len(result.feedback_changes)} turns where the new verdicts would have chosen "
                            "other feedback (the feedback sent stays as it was)")
        for column in ("story", "turn", "feedback sent", "would have sent"):
            table.add_column(column, overflow="fold")
        for change in result.feedback_changes:
            table.add_row(*(escape(printable(text)) for text in (change.story_id, str(change.turn), change.sent,
                                                                 change.would_send)))
        console.print(table)
    else:
        console.print("the new verdicts would have chosen the same feedback everywhere")
    print_report(db, [source.name, result.run.name])
    if result.results is not None and not result.results.complete:  # as eval: each kind of failure, exit 3
        print_failures(result.results, secrets=_secrets(the_judge))
        raise typer.Exit(EXIT_INCOMPLETE)


def _secrets(judge: object) -> list[str | None]:
    """The API keys of a judge's models (an LLM judge's, a cascade's, a panel's members'), kept out of messages."""
    keys = [getattr(judge, "api_key", None)]
    for inner in (getattr(judge, "model", None), getattr(judge, "fallback", None), *getattr(judge, "members", ())):
        if inner is not None:
            keys += _secrets(inner)
    return keys


label_app = typer.Typer(help="Human labels: label a run's answers in the terminal, or import a CSV.",
                        no_args_is_help=False)


@label_app.callback(invoke_without_command=True)
def label_command(
    ctx: typer.Context,
    run: Annotated[str | None, typer.Option(help="Run whose answers to label.")] = None,
    labeller: Annotated[str | None, typer.Option(help="Your name, stored with every label.")] = None,
    disputed: Annotated[bool, typer.Option(help="Only answers on which the store's judges disagree.")] = False,
    db: Annotated[Path, DB_OPTION] = Path("commet.sqlite"),
) -> None:
    """Label a run's answers: y = correct, n = incorrect, s = skip, q = quit (resumable)."""
    if ctx.invoked_subcommand is not None:
        return
    if not run or not labeller:
        fail("commet label needs --run and --labeller (or: commet label import FILE.csv)")
    from rich.prompt import Prompt

    from commet.reports.agreement import collect_verdicts, disputed_items, original_run
    from commet.store.labels import set_label, turns_to_label

    with open_store(db) as store:
        record = store.get_run(run)
        if record is None:
            fail(f"no run named {run!r} in {db}")
        history: dict[str, list[TurnRecord]] = {}
        for row in store.turn_rows(record.id):
            history.setdefault(row.story_id, []).append(row)
        todo = turns_to_label(store, record, labeller)
        if disputed:
            keep = disputed_items(collect_verdicts(store))
            origin = original_run(store, record)
            todo = [r for r in todo if (origin, r.story_id, r.turn) in keep]
        done = 0
        for position, row in enumerate(todo, start=1):
            console.rule(f"{position}/{len(todo)}  story {escape(row.story_id)}  turn {row.turn}")
            for earlier in history[row.story_id][: row.turn]:
                console.print(f"[dim]{escape(printable(earlier.prompt))}[/dim]")
                console.print(f"[dim]> {escape(printable(earlier.response or ''))}[/dim]")
            console.print(escape(printable(row.prompt)))
            response = row.response or ""  # turns_to_label gives answered turns only
            console.print(f"[bold]expected:[/bold] {escape(printable(' ; '.join(row.expected)))}")
            console.print(f"[bold]response:[/bold] {escape(printable(response))}")
            key = Prompt.ask("correct? y/n, s = skip, q = quit", choices=["y", "n", "s", "q"], console=console)
            if key == "q":
                break
            if key == "s":
                continue
            set_label(store, run=run, story_id=row.story_id, turn=row.turn, response=response,
                      label="correct" if key == "y" else "incorrect", labeller=labeller)
            done += 1
        left = len(turns_to_label(store, record, labeller))
    console.print(f"stored {done} labels; {left} answers of run {escape(run)} are not labelled by "
                  f"{escape(labeller)} yet", highlight=False)


@label_app.command("import")
def label_import(
    file: Annotated[Path, typer.Argument(help="CSV with columns run, story_id, turn, label, labeller.")],
    db: Annotated[Path, DB_OPTION] = Path("commet.sqlite"),
) -> None:
    """Import human labels (correct / incorrect) from a CSV file."""
    from commet.store.labels import LabelError, import_csv

    with open_store(db) as store:
        try:
            count = import_csv(store, file)
        except LabelError as exc:
            fail(str(exc))
    console.print(f"imported {count} labels from {escape(str(file))}", highlight=False)


def judges_command(
    run: Annotated[list[str] | None, typer.Option(help="Run name; repeat for several (default: all).")] = None,
    subset: Annotated[SubsetChoice, typer.Option(help="Only text-complete or image-dependent stories.")] =
    SubsetChoice.all,
    fmt: Annotated[AgreementFormat, typer.Option("--format", help="Output format.")] = AgreementFormat.table,
    db: Annotated[Path, DB_OPTION] = Path("commet.sqlite"),
) -> None:
    """Judge agreement (paper Tables 7-10): pairwise counts, percentages, Cohen's kappa, and agreement with people."""

    from commet.reports import to_csv, to_markdown
    from commet.reports.agreement import AGREEMENT_HEADER, agreement_report, report_tables

    with open_store(db, read_only=True) as store:
        try:
            report = agreement_report(store, run, None if subset is SubsetChoice.all else subset.value)
        except KeyError as exc:
            fail(str(exc.args[0]))
    tables = report_tables(report)
    if fmt is AgreementFormat.csv:
        rows = [[title, *row] for title, header, body in tables if header == AGREEMENT_HEADER for row in body]
        typer.echo(to_csv(["Table", *AGREEMENT_HEADER], rows), nl=False)
    elif fmt is AgreementFormat.markdown:
        typer.echo("\n".join(f"### {title}\n\n{to_markdown(header, body)}" for title, header, body in tables), nl=False)
    else:  # each table in the first layout that fits the terminal
        from commet.reports.analyses import Section
        from commet.reports.render import fitted_tables

        for number, (title, header, body) in enumerate(tables):
            for renderable in fitted_tables(Section(f"judges-{number}", title, header, [list(r) for r in body]),
                                            console.width):
                console.print(renderable, markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    app.command("rejudge")(rejudge_command)
    app.add_typer(label_app, name="label")
    app.command("judges")(judges_command)
