"""Reports keep a task's test items and its controls apart (procedural datasets mark controls in metadata)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from typer.testing import CliRunner

from commet.cli import app
from commet.generation.procedural import write_dataset


def test_report_shows_test_items_per_task_and_controls_apart_by_default(tmp_path: Path) -> None:
    folder = write_dataset(tmp_path / "ds", tasks=["false_belief_location", "sarcasm"], per_task=6, seed=3,
                           image_dependent_share=0.0)
    db = tmp_path / "r.sqlite"
    run = CliRunner().invoke(app, ["eval", "--dataset", str(folder), "--model", "baseline:first-option",
                                   "--db", str(db)])
    assert run.exit_code == 0, run.output
    # no --by: with the dataset given, the by-task table is there, test items and controls on rows of their own
    result = CliRunner().invoke(app, ["report", "--db", str(db), "--dataset", str(folder), "--format", "csv",
                                      "--table", "by-task"])
    assert result.exit_code == 0, result.output
    table = list(csv.reader(io.StringIO(result.stdout.strip())))
    header, rows = table[0], {r[table[0].index("task")]: r for r in table[1:]}
    assert set(rows) == {"false_belief_location", "false_belief_location (control)", "sarcasm",
                         "sarcasm (control)"}
    stories = header.index("Stories")
    for task in ("false_belief_location", "sarcasm"):  # each StoryTurn counted once: as a test item or a control
        assert int(rows[task][stories]) + int(rows[f"{task} (control)"][stories]) == 6
        assert int(rows[task][stories]) > 0 and int(rows[f"{task} (control)"][stories]) > 0
    # without the dataset the store knows only the task: one row per task
    plain = CliRunner().invoke(app, ["report", "--db", str(db), "--format", "csv", "--by", "task", "--table",
                                     "by-task"])
    assert plain.exit_code == 0, plain.output
    plain_rows = list(csv.reader(io.StringIO(plain.stdout.strip())))
    assert sorted(r[plain_rows[0].index("task")] for r in plain_rows[1:]) == ["false_belief_location", "sarcasm"]
