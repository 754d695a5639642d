"""The installed package's version, recorded with every run (its own module: the engine needs it
without importing the top-level API)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("commet-bench")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0"
