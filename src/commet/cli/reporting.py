"""Result commands: ``report``, ``compare``, ``sweep``, ``runs``, ``export``."""

import importlib
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from commet.cli.common import (
    EXIT_INCOMPLETE,
    EXIT_SPEND_LIMIT,
    AdapterOption,
    ColumnsOption,
    ForceOption,
    _load,
    echo,
    fail,
    fail_problems,
    load_or_fail,
    resumable,
    say,
)

if TYPE_CHECKING:
    import asyncio

    from commet.engine.outcome import RunCounts
    from commet.format.dataset import Dataset
    from commet.reports.differences import CorrectedComparison
    from commet.store import RunRecord, Store

#: what the end-of-run report imports (NumPy the largest part): about 0.15 s that need not follow the run
REPORT_MODULES = ("commet.reports", "commet.reports.render", "commet.reports.composition", "rich.table",
                  "rich.text")
#: seconds into a run before the report is prepared: the first requests are built and sent by then
REPORT_PREPARATION_AFTER_S = 0.3
#: the interpreter's thread switch interval meanwhile, so the run's event loop waits at most this long
#: for the GIL when an answer arrives (the default is 5 ms)
PREPARATION_SWITCH_INTERVAL_S = 0.0005


def _prepare_report(stories: int) -> None:
    interval = sys.getswitchinterval()
    sys.setswitchinterval(PREPARATION_SWITCH_INTERVAL_S)
    try:
        for name in REPORT_MODULES:
            with suppress(Exception):  # the report imports it again and says what is wrong
                importlib.import_module(name)
        with suppress(Exception):
            from commet.reports.stats import prepare_draws

            prepare_draws(stories)
    finally:
        sys.setswitchinterval(interval)


@contextmanager
def report_prepared_meanwhile(loop: "asyncio.AbstractEventLoop", stories: int = 0) -> Iterator[None]:
    """Inside: once the run is under way, a thread imports the report's modules and makes the
    bootstrap's draws for a run of ``stories`` StoryTurns.

    A run spends most of its time waiting for answers, and the end-of-run report's imports
    and draws would otherwise come after the last one (bench/bench_openai_server.py). The
    thread starts ``REPORT_PREPARATION_AFTER_S`` into the run, when the loop is mostly idle, and
    is waited for at the end, so the report never races it.
    """
    thread = threading.Thread(target=_prepare_report, args=(stories,), name="commet-report-preparation", daemon=True)
    timer = loop.call_later(REPORT_PREPARATION_AFTER_S, thread.start)
    try:
        yield
    finally:
        timer.cancel()
        if thread.ident is not None:
            thread.join()


def open_store(db: Path, *, read_only: bool = False) -> "Store":
    """The store of a command; ``read_only`` for the commands that only read it (they then work on read-only
    media and while another process writes, without waiting for its lock)."""
    from commet.store import Store

    if not db.exists():
        fail(f"no results store at {db}")
    if db.is_file() and not _has_tables(db, read_only):  # an empty file: opening it would write the schema
        fail(f"no results store at {db} (the file holds no tables)")
    return Store(db, read_only=read_only)


def find_run_or_fail(store: "Store", wanted: str) -> "RunRecord":
    """The run ``wanted`` names (name, short id or unique prefix), else one line with candidates and exit 2."""
    from commet.store import RunLookupError

    try:
        return store.find_run(wanted)
    except RunLookupError as exc:
        fail(str(exc))


def _has_tables(db: Path, read_only: bool) -> bool:
    """Whether ``db`` has any table; True for what is not SQLite at all (or cannot be opened), which
    :class:`Store` refuses in words."""
    import sqlite3
    from contextlib import closing

    from commet.store.opening import connect_read_only
    from commet.store.sqlite import BUSY_TIMEOUT_S, table_names

    try:
        connection = connect_read_only(db, busy_timeout_s=BUSY_TIMEOUT_S) if read_only else sqlite3.connect(db)
        with closing(connection) as con:
            return bool(table_names(con))
    except sqlite3.Error:
        return True


