"""Estimated list prices, USD per million tokens (input, output).

ESTIMATES ONLY: prices were copied from the providers' public price pages (standard tier,
no batch or cache discounts, short-context rates where prices are tiered) and change
often. Reports must label costs computed from this table as estimates. A run can
override them with the model options ``price_in`` / ``price_out`` (USD per million
tokens); models served from a custom ``base_url`` (vLLM, Ollama ...) get no price
unless those options are given.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from commet.builtin_plugins import PROVIDERS, Price
from commet.models.base import Usage
from commet.models.options import option_float

#: provider -> model name -> (input, output) USD per 1M tokens, from the providers' rows in
#: :mod:`commet.builtin_plugins`. A name matches exactly, or as a dated snapshot of it
#: ("gpt-4o-mini-2024-07-18", "claude-3-5-haiku-20241022", "...-latest"); any other name ("gpt-5.4",
#: "claude-opus-4-7") has no price rather than a neighbour's.
PRICES: dict[str, dict[str, Price]] = {provider.name: dict(provider.prices) for provider in PROVIDERS
                                       if provider.prices}


_SNAPSHOT = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8}|latest)$")


def lookup(provider: str, model: str) -> Price | None:
    """(input, output) USD per million tokens for this exact model (or a dated snapshot of it), if known."""
    table = PRICES.get(provider, {})
    name = model.rsplit("/", 1)[-1].lower()
    return table.get(name) or table.get(_SNAPSHOT.sub("", name))


def price_for(provider: str, model: str, options: Mapping[str, str]) -> Price | None:
    """The price a model instance uses: options first, else the table (only for the official endpoint)."""
    if "price_in" in options or "price_out" in options:
        prices = (option_float(options, "price_in", 0.0), option_float(options, "price_out", 0.0))
        return prices[0] or 0.0, prices[1] or 0.0
    if options.get("base_url"):
        return None
    return lookup(provider, model)


def cost(price: Price | None, usage: Usage) -> float | None:
    if price is None:
        return None
    return (usage.input_tokens * price[0] + usage.output_tokens * price[1]) / 1_000_000
