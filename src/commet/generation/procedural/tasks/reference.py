"""Perception and reference: what a speaker can see decides what her words mean.

* reference_easy: "I want that one" with two identical things, one hidden from the speaker;
* reference_hard_referent: "the one next to the cup" names different things for the speaker and
  the listener when each sees a different cup (test), the same thing when both see the same cup
  (control: the listener brings the right one);
* reference_hard_perspective: three sizes; "the big one" is the biggest one the speaker knows of,
  and the listener gives the biggest one he knows of. The test item hides the asked-for size from
  the listener; one control hides it from the speaker, another hides the size not asked for from
  the listener (nobody is kept from the asked-for one), so that every picture has the same screen
  and the same layout, and which size each question's answer has is balanced (a third each);
* interpretation: does a clue pick out one thing of a row? Every clue word is said equally often
  whether it fits one thing or two ("a blue duck with a red bow", "a green duck without a bow"), so
  counting words does not tell; what each thing is does.

What each person can see is read off the world (and re-derived from the picture by the tests),
and the rubrics say it in those terms.
"""

from __future__ import annotations

from collections.abc import Callable

from commet.generation.procedural import lexicon as lex
from commet.generation.procedural.builder import Cast, StoryBuilder, an, cap, join_and, right_wrong
from commet.generation.procedural.tasks.common import fill, room
from commet.generation.procedural.world import WIDTH, Agent, Occluder, Place, Thing, World

WANTS_FOR = ("for show-and-tell", "to take home", "for a game", "for {det} tea party", "to show {det} friend",
             "for the puppet show", "to take to bed", "for the photo", "for the race", "for the picnic")


def _mirrored_room(b: StoryBuilder, with_layout: bool = False) -> tuple[Cast, World, Callable[[float], float], int]:
    """A cast, a room, the map of positions in it and the layout (0 or 1, with ``with_layout``): the room is
    mirrored in half of each cell, so that the speaker (and what only the speaker sees) stands on the left as often
    as on the right. Mirror and layout are recorded nuisance coins drawn jointly after the cell, so that their every
    combination (which decides whether the answer stands left or right) is balanced within it too."""
    cast = Cast(b)
    w = World(room(b))
    flip, layout = b.flips("room mirrored", "layout") if with_layout else (b.flip("room mirrored"), False)
    return cast, w, (lambda v: 1 - v) if flip else (lambda v: v), int(layout)


def _sight(w: World, agent: Agent, things: list[Thing], say: Callable[[Thing], str]) -> str:
    """What the agent can and cannot see of ``things``, as the world has it: "Mia can see the one on the
    table and cannot see the one on the shelf"."""
    seen = [say(t) for t in things if w.can_see(agent.id, t.id)]
    unseen = [say(t) for t in things if not w.can_see(agent.id, t.id)]
    parts = ([f"can see {join_and(seen)}"] if seen else []) + ([f"cannot see {join_and(unseen)}"] if unseen else [])
    return f"{agent.name} " + " and ".join(parts)


# --- reference, easy --------------------------------------------------------------------------

TWO_SAME = (
    "{s.name} and {l.name} are in the {room}. There are two {ks} that look just the same: one on the {x} and one "
    "on the {y}.",
    "In the {room}, {s.name} and {l.name} look at two {ks} that look exactly alike, one on the {x}, one on the {y}.",
    "{s.name} is in the {room} with {l.name}. Two {ks}, the same in every way, sit one on the {x} and one on the {y}.",
    "There are two {ks} in the {room}, just alike: one is on the {x}, the other on the {y}. {s.name} and {l.name} "
    "are there too.",
    "{l.name} and {s.name} are in the {room}, where one {k} sits on the {x} and another just like it on the {y}.",
)
#: What one person can see and cannot see. The text tells it for both people, in one frame: the listener
#: sees the other one, so each surface is once seen and once hidden, with the same words around it; only
#: whose view it is (the speaker's, named in the next sentence) tells which one she means.
SEES: tuple[str, ...] = (
    "{who} can see the {yes} but not the {no}",
    "{who} sees the {yes}, not the {no}",
    "{who} has a view of the {yes} and none of the {no}",
    "from where {who} stands, the {yes} is in view and the {no} is hidden",
    "{who}'s eyes reach the {yes} but not the {no}",
    "for {who}, the {yes} is in sight and the {no} is out of sight",
)
#: The same, the hidden surface named first (which surface follows a name is a balanced nuisance choice).
SEES_HIDDEN_FIRST: tuple[str, ...] = (
    "{who} cannot see the {no}, only the {yes}",
    "{who} does not see the {no}, but sees the {yes}",
    "{who} has no view of the {no} and a clear one of the {yes}",
    "from where {who} stands, the {no} is hidden and the {yes} is in view",
    "{who}'s eyes do not reach the {no}, only the {yes}",
    "for {who}, the {no} is out of sight and the {yes} is in sight",
)
POINTS = (
    "{s.name} wants one {for_}, points and says, 'I want that one!'",
    "{s.name} needs one {for_}. {s.Sub} points and says, 'Can I have that one?'",
    "'That one, please!' says {s.name}, pointing; {s.sub} wants one {for_}.",
    "{s.name} would like one {for_}, so {s.sub} points and says, 'That one!'",
    "Wanting one {for_}, {s.name} points and says, 'Please give me that one.'",
)
MEAN = ("Which {k} does {s.name} mean", "Which {k} does {s.name} want", "Which one is {s.name} asking for")
KNOW = ("How do you know?", "How can you tell?", "What tells you that?")


