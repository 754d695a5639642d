"""``commet import FORMAT SOURCE``: ToM benchmarks, read from the files their authors publish.

Each module reads one benchmark's published layout into stories and questions
(:mod:`commet.format.importers.base`); this registry maps the FORMAT word to it and turns the
stories into StoryTurns under a protocol (one conversation per story with correctness
feedback, or one fresh conversation per question).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

from commet.format.importers.base import (
    Benchmark,
    ImportOptions,
    ImportResult,
    Protocol,
    build_dataset,
    declared_task,
)
from commet.format.problems import FormatError, Problem

#: FORMAT word -> module name; each module has ``BENCHMARK`` and ``read(source, options)``.
FORMATS: dict[str, str] = {
    "tomi": "tomi", "hitom": "hitom", "bigtom": "bigtom", "tombench": "tombench", "opentom": "opentom",
    "fantom": "fantom", "exploretom": "exploretom", "mmtomqa": "mmtomqa", "mumatom": "mumatom",
}


def importer(format_name: str) -> ModuleType:
    """The importer module of a FORMAT word; an unknown word is a FormatError naming the known ones."""
    module = FORMATS.get(format_name.lower())
    if module is None:
        raise FormatError([Problem("<format>", None, None, None, "format",
                                   f"unknown benchmark format {format_name!r}; known: {', '.join(FORMATS)}")])
    return importlib.import_module(f"commet.format.importers.{module}")


def import_benchmark(format_name: str, source: str | Path, protocol: Protocol | str = Protocol.conversation,
                     options: ImportOptions | None = None) -> ImportResult:
    """Read a benchmark's published files into a StoryTurn dataset (in memory; ``.save(folder)`` writes it)."""
    module = importer(format_name)
    source = Path(source)
    if not source.exists():
        raise FormatError([Problem(str(source), None, None, None, None, "file not found")])
    options = options or ImportOptions()
    stories = module.read(source, options)
    return build_dataset(module.BENCHMARK, stories, Protocol(protocol), source,
                         language=options.language if module.BENCHMARK.name == "tombench" else "en")


__all__ = ["FORMATS", "Benchmark", "ImportOptions", "ImportResult", "Protocol", "declared_task",
           "import_benchmark", "importer"]
