"""A run without pictures never reads them: its dataset hash leaves them out; older runs still resume."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from commet.engine import EvalSettings, RunConflictError, evaluate_async
from commet.engine.rejudge import rejudge
from commet.engine.runner import config_hash
from commet.judges.registry import create_judge
from commet.models.registry import create_model
from commet.sources import read_storyturns
from commet.store import Store
from tests.conftest import write_png

REPLIES = {"dd-1": ["I like the pear.", "Kim will pick the cookie."], "fb-1": ["The basket.", "No.", "The box."]}


async def test_a_run_without_pictures_neither_reads_nor_hashes_them(pipe_dataset: Path, replay_file,
                                                                   tmp_path: Path) -> None:
    model = f"replay:{replay_file(REPLIES)}"
    db = tmp_path / "s.sqlite"
    dataset = read_storyturns(pipe_dataset)
    picture = pipe_dataset.parent / "images" / "snack_table_1.png"
    first = await evaluate_async(model, dataset, db=db, run="off", settings=EvalSettings(images="off"))
    on = await evaluate_async(model, dataset, db=db, run="on", settings=EvalSettings(images="on"))
    assert first.run.dataset_hash == dataset.content_hash(pictures=False) != on.run.dataset_hash
    assert on.run.dataset_hash == dataset.content_hash()

    picture.unlink()  # gone: a run that shows no picture does not notice
    again = await evaluate_async(model, dataset, db=db, run="off", settings=EvalSettings(images="off"))
    assert again.progress.model_calls == 0 and again.run.dataset_hash == first.run.dataset_hash
    other = await evaluate_async(model, dataset, db=db, run="off-2", settings=EvalSettings(images="off"))
    assert other.run.dataset_hash == first.run.dataset_hash and other.progress.cached_calls == 5
    write_png(picture, (10, 200, 30))  # another picture under the same id: runs with pictures see it
    assert dataset.content_hash() != on.run.dataset_hash
    assert dataset.content_hash(pictures=False) == first.run.dataset_hash
    with pytest.raises(RunConflictError):
        await evaluate_async(model, dataset, db=db, run="on", settings=EvalSettings(images="on"))


async def test_a_run_recorded_with_its_pictures_hashed_still_resumes(pipe_dataset: Path, replay_file,
                                                                    tmp_path: Path) -> None:
    """Runs without pictures recorded before the pictures left their hash: resumed, not refused as other settings."""
    model = f"replay:{replay_file(REPLIES)}"
    db = tmp_path / "s.sqlite"
    dataset = read_storyturns(pipe_dataset)
    settings = EvalSettings(images="off")
    await evaluate_async(model, dataset, db=db, run="old", settings=settings)
    legacy = config_hash(create_model(model), create_judge("rules"), settings, dataset.content_hash())
    with Store(db) as store:  # as an earlier version recorded it, and killed before its last story
        store.db.execute("UPDATE runs SET config_hash = ?, dataset_hash = ? WHERE name = 'old'",
                         (legacy, dataset.content_hash()))
        store.db.execute("DELETE FROM stories WHERE story_id = 'fb-1'")
    resumed = await evaluate_async(model, dataset, db=db, run="old", settings=settings)
    assert resumed.progress.stories_done == 2 and resumed.progress.model_calls == 0
    changed = dataclasses.replace(dataset, storyturns=[dataset.storyturns[0].model_copy(update={"source": "edited"}),
                                                       *dataset.storyturns[1:]])
    with pytest.raises(RunConflictError):
        await evaluate_async(model, changed, db=db, run="old", settings=settings)


async def test_rejudging_a_run_without_pictures_finds_its_dataset(pipe_dataset: Path, replay_file,
                                                                 tmp_path: Path) -> None:
    dataset = read_storyturns(pipe_dataset)
    db = tmp_path / "s.sqlite"
    await evaluate_async(f"replay:{replay_file(REPLIES)}", dataset, db=db, run="off",
                         settings=EvalSettings(images="off"))
    assert dataset.hash_matches(dataset.content_hash(pictures=False)) and dataset.hash_matches(dataset.content_hash())
    assert not dataset.hash_matches("0" * 64)
    with Store(db) as store:
        report = await rejudge(store, "off", create_judge("rules"), dataset, new_name="again")
    assert report.turns == 5
