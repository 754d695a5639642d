"""CoMMET's own plug-ins in one table: model providers, judge kinds and the optional extras.

Why: a provider used to be registered in five to seven places. Everything else is derived from
this table: the registry (:data:`commet.plugins.BUILT_IN`), which extra a missing module needs
(:data:`commet.extras.EXTRA_OF_MODULE`) and the price table (:data:`commet.models.pricing.PRICES`)
at run time; the package's extras and their requirements when it is built (``hatch_build.py``, the
build hook pyproject.toml names, writes :func:`requirements` into the metadata); README.md's tables
of models and extras by ``scripts/sync_builtins.py``, and ``tests/test_builtin_plugins.py`` fails
when they drift (docs/architecture.md, "Extending it", walks through adding a provider).

Only data lives here: importing it imports nothing else, so a provider's own module is still
imported only when a spec names it. It imports the standard library alone because the build hook
and ``scripts/floors.py`` load this file by its path, where neither CoMMET nor its dependencies
are installed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

#: USD per million tokens, (input, output)
Price = tuple[float, float]


@dataclass(frozen=True)
class Extra:
    """An optional ``commet-bench[NAME]`` extra."""

    name: str
    #: top-level modules CoMMET imports that this extra installs: a missing one names this extra
    modules: tuple[str, ...]
    #: README's "Which extra each feature needs" row (Markdown); None: a development extra, not listed
    feature: str | None
    #: what ``pip install 'commet-bench[NAME]'`` installs (PEP 508; ``commet-bench[OTHER]`` includes another
    #: extra). Each lower bound is a version that works: scripts/floors.sh installs them and runs the tests
    requires: tuple[str, ...]
    #: what README adds after the extra's name, e.g. "(GPU)"
    note: str = ""


@dataclass(frozen=True)
class Provider:
    """A model provider: the ``NAME:`` of a model spec (entry-point group ``commet.models``)."""

    name: str
    #: ``module:attribute`` of ``create(name: str, options: dict[str, str]) -> Model``
    factory: str
    #: the extra its module needs; None: the plain install runs it
    extra: str | None
    #: README's models table: (spec, what), Markdown
    readme: tuple[tuple[str, str], ...]
    #: list prices of exact model names (or their dated snapshots), ESTIMATES: see commet.models.pricing
    prices: Mapping[str, Price] = field(default_factory=dict)


@dataclass(frozen=True)
class JudgeKind:
    """A judge kind: the ``KIND:`` of a judge spec (entry-point group ``commet.judges``)."""

    name: str
    #: ``module:attribute`` of ``create(rest: str) -> Judge`` (``rest``: the spec after ``KIND:``)
    factory: str
    #: how a spec of this kind is written; a usage without ``:`` is a kind that takes no argument
    usage: str


EXTRAS: tuple[Extra, ...] = (
    # the direct transport imports aiohttp and certifi; google-genai's client needs aiohttp 3.11 (ClientConnectorDNSError)
    Extra("openai", ("openai", "aiohttp"), "`openai:` models and judges (and OpenAI-compatible servers)",
          requires=("openai[aiohttp]>=2.16", "aiohttp>=3.11", "certifi>=2023.7.22")),
    Extra("anthropic", ("anthropic",), "`anthropic:` models and judges", requires=("anthropic>=0.40",)),
    Extra("google", ("google",), "`google:` models and judges", requires=("google-genai>=1.39",)),
    Extra("providers", (), "all three providers", requires=("commet-bench[openai,anthropic,google]",)),
    Extra("hf", ("torch", "transformers"), "`hf:` local transformers models",
          requires=("torch>=2.4", "transformers>=4.45"),
          note="(torch, transformers; install torch's CPU build from `https://download.pytorch.org/whl/cpu` "
               "where you have no GPU)"),
    Extra("diffusers", ("diffusers",), "`generate llm` with local diffusers picture models",
          requires=("commet-bench[hf]", "diffusers>=0.30")),
    Extra("vllm", ("vllm",), "`vllm:` models", requires=("vllm>=0.6",), note="(GPU)"),
    # datasets 3.3: a Hub cache snapshot (files linked into blobs/) loads as a local folder; 3.0-3.2 find no data files
    Extra("datasets", ("datasets", "pyarrow"),
          "Hugging Face datasets (`hf:OWNER/NAME`, parquet folders, `convert --to hf`)",
          requires=("datasets>=3.3", "pyarrow>=15.0", "numpy>=1.26", "huggingface-hub>=0.24", "pyyaml>=6.0")),
    Extra("reports", ("jinja2", "matplotlib"), "HTML reports and plots",
          requires=("matplotlib>=3.8", "jinja2>=3.1", "markupsafe>=2.1.1", "numpy>=1.26")),
    Extra("web", ("fastapi", "uvicorn", "multipart", "python_multipart", "itsdangerous"),
          "`review serve`, `study serve` (web apps)",
          requires=("fastapi>=0.115.7", "starlette>=0.44", "uvicorn>=0.29", "jinja2>=3.1", "python-multipart>=0.0.9",
                    "itsdangerous>=2.1")),
    Extra("inspect", ("inspect_ai",), "the inspect_ai task", requires=("inspect-ai>=0.3.285",)),
    Extra("test", (), None, requires=(
        "commet-bench[providers,datasets,reports,web,hf,diffusers,inspect]",
        "pytest>=8.0",
        "pytest-asyncio>=0.23",
        "pytest-timeout>=2.3",
        "pytest-xdist>=3.8",  # scripts/test.sh: a test file to a worker, slow files first (--no-loadscope-reorder)
        "playwright>=1.40",
        "ruff>=0.5",
        "import-linter>=2.1",
        "mypy>=1.18.2",  # strict mode passes from this release (1.10 reports 30 errors that later releases see through)
        "jsonschema>=4.0",
        "hypothesis>=6.0",
        "cryptography>=41",
        "numpy>=1.26",
        "httpx>=0.28.1",  # the web app tests' HTTP client (src/ itself does not import it)
        "hatchling>=1.21",  # the build backend: tests/test_builtin_plugins.py builds the metadata through it
    )),
)

PROVIDERS: tuple[Provider, ...] = (
    Provider("baseline", "commet.models.baseline:create", None, (
        ("`baseline:first-option`, `baseline:random-option?seed=N`",
         "honest floors: an option shown with the question, else a fixed reply"),
        ("`baseline:shortcut?train=DATASET&half=first`",
         "a learner that never reads the story (answer position, yes/no, text per task and turn): what a "
         "dataset gives away (`commet audit`)"),
    )),
    Provider("replay", "commet.models.replay:create", None, (
        ("`replay:FILE.json`", "`{story_id: [reply, ...]}`: tests, and re-scoring recorded answers"),
    )),
    Provider("openai", "commet.models.openai_compat:create", "openai", (
        ("`openai:MODEL[?base_url=...]`",
         "the official `openai` SDK's wire format; any OpenAI-compatible server with `base_url`. "
         "`transport=direct` (the default) posts over aiohttp to the URL and with the headers the SDK client "
         "would use, computed without importing the SDK (tests check they equal the SDK client's; about 3x "
         "less CPU per call); `transport=sdk` sends through the SDK client's `client.post`"),
    ), prices={
        "gpt-4o": (2.50, 10.00),
        "gpt-4o-mini": (0.15, 0.60),
        "gpt-4.1": (2.00, 8.00),
        "gpt-4.1-mini": (0.40, 1.60),
        "gpt-4.1-nano": (0.10, 0.40),
        "gpt-5": (1.25, 10.00),
        "gpt-5-mini": (0.25, 2.00),
        "gpt-5-nano": (0.05, 0.40),
        "o3": (2.00, 8.00),
        "o3-mini": (1.10, 4.40),
        "o4-mini": (1.10, 4.40),
    }),
    Provider("anthropic", "commet.models.anthropic_model:create", "anthropic", (
        ("`anthropic:MODEL`", "the official `anthropic` SDK"),
    ), prices={
        "claude-3-5-haiku": (0.80, 4.00),
        "claude-3-7-sonnet": (3.00, 15.00),
        "claude-haiku-4-5": (1.00, 5.00),
        "claude-sonnet-4": (3.00, 15.00),
        "claude-sonnet-4-5": (3.00, 15.00),
        "claude-opus-4": (15.00, 75.00),
        "claude-opus-4-1": (15.00, 75.00),
        "claude-opus-4-5": (5.00, 25.00),
    }),
    Provider("google", "commet.models.google_model:create", "google", (
        ("`google:MODEL`", "the official `google-genai` SDK"),
    ), prices={
        "gemini-2.0-flash": (0.10, 0.40),
        "gemini-2.0-flash-lite": (0.075, 0.30),
        "gemini-2.5-flash": (0.30, 2.50),
        "gemini-2.5-flash-lite": (0.10, 0.40),
        "gemini-2.5-pro": (1.25, 10.00),
        "gemini-3-pro": (2.00, 12.00),
    }),
    Provider("hf", "commet.models.transformers_model:create", "hf", (
        ("`hf:PATH_OR_ID`", "local transformers model, batched across the stories in flight"),
    )),
    Provider("vllm", "commet.models.vllm_offline:create", "vllm", (
        ("`vllm:PATH_OR_ID[?tensor_parallel_size=N]`",
         "vLLM's offline engine (GPU; `pip install -e '.[vllm]'` in a clone)"),
    )),
)

JUDGE_KINDS: tuple[JudgeKind, ...] = (
    JudgeKind("rules", "commet.judges.kinds:create_rules", "rules"),
    JudgeKind("cascade", "commet.judges.kinds:create_cascade", "cascade:SPEC"),
    JudgeKind("panel", "commet.judges.kinds:create_panel", "panel:SPEC,SPEC,SPEC"),
    JudgeKind("llm-only", "commet.judges.kinds:create_llm_only", "llm-only:SPEC"),
)


def requirements() -> dict[str, list[str]]:
    """Each extra's requirements, ``{extra: [requirement, ...]}``: the package's optional dependencies
    (what hatch_build.py writes into its metadata, and the floors scripts/floors.py pins)."""
    return {extra.name: list(extra.requires) for extra in EXTRAS}


def included_extras(requirement: str, distribution: str) -> list[str]:
    """The extras of ``distribution`` (CoMMET's own name) that a requirement includes: ``["hf"]`` for
    ``commet-bench[hf]``; none for another package."""
    name, bracket, rest = requirement.partition("[")
    names, closed, _ = rest.partition("]")
    return [extra.strip() for extra in names.split(",")] if name.strip() == distribution and bracket and closed else []