#: Where the speaker, the listener, the screen and the surface seen and the one hidden (from the speaker)
#: stand: the speaker at one end, nearer to what she sees; or nearer to the screen, nearer to what is hidden.
#: The listener is on the far side of the screen in both, and sees only the other one. The second layout is the
#: first with the roles swapped (speaker and listener, the surface seen and the one hidden) and mirrored, so that
#: with the room's mirror (a coin drawn with the layout's) the surface seen stands at exactly the spots the hidden
#: one stands at, each as often: its place, its side and its distance from the picture's centre tell nothing.
EASY_LAYOUTS: tuple[dict[str, float], ...] = (
    {"speaker": 0.06, "seen": 0.275, "screen": 0.475, "listener": 0.615, "hidden": 0.97},
    {"seen": 0.03, "speaker": 0.385, "screen": 0.525, "hidden": 0.725, "listener": 0.94},
)


def swapped_roles(layout: dict[str, float], *pairs: tuple[str, str]) -> dict[str, float]:
    """A layout with the roles of each pair swapped and the picture mirrored (x -> 1 - x): a layout table is fair
    to its key when it holds this of each of its layouts (what the tests check)."""
    swap = {a: b for pair in pairs for a, b in (pair, pair[::-1])}
    return {swap.get(role, role): round(1 - x, 6) for role, x in layout.items()}


def reference_easy(b: StoryBuilder, image_dependent: bool) -> None:
    b.role(True, "")
    surfaces = list(lex.SURFACES)[:: 1 if b.cell("near surface", 2) else -1]  # which one the speaker sees
    cast, w, x, layout_index = _mirrored_room(b, with_layout=True)
    # the thing the speaker sees is the nearer one in half the layouts, the farther one in the other half
    spots = EASY_LAYOUTS[layout_index]
    # two children: a grown-up's title ("Grandma") beside the view it names would tell the two views apart
    speaker, listener = cast.child(x(spots["speaker"])), cast.child(x(spots["listener"]))
    kind = b.pick("toy", lex.TOYS)
    colour = b.pick("colour: the toys", kind.colours)
    # the surfaces (and the things on them) are drawn, listed and named place1, place2 in a balanced order, so that
    # neither the scene's order nor its ids tell which one the speaker sees
    laid = [(surfaces[0], x(spots["seen"])), (surfaces[1], x(spots["hidden"]))]
    if not b.flip("drawn first: the surface the speaker sees"):
        laid.reverse()
    places = [Place(f"place{k + 1}", surface, "brown", at, name=f"the {surface}") for k, (surface, at) in enumerate(laid)]
    occ = Occluder("occluder", b.pick("screen", lex.OCCLUDERS), x(spots["screen"]))
    things = [Thing(f"thing{k + 1}", kind, colour, place.id) for k, place in enumerate(places)]
    w.add_all(speaker, listener, *places, occ, *things)
    meant = next(t for t in things if w.can_see(speaker.id, t.id))
    hidden = next(t for t in things if t.id != meant.id)
    seen_kind, hidden_kind = w.places[meant.location].kind, w.places[hidden.location].kind
    told = b.arrange("told", [seen_kind, hidden_kind])
    slots = {"s": speaker, "l": listener, "room": w.room, "k": kind.noun, "ks": kind.plural, "occ": occ.kind,
             "seen": seen_kind, "hidden": hidden_kind, "for_": fill(b.pick("wants for", WANTS_FOR), speaker)}
    text = [b.frame("two same", TWO_SAME).format(x=told[0], y=told[1], **slots)]
    if not image_dependent:
        sees = b.frame("sees", SEES_HIDDEN_FIRST if b.flip("views: the hidden surface named first") else SEES)
        first, second = b.arrange("views", [sees.format(who=speaker.name, yes=seen_kind, no=hidden_kind),
                                            sees.format(who=listener.name, yes=hidden_kind, no=seen_kind)])
        text.append(f"{cap(an(occ.kind))} stands between the two {kind.plural}. {cap(first)}; {second}.")
    text.append(b.frame("points", POINTS).format(**slots))
    where = {p.id: f"the one on {p.name}" for p in places}
    b.choose("meaning", b.wording(MEAN).format(**slots), list(where.values()), where[meant.location],
             story=" ".join(text), image=b.picture(w))
    sight = _sight(w, speaker, things, lambda t: f"the {kind.noun} on {w.places[t.location].name}")
    b.why("how know", b.wording(KNOW),
          f"Because {sight}: the {occ.kind} is in the way. So 'that one' is the one {speaker.sub} can see.",
          f"{sight}, so 'that one' must be the one {speaker.sub} can see.",
          [f"{speaker.name} means the one {speaker.sub} cannot see", f"{listener.name} decides which one"])
    b.facts.update(log=w.record(), thing=kind.noun, speaker_sees=w.visible_things(speaker.id), meant=meant.id)


# --- reference, hard: mistaken referent -------------------------------------------------------

