"""The dataset a stored run used, found again for the commands that reuse its answers (rejudge, eval --finish,
judges --probe)."""

from typing import TYPE_CHECKING

from commet.errors import CommetError

if TYPE_CHECKING:
    from commet.format.dataset import Dataset
    from commet.store.sqlite import RunRecord


class DatasetNotFound(CommetError, ValueError):
    """The dataset a run used is not where the run recorded it, nor found by its name."""


def dataset_for(source: "RunRecord", dataset: str | None, columns: str | None = None,
                adapter: str | None = None) -> "Dataset":
    """The dataset a run used: ``--dataset`` (read with ``columns``), else where the run recorded reading it (with
    its recorded ``--columns``), its dataset name or the sample, checked by hash; :class:`DatasetNotFound` when
    none is."""
    from commet.format.problems import FormatError
    from commet.sources import load_dataset

    if dataset:
        return load_dataset(dataset, columns=columns, adapter=adapter)
    recorded = source.settings.dataset_path
    read = source.settings.recorded
    candidates = [(recorded, read.dataset_columns, read.dataset_adapter)] if recorded is not None else []
    for candidate, candidate_columns, candidate_adapter in [*candidates, (source.dataset_name, None, None),
                                                            ("sample", None, None)]:
        try:
            data = load_dataset(candidate, columns=candidate_columns, adapter=candidate_adapter)
        except (FormatError, RuntimeError, OSError):
            continue
        if data.hash_matches(source.dataset_hash):
            return data
    raise DatasetNotFound(f"cannot find the dataset run {source.name!r} used ({source.dataset_name!r}); pass it "
                          "with --dataset")
