"""Belief tasks: false belief about a location (explicit and implicit), true belief from an announcement,
and false belief from an expectation (a familiar lunchbox holding something else today).

Every story has two children in slots: the one who is away while something changes (``p``) and
the one who stays and sees it (``q``). The test item puts the asked-about child in ``p``, its
control in ``q``, with the same words. Where a thing really is follows from a **swap** (two
things exchange places) that names no place, so "where is it really?" needs the story's
facts, not the last place a sentence names.

In half of each cell (the location and lunchbox stories) the swap is **undone**: both children see
the swap, then one is away while it is swapped back (the mirror false belief). So where a thing
really is (the reality control) and where the asked child thinks it is are each the owner's own
place half the time: neither is a fixed function of the story's surface.
"""

from __future__ import annotations

from commet.generation.procedural import lexicon as lex
from commet.generation.procedural.builder import Cast, StoryBuilder, an, cap, right_wrong
from commet.generation.procedural.tasks.common import (
    TIDY_REASONS,
    away_and_stays,
    fill,
    lead_order,
    leaving,
    missed,
    room,
    two_containers,
)
from commet.generation.procedural.world import Agent, Place, Thing, World

INTRO = (
    "{names} are in the {room}, where there are {boxes}.",
    "In the {room} there are {boxes}, and {names} are there too.",
    "{names} are playing in the {room}. There are {boxes} by the wall.",
    "There are {boxes} in the {room}. {names} are in there.",
    "{names} spend the afternoon in the {room}, which has {boxes}.",
)
PUTS = (
    "{c1.name} puts {c1.det} {t1} in {p1}, and {c2.name} puts {c2.det} {t2} in {p2}.",
    "{c1.name} drops {c1.det} {t1} into {p1}; {c2.name} puts {c2.det} {t2} into {p2}.",
    "{c1.name} puts {c1.det} {t1} away in {p1}, and {c2.name} keeps {c2.det} {t2} in {p2}.",
    "First {c1.name} puts {c1.det} {t1} in {p1}, then {c2.name} puts {c2.det} {t2} in {p2}.",
    "{c1.name} tucks {c1.det} {t1} into {p1} and {c2.name} tucks {c2.det} {t2} into {p2}.",
)
#: The swap, naming no child (who is away and who stays is told just before, see ``away_and_stays``).
SWAP = (
    "Then {m.name} swaps the {a} and the {b} round {why}, and the child who stayed sees it happen.",
    "{m.name} comes by {why} and puts the {a} where the {b} was and the {b} where the {a} was; the child who stayed "
    "watches.",
    "{m.name} uses the time to swap the two toys over {why}, in full view of the child who stayed.",
    "Then {m.name} mixes the two toys up {why}, so that each one ends up in the other's place; the child who stayed "
    "sees it all.",
    "{m.name} trades the places of the {a} and the {b} {why}, and the child who stayed watches.",
)
#: The swap both children see, in the stories where it is later undone.
SWAP_SEEN = (
    "Then {m.name} swaps the {a} and the {b} round {why}, and {n1.name} and {n2.name} both see it happen.",
    "{m.name} comes by {why} and puts the {a} where the {b} was and the {b} where the {a} was; {n1.name} and "
    "{n2.name} both watch.",
    "{m.name} uses the time to swap the two toys over {why}, in full view of both {n1.name} and {n2.name}.",
    "Then {m.name} mixes the two toys up {why}, so that each one ends up in the other's place; {n1.name} and "
    "{n2.name} both see it all.",
    "{m.name} trades the places of the {a} and the {b} {why}, and {n1.name} and {n2.name} both watch.",
)
#: Something the grown-up does that both children see, in the stories where the swap is not undone: it stands where
#: the undone stories tell the swap both see, naming the grown-up and both children as it does, so that the two kinds
#: of story have as many sentences and pronouns and name the people in the same order.
SEEN = (
    "Then {m.name} waters all the flowers, and {n1.name} and {n2.name} both see it happen.",
    "{m.name} comes by and opens the big window wide; {n1.name} and {n2.name} both watch.",
    "{m.name} sweeps up a few crumbs, in full view of both {n1.name} and {n2.name}.",
    "Then {m.name} hangs two pictures on the wall by the window; {n1.name} and {n2.name} both see it all.",
    "{m.name} folds up a blanket, and {n1.name} and {n2.name} both watch.",
)
#: The swap undone, naming no child (who is away and who stays is told just before, see ``away_and_stays``).
SWAP_BACK = (
    "{m.name} swaps the two toys back, and the child who stayed sees it happen.",
    "{m.name} comes by and puts each toy back again; the child who stayed watches.",
    "{m.name} swaps the two toys back, in full view of the child who stayed.",
    "Then {m.name} puts each of the toys back in its place; the child who stayed sees it all.",
    "{m.name} quickly undoes the swap, and the child who stayed watches.",
)
WANTS = (
    "Later, with everyone back in the room, {o.name} wants to play with {o.det} {t}.",
    "When they are all together again, {o.name} wants {o.det} {t}.",
    "A little later, everyone is back, and {o.name} needs {o.det} {t}.",
    "Soon everyone is back in the room, and {o.name} would like {o.det} {t} again.",
    "Later on, when they are all in the room again, {o.name} goes to get {o.det} {t}.",
)
CLOSED = (
    "{x} and {y} are both shut.",
    "The lids of {x} and {y} are closed, so nobody can see inside.",
    "Both {x} and {y} have their lids on.",
    "{x} and {y} stand side by side, closed.",
    "Nothing can be seen inside {x} or {y}.",
)
LOOK = ("Where will {o.name} look for {o.det} {t} first", "Where will {o.name} go first to find {o.det} {t}",
        "Where will {o.name} search first for {o.det} {t}")
