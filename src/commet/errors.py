"""The root of CoMMET's own errors.

Why: ``except CommetError`` catches every refusal or failure CoMMET raises on purpose (a bad
dataset, spec, setting or store; a call that failed for good), and nothing else, so a program
built on CoMMET tells them from its own bugs. Each family is defined in its layer (``FormatError``
in ``commet.format``, ``ModelSpecError`` in ``commet.models``, ``StoreError`` in ``commet.store``,
...) and keeps the built-in base its callers catch (most are ``ValueError`` too). The tree is
drawn in docs/architecture.md, and ``str()`` of each is one line a command prints as it is.
"""

from __future__ import annotations


class CommetError(Exception):
    """Something CoMMET refuses or could not do, said in one line; every family derives from it."""
