"""Each task's test items follow the booklet item it is named after; controls stand apart, labelled.

The booklet's structure per task is data (``commet.generation.procedural.booklet.BOOKLET``):
the test item's questions in order, their types and the feedback before each. Every generated
StoryTurn (test item or control, text-complete or image-dependent) asks exactly those; it says
in its metadata whether it is the test item or a control; the share of test items is what the
design promises, block by block; and ``docs/tasks.md`` prints the same table.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from commet.generation.procedural import GENERATORS, IMAGE_DEPENDENT_TASKS, generate_storyturn
from commet.generation.procedural.booklet import BOOKLET, Step, booklet_table, feedback_kind
from commet.taxonomy import TASKS_BY_ID

DOCS = Path(__file__).resolve().parents[1] / "docs" / "tasks.md"
#: Per block of 12: how many test items each task has (the rest are its controls).
TEST_SHARE = {task: 12 // (1 + len(item.controls)) for task, item in BOOKLET.items()}


def test_every_task_has_its_booklet_item() -> None:
    assert set(BOOKLET) == set(GENERATORS) == set(TASKS_BY_ID)
    assert TEST_SHARE["reference_hard_perspective"] == 4 and TEST_SHARE["sarcasm"] == 6
    assert TEST_SHARE["common_desire"] == 12


@pytest.mark.parametrize("task", sorted(GENERATORS))
def test_test_items_ask_the_booklet_questions_and_controls_are_labelled(task: str) -> None:
    item = BOOKLET[task]
    roles = []
    for index in range(12):
        image_dependent = task in IMAGE_DEPENDENT_TASKS and index % 3 == 1
        storyturn, _ = generate_storyturn(task, index, 5, image_dependent)
        steps = tuple(Step(t.meta["asks"], t.meta["type"], feedback_kind(t.feedback)) for t in storyturn.turns)
        assert steps == item.steps, (storyturn.id, steps)
        role = storyturn.meta["item"]
        roles.append(role)
        if role == "control":
            assert storyturn.meta["control"] in item.controls
        else:
            assert role == "test" and "control" not in storyturn.meta
    assert roles.count("test") == TEST_SHARE[task], roles
    assert len(set(storyturn.meta.get("control") for storyturn in [generate_storyturn(task, k, 6)[0]
                                                                   for k in range(12)]) - {None}) \
        == len(item.controls)  # every control the booklet table names is generated


def test_pairs_are_test_items_together_or_controls_together() -> None:
    for index in range(12):
        for a, b in (("sarcasm", "non_sarcasm"), ("moral_false_belief", "moral_true_belief")):
            first, _ = generate_storyturn(a, index, 7)
            second, _ = generate_storyturn(b, index, 7)
            assert first.meta["item"] == second.meta["item"] and first.meta["pair"] == second.id


def test_the_docs_print_the_booklet_table() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for row in booklet_table():
        assert row in text, f"docs/tasks.md lacks: {row}"
