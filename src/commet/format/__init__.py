"""The StoryTurn format: canonical model, pipe import/export, datasets, validation, stats."""

from commet.format.dataset import Dataset, bundled_sample_path, read_storyturns
from commet.format.loading import load_dataset
from commet.format.model import AnswerFeedback, Feedback, StoryTurn, Turn, storyturn_json_schema
from commet.format.pipe import to_pipe, to_pipe_record
from commet.format.problems import FormatError, Problem
from commet.format.stats import DatasetStats, dataset_stats
from commet.format.validate import DatasetRefused, has_errors, load_checked, validate_dataset, validate_path

__all__ = [
    "AnswerFeedback", "Dataset", "DatasetRefused", "DatasetStats", "Feedback", "FormatError", "Problem", "StoryTurn", "Turn",
    "bundled_sample_path", "dataset_stats", "has_errors", "load_checked", "load_dataset", "read_storyturns",
    "storyturn_json_schema", "to_pipe", "to_pipe_record", "validate_dataset", "validate_path",
]
