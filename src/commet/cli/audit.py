"""``commet audit DATASET``: can the answers be guessed without reading the stories?"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from commet.cli import _load, console

#: A task whose shortcut accuracy is this many points above chance is flagged.
FLAG_POINTS = 5.0


def register(app: typer.Typer) -> None:
    @app.command()
    def audit(path: Annotated[str, typer.Argument(help="Dataset folder, file or 'sample'.")],
              as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False) -> None:
        """Train a story-blind shortcut learner on half of each task and print its accuracy beside chance.

        The learner never reads the story: it learns the answer's position among the options,
        the yes/no answer and the answer text per (task, turn) and per question wording, from
        the first half of each task's StoryTurns, and answers the closed questions of the
        second half. Tasks more than 5 points above chance are marked with '!'.
        """
        from rich.table import Table

        from commet.models.shortcut import audit_dataset

        result = audit_dataset(list(_load(path)), name=path)
        rows = [*result.tasks, result.overall]
        if as_json:
            typer.echo(json.dumps({"dataset": path, "train": result.train, "test": result.test, "tasks": [
                {"task": t.task, "closed_turns": t.turns, "correct": t.correct, "accuracy": round(100 * t.accuracy, 2),
                 "chance": round(100 * t.chance_rate, 2), "above_chance": round(t.excess, 2)} for t in rows]},
                indent=2))
            return
        table = Table(title=f"Shortcut audit of {path}: trained on {result.train} StoryTurns, "
                            f"scored on {result.test} (never reads the story)")
        for column in ("task", "closed turns", "shortcut %", "chance %", "above chance", ""):
            table.add_column(column, justify="left" if column == "task" else "right")
        for t in rows:
            flag = "!" if t.turns and t.excess > FLAG_POINTS else ""
            table.add_row(t.task, str(t.turns), f"{100 * t.accuracy:.1f}", f"{100 * t.chance_rate:.1f}",
                          f"{t.excess:+.1f}", flag)
        console.print(table)
