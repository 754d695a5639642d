"""Sources: everything that turns files into StoryTurns (and StoryTurns back into files of other forms).

The walk from a dataset path to StoryTurns reads top to bottom:

- :mod:`~commet.sources.checked` ``load_checked``: load, then validate with the format's rules (every command
  that runs on a dataset); ``validate_path`` and ``load_and_validate`` are ``commet validate``'s.
- :mod:`~commet.sources.loading` ``load_dataset``: the one entry point; it tells the forms apart and calls
  the reader of each:
  - :mod:`~commet.sources.jsonl`: canonical and pipe files of StoryTurns, ``dataset.json``, the ``sample``;
  - :mod:`~commet.sources.hf`: Hugging Face data in CoMMET's own layout (pyarrow alone), and ``save_hf``;
  - :mod:`~commet.sources.hub`: a Hub dataset by name, or any other table (parquet, JSON lines, CSV, an image
    folder) through ``datasets``, checked first by :mod:`~commet.sources.folders` and :mod:`~commet.sources.card`;
  - whose rows become StoryTurns through :mod:`~commet.sources.layouts` (the layouts: :mod:`~commet.sources.table`,
    :mod:`~commet.sources.turn_rows`, :mod:`~commet.sources.story_rows`, :mod:`~commet.sources.chat`,
    :mod:`~commet.sources.picture_tables`; the mapping: :mod:`~commet.sources.columns`, :mod:`~commet.sources.cells`)
    or a user's :mod:`~commet.sources.adapters`.
- Under them all, the bounded readers: :mod:`~commet.sources.bounded` (regular files, sizes, JSON limits),
  :mod:`~commet.sources.inputs` (every other input file as located refusals) and
  :mod:`~commet.sources.picture_files` (a dataset folder's pictures, the format's
  :class:`~commet.format.dataset.PictureFolder`).

Beside the walk: :mod:`~commet.sources.importers` (benchmarks' own files to StoryTurns),
:mod:`~commet.sources.convert` (``commet convert``) and :mod:`~commet.sources.explain` (``commet stats --explain``).
This package imports :mod:`commet.format`; the format never imports it. Names are imported on first use, as
the format's are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from commet.lazy import lazy_getattr

if TYPE_CHECKING:
    from commet.sources.checked import load_and_validate, load_checked, validate_path
    from commet.sources.jsonl import bundled_sample_path, read_storyturns
    from commet.sources.loading import load_dataset

#: each public name and the module that defines it
_HOMES = {
    "load_and_validate": "commet.sources.checked",
    "load_checked": "commet.sources.checked",
    "validate_path": "commet.sources.checked",
    "bundled_sample_path": "commet.sources.jsonl",
    "read_storyturns": "commet.sources.jsonl",
    "load_dataset": "commet.sources.loading",
}


__getattr__ = lazy_getattr(__name__, _HOMES, globals())


__all__ = [
    "bundled_sample_path", "load_and_validate", "load_checked", "load_dataset", "read_storyturns", "validate_path",
]
