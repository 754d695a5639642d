"""Adapters: a Python function that makes StoryTurns of a table no column mapping can express.

``--adapter FILE.py:FUNCTION`` (and ``adapter=`` in the Python API) names a function in the
ecosystem's own convention, like inspect_ai's ``record_to_sample`` or lm-eval's ``process_docs``:

* a **record adapter** (its first parameter named ``record``, ``row``, ``doc``, ``example`` or
  ``sample``) is called once per row and returns what that row makes: one StoryTurn, a list of them,
  or None (a row that makes none; the ``read from`` line counts them);
* a **table adapter** (its first parameter named ``rows``, ``records``, ``table``, ``docs`` or
  ``dataset``) is called once per split with every row (a list of dicts) and returns the StoryTurns.

Either may take ``split`` and ``config`` keyword parameters (the table's names). A row is a dict
of its cells as ``datasets`` gives them, pictures as ``{"bytes": ..., "path": ...}``. A StoryTurn
is a :class:`~commet.format.model.StoryTurn`, a dict in the canonical form (``docs/storyturn.md``),
or a pipe record (``{"storyturn": ["story | feedback | question | image | answer", ...], ...}``);
a turn's ``image`` may be a picture cell itself (``row["Image_1"]``), kept under its file name, and
a returned dict may carry ``pictures: {id: bytes or picture cell}`` for the ids its turns name.
What it returns is validated as any dataset is; its source text is part of the dataset's content
hash and is recorded with every run.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from commet.errors import CommetError
from commet.format.model import StoryTurn
from commet.format.problems import FormatError, Problem

if TYPE_CHECKING:
    from commet.format.dataset import Dataset

RECORD_NAMES = ("record", "row", "doc", "example", "sample")
TABLE_NAMES = ("rows", "records", "table", "docs", "dataset")
MAX_ADAPTER_BYTES = 1024 * 1024


class AdapterError(CommetError, ValueError):
    """An adapter that cannot be used: a file that is not there, no such function, a signature of neither kind."""


@dataclass(frozen=True)
class Adapter:
    """A loaded adapter: where it is, its source text (hashed and recorded) and how it is called."""

    spec: str  # FILE.py:FUNCTION as given, the file made absolute
    source: str
    function: Callable[..., object]
    whole_table: bool
    keywords: tuple[str, ...]  # of "split", "config": those it takes

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.source.encode("utf-8")).hexdigest()

    def describe(self) -> str:
        kind = "a table adapter (every row of a split)" if self.whole_table else "a record adapter (one row)"
        return f"adapter {self.spec}, {kind}, source sha256 {self.digest[:12]}"


def load_adapter(spec: str) -> Adapter:
    """The adapter ``FILE.py:FUNCTION`` names; :class:`AdapterError` with one line saying what is wrong."""
    file_text, colon, name = spec.rpartition(":")
    if not colon or not file_text or not name.isidentifier():
        raise AdapterError(f"--adapter: {spec!r} is not FILE.py:FUNCTION")
    path = Path(file_text).expanduser()
    if path.suffix != ".py" or not path.is_file():
        raise AdapterError(f"--adapter: no Python file {str(path)!r}")
    if path.stat().st_size > MAX_ADAPTER_BYTES:
        raise AdapterError(f"--adapter: {path} is larger than {MAX_ADAPTER_BYTES // 1024} KiB")
    path = path.resolve()
    source = path.read_text(encoding="utf-8")
    module_name = f"commet_adapter_{hashlib.sha256((str(path) + source).encode()).hexdigest()[:16]}"
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    if module_spec is None or module_spec.loader is None:
        raise AdapterError(f"--adapter: cannot load {path}")
    module = importlib.util.module_from_spec(module_spec)
    try:
        sys.modules[module_name] = module
        module_spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - the user's code: any error is one line
        sys.modules.pop(module_name, None)
        raise AdapterError(f"--adapter: {path} raised {type(exc).__name__} on import: {exc}") from None
    function = getattr(module, name, None)
    if not callable(function):
        raise AdapterError(f"--adapter: {path} has no function {name!r}")
    parameters = list(inspect.signature(function).parameters.values())
    first = parameters[0].name if parameters else ""
    if first not in RECORD_NAMES + TABLE_NAMES:
        raise AdapterError(f"--adapter: the first parameter of {name} ({first or 'none'}) says neither a record "
                           f"({', '.join(RECORD_NAMES)}) nor a whole table ({', '.join(TABLE_NAMES)})")
    keywords = tuple(p.name for p in parameters[1:] if p.name in ("split", "config"))
    return Adapter(f"{path}:{name}", source, function, first in TABLE_NAMES, keywords)


def _picture(value: object) -> tuple[str | None, bytes] | None:
    """A picture cell (``{bytes, path}``) or bytes as (file name, bytes); None for anything else."""
    if isinstance(value, (bytes, bytearray)):
        return None, bytes(value)
    if isinstance(value, dict) and isinstance(value.get("bytes"), (bytes, bytearray)):
        path = value.get("path")
        return (PurePosixPath(str(path).replace("\\", "/")).name if path else None), bytes(value["bytes"])
    return None


def _with_pictures(value: dict[str, object], dataset: Dataset, index: int) -> dict[str, object]:
    """A returned dict with its picture cells kept in ``dataset.images`` and replaced by their ids."""
    value = dict(value)
    pictures = value.pop("pictures", None)
    if isinstance(pictures, dict):
        for image_id, cell in pictures.items():
            picture = _picture(cell)
            if picture is None:
                raise ValueError(f"pictures[{image_id!r}] is not a picture (bytes, or {{bytes, path}})")
            dataset.images[str(image_id)] = picture[1]
    turns = value.get("turns")
    if isinstance(turns, list):
        story = str(value.get("id") or f"{dataset.name}-{index:04d}")
        fixed = []
        for k, turn in enumerate(turns):
            picture = _picture(turn.get("image")) if isinstance(turn, dict) else None
            if picture is not None:
                image_id = picture[0] or f"{story}-{k}.png"
                if dataset.images.get(image_id, picture[1]) != picture[1]:
                    image_id = f"{story}-{k}{PurePosixPath(image_id).suffix or '.png'}"
                dataset.images[image_id] = picture[1]
                turn = {**turn, "image": image_id}
            fixed.append(turn)
        value["turns"] = fixed
    return value


def _storyturns(result: object) -> list[object]:
    if result is None:
        return []
    if isinstance(result, (StoryTurn, dict)):
        return [result]
    if isinstance(result, (list, tuple)) or inspect.isgenerator(result):
        return list(result)
    raise ValueError(f"returned {type(result).__name__}: an adapter returns a StoryTurn, a dict, a list of them "
                     "or None")


@dataclass(frozen=True)
class Rows:
    """What an adapter is given: a table's rows, where they are (for located errors), its split and config."""

    where: str
    rows: list[dict[str, object]]
    split: str | None = None
    config: str | None = None


