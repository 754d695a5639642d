"""What several task families share: rooms, containers, who leaves and who watches, and the words for it.

The central device is the **slot swap**: a task's test item and its control tell the same
sentences with two characters (or two things) swapped between their slots ("while Mia is
out, Dad swaps the two toys round; Sam sees it" against "while Sam is out, ...; Mia sees
it"). A reader who counts words, or looks for one cue word, finds the same words in both; only
who is where decides the answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from commet.generation.procedural import lexicon as lex
from commet.generation.procedural.builder import StoryBuilder
from commet.generation.procedural.world import Agent, Event, Place, Thing, World

T = TypeVar("T")

#: Why someone leaves the room for a while: (leaves, while away, where to), with pronoun slots.
LEAVES: tuple[tuple[str, str, str], ...] = (
    ("goes to brush {det} teeth", "brushing {det} teeth", "bathroom"),
    ("goes to get a drink of water", "getting a drink", "kitchen"),
    ("goes to feed the cat", "feeding the cat", "kitchen"),
    ("goes upstairs to find {det} shoes", "upstairs", "upstairs"),
    ("goes to wash {det} hands", "washing {det} hands", "bathroom"),
    ("goes out to water the flowers", "out in the garden", "garden"),
    ("runs off to watch a cartoon", "watching the cartoon", "living room"),
    ("goes to help carry the shopping in", "helping with the shopping", "outside"),
    ("goes out to fetch the post", "fetching the post", "outside"),
    ("goes to look for {det} coat", "looking for {det} coat", "hallway"),
)
#: Why a grown-up tidies or moves things (no intent against anyone).
TIDY_REASONS: tuple[str, ...] = (
    "before lunch", "to make room for a puzzle", "while sweeping the floor", "to sort things out",
    "to keep them away from the puppy", "while looking for a pencil", "to clear space for a game",
    "while dusting", "before the visitors come", "to make space for the laundry",
)
#: How a character sees something happen (the explicit witnessing every rubric's "saw" rests on).
WITNESS: tuple[str, ...] = (
    "{q.name} is right there and sees it happen.",
    "{q.name} watches the whole time.",
    "{q.name} sees all of it from across the room.",
    "{q.name} stays in the room and watches.",
    "{q.name} looks up and sees everything.",
    "{q.name}, sitting close by, sees it all.",
)
#: Who is away and who stays, in one sentence that names both, the one away first (``AWAY_FIRST``) or the one who
#: stays first (``STAYS_FIRST``): which comes first is a balanced nuisance choice, and the event itself is then told
#: without naming either child ("the child who stayed sees it"), so no child's mentions fall differently by role.
AWAY_FIRST: tuple[str, ...] = (
    "{p.name} is {away} for a while, but {q.name} stays in the room.",
    "For a while {p.name} is {away}, and {q.name} is still in the room.",
    "{p.name} is {away} now, while {q.name} stays behind.",
    "Soon {p.name} is {away}; {q.name} stays where {q.sub} is.",
    "{p.name} is {away} for a bit, and {q.name} stays inside.",
)
STAYS_FIRST: tuple[str, ...] = (
    "{q.name} stays in the room, but {p.name} is {away} for a while.",
    "{q.name} is still in the room, and for a while {p.name} is {away}.",
    "{q.name} stays behind, while {p.name} is {away} now.",
    "{q.name} stays where {q.sub} is; soon {p.name} is {away}.",
    "{q.name} stays inside, and {p.name} is {away} for a bit.",
)


def away_and_stays(b: StoryBuilder, p: Agent, q: Agent, away: str, lead: Agent | None = None) -> str:
    """One sentence telling that ``p`` is away and ``q`` stays, the two named in a balanced order: ``lead`` first
    (the child the story names first throughout, itself a balanced choice), else a balanced coin."""
    stays_first = lead is q if lead is not None else b.flip("the child who stays named first")
    pool = STAYS_FIRST if stays_first else AWAY_FIRST
    return b.frame("away and stays", pool).format(p=p, q=q, away=away)


def lead_order(b: StoryBuilder, pair: tuple[T, T]) -> tuple[T, T]:
    """The pair in the order every sentence that names both uses: one balanced choice per story (which of the two
    the story names first), so that the order of every mention is balanced within the item's cell as a whole, not
    sentence by sentence (independent coins per sentence leave their joint unbalanced in a small block)."""
    return (pair[1], pair[0]) if b.flip("lead: the second of the pair named first") else pair


def two_containers(b: StoryBuilder, w: World, xs: tuple[float, float]) -> tuple[Place, Place]:
    """Two closed containers of different colours (and, half the time, different kinds); which one stands left
    is a balanced nuisance choice (draw the item's cell first, so that it is balanced within the cell)."""
    colours = b.sample("containers: colours", ("red", "blue", "green", "yellow", "purple", "orange"), 2)
    kinds = b.sample("containers: kinds", lex.CONTAINERS, 2)
    if b.flip("containers: of one kind"):
        kinds = [kinds[0]] * 2
    xs = (xs[1], xs[0]) if b.flip("containers: the first stands right") else xs
    places = []
    for k, (colour, x, kind) in enumerate(zip(colours, xs, kinds, strict=True)):
        place = Place(f"place{k + 1}", kind, colour, x, closed=True, name=f"the {colour} {kind}")
        w.add(place)
        places.append(place)
    return places[0], places[1]


def fill(text: str, agent: Agent) -> str:
    """Put an agent's pronouns into a pool phrase (``{det}``, ``{obj}``, ``{sub}``, ``{own}``, ``{refl}``)."""
    return text.format(det=agent.det, obj=agent.obj, sub=agent.sub, own=agent.own, refl=agent.refl)


def room(b: StoryBuilder, indoors: bool = True, among: Sequence[str] = ()) -> str:
    rooms = [r[0] for r in lex.ROOMS if not indoors or r[0] != "garden"]
    return b.pick("room", [r for r in rooms if r in among] if among else rooms)



def leaving(b: StoryBuilder, agent: Agent) -> tuple[str, str, str]:
    """(goes ..., while ..., off-stage place) for an agent leaving the room."""
    leaves, away, to = b.pick("leaving", LEAVES)
    return fill(leaves, agent), fill(away, agent), to


def missed(w: World, agent: Agent, thing: Thing) -> list[Event]:
    return [e for e in w.events if e.thing == thing.id and e.kind in ("put", "move") and agent.id not in e.witnesses]
