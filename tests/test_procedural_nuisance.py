"""No nuisance choice of the procedural generator goes with the key, and every key agrees with its story.

* The generator records every order, position and side it chooses (``meta["nuisance"]``) and the item's
  cell (``meta["cell"]``, the draw that decides the answers). Counted exactly per cell (task x variant x
  key), every value of every recorded choice occurs equally often: none predicts the key; and in every
  prefix of a task's items each cell, and each value within a cell, is within one of the others.
* Every other random draw (names, colours, things, rooms, reasons, frames, wordings) is recorded
  (``meta["draws"]``) and made from a stream seeded without the cell: the same item with another cell
  draws the same names, colours and things; no module of the generator makes a draw of its own.
* Where each person stands in the pictures, measured from the scene files (the people's pixel boxes):
  the asked person's rank from the left is spread alike over the cells of a task.
* Every sentence that gives the sarcasm pair's children a face agrees with the key (the asked child smiles
  exactly when the key says happy), and so does the picture's face.
* The location and lunchbox stories' questions about a place or a food (the reality control among them) are no
  fixed function of the story's surface: within every cell each surface pick is the answer exactly half the time.
* Wording lint over a generated sample: articles by sound, "asks" only with a question, no wagging that
  is not a dog's, no "who" clause after a thing, no "tidies up while tidying up".
"""

from __future__ import annotations

import ast
import functools
import random
import re
import sys
from collections import Counter, defaultdict
from fractions import Fraction
from pathlib import Path

import pytest

from commet.format.model import StoryTurn
from commet.generation.procedural import GENERATORS, IMAGE_DEPENDENT_TASKS, builder, generate_storyturn
from commet.generation.procedural import lexicon as lex
from commet.generation.procedural.shapes import Scene
from commet.generation.procedural.variety import storyturn_words

#: Per task and variant (text, image-dependent): 24 items, 48 where the cell is crossed with a story fact (so that
#: every crossed cell holds 12, which every choice of 2, 3 or 4 values splits evenly).
PER_VARIANT = 24


def _size(task: str) -> int:
    return 2 * PER_VARIANT if "fact" in generate_storyturn(task, 0, seed=71, slot=0)[0].meta.get("cell", {}) else PER_VARIANT


def _sample() -> list[tuple[StoryTurn, dict[str, Scene]]]:
    out = []
    for task in sorted(GENERATORS):
        for image in (False, True) if task in IMAGE_DEPENDENT_TASKS else (False,):
            for k in range(_size(task)):  # one variant at a time: the slot within the variant is the index
                storyturn, builder = generate_storyturn(task, k, seed=71, image_dependent=image, slot=k)
                out.append((storyturn, builder.scenes))
    return out


@pytest.fixture(scope="module")
def sample() -> list[tuple[StoryTurn, dict[str, Scene]]]:
    return _sample()


def _cell(storyturn: StoryTurn) -> tuple[str, bool, object]:
    cell = storyturn.meta.get("cell")
    return storyturn.task, storyturn.image_dependent, cell["value"] if isinstance(cell, dict) else None


def _crossed(storyturn: StoryTurn) -> tuple[object, ...]:
    """The cell every nuisance choice is balanced within: the key's value, and the story fact crossed with it."""
    fact = storyturn.meta.get("cell", {}).get("fact")
    return (*_cell(storyturn), fact["value"] if fact else None)


def test_every_nuisance_choice_is_balanced_within_every_cell(sample) -> None:  # noqa: ANN001
    counts: dict[tuple[object, ...], Counter[int]] = defaultdict(Counter)
    sizes: dict[tuple[object, ...], int] = {}
    for storyturn, _ in sample:
        record = storyturn.meta.get("nuisance", {})
        assert isinstance(record, dict)
        for key, choice in record.items():
            counts[(*_crossed(storyturn), key)][choice["value"]] += 1
            sizes[(*_crossed(storyturn), key)] = choice["of"]
    assert counts, "the generator records no nuisance choice"
    recorded = {key[0] for key in counts}
    for task in ("lie_vs_false_statement", "moral_true_belief", "sarcasm", "false_belief_location",
                 "second_order_belief_desire", "reference_easy"):
        assert task in recorded, task
    problems = []
    for key, counter in counts.items():
        n = sizes[key]
        total = sum(counter.values())
        values = [counter.get(v, 0) for v in range(n)]
        # exact where the cell's items divide by n (every cell here holds 12, 6 or 4); else at most one apart
        if max(values) - min(values) > (0 if total % n == 0 else 1):
            problems.append(f"{key}: {values}")
    assert problems == []