class FeedbackCasesChoice(str, Enum):
    """``--feedback-cases`` (:class:`commet.reports.feedback.FeedbackCases`, not imported before it is needed)."""

    correctness = "correctness"
    any = "any"


class ReportFormat(str, Enum):
    table = "table"
    markdown = "markdown"
    csv = "csv"
    latex = "latex"
    html = "html"


def sweep_report_format(fmt: str | None, out: Path | None) -> str:
    """The format of a sweep's report, checked before any cell runs: a known format that agrees with
    ``out``'s suffix, and a CSV report (one file per table) only into a folder."""
    from commet.reports.render import FORMATS_BY_SUFFIX, ReportTargetError, output_format

    formats = sorted(set(FORMATS_BY_SUFFIX.values()))
    if fmt is not None and fmt not in formats:
        raise ReportTargetError(f"'format' must be one of {', '.join(formats)}, not {fmt!r}")
    chosen = output_format(fmt, out)
    if chosen == "csv" and out is not None and out.suffix.lower() == ".csv" and not out.is_dir():
        raise ReportTargetError(f"'out' = {str(out)!r}: a CSV report is one file per table; give a folder "
                                "(with format = \"csv\")")
    return chosen


def print_report(db: Path, names: list[str] | None, fmt: str = "table", *, out: Path | None = None,
                 dataset: "str | Dataset | None" = None, seed: int | None = None, resamples: int | None = None,
                 brief: bool = False, tables: list[str] | None = None, pool: bool = False,
                 by: list[str] | None = None, feedback_cases: str = "correctness",
                 columns: str | None = None, adapter: str | None = None) -> dict[str, "RunCounts"]:
    """Build the report for ``names`` (all runs when empty) and print it, or write it to ``out``; the counts of
    each run reported, by name (what a command prints after its report reads them there: one count).
    ``dataset`` (a path, or the dataset a command has loaded) marks the comprehension control turns, counted
    apart from the test questions, and adds the by-task table where it has controls.

    ``brief`` prints one run's figures as a two-column table (what ``commet eval`` shows at the end
    of a run; it fits 80 columns). ``tables`` keeps only the sections with those keys. CSV is one
    file per table: ``out`` is then a folder, or one table is chosen.
    """
    from commet.cli.consoles import console
    from commet.reports import Bootstrap, build_report, render_report, select_runs
    from commet.reports.composition import brief_tables, compose, is_csv_folder, write_csv_folder
    from commet.reports.feedback import FeedbackCases
    from commet.reports.grouping import check_dataset, control_turns
    from commet.reports.render import OneTablePerFile, to_rich_tables

    boot = Bootstrap(**{k: v for k, v in (("seed", seed), ("resamples", resamples)) if v is not None})
    loaded = _load(dataset, columns, adapter) if isinstance(dataset, str) else dataset
    controls = control_turns(loaded) if loaded is not None else None
    with open_store(db, read_only=True) as store:
        try:
            runs = select_runs(store, names)
        except KeyError as exc:
            fail(str(exc.args[0]))
        if not runs:
            fail(f"nothing to report: no runs in {db}")
        report = build_report(store, runs, bootstrap=boot, pool=pool, brief=brief,
                              feedback_cases=FeedbackCases(feedback_cases), controls=controls)
    counts = {data.run.name: data.counts for data in report.runs}
    if loaded is not None and controls:  # the control turns are the dataset's: only for runs made on it
        try:
            check_dataset(report.runs, loaded)
        except ValueError as exc:
            fail(str(exc))
    try:
        compose(report, by=by, dataset=loaded, tables=tables)
    except ValueError as exc:  # a --by key or dataset that cannot be used, a --table the report has not
        fail(str(exc))
    if fmt == "table" and out is None:
        for renderable in brief_tables(report) if brief else to_rich_tables(report, console.width):
            console.print(renderable, highlight=False)
        if brief:
            say(f"commet report --db {db} shows the paper's tables for this run.", style="dim")
        return counts
    if out is not None and is_csv_folder(fmt, out):
        try:
            write_csv_folder(report, out)
        except ValueError as exc:
            fail(str(exc))
        echo(f"wrote {len(report.sections)} CSV tables on {len(report.runs)} run(s) to {out}/", err=True)
        return counts
    try:
        text = render_report(report, fmt, dataset=loaded)
    except OneTablePerFile as exc:
        fail(f"{exc}: give --out DIR (one file per table) or choose one with --table "
             f"({', '.join(s.key for s in report.sections)})")
    if fmt == "csv":  # one table: the notices go to stderr, the file stays one clean table
        for line in report.notices:
            echo(str(line), err=True)
    if out is None:
        echo(text, nl=False)
        return counts
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    echo(f"wrote {fmt} report on {len(report.runs)} run(s) to {out}", err=True)
    return counts