def apply_adapter(adapter: Adapter, table: Rows, dataset: Dataset, name: str,
                  read_picture: Callable[[str], bytes | None]) -> int:
    """Add the StoryTurns ``adapter`` makes of ``table`` to ``dataset``; returns the rows that made none
    (``name`` makes default ids; ``read_picture`` finds a picture a turn names by id).

    Every StoryTurn is validated as a dataset file's records are; an exception in the adapter, or what it
    returns that is no StoryTurn, is a located error naming the row (for a record adapter).
    """
    from commet.format.origin import RowsRead
    from commet.sources.jsonl import _record_storyturn

    keywords = {k: getattr(table, k) for k in adapter.keywords}
    calls: list[tuple[int | None, object]] = [(None, table.rows)] if adapter.whole_table else \
        [(index + 1, row) for index, row in enumerate(table.rows)]
    empty = 0
    for line, argument in calls:
        def fail(message: str, story: str | None = None, at: int | None = line) -> FormatError:
            return FormatError([Problem(table.where, at, story, None, None, f"{adapter.spec}: {message}")])

        try:
            made = _storyturns(adapter.function(argument, **keywords))
        except ValueError as exc:
            raise fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
        except Exception as exc:  # noqa: BLE001 - the user's code: any error is one located line
            raise fail(f"raised {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
        empty += not made
        for position, value in enumerate(made):
            at = line if line is not None else position + 1
            default_id = f"{name}-{len(dataset.storyturns) + 1:04d}"
            if isinstance(value, StoryTurn):
                value = value.model_dump()
            if not isinstance(value, dict):
                raise fail(f"returned {type(value).__name__} where a StoryTurn was expected", at=at)
            try:
                value = _with_pictures(value, dataset, len(dataset.storyturns) + 1)
            except ValueError as exc:
                story = value.get("id")
                raise fail(str(exc), story if isinstance(story, str) else None, at) from None
            st, warnings = _record_storyturn(value, file=table.where, line=at, default_id=default_id)
            for image_id in st.images:  # named by id: from the data's folder or a pictures config
                if image_id not in dataset.images and (data := read_picture(image_id)) is not None:
                    dataset.images[image_id] = data
            dataset.warnings.extend(warnings)
            dataset.storyturns.append(st)
            dataset.lines.setdefault(st.id, at)
            dataset.line_list.append(at)
            rows = (line,) if line is not None else ()
            dataset.rows_read.append(RowsRead(table.where, st.id, tuple(rows for _ in st.turns)))
    return empty
