"""``commet audit DATASET``: can the answers be guessed without reasoning about minds?"""

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from commet.cli.common import AdapterOption, ColumnsOption, _load, echo
from commet.cli.consoles import console

if TYPE_CHECKING:
    from commet.format.dataset import Dataset
    from commet.generation.audit import Audit

#: A cell this many points above chance is marked with '!' in the table: per task, and over all tasks (the
#: gates the project's audit test applies).
FLAG_TASK_POINTS, FLAG_OVERALL_POINTS = 15.0, 10.0


def register(app: typer.Typer) -> None:
    @app.command()
    def audit(path: Annotated[str, typer.Argument(help="Dataset folder, file or 'sample'.")],
              against: Annotated[str | None, typer.Option(
                  help="A second dataset: train on each, score on the other (default: the halves of DATASET).")
              ] = None,
              as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
              fail_above: Annotated[float | None, typer.Option(
                  "--fail-above", help="Exit 1 when any predictor is more than this many points above chance on "
                                       "a task.")] = None,
              fail_above_overall: Annotated[float | None, typer.Option(
                  "--fail-above-overall", help="Exit 1 when any predictor is more than this many points above chance "
                                               "over all tasks.")] = None,
              rules: Annotated[bool, typer.Option("--rules", help="Also print the rule each predictor learned per "
                                                               "task and turn.")] = False,
              columns: ColumnsOption = None,
              adapter: AdapterOption = None,
              ) -> None:
        """Train predictors that do not reason about minds on one part of the data, score them on the other.

        blind: never reads the story (answer position, yes/no, answer text per task, turn and
        question wording). Shallow readers read only the surface: order (the option mentioned
        first, last, most, in the last sentence...), cue word (one word present switches between
        two such rules), anchor (the option next to one word), context (only the feedback and the
        questions), picture (sizes and left-to-right order in the scene), mention (where the asked
        person is mentioned among the others), people picture (where people stand in the pictures),
        feedback (the words of the feedback so far), statistics (sentences, words in tens, pronouns), census
        (the story's exact length, the people it names, the picture's people, things and colours). Each rule is chosen per
        task and turn. 'earlier answers' copies an earlier expected answer, and 'phrases' picks the option whose
        exact words the story says most or least often (shown, never gated: in a story that lists things that counts
        how many a description fits, the item's own fact).
        Cells more than 15 points above chance on a task, or 10 over all tasks, are marked with '!'. Turns keyed to the
        respondent's own pick (the booklet's desire and belief items) are shown apart.
        """
        import math

        from commet.cli.common import fail
        from commet.generation.audit import audit_dataset

        for name, value in (("--fail-above", fail_above), ("--fail-above-overall", fail_above_overall)):
            if value is not None and not math.isfinite(value):  # nan would never fail: a gate that never shuts
                fail(f"{name}: must be a finite number of points, not {value}")
        dataset = _load(path, columns, adapter)
        other = _load(against, columns, adapter) if against is not None else None
        scenes = {**_scenes(dataset), **(_scenes(other) if other is not None else {})}
        result = audit_dataset(list(dataset), name=path, other=list(other) if other is not None else None,
                               scenes=scenes or None)
        over = result.over(fail_above if fail_above is not None else math.inf,
                           fail_above_overall if fail_above_overall is not None else math.inf)
        if as_json:
            echo(json.dumps(_as_json(result, against, rules), indent=2))
        else:
            _print_table(result, against)
            if rules:
                _print_rules(result)
        if over:
            lines = ", ".join(f"{x.task} ({x.family} {x.excess:+.1f})" for x in over)
            echo(f"above the allowed points over chance: {lines}", err=True)
            raise typer.Exit(1)