WHY_LOOK = ("Why will {o.name} look there?", "Why does {o.name} look there first?", "What makes {o.name} look there?")
REALITY = ("Where is the {t} really", "Where is {o.name}'s {t} now", "Where is the {t} at this moment")
NEXT = ("What will {o.name} do next?", "What does {o.name} do now?", "What will {o.name} do to get {o.det} {t}?")
WHY_NEXT = ("Why will {o.name} do that?", "Why does {o.name} do that?", "What makes {o.name} do that?")
SWAPPED = "swap the two toys"
BACK = "swap them back"


def _fmt(template: str, **slots: object) -> str:
    return template.format(**slots)


class _Swapped:
    """The story both location tasks tell: two children put a toy each in a closed container; one child
    leaves; a grown-up (or an older child) swaps the two toys round; the other child sees it. In half of each
    cell (``back``) both children see the swap, then one leaves while the toys are swapped back."""

    def __init__(self, b: StoryBuilder) -> None:
        cast = Cast(b)
        self.b = b
        self.w = w = World(room(b))
        self.owner, self.other = cast.pair(0.1, 0.25)
        self.mover = cast.adult(0.88) if b.pick("mover: a grown-up", (True, False)) else cast.child(0.88)
        for agent in (self.owner, self.other, self.mover):
            w.add(agent)
        away_cell, self.back = b.crossed_cell("owner away", 2, "the swap is undone")
        self.test = b.role(away_cell == 1, "true belief: the owner stays and sees the last swap")
        b.seat("owner and other", [self.owner, self.other], (0.1, 0.25))
        self.first, self.second = two_containers(b, w, (0.45, 0.65))
        # the owner's container stands right or left, balanced within the crossed cell: with the swap undone in half
        # of it, where the toy really is goes with no side of the picture
        if b.flip("the owner's container stands right") != (self.first.x > self.second.x):
            self.first, self.second = self.second, self.first
        kinds = b.sample("toys", lex.TOYS, 2)
        self.thing = Thing("thing", kinds[0], b.pick("colour: the owner's toy", kinds[0].colours), "hands", owner=self.owner.id)
        self.theirs = Thing("theirs", kinds[1], b.pick("colour: the other toy", kinds[1].colours), "hands", owner=self.other.id)
        w.add(Place("hands", "offstage", "brown", -5.0, name="in hand"))
        w.add(self.thing)
        w.add(self.theirs)
        self.p, self.q = (self.owner, self.other) if self.test else (self.other, self.owner)
        _, away, to = leaving(b, self.p)  # "while she is away" tells the leaving: each slot is named once
        names = lead_order(b, (self.owner, self.other))  # who is named first, in every sentence naming both
        boxes = b.arrange("boxes", [self.first, self.second])
        # the containers' order is a choice of its own: tied to the lead, the owner's first mention would tell which
        # container is the owner's, and (every swap moving the toy) where it really is
        clauses = b.arrange("puts", [(self.owner, self.thing, self.first), (self.other, self.theirs, self.second)])
        (c1, t1, p1), (c2, t2, p2) = clauses
        named = b.arrange("swap order", [self.thing, self.theirs])
        closing = b.arrange("closing", [self.first, self.second])
        o, t = self.owner, self.thing.noun
        swap = {"m": self.mover, "a": named[0].noun, "b": named[1].noun, "why": b.pick("tidy reason", TIDY_REASONS)}
        away_sentence = away_and_stays(b, self.p, self.q, away, lead=names[0])
        if self.back:  # the swap both see, then one child away while it is undone
            events = [_fmt(b.frame("swap", SWAP_SEEN), n1=names[0], n2=names[1], **swap), away_sentence, _fmt(b.frame("seen or back", SWAP_BACK), **swap)]
        else:
            events = [_fmt(b.frame("seen or back", SEEN), n1=names[0], n2=names[1], **swap), away_sentence,
                      _fmt(b.frame("swap", SWAP), **swap)]
        text = [
            _fmt(b.frame("intro", INTRO), names=f"{names[0].name}, {names[1].name} and {self.mover.name}",
                 room=w.room, boxes=" and ".join(an(p.name.removeprefix("the ")) for p in boxes)),
            _fmt(b.frame("puts", PUTS), c1=c1, c2=c2, t1=t1.noun, t2=t2.noun, p1=p1.name, p2=p2.name),
            *events,
            _fmt(b.frame("wants", WANTS), o=o, t=t),
            cap(_fmt(b.frame("closed", CLOSED), x=closing[0].name, y=closing[1].name)),
        ]
        self.story = " ".join(text)
        w.put(self.owner.id, self.thing.id, self.first.id)
        w.put(self.other.id, self.theirs.id, self.second.id)
        w.walk(self.mover.id, 0.86)
        if self.back:
            self._swap((self.first, self.second), picture=False)
        w.leave(self.p.id, to)
        # the (last) swap, half done: the toy in the mover's hand, the away child not there
        self.during = self._swap((self.second, self.first) if self.back else (self.first, self.second))
        w.enter(self.p.id)

    def _swap(self, places: tuple[Place, Place], picture: bool = True) -> str:
        """The mover swaps the two toys: the owner's toy from ``places[0]`` to ``places[1]`` and the other one back;
        with ``picture``, the picture of the swap half done (the owner's toy in hand)."""
        w, b = self.w, self.b
        w.hold(self.mover.id, self.thing.id)
        w.put(self.mover.id, self.theirs.id, places[0].id, kind="move")
        image = b.picture(w) if picture else ""
        w.put(self.mover.id, self.thing.id, places[1].id, kind="move")
        return image

    def rubric(self) -> tuple[str, list[str]]:
        o, m, where, other = self.owner.name, self.mover.name, self.first.name, self.second.name
        t = f"{self.owner.det} {self.thing.noun}"
        unseen = bool(missed(self.w, self.owner, self.thing))  # read off the world: did the owner miss a move?
        if self.back:
            if unseen:
                return (f"{o} saw {m} {SWAPPED}, but {o} did not see {m} {BACK}, so {o} thinks {t} is still in "
                        f"{other}.",
                        [f"{o} saw {m} {BACK}", f"{o} knows {t} is back in {where}", f"{o} will look in {where}"])
            return (f"{o} saw {m} {SWAPPED}, and {o} saw {m} {BACK}, so {o} knows {t} is back in {where}.",
                    [f"{o} thinks {t} is still in {other}", f"{o} did not see the toys being swapped back"])
        if unseen:
            return (f"{o} did not see {m} {SWAPPED}, so {o} thinks {t} is still in {where}.",
                    [f"{o} knows the toys were swapped", f"{o} saw {m} {SWAPPED}", f"{o} will look in {other}"])
        return (f"{o} saw {m} {SWAPPED}, so {o} knows {t} is in {other} now.",
                [f"{o} thinks {t} is still in {where}", f"{o} did not see the toys being swapped"])

    def reason(self) -> str:
        o, m = self.owner, self.mover.name
        unseen = bool(missed(self.w, o, self.thing))
        if self.back:
            if unseen:
                return (f"Because {o.sub} saw {m} {SWAPPED}, but {o.sub} did not see {m} {BACK}, so {o.sub} thinks "
                        f"it is still in {self.second.name}.")
            return (f"Because {o.sub} saw {m} {SWAPPED}, and {o.sub} saw {m} {BACK}, so {o.sub} knows it is back in "
                    f"{self.first.name}.")
        if unseen:
            return (f"Because {o.sub} put it in {self.first.name} and did not see {m} {SWAPPED}, so "
                    f"{o.sub} thinks it is still there.")
        return f"Because {o.sub} saw {m} {SWAPPED}, so {o.sub} knows it is in {self.second.name} now."

    def facts(self) -> dict[str, object]:
        w = self.w
        return {"log": w.record(), "thing": self.thing.noun, "belief": w.belief(self.owner.id, self.thing.id),
                "reality": self.thing.location, "away": self.p.id, "saw": self.q.id}


