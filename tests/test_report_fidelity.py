"""Tables 3 and 14 and the wrong answers, hand-counted: pooled runs never count one stored answer twice, and a
case is a wrong answer followed by correctness-based feedback (paper, section 4.3) unless asked otherwise.

One crafted dataset, every question naming its two options so that the rules judge's verdict is plain
("The apple." right, "The pear." wrong). Two replayed runs of one model, pictures on and pictures only where
needed (the paper's pair): the image-dependent StoryTurns are sent identically in both, so the second run
answers them from the store. Every expected figure is counted by hand in the comments.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from commet.cli import app
from commet.engine import EvalSettings, evaluate_async
from commet.format.dataset import Dataset
from commet.format.model import Feedback, StoryTurn, Turn
from commet.store import Store

R, W = "The apple.", "The pear."
QUESTION = "Which fruit, the apple or the pear?"
WRONG_FEEDBACK = Feedback(right="Good.", wrong="Look again: it is the apple.")
ALWAYS_ONLY = Feedback(always="Later, Dad comes home with a bag of fruit.")


def _png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (24, 16), (30, 120, 200)).save(buffer, format="PNG")
    return buffer.getvalue()


def _story(story_id: str, image_dependent: bool, feedback: list[Feedback | None]) -> StoryTurn:
    turns = [Turn(story=f"Story {story_id}.", image=f"pic-{story_id}", question=QUESTION, answers=["The apple"])]
    turns += [Turn(feedback=fb, question=QUESTION, answers=["The apple"]) for fb in feedback]
    return StoryTurn(id=story_id, task="reference_easy" if image_dependent else "false_belief_location",
                     category="Percept" if image_dependent else "Belief", image_dependent=image_dependent,
                     turns=turns)


def dataset() -> Dataset:
    """t1 (text-complete): turn 2 carries 'If wrong' feedback, turn 3 only an unconditional line.
    p1, p2 (image-dependent): 'If wrong' feedback on turn 2; u1 (image-dependent): only an unconditional line."""
    stories = [_story("t1", False, [WRONG_FEEDBACK, ALWAYS_ONLY]), _story("p1", True, [WRONG_FEEDBACK]),
               _story("p2", True, [WRONG_FEEDBACK]), _story("u1", True, [ALWAYS_ONLY])]
    return Dataset(stories, name="fidelity", images={f"pic-{s.id}": _png() for s in stories})


#: the same replies in both runs: t1 wrong, wrong, right; p1 wrong then right; p2 wrong twice; u1 wrong then right
REPLIES = {"t1": [W, W, R], "p1": [W, R], "p2": [W, W], "u1": [W, R]}


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fidelity")
    replies = root / "r.json"
    replies.write_text(json.dumps(REPLIES))
    db = root / "fidelity.sqlite"

    async def fill() -> None:
        for run, images in (("on", "on"), ("needed", "needed")):
            await evaluate_async(f"replay:{replies}", dataset(), judge="rules", db=db, run=run,
                                 settings=EvalSettings(images=images))
    asyncio.run(fill())
    return db


runner = CliRunner()


def table(db: Path, key: str, *args: str) -> dict[str, dict[str, str]]:
    result = runner.invoke(app, ["report", "--db", str(db), "--format", "csv", "--table", key, "--resamples", "100",
                                 *args])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    return {row.get("Runs") or row.get("Run") or "": row for row in rows}


def figure(row: dict[str, str], column: str) -> tuple[str, str]:
    return row[f"{column} k"], row[f"{column} n"]


COLUMNS = ("VI not required, with image", "VI not required, no image", "VI required, with image")


def test_the_needed_run_answered_the_image_dependent_storyturns_from_the_store(store_path: Path) -> None:
    with Store(store_path) as store:
        on, needed = store.get_run("on"), store.get_run("needed")
        assert on is not None and needed is not None
        shared = {(r.story_id, r.turn): r.model_key for r in store.turn_rows(on.id)}
        again = {(r.story_id, r.turn): r.model_key for r in store.turn_rows(needed.id)}
    assert all(again[key] == shared[key] for key in again if key[0] != "t1")  # p1, p2, u1: the same calls
    assert all(again[key] != shared[key] for key in again if key[0] == "t1")  # t1 went without its picture


def test_table3_per_run_counts_correctness_based_feedback_only(store_path: Path) -> None:
    rows = table(store_path, "feedback")
    # t1: turn 1 wrong -> turn 2 ('If wrong' feedback) wrong: a case, not effective; turn 2 wrong -> turn 3 shows
    # only an unconditional line: no case. p1: wrong -> right after 'If wrong': 1/1. p2: wrong -> wrong: 0/1.
    # u1: wrong -> right after an unconditional line only: no case (the paper's 4.3 counts correctness-based)
    assert [figure(rows["on"], c) for c in COLUMNS] == [("0", "1"), ("0", "0"), ("1", "2")]
    assert [figure(rows["needed"], c) for c in COLUMNS] == [("0", "0"), ("0", "1"), ("1", "2")]
    assert "correctness-based" in result_note(store_path)


def result_note(db: Path) -> str:
    result = runner.invoke(app, ["report", "--db", str(db), "--format", "markdown", "--table", "feedback",
                                 "--resamples", "100"])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_any_feedback_counts_unconditional_lines_on_request(store_path: Path) -> None:
    rows = table(store_path, "feedback", "--feedback-cases", "any")
    # t1 adds its turn 2 -> 3 case (wrong -> right after the unconditional line): 1/2; u1 adds 1/1 -> 2/3
    assert [figure(rows["on"], c) for c in COLUMNS] == [("1", "2"), ("0", "0"), ("2", "3")]
    assert [figure(rows["needed"], c) for c in COLUMNS] == [("0", "0"), ("1", "2"), ("2", "3")]


def test_pooled_table3_counts_each_stored_answer_once(store_path: Path) -> None:
    rows = table(store_path, "feedback", "--pool")
    pooled = rows["pooled: on, needed"]
    # VI required, with image: p1 and p2 are the same stored answers in both runs -> 1/2 once (2/4 double-counted)
    assert [figure(pooled, c) for c in COLUMNS] == [("0", "1"), ("0", "1"), ("1", "2")]
    assert figure(table(store_path, "feedback", "--pool", "--feedback-cases", "any")["pooled: on, needed"],
                  "VI required, with image") == ("2", "3")


def test_pooled_wrong_answers_count_each_stored_answer_once(store_path: Path) -> None:
    result = runner.invoke(app, ["report", "--db", str(store_path), "--format", "csv", "--table", "wrong-answers",
                                 "--pool"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    counts = {(row["Task"], row["Turns"]): row["Count"] for row in rows}
    # reference_easy: "The pear." on turn 1 by p1, p2, u1 and on turn 2 by p2: 4 stored answers, shared by both runs
    assert counts[("reference_easy", "1, 2")] == "4"
    # false_belief_location: t1's turns 1 and 2 in each run: not shared (t1 went without its picture in 'needed')
    assert counts[("false_belief_location", "1, 2")] == "4"


def test_export_run_names_the_runs_after_run_without_policy(tmp_path: Path) -> None:
    """`study export-run --run NAME` (default --policy each) writes NAME:images=on and NAME:images=needed and says so;
    a report asking for NAME itself names those two runs."""
    from fastapi.testclient import TestClient

    from commet.apps.study.app import create_app
    from commet.apps.study.build import load_study
    from commet.apps.study.db import StudyDB
    from tests.test_study_export import PEOPLE, answer_all, study_files

    study_path, db_path = study_files(tmp_path)
    client = TestClient(create_app(study_path, db_path))
    study = load_study(study_path)[0]
    people = StudyDB(db_path, study.digest())
    tokens = people.create_participants([q for q, _ in PEOPLE])
    people.close()
    for token, (questionnaire, replies) in zip(tokens, PEOPLE, strict=True):
        answer_all(client, token, study.questionnaire(questionnaire).storyturns, replies)
    results = tmp_path / "results.sqlite"
    exported = runner.invoke(app, ["study", "export-run", str(study_path), "--study-db", str(db_path), "--db",
                                   str(results), "--run", "volunteers"])
    assert exported.exit_code == 0, exported.output
    assert "run 'volunteers:images=on'" in exported.output and "run 'volunteers:images=needed'" in exported.output
    with Store(results) as store:
        assert sorted(r.name for r in store.runs()) == ["volunteers:images=needed", "volunteers:images=on"]
    asked = runner.invoke(app, ["report", "--db", str(results), "--run", "volunteers"])  # both start so: named
    assert asked.exit_code == 2 and "volunteers:images=on" in asked.output and "volunteers:images=needed" in asked.output
    single = runner.invoke(app, ["study", "export-run", str(study_path), "--study-db", str(db_path), "--db",
                                 str(results), "--run", "volunteers", "--policy", "both"])
    assert single.exit_code == 0, single.output
    assert runner.invoke(app, ["report", "--db", str(results), "--run", "volunteers", "--table", "summary"]).exit_code == 0


def test_a_kappa_just_below_zero_prints_as_zero() -> None:
    from commet.reports.agreement import Agreement, _row, cohen_kappa

    # -0.0001 prints "0.000", never "-0.000"; so does a kappa of 0 computed from 1,000 pairs with no agreement beyond chance
    assert _row(Agreement("a", "b", 1, 1, -0.0001))[-1] == "0.000"
    pairs = [(True, True)] * 250 + [(True, False)] * 250 + [(False, True)] * 250 + [(False, False)] * 250
    assert _row(Agreement("a", "b", 500, 500, cohen_kappa(pairs)))[-1] == "0.000"


def test_a_csv_report_goes_into_a_folder_whose_name_has_a_dot(store_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "results.v2"
    result = runner.invoke(app, ["report", "--db", str(store_path), "--format", "csv", "--out", str(out),
                                 "--resamples", "100"])
    assert result.exit_code == 0, result.output
    assert out.is_dir() and (out / "feedback.csv").is_file() and (out / "summary.csv").is_file()
    one = runner.invoke(app, ["report", "--db", str(store_path), "--format", "csv", "--out", str(tmp_path / "t.csv"),
                              "--table", "summary", "--resamples", "100"])
    assert one.exit_code == 0 and (tmp_path / "t.csv").is_file()  # a .csv is still one table's file
    unknown = runner.invoke(app, ["report", "--db", str(store_path), "--out", str(tmp_path / "results.v3")])
    assert unknown.exit_code == 2 and "--format csv for a folder whose name has a dot" in unknown.output
