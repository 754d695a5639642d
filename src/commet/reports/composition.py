"""A report as asked: the ``--by`` tables added, the tables chosen, and the two forms the renderers do not
make: the brief table ``commet eval`` prints after a run, and a CSV report as a folder of files.

``commet report`` and every command that ends with a report (eval, sweep, rejudge, finish) are
a thin layer over these: they build the report (:func:`~commet.reports.analyses.build_report`),
compose it here, and print or write it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from commet.conditions import FeedbackCondition
from commet.format.dataset import Dataset
from commet.reports.analyses import Report
from commet.reports.cells import cell_text
from commet.reports.grouping import by_key_section, check_dataset, has_controls
from commet.reports.metrics import CONTROL_QUESTIONS_COLUMN
from commet.reports.render import ReportTargetError, csv_files, notice_texts
from commet.reports.sections import SUBSET_KEYS, SectionKey
from commet.reports.stats import Range

if TYPE_CHECKING:
    from rich.console import RenderableType

#: the per-category figures the brief table shows after the summary's: the paper's Tables 1 and 2
BRIEF_TABLES = dict(zip(SUBSET_KEYS, ("Table 1, text-complete", "Table 2, image-dependent"), strict=True))


def grouping_keys(by: list[str] | None, dataset: Dataset | None) -> list[str]:
    """The ``--by`` keys, with ``task`` added when the dataset has controls (its test items per task and its
    controls apart: never pooled silently)."""
    keys = list(by or [])
    if dataset is not None and "task" not in keys and has_controls(dataset):
        keys.append("task")
    return keys


def compose(report: Report, *, by: list[str] | None = None, dataset: Dataset | None = None,
            tables: list[str] | None = None) -> Report:
    """``report`` with one table per ``--by`` key appended (:mod:`commet.reports.grouping`; ValueError for a
    key or dataset that cannot be used), then only the ``tables`` asked for (:class:`ReportTargetError` for a
    key the report has no table of, naming those it has)."""
    keys = grouping_keys(by, dataset)
    if keys:
        if dataset is not None:
            check_dataset(report.runs, dataset)
        report.sections.extend(by_key_section(report.runs, key, report.bootstrap, dataset) for key in keys)
    if tables:
        have = [s.key for s in report.sections]
        unknown = [t for t in tables if t not in have]
        if unknown:
            why = missing_table_reason(unknown[0], report)
            raise ReportTargetError(f"no table {unknown[0]!r} in this report{f': {why}' if why else ''} "
                                    f"(tables: {', '.join(have)})")
        report.sections = [s for s in report.sections if s.key in tables]
    return report


#: what the runs of a report must hold for a table to have rows (a key not here is made per value: source, --by)
TABLE_NEEDS = {
    SectionKey.TEXT_COMPLETE: "it needs runs with scored text-complete StoryTurns",
    SectionKey.IMAGE_DEPENDENT: "it needs runs with scored image-dependent StoryTurns",
    SectionKey.SUMMARY: "it needs runs",
    SectionKey.FEEDBACK: "it needs runs with feedback (--feedback original or correctness) where a wrong answer was "
                         "followed by it",
    SectionKey.TURNS: "it needs runs with scored StoryTurns",
    SectionKey.WRONG_ANSWERS: "it needs runs with answers judged wrong",
    SectionKey.CALIBRATION: "it needs runs with a calibration sample (commet calibrate --run RUN --sample N)",
    SectionKey.JUDGE_CALIBRATION: "it needs runs with a calibration sample (commet calibrate --run RUN --sample N)",
    SectionKey.CALIBRATION_SAMPLE: "it is commet calibrate's table (commet calibrate --run RUN)",
}


def missing_table_reason(key: str, report: Report) -> str:
    """Why the report has no table ``key``: which runs it needs and, for Table 14, what each model has."""
    if key == SectionKey.FEEDBACK_CONDITIONS:
        conditions = (FeedbackCondition.original, FeedbackCondition.correctness)
        have: dict[str, list[str]] = {}
        for data in report.runs:
            have.setdefault(data.run.model, []).append(data.feedback or "-")
        here = "; ".join(f"{model} has {', '.join(sorted(set(feedback)))}" for model, feedback in have.items())
        return (f"it needs a model run with --feedback {conditions[0]} and again with --feedback {conditions[1]} "
                f"(on the same dataset) among the runs reported (here: {here})")
    known = {str(k): v for k, v in TABLE_NEEDS.items()}
    return known.get(key, "")


def is_csv_folder(fmt: str, out: Path | None) -> bool:
    """Whether a report in ``fmt`` to ``out`` is a folder of CSV files (CSV to a folder or a name without
    ``.csv``); else CSV is one table, printed or in one file."""
    return fmt == "csv" and out is not None and (out.suffix.lower() != ".csv" or out.is_dir())


def write_csv_folder(report: Report, out: Path) -> None:
    """One CSV file per table (``KEY.csv``) and ``notices.txt`` into the folder ``out`` (made if missing)."""
    if out.exists() and not out.is_dir():
        raise ReportTargetError(f"{out} is a file; CSV reports are written as one file per table into a folder")
    out.mkdir(parents=True, exist_ok=True)
    for name, text in csv_files(report).items():
        (out / name).write_text(text, encoding="utf-8")


def brief_tables(report: Report) -> Iterator[RenderableType]:
    """The notices, then one small table per run: figure, value (the summary's figures, then Table 1's and
    Table 2's); it fits 80 columns."""
    from rich.table import Table
    from rich.text import Text

    yield from notice_texts(report.notices)
    by_key = {s.key: s for s in report.sections}
    for data in report.runs:
        ranged = any(isinstance(c, Range) for s in report.sections for r in s.rows if r[0] == data.run.name
                     for c in r)
        table = Table(title=Text(f"{data.run.model}: images {data.images}, feedback {data.feedback}"),
                      caption="a–b: undecided answers counted wrong – counted right" if ranged else None)
        table.add_column("figure")
        table.add_column("value (%, 95% CI)", justify="right")
        summary = by_key.get(SectionKey.SUMMARY)
        if summary is not None:
            row = next(r for r in summary.rows if r[0] == data.run.name)
            for index in range(4, len(summary.header)):
                text = cell_text(row[index], summary)
                if text != "-" or summary.header[index] != CONTROL_QUESTIONS_COLUMN:  # (none where the dataset has none)
                    table.add_row(summary.header[index], Text(str(text)))
        for key, label in BRIEF_TABLES.items():
            section = by_key.get(key)
            found = next((r for r in section.rows if r[0] == data.run.name), None) if section else None
            if section is None or found is None:
                continue
            first = section.header.index("Stories")
            table.add_row(f"{label}: stories", Text(str(found[first])))
            for name, cell in zip(section.header[first + 1:], found[first + 1:], strict=True):
                if cell_text(cell, section) != "-":
                    table.add_row(Text(f"  {name}"), Text(cell_text(cell, section)))
        yield table
