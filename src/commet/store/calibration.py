"""Calibration samples: which StoryTurns of a run people are to label, drawn at random and recorded.

``commet calibrate`` draws, for one run, a seeded stratified random sample of its StoryTurns
(:mod:`commet.reports.calibration` says how) and records it here with the population each
stratum had, so that the estimate made later from the people's labels knows the design it
rests on: which StoryTurns, in which stratum, out of how many. The labels themselves live in the
``labels`` table (:mod:`commet.store.labels`), one per answer, whoever gave them (``commet label``
or the review app). One sample per run; drawing again replaces it (labels stay). A paired sample
(``commet calibrate --pair``) is recorded for both runs, the same StoryTurns in the same order, each
naming the other as its ``partner``; the sample's ``design`` says how it was allocated.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, replace

from commet.conditions import Design
from commet.store.errors import StoreError, check_table_shape
from commet.store.records import TurnRecord
from commet.store.sqlite import RunRecord, Store, now, table_names

CALIBRATION_SCHEMA = """
CREATE TABLE IF NOT EXISTS calibration_samples (
    run TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    population_json TEXT NOT NULL,
    created_at TEXT NOT NULL,
    design TEXT NOT NULL DEFAULT 'proportional',
    partner TEXT,
    rates_json TEXT
);
CREATE TABLE IF NOT EXISTS calibration_items (
    run TEXT NOT NULL,
    story_id TEXT NOT NULL,
    stratum TEXT NOT NULL,
    position INTEGER NOT NULL,
    PRIMARY KEY (run, story_id)
);
"""


@dataclass(frozen=True)
class SampledStory:
    story_id: str
    stratum: str
    position: int  # the order to label in (random across strata)


@dataclass(frozen=True)
class CalibrationSample:
    """A run's calibration sample: what was asked for, each stratum's population when drawn, the StoryTurns drawn."""

    run: str
    size: int
    seed: int
    population: dict[str, int]
    items: tuple[SampledStory, ...]
    created_at: str = ""
    design: Design = Design.proportional
    #: a paired sample: the other run, whose sample holds the same StoryTurns (drawn together, for a comparison)
    partner: str | None = None
    #: an active sample: each decider's answer error rate its StoryTurns' weights were drawn with (kept as it grows)
    rates: dict[str, float] | None = None

    def drawn(self, stratum: str) -> int:
        return sum(item.stratum == stratum for item in self.items)


SAMPLE_COLUMNS = ("run", "size", "seed", "population_json", "created_at")
ITEM_COLUMNS = ("run", "story_id", "stratum", "position")


def _check_tables(db: sqlite3.Connection) -> None:
    check_table_shape(db, "calibration_samples", SAMPLE_COLUMNS)
    check_table_shape(db, "calibration_items", ITEM_COLUMNS)


def _ensure_tables(db: sqlite3.Connection) -> None:
    _check_tables(db)
    for statement in filter(str.strip, CALIBRATION_SCHEMA.split(";")):
        db.execute(statement)
    columns = {row[1] for row in db.execute("PRAGMA table_info(calibration_samples)")}
    for column, kind in (("design", "TEXT NOT NULL DEFAULT 'proportional'"), ("partner", "TEXT"),
                         ("rates_json", "TEXT")):  # older stores
        if column not in columns:
            db.execute(f"ALTER TABLE calibration_samples ADD COLUMN {column} {kind}")


def save_sample(store: Store, sample: CalibrationSample) -> CalibrationSample:
    """Record ``sample`` for its run, replacing an earlier one (one transaction); returns it as stored."""
    return save_samples(store, sample)[0]


def save_samples(store: Store, *samples: CalibrationSample) -> list[CalibrationSample]:
    """Record samples of different runs in one transaction: the two halves of a paired sample commit together."""
    stamp = now()
    stamped = [replace(s, population=dict(s.population), created_at=stamp) for s in samples]
    with store.transaction() as db:
        _ensure_tables(db)
        for sample in stamped:
            db.execute("DELETE FROM calibration_items WHERE run = ?", (sample.run,))
            db.execute("INSERT OR REPLACE INTO calibration_samples(run, size, seed, population_json, created_at, "
                       "design, partner, rates_json) VALUES (?,?,?,?,?,?,?,?)",
                       (sample.run, sample.size, sample.seed, json.dumps(sample.population, sort_keys=True),
                        stamp, sample.design.value, sample.partner,
                        None if sample.rates is None else json.dumps(sample.rates, sort_keys=True)))
            db.executemany("INSERT INTO calibration_items(run, story_id, stratum, position) VALUES (?,?,?,?)",
                           [(sample.run, item.story_id, item.stratum, item.position) for item in sample.items])
    return stamped


def load_sample(store: Store, run: str) -> CalibrationSample | None:
    """The run's calibration sample, or None (also when the store has never had one: nothing is written)."""
    if "calibration_samples" not in table_names(store.db):
        return None
    _check_tables(store.db)
    columns = {row[1] for row in store.db.execute("PRAGMA table_info(calibration_samples)")}
    design = "design" if "design" in columns else "'proportional'"  # read-only stores keep their old schema
    partner = "partner" if "partner" in columns else "NULL"
    rates = "rates_json" if "rates_json" in columns else "NULL"
    row = store.db.execute(f"SELECT size, seed, population_json, created_at, {design}, {partner}, {rates} FROM "
                           "calibration_samples WHERE run = ?", (run,)).fetchone()
    if row is None:
        return None
    items = tuple(SampledStory(story_id, stratum, position) for story_id, stratum, position in store.db.execute(
        "SELECT story_id, stratum, position FROM calibration_items WHERE run = ? ORDER BY position", (run,)))
    return CalibrationSample(run, _number(run, "size", row[0]), _number(run, "seed", row[1]),
                             _population(run, row[2]), items, str(row[3]), _design(run, row[4]), row[5],
                             None if row[6] is None else _rates(run, row[6]))


