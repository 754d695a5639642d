"""``commet generate``: make new StoryTurn datasets."""

from pathlib import Path

import typer

from commet.cli.common import echo

app = typer.Typer(help="Generate StoryTurn datasets (procedural: answers and pictures from a world model).",
                  no_args_is_help=True)


@app.callback()
def generate() -> None:
    """Generate StoryTurn datasets."""


@app.command()
def procedural(
    out: Path = typer.Option(..., "--out", "-o", help="Output dataset folder."),
    tasks: str = typer.Option("all", "--tasks", help="'all' or comma-separated task ids."),
    per_task: int = typer.Option(3, "--per-task", min=1, help="StoryTurns per task."),
    seed: int = typer.Option(0, "--seed", help="Random seed; the same seed gives byte-identical output."),
    image_dependent_share: float = typer.Option(
        0.3, "--image-dependent-share", min=0.0, max=1.0,
        help="Share of StoryTurns made image-dependent, for tasks that have that variant."),
) -> None:
    """Generate a dataset from the procedural world model, with pictures and their scene files."""
    from commet.format.validate import has_errors
    from commet.generation.procedural import write_dataset
    from commet.sources.checked import validate_path

    task_list: str | list[str] = "all" if tasks.strip() == "all" else [t.strip() for t in tasks.split(",") if t.strip()]
    if not task_list:  # an empty dataset is refused by every command that reads one
        raise typer.BadParameter(f"no task ids in {tasks!r}; give 'all' or comma-separated task ids",
                                 param_hint="--tasks")
    try:
        folder = write_dataset(out, tasks=task_list, per_task=per_task, seed=seed,
                               image_dependent_share=image_dependent_share)
    except KeyError as exc:
        raise typer.BadParameter(str(exc.args[0]), param_hint="--tasks") from None
    except RuntimeError as exc:  # more StoryTurns asked for than the generator can make distinct
        raise typer.BadParameter(str(exc), param_hint="--per-task") from None
    problems = validate_path(folder)
    errors = [p for p in problems if p.severity == "error"]
    for problem in errors:
        echo(str(problem), err=True)
    with (folder / "storyturns.jsonl").open(encoding="utf-8") as written:
        count = sum(1 for _ in written)
    echo(f"wrote {folder} ({count} StoryTurns, {len(errors)} validation errors)")
    if has_errors(problems):
        raise typer.Exit(1)


def _add_llm_pipeline() -> None:
    """The paper's LLM pipeline lives in its own module; it joins this group as ``generate llm``."""
    from commet.cli.generate_llm import register_into

    register_into(app)


_add_llm_pipeline()