def false_belief_location(b: StoryBuilder, image_dependent: bool) -> None:
    s = _Swapped(b)
    w, o, t = s.w, s.owner, s.thing.noun
    places = [f"in {s.first.name}", f"in {s.second.name}"]
    b.choose("look", b.wording(LOOK).format(o=o, t=t), places, f"in {w.place_name(w.belief(o.id, s.thing.id))}",
             story=s.story, image=s.during)
    key, false = s.rubric()
    b.why("why look", b.wording(WHY_LOOK).format(o=o), s.reason(), key, false)
    b.choose("reality", b.wording(REALITY).format(o=o, t=t), places, f"in {w.place_name(s.thing.location)}",
             image=b.picture(w))
    b.facts.update(s.facts())


def implicit_false_belief(b: StoryBuilder, image_dependent: bool) -> None:
    s = _Swapped(b)
    w, o, t = s.w, s.owner, s.thing.noun
    b.turn("next", b.wording(NEXT).format(o=o, t=t),
           f"look for {o.det} {t} in {w.place_name(w.belief(o.id, s.thing.id))}", story=s.story, image=s.during)
    key, false = s.rubric()
    b.why("why next", b.wording(WHY_NEXT).format(o=o), s.reason(), key, false)
    b.facts.update(s.facts())