def test_every_prefix_is_near_balanced(sample) -> None:  # noqa: ANN001
    """Whatever count is asked for: in every prefix of a task's items (of one variant), each cell value is within
    one of every other, and within each cell each value of each nuisance choice is within one of the others."""
    by_task: dict[tuple[str, bool], list[StoryTurn]] = defaultdict(list)
    for storyturn, _ in sample:
        by_task[(storyturn.task, storyturn.image_dependent)].append(storyturn)
    checked = 0
    for items in by_task.values():
        cells: Counter[tuple[object, ...]] = Counter()
        choices: dict[tuple[object, ...], Counter[int]] = defaultdict(Counter)
        for storyturn in items:  # in slot order
            cell = storyturn.meta.get("cell")
            if not isinstance(cell, dict):
                break
            cells[_crossed(storyturn)] += 1
            n_cells = cell["of"] * (2 if "fact" in cell else 1)
            seen = list(cells.values()) + [0] * (n_cells - len(cells))
            assert max(seen) - min(seen) <= 1, (storyturn.id, dict(cells))
            for key, choice in storyturn.meta.get("nuisance", {}).items():
                counter = choices[(_crossed(storyturn), key)]
                counter[choice["value"]] += 1
                values = [counter.get(v, 0) for v in range(choice["of"])]
                assert max(values) - min(values) <= 1, (storyturn.id, key, values)
                checked += 1
    assert checked > 3000


def same_item_in_other_cells(task: str, index: int) -> list[StoryTurn]:
    """The same item (task, index, seed 72) at four places in the counterbalancing (other slots: other cells, other
    orders)."""
    versions = [generate_storyturn(task, index, seed=72, slot=slot)[0] for slot in range(4)]
    assert len({str(v.meta.get("cell")) for v in versions}) > 1 or "cell" not in versions[0].meta, task
    return versions


def test_names_colours_and_things_are_recorded_and_independent_of_the_key() -> None:
    """The same item (task, index, seed) at other places in the counterbalancing (other slots: other cells, other
    orders) draws the same names, colours, things, rooms, reasons and frames: every draw of ``meta["draws"]``
    comes from a stream seeded without the cell, so none can go with the key."""
    compared = 0
    for task in sorted(GENERATORS):
        for index in range(3):
            versions = same_item_in_other_cells(task, index)
            draws = [v.meta["draws"] for v in versions]
            assert {"cast: shirts"} <= set(draws[0])
            for key, first in draws[0].items():
                for other in draws[1:]:
                    # a draw made in every cell from a pool of the same size gives the same value
                    if key in other and other[key]["of"] == first["of"]:
                        assert other[key]["value"] == first["value"], (task, index, key)
                        compared += 1
            names = [sorted(a["name"] for a in v.meta["world"]["log"]["agents"].values()) for v in versions]
            assert all(n == names[0] for n in names), (task, names)  # the people are the same
    assert compared > 1000


GENERATOR_FILES = sorted((Path(builder.__file__).parent).rglob("*.py"))


def test_no_generator_module_draws_at_random_but_the_builder() -> None:
    """Only the builder owns random streams (its counterbalancing and its recorded draws); no task module, the world
    or the renderer imports ``random`` or takes a random stream."""
    owners = set()
    for path in GENERATOR_FILES:
        tree = ast.parse(path.read_text())
        imports = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)
                   for alias in node.names} | {node.module for node in ast.walk(tree)
                                               if isinstance(node, ast.ImportFrom) and node.module}
        if "random" in imports or any(isinstance(n, ast.Name) and n.id == "rng" for n in ast.walk(tree)):
            owners.add(path.name)
    assert owners == {"builder.py"}


