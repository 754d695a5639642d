"""Two reviewers editing one item: edits to different fields merge, only one field changed by both asks.

A form carries the revision it showed. When the item moved on before it was saved, each field
the form sends is compared three ways: the value the reviewer saw (at that revision), the value
now, and the value sent. A field only the reviewer changed takes the sent value; a field only
others changed keeps theirs; a field both changed to the same text is settled; a field both
changed differently is a conflict, shown word by word, for the reviewer to decide.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Literal

from commet.format.model import Turn
from commet.format.pipe import format_feedback

#: a field of an item: (turn index or None for the item itself, field name)
FieldKey = tuple[int | None, str]
#: an edit as the store keeps it (turn, field, old, new, author, revision)
EditRow = Mapping[str, object] | sqlite3.Row
Piece = tuple[Literal["same", "del", "ins"], str]

_WORDS = re.compile(r"\s+|[^\s]+")


def word_diff(old: str, new: str) -> list[Piece]:
    """``old`` to ``new`` as pieces of text kept, removed and inserted, word by word (spaces kept as they are;
    a lone space between two changed words belongs to the change, so "The tap" to "A sponge" is one change)."""
    before, after = _WORDS.findall(old), _WORDS.findall(new)
    spans: list[tuple[str, str, str]] = []  # (kept or changed, old text, new text)
    for op, i1, i2, j1, j2 in SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        removed, inserted = "".join(before[i1:i2]), "".join(after[j1:j2])
        if op == "equal" and spans and spans[-1][0] == "changed" and removed.isspace():
            spans.append(("space", removed, inserted))
        elif op == "equal":
            spans.append(("kept", removed, inserted))
        elif spans and spans[-1][0] == "space" and len(spans) > 1 and spans[-2][0] == "changed":
            space = spans.pop()
            _, old_text, new_text = spans.pop()
            spans.append(("changed", old_text + space[1] + removed, new_text + space[2] + inserted))
        elif spans and spans[-1][0] == "changed":
            _, old_text, new_text = spans.pop()
            spans.append(("changed", old_text + removed, new_text + inserted))
        else:
            spans.append(("changed", removed, inserted))
    pieces: list[Piece] = []
    for kind, old_text, new_text in spans:
        if kind != "changed":
            pieces.append(("same", old_text))
            continue
        if old_text:
            pieces.append(("del", old_text))
        if new_text:
            pieces.append(("ins", new_text))
    return pieces


@dataclass(frozen=True)
class FieldMerge:
    """One field as the reviewer saw it, as it is now, and as the reviewer sent it."""

    key: FieldKey
    base: str
    current: str
    sent: str

    @property
    def conflict(self) -> bool:
        """Both sides changed the field, to different text."""
        return self.base != self.sent and self.base != self.current and self.sent != self.current

    @property
    def value(self) -> str:
        """What the merge keeps (for a conflict: the reviewer's text, for them to confirm or edit)."""
        return self.sent if self.sent != self.base else self.current

    @property
    def label(self) -> str:
        turn, name = self.key
        return name.replace("_", " ") if turn is None else f"Turn {turn + 1} {name}"


def merge_fields(base: Mapping[FieldKey, str], current: Mapping[FieldKey, str],
                 sent: Mapping[FieldKey, str]) -> list[FieldMerge]:
    """Every sent field merged three ways (see :class:`FieldMerge`)."""
    return [FieldMerge(key, base.get(key, current[key]), current[key], value) for key, value in sent.items()]


def values_at(current: Mapping[FieldKey, str], edits_since: Sequence[EditRow]) -> dict[FieldKey, str]:
    """The fields' values at a revision: for each, the old value of the first edit made since, else the current
    value (``edits_since``: the item's edit rows after that revision, oldest first, with turn, field and old)."""
    found = dict(current)
    replaced: set[FieldKey] = set()
    for row in edits_since:
        turn = row["turn"]
        key: FieldKey = (turn if isinstance(turn, int) else None, str(row["field"]))
        if key in found and key not in replaced:
            found[key] = str(row["old"])
            replaced.add(key)
    return found


#: the fields of a turn the edit form sends, in its order
TURN_FIELDS = ("story", "feedback", "question", "answers")


def turn_values(turn: Turn, k: int) -> dict[FieldKey, str]:
    """Turn ``k``'s fields as the edit form writes them (feedback in its pipe form, one answer a line)."""
    values = (turn.story, format_feedback(turn.feedback), turn.question, "\n".join(turn.answers))
    return {(k, name): value for name, value in zip(TURN_FIELDS, values, strict=True)}


def merged_with(edits_since: Sequence[EditRow], kept: list[FieldMerge]) -> str:
    """A sentence naming the edits made since the form's revision that a save kept (empty when none)."""
    sent = {merge.key for merge in kept if merge.sent != merge.base}
    others = []
    for row in edits_since:
        turn = row["turn"]
        key: FieldKey = (turn if isinstance(turn, int) else None, str(row["field"]))
        if key not in sent:
            label = FieldMerge(key, "", "", "").label
            others.append(f"{row['author']}'s change to {label[0].lower() + label[1:]} (revision {row['revision']})")
    return f" Merged with {', '.join(dict.fromkeys(others))}, saved since you opened it." if others else ""
