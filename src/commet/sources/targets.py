"""The formats ``commet convert`` writes: their own module, so that the ``commet`` program reads the
option's choices without importing the format (``commet --help`` stays quick)."""

from __future__ import annotations

from enum import Enum


class ConvertTarget(str, Enum):
    jsonl = "jsonl"
    pipe = "pipe"
    hf = "hf"