def test_every_random_draw_is_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted while generating every task: each random call the builder makes is either a counterbalancing
    sequence (``_run``) or a named draw (``_draw``) that ``meta["draws"]`` records; no other code calls ``random``."""
    streams: list[str] = []
    calls: Counter[str] = Counter()
    for name in ("random", "randrange", "randint", "choice", "choices", "sample", "shuffle", "uniform"):
        original = getattr(random.Random, name)

        def counted(self: random.Random, *args: object, __original=original, __name=name, **kwargs: object) -> object:
            caller = sys._getframe(1).f_code
            calls[f"{Path(caller.co_filename).name}:{caller.co_name}"] += 1
            return __original(self, *args, **kwargs)
        monkeypatch.setattr(random.Random, name, counted)
    original_draw = builder.StoryBuilder._draw

    def draw(self: builder.StoryBuilder, key: str) -> random.Random:
        streams.append(key)
        return original_draw(self, key)
    monkeypatch.setattr(builder.StoryBuilder, "_draw", draw)
    recorded = 0
    for task in sorted(GENERATORS):
        storyturn, _ = generate_storyturn(task, 1, seed=73, image_dependent=task in IMAGE_DEPENDENT_TASKS, slot=1)
        recorded += len(storyturn.meta["draws"])
    assert set(calls) <= {"builder.py:_run", "builder.py:pick", "builder.py:sample"}, calls
    assert recorded == len(streams) == calls["builder.py:pick"] + calls["builder.py:sample"]


def _asked(question: str, names: list[str]) -> str | None:
    hits = sorted((m.start(), n) for n in names for m in re.finditer(rf"\b{re.escape(n)}\b", question))
    return hits[0][1] if hits else None


def test_where_the_asked_person_stands_does_not_tell_the_cell(sample) -> None:  # noqa: ANN001
    """Measured from the scenes: in every picture, the spots where the role (the actor, the speaker, or the
    person the first question asks about)
    stands (the centre of their pixel box) are the same in every cell of the task, each taken about equally often
    (within one per counterbalancing block: a story may show a picture more or less)."""
    spots: dict[tuple[str, bool, int], dict[object, Counter[float]]] = defaultdict(lambda: defaultdict(Counter))
    for storyturn, scenes in sample:
        task, image, cell = _cell(storyturn)
        for j, scene in enumerate(scenes.values()):
            world = storyturn.meta["world"]  # the role: the moral item's actor, the lie item's speaker, else asked
            asked = world.get("actor") or world.get("speaker") or _asked(storyturn.turns[0].question,
                                                                         [a["name"] for a in scene["agents"]])
            for agent in scene["agents"]:
                if agent["name"] == asked:
                    spots[(task, image, j)][cell][round((agent["bbox"][0] + agent["bbox"][2]) / 2)] += 1
    checked = 0
    for key, by_cell in spots.items():
        if key[0] not in ("lie_vs_false_statement", "moral_true_belief", "moral_false_belief", "sarcasm",
                          "non_sarcasm", "false_belief_location", "true_belief_action"):
            continue
        places = {frozenset(counter) for counter in by_cell.values()}
        if len(by_cell) > 1 and all(sum(c.values()) > 2 for c in by_cell.values()):
            assert len(places) == 1, (key, dict(by_cell))  # one set of spots in every cell
        for cell, counter in by_cell.items():
            if sum(counter.values()) > 2:
                assert len(counter) >= 2, (key, cell, counter)  # never one fixed spot for the role
                if len(counter) == 2:  # the two seats: taken equally often
                    assert max(counter.values()) - min(counter.values()) <= PER_VARIANT // 12, (key, cell, counter)
                checked += 1
    assert checked >= 20


SMILE = re.compile(r"\b(grins?|smiles?|smiling|beams?)\b")
FROWN = re.compile(r"\b(frowns?|scowls?|pulls a face|wrinkles)\b")


def _faces(story: str, names: list[str]) -> dict[str, str]:
    """Who smiles and who frowns, read clause by clause (a clause names one child and one face)."""
    faces: dict[str, str] = {}
    for clause in re.split(r"[,;.]| while | but | and ", story):
        who = [n for n in names if re.search(rf"\b{n}\b", clause)]
        if len(who) == 1:
            if SMILE.search(clause):
                faces[who[0]] = "happy"
            elif FROWN.search(clause):
                faces[who[0]] = "sad"
    return faces


def test_every_face_agrees_with_the_key(sample) -> None:  # noqa: ANN001
    read = 0
    for storyturn, scenes in sample:
        if storyturn.task not in ("sarcasm", "non_sarcasm"):
            continue
        feels = next(t for t in storyturn.turns if t.meta.get("asks") == "feels")
        key = feels.answers[0].lower()
        names = [a["name"] for a in next(iter(scenes.values()))["agents"] if not a["adult"]]
        asked = _asked(feels.question, names)
        assert asked is not None
        faces = _faces(storyturn.turns[0].story, names)
        if not storyturn.image_dependent:
            assert set(faces) == set(names), storyturn.turns[0].story
            assert faces[asked] == key, (storyturn.id, storyturn.turns[0].story, key)
            read += 1
        drawn = next(a["expression"] for a in scenes[storyturn.turns[0].image]["agents"] if a["name"] == asked)
        assert (drawn == "happy") == (key == "happy"), (storyturn.id, drawn, key)
    assert read == 2 * PER_VARIANT


def _mentions(text: str, words: dict[str, str]) -> list[str]:
    """The ids of ``words`` (id -> how the story calls it) in the order the text names them."""
    hits = sorted((m.start(), i) for i, word in words.items() for m in re.finditer(rf"\b{re.escape(word)}\b", text))
    return [i for _, i in hits]


def _location_cues(storyturn: StoryTurn, scenes: dict[str, Scene]) -> dict[str, str]:
    """What a shallow reader of the location story can pick without following the swaps: each a container id."""
    log = storyturn.meta["world"]["log"]
    owner = log["things"]["thing"]["owner"]
    boxes = {i: p["name"].removeprefix("the ") for i, p in log["places"].items() if p["kind"] != "offstage"}
    named = _mentions(storyturn.turns[0].story, boxes)
    toys = _mentions(storyturn.turns[0].story, {t: log["things"][t]["noun"] for t in ("thing", "theirs")})
    puts = {e["thing"]: e["dst"] for e in log["events"] if e["kind"] == "put" and e["dst"] in boxes}
    places = next(iter(scenes.values()))["places"]
    left = min((p for p in places if p["id"] in boxes), key=lambda p: p["bbox"][0])["id"]
    return {"the owner's container": next(e["dst"] for e in log["events"] if e["actor"] == owner and
                                          e.get("thing") == "thing"),
            "the container named first": named[0], "the container named second": next(i for i in named if
                                                                                       i != named[0]),
            "the container named last": named[-1], "the container standing left": left,
            "where the toy named first was put": puts[toys[0]]}


def _classroom_cues(storyturn: StoryTurn, scenes: dict[str, Scene]) -> dict[str, str]:
    """What a shallow reader of the classroom story can pick without following the swaps: each a container id."""
    log = storyturn.meta["world"]["log"]
    boxes = {i: p["name"].removeprefix("the ") for i, p in log["places"].items()}
    named = _mentions(storyturn.turns[0].story, boxes)
    places = next(iter(scenes.values()))["places"]
    return {"where they are always kept": log["things"]["thing"]["start"], "the container named first": named[0],
            "the container named last": named[-1],
            "the container standing left": min(places, key=lambda p: p["bbox"][0])["id"]}


def _lunchbox_cues(storyturn: StoryTurn, scenes: dict[str, Scene]) -> dict[str, str]:
    """What a shallow reader of the lunchbox story can pick without following the packing: each a food."""
    log = storyturn.meta["world"]["log"]
    foods = {log["things"][t]["noun"]: log["things"][t]["noun"] for t in ("expected", "packed")}
    named = _mentions(storyturn.turns[0].story, foods)
    asked = next(i for i, a in log["agents"].items() if a["name"] in storyturn.turns[0].question)
    shown = [o["noun"] for scene in scenes.values() for o in scene["objects"] if o["visible"] and o["noun"] in foods]
    return {"the child's usual food": log["things"]["expected"]["noun"], "the food named first": named[0],
            "the food named last": named[-1],
            "the food the child hopes for": next(e["claim"] for e in log["events"] if e["kind"] == "wish" and
                                                 e["actor"] == asked),
            "the food in the picture": shown[0]}


#: The stories whose controls used to have a constant answer, the questions asked about a place or a food, and
#: how to read what a shallow reader would pick.
CUED = {"false_belief_location": (("look", "reality"), _location_cues),
        "implicit_false_belief": (("next",), _location_cues),
        "true_belief_action": (("reality", "go"), _classroom_cues),
        "expectation_false_belief": (("reality", "thinks"), _lunchbox_cues)}


def test_no_answer_is_a_fixed_function_of_the_story(sample) -> None:  # noqa: ANN001
    """The reality control (and the belief questions) of the location, classroom and lunchbox stories: counted exactly per
    cell (task x variant x test or control), the answer is each surface pick (the owner's container, the one named
    first, second or last, the one standing left, the usual food, the one hoped for...) exactly half the time,
    because half of each cell undoes the swap (recorded beside the cell, itself balanced)."""
    agree: dict[tuple[object, ...], Counter[bool]] = defaultdict(Counter)
    undone: dict[tuple[object, ...], Counter[int]] = defaultdict(Counter)
    for storyturn, scenes in sample:
        if storyturn.task not in CUED:
            continue
        asks, cues_of = CUED[storyturn.task]
        undone[_cell(storyturn)][storyturn.meta["cell"]["fact"]["value"]] += 1
        cues = cues_of(storyturn, scenes)
        log = storyturn.meta["world"]["log"]
        words = {i: p["name"].removeprefix("the ") for i, p in log["places"].items() if p["kind"] != "offstage"} \
            if storyturn.task != "expectation_false_belief" else {v: v for v in cues.values()}
        for turn in storyturn.turns:
            if turn.meta.get("asks") in asks:
                (answer,) = _mentions(turn.answers[0].lower(), words)
                for cue, pick in cues.items():
                    agree[(*_cell(storyturn), turn.meta["asks"], cue)][answer == pick] += 1
    assert {key[0] for key in agree} == set(CUED) and len(undone) == 2 * len(CUED)
    assert all(counts[0] == counts[1] > 0 for counts in undone.values()), dict(undone)
    lopsided = {key: dict(counts) for key, counts in agree.items() if counts[True] != counts[False]}
    assert lopsided == {}
    assert len(agree) == 2 * (6 * 3 + 4 * 2 + 5 * 2)  # every cue of every question, in both cells


#: (what must not be written, why): the wording lint.
LINT: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b[Aa] (?!one\b|uni|use|usu|eu)[aeiouAEIOU]\w*"), "'a' before a vowel sound"),
    (re.compile(r"\b[Aa]n (?!hour|honest|honour|heir)[b-df-hj-np-tv-zB-DF-HJ-NP-TV-Z]\w*"),
     "'an' before a consonant sound"),
    (re.compile(r"[.!]' \w+ asks\b|[.!]' asks\b|\basks, '[^']*[.!]'"), "'asks' with no question"),
    (re.compile(r"\b(swan|goose|goat|duck|pony|rooster|donkey|frog|squirrel|pigeon|rabbit|hamster|lamb|horse|cat)"
                r"\b[^.]*\bwagging\b"), "wagging that is not a dog's"),
    (re.compile(r"\b(pin|sticker|badge|star|medal|ribbon|card|prize|certificate|rosette|stamp), who\b"),
     "a 'who' clause after a thing"),
    (re.compile(r"\btid(y|ies) up while tidying\b"), "tidying up while tidying up"),
    # a question whose options do not fit its verb: "look for a ball, to the green toy chest" (going asks "to",
    # looking and opening "in"), "which one ..., in the red box" (a "which one" wants a thing, not a place)
    (re.compile(r"\b(?:look|search)(?:es|s)?(?: first)? for\b[^?.!]*?, (?:to|into) (?:the|a|an)\b"
                r"|\b(?:[Ii]n )?[Ww]hich one\b[^?.!]*?, (?:to|in|on|at|into|from) (?:the|a|an)\b"
                r"|\bopens?(?: first)? to\b[^?.!]*?, in (?:the|a|an)\b"),
     "options that do not fit the question's verb"),
)


def _texts(storyturn: StoryTurn) -> list[str]:
    parts = []
    for turn in storyturn.turns:
        parts += [turn.story, turn.question, *turn.answers]
        if turn.feedback is not None:
            parts += [turn.feedback.right or "", turn.feedback.wrong or "", *(f.text for f in turn.feedback.by_answer)]
        if turn.rubric is not None:
            parts += [turn.rubric.key_inference, *turn.rubric.false_inferences]
    return parts


def test_wording_lint_over_a_generated_sample(sample) -> None:  # noqa: ANN001
    found = []
    for storyturn, _ in sample:
        for text in _texts(storyturn):
            for pattern, why in LINT:
                if (hit := pattern.search(text)) is not None:
                    found.append(f"{storyturn.id}: {why}: ...{text[max(0, hit.start() - 30):hit.end() + 30]}...")
    assert found == [], found[:10]
    assert sum(len(storyturn_words(st)) for st, _ in sample) > 100_000  # a large sample


def test_wording_lint_over_five_more_seeds() -> None:
    """The lint over a wider sample: five other seeds, every task and variant, 12 StoryTurns each."""
    found, words = [], 0
    for seed in range(101, 106):
        for task in sorted(GENERATORS):
            for image in (False, True) if task in IMAGE_DEPENDENT_TASKS else (False,):
                for k in range(12):
                    storyturn, _ = generate_storyturn(task, k, seed=seed, image_dependent=image, slot=k)
                    words += len(storyturn_words(storyturn))
                    found += [f"{storyturn.id}: {why}: {text}" for text in _texts(storyturn) for pattern, why in LINT
                              if pattern.search(text)]
    assert found == [], found[:10]
    assert words > 200_000


@pytest.mark.parametrize(("text", "why"), [
    ("She has a orange one.", "'a' before a vowel sound"), ("It is an red one.", "'an' before a consonant sound"),
    ("'I would like a duck!' Nora asks.", "'asks' with no question"),
    ("There is the same swan, wagging and waiting calmly.", "wagging that is not a dog's"),
    ("Maya is to get a pink star pin, who helped tidy.", "a 'who' clause after a thing"),
    ("Dad tidies up while tidying up.", "tidying up while tidying up"),
    ("Where will Yuki look for a toy car, to the blue toy chest or to the green toy chest?",
     "options that do not fit the question's verb"),
    ("Which one will Ana go to for a teddy bear, to the purple basket or to the green basket?",
     "options that do not fit the question's verb"),
    ("Which one will Aisha open to get her card, in the purple basket or in the red basket?",
     "options that do not fit the question's verb"),
])
def test_the_lint_finds_each_fault(text: str, why: str) -> None:
    assert [w for pattern, w in LINT if pattern.search(text)] == [why]


_PRONOUN = re.compile(r"\b(she|her|hers|herself|he|him|his|himself|they|them|their|themselves)\b")
_SENTENCE = re.compile(r"[.!?]+['\u2019\"]?(?:\s|$)")


@functools.cache
def _generated(task: str, image: bool, k: int, slot: int) -> tuple[StoryTurn, dict[str, Scene]]:
    """One StoryTurn of seed 5 and the scene files it ships."""
    storyturn, built = generate_storyturn(task, k, 5, image, slot=slot)
    return storyturn, built.shipped


@functools.cache
def _items_by_cell(task: str, image: bool) -> tuple[dict[tuple[object, object], tuple[StoryTurn, ...]], ...]:
    """Per item (its named draws fixed: index 0-5 of seed 5), the StoryTurns it becomes at slots 0-7 (every crossed
    cell twice), grouped by the cell (and crossed fact) each slot gives it."""
    out = []
    for k in range(6):
        seen: dict[tuple[object, object], list[StoryTurn]] = defaultdict(list)
        for slot in range(8):
            storyturn, _ = _generated(task, image, k, slot)
            cell = storyturn.meta.get("cell") or {}
            seen[(cell.get("value"), (cell.get("fact") or {}).get("value"))].append(storyturn)
        out.append({cell: tuple(sts) for cell, sts in seen.items()})
    return tuple(out)


def _counts_by_cell(task: str, image: bool) -> list[dict[tuple[object, object], set[tuple[int, int]]]]:
    """Per item (its named draws fixed), the story's pronoun and sentence counts in each cell it lands in."""
    out = []
    for item in _items_by_cell(task, image):
        seen: dict[tuple[object, object], set[tuple[int, int]]] = defaultdict(set)
        for cell, storyturns in item.items():
            for storyturn in storyturns:
                text = " ".join(t.story or "" for t in storyturn.turns).lower()
                seen[cell].add((len(_PRONOUN.findall(text)), len(_SENTENCE.findall(text))))
        out.append(seen)
    return out