def _scenes(dataset: "Dataset") -> dict[str, dict[str, object]]:
    """The scene files a dataset's StoryTurns name (``meta["scenes"]``: image id -> file in images/)."""
    folder = dataset.images_dir
    found: dict[str, dict[str, object]] = {}
    if folder is None:
        return found
    for storyturn in dataset:
        named = storyturn.meta.get("scenes")
        if not isinstance(named, dict):
            continue
        for image_id, file_name in named.items():
            path = folder / str(file_name)
            if Path(str(file_name)).name != str(file_name) or not path.is_file():  # only plain files in images/
                continue
            try:
                scene = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(scene, dict):  # a scene is an object; anything else is no scene to read
                found[str(image_id)] = scene
    return found


def _rows(result: "Audit", designed: bool = False) -> list[str]:
    from commet.generation.audit import OVERALL

    tasks = result.tasks(designed)
    return [*tasks, OVERALL] if tasks and not designed else tasks


def _as_json(result: "Audit", against: str | None, with_rules: bool) -> dict[str, object]:
    from commet.generation.audit import ALL_FAMILIES, BLIND

    def block(designed: bool) -> list[dict[str, object]]:
        out: list[dict[str, object]] = []
        for task in _rows(result, designed):
            base = result.line(task, BLIND, designed)
            out.append({"task": task, "closed_turns": base.turns, "chance": round(100 * base.chance_rate, 2),
                        "predictors": {f: {"accuracy": round(100 * result.line(task, f, designed).accuracy, 2),
                                           "above_chance": round(result.line(task, f, designed).excess, 2)}
                                       for f in ALL_FAMILIES}})
        return out

    report: dict[str, object] = {"dataset": result.dataset, "against": against, "train": result.train, "test": result.test,
              "predictors": list(ALL_FAMILIES), "tasks": block(False), "designed": block(True)}
    if with_rules:
        report["rules"] = [{"task": task, "turn": turn, "predictor": family, "rule": rule}
                           for (task, turn, family), rule in sorted(result.rules.items())]
    return report


def _print_table(result: "Audit", against: str | None) -> None:
    """The audit as a table: one task a line, one predictor a column, chance beside; as several tables of as many
    predictors as fit the terminal, never with cells cut."""
    from commet.generation.audit import ALL_FAMILIES, BLIND, OVERALL
    from commet.reports.analyses import Cell, Section
    from commet.reports.render import column_parts

    parts = (f"trained on {result.dataset} and {against}, each scored on the other" if against else
             f"two-fold over halves of {result.train} and {result.test} StoryTurns")
    for designed in (False, True):
        rows = _rows(result, designed)
        if not rows:
            continue
        title = (f"Shortcut audit of {result.dataset}: {parts}; accuracy % of predictors that do not reason about "
                 "minds" if not designed else
                 "Turns keyed to the respondent's own pick (designed that way: 'the same as' / 'the other one than "
                 "your pick'; not gated)")
        body: list[list[Cell]] = []
        for task in rows:
            base = result.line(task, BLIND, designed)
            cells = []
            for family in ALL_FAMILIES:
                line = result.line(task, family, designed)
                limit = FLAG_OVERALL_POINTS if task == OVERALL else FLAG_TASK_POINTS
                flag = "!" if line.turns and line.excess > limit and not designed else ""
                cells.append(f"{100 * line.accuracy:.1f}{flag}")
            body.append([task, str(base.turns), f"{100 * base.chance_rate:.1f}", *cells])
        note = ("! more than 15 points above chance on a task, or 10 over all tasks; 'earlier answers' and "
                "'phrases' are shown, never gated") if not designed else ""
        section = Section(f"audit-{int(designed)}", title, ["task", "closed turns", "chance %", *ALL_FAMILIES], body,
                          note)
        for renderable in column_parts(section, console.width, keep=3):  # task, turns and chance on every part
            console.print(renderable, highlight=False)


def _print_rules(result: "Audit") -> None:
    from rich.table import Table

    table = Table(title="What each predictor learned on the first part (per task and turn)")
    for column in ("task", "turn", "predictor", "rule"):
        table.add_column(column)
    for (task, turn, family), rule in sorted(result.rules.items()):
        table.add_row(task, str(turn), family, rule)
    console.print(table)