def report(
    db: Annotated[Path, typer.Option(help="SQLite results file.")] = Path("commet.sqlite"),
    run: Annotated[list[str] | None, typer.Option(
        help="Run: name, short id or unique prefix; repeat for several (default: all).")] = None,
    fmt: Annotated[ReportFormat | None, typer.Option(
        "--format", help="Output format (default: from --out's suffix, else table).")] = None,
    out: Annotated[Path | None, typer.Option(
        help="Write to this file instead of the terminal (.md .html .tex .txt; for CSV a folder: one file per "
             "table).")] = None,
    table: Annotated[list[str] | None, typer.Option(
        help="Only this table (its key, e.g. text-complete, feedback); repeat for several.")] = None,
    pool: Annotated[bool, typer.Option(
        help="Pool runs of the same model, feedback condition, dataset and judge in Tables 3 and 14 and the "
             "wrong answers, never two runs with the same answers (default: one row per run).")] = False,
    dataset: Annotated[str | None, typer.Option(
        help="Dataset folder, hf:OWNER/NAME or 'sample': embeds the pictures in HTML transcripts.")] = None,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    resamples: Annotated[int, typer.Option(min=100, help="Bootstrap resamples.")] = 2000,
    by: Annotated[list[str] | None, typer.Option(
        help="Also group accuracy by this per-turn or StoryTurn metadata key or field (e.g. question_type); "
             "repeatable; metadata keys need --dataset.")] = None,
    feedback_cases: Annotated[FeedbackCasesChoice, typer.Option(
        help="Which wrong answers are cases in Tables 3 and 14: those followed by correctness-based feedback "
             "(the paper's section 4.3), or by any feedback text, unconditional lines included.")] =
    FeedbackCasesChoice.correctness,
    columns: ColumnsOption = None,
    adapter: AdapterOption = None,
) -> None:
    """The paper's tables for stored runs with 95% bootstrap CIs, one row per run: Tables 1 and 2 (story
    accuracy per category), a summary, Tables 3 and 14 (feedback), one table per source (Tables 11 and 12),
    accuracy by turn, common wrong answers; HTML adds plots and transcripts."""
    from commet.reports.render import ReportTargetError, output_format

    try:
        chosen = output_format(fmt.value if fmt is not None else None, out)
    except ReportTargetError as exc:
        fail(str(exc))
    print_report(db, run, chosen, out=out, dataset=dataset, seed=seed, resamples=resamples, tables=table,
                 pool=pool, by=by, feedback_cases=feedback_cases.value, columns=columns, adapter=adapter)


