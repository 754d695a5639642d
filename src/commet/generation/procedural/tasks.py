"""One generator per booklet task type (``GENERATORS``: task id -> function).

Each generator builds a :class:`World`, plays the story's events on it, takes pictures of
the states the turns show, and reads every expected answer, branch answer and feedback
text off the world: the agent's belief (not reality) in false-belief tasks, what the
listener can see in perspective tasks, whether a statement contradicted the speaker's
own belief in the lying task, and so on.

Counterbalancing (as in a psychology lab): every closed question lists its options in an
order randomised per item, with the right answer's position balanced within blocks of
:data:`BLOCK` items of a task; yes/no answers are balanced by story variants in which the
answer differs (a liar and an honestly mistaken speaker, ironic and sincere remarks, a
true-belief control beside a false-belief item), drawn the same balanced way. So a
respondent who never reads the story cannot beat chance (``commet audit``).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from commet.format.model import AnswerFeedback, Feedback, Option, Rubric, Turn
from commet.generation.procedural import lexicon as lex
from commet.generation.procedural.render import compose
from commet.generation.procedural.world import Agent, Occluder, Place, Thing, World

#: Items per counterbalancing block: every answer position and variant occurs equally often in a block.
BLOCK = 12
LABELS = ("A", "B", "C", "D", "E")


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def an(noun: str) -> str:
    """``a cookie``, ``an apple``."""
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


def join_or(items: list[str]) -> str:
    """``a or b``, ``a, b or c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def fill(text: str, agent: Agent) -> str:
    """Put an agent's pronouns into a pool phrase (``{pos}``, ``{obj}``, ``{sub}``)."""
    return text.format(pos=agent.poss, obj=agent.obj, sub=agent.pronoun)


@dataclass
class StoryBuilder:
    """Collects the turns, the scenes shown with them and a few world facts of one story.

    ``group`` and ``index`` place the story in its task's sequence, for counterbalancing:
    :meth:`balanced` draws a value that is exactly balanced within each block of items.
    """

    story_id: str
    rng: random.Random = field(default_factory=random.Random)
    group: str = ""
    index: int = 0
    seed: int = 0
    turns: list[Turn] = field(default_factory=list)
    scenes: dict[str, dict] = field(default_factory=dict)
    facts: dict[str, object] = field(default_factory=dict)

    def _sequence(self, key: str, n: int, length: int = BLOCK) -> list[int]:
        block = self.index // BLOCK
        sequence = [k % n for k in range(length - length % n)]
        random.Random(f"commet-balance:{self.seed}:{self.group}:{key}:{block}").shuffle(sequence)
        return sequence

    def balanced(self, key: str, n: int, given: tuple[str, int] | None = None) -> int:
        """A value in ``range(n)``; over each block of :data:`BLOCK` items every value occurs equally often.

        With ``given`` (another key and its n), the value is balanced within the items of the block that
        share that key's value: the two are crossed, so a respondent who answers one turn by position
        cannot use the other turn's position (branch turns, whose right answer follows the earlier pick).
        """
        position = self.index % BLOCK
        if given is None:
            sequence = self._sequence(key, n)
            return sequence[position] if position < len(sequence) else self.rng.randrange(n)
        first = self._sequence(*given)
        if position >= len(first):
            return self.rng.randrange(n)
        same = [j for j, v in enumerate(first) if v == first[position]]
        sub = self._sequence(f"{key}|{given[0]}={first[position]}", n, len(same))
        k = same.index(position)
        return sub[k] if k < len(sub) else self.rng.randrange(n)

    def picture(self, world: World) -> str:
        """Snapshot the world's current state as a scene; returns its image id."""
        image_id = f"{self.story_id}-img{len(self.scenes) + 1}"
        self.scenes[image_id] = compose(world, variant=sum(map(ord, self.story_id)))
        return image_id

    def turn(self, question: str, answers: str | list[str], story: str = "", image: str | None = None,
             feedback: Feedback | None = None, rubric: Rubric | None = None, options: list[Option] | None = None,
             kind: str = "open") -> None:
        answers = [answers] if isinstance(answers, str) else answers
        self.turns.append(Turn(story=story, question=question, answers=[cap(a) for a in answers], image=image,
                               feedback=feedback, rubric=rubric, options=options or [], meta={"type": kind}))

    def yes_no(self, question: str, answer: bool, why: str = "", **kwargs: object) -> None:
        """A yes/no question (no options shown); ``why`` follows the yes or no when the question asks why."""
        word = "yes" if answer else "no"
        self.turn(question, f"{cap(word)}. {why}" if why else word, kind="yes/no", **kwargs)  # type: ignore[arg-type]

    def choose(self, stem: str, options: list[str], answers: str | list[str], story: str = "",
               image: str | None = None, feedback: Feedback | None = None, labelled: bool = False) -> None:
        """A closed question: the options in a randomised order, the (first) answer's position balanced.

        ``answers`` are given in branch order (when several); ``options`` in any order. The question
        names the options ("..., the red one or the blue one?"), or lists them with letters.
        """
        answers = [answers] if isinstance(answers, str) else answers
        assert all(a in options for a in answers), (answers, options)
        branch_point = next((k for k, t in enumerate(self.turns) if len(t.answers) > 1), None)
        given = (f"position:{branch_point}", len(self.turns[branch_point].options)) \
            if branch_point is not None and len(answers) > 1 else None
        position = self.balanced(f"position:{len(self.turns)}", len(options), given)
        rest = [o for o in options if o != answers[0]]
        self.rng.shuffle(rest)
        ordered = rest[:position] + [answers[0]] + rest[position:]
        if labelled:
            shown = [Option(label=LABELS[k], text=o) for k, o in enumerate(ordered)]
            question = f"{stem}? " + " or ".join(f"{o.label}: '{o.text}'" for o in shown)
        else:
            shown = [Option(text=o) for o in ordered]
            question = f"{stem}, {join_or(ordered)}?"
        self.turn(question, answers, story=story, image=image, feedback=feedback, options=shown, kind="choice")

    def why(self, question: str, answer: str, key: str, false: list[str], story: str = "",
            feedback: Feedback | None = None, image: str | None = None) -> None:
        """An explanation question with its rubric: the key inference and the false inferences."""
        self.turn(question, answer, story=story, feedback=feedback, image=image,
                  rubric=Rubric(key_inference=key, false_inferences=false), kind="why")


def right_wrong(right: str, wrong: str) -> Feedback:
    return Feedback(right=right, wrong=wrong)


def keyed(texts: dict[str, str]) -> Feedback:
    """Feedback keyed by the previous turn's answers (given uncapitalised, as in :meth:`StoryBuilder.turn`)."""
    return Feedback(by_answer=[AnswerFeedback(answer=cap(a), text=t) for a, t in texts.items()])