LANDMARKS = (
    "{s.name} and {l.name} are in the {room}. There are two {ks}, a {c1} one on the {x} and a {c2} one on the {y}, "
    "and next to each of them stands {an_m} that looks just the same.",
    "In the {room} there are two {ks}: a {c1} one on the {x} and a {c2} one on the {y}. Beside each one is {an_m}, "
    "and the two {ms} look alike. {s.name} and {l.name} are there.",
    "{s.name} and {l.name} are in the {room}, where a {c1} {k} sits on the {x} and a {c2} {k} on the {y}, each next "
    "to {an_m}; the two {ms} are the same.",
    "On the {x} there is a {c1} {k}, and on the {y} a {c2} {k}; next to each stands {an_m}, and the {ms} look "
    "just alike. {s.name} and {l.name} are in the {room}.",
    "There are two {ks} in the {room}, a {c1} one on the {x} and a {c2} one on the {y}, and beside each is {an_m} "
    "of the same kind. {l.name} and {s.name} are in the room as well.",
)
LANDMARKS_PICTURE = (
    "{s.name} and {l.name} are in the {room}. There are two {ks}, one on the {x} and one on the {y}, and next to "
    "each of them stands {an_m} that looks just the same.",
    "In the {room} there are two {ks}, one on the {x} and one on the {y}. Beside each one is {an_m}, and the two "
    "{ms} look alike. {s.name} and {l.name} are there.",
    "{s.name} and {l.name} are in the {room}, where one {k} sits on the {x} and another on the {y}, each next to "
    "{an_m}; the two {ms} are the same.",
    "On the {x} there is a {k}, and on the {y} another; next to each stands {an_m}, and the {ms} look just alike. "
    "{s.name} and {l.name} are in the {room}.",
    "There are two {ks} in the {room}, one on the {x} and one on the {y}, and beside each is {an_m} of the same "
    "kind. {l.name} and {s.name} are in the room as well.",
)
#: What each person can see, naming for each the side seen and the side hidden (so that both surfaces are named
#: as often whether the two see different sides or the same one).
VIEWS = (
    "From where {s.name} stands, only the {sv} can be seen, not the {sh}; from where {l.name} stands, only the "
    "{lv}, not the {lh}.",
    "The {occ} is in the way: {s.name} can see the {sv} but not the {sh}, and {l.name} can see the {lv} but not "
    "the {lh}.",
    "Because of the {occ}, {s.name} sees the {sv} and not the {sh}, and {l.name} sees the {lv} and not the {lh}.",
    "{s.name} has a view of the {sv}, none of the {sh}; {l.name} has a view of the {lv}, none of the {lh}.",
    "With the {occ} where it is, the {sv} is in view for {s.name} and the {sh} is not; for {l.name}, the {lv} is "
    "in view and the {lh} is not.",
)
ASKS = (
    "{s.name} wants a {k} {for_} and calls out, 'Please bring me the {k} next to the {m}!'",
    "{s.name} needs a {k} {for_}. {s.Sub} says to {l.name}, 'Can you get me the {k} next to the {m}?'",
    "'The {k} next to the {m}, please!' calls {s.name}, who wants one {for_}.",
    "{s.name} would like a {k} {for_} and asks {l.name}, 'Bring me the one next to the {m}, please.'",
    "Wanting a {k} {for_}, {s.name} calls, 'The {k} beside the {m}, please!'",
)
BRINGS = ("{l.name} brings {s.name} the {g} {k}.", "{l.name} comes back with the {g} {k} for {s.name}.",
          "{l.name} hands {s.name} the {g} {k}.", "{l.name} fetches the {g} {k} and gives it to {s.name}.",
          "Soon {l.name} gives {s.name} the {g} {k}.")
WILL_BRING = ("Which {k} will {l.name} bring {s.name}", "Which {k} will {l.name} fetch for {s.name}",
              "Which one will {l.name} give {s.name}")
WHY_BRING = ("Why will {l.name} bring that one?", "Why does {l.name} pick that one?",
             "What makes {l.name} bring that one?")
REALLY_WANTED = ("Which {k} did {s.name} really want", "Which one did {s.name} mean",
                 "Which {k} was {s.name} asking for")
HOW_KNEW = ("How did you know?", "How can you tell?", "What tells you that?")


def _px_to_x(pixels: float) -> float:
    """The world x drawn at ``pixels`` (the inverse of the renderer's map, which is the same for every width)."""
    return (pixels - 50) / (WIDTH - 100)


#: The referent item's picture is wider than the others (1040 px against 640): one screen, one surface on each side of
#: it, and room on **each** side for the surface and both people. In the control both people stand on one side (both
#: see one landmark); for a reader of the picture's layout (the screen's spot joined with each option's place) to
#: learn nothing, both people must stand on the left of the very same screen as often as on its right, so each side
#: must hold a surface and a child and a grown-up: in 640 px only the folding screen at the very centre left room, and
#: there nobody could stand nearer the hidden thing (docs/procedural.md, the referent's layout).
REFERENT_WIDTH = 1040
#: The furniture (pixel centres), the same in every cell: the left surface at the end, the screen, the right surface
#: just beyond it; people stand on the left between the surface and the screen (``inner`` by the screen, ``outer``
#: one step away) or on the right beyond the surface (``beyond``, then ``end``). Every spot where someone stands is in
#: the picture's right half (in the left half when mirrored), so which half a person is in tells nothing about the
#: side they see, and from each spot the thing on the right surface is nearer than the thing on the left one.
_REFERENT_PX = {"left": 69.0, "screen": 690.0, "right": 805.0, "inner": 605.0, "outer": 523.0, "beyond": 917.0,
                "end": 999.0}
