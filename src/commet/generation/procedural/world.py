"""A small world model: who is where, who sees and hears what, and what each agent believes.

The world is one-dimensional from left (x=0) to right (x=1), seen from the front: agents,
places (containers and surfaces) and occluders stand at an ``x``; things lie on or in a
place, or are carried by an agent. An agent sees a thing when both are in the room, the
thing is not inside a closed container or a pocket, and no occluder stands between them.

Events (put, move, take, say, harm, leave, enter) change the state and are witnessed
only by agents that perceive them; beliefs, desires and knowledge are updated from what
each agent perceived, never from reality. Story answers are read off this state.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from commet.generation.procedural.lexicon import SIZE_WORDS, Kind

#: Spacing (in world x units) of things standing side by side on one place.
SLOT = 0.1
#: The picture's width in pixels unless a task needs more room: world x 0..1 is drawn from 50 to ``WIDTH - 50`` px,
#: and a wider picture (``World(room, width=...)``) goes on to the right at the same scale (x above 1).
WIDTH = 640


@dataclass
class Agent:
    """A character: where they stand, whether they are in the room, and their mind."""

    id: str
    name: str
    pronoun: str  # "she" or "he"
    adult: bool
    shirt: str  # colour name
    x: float
    present: bool = True
    expression: str = "neutral"  # "happy", "sad", "cross", "scared", "crying", "neutral"
    old: bool = False  # a grandparent: drawn with grey hair and glasses
    at: str = ""  # where the agent is while out of the room (an off-stage place id), "" if unsaid
    beliefs: dict[str, str] = field(default_factory=dict)  # thing id -> place id this agent thinks it is in
    desires: list[str] = field(default_factory=list)  # wanted things or kinds, latest last
    thinks_wants: dict[str, str] = field(default_factory=dict)  # other agent id -> what this agent thinks they want
    memories: list[int] = field(default_factory=list)  # indexes of the events this agent perceived
    busy: bool = False  # cannot hear (on the phone, outside, running a tap)

    # --- grammar: every form of the agent's pronoun, so that text never patches one form into another ---
    @property
    def sub(self) -> str:
        """she / he"""
        return self.pronoun

    @property
    def obj(self) -> str:
        """her / him"""
        return "her" if self.pronoun == "she" else "him"

    @property
    def det(self) -> str:
        """her / his (before a noun: her ball)"""
        return "her" if self.pronoun == "she" else "his"

    @property
    def own(self) -> str:
        """hers / his (standing alone: the ball is hers)"""
        return "hers" if self.pronoun == "she" else "his"

    @property
    def refl(self) -> str:
        """herself / himself"""
        return "herself" if self.pronoun == "she" else "himself"

    @property
    def Sub(self) -> str:  # noqa: N802 - the capitalised form, for a sentence's start
        return self.sub.capitalize()


@dataclass
class Thing:
    """An object with visible attributes and a location (a place id or an agent id)."""

    id: str
    kind: Kind
    colour: str
    location: str
    size: int = 2  # 1 small, 2 middle-sized, 3 big
    feature: str | None = None  # "sunglasses", "bow", "stripes", "dots"
    feature_colour: str | None = None  # the bow's (stripes', ...) own colour, when the story names it
    owner: str | None = None
    state: str | None = None  # how a harm left it ("crumpled", "cut", "painted", ...), drawn so
    in_hand: bool = False  # held up in an agent's hand (seen), not in a pocket (hidden)
    noun_override: str | None = None  # a story word for the thing ("birthday card") when the kind is generic

    @property
    def noun(self) -> str:
        return self.noun_override or self.kind.noun

    def describe(self, size: bool = False, colour: bool = True) -> str:
        """``big red ball``-style description, without article."""
        words = ([SIZE_WORDS[self.size]] if size else []) + ([self.colour] if colour else []) + [self.noun]
        return " ".join(words)


@dataclass
class Place:
    """A container (closed ones hide their contents) or a surface, or an off-stage place (not drawn)."""

    id: str
    kind: str  # "box", "basket", "toy chest", "table", "shelf", "bag", "lunchbox", "offstage"
    colour: str
    x: float
    closed: bool = False
    name: str = ""  # how the story calls it ("the red box")
    away: bool = False  # carried out of the room for now (a shopping bag at the shop)

    @property
    def drawn(self) -> bool:
        return self.kind != "offstage" and not self.away


@dataclass
class Occluder:
    """A screen, plant or cupboard that blocks the line of sight across it."""

    id: str
    kind: str
    x: float


@dataclass
class Event:
    """Something that happened, with the agents who perceived it."""

    kind: str  # "put", "move", "take", "say", "harm", "leave", "enter", "request"
    actor: str
    witnesses: frozenset[str]
    thing: str | None = None
    src: str | None = None
    dst: str | None = None
    claim: str | None = None  # for "say": the place the speaker claims the thing is in
    speaker_belief: str | None = None  # for "say": where the speaker thought it was when speaking
    truth: str | None = None  # for "say": where it really was
    knowing: bool = False  # for "harm": the actor knew whose thing it was
    present: frozenset[str] = frozenset()  # the agents where it happened (a plain fact, for the record)
    busy: frozenset[str] = frozenset()  # the agents there who could not hear (a door slamming, an engine)
    where: str = "room"  # the room, or the off-stage place it happened at (the shop)


class World:
    """The state of one story, with perception and belief updates."""

    def __init__(self, room: str, width: int = WIDTH) -> None:
        self.room = room
        self.width = width  # of its pictures, in pixels
        self.agents: dict[str, Agent] = {}
        self.things: dict[str, Thing] = {}
        self.places: dict[str, Place] = {}
        self.occluders: dict[str, Occluder] = {}
        self.events: list[Event] = []
        self.start: dict[str, str] = {}  # thing id -> where it was when added to the story

    # --- building -----------------------------------------------------------------------
    def add(self, item: Agent | Thing | Place | Occluder) -> None:
        """Add an entity; agents in the room at once see what they can see."""
        if item.id in self.all_ids():
            raise ValueError(f"duplicate id {item.id!r}")
        if isinstance(item, Agent):
            self.agents[item.id] = item
        elif isinstance(item, Thing):
            self.things[item.id] = item
            self.start[item.id] = item.location
        elif isinstance(item, Place):
            self.places[item.id] = item
        else:
            self.occluders[item.id] = item
        for agent in self.agents.values():
            self._look(agent)

    def add_all(self, *items: Agent | Thing | Place | Occluder) -> None:
        for item in items:
            self.add(item)

    def all_ids(self) -> set[str]:
        return {*self.agents, *self.things, *self.places, *self.occluders}

    # --- geometry and perception ---------------------------------------------------------
    def contents(self, place_id: str) -> list[Thing]:
        """Things in or on a place (or carried by an agent), in insertion order."""
        return [t for t in self.things.values() if t.location == place_id]

    def thing_x(self, thing_id: str) -> float:
        """Where a thing stands: things on one place are spread side by side around its x."""
        thing = self.things[thing_id]
        holder = self.places.get(thing.location) or self.agents.get(thing.location)
        if holder is None:
            raise KeyError(f"{thing_id} is in unknown location {thing.location!r}")
        if isinstance(holder, Agent) or (isinstance(holder, Place) and holder.closed):
            return holder.x
        siblings = [t.id for t in self.contents(thing.location)]
        index = siblings.index(thing_id)
        return holder.x + (index - (len(siblings) - 1) / 2) * SLOT

    def hidden_by(self, thing_id: str) -> str | None:
        """The closed container or the agent (pocket) hiding a thing from everyone, if any."""
        thing = self.things[thing_id]
        location = thing.location
        if location in self.agents:
            return None if thing.in_hand and self.agents[location].present else location
        place = self.places[location]
        return place.id if place.closed or not place.drawn else None

    def blocked(self, x0: float, x1: float) -> Occluder | None:
        """The first occluder strictly between two x positions, if any."""
        low, high = sorted((x0, x1))
        for occ in self.occluders.values():
            if low < occ.x < high:
                return occ
        return None

    def can_see(self, agent_id: str, thing_id: str) -> bool:
        agent = self.agents[agent_id]
        if not agent.present or self.hidden_by(thing_id) is not None:
            return False
        return self.blocked(agent.x, self.thing_x(thing_id)) is None

    def visible_things(self, agent_id: str) -> list[str]:
        return [t for t in self.things if self.can_see(agent_id, t)]

    def _in_room(self, location: str) -> bool:
        if location in self.agents:
            return self.agents[location].present
        return self.places[location].drawn

    def _sees_spot(self, agent: Agent, x: float) -> bool:
        return agent.present and self.blocked(agent.x, x) is None

    def _look(self, agent: Agent) -> None:
        """An agent updates beliefs about every thing they can see right now."""
        for thing_id in self.visible_things(agent.id):
            agent.beliefs[thing_id] = self.things[thing_id].location

    def _record(self, event: Event, where: str = "room") -> Event:
        """Log an event with who was where it happened: the agents in the room, or those at the off-stage place."""
        here = [a for a in self.agents.values() if (a.present if where == "room" else not a.present and a.at == where)]
        event.where = where
        event.present = frozenset(a.id for a in here)
        event.busy = frozenset(a.id for a in here if a.busy)
        self.events.append(event)
        for agent_id in event.witnesses:
            self.agents[agent_id].memories.append(len(self.events) - 1)
        return event

    def where_is(self, agent_id: str) -> str:
        agent = self.agents[agent_id]
        return "room" if agent.present else agent.at or "away"

    # --- events -------------------------------------------------------------------------
    def leave(self, agent_id: str, to: str = "") -> Event:
        """The agent goes out of the room (to an off-stage place, when the story says where)."""
        agent = self.agents[agent_id]
        agent.present = False
        agent.at = to
        return self._record(Event("leave", agent_id, frozenset({agent_id}), dst=to or None))

    def walk(self, agent_id: str, x: float) -> None:
        """The agent goes to another spot in the room and looks around."""
        agent = self.agents[agent_id]
        agent.x = x
        self._look(agent)

    def enter(self, agent_id: str) -> Event:
        agent = self.agents[agent_id]
        agent.present = True
        agent.at = ""
        self._look(agent)
        return self._record(Event("enter", agent_id, frozenset({agent_id})))

    def put(self, actor_id: str, thing_id: str, place_id: str, kind: str = "put") -> Event:
        """Move a thing; agents who see where it came from or where it goes (and the actor) learn it.

        The actor may be a force of nature ("the wind") rather than an agent.
        """
        thing = self.things[thing_id]
        src = thing.location
        src_x = self.thing_x(thing_id)
        thing.location = place_id
        thing.in_hand = False
        dst_x = self.thing_x(thing_id)
        spots = [x for x, where in ((src_x, src), (dst_x, place_id)) if self._in_room(where)]
        actor = self.agents.get(actor_id)
        where = "room" if spots or actor is None or actor.present else actor.at or "away"
        witnesses = {actor_id} & set(self.agents) | {
            a.id for a in self.agents.values() if any(self._sees_spot(a, x) for x in spots)
        }
        for agent_id in witnesses:
            self.agents[agent_id].beliefs[thing_id] = place_id
        return self._record(Event(kind, actor_id, frozenset(witnesses), thing=thing_id, src=src, dst=place_id), where)

    def take(self, actor_id: str, thing_id: str) -> Event:
        """The actor picks a thing up and keeps it (in a pocket: hidden from everyone)."""
        return self.put(actor_id, thing_id, actor_id, kind="take")

    def hold(self, actor_id: str, thing_id: str) -> Event:
        """The actor picks a thing up and holds it in hand, where those who can see the actor see it."""
        event = self.put(actor_id, thing_id, actor_id, kind="take")
        self.things[thing_id].in_hand = True
        return event

    def hearers(self, speaker_id: str) -> list[str]:
        """Who hears the speaker: the agents in the same place who are not kept from hearing."""
        here = self.where_is(speaker_id)
        return [a.id for a in self.agents.values() if self.where_is(a.id) == here and not a.busy and a.id != speaker_id]

    def say_where(self, speaker_id: str, thing_id: str, claim: str) -> Event:
        """The speaker says the thing is at ``claim``; hearers believe it unless they saw its last move."""
        speaker = self.agents[speaker_id]
        heard = self.hearers(speaker_id)
        moves = [e for e in self.events if e.thing == thing_id and e.kind in ("put", "move", "take")]
        for agent_id in heard:
            if not moves or agent_id not in moves[-1].witnesses:
                self.agents[agent_id].beliefs[thing_id] = claim
        return self._record(Event("say", speaker_id, frozenset({speaker_id, *heard}), thing=thing_id, claim=claim,
                                  speaker_belief=speaker.beliefs.get(thing_id),
                                  truth=self.things[thing_id].location), self.where_is(speaker_id))

    def request(self, agent_id: str, wanted: str) -> Event:
        """The agent says what they want; who hears it now thinks that is what the agent wants."""
        self.agents[agent_id].desires.append(wanted)
        heard = self.hearers(agent_id)
        for other in heard:
            self.agents[other].thinks_wants[agent_id] = wanted
        return self._record(Event("request", agent_id, frozenset({agent_id, *heard}), claim=wanted),
                            self.where_is(agent_id))

    def harm(self, actor_id: str, thing_id: str, state: str = "spoiled") -> Event:
        """The actor spoils a thing where it is (it takes ``state``): knowing when the actor believed that
        place held someone else's thing (belief, not reality: two things may look the same)."""
        thing = self.things[thing_id]
        place_id = thing.location
        believed_there = self.believed_contents(actor_id, place_id)
        knowing = thing.id in believed_there and thing.owner not in (None, actor_id)
        thing.state = state
        witnesses = {actor_id} | {a.id for a in self.agents.values()
                                  if self._in_room(place_id) and self._sees_spot(a, self.thing_x(thing_id))}
        return self._record(Event("harm", actor_id, frozenset(witnesses), thing=thing.id, src=place_id,
                                  knowing=knowing))

    def _past(self, event: Event, where: str) -> Event:
        """An event before the story starts, at ``where``, with only its witnesses there."""
        event.where, event.present = where or "away", event.witnesses
        self.events.append(event)
        for agent_id in event.witnesses:
            self.agents[agent_id].memories.append(len(self.events) - 1)
        return event

    def past_harm(self, actor: str, victim_id: str, what: str, where: str = "") -> Event:
        """Something bad the actor did before the story starts; only the victim perceived it."""
        return self._past(Event("harm", actor, frozenset({victim_id}), claim=what, knowing=True), where)

    def past_kindness(self, actor: str, friend_id: str, what: str, where: str = "") -> Event:
        """Something nice the actor did before the story starts; only the friend perceived it."""
        return self._past(Event("kindness", actor, frozenset({friend_id}), claim=what), where)

    def wish(self, agent_id: str, wanted: str) -> Event:
        """The agent wishes for something (the story says so); it is what the agent wants most now."""
        self.agents[agent_id].desires.append(wanted)
        return self._record(Event("wish", agent_id, frozenset({agent_id}), claim=wanted), self.where_is(agent_id))

    def guess(self, agent_id: str, thing_id: str, place_id: str) -> Event:
        """The agent, who did not see where a thing went, concludes it is at ``place_id`` (an honest guess)."""
        self.agents[agent_id].beliefs[thing_id] = place_id
        return self._record(Event("guess", agent_id, frozenset({agent_id}), thing=thing_id, claim=place_id))

    # --- queries ------------------------------------------------------------------------
    def belief(self, agent_id: str, thing_id: str) -> str:
        """Where the agent thinks the thing is (KeyError if they have no idea)."""
        return self.agents[agent_id].beliefs[thing_id]

    def believed_contents(self, agent_id: str, place_id: str) -> list[str]:
        return [t for t, p in self.agents[agent_id].beliefs.items() if p == place_id]

    def perceived(self, agent_id: str, event: Event) -> bool:
        return agent_id in event.witnesses

    def is_lie(self, event: Event) -> bool:
        """A statement is a lie when the speaker believed otherwise, whatever the truth was."""
        return event.kind == "say" and event.speaker_belief is not None and event.speaker_belief != event.claim

    def naughty(self, event: Event) -> bool:
        """Moral judgement: a harm is naughty when done knowingly (intent), not by mistake."""
        return event.kind == "harm" and event.knowing

    def feeling_toward(self, agent_id: str, actor: str) -> str:
        """Scared of someone who harmed the agent before (as far as the agent perceived), else happy."""
        remembered = [e for e in self.events if e.kind == "harm" and e.actor == actor and agent_id in e.witnesses]
        return "scared" if remembered else "happy"

    def feeling_about(self, agent_id: str, got: str) -> str:
        """Happy when what the agent got is what they want most now, sad otherwise."""
        desires = self.agents[agent_id].desires
        return "happy" if desires and desires[-1] == got else "sad"

    def believes_lost(self, agent_id: str, thing_id: str) -> bool:
        """The agent thinks the thing is somewhere out of reach (off stage)."""
        place = self.places.get(self.agents[agent_id].beliefs.get(thing_id, ""))
        return place is not None and not place.drawn

    def record(self) -> dict[str, object]:
        """Plain facts of the story for the record (who, what, where, and each event with who was in the room).

        Only observable facts are written, never a belief or a judgement, so that tests can check the
        answers against them independently of the perception and belief logic above.
        """
        def compact(d: dict[str, object]) -> dict[str, object]:
            return {k: v for k, v in d.items() if v is not None}

        return {
            "room": self.room,
            "agents": {a.id: {"name": a.name, "pronoun": a.pronoun, "adult": a.adult, "old": a.old,
                              "present": a.present} for a in self.agents.values()},
            "places": {p.id: {"name": p.name, "kind": p.kind, "colour": p.colour, "closed": p.closed,
                              "drawn": p.drawn} for p in self.places.values()},
            "things": {t.id: compact({"noun": t.noun, "colour": t.colour, "size": t.size, "feature": t.feature,
                                      "owner": t.owner, "start": self.start.get(t.id), "location": t.location,
                                      "state": t.state})
                       for t in self.things.values()},
            "events": [compact({"kind": e.kind, "actor": e.actor, "thing": e.thing, "src": e.src, "dst": e.dst,
                                "claim": e.claim, "where": e.where, "present": sorted(e.present),
                                "busy": sorted(e.busy) or None}) for e in self.events],
        }

    def place_name(self, place_id: str) -> str:
        if place_id in self.agents:
            return f"{self.agents[place_id].name}'s pocket"
        return self.places[place_id].name
