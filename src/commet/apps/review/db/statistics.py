"""What the review adds up to: the items list, the next item open for a reviewer, disagreements, the
paper's Table 6 and each reviewer's progress.
"""

from __future__ import annotations

import sqlite3
from collections import Counter, defaultdict

from commet.apps.review.db.decisions import ReviewDecisions
from commet.apps.review.db.records import (
    CRITERIA,
    CRITERION_KEYS,
    ERROR_CATEGORIES,
    IMAGE_ERRORS,
    OverviewRow,
    Table6Column,
    open_for_me,
)


class ReviewStatistics(ReviewDecisions):
    """Overviews and counts over a whole review store (a part of ``ReviewDB``)."""

    def overview(self, user_id: int) -> list[OverviewRow]:
        """One row per item, in list order, from a handful of queries (the items page of 500+ items)."""
        statuses = self.statuses()
        with self.connect() as db:
            items = db.execute("SELECT id, revision, json_extract(current, '$.task') AS task, "
                               "json_extract(current, '$.category') AS category, "
                               "json_array_length(current, '$.turns') AS turns FROM items ORDER BY position").fetchall()
            pictures = dict(db.execute("SELECT item_id, COUNT(*) FROM current_pictures GROUP BY item_id").fetchall())
            user = db.execute("SELECT name FROM users WHERE id = ?", (user_id,)).fetchone()
            viewer = user["name"] if user else None
            errors: dict[str, int] = defaultdict(int)
            for row in db.execute("SELECT e.item_id, e.revision, u.name FROM error_filings e LEFT JOIN users u "
                                  "ON u.id = e.user_id"):
                if not statuses[row["item_id"]].hides(viewer, row["name"], row["revision"]):
                    errors[row["item_id"]] += 1
            mine = {r["item_id"]: r["decision"] for r in db.execute(
                "SELECT d.item_id, d.decision FROM decisions d JOIN items i ON i.id = d.item_id AND i.revision = d.revision "
                "WHERE d.id IN (SELECT MAX(id) FROM decisions WHERE user_id = ? GROUP BY item_id)", (user_id,))}
        return [OverviewRow(r["id"], r["task"], r["category"], r["turns"], pictures.get(r["id"], 0), r["revision"],
                            statuses[r["id"]], mine.get(r["id"]), errors.get(r["id"], 0)) for r in items]


    def next_open_for(self, user_id: int, after: str | None = None) -> str | None:
        """The next item (after ``after``, wrapping round) that is not final and awaits this reviewer's verdict."""
        rows = self.overview(user_id)
        start = next((i + 1 for i, row in enumerate(rows) if row.id == after), 0)
        for row in rows[start:] + rows[:start]:
            if row.id != after and open_for_me(row):
                return row.id
        return None

    def disagreements(self) -> list[dict[str, object]]:
        """Items whose reviewers disagree: on the decision, or on a criterion of a current picture."""
        statuses = self.statuses()
        with self.connect() as db:
            rows = db.execute(
                "SELECT c.criterion, c.passed, u.name, p.item_id, p.image_id, p.version FROM picture_checks c "
                "JOIN current_pictures cp ON cp.picture_id = c.picture_id JOIN pictures p ON p.id = c.picture_id "
                "JOIN users u ON u.id = c.user_id WHERE c.id IN (SELECT MAX(id) FROM picture_checks "
                "GROUP BY picture_id, user_id, criterion) ORDER BY u.name").fetchall()
            order = [r[0] for r in db.execute("SELECT id FROM items ORDER BY position")]
        verdicts: dict[tuple[str, str, int, str], dict[str, bool]] = defaultdict(dict)
        for row in rows:
            verdicts[(row["item_id"], row["image_id"], row["version"], row["criterion"])][row["name"]] = bool(row["passed"])
        reasons: dict[str, list[str]] = defaultdict(list)
        for item_id, status in statuses.items():
            if status.accepts and status.rejects:
                reasons[item_id].append(f"accepted by {', '.join(status.accepts)}; rejected by "
                                        f"{', '.join(status.rejects)}")
        for (item_id, image_id, version, key), by in sorted(verdicts.items(),
                                                              key=lambda kv: CRITERION_KEYS.index(kv[0][3])):
            if len(set(by.values())) > 1:
                passed = [n for n, v in by.items() if v]
                failed = [n for n, v in by.items() if not v]
                reasons[item_id].append(f"{image_id} v{version}: {IMAGE_ERRORS.get(key, key)} passed by "
                                        f"{', '.join(passed)}, failed by {', '.join(failed)}")
        return [{"item": item_id, "status": statuses[item_id], "reasons": reasons[item_id]}
                for item_id in order if reasons.get(item_id)]

    # ------------------------------------------------------------------ statistics

    def table6(self, viewer: str | None = None) -> list[Table6Column]:
        """Table 6: erroneous *images* (the picture an item's turns show, over all its versions) per most
        prominent error, as the reviewer chose it; one column for all images, one per reviewer, and the
        images of final and of not yet final items.

        A reviewer's category for an image is the prominent error they chose on the first version they
        found erroneous (a failed criterion that still stands). In the columns that pool reviewers an
        image takes the category of the reviewer who found it erroneous first; no category order is used
        to break ties.

        For ``viewer`` (a reviewer's name) the other reviewers' checks of the current pictures of an item they
        review blind are left out, as the item page hides them (:meth:`ItemStatus.hides`); no viewer: all."""
        statuses = self.statuses()
        with self.connect() as db:
            rows = db.execute("SELECT c.id, c.picture_id, c.user_id, c.criterion, c.passed, p.item_id, p.image_id, "
                              "p.version FROM picture_checks c JOIN pictures p ON p.id = c.picture_id "
                              "ORDER BY c.id").fetchall()
            chosen = {(r["picture_id"], r["user_id"]): r["criterion"] for r in db.execute(
                "SELECT picture_id, user_id, criterion FROM prominent_errors WHERE id IN "
                "(SELECT MAX(id) FROM prominent_errors GROUP BY picture_id, user_id)")}
            names = dict(db.execute("SELECT id, name FROM users ORDER BY name").fetchall())
            current = {r[0] for r in db.execute("SELECT picture_id FROM current_pictures")}
        latest: dict[tuple[int, int, str], sqlite3.Row] = {}
        for row in rows:
            status = statuses[row["item_id"]]
            if row["picture_id"] in current and status.hides(viewer, names.get(row["user_id"]), status.revision):
                continue
            latest[(row["picture_id"], row["user_id"], row["criterion"])] = row
        # (reviewer, image) -> (version, first standing failure id, category)
        found: dict[tuple[int, tuple[str, str]], tuple[int, int, str | None]] = {}
        failed_by: dict[tuple[int, int], list[sqlite3.Row]] = defaultdict(list)
        for (picture_id, user_id, _), row in latest.items():
            if not row["passed"]:
                failed_by[(picture_id, user_id)].append(row)
        for (picture_id, user_id), failed in failed_by.items():
            image = (failed[0]["item_id"], failed[0]["image_id"])
            category = chosen.get((picture_id, user_id))
            if category is None and len(failed) == 1:
                category = failed[0]["criterion"]
            entry = (failed[0]["version"], min(r["id"] for r in failed), category)
            key = (user_id, image)
            if key not in found or entry[:2] < found[key][:2]:
                found[key] = entry
        first: dict[tuple[str, str], tuple[int, str | None]] = {}
        for (_, image), (_, first_id, category) in found.items():
            if image not in first or first_id < first[image][0]:
                first[image] = (first_id, category)

        def column(title: str, categories: list[str | None]) -> Table6Column:
            counted = Counter(c for c in categories if c in IMAGE_ERRORS)
            return Table6Column(title, {key: counted[key] for key in IMAGE_ERRORS},
                                sum(c not in IMAGE_ERRORS for c in categories))

        columns = [column("All images", [c for _, c in first.values()])]
        columns += [column(name, [c for (u, _), (_, _, c) in found.items() if u == uid]) for uid, name in names.items()]
        columns.append(column("Final items", [c for image, (_, c) in first.items() if statuses[image[0]].final]))
        columns.append(column("Not final", [c for image, (_, c) in first.items() if not statuses[image[0]].final]))
        return columns

    def stats(self, viewer: str | None = None) -> dict[str, object]:
        """Table 6, filings per category, picture and item totals, and each reviewer's progress.

        For ``viewer`` (a reviewer's name) the figures are blinded as the item pages and exports are: the other
        reviewers' filings and picture checks on the current revision of an item ``viewer`` reviews blind count
        nowhere (not by category, not in a reviewer's "errors filed", not in Table 6), and such an item counts
        as "awaiting your verdict", not by its status. No viewer (the command line): everything."""
        statuses = self.statuses()
        with self.connect() as db:
            filings = [row for row in db.execute(
                "SELECT e.item_id, e.revision, e.category, e.user_id, u.name FROM error_filings e LEFT JOIN users u "
                "ON u.id = e.user_id") if not statuses[row["item_id"]].hides(viewer, row["name"], row["revision"])]
            n_pictures = db.execute("SELECT COUNT(*) FROM current_pictures").fetchone()[0]
            revised = db.execute("SELECT COUNT(*) FROM (SELECT item_id, image_id FROM pictures GROUP BY item_id, image_id "
                                 "HAVING COUNT(*) > 1)").fetchone()[0]
            users = db.execute("SELECT id, name FROM users ORDER BY name").fetchall()
            per_user = {}
            for user in users:
                uid = user["id"]
                per_user[user["name"]] = {
                    "decided": sum(statuses[r[0]].decided(user["name"]) for r in db.execute(
                        "SELECT DISTINCT item_id FROM decisions WHERE user_id = ?", (uid,))),
                    "checked": db.execute(
                        "SELECT COUNT(*) FROM (SELECT c.picture_id FROM picture_checks c JOIN current_pictures cp "
                        "ON cp.picture_id = c.picture_id WHERE c.user_id = ? GROUP BY c.picture_id "
                        "HAVING COUNT(DISTINCT c.criterion) = ?)", (uid, len(CRITERIA))).fetchone()[0],
                    "errors": sum(row["user_id"] == uid for row in filings),
                    "edits": db.execute("SELECT COUNT(DISTINCT revision || item_id) FROM edits WHERE user_id = ?",
                                        (uid,)).fetchone()[0],
                }
        filed = Counter(row["category"] for row in filings)
        kinds = Counter("awaiting" if viewer is not None and status.blind_for(viewer) else status.kind
                        for status in statuses.values())
        return {"table6": self.table6(viewer), "pictures": n_pictures, "revised": revised,
                "filed": [(key, label, filed[key]) for key, label in ERROR_CATEGORIES.items()],
                "items": len(statuses), "statuses": dict(kinds), "reviewers": per_user}

