"""The procedural generator: answers from the world state, pictures from the same state, reproducibility."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from commet.format import load_dataset, validate_path
from commet.generation.procedural import (
    GENERATORS,
    IMAGE_DEPENDENT_TASKS,
    generate_dataset,
    generate_storyturn,
    write_dataset,
)
from commet.generation.procedural.render import draw, mask_ids
from commet.taxonomy import TASKS_BY_ID


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("proc") / "ds"
    start = time.perf_counter()
    write_dataset(out, tasks="all", per_task=3, seed=11, image_dependent_share=0.34)
    assert time.perf_counter() - start < 10, "18 tasks x 3 must generate fast"
    return out


@pytest.fixture(scope="module")
def scenes(folder: Path) -> dict[str, dict]:
    return {p.name[: -len(".scene.json")]: json.loads(p.read_text()) for p in (folder / "images").glob("*.scene.json")}


def test_registry_covers_the_taxonomy() -> None:
    assert set(GENERATORS) == set(TASKS_BY_ID)
    assert set(TASKS_BY_ID) >= IMAGE_DEPENDENT_TASKS


def test_dataset_validates_with_scene_files(folder: Path) -> None:
    problems = validate_path(folder)
    assert [p for p in problems if p.severity == "error"] == []
    dataset = load_dataset(folder)
    assert {st.task for st in dataset} == set(TASKS_BY_ID)
    assert len(dataset) == 54
    assert any(st.image_dependent for st in dataset)
    for st in dataset:
        assert st.meta["generator"] == "procedural" and st.meta["seed"] == 11
        assert st.category == TASKS_BY_ID[st.task].category_for(st.image_dependent)
        for image_id in st.images:
            assert (folder / "images" / f"{image_id}.png").is_file()
            assert (folder / "images" / st.meta["scenes"][image_id]).is_file()  # type: ignore[index]
        if st.image_dependent:
            assert st.task in IMAGE_DEPENDENT_TASKS and st.images


def _answers(task: str, index: int = 0, image_dependent: bool = False, seed: int = 3):
    st, builder = generate_storyturn(task, index, seed, image_dependent)
    return st, builder.facts


@pytest.mark.parametrize("task", ["false_belief_location", "implicit_false_belief"])
def test_false_belief_answers_follow_the_belief_not_reality(task: str) -> None:
    for index in range(4):
        st, facts = _answers(task, index)
        assert facts["belief"] != facts["reality"]
        first = st.turns[0].answers[0].lower()
        scene = next(iter(generate_storyturn(task, index, 3)[1].scenes.values()))
        hidden = next(o for o in scene["objects"] if o["id"] == "thing")
        assert hidden["hidden_by"] == facts["reality"] and not hidden["visible"]  # the picture shows reality
        place_words = {p["id"]: f"the {p['colour']} {p['kind']}" for p in scene["places"]}
        assert first.endswith(f"{place_words[facts['belief']]}") and place_words[facts["reality"]] not in first
        assert "did not see" in st.turns[1].answers[0]
        if task == "false_belief_location":
            assert st.turns[2].answers[0].lower() == f"in {place_words[facts['reality']]}"


def test_desire_branches_are_keyed_to_the_previous_answer() -> None:
    for task, same in (("common_desire", True), ("diverse_desire", False)):
        for image_dependent in (False, True):
            st, _ = _answers(task, image_dependent=image_dependent)
            first, second = st.turns
            assert len(first.answers) == len(second.answers) == 2
            assert second.answers == (first.answers if same else first.answers[::-1])
            assert [f.answer for f in second.feedback.by_answer] == first.answers
            if not same:
                assert all("the other one" in f.text for f in second.feedback.by_answer)


def test_diverse_belief_three_turns() -> None:
    st, _ = _answers("diverse_belief")
    guess, look, really = st.turns
    assert look.answers == guess.answers[::-1]  # the character thinks it is in the other place
    assert really.answers == guess.answers  # not there, so it is where you guessed
    assert [f.answer for f in look.feedback.by_answer] == guess.answers
    assert really.feedback.right and really.feedback.wrong


def test_perspective_listener_gives_biggest_visible_and_picture_agrees() -> None:
    for index in range(4):
        for image_dependent in (False, True):
            st, builder = generate_storyturn("reference_hard_perspective", index, 5, image_dependent)
            facts = builder.facts
            scene = next(iter(builder.scenes.values()))
            by_id = {o["id"]: o for o in scene["objects"]}
            assert facts["wanted"] == "thing3" and facts["given"] == "thing2"
            assert "thing3" not in scene["sees"][next(a["id"] for a in scene["agents"] if a["adult"])]
            assert st.turns[0].answers == [f"The {by_id['thing2']['colour']} one"]
            assert st.turns[2].answers == [f"The {by_id['thing3']['colour']} one"]
            occ = scene["occluders"][0]["bbox"]
            helper = next(a for a in scene["agents"] if a["adult"])["bbox"]
            big = by_id["thing3"]["bbox"]
            assert min(big[2], helper[2]) < occ[0] + 1 or max(big[0], helper[0]) > occ[2] - 1  # screen between
            if image_dependent:  # the colours the answers need are only in the picture
                assert by_id["thing3"]["colour"] not in st.turns[0].story


def test_reference_and_interpretation_answers_from_state() -> None:
    st, facts = _answers("reference_easy")
    assert facts["speaker_sees"] == [facts["meant"]]
    st, facts = _answers("reference_hard_referent")
    assert facts["meant"] == "target" and facts["given"] == "other" and facts["speaker_thinks_landmark_in"] == "table"
    st, facts = _answers("interpretation")
    good = st.turns[0].answers[0].strip("'").lower()
    assert facts["clue_matches"][good] == 1
    st, facts = _answers("interpretation", image_dependent=True)
    k = facts["row"].index(facts["special"])
    assert st.turns[0].answers[0].split()[1] == ("first", "second", "third", "fourth", "fifth")[k]


def test_minimal_pairs_differ_in_one_fact() -> None:
    sincere, f1 = _answers("non_sarcasm")
    sarcastic, f2 = _answers("sarcasm")
    assert f1["asked_for"] == f2["asked_for"] and f1["got"] == f1["asked_for"] != f2["got"]
    assert (sincere.turns[1].answers, sarcastic.turns[1].answers) == (["Happy"], ["Sad"])
    fb, f3 = _answers("moral_false_belief")
    tb, f4 = _answers("moral_true_belief")
    assert (f3["actor"], f3["victim"]) == (f4["actor"], f4["victim"])
    assert (f3["actor_knew"], f3["naughty"], f4["actor_knew"], f4["naughty"]) == (False, False, True, True)
    assert fb.turns[0].answers[0] != "In " + "x" and "did not see" in fb.turns[1].answers[0]
    assert fb.meta["pair"] == tb.id and tb.meta["pair"] == fb.id


def test_lying_and_second_order_answers() -> None:
    st, facts = _answers("lie_vs_false_statement")
    assert facts["first_statement_lie"] and not facts["second_statement_lie"] and facts["second_statement_false"]
    assert [t.answers[0].split(".")[0] for t in st.turns[:4]] == ["Yes", "No", "No", "No"]
    assert st.turns[4].answers == ["Sad"] and st.turns[-1].answers[0].startswith("Yes")
    scene = next(iter(generate_storyturn("lie_vs_false_statement", 0, 3)[1].scenes.values()))
    sticker = next(o for o in scene["objects"] if o["id"] == "sticker")
    assert sticker["hidden_by"] in {a["id"] for a in scene["agents"]}  # in the liar's pocket
    st, facts = _answers("second_order_belief_desire")
    assert facts["parent_thinks"] != facts["child_wants"] == facts["got"]
    assert len(st.turns) == 5 and st.turns[0].answers == [f"A {facts['parent_thinks']}"]
    st, facts = _answers("expectation_false_belief")
    assert st.turns[1].answers == [f"A {facts['child_thinks'][0]}"] and facts["child_thinks"] != [facts["packed"]]


def _inside(inner: list[float], outer: list[float], tol: float = 1.0) -> bool:
    return (inner[0] >= outer[0] - tol and inner[1] >= outer[1] - tol and inner[2] <= outer[2] + tol
            and inner[3] <= outer[3] + tol)


def test_pictures_match_their_scenes(folder: Path, scenes: dict[str, dict]) -> None:
    assert scenes
    for image_id, scene in scenes.items():
        image, mask = draw(scene)
        saved = Image.open(folder / "images" / f"{image_id}.png").convert("RGB")
        assert np.array_equal(np.asarray(saved), np.asarray(image)), f"{image_id}: PNG does not match its scene"
        pixels, ids = np.asarray(image), np.asarray(mask)
        values = mask_ids(scene)
        assert set(np.unique(ids)) - {0} <= set(values.values())
        entities = {e["id"]: e for key in ("agents", "places", "objects", "occluders") for e in scene[key]}
        assert len(entities) == len(values), "each entity appears once in the scene"
        hiders = {e["id"]: e["bbox"] for e in entities.values()}
        for entity_id, entity in entities.items():
            ys, xs = np.nonzero(ids == values[entity_id])
            if entity.get("visible", True) is False:
                assert len(xs) == 0, f"{image_id}: hidden {entity_id} shows"
                assert _inside(entity["bbox"], hiders[entity["hidden_by"]]), f"{image_id}: {entity_id} sticks out"
                continue
            assert len(xs) > 30, f"{image_id}: {entity_id} not drawn"
            x0, y0, x1, y1 = entity["bbox"]
            slack = 12  # ears, handles, beaks, lids may reach a little past the box
            assert xs.min() >= x0 - slack and xs.max() <= x1 + slack and ys.min() >= y0 - slack
            assert ys.max() <= y1 + slack, f"{image_id}: {entity_id} drawn outside its box (twice?)"
            if "rgb" in entity and entity_id in {o["id"] for o in scene["objects"]} | {a["id"] for a in scene["agents"]}:
                colours, counts = np.unique(pixels[ys, xs].reshape(-1, 3), axis=0, return_counts=True)
                assert tuple(colours[counts.argmax()]) == tuple(entity["rgb"]), f"{image_id}: {entity_id} colour"
        standing = [e["bbox"] for key in ("agents", "places", "occluders") for e in scene[key]]
        for i, a in enumerate(standing):
            for b in standing[i + 1:]:
                assert a[2] <= b[0] or b[2] <= a[0], f"{image_id}: figures overlap {a} {b}"


def test_no_text_is_ever_drawn(monkeypatch: pytest.MonkeyPatch, scenes: dict[str, dict]) -> None:
    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("the renderer must not draw text")

    monkeypatch.setattr(ImageDraw.ImageDraw, "text", forbidden)
    monkeypatch.setattr(ImageDraw.ImageDraw, "multiline_text", forbidden)
    monkeypatch.setattr(ImageFont, "truetype", forbidden)
    monkeypatch.setattr(ImageFont, "load_default", forbidden)
    for scene in list(scenes.values())[:20]:
        draw(scene)


def test_same_seed_same_bytes_other_seed_other_stories(folder: Path, tmp_path: Path) -> None:
    again = write_dataset(tmp_path / "again", tasks="all", per_task=3, seed=11, image_dependent_share=0.34)
    names = sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    for name in names:
        assert (folder / name).read_bytes() == (again / name).read_bytes(), name
    other = generate_dataset(tasks="all", per_task=3, seed=12)
    texts = {st.turns[0].story for st in load_dataset(folder)}
    assert len(texts & {st.turns[0].story for st in other}) < 5
    assert len(texts) > 45  # stories vary within one dataset too


def test_cli_procedural(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from commet.cli.generate import app

    out = tmp_path / "cli"
    result = CliRunner().invoke(app, ["procedural", "--tasks", "sarcasm,non_sarcasm", "--per-task", "2",
                                      "--seed", "4", "--image-dependent-share", "0.5", "--out", str(out)])
    assert result.exit_code == 0, result.output
    dataset = load_dataset(out)
    assert len(dataset) == 4 and sum(st.image_dependent for st in dataset) == 2
    bad = CliRunner().invoke(app, ["procedural", "--tasks", "nope", "--out", str(tmp_path / "x")])
    assert bad.exit_code != 0
