"""Cells of tables written by others whose one value holds a structure: options written as one string.

A release may keep a question's options as a list, as JSON text, or as one string in a notation
people write by hand (``A) x B) y``, ``A. x\\nB. y``, ``(a) x; (b) y``, ``A：x B：y``). Each is read
here to ``{label, text}`` options; a value none of these reads is an error the caller locates
(never dropped: an options column that silently reads as no options changes what a model sees).
"""

from __future__ import annotations

import ast
import json

from commet.text import labelled_options

#: full-width colon and parentheses (Chinese and Japanese text) read as their ASCII forms in option labels
_WIDE = str.maketrans({"：": ": ", "（": " (", "）": ") ", "．": ". "})
_NOTATIONS = "A) x B) y, A. x / B. y one per line, (a) x; (b) y, a JSON list or object"


def _structured(text: str) -> object | None:
    """A JSON (or Python literal) list or object written as text, else None."""
    if not text.startswith(("[", "{")):
        return None
    try:
        parsed: object = json.loads(text)
        return parsed
    except ValueError:
        try:
            return ast.literal_eval(text) if len(text) < 100_000 else None
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None


def list_cell(value: object) -> list[object] | None:
    """A cell holding a list: a list, or JSON (or Python literal) text of one; None for anything else."""
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, str) and value.strip().startswith("["):
        text = value.strip()
        try:
            parsed: object = json.loads(text)
        except ValueError:
            try:
                parsed = ast.literal_eval(text) if len(text) < 1_000_000 else None
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                parsed = None
        return list(parsed) if isinstance(parsed, (list, tuple)) else None
    return None


def _option(item: object) -> dict[str, object]:
    if isinstance(item, dict):
        text = item.get("text", item.get("option", item.get("value")))
        label = item.get("label", item.get("key", item.get("id")))
        if not isinstance(text, (str, int, float)) or not str(text).strip():
            raise ValueError(f"option {item!r} has no text (an option is text, or {{label, text}})")
        return {"label": str(label).strip() if label not in (None, "") else None, "text": str(text).strip()}
    if isinstance(item, (str, int, float)) and not isinstance(item, bool) and str(item).strip():
        return {"label": None, "text": str(item).strip()}
    raise ValueError(f"option {item!r} is not text")


def options_cell(value: object) -> list[dict[str, object]] | None:
    """The options a cell holds (``{label, text}`` dicts, in order), None when the cell is empty.

    Reads a list (of text or ``{label, text}``; texts that each open with their label in sequence,
    ``["A. Mia", "B. Noah"]``, are labelled by them), JSON or Python-literal text of a list or a
    ``{label: text}`` object, and one string of labelled options in the common notations
    (labels A, B, C... or a, b, c... or 1, 2, 3..., in sequence). Raises ValueError naming the
    notations for anything else, such as one unlabelled string.
    """
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, str):
        text = value.strip()
        parsed = _structured(text)
        if parsed is None:
            found = labelled_options(text.translate(_WIDE))
            if found is None or found[0]:
                lines = [line.strip() for line in text.splitlines() if line.strip()]
                if len(lines) >= 2 and found is None:
                    return [{"label": None, "text": line} for line in lines]
                raise ValueError(f"cannot read options {text[:60]!r}: write them as {_NOTATIONS}")
            return [{"label": label, "text": body} for label, body in found[1]]
        value = parsed
    if isinstance(value, dict):  # {A: x, B: y}; a struct column gives the labels of other rows as nulls
        options = [_option({"label": label, "text": text}) for label, text in value.items() if text not in (None, "")]
        return options or None
    if isinstance(value, (list, tuple)):
        items = [item for item in value if item not in (None, "")]
        if len(items) >= 2 and all(isinstance(item, str) and "\n" not in item.strip() for item in items):
            # ["A. Mia", "B. Noah"]: each item carries its own label, in sequence, as one string of them would
            found = labelled_options("\n".join(str(item).strip() for item in items).translate(_WIDE))
            if found is not None and not found[0] and len(found[1]) == len(items):
                return [{"label": label, "text": body} for label, body in found[1]]
        return [_option(item) for item in items] or None
    raise ValueError(f"cannot read options of type {type(value).__name__}: write them as {_NOTATIONS}")

