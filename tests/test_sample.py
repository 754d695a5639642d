"""The bundled sample dataset (src/commet/data/sample/): complete, valid and reproducible."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from commet.generation.procedural.render import draw, mask_ids
from commet.sources import bundled_sample_path, load_dataset, validate_path
from commet.taxonomy import TASKS, get_task

ROOT = Path(__file__).resolve().parents[1]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def sample():
    return load_dataset("sample")


def test_sample_validates_without_problems():
    problems = validate_path(bundled_sample_path())
    assert [str(p) for p in problems] == []


def test_sample_metadata(sample):
    assert sample.name == "commet-sample"
    assert sample.version == "1.0"
    assert sample.licence == "CC-BY-4.0"
    assert sample.description


def test_every_task_has_at_least_two_storyturns(sample):
    counts = Counter(st.task for st in sample)
    assert set(counts) == {task.id for task in TASKS}
    assert all(counts[task.id] >= 2 for task in TASKS), counts
    assert len(sample) >= 36


def test_ids_fields_and_categories(sample):
    ids = [st.id for st in sample]
    assert len(ids) == len(set(ids))
    for st in sample:
        task = get_task(st.task)
        assert st.id.startswith(f"sample-{st.task}-")
        assert st.source == "sample"
        assert st.category == task.category_for(st.image_dependent)
        assert st.mental_states == list(task.mental_states)
        assert 2 <= len(st.turns) <= 8


def test_image_dependent_story_in_each_required_category(sample):
    categories = {st.category for st in sample if st.image_dependent}
    assert {"Percept", "Intention", "MBK", "NLC"} <= categories
    assert any(st.images and not st.image_dependent for st in sample), (
        "some text-complete stories have pictures"
    )


def test_every_referenced_image_is_a_small_valid_png(sample):
    referenced = {name for st in sample for name in st.images}
    assert referenced
    for name in referenced:
        path = sample.image_path(name)
        assert path is not None, name
        data = path.read_bytes()
        assert data.startswith(PNG_SIGNATURE), name
        assert len(data) < 30_000, name
        with Image.open(path) as image:
            image.verify()
        with Image.open(path) as image:
            assert image.format == "PNG"
            assert image.size == (640, 480)  # the one renderer's size
    on_disk = {p.name for p in (sample.root / "images").iterdir()}
    assert on_disk == referenced, "every picture in images/ is used by a story"


def test_feedback_never_on_first_turn(sample):
    for st in sample:
        first = st.turns[0].feedback
        assert first is None or first.is_empty(), st.id


@pytest.mark.parametrize("task", ["common_desire", "diverse_desire", "diverse_belief"])
def test_branch_points_with_answer_keyed_feedback(sample, task):
    for st in (s for s in sample if s.task == task):
        branch_turns = [k for k, t in enumerate(st.turns) if t.is_branch_point]
        assert len(branch_turns) >= 2, st.id
        assert {len(st.turns[k].answers) for k in branch_turns} == {2}
        keyed = [k for k, t in enumerate(st.turns) if t.feedback and t.feedback.by_answer]
        assert keyed, st.id
        for k in keyed:
            assert k > 0
            assert [e.answer for e in st.turns[k].feedback.by_answer] == st.turns[k - 1].answers


def test_common_and_diverse_desire_branch_directions(sample):
    def key(answer: str) -> str:  # "The green paint" -> "gree", "Pirates" -> "pira"
        return answer.lower().removeprefix("the ").split()[0][:4]

    for st in (s for s in sample if s.task in ("common_desire", "diverse_desire")):
        first, second = st.turns[0].answers, st.turns[1].answers
        # Branches align by index: the character picks the same thing (common) or the other one (diverse).
        expected = second if st.task == "common_desire" else list(reversed(second))
        assert all(key(a) in b.lower() for a, b in zip(first, expected, strict=True)), st.id


def test_right_wrong_feedback_where_the_task_calls_for_it(sample):
    tasks = {task.id for task in TASKS if "right/wrong" in task.feedback}
    assert tasks
    for st in (s for s in sample if s.task in tasks):
        rw = [t for t in st.turns if t.feedback and t.feedback.right and t.feedback.wrong]
        assert rw, f"{st.id} has no right/wrong feedback"
    for task_id in ("true_belief_action", "moral_true_belief", "lie_vs_false_statement"):
        for st in (s for s in sample if s.task == task_id):
            assert sum(bool(t.feedback and t.feedback.right) for t in st.turns) >= 2, (
                f"{st.id}: two feedback points"
            )


def test_sarcasm_minimal_pair_differs_only_in_the_picture(sample):
    sincere, sarcastic = sample.get("sample-non_sarcasm-2"), sample.get("sample-sarcasm-2")
    assert sincere.image_dependent and sarcastic.image_dependent
    assert [t.story for t in sincere.turns] == [t.story for t in sarcastic.turns]
    assert [t.question for t in sincere.turns] == [t.question for t in sarcastic.turns]
    assert sincere.turns[-1].answers == ["Happy"] and sarcastic.turns[-1].answers == ["Sad"]
    assert sincere.images != sarcastic.images


def test_sample_is_canonical_hand_edited_data():
    """The sample's StoryTurns are data: each line is the canonical form of itself (defaults left out)."""
    from commet.format.model import StoryTurn

    lines = (bundled_sample_path() / "storyturns.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 41
    for line in lines:
        assert StoryTurn.model_validate_json(line).model_dump_json(exclude_defaults=True) == line


def test_every_why_question_of_the_sample_carries_a_rubric(sample):
    why = [(st.id, k, t) for st in sample for k, t in enumerate(st.turns)
           if t.question.lower().startswith("why") or "why?" in t.question.lower() or t.question == "How do you know?"]
    assert len(why) >= 45
    missing = [(sid, k) for sid, k, t in why if t.rubric is None]
    assert missing == []
    for _, _, turn in why:
        assert turn.rubric is not None and turn.rubric.key_inference and turn.rubric.false_inferences


def test_rendering_the_scene_files_reproduces_the_sample_pictures(tmp_path):
    """The pictures are data: each is its scene file drawn by the procedural renderer, byte for byte."""
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "draw_sample_pictures.py"), str(tmp_path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    bundled = bundled_sample_path() / "images"
    drawn = sorted(p.name for p in tmp_path.rglob("*.png"))
    assert drawn == sorted(p.name for p in bundled.iterdir())
    assert drawn == sorted(p.stem + ".png" for p in (bundled_sample_path() / "scenes").glob("*.json"))
    for path in tmp_path.rglob("*.png"):
        assert path.read_bytes() == (bundled / path.name).read_bytes(), path.name
    assert not (ROOT / "scripts" / "draw_sample_pictures.py").read_text().count("ImageDraw")  # no own vocabulary


def _scenes() -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((bundled_sample_path() / "scenes").glob("*.json"))}


