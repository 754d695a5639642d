"""The ``commet`` program builds only what its command line names (``commet.cli.program_for``): the command's
own module and one click command, none for ``--version``. Its help and errors must be the whole program's, byte
for byte, for every command and sub-command, and its table of where each command lives must stay the program's.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import commet.cli as cli
from commet.version import __version__

SOURCE = str(Path(__file__).resolve().parents[1] / "src")
WHOLE = cli.app


def command_paths() -> list[tuple[str, ...]]:
    """Every command and sub-command of the whole program, as the words that name it."""
    paths: list[tuple[str, ...]] = []

    def walk(group: object, prefix: tuple[str, ...]) -> None:  # a click group (Typer 0.29 carries its own click)
        for name, command in group.commands.items():  # type: ignore[attr-defined]
            paths.append((*prefix, name))
            if hasattr(command, "commands"):
                walk(command, (*prefix, name))

    walk(typer.main.get_command(WHOLE), ())
    return paths


PATHS = command_paths()


def cases(path: tuple[str, ...]) -> list[list[str]]:
    """What is compared for a command: its help, an unknown option, an unknown sub-command or extra argument, and
    its first word alone (a group's help, a command's missing arguments or its run on no input)."""
    return [[*path, "--help"], [*path, "--no-such-option"], [*path, "no-such-command"], list(path)[:1]]


def outcome(app: typer.Typer, args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(app, args, prog_name="commet", env={"COLUMNS": "100"})
    return result.exit_code, result.output


#: run in a fresh interpreter, so that each command is built only as the program builds it for its command line
#: (building the whole program first would prepare the commands it shares with the lazy one)
LAZY_SCRIPT = """
import json, sys
from typer.testing import CliRunner
from commet.cli import program_for
out = {}
for top, paths in json.loads(sys.argv[1]).items():
    app = program_for([top])
    for args in paths:
        result = CliRunner().invoke(app, args, prog_name="commet", env={"COLUMNS": "100"})
        out[json.dumps(args)] = [result.exit_code, result.output]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def lazy_outcomes() -> dict[str, list[object]]:
    wanted: dict[str, list[list[str]]] = {}
    for path in PATHS:
        wanted.setdefault(path[0], []).extend(cases(path))
    result = subprocess.run([sys.executable, "-c", LAZY_SCRIPT, json.dumps(wanted)], capture_output=True, text=True,
                            timeout=120, env={**os.environ, "PYTHONPATH": SOURCE})
    assert result.returncode == 0, result.stderr
    found: dict[str, list[object]] = json.loads(result.stdout)
    return found


def test_the_table_of_homes_is_the_programs() -> None:
    """Every top-level command is in COMMAND_HOMES with the module that registers it, and nothing else is."""
    found: dict[str, str | None] = {}
    for info in WHOLE.registered_commands:
        module = info.callback.__module__ if info.callback is not None else ""
        found[cli._name(info)] = None if module == "commet.cli" else module.removeprefix("commet.cli.")
    for group in WHOLE.registered_groups:
        assert group.name is not None
        homes = [home for home in cli.COMMAND_MODULES
                 if any(value is group.typer_instance for value in vars(importlib.import_module(f"commet.cli.{home}"))
                        .values())]
        found[group.name] = homes[0] if homes else "?"
    assert found == cli.COMMAND_HOMES
    assert {path[0] for path in PATHS} == set(cli.COMMAND_HOMES)
    assert len(PATHS) > len(cli.COMMAND_HOMES)  # the groups' sub-commands are compared too


def test_the_program_for_a_command_line() -> None:
    def commands(args: list[str]) -> list[str]:
        app = cli.program_for(args)
        return [cli._name(i) for i in app.registered_commands] + [str(g.name) for g in app.registered_groups]

    everything = sorted(cli.COMMAND_HOMES)
    assert commands(["eval", "--model", "baseline:first-option"]) == ["eval"]
    assert commands(["label", "import"]) == ["label"]  # judging's group alone, not rejudge and judges beside it
    assert commands(["report"]) == ["report"]
    assert commands(["--version"]) == []
    for whole in ([], ["--help"], ["evl"], ["--version=1"], ["--", "eval"], ["--help", "--version"]):
        assert sorted(commands(whole)) == everything, whole


def test_completion_gets_the_whole_program(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_COMMET_COMPLETE", "bash_complete")
    assert len(cli.program_for(["eval"]).registered_commands) == len(WHOLE.registered_commands)


@pytest.mark.parametrize("path", PATHS, ids=" ".join)
def test_help_and_errors_are_the_whole_programs(path: tuple[str, ...], lazy_outcomes: dict[str, list[object]]) -> None:
    for args in cases(path):
        assert tuple(lazy_outcomes[json.dumps(args)]) == outcome(WHOLE, args), args


@pytest.mark.parametrize("args", [["--help"], [], ["evl"], ["--version"], ["--version", "eval", "--bogus"],
                                  ["--version", "--bogus"], ["--bogus"]], ids=repr)
def test_the_top_level_is_the_whole_programs(args: list[str]) -> None:
    exit_code, output = outcome(cli.program_for(args), args)
    assert (exit_code, output) == outcome(WHOLE, args)
    if args == ["--version"]:
        assert (exit_code, output) == (0, f"commet {__version__} (Python {sys.version.split()[0]})\n")


def loaded_after(args: list[str]) -> set[str]:
    """The modules the ``commet`` program imported for a command line, in a fresh interpreter."""
    script = ("import atexit, sys\n"
              "atexit.register(lambda: print(' '.join(sorted(sys.modules)), file=sys.stderr))\n"
              f"sys.argv = ['commet', *{args!r}]\n"
              "from commet.cli import main\n"
              "main()\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": SOURCE})
    assert result.returncode == 0, result.stderr
    return set(result.stderr.split())


def test_a_command_line_imports_only_what_its_command_needs() -> None:
    """``commet eval --help`` and ``commet --version`` import no other command module; eval's help needs neither
    Rich's console nor Pillow's Image module, the version not the installed distributions' metadata (it is a
    constant; pydantic, which Typer imports to read options, reads that metadata for its own plug-ins)."""
    others = {f"commet.cli.{name}" for name in cli.COMMAND_MODULES}
    eval_help = loaded_after(["eval", "--help"])
    assert not eval_help & others
    assert not eval_help & {"rich.console", "PIL.Image", "commet.engine", "aiohttp"}
    version = loaded_after(["--version"])
    assert not version & (others | {"rich.console", "importlib.metadata", "pydantic"})
    assert "commet.cli.study" in loaded_after(["--help"])  # the whole program lists every command
