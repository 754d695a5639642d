"""``commet sweep CONFIG.toml``: a grid of runs (models x image settings x feedback conditions x datasets)
into one store; ``commet sweep`` then writes one report of them (the report's format and target are
checked by the command line, with the reports).

A config::

    db = "sweep.sqlite"            # results store (relative paths: relative to the config file)
    out = "sweep-report.html"      # report; format from the suffix (.html .md .tex .txt), or a folder of
                                   # CSV files (one per table) with format = "csv"
    judge = "rules"
    concurrency = 8
    models = ["baseline:first-option", "baseline:random-option"]
    images = ["on", "off"]          # also "needed": pictures only in image-dependent StoryTurns
    feedback = ["original", "correctness"]
    datasets = ["sample"]
    # optional: every other setting of `commet eval` (undecided_feedback, judge_images, system_prompt,
    # temperature, max_tokens, seed, top_p, limit, image_max_side, ...), max_cost, columns, run_prefix, format

A sweep takes every setting eval takes, by the same names (``max_tokens`` for ``--max-tokens``): its
keys are derived from :class:`~commet.store.settings.EvalSettings` (:func:`known_keys`), checked by the
same model as eval's options, so they cannot drift apart. ``images`` and ``feedback`` take a list of
values, the grid's axes; every other setting takes one value, the same in every cell.

Every cell gets the run name ``{run_prefix}{model}@{dataset name}:images={on|off|needed},feedback={condition}``,
the model spec as written in the config (``commet eval``'s default name for most specs), so running the
sweep again resumes each cell like ``eval``. Model specs naming files (``replay:FILE``) are resolved from
the current directory, like ``eval``'s.

The cells run at once, in one process and one store: cells whose models share a provider
endpoint (the same ``base_url`` list, or the provider's default) share ``concurrency`` StoryTurns
in flight, and each model's ``rpm``/``tpm`` budget is kept in the store, shared by every cell
(and any other process) using it; cells on different endpoints run side by side.
"""

from __future__ import annotations

import asyncio
import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from commet.errors import CommetError

if TYPE_CHECKING:
    from commet.format.dataset import Dataset
    from commet.judges.base import Judge
    from commet.models.base import Model

from commet.conditions import FeedbackCondition, ImagePolicy
from commet.models.base import SettingError, did_you_mean
from commet.sources.hub_names import is_hub_spec
from commet.sources.inputs import check_toml, read_text
from commet.store.settings import EvalSettings, setting_names

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: the sweep's own keys beside eval's settings: what runs, where, under which names, within which spend
RUN_KEYS = ("models", "datasets", "columns", "adapters", "judge", "db", "run_prefix", "concurrency", "max_cost", "out", "format")
#: the settings a sweep crosses: a list of values each, one axis of the grid
AXES = ("images", "feedback")
#: eval's option of each sweep key named otherwise (a sweep key ``k`` is eval's ``--k`` when not listed)
EVAL_OPTION_OF = {"models": "model", "datasets": "dataset", "run_prefix": "run", "adapters": "adapter"}
#: the keys of the report a sweep writes at its end (eval prints its results; ``commet report`` writes them)
REPORT_KEYS = ("out", "format")
#: eval's options a sweep file has no key for, and why
NOT_SWEEP_KEYS = {
    "workers": "a sweep runs its cells at once in one process; eval --workers spreads one run over processes",
    "shard": "a shard is one process's share of a run: run the cells as eval commands with --shard",
    "finish": "finishing a run is eval --finish on that run",
    "quiet": "an option of commet sweep itself",
    "force": "an option of commet sweep itself",
}


def known_keys() -> tuple[str, ...]:
    """Every key a sweep file may hold: its own and every setting of eval."""
    return (*RUN_KEYS, *setting_names())


KNOWN_KEYS = frozenset(known_keys())


class SweepConfigError(CommetError, ValueError):
    """A sweep config that cannot be run; the message names the problem."""


@dataclass(frozen=True)
class SweepCell:
    model: str
    dataset: str
    images: ImagePolicy
    feedback: FeedbackCondition


