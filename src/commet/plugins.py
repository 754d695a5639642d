"""Plug-ins by entry points: model providers (``commet.models``) and judge kinds (``commet.judges``).

A package adds one by declaring it in its own metadata, for example in pyproject.toml::

    [project.entry-points."commet.models"]
    echo = "my_package.echo:create"      # create(name: str, options: dict[str, str]) -> Model

CoMMET's own providers and judge kinds are registered by one table (:mod:`commet.builtin_plugins`), not
by entry points: it works the same from a source tree that was never installed (no metadata), and an
entry point into the ``commet`` package itself (an editable install made before the table, listing a
module under an old path) is ignored. A third party's entry point wins over a built-in of the same
name.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from importlib import import_module
from importlib.metadata import EntryPoints, entry_points
from typing import Protocol

from commet.builtin_plugins import JUDGE_KINDS, PROVIDERS

#: the entry-point groups: model providers, judge kinds
MODELS = "commet.models"
JUDGES = "commet.judges"

#: CoMMET's own plug-ins, group -> name -> "module:attribute", derived from :mod:`commet.builtin_plugins`
BUILT_IN: dict[str, dict[str, str]] = {
    MODELS: {provider.name: provider.factory for provider in PROVIDERS},
    JUDGES: {kind.name: kind.factory for kind in JUDGE_KINDS},
}


class _Installed(Protocol):
    """What ``entry_points()`` returns (``SelectableGroups`` before Python 3.12, ``EntryPoints`` since)."""

    def select(self, *, group: str) -> EntryPoints: ...


@cache
def _installed() -> _Installed:
    """Every installed entry point, read once for all groups (a run reads both: one scan, not two)."""
    return entry_points()


@cache
def _targets(group: str) -> dict[str, str]:
    """Name -> "module:attribute" for a group: third parties' installed entry points over the built-in table."""
    found = {ep.name: ep.value for ep in _installed().select(group=group) if not ep.value.startswith("commet.")}
    return {**BUILT_IN.get(group, {}), **found}


def plugin_names(group: str) -> list[str]:
    return list(_targets(group))


def load_plugin(group: str, name: str) -> Callable[..., object]:
    """The factory registered as ``name`` in ``group`` (imported now; ImportError when it cannot be)."""
    module_name, _, attribute = _targets(group)[name].partition(":")
    factory: Callable[..., object] = getattr(import_module(module_name), attribute)
    return factory


def refresh() -> None:
    """Forget what was read, so plug-ins installed since are seen (tests, notebooks)."""
    _installed.cache_clear()
    _targets.cache_clear()
