"""Model specs: ``provider:name`` with options as a query string.

Examples: ``baseline:first-option``, ``replay:answers.json``,
``openai:gpt-4o-mini?base_url=http://127.0.0.1:8000/v1&rpm=600``, ``hf:./tiny-model``.
Providers are plug-ins in the ``commet.models`` entry-point group (:mod:`commet.plugins`), CoMMET's
own included, and are imported lazily, so a missing optional extra only matters when it is used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import parse_qsl

from commet.builtin_plugins import PROVIDERS
from commet.extras import EXTRA_OF_MODULE, install_command
from commet.models.base import Model, ModelSpecError, UnknownModelError, did_you_mean
from commet.plugins import MODELS, load_plugin, plugin_names

#: the entry-point group providers register in; a factory takes (name, options) and returns a Model
GROUP = MODELS
#: built-in provider -> the extra its module needs
EXTRA_OF_PROVIDER = {provider.name: provider.extra for provider in PROVIDERS if provider.extra}


@dataclass(frozen=True)
class ModelSpec:
    provider: str
    name: str
    options: dict[str, str] = field(default_factory=dict)


def split_spec(spec: str, providers: Sequence[str], *, what: str = "model") -> ModelSpec:
    """The spec grammar, for chat and picture models alike: ``provider:name?option=value&...``.

    Whether the provider is known is the caller's question (each kind has its own providers).
    """
    provider, sep, rest = spec.partition(":")
    if not sep or not provider or not rest:
        raise ModelSpecError(f"{what} spec {spec!r} must look like provider:name (providers: {', '.join(providers)})")
    name, _, query = rest.partition("?")
    options = dict(parse_qsl(query, keep_blank_values=True)) if query else {}
    return ModelSpec(provider, name, options)


def parse_spec(spec: str) -> ModelSpec:
    providers = plugin_names(GROUP)
    parsed = split_spec(spec, providers)
    if parsed.provider not in providers:
        raise UnknownModelError(f"unknown model provider {parsed.provider!r}{did_you_mean(parsed.provider, providers)} "
                                f"in {spec!r} (known: {', '.join(providers)})")
    return parsed


def create_model(spec: str | ModelSpec, **overrides: str) -> Model:
    """Build a model from its spec; raises UnknownModelError with one clear line."""
    parsed = parse_spec(spec) if isinstance(spec, str) else spec
    options = {**parsed.options, **overrides}
    try:
        factory = load_plugin(GROUP, parsed.provider)
    except ImportError as exc:
        raise UnknownModelError(f"provider {parsed.provider!r} is not available: {exc}{_install_hint(parsed.provider, exc)}"
                                ) from None
    model = factory(parsed.name, options)
    if not isinstance(model, Model):
        raise UnknownModelError(f"provider {parsed.provider!r} did not build a Model (got {type(model).__name__})")
    return model


def _install_hint(provider: str, exc: ImportError) -> str:
    """How to install what a provider's module could not import: its extra (built-in providers), the
    extra of the missing module, or nothing (a third-party provider's own package)."""
    extra = EXTRA_OF_PROVIDER.get(provider) or EXTRA_OF_MODULE.get((exc.name or "").split(".")[0])
    return f". Install the extra: {install_command(extra)}" if extra else ""
