"""The package's version, recorded with every run (its own module: the engine needs it without
importing the top-level API).

The one place it is written: the build reads it from here (pyproject.toml's ``[tool.hatch.version]``),
and the program reads it as a constant, without ``importlib.metadata``'s search of the installed
distributions at every start."""

__version__ = "0.1.0"
