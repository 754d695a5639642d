"""Where the pictures put the answer's thing tells nothing: the layout tables are fair to the key by construction,
and the audit's picture readers (distance from the centre, the position lookup) would have caught the old ones.

* reference_easy's layout table holds each layout's role swap, mirrored (``swapped_roles``): with the room's mirror
  (a balanced coin) the surface the speaker sees stands at exactly the spots the hidden one stands at.
* Counted exactly per cell from the scenes: the answer's thing (or surface) is drawn at the same centres, at the
  same distances from the picture's centre and at the same places in the scene's lists as the other option's.
* No scene id names a role (near, far, target, other...).
* On the old layout tables (rebuilt here) the audit's position and picture readers find the leaks (the answer
  farther from the centre in reference_easy, nearer in reference_hard_referent); on the tables now they do not.
* reference_hard_perspective draws the same sixteen layouts in each of its cells, equally often, and in each
  layout each of the three things is the answer equally often, turn by turn (counted exactly on everything the
  layout shows: the screen, each thing's table, size and spot, where each person stands). The old control drew no
  screen (rebuilt here by taking the screen out of the control's pictures, which is all it changed): there the
  answer was always the end size on the near table, and the audit's ``layout`` lookup (screens joined with each
  option's size and place) reads it, while no reader of one cue does.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from commet.generation.audit import audit_dataset
from commet.generation.procedural import generate_storyturn, is_image_dependent, variant_slot
from commet.generation.procedural import lexicon as lex
from commet.generation.procedural.render import OCCLUDER_SIZE, PLACE_SIZE, WIDTH
from commet.generation.procedural.tasks import reference
from commet.generation.procedural.world import SLOT
from commet.generation.shallow_readers import readings

TASKS = ("reference_easy", "reference_hard_referent")
#: The tables before the fix (reference_hard_referent's control had one pair of layouts, its test the same pair).
OLD_EASY = ({"speaker": 0.06, "seen": 0.25, "screen": 0.465, "hidden": 0.69, "listener": 0.94},
            {"seen": 0.03, "speaker": 0.385, "screen": 0.525, "hidden": 0.725, "listener": 0.94})
OLD_REFERENT = {True: reference.REFERENT_LAYOUTS[True],
                False: ({"far": 0.035, "screen": 0.255, "speaker": 0.42, "near": 0.78, "listener": 0.98},
                        {"far": 0.035, "screen": 0.255, "listener": 0.42, "near": 0.78, "speaker": 0.98}) * 2}
#: The control table before the people-proximity fix: the surface both see at 0.78 in two layouts, at the end in two.
OLD_REFERENT_CONTROL = {True: reference.REFERENT_LAYOUTS[True],
                        False: ({"far": 0.035, "screen": 0.255, "speaker": 0.42, "near": 0.78, "listener": 0.98},
                                {"far": 0.035, "screen": 0.255, "listener": 0.42, "near": 0.78, "speaker": 0.98},
                                {"near": 0.035, "speaker": 0.24, "listener": 0.39, "screen": 0.56, "far": 0.78},
                                {"near": 0.035, "listener": 0.24, "speaker": 0.39, "screen": 0.56, "far": 0.78})}


def _sample(seed: int, per_task: int, scenes: dict) -> list:  # type: ignore[type-arg]
    out = []
    for task in TASKS:
        for k in range(per_task):
            storyturn, builder = generate_storyturn(task, k, seed, is_image_dependent(task, k, per_task, 0.3),
                                                    slot=variant_slot(task, k, per_task, 0.3))
            scenes.update(builder.scenes)
            out.append(storyturn)
    return out


def _excess(per_task: int = 40) -> dict[tuple[str, str], float]:
    scenes: dict = {}  # type: ignore[type-arg]
    audit = audit_dataset(_sample(1, per_task, scenes), other=_sample(2, per_task, scenes), scenes=scenes,
                          families=("picture", "position"))
    return {(line.task, line.family): line.excess for line in audit.lines}


def test_the_easy_layout_table_holds_every_layouts_role_swap() -> None:
    for layout in reference.EASY_LAYOUTS:
        swapped = reference.swapped_roles(layout, ("seen", "hidden"), ("speaker", "listener"))
        assert any(all(abs(swapped[r] - other[r]) < 1e-9 for r in layout) for other in reference.EASY_LAYOUTS), layout
    # the old table did not: its hidden surface always stood nearer the centre
    assert not all(any(all(abs(reference.swapped_roles(layout, ("seen", "hidden"), ("speaker", "listener"))[r]
                                   - other[r]) < 1e-9 for r in layout) for other in OLD_EASY) for layout in OLD_EASY)


def test_the_answer_is_drawn_where_the_other_option_is() -> None:
    """Per task, cell and turn: the multiset of the answer's drawn centres (and distances from the centre) is the
    other option's; and the answer is listed first in the scene as often as the other one."""
    spots: dict[tuple[object, ...], list[Counter[str]]] = defaultdict(lambda: [Counter(), Counter()])
    order: dict[tuple[object, ...], Counter[bool]] = defaultdict(Counter)
    for task in TASKS:
        for image in (False, True):
            for k in range(32):  # 16 per cell: two runs of the eight joint layout coins
                storyturn, builder = generate_storyturn(task, k, seed=71, image_dependent=image, slot=k)
                cell = (task, storyturn.meta["cell"]["value"])
                for reading in readings(storyturn, builder.scenes):
                    assert len(reading.positions) == reading.n == 2
                    (key,) = reading.right[0]
                    for j, where in enumerate(reading.positions):
                        spots[(*cell, reading.turn)][j == key].update(s for s in where if not s.startswith("box"))
                scene = builder.scenes[storyturn.turns[0].image]  # type: ignore[index]
                meant = storyturn.meta["world"]["meant"]
                things = [o["id"] for o in scene["objects"] if o["noun"] == storyturn.meta["world"]["thing"]]
                order[cell][things[0] == meant] += 1
    assert len(spots) == 6
    for key, (other, answer) in spots.items():
        assert answer == other, (key, dict(answer), dict(other))
    for key, counts in order.items():
        assert counts[True] == counts[False], (key, counts)