def test_the_same_item_has_as_many_sentences_and_pronouns_in_every_cell() -> None:
    """Exact: an item generated at other slots (the same names, frames and wordings, another cell or crossed fact)
    tells its story in as many sentences and with as many pronouns, so a reader of sizes (the audit's
    ``statistics``) has nothing to read. The moral pair's picture variant told the undone swap in a sentence more
    than the swap alone (and with more pronouns): a scratch probe read the crossed fact off the pronoun count at
    58.8 and 59.7 % on two seed pairs; it now tells a thing the grown-up does that both see, sentence for sentence,
    and so do the location and lunchbox stories where the swap is not undone."""
    changed = set()
    for task in sorted(GENERATORS):
        for image in (False, True) if task in IMAGE_DEPENDENT_TASKS else (False,):
            for seen in _counts_by_cell(task, image):
                assert len(seen) > 1 or task in {"common_desire", "diverse_desire", "diverse_belief"}, (task, seen)
                if len(set().union(*seen.values())) > 1:
                    changed.add(task)
    assert changed == set(), changed


_SHE = re.compile(r"\b(she|her|hers|herself)\b")
_HE = re.compile(r"\b(he|him|his|himself)\b")
#: Every name the cast draws, with its pronoun (children by the pool they come from, grown-ups as listed).
_NAME_PRONOUN = {**dict.fromkeys(lex.GIRLS, "she"), **dict.fromkeys(lex.BOYS, "he"), **dict(lex.ADULTS),
                 **dict(lex.TEACHERS)}
