"""What leaves the review store: the final items as a validated dataset folder, and spreadsheets of the
review (formula-safe; for a reviewer, without what they may not see yet).
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from pathlib import Path

from commet.apps.review.db.items import ReviewItems
from commet.apps.review.db.records import ReviewError
from commet.apps.review.db.statistics import ReviewStatistics
from commet.apps.web import csv_safe
from commet.format.dataset import Dataset
from commet.format.problems import Problem
from commet.format.validate import validate_dataset
from commet.sources.loading import load_dataset


class ReviewExports(ReviewStatistics, ReviewItems):
    """The exports of a review store (a part of ``ReviewDB``)."""

    # ------------------------------------------------------------------ export
    def export(self, out: str | Path, *, dataset_root: str | Path | None = None) -> tuple[Dataset, list[Problem]]:
        """Write the final items (with their current pictures) as a dataset folder and validate it."""
        root = Path(dataset_root or self.meta("dataset_root") or ".")
        if Path(out).resolve() == root.resolve():  # an export replaces its folder's dataset whole
            raise ReviewError(f"{out}: is the dataset under review; export to another folder (writing there would "
                              "replace the items not final yet, and their pictures)")
        source = load_dataset(root) if (root / "storyturns.jsonl").is_file() else Dataset(storyturns=[], root=root)
        exported = Dataset(storyturns=[], name=self.meta("dataset_name") or "reviewed",
                           version=self.meta("dataset_version") or "0", licence=self.meta("dataset_licence") or "unspecified",
                           description=((self.meta("dataset_description") or "") + " Expert-reviewed with commet review.").strip())
        statuses = self.statuses()
        for item_id in self.item_ids():
            status = statuses[item_id]
            if not status.final:
                continue
            st, revision = self.item(item_id)
            st.meta = {**st.meta, "review": {"revision": revision, "reviewers": len(status.accepts)}}
            for image_id, picture in self.current_pictures(item_id).items():
                data = self.picture_data(picture.id) if picture.source != "dataset" else (
                    source.image_bytes(image_id) if source.has_image(image_id) else None)
                if data is not None:
                    exported.images[image_id] = data
            exported.storyturns.append(st)
        exported.save(out)
        saved = load_dataset(out)
        return saved, validate_dataset(saved)

    def items_csv(self, viewer: str | None = None) -> str:
        """One row per item (status, reviewers, errors filed): a spreadsheet of the review, formula-safe.

        For ``viewer`` (a reviewer's name), an item they review blind shows its status as awaiting their verdict
        and none of the other reviewers' decisions, filings or notes on its current revision, as the item page."""
        statuses = self.statuses()
        with self.connect() as db:
            items = db.execute("SELECT id, revision, json_extract(current, '$.task') AS task, "
                               "json_extract(current, '$.category') AS category FROM items ORDER BY position").fetchall()
            errors = defaultdict(list)
            for row in db.execute("SELECT e.item_id, e.category, e.revision, u.name FROM error_filings e "
                                  "JOIN users u ON u.id = e.user_id ORDER BY e.id"):
                if not statuses[row["item_id"]].hides(viewer, row["name"], row["revision"]):
                    errors[row["item_id"]].append(row["category"])
            notes = defaultdict(list)
            for row in db.execute("SELECT d.item_id, d.note, d.revision, u.name FROM decisions d JOIN users u "
                                  "ON u.id = d.user_id WHERE d.note != '' ORDER BY d.id"):
                if not statuses[row["item_id"]].hides(viewer, row["name"], row["revision"]):
                    notes[row["item_id"]].append(f"{row['name']}: {row['note']}")
        rows = []
        for r in items:
            status = statuses[r["id"]]
            blind = viewer is not None and status.blind_for(viewer)
            rows.append([r["id"], r["task"], r["category"], r["revision"], "awaiting your verdict" if blind else
                         status.kind, "" if blind else " ".join(status.accepts),
                         "" if blind else " ".join(status.rejects), " ".join(errors[r["id"]]),
                         " | ".join(notes[r["id"]])])
        return spreadsheet(["item", "task", "category", "revision", "status", "accepted_by", "rejected_by", "errors_filed",
                     "decision_notes"], rows)

    def errors_csv(self, viewer: str | None = None) -> str:
        """Every error filing (who, when, which revision and picture, category, note), formula-safe; for ``viewer``,
        without the other reviewers' filings on the current revision of an item they review blind."""
        statuses = self.statuses()
        with self.connect() as db:
            rows = db.execute("SELECT e.at, e.item_id, e.revision, u.name, e.category, p.image_id, p.version, e.note "
                              "FROM error_filings e JOIN users u ON u.id = e.user_id LEFT JOIN pictures p "
                              "ON p.id = e.picture_id ORDER BY e.id").fetchall()
        shown = [list(r) for r in rows if not statuses[r["item_id"]].hides(viewer, r["name"], r["revision"])]
        return spreadsheet(["at", "item", "revision", "reviewer", "category", "picture", "version", "note"], shown)


def spreadsheet(header: list[str], rows: list[list[object]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows([[csv_safe("" if v is None else v) for v in row] for row in rows])
    return buffer.getvalue()

