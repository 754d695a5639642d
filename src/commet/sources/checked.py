"""A dataset loaded and validated, exactly as ``commet validate`` does it: what every command that runs on a
dataset calls (:func:`load_checked`). Loading is this package's (:func:`commet.sources.loading.load_dataset`);
the rules are the format's (:func:`commet.format.validate.validate_dataset`).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from commet.format.dataset import Dataset
from commet.format.problems import FormatError, Problem
from commet.format.validate import DatasetRefused, has_errors, validate_and_hash, validate_dataset
from commet.sources.loading import load_dataset


def load_and_validate(path: str | Path, columns: str | None = None, *, strict: bool = False,
                      adapter: str | None = None, decode_pictures: bool = False) -> tuple[Dataset | None, list[Problem]]:
    """The dataset (None when it cannot be read) and every problem of it, as ``commet validate`` finds them
    (``decode_pictures``: every picture's pixels decoded too, as ``commet validate`` does by default)."""
    return _load_and_validate(path, columns, strict=strict, adapter=adapter, decode_pictures=decode_pictures)


def _cache_arguments(strict: bool, decode_pictures: bool) -> dict[str, Any]:
    """How the validation cache loads and checks a dataset: one set for the load and for its check ahead (one key)."""
    return {"strict": strict, "decode": decode_pictures, "load": load_dataset, "read_error": FormatError,
            "validate": functools.partial(validate_and_hash, strict=strict, decode_pictures=decode_pictures)}


def _load_and_validate(path: str | Path, columns: str | None = None, *, strict: bool = False,
                       adapter: str | None = None, decode_pictures: bool = False) -> tuple[Dataset | None, list[Problem]]:
    """:func:`_loaded_and_validated`; a dataset with an error leaves nothing in ``datasets``' cache (what its load
    prepared there is removed: a refused dataset writes nothing)."""
    dataset, problems = _loaded_and_validated(path, columns, strict=strict, adapter=adapter,
                                              decode_pictures=decode_pictures)
    if dataset is not None and dataset.prepared and has_errors(problems):
        from commet.sources.table_files import discard_prepared

        discard_prepared(dataset.prepared)
        dataset.prepared = ()
    return dataset, problems


def _loaded_and_validated(path: str | Path, columns: str | None = None, *, strict: bool = False,
                          adapter: str | None = None, decode_pictures: bool = False
                          ) -> tuple[Dataset | None, list[Problem]]:
    if columns is None and adapter is None:  # a dataset validated before on the same content: from the cache
        from commet.sources.validation_cache import cached_load_and_validate

        cached = cached_load_and_validate(path, **_cache_arguments(strict, decode_pictures))
        if cached is not None:
            return cached
    try:
        dataset = load_dataset(path, columns=columns, adapter=adapter)
    except FormatError as exc:
        return None, exc.problems
    return dataset, validate_dataset(dataset, strict=strict, decode_pictures=decode_pictures)


def validate_path(path: str | Path, columns: str | None = None, *, strict: bool = False,
                  adapter: str | None = None, decode_pictures: bool = False) -> list[Problem]:
    """Load and validate; a file that cannot be read yields its located problems instead of raising.

    ``columns``: the ``--columns`` mapping of a table's columns (:mod:`commet.sources.columns`). ``strict``
    holds a dataset to what its own authors must meet: an answer found verbatim in its own story is an
    error (by default a warning: data a user imports was not written by them). ``adapter``: a
    ``FILE.py:FUNCTION`` that makes the StoryTurns of a table (:mod:`commet.sources.adapters`).
    ``decode_pictures``: decode every picture's pixels too (a damaged stream inside a whole file).
    """
    return _load_and_validate(path, columns, strict=strict, adapter=adapter, decode_pictures=decode_pictures)[1]


def load_checked(path: str | Path, *, force: bool = False, columns: str | None = None,
                 adapter: str | None = None) -> tuple[Dataset, list[Problem]]:
    """Load and validate exactly as ``commet validate``; return the dataset and its warnings.

    Raises :class:`DatasetRefused` with every problem when the dataset has an error, or a warning
    that gates (every warning but a possible answer leak) and ``force`` is false. ``force`` never lets
    an error through.
    """
    dataset, problems = _load_and_validate(path, columns, adapter=adapter)
    if dataset is None or has_errors(problems) or (any(p.gates for p in problems) and not force):
        raise DatasetRefused(problems, forced=force)
    return dataset, problems


@contextlib.contextmanager
def check_ahead(path: str | Path, *, columns: str | None = None, adapter: str | None = None) -> Iterator[None]:
    """:func:`load_checked`'s first load of a small dataset, begun in a forked child while the block runs (the caller
    builds its models meanwhile), and waited for when the block ends: the :func:`load_checked` after it reads what
    the child kept in the validation cache (:func:`commet.sources.validation_cache.checked_ahead`). A block left by
    an error stops the child. Where nothing can be begun, the block just runs."""
    ahead = None
    if columns is None and adapter is None:
        from commet.sources.validation_cache import checked_ahead

        ahead = checked_ahead(path, **_cache_arguments(strict=False, decode_pictures=False))
    if ahead is None:
        yield
        return
    with ahead:
        yield
        ahead.outcome()
