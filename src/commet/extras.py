"""Optional extras: which ``commet-bench[...]`` extra provides which module.

Why: the base install is light, so a command that needs an optional package (an HTML report, a
Hugging Face folder, a provider SDK, the web apps) must say which extra to install, in one line,
instead of ending in a ``ModuleNotFoundError`` traceback.
"""

from __future__ import annotations

import importlib
import json
import os
from functools import cache
from pathlib import Path
from types import ModuleType
from urllib.parse import unquote, urlparse

from commet.builtin_plugins import EXTRAS
from commet.errors import CommetError

#: Top-level module name -> the extra that installs it (from :data:`commet.builtin_plugins.EXTRAS`).
EXTRA_OF_MODULE: dict[str, str] = {module: extra.name for extra in EXTRAS for module in extra.modules}


#: the distribution's name on a package index
DISTRIBUTION = "commet-bench"


@cache
def _installed_from() -> tuple[Path | None, bool]:
    """(the folder CoMMET was installed from, whether editable); (None, False) for an install from an index.

    Read from the distribution's ``direct_url.json`` (PEP 610: what pip records for an install from a folder
    or a checkout); a checkout run without installing (``PYTHONPATH=src``) is its own folder, editable."""
    import importlib.metadata

    source = Path(__file__).resolve().parents[2]
    try:
        recorded = importlib.metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
        installed = Path(str(importlib.metadata.distribution(DISTRIBUTION).locate_file(""))).resolve()
    except importlib.metadata.PackageNotFoundError:
        recorded, installed = None, None
    if (source / "pyproject.toml").is_file() and (recorded is None or installed is None
                                                  or not Path(__file__).resolve().is_relative_to(installed)):
        return source, True  # this very checkout, whatever else is installed
    if recorded:
        try:
            direct = json.loads(recorded)
        except ValueError:
            return None, False
        url = urlparse(str(direct.get("url", "")))
        if url.scheme == "file":
            return Path(unquote(url.path)), bool((direct.get("dir_info") or {}).get("editable"))
    return None, False


def install_command(extras: str) -> str:
    """The ``pip install`` line that adds ``extras`` (e.g. ``"datasets"`` or ``"providers,reports"``) to CoMMET as
    it was installed: from a checkout ``pip install -e '.[X]'`` (the checkout's path when it is not the current
    folder), from a folder ``pip install 'FOLDER[X]'``, else from the index."""
    folder, editable = _installed_from()
    if folder is None:
        return f"pip install '{DISTRIBUTION}[{extras}]'"
    try:
        here = folder.resolve() == Path(os.getcwd()).resolve()
    except OSError:
        here = False
    where = "." if here else str(folder)
    return f"pip install {'-e ' if editable else ''}'{where}[{extras}]'"


def missing_extra_message(exc: ImportError) -> str | None:
    """The one-line advice for an import error of an optional module, or None when it is not one."""
    name = (exc.name or "").split(".")[0]
    extra = EXTRA_OF_MODULE.get(name)
    if extra is None:
        return None
    return f"this needs the optional package {name!r}, which is not installed: {install_command(extra)}"


class MissingExtraError(CommetError, RuntimeError):
    """An optional package is not installed; ``str()`` is one line naming the extra to install."""


def require(module: str, purpose: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtraError` saying which extra ``purpose`` needs."""
    try:
        return importlib.import_module(module)
    except ImportError:
        extra = EXTRA_OF_MODULE.get(module.split(".")[0], module)
        raise MissingExtraError(f"{purpose} needs the {extra!r} extra ({module} is not installed): "
                                f"{install_command(extra)}") from None
