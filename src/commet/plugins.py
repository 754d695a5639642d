"""Plug-ins by entry points: model providers (``commet.models``) and judge kinds (``commet.judges``).

A package adds one by declaring it in its own metadata, for example in pyproject.toml::

    [project.entry-points."commet.models"]
    echo = "my_package.echo:create"      # create(name: str, options: dict[str, str]) -> Model

CoMMET's own providers are declared the same way. When CoMMET runs from a source tree that was
never installed (no metadata), its built-in table stands in for its own entry points.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from importlib import import_module
from importlib.metadata import entry_points

#: CoMMET's own plug-ins, as declared in its pyproject.toml (used only without installed metadata)
BUILT_IN: dict[str, dict[str, str]] = {
    "commet.models": {
        "baseline": "commet.models.baseline:create",
        "replay": "commet.models.replay:create",
        "openai": "commet.models.openai_compat:create",
        "anthropic": "commet.models.anthropic_model:create",
        "google": "commet.models.google_model:create",
        "hf": "commet.models.hf:create",
        "vllm": "commet.models.vllm_offline:create",
    },
    "commet.judges": {},
}


@cache
def _targets(group: str) -> dict[str, str]:
    """Name -> "module:attribute" for a group: the installed entry points over the built-in table."""
    found = {ep.name: ep.value for ep in entry_points(group=group)}
    return {**BUILT_IN.get(group, {}), **found}


def plugin_names(group: str) -> list[str]:
    return list(_targets(group))


def load_plugin(group: str, name: str) -> Callable[..., object]:
    """The factory registered as ``name`` in ``group`` (imported now; ImportError when it cannot be)."""
    module_name, _, attribute = _targets(group)[name].partition(":")
    return getattr(import_module(module_name), attribute)


def refresh() -> None:
    """Forget what was read, so plug-ins installed since are seen (tests, notebooks)."""
    _targets.cache_clear()
