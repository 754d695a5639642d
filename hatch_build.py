"""Build hook: the package's extras and their requirements come from the table of built-in plug-ins.

Why: a provider that needs a new package is then declared in one place, its ``Extra`` row in
src/commet/builtin_plugins.py, instead of that row and pyproject.toml's extras. pyproject.toml
declares ``optional-dependencies`` dynamic and names this file (``[tool.hatch.metadata.hooks.custom]``);
hatchling calls :meth:`ExtrasFromTable.update` when it builds a wheel, an sdist or an editable install.

The table is loaded by its file path: the build runs where CoMMET's dependencies are not installed,
so the ``commet`` package (whose ``__init__`` imports pydantic) is never imported. scripts/floors.py
reads the extras through :func:`optional_dependencies` for the same reason, and imports this file
without hatchling, which only a build has.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent
#: where the table is, from the project's root
TABLE = Path("src", "commet", "builtin_plugins.py")


def optional_dependencies(root: Path = ROOT) -> dict[str, list[str]]:
    """``{extra: [requirement, ...]}`` from the table under ``root``."""
    return dict(load_table(root).requirements())


def load_table(root: Path = ROOT) -> ModuleType:
    """The table under ``root`` as a module, loaded by its path without its package (and left out of
    ``sys.modules``)."""
    name = "_commet_builtin_plugins_table"
    spec = importlib.util.spec_from_file_location(name, root / TABLE)
    if spec is None or spec.loader is None:
        raise OSError(f"cannot load the table of built-in plug-ins: {root / TABLE}")
    module = importlib.util.module_from_spec(spec)
    # dataclasses look a class's module up in sys.modules (string annotations, ``from __future__``)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        return module
    finally:
        del sys.modules[name]


try:
    from hatchling.metadata.plugin.interface import MetadataHookInterface
except ModuleNotFoundError:  # imported by scripts/floors.py and the tests, where no build is running
    pass
else:

    class ExtrasFromTable(MetadataHookInterface):
        """Sets ``[project.optional-dependencies]`` from the table (pyproject.toml declares it dynamic)."""

        def update(self, metadata: dict[str, Any]) -> None:
            metadata["optional-dependencies"] = optional_dependencies(Path(self.root))
