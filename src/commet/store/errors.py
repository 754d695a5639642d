"""The store's one error family: a file CoMMET cannot read as its results store."""

from __future__ import annotations

from commet.errors import CommetError


class StoreError(CommetError, ValueError):
    """A results file that is not a CoMMET store, comes from a newer version, or holds damaged rows.

    The message names the file (and the run and field where one is to blame); commands print it
    as one line and exit 2.
    """
