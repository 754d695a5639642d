"""CoMMET: multi-turn, multimodal Theory of Mind evaluation (StoryTurn format, engine, judges, reports)."""

from importlib.metadata import PackageNotFoundError, version

from commet.format import Dataset, Feedback, FormatError, StoryTurn, Turn, load_dataset, validate_dataset

try:
    __version__ = version("commet-bench")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0"

__all__ = ["Dataset", "Feedback", "FormatError", "StoryTurn", "Turn", "__version__", "load_dataset",
           "validate_dataset"]
