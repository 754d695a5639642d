"""The procedural generator: answers from the world state, pictures from the same state, reproducibility."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from commet.generation.procedural import (
    GENERATORS,
    IMAGE_DEPENDENT_TASKS,
    generate_dataset,
    generate_storyturn,
    storyturn_text,
    write_dataset,
)
from commet.generation.procedural.render import draw, mask_ids
from commet.sources import load_dataset, validate_path
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
    assert len({storyturn_text(st) for st in dataset}) == len(dataset)


def _answers(task: str, index: int = 0, image_dependent: bool = False, seed: int = 3):
    st, builder = generate_storyturn(task, index, seed, image_dependent)
    return st, builder.facts


def test_image_dependent_categories_are_the_papers_table_2() -> None:
    """Generated image-dependent StoryTurns fall in Percept, Intention, MBK and NLC; no Desire."""
    categories = {TASKS_BY_ID[t].category_for(True) for t in IMAGE_DEPENDENT_TASKS}
    assert categories == {"Percept", "Intention", "MBK", "NLC"}
    for task in IMAGE_DEPENDENT_TASKS:
        st, _ = generate_storyturn(task, 0, 1, True)
        assert st.image_dependent and st.category in categories and st.images
    with pytest.raises(ValueError):
        generate_storyturn("common_desire", 0, 1, True)


@pytest.mark.parametrize("task", ["false_belief_location", "implicit_false_belief"])
def test_false_belief_items_have_true_belief_controls(task: str) -> None:
    """Half of each block are the booklet's false-belief item, half its true-belief control, each labelled."""
    roles = []
    for index in range(12):
        st, facts = _answers(task, index)
        roles.append(st.meta["item"])
        control = st.meta["item"] == "control"
        assert (facts["belief"] == facts["reality"]) == control
        assert ("did not see" in st.turns[1].answers[0]) != control
        assert st.turns[1].rubric is not None and st.turns[1].rubric.false_inferences
        if control:
            assert st.meta["control"] == "true belief: the owner stays and sees the last swap"
        else:
            assert "control" not in st.meta
    assert roles.count("test") == roles.count("control") == 6


def test_desire_branches_are_keyed_to_the_previous_answer() -> None:
    for task, same in (("common_desire", True), ("diverse_desire", False)):
        st, _ = _answers(task)
        first, second = st.turns
        assert len(first.answers) == len(second.answers) == 2
        assert second.answers == (first.answers if same else first.answers[::-1])
        assert [f.answer for f in second.feedback.by_answer] == first.answers
        assert {o.text for o in first.options} == {a.lower() for a in first.answers}


def test_diverse_belief_three_turns() -> None:
    st, _ = _answers("diverse_belief")
    guess, look, really = st.turns
    assert look.answers == guess.answers[::-1]  # the character thinks it is in the other place
    assert really.answers == guess.answers  # not there, so it is where you guessed
    assert [f.answer for f in look.feedback.by_answer] == guess.answers
    assert really.feedback.right and really.feedback.wrong


def test_perspective_cells_are_balanced_and_the_picture_agrees() -> None:
    """Test item: the asked-for size is hidden from the listener (he gives the middle one); controls: hidden from
    the speaker, or from nobody. A third each, and big and small asked for equally often."""
    cells, asked = [], []
    for index in range(12):
        for image_dependent in (False, True):
            st, builder = generate_storyturn("reference_hard_perspective", index, 5, image_dependent)
            facts = builder.facts
            scene = next(iter(builder.scenes.values()))
            by_id = {o["id"]: o for o in scene["objects"]}
            assert st.turns[0].answers == [f"The {by_id[facts['given']]['colour']} one"]
            assert st.turns[2].answers == [f"The {by_id[facts['wanted']]['colour']} one"]
            assert len(st.turns[0].options) == 3 and len(st.turns[2].options) == 3
            helper = next(a["id"] for a in scene["agents"] if a["adult"])
            if facts["cell"] == "listener blocked":
                assert st.meta["item"] == "test" and by_id[facts["given"]]["size"] == 2
                assert facts["wanted"] not in scene["sees"][helper]
            else:
                assert st.meta["item"] == "control"
            if image_dependent:  # the colours the answers need are only in the picture
                assert not any(o["colour"] in st.turns[0].story.lower().split() for o in scene["objects"])
            elif not image_dependent:
                cells.append(facts["cell"])
                asked.append(facts["asked"])
    assert sorted(set(cells)) == ["listener blocked", "nobody blocked", "speaker blocked"]
    assert all(cells.count(c) == 4 for c in set(cells)) and asked.count("big") == asked.count("small") == 6


def test_referent_is_a_mistaken_referent_in_test_items_and_understood_in_controls() -> None:
    for index in range(8):
        st, facts = _answers("reference_hard_referent", index)
        assert (facts["meant"] != facts["given"]) == (st.meta["item"] == "test")
        assert not [e for e in facts["log"]["events"] if e["kind"] in ("move", "put")]
        assert re.search(r"(next to|beside) the", st.turns[0].story) and st.turns[3].feedback is not None