_NAMES = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, _NAME_PRONOUN), key=len, reverse=True)) + r")\b")


def _gender_view(storyturn: StoryTurn) -> tuple[str | None, tuple[tuple[int, int], ...]]:
    """What a shallow reader of gender sees: the first-named character's pronoun and, at every turn, how many
    she-forms and he-forms the story told so far holds (the story up to a closed turn is all it is shown)."""
    first = _NAMES.search(storyturn.turns[0].story or "")
    counts, told = [], ""
    for turn in storyturn.turns:
        told += " " + (turn.story or "").lower()
        counts.append((len(_SHE.findall(told)), len(_HE.findall(told))))
    return (_NAME_PRONOUN[first.group(0)] if first else None, tuple(counts))


def _spread(views: list[tuple[str | None, tuple[tuple[int, int], ...]]]) -> dict[object, Fraction]:
    return {view: Fraction(n, len(views)) for view, n in Counter(views).items()}


def test_what_a_reader_of_gender_sees_is_spread_alike_over_every_cell() -> None:
    """Exact: for every item (its named draws fixed), turn by turn, the she-forms and he-forms of the story told so
    far, and the first-named character's gender with them, are spread alike over every cell (and crossed fact) the
    item can land in. The named draws (genders, names, frames) come from streams seeded without the cell, and the
    cell from a balanced stream of its own, so with this the pair (first name's gender, she-minus-he) is independent
    of every key by construction. A scratch probe read moral_false_belief at 57.9 % off that pair (chance 50 %):
    over 40 pairs of seeds the same reader averages 50.4 % (sd 3.2 points a pair), noise picked out of more than a
    hundred readers a task (docs/procedural.md). Before ca97a52 the moral pair's text stories told the undone swap
    with a pronoun more, and this test fails there."""
    checked, first_named = 0, set()
    for task in sorted(GENERATORS):
        for image in (False, True) if task in IMAGE_DEPENDENT_TASKS else (False,):
            for k, item in enumerate(_items_by_cell(task, image)):
                views = {cell: [_gender_view(st) for st in storyturns] for cell, storyturns in item.items()}
                assert all(v[0] is not None for vs in views.values() for v in vs), (task, image, k)
                counts = {cell: _spread([(None, v[1]) for v in vs]) for cell, vs in views.items()}
                assert len({frozenset(c.items()) for c in counts.values()}) == 1, (task, image, k, counts)
                if len({frozenset(_spread(vs).items()) for vs in views.values()}) > 1:
                    first_named.add(task)
                checked += len(item) > 1
    assert first_named == set(), first_named
    assert checked >= 6 * 24, checked  # every task's items land in more than one cell (the three without a key too)