# --- true belief from an announcement ----------------------------------------------------------

KEPT = (
    "In {tc.name}'s class, the {x1} are always kept in {p1} and the {x2} in {p2}.",
    "{tc.name}'s class always keeps its {x1} in {p1} and its {x2} in {p2}.",
    "Every child in {tc.name}'s class knows that the {x1} live in {p1} and the {x2} in {p2}.",
    "In {tc.name}'s classroom, {p1} holds the {x1} and {p2} holds the {x2}.",
    "The {x1} of {tc.name}'s class are kept in {p1}, and the {x2} in {p2}.",
)
BREAK = (
    "At break time, while {c1.name}, {c2.name} and the other children are outside, {tc.name} swaps the {a} and the "
    "{b} round {why}.",
    "During break, with {c1.name}, {c2.name} and the rest of the class out in the playground, {tc.name} puts the "
    "{a} and the {b} each in the other's place {why}.",
    "While {c1.name}, {c2.name} and their classmates are out at break, {tc.name} mixes the two lots up {why}, so "
    "that each ends up in the other's place.",
    "At break, when {c1.name}, {c2.name} and everyone else have gone out, {tc.name} trades the places of the {a} "
    "and the {b} {why}.",
    "Over break, with {c1.name}, {c2.name} and the others outside, {tc.name} takes out the {a} and the {b} {why} "
    "and puts each lot back where the other was.",
)
ANNOUNCE = (
    "When {p.name} comes back in, {tc.name} tells {p.obj}, 'I have swapped the {a} and the {b} round!' {q.name} is "
    "still out at the water fountain and does not hear it.",
    "{tc.name} tells {p.name}, the first one back, 'The {a} and the {b} have swapped places with each other.' "
    "{q.name}, still out in the playground, does not hear it.",
    "As soon as {p.name} comes back, {tc.name} says to {p.obj}, 'Look, the {a} are where the {b} used to be, and "
    "the other way round.' {q.name} is still outside and misses it.",
    "{p.name} comes in first and hears {tc.name} say, 'I have put the {a} and the {b} in each other's places.' "
    "{q.name} is still tying {q.det} shoes outside and does not hear a word.",
    "{tc.name} tells {p.name}, who is back first, 'The {a} and the {b} have swapped places today.' {q.name} is "
    "still out on the swings and does not hear.",
)
#: In the stories where break undoes it: the swap everyone saw in the morning, then the swap back and its news.
#: Each frame pairs with the one of :data:`MORNING_KEPT` at its index (same words, toys and pronouns counted).
MORNING = (
    "This morning, with the whole class watching, {tc.name} swapped the {a} and the {b} round.",
    "First thing this morning, in front of everyone, {tc.name} put the {a} and the {b} each in the other's place.",
    "This morning {tc.name} mixed the two lots up while the whole class looked on, so that each went to the "
    "other's place.",
    "At the start of the day, as the whole class watched, {tc.name} traded the places of the {a} and the {b}.",
    "Before lessons began, {tc.name} swapped the {a} and the {b} over, and every child saw it.",
)
#: Something the teacher did with the toys that the whole class saw, in the stories where break does not undo a
#: swap: it stands where the others tell the morning's swap, frame for frame in as many words and sentences, with
#: the toys named as often and in the same order and no pronoun, so that no count of the story tells the two apart.
MORNING_KEPT = (
    "This morning, with the whole class watching, {tc.name} dusted the {a} and the {b} carefully.",
    "First thing this morning, in front of everyone, {tc.name} checked the {a} and the {b} to see none were lost.",
    "This morning {tc.name} wiped the two lots clean while the whole class looked on, so that each was as good as "
    "new.",
    "At the start of the day, as the whole class watched, {tc.name} read the labels of the {a} and the {b}.",
    "Before lessons began, {tc.name} counted the {a} and the {b} again, and every child saw it.",
)
#: Each of these frames (and of :data:`ANNOUNCE_BACK`) says as many words as the one of :data:`BREAK`
#: (:data:`ANNOUNCE`) at its index, names the toys as often and with as many pronouns.
BREAK_BACK = (
    "At break time, while {c1.name}, {c2.name} and the other children are outside, {tc.name} swaps the {a} and the "
    "{b} back {why}.",
    "During break, with {c1.name}, {c2.name} and the rest of the class out in the playground, {tc.name} puts the "
    "{a} and the {b} back where each was before {why}.",
    "While {c1.name}, {c2.name} and their classmates are out at break, {tc.name} undoes the swap {why}, so that "
    "each lot ends up back in its old place.",
    "At break, when {c1.name}, {c2.name} and everyone else have gone out, {tc.name} puts the {a} and the {b} back "
    "in place {why}.",
    "Over break, with {c1.name}, {c2.name} and the others outside, {tc.name} takes out the {a} and the {b} {why} "
    "and puts each lot back in its old place.",
)
ANNOUNCE_BACK = (
    "When {p.name} comes back in, {tc.name} tells {p.obj}, 'I have swapped the {a} and the {b} back!' {q.name} is "
    "still out at the water fountain and does not hear it.",
    "{tc.name} tells {p.name}, the first one back, 'The {a} and the {b} are back in the usual places.' {q.name}, "
    "still out in the playground, does not hear it.",
    "As soon as {p.name} comes back, {tc.name} says to {p.obj}, 'Look, the {a} and the {b} are back in just the "
    "same places as always.' {q.name} is still outside and misses it.",
    "{p.name} comes in first and hears {tc.name} say, 'I have put the {a} and the {b} back in place now.' "
    "{q.name} is still tying {q.det} shoes outside and does not hear a word.",
    "{tc.name} tells {p.name}, who is back first, 'The {a} and the {b} have swapped back today.' {q.name} is "
    "still out on the swings and does not hear.",
)
NEEDS = (
    "Later, {ch.name} wants {an_x} {for_}.", "Then {ch.name} needs {an_x} {for_}.",
    "After that, {ch.name} goes to get {an_x} {for_}.", "A little later, {ch.name} would like {an_x} {for_}.",
    "Soon {ch.name} wants {an_x} {for_}.",
)
WANTS_FOR = (
    "for show-and-tell", "for a game", "to show {det} friend", "for the puppet show", "for a drawing",
    "for the class photo", "for the reading corner", "to share with {det} friends",
)
#: Each wording asks "where" (the options are places: "in the red box"); GO's options say where to ("to the red box"),
#: so each of its verbs is one of going, never "look for" ("look for a ball, to the green toy chest").
NOW = ("Where are the {x} now", "Where are the {x} kept now", "Where are the {x} at this moment")
GO = ("Where will {ch.name} go to get {an_x}", "Where will {ch.name} head to find {an_x}",
      "Where will {ch.name} run to fetch {an_x}")
