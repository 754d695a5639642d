"""One generator per booklet task type (``GENERATORS``: task id -> function).

Each generator builds a :class:`World`, plays the story's events on it, takes pictures of
the states the turns show, and reads every expected answer, branch answer and feedback
text off the world: the agent's belief (not reality) in false-belief tasks, what the
listener can see in perspective tasks, whether a statement contradicted the speaker's
own belief in the lying task, and so on.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from commet.format.model import AnswerFeedback, Feedback, Turn
from commet.generation.procedural import lexicon as lex
from commet.generation.procedural.render import compose
from commet.generation.procedural.world import Agent, Event, Occluder, Place, Thing, World

ORDINALS = ("first", "second", "third", "fourth", "fifth")


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def an(noun: str) -> str:
    """``a cookie``, ``an apple``."""
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


@dataclass
class StoryBuilder:
    """Collects the turns, the scenes shown with them and a few world facts of one story."""

    story_id: str
    turns: list[Turn] = field(default_factory=list)
    scenes: dict[str, dict] = field(default_factory=dict)
    facts: dict[str, object] = field(default_factory=dict)

    def picture(self, world: World) -> str:
        """Snapshot the world's current state as a scene; returns its image id."""
        image_id = f"{self.story_id}-img{len(self.scenes) + 1}"
        self.scenes[image_id] = compose(world, variant=len(self.scenes) + len(self.story_id))
        return image_id

    def turn(self, question: str, answers: str | list[str], story: str = "", image: str | None = None,
             feedback: Feedback | None = None) -> None:
        answers = [answers] if isinstance(answers, str) else answers
        self.turns.append(Turn(story=story, question=question, answers=[cap(a) for a in answers],
                               image=image, feedback=feedback))


def right_wrong(right: str, wrong: str) -> Feedback:
    return Feedback(right=right, wrong=wrong)


def keyed(texts: dict[str, str]) -> Feedback:
    """Feedback keyed by the previous turn's answers (given uncapitalised, as in :meth:`StoryBuilder.turn`)."""
    return Feedback(by_answer=[AnswerFeedback(answer=cap(a), text=t) for a, t in texts.items()])


