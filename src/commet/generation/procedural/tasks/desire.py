"""The booklet's items keyed to the respondent's own pick: common desire, diverse desire, diverse belief.

The first question is a free pick (every option is right, and it opens a branch); the next
answers follow it, by design: the character likes the same snack (common desire) or the other
one (diverse desire), thinks the lost thing is in the other place, and it turns out to be where
you guessed (diverse belief). Those turns say so in ``turn.meta["keyed"]``; audits report them
apart, since answering "the same as / the other one than my pick" is what the item is about.
"""

from __future__ import annotations

import copy

from commet.generation.procedural import lexicon as lex
from commet.generation.procedural.builder import Cast, StoryBuilder, an, keyed_feedback, right_wrong
from commet.generation.procedural.tasks.common import fill, room, two_containers
from commet.generation.procedural.world import Place, Thing, World

SAME, OTHER = "the same as your pick", "the other one than your pick"

CHOICE = (
    "{occasion}, and {c.name} may choose one of the two {word} on the table: {a} or {b}.",
    "{occasion}. On the table there are two {word}, {a} and {b}, and {c.name} may have one of them.",
    "{occasion}, and {c.name} gets to pick one of two {word}: {a} or {b}.",
    "{occasion}. {c.name} looks at the two {word} on the table, {a} and {b}; {c.sub} may take one.",
    "{occasion}, and there are two {word} on the table for {c.name} to choose from: {a} and {b}.",
)
YOURS = ("Which one would you choose", "Which one do you like better", "Which one would you pick")
THEIRS = ("So which one will {c.name} take", "Which one will {c.name} pick", "So which one does {c.name} choose")
LIKES_TOO = (
    "You like the {x}? {c.name} likes the {x} best too!",
    "The {x}? {c.name} loves the {x} too!",
    "Oh, the {x}! That is {c.name}'s favourite as well.",
    "So you like the {x}. {c.name} likes the {x} best, just like you.",
    "The {x} for you? {c.name} likes that one best too.",
)
LIKES_OTHER = (
    "So you like the {x}. Well, {c.name} does not like the {x} very much; {c.name} likes the other one best.",
    "The {x}? {c.name} does not care for the {x}. {c.name} likes the other one better.",
    "Oh, you like the {x}! But {c.name} likes the other one more.",
    "You picked the {x}. {c.name} is not keen on the {x}; {c.name} prefers the other one.",
    "The {x} for you! {c.name}, though, likes the other one best.",
)


def _desire(b: StoryBuilder, common: bool) -> None:
    cast = Cast(b)
    w = World(room(b, indoors=False))
    child = cast.child(0.18)
    w.add(child)
    b.role(True, "")
    group, word = b.pick("snacks or toys", ((lex.SNACKS, "snacks"), (lex.TOYS, "toys")))
    kinds = b.sample("things", group, 2)
    w.add(Place("table", "table", "brown", 0.58, name="the table"))
    things = [Thing(f"thing{k + 1}", kind, b.pick(f"colour: thing {k + 1}", kind.colours), "table") for k, kind in enumerate(kinds)]
    for thing in things:
        w.add(thing)
    told = b.arrange("told", things)
    story = b.frame("choice", CHOICE).format(occasion=b.pick("occasion", lex.OCCASIONS), c=child, word=word,
                                             a=an(told[0].describe()), b=an(told[1].describe()))
    names = [f"the {t.noun}" for t in things]
    b.choose("your pick", b.wording(YOURS), names, names, story=story, image=b.picture(w))
    picks, texts = [], {}
    frame = b.frame("likes", LIKES_TOO if common else LIKES_OTHER)
    for liked, other in ((things[0], things[1]), (things[1], things[0])):  # one world per branch
        branch = copy.deepcopy(w)
        wanted = liked if common else other
        branch.agents[child.id].desires.append(wanted.id)
        pick = next(t for t in things if t.id in branch.agents[child.id].desires)
        picks.append(f"the {pick.noun}")
        texts[f"the {liked.noun}"] = frame.format(x=liked.noun, c=child)
    b.choose("their pick", b.wording(THEIRS).format(c=child), names, picks, feedback=keyed_feedback(texts),
             keyed=SAME if common else OTHER)
    b.facts.update(log=w.record(), child=child.name, options=[t.noun for t in things],
                   likes="same as you" if common else "the other")