_SLOT = re.compile(r"\{([a-z_0-9]+)(?:\.[a-z]+)?\}")


def _shape(*frames: str) -> tuple[int, int, int, tuple[tuple[str, int], ...]]:
    """What a reader of sizes sees of frames told one after another, whatever fills them (every slot one word): their
    words, sentences and pronouns, and how often each slot (a name, a toy, the reason) is filled in."""
    text = " ".join(_SLOT.sub("X", f) for f in frames)
    slots = Counter(s for f in frames for s in _SLOT.findall(f))
    return len(text.split()), len(_SENTENCE.findall(text)), len(_PRONOUN.findall(text.lower())), tuple(sorted(slots.items()))


def _paired_stories() -> dict[str, tuple[list[tuple[str, ...]], list[tuple[str, ...]]]]:
    """Per story, the frames its two crossed facts tell at the same places (frame keys), as every pair of frame indices
    can combine them: the kept story's and the undone one's."""
    from commet.generation.procedural.tasks import belief, moral, second_order

    def crossed(kept_a: tuple[str, ...], kept_b: tuple[str, ...], undone_a: tuple[str, ...], undone_b: tuple[str, ...]
                ) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
        # ``a`` frames share one key (one index) and ``b`` frames another: the kept story tells kept_a[i] and kept_b[j]
        # where the undone one tells undone_a[i] and undone_b[j]
        pairs = [(i, j) for i in range(len(kept_a)) for j in range(len(kept_b))]
        return [(kept_a[i], kept_b[j]) for i, j in pairs], [(undone_a[i], undone_b[j]) for i, j in pairs]

    def same(kept: tuple[str, ...], undone: tuple[str, ...]) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
        return [(f,) for f in kept], [(f,) for f in undone]

    return {
        "false_belief_location": crossed(belief.SEEN, belief.SWAP, belief.SWAP_BACK, belief.SWAP_SEEN),
        "expectation_false_belief": crossed(belief.BREAKFAST_SEEN, belief.MIXUP, belief.MIXUP_BACK, belief.MIXUP_SEEN),
        "moral text": crossed(moral.SEEN, moral.SWAP, moral.SWAP_BACK, moral.SWAP_SEEN),
        "moral picture": same(moral.SWAP_PICTURE, moral.SWAP_PICTURE_BACK),
        "classroom morning": same(belief.MORNING_KEPT, belief.MORNING),
        "classroom break": same(belief.BREAK, belief.BREAK_BACK),
        "classroom news": same(belief.ANNOUNCE, belief.ANNOUNCE_BACK),
        "second-order first request": same(second_order.LEAD_INS, second_order.EARLIER),
        "second-order who said it": same(second_order.ASKED, second_order.ASKED_BEFORE),
    }