def compare(
    run_a: Annotated[str, typer.Argument(help="First run: name, short id or unique prefix.")],
    run_b: Annotated[str, typer.Argument(help="Second run: name, short id or unique prefix.")],
    db: Annotated[Path, typer.Option(help="SQLite results file.")] = Path("commet.sqlite"),
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    resamples: Annotated[int, typer.Option(min=100, help="Bootstrap resamples.")] = 2000,
    dataset: Annotated[str | None, typer.Option(
        help="The runs' dataset: its comprehension control turns are kept out of the corrected question "
             "accuracy.")] = None,
) -> None:
    """Paired comparison of two runs on the same StoryTurns (runs made on different StoryTurns are refused):
    paired bootstrap CI of the story-accuracy difference and McNemar's exact test on the judged figures; with a
    paired calibration sample labelled in both runs (`commet calibrate --run A --pair B --sample N`), the
    differences of story and question accuracy corrected for the judges' errors, overall and per category
    (docs/calibration.md)."""
    from rich.table import Table

    from commet.cli.consoles import console
    from commet.reports import Bootstrap, compare_runs
    from commet.reports.differences import corrected_comparison
    from commet.reports.grouping import check_dataset, control_turns
    from commet.reports.stats import fixed

    loaded = _load(dataset) if dataset is not None else None
    with open_store(db, read_only=True) as store:
        first, second = (find_run_or_fail(store, name) for name in (run_a, run_b))
        try:
            result = compare_runs(store, first, second, bootstrap=Bootstrap(resamples=resamples, seed=seed))
            if loaded is not None:
                check_dataset([result.a, result.b], loaded)
        except ValueError as exc:
            fail(str(exc))
        controls = control_turns(loaded) if loaded is not None else None
        corrected = corrected_comparison(store, first, second, controls=controls)
    p = result.paired
    table = Table(title=f"Paired comparison on {p.items} StoryTurns", show_header=True)
    for column in ("", "A right", "A wrong"):
        table.add_column(column, justify="right")
    table.add_row("B right", str(p.both_right), str(p.b_only))
    table.add_row("B wrong", str(p.a_only), str(p.both_wrong))
    for letter, data, accuracy in (("A", result.a, p.accuracy_a), ("B", result.b, p.accuracy_b)):
        console.print(f"{letter} = {data.run.name} (images {data.images}, feedback {data.feedback}): story accuracy "
                      f"{accuracy:.2f}% on the {p.items} compared", highlight=False, markup=False)
    console.print(table)
    kind = "exact CI (the pairs all differ alike)" if p.exact else "paired bootstrap CI"
    console.print(f"difference A - B: {fixed(p.difference, 2, sign=True)} points, 95% {kind} "
                  f"[{fixed(p.low, 2, sign=True)}, {fixed(p.high, 2, sign=True)}]; McNemar exact p = {p.p_value:.4g} "
                  f"(discordant: {p.a_only} A only, {p.b_only} B only)", highlight=False, markup=False)
    if result.only_a or result.only_b:
        console.print(f"left out: {result.only_a} StoryTurns scored only in A, {result.only_b} only in B",
                      highlight=False, markup=False)
    if result.undecided:
        console.print(f"left out: {result.undecided} StoryTurns whose result hinges on undecided answers in A or B "
                      f"(neither counted right nor wrong); re-judge them with an LLM judge (commet rejudge) to "
                      "compare on all", highlight=False, markup=False)
    verdict = ("a real difference at the 5% level" if p.significant
               else "no evidence of a real difference at the 5% level")
    console.print(f"verdict: {verdict} (as judged)", highlight=False, markup=False)
    _print_corrected(corrected)


def _print_corrected(corrected: "CorrectedComparison") -> None:
    """The judge-corrected differences, or one line saying what they need."""
    from commet.cli.consoles import console
    from commet.reports.differences import differences_section
    from commet.reports.render import fitted_tables

    if not corrected.rows:
        console.print(f"judge-corrected: {corrected.problem}", highlight=False, markup=False, soft_wrap=True)
        return
    console.print(f"judge-corrected: {corrected.labelled} of the paired sample's {corrected.drawn} StoryTurns "
                  f"labelled in both runs (of {corrected.units} both finished)", highlight=False, markup=False)
    section = differences_section([corrected])
    for renderable in fitted_tables(section, console.width):
        console.print(renderable, markup=False, highlight=False)


