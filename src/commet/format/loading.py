"""Loading a dataset from any of its forms: a folder, a canonical or pipe file, a Hugging Face
folder or parquet file, or ``"sample"``. Here because it needs both the file readers
(:mod:`commet.format.dataset`) and the Hugging Face reader (:mod:`commet.format.hf`), which
itself builds a :class:`~commet.format.dataset.Dataset`.
"""

from __future__ import annotations

import os
from pathlib import Path

from commet.format.dataset import (
    METADATA_FILE,
    STORYTURNS_FILE,
    Dataset,
    _read_metadata,
    bundled_sample_path,
    read_storyturns,
)
from commet.format.hf import is_hf_folder
from commet.format.problems import FormatError, Problem

HF_MARKERS = ("dataset_info.json", "state.json", "dataset_dict.json")


def _load_hf_located(path: Path) -> Dataset:
    """The Hugging Face loader, with anything it raises about the folder turned into a located problem."""
    from commet.format.hf import load_hf

    try:
        return load_hf(path)
    except FormatError:
        raise
    except RuntimeError as exc:  # the optional 'datasets' extra is missing
        raise FormatError([Problem(str(path), None, None, None, None, str(exc))]) from None
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError, NotImplementedError,
            RecursionError) as exc:
        detail = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
        raise FormatError([Problem(str(path), None, None, None, None, "cannot read this Hugging Face dataset "
                                                                      f"folder: {type(exc).__name__}: {detail}")]) from None


def load_dataset(path: str | Path) -> Dataset:
    """Load a dataset from a folder, a file, a Hugging Face folder, or ``"sample"``."""
    if str(path) == "sample":
        path = bundled_sample_path()
    path = Path(path)
    try:
        is_dir = path.is_dir()
        exists = is_dir or os.path.lexists(path)
    except (OSError, ValueError) as exc:
        raise FormatError([Problem(str(path), None, None, None, None, f"cannot use this path: {exc}")]) from None
    if not exists:
        raise FormatError([Problem(str(path), None, None, None, None, "no such file or folder")])
    if is_dir and os.path.lexists(path / STORYTURNS_FILE):
        dataset = read_storyturns(path / STORYTURNS_FILE)
        dataset.root = path
        dataset.name = path.name
        meta_path = path / METADATA_FILE
        if os.path.lexists(meta_path):
            _read_metadata(dataset, meta_path)
        return dataset
    if is_dir and (any((path / marker).is_file() for marker in HF_MARKERS) or is_hf_folder(path)) or \
            not is_dir and path.suffix.lower() == ".parquet":
        return _load_hf_located(path)
    if is_dir:
        raise FormatError([Problem(str(path), None, None, None, None,
                                   f"not a dataset folder: no {STORYTURNS_FILE}, no Hugging Face dataset files "
                                   "(state.json, .parquet)")])
    return read_storyturns(path)
