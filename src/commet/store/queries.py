"""What the results store answers: runs, their turn and story rows, totals, failures, spend and progress.

Each query first commits the writes still pending (:meth:`~commet.store.commits.StoreCommits.flush`),
so it reads what this process wrote a moment ago, and returns typed, frozen records (a damaged
stored value names the file). The reports, exports, progress lines and the engine's end-of-run
accounting read the store through these.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from commet.sources.inputs import valid_text
from commet.store.commits import StoreCommits
from commet.store.errors import StoreError
from commet.store.records import STORY_COLUMNS, TURN_COLUMNS, StoryRecord, TurnRecord
from commet.store.run_ids import SHORT_ID_LENGTH, find_run, full_id
from commet.store.settings import RunSettings, RunSettingsError


class RunStatus(str, Enum):
    """Where a run stands. Only a run whose every StoryTurn was scored is ``done``."""

    running = "running"
    done = "done"
    #: ended with StoryTurns whose calls failed for good; a rerun retries them
    incomplete = "incomplete"
    #: stopped by Ctrl-C (SIGINT); a rerun resumes
    interrupted = "interrupted"
    #: stopped by an unexpected error; a rerun resumes
    failed = "failed"
    #: stopped before its estimated spend would pass ``--max-cost``; a rerun with a higher limit resumes
    stopped_spend_limit = "stopped-spend-limit"

    def __str__(self) -> str:  # printed and exported as stored
        return self.value


@dataclass(frozen=True)
class FailureKind:
    """One kind of final failure in a run as it stands: how many turns, and the first message."""

    kind: str
    what: str  # "model" or "judge"
    turns: int
    first_story: str
    first_turn: int
    first_message: str


@dataclass(frozen=True)
class RunRecord:
    id: int
    name: str
    model: str
    judge: str
    settings: RunSettings
    config_hash: str
    dataset_name: str
    dataset_hash: str
    package_version: str
    status: RunStatus
    story_count: int
    started_at: str
    finished_at: str | None

    @property
    def short_id(self) -> str:
        """The run's short id (:mod:`commet.store.run_ids`; ``commet runs`` lengthens ids two runs share)."""
        return full_id(self.name)[:SHORT_ID_LENGTH]

    def __post_init__(self) -> None:
        if not isinstance(self.status, RunStatus):  # "done" from a caller: the enum (or its ValueError)
            object.__setattr__(self, "status", RunStatus(self.status))


@dataclass(frozen=True)
class RunSpend:
    """What a run's own calls used (answers from the store excluded): model tokens, judge tokens and cost."""

    model_input_tokens: int
    model_output_tokens: int
    judge_input_tokens: int
    judge_output_tokens: int
    judge_cost: float | None  # None: some judgment had no known price


def run_record(row: sqlite3.Row, path: Path) -> RunRecord:
    """The run of ``row``; settings that cannot be read name the file, the run and the field."""
    try:
        stored = json.loads(row["settings_json"])
        if not isinstance(stored, dict):
            raise RunSettingsError(f"run {row['name']!r}: stored settings are not a JSON object")
        settings = RunSettings.from_stored(stored, run=row["name"])
    except RunSettingsError as error:
        raise RunSettingsError(f"{path}: {error}") from None
    except ValueError as error:
        raise RunSettingsError(f"{path}: run {row['name']!r}: stored settings are not JSON ({error})") from None
    try:
        status = RunStatus(row["status"])
    except ValueError:
        raise StoreError(f"{path}: run {row['name']!r}: stored status {row['status']!r} is not one of "
                         f"{', '.join(s.value for s in RunStatus)}") from None
    return RunRecord(
        id=row["id"], name=row["name"], model=row["model"], judge=row["judge"],
        settings=settings,
        config_hash=row["config_hash"], dataset_name=row["dataset_name"],
        dataset_hash=row["dataset_hash"], package_version=row["package_version"], status=status,
        story_count=row["story_count"], started_at=row["started_at"], finished_at=row["finished_at"],
    )