class Cast:
    """Picks distinct names, pronouns and shirt colours for one story."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()
        self.shirts = list(lex.THING_COLOURS)
        rng.shuffle(self.shirts)

    def _agent(self, name: str, pronoun: str, adult: bool, x: float) -> Agent:
        self.used.add(name)
        agent_id = name.lower().replace(".", "").replace(" ", "_")
        return Agent(agent_id, name, pronoun, adult, self.shirts.pop(), x)

    def child(self, x: float) -> Agent:
        pronoun = self.rng.choice(("she", "he"))
        pool = [n for n in (lex.GIRLS if pronoun == "she" else lex.BOYS) if n not in self.used]
        return self._agent(self.rng.choice(pool), pronoun, False, x)

    def adult(self, x: float, teacher: bool = False) -> Agent:
        pool = [a for a in (lex.TEACHERS if teacher else lex.ADULTS) if a[0] not in self.used]
        name, pronoun = self.rng.choice(pool)
        return self._agent(name, pronoun, True, x)


def _two_containers(rng: random.Random, w: World, xs: tuple[float, float]) -> tuple[Place, Place]:
    colours = rng.sample(("red", "blue", "green", "yellow", "purple", "orange"), 2)
    kind = rng.choice(("box", "toy chest"))
    places = []
    for k, (colour, x) in enumerate(zip(colours, xs, strict=True)):
        place = Place(f"place{k + 1}", kind, colour, x, closed=True, name=f"the {colour} {kind}")
        w.add(place)
        places.append(place)
    return places[0], places[1]


def _room(rng: random.Random, indoors: bool = True) -> str:
    rooms = [r[0] for r in lex.ROOMS if not indoors or r[0] != "garden"]
    return rng.choice(rooms)


def _why_false_belief(w: World, agent: Agent, thing: Thing) -> str:
    """The reason an agent looks where they do, from the events they did and did not perceive."""
    seen = w.last_seen_event(agent.id, thing.id)
    missed = w.missed_events(agent.id, thing.id)
    assert seen is not None and seen.dst is not None
    where = w.place_name(seen.dst)
    first = (f"{agent.pronoun} put it in {where}" if seen.actor == agent.id
             else f"{agent.pronoun} saw it go into {where}")
    if not missed:
        return f"Because {first}."
    mover = w.agents[missed[-1].actor].name if missed[-1].actor in w.agents else missed[-1].actor
    return f"Because {first}, and {agent.pronoun} did not see {mover} move it to {w.place_name(missed[-1].dst or '')}."


# --- desire ---------------------------------------------------------------------------------

def _desire(rng: random.Random, b: StoryBuilder, image_dependent: bool, common: bool) -> None:
    cast = Cast(rng)
    w = World(_room(rng))
    child = cast.child(0.18)
    w.add(child)
    group, word = rng.choice(((lex.SNACKS, "snacks"), (lex.TOYS, "toys")))
    kinds = rng.sample(group, 2)
    w.add(Place("table", "table", "brown", 0.55, name="the table"))
    things = [Thing(f"thing{k + 1}", kind, rng.choice(kind.colours), "table") for k, kind in enumerate(kinds)]
    for thing in things:
        w.add(thing)
    image = b.picture(w)
    a, c = things
    if image_dependent:
        story = f"Meet {child.name}. There are two {word} on the table. Look at the picture."
        question = "Which one do you like best?"
    else:
        story = (f"Meet {child.name}. There are two {word} on the table: {an(a.describe())} and "
                 f"{an(c.describe())}.")
        question = f"Which one do you like best, the {a.noun} or the {c.noun}?"
    options = [f"the {t.noun}" for t in things]
    b.turn(question, options, story=story, image=image)
    picks, texts = [], {}
    for liked, other in ((a, c), (c, a)):  # one world per branch: the participant's pick fixes the story
        branch = copy.deepcopy(w)
        wanted = liked if common else other
        branch.agents[child.id].desires.append(wanted.id)
        pick = next(t for t in things if t.id in branch.agents[child.id].desires)
        picks.append(f"the {pick.noun}")
        texts[f"the {liked.noun}"] = (f"You like the {liked.noun}? {child.name} likes the {liked.noun} best too!"
                                      if common else
                                      f"So you like the {liked.noun}. Well, {child.name} does not like the "
                                      f"{liked.noun} very much. {child.name} likes the other one best.")
    b.turn(f"So which one will {child.name} pick?", picks, feedback=keyed(texts))
    b.facts.update(log=w.record(), child=child.name, options=[t.noun for t in things],
                   likes="same as you" if common else "the other")


def common_desire(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    _desire(rng, b, image_dependent, common=True)


def diverse_desire(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    _desire(rng, b, image_dependent, common=False)


# --- belief: location -----------------------------------------------------------------------

def _moved_object(rng: random.Random) -> tuple[World, Agent, Agent, Thing, Place, Place]:
    """An owner puts a thing in one container and leaves; someone else moves it to the other one."""
    cast = Cast(rng)
    w = World(_room(rng))
    owner, mover = cast.child(0.12), (cast.child(0.88) if rng.random() < 0.5 else cast.adult(0.88))
    w.add(owner)
    w.add(mover)
    first, second = _two_containers(rng, w, (0.38, 0.62))
    if rng.random() < 0.5:
        first, second = second, first
    kind = rng.choice(lex.TOYS)
    w.add(Place("hands", "offstage", "brown", -5.0, name="in hand"))  # it starts in the owner's hands
    thing = Thing("thing", kind, rng.choice(kind.colours), "hands", owner=owner.id)
    w.add(thing)
    w.put(owner.id, thing.id, first.id)
    w.leave(owner.id)
    w.put(mover.id, thing.id, second.id, kind="move")
    w.enter(owner.id)
    return w, owner, mover, thing, first, second


def _moved_story(w: World, owner: Agent, mover: Agent, thing: Thing, first: Place, second: Place) -> str:
    return (f"{owner.name} and {mover.name} are in the {w.room}. {owner.name} puts {owner.poss} "
            f"{thing.describe()} in {first.name} and goes outside to play. While {owner.name} is away, "
            f"{mover.name} takes the {thing.noun} out and puts it in {second.name}. Then {owner.name} comes back "
            f"and wants {owner.poss} {thing.noun}.")


def false_belief_location(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    w, owner, mover, thing, first, second = _moved_object(rng)
    options = f"in {first.name} or in {second.name}"
    b.turn(f"Where will {owner.name} look for {owner.poss} {thing.noun} first, {options}?",
           f"in {w.place_name(w.belief(owner.id, thing.id))}",
           story=_moved_story(w, owner, mover, thing, first, second), image=b.picture(w))
    b.turn(f"Why will {owner.name} look there?", _why_false_belief(w, owner, thing))
    b.turn(f"Where is the {thing.noun} really?", f"in {w.place_name(thing.location)}")
    b.facts.update(log=w.record(), thing=thing.noun, belief=w.belief(owner.id, thing.id), reality=thing.location)


def implicit_false_belief(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    w, owner, mover, thing, first, second = _moved_object(rng)
    b.turn(f"What will {owner.name} do next?",
           f"look for the {thing.noun} in {w.place_name(w.belief(owner.id, thing.id))}",
           story=_moved_story(w, owner, mover, thing, first, second), image=b.picture(w))
    b.turn(f"Why will {owner.name} do that?", _why_false_belief(w, owner, thing))
    b.facts.update(log=w.record(), thing=thing.noun, belief=w.belief(owner.id, thing.id), reality=thing.location)


def diverse_belief(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    cast = Cast(rng)
    w = World(_room(rng))
    child = cast.child(0.15)
    w.add(child)
    places = _two_containers(rng, w, (0.45, 0.75))
    kind = rng.choice(lex.TOYS)
    image = b.picture(w)  # the lost thing is nowhere in sight
    options = f"in {places[0].name} or in {places[1].name}"
    b.turn(f"Where do you think the {kind.noun} is, {options}?", [f"in {p.name}" for p in places],
           story=f"{child.name} has lost {child.poss} {kind.noun}. It might be in {places[0].name}, or it might "
                 f"be in {places[1].name}.", image=image)
    looks, really, texts = [], [], {}
    for guess in places:  # per branch: the child thinks it is in the other place; it turns out to be the guess
        branch = copy.deepcopy(w)
        thought = next(p for p in places if p.id != guess.id)
        branch.add(Thing("lost", kind, rng.choice(kind.colours), guess.id, owner=child.id))
        branch.agents[child.id].beliefs["lost"] = thought.id
        looks.append(f"in {branch.place_name(branch.belief(child.id, 'lost'))}")
        really.append(f"in {branch.place_name(branch.things['lost'].location)}")
        texts[f"in {guess.name}"] = (f"That is a good guess. But {child.name} thinks the {kind.noun} is in the "
                                     "other place.")
    b.turn(f"So where will {child.name} look for the {kind.noun}, {options}?", looks, feedback=keyed(texts))
    b.turn(f"So where is the {kind.noun} really?", really,
           story=f"{child.name} looks there, but the {kind.noun} is not there.",
           feedback=right_wrong(f"Yes, {child.name} looks where {child.pronoun} thinks it is.",
                                f"Not quite: {child.name} looks where {child.pronoun} thinks the {kind.noun} is."))
    b.facts.update(log=w.record(), thing=kind.noun, places=[p.name for p in places],
                   belief="the place you did not pick")


def true_belief_action(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    cast = Cast(rng)
    w = World("classroom")
    child, teacher = cast.child(0.12), cast.adult(0.88, teacher=True)
    w.add(child)
    w.add(teacher)
    first, second = _two_containers(rng, w, (0.38, 0.62))
    kind = rng.choice(lex.TOYS)
    thing = Thing("thing", kind, rng.choice(kind.colours), first.id)
    w.add(thing)
    child.beliefs[thing.id] = first.id  # the class always keeps it there
    w.leave(child.id)
    w.put(teacher.id, thing.id, second.id, kind="move")
    w.enter(child.id)
    said = w.say_where(teacher.id, thing.id, second.id)
    plural = kind.plural
    story = (f"In {child.name}'s class, the {plural} are always kept in {first.name}. At lunch time, "
             f"{teacher.name} moves the {plural} to {second.name}. When everyone is back, {teacher.name} tells "
             f"the whole class, 'The {plural} are in {second.name} now.' {child.name} wants {an(kind.noun)}.")
    options = f"to {first.name} or to {second.name}"
    b.turn(f"Where are the {plural} now, in {first.name} or in {second.name}?",
           f"in {w.place_name(thing.location)}", story=story, image=b.picture(w))
    goes = w.place_name(w.belief(child.id, thing.id))
    b.turn(f"Where will {child.name} go to get {an(kind.noun)}, {options}?", f"to {goes}",
           feedback=right_wrong("That's right.", f"Not quite: the {plural} are in {w.place_name(thing.location)} now."))
    assert w.perceived(child.id, said)
    b.turn(f"Why will {child.name} go there?",
           f"Because {child.pronoun} heard {teacher.name} say the {plural} are in {w.place_name(said.claim or '')}.",
           feedback=right_wrong(f"Yes, {child.name} goes to {goes}.", f"Actually, {child.name} goes to {goes}."))
    b.facts.update(log=w.record(), thing=plural, belief=w.belief(child.id, thing.id), reality=thing.location,
                   announced=True, habit=first.id)


# --- perception and reference ---------------------------------------------------------------

def reference_easy(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    cast = Cast(rng)
    w = World(_room(rng))
    flip = rng.random() < 0.5
    x = (lambda v: 1 - v) if flip else (lambda v: v)
    speaker, listener = cast.child(x(0.06)), cast.adult(x(0.94))
    kind = rng.choice(lex.TOYS)
    colour = rng.choice(kind.colours)
    surfaces = rng.sample(lex.SURFACES, 2)
    near = Place("near", surfaces[0], "brown", x(0.25), name=f"the {surfaces[0]}")
    far = Place("far", surfaces[1], "brown", x(0.69), name=f"the {surfaces[1]}")
    occ = Occluder("occluder", rng.choice(lex.OCCLUDERS), x(0.465))
    for item in (speaker, listener, near, far, occ, Thing("thing1", kind, colour, near.id),
                 Thing("thing2", kind, colour, far.id)):
        w.add(item)
    meant = next(w.things[t] for t in w.visible_things(speaker.id) if w.things[t].kind == kind)
    hidden = next(t for t in w.things.values() if t.id != meant.id)
    where = {p.id: f"the one on {p.name}" for p in (near, far)}
    story = (f"{speaker.name} and {listener.name} are in the {w.room}. There are two {kind.plural} that look just "
             f"the same: one is on the {near.kind} and one is on the {far.kind}.")
    if not image_dependent:
        story += (f" A {occ.kind} stands between {speaker.name} and the {w.places[hidden.location].kind}, so "
                  f"{speaker.name} cannot see the {kind.noun} there.")
    story += f" {speaker.name} points and says, 'I want that one!'"
    b.turn(f"Which {kind.noun} does {speaker.name} mean, {where['near']} or {where['far']}?",
           where[meant.location], story=story, image=b.picture(w))
    b.turn("How do you know?",
           f"Because {speaker.name} can only see the {kind.noun} on {w.places[meant.location].name}. The {occ.kind} "
           f"hides the other one from {speaker.obj}.")
    b.facts.update(log=w.record(), thing=kind.noun, speaker_sees=w.visible_things(speaker.id), meant=meant.id)


def reference_hard_perspective(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    cast = Cast(rng)
    w = World(_room(rng))
    flip = rng.random() < 0.5
    x = (lambda v: 1 - v) if flip else (lambda v: v)
    child, helper = cast.child(x(0.5)), cast.adult(x(0.92))
    helper.present = False  # comes in after the screen is set up
    kind = rng.choice([k for k in lex.TOYS if k.shape != "book"])
    colours = rng.sample(kind.colours, 3)
    left, right = Place("left", "table", "brown", x(0.27), name="the first table"), \
        Place("right", "table", "brown", x(0.69), name="the second table")
    for item in (child, helper, left, right):
        w.add(item)
    sizes = [3, 2, 1]
    things = [Thing(f"thing{s}", kind, c, left.id if s == 3 else right.id, size=s)
              for s, c in zip(sizes, colours, strict=True)]
    for thing in (things[0], *rng.sample(things[1:], 2)):
        w.add(thing)
    w.walk(child.id, x(0.07))  # the child set them out, then goes to her side of the screen
    occ = Occluder("occluder", rng.choice(lex.OCCLUDERS), x(0.47))
    w.add(occ)
    w.enter(helper.id)
    wanted = max((w.things[t] for t in child.beliefs), key=lambda t: t.size)
    given = max((w.things[t] for t in w.visible_things(helper.id)), key=lambda t: t.size)
    hidden = [t for t in things if not w.can_see(helper.id, t.id)]
    listed = rng.sample(things, 3)
    names = ", ".join(f"the {t.colour} one" for t in listed[:2]) + f" or the {listed[2].colour} one"
    story = f"{child.name} has three {kind.plural}: a big one, a middle-sized one and a small one."
    if not image_dependent:
        story += (f" The big one is {wanted.colour}, the middle-sized one is {things[1].colour} and the small one "
                  f"is {things[2].colour}. The big one is on the other side of {an(occ.kind)}, so {helper.name} "
                  f"cannot see it from where {helper.pronoun} stands.")
    story += f" {child.name} says to {helper.name}, 'Please give me the big {kind.noun}!'"
    b.turn(f"Which {kind.noun} will {helper.name} give {child.name}, {names}?", f"the {given.colour} one",
           story=story, image=b.picture(w))
    b.turn(f"Why will {helper.name} give that one?",
           f"Because {helper.name} cannot see the {hidden[0].colour} {kind.noun} behind the {occ.kind}, so the "
           f"{given.colour} one is the biggest one {helper.pronoun} can see.")
    b.turn(f"Which {kind.noun} did {child.name} really want?", f"the {wanted.colour} one",
           feedback=right_wrong(f"Yes! {helper.name} gives {child.name} the {given.colour} one.",
                                f"Look again: {helper.name} gives {child.name} the {given.colour} one."))
    b.turn("How did you know?",
           f"Because the {wanted.colour} {kind.noun} is the biggest of all, and {child.name} can see it from "
           f"where {child.pronoun} stands.",
           feedback=right_wrong(f"That's right, {child.name} wanted the {wanted.colour} one.",
                                f"Actually, {child.name} wanted the {wanted.colour} one."))
    b.facts.update(log=w.record(), thing=kind.noun, helper_sees=w.visible_things(helper.id), wanted=wanted.id,
                   given=given.id)


def reference_hard_referent(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    cast = Cast(rng)
    w = World(_room(rng))
    speaker, listener = cast.child(0.08), cast.adult(0.92)
    kind, mark_kind = rng.sample([k for k in lex.TOYS if k.shape != "teddy"], 2)
    colours = rng.sample(kind.colours, 2)
    mark_colour = rng.choice([c for c in mark_kind.colours if c not in colours])
    table, shelf = Place("table", "table", "brown", 0.32, name="the table"), \
        Place("shelf", "shelf", "brown", 0.68, name="the shelf")
    target, other = Thing("target", kind, colours[0], table.id), Thing("other", kind, colours[1], shelf.id)
    landmark = Thing("landmark", mark_kind, mark_colour, table.id)
    for item in (speaker, listener, table, shelf, target, landmark, other):
        w.add(item)
    first_image = b.picture(w)

    def next_to(place_of: dict[str, str]) -> Thing:
        return next(t for t in (target, other) if place_of[t.id] == place_of[landmark.id])

    w.leave(speaker.id)
    w.put(listener.id, landmark.id, shelf.id, kind="move")  # the speaker stays outside and does not see it
    reality = {t: th.location for t, th in w.things.items()}
    given, meant = next_to(reality), next_to(speaker.beliefs)
    mark = mark_kind.noun
    if image_dependent:
        story = (f"{speaker.name} and {listener.name} are in the {w.room}. There are two {kind.plural}, one on the "
                 f"table and one on the shelf, and {an(mark)}. {speaker.name} goes out.")
        moved = f"While {speaker.name} is away, {listener.name} tidies up and moves the {mark}."
    else:
        story = (f"{speaker.name} and {listener.name} are in the {w.room}. There is {an(target.describe())} on the "
                 f"table with {an(mark)} next to it, and {an(other.describe())} on the shelf. {speaker.name} goes out.")
        moved = (f"While {speaker.name} is away, {listener.name} tidies up and moves the {mark} to the shelf, next "
                 f"to the {other.describe()}.")
    b.turn(f"Is there {an(mark)} in the {w.room}?", "yes", story=story, image=first_image)
    b.turn(f"Which {kind.noun} will {listener.name} bring {speaker.name}, the {colours[0]} one or the "
           f"{colours[1]} one?", f"the {given.colour} one",
           story=f"{moved} {speaker.name} calls from outside, 'Please bring me the {kind.noun} next to the {mark}!'",
           image=b.picture(w))
    b.turn(f"Why will {listener.name} bring that one?",
           f"Because the {given.colour} {kind.noun} is the one next to the {mark} now.")
    b.turn(f"Which {kind.noun} did {speaker.name} really want?", f"the {meant.colour} one",
           feedback=right_wrong(f"Yes! {listener.name} brings {speaker.name} the {given.colour} one. But "
                                f"{speaker.name} frowns.",
                                f"Look again: {listener.name} brings {speaker.name} the {given.colour} one. But "
                                f"{speaker.name} frowns."))
    b.turn("How did you know?",
           f"Because {speaker.name} did not see {listener.name} move the {mark}. {speaker.name} thinks the {mark} "
           f"is still next to the {meant.colour} {kind.noun}.",
           feedback=right_wrong(f"That's right, {speaker.name} wanted the {meant.colour} one.",
                                f"Actually, {speaker.name} wanted the {meant.colour} one."))
    b.facts.update(log=w.record(), thing=kind.noun, landmark=mark, meant=meant.id, given=given.id,
                   speaker_thinks_landmark_in=speaker.beliefs[landmark.id])


def interpretation(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    cast = Cast(rng)
    w = World(_room(rng))
    child, helper = cast.child(0.08), cast.adult(0.92)
    w.add(child)
    w.add(helper)
    kind = rng.choice([k for k in lex.TOYS if k.shape in ("duck", "teddy", "ball")])
    colour = rng.choice(kind.colours)
    feature = rng.choice(("sunglasses", "bow") if kind.shape != "ball" else ("stripes", "dots"))
    feature_words = {"sunglasses": "wearing sunglasses", "bow": "with a bow", "stripes": "with stripes",
                     "dots": "with dots"}[feature]
    n = rng.choice((4, 5))
    special_at = rng.randrange(n)
    w.add(Place("shelf", "shelf", "brown", 0.5, name="the shelf"))
    for k in range(n):
        w.add(Thing(f"thing{k + 1}", kind, colour, "shelf", feature=feature if k == special_at else None))
    row = sorted(w.things.values(), key=lambda t: w.thing_x(t.id))
    special = next(t for t in row if t.feature == feature)
    clues = {f"the {colour} {kind.noun}": lambda t: t.colour == colour,
             f"the {kind.noun} {feature_words}": lambda t: t.feature == feature}
    matches = {clue: [t.id for t in row if test(t)] for clue, test in clues.items()}
    good = next(c for c, m in matches.items() if len(m) == 1)
    image = b.picture(w)
    if image_dependent:
        from_left = row.index(special)
        b.turn(f"Can you tell {helper.name} where it is in the row? Counting from the left, which one is it?",
               f"the {ORDINALS[from_left]} from the left",
               story=f"This is {child.name}. {child.name} collects {kind.plural}. {cap(child.pronoun)} wants the "
                     f"special one {feature_words}, and {helper.name} will get it for {child.obj}.", image=image)
        b.turn(f"{helper.name} will look at the row from the back of the shelf, so {helper.name}'s left is your "
               f"right. Counting from {helper.name}'s left, which one is it?",
               f"the {ORDINALS[n - 1 - from_left]} from the left",
               feedback=right_wrong("That's right.", f"Look again: it is the {ORDINALS[from_left]} one from your "
                                                     "left."))
    else:
        story = (f"This is {child.name}. There are {n} {colour} {kind.plural} in a row on the shelf. Only one of them "
                 f"is {feature_words}, and {child.name} wants that one. {helper.name} will get it for {child.obj}.")
        a, c = clues
        b.turn(f"Which clue should {child.name} give {helper.name}: '{a}' or '{c}'?", good,
               story=story, image=image)
        b.turn("Why is that the better clue?",
               f"Because all {len(matches[a])} {kind.plural} are {colour}, but only one is {feature_words}.",
               feedback=right_wrong("That's right.", f"Not quite: '{good}' is the better clue."))
    b.facts.update(log=w.record(), thing=kind.noun, row=[t.id for t in row], special=special.id,
                   clue_matches={c: len(m) for c, m in matches.items()})


# --- emotion ----------------------------------------------------------------------------------

def emotion_reminder(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    cast = Cast(rng)
    w = World("garden")
    child = cast.child(0.3)
    w.add(child)
    animal, did, friendly = rng.choice(lex.PAST_TROUBLES)
    pronouns = {"pos": child.poss, "obj": child.obj, "sub": child.pronoun}
    w.past_harm(f"the {animal}", child.id, did.format(**pronouns))
    feeling = w.feeling_toward(child.id, f"the {animal}")
    b.turn(f"How does {child.name} feel when {child.pronoun} sees the {animal}, happy or scared?", feeling,
           story=f"Last week, {an(animal)} {did.format(**pronouns)}. Today {child.name} goes to the park again, and "
                 f"there is the same {animal}, {friendly}.")
    b.turn("Why?", f"Because last week the {animal} {did.format(**pronouns)}.")
    near_far = "far from it" if feeling == "scared" else "near it"
    b.turn(f"Will {child.name} sit near the {animal} or far from it?", near_far)
    b.turn(f"Why will {child.pronoun} sit there?",
           f"Because {child.pronoun} is afraid the {animal} will hurt {child.obj} again." if feeling == "scared"
           else f"Because {child.pronoun} likes the {animal}.")
    b.facts.update(log=w.record(), animal=animal, remembers_harm=True, feeling=feeling)


def expectation_false_belief(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    cast = Cast(rng)
    w = World("kitchen")
    child, parent = cast.child(0.2), cast.adult(0.8)
    usual, today = rng.sample([k for k in lex.SNACKS if k.noun != "banana"], 2)
    lunchbox = Place("lunchbox", "lunchbox", rng.choice(("red", "blue", "green", "purple")), 0.5, closed=True,
                     name="the lunchbox")
    w.add(lunchbox)
    w.add(Place("cupboard", "offstage", "brown", -5.0, name="the cupboard"))
    expected = Thing("expected", usual, rng.choice(usual.colours), "cupboard")
    packed = Thing("packed", today, rng.choice(today.colours), "cupboard")
    for item in (parent, child, expected, packed):
        w.add(item)
    child.beliefs[expected.id] = lunchbox.id  # every day the lunchbox holds the usual food
    child.desires.append(usual.noun)
    w.leave(child.id)
    w.put(parent.id, packed.id, lunchbox.id)
    w.enter(child.id)
    thinks = [w.things[t].noun for t in w.believed_contents(child.id, lunchbox.id)]
    story = (f"Every day, {parent.name} packs {an(usual.noun)} in {child.name}'s lunchbox. {child.name} loves "
             f"{usual.plural}. Today, while {child.name} is outside, {parent.name} packs {an(today.noun)} instead and "
             f"closes the lunchbox. {child.name} comes in and picks up {child.poss} lunchbox.")
    b.turn(f"What did {parent.name} really pack today, {an(usual.noun)} or {an(today.noun)}?", an(w.contents(lunchbox.id)[0].noun),
           story=story, image=b.picture(w))
    b.turn(f"What does {child.name} think is in the lunchbox?", an(thinks[0]))
    b.turn(f"Why does {child.name} think that?",
           f"Because {parent.name} always packs {an(usual.noun)}, and {child.name} did not see {parent.name} pack the "
           f"{today.noun}.")
    b.turn(f"What does {child.name} want for lunch?", an(child.desires[-1]))
    feeling = w.feeling_about(child.id, w.contents(lunchbox.id)[0].noun)
    b.turn(f"How will {child.name} feel when {child.pronoun} opens the lunchbox, happy or sad?", feeling)
    b.facts.update(log=w.record(), usual=usual.noun, packed=today.noun, child_thinks=thinks, feeling=feeling)


# --- non-literal communication ----------------------------------------------------------------

def _sarcasm(rng: random.Random, b: StoryBuilder, image_dependent: bool, sincere: bool) -> None:
    cast = Cast(rng)
    w = World("kitchen")
    child, parent = cast.child(0.2), cast.adult(0.82)
    wanted, other = rng.sample(lex.SNACKS, 2)
    w.add(Place("table", "table", "brown", 0.5, name="the table"))
    w.add(Place("counter", "offstage", "brown", -5.0, name="the counter"))
    for item in (child, parent):
        w.add(item)
    w.request(child.id, wanted.noun)
    served = wanted if sincere else other
    food = Thing("food", served, rng.choice(served.colours), "counter")
    w.add(food)
    w.put(parent.id, food.id, "table")
    feeling = w.feeling_about(child.id, food.noun)
    child.expression = "happy" if feeling == "happy" else "cross"
    story = f"{child.name} asks {parent.name} for {an(wanted.noun)} for a snack."
    if image_dependent:
        story += f" {parent.name} puts a snack on the table. {child.name} looks at it and says, 'Mmm, my favourite!'"
    else:
        cue = ("with a big smile" if feeling == "happy" else "in a grumpy voice, rolling " + child.poss + " eyes")
        story += (f" {parent.name} brings {child.obj} {an(food.noun)}. {child.name} looks at it and says {cue}, "
                  "'Mmm, my favourite!'")
    why = (f"Because {child.pronoun} really likes {wanted.plural} and got what {child.pronoun} asked for."
           if feeling == "happy" else
           f"Because {child.pronoun} is being sarcastic. {cap(child.pronoun)} wanted {an(wanted.noun)}, not "
           f"{an(food.noun)}.")
    b.turn(f"Why did {child.name} say, 'Mmm, my favourite'?", why, story=story, image=b.picture(w))
    b.turn(f"Is {child.name} happy or sad?", feeling)
    b.facts.update(log=w.record(), asked_for=wanted.noun, got=food.noun, sarcastic=feeling != "happy")


def sarcasm(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    _sarcasm(rng, b, image_dependent, sincere=False)


def non_sarcasm(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    _sarcasm(rng, b, image_dependent, sincere=True)


# --- moral reasoning --------------------------------------------------------------------------

def _moral(rng: random.Random, b: StoryBuilder, image_dependent: bool, knowing: bool) -> None:
    cast = Cast(rng)
    w = World(rng.choice(("classroom", "playroom", "living room")))
    actor, victim = cast.child(0.12), cast.child(0.88)
    w.add(actor)
    w.add(victim)
    first, second = _two_containers(rng, w, (0.4, 0.62))
    own_word, victim_word, does, did = rng.choice(lex.HARMS)
    w.add(Place("hands", "offstage", "brown", -5.0, name="in hand"))
    own = Thing("own", lex.CARD, "yellow", "hands", owner=actor.id, noun_override=own_word)
    theirs = Thing("theirs", lex.CARD, rng.choice(("red", "blue", "green", "purple")), "hands", owner=victim.id,
                   noun_override=victim_word)
    w.add(own)
    w.add(theirs)
    w.put(actor.id, own.id, first.id)
    if not knowing:
        w.leave(actor.id)
    w.put(victim.id, own.id, second.id, kind="move")
    w.put(victim.id, theirs.id, first.id)
    w.leave(victim.id)
    if not knowing:
        w.enter(actor.id)
    image = b.picture(w)
    harm: Event = w.harm(actor.id, first.id)
    naughty = w.naughty(harm)
    yes_no = "yes" if naughty else "no"
    setup = (f"{actor.name} puts {actor.poss} {own_word} in {first.name}. "
             + (f"Then {actor.name} goes to get a drink. While {actor.name} is away, " if not knowing else
                f"{actor.name} is watching when ")
             + f"{victim.name} moves the {own_word} to {second.name} and puts {victim.poss} new {victim_word} in "
             f"{first.name} to keep it safe. Then {victim.name} goes out to play.")
    deed = f"{actor.name} opens {first.name}, takes out the paper inside and {does}."
    if not knowing:
        b.turn(f"{actor.name} comes back and wants {actor.poss} {own_word}. Where will {actor.pronoun} look for it, "
               f"in {first.name} or in {second.name}?",
               f"in {w.place_name(w.belief(actor.id, own.id))}", story=setup, image=image)
        b.turn(f"Why will {actor.pronoun} look there?", _why_false_belief(w, actor, own))
        b.turn(f"How does {victim.name} feel?", "sad",
               story=f"{deed} It was {victim.name}'s {victim_word}! {victim.name} comes back and sees it.")
    else:
        b.turn(f"Where is {actor.name}'s {own_word} now, in {first.name} or in {second.name}?",
               f"in {w.place_name(own.location)}", story=setup, image=image)
        b.turn(f"Did {actor.name} see {victim.name} put the {victim_word} in {first.name}?",
               "yes" if actor.beliefs.get(theirs.id) == first.id else "no",
               feedback=right_wrong("That's right.", f"Not quite: the {own_word} is in {second.name} now."))
        b.turn(f"Why is {victim.name} crying?",
               f"Because {actor.name} took {victim.poss} {victim_word} and {did}.",
               story=f"{actor.name} takes {victim.name}'s {victim_word} out of {first.name} and {does}. "
                     f"{victim.name} comes back, sees it and starts to cry.",
               feedback=right_wrong(f"Yes, {actor.name} saw it.", f"Actually, {actor.name} was watching, so "
                                                                  f"{actor.pronoun} saw it."))
    b.turn(f"Is {actor.name} naughty?", yes_no)
    b.turn(f"Should {actor.name} be in trouble?", yes_no,
           feedback=right_wrong("That's right.", f"Hmm, think about what {actor.name} knew.") if knowing else None)
    if knowing:
        b.turn(f"Should {actor.name} still be in trouble?",
               f"Yes. Because {actor.pronoun} spoiled {victim.name}'s {victim_word} on purpose, even though it is "
               "fixed now.",
               story=f"{actor.name}'s teacher helps {victim.name} make a new {victim_word}, and {victim.name} is "
                     "happy again.",
               feedback=right_wrong(f"Yes, {actor.name} did it on purpose.",
                                    f"Actually, {actor.name} knew it was {victim.name}'s {victim_word}."))
    else:
        b.turn("Why?", f"Because {actor.pronoun} thought it was {actor.poss} own {own_word}. {cap(actor.pronoun)} "
                       f"did not know {victim.name}'s {victim_word} was in {first.name}.")
    b.facts.update(log=w.record(), actor=actor.name, victim=victim.name, actor_knew=harm.knowing, naughty=naughty)


def moral_false_belief(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    _moral(rng, b, image_dependent, knowing=False)


def moral_true_belief(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    _moral(rng, b, image_dependent, knowing=True)


def lie_vs_false_statement(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    cast = Cast(rng)
    w = World("classroom")
    teacher, liar, victim = cast.adult(0.85, teacher=True), cast.child(0.12), cast.child(0.62)
    desk = Place("desk", "table", "brown", 0.42, name="the desk")
    outside = Place("outside", "offstage", "brown", 2.0, name="outside")
    victim.present = False
    sticker = Thing("sticker", lex.STICKER, rng.choice(("yellow", "orange", "pink", "green")), desk.id,
                    owner=victim.id)
    victim.desires.append(sticker.id)
    for item in (teacher, liar, victim, desk, outside, sticker):
        w.add(item)
    w.leave(teacher.id)
    w.take(liar.id, sticker.id)
    w.enter(teacher.id)
    lie = w.say_where(liar.id, sticker.id, outside.id)
    image = b.picture(w)
    s = sticker.describe()
    b.turn(f"Is {liar.name} lying?", "yes" if w.is_lie(lie) else "no",
           story=f"{teacher.name} puts {an(s)} on {teacher.poss} desk. It is a prize for {victim.name}. "
                 f"{teacher.name} leaves the room for a moment. While {teacher.pronoun} is gone, {liar.name} takes "
                 f"the sticker and hides it in {liar.poss} pocket. When {teacher.name} comes back, the desk is empty. "
                 f"{teacher.pronoun.capitalize()} asks {liar.name} where the sticker went. {liar.name} says, "
                 "'The wind blew it out of the window.'", image=image)
    b.turn("Is the sticker really outside?", "no" if lie.truth != lie.claim else "yes",
           feedback=right_wrong(f"Yes, {liar.name} is lying.", f"Hmm, {liar.name} knows where the sticker is."))
    w.enter(victim.id)
    repeat = w.say_where(teacher.id, sticker.id, outside.id)
    b.turn(f"Is {teacher.name} lying? Why or why not?",
           (f"No. Because {teacher.pronoun} does not know {liar.name} has it. {cap(teacher.pronoun)} thinks the wind "
            "took it." if not w.is_lie(repeat) else "Yes."),
           story=f"{victim.name} comes in and asks for {victim.poss} prize. {teacher.name} says, 'I am so sorry, "
                 "the wind blew your sticker out of the window. It is gone.'")
    b.turn("Is the sticker really lost outside?", "no" if w.is_false(repeat) else "yes",
           feedback=right_wrong(f"That's right, {teacher.name} believes what {liar.name} said.",
                                f"Actually, {teacher.name} believes what {liar.name} said."))
    feeling = "sad" if w.believes_lost(victim.id, sticker.id) else "fine"
    b.turn(f"How does {victim.name} feel, sad or fine?", feeling)
    b.turn(f"The sticker is safe in {liar.name}'s pocket, but {victim.name} feels {feeling}. Why?",
           f"Because {victim.pronoun} thinks the sticker is lost for good.")
    w.put(liar.id, sticker.id, desk.id)
    w.put("the wind", sticker.id, outside.id, kind="move")
    b.turn(f"Was {liar.name} lying earlier, when {liar.pronoun} said the wind blew the sticker away? Why or why not?",
           (f"Yes. Because when {liar.pronoun} said it, the sticker was really in {liar.poss} pocket."
            if w.is_lie(lie) else "No."),
           story=f"{liar.name} feels bad and puts the sticker back on the desk. Just then, a big gust of wind blows "
                 "it out of the open window. Now the sticker really is gone.")
    b.facts.update(log=w.record(), liar=liar.name, first_statement_lie=w.is_lie(lie), second_statement_lie=w.is_lie(repeat),
                   second_statement_false=w.is_false(repeat))


# --- second-order belief-desire ---------------------------------------------------------------

def second_order_belief_desire(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    cast = Cast(rng)
    w = World("living room")
    child, parent, other = cast.child(0.15), cast.adult(0.85), cast.adult(0.5)
    features = rng.sample(("stripes", "dots"), 2)
    words = {"stripes": "striped hat", "dots": "dotted hat"}
    colour = rng.choice(lex.HATS.colours)
    shop = Place("shop", "offstage", "brown", 3.0, name="the shop")
    bag = Place("bag", "bag", rng.choice(("orange", "blue", "green", "pink")), 0.65, closed=True, name="the bag",
                away=True)
    hats = [Thing(f"hat_{f}", lex.HATS, colour, shop.id, feature=f, noun_override=words[f]) for f in features]
    for item in (child, parent, other, shop, bag, *hats):
        w.add(item)
    first, second = hats
    w.request(child.id, first.noun)
    w.leave(parent.id)
    w.request(child.id, second.noun)
    thinks = parent.thinks_wants[child.id]
    in_stock = next(h for h in hats if h.noun != thinks)  # the hat the parent thinks she wants is sold out
    w.put(parent.id, in_stock.id, bag.id)
    bag.away = False  # the parent brings the bag home
    w.enter(parent.id)
    got = w.contents(bag.id)[0].noun
    story = (f"{child.name} asks {parent.name} for {an(first.noun)} for {child.poss} birthday. {parent.name} goes to "
             f"the shop. After {parent.name} has left, {child.name} tells {other.name}, 'I want {an(second.noun)} "
             f"now!' At the shop there are no {first.noun}s left, so {parent.name} buys {an(in_stock.noun)}. "
             f"{parent.name} comes home with a bag and says, 'I am sorry, I could not get the hat you wanted.'")
    b.turn(f"What does {parent.name} think {child.name} wants, {an(first.noun)} or {an(second.noun)}?", an(thinks), story=story, image=b.picture(w))
    b.turn(f"Why does {parent.name} say sorry?",
           f"Because {parent.name} thinks {child.name} wants {an(thinks)}, and {parent.pronoun} got {an(got)}.")
    b.turn(f"What does {child.name} want now?", an(child.desires[-1]),
           feedback=right_wrong("That's right.", f"Not quite: {parent.name} did not hear {child.name} change "
                                                 f"{child.poss} mind."))
    child.expression = "happy" if w.feeling_about(child.id, got) == "happy" else "sad"
    b.turn(f"What did {child.name} get?", an(got),
           feedback=right_wrong("Yes.", f"Actually, {child.name} wants {an(child.desires[-1])} now."))
    b.turn(f"Why is {child.name} surprised?",
           f"Because {parent.name} said sorry, but {parent.pronoun} got the {got} that {child.name} wanted.",
           story=f"{child.name} opens the bag and is surprised.",
           feedback=right_wrong(f"Yes, {child.name} got {an(got)}.", f"Look: {child.name} got {an(got)}."))
    b.facts.update(log=w.record(), parent_thinks=thinks, child_wants=child.desires[-1], got=got)


Generator = Callable[[random.Random, StoryBuilder, bool], None]

#: Task id -> generator; the keys are exactly the taxonomy's 18 task ids.
GENERATORS: dict[str, Generator] = {
    "common_desire": common_desire,
    "implicit_false_belief": implicit_false_belief,
    "diverse_desire": diverse_desire,
    "diverse_belief": diverse_belief,
    "reference_easy": reference_easy,
    "false_belief_location": false_belief_location,
    "moral_false_belief": moral_false_belief,
    "expectation_false_belief": expectation_false_belief,
    "reference_hard_referent": reference_hard_referent,
    "non_sarcasm": non_sarcasm,
    "reference_hard_perspective": reference_hard_perspective,
    "interpretation": interpretation,
    "emotion_reminder": emotion_reminder,
    "true_belief_action": true_belief_action,
    "moral_true_belief": moral_true_belief,
    "lie_vs_false_statement": lie_vs_false_statement,
    "second_order_belief_desire": second_order_belief_desire,
    "sarcasm": sarcasm,
}

#: Tasks with an image-dependent variant (the fact the questions need is only in the picture).
IMAGE_DEPENDENT_TASKS: frozenset[str] = frozenset({
    "common_desire", "diverse_desire", "reference_easy", "reference_hard_referent", "reference_hard_perspective",
    "interpretation", "sarcasm", "non_sarcasm",
})

#: Minimal pairs share their random draws (same names, things, places) and differ in one fact.
PAIRS: dict[str, str] = {"sarcasm": "non_sarcasm", "non_sarcasm": "sarcasm",
                         "moral_false_belief": "moral_true_belief", "moral_true_belief": "moral_false_belief"}
