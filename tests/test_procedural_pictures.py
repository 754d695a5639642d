"""Pictures of events: consecutive pictures show what the story changed, and only that.

* Between two consecutive pictures of a StoryTurn the story changes the world (someone leaves or
  comes back, a thing is moved, held, spoiled, a face starts to cry): the scenes differ, the
  pictures differ in pixels inside the boxes of what changed, and nowhere else.
* Every place and prop the text names in the room (the door, the desk, the boxes, the screen) is in
  a picture of the story; grandparents are drawn older (grey hair, glasses).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from commet.generation.procedural import GENERATORS, IMAGE_DEPENDENT_TASKS, generate_storyturn
from commet.generation.procedural.render import draw_picture

#: Tasks whose stories show more than one picture.
UNFOLDING = ("false_belief_location", "expectation_false_belief", "moral_false_belief",
             "moral_true_belief", "lie_vs_false_statement", "second_order_belief_desire")
KEYS = ("agents", "places", "objects", "occluders")
PAD = 14  # outlines, ears, handles and lids may reach a little past an entity's box


def entities(scene: dict) -> dict[str, dict]:
    return {e["id"]: e for key in KEYS for e in scene[key]}


def changed(before: dict, after: dict) -> set[str]:
    """Entities that appear, disappear, or differ in anything drawn (box, expression, state, who holds them)."""
    a, b = entities(before), entities(after)
    return {i for i in set(a) | set(b) if a.get(i) != b.get(i)}


def region(scenes: tuple[dict, dict], ids: set[str]) -> np.ndarray:
    mask = np.zeros((scenes[0]["height"], scenes[0]["width"]), dtype=bool)
    for scene in scenes:
        for entity_id, entity in entities(scene).items():
            if entity_id in ids:
                x0, y0, x1, y1 = (int(v) for v in entity["bbox"])
                mask[max(0, y0 - PAD):y1 + PAD, max(0, x0 - PAD):x1 + PAD] = True
    return mask


@pytest.mark.parametrize("task", UNFOLDING)
def test_consecutive_pictures_differ_where_the_world_changed_and_nowhere_else(task: str) -> None:
    pairs = 0
    for index in range(6):
        image_dependent = task in IMAGE_DEPENDENT_TASKS and index % 3 == 2
        storyturn, builder = generate_storyturn(task, index, 12, image_dependent)
        scenes = [builder.scenes[t.image] for t in storyturn.turns if t.image]
        assert len(scenes) >= 2, storyturn.id
        for before, after in zip(scenes, scenes[1:], strict=False):
            ids = changed(before, after)
            assert ids, f"{storyturn.id}: two consecutive pictures of the same world"
            old, new = np.asarray(draw_picture(before)), np.asarray(draw_picture(after))
            differs = np.any(old != new, axis=-1)
            where = region((before, after), ids)
            assert not (differs & ~where).any(), f"{storyturn.id}: pixels changed outside {sorted(ids)}"
            assert differs.sum() > 60, f"{storyturn.id}: {sorted(ids)} changed but the picture hardly did"
            for entity_id in ids:  # each visible change shows
                entity = entities(after).get(entity_id) or entities(before)[entity_id]
                if entity.get("visible", True) and entity_id in entities(after) and entity_id in entities(before):
                    x0, y0, x1, y1 = (int(v) for v in entity["bbox"])
                    assert differs[y0:y1, x0:x1].sum() > 10, f"{storyturn.id}: {entity_id} changed unseen"
            pairs += 1
    assert pairs >= 6


def test_the_moral_pictures_show_the_spoiled_paper_and_the_tears() -> None:
    for index in range(4):
        for task, asks in (("moral_false_belief", "feels"), ("moral_true_belief", "why crying")):
            storyturn, builder = generate_storyturn(task, index, 13)
            turn = next(t for t in storyturn.turns if t.meta["asks"] == asks)
            scene = builder.scenes[turn.image]
            victim = storyturn.meta["world"]["log"]["things"]["theirs"]["owner"]
            assert next(a for a in scene["agents"] if a["id"] == victim)["expression"] == "crying"
            paper = next(o for o in scene["objects"] if o["id"] == "theirs")
            assert paper["visible"] and paper.get("state")
            picture = np.asarray(draw_picture(scene))
            face = next(a for a in scene["agents"] if a["id"] == victim)["bbox"]
            tears = np.all(picture[int(face[1]):int(face[1]) + 70, int(face[0]):int(face[2])] == (120, 190, 250), axis=-1)
            assert tears.sum() > 20, "a face that cries shows tears"


#: Words for things in the room, and what draws them: (scene key, kind).
PROPS = {"door": ("places", "door"), "desk": ("places", "table"), "shelf": ("places", "shelf"),
         "table": ("places", "table"), "lunchbox": ("places", "lunchbox"), "bag": ("places", "bag"),
         "box": ("places", "box"), "basket": ("places", "basket"), "toy chest": ("places", "toy chest"),
         "folding screen": ("occluders", "folding screen"), "big plant": ("occluders", "big plant"),
         "tall cupboard": ("occluders", "tall cupboard")}


def test_every_prop_the_text_names_is_drawn() -> None:
    checked = 0
    for task in sorted(GENERATORS):
        for index in range(4):
            storyturn, builder = generate_storyturn(task, index, 14, task in IMAGE_DEPENDENT_TASKS and index == 3)
            if not builder.scenes:
                continue
            text = " ".join(t.story for t in storyturn.turns).lower()
            drawn = {(key, e["kind"]) for scene in builder.scenes.values() for key in ("places", "occluders")
                     for e in scene[key]}
            for word, what in PROPS.items():
                if re.search(rf"\b{word}(es|s)?\b", text):
                    assert what in drawn, f"{storyturn.id}: the story names a {word} no picture shows"
                    checked += 1
    assert checked > 40


def test_grandparents_look_older() -> None:
    seen = 0
    for index in range(40):
        _, builder = generate_storyturn("interpretation", index, 15)
        scene = next(iter(builder.scenes.values()))
        for agent in scene["agents"]:
            old = agent["name"] in ("Grandma", "Grandpa")
            assert agent.get("old", False) == old
            if old:
                seen += 1
                assert tuple(agent["hair"]) == (205, 205, 210)
                picture = np.asarray(draw_picture(scene))
                x0, y0, x1, _ = (int(v) for v in agent["bbox"])
                glasses = np.all(np.abs(picture[y0:y0 + 70, x0:x1].astype(int) - (60, 60, 70)) < 25, axis=-1)
                assert glasses.sum() > 15, "glasses on the face"
    assert seen
