"""Control characters from data never reach the terminal raw (issue 44, point 2).

A dataset named with an OSC window title, a screen clear, a bell, a right-to-left override and a
carriage return; a labeller name and a run name carrying the same: ``eval``, ``runs --wide``,
``report`` (table and Markdown), ``calibrate``, ``label import``, ``label`` and ``judges`` print
them with every control character shown as ``\\x1b`` and the like. Every command prints through
the one console class (:class:`commet.terminal.SafeConsole`) or ``commet.cli.common.echo``.
"""

from __future__ import annotations

import ast
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from rich.table import Table
from rich.text import Text
from typer.testing import CliRunner

from commet.cli import app
from commet.sources.jsonl import bundled_sample_path
from commet.store import Store
from commet.terminal import SafeConsole

HOSTILE = "evil\u001b]0;PWNED\u0007\u001b[2J\u202eyxe\rover\u009b31m"
#: what a terminal would obey: C0 but line breaks and tabs, DEL, C1, bidirectional controls, line separators
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
runner = CliRunner()


def no_raw_controls(output: str, what: str) -> None:
    found = RAW.search(output)
    assert found is None, f"{what}: raw {found.group()!r} at {found.start()}: {output[max(0, found.start() - 60):][:120]!r}"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("escapes")
    folder = root / "ds"
    shutil.copytree(bundled_sample_path(), folder)
    meta = json.loads((folder / "dataset.json").read_text())
    meta["name"] = HOSTILE
    (folder / "dataset.json").write_text(json.dumps(meta))
    db = root / "c.sqlite"
    result = runner.invoke(app, ["eval", "--dataset", str(folder), "--model", "baseline:first-option",
                                 "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "PWNED" in result.output and "\\x1b]0;PWNED" in result.output
    no_raw_controls(result.output, "eval")
    run = next(line.split()[0] for line in runner.invoke(app, ["runs", "--db", str(db)]).output.splitlines()
               if "baseline" in line)
    return db, run


def test_every_command_shows_control_characters_visibly(store: tuple[Path, str], tmp_path: Path) -> None:
    db, run = store
    labels = tmp_path / "labels.csv"
    with Store(db) as opened:
        record = opened.find_run(run)
        rows = [r for r in opened.turn_rows(record.id) if r.response is not None][:3]
    labels.write_text("run,story_id,turn,label,labeller\n" + "".join(
        f"{record.name},{r.story_id},{r.turn},correct,\"{HOSTILE}\"\n" for r in rows))
    commands = [["runs", "--db", str(db), "--wide"], ["runs", "--db", str(db)], ["report", "--db", str(db)],
                ["report", "--db", str(db), "--format", "markdown"], ["report", "--db", str(db), "--format", "latex"],
                ["report", "--db", str(db), "--brief", "--run", run],
                ["label", "import", str(labels), "--db", str(db)],
                ["calibrate", "--db", str(db), "--run", run, "--sample", "4", "--resamples", "100"],
                ["calibrate", "--db", str(db), "--run", run, "--format", "markdown", "--resamples", "100"],
                ["judges", "--db", str(db)], ["judges", "--db", str(db), "--format", "csv"], ["export", "--db", str(db), "--run", run, "--out", str(tmp_path / "x.jsonl")]]
    for command in commands:
        result = runner.invoke(app, command)
        assert result.exit_code in (0, 2), (command, result.output)
        no_raw_controls(result.output, " ".join(command[:2]))
        if command[-1] == "csv":  # a CSV's CRLF line ends stay line ends
            assert not any(line.endswith("\\x0d") for line in result.output.splitlines()), result.output
    shown = runner.invoke(app, ["runs", "--db", str(db), "--wide"]).output
    assert "\\x1b]0;PWNED" in shown and "\\u202e" in shown
    labelled = runner.invoke(app, ["label", "--db", str(db), "--run", run, "--labeller", HOSTILE], input="q\n")
    assert labelled.exit_code == 0, labelled.output
    no_raw_controls(labelled.output, "label")
    assert "\\x1b]0;PWNED" in labelled.output


def test_the_console_escapes_data_but_keeps_its_own_styles() -> None:
    """On a real terminal Rich styles its output with escape codes; only the data's own are made visible,
    whether the data comes as a string, a ``Text`` or a table cell, and a table keeps its columns aligned."""
    out = io.StringIO()
    console = SafeConsole(file=out, force_terminal=True, color_system="standard", width=100)
    table = Table("name", "id")
    table.add_row(HOSTILE, Text(HOSTILE))
    console.print(f"[bold]run[/bold] {HOSTILE}", highlight=False)
    console.print(Text(HOSTILE, style="red"))
    console.print(table)
    written = out.getvalue()
    data_escapes = re.sub(r"\x1b\[[0-9;]*m", "", written)  # Rich's own styles: SGR sequences only
    no_raw_controls(data_escapes, "styled console")
    assert "\x1b[1m" in written and "\\x1b]0;PWNED\\x07\\x1b[2J\\u202eyxe\\x0dover\\x9b31m" in written
    assert written.count("\\u202e") >= 3  # the string, the Text, the cells (folded)
    plain = SafeConsole(file=io.StringIO(), width=200)
    plain.print(table)
    lines = [line for line in plain.file.getvalue().splitlines() if line.strip()]  # type: ignore[attr-defined]
    assert len({len(line) for line in lines}) == 1, "the table's rows must stay one width"


CLI = Path(__file__).resolve().parents[1] / "src" / "commet" / "cli"
RAW_WRITERS = {"echo", "print", "secho", "write"}


def test_commands_print_only_through_the_safe_console_or_echo() -> None:
    """No command module writes to the terminal past the one helper: no typer.echo/click.echo/print/
    sys.stdout.write and no Console of its own (a new command written the old way fails here)."""
    offenders = []
    for path in sorted(CLI.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Name) and func.id == "print":
                offenders.append(f"{path.name}:{node.lineno} print()")
            elif isinstance(func, ast.Attribute) and func.attr in RAW_WRITERS and isinstance(func.value, ast.Name) \
                    and func.value.id in ("typer", "click", "sys"):
                offenders.append(f"{path.name}:{node.lineno} {func.value.id}.{func.attr}()")
            elif isinstance(func, ast.Attribute) and func.attr == "write" and isinstance(func.value, ast.Attribute) \
                    and func.value.attr in ("stdout", "stderr"):
                offenders.append(f"{path.name}:{node.lineno} sys.{func.value.attr}.write()")
            elif isinstance(func, ast.Name) and func.id == "Console":
                offenders.append(f"{path.name}:{node.lineno} Console()")
    allowed = {"common.py"}  # echo itself
    assert [o for o in offenders if o.split(":")[0] not in allowed] == []