WHY_GO = ("Why will {ch.name} go there?", "Why does {ch.name} go there?", "What makes {ch.name} go there?")


def true_belief_action(b: StoryBuilder, image_dependent: bool) -> None:
    cast = Cast(b)
    w = World(b.pick("room", ("classroom", "art room", "library")))
    child, mate = cast.pair(0.1, 0.25)
    teacher = cast.adult(0.88, teacher=True)
    heard_cell, back = b.crossed_cell("heard", 2, "the swap is undone")
    test = b.role(heard_cell == 1, "the child misses the announcement")
    b.seat("child and mate", [child, mate], (0.1, 0.25))
    for agent in (child, mate, teacher):
        w.add(agent)
    first, second = two_containers(b, w, (0.45, 0.65))
    kinds = b.sample("toys", lex.TOYS, 2)
    things = [Thing("thing", kinds[0], b.pick("colour: the first toys", kinds[0].colours), first.id),
              Thing("other", kinds[1], b.pick("colour: the second toys", kinds[1].colours), second.id)]
    for thing in things:
        w.add(thing)
    for agent in (child, mate):
        agent.beliefs.update({"thing": first.id, "other": second.id})  # the class always keeps them there
    p, q = (child, mate) if test else (mate, child)
    x = kinds[0].plural
    c1, c2 = b.arrange("names", [child, mate])
    (x1, p1), (x2, p2) = b.arrange("kept", [(x, first), (kinds[1].plural, second)])
    a, bb = b.arrange("swap order", [x, kinds[1].plural])
    slots = {"tc": teacher, "p": p, "q": q, "c1": c1, "c2": c2, "a": a, "b": bb, "x": x, "ch": child,
             "an_x": an(kinds[0].noun), "for_": fill(b.pick("wants for", WANTS_FOR), child)}
    story = " ".join([
        b.frame("kept", KEPT).format(x1=x1, x2=x2, p1=p1.name, p2=p2.name, **slots),
        b.frame("morning", MORNING if back else MORNING_KEPT).format(**slots),
        b.frame("swap", BREAK_BACK if back else BREAK).format(why=b.pick("tidy reason", TIDY_REASONS), **slots),
        b.frame("announce", ANNOUNCE_BACK if back else ANNOUNCE).format(**slots),
        b.frame("needs", NEEDS).format(**slots),
    ])
    if back:  # the morning's swap, seen by the whole class
        w.put(teacher.id, "thing", second.id, kind="move")
        w.put(teacher.id, "other", first.id, kind="move")
    w.leave(child.id, "playground")
    w.leave(mate.id, "playground")
    now, then = (first, second) if back else (second, first)  # where the break's swap puts them
    w.put(teacher.id, "thing", now.id, kind="move")
    w.put(teacher.id, "other", then.id, kind="move")
    w.enter(p.id)
    said = w.say_where(teacher.id, "thing", now.id)
    image = b.picture(w)  # the announcement: the teacher and the child who hears it; the other one still out
    w.enter(q.id)
    places = [f"in {first.name}", f"in {second.name}"]
    b.choose("reality", b.wording(NOW).format(**slots), places, f"in {w.place_name(things[0].location)}",
             story=story, image=image)
    goes = w.place_name(w.belief(child.id, "thing"))
    b.choose("go", b.wording(GO).format(**slots), [f"to {first.name}", f"to {second.name}"], f"to {goes}",
             feedback=right_wrong("That's right.", f"Not quite: the {x} are in {now.name} now."))
    heard = w.perceived(child.id, said)
    swapped = "swapped back" if back else "swapped"
    b.why("why go", b.wording(WHY_GO).format(**slots),
          f"Because {child.sub} heard {teacher.name} say that the {x} and the {kinds[1].plural} were {swapped}, so "
          f"{child.sub} knows the {x} are in {now.name} now." if heard else
          f"Because {child.sub} did not hear {teacher.name} say that the {x} were moved, so {child.sub} thinks "
          f"they are still in {then.name}.",
          f"{child.name} heard {teacher.name} say they were {swapped}, so {child.name} knows where they are now."
          if heard else
          f"{child.name} did not hear {teacher.name} say they were {swapped}, so {child.name} thinks they are still "
          f"in {then.name}.",
          [f"{child.name} saw {teacher.name} move them at break",
           f"{child.name} thinks they are still in {then.name}" if heard else f"{child.name} knows they were moved"],
          feedback=right_wrong(f"Yes, {child.name} goes to {goes}.", f"Actually, {child.name} goes to {goes}."))
    b.facts.update(log=w.record(), thing=x, belief=w.belief(child.id, "thing"), reality=things[0].location,
                   announced=heard, habit=first.id, swapped_back=back)


