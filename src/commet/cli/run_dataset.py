"""The dataset a stored run used, found again for the commands that reuse its answers (rejudge, eval --finish,
judges --probe)."""

from typing import TYPE_CHECKING

from commet.errors import CommetError

if TYPE_CHECKING:
    from commet.format.dataset import Dataset
    from commet.store.sqlite import RunRecord


class DatasetNotFound(CommetError, ValueError):
    """The dataset a run used is not where the run recorded it, nor found by its name."""


def dataset_for(source: "RunRecord", dataset: str | None) -> "Dataset":
    """The dataset a run used: ``--dataset``, else where the run read it from, its name or the sample, checked by
    hash; :class:`DatasetNotFound` when none is."""
    from commet.format import load_dataset
    from commet.format.problems import FormatError

    if dataset:
        return load_dataset(dataset)
    recorded = source.settings.stored.get("dataset_path")
    for candidate in ([recorded] if isinstance(recorded, str) else []) + [source.dataset_name, "sample"]:
        try:
            data = load_dataset(candidate)
        except (FormatError, RuntimeError, OSError):
            continue
        if data.hash_matches(source.dataset_hash):
            return data
    raise DatasetNotFound(f"cannot find the dataset run {source.name!r} used ({source.dataset_name!r}); pass it "
                          "with --dataset")
