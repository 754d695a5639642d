"""Counterbalancing and variety of the procedural generator, measured the way issue 14 asks.

* ``commet audit``: a learner that never reads the story (answer position, yes/no and answer
  text per (task, turn) and per question wording), trained on one half of each task and scored
  on the other, stays within 5 points of chance for every task on two seeds; on the hand-written
  sample it is far above chance (so the audit can fail).
* ``baseline:shortcut`` answers real requests from what it learned.
* Variety: at least 10 skeletons per task, no generated StoryTurn closer than 0.5 (word-sequence
  similarity) to a StoryTurn printed in the paper (tests/data/paper_storyturns.json).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.format import load_dataset
from commet.format.model import Option, StoryTurn, Turn
from commet.generation.procedural import GENERATORS, generate_storyturn, is_image_dependent
from commet.generation.procedural.variety import closest, skeleton_counts, vocabulary_sizes, words
from commet.models.base import Message, ModelRequest
from commet.models.registry import create_model
from commet.models.shortcut import ShortcutLearner, audit_dataset, closed_turn

PAPER = Path(__file__).parent / "data" / "paper_storyturns.json"
#: Per task: 240 StoryTurns (20 counterbalancing blocks), text only (no pictures drawn): a few seconds.
PER_TASK = 240


def generated(seed: int, per_task: int = PER_TASK) -> list[StoryTurn]:
    return [generate_storyturn(task, k, seed, is_image_dependent(task, k, per_task, 0.3))[0]
            for task in sorted(GENERATORS) for k in range(per_task)]


@pytest.fixture(scope="module", params=[1, 2])
def dataset(request: pytest.FixtureRequest) -> list[StoryTurn]:
    return generated(request.param)


def test_shortcut_learner_is_at_chance_on_generated_data(dataset: list[StoryTurn]) -> None:
    audit = audit_dataset(dataset)
    scored = {line.task for line in audit.tasks if line.turns}
    assert scored == set(GENERATORS) - {"implicit_false_belief"}  # its questions are open, by design
    for line in audit.tasks:
        assert abs(line.excess) <= 5.0, f"{line.task}: {100 * line.accuracy:.1f} % vs chance {100 * line.chance_rate:.1f}"


def test_answers_are_balanced_within_every_task_and_turn(dataset: list[StoryTurn]) -> None:
    """Exact, not just on average: every yes/no and every answer position is balanced per (task, turn)."""
    from collections import Counter, defaultdict

    counts: dict[tuple[str, int], Counter[object]] = defaultdict(Counter)
    for st in dataset:
        for k, turn in enumerate(st.turns):
            closed = closed_turn(st.task, k, turn)
            if closed is None or len(closed.right) > 1:
                continue
            counts[(st.task, k)][min(closed.right[0])] += 1
    assert counts
    for key, counter in counts.items():
        shares = [n / sum(counter.values()) for n in counter.values()]
        assert len(counter) >= 2 and max(shares) - min(shares) <= 0.1, (key, counter)


def test_audit_finds_the_shortcuts_of_a_dataset_that_has_them() -> None:
    audit = audit_dataset(list(load_dataset("sample")))
    assert audit.overall.excess > 15  # the hand-written sample: same answer per (task, turn), often
    # and a crafted set where every yes/no answer is "yes" is solved blind
    crafted = [StoryTurn(id=f"s{k}", task="sarcasm", category="NLCE", turns=[
        Turn(story="x", question=f"Is {name} happy?", answers=["Yes"]),
        Turn(question="Which one, the red one or the blue one?", answers=["The blue one"],
             options=[Option(text="the red one"), Option(text="the blue one")])]) for k, name in
        enumerate(["Ann", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hal"])]
    line = audit_dataset(crafted).tasks[0]
    assert line.accuracy == 1.0 and line.chance_rate == 0.5


def test_audit_cli(tmp_path: Path) -> None:
    from commet.cli import app

    result = CliRunner().invoke(app, ["audit", "sample", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    overall = report["tasks"][-1]
    assert overall["task"] == "overall" and overall["accuracy"] > overall["chance"]
    table = CliRunner().invoke(app, ["audit", "sample"])
    assert table.exit_code == 0 and "chance" in table.output
    missing = CliRunner().invoke(app, ["audit", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "Traceback" not in missing.output
    strict = CliRunner().invoke(app, ["audit", "sample", "--fail-above", "5"])
    assert strict.exit_code == 1 and "above chance by more than 5" in strict.output
    from commet.format.dataset import Dataset

    balanced = [StoryTurn(id=f"b{k}", task="sarcasm", category="NLCE", turns=[
        Turn(story="x", question="Is Mia happy?", answers=["Yes" if k % 2 else "No"])]) for k in range(8)]
    Dataset(storyturns=balanced, name="b").save(tmp_path / "balanced")
    fine = CliRunner().invoke(app, ["audit", str(tmp_path / "balanced"), "--fail-above", "5"])
    assert fine.exit_code == 0, fine.output


def test_baseline_shortcut_model_answers_from_what_it_learned(tmp_path: Path) -> None:
    from commet.format.dataset import Dataset

    stories = [StoryTurn(id=f"s{k}", task="sarcasm", category="NLCE", turns=[
        Turn(story="x", question="How does Mia feel, happy or sad?", answers=["Sad"])]) for k in range(6)]
    Dataset(storyturns=stories, name="t").save(tmp_path / "ds")
    model = create_model(f"baseline:shortcut?train={tmp_path / 'ds'}&half=first")
    assert model.identity()["half"] == "first"
    request = ModelRequest((Message.text("user", "Story text.\nHow does Leo feel, happy or sad?"),),
                           tags={"story_id": "s5", "turn": 0})
    reply = asyncio.run(model.generate(request))
    assert reply.text == "Sad."
    with pytest.raises(Exception, match="train="):
        create_model("baseline:shortcut")


def test_learner_uses_question_wording() -> None:
    learner = ShortcutLearner().fit([StoryTurn(id=f"s{k}", task="t", category="Belief", turns=[
        Turn(question="Is the box open?" if k % 2 else "Is the lid shut?", answers=["Yes" if k % 2 else "No"])])
        for k in range(20)])
    assert learner.answer_text("Is the box open?", []) == "Yes."
    assert learner.answer_text("Is the lid shut?", []) == "No."


def test_variety_skeletons_vocabulary_and_distance_from_the_paper() -> None:
    storyturns = generated(3, per_task=30)
    skeletons = skeleton_counts(storyturns)
    assert set(skeletons) == set(GENERATORS) and min(skeletons.values()) >= 10, skeletons
    assert min(vocabulary_sizes(storyturns).values()) >= 80
    paper = [words(item["text"]) for item in json.loads(PAPER.read_text())["storyturns"]]
    assert len(paper) == 4 and all(len(p) > 50 for p in paper)
    worst = max((closest(st, paper), st.id) for st in storyturns)
    assert worst[0] < 0.5, worst