@resumable
def sweep(
    config: Annotated[Path, typer.Argument(help="Sweep config (TOML): see the example above and docs/cli.md.")],
    quiet: Annotated[bool, typer.Option(help="No per-run lines.")] = False,
    force: ForceOption = False,
) -> None:
    """Run a grid of evaluations (models x images x feedback x datasets) into one store, resumable like eval,
    then write the report. Exit codes as eval's. Every dataset is validated first, as by `commet validate`;
    one with errors stops the sweep before any run is written.

    \b
    The config (TOML; paths relative to it; only `models` is required). Every setting of `commet eval` is a
    key, by the same name (max_tokens for --max-tokens) and checked the same way; images and feedback take
    a list (the grid), every other setting one value for every run:
      models = ["baseline:first-option", "openai:gpt-4o-mini"]   # model specs
      datasets = ["sample"]                # folders, files, hf:OWNER/NAME or "sample"
      columns = "story=text,question=q"    # --columns of every dataset, or { "hf:me/tom" = "..." } for one
      adapters = { "hf:me/tom" = "adapt.py:storyturn" }   # --adapter, the same way (file relative to the config)
      images = ["on", "off"]               # default ["on"]; also "needed"
      feedback = ["original", "correctness", "none"]   # default ["original"]
      judge = "rules"                      # judge spec
      db = "sweep.sqlite"                  # results file (default commet.sqlite)
      out = "report.html"                  # report file; format from the suffix
      format = "markdown"                  # table, markdown, csv, latex or html
      run_prefix = "exp1/"                 # prefix of every run name
      concurrency = 8                      # StoryTurns in flight per endpoint
      max_cost = 5.0                       # USD per run, as eval --max-cost (exit 4 when one stops)
      limit = 10                           # only the first N StoryTurns
      undecided_feedback = "stop"          # stop, skip or wrong
      judge_images = "needed"              # needed, on or off
      system_prompt = "..."
      temperature = 0.0
      max_tokens = 512
      seed = 1
      top_p = 0.9
      image_max_side = 1024
      image_format = "png"                 # png or jpeg
      correctness_right = "Your answer is right."   # --feedback correctness texts
      correctness_wrong = "Your answer is wrong."
    """
    from commet.engine import RunConflictError, SpendLimitError
    from commet.engine.sweep import SweepConfigError, load_config, run_sweep
    from commet.format.problems import FormatError
    from commet.judges.base import UnknownJudgeError
    from commet.models.base import ModelSpecError
    from commet.reports.render import ReportTargetError

    try:
        settings = load_config(config)
        report_format = sweep_report_format(settings.format, settings.out)
    except SweepConfigError as exc:
        fail(str(exc))
    except ReportTargetError as exc:
        fail(f"{config}: {exc}")

    def announce(index: int, total: int, name: str) -> None:
        if not quiet:
            echo(f"[{index + 1}/{total}] {name}", err=True)

    datasets = {d: load_or_fail(d, force, settings.columns.get(d), settings.adapters.get(d)) for d in settings.datasets}
    import asyncio

    try:
        names = asyncio.run(run_sweep(settings, announce, datasets=datasets))
    except FormatError as exc:
        fail_problems(exc)
    except (RunConflictError, SpendLimitError, ModelSpecError, UnknownJudgeError, RuntimeError) as exc:
        fail(str(exc), lines=isinstance(exc, RunConflictError))  # a conflict: what differs, as a table
    one = datasets[settings.datasets[0]] if len(settings.datasets) == 1 else None  # (as the runs read it)
    print_report(settings.db, names, report_format, out=settings.out, dataset=one)
    from commet.store import RunStatus

    with open_store(settings.db, read_only=True) as store:
        unfinished = [(name, record.status) for name in names
                      if (record := store.get_run(name)) is not None and record.status is not RunStatus.done]
    if unfinished:
        for name, status in unfinished:
            say(f"{status}: {name}", err=True)
        if any(status is RunStatus.stopped_spend_limit for _, status in unfinished):  # as eval: exit 4 first
            say(f"{len(unfinished)} of {len(names)} runs not complete, stopped before max_cost; raise "
                              f"it and run the same command again to resume (exit code {EXIT_SPEND_LIMIT})", err=True)
            raise typer.Exit(EXIT_SPEND_LIMIT)
        say(f"{len(unfinished)} of {len(names)} runs not complete; `commet eval` on one shows why; "
                          f"run the same command again to retry (exit code {EXIT_INCOMPLETE})", err=True)
        raise typer.Exit(EXIT_INCOMPLETE)