def test_every_sample_scene_draws_each_entity_once_inside_its_box():
    for name, scene in _scenes().items():
        image, mask = draw(scene)
        ids, values = np.asarray(mask), mask_ids(scene)
        entities = [e for key in ("agents", "places", "objects", "occluders") for e in scene[key]]
        assert len({e["id"] for e in entities}) == len(entities) == len(values), name
        for entity in entities:
            assert 0 <= entity["bbox"][0] < entity["bbox"][2] <= scene["width"], f"{name}: {entity['id']} off the picture"
            assert 0 <= entity["bbox"][1] < entity["bbox"][3] <= scene["height"], f"{name}: {entity['id']} off the picture"
            ys, xs = np.nonzero(ids == values[entity["id"]])
            assert len(xs) > 30, f"{name}: {entity['id']} not drawn"
            x0, y0, x1, y1 = entity["bbox"]
            slack = 12  # handles, tails, a sitting child's legs may reach a little past the box
            assert xs.min() >= x0 - slack and xs.max() <= x1 + slack, f"{name}: {entity['id']}"
            assert ys.min() >= y0 - slack and ys.max() <= y1 + slack, f"{name}: {entity['id']}"


def test_a_misspelt_kind_in_a_scene_is_refused_not_drawn_as_something_else():
    scene = _scenes()["sample-reference_easy-2-0"]
    for key, kind in (("places", "flowerpot"), ("occluders", "bushes"), ("objects", "bal")):
        broken = json.loads(json.dumps(scene))
        broken[key][0]["kind"] = kind
        with pytest.raises(ValueError, match=repr(kind)):
            draw(broken)


