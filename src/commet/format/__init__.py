"""The StoryTurn format: canonical model, pipe import/export, the dataset, validation, stats.

Every way a file becomes StoryTurns (JSONL and folders, the Hub and ``datasets``, layouts, cards, bounded
readers, importers) is :mod:`commet.sources`, which imports this package; this package never imports it.

Its names are imported when first asked for (:func:`__getattr__`): importing one module of the
package (``commet.format.problems`` for a command's error type) then costs that module alone, not
pydantic and the whole format, which keeps ``commet --version`` and ``--help`` quick.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from commet.lazy import lazy_getattr

if TYPE_CHECKING:
    from commet.format.dataset import Dataset
    from commet.format.model import AnswerFeedback, Feedback, StoryTurn, Turn, storyturn_json_schema
    from commet.format.pipe import to_pipe, to_pipe_record
    from commet.format.problems import FormatError, Problem
    from commet.format.stats import DatasetStats, dataset_stats
    from commet.format.validate import DatasetRefused, has_errors, validate_dataset

#: each public name and the module that defines it
_HOMES = {
    "Dataset": "commet.format.dataset",
    "AnswerFeedback": "commet.format.model",
    "Feedback": "commet.format.model",
    "StoryTurn": "commet.format.model",
    "Turn": "commet.format.model",
    "storyturn_json_schema": "commet.format.model",
    "to_pipe": "commet.format.pipe",
    "to_pipe_record": "commet.format.pipe",
    "FormatError": "commet.format.problems",
    "Problem": "commet.format.problems",
    "DatasetStats": "commet.format.stats",
    "dataset_stats": "commet.format.stats",
    "DatasetRefused": "commet.format.validate",
    "has_errors": "commet.format.validate",
    "validate_dataset": "commet.format.validate",
}


__getattr__ = lazy_getattr(__name__, _HOMES, globals())


__all__ = [
    "AnswerFeedback", "Dataset", "DatasetRefused", "DatasetStats", "Feedback", "FormatError", "Problem", "StoryTurn", "Turn",
    "dataset_stats", "has_errors", "storyturn_json_schema", "to_pipe", "to_pipe_record", "validate_dataset",
]
