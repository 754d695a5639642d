"""The scene files a dataset ships tell what the pictures show, and nothing of the key.

* No place, thing or screen keeps a generator's id that names a role ("packed", "theirs", "own", "target"...):
  each is renamed ``place<k>``, ``thing<k>``, ``screen<k>`` in every task, and the file has no ``sees`` (who
  sees what: the key of a perspective question).
* The numbering (and the lists' order, sorted by it) is drawn from a stream seeded without the cell: the same item
  placed elsewhere in the counterbalancing (another cell, another answer) numbers its entities the same, so no
  entity's number or place in a list can go with the key.
* The pictures drawn from the shipped scenes are the generator's, pixel for pixel.
"""

from __future__ import annotations

import json
import re

import numpy as np

from commet.generation.procedural import (
    GENERATORS,
    IMAGE_DEPENDENT_TASKS,
    generate_dataset,
    generate_storyturn,
)
from commet.generation.procedural.render import draw_picture
from tests.test_procedural_nuisance import same_item_in_other_cells

ROLES = ("near", "far", "target", "other", "seen", "hidden", "meant", "given", "expected", "packed", "swapped",
         "own", "theirs", "new", "mine", "usual", "wanted", "real", "fake", "lost", "prize", "gift", "food")
NEUTRAL = re.compile(r"(place|thing|screen)([1-9][0-9]*)")
KEYS = ("places", "objects", "occluders")


def test_no_shipped_scene_file_names_a_role_or_says_who_sees_what() -> None:
    dataset = generate_dataset(tasks="all", per_task=3, seed=5, image_dependent_share=0.34)
    assert {st.task for st in dataset.storyturns} == set(GENERATORS)
    assert dataset.scenes
    for name, data in dataset.scenes.items():
        scene = json.loads(data)
        assert "sees" not in scene, name
        hidden = [e["id"] for key in KEYS for e in scene[key] if e.get("visible") is False]
        assert hidden == [], (name, hidden)  # a thing the picture does not show (inside a closed box) is no entry
        ids = [e["id"] for key in KEYS for e in scene[key]]
        assert all(NEUTRAL.fullmatch(i) for i in ids), (name, ids)
        assert not [i for i in ids if any(r in i for r in ROLES)], (name, ids)
        for key in KEYS:  # listed in the order of their numbers
            numbers = [int(NEUTRAL.fullmatch(e["id"]).group(2)) for e in scene[key]]  # type: ignore[union-attr]
            assert numbers == sorted(numbers), (name, key)
        references = {o[k] for o in scene["objects"] for k in ("location", "hidden_by")}
        assert references <= set(ids) | {a["id"] for a in scene["agents"]} | {None}, (name, references)


def test_the_generators_own_ids_would_fail_it() -> None:
    """The check has teeth: the world's ids (the scenes the generator keeps for its tests) do name roles."""
    named = set()
    for task in ("expectation_false_belief", "false_belief_location", "moral_false_belief", "true_belief_action"):
        _, builder = generate_storyturn(task, 0, seed=5, slot=0)
        named |= {e["id"] for scene in builder.scenes.values() for key in KEYS for e in scene[key]
                  if any(r in e["id"] for r in ROLES)}
        assert any("sees" in scene for scene in builder.scenes.values())
    assert {"packed", "theirs", "own", "other"} <= named, named


def test_the_numbering_is_the_same_in_every_cell() -> None:
    """The same item (task, index, seed) at four places in the counterbalancing (other cells, other answers):
    every world entity gets the same file id whenever the item has the same entities."""
    compared = 0
    for task in sorted(GENERATORS):
        for index in range(3):
            ids = [v.meta["scene ids"] for v in same_item_in_other_cells(task, index)]
            for other in ids[1:]:
                if set(other) == set(ids[0]):
                    assert other == ids[0], (task, index, ids[0], other)
                    compared += 1
    assert compared > 40


def test_the_shipped_scenes_draw_the_same_pictures() -> None:
    for task in sorted(GENERATORS):
        for image in (False, True) if task in IMAGE_DEPENDENT_TASKS else (False,):
            _, builder = generate_storyturn(task, 1, seed=9, image_dependent=image, slot=1)
            for image_id, scene in builder.scenes.items():
                shipped = builder.shipped[image_id]
                assert np.array_equal(np.asarray(draw_picture(scene)), np.asarray(draw_picture(shipped))), image_id
