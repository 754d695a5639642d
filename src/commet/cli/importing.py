"""``commet import FORMAT SOURCE --out DIR``: ToM benchmarks from their authors' files."""

import importlib.util
import json
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from commet.cli.common import echo


def _format_words() -> list[str]:
    """The FORMAT words, read from the importers' table (``benchmarks.json``, what ``FORMATS`` is made of) without
    importing the importers: every ``commet`` start builds this command, and they import the whole format."""
    spec = importlib.util.find_spec("commet.sources.importers")
    assert spec is not None and spec.submodule_search_locations
    table = Path(next(iter(spec.submodule_search_locations))) / "benchmarks.json"
    return list(json.loads(table.read_text("utf-8")))


FORMATS = _format_words()
#: kept ignore: the members come from the benchmark table (data), which mypy cannot follow into an Enum
BenchmarkFormat = Enum("BenchmarkFormat", {name: name for name in FORMATS}, type=str)  # type: ignore[misc]


class ProtocolChoice(str, Enum):
    conversation = "conversation"
    independent = "independent"


def register(app: typer.Typer) -> None:
    @app.command("import")
    def import_command(
        format_name: Annotated[BenchmarkFormat, typer.Argument(metavar="FORMAT", help="Benchmark: "
                                                                + ", ".join(FORMATS) + ".")],
        source: Annotated[Path, typer.Argument(help="The benchmark's published file or folder.")],
        out: Annotated[Path, typer.Option(help="Output dataset folder.")],
        protocol: Annotated[ProtocolChoice, typer.Option(
            help="conversation: a story's questions in one conversation with correctness feedback; "
                 "independent: each question in a fresh conversation, as the original papers ask.")]
        = ProtocolChoice.conversation,
        language: Annotated[str, typer.Option(help="ToMBench: en or zh.")] = "en",
        context: Annotated[str, typer.Option(help="FANToM: the short or the full conversation; OpenToM: short "
                                                  "(the normal narratives) or long (OpenToM-L).")] = "short",
    ) -> None:
        """Import a ToM benchmark (ToMi, Hi-ToM, BigToM, ToMBench, OpenToM, FANToM, ExploreToM, MMToM-QA, MuMA-ToM,
        the ToM Booklet)."""
        from commet.cli.common import fail
        from commet.format.problems import FormatError
        from commet.format.validate import has_errors, validate_dataset
        from commet.sources.importers import ImportOptions, import_benchmark

        try:
            imported = import_benchmark(format_name.value, source, protocol.value,
                                        ImportOptions(language=language, context=context))
            # checked before anything is written, located in the benchmark's own file: a file the importer reads
            # but whose text CoMMET refuses (a NUL byte in a story) leaves no half-usable folder behind
            refused = [p for p in validate_dataset(imported.dataset, decode_pictures=True) if p.severity == "error"]
            if refused:
                raise FormatError(refused)
        except FormatError as exc:
            fail(str(exc))
        folder = imported.save(out)
        from commet.sources.checked import validate_path

        problems = validate_path(folder)
        for problem in problems:
            if problem.severity == "error":
                echo(str(problem), err=True)
        source_info = imported.provenance
        errors = sum(p.severity == "error" for p in problems)
        echo(f"wrote {folder}: {len(imported.dataset)} StoryTurns from {source_info['stories']} stories and "
                   f"{source_info['questions']} questions ({protocol.value} protocol; licence "
                   f"{source_info['licence']}; {errors} validation errors)")
        if has_errors(problems):
            raise typer.Exit(1)
