"""Short run ids, and finding a run by what a user types: its name, its short id, or a unique prefix.

A run's name says what it is (model, dataset, conditions, a hash of the settings) and is long; its
short id is the first characters of the SHA-256 of that name, like a commit's short hash: the same
name always gives the same id, in every store and on every machine. Ids are shown with
:data:`SHORT_ID_LENGTH` characters, more where two runs of one store would share them.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar

from commet.store.errors import StoreError


class Named(Protocol):
    """What finding a run needs of a run record: its name."""

    @property
    def name(self) -> str: ...


RunRecord = TypeVar("RunRecord", bound=Named)

#: characters of a short id as shown (git's default)
SHORT_ID_LENGTH = 7
#: the fewest characters of an id accepted as a prefix (fewer match too many runs to be meant)
MIN_PREFIX = 4
_HEX = frozenset("0123456789abcdef")


class RunLookupError(StoreError, KeyError):
    """No run, or several, answer to what was typed; the message says which and how to name one.

    A ``KeyError`` too (what looking a run up by name raised before short ids), printed without its quotes.
    """

    __str__ = Exception.__str__


def full_id(name: str) -> str:
    """The whole id of the run called ``name`` (64 hex characters)."""
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()


def short_ids(names: Iterable[str]) -> dict[str, str]:
    """Each name's short id: :data:`SHORT_ID_LENGTH` characters, more where names would share them."""
    ids = {name: full_id(name) for name in names}
    length = SHORT_ID_LENGTH
    while len({digest[:length] for digest in ids.values()}) < len(ids) and length < 64:
        length += 1
    return {name: digest[:length] for name, digest in ids.items()}


def find_run(runs: Sequence[RunRecord], wanted: str, *, where: object) -> RunRecord:
    """The run ``wanted`` names among ``runs`` (those of the store at ``where``).

    In this order: the exact name; the start of a short id (at least :data:`MIN_PREFIX` hex
    characters); the start of a name. Anything else, or what several runs answer to, raises
    :class:`RunLookupError` listing candidates (with their ids) or the nearest names.
    """
    for run in runs:
        if run.name == wanted:
            return run
    typed = wanted.strip()
    if len(typed) >= MIN_PREFIX and set(typed.lower()) <= _HEX:
        by_id = [run for run in runs if full_id(run.name).startswith(typed.lower())]
        if len(by_id) == 1:
            return by_id[0]
        if by_id:
            raise RunLookupError(_ambiguous(wanted, by_id, where))
    by_name = [run for run in runs if typed and run.name.startswith(typed)]
    if len(by_name) == 1:
        return by_name[0]
    if by_name:
        raise RunLookupError(_ambiguous(wanted, by_name, where))
    raise RunLookupError(_unknown(wanted, runs, where))


def _listed(runs: Sequence[Named], most: int = 5) -> str:
    ids = short_ids(run.name for run in runs)
    shown = "; ".join(f"{ids[run.name]} {run.name}" for run in runs[:most])
    return shown + (f"; and {len(runs) - most} more" if len(runs) > most else "")


def _ambiguous(wanted: str, runs: Sequence[Named], where: object) -> str:
    return (f"{len(runs)} runs in {where} start with {_shown(wanted)}: {_listed(runs)}; "
            "give more of the id or the name (`commet runs` lists them)")


def _unknown(wanted: str, runs: Sequence[Named], where: object) -> str:
    if not runs:
        return f"no run named {_shown(wanted)} in {where}: it holds no runs"
    names = [run.name for run in runs]
    close = difflib.get_close_matches(wanted, names, n=3, cutoff=0.5)
    # a model spec alone ("baseline:random-option") is the start of its runs' names: offer those
    close += [name for name in names if wanted and wanted in name and name not in close][: 3 - len(close)]
    hint = f"; did you mean {_listed([run for run in runs if run.name in close])}?" if close else ""
    return f"no run named {_shown(wanted)} in {where}{hint} (`commet runs` lists them, with short ids)"


def _shown(text: str, most: int = 120) -> str:
    return repr(text if len(text) <= most else text[: most - 1] + "…")
