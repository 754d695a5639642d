"""``commet export``: one JSON line per turn, exactly as sent and as judged."""

from __future__ import annotations

import json
from pathlib import Path

from commet.store.sqlite import RunRecord, Store


def turn_records(store: Store, run: RunRecord) -> list[dict[str, object]]:
    records = []
    for row in store.turn_rows(run.id):
        records.append({
            "story_id": row.story_id,
            "turn": row.turn,
            "prompt": row.prompt,
            "images": [image["id"] for image in row.images],
            "feedback_kind": row.feedback_kind,
            "response": row.response,
            "expected": row.expected,
            "correct": row.correct,
            "branch": row.branch,
            "judge": row.judge,
            "rationale": row.rationale,
            "error": row.error,
        })
    return records


def export_run(store: Store, run: RunRecord, out: Path) -> int:
    records = turn_records(store, run)
    with Path(out).open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return len(records)