def test_interpretation_clue_is_ambiguous_in_half_the_items() -> None:
    seen = set()
    for index in range(12):
        st, facts = _answers("interpretation", index)
        unique = st.turns[0].answers == ["Yes"]
        seen.add(unique)
        assert sorted(facts["clue_matches"].values()) == [1, 2]
        assert [o.label for o in st.turns[2].options] == ["A", "B"]
        assert "A: '" in st.turns[2].question and "B: '" in st.turns[2].question
        assert "left" not in st.turns[0].question  # no perspective step given away
    assert seen == {True, False}


def test_minimal_pairs_differ_in_one_fact() -> None:
    for index in range(6):
        sincere, f1 = _answers("non_sarcasm", index)
        sarcastic, f2 = _answers("sarcasm", index)
        # one fact differs: what the asked child asked for (the snack served is one draw, the same in both)
        assert f1["got"] == f2["got"] and f1["asked_for"] != f2["asked_for"] and f1["feeling"] != f2["feeling"]
        assert sincere.meta["item"] == sarcastic.meta["item"]  # each is the other's test item, or both controls
        assert (sarcastic.meta["item"] == "test") == f2["sarcastic"]
        fb, f3 = _answers("moral_false_belief", index)
        tb, f4 = _answers("moral_true_belief", index)
        assert (f3["actor"], f3["victim"]) == (f4["actor"], f4["victim"])
        assert f3["actor_knew"] != f4["actor_knew"] and f3["naughty"] == f3["actor_knew"]
        assert fb.meta["item"] == tb.meta["item"] and (fb.meta["item"] == "test") == (not f3["actor_knew"])
        assert fb.meta["pair"] == tb.id and tb.meta["pair"] == fb.id


def test_lying_cells_and_second_order() -> None:
    """The lie item: the speaker lies and the other child repeats it believing it (test), or the other child
    took it and lies while the speaker guessed honestly (control); the owner's feeling follows what she saw."""
    combos = []
    for index in range(12):
        st, facts = _answers("lie_vs_false_statement", index)
        lie = facts["first_statement_lie"]
        combos.append((lie, facts["second_statement_lie"], facts["victim_thinks_lost"]))
        assert (st.meta["item"] == "test") == lie
        assert st.turns[0].answers == ["Yes" if lie else "No"]
        assert st.turns[-1].answers[0].startswith("Yes" if lie else "No")
    assert sorted(set(combos)) == [(False, True, False), (True, False, True)] and combos.count(combos[0]) == 6
    st, facts = _answers("second_order_belief_desire")
    assert len(st.turns) == 5 and st.turns[0].answers == [f"A {facts['parent_thinks']}"]
    assert (facts["parent_thinks"] != facts["child_wants"]) == (st.meta["item"] == "test")
    surprised = st.turns[4]
    assert surprised.feedback is not None and surprised.rubric is not None
    assert any("did not hear" in f for f in surprised.rubric.false_inferences)
    assert "thinks" not in st.turns[0].story and "heard" not in st.turns[0].story.split("hears")[0]
    st, facts = _answers("expectation_false_belief")
    assert "open" in st.turns[4].question or "looking inside" in st.turns[4].question  # before opening it


def test_every_why_has_a_rubric_and_closed_questions_show_their_options() -> None:
    for task in GENERATORS:
        for index in range(4):
            st, _ = generate_storyturn(task, index, 9, task in IMAGE_DEPENDENT_TASKS and index % 2 == 1)
            for k, turn in enumerate(st.turns):
                q = turn.question.lower()
                if q.startswith(("why", "how do you know", "how did you know")) or " why" in q.split("?")[0] \
                        or "why or why not" in q:
                    assert turn.rubric is not None and turn.rubric.key_inference, (st.id, k, turn.question)
                for option in turn.options:
                    assert option.text in turn.question, (st.id, k)
                if turn.options:
                    assert all(a.lower() in [o.text for o in turn.options] for a in turn.answers)
                # feedback before every "why" that follows a revealed outcome (a story told after the first turn)
                if turn.rubric is not None and k > 0 and (turn.story or st.turns[k - 1].story and k - 1 > 0):
                    assert turn.feedback is not None, (st.id, k, turn.question)


def test_no_two_storyturns_of_a_set_are_the_same() -> None:
    dataset = generate_dataset(tasks=["emotion_reminder", "diverse_belief"], per_task=48, seed=2)
    texts = [storyturn_text(st) for st in dataset]
    assert len(set(texts)) == len(texts) == 96


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


def test_a_repeated_story_is_drawn_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A generator that can only tell two stories: two StoryTurns come out different, a third is refused."""
    def two_stories(builder, image_dependent) -> None:  # noqa: ANN001
        builder.turn("sunny", "Is it sunny?", "yes", story=builder.pick("weather", ("Sunny.", "Rainy.")))

    monkeypatch.setitem(GENERATORS, "emotion_reminder", two_stories)
    dataset = generate_dataset(tasks=["emotion_reminder"], per_task=2, seed=1)
    assert {st.turns[0].story for st in dataset} == {"Sunny.", "Rainy."}
    with pytest.raises(RuntimeError, match="no new story"):
        generate_dataset(tasks=["emotion_reminder"], per_task=3, seed=1)
