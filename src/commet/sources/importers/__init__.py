"""``commet import FORMAT SOURCE``: ToM benchmarks, read from the files their authors publish.

Each module reads one benchmark's published layout into stories and questions
(:mod:`commet.sources.importers.base`); this registry maps the FORMAT word to it and turns the
stories into StoryTurns under a protocol (one conversation per story with correctness
feedback, or one fresh conversation per question). A module may also define
``variant(source, options)`` (the published version it read, named in the dataset's name),
``language(source, options)`` and ``TAXONOMY`` (its tasks, when they are not declared from the stories).
"""

from __future__ import annotations

import importlib
import json
from importlib import resources
from pathlib import Path
from types import ModuleType

from commet.format.problems import FormatError, Problem
from commet.sources.importers.base import (
    Benchmark,
    ImportOptions,
    ImportResult,
    Protocol,
    build_dataset,
    declared_task,
)

#: FORMAT word -> the benchmark: where it comes from and under which licence (``benchmarks.json``, a
#: table of citations). The module of the same name reads its published files: ``read(source, options)``.
FORMATS: dict[str, Benchmark] = {
    name: Benchmark(name=name, **fields)
    for name, fields in json.loads(resources.files(__name__).joinpath("benchmarks.json").read_text("utf-8")).items()
}


def importer(format_name: str) -> ModuleType:
    """The importer module of a FORMAT word; an unknown word is a FormatError naming the known ones."""
    name = format_name.lower()
    if name not in FORMATS:
        raise FormatError([Problem("<format>", None, None, None, "format",
                                   f"unknown benchmark format {format_name!r}; known: {', '.join(FORMATS)}")])
    return importlib.import_module(f"commet.sources.importers.{name}")


def import_benchmark(format_name: str, source: str | Path, protocol: Protocol | str = Protocol.conversation,
                     options: ImportOptions | None = None) -> ImportResult:
    """Read a benchmark's published files into a StoryTurn dataset (in memory; ``.save(folder)`` writes it)."""
    module = importer(format_name)
    benchmark = FORMATS[format_name.lower()]
    source = Path(source)
    if not source.exists():
        raise FormatError([Problem(str(source), None, None, None, None, "file not found")])
    options = options or ImportOptions()
    stories = module.read(source, options)
    # a benchmark published in versions (ToMBench's languages, FANToM's contexts, OpenToM-L) names the version in
    # the dataset's name, so that runs on two versions never share one
    variant = module.variant(source, options) if hasattr(module, "variant") else None
    language = module.language(source, options) if hasattr(module, "language") else "en"
    return build_dataset(benchmark, stories, Protocol(protocol), source, language=language, variant=variant,
                         taxonomy=getattr(module, "TAXONOMY", None))


__all__ = ["FORMATS", "Benchmark", "ImportOptions", "ImportResult", "Protocol", "declared_task",
           "import_benchmark", "importer"]