def _damaged(run: str, what: str) -> StoreError:
    return StoreError(f"the results store's calibration sample of run {run!r} is damaged ({what}); draw it again: "
                      f"commet calibrate --run {run!r} --sample N --redraw")


def _number(run: str, name: str, value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _damaged(run, f"its {name} is {str(value)[:40]!r}, not a whole number")
    return value


def _population(run: str, text: object) -> dict[str, int]:
    """The population of each stratum, as recorded; a damaged record is one line saying to draw it again."""
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        value = None
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(n, int) and not isinstance(n, bool)
                                              for k, n in value.items()):
        raise _damaged(run, "its population is not a JSON object of counts")
    return value


def _design(run: str, value: object) -> Design:
    try:
        return Design(value)
    except ValueError:
        raise _damaged(run, f"its design is {str(value)[:40]!r}") from None


def _rates(run: str, text: object) -> dict[str, float]:
    """The error rates an active sample was drawn with, as recorded; a damaged record is one line."""
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        value = None
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(r, (int, float))
                                              and not isinstance(r, bool) for k, r in value.items()):
        raise _damaged(run, "its error rates are not a JSON object of numbers")
    return {k: float(r) for k, r in value.items()}


def sampled_runs(store: Store) -> list[str]:
    """Names of the runs that have a calibration sample."""
    if "calibration_samples" not in table_names(store.db):
        return []
    _check_tables(store.db)
    return [name for (name,) in store.db.execute("SELECT run FROM calibration_samples ORDER BY run")]


def sample_answers(store: Store, run: RunRecord) -> list[tuple[SampledStory, TurnRecord]]:
    """The answers of the run's calibration sample, in the order to label them (the sample's, then turn order)."""
    sample = load_sample(store, run.name)
    if sample is None:
        return []
    rows: dict[str, list[TurnRecord]] = {}
    for row in store.turn_rows(run.id):
        if row.response is not None:
            rows.setdefault(row.story_id, []).append(row)
    return [(item, row) for item in sample.items for row in sorted(rows.get(item.story_id, []), key=lambda r: r.turn)]
