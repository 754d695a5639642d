"""CoMMET: multi-turn, multimodal Theory of Mind evaluation (StoryTurn format, engine, judges, reports).

The Python API in four names::

    import commet
    data = commet.load_dataset("sample")
    summary = commet.evaluate("baseline:first-option", data, db="commet.sqlite")   # or: await commet.evaluate_async(...)
    print(commet.report("commet.sqlite", [summary.run.name]))

``evaluate`` also works where an event loop is already running (Jupyter): it then runs the
evaluation in a worker thread and waits for it. The engine, judges and reports are imported on
first use, so ``import commet`` stays light.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from commet.errors import CommetError
from commet.lazy import lazy_getattr
from commet.version import __version__

if TYPE_CHECKING:
    from commet.engine import EvalSettings, RunSummary, evaluate, evaluate_async
    from commet.format import Dataset, Feedback, FormatError, StoryTurn, Turn, validate_dataset
    from commet.sources import load_dataset


_ENGINE_NAMES = ("EvalSettings", "RunSummary", "evaluate", "evaluate_async")
_FORMAT_NAMES = ("Dataset", "Feedback", "FormatError", "StoryTurn", "Turn", "validate_dataset")
_SOURCES_NAMES = ("load_dataset",)


#: each lazily imported name and the package that gives it
_HOMES = {name: home for names, home in ((_ENGINE_NAMES, "commet.engine"), (_FORMAT_NAMES, "commet.format"),
                                         (_SOURCES_NAMES, "commet.sources")) for name in names}
#: the engine's, the format's and the sources' names, imported when first asked for: the ``commet`` program
#: imports this package first, and ``commet --version`` needs none (the engine imports this package's version)
__getattr__ = lazy_getattr(__name__, _HOMES, globals())


def report(db: str | Path = "commet.sqlite", runs: list[str] | None = None, *, format: str = "markdown",  # noqa: A002
           dataset: str | Path | Dataset | None = None, seed: int = 0, resamples: int = 2000) -> str:
    """The paper's tables for ``runs`` (default: every run in ``db``) as text: markdown, csv, latex or html.

    ``dataset`` embeds the pictures in HTML transcripts and marks the comprehension control turns (counted
    apart from the test questions). Raises ``FileNotFoundError`` when ``db`` does not exist, ``KeyError`` for
    a run name it does not hold, and ``ValueError`` for a dataset with control turns a run was not made on.
    """
    from commet.reports import Bootstrap, build_report, render_report, select_runs
    from commet.reports.grouping import check_dataset, control_turns
    from commet.sources import load_dataset
    from commet.store import Store

    if not Path(db).is_file():
        raise FileNotFoundError(f"no results store at {db}")
    data = load_dataset(dataset) if isinstance(dataset, (str, Path)) else dataset
    controls = control_turns(data) if data is not None else None
    with Store(db) as store:
        built = build_report(store, select_runs(store, runs), bootstrap=Bootstrap(seed=seed, resamples=resamples),
                             controls=controls)
    if data is not None and controls:
        check_dataset(built.runs, data)
    return render_report(built, format, dataset=data)


__all__ = ["CommetError", "Dataset", "EvalSettings", "Feedback", "FormatError", "RunSummary", "StoryTurn", "Turn", "__version__",
           "evaluate", "evaluate_async", "load_dataset", "report", "validate_dataset"]