class StoreQueries(StoreCommits):
    """The read side of a results store (a part of ``Store``)."""

    # runs -----------------------------------------------------------------------------------------
    def get_run(self, name: str) -> RunRecord | None:
        self.flush()
        row = self.db.execute("SELECT * FROM runs WHERE name = ?", (valid_text(name)[0],)).fetchone()
        return run_record(row, self.path) if row else None

    def find_run(self, wanted: str) -> RunRecord:
        """The run ``wanted`` names: its name, the start of its short id or of its name (unique), else
        :class:`~commet.store.run_ids.RunLookupError` with candidates."""
        return find_run(self.runs(), wanted, where=self.path)

    def runs(self) -> list[RunRecord]:
        return [run_record(r, self.path) for r in self.db.execute("SELECT * FROM runs ORDER BY id")]

    # shards, StoryTurns and turns -----------------------------------------------------------------
    def shards(self, run_id: int) -> list[tuple[int, int]]:
        self.flush()
        return [(r[0], r[1]) for r in self.db.execute(
            "SELECT shard_index, shard_count FROM shards WHERE run_id = ? ORDER BY shard_index", (run_id,))]

    def finished_stories(self, run_id: int) -> set[str]:
        self.flush()
        rows = self.db.execute("SELECT story_id FROM stories WHERE run_id = ? AND status IN ('done', 'stopped')",
                               (run_id,))
        return {r["story_id"] for r in rows}

    def run_totals(self, run_id: int) -> dict[str, int]:
        """Stories failed and right, questions answered and right, over the StoryTurns recorded so far."""
        self.flush()
        stories = self.db.execute(
            "SELECT COALESCE(SUM(status = 'failed'), 0), COALESCE(SUM(status = 'done' AND correct = 1), 0)"
            " FROM stories WHERE run_id = ?", (run_id,)).fetchone()
        turns = self.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(t.correct = 1), 0) FROM turns t JOIN stories s"
            " ON s.run_id = t.run_id AND s.story_id = t.story_id WHERE t.run_id = ? AND t.response IS NOT NULL",
            (run_id,)).fetchone()
        return {"stories_failed": int(stories[0]), "stories_correct": int(stories[1]), "questions": int(turns[0]),
                "questions_right": int(turns[1])}

    def stories_with_judge_errors(self, run_id: int) -> set[str]:
        """StoryTurns recorded ``done`` with a turn whose judge failed for good (left undecided)."""
        self.flush()
        rows = self.db.execute("SELECT DISTINCT story_id FROM turns WHERE run_id = ? AND response IS NOT NULL "
                               "AND error_kind IS NOT NULL", (run_id,))
        return {r["story_id"] for r in rows}

    def run_failures(self, run_id: int) -> list[FailureKind]:
        """The run's final failures as they stand now, per kind, with the first message of each kind.

        A model call that failed for good leaves a turn with an error and no response; a judge
        that failed for good leaves an answered turn with an ``error_kind`` (its message is in
        the call log). Failures a later rerun fixed are not counted: turn rows are replaced.
        """
        self.flush()
        rows = self.db.execute(
            "SELECT t.story_id, t.turn, t.response, t.error_kind, t.error"
            " FROM turns t JOIN stories s ON s.run_id = t.run_id AND s.story_id = t.story_id"
            " WHERE t.run_id = ? AND t.error_kind IS NOT NULL ORDER BY s.position, t.turn", (run_id,)).fetchall()
        # each turn's last failed judge call, read in one pass (a subquery per turn read the run's judge calls
        # once for every failed turn: minutes at the end of a large run whose judge was down)
        judge_errors: dict[tuple[str, int], str] = {}
        if any(r["response"] is not None for r in rows):
            for story_id, turn, error in self.db.execute(
                    "SELECT story_id, turn, error FROM call_log WHERE run_id = ? AND kind = 'judge'"
                    " AND error IS NOT NULL ORDER BY id", (run_id,)):
                judge_errors[story_id, turn] = error
        kinds: dict[str, FailureKind] = {}
        for r in rows:
            what = "model" if r["response"] is None else "judge"
            message = (r["error"] if what == "model" else judge_errors.get((r["story_id"], r["turn"]))) or r["error_kind"]
            known = kinds.get(r["error_kind"])
            if known is None:
                kinds[r["error_kind"]] = FailureKind(r["error_kind"], what, 1, r["story_id"], r["turn"], message)
            else:
                kinds[r["error_kind"]] = FailureKind(known.kind, known.what, known.turns + 1, known.first_story,
                                                     known.first_turn, known.first_message)
        return list(kinds.values())

    def turn_rows(self, run_id: int) -> list[TurnRecord]:
        """The run's turns of finished or ended stories, in story order then turn order (the stories read
        first: one a writer adds meanwhile is left out, as a query made a moment earlier would)."""
        self.flush()
        order = self.db.execute("SELECT story_id FROM stories WHERE run_id = ? ORDER BY position",
                                (run_id,)).fetchall()
        turns = self.turns_by_story(run_id)
        return [record for (story_id,) in order for record in turns.get(story_id, ())]

    def turns_by_story(self, run_id: int) -> dict[str, list[TurnRecord]]:
        """The run's turns, per story, in turn order.

        Read in the primary key's order and put in story order by the caller: joining the stories to
        sort by their position made SQLite sort a large run's turns in a temporary B-tree (a third of the
        time a report of 20,000 StoryTurns took to read them).
        """
        self.flush()
        cursor = self.db.cursor()
        cursor.row_factory = None  # plain tuples, in the record's field order
        turns: dict[str, list[TurnRecord]] = {}
        with self._located():
            for values in cursor.execute(f"SELECT {', '.join(TURN_COLUMNS)} FROM turns WHERE run_id = ? "
                                         "ORDER BY story_id, turn", (run_id,)):
                record = TurnRecord.from_values(values)
                turns.setdefault(record.story_id, []).append(record)
        return turns

    def story_rows(self, run_id: int) -> list[StoryRecord]:
        """The run's stories in their dataset order."""
        self.flush()
        cursor = self.db.cursor()
        cursor.row_factory = None
        with self._located():
            return [StoryRecord.from_values(values) for values in cursor.execute(
                f"SELECT {', '.join(STORY_COLUMNS)} FROM stories WHERE run_id = ? ORDER BY position", (run_id,))]

    # calls: counts, progress, spend ------------------------------------------------------------------
    def call_counts(self, run_id: int) -> dict[str, int]:
        self.flush()
        row = self.db.execute(
            "SELECT SUM(kind='model' AND cached=0 AND error IS NULL) AS model_calls,"
            " SUM(kind='model' AND cached=1) AS model_cached,"
            " SUM(kind='model' AND error IS NOT NULL) AS model_errors,"
            " SUM(kind='judge' AND cached=0 AND error IS NULL) AS judge_calls,"
            " SUM(kind='judge' AND cached=1) AS judge_cached"
            " FROM call_log WHERE run_id = ?", (run_id,)).fetchone()
        return {k: int(row[k] or 0) for k in row.keys()}  # noqa: SIM118 - sqlite3.Row iterates values

    def progress_counts(self, run_id: int) -> dict[str, int]:
        """Counters of a run as stored: what worker processes report through the shared file."""
        self.flush()
        stories = self.db.execute("SELECT COUNT(*) FROM stories WHERE run_id = ?", (run_id,)).fetchone()[0]
        turns = self.db.execute("SELECT COUNT(*), COALESCE(SUM(correct = 1), 0) FROM turns WHERE run_id = ? AND "
                                "response IS NOT NULL", (run_id,)).fetchone()
        calls = self.call_counts(run_id)
        return {"stories": stories, "questions": turns[0], "right": turns[1], "model_calls": calls["model_calls"],
                "cached": calls["model_cached"], "errors": calls["model_errors"]}

    def spend(self, run_id: int) -> RunSpend:
        """Tokens and judge cost of the calls this run made (not those answered from the store)."""
        self.flush()
        model = self.db.execute(
            "SELECT COALESCE(SUM(m.input_tokens), 0), COALESCE(SUM(m.output_tokens), 0) FROM call_log c"
            " JOIN model_calls m ON m.key = c.key WHERE c.run_id = ? AND c.kind = 'model' AND c.cached = 0"
            " AND c.error IS NULL", (run_id,)).fetchone()
        judge_in = judge_out = 0
        judge_cost: float | None = 0.0
        for (details,) in self.db.execute(
                "SELECT j.details_json FROM call_log c JOIN judgments j ON j.key = c.key WHERE c.run_id = ?"
                " AND c.kind = 'judge' AND c.cached = 0", (run_id,)):
            data = json.loads(details)
            usage = data.get("usage") or {}
            judge_in += int(usage.get("input_tokens", 0))
            judge_out += int(usage.get("output_tokens", 0))
            cost = data.get("cost_usd", 0.0 if not usage else None)
            judge_cost = None if judge_cost is None or cost is None else judge_cost + float(cost)
        return RunSpend(int(model[0]), int(model[1]), judge_in, judge_out, judge_cost)

    def usage(self, run_id: int) -> dict[str, int]:
        self.flush()
        row = self.db.execute(
            "SELECT COALESCE(SUM(m.input_tokens), 0) AS input_tokens, COALESCE(SUM(m.output_tokens), 0) AS output_tokens"
            " FROM turns t JOIN model_calls m ON m.key = t.model_key WHERE t.run_id = ?", (run_id,)).fetchone()
        return {"input_tokens": int(row["input_tokens"]), "output_tokens": int(row["output_tokens"])}

