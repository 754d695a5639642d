"""The package's structure: no import runs upward through the layers and no module import circle.

The layers are the import-linter contract in pyproject.toml (``lint-imports`` checks it too);
circles are found on the same import graph (grimp), module by module, lazy imports included.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent


def lint_imports(config: Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """import-linter's own command (``lint-imports``) on ``config``, in a fresh interpreter."""
    code = ("import sys; from importlinter.cli import lint_imports_command; "
            "sys.argv = ['lint-imports', '--config', sys.argv[1]]; lint_imports_command()")
    return subprocess.run([sys.executable, "-c", code, str(config)], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env=env)


def test_layers_contract_is_kept() -> None:
    result = lint_imports(ROOT / "pyproject.toml", ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_no_module_import_circle() -> None:
    graph = grimp.build_graph("commet")
    circles = sorted({tuple(sorted((module, imported))) for module in graph.modules
                      for imported in graph.find_modules_directly_imported_by(module)
                      if graph.chain_exists(importer=imported, imported=module)})
    assert circles == []


def test_the_contract_can_fail(tmp_path: Path) -> None:
    """The same check on a copy of the package with one upward import added must report it broken."""
    import shutil

    copy = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "commet", copy / "commet", ignore=shutil.ignore_patterns("__pycache__", "data"))
    models = copy / "commet" / "models" / "base.py"
    models.write_text(models.read_text() + "\nfrom commet.engine import runner  # noqa\n")
    config = tmp_path / "pyproject.toml"
    config.write_text((ROOT / "pyproject.toml").read_text())
    result = lint_imports(config, tmp_path, {"PYTHONPATH": str(copy), "PATH": "/usr/bin:/bin"})
    assert result.returncode != 0 and "BROKEN" in result.stdout, result.stdout + result.stderr


def test_command_modules_keep_their_annotations_as_objects() -> None:
    """Typer evaluates each command's annotations at every start: as strings (``from __future__ import
    annotations``) that was 30 ms of every ``commet`` command (see commet.cli's docstring)."""
    import commet.cli

    folder = Path(commet.cli.__file__).parent
    modules = ["__init__", *commet.cli.COMMAND_MODULES, "generate_llm"]
    postponed = [name for name in modules if re.search(r"^from __future__ import annotations",
                                                       (folder / f"{name}.py").read_text(encoding="utf-8"), re.M)]
    assert postponed == []
