"""Every whole-number option of every command is bounded (issue 44, point 7): a huge or negative value is click's
one-line usage error and exit 2, never an OverflowError (SQLite, numpy) or a MemoryError (a bootstrap of 10**9
resamples) from deep inside."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import typer
from typer.testing import CliRunner

from commet.cli import app
from commet.cli.common import NUMBER_RANGES

runner = CliRunner()


def options(command: object, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], object]]:
    for parameter in getattr(command, "params", []):
        yield path, parameter
    for name, sub in getattr(command, "commands", {}).items():
        yield from options(sub, (*path, name))


NUMBER_OPTIONS = [(path, parameter) for path, parameter in options(typer.main.get_command(app))
                  if getattr(getattr(parameter, "type_descriptor", None), "annotation", None) is int]


def test_every_whole_number_option_has_both_bounds() -> None:
    assert len(NUMBER_OPTIONS) > 20  # (the walk found the commands' options, not a few)
    unbounded = [f"commet {' '.join(path)} {parameter.opts[0]}" for path, parameter in NUMBER_OPTIONS  # type: ignore[attr-defined]
                 if parameter.min is None or parameter.max is None]  # type: ignore[attr-defined]
    assert unbounded == []
    for path, parameter in NUMBER_OPTIONS:
        if parameter.name in NUMBER_RANGES:  # type: ignore[attr-defined]
            low, high = NUMBER_RANGES[parameter.name]  # type: ignore[attr-defined]
            assert low <= parameter.min and parameter.max <= high, (path, parameter.name)  # type: ignore[attr-defined]


@pytest.mark.parametrize("value", ["1000000000000000000000000000000", "-1000000000000000000000000000000", "9" * 400])
def test_huge_values_are_one_usage_line_for_every_number_option(value: str) -> None:
    for path, parameter in NUMBER_OPTIONS:
        result = runner.invoke(app, [*path, parameter.opts[0], value])  # type: ignore[attr-defined]
        assert result.exit_code == 2, (path, parameter.opts, result.output)  # type: ignore[attr-defined]
        assert "Traceback" not in result.output and result.exception is None or isinstance(result.exception,
                                                                                            SystemExit)


@pytest.mark.parametrize(("command", "says"), [
    (["calibrate", "--run", "x", "--seed", "1000000000000000000000000000000"], "--seed"),
    (["calibrate", "--run", "x", "--resamples", "1000000000"], "--resamples"),
    (["report", "--resamples", "1000000000"], "--resamples"),
    (["report", "--seed", "-1"], "--seed"),
    (["eval", "--dataset", "sample", "--model", "baseline:first-option", "--seed", str(2**64)], "--seed"),
])
def test_the_issues_examples(command: list[str], says: str, tmp_path) -> None:  # noqa: ANN001
    result = runner.invoke(app, [*command, "--db", str(tmp_path / "c.sqlite")])
    assert result.exit_code == 2 and says in result.output and "Invalid value" in result.output, result.output
    assert not (tmp_path / "c.sqlite").exists()
