"""The live progress bar of ``commet eval``: stories done, questions right, calls, errors."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from commet.engine.runner import Progress as EngineProgress

#: terminals at least this wide get the long progress line; narrower ones the short one, so it fits 80 columns
WIDE = 110


def progress_detail(p: EngineProgress, *, narrow: bool) -> str:
    """The figures beside the bar: questions right, calls (and answers from the store), errors."""
    if narrow:
        return f"right {p.questions_right}/{p.questions} calls {p.model_calls}+{p.cached_calls} err {p.errors}"
    return (f"questions right {p.questions_right}/{p.questions} | calls {p.model_calls} (+{p.cached_calls} stored) "
            f"| errors {p.errors}")


@contextmanager
def live_progress(*, enabled: bool, total: int) -> Iterator[Callable[[EngineProgress], None] | None]:
    if not enabled:
        yield None
        return
    # imported here: a run with --quiet never shows a bar
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from commet.cli.consoles import console

    columns = (TextColumn("stories"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[detail]}"), TimeElapsedColumn())
    with Progress(*columns, transient=False, console=console) as bar:
        task = bar.add_task("eval", total=total, detail="")
        narrow = bar.console.width < WIDE

        def update(p: EngineProgress) -> None:
            bar.update(task, completed=p.stories_done, detail=progress_detail(p, narrow=narrow))

        yield update
