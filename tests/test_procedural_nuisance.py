"""No nuisance choice of the procedural generator goes with the key, and every key agrees with its story.

* The generator records every order, position and side it chooses (``meta["nuisance"]``) and the item's
  cell (``meta["cell"]``, the draw that decides the answers). Counted exactly per cell (task x variant x
  key), every value of every recorded choice occurs equally often: none predicts the key.
* Where each person stands in the pictures, measured from the scene files (the people's pixel boxes):
  the asked person's rank from the left is spread alike over the cells of a task.
* Every sentence that gives the sarcasm pair's children a face agrees with the key (the asked child smiles
  exactly when the key says happy), and so does the picture's face.
* Wording lint over a generated sample: articles by sound, "asks" only with a question, no wagging that
  is not a dog's, no "who" clause after a thing, no "tidies up while tidying up".
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict

import pytest

from commet.format.model import StoryTurn
from commet.generation.procedural import GENERATORS, IMAGE_DEPENDENT_TASKS, generate_storyturn
from commet.generation.procedural.shapes import Scene
from commet.generation.procedural.variety import storyturn_words

#: Two counterbalancing blocks per task and variant (text, image-dependent): small and exact.
PER_VARIANT = 24


def _sample() -> list[tuple[StoryTurn, dict[str, Scene]]]:
    out = []
    for task in sorted(GENERATORS):
        for image in (False, True) if task in IMAGE_DEPENDENT_TASKS else (False,):
            for k in range(PER_VARIANT):  # one variant at a time: the slot within the variant is the index
                storyturn, builder = generate_storyturn(task, k, seed=71, image_dependent=image, slot=k)
                out.append((storyturn, builder.scenes))
    return out


@pytest.fixture(scope="module")
def sample() -> list[tuple[StoryTurn, dict[str, Scene]]]:
    return _sample()


def _cell(storyturn: StoryTurn) -> tuple[str, bool, object]:
    cell = storyturn.meta.get("cell")
    return storyturn.task, storyturn.image_dependent, cell["value"] if isinstance(cell, dict) else None


def test_every_nuisance_choice_is_balanced_within_every_cell(sample) -> None:  # noqa: ANN001
    counts: dict[tuple[object, ...], Counter[int]] = defaultdict(Counter)
    sizes: dict[tuple[object, ...], int] = {}
    for storyturn, _ in sample:
        record = storyturn.meta.get("nuisance", {})
        assert isinstance(record, dict)
        for key, choice in record.items():
            counts[(*_cell(storyturn), key)][choice["value"]] += 1
            sizes[(*_cell(storyturn), key)] = choice["of"]
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
        # exact where the cell's items per block divide by n; else at most one apart per block
        slack = 0 if total % n == 0 and (total // 2) % n == 0 else PER_VARIANT // 12
        if max(values) - min(values) > slack:
            problems.append(f"{key}: {values}")
    assert problems == []


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


@pytest.mark.parametrize(("text", "why"), [
    ("She has a orange one.", "'a' before a vowel sound"), ("It is an red one.", "'an' before a consonant sound"),
    ("'I would like a duck!' Nora asks.", "'asks' with no question"),
    ("There is the same swan, wagging and waiting calmly.", "wagging that is not a dog's"),
    ("Maya is to get a pink star pin, who helped tidy.", "a 'who' clause after a thing"),
    ("Dad tidies up while tidying up.", "tidying up while tidying up"),
])
def test_the_lint_finds_each_fault(text: str, why: str) -> None:
    assert [w for pattern, w in LINT if pattern.search(text)] == [why]