def test_a_crossed_fact_is_told_in_as_many_words_whatever_the_frames() -> None:
    """Exact, over every pair of frame indices: where the stories with the swap undone (the classroom's, the location,
    lunchbox and moral stories') tell the swap both children see and the swap back, the others tell a deed both see and
    the swap, in as many words, sentences and pronouns, with every slot filled as often. A reader of the story's exact
    word count (a threshold learned on one seed) read that fact at 63 to 75 % (chance 50) on the frames before these:
    the undone stories were some 5 to 7 words longer; it now reads it at chance (docs/procedural.md). So does the
    second-order story's first request, told in order or afterwards (a balanced choice the audit's census reader
    joined, by the story's length, with the order of mention: 55 to 60 %)."""
    checked = 0
    for story, (kept, undone) in _paired_stories().items():
        for a, b in zip(kept, undone, strict=True):
            assert _shape(*a) == _shape(*b), (story, a, b)
            checked += 1
    assert checked >= 3 * 25 + 5 * 5 + 5


def _census(storyturn: StoryTurn, scenes: dict[str, Scene]) -> tuple[object, ...]:
    """What the audit's census reader (and a reviewer's picture counter) reads, the key apart: per picture shipped,
    its people, grown-ups, things shown, how many colours the things have and how many share each, how many wear an
    accessory and of how many kinds, its places and screens; and the story's people, and whether the first question's
    person is the last one it names (its length in words: :func:`test_a_crossed_fact_is_told_in_as_many_words_whatever_the_frames`)."""
    pictures = []
    for scene in scenes.values():
        things = [o for o in scene["objects"] if o.get("visible", True) is not False]
        colours = Counter(o["colour"] for o in things)
        pictures.append((len(scene["agents"]), sum(bool(a.get("adult")) for a in scene["agents"]), len(things),
                         tuple(sorted(colours.values())), sum(bool(o.get("feature")) for o in things),
                         len({o.get("feature") for o in things} - {None}), len(scene["places"]),
                         len(scene.get("occluders", []))))
    story = " ".join(t.story or "" for t in storyturn.turns)
    named = _NAMES.findall(story)
    asked = _NAMES.search(storyturn.turns[0].question)
    return tuple(pictures), len(set(named)), bool(named and asked and named[-1] == asked.group(0))


