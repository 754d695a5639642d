"""Judge commands: ``rejudge``, ``label`` (and ``label import``), ``judges``."""

import asyncio
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from commet.cli.common import (
    EXIT_INCOMPLETE,
    ColumnsOption,
    check_run_name,
    console,
    echo,
    fail,
    print_failures,
    resumable,
)
from commet.cli.reporting import find_run_or_fail, open_store, print_report
from commet.cli.run_dataset import DatasetNotFound, dataset_for
from commet.text import printable

if TYPE_CHECKING:
    from commet.store.records import TurnRecord

DB_OPTION = typer.Option(help="SQLite results file.")


class AgreementFormat(str, Enum):
    table = "table"
    markdown = "markdown"
    csv = "csv"


class SubsetChoice(str, Enum):
    all = "all"
    text_complete = "text-complete"
    image_dependent = "image-dependent"


@resumable
def rejudge_command(
    run: Annotated[str, typer.Option(
        help="Run whose stored responses are judged again: name, short id or unique prefix.")],
    judge: Annotated[str, typer.Option(help="Judge spec: rules, a model spec (rules + LLM cascade), "
                                            "llm-only:SPEC, or panel:A,B,C.")],
    new_name: Annotated[str | None, typer.Option("--as", help="Name of the new run (default: RUN~JUDGE).")] = None,
    dataset: Annotated[str | None, typer.Option(help="The run's dataset (default: where the run read it, else found "
                                                     "by name and hash).")] = None,
    columns: ColumnsOption = None,
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
        source = find_run_or_fail(store, run)
        try:
            data = dataset_for(source, dataset, columns)
            the_judge = create_judge(judge)
        except (FormatError, RuntimeError, UnknownJudgeError, DatasetNotFound) as exc:
            fail(str(exc))

        async def go() -> RejudgeReport:
            try:
                return await rejudge(store, source.name, the_judge, data, new_name=new_name, concurrency=concurrency)
            finally:
                await the_judge.aclose()

        try:
            result = asyncio.run(go())
        except RejudgeError as exc:
            fail(str(exc))
    decided = ", ".join(f"{name} {count}" for name, count in result.decided_by.items()) or "nothing"
    console.print(f"re-judged {result.turns} answers of run [bold]{escape(source.name)}[/bold] into run "
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
    run: Annotated[str | None, typer.Option(help="Run whose answers to label: name, short id or unique prefix.")] = None,
    labeller: Annotated[str | None, typer.Option(help="Your name, stored with every label.")] = None,
    disputed: Annotated[bool, typer.Option(help="Only answers on which the store's judges disagree.")] = False,
    calibration: Annotated[bool, typer.Option(
        help="The answers of the run's calibration sample (commet calibrate), in the sample's order.")] = False,
    db: Annotated[Path, DB_OPTION] = Path("commet.sqlite"),
) -> None:
    """Label a run's answers: y = correct, n = incorrect, s = skip, q = quit (resumable)."""
    if ctx.invoked_subcommand is not None:
        return
    if not run or not labeller:
        fail("commet label needs --run and --labeller (or: commet label import FILE.csv)")
    if disputed and calibration:
        fail("--disputed and --calibration choose different answers: give one (labels on disputed answers are not "
             "a random sample and never count in the calibration)")
    from rich.prompt import Prompt

    from commet.reports.agreement import collect_verdicts, disputed_items, original_run
    from commet.store.labels import set_label, turns_to_label

    with open_store(db) as store:
        record = find_run_or_fail(store, run)
        history: dict[str, list[TurnRecord]] = {}
        for row in store.turn_rows(record.id):
            history.setdefault(row.story_id, []).append(row)
        todo = turns_to_label(store, record, labeller)
        if disputed:
            keep = disputed_items(collect_verdicts(store))
            origin = original_run(store, record)
            todo = [r for r in todo if (origin, r.story_id, r.turn) in keep]
        if calibration:
            from commet.store.calibration import sample_answers

            order = {(row.story_id, row.turn): index for index, (_, row) in enumerate(sample_answers(store, record))}
            if not order:
                fail(f"run {record.name!r} has no calibration sample: draw one with `commet calibrate --db {db} --run "
                     f"{record.name} --sample N`")
            todo = sorted((r for r in todo if (r.story_id, r.turn) in order), key=lambda r: order[(r.story_id, r.turn)])
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
            set_label(store, run=record.name, story_id=row.story_id, turn=row.turn, response=response,
                      label="correct" if key == "y" else "incorrect", labeller=labeller)
            done += 1
        left = len(turns_to_label(store, record, labeller))
        if calibration:
            left = sum((r.story_id, r.turn) in order for r in turns_to_label(store, record, labeller))
    what = "answers of the calibration sample of run" if calibration else "answers of run"
    console.print(f"stored {done} labels; {left} {what} {escape(record.name)} are not labelled by "
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


class ProbeChoice(str, Enum):
    position = "position"
    length = "length"


def judges_command(
    run: Annotated[list[str] | None, typer.Option(
        help="Run: name, short id or unique prefix; repeat for several (default: all).")] = None,
    subset: Annotated[SubsetChoice, typer.Option(help="Only text-complete or image-dependent stories.")] =
    SubsetChoice.all,
    fmt: Annotated[AgreementFormat, typer.Option("--format", help="Output format.")] = AgreementFormat.table,
    db: Annotated[Path, DB_OPTION] = Path("commet.sqlite"),
    probe: Annotated[ProbeChoice | None, typer.Option(
        help="A bias probe on one --run: re-ask a seeded sample of its answers with the options (and a branch "
             "point's expected answers) in reverse order (position), or with the reply padded by neutral text "
             "(length), and print each judge's flip rate with a 95% interval (CSV: the flip rates only).")] = None,
    judge: Annotated[list[str] | None, typer.Option(
        help="With --probe: a judge spec to probe; repeat for several (default: rules, for a run judged by it).")]
    = None,
    sample: Annotated[int, typer.Option(min=1, help="With --probe: answers to re-ask.")] = 100,
    seed: Annotated[int, typer.Option(help="With --probe: seed of the sample.")] = 0,
    concurrency: Annotated[int, typer.Option(min=1, help="With --probe: judge calls in flight at once.")] = 16,
    dataset: Annotated[str | None, typer.Option(
        help="With --probe: the run's dataset (default: found by name and hash).")] = None,
) -> None:
    """Judge agreement (paper Tables 7-10): pairwise counts, percentages, Cohen's kappa, and agreement with people;
    with --probe, the judges' position or length bias on one run's answers."""

    from commet.reports import to_csv, to_markdown
    from commet.reports.agreement import AGREEMENT_HEADER, agreement_report, report_tables

    if probe is not None:
        from commet.cli.probing import probe_command

        if subset is not SubsetChoice.all:
            fail("--subset chooses the answers of the agreement tables; a --probe samples all of one run's answers")
        probe_command(db=db, runs=run or [], probe=probe.value, judges=judge or [], sample=sample, seed=seed,
                      concurrency=concurrency, dataset=dataset, fmt=fmt.value)
        return
    if judge:
        fail("--judge chooses the judges of a --probe; agreement compares the judges of the runs given")
    with open_store(db, read_only=True) as store:
        try:
            report = agreement_report(store, run, None if subset is SubsetChoice.all else subset.value)
        except KeyError as exc:
            fail(str(exc.args[0]))
    tables = report_tables(report)
    if fmt is AgreementFormat.csv:
        rows = [[title, *row] for title, header, body in tables if header == AGREEMENT_HEADER for row in body]
        echo(to_csv(["Table", *AGREEMENT_HEADER], rows), nl=False)
    elif fmt is AgreementFormat.markdown:
        echo("\n".join(f"### {title}\n\n{to_markdown(header, body)}" for title, header, body in tables), nl=False)
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
