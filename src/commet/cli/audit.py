"""``commet audit DATASET``: can the answers be guessed without reading the stories?"""

import json
from typing import TYPE_CHECKING, Annotated

import typer

from commet.cli.common import ColumnsOption, _load, console

if TYPE_CHECKING:
    from commet.models.shortcut import Audit, TaskAudit

#: A task whose shortcut accuracy is this many points above chance is flagged.
FLAG_POINTS = 5.0


def register(app: typer.Typer) -> None:
    @app.command()
    def audit(path: Annotated[str, typer.Argument(help="Dataset folder, file or 'sample'.")],
              as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
              fail_above: Annotated[float | None, typer.Option(
                  "--fail-above", help="Exit 1 when any task is more than this many points above chance.")] = None,
              columns: ColumnsOption = None,
              ) -> None:
        """Train a story-blind shortcut learner on half of each task and print its accuracy beside chance.

        The learner never reads the story: it learns the answer's position among the options,
        the yes/no answer and the answer text per (task, turn) and per question wording, from
        one half of each task's StoryTurns, and answers the closed questions of the other half
        (and the other way round). Tasks more than 5 points above chance are marked with '!'.
        """
        import math

        from commet.cli.common import fail
        from commet.models.shortcut import audit_dataset

        if fail_above is not None and not math.isfinite(fail_above):  # nan would never fail: a gate that never shuts
            fail(f"--fail-above: must be a finite number of points, not {fail_above}")
        result = audit_dataset(list(_load(path, columns)), name=path)
        rows = [*result.tasks, result.overall]
        over = [t.task for t in result.tasks if t.turns and fail_above is not None and t.excess > fail_above]
        if as_json:
            typer.echo(json.dumps({"dataset": path, "train": result.train, "test": result.test, "tasks": [
                {"task": t.task, "closed_turns": t.turns, "correct": t.correct, "accuracy": round(100 * t.accuracy, 2),
                 "chance": round(100 * t.chance_rate, 2), "above_chance": round(t.excess, 2)} for t in rows]},
                indent=2))
        else:
            _print_table(path, result, rows)
        if over:
            typer.echo(f"above chance by more than {fail_above} points: {', '.join(over)}", err=True)
            raise typer.Exit(1)


def _print_table(path: str, result: "Audit", rows: "list[TaskAudit]") -> None:
    """The audit as a table, one task a line."""
    from rich.table import Table

    table = Table(title=f"Shortcut audit of {path}: two-fold over halves of {result.train} and {result.test} "
                        "StoryTurns (the learner never reads the story)")
    for column in ("task", "closed turns", "shortcut %", "chance %", "above chance", ""):
        table.add_column(column, justify="left" if column == "task" else "right")
    for t in rows:
        flag = "!" if t.turns and t.excess > FLAG_POINTS else ""
        table.add_row(t.task, str(t.turns), f"{100 * t.accuracy:.1f}", f"{100 * t.chance_rate:.1f}",
                      f"{t.excess:+.1f}", flag)
    console.print(table)