_R = {role: _px_to_x(pixels) for role, pixels in _REFERENT_PX.items()}
#: Layouts of the referent item, indexed by two coins: which surface the speaker sees (the left one in layouts 0 and
#: 2) and who stands nearer the screen (layouts 2 and 3). ``near`` is the surface the speaker sees. The test item (each
#: sees one side) stands one person on each side: at the spots nearer the screen, or at the ones farther from it
#: (the second coin). The control (both see one side) stands both on the speaker's side, in either order. So the
#: screen, the surfaces and each spot where a person stands are the same in both cells; which surface holds the
#: answer is a coin; and each person stands on the right surface's side in half the layouts of each cell, where the
#: answer's thing is nearer to them, and on the left surface's side in the other half, where it is not.
REFERENT_LAYOUTS: dict[bool, tuple[dict[str, float], ...]] = {
    True: ({"near": _R["left"], "speaker": _R["inner"], "screen": _R["screen"], "far": _R["right"],
            "listener": _R["beyond"]},
           {"far": _R["left"], "listener": _R["inner"], "screen": _R["screen"], "near": _R["right"],
            "speaker": _R["beyond"]},
           {"near": _R["left"], "speaker": _R["outer"], "screen": _R["screen"], "far": _R["right"],
            "listener": _R["end"]},
           {"far": _R["left"], "listener": _R["outer"], "screen": _R["screen"], "near": _R["right"],
            "speaker": _R["end"]}),
    False: ({"near": _R["left"], "speaker": _R["inner"], "listener": _R["outer"], "screen": _R["screen"],
             "far": _R["right"]},
            {"far": _R["left"], "screen": _R["screen"], "near": _R["right"], "speaker": _R["beyond"],
             "listener": _R["end"]},
            {"near": _R["left"], "speaker": _R["outer"], "listener": _R["inner"], "screen": _R["screen"],
             "far": _R["right"]},
            {"far": _R["left"], "screen": _R["screen"], "near": _R["right"], "speaker": _R["end"],
             "listener": _R["beyond"]}),
}


def reference_hard_referent(b: StoryBuilder, image_dependent: bool) -> None:
    """'The X next to the Y' picks out the thing next to the Y the speaker can see; the listener takes it for
    the thing next to the Y he can see. Test: each sees a different Y (mistaken referent); control: both see
    the same one (the listener brings the right thing). Nothing is moved."""
    test = b.role(b.cell("different views", 2) == 1, "both see the same landmark: the listener understands")
    cast = Cast(b)
    w = World(room(b), width=REFERENT_WIDTH)
    flip, speaker_right, inward, swapped = b.flips("room mirrored", "layout", "layout: the things' side",
                                                   "layout: who stands nearer the screen")
    span = (REFERENT_WIDTH - 100) / (WIDTH - 100)  # the world x of the picture's right edge, less the margin
    x: Callable[[float], float] = (lambda v: span - v) if flip else (lambda v: v)
    spots = REFERENT_LAYOUTS[test][int(speaker_right) + 2 * int(swapped)]
    layout = (spots["speaker"], spots["listener"], spots["near"], spots["far"], spots["screen"])
    speaker, listener = cast.child(x(layout[0])), cast.adult(x(layout[1]))
    kind, mark_kind = b.sample("toys", [k for k in lex.TOYS if k.shape != "teddy"], 2)
    colours = b.sample("colours: the toys", kind.colours, 2)
    mark_colour = b.pick("colour: the landmarks", [c for c in mark_kind.colours if c not in colours])
    surfaces = b.sample("surfaces", lex.SURFACES, 2)
    # the surfaces (and the things on them) are drawn, listed and numbered in a balanced order, so that neither the
    # scene's order nor its ids tell which is which
    first_near = b.flip("drawn first: the surface the speaker sees")
    ids = ("place1", "place2") if first_near else ("place2", "place1")
    near = Place(ids[0], surfaces[0], "brown", x(layout[2]), name=f"the {surfaces[0]}")
    far = Place(ids[1], surfaces[1], "brown", x(layout[3]), name=f"the {surfaces[1]}")
    occ = Occluder("occluder", b.pick("screen", lex.OCCLUDERS), x(layout[4]))
    toy_ids, mark_ids = ("toy1", "toy2") if first_near else ("toy2", "toy1"), \
        ("mark1", "mark2") if first_near else ("mark2", "mark1")
    mine, theirs = Thing(toy_ids[0], kind, colours[0], near.id), Thing(toy_ids[1], kind, colours[1], far.id)
    mark1, mark2 = Thing(mark_ids[0], mark_kind, mark_colour, near.id), Thing(mark_ids[1], mark_kind, mark_colour, far.id)
    # on each surface the thing stands beside its landmark (things stand left to right as put down): both toward the
    # screen or both away from it (a coin, the same in every cell), so the answer's thing and the other one stand at
    # the same spots as often in each cell
    toy_right = {place.id: (place.x < occ.x) == inward for place in (near, far)}
    near_items = (mark1, mine) if toy_right[near.id] else (mine, mark1)
    far_items = (mark2, theirs) if toy_right[far.id] else (theirs, mark2)
    first, second = (near_items, far_items) if first_near else (far_items, near_items)
    for item in (speaker, listener, *((near, far) if first_near else (far, near)), occ, *first, *second):
        w.add(item)

    def next_to_mark(agent: Agent) -> Thing:
        seen = w.visible_things(agent.id)
        return next(w.things[t] for t in seen if w.things[t].kind == kind
                    and any(w.things[m].kind == mark_kind and w.things[m].location == w.things[t].location
                            for m in seen))

    meant, given = next_to_mark(speaker), next_to_mark(listener)
    view = {a.id: w.places[next_to_mark(a).location].kind for a in (speaker, listener)}
    other_surface = {near.kind: far.kind, far.kind: near.kind}
    told = b.arrange("told", [mine, theirs])
    slots = {"s": speaker, "l": listener, "room": w.room, "k": kind.noun, "ks": kind.plural, "m": mark_kind.noun,
             "ms": mark_kind.plural, "an_m": an(mark_kind.noun), "occ": occ.kind, "g": given.colour,
             "sv": view[speaker.id], "lv": view[listener.id], "for_": fill(b.pick("wants for", WANTS_FOR), speaker),
             "sh": other_surface[view[speaker.id]], "lh": other_surface[view[listener.id]],
             "x": w.places[told[0].location].kind, "y": w.places[told[1].location].kind,
             "c1": told[0].colour, "c2": told[1].colour}
    text = [b.frame("landmarks", LANDMARKS_PICTURE if image_dependent else LANDMARKS).format(**slots)]
    if not image_dependent:
        text.append(b.frame("views", VIEWS).format(**slots))
    text.append(b.frame("asks", ASKS).format(**slots))
    names = [f"the {colour} one" for colour in colours]
    b.choose("listener gives", b.wording(WILL_BRING).format(**slots), names, f"the {given.colour} one",
             story=" ".join(text), image=b.picture(w))
    seen_mark = f"the {mark_kind.noun} on the {view[listener.id]}"
    b.why("why gives", b.wording(WHY_BRING).format(**slots),
          f"Because the only {mark_kind.noun} {listener.name} can see is next to the {given.colour} {kind.noun}.",
          f"{listener.name} can see only {seen_mark}, and it stands next to the {given.colour} {kind.noun}, so "
          f"{listener.sub} thinks that is the one meant.",
          [f"{listener.name} brings the wrong one on purpose" if test else
           f"{listener.name} brings the other {kind.noun}",
           f"{listener.name} can see both {mark_kind.plural}"])
    b.choose("speaker wants", b.wording(REALLY_WANTED).format(**slots), names, f"the {meant.colour} one",
             story=b.frame("brings", BRINGS).format(**slots),
             feedback=right_wrong(f"Yes, {listener.name} brings the {given.colour} one.",
                                  f"Not quite: {listener.name} brings the {given.colour} one."))
    b.why("how knew", b.wording(HOW_KNEW),
          f"Because {speaker.name} can see only the {mark_kind.noun} on the {view[speaker.id]}, which is next to the "
          f"{meant.colour} {kind.noun}.",
          f"{speaker.name} can see only the {mark_kind.noun} on the {view[speaker.id]}, so {speaker.sub} meant the "
          f"{kind.noun} next to it, the {meant.colour} one.",
          [f"{speaker.name} wanted the {theirs.colour if meant is mine else mine.colour} one",
           f"{speaker.name} can see both {mark_kind.plural}"],
          feedback=right_wrong(f"That's right, {speaker.name} wanted the {meant.colour} one.",
                               f"Actually, {speaker.name} wanted the {meant.colour} one."))
    b.facts.update(log=w.record(), thing=kind.noun, landmark=mark_kind.noun, meant=meant.id, given=given.id)


