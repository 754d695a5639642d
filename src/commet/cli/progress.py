"""The live progress bar of ``commet eval``: stories done, questions right, calls, errors."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from commet.engine.runner import Progress as EngineProgress


@contextmanager
def live_progress(*, enabled: bool, total: int) -> Iterator[Callable[[EngineProgress], None] | None]:
    if not enabled:
        yield None
        return
    columns = (TextColumn("stories"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[detail]}"),
               TimeElapsedColumn())
    with Progress(*columns, transient=False) as bar:
        task = bar.add_task("eval", total=total, detail="")

        def update(p: EngineProgress) -> None:
            bar.update(task, completed=p.stories_done,
                       detail=f"questions right {p.questions_right}/{p.questions} | calls {p.model_calls} "
                              f"(+{p.cached_calls} stored) | errors {p.errors}")

        yield update