def common_desire(b: StoryBuilder, image_dependent: bool) -> None:
    _desire(b, common=True)


def diverse_desire(b: StoryBuilder, image_dependent: bool) -> None:
    _desire(b, common=False)


LOST = (
    "{c.name} cannot find {c.det} {t} {when}. It might be in {a}, or it might be in {b}.",
    "{when_cap}, {c.name} is looking for {c.det} {t}. Maybe it is in {a}; maybe it is in {b}.",
    "{c.name} has lost {c.det} {t} {when}. It could be in {a} or in {b}.",
    "{when_cap}, {c.name}'s {t} is missing. It is either in {a} or in {b}.",
    "{c.name} needs {c.det} {t} {when}, but where is it? In {a}, or in {b}?",
)
GUESS = ("Where do you think the {t} is", "Where would you look for the {t}", "Where is the {t}, do you think")
LOOKS = ("So where will {c.name} look for the {t}", "Where will {c.name} look first",
         "So where does {c.name} go to look for the {t}")
THINKS_OTHER = (
    "That is a good guess. But {c.name} thinks the {t} is in the other place.",
    "Good guess! {c.name}, though, thinks the {t} is in the other one.",
    "Maybe! But {c.name} is sure the {t} is in the other place.",
    "That could be. {c.name} thinks it is in the other one, though.",
    "A fine guess. But {c.name} believes the {t} is in the other place.",
)
NOT_THERE = (
    "{c.name} looks there, but the {t} is not there.",
    "{c.name} opens it and looks inside: no {t}.",
    "{c.name} looks in there, but it is empty.",
    "{c.name} searches there, but the {t} is not inside.",
    "{c.name} checks there, but there is no {t} to be found.",
)
REALLY = ("So where is the {t} really", "Then where is the {t}", "So where must the {t} be")


def diverse_belief(b: StoryBuilder, image_dependent: bool) -> None:
    cast = Cast(b)
    w = World(room(b))
    child = cast.child(0.15)
    w.add(child)
    b.role(True, "")
    places = two_containers(b, w, (0.45, 0.75))
    kind = b.pick("toy", lex.TOYS)
    image = b.picture(w)  # the lost thing is nowhere in sight
    names = [f"in {p.name}" for p in places]
    told = b.arrange("told", list(places))
    when = b.pick("when it was lost", lex.LOST_WHEN)
    slots = {"c": child, "t": kind.noun}
    b.choose("your guess", b.wording(GUESS).format(**slots), names, names, image=image,
             story=b.frame("lost", LOST).format(when=when, when_cap=when[:1].upper() + when[1:], a=told[0].name,
                                                b=told[1].name, **slots))
    looks, really, texts = [], [], {}
    frame = b.frame("thinks", THINKS_OTHER)
    for guess in places:  # per branch: the child thinks it is in the other place; it turns out to be the guess
        branch = copy.deepcopy(w)
        thought = next(p for p in places if p.id != guess.id)
        branch.add(Thing("lost", kind, b.pick(f"colour: {guess.id}", kind.colours), guess.id, owner=child.id))
        branch.agents[child.id].beliefs["lost"] = thought.id
        looks.append(f"in {branch.place_name(branch.belief(child.id, 'lost'))}")
        really.append(f"in {branch.place_name(branch.things['lost'].location)}")
        texts[f"in {guess.name}"] = frame.format(**slots)
    b.choose("their look", b.wording(LOOKS).format(**slots), names, looks, feedback=keyed_feedback(texts),
             keyed=OTHER)
    b.choose("reality", b.wording(REALLY).format(**slots), names, really,
             story=b.frame("not there", NOT_THERE).format(**slots), keyed=SAME,
             feedback=right_wrong(f"Yes, {child.name} looks where {child.sub} thinks it is.",
                                  f"Not quite: {child.name} looks where {child.sub} thinks the {kind.noun} is."))
    b.facts.update(log=w.record(), thing=kind.noun, places=[p.name for p in places],
                   belief="the place you did not pick", when=fill(when, child))