def _centre_x(entity: dict) -> float:
    return (entity["bbox"][0] + entity["bbox"][2]) / 2


def test_each_sample_scene_says_who_sees_what_as_its_boxes_show():
    """``sees`` is recomputed from the boxes: a thing is hidden from someone when an occluder stands
    between them and reaches above their eyes (a tall grandad looks over a box that hides a teddy from Nina)."""
    told = {name for name, scene in _scenes().items() if scene.get("sight") == "story"}
    # One text-complete story says who stands "at the front" and who "at the side": a flat picture
    # cannot show that, so its scene marks its ``sees`` as told by the story. No image-dependent one may.
    assert told == {"sample-reference_hard_perspective-2-0"}
    assert not any(st.image_dependent for st in load_dataset("sample") if f"{st.id}-0" in told)
    for name, scene in _scenes().items():
        if name in told:
            continue
        for agent in scene["agents"]:
            ax, eyes = _centre_x(agent), agent["bbox"][1] + (agent["bbox"][3] - agent["bbox"][1]) * 0.125
            seen = [o["id"] for o in scene["objects"] if o["visible"] and not any(
                min(ax, _centre_x(o)) < _centre_x(occ) < max(ax, _centre_x(o)) and occ["bbox"][1] < eyes
                for occ in scene["occluders"])]
            assert scene["sees"][agent["id"]] == seen, f"{name}: {agent['id']}"


def test_the_image_dependent_facts_are_in_the_scenes(sample):
    """What the image-dependent questions need is in the picture, and the story text does not say it."""
    scenes = _scenes()

    def things(name: str) -> dict[str, dict]:
        return {o["id"]: o for o in scenes[name]["objects"]}

    def face(name: str) -> str:
        return scenes[name]["agents"][0]["expression"]

    assert face("sample-non_sarcasm-2-0") == "happy" and face("sample-sarcasm-2-0") == "cross"
    assert {k: v for k, v in scenes["sample-non_sarcasm-2-0"].items() if k != "agents"} == {
        k: v for k, v in scenes["sample-sarcasm-2-0"].items() if k != "agents"}  # only the face differs
    # the bush hides the ball by the flower pot from Amara; Jon sees both
    assert scenes["sample-reference_easy-2-0"]["sees"] == {"amara": ["ball_tree"], "jon": ["ball_tree", "ball_pot"]}
    # the haystack hides the big pumpkin from Aunt June, the rock the big shell from Dad
    assert scenes["sample-reference_hard_perspective-1-0"]["sees"]["june"] == ["small", "middle"]
    assert scenes["sample-reference_hard_perspective-3-0"]["sees"]["dad"] == ["middle", "small"]
    assert things("sample-moral_false_belief-2-0")["ball"]["location"] == "green_basket"
    for name, mug in (("sample-reference_hard_referent-1-0", "red_mug"), ("sample-reference_hard_referent-1-1", "green_mug")):
        near = things(name)
        glasses = near.pop("glasses")
        assert min(near.values(), key=lambda o: abs(_centre_x(o) - _centre_x(glasses)))["id"] == mug, name
    assert things("sample-reference_hard_referent-1-0")["red_mug"]["feature"] == "steam"
    cups = things("sample-interpretation-2-0")
    assert [(c["colour"], c["feature"]) for c in cups.values()] == [("blue", "dots"), ("red", "dots"), ("yellow", None)]
    texts = {st.id: " ".join(t.story for t in st.turns).lower() for st in sample}
    assert "smile" not in texts["sample-sarcasm-2"] and "frown" not in texts["sample-sarcasm-2"]
    assert "green basket" not in texts["sample-moral_false_belief-2"]