# --- false belief from an expectation ----------------------------------------------------------

HABIT = (
    "Every day, {pa.name} packs lunch for {c1.name} and {c2.name}: {c1.name} always gets {f1} and {c2.name} always "
    "gets {f2}.",
    "{pa.name} makes lunch for {c1.name} and {c2.name} every school day; there is always {f1} for {c1.name} and "
    "{f2} for {c2.name}.",
    "In this family, {c1.name}'s lunchbox always holds {f1} and {c2.name}'s always holds {f2}; {pa.name} packs "
    "them every morning.",
    "Each morning {pa.name} packs two lunchboxes, {f1} for {c1.name} and {f2} for {c2.name}, as always.",
    "{c1.name} always finds {f1} in {c1.det} lunchbox, and {c2.name} always finds {f2} in {c2.own}; {pa.name} "
    "packs them every day.",
)
#: The mix-up, naming no child (who is away and who watches is told just before, see ``away_and_stays``).
MIXUP = (
    "This morning {pa.name} mixes up the two lunches, so each lunchbox gets what usually goes in the other one; the "
    "child who stayed sees it.",
    "Today {pa.name} swaps the two lunches over by mistake, and the child who stayed watches.",
    "This morning {pa.name} is in a hurry and puts each lunch in the wrong lunchbox, and the child who stayed sees "
    "it.",
    "This morning {pa.name} gets the two lunches the wrong way round; the child who stayed sees it all.",
    "Today {pa.name} packs the two lunches into the wrong lunchboxes, and the child who stayed watches.",
)
#: The mix-up both children see, in the stories where it is later put right.
MIXUP_SEEN = (
    "This morning {pa.name} mixes up the two lunches, so each lunchbox gets what usually goes in the other one; both "
    "of the children see it.",
    "Today {pa.name} swaps the two lunches over by mistake, and both of the children watch.",
    "This morning {pa.name} is in a hurry and puts each lunch in the wrong lunchbox, and both of the children see it.",
    "This morning {pa.name} gets the two lunches the wrong way round; both of the children see it all.",
    "Today {pa.name} packs the two lunches into the wrong lunchboxes, and both of the children watch.",
)
#: Something the packer does that both children see, in the stories where the mix-up is not put right: it stands
#: where the undone stories tell the mix-up both see, so that both kinds of story have as many sentences and pronouns.
BREAKFAST_SEEN = (
    "This morning {pa.name} makes toast and boils some eggs for everyone; both of the children see it.",
    "Today {pa.name} pours two glasses of milk and puts out the jam, and both of the children watch.",
    "This morning {pa.name} sweeps the kitchen floor clean, and both of the children see it.",
    "This morning {pa.name} opens the curtains and lets the sunshine in; both of the children see it all.",
    "Today {pa.name} sets out two bowls and two spoons for the meal, and both of the children watch.",
)
#: The mix-up put right, naming no child (who is away and who watches is told just before).
MIXUP_BACK = (
    "Then {pa.name} notices the mistake and swaps the two lunches back; the child who stayed sees it.",
    "A moment later {pa.name} spots the mix-up and puts each lunch back, and the child who stayed watches.",
    "Then {pa.name} swaps the two lunches back again, and the child who stayed sees it.",
    "{pa.name} soon sees the mistake and puts the two lunches back; the child who stayed sees it all.",
    "Then {pa.name} undoes the mix-up, so each lunchbox holds its usual lunch, and the child who stayed watches.",
)
HOPES = (
    "{c1.name} would love {g1} today, and {c2.name} would love {g2}.",
    "Today {c1.name} is hoping for {g1}, and {c2.name} is hoping for {g2}.",
    "{c1.name} really feels like {g1} today; {c2.name} feels like {g2}.",
    "{c1.name} wishes for {g1} today, and {c2.name} wishes for {g2}.",
    "What {c1.name} wants most today is {g1}; what {c2.name} wants most is {g2}.",
)
PICKS_UP = (
    "Later, {ch.name} picks up {ch.det} lunchbox. It is closed.",
    "At lunch time, {ch.name} holds {ch.det} lunchbox, still shut.",
    "Then {ch.name} takes {ch.det} closed lunchbox.",
    "When it is time to eat, {ch.name} has {ch.det} lunchbox in front of {ch.obj}, not yet open.",
    "Later, {ch.name} carries {ch.det} lunchbox to the table without opening it.",
)
PACKED = ("What did {pa.name} really pack for {ch.name} today", "What is really in {ch.name}'s lunchbox today",
          "What did {ch.name} really get in {ch.det} lunchbox today")
