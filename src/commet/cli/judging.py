"""Judge commands: ``rejudge``, ``label`` (and ``label import``), ``judges``."""

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from commet.cli.common import (
    EXIT_INCOMPLETE,
    AdapterOption,
    ColumnsOption,
    check_run_name,
    echo,
    fail,
    print_failures,
    resumable,
    secrets_of,
)
from commet.cli.consoles import console
from commet.cli.reporting import find_run_or_fail, open_store, print_report
from commet.cli.run_dataset import DatasetNotFound, dataset_for
from commet.text import printable

if TYPE_CHECKING:
    from commet.store.records import TurnRecord
    from commet.store.sqlite import Store

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
    adapter: AdapterOption = None,
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
            data = dataset_for(source, dataset, columns, adapter)
            the_judge = create_judge(judge)
        except (FormatError, RuntimeError, UnknownJudgeError, DatasetNotFound) as exc:
            fail(str(exc))

        async def go() -> RejudgeReport:
            try:
                return await rejudge(store, source.name, the_judge, data, new_name=new_name, concurrency=concurrency)
            finally:
                await the_judge.aclose()

        import asyncio

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
    counts = print_report(db, [source.name, result.run.name], dataset=data)
    if result.results is not None and not result.results.complete:  # as eval: each kind of failure, exit 3
        print_failures(result.results, counts[result.run.name], secrets=secrets_of(the_judge))
        raise typer.Exit(EXIT_INCOMPLETE)


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
    """Label a run's answers, one key each: y right, n wrong, u unsure (asked again after the others), z undo, b back
    (the answer before, to change its label), s skip, q quit. Resumable: every label is saved as it is given."""
    if ctx.invoked_subcommand is not None:
        return
    if not run or not labeller:
        fail("commet label needs --run and --labeller (or: commet label import FILE.csv)")
    if disputed and calibration:
        fail("--disputed and --calibration choose different answers: give one (labels on disputed answers are not "
             "a random sample and never count in the calibration)")
    from commet.reports.agreement import collect_verdicts, disputed_items, original_run
    from commet.store.labelling import unsure_by
    from commet.store.labels import turns_to_label

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
        order: dict[tuple[str, int], int] | None = None
        if calibration:
            from commet.store.calibration import sample_answers

            order = {(row.story_id, row.turn): index for index, (_, row) in enumerate(sample_answers(store, record))}
            if not order:
                fail(f"run {record.name!r} has no calibration sample: draw one with `commet calibrate --db {db} --run "
                     f"{record.name} --sample N`")
            todo = sorted((r for r in todo if (r.story_id, r.turn) in order), key=lambda r: order[(r.story_id, r.turn)])
        unsure = unsure_by(store, record.name, labeller)
        todo.sort(key=lambda r: (r.story_id, r.turn) in unsure)  # answers marked unsure last (a stable sort)
        done = _label_loop(store, record.name, labeller, todo, history)
        left = [r for r in turns_to_label(store, record, labeller) if order is None or (r.story_id, r.turn) in order]
    what = "answers of the calibration sample of run" if calibration else "answers of run"
    console.print(f"stored {done} labels; {len(left)} {what} {escape(record.name)} are not labelled by "
                  f"{escape(labeller)} yet", highlight=False)


#: the keys of `commet label` and what each does
LABEL_KEYS = {"y": "right", "n": "wrong", "u": "unsure", "z": "undo", "b": "back", "s": "skip", "q": "quit"}


def _read_key() -> str:
    """One key: at a terminal without Enter, else (a pipe, a test) a line."""
    import sys

    from rich.prompt import Prompt

    hint = "  ".join(f"{key} {word}" for key, word in LABEL_KEYS.items())
    if sys.stdin.isatty():
        console.print(hint, end=": ", highlight=False)
        while True:
            try:
                key = typer.getchar().lower()
            except (KeyboardInterrupt, EOFError):
                key = "q"
            if key in LABEL_KEYS:
                console.print(LABEL_KEYS[key], highlight=False)
                return key
    return Prompt.ask(hint, choices=list(LABEL_KEYS), show_choices=False, console=console)


