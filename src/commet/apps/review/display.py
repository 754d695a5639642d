"""How the review pages show an item: its id in a URL, its feedback lines."""

from __future__ import annotations

from urllib.parse import quote

from commet.format.model import Feedback


def item_segment(item_id: object) -> str:
    """An item id as one URL path segment (or query value): every character but letters, digits and ``_.-~``
    percent-encoded, so that ids holding ``?``, ``#``, ``%``, ``&`` or spaces still name their item."""
    return quote(str(item_id), safe="")


def feedback_lines(feedback: Feedback | None) -> list[tuple[str, str]]:
    """(condition, text) pairs for display."""
    if feedback is None:
        return []
    lines = [("Always", feedback.always)] if feedback.always else []
    if feedback.right is not None:
        lines.append(("If right", feedback.right))
    if feedback.wrong is not None:
        lines.append(("If wrong", feedback.wrong))
    lines += [(f"If the previous answer is {e.answer}", e.text) for e in feedback.by_answer]
    return lines