@dataclass
class SweepConfig:
    models: list[str]
    datasets: list[str] = field(default_factory=lambda: ["sample"])
    images: list[ImagePolicy] = field(default_factory=lambda: [ImagePolicy.on])
    feedback: list[FeedbackCondition] = field(default_factory=lambda: [FeedbackCondition.original])
    #: every other setting, the same in every cell (each cell's images and feedback replace these)
    settings: EvalSettings = field(default_factory=EvalSettings)
    #: a dataset's ``--columns`` mapping (a table written by others), by its entry in ``datasets``
    columns: dict[str, str] = field(default_factory=dict)
    #: a dataset's ``--adapter FILE.py:FUNCTION`` (the file relative to the config), by its entry in ``datasets``
    adapters: dict[str, str] = field(default_factory=dict)
    judge: str = "rules"
    concurrency: int = 8
    #: eval's ``--max-cost`` for each run (USD)
    max_cost: float | None = None
    db: Path = Path("commet.sqlite")
    out: Path | None = None
    format: str | None = None
    run_prefix: str = ""

    def cells(self) -> list[SweepCell]:
        """The grid in a fixed order: dataset, model, images, feedback."""
        return [SweepCell(m, d, i, f) for d in self.datasets for m in self.models for i in self.images
                for f in self.feedback]

    def cell_settings(self, cell: SweepCell) -> EvalSettings:
        """A cell's settings, validated (a config built in Python may give its conditions as strings)."""
        return EvalSettings.model_validate({**self.settings.model_dump(), "images": cell.images,
                                            "feedback": cell.feedback})


def _strings(raw: Mapping[str, object], key: str, default: list[str]) -> list[str]:
    value = raw.get(key, default)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise SweepConfigError(f"{key!r} must be a non-empty list of strings")
    return list(value)


def _axis(raw: Mapping[str, object], key: str) -> list[str]:
    """The values of a grid axis, each checked as eval checks its option."""
    default = str(EvalSettings.model_fields[key].default)
    return [str(EvalSettings.from_options({key: value}, from_file=True).options()[key])
            for value in _strings(raw, key, [default])]


Value = TypeVar("Value", int, float, str)


def _one(raw: Mapping[str, object], key: str, kind: type[Value], what: str) -> Value | None:
    """``raw[key]`` (None when absent) when it is a ``kind`` (a whole number is a number too; true/false is neither)."""
    value = raw.get(key)
    if value is None:
        return None
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ValueError(f"{key}: must be {what}, not {value!r}")
    return value


#: the largest sweep file read (a grid of a few dozen specs is a few KB)
MAX_SWEEP_BYTES = 1024 * 1024


def load_config(path: str | Path) -> SweepConfig:
    """Read and check a sweep config; paths inside it are relative to the config file.

    The file is read within bounds (:mod:`commet.sources.inputs`): not a regular file, over 1 MiB, not
    UTF-8, nested over 64 levels or holding a number of over 30 digits is a located
    :class:`~commet.format.problems.FormatError`; a file TOML cannot read, or a config that cannot run,
    a :class:`SweepConfigError`.
    """
    path = Path(path)
    if not path.exists():
        raise SweepConfigError(f"no sweep config at {path}")
    text = read_text(path, what="sweep file", max_bytes=MAX_SWEEP_BYTES)
    check_toml(text, file=str(path))
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SweepConfigError(f"{path}: {exc}") from None
    unknown = sorted(set(raw) - KNOWN_KEYS)
    if unknown:
        raise SweepConfigError(f"{path}: unknown key {unknown[0]!r}{did_you_mean(unknown[0], KNOWN_KEYS)} "
                               f"(known: {', '.join(sorted(KNOWN_KEYS))})")
    if "models" not in raw:
        raise SweepConfigError(f"{path}: 'models' is required")
    try:
        return _config(raw, path.parent)
    except (SweepConfigError, SettingError, TypeError, ValueError) as exc:
        raise SweepConfigError(f"{path}: {exc}") from None


def _config(raw: dict[str, object], base: Path) -> SweepConfig:
    def local(value: object) -> Path:
        candidate = Path(str(value))
        return candidate if candidate.is_absolute() else base / candidate

    entries = _strings(raw, "datasets", ["sample"])
    datasets = [d if d == "sample" or is_hub_spec(d) or Path(d).is_absolute() else str(base / d) for d in entries]
    columns = _columns(raw.get("columns"), dict(zip(entries, datasets, strict=True)))
    adapters = {dataset: spec if Path(spec.rpartition(":")[0]).is_absolute() else str(base / spec)
                for dataset, spec in _columns(raw.get("adapters"), dict(zip(entries, datasets, strict=True)),
                                              "adapters", "FILE.py:FUNCTION").items()}
    settings = EvalSettings.from_options({name: raw.get(name) for name in setting_names() if name not in AXES},
                                         from_file=True)
    concurrency = _one(raw, "concurrency", int, "a whole number")
    texts = {key: _one(raw, key, str, "a string") for key in ("judge", "db", "out", "format", "run_prefix")}
    config = SweepConfig(
        models=_strings(raw, "models", []), datasets=datasets, columns=columns, adapters=adapters,
        images=[ImagePolicy(v) for v in _axis(raw, "images")],
        feedback=[FeedbackCondition(v) for v in _axis(raw, "feedback")],
        settings=settings, judge="rules" if texts["judge"] is None else texts["judge"],
        concurrency=8 if concurrency is None else concurrency, max_cost=_one(raw, "max_cost", float, "a number of USD"),
        db=local("commet.sqlite" if texts["db"] is None else texts["db"]),
        out=None if texts["out"] is None else local(texts["out"]), format=texts["format"],
        run_prefix="" if texts["run_prefix"] is None else texts["run_prefix"])
    if config.concurrency < 1:  # as eval's --concurrency and --max-cost
        raise ValueError(f"concurrency: must be at least 1, not {config.concurrency}")
    if config.max_cost is not None and not (math.isfinite(config.max_cost) and config.max_cost >= 0):
        raise ValueError(f"max_cost: must be a number of USD, 0 or more, not {config.max_cost}")
    if not config.run_prefix.isprintable():  # as eval's --run: it starts every run name
        raise ValueError(f"run_prefix: a run name cannot hold control or invisible characters: {config.run_prefix!r}")
    return config


