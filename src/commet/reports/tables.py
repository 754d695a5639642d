"""The accuracy table of ``commet report``: runs side by side, as rich, Markdown or CSV."""

from __future__ import annotations

import csv
import io

from commet.reports.metrics import CONTROL_QUESTIONS_COLUMN, SUBSETS, RunMetrics, Tally


def _pct(tally: Tally | None, counts: bool = True) -> str:
    if tally is None or tally.accuracy is None:
        return "-"
    return f"{tally.accuracy:.2f} ({tally.correct}/{tally.total})" if counts else f"{tally.accuracy:.1f}"


def accuracy_table(metrics: list[RunMetrics], *, counts: bool = True) -> tuple[list[str], list[list[str]]]:
    """Header and rows: story accuracy overall, per category and subset; question accuracy (test questions, and
    the comprehension control questions apart where a run has them marked); counts.

    ``counts=False`` gives bare percentages (the terminal view; the story count is its own column).
    """
    categories: list[str] = []
    for m in metrics:
        categories.extend(c for c in m.categories if c not in categories)
    controls = any(m.control_questions.total for m in metrics)
    header = ["Run", "Model", "Images", "Feedback", "Stories", "Overall", *categories, *(s.title() for s in SUBSETS),
              "Questions", *([CONTROL_QUESTIONS_COLUMN] if controls else []), "Undecided", "Failed"]
    rows = []
    for m in metrics:
        settings = m.run.settings
        rows.append([
            m.run.name, m.run.model, settings.images_label, str(settings.feedback or ""),
            str(m.stories.total), _pct(m.stories, counts), *(_pct(m.per_category.get(c), counts) for c in categories),
            *(_pct(m.per_subset.get(s), counts) for s in SUBSETS), _pct(m.questions, counts),
            *([_pct(m.control_questions, counts)] if controls else []),
            f"{m.undecided_turns} turns / {m.stories_with_undecided} stories" if counts else str(m.undecided_turns),
            f"{m.failed_turns} turns / {m.failed_stories} stories" if counts else str(m.failed_turns),
        ])
    return header, rows


def to_markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines.extend("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows)
    return "\n".join(lines) + "\n"


def to_csv(header: list[str], rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()
