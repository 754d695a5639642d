"""Counterbalancing and variety of the procedural generator, measured by ``commet audit`` v2.

* Every predictor that does not reason about minds (blind, order of mention, one cue word, the option
  next to a word, the feedback and questions, the picture's sizes and places), each chosen per task and
  turn on one generated seed and scored on another, stays within 10 points of chance over all tasks and
  15 on every task. The booklet's keyed turns ("the same as / the other one than your pick") are reported
  apart and never gated.
* The audit does find shortcuts where they are: the hand-written sample, and small crafted sets with one
  shortcut each (the last option mentioned, a cue word, the feedback, the biggest thing in the picture).
* ``baseline:shortcut`` answers real requests from what it learned.
* Variety: at least 10 skeletons per task, no generated StoryTurn closer than 0.5 (word-sequence
  similarity) to a StoryTurn printed in the paper (tests/data/paper_storyturns.json).
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.format.dataset import Dataset
from commet.format.model import Feedback, Option, StoryTurn, Turn
from commet.generation.audit import BLIND, FAMILIES, OVERALL, audit_dataset
from commet.generation.procedural import GENERATORS, generate_storyturn, is_image_dependent, variant_slot
from commet.generation.procedural.variety import closest, skeleton_counts, vocabulary_sizes, words
from commet.generation.shallow_readers import (
    CENSUS,
    CUE_FAMILIES,
    INFORMATIONAL,
    PHRASES,
    STATISTICS,
    readings,
)
from commet.models.base import Message, ModelRequest
from commet.models.registry import create_model
from commet.models.shortcut import ShortcutLearner, closed_turn
from commet.sources import load_dataset

PAPER = Path(__file__).parent / "data" / "paper_storyturns.json"
#: Per task and seed: 60 StoryTurns, stories and scenes only (no picture is drawn); a task with fewer closed turns
#: per story gets more stories, so that every task is scored on at least ``MIN_TURNS`` closed turns per seed (a task
#: with one closed question per story, scored on 60, swings by 15 points between seed pairs by sampling alone: the
#: best of hundreds of cue rules, each a coin on 60 questions).
PER_TASK = 60
MIN_TURNS = 240
KEYED = {"common_desire", "diverse_desire", "diverse_belief"}


def stories_for(task: str, per_task: int) -> int:
    first, _ = generate_storyturn(task, 0, 0)
    closed = sum(closed_turn(task, k, turn) is not None for k, turn in enumerate(first.turns))
    return max(per_task, -(-MIN_TURNS // max(closed, 1)))


def generated(seed: int, per_task: int = PER_TASK, scenes: dict | None = None) -> list[StoryTurn]:
    out = []
    for task in sorted(GENERATORS):
        count = stories_for(task, per_task)
        for k in range(count):
            storyturn, builder = generate_storyturn(task, k, seed, is_image_dependent(task, k, count, 0.3),
                                                    slot=variant_slot(task, k, count, 0.3))
            if scenes is not None:
                scenes.update(builder.scenes)
            out.append(storyturn)
    return out


@pytest.fixture(scope="module")
def two_seeds() -> tuple[list[StoryTurn], list[StoryTurn], dict]:
    scenes: dict = {}
    return generated(1, scenes=scenes), generated(2, scenes=scenes), scenes


def test_no_shallow_predictor_passes_chance_on_two_seeds(two_seeds) -> None:  # noqa: ANN001
    first, second, scenes = two_seeds
    audit = audit_dataset(first, other=second, scenes=scenes)
    gated = (BLIND, *FAMILIES)
    scored = set(audit.tasks())
    assert scored == set(GENERATORS) - KEYED - {"implicit_false_belief"}, scored  # its questions are open
    assert set(audit.tasks(designed=True)) == KEYED  # reported apart, not gated
    over = audit.over(15.0, 10.0, gated)
    problems = [f"{x.task} {x.family}: {100 * x.accuracy:.1f} % vs chance {100 * x.chance_rate:.1f} %" for x in over]
    assert problems == []  # reference_hard_referent's layout leak (75 %) was the last listed as known; now closed
    for family in gated:  # every family read something: the picture reader saw scenes, the others the text
        assert audit.overall(family).turns > 3000
    # the one-rule readers stay within 3 points overall; the cue readers over people (mention order, where people
    # stand, the feedback's words) switch among hundreds of pseudo-words per turn and stay within 5
    assert max(abs(audit.overall(f).excess) for f in gated if f not in CUE_FAMILIES) < 3.0
    assert max(abs(audit.overall(f).excess) for f in CUE_FAMILIES) < 5.0


def test_answers_are_balanced_within_every_task_and_turn(two_seeds) -> None:  # noqa: ANN001
    """Exact, not just on average: every yes/no and every answer position is balanced per (task, turn)."""
    counts: dict[tuple[str, int], Counter[object]] = defaultdict(Counter)
    for st in two_seeds[0]:
        for k, turn in enumerate(st.turns):
            closed = closed_turn(st.task, k, turn)
            if closed is None or len(closed.right) > 1:
                continue
            counts[(st.task, k)][min(closed.right[0])] += 1
    assert counts
    for key, counter in counts.items():
        shares = [n / sum(counter.values()) for n in counter.values()]
        assert len(counter) >= 2 and max(shares) - min(shares) <= 0.1, (key, counter)


def _story(k: int, text: str, turns: list[Turn], task: str = "t") -> StoryTurn:
    return StoryTurn(id=f"s{k}", task=task, category="Belief", turns=turns, source="crafted",
                     meta={} if not text else {"note": text})


def test_audit_finds_the_shortcuts_of_a_dataset_that_has_them() -> None:
    audit = audit_dataset(list(load_dataset("sample")))
    assert audit.overall(BLIND).excess > 15  # the hand-written sample: same answer per (task, turn), often
    colours = ["red", "blue", "green", "pink", "orange", "purple"]
    names = ["Ann", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hal", "Ivy", "Jo", "Kit", "Lu"]
    order, cue, feedback = [], [], []
    for k in range(24):
        a, b = colours[k % 6], colours[(k + 1) % 6]
        options = [Option(text=f"the {a} one"), Option(text=f"the {b} one")][:: 1 if k % 2 else -1]
        # the last colour mentioned is the answer
        order.append(_story(k, "", [Turn(story=f"{names[k % 12]} sees a {b} ball and then a {a} ball.",
                                         question=f"Which one, {options[0].text} or {options[1].text}?",
                                         answers=[f"The {a} one"], options=options)]))
        # one word decides a yes/no answer
        sunny = k % 2 == 0
        cue.append(_story(k, "", [Turn(story=f"It is {'sunny' if sunny else 'grey'} and {names[k % 12]} "
                                             "plays outside.", question="Is the sky clear?",
                                       answers=["Yes" if sunny else "No"])]))
        # the feedback names the previous answer, and the next answer is the other option
        feedback.append(_story(k, "", [
            Turn(story=f"{names[k % 12]} looks at two balls.", question=f"Which one, {options[0].text} or "
                 f"{options[1].text}?", answers=[f"The {a} one"], options=options),
            Turn(feedback=Feedback(right=f"Yes, the {a} one.", wrong=f"No, the {a} one."),
                 question=f"And the other, {options[0].text} or {options[1].text}?", answers=[f"The {b} one"],
                 options=options)]))
    assert audit_dataset(order).overall("order").accuracy > 0.95
    assert audit_dataset(cue).overall("cue word").accuracy > 0.95
    assert audit_dataset(cue).overall(BLIND).accuracy < 0.7
    context = audit_dataset(feedback).line("t", "context")
    assert context.accuracy > 0.7 and context.turns == 48
    # the picture: the answer is always the biggest of the things the options name
    scenes, pictured = {}, []
    for k in range(12):
        sizes = [1, 3] if k % 2 else [3, 1]
        scenes[f"img{k}"] = {"objects": [{"colour": c, "noun": "ball", "size": s, "bbox": [10 * j, 0, 10 * j + 5, 5]}
                                         for j, (c, s) in enumerate(zip(("red", "blue"), sizes, strict=True))]}
        big = "red" if sizes[0] == 3 else "blue"
        pictured.append(_story(k, "", [Turn(story="Two balls.", image=f"img{k}", question="Which one, the red one or "
                                            "the blue one?", answers=[f"The {big} one"],
                                            options=[Option(text="the red one"), Option(text="the blue one")])]))
    assert audit_dataset(pictured, scenes=scenes).overall("picture").accuracy == 1.0
    assert audit_dataset(pictured).overall("picture").accuracy == 0.5  # without the scenes it has nothing to read


def test_the_statistics_reader_finds_a_fact_told_in_more_sentences() -> None:
    """One story fact told with one more sentence (or one more pronoun) than the other, in words drawn alike for
    both: no single word tells them apart, the count does (the scratch probe found a pronoun count reading
    moral_false_belief's crossed fact at 58.8 and 59.7 % on two seed pairs)."""
    pool = ["The sun is out.", "Mo has a kite.", "A dog runs by.", "The bus is late.", "Tea is ready.",
            "A bird sings.", "The door is red.", "Jo reads a book."]
    stories = []
    for k in range(48):
        told = random.Random(k).sample(pool, 3 if k % 2 else 2)
        stories.append(_story(k, "", [Turn(story=" ".join(told), question="Was a third thing told?",
                                           answers=["Yes" if k % 2 else "No"])]))
    audit = audit_dataset(stories)
    assert audit.overall(STATISTICS).accuracy == 1.0
    assert audit.overall("cue word").accuracy < 0.75 and audit.overall("words").accuracy < 0.75


def test_the_census_reader_reads_a_fact_told_by_counts_no_other_reader_sees() -> None:
    """Two stories whose keys a reviewer's blunt counters read and no other reader does: a fact told in a few more
    words, every word drawn alike, the sentences as many and the tens of words the same (a threshold on the story's
    exact length; the location,
    lunchbox and moral stories told their crossed fact so, 63 to 75 % for such a threshold), and a picture whose
    things have three colours or four (interpretation's rows told the key so, 75 to 78 %)."""
    pool = ["sun", "kite", "dog", "bus", "tea", "bird", "door", "book", "cup", "hat"]
    longer, counted, scenes = [], [], {}
    for k in range(48):
        draw = random.Random(k)
        told = " ".join(draw.choice(pool) for _ in range(20 + 3 * (k % 2) + draw.randrange(-1, 2)))  # 21-23 or 24-26 words
        longer.append(_story(k, "", [Turn(story=f"Mo saw {told}.", question="Was the list long?",
                                          answers=["Yes" if k % 2 else "No"])]))
        colours = draw.sample(["red", "blue", "green", "pink", "orange"], 4)
        if k % 2:
            colours[draw.randrange(1, 4)] = colours[0]
        scenes[f"img{k}"] = {"objects": [{"colour": c, "noun": "ball", "size": 2, "bbox": [40 * j, 0, 40 * j + 30, 30]}
                                         for j, c in enumerate(colours)]}
        counted.append(_story(k, "", [Turn(story="Four balls.", image=f"img{k}", question="Do two share a colour?",
                                           answers=["Yes" if k % 2 else "No"])]))
    audit = audit_dataset(longer)
    assert audit.overall(CENSUS).accuracy > 0.9
    assert max(audit.overall(f).accuracy for f in ("cue word", STATISTICS, "words")) < 0.8
    pictured = audit_dataset(counted, scenes=scenes)
    assert pictured.overall(CENSUS).accuracy == 1.0
    assert max(pictured.overall(f).accuracy for f in ("picture", STATISTICS, "people picture")) <= 0.6


def test_the_phrase_reader_counts_how_many_things_a_description_fits_and_is_never_gated() -> None:
    """A listed row says the description that fits one thing once and the other twice: the ``phrases`` reader (the
    option whose exact words the story says least often) reads the answer off that count, where no single word
    does (both colour words are said twice, in the row and the request). It is shown, never gated: counting what a
    description fits is the item's own fact in reference tasks (interpretation read 68.3 and 58.8 % on two seed
    pairs with a scratch probe; the audit's readers of single words and mention order stay at chance)."""
    colours = ["red", "blue", "green", "pink", "orange", "purple"]
    rows = []
    for k in range(48):
        a, b = colours[k % 6], colours[(k // 6 + k + 1) % 6]
        if a == b:
            b = colours[(k + 3) % 6]
        # each colour word said three times; "a duck" once, "b duck" twice; the order drawn per story
        row = random.Random(k).sample([f"a {a} duck", f"a {b} duck", f"a {b} duck", f"a {a} cup", f"a {a} cup",
                                       f"a {b} hat"], 6)
        options = [Option(text=f"the {a} duck"), Option(text=f"the {b} duck")][:: 1 if k % 2 else -1]
        rows.append(_story(k, "", [Turn(story=f"On the shelf: {', '.join(row)}.",
                                        question=f"Which clue fits one thing, {options[0].text} or {options[1].text}?",
                                        answers=[f"The {a} duck"], options=options)]))
    audit = audit_dataset(rows)
    assert audit.overall(PHRASES).accuracy == 1.0
    assert audit.overall("cue word").accuracy <= 0.75 and audit.overall("order").accuracy <= 0.75
    assert not [x for x in audit.over(15.0, 10.0) if x.family == PHRASES]


def test_the_word_reader_finds_a_leak_spread_over_many_words() -> None:
    """Each story's frame marks the answer with a word of its own ("spots the red one"), and the other option
    with another: no one rule reads more than one frame, the word reader reads them all. Told with the same
    words around both options, it is back at chance."""
    frames = [("spots", "misses"), ("sees", "overlooks"), ("picks", "skips"), ("wants", "refuses"),
              ("grabs", "drops"), ("likes", "hates")]
    colours = ["red", "blue", "green", "pink", "orange", "purple"]
    leaky, balanced = [], []
    for k in range(72):
        yes, no = frames[k % 6]
        a, b = colours[(k // 6) % 6], colours[((k // 6) % 6 + 1 + k % 5) % 6]  # every colour with every frame
        options = [Option(text=f"the {a} one"), Option(text=f"the {b} one")][:: 1 if k % 2 else -1]
        question = f"Which one, {options[0].text} or {options[1].text}?"
        told = [f"Mia {yes} the {a} one.", f"Mia {no} the {b} one."][:: 1 if (k // 2) % 2 else -1]
        leaky.append(_story(k, "", [Turn(story=" ".join(told), question=question, answers=[f"The {a} one"],
                                         options=options)]))
        both = [a, b][:: 1 if (k // 2) % 2 else -1]
        balanced.append(_story(k, "", [Turn(story=f"Mia {yes} the {both[0]} one and {no} the {both[1]} one. "
                                                  f"Then she {no} the {both[1]} one and {yes} the {both[0]} one.",
                                            question=question, answers=[f"The {a} one"], options=options)]))
    audit = audit_dataset(leaky)
    assert audit.line("t", "words").accuracy > 0.9
    assert max(audit.line("t", f).accuracy for f in ("order", "cue word", "anchor", "context")) < 0.75
    assert abs(audit_dataset(balanced).line("t", "words").excess) < 15


def test_audit_cli(tmp_path: Path) -> None:
    from commet.cli import app

    result = CliRunner().invoke(app, ["audit", "sample", "--json", "--rules"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    overall = report["tasks"][-1]
    assert overall["task"] == OVERALL and overall["predictors"][BLIND]["accuracy"] > overall["chance"]
    assert set(overall["predictors"]) == {BLIND, *FAMILIES, *INFORMATIONAL} and report["rules"]
    table = CliRunner().invoke(app, ["audit", "sample"])
    assert table.exit_code == 0 and "chance" in table.output and "cue word" in table.output
    missing = CliRunner().invoke(app, ["audit", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "Traceback" not in missing.output
    strict = CliRunner().invoke(app, ["audit", "sample", "--fail-above", "5"])
    assert strict.exit_code == 1 and "above the allowed points over chance" in strict.output
    nan = CliRunner().invoke(app, ["audit", "sample", "--fail-above-overall", "nan"])
    assert nan.exit_code == 2
    balanced = [StoryTurn(id=f"b{k}", task="sarcasm", category="NLCE", turns=[
        Turn(story="x", question="Is Mia happy?", answers=["Yes" if k % 2 else "No"])]) for k in range(8)]
    Dataset(storyturns=balanced, name="b").save(tmp_path / "balanced")
    fine = CliRunner().invoke(app, ["audit", str(tmp_path / "balanced"), "--fail-above", "5",
                                    "--fail-above-overall", "5"])
    assert fine.exit_code == 0, fine.output
    # two datasets: trained on each, scored on the other, with the scene files the folders hold
    from commet.generation.procedural import write_dataset

    for seed in (3, 4):
        write_dataset(tmp_path / f"p{seed}", tasks=["reference_hard_perspective"], per_task=12, seed=seed,
                      image_dependent_share=0.0)
    two = CliRunner().invoke(app, ["audit", str(tmp_path / "p3"), "--against", str(tmp_path / "p4"), "--json"])
    assert two.exit_code == 0, two.output
    picture = json.loads(two.output)["tasks"][0]["predictors"]["picture"]
    assert picture["accuracy"] > 0  # the scene files were read (a reader with no scene answers option 1)


def test_baseline_shortcut_model_answers_from_what_it_learned(tmp_path: Path) -> None:
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


def test_variety_skeletons_vocabulary_and_distance_from_the_paper(two_seeds) -> None:  # noqa: ANN001
    storyturns = [st for st in two_seeds[0] if st.meta["index"] < 30]
    skeletons = skeleton_counts(storyturns)
    assert set(skeletons) == set(GENERATORS) and min(skeletons.values()) >= 10, skeletons
    assert min(vocabulary_sizes(storyturns).values()) >= 80
    paper = [words(item["text"]) for item in json.loads(PAPER.read_text())["storyturns"]]
    assert len(paper) == 4 and all(len(p) > 50 for p in paper)
    worst = max((closest(st, paper), st.id) for st in storyturns)
    assert worst[0] < 0.5, worst


#: scene files as a hand-made dataset may hold them: each is no scene (or no entity) to read, never a crash
MALFORMED_SCENES = ['[1, 2]', '"a scene"', '{"objects": 5, "places": "shelf"}', '{"objects": [3, "ball", null]}',
                    '{"objects": [{"noun": "ball"}, {"noun": "box", "bbox": "wide"}], "agents": [{"bbox": [1]}]}',
                    '{"objects": [{"noun": "ball", "size": "big", "bbox": [0, 0, "x", 5]}]}', 'not json']


def test_malformed_scene_files_are_read_as_no_scene(tmp_path: Path) -> None:
    """`commet audit` reads the scene files a dataset folder names; what is not a scene of entities with
    boxes is skipped (the picture reader then answers option 1), without a traceback."""
    from commet.cli import app
    from commet.generation.procedural import write_dataset

    write_dataset(tmp_path / "p", tasks=["reference_hard_perspective"], per_task=12, seed=3, image_dependent_share=0.0)
    files = sorted((tmp_path / "p" / "images").glob("*.scene.json"))
    assert files
    for k, file in enumerate(files):
        file.write_text(MALFORMED_SCENES[k % len(MALFORMED_SCENES)], encoding="utf-8")
    result = CliRunner().invoke(app, ["audit", str(tmp_path / "p"), "--json"])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    picture = json.loads(result.output)["tasks"][0]["predictors"]["picture"]
    # the same reading as with no scene at all
    unread = audit_dataset(list(load_dataset(tmp_path / "p"))).line("reference_hard_perspective", "picture")
    assert picture["accuracy"] == round(100 * unread.accuracy, 2)


def test_a_control_turn_is_reported_apart_and_never_gated() -> None:
    """moral_false_belief's "how does she feel?" (the story says she cries: always "sad") is a control turn; the
    audit scores it on a designed line of its own, where a story-blind reader is right every time, and the task's
    gated lines leave it out."""
    from commet.generation.procedural import generate_storyturn

    def sample(seed: int) -> list[StoryTurn]:
        return [generate_storyturn("moral_false_belief", k, seed, False, slot=k)[0] for k in range(16)]

    first = sample(1)
    feels = [t for t in first[0].turns if t.meta.get("asks") == "feels"]
    assert len(feels) == 1 and feels[0].meta.get("control")
    audit = audit_dataset(first, other=sample(2), families=("blind",))
    designed = audit.line("moral_false_belief", "blind", designed=True)
    gated = audit.line("moral_false_belief", "blind")
    assert designed.turns == 0 or designed.accuracy == 1.0, designed  # an open turn: scored only if closed
    assert gated.turns and gated.accuracy < 0.9, gated
    gated_turns = {(r.story_id, r.turn) for st in first for r in readings(st) if not r.keyed}
    assert not [k for st in first for k, t in enumerate(st.turns) if t.meta.get("control") and (st.id, k) in gated_turns]
