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
    # optional: limit, system_prompt, temperature, max_tokens, seed, run_prefix, format

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
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from commet.errors import CommetError

if TYPE_CHECKING:
    from commet.format.dataset import Dataset
    from commet.judges.base import Judge
    from commet.models.base import Model

from commet.conditions import FeedbackCondition, ImagePolicy
from commet.format.inputs import check_toml, read_text
from commet.models.base import GenerationSettings, did_you_mean

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

KNOWN_KEYS = {"db", "out", "format", "judge", "concurrency", "models", "images", "feedback", "datasets", "limit",
              "system_prompt", "temperature", "max_tokens", "seed", "run_prefix"}


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
    judge: str = "rules"
    concurrency: int = 8
    db: Path = Path("commet.sqlite")
    out: Path | None = None
    format: str | None = None
    limit: int | None = None
    system_prompt: str | None = None
    temperature: float = 0.0
    max_tokens: int = 512
    seed: int | None = None
    run_prefix: str = ""

    def cells(self) -> list[SweepCell]:
        """The grid in a fixed order: dataset, model, images, feedback."""
        return [SweepCell(m, d, i, f) for d in self.datasets for m in self.models for i in self.images
                for f in self.feedback]


def _strings(raw: dict[str, object], key: str, default: list[str], allowed: tuple[str, ...] | None = None) -> list[str]:
    value = raw.get(key, default)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise SweepConfigError(f"{key!r} must be a non-empty list of strings")
    if allowed is not None and (bad := [v for v in value if v not in allowed]):
        raise SweepConfigError(f"{key!r}: {bad[0]!r} is not one of {', '.join(allowed)}")
    return list(value)


#: the largest sweep file read (a grid of a few dozen specs is a few KB)
MAX_SWEEP_BYTES = 1024 * 1024


def load_config(path: str | Path) -> SweepConfig:
    """Read and check a sweep config; paths inside it are relative to the config file.

    The file is read within bounds (:mod:`commet.format.inputs`): not a regular file, over 1 MiB, not
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
    base = path.parent

    def local(value: object) -> Path:
        candidate = Path(str(value))
        return candidate if candidate.is_absolute() else base / candidate

    datasets = [d if d == "sample" or Path(d).is_absolute() else str(base / d)
                for d in _strings(raw, "datasets", ["sample"])]
    fmt = raw.get("format")
    if fmt is not None and not isinstance(fmt, str):
        raise SweepConfigError(f"{path}: 'format' must be a string")
    try:
        config = SweepConfig(
            models=_strings(raw, "models", []), datasets=datasets,
            images=[ImagePolicy(v) for v in _strings(raw, "images", ["on"], tuple(ImagePolicy))],
            feedback=[FeedbackCondition(v) for v in _strings(raw, "feedback", ["original"], tuple(FeedbackCondition))],
            judge=str(raw.get("judge", "rules")), concurrency=int(raw.get("concurrency", 8)),
            db=local(raw.get("db", "commet.sqlite")), out=local(raw["out"]) if "out" in raw else None,
            format=fmt,
            limit=int(raw["limit"]) if "limit" in raw else None,
            system_prompt=str(raw["system_prompt"]) if "system_prompt" in raw else None,
            temperature=float(raw.get("temperature", 0.0)),
            max_tokens=int(raw.get("max_tokens", 512)),
            seed=int(raw["seed"]) if "seed" in raw else None,
            run_prefix=str(raw.get("run_prefix", "")))
        GenerationSettings.checked(temperature=config.temperature, max_tokens=config.max_tokens, seed=config.seed)
        for key, value in (("concurrency", config.concurrency), ("limit", config.limit)):
            if value is not None and value < 1:  # as eval's --concurrency and --limit
                raise ValueError(f"{key}: must be at least 1, not {value}")
        if not config.run_prefix.isprintable():  # as eval's --run: it starts every run name
            raise ValueError(f"run_prefix: a run name cannot hold control or invisible characters: "
                             f"{config.run_prefix!r}")
    except (TypeError, ValueError) as exc:
        raise SweepConfigError(f"{path}: {exc}") from None
    return config


def run_name(config: SweepConfig, cell: SweepCell, dataset_name: str) -> str:
    """The run name of a grid cell: the optional prefix, the model spec as configured, dataset and settings."""
    return f"{config.run_prefix}{cell.model}@{dataset_name}:images={cell.images},feedback={cell.feedback}"


async def run_sweep(config: SweepConfig, on_cell: Callable[[int, int, str], None] | None = None, *,
                    datasets: dict[str, Dataset] | None = None) -> list[str]:
    """Run (or resume) every cell into ``config.db``; returns the run names in grid order.

    ``on_cell(index, total, run_name)`` is called as each cell starts (cells run at once, see above). ``datasets`` maps the
    config's dataset entries to datasets already checked by the caller; without it every dataset is
    loaded with :func:`commet.format.validate.load_checked` (refused with errors or warnings) before
    the first run starts.
    """
    from commet.engine import EvalSettings, evaluate_async
    from commet.engine.conversation import DEFAULT_SYSTEM_PROMPT
    from commet.format.validate import load_checked
    from commet.judges.registry import create_judge
    from commet.models.registry import create_model
    from commet.store.sqlite import Store

    if datasets is None:
        datasets = {d: load_checked(d)[0] for d in config.datasets}
    cells = config.cells()
    names = [run_name(config, cell, datasets[cell.dataset].name) for cell in cells]
    slots: dict[str, asyncio.Semaphore] = {}
    for model in dict.fromkeys(cell.model for cell in cells):
        slots.setdefault(endpoint_of(model), asyncio.Semaphore(max(1, config.concurrency)))

    async def run_cell(index: int, cell: SweepCell) -> None:
        if on_cell:
            on_cell(index, len(cells), names[index])
        settings = EvalSettings(
            images=cell.images, feedback=cell.feedback,
            system_prompt=DEFAULT_SYSTEM_PROMPT if config.system_prompt is None else config.system_prompt,
            generation=GenerationSettings(temperature=config.temperature, max_tokens=config.max_tokens,
                                          seed=config.seed),
            limit=config.limit)
        await evaluate_async(models[index], datasets[cell.dataset], judge=judges[index], db=store, run=names[index],
                             settings=settings, concurrency=config.concurrency, slots=slots[endpoint_of(cell.model)])

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