def _nearer_counts() -> dict[tuple[object, ...], Counter[bool]]:
    """reference_hard_referent, per cell, answer (the thing given, the thing meant) and person (the speaker, a
    child; the listener, a grown-up): in how many items of the eight joint layout coins (each twice, with and
    without the picture-dependent text) the answer's thing stands nearer to that person than the other thing."""
    counts: dict[tuple[object, ...], Counter[bool]] = defaultdict(Counter)
    for image in (False, True):
        for k in range(32):
            storyturn, builder = generate_storyturn("reference_hard_referent", k, seed=71, image_dependent=image, slot=k)
            world = storyturn.meta["world"]
            scene = builder.scenes[storyturn.turns[0].image]  # type: ignore[index]
            toys = {o["id"]: (o["bbox"][0] + o["bbox"][2]) / 2 for o in scene["objects"] if o["noun"] == world["thing"]}
            for answer in ("given", "meant"):
                (other,) = set(toys) - {world[answer]}
                for person in scene["agents"]:
                    at = (person["bbox"][0] + person["bbox"][2]) / 2
                    nearer = abs(toys[world[answer]] - at) < abs(toys[other] - at)
                    counts[(storyturn.meta["cell"]["value"], answer, person["adult"])][nearer] += 1
    return counts


def test_each_person_is_nearer_to_the_answer_in_half_the_layouts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Per cell, answer and person, exactly: "the thing nearest to the person asked about" tells nothing. The old
    control table (the surface both see at the end in half of it, no room to stand anyone nearer to the hidden
    thing) put each person nearer to the answer in three layouts of four."""
    counts = _nearer_counts()
    assert len(counts) == 8
    for key, count in counts.items():
        assert count[True] == count[False] == 16, (key, count)
    monkeypatch.setattr(reference, "REFERENT_LAYOUTS", OLD_REFERENT_CONTROL)
    monkeypatch.setattr(reference, "REFERENT_WIDTH", WIDTH)  # the old tables drew 640 px pictures
    old = _nearer_counts()
    assert any(count[True] != count[False] for count in old.values()), old


def test_no_scene_id_names_a_role() -> None:
    roles = ("near", "far", "target", "other", "seen", "hidden", "meant", "given")
    for task in (*TASKS, "reference_hard_perspective"):
        for k in range(4):
            _, builder = generate_storyturn(task, k, seed=3, slot=k)
            for scene in builder.scenes.values():
                ids = [e["id"] for key in ("places", "objects", "occluders") for e in scene[key]]
                assert not [i for i in ids if any(r in i for r in roles)], (task, ids)


def test_the_audit_flags_the_old_layouts_and_not_the_new(monkeypatch: pytest.MonkeyPatch) -> None:
    now = _excess()
    monkeypatch.setattr(reference, "EASY_LAYOUTS", OLD_EASY)
    monkeypatch.setattr(reference, "REFERENT_LAYOUTS", OLD_REFERENT)
    monkeypatch.setattr(reference, "REFERENT_WIDTH", WIDTH)
    old = _excess()
    assert old[("reference_easy", "position")] > 40 and old[("reference_easy", "picture")] > 40, old
    assert old[("reference_hard_referent", "position")] > 15 and old[("reference_hard_referent", "picture")] > 15, old
    assert now[("reference_easy", "position")] < 5 and now[("reference_easy", "picture")] < 5, now
    assert now[("reference_hard_referent", "position")] < 8, now
    assert now[("reference_hard_referent", "picture")] < 15, now  # nearest to the person asked about: see the docs


def test_every_spot_and_size_is_the_answer_a_third_of_the_time() -> None:
    """reference_hard_perspective, turn by turn over its three cells (equally many items of each, every joint coin
    of mirror, size asked and the near table's order as often): a thing drawn at any box (spot and size), centre or
    distance from the centre is the answer exactly once in three. Before, the middle-sized one stood alone only
    where nobody is blocked (never the answer there), and an exact-box lookup read 38 % against 33 %."""
    where: dict[tuple[int, str], Counter[bool]] = defaultdict(Counter)
    cells: Counter[object] = Counter()
    for image in (False, True):
        for k in range(48):  # 16 per cell: two runs of the eight joint coins
            storyturn, builder = generate_storyturn("reference_hard_perspective", k, seed=71, image_dependent=image,
                                                    slot=k)
            cells[storyturn.meta["cell"]["value"]] += 1
            for reading in readings(storyturn, builder.scenes):
                assert len(reading.positions) == reading.n == 3
                (key,) = reading.right[0]
                for j, spots in enumerate(reading.positions):
                    for spot in spots:
                        where[(reading.turn, spot)][j == key] += 1
    assert set(cells.values()) == {32}, cells
    assert {turn for turn, _ in where} == {0, 2}
    for spot, count in where.items():
        assert 2 * count[True] == count[False], (spot, count)


def test_the_audit_reads_the_perspective_pictures_at_chance() -> None:
    scenes: dict = {}  # type: ignore[type-arg]

    def sample(seed: int) -> list:  # type: ignore[type-arg]
        out = []
        for k in range(48):
            storyturn, builder = generate_storyturn("reference_hard_perspective", k, seed,
                                                    is_image_dependent("reference_hard_perspective", k, 48, 0.3),
                                                    slot=variant_slot("reference_hard_perspective", k, 48, 0.3))
            scenes.update(builder.scenes)
            out.append(storyturn)
        return out

    audit = audit_dataset(sample(1), other=sample(2), scenes=scenes, families=("picture", "position"))
    excess = {line.family: line.excess for line in audit.lines}
    assert excess["position"] < 3 and excess["picture"] < 3, excess


PERSPECTIVE = "reference_hard_perspective"
#: Every picture of reference_hard_perspective is drawn at one of these (per image variant: 16 per cell).
PERSPECTIVE_ITEMS = 48


def _perspective(old_control: bool = False) -> list[tuple[object, ...]]:
    """Per item (seed 71, both variants, 16 per cell) and closed turn: (cell, coins, turn, the layout, the answer's
    place in it). The layout is everything the picture shows of where things are: the screens' centres, per thing
    its table's centre, its size and its rank from the left, per person whether a grown-up and the centre. With
    ``old_control`` the control's screen is taken out (the layout before the fix)."""
    found: list[tuple[object, ...]] = []
    for image in (False, True):
        for k in range(PERSPECTIVE_ITEMS):
            storyturn, builder = generate_storyturn(PERSPECTIVE, k, seed=71, image_dependent=image, slot=k)
            scene = dict(builder.scenes[storyturn.turns[0].image])  # type: ignore[index]
            cell = storyturn.meta["cell"]["value"]
            if old_control and cell == 2:
                scene["occluders"] = []

            def centre(entity: dict) -> int:  # type: ignore[type-arg]
                return round((entity["bbox"][0] + entity["bbox"][2]) / 2)

            tables = {p["id"]: centre(p) for p in scene["places"]}
            by_x = sorted(scene["objects"], key=centre)
            toys = {o["id"]: (tables[o["location"]], o["size"], by_x.index(o)) for o in scene["objects"]}
            layout = (tuple(sorted(centre(o) for o in scene["occluders"])), tuple(sorted(toys.values())),
                      tuple(sorted((a["adult"], centre(a)) for a in scene["agents"])))
            nuisance = storyturn.meta["nuisance"]
            coins = tuple(nuisance[c]["value"] for c in ("room mirrored", "asks big",
                                                         "near table: the bigger one nearer the people",
                                                         "setter inside"))
            world = storyturn.meta["world"]
            for turn, answer in ((0, "given"), (2, "wanted")):
                found.append((cell, coins, turn, layout, toys[world[answer]]))
    return found


def test_every_perspective_layout_is_drawn_in_every_cell_and_hides_the_answer() -> None:
    """Exact, turn by turn: the cell and the four joint coins are enumerated (each coin combination once per cell
    and variant); every layout (screen, tables, sizes, spots, people) is drawn equally often in each cell, and in
    each layout each of its three things is the answer equally often. So no combination of what the picture shows,
    however many cues it joins, goes with the answer. With the old control (no screen) it did: the layouts with no
    screen always had the end size on the near table as the answer."""
    found = _perspective()
    coins: dict[int, Counter[tuple[object, ...]]] = defaultdict(Counter)
    layouts: dict[tuple[object, ...], Counter[int]] = defaultdict(Counter)
    answers: dict[tuple[object, ...], Counter[tuple[object, ...]]] = defaultdict(Counter)
    for cell, coin, turn, layout, answer in found:
        if turn == 0:
            coins[cell][coin] += 1  # type: ignore[index]
            layouts[layout][cell] += 1  # type: ignore[index]
        answers[(turn, layout)][answer] += 1  # type: ignore[index]
    assert sorted(coins) == [0, 1, 2] and all(len(c) == 16 and set(c.values()) == {2} for c in coins.values()), coins
    assert len(layouts) == 16 and all(sorted(c.items()) == [(0, 2), (1, 2), (2, 2)] for c in layouts.values()), layouts
    for (turn, layout), count in answers.items():
        assert len(count) == 3 and set(count.values()) == {2}, (turn, layout, count)
    old: dict[tuple[object, ...], Counter[tuple[object, ...]]] = defaultdict(Counter)
    for _, _, turn, layout, answer in _perspective(old_control=True):
        old[(turn, layout)][answer] += 1  # type: ignore[index]
    unscreened = [count for (_, layout), count in old.items() if not layout[0]]  # type: ignore[index]
    assert len(unscreened) == 32 and all(len(count) == 1 for count in unscreened), unscreened


def test_the_layout_reader_flags_the_old_perspective_control_and_not_the_new() -> None:
    """The audit's ``layout`` lookup, learned on one seed and scored on another (48 StoryTurns each, the shipped
    scene files): on the old control's pictures (no screen) it reads the nobody-blocked cell off the screen's
    absence and answers the end size on the near table there (about +33 points); now it reads chance, as the
    one-cue readers (picture, position) did before and do now."""

    def excess(old_control: bool) -> dict[str, float]:
        scenes: dict = {}  # type: ignore[type-arg]

        def sample(seed: int) -> list:  # type: ignore[type-arg]
            out = []
            for k in range(PERSPECTIVE_ITEMS):
                storyturn, builder = generate_storyturn(
                    PERSPECTIVE, k, seed, is_image_dependent(PERSPECTIVE, k, PERSPECTIVE_ITEMS, 0.3),
                    slot=variant_slot(PERSPECTIVE, k, PERSPECTIVE_ITEMS, 0.3))
                control = old_control and storyturn.meta["cell"]["value"] == 2
                scenes.update({i: {**s, "occluders": []} if control else s for i, s in builder.shipped.items()})
                out.append(storyturn)
            return out

        audit = audit_dataset(sample(1), other=sample(2), scenes=scenes, families=("picture", "position", "layout"))
        return {line.family: line.excess for line in audit.lines}

    old, now = excess(True), excess(False)
    assert old["layout"] > 20 and old["position"] < 3 and old["picture"] < 3, old
    assert now["layout"] < 3 and now["position"] < 3 and now["picture"] < 3, now


REFERENT = "reference_hard_referent"


#: The table before the wider picture (640 px): the control stood its screen at its own spots (0.73, mirrored) and
#: both people on the side of the surface at the end, which held the answer.
PREVIOUS_REFERENT = {
    True: ({"near": 0.035, "speaker": 0.42, "screen": 0.57, "far": 0.78, "listener": 0.98},
           {"far": 0.035, "listener": 0.42, "screen": 0.57, "near": 0.78, "speaker": 0.98}) * 2,
    False: ({"near": 0.035, "speaker": 0.28, "listener": 0.57, "screen": 0.73, "far": 0.965},
            {"near": 0.035, "listener": 0.28, "speaker": 0.57, "screen": 0.73, "far": 0.965}) * 2}


def _referent_items() -> list[tuple[int, object, dict]]:  # type: ignore[type-arg]
    """reference_hard_referent, seed 71, both variants, 32 items each: every joint coin of the room's mirror, the
    speaker's side, the things' side and who stands nearer the screen, once per cell (16 per cell and variant)."""
    out = []
    for image in (False, True):
        for k in range(32):
            storyturn, builder = generate_storyturn(REFERENT, k, seed=71, image_dependent=image, slot=k)
            out.append((storyturn.meta["cell"]["value"], storyturn, builder))
    return out


def _referent_layout_keys() -> dict[tuple[object, ...], Counter[bool]]:
    """Per (cell, turn) and key of the audit's ``layout`` lookup (the screen's spot joined with the option's
    table, or with its centre), how often an option drawn there is the answer (True) or not."""
    counts: dict[tuple[object, ...], Counter[bool]] = defaultdict(Counter)
    for cell, storyturn, builder in _referent_items():
        for reading in readings(storyturn, builder.shipped):  # type: ignore[attr-defined]
            assert len(reading.layout) == reading.n == 2
            (key,) = reading.right[0]
            for j, spots in enumerate(reading.layout):
                for spot in spots:
                    counts[(cell, reading.turn, spot)][j == key] += 1
    return counts


def test_the_referent_layout_lookup_reads_nothing_in_either_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    """Exact, per cell and turn: every joint key of the layout lookup (screen spot and the option's table, screen
    spot and the option's centre) is the answer as often as not, and both cells draw the same screen spots. On the
    previous 640 px table the control's keys were always or never the answer, at screen spots of its own."""
    counts = _referent_layout_keys()
    keys = {cell: {key[2] for key in counts if key[0] == cell and not key[2].startswith("screen: yes")}
            for cell in (0, 1)}
    assert keys[0] and keys[0] == keys[1]
    for key, count in counts.items():
        assert count[True] == count[False], (key, count)
    monkeypatch.setattr(reference, "REFERENT_LAYOUTS", PREVIOUS_REFERENT)
    monkeypatch.setattr(reference, "REFERENT_WIDTH", WIDTH)
    old = _referent_layout_keys()
    control = {key: c for key, c in old.items() if key[0] == 0 and not key[2].startswith("screen: yes")}
    assert all(len(count) == 1 for count in control.values()), control
    screens = {cell: {key[2].split("|")[0] for key in old if key[0] == cell} - {"screen: yes"} for cell in (0, 1)}
    assert not screens[0] & screens[1], screens


def _box(entity: dict) -> float:  # type: ignore[type-arg]
    """Where an entity is drawn: its centre (its size and height come from named draws, independent of the cell
    by construction, and not balanced at 32 items)."""
    return round((entity["bbox"][0] + entity["bbox"][2]) / 2, 1)


def test_every_nuisance_of_the_referent_picture_is_independent_of_the_key() -> None:
    """Enumerates every joint coin of each cell and counts, exactly, what the picture shows apart from who stands on
    which side of the screen (which is the item's fact: who can see what):

    * the furniture and things (the picture's width, where the screen, both surfaces, every toy and landmark stand)
      are drawn alike in the test item and the control: the same layouts, each as often;
    * per cell and turn, within each such layout, the answer's thing stands at each of the two toys' spots as often
      (the joint of the layout and the answer's spot is the joint of the layout and the other toy's spot);
    * each person (the child who speaks, the grown-up who listens) stands at the same spots in both cells, each as
      often, and in the picture's left half as often as in its right, in each cell."""
    furniture: dict[int, Counter[tuple[object, ...]]] = defaultdict(Counter)
    answer: dict[tuple[object, ...], Counter[tuple[object, ...]]] = defaultdict(Counter)
    other: dict[tuple[object, ...], Counter[tuple[object, ...]]] = defaultdict(Counter)
    spots: dict[tuple[object, ...], Counter[float]] = defaultdict(Counter)
    halves: dict[tuple[object, ...], Counter[bool]] = defaultdict(Counter)
    for cell, storyturn, builder in _referent_items():
        world = storyturn.meta["world"]  # type: ignore[attr-defined]
        scene = builder.scenes[storyturn.turns[0].image]  # type: ignore[attr-defined]
        toys = {o["id"]: _box(o) for o in scene["objects"] if o["noun"] == world["thing"]}
        layout = (scene["width"], *(_box(o) for o in scene["occluders"]), *sorted(_box(p) for p in scene["places"]),
                  *sorted((o["noun"] == world["thing"], _box(o)) for o in scene["objects"]))
        furniture[cell][layout] += 1
        for role in ("given", "meant"):
            (not_it,) = set(toys) - {world[role]}
            answer[(cell, role)][(layout, toys[world[role]])] += 1
            other[(cell, role)][(layout, toys[not_it])] += 1
        for person in scene["agents"]:
            spots[(cell, person["adult"])][_box(person)] += 1
            halves[(cell, person["adult"])][(person["bbox"][0] + person["bbox"][2]) / 2 < scene["width"] / 2] += 1
    assert furniture[0] == furniture[1] and len(set(furniture[0].values())) == 1, furniture
    assert len(answer) == 4
    for key in answer:
        assert answer[key] == other[key], key
    for adult in (False, True):
        assert spots[(0, adult)] == spots[(1, adult)] and len(set(spots[(0, adult)].values())) == 1, spots
        assert halves[(0, adult)][True] == halves[(0, adult)][False] == halves[(1, adult)][True], halves


def test_each_side_of_the_screen_holds_a_surface_and_both_people() -> None:
    """Why the referent's picture is wider: for the layout lookup to read chance, both people must stand on the left
    of one screen as often as on its right, so each side must hold a surface (two things: 138 px) and the child and
    the grown-up (66 + 78 px). 640 px held that only for the folding screen (76 px) at the very centre with no gap
    anywhere, where nobody could stand nearer the hidden thing; ``REFERENT_WIDTH`` holds it for every screen, and no
    two of the people, surfaces and screen overlap or leave the picture in any layout."""
    surface = max(max(PLACE_SIZE[k][0] for k in lex.SURFACES), 2 * SLOT * (WIDTH - 100) + 30)
    side = surface + 66 + 78
    room = {kind: WIDTH - 2 * side - OCCLUDER_SIZE[kind][0] for kind in lex.OCCLUDERS}
    assert room == {"folding screen": 0, "big plant": -8, "tall cupboard": -8}, room
    assert min(reference.REFERENT_WIDTH - 2 * side - OCCLUDER_SIZE[kind][0] for kind in lex.OCCLUDERS) > 200
    for _, storyturn, builder in _referent_items():
        scene = builder.scenes[storyturn.turns[0].image]  # type: ignore[attr-defined]
        boxes = sorted((e["bbox"][0], e["bbox"][2]) for key in ("agents", "places", "occluders") for e in scene[key])
        assert boxes[0][0] >= 0 and max(b[1] for b in boxes) <= scene["width"] == reference.REFERENT_WIDTH, boxes
        assert all(left[1] <= right[0] for left, right in zip(boxes, boxes[1:], strict=False)), boxes