# --- reference, hard: size and perspective ---------------------------------------------------

#: The opening names both people, in an order drawn without the cell (``opening: named first``), before the sentence
#: that says who sets the things out (which is the cell): so the first-named person tells nothing about the cell.
OPENING = (
    "{n1.name} and {n2.name} are going to play with some {ks} today.",
    "Today {n1.name} and {n2.name} have a game to play with some {ks}.",
    "This is a story about {n1.name}, {n2.name} and some {ks}.",
    "{n1.name} and {n2.name} will need some {ks} today.",
    "It is a busy day for {n1.name} and {n2.name}, and there are {ks} to play with.",
)
SET_OUT = (
    "{x.name} puts out three {ks}: a big one, a middle-sized one and a small one.",
    "{x.name} sets three {ks} out on the tables, a big one, a middle-sized one and a small one.",
    "{x.name} lays out three {ks} of different sizes: big, middle-sized and small.",
    "Three {ks}, a big one, a middle-sized one and a small one, are put out on the tables by {x.name}.",
    "{x.name} arranges three {ks} on two tables: one big, one middle-sized and one small.",
)
COLOURS_ARE = (
    "The {z1} one is {c1}, the {z2} one is {c2} and the {z3} one is {c3}.",
    "The {z1} one is {c1}; the {z2} one, {c2}; the {z3} one, {c3}.",
    "Their colours: {c1} for the {z1} one, {c2} for the {z2} one and {c3} for the {z3} one.",
    "The {z1} {k} is {c1}, the {z2} {k} is {c2}, and the {z3} {k} is {c3}.",
    "In colour, the {z1} one is {c1}, the {z2} one {c2}, the {z3} one {c3}.",
)
COMES_IN = ("Then {y.name} comes in.", "Then {y.name} walks in.", "A moment later {y.name} comes into the room.",
            "Now {y.name} arrives.", "After that, {y.name} comes in too.")
#: Who sees what once the one who came in stands still; each names both people once, so that neither slot is
#: named more often than the other in any cell.
HIDES = (
    "From where {z.name} stands, the {occ} hides the {hid} one; {x.name} put it there.",
    "The {occ} is between {z.name} and the {hid} one, which {x.name} put behind it.",
    "{z.name} cannot see the {hid} one: it is behind the {occ}, where {x.name} put it.",
    "The {hid} one is out of {z.name}'s sight, behind the {occ}; {x.name} knows it is there.",
    "Where {z.name} stands, the {occ} blocks the view of the {hid} one, which {x.name} set down there.",
)
ASK_SIZE = (
    "{c.name} wants the {r} one {for_} and says to {h.name}, 'Please give me the {r} {k}!'",
    "{c.name} needs the {r} one {for_}. 'Can I have the {r} {k}?' {c.sub} asks {h.name}.",
    "'The {r} {k}, please!' says {c.name} to {h.name}; {c.sub} wants it {for_}.",
    "{c.name} asks {h.name} for the {r} {k}, which {c.sub} wants {for_}.",
    "Wanting the {r} one {for_}, {c.name} says, '{h.name}, please give me the {r} {k}.'",
)
WILL_GIVE = ("Which {k} will {h.name} give {c.name}", "Which one will {h.name} hand to {c.name}",
             "Which {k} does {h.name} give {c.name}")