def runs(db: Annotated[Path, typer.Option(help="SQLite results file.")] = Path("commet.sqlite"),
         wide: Annotated[bool, typer.Option("--wide", help="Also the model, judge, dataset and start time.")] = False,
         ) -> None:
    """List the runs in a store, each with its short id (accepted by every --run, as is a unique prefix)."""
    from rich.table import Table
    from rich.text import Text

    from commet.cli.consoles import console
    from commet.reports.cells import broken_at_punctuation
    from commet.store import short_ids
    from commet.text import printable

    with open_store(db, read_only=True) as store:
        records = store.runs()
    if not records:
        console.print(f"no runs in {db}", markup=False, highlight=False)
        return
    ids = short_ids(r.name for r in records)
    header = ["id", "status", "stories", "finished"] + (["model", "judge", "dataset", "started"] if wide else [])
    rows = [[ids[r.name], str(r.status), str(r.story_count), _minute(r.finished_at)]
            + ([r.model, r.judge, r.dataset_name, _minute(r.started_at)] if wide else []) for r in records]
    widths = [max(len(header[i]), *(len(row[i]) for row in rows)) for i in range(len(header))]
    longest = max(len(r.name) for r in records)
    table = Table(title=f"Runs in {db}", title_justify="left", box=None, pad_edge=False, header_style="bold")
    for column in header:
        table.add_column(column, no_wrap=column != "name", justify="right" if column == "stories" else "left")
    if sum(widths) + 2 * len(widths) + longest <= console.width:  # one line per run
        table.add_column("name", no_wrap=True)
        for record, row in zip(records, rows, strict=True):
            table.add_row(*row, Text(printable(record.name)))
        console.print(table)
        return
    # narrow terminal: each run's figures, then its name (and with --wide its model, judge, dataset and start) on
    # lines of their own, broken only after the name's punctuation, never inside a hash
    base = header[:4]

    def line(cells: list[str]) -> str:
        return "  ".join(cell.rjust(w) if h == "stories" else cell.ljust(w)
                         for h, cell, w in zip(base, cells, widths, strict=False)).rstrip()

    console.print(Text(f"Runs in {db}", style="italic"), Text(line(header), style="bold"), sep="\n")
    for record, row in zip(records, rows, strict=True):
        console.print(Text(line(row)), no_wrap=True, overflow="ellipsis")
        for part in broken_at_punctuation(printable(record.name), console.width - 2):
            console.print(Text(f"  {part}"), no_wrap=True, overflow="fold")
        if wide:  # "key value" pairs, never split, as many a line as fit
            lines = [""]
            for pair in (f"{h} {printable(cell)}" for h, cell in zip(header[4:], row[4:], strict=True)):
                if lines[-1] and len(lines[-1]) + 2 + len(pair) > console.width - 2:
                    lines.append("")
                lines[-1] += f"  {pair}" if lines[-1] else pair
            for text in lines:
                console.print(Text(f"  {text}"), no_wrap=True, overflow="fold")


def _minute(stamp: str | None) -> str:
    """A stored ISO time to the minute ("2026-12-04 15:58"), or "-"."""
    return "-" if not stamp else stamp[:16].replace("T", " ")


def export(
    run: Annotated[str, typer.Option(help="Run: name, short id (`commet runs`) or unique prefix.")],
    out: Annotated[Path, typer.Option(help="Output JSONL file.")],
    db: Annotated[Path, typer.Option(help="SQLite results file.")] = Path("commet.sqlite"),
) -> None:
    """Write one JSON line per turn: prompt as sent, images, response, expected, verdict."""
    from commet.reports.export import export_run

    with open_store(db, read_only=True) as store:
        count = export_run(store, find_run_or_fail(store, run), out)
    echo(f"wrote {count} turns to {out}")


def register(app: typer.Typer) -> None:
    app.command()(report)
    app.command()(compare)
    app.command()(sweep)
    app.command()(runs)
    app.command()(export)
