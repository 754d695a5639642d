"""Study questionnaires (paper, Appendix D): selection per task and image requirement, seeds, links."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.apps.study.build import (
    Study,
    StudyError,
    build_study,
    estimated_minutes,
    load_study,
    select_questionnaires,
    shows_image,
)
from commet.apps.study.db import StudyDatabaseError, StudyDB
from commet.cli import app as cli
from commet.format import Dataset, StoryTurn, Turn
from commet.sources import load_dataset
from commet.taxonomy import TASKS
from tests.conftest import write_png

IMAGE_TASKS = ("reference_hard_referent", "reference_hard_perspective", "interpretation", "sarcasm")


def storyturn(task: str, category: str, n: int, image_dependent: bool) -> StoryTurn:
    kind = "img" if image_dependent else "txt"
    story_id = f"{task}-{kind}-{n}"
    return StoryTurn(id=story_id, task=task, category=category, image_dependent=image_dependent,
                     turns=[Turn(story=f"Story {n}.", question="Is it so, yes or no?", answers=["Yes"],
                                 image=f"{story_id}.png" if image_dependent else None)])


@pytest.fixture
def dataset_dir(tmp_path: Path) -> Path:
    """Five text-complete StoryTurns per task (one for emotion_reminder, none for common_desire), and
    three image-dependent ones for four tasks."""
    stories = []
    for task in TASKS:
        count = {"common_desire": 0, "emotion_reminder": 1}.get(task.id, 5)
        stories += [storyturn(task.id, task.category, n, False) for n in range(count)]
        if task.id in IMAGE_TASKS:
            stories += [storyturn(task.id, task.category_for(True), n, True) for n in range(3)]
    for st in stories:  # an image-dependent StoryTurn needs its picture to validate
        for image in st.images:
            write_png(tmp_path / "ds" / "images" / image)
    return Dataset(stories, name="synthetic").save(tmp_path / "ds")


def combination(story_id: str) -> tuple[str, bool]:
    task, kind, _ = story_id.rsplit("-", 2)
    return task, kind == "img"


def test_per_task_grouping_is_kept_as_an_option(dataset_dir: Path) -> None:
    questionnaires, combinations = select_questionnaires(load_dataset(dataset_dir), 8, seed=1, grouping="task")
    shortfalls = [c for c in combinations if c.available < c.wanted]
    assert len(combinations) == 18 + 4
    assert [q.image_policy for q in questionnaires] == ["all", "needed"] * 4
    for q in questionnaires:
        assert len(set(q.storyturns)) == len(q.storyturns)
        per = Counter(combination(i) for i in q.storyturns)
        for task in TASKS:
            wanted = {"common_desire": 0, "emotion_reminder": 1}.get(task.id, 2)
            assert per[(task.id, False)] == wanted
            assert per[(task.id, True)] == (1 if task.id in IMAGE_TASKS else 0)
        assert len(q.storyturns) == 16 * 2 + 1 + 4
    assert {(s.group, s.image_dependent, s.wanted, s.available) for s in shortfalls} == {
        ("common_desire", False, 2, 0), ("emotion_reminder", False, 2, 1)}
    # StoryTurns are dealt in turn: 16 picks of 5 text-complete StoryTurns use each 3 or 4 times
    uses = Counter(i for q in questionnaires for i in q.storyturns if combination(i) == ("implicit_false_belief", False))
    assert len(uses) == 5 and set(uses.values()) <= {3, 4}


PAPER_IMAGE_TASKS = {"reference_hard_perspective": "Percept", "reference_hard_referent": "Intention",
                     "moral_false_belief": "MBK", "sarcasm": "NLC"}


@pytest.fixture
def complete_dir(tmp_path: Path) -> Path:
    """Two text-complete StoryTurns per booklet task and one image-dependent StoryTurn per Table 2 category."""
    stories = [storyturn(task.id, task.category, n, False) for task in TASKS for n in range(2)]
    stories += [storyturn(task, category, 0, True) for task, category in PAPER_IMAGE_TASKS.items()]
    for st in stories:
        for image in st.images:
            write_png(tmp_path / "complete" / "images" / image)
    return Dataset(stories, name="complete").save(tmp_path / "complete")


def test_paper_design_has_20_combinations_and_36_storyturns(complete_dir: Path) -> None:
    """Appendix D by hand: 16 task groups (18 tasks, two minimal pairs joined) x 2 + 4 categories x 1 = 36."""
    questionnaires, combinations = select_questionnaires(load_dataset(complete_dir), 8, seed=4)
    text = [c for c in combinations if not c.image_dependent]
    pictures = [c for c in combinations if c.image_dependent]
    assert (len(combinations), len(text), len(pictures)) == (20, 16, 4)
    assert [c.group for c in pictures] == ["Percept", "Intention", "MBK", "NLC"]
    joined = {c.group: c.available for c in text if c.available == 4}
    assert joined == {"sarcasm": 4, "moral_false_belief": 4}  # sarcasm + non_sarcasm, both moral judgements
    assert all(c.available == 2 for c in text if c.group not in joined)
    assert [len(q.storyturns) for q in questionnaires] == [36] * 8
    assert [q.image_policy for q in questionnaires] == ["all", "needed"] * 4
    for q in questionnaires:
        per = Counter(combination(i) for i in q.storyturns)
        assert sum(n for (_, img), n in per.items() if img) == 4
        assert all(per[(task, True)] == 1 for task in PAPER_IMAGE_TASKS)
        pair = per[("sarcasm", False)] + per[("non_sarcasm", False)]
        moral = per[("moral_false_belief", False)] + per[("moral_true_belief", False)]
        assert pair == moral == 2
        for task in TASKS:  # every other task: both of its text-complete StoryTurns
            if task.id not in ("sarcasm", "non_sarcasm", "moral_false_belief", "moral_true_belief"):
                assert per[(task.id, False)] == 2
    # a joined group of 4 dealt 2 at a time to 8 questionnaires: each of its StoryTurns 4 times
    uses = Counter(i for q in questionnaires for i in q.storyturns if i.startswith(("sarcasm-txt", "non_sarcasm-txt")))
    assert sorted(uses.values()) == [4, 4, 4, 4]


def test_build_prints_the_design(complete_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "study.json"
    result = CliRunner().invoke(cli, ["study", "build", "--dataset", str(complete_dir), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "20 combinations: 16 text-complete x 2, 4 image-dependent x 1 = 36 StoryTurns wanted" in result.output
    assert "StoryTurns per questionnaire: 36\n" in result.output
    assert "8 questionnaires: 4 with all pictures, 4 with pictures only where needed" in result.output
    assert "too few" not in result.output
    by_task = CliRunner().invoke(cli, ["study", "build", "--dataset", str(complete_dir), "--out", str(out),
                                       "--grouping", "task"])
    assert by_task.exit_code == 0, by_task.output
    # 18 tasks text-complete x 2 + 4 tasks image-dependent x 1
    assert "22 combinations: 18 text-complete x 2, 4 image-dependent x 1 = 40 StoryTurns wanted" in by_task.output
    assert json.loads(out.read_text())["grouping"] == "task"


def test_consent_duration_is_estimated_from_the_questionnaire() -> None:
    # 36 StoryTurns and 130 typed answers: 18 + 65 = 83 minutes, said as 85
    assert estimated_minutes(36, 130) == 85
    assert estimated_minutes(1, 1) == 5 and estimated_minutes(10, 10) == 10


def test_seed_reproduces_the_selection(dataset_dir: Path, tmp_path: Path) -> None:
    first = build_study(dataset_dir, tmp_path / "a.json", questionnaires=4, seed=5)
    again = build_study(dataset_dir, tmp_path / "b.json", questionnaires=4, seed=5)
    other = build_study(dataset_dir, tmp_path / "c.json", questionnaires=4, seed=6)
    assert first.questionnaires == again.questionnaires and first.digest() == again.digest()
    assert first.questionnaires != other.questionnaires


def test_image_policy() -> None:
    text, picture = storyturn("sarcasm", "NLCE", 0, False), storyturn("sarcasm", "NLC", 0, True)
    assert shows_image(text, "all") and shows_image(picture, "all") and shows_image(picture, "needed")
    assert not shows_image(text, "needed")


def test_cli_build_links_and_dataset_pinning(dataset_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "study.json"
    result = runner.invoke(cli, ["study", "build", "--dataset", str(dataset_dir), "--out", str(out),
                                 "--questionnaires", "4", "--seed", "3", "--judge", "rules"])
    assert result.exit_code == 0, result.output
    assert "too few StoryTurns: emotion_reminder (text-complete): 1 of 2" in result.output
    data = json.loads(out.read_text())
    assert data["dataset"]["hash"] == load_dataset(dataset_dir).content_hash()
    assert data["judge"] == "rules" and data["seed"] == 3 and len(data["questionnaires"]) == 4
    assert data["grouping"] == "paper" and data["participant"]["adult_confirmation"]
    assert {q["image_policy"] for q in data["questionnaires"]} == {"all", "needed"}
    study, _ = load_study(out)

    db = tmp_path / "study.sqlite"
    result = runner.invoke(cli, ["study", "links", str(out), "--db", str(db), "--count", "5",
                                 "--base-url", "https://study.example/"])
    assert result.exit_code == 0, result.output
    links = result.output.split()
    tokens = [link.removeprefix("https://study.example/p/") for link in links]
    assert len(set(tokens)) == 5 and all(len(t) >= 43 for t in tokens)
    store = StudyDB(db, study.digest())
    assert Counter(p["questionnaire"] for p in store.participants()) == {0: 2, 1: 1, 2: 1, 3: 1}
    store.close()

    other = build_study(dataset_dir, tmp_path / "other.json", questionnaires=2, seed=9)
    with pytest.raises(StudyDatabaseError):
        StudyDB(db, other.digest())

    with (dataset_dir / "storyturns.jsonl").open("a") as handle:
        handle.write(storyturn("sarcasm", "NLCE", 99, False).model_dump_json() + "\n")
    with pytest.raises(StudyError, match="changed"):
        load_study(out)
    result = runner.invoke(cli, ["study", "links", str(out), "--db", str(db)])
    assert result.exit_code == 2 and "changed" in result.output


def test_study_file_round_trip(dataset_dir: Path, tmp_path: Path) -> None:
    study = build_study(dataset_dir, tmp_path / "s.json", questionnaires=2)
    assert Study.model_validate_json((tmp_path / "s.json").read_text()) == study
    assert study.dataset.path == "ds"  # relative to the study file, so both can move together