WHY_GIVE = ("Why will {h.name} give that one?", "Why does {h.name} pick that one?",
            "What makes {h.name} give that one?")
WANTED = ("Which {k} did {c.name} want", "Which one did {c.name} mean", "Which {k} was {c.name} asking for")
SIZE_WORD = {1: "small", 2: "middle-sized", 3: "big"}
CELLS = ("listener blocked", "speaker blocked", "nobody blocked")


def reference_hard_perspective(b: StoryBuilder, image_dependent: bool) -> None:
    """The paper's Figure 2: three sizes; one end size (the biggest or the smallest) stands alone on the far
    table, behind a screen from where the one who comes in stands. Test: the listener comes in and the one
    behind the screen is the one asked for (he gives the biggest he knows of); controls: the speaker comes in
    (and means another one), or the listener comes in and the one behind the screen is the size not asked for
    (nobody is kept from the asked-for one: both mean and give it). The three cells are balanced, and so is the
    size asked for.

    Every picture is the same layout (the same screen at the same spot, an end size alone behind it, the
    middle-sized one and the other end size on the near table), and whatever it shows is independent of the
    answer by construction: turn by turn, over the three cells, the answer is the one behind the screen once
    (the one the speaker means in the test, the one the listener gives in the speaker's control), the
    middle-sized one once (the other turn of those two cells) and the end size on the near table once (the
    asked-for one in the control with the other size hidden). The cell changes no coin and nothing drawn, so a
    reader of the picture, however many of its cues it combines (screen, table, size, spot), reads a third."""
    cell = CELLS[b.cell("cell", 3)]
    cast = Cast(b)
    w = World(room(b))
    # the mirror, the size asked for, which of the two on the near table stands nearer the people and which person
    # stands nearer them: drawn jointly in the cell, so that each of the sixteen layouts a cell can draw (the same
    # sixteen in every cell) is drawn equally often in each, and in each the answer is each of the three a third
    mirrored, big, bigger_inside, setter_inside = b.flips("room mirrored", "asks big",
                                                          "near table: the bigger one nearer the people",
                                                          "setter inside")
    x: Callable[[float], float] = (lambda v: 1 - v) if mirrored else (lambda v: v)
    b.role(cell == CELLS[0], cell.replace("blocked", "blocked from the asked-for size"))
    child, helper = cast.child(x(0.5)), cast.adult(x(0.5))
    setter, arriver = (helper, child) if cell == CELLS[1] else (child, helper)
    kind = b.pick("toy", [k for k in lex.TOYS if k.shape != "book"])
    colours = b.sample("colours: the toys", kind.colours, 3)
    far, near = (Place("table1", "table", "brown", x(0.07), name="the first table"),
                 Place("table2", "table", "brown", x(0.51), name="the second table"))
    setter.x = x(0.3)  # between the tables while setting out: sees each thing put down
    arriver.present = False  # comes in after the things are set out
    for item in (setter, arriver, far, near):
        w.add(item)
    asked = 3 if big else 1
    # the far table holds one end size alone, behind the screen: the asked-for one, or (where nobody is kept from
    # it) the other end size, never the answer; so that every picture is the same layout in every cell
    alone = asked if cell != CELLS[2] else 4 - asked
    things = [Thing(f"thing{s}", kind, c, far.id if s == alone else near.id, size=s)
              for s, c in zip((3, 2, 1), colours, strict=True)]
    # the near table's two stand left to right as put down (before the mirror: the people stand to the right)
    pair = sorted((t for t in things if t.size != alone), key=lambda t: t.size, reverse=not bigger_inside)
    order = [*pair]
    order.insert(b.pick("things set out: the far one's turn", (0, 1, 2)), next(t for t in things if t.size == alone))
    for thing in order:
        w.add(thing)  # the setter, between the tables, sees each one put out
    # both end up on the near table's side, in either order, so that nobody stands nearest to what they see
    setter_spot, arriver_spot = (0.72, 0.88) if setter_inside else (0.88, 0.72)
    w.walk(setter.id, x(setter_spot))
    w.add(Occluder("occluder", b.pick("screen", lex.OCCLUDERS), x(0.29)))
    arriver.x = x(arriver_spot)
    w.enter(arriver.id)
    pick = max if big else min
    wanted = pick((w.things[t] for t in child.beliefs), key=lambda t: t.size)
    given = pick((w.things[t] for t in helper.beliefs), key=lambda t: t.size)
    r, extreme = ("big", "biggest") if big else ("small", "smallest")
    blocked = next(a for a in (child, helper) if len(a.beliefs) < 3)
    sizes = b.arrange("sizes", [3, 2, 1])
    by_size = {t.size: t for t in things}
    occ = w.occluders["occluder"].kind
    slots = {"x": setter, "y": arriver, "z": blocked, "c": child, "h": helper, "k": kind.noun, "ks": kind.plural,
             "r": r, "hid": SIZE_WORD[alone], "occ": occ, "for_": fill(b.pick("wants for", WANTS_FOR), child)}
    n1, n2 = b.shuffled("opening: named first", [child, helper])
    text = [b.frame("opening", OPENING).format(n1=n1, n2=n2, **slots), b.frame("set out", SET_OUT).format(**slots)]
    if not image_dependent:
        text.append(b.frame("colours", COLOURS_ARE).format(
            **{f"z{k + 1}": SIZE_WORD[s] for k, s in enumerate(sizes)},
            **{f"c{k + 1}": by_size[s].colour for k, s in enumerate(sizes)}, **slots))
    text.append(b.frame("comes in", COMES_IN).format(**slots))
    if not image_dependent:
        text.append(b.frame("hides", HIDES).format(**slots))
    text.append(b.frame("asks", ASK_SIZE).format(**slots))
    names = [f"the {t.colour} one" for t in things]
    b.choose("listener gives", b.wording(WILL_GIVE).format(**slots), names, f"the {given.colour} one",
             story=" ".join(text), image=b.picture(w))
    key = _knows(w, helper, things, setter, given, extreme, occ)
    b.why("why gives", b.wording(WHY_GIVE).format(**slots), f"Because {key}", key,
          [f"{helper.name} wants to keep the {r} one", f"{helper.name} gives {child.name} the wrong one on purpose"])
    b.choose("speaker wants", b.wording(WANTED).format(**slots), names, f"the {wanted.colour} one",
             feedback=right_wrong(f"Yes! {helper.name} gives {child.name} the {given.colour} one.",
                                  f"Look again: {helper.name} gives {child.name} the {given.colour} one."))
    key2 = _knows(w, child, things, setter, wanted, extreme, occ)
    other = next(t for t in things if t is not wanted and (t is given or given is wanted))
    b.why("how knew", b.wording(HOW_KNEW), f"Because {key2}", key2,
          [f"{child.name} wanted the {other.colour} one", f"{child.name} wants the {r} one of all three"
           if len(child.beliefs) < 3 else f"{child.name} does not know about the {wanted.colour} one"],
          feedback=right_wrong(f"That's right, {child.name} wanted the {wanted.colour} one.",
                               f"Actually, {child.name} wanted the {wanted.colour} one."))
    b.facts.update(log=w.record(), thing=kind.noun, helper_sees=w.visible_things(helper.id), wanted=wanted.id,
                   given=given.id, cell=cell, asked=r, child_knows=sorted(child.beliefs),
                   helper_knows=sorted(helper.beliefs), setter=setter.id)


