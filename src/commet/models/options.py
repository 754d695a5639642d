"""Numeric spec options (``?timeout=30&rpm=600``), read with an error that names the option."""

from __future__ import annotations

import math
from collections.abc import Mapping

from commet.models.base import ModelSpecError


def option_float(options: Mapping[str, str], key: str, default: float | None) -> float | None:
    """The number in option ``key``, ``default`` when absent or empty; a located error when not a number,
    or not finite, or negative."""
    raw = options.get(key)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ModelSpecError(f"option {key}={raw!r} must be a number") from None
    if not math.isfinite(value) or value < 0:  # every numeric option is a count, a rate, a time or a price
        raise ModelSpecError(f"option {key}={raw!r} must be a finite number, 0 or more")
    return value


def option_int(options: Mapping[str, str], key: str, default: int | None) -> int | None:
    """The whole number in option ``key`` (as :func:`option_float`)."""
    value = option_float(options, key, None if default is None else float(default))
    return None if value is None else int(value)