def _columns(value: object, datasets: dict[str, str], key: str = "columns",
             what: str = "role=column,...") -> dict[str, str]:
    """The ``columns`` (or ``adapters``) key: one value for every dataset (a string), or a table of them by
    dataset entry."""
    if value is None:
        return {}
    if isinstance(value, str):
        return dict.fromkeys(datasets.values(), value)
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"{key}: must be a string (\"{what}\") or a table of them by dataset, "
                         f"e.g. {key} = {{ \"hf:me/tom\" = \"...\" }}")
    unknown = sorted(set(value) - set(datasets))
    if unknown:
        raise ValueError(f"{key}: {unknown[0]!r} is not one of the datasets ({', '.join(datasets)})")
    return {datasets[entry]: mapping for entry, mapping in value.items()}


def run_name(config: SweepConfig, cell: SweepCell, dataset_name: str) -> str:
    """The run name of a grid cell: the optional prefix, the model spec as configured, dataset and settings."""
    return f"{config.run_prefix}{cell.model}@{dataset_name}:images={cell.images},feedback={cell.feedback}"


async def run_sweep(config: SweepConfig, on_cell: Callable[[int, int, str], None] | None = None, *,
                    datasets: dict[str, Dataset] | None = None) -> list[str]:
    """Run (or resume) every cell into ``config.db``; returns the run names in grid order.

    ``on_cell(index, total, run_name)`` is called as each cell starts (cells run at once, see above). ``datasets`` maps the
    config's dataset entries to datasets already checked by the caller; without it every dataset is
    loaded with :func:`commet.sources.checked.load_checked` (refused with errors or warnings) before
    the first run starts.
    """
    from commet.engine import evaluate_async
    from commet.judges.registry import create_judge
    from commet.models.registry import create_model
    from commet.sources.checked import load_checked
    from commet.store.sqlite import Store

    if datasets is None:
        datasets = {d: load_checked(d, columns=config.columns.get(d), adapter=config.adapters.get(d))[0]
                    for d in config.datasets}
    cells = config.cells()
    names = [run_name(config, cell, datasets[cell.dataset].name) for cell in cells]
    slots: dict[str, asyncio.Semaphore] = {}
    for model in dict.fromkeys(cell.model for cell in cells):
        slots.setdefault(endpoint_of(model), asyncio.Semaphore(max(1, config.concurrency)))

    async def run_cell(index: int, cell: SweepCell) -> None:
        if on_cell:
            on_cell(index, len(cells), names[index])
        await evaluate_async(models[index], datasets[cell.dataset], judge=judges[index], db=store, run=names[index],
                             settings=config.cell_settings(cell), concurrency=config.concurrency,
                             max_cost=config.max_cost, slots=slots[endpoint_of(cell.model)])

    # every cell's model and judge are made (their specs checked) before the store is opened: a bad spec in
    # one cell writes nothing
    models: list[Model] = []
    judges: list[Judge] = []
    try:
        for cell in cells:
            models.append(create_model(cell.model))
            judges.append(create_judge(config.judge))
        with Store(config.db) as store:
            tasks = [asyncio.ensure_future(run_cell(index, cell)) for index, cell in enumerate(cells)]
            try:
                await asyncio.gather(*tasks)
            finally:  # one cell failed (or the sweep was stopped): stop the others too
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        for made in models:
            await made.aclose()
        for judging in judges:
            await judging.aclose()
    return names


def endpoint_of(model: str) -> str:
    """The provider endpoint a model spec talks to: provider and base_url(s), or the spec itself when local."""
    from commet.models.endpoints import split_base_urls
    from commet.models.registry import parse_spec

    spec = parse_spec(model)
    if spec.provider in ("baseline", "replay", "hf", "vllm"):
        return model  # runs here: each model is its own "endpoint"
    return f"{spec.provider}@{','.join(sorted(split_base_urls(spec.options.get('base_url')))) or 'default'}"