THINKS = ("Before opening it, what does {ch.name} think is in {ch.det} lunchbox",
          "Before {ch.name} looks inside, what does {ch.sub} expect to find",
          "What does {ch.name} think {ch.sub} will find in {ch.det} lunchbox")
WHY_THINKS = ("Why does {ch.name} think that?", "Why does {ch.name} expect that?", "What makes {ch.name} think so?")
WANT = ("What would {ch.name} love to have for lunch today", "What is {ch.name} hoping for today",
        "What does {ch.name} want for lunch today")
FEEL = ("Before {ch.name} opens the lunchbox, how does {ch.sub} feel", "How does {ch.name} feel before looking inside",
        "Before opening it, how does {ch.name} feel")


def expectation_false_belief(b: StoryBuilder, image_dependent: bool) -> None:
    """Two children whose lunches are swapped today; the one asked about was away (test) or watched (control).
    In half of each cell both watch the mix-up, then one is away while it is put right (the mirror false belief)."""
    cast = Cast(b)
    w = World("kitchen")
    child, sib = cast.pair(0.1, 0.25)
    parent = cast.adult(0.86)
    for agent in (child, sib, parent):
        w.add(agent)
    mine, theirs = b.sample("foods", [k for k in lex.SNACKS if k.noun != "banana"], 2)
    boxes = [Place("lunchbox", "lunchbox", b.pick("colour: the first lunchbox", ("red", "blue")), 0.45, closed=True,
                   name=f"{child.name}'s lunchbox"),
             Place("lunchbox2", "lunchbox", b.pick("colour: the second lunchbox", ("green", "purple")), 0.62, closed=True,
                   name=f"{sib.name}'s lunchbox")]
    w.add(Place("cupboard", "offstage", "brown", -5.0, name="the cupboard"))
    expected = Thing("expected", mine, b.pick("colour: the usual food", mine.colours), "cupboard")
    packed = Thing("packed", theirs, b.pick("colour: the other food", theirs.colours), "cupboard")
    other_food = Thing("swapped", mine, expected.colour, "cupboard")
    w.add_all(*boxes, expected, packed, other_food)
    away_cell, back = b.crossed_cell("away", 2, "the mix-up is put right")
    test = b.role(away_cell == 1, "true belief: the child watches the last packing")
    b.seat("child and sibling", [child, sib], (0.1, 0.25))
    p, q = (child, sib) if test else (sib, child)
    # who is named first (in the hopes, and in who is away and who stays) and which food the child hopes for, drawn
    # jointly: the food named last (the other child's hope, or hers) then goes with no answer either
    sib_first, wants_usual = b.flips("lead: the second of the pair named first", "wants usual")
    wants = mine if wants_usual else theirs
    sib_wants = theirs if wants_usual else mine  # the two hopes differ, so the last one named is no cue
    child.beliefs["expected"] = "lunchbox"  # every day the lunchbox holds the usual food
    w.wish(child.id, wants.noun)
    w.wish(sib.id, sib_wants.noun)
    _, away, to = leaving(b, p)
    h1, h2 = (sib, child) if sib_first else (child, sib)
    c1, c2 = b.arrange("names", [child, sib])  # the usual foods: a choice of its own (see _Swapped's "puts")
    food = {child.id: an(mine.noun), sib.id: an(theirs.noun)}
    hope = {child.id: an(wants.noun), sib.id: an(sib_wants.noun)}
    slots = {"pa": parent, "p": p, "q": q, "ch": child, "away": away}
    away_sentence = away_and_stays(b, p, q, away, lead=h1)
    events = ([b.frame("mixup", MIXUP_SEEN).format(**slots), away_sentence, b.frame("seen or back", MIXUP_BACK).format(**slots)]
              if back else [b.frame("seen or back", BREAKFAST_SEEN).format(**slots), away_sentence,
                            b.frame("mixup", MIXUP).format(**slots)])
    story = " ".join([
        b.frame("habit", HABIT).format(c1=c1, c2=c2, f1=food[c1.id], f2=food[c2.id], **slots),
        *events,
        b.frame("hopes", HOPES).format(c1=h1, c2=h2, g1=hope[h1.id], g2=hope[h2.id]),
        b.frame("picks up", PICKS_UP).format(**slots),
    ])
    if not back:
        w.leave(p.id, to)
    w.hold(parent.id, "packed")
    image = "" if back else b.picture(w)  # the packing: the lunch in the parent's hand, the away child not there
    last = w.put(parent.id, "packed", "lunchbox")
    w.put(parent.id, "swapped", "lunchbox2")
    if w.perceived(child.id, last):
        child.beliefs.pop("expected")  # saw what went in instead
    if back:  # put right while the away child is out: each lunch back in its usual lunchbox
        w.leave(p.id, to)
        w.hold(parent.id, "packed")
        image = b.picture(w)  # the putting right: the lunch in the parent's hand, the away child not there
        last = w.put(parent.id, "swapped", "lunchbox", kind="move")
        w.put(parent.id, "packed", "lunchbox2", kind="move")
    w.enter(p.id)
    foods = [an(mine.noun), an(theirs.noun)]
    b.choose("reality", b.wording(PACKED).format(**slots), foods, an(w.contents("lunchbox")[0].noun), story=story,
             image=image)
    thinks = [w.things[t].noun for t in w.believed_contents(child.id, "lunchbox")]
    b.choose("thinks", b.wording(THINKS).format(**slots), foods, an(thinks[0]), image=b.picture(w))
    watched = w.perceived(child.id, last)  # the last packing of the child's lunchbox
    b.why("why thinks", b.wording(WHY_THINKS).format(**slots), *_why_thinks(child, parent.name, mine.noun,
                                                                             theirs.noun, watched, back))
    b.choose("wants", b.wording(WANT).format(**slots), foods, an(wants.noun))
    feeling = w.feeling_about(child.id, thinks[0])  # what the child expects, before opening
    b.choose("feels", b.wording(FEEL).format(**slots), ["happy", "sad"], feeling)
    b.facts.update(log=w.record(), usual=mine.noun, packed=theirs.noun, child_thinks=thinks, feeling=feeling,
                   watched=watched, wants=wants.noun, put_right=back)


