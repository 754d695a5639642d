"""``study export-run`` writes the paper's Human "Yes" and "No" rows as two runs (issue 20, point 8).

Four participants answer a crafted three-StoryTurn study through the real app (in process);
the expected story accuracies per picture policy are counted by hand below and compared with
the stored runs and with ``commet report --format csv``.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from fastapi.testclient import TestClient
from PIL import Image
from typer.testing import CliRunner

from commet.apps.study.app import create_app
from commet.apps.study.build import build_study, load_study
from commet.apps.study.db import StudyDB
from commet.cli import app as cli
from commet.conditions import ImagePolicy
from commet.format import Dataset, StoryTurn, Turn
from commet.reports import run_metrics
from commet.store import Store

BELIEF = StoryTurn(id="ball", task="false_belief_location", category="Belief", turns=[
    Turn(story="Ana puts her ball in the basket and leaves. Ben moves it to the box.",
         question="Where will Ana look, the basket or the box?", answers=["Basket"]),
    Turn(question="Where is the ball really, the basket or the box?", answers=["Box"])])
DESIRE = StoryTurn(id="snack", task="diverse_desire", category="Desire", turns=[
    Turn(story="Sam likes cookies more than pears.", image="snack.png",
         question="Which will Sam pick, the cookie or the pear?", answers=["Cookie"])])
PERCEPT = StoryTurn(id="muffin", task="reference_hard_perspective", category="Percept", image_dependent=True, turns=[
    Turn(story="Dad packs the muffin Mia asked for.", image="muffins.png",
         question="Which muffin will Dad pack, the big or the small one?", answers=["Small"])])

#: Per participant: questionnaire (0 shows all pictures, 1 only the needed one) and replies per StoryTurn.
PEOPLE = [
    (0, {"ball": ["The basket", "The box"], "snack": ["The cookie"], "muffin": ["Small"]}),  # 3 of 3
    (0, {"ball": ["The box", "The box"], "snack": ["The cookie"], "muffin": ["Small"]}),  # ball wrong
    (1, {"ball": ["The basket", "The box"], "snack": ["The cookie"], "muffin": ["Big"]}),  # muffin wrong
    (1, {"snack": ["The pear"], "muffin": ["Small"], "ball": ["The basket"]}),  # snack wrong, ball unfinished
]
#: Counted by hand from PEOPLE: (right, total) per category for each picture policy.
EXPECTED = {
    "all": {"Belief": (1, 2), "Desire": (2, 2), "Percept": (2, 2)},
    "needed": {"Belief": (1, 1), "Desire": (1, 2), "Percept": (1, 2)},
}


def study_files(tmp_path: Path) -> tuple[Path, Path]:
    folder = Dataset([BELIEF, DESIRE, PERCEPT], name="crafted").save(tmp_path / "ds")
    for name, colour in (("snack.png", (200, 60, 60)), ("muffins.png", (60, 60, 200))):
        Image.new("RGB", (32, 24), colour).save(folder / "images" / name)
    study = build_study(folder, tmp_path / "study.json", questionnaires=2, grouping="task")
    for questionnaire in study.questionnaires:  # a fixed order, so that PEOPLE's stopping points are known
        questionnaire.storyturns = ["snack", "muffin", "ball"]
    study.save(tmp_path / "study.json")
    return tmp_path / "study.json", tmp_path / "study.sqlite"


def answer_all(client: TestClient, token: str, order: list[str], replies: dict[str, list[str]]) -> None:
    """Answer in questionnaire order through the app, as far as the replies go."""
    page = client.get(f"/p/{token}").text
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    client.post(f"/p/{token}/consent", data={"csrf": csrf, "adult": "yes"})
    while True:
        page = client.get(f"/p/{token}").text
        where = re.search(r'name="story" value="(\d+)".*?name="turn" value="(\d+)"', page, re.S)
        if where is None:
            return
        story_id = order[int(where.group(1)) - 1]
        turn = int(where.group(2))
        given = replies.get(story_id, [])
        if turn >= len(given):
            return
        client.post(f"/p/{token}/answer", data={"csrf": csrf, "story": where.group(1), "turn": str(turn),
                                                 "response": given[turn]})


def table1_rows(report_csv: str) -> dict[str, dict[str, str]]:
    """The rows of ``commet report --format csv --table text-complete`` (paper Table 1) by run name."""
    lines = report_csv.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Run,"))
    return {row["Run"]: row for row in csv.DictReader(io.StringIO("\n".join(lines[start:])))}


def test_export_run_writes_one_run_per_picture_policy(tmp_path: Path) -> None:
    study_path, db_path = study_files(tmp_path)
    client = TestClient(create_app(study_path, db_path))
    study = load_study(study_path)[0]
    db = StudyDB(db_path, study.digest())
    tokens = db.create_participants([q for q, _ in PEOPLE])
    db.close()
    for token, (questionnaire, replies) in zip(tokens, PEOPLE, strict=True):
        answer_all(client, token, study.questionnaire(questionnaire).storyturns, replies)

    store_path = tmp_path / "commet.sqlite"
    result = CliRunner().invoke(cli, ["study", "export-run", str(study_path), "--study-db", str(db_path),
                                      "--db", str(store_path)])
    assert result.exit_code == 0, result.output
    assert "run 'human:images=on' (model human, pictures: all): 6 StoryTurns from 2 participants" in result.output
    assert "run 'human:images=needed' (model human, pictures: needed): 5 StoryTurns from 2 participants" in result.output
    assert "1 unfinished StoryTurns left out" in result.output  # participant 4's ball
    with Store(store_path) as store:
        runs = {run.name: run for run in store.runs()}
        assert set(runs) == {"human:images=on", "human:images=needed"}
        for name, policy in (("human:images=on", "all"), ("human:images=needed", "needed")):
            run = runs[name]
            assert run.model == "human" and run.settings.stored["policy"] == policy
            assert run.settings.images is {"all": ImagePolicy.on, "needed": ImagePolicy.needed}[policy]
            assert run.settings.dataset_path == str((tmp_path / "ds").resolve())
            metrics = run_metrics(store, run)
            got = {c: (t.correct, t.total) for c, t in metrics.per_category.items()}
            assert got == EXPECTED[policy], name
    report = CliRunner().invoke(cli, ["report", "--db", str(store_path), "--format", "csv", "--table",
                                      "text-complete", "--resamples", "100"])
    assert report.exit_code == 0, report.output
    rows = table1_rows(report.output)
    # Table 1 is the text-complete subset (Belief, Desire): Human "Yes" 3 of 4, Human "No" 2 of 3
    yes, no = rows["human:images=on"], rows["human:images=needed"]
    assert (yes["Overall k"], yes["Overall n"], yes["Belief k"], yes["Belief n"]) == ("3", "4", "1", "2")
    assert (no["Overall k"], no["Overall n"], no["Desire k"], no["Desire n"]) == ("2", "3", "1", "2")
    assert (yes["Image"], no["Image"]) == ("Yes", "No")

    pooled = CliRunner().invoke(cli, ["study", "export-run", str(study_path), "--study-db", str(db_path),
                                      "--db", str(store_path), "--policy", "both", "--run", "human-pooled"])
    assert pooled.exit_code == 0, pooled.output
    with Store(store_path) as store:
        run = store.get_run("human-pooled")
        assert run is not None and run.settings.images is None and run.settings.images_label == "on+needed"
        assert run_metrics(store, run).stories.total == 6 + 5
    clash = CliRunner().invoke(cli, ["study", "export-run", str(study_path), "--study-db", str(db_path),
                                     "--db", str(store_path), "--run", "human-pooled", "--policy", "all"])
    assert clash.exit_code == 2 and "already exists" in clash.output
    with Store(store_path) as store:  # refused before anything was written
        assert {r.name for r in store.runs()} == {"human:images=on", "human:images=needed", "human-pooled"}
