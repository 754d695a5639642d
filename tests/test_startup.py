"""The ``commet`` program starts without the modules only its commands need (issue 47: ``--version`` and
``--help`` within 0.15 s). Imports are checked, not timed: a list of modules does not move with the
machine's load, and each heavy one below costs tens of milliseconds at every start."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

#: modules a command imports when it runs; none of them at start-up (Rich's console: where a command first prints
#: through it; the installed distributions' metadata: the version is a constant)
HEAVY = ("pydantic", "asyncio", "PIL", "numpy", "aiohttp", "rich.console", "rich.progress", "importlib.metadata",
         "commet.format.model", "commet.format.dataset", "commet.sources.importers", "commet.engine",
         "commet.models.base", "commet.store")


def _modules_after(code: str) -> set[str]:
    script = f"import sys\n{code}\nprint('\\n'.join(sys.modules))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, env=os.environ)
    return set(done.stdout.split())


@pytest.mark.parametrize("code", ["import commet.cli", "import commet", "import commet.format.problems"])
def test_starting_imports_none_of_the_heavy_modules(code: str) -> None:
    loaded = _modules_after(code)
    assert not [name for name in HEAVY if name in loaded]


def test_the_lazy_names_are_the_modules_own() -> None:
    """The package's names still resolve, to the objects their modules define, and unknown names still fail."""
    import commet
    import commet.format
    import commet.sources
    from commet.format.dataset import Dataset
    from commet.sources.checked import load_checked

    assert commet.format.Dataset is Dataset and commet.Dataset is Dataset
    assert commet.sources.load_checked is load_checked
    for name in commet.format.__all__:
        assert getattr(commet.format, name) is not None
    for name in commet.sources.__all__:
        assert getattr(commet.sources, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        commet.format.nothing  # noqa: B018 - the attribute access is the test


def test_the_import_command_lists_the_registry_s_formats() -> None:
    """``commet import`` reads its FORMAT words without importing the importers: the same words."""
    from commet.cli.importing import FORMATS as words
    from commet.sources.importers import FORMATS

    assert words == list(FORMATS)


def test_version_and_help_answer() -> None:
    for argument, expected in (("--version", "commet "), ("--help", "Usage:")):
        done = subprocess.run([sys.executable, "-m", "commet", argument], capture_output=True, text=True,
                              env=os.environ, check=True)
        assert expected in done.stdout