class Cast:
    """Picks distinct names and pronouns for one story; shirts come from a palette no thing uses."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()
        self.shirts = list(lex.SHIRT_COLOURS)
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
    """Two closed containers of different colours (and, half the time, different kinds)."""
    colours = rng.sample(("red", "blue", "green", "yellow", "purple", "orange"), 2)
    kinds = [rng.choice(lex.CONTAINERS)] * 2 if rng.random() < 0.5 else rng.sample(lex.CONTAINERS, 2)
    places = []
    for k, (colour, x, kind) in enumerate(zip(colours, xs, kinds, strict=True)):
        place = Place(f"place{k + 1}", kind, colour, x, closed=True, name=f"the {colour} {kind}")
        w.add(place)
        places.append(place)
    return places[0], places[1]


def _room(rng: random.Random, indoors: bool = True) -> str:
    return rng.choice([r[0] for r in lex.ROOMS if not indoors or r[0] != "garden"])


def _back(w: World, agent: Agent, b: StoryBuilder) -> str:
    """The agent comes back into the room; a picture of that moment."""
    w.enter(agent.id)
    return b.picture(w)


def _why_belief(w: World, agent: Agent, thing: Thing) -> str:
    """The reason an agent looks where they do, from the events they did and did not perceive."""
    seen = w.last_seen_event(agent.id, thing.id)
    missed = w.missed_events(agent.id, thing.id)
    assert seen is not None and seen.dst is not None
    where = w.place_name(seen.dst)
    if seen.actor == agent.id:
        first = f"{agent.pronoun} put it in {where}"
    else:
        mover = w.agents[seen.actor].name if seen.actor in w.agents else seen.actor
        first = f"{agent.pronoun} saw {mover} put it in {where}"
    if not missed:
        return f"Because {first}."
    mover = w.agents[missed[-1].actor].name if missed[-1].actor in w.agents else missed[-1].actor
    return f"Because {first}, and {agent.pronoun} did not see {mover} move it to {w.place_name(missed[-1].dst or '')}."


# --- desire -----------------------------------------------------------------------------------

def _desire(rng: random.Random, b: StoryBuilder, image_dependent: bool, common: bool) -> None:
    cast = Cast(rng)
    w = World(_room(rng, indoors=False))
    child = cast.child(0.18)
    w.add(child)
    group, word = rng.choice(((lex.SNACKS, "snacks"), (lex.TOYS, "toys")))
    kinds = rng.sample(group, 2)
    w.add(Place("table", "table", "brown", 0.58, name="the table"))
    things = [Thing(f"thing{k + 1}", kind, rng.choice(kind.colours), "table") for k, kind in enumerate(kinds)]
    for thing in things:
        w.add(thing)
    a, c = things
    story = (f"{rng.choice(lex.OCCASIONS)}, and {child.name} may choose one of the two {word} on the table: "
             f"{an(a.describe())} or {an(c.describe())}.")
    names = [f"the {t.noun}" for t in things]
    b.choose("Which one would you choose", names, names, story=story, image=b.picture(w))
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
    b.choose(f"So which one will {child.name} take", names, picks, feedback=keyed(texts))
    b.facts.update(log=w.record(), child=child.name, options=[t.noun for t in things],
                   likes="same as you" if common else "the other")


def common_desire(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    _desire(rng, b, image_dependent, common=True)


def diverse_desire(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    _desire(rng, b, image_dependent, common=False)


# --- belief: location -----------------------------------------------------------------------

@dataclass
class _Moved:
    w: World
    owner: Agent
    mover: Agent
    thing: Thing
    first: Place
    second: Place
    story: str
    watched: bool
    before: str  # the picture of the owner putting the thing away


def _moved_object(rng: random.Random, b: StoryBuilder) -> _Moved:
    """An owner puts a thing in one container; someone else moves it to the other one, while the owner
    is away (the false-belief item) or watching (its true-belief control, half the items)."""
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
    watched = b.balanced("watched", 2) == 1
    leaves, away = (fill(p, owner) for p in rng.choice(lex.LEAVES))
    reason = rng.choice(lex.MOVE_REASONS)
    w.put(owner.id, thing.id, first.id)
    before = b.picture(w)  # the owner puts it away
    story = (f"{owner.name} and {mover.name} are in the {w.room}. {owner.name} puts {owner.poss} {thing.describe()} "
             f"in {first.name}. ")
    if watched:
        story += (f"{owner.name} stays and watches while {mover.name} takes the {thing.noun} out and puts it in "
                  f"{second.name} {reason}. Then {owner.name} wants {owner.poss} {thing.noun}.")
        w.put(mover.id, thing.id, second.id, kind="move")
    else:
        story += (f"Then {owner.name} {leaves}. While {owner.name} is {away}, {mover.name} takes the {thing.noun} "
                  f"out and puts it in {second.name} {reason}. Then {owner.name} comes back and wants "
                  f"{owner.poss} {thing.noun}.")
        w.leave(owner.id)
        w.put(mover.id, thing.id, second.id, kind="move")
        w.enter(owner.id)
    return _Moved(w, owner, mover, thing, first, second, story, watched, before)


def _belief_rubric(m: _Moved) -> tuple[str, list[str]]:
    o, where, other = m.owner.name, m.first.name, m.second.name
    if m.watched:
        return (f"{o} saw {m.mover.name} move it to {other}, so {o} knows it is there.",
                [f"{o} thinks it is still in {where}", f"{o} did not see it being moved"])
    return (f"{o} did not see {m.mover.name} move it, so {o} still thinks it is in {where}.",
            [f"{o} knows it was moved", f"{o} saw {m.mover.name} move it", f"{o} will look in {other}"])


def false_belief_location(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    m = _moved_object(rng, b)
    w, owner, thing = m.w, m.owner, m.thing
    places = [f"in {m.first.name}", f"in {m.second.name}"]
    b.choose(f"Where will {owner.name} look for {owner.poss} {thing.noun} first", places,
             f"in {w.place_name(w.belief(owner.id, thing.id))}", story=m.story, image=m.before)
    key, false = _belief_rubric(m)
    b.why(f"Why will {owner.name} look there?", _why_belief(w, owner, thing), key, false)
    b.choose(f"Where is the {thing.noun} really", places, f"in {w.place_name(thing.location)}", image=b.picture(w))
    b.facts.update(log=w.record(), thing=thing.noun, belief=w.belief(owner.id, thing.id), reality=thing.location,
                   variant="true-belief control" if m.watched else "false belief")


def implicit_false_belief(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    m = _moved_object(rng, b)
    w, owner, thing = m.w, m.owner, m.thing
    b.turn(f"What will {owner.name} do next?",
           f"look for the {thing.noun} in {w.place_name(w.belief(owner.id, thing.id))}", story=m.story,
           image=m.before)
    key, false = _belief_rubric(m)
    b.why(f"Why will {owner.name} do that?", _why_belief(w, owner, thing), key, false)
    b.facts.update(log=w.record(), thing=thing.noun, belief=w.belief(owner.id, thing.id), reality=thing.location,
                   variant="true-belief control" if m.watched else "false belief")


def diverse_belief(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    cast = Cast(rng)
    w = World(_room(rng))
    child = cast.child(0.15)
    w.add(child)
    places = _two_containers(rng, w, (0.45, 0.75))
    kind = rng.choice(lex.TOYS)
    image = b.picture(w)  # the lost thing is nowhere in sight
    names = [f"in {p.name}" for p in places]
    b.choose(f"Where do you think the {kind.noun} is", names, names,
             story=f"{child.name} cannot find {child.poss} {kind.noun} {rng.choice(lex.LOST_WHEN)}. It might be in "
                   f"{places[0].name}, or it might be in {places[1].name}.", image=image)
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
    b.choose(f"So where will {child.name} look for the {kind.noun}", names, looks, feedback=keyed(texts))
    b.choose(f"So where is the {kind.noun} really", names, really,
             story=f"{child.name} looks there, but the {kind.noun} is not there.",
             feedback=right_wrong(f"Yes, {child.name} looks where {child.pronoun} thinks it is.",
                                  f"Not quite: {child.name} looks where {child.pronoun} thinks the {kind.noun} is."))
    b.facts.update(log=w.record(), thing=kind.noun, places=[p.name for p in places],
                   belief="the place you did not pick")


def true_belief_action(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    cast = Cast(rng)
    w = World(rng.choice(("classroom", "art room", "library")))
    child, teacher = cast.child(0.12), cast.adult(0.88, teacher=True)
    w.add(child)
    w.add(teacher)
    first, second = _two_containers(rng, w, (0.38, 0.62))
    kind = rng.choice(lex.TOYS)
    thing = Thing("thing", kind, rng.choice(kind.colours), first.id)
    w.add(thing)
    child.beliefs[thing.id] = first.id  # the class always keeps it there
    leaves, _ = (fill(p, child) for p in rng.choice(lex.LEAVES))
    w.leave(child.id)
    w.put(teacher.id, thing.id, second.id, kind="move")
    w.enter(child.id)
    said = w.say_where(teacher.id, thing.id, second.id)
    plural = kind.plural
    story = (f"In {child.name}'s class, the {plural} are always kept in {first.name}. One day {child.name} {leaves}, "
             f"and {teacher.name} moves the {plural} to {second.name} {rng.choice(lex.MOVE_REASONS)}. When "
             f"{child.name} is back, {teacher.name} tells the whole class, 'The {plural} are in {second.name} now.' "
             f"{child.name} wants {an(kind.noun)} {fill(rng.choice(lex.WANTS_FOR), child)}.")
    places = [f"in {first.name}", f"in {second.name}"]
    b.choose(f"Where are the {plural} now", places, f"in {w.place_name(thing.location)}", story=story,
             image=b.picture(w))
    goes = w.place_name(w.belief(child.id, thing.id))
    b.choose(f"Where will {child.name} go to get {an(kind.noun)}", [f"to {first.name}", f"to {second.name}"],
             f"to {goes}",
             feedback=right_wrong("That's right.", f"Not quite: the {plural} are in {w.place_name(thing.location)} now."))
    assert w.perceived(child.id, said)
    b.why(f"Why will {child.name} go there?",
          f"Because {child.pronoun} heard {teacher.name} say the {plural} are in {w.place_name(said.claim or '')}.",
          f"{child.name} heard {teacher.name} say they were moved, so {child.name} knows where they are now.",
          [f"{child.name} saw {teacher.name} move them", f"{child.name} thinks they are still in {first.name}"],
          feedback=right_wrong(f"Yes, {child.name} goes to {goes}.", f"Actually, {child.name} goes to {goes}."))
    b.facts.update(log=w.record(), thing=plural, belief=w.belief(child.id, thing.id), reality=thing.location,
                   announced=True, habit=first.id)


# --- perception and reference ---------------------------------------------------------------

def _mirrored_room(rng: random.Random) -> tuple[Cast, World, Callable[[float], float]]:
    """A cast, a room and the map of positions in it: mirrored in half of the stories, so that the
    speaker (and what only the speaker sees) stands on the left as often as on the right."""
    cast = Cast(rng)
    w = World(_room(rng))
    flip = rng.random() < 0.5
    return cast, w, (lambda v: 1 - v) if flip else (lambda v: v)


def reference_easy(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    cast, w, x = _mirrored_room(rng)
    speaker, listener = cast.child(x(0.06)), cast.adult(x(0.94))
    kind = rng.choice(lex.TOYS)
    colour = rng.choice(kind.colours)
    surfaces = list(lex.SURFACES)[:: 1 if b.balanced("near surface", 2) else -1]  # which one the speaker sees
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
        story += (f" {cap(an(occ.kind))} stands between {speaker.name} and the {w.places[hidden.location].kind}, "
                  f"so {speaker.name} cannot see the {kind.noun} there.")
    story += (f" {speaker.name} wants one {fill(rng.choice(lex.WANTS_FOR), speaker)}, points and says, "
              "'I want that one!'")
    b.choose(f"Which {kind.noun} does {speaker.name} mean", list(where.values()), where[meant.location], story=story,
             image=b.picture(w))
    b.why("How do you know?",
          f"Because {speaker.name} can only see the {kind.noun} on {w.places[meant.location].name}. The {occ.kind} "
          f"hides the other one from {speaker.obj}.",
          f"{speaker.name} can only see the {kind.noun} on {w.places[meant.location].name}; the {occ.kind} hides the "
          "other one, so 'that one' must be the one she can see.".replace("she", speaker.pronoun),
          [f"{speaker.name} means the one {speaker.pronoun} cannot see", f"{listener.name} decides which one"])
    b.facts.update(log=w.record(), thing=kind.noun, speaker_sees=w.visible_things(speaker.id), meant=meant.id)


class _Why(NamedTuple):
    """An explanation question's expected answer, key inference and false inferences (:meth:`StoryBuilder.why`)."""

    answer: str
    key: str
    false: list[str]


