"""A package's public names imported from their modules when first asked for (PEP 562's module ``__getattr__``).

Why: ``commet``, ``commet.format`` and ``commet.sources`` are imported by every command, and importing the
modules behind their names (pydantic models, the loaders, the engine) would cost ``commet --version`` and
``--help`` most of their start-up.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_getattr(package: str, homes: Mapping[str, str], namespace: dict[str, object]) -> Callable[[str], object]:
    """The ``__getattr__`` of ``package``: each name of ``homes`` imported from the module it maps to on first
    use, then kept in the package's ``namespace`` (so it is looked up once); any other name is an AttributeError."""

    def __getattr__(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    return __getattr__