def _label_loop(store: "Store", run: str, labeller: str, todo: "list[TurnRecord]",
                history: "dict[str, list[TurnRecord]]") -> int:
    """Ask for a label of each answer of ``todo`` in turn; how many of them have a label now."""
    from commet.store.labelling import (
        give_label,
        labels_by,
        last_given,
        mark_unsure,
        remove,
        seconds_per_label,
        time_left,
    )

    queue, at = list(todo), 0
    given: list[TurnRecord] = []  # labelled in this session, the last last (what back steps through)
    rows = {(row.story_id, row.turn): row for rows in history.values() for row in rows}
    while at < len(queue):
        row = queue[at]
        label = labels_by(store, run, labeller).get((row.story_id, row.turn))
        left = time_left(seconds_per_label(store, run, labeller), len(queue) - at)
        console.rule(f"{at + 1} of {len(queue)}{' · ' + left if left else ''}  story {escape(row.story_id)}  turn "
                     f"{row.turn}")
        for earlier in history[row.story_id][: row.turn]:
            console.print(f"[dim]{escape(printable(earlier.prompt))}[/dim]")
            console.print(f"[dim]> {escape(printable(earlier.response or ''))}[/dim]")
        console.print(escape(printable(row.prompt)))
        response = row.response or ""  # turns_to_label gives answered turns only
        console.print(f"[bold]expected:[/bold] {escape(printable(' ; '.join(row.expected)))}")
        console.print(f"[bold]response:[/bold] {escape(printable(response))}")
        if label is not None:
            console.print(f"your label now: {'right' if label == 'correct' else 'wrong'} (y or n replaces it)")
        key = _read_key()
        if key == "q":
            break
        if key == "s":
            at += 1
        elif key == "u":
            mark_unsure(store, run=run, story_id=row.story_id, turn=row.turn, labeller=labeller)
            queue.append(row)  # again after the others
            at += 1
        elif key == "z":
            last = last_given(store, run, labeller)
            if last is None or last not in rows:
                console.print("nothing to undo", highlight=False)
                continue
            remove(store, run=run, story_id=last[0], turn=last[1], labeller=labeller)
            given = [g for g in given if g is not rows[last]]
            console.print(f"undone: turn {last[1]} of {escape(last[0])} is unlabelled again", highlight=False)
            queue.insert(at, rows[last])
        elif key == "b":
            before = [g for g in given if g is not row]
            if not before:
                console.print("nothing before this answer in this session", highlight=False)
                continue
            queue.insert(at, before[-1])
        else:
            give_label(store, run=run, story_id=row.story_id, turn=row.turn, response=response,
                       label="correct" if key == "y" else "incorrect", labeller=labeller)
            given = [g for g in given if g is not row] + [row]
            at += 1
    now_labelled = labels_by(store, run, labeller)
    return sum((row.story_id, row.turn) in now_labelled for row in todo)


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
    else:  # each table in the first layout that fits the terminal, runs by their short id under a legend
        from commet.reports.analyses import Section
        from commet.reports.cells import broken_at_punctuation
        from commet.reports.render import fitted_tables
        from commet.store import short_ids

        ids = short_ids(dict.fromkeys([*(run for run, _ in report.who_decided), *report.pooled]))
        console.print("runs:", markup=False, highlight=False)
        for name, short in ids.items():
            for number, part in enumerate(broken_at_punctuation(printable(name), console.width - len(short) - 4)):
                console.print(f"  {short if number == 0 else ' ' * len(short)}  {part}", markup=False,
                              highlight=False, no_wrap=True, overflow="fold")
        for number, (title, header, body) in enumerate(report_tables(report, lambda name: ids.get(name, name))):
            for renderable in fitted_tables(Section(f"judges-{number}", title, header, [list(r) for r in body]),
                                            console.width):
                console.print(renderable, markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    app.command("rejudge")(rejudge_command)
    app.add_typer(label_app, name="label")
    app.command("judges")(judges_command)