def test_what_a_census_sees_is_spread_alike_over_every_cell() -> None:
    """Exact, per item (its named draws fixed), over every cell (and crossed fact) it can land in: the census of its
    pictures and story (:func:`_census`) is spread alike. interpretation's rows had four colours where the colour
    clue fits one thing and three where it fits two (the census reader read the key at 75 to 78 %, chance 50), and
    the sarcasm pair served the asked child's wish in one cell and the other child's in the other, so the same item
    drew another snack (and its colours) in each; the rows are one census now, and the served snack one draw."""
    checked = 0
    for task in sorted(GENERATORS):
        for image in (False, True) if task in IMAGE_DEPENDENT_TASKS else (False,):
            for k in range(6):
                views: dict[tuple[object, object], list[tuple[object, ...]]] = defaultdict(list)
                for slot in range(8):
                    storyturn, scenes = _generated(task, image, k, slot)
                    cell = storyturn.meta.get("cell") or {}
                    views[(cell.get("value"), (cell.get("fact") or {}).get("value"))].append(
                        _census(storyturn, scenes))
                spreads = {cell: frozenset(_spread(vs).items()) for cell, vs in views.items()}  # type: ignore[arg-type]
                assert len(set(spreads.values())) == 1, (task, image, k, views)
                checked += 1
    assert checked == 6 * sum(2 if t in IMAGE_DEPENDENT_TASKS else 1 for t in GENERATORS)
