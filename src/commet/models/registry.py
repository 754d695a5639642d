"""Model specs: ``provider:name`` with options as a query string.

Examples: ``baseline:first-option``, ``replay:answers.json``,
``openai:gpt-4o-mini?base_url=http://127.0.0.1:8000/v1&rpm=600``, ``hf:./tiny-model``.
Providers are imported lazily, so a missing optional extra only matters when it is used.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from urllib.parse import parse_qsl

from commet.models.base import Model, UnknownModelError, did_you_mean

#: provider name -> "module:factory". A factory takes (name, options) and returns a Model.
PROVIDERS: dict[str, str] = {
    "baseline": "commet.models.baseline:create",
    "replay": "commet.models.replay:create",
    "openai": "commet.models.openai_compat:create",
    "anthropic": "commet.models.anthropic_model:create",
    "google": "commet.models.google_model:create",
    "hf": "commet.models.hf:create",
    "vllm": "commet.models.vllm_offline:create",
}


@dataclass(frozen=True)
class ModelSpec:
    provider: str
    name: str
    options: dict[str, str] = field(default_factory=dict)

    @property
    def display(self) -> str:
        """The spec without options (options may carry URLs; keys are never options)."""
        return f"{self.provider}:{self.name}"


def parse_spec(spec: str) -> ModelSpec:
    provider, sep, rest = spec.partition(":")
    if not sep or not provider or not rest:
        raise UnknownModelError(f"model spec {spec!r} must look like provider:name (providers: {', '.join(PROVIDERS)})")
    name, _, query = rest.partition("?")
    options = dict(parse_qsl(query, keep_blank_values=True)) if query else {}
    if provider not in PROVIDERS:
        raise UnknownModelError(f"unknown model provider {provider!r}{did_you_mean(provider, PROVIDERS)} in {spec!r} "
                                f"(known: {', '.join(PROVIDERS)})")
    return ModelSpec(provider, name, options)


def create_model(spec: str | ModelSpec, **overrides: str) -> Model:
    """Build a model from its spec; raises UnknownModelError with one clear line."""
    parsed = parse_spec(spec) if isinstance(spec, str) else spec
    options = {**parsed.options, **overrides}
    module_name, _, factory_name = PROVIDERS[parsed.provider].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UnknownModelError(f"provider {parsed.provider!r} is not available: {exc}. "
                                f"Install the extra: pip install 'commet-bench[{parsed.provider}]'") from None
    factory = getattr(module, factory_name)
    return factory(parsed.name, options)