def _knows(w: World, agent: Agent, things: list[Thing], setter: Agent, chosen: Thing, extreme: str, occ: str) -> str:
    """Why the agent means (or gives) ``chosen``: what the agent saw being put out, or can see now."""
    unseen = [t for t in things if t.id not in agent.beliefs]
    if agent is setter:
        return (f"{agent.name} put all three out, so {agent.sub} knows about all of them, and the {chosen.colour} one "
                f"is the {extreme} of all.")
    if not unseen:
        return (f"{agent.name} can see all three, and the {chosen.colour} one is the {extreme} of all.")
    seen = join_and([f"the {t.colour} one" for t in things if t.id in agent.beliefs])
    return (f"{agent.name} can see only {seen}; the {occ} hides the {unseen[0].colour} one from {agent.obj}, so the "
            f"{chosen.colour} one is the {extreme} {agent.sub} knows of.")


# --- interpretation ---------------------------------------------------------------------------

_FEATURE = {"sunglasses": ("wearing sunglasses", "wearing {c} sunglasses", "without sunglasses"),
            "bow": ("with a bow", "with a {c} bow", "without a bow"),
            "stripes": ("with stripes", "with {c} stripes", "without stripes"),
            "dots": ("with dots", "with {c} dots", "without dots")}
COLLECTS = ("{c.name} collects {ks}.", "{c.name} loves {ks}.", "{c.name} plays with {ks} every day.",
            "{c.name} has a row of {ks}.", "{c.name} keeps {ks} on a shelf.")
ROW = ("On the shelf, from left to right, there are {listed}.", "The shelf holds, from left to right, {listed}.",
       "From left to right, the shelf has {listed}.", "Left to right on the shelf: {listed}.",
       "In a row on the shelf sit {listed}, from left to right.")
ROW_PICTURE = ("Four {ks} sit in a row on the shelf.", "There are four {ks} in a row on the shelf.",
               "The shelf has four {ks} in a row.", "Four {ks} stand side by side on the shelf.",
               "On the shelf there is a row of four {ks}.")
ASKS_CLUE = (
    "{c.name} wants the {col} one {feat} {for_} and asks {h.name}, 'Please get me {clue}!'",
    "{c.name} needs the {col} one {feat} {for_}. {c.Sub} says to {h.name}, 'Can you get me {clue}?'",
    "'{Clue}, please!' says {c.name} to {h.name}; {c.sub} wants the {col} one {feat} {for_}.",
    "{c.name} would like the {col} one {feat} {for_} and tells {h.name}, 'I want {clue}.'",
    "Wanting the {col} one {feat} {for_}, {c.name} asks {h.name} for {clue}.",
)
TELL = ("Can {h.name} tell for sure which {k} {c.name} means?", "Does {h.name} know for sure which one {c.name} means?",
        "Can {h.name} be sure which {k} {c.name} wants?")
WHY_TELL = ("Why or why not?", "How do you know?", "What makes you say so?")
BETTER = ("Which clue tells {h.name} exactly which {k} {c.name} wants", "Which clue picks out the right {k}",
          "Which words would tell {h.name} exactly which one")
WHY_BETTER = ("Why is that the better clue?", "Why is that clue better?", "What makes that clue better?")