def _mistaken_request(rng: random.Random, b: StoryBuilder, w: World, image_dependent: bool, *, story: str,
                      detail: str, asker: Agent, giver: Agent, kind: lex.Kind, verb: str, wish: str, call: str,
                      colours: list[str], given: Thing, wanted: Thing, why_given: _Why, handed: Feedback,
                      why_wanted: _Why, handed_story: str = "") -> None:
    """The story and four turns both hard reference tasks share: the asker asks for a thing in words the
    giver, who cannot see all the asker sees, takes for another; which one will the giver hand over and
    why, which one did the asker really want and how do you know. ``detail`` tells what the picture shows."""
    if not image_dependent:
        story += detail
    story += f" {asker.name} wants {wish} {fill(rng.choice(lex.WANTS_FOR), asker)} and {call}"
    names = [f"the {colour} one" for colour in colours]
    b.choose(f"Which {kind.noun} will {giver.name} {verb} {asker.name}", names, f"the {given.colour} one",
             story=story, image=b.picture(w))
    b.why(f"Why will {giver.name} {verb} that one?", *why_given)
    b.choose(f"Which {kind.noun} did {asker.name} really want", names, f"the {wanted.colour} one",
             story=handed_story, feedback=handed)
    b.why("How did you know?", *why_wanted,
          feedback=right_wrong(f"That's right, {asker.name} wanted the {wanted.colour} one.",
                               f"Actually, {asker.name} wanted the {wanted.colour} one."))