def _why_thinks(child: Agent, parent: str, mine: str, theirs: str, watched: bool, back: bool) -> tuple[str, str,
                                                                                                         list[str]]:
    """The explanation of what the child expects, its key inference and its false ones: from the last packing
    the child saw (the mix-up, or its putting right), else from the habit."""
    see_through = "the lunchbox is see-through"
    if back and watched:
        return (f"Because {child.sub} saw {parent} swap the lunches, and {child.sub} saw {parent} swap them back, so "
                f"{child.sub} knows it is {an(mine)} again.",
                f"{child.name} saw the mix-up put right, so {child.sub} knows it is the usual {mine}.",
                [f"{child.name} thinks it is {an(theirs)}", see_through])
    if back:
        return (f"Because {child.sub} saw {parent} pack {an(theirs)} in {child.det} lunchbox, and {child.sub} did not "
                f"see {parent} swap the lunches back.",
                f"{child.name} saw the mix-up but not the putting right, so {child.sub} expects {an(theirs)}.",
                [f"{child.name} knows it is the usual {mine}", see_through])
    if watched:
        return (f"Because {child.sub} saw {parent} pack {an(theirs)} in {child.det} lunchbox today.",
                f"{child.name} saw the packing, so {child.sub} knows it is {an(theirs)}.",
                [f"{child.name} thinks it is the usual {mine}", see_through])
    return (f"Because {child.sub} always gets {an(mine)}, and {child.sub} did not see {parent} swap the lunches.",
            f"{child.name} did not see the packing, so {child.sub} expects the usual {mine}.",
            [f"{child.name} knows what is inside without seeing it", see_through])