def interpretation(b: StoryBuilder, image_dependent: bool) -> None:
    """Is a description enough for the listener to find the wanted thing? A row of four: the wanted one has a
    colour and a feature; a second thing shares one of them (balanced which), so one clue fits one thing and the
    other fits two. Every row names the feature word and the wanted colour equally often in both cases.

    Every row is also the same census in both cases: three body colours, one of them on two things (one of the
    two with an accessory, one plain); three accessories of two kinds, one kind on two things; one plain thing.
    The other kind of accessory makes up the pair the wanted one is not in (two things of the other kind where
    the colour is shared, a colour pair of a thing with it and a plain one where it is not), so that counting
    colours or accessories without the clue (three colours against four read the key at 75 to 78 %) tells
    nothing."""
    cast = Cast(b)
    w = World(room(b))
    child, helper = cast.child(0.08), cast.adult(0.92)
    w.add(child)
    w.add(helper)
    b.role(True, "")
    kind = b.pick("toy", [k for k in lex.TOYS if k.shape in ("duck", "teddy", "ball")])
    features = ("sunglasses", "bow") if kind.shape != "ball" else ("stripes", "dots")
    feature = b.pick("feature", features)
    second = next(f for f in features if f != feature)
    c, c2, c3, c4 = b.sample("colours: the row", lex.THING_COLOURS, 4)
    colour_unique = b.cell("colour unique", 2) == 1
    says_colour = b.flip("says colour")
    # (colour, feature colour, or "" for 'without ...'); the wanted one is (c, feature)
    # (colour, the clue's accessory's colour, the other accessory's colour; "" for none): the wanted one is (c, c, "").
    # The wanted one's accessory is always its own colour, so the wanted colour is said three times in both
    # cases, and right after "with a" in both: only which things it belongs to (one duck or two) tells the
    # clues apart. Colour unique: the feature fits two (the wanted one and a thing whose accessory has the
    # wanted colour); else the colour fits two. Every thing is told with both accessories or without them, so
    # each accessory word is said four times either way.
    specs = [(c, c, ""), (c2, c, "") if colour_unique else (c, "", ""), (c3, "", c3),
             (c3, "", "") if colour_unique else (c4, "", c3)]
    specs = b.shuffled("order: the row", specs)
    w.add(Place("shelf", "shelf", "brown", 0.5, name="the shelf"))
    for k, (colour, accessory, other) in enumerate(specs):
        w.add(Thing(f"thing{k + 1}", kind, colour, "shelf", feature=feature if accessory else second if other else None,
                    feature_colour=accessory or other or None))
    row = sorted(w.things.values(), key=lambda t: w.thing_x(t.id))
    target = next(t for t in row if t.colour == c and t.feature == feature)
    plain, coloured, without = _FEATURE[feature]
    _, coloured_2, without_2 = _FEATURE[second]
    by_colour, by_feature = f"the {c} {kind.noun}", f"the {kind.noun} {plain}"
    fits = {by_colour: [t.id for t in row if t.colour == c], by_feature: [t.id for t in row if t.feature == feature]}
    better = next(clue for clue, ids in fits.items() if len(ids) == 1)
    clue = by_colour if says_colour else by_feature

    def describe(t: Thing) -> str:
        first = coloured.format(c=t.feature_colour) if t.feature == feature else without
        other = coloured_2.format(c=t.feature_colour) if t.feature == second else without_2
        return an(f"{t.colour} {kind.noun} {first} and {other}")

    slots = {"c": child, "h": helper, "k": kind.noun, "ks": kind.plural, "col": c, "feat": plain, "clue": clue,
             "Clue": cap(clue), "for_": fill(b.pick("wants for", WANTS_FOR), child)}
    text = [b.frame("collects", COLLECTS).format(**slots)]
    text.append(b.frame("row", ROW_PICTURE).format(**slots) if image_dependent else
                b.frame("row", ROW).format(listed=", ".join(describe(t) for t in row[:-1]) + " and " +
                                           describe(row[-1]), **slots))
    text.append(b.frame("asks", ASKS_CLUE).format(**slots))
    unique = len(fits[clue]) == 1
    b.yes_no("can tell", b.wording(TELL).format(**slots), unique, story=" ".join(text), image=b.picture(w))
    fitting = "only one" if unique else "two"
    b.why("why tell", b.wording(WHY_TELL),
          f"Because {fitting} {kind.noun if unique else kind.plural} on the shelf {'fits' if unique else 'fit'} "
          f"'{clue}'.",
          f"{cap(fitting)} {kind.noun if unique else kind.plural} on the shelf fit{'s' if unique else ''} '{clue}', so "
          f"the clue {'picks out one' if unique else 'does not pick out one'}.",
          ["every clue is equally good", f"{helper.name} can read {child.name}'s mind"],
          feedback=right_wrong("That's right.", "Look at the shelf again."))
    b.choose("better clue", b.wording(BETTER).format(**slots), [by_colour, by_feature], better, labelled=True)
    b.why("why better", b.wording(WHY_BETTER),
          f"Because only one {kind.noun} fits '{better}'.",
          f"'{better}' fits exactly one {kind.noun} on the shelf; the other clue fits two.",
          ["the longer clue is better", "both clues fit only one"],
          feedback=right_wrong("That's right.", f"Not quite: '{better}' is the better clue."))
    b.facts.update(log=w.record(), thing=kind.noun, row=[t.id for t in row], target=target.id,
                   clue_matches={clue_: len(ids) for clue_, ids in fits.items()}, said=clue)