def reference_hard_perspective(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    cast, w, x = _mirrored_room(rng)
    child, helper = cast.child(x(0.5)), cast.adult(x(0.92))
    helper.present = False  # comes in after the screen is set up
    kind = rng.choice([k for k in lex.TOYS if k.shape != "book"])
    colours = rng.sample(kind.colours, 3)
    left, right = Place("left", "table", "brown", x(0.27), name="the first table"), \
        Place("right", "table", "brown", x(0.69), name="the second table")
    for item in (child, helper, left, right):
        w.add(item)
    things = [Thing(f"thing{s}", kind, c, left.id if s == 3 else right.id, size=s)
              for s, c in zip((3, 2, 1), colours, strict=True)]
    for thing in (things[0], *rng.sample(things[1:], 2)):
        w.add(thing)
    w.walk(child.id, x(0.07))  # the child set them out, then goes to her side of the screen
    occ = Occluder("occluder", rng.choice(lex.OCCLUDERS), x(0.47))
    w.add(occ)
    w.enter(helper.id)
    wanted = max((w.things[t] for t in child.beliefs), key=lambda t: t.size)
    given = max((w.things[t] for t in w.visible_things(helper.id)), key=lambda t: t.size)
    hidden = [t for t in things if not w.can_see(helper.id, t.id)]
    _mistaken_request(
        rng, b, w, image_dependent,
        story=f"{child.name} has three {kind.plural}: a big one, a middle-sized one and a small one.",
        detail=f" The big one is {wanted.colour}, the middle-sized one is {things[1].colour} and the small one "
               f"is {things[2].colour}. The big one is on the other side of {an(occ.kind)}, so {helper.name} "
               f"cannot see it from where {helper.pronoun} stands.",
        asker=child, giver=helper, kind=kind, verb="give", wish="the biggest one",
        call=f"says to {helper.name}, 'Please give me the big {kind.noun}!'",
        colours=[t.colour for t in things], given=given, wanted=wanted,
        why_given=_Why(f"Because {helper.name} cannot see the {hidden[0].colour} {kind.noun} behind the {occ.kind}, "
                       f"so the {given.colour} one is the biggest one {helper.pronoun} can see.",
                       f"The {occ.kind} hides the biggest one from {helper.name}, so the {given.colour} one is the "
                       f"biggest {helper.pronoun} can see.",
                       [f"{helper.name} knows about the {hidden[0].colour} one",
                        f"{helper.name} wants to keep the big one"]),
        handed=right_wrong(f"Yes! {helper.name} gives {child.name} the {given.colour} one.",
                           f"Look again: {helper.name} gives {child.name} the {given.colour} one."),
        why_wanted=_Why(f"Because the {wanted.colour} {kind.noun} is the biggest of all, and {child.name} can see "
                        f"it from where {child.pronoun} stands.",
                        f"{child.name} can see all three, and the {wanted.colour} one is the biggest of all.",
                        [f"{child.name} wanted the {given.colour} one",
                         f"{child.name} cannot see the {wanted.colour} one"]))
    b.facts.update(log=w.record(), thing=kind.noun, helper_sees=w.visible_things(helper.id), wanted=wanted.id,
                   given=given.id)


def reference_hard_referent(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    """A mistaken referent: 'the X next to the Y' picks out a different X for the listener, who cannot
    see the Y the speaker means (nothing is moved: two people, two views of one room)."""
    cast, w, x = _mirrored_room(rng)
    speaker, listener = cast.child(x(0.06)), cast.adult(x(0.94))
    kind, mark_kind = rng.sample([k for k in lex.TOYS if k.shape != "teddy"], 2)
    colours = rng.sample(kind.colours, 2)
    mark_colour = rng.choice([c for c in mark_kind.colours if c not in colours])
    surfaces = rng.sample(lex.SURFACES, 2)
    near = Place("near", surfaces[0], "brown", x(0.25), name=f"the {surfaces[0]}")
    far = Place("far", surfaces[1], "brown", x(0.71), name=f"the {surfaces[1]}")
    occ = Occluder("occluder", rng.choice(lex.OCCLUDERS), x(0.48))
    mine, theirs = Thing("target", kind, colours[0], near.id), Thing("other", kind, colours[1], far.id)
    mark1, mark2 = Thing("mark1", mark_kind, mark_colour, near.id), Thing("mark2", mark_kind, mark_colour, far.id)
    for item in (speaker, listener, near, far, occ, mine, mark1, theirs, mark2):
        w.add(item)
    mark = mark_kind.noun

    def next_to_mark(agent: Agent) -> Thing:
        seen = w.visible_things(agent.id)
        return next(w.things[t] for t in seen if w.things[t].kind == kind
                    and any(w.things[m].kind == mark_kind and w.things[m].location == w.things[t].location
                            for m in seen))

    meant, given = next_to_mark(speaker), next_to_mark(listener)
    _mistaken_request(
        rng, b, w, image_dependent,
        story=f"{speaker.name} and {listener.name} are in the {w.room}, at the two ends of the room. There are two "
              f"{kind.plural}, one on the {near.kind} and one on the {far.kind}, and next to each of them there is "
              f"{an(mark)} that looks just the same.",
        detail=f" {cap(an(occ.kind))} stands in the middle, so {speaker.name} can only see the {near.kind} and "
               f"{listener.name} can only see the {far.kind}. The {kind.noun} on the {near.kind} is "
               f"{mine.colour} and the one on the {far.kind} is {theirs.colour}.",
        asker=speaker, giver=listener, kind=kind, verb="bring", wish=f"a {kind.noun}",
        call=f"calls out, 'Please bring me the {kind.noun} next to the {mark}!'",
        colours=colours, given=given, wanted=meant,
        why_given=_Why(f"Because the only {mark} {listener.name} can see is next to the {given.colour} {kind.noun}.",
                       f"{listener.name} cannot see the {mark} on the {near.kind}; the only {mark} "
                       f"{listener.pronoun} sees is next to the {given.colour} one, so {listener.pronoun} thinks "
                       "that is the one meant.",
                       [f"{listener.name} knows which one {speaker.name} means",
                        f"{listener.name} brings the wrong one on purpose"]),
        handed=right_wrong(f"Yes, {listener.name} brings the {given.colour} one.",
                           f"Not quite: {listener.name} brings the {given.colour} one."),
        handed_story=f"{listener.name} brings the {given.colour} {kind.noun}. {speaker.name} frowns.",
        why_wanted=_Why(f"Because {speaker.name} can only see the {mark} next to the {meant.colour} {kind.noun}; "
                        f"{speaker.pronoun} did not know there is another {mark} next to the other one.",
                        f"{speaker.name} meant the {kind.noun} next to the {mark} {speaker.pronoun} can see, the "
                        f"{meant.colour} one; the words fit a different one for the listener.",
                        [f"{speaker.name} wanted the {given.colour} one",
                         f"{speaker.name} knew about both {mark_kind.plural}"]))
    b.facts.update(log=w.record(), thing=kind.noun, landmark=mark, meant=meant.id, given=given.id)


_FEATURE_WORDS = {"sunglasses": "wearing sunglasses", "bow": "with a bow", "stripes": "with stripes",
                  "dots": "with dots"}


def interpretation(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    """Is a description ambiguous? A row where the child's clue fits one thing, or two; which clue is
    better: by colour or by feature (the one that fits exactly one thing)."""
    cast = Cast(rng)
    w = World(_room(rng))
    child, helper = cast.child(0.08), cast.adult(0.92)
    w.add(child)
    w.add(helper)
    kind = rng.choice([k for k in lex.TOYS if k.shape in ("duck", "teddy", "ball")])
    feature = rng.choice(("sunglasses", "bow") if kind.shape != "ball" else ("stripes", "dots"))
    c, c2, c3 = rng.sample(kind.colours, 3)
    colour_unique = b.balanced("colour unique", 2) == 1
    # the wanted one is (c, feature); a second thing shares the feature or the colour, never both
    specs = [(c, feature), (c2, feature) if colour_unique else (c, None), (c3, None), (c2, None)]
    rng.shuffle(specs)
    w.add(Place("shelf", "shelf", "brown", 0.5, name="the shelf"))
    for k, (colour, feat) in enumerate(specs):
        w.add(Thing(f"thing{k + 1}", kind, colour, "shelf", feature=feat))
    row = sorted(w.things.values(), key=lambda t: w.thing_x(t.id))
    target = next(t for t in row if t.colour == c and t.feature == feature)
    by_colour, by_feature = f"the {c} {kind.noun}", f"the {kind.noun} {_FEATURE_WORDS[feature]}"
    fits = {by_colour: [t.id for t in row if t.colour == c], by_feature: [t.id for t in row if t.feature == feature]}
    better = next(clue for clue, ids in fits.items() if len(ids) == 1)
    listed = ", ".join(an(f"{t.colour} {kind.noun}" + (f" {_FEATURE_WORDS[t.feature]}" if t.feature else ""))
                       for t in row)
    story = f"{child.name} {rng.choice(('collects', 'loves', 'plays with'))} {kind.plural}."
    story += (f" On the shelf, from left to right, there are {listed}." if not image_dependent else
              f" Four {kind.plural} sit in a row on the shelf.")
    story += (f" {child.name} wants the {c} one {_FEATURE_WORDS[feature]} {fill(rng.choice(lex.WANTS_FOR), child)} "
              f"and asks {helper.name}, 'Please get me {by_feature}!'")
    unique = len(fits[by_feature]) == 1
    b.yes_no(f"Can {helper.name} tell for sure which {kind.noun} {child.name} means?", unique, story=story,
             image=b.picture(w))
    n_feature = len(fits[by_feature])
    b.why("Why or why not?",
          f"Because only one {kind.noun} is {_FEATURE_WORDS[feature]}." if unique else
          f"Because two {kind.plural} are {_FEATURE_WORDS[feature]}.",
          f"{n_feature} {kind.noun}{'s' if n_feature > 1 else ''} on the shelf fit{'' if n_feature > 1 else 's'} "
          f"'{by_feature}', so the clue {'picks out one' if unique else 'does not pick out one'}.",
          ["every clue is equally good", f"{helper.name} can read {child.name}'s mind"],
          feedback=right_wrong("That's right.", "Look at the shelf again."))
    b.choose(f"Which clue tells {helper.name} exactly which {kind.noun} {child.name} wants", [by_colour, by_feature],
             better, labelled=True)
    b.why("Why is that the better clue?",
          f"Because only one {kind.noun} fits '{better}'.",
          f"'{better}' fits exactly one {kind.noun} on the shelf; the other clue fits two.",
          ["the longer clue is better", "both clues fit only one"],
          feedback=right_wrong("That's right.", f"Not quite: '{better}' is the better clue."))
    b.facts.update(log=w.record(), thing=kind.noun, row=[t.id for t in row], target=target.id,
                   clue_matches={clue: len(ids) for clue, ids in fits.items()})


# --- emotion ----------------------------------------------------------------------------------

def emotion_reminder(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    cast = Cast(rng)
    w = World("garden")
    child = cast.child(0.3)
    w.add(child)
    animal, bad, good, looks = rng.choice(lex.ANIMALS)
    where = rng.choice(lex.MEETINGS)
    harmed = b.balanced("bad memory", 2) == 1
    did = fill(bad if harmed else good, child)
    if harmed:
        w.past_harm(f"the {animal}", child.id, did)
    else:
        w.past_kindness(f"the {animal}", child.id, did)
    feeling = w.feeling_toward(child.id, f"the {animal}")
    b.choose(f"How does {child.name} feel when {child.pronoun} sees the {animal}", ["happy", "scared"], feeling,
             story=f"{child.name} remembers last week at the {where}: {an(animal)} {did}. Today {child.name} goes to "
                   f"the {where} again, and there is the same {animal}, {looks}.")
    b.why("Why?", f"Because last week the {animal} {did}.",
          f"{child.name} remembers what the {animal} did last week" + (", and is afraid it will happen again."
                                                                        if harmed else ", and liked it."),
          ["how the animal looks today decides the feeling", "the child has never met the animal"])
    near_far = "far from it" if feeling == "scared" else "near it"
    b.choose(f"Where will {child.name} sit", ["near it", "far from it"], near_far)
    b.why(f"Why will {child.pronoun} sit there?",
          f"Because {child.pronoun} is afraid the {animal} will hurt {child.obj} again." if feeling == "scared"
          else f"Because {child.pronoun} likes the {animal}.",
          f"{child.name} is {'afraid of' if harmed else 'fond of'} the {animal} because of last week.",
          ["the animal looks friendly, so the child is not afraid" if harmed else "all animals are scary"],
          feedback=right_wrong("That's right.", f"Think about what happened at the {where} last week."))
    b.facts.update(log=w.record(), animal=animal, remembers_harm=harmed, feeling=feeling)


def expectation_false_belief(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    """A familiar container with unexpected contents; the child's expectation is asked before opening.

    Variants: the child did not see the packing (false belief) or watched it (true-belief control);
    the child loves the usual food or is tired of it (so the expectation feels good or bad).
    """
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
    watched = b.balanced("watched", 2) == 1
    loves_usual = b.balanced("loves usual", 2) == 1
    child.beliefs[expected.id] = lunchbox.id  # every day the lunchbox holds the usual food
    child.desires.append(usual.noun if loves_usual else today.noun)
    occasion = rng.choice(lex.LUNCH_OCCASIONS)
    story = (f"Every day, {parent.name} packs {an(usual.noun)} in {child.name}'s lunchbox {occasion}. "
             + (f"{child.name} loves {usual.plural}. " if loves_usual else
                f"{child.name} {rng.choice(lex.TIRED_OF)} and would love {an(today.noun)} instead. "))
    if watched:
        w.put(parent.id, packed.id, lunchbox.id)
        w.agents[child.id].beliefs.pop(expected.id)  # saw what went in instead
        story += (f"Today {child.name} sits at the table and watches {parent.name} pack {an(today.noun)} instead "
                  f"and close the lunchbox. Then {child.name} picks up {child.poss} lunchbox.")
    else:
        _, away = (fill(p, child) for p in rng.choice(lex.LEAVES))
        w.leave(child.id)
        w.put(parent.id, packed.id, lunchbox.id)
        w.enter(child.id)
        story += (f"Today, while {child.name} is {away}, "
                  f"{parent.name} packs {an(today.noun)} instead and closes the lunchbox. Later {child.name} picks "
                  f"up {child.poss} lunchbox.")
    foods = [an(usual.noun), an(today.noun)]
    b.choose(f"What did {parent.name} really pack today", foods, an(w.contents(lunchbox.id)[0].noun), story=story,
             image=b.picture(w))
    thinks = [w.things[t].noun for t in w.believed_contents(child.id, lunchbox.id)]
    b.choose(f"Before opening it, what does {child.name} think is in the lunchbox", foods, an(thinks[0]))
    b.why(f"Why does {child.name} think that?",
          f"Because {child.pronoun} saw {parent.name} pack the {today.noun}." if watched else
          f"Because {parent.name} always packs {an(usual.noun)}, and {child.name} did not see {parent.name} pack the "
          f"{today.noun}.",
          (f"{child.name} watched the packing, so {child.pronoun} knows it is {an(today.noun)}." if watched else
           f"{child.name} did not see the packing, so {child.pronoun} expects the usual {usual.noun}."),
          [f"{child.name} knows what is inside without seeing it" if not watched else
           f"{child.name} thinks it is the usual {usual.noun}", "the lunchbox is see-through"],
          feedback=right_wrong("That's right.", f"Not quite: {child.name} thinks it is {an(thinks[0])}."))
    b.choose(f"What does {child.name} want for lunch", foods, an(child.desires[-1]))
    feeling = w.feeling_about(child.id, thinks[0])  # what the child expects, before opening
    b.choose(f"Before {child.name} opens the lunchbox, how does {child.pronoun} feel", ["happy", "sad"], feeling,
             feedback=right_wrong("That's right.", f"Actually, {child.name} wants {an(child.desires[-1])}."))
    b.facts.update(log=w.record(), usual=usual.noun, packed=today.noun, child_thinks=thinks, feeling=feeling,
                   watched=watched, wants=child.desires[-1])


# --- non-literal communication ----------------------------------------------------------------

def _sarcasm(rng: random.Random, b: StoryBuilder, image_dependent: bool, sincere: bool) -> None:
    """Ironic remarks (sarcasm) and sincere ones (control); in each task, half the remarks are praise and
    half complaints, so the feeling (happy or sad) is balanced and must be read off the story."""
    cast = Cast(rng)
    w = World(rng.choice(("kitchen", "dining room", "living room")))
    child, parent = cast.child(0.2), cast.adult(0.82)
    wanted, other = rng.sample(lex.SNACKS, 2)
    w.add(Place("table", "table", "brown", 0.5, name="the table"))
    w.add(Place("counter", "offstage", "brown", -5.0, name="the counter"))
    for item in (child, parent):
        w.add(item)
    gets_wanted = b.balanced("gets wanted", 2) == 1
    w.request(child.id, wanted.noun)
    served = wanted if gets_wanted else other
    food = Thing("food", served, rng.choice(served.colours), "counter")
    w.add(food)
    w.put(parent.id, food.id, "table")
    feeling = w.feeling_about(child.id, food.noun)
    praise = (feeling == "happy") == sincere  # sincere praise when happy; ironic praise (sarcasm) when not
    remark = rng.choice(lex.PRAISE if praise else lex.COMPLAINT)
    child.expression = "happy" if feeling == "happy" else "cross"
    when = fill(rng.choice(lex.MEALTIMES), child)
    story = f"{cap(when)}, {child.name} asks {parent.name} for {an(wanted.noun)}."
    if image_dependent:
        story += f" {parent.name} puts a snack on the table. {child.name} looks at it and says, '{remark}'"
    else:
        cue = "with a big grin" if feeling == "happy" else f"in a grumpy voice, rolling {child.poss} eyes"
        story += f" {parent.name} brings {child.obj} {an(food.noun)}. {child.name} looks at it and says {cue}, '{remark}'"
    if feeling == "happy":
        why = (f"Because {child.pronoun} really likes {wanted.plural} and got what {child.pronoun} asked for." if sincere
               else f"Because {child.pronoun} is joking. {cap(child.pronoun)} got the {wanted.noun} {child.pronoun} "
                    "wanted and is happy.")
    else:
        why = (f"Because {child.pronoun} is being sarcastic. {cap(child.pronoun)} wanted {an(wanted.noun)}, not "
               f"{an(food.noun)}." if not sincere else
               f"Because {child.pronoun} wanted {an(wanted.noun)}, not {an(food.noun)}, and is disappointed.")
    meaning = "means the opposite of what the words say" if not sincere else "means what the words say"
    b.why(f"Why did {child.name} say, '{remark}'?", why,
          f"{child.name} got {'what' if feeling == 'happy' else 'not what'} {child.pronoun} asked for and "
          f"{meaning}.",
          [f"{child.name} " + ("means it literally" if not sincere else "is joking"),
           f"{child.name} is {'sad' if feeling == 'happy' else 'happy'}"], story=story, image=b.picture(w))
    b.choose(f"How does {child.name} feel", ["happy", "sad"], feeling)
    b.facts.update(log=w.record(), asked_for=wanted.noun, got=food.noun, sarcastic=not sincere, remark=remark,
                   feeling=feeling)


def sarcasm(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    _sarcasm(rng, b, image_dependent, sincere=False)


def non_sarcasm(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    _sarcasm(rng, b, image_dependent, sincere=True)


# --- moral reasoning --------------------------------------------------------------------------

def _moral(rng: random.Random, b: StoryBuilder, image_dependent: bool, main_knowing: bool) -> None:
    """Two papers that look just the same; a helper tidying (with no intent against anyone) swaps where
    they are. The actor spoils the one in her box: by mistake when she was away (false belief) or
    knowingly when she watched the swap. Each task has its main item and the other as a control,
    balanced; the image-dependent variant leaves whether the actor watched to the picture."""
    cast = Cast(rng)
    w = World(rng.choice(("classroom", "playroom", "living room", "art room", "bedroom")))
    actor, victim, helper = cast.child(0.12), cast.child(0.9), cast.adult(0.72)
    for agent in (actor, victim, helper):
        w.add(agent)
    first, second = _two_containers(rng, w, (0.33, 0.55))
    own_word, victim_word, does, did = rng.choice(lex.HARMS)
    victim_word = fill(victim_word, victim)
    colour = rng.choice(("yellow", "blue", "green", "pink"))
    w.add(Place("hands", "offstage", "brown", -5.0, name="in hand"))
    own = Thing("own", lex.CARD, colour, "hands", owner=actor.id, noun_override=own_word)
    theirs = Thing("theirs", lex.CARD, colour, "hands", owner=victim.id, noun_override=victim_word)
    w.add(own)
    w.add(theirs)
    knowing = (b.balanced("knowing", 2) == 1) == main_knowing  # the pair members always differ in this fact
    leaves, away = (fill(p, actor) for p in rng.choice(lex.LEAVES))
    w.put(actor.id, own.id, first.id)
    story = (f"{actor.name}, {victim.name} and {helper.name} are in the {w.room}. {actor.name} puts {actor.poss} "
             f"{own_word} in {first.name}. {victim.name} has {an(victim_word)}, and it looks just the same: the same "
             f"size, the same {colour} colour. ")
    if not knowing:
        w.leave(actor.id)
    tidy = rng.choice(lex.TIDY_REASONS)
    w.put(helper.id, own.id, second.id, kind="move")
    w.put(helper.id, theirs.id, first.id)
    image = b.picture(w)  # the swap: the actor is in the picture when she watched it
    if image_dependent:
        story += (f"{actor.name} wears {an(actor.shirt)} top. Then {helper.name} tidies up {tidy}: {helper.pronoun} "
                  f"moves {actor.name}'s {own_word} to {second.name} and puts {victim.name}'s {victim_word} in "
                  f"{first.name}. The picture shows who is in the room while {helper.pronoun} does it.")
    elif knowing:
        story += (f"{actor.name} watches while {helper.name} tidies up {tidy}: {helper.pronoun} moves "
                  f"{actor.name}'s {own_word} to {second.name} and puts {victim.name}'s {victim_word} in "
                  f"{first.name}.")
    else:
        story += (f"Then {actor.name} {leaves}. While {actor.name} is {away}, {helper.name} tidies up {tidy}: "
                  f"{helper.pronoun} moves {actor.name}'s {own_word} to {second.name} and puts {victim.name}'s "
                  f"{victim_word} in {first.name}.")
    story += f" Then {victim.name} goes out to play."
    w.leave(victim.id)
    if not knowing:
        w.enter(actor.id)
    harm = w.harm(actor.id, first.id)
    assert harm.knowing == knowing
    naughty = w.naughty(harm)
    deed = f"{actor.name} opens {first.name}, takes out the paper inside and {does}."
    places = [f"in {first.name}", f"in {second.name}"]
    if not main_knowing:  # moral_false_belief, the booklet's order
        b.choose(f"{actor.name} wants {actor.poss} {own_word}. Where will {actor.pronoun} look for it", places,
                 f"in {w.place_name(w.belief(actor.id, own.id))}", story=story, image=image)
        b.why(f"Why will {actor.pronoun} look there?", _why_belief(w, actor, own),
              (f"{actor.name} saw {helper.name} move it, so {actor.pronoun} knows where it is." if knowing else
               f"{actor.name} did not see {helper.name} swap the papers, so {actor.pronoun} thinks {actor.poss} "
               f"{own_word} is still in {first.name}."),
              [f"{actor.name} wants to spoil {victim.name}'s {victim_word}" if not knowing else
               f"{actor.name} thinks it is still in {first.name}", "the papers look different"])
        w.enter(victim.id)
        b.turn(f"How does {victim.name} feel?", "sad",
               story=f"{deed} It was {victim.name}'s {victim_word}! {victim.name} comes back and sees it.",
               image=b.picture(w))
    else:  # moral_true_belief
        b.choose(f"Where is {actor.name}'s own {own_word} now", places, f"in {w.place_name(own.location)}",
                 story=story, image=image)
        saw = actor.beliefs.get(theirs.id) == first.id
        b.yes_no(f"Did {actor.name} see {helper.name} put {victim.name}'s {victim_word} in {first.name}?", saw,
                 feedback=right_wrong("That's right.", f"Not quite: {actor.name}'s {own_word} is in {second.name} "
                                                       "now."))
        b.why(f"Why is {victim.name} crying?", f"Because {actor.name} took {victim.poss} {victim_word} and {did}.",
              f"{actor.name} spoiled {victim.name}'s {victim_word}, which {victim.name} cared about.",
              [f"{victim.name} spoiled it {victim.obj}self".replace("herself", "her").replace("himself", "him"),
               f"{victim.name} lost {victim.poss} {victim_word}"],
              story=f"{deed} {victim.name} comes back, sees it and starts to cry.", image=_back(w, victim, b),
              feedback=right_wrong(f"Yes, {actor.name} {'saw' if saw else 'did not see'} it.",
                                   f"Actually, {actor.name} {'was watching' if saw else 'was away'}."))
    b.yes_no(f"Is {actor.name} naughty?", naughty)
    b.yes_no(f"Should {actor.name} be in trouble?", naughty)
    know_why = (f"{actor.pronoun} knew it was {victim.name}'s {victim_word} and spoiled it anyway" if knowing else
                f"{actor.pronoun} thought it was {actor.poss} own {own_word}; {actor.pronoun} did not know "
                f"{victim.name}'s {victim_word} was in {first.name}")
    rubric_key = (f"{actor.name} knew whose it was, so spoiling it was on purpose." if knowing else
                  f"{actor.name} did not know it was {victim.name}'s {victim_word}: it was an accident.")
    false = ([f"{actor.name} did it by accident", "it is fine because it looked like hers"] if knowing else
             [f"{actor.name} did it on purpose", f"{actor.name} should be punished because the paper was spoiled"])
    trouble_feedback = right_wrong("That's right.", f"Think about what {actor.name} knew.")
    if main_knowing:
        b.yes_no(f"Should {actor.name} still be in trouble?", naughty, why=f"Because {know_why}.",
                 story=f"{helper.name} helps {victim.name} make a new {victim_word.split(' for ')[0]}, and "
                       f"{victim.name} is happy again.", feedback=trouble_feedback)
        b.turns[-1] = b.turns[-1].model_copy(update={"rubric": Rubric(key_inference=rubric_key,
                                                                       false_inferences=false)})
    else:
        b.why("Why?", f"Because {know_why}.", rubric_key, false, feedback=trouble_feedback)
    b.facts.update(log=w.record(), actor=actor.name, victim=victim.name, actor_knew=harm.knowing, naughty=naughty)


def moral_false_belief(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    _moral(rng, b, image_dependent, main_knowing=False)


def moral_true_belief(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    _moral(rng, b, image_dependent, main_knowing=True)


def lie_vs_false_statement(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    """A statement about where a prize went, by a liar or by an honestly mistaken child; the teacher
    repeats it believing it or knowing better; the owner believes it or knows better. Each of the
    three is a balanced variant; the image-dependent variant shows only in the picture who took it."""
    cast = Cast(rng)
    w = World(rng.choice(("classroom", "art room", "library")))
    teacher, speaker, other, victim = (cast.adult(0.9, teacher=True), cast.child(0.08), cast.child(0.24),
                                       cast.child(0.68))
    desk = Place("desk", "table", "brown", 0.47, name="the desk")
    outside = Place("outside", "offstage", "brown", 2.0, name="outside")
    prize_word = rng.choice(lex.PRIZES)
    prize = Thing("prize", lex.STICKER, rng.choice(("yellow", "orange", "pink", "green")), desk.id, owner=victim.id,
                  noun_override=prize_word)
    victim.desires.append(prize.id)
    for item in (teacher, speaker, other, victim, desk, outside, prize):
        w.add(item)
    lies = b.balanced("speaker took it", 2) == 1
    teacher_saw = b.balanced("teacher saw", 2) == 1
    victim_saw = b.balanced("victim saw", 2) == 1
    taker, absent = (speaker, other) if lies else (other, speaker)
    excuse, later = rng.choice(lex.EXCUSES)
    t, p = teacher.name, prize_word
    story = (f"{t} has {an(prize.describe())} ready for {victim.name}, {rng.choice(lex.PRIZE_REASONS)}; it lies on "
             f"the desk. ")
    story += (f"{t} goes to the far end of the room to water the plants; from there {teacher.pronoun} can still see "
              "the desk. " if teacher_saw else f"{t} steps out to fetch the register. ")
    story += (f"{victim.name} is standing at the door. " if victim_saw else f"{victim.name} is out at play. ")
    if not teacher_saw:
        w.leave(teacher.id)
    if not victim_saw:
        w.leave(victim.id)
    w.leave(absent.id)
    w.take(taker.id, prize.id)
    image = b.picture(w)  # who is in the room when it goes: the taker
    if image_dependent:
        story += (f"{speaker.name} wears {an(speaker.shirt)} top and {other.name} {an(other.shirt)} one. One of the two "
                  f"goes out to get a book, and the other one takes the {p} and hides it in a pocket (the picture "
                  "shows who stayed). ")
    elif lies:
        story += f"{other.name} goes out to get a book, and {speaker.name} takes the {p} and hides it in a pocket. "
    else:
        story += f"{speaker.name} goes out to get a book, and {other.name} takes the {p} and hides it in a pocket. "
    w.enter(absent.id)
    if not teacher_saw:
        w.enter(teacher.id)
    if not lies:
        w.guess(speaker.id, prize.id, outside.id)  # sees the empty desk and the open window: an honest guess
    story += (f"Back at the desk, {t} finds it bare and turns to {speaker.name}: 'What happened to the {p}?' "
              f"{speaker.name} answers, '{excuse}'")
    said = w.say_where(speaker.id, prize.id, outside.id)
    b.yes_no(f"Is {speaker.name} lying?", w.is_lie(said), story=story, image=image)
    knows = w.belief(speaker.id, prize.id) == prize.location
    b.yes_no(f"Does {speaker.name} know where the {p} really is?", knows,
             feedback=right_wrong("That's right.", f"Think about what {speaker.name} knew when speaking."))
    if not victim_saw:
        w.enter(victim.id)
    repeat = w.say_where(teacher.id, prize.id, outside.id)
    teacher_lies = w.is_lie(repeat)
    b.yes_no(f"Is {t} lying? Why or why not?", teacher_lies,
             why=(f"Because {teacher.pronoun} saw {taker.name} take it, so {teacher.pronoun} knows where it is."
                  if teacher_lies else f"Because {teacher.pronoun} does not know {taker.name} has it; "
                                       f"{teacher.pronoun} believes what {speaker.name} said."),
             story=f"At the end of the day {victim.name} asks for the prize. {t} tells {victim.obj}, 'Bad news. {excuse}'",
             image=b.picture(w),
             feedback=right_wrong(f"Yes, {speaker.name} {'knows' if knows else 'does not know'} where it is.",
                                  f"Actually, {speaker.name} {'knows' if knows else 'does not know'} where it is."))
    b.turns[-1] = b.turns[-1].model_copy(update={"rubric": Rubric(
        key_inference=(f"{t} saw {taker.name} take it and says otherwise, so it is a lie." if teacher_lies else
                       f"{t} believes the story, so it is a false statement, not a lie."),
        false_inferences=["saying something false is always lying" if not teacher_lies else
                          "teachers never lie", f"{t} knows {taker.name} has it" if not teacher_lies else
                          f"{t} believes the {p} is outside"])})
    b.yes_no(f"Does {t} know where the {p} really is?", w.belief(teacher.id, prize.id) == prize.location)
    lost = w.believes_lost(victim.id, prize.id)
    feeling = "sad" if lost else "fine"
    b.choose(f"How does {victim.name} feel about the {p}", ["sad", "fine"], feeling,
             feedback=right_wrong("That's right.", f"Think about what {t} knows."))
    b.why(f"The {p} is safe in {taker.name}'s pocket. Why does {victim.name} feel {feeling}?",
          (f"Because {victim.pronoun} thinks the {p} is lost for good." if lost else
           f"Because {victim.pronoun} saw {taker.name} take it, so {victim.pronoun} knows it is not lost."),
          (f"{victim.name} believes what {t} said, so {victim.pronoun} thinks it is gone." if lost else
           f"{victim.name} saw who took it, so {victim.pronoun} knows it is safe."),
          [f"{victim.name} knows where the {p} is" if lost else f"{victim.name} thinks the {p} is lost",
           f"{victim.name} feels what is true, not what {victim.pronoun} believes"],
          feedback=right_wrong(f"Yes, {victim.name} feels {feeling}.", f"Actually, {victim.name} feels {feeling}."))
    w.put(taker.id, prize.id, desk.id)
    w.put("chance", prize.id, outside.id, kind="move")
    b.yes_no(f"Think back to what {speaker.name} told {t}. Was that a lie? Why or why not?", w.is_lie(said),
             why=(f"Because when {speaker.pronoun} said it, the {p} was really in {speaker.poss} pocket." if lies else
                  f"Because {speaker.pronoun} believed it when {speaker.pronoun} said it."),
             story=f"{taker.name}, feeling guilty, slips the {p} back onto the desk, but {later}, so this time it "
                   "really is lost.",
             feedback=right_wrong("That's right.", (f"Remember, {victim.name} believes what {t} said." if lost else
                                                    f"Remember, {victim.name} saw {taker.name} take it.")))
    b.turns[-1] = b.turns[-1].model_copy(update={"rubric": Rubric(
        key_inference=("A lie depends on what the speaker believed when speaking: " +
                       (f"{speaker.name} knew the {p} was in {speaker.poss} pocket." if lies else
                        f"{speaker.name} believed what {speaker.pronoun} said.")),
        false_inferences=["it came true later, so it was not a lie" if lies else "it was false when said, so it "
                                                                                 "was a lie"])})
    b.facts.update(log=w.record(), speaker=speaker.name, taker=taker.name, first_statement_lie=w.is_lie(said),
                   second_statement_lie=teacher_lies, victim_thinks_lost=lost)


# --- second-order belief-desire ---------------------------------------------------------------

def second_order_belief_desire(rng: random.Random, b: StoryBuilder, image_dependent: bool) -> None:
    """The paper's Figure 1 logic: the child changes the request as the parent leaves, believes the
    parent heard it, but the parent did not; the parent, unable to get the first toy, buys the second
    and says sorry; the child, who thinks the parent knew, does not expect it and is surprised."""
    cast = Cast(rng)
    w = World(rng.choice(("living room", "hallway", "kitchen", "bedroom")))
    child, parent = cast.child(0.12), cast.adult(0.82)
    first_kind, second_kind = rng.sample(lex.TOYS, 2)
    c1, c2 = rng.choice(first_kind.colours), rng.choice(second_kind.colours)
    shop = Place("shop", "offstage", "brown", 3.0, name="the shop")
    bag = Place("bag", "bag", rng.choice(("orange", "blue", "green", "pink")), 0.58, closed=True, name="the bag",
                away=True)
    w.add(Place("table", "table", "brown", 0.36, name="the table"))
    first = Thing("gift1", first_kind, c1, shop.id)
    second = Thing("gift2", second_kind, c2, shop.id)
    for item in (child, parent, shop, bag, first, second):
        w.add(item)
    occasion = fill(rng.choice(lex.GIFT_OCCASIONS), child)
    noise, noise_reason = rng.choice(lex.NOT_HEARD)
    w.request(child.id, first.noun)
    parent.busy = True  # on the way out: cannot hear
    w.request(child.id, second.noun)
    parent.busy = False
    w.leave(parent.id)
    thinks = parent.thinks_wants[child.id]
    bought = next(t for t in (first, second) if t.noun != thinks)  # the one the parent thinks is wanted is sold out
    w.put(parent.id, bought.id, bag.id)
    bag.away = False
    w.enter(parent.id)
    got = w.contents(bag.id)[0].noun
    story = (f"{child.name} asks {parent.name} for {an(first.describe())} {occasion}. {parent.name} goes to the shop. "
             f"As {parent.name} goes out, {child.name} calls after {parent.obj} {noise}, 'Wait! I want "
             f"{an(second.describe())} instead!' {child.name} thinks {parent.name} heard. But {parent.name} did not "
             f"hear, because {noise_reason}. At the shop there are no {first_kind.plural} left, so {parent.name} buys "
             f"{an(second.describe())}. {parent.name} comes home with a bag and says, 'I am sorry, I could not get the "
             f"one you wanted.'")
    toys = [an(first.noun), an(second.noun)]
    b.choose(f"What does {parent.name} think {child.name} wants", toys, an(thinks), story=story, image=b.picture(w))
    b.why(f"Why does {parent.name} say sorry?",
          f"Because {parent.name} thinks {child.name} wants {an(thinks)}, and {parent.pronoun} got {an(got)}.",
          f"{parent.name} did not hear the change, so {parent.pronoun} still thinks {child.name} wants {an(thinks)}.",
          [f"{parent.name} knows {child.name} wants {an(got)}", f"{parent.name} got nothing"],
          feedback=right_wrong(f"That's right. {parent.name} thinks {child.name} still wants {an(thinks)}.",
                               f"Remember, {parent.name} did not hear {child.name} change {child.poss} mind, so "
                               f"{parent.pronoun} still believes {child.pronoun} wants the first toy."))
    b.choose(f"What does {child.name} want now", toys, an(child.desires[-1]))
    child.expression = "happy" if w.feeling_about(child.id, got) == "happy" else "sad"
    w.put(child.id, bought.id, "table")  # takes it out of the bag: now everyone can see it
    b.choose(f"What did {child.name} get", toys, an(got), image=b.picture(w),
             story=f"{child.name} opens the bag, puts what is inside on the table and is surprised.",
             feedback=right_wrong("Yes.", f"Actually, {child.name} wants {an(child.desires[-1])} now."))
    b.why(f"Why is {child.name} surprised?",
          f"Because {child.pronoun} thought {parent.name} knew {child.pronoun} wanted {an(got)}, so when "
          f"{parent.name} said sorry, {child.pronoun} did not expect to get {an(got)}.",
          f"{child.name} did not expect to get {an(got)}: {child.pronoun} thought {parent.name} heard the change, so "
          "the sorry meant it could not be found.",
          [f"{child.name} knows {parent.name} did not hear {child.obj}", f"{child.name} did not want {an(got)}"],
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

#: Tasks with an image-dependent variant (the fact the questions need is only in the picture). Their
#: categories are the paper's Table 2 columns: Percept (reference_easy, reference_hard_perspective,
#: interpretation), Intention (reference_hard_referent), MBK (the moral pair and lie_vs_false_statement:
#: the picture shows who was in the room) and NLC (the sarcasm pair). Desire tasks have none.
IMAGE_DEPENDENT_TASKS: frozenset[str] = frozenset({
    "reference_easy", "reference_hard_referent", "reference_hard_perspective", "interpretation", "sarcasm",
    "non_sarcasm", "moral_false_belief", "moral_true_belief", "lie_vs_false_statement",
})

#: Minimal pairs share their random draws (same names, things, places) and differ in one fact.
PAIRS: dict[str, str] = {"sarcasm": "non_sarcasm", "non_sarcasm": "sarcasm",
                         "moral_false_belief": "moral_true_belief", "moral_true_belief": "moral_false_belief"}
