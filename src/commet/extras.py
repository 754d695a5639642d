"""Optional extras: which ``commet-bench[...]`` extra provides which module.

Why: the base install is light, so a command that needs an optional package (an HTML report, a
Hugging Face folder, a provider SDK, the web apps) must say which extra to install, in one line,
instead of ending in a ``ModuleNotFoundError`` traceback.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from commet.builtin_plugins import EXTRAS
from commet.errors import CommetError

#: Top-level module name -> the extra that installs it (from :data:`commet.builtin_plugins.EXTRAS`).
EXTRA_OF_MODULE: dict[str, str] = {module: extra.name for extra in EXTRAS for module in extra.modules}


def missing_extra_message(exc: ImportError) -> str | None:
    """The one-line advice for an import error of an optional module, or None when it is not one."""
    name = (exc.name or "").split(".")[0]
    extra = EXTRA_OF_MODULE.get(name)
    if extra is None:
        return None
    return f"this needs the optional package {name!r}, which is not installed: pip install 'commet-bench[{extra}]'"


class MissingExtraError(CommetError, RuntimeError):
    """An optional package is not installed; ``str()`` is one line naming the extra to install."""


def require(module: str, purpose: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtraError` saying which extra ``purpose`` needs."""
    try:
        return importlib.import_module(module)
    except ImportError:
        extra = EXTRA_OF_MODULE.get(module.split(".")[0], module)
        raise MissingExtraError(f"{purpose} needs the {extra!r} extra ({module} is not installed): "
                                f"pip install 'commet-bench[{extra}]'") from None
