"""The version is written in one place, src/commet/version.py: the build reads it from there (pyproject.toml's
``[tool.hatch.version]``) and the program as a constant, without searching the installed distributions."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from commet.version import __version__

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_pyproject_names_the_module_and_holds_no_version_of_its_own() -> None:
    assert "version" not in PROJECT["project"]
    assert "version" in PROJECT["project"]["dynamic"]
    assert PROJECT["tool"]["hatch"]["version"] == {"path": "src/commet/version.py"}


def test_the_build_backend_reads_the_programs_version() -> None:
    regex = pytest.importorskip("hatchling.version.source.regex")
    read = regex.RegexSource(str(ROOT), PROJECT["tool"]["hatch"]["version"]).get_version_data()
    assert read["version"] == __version__
    assert __version__.count(".") >= 2 and __version__.replace(".", "").isalnum()
