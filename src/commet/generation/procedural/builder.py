"""Building one StoryTurn: its turns, its pictures, and the counterbalancing every task shares.

Counterbalancing (as in a psychology lab): every draw that could tell a skimming reader the
answer is balanced over a task's items. :meth:`StoryBuilder.balanced` draws a value from a
sequence made of shuffled runs of all values (a Latin-square-like interleaving), so that in
**every prefix** of a task's items each value occurs within one of every other, exactly equally
often at every multiple of the number of values; a choice balanced within the item's cell runs
over the cell's own items the same way (the answer's position among the options, the item's
variant, which option a sentence names first); :meth:`StoryBuilder.arrange` puts a list in a
balanced order.

Every other random draw (names, colours, things, rooms, reasons, frames of critical sentences
and wordings of questions, from pools of at least :data:`MIN_FRAMES` and :data:`MIN_WORDINGS`)
is made by :meth:`StoryBuilder.pick` (or :meth:`~StoryBuilder.sample`, :meth:`~StoryBuilder.shuffled`)
from a random stream of its own, seeded by the story's seed, task, index and the draw's name,
never by the cell, and recorded in ``meta["draws"]``: independent of the key by construction.
The generators get no random stream of their own.

Each StoryTurn says whether it is the booklet's **test** item or a **control**
(``meta["item"]``, and ``meta["control"]`` naming what the control changes), and each turn
which booklet question it asks (``turn.meta["asks"]``); turns designed to follow the
respondent's own pick say so (``turn.meta["keyed"]``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from commet.format.model import AnswerFeedback, Feedback, Option, Rubric, Turn
from commet.generation.procedural import lexicon as lex
from commet.generation.procedural.render import compose
from commet.generation.procedural.shapes import Scene
from commet.generation.procedural.world import Agent, World

LABELS = ("A", "B", "C", "D", "E")
#: Every question is asked in at least this many wordings, every critical sentence told in this many frames.
MIN_WORDINGS = 3
MIN_FRAMES = 5
TEST, CONTROL = "test", "control"

T = TypeVar("T")


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


#: Words whose spelling and sound disagree at the start: a vowel letter read as a consonant, and the other way.
_CONSONANT_SOUND = ("one", "once", "uni", "use", "usu", "eu", "ewe", "u-")
_VOWEL_SOUND = ("hour", "honest", "honour", "heir")


def vowel_sound(word: str) -> bool:
    """Whether a word starts with a vowel sound (``an orange``, ``an hour``; ``a uniform``, ``a one``)."""
    low = word.lower()
    if low.startswith(_VOWEL_SOUND):
        return True
    return low[:1] in "aeiou" and not low.startswith(_CONSONANT_SOUND)


def an(noun: str) -> str:
    """``a cookie``, ``an apple``, ``an orange one``: the article chosen by the sound of the next word."""
    return ("an " if vowel_sound(noun) else "a ") + noun


_ARTICLE = re.compile(r"\b([Aa])(n?) ([A-Za-z][\w-]*)")


def articles(text: str) -> str:
    """Every ``a``/``an`` of a finished text matched to the sound of the word after it, so that no template or slot
    filler ("a {colour} one" with orange) can write "a orange one"."""
    def fix(match: re.Match[str]) -> str:
        word = match.group(3)
        return f"{match.group(1)}{'n' if vowel_sound(word) else ''} {word}"
    return _ARTICLE.sub(fix, text)


def join_or(items: Sequence[str]) -> str:
    """``a or b``, ``a, b or c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def join_and(items: Sequence[str]) -> str:
    """``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _shown(entity: Mapping[str, object]) -> bool:
    """Whether a scene's entity is drawn (a thing inside a closed container is ``visible: false``)."""
    return entity.get("visible", True) is not False


@dataclass
class StoryBuilder:
    """Collects the turns, the scenes shown with them and a few world facts of one story.

    ``group`` and ``index`` place the story in its task's sequence, for counterbalancing.
    """

    story_id: str
    group: str = ""
    index: int = 0
    #: The item's rank among its task's items of the same variant (text or image-dependent), when known: the
    #: counterbalancing runs over it, so every cell is balanced within each variant, not only across them.
    slot: int | None = None
    variant: str = ""
    seed: int = 0
    #: A redraw (to avoid a duplicate text): a new stream for every :meth:`pick`, the same counterbalancing.
    attempt: int = 0
    turns: list[Turn] = field(default_factory=list)
    scenes: dict[str, Scene] = field(default_factory=dict)
    #: The scenes as the scene files hold them (:meth:`shipped_scenes`), once the story is built.
    shipped: dict[str, Scene] = field(default_factory=dict)
    facts: dict[str, object] = field(default_factory=dict)
    meta: dict[str, object] = field(default_factory=dict)
    #: The key and size of the draw that decides the answers (the item's cell): orders are balanced within it.
    crossed: tuple[str, int] | None = None

    # --- counterbalancing -------------------------------------------------------------------
    @property
    def position(self) -> int:
        """Where the item stands in its counterbalancing sequence: its slot within its variant, else its index."""
        return self.index if self.slot is None else self.slot

    def _run(self, key: str, n: int, k: int, bits: bool = False) -> int:
        """The ``k``-th value of ``key``'s sequence: runs of ``n`` items, each run a shuffled ``range(n)``, so that
        every prefix of the sequence holds each value within one of every other.

        With ``bits`` (``n`` a power of two: several coins drawn as one value), each run is made of pairs of
        complementary values (every coin flipped between the two), so that every prefix also holds each coin's two
        sides within one of each other."""
        variant = f":{self.variant}" if self.slot is not None else ""
        stream = random.Random(f"commet-balance:{self.seed}:{self.group}{variant}:{key}:{k // n}")
        if bits and n > 2:
            pairs = []
            for v in range(n // 2):
                pairs.append(stream.sample((v, n - 1 - v), 2))
            stream.shuffle(pairs)
            run = [v for pair in pairs for v in pair]
        else:
            run = list(range(n))
            stream.shuffle(run)
        return run[k % n]

    def balanced(self, key: str, n: int, given: tuple[str, int] | None = None, bits: bool = False) -> int:
        """A value in ``range(n)``, balanced over the task's items in every prefix (see :meth:`_run`).

        With ``given`` (another key drawn by this method without ``given``, and its n), the value is balanced
        within the items that share that key's value (the item's cell, or a branch turn's position): each run of
        the given sequence holds every given value once, so this item is the ``position // n``-th of its class,
        and its own sequence runs over the class. Branch turns cross their two positions this way, so a respondent
        who answers one turn by position cannot use the other turn's position.
        """
        if given is None:
            return self._run(key, n, self.position, bits)
        value = self._run(*given, self.position)
        return self._run(f"{key}|{given[0]}={value}", n, self.position // given[1], bits)

    def nuisance(self, key: str, value: int, n: int) -> int:
        """Record a nuisance choice (``meta["nuisance"][key]``: the value drawn of ``n``), so that tests can check
        from the generator's own record that none goes with the answers."""
        record = self.meta.setdefault("nuisance", {})
        assert isinstance(record, dict) and key not in record, f"nuisance {key!r} drawn twice"
        record[key] = {"value": value, "of": n}
        return value

    def arrange(self, key: str, items: Sequence[T]) -> list[T]:
        """``items`` in an order where the first item's position is balanced, within the items that share this
        one's cell (:meth:`cell`), and the rest shuffled (a recorded draw). Recorded as a nuisance choice."""
        first, rest = items[0], self.shuffled(f"order: {key}: the rest", items[1:])
        position = self.nuisance(f"order: {key}", self.balanced(f"arrange:{key}", len(items), self.crossed),
                                 len(items))
        return rest[:position] + [first] + rest[position:]

    def flip(self, key: str) -> bool:
        """A balanced coin (within the item's cell, once :meth:`cell` has drawn it), recorded as a nuisance choice."""
        return self.nuisance(key, self.balanced(key, 2, self.crossed), 2) == 1

    def flips(self, *keys: str) -> list[bool]:
        """Balanced coins drawn jointly (one balanced value of ``2 ** len(keys)`` within the cell), each recorded as
        :meth:`flip` records it: every combination occurs equally often, so that no function of two of them (which
        option a sentence names last, when one coin orders the sentence and the other fills it) goes with a key."""
        joint = self.balanced("flips: " + " & ".join(keys), 2 ** len(keys), self.crossed, bits=True)
        return [self.nuisance(key, (joint >> k) & 1, 2) == 1 for k, key in enumerate(keys)]

    def seat(self, key: str, agents: Sequence[Agent], xs: Sequence[float]) -> None:
        """Stand ``agents`` at the spots ``xs`` in a balanced order (within the cell): where a role is drawn tells
        nothing about it, so a picture's people can only be told apart by their looks."""
        for agent, x in zip(agents, self.arrange(f"seat: {key}", list(xs)), strict=True):
            agent.x = x

    def cell(self, key: str, n: int) -> int:
        """The item's cell (test item or control, and the variant that decides the answers): balanced, and
        every later :meth:`arrange` is balanced within it, so no order of mention goes with an answer."""
        value = self.balanced(key, n)
        self.crossed = (key, n)
        self.meta["cell"] = {"key": key, "value": value, "of": n}
        return value

    def crossed_cell(self, key: str, n: int, fact: str) -> tuple[int, bool]:
        """The item's cell (``key``, as :meth:`cell`) crossed with a story fact that decides a control's answer
        (``fact``: the swap is undone, say), so that the control's answer is no fixed function of the story.

        Both are drawn as one balanced value of ``2 * n``, and every later draw is balanced within the crossed
        cell: the fact splits each cell evenly, and no order of mention goes with either. The cell is recorded as
        :meth:`cell` records it, the fact beside it (``meta["cell"]["fact"]``)."""
        both = self.balanced(f"{key} x {fact}", 2 * n)
        self.crossed = (f"{key} x {fact}", 2 * n)
        value, on = both % n, both >= n
        self.meta["cell"] = {"key": key, "value": value, "of": n, "fact": {"key": fact, "value": int(on)}}
        return value, on

    # --- draws independent of the key ----------------------------------------------------------
    def _draw(self, key: str) -> random.Random:
        """The random stream of one named draw: seeded by the story (seed, task, index, attempt) and the draw's name,
        never by the cell, so what it draws cannot depend on the key. Each name is drawn once per story."""
        draws = self.meta.setdefault("draws", {})
        assert isinstance(draws, dict) and key not in draws, f"draw {key!r} made twice"
        return random.Random(f"commet-draw:{self.seed}:{self.group}:{self.index}:{self.attempt}:{key}")

    def _record(self, key: str, value: int | list[int], n: int) -> None:
        draws = self.meta["draws"]
        assert isinstance(draws, dict)
        draws[key] = {"value": value, "of": n}

    def pick(self, key: str, pool: Sequence[T]) -> T:
        """One of ``pool`` (a name, a colour, a thing, a room, a reason), uniformly, from the draw's own stream;
        recorded in ``meta["draws"][key]`` (its index and the pool's size)."""
        k = self._draw(key).randrange(len(pool))
        self._record(key, k, len(pool))
        return pool[k]

    def sample(self, key: str, pool: Sequence[T], k: int) -> list[T]:
        """``k`` distinct items of ``pool``, drawn and recorded as :meth:`pick` draws one."""
        chosen = self._draw(key).sample(range(len(pool)), k)
        self._record(key, chosen, len(pool))
        return [pool[j] for j in chosen]

    def shuffled(self, key: str, items: Sequence[T]) -> list[T]:
        """``items`` in a random order (an order no reader is scored on: the rest after a balanced first), drawn
        and recorded as :meth:`pick` draws one; a list of one item or none is no draw."""
        return list(items) if len(items) < 2 else self.sample(key, items, len(items))

    def frame(self, key: str, pool: Sequence[T]) -> T:
        """One frame of a critical sentence (a template, or clauses to order), drawn independently of the
        answer; which one is also remembered in the facts."""
        assert len(pool) >= MIN_FRAMES, f"{key}: {len(pool)} frames"
        chosen = self.pick(f"frame: {key}", pool)
        frames = self.facts.setdefault("frames", {})
        draws = self.meta["draws"]
        assert isinstance(frames, dict) and isinstance(draws, dict)
        frames[key] = draws[f"frame: {key}"]["value"]
        return chosen

    def wording(self, pool: Sequence[str]) -> str:
        """One wording of a question (named by the turn it asks, so that each turn's wording is a draw of its own)."""
        assert len(pool) >= MIN_WORDINGS, pool
        return self.pick(f"wording: turn {len(self.turns) + 1}: {pool[0]}", pool)

    def role(self, test: bool, control: str) -> bool:
        """Mark the StoryTurn as the booklet's test item or as a control (``control`` says what it changes)."""
        self.meta["item"] = TEST if test else CONTROL
        if not test:
            self.meta["control"] = control
        return test

    # --- turns ------------------------------------------------------------------------------
    def picture(self, world: World) -> str:
        """Snapshot the world's current state as a scene; returns its image id."""
        image_id = f"{self.story_id}-img{len(self.scenes) + 1}"
        self.scenes[image_id] = compose(world, variant=sum(map(ord, self.story_id)))
        return image_id

    def shipped_scenes(self) -> tuple[dict[str, Scene], dict[str, str]]:
        """The scenes as the dataset's scene files hold them, and the renaming (world id -> file id).

        The world's ids are the generator's: some name a role ("packed", "theirs", "own"), and the order in which
        a task adds things to the world can follow the key. A scene file tells only what its picture shows: every
        place, thing and screen of the story is renamed ``place<k>``, ``thing<k>``, ``screen<k>``, numbered in an
        order drawn from a stream seeded without the cell (the recorded draw ``scene ids``), the same in each of
        the story's pictures; each list is sorted by the new ids (the people by theirs, their names); and ``sees``
        (who sees what: part of the key of a perspective question) is left out, and so is every thing the picture
        does not show (``visible: false``: the food inside a closed lunchbox is the key of a reality question);
        a thing shown in none of the story's pictures gets no id at all. The pictures are the same."""
        found: dict[str, str] = {}
        for scene in self.scenes.values():
            for key, prefix in (("places", "place"), ("objects", "thing"), ("occluders", "screen")):
                found.update({e["id"]: prefix for e in scene[key] if _shown(e)})
        ids = sorted(found)
        order = self.sample("scene ids", range(len(ids)), len(ids)) if len(ids) > 1 else list(range(len(ids)))
        counts: dict[str, int] = {}
        rename: dict[str, str] = {}
        for k in order:
            prefix = found[ids[k]]
            counts[prefix] = counts.get(prefix, 0) + 1
            rename[ids[k]] = f"{prefix}{counts[prefix]}"

        def number(entity_id: str) -> tuple[str, int]:
            text = entity_id.rstrip("0123456789")
            return text, int(entity_id[len(text):] or 0)

        def renamed(value: object) -> object:
            return rename.get(value, value) if isinstance(value, str) else value

        shipped: dict[str, Scene] = {}
        for image_id, scene in self.scenes.items():
            out = {k: v for k, v in scene.items() if k != "sees"}
            for key in ("places", "objects", "occluders"):
                entities = [{k: renamed(v) if k in ("id", "location", "hidden_by") else v for k, v in e.items()}
                            for e in scene[key] if _shown(e)]
                out[key] = sorted(entities, key=lambda e: number(e["id"]))
            out["agents"] = sorted(scene["agents"], key=lambda a: str(a["id"]))
            out["offstage"] = sorted((str(renamed(i)) for i in scene.get("offstage", [])), key=number)
            out["absent"] = sorted(scene.get("absent", []))
            shipped[image_id] = out
        return shipped, rename

    def turn(self, asks: str, question: str, answers: str | list[str], story: str = "", image: str | None = None,
             feedback: Feedback | None = None, rubric: Rubric | None = None, options: list[Option] | None = None,
             kind: str = "open", keyed: str | None = None, control: str | None = None) -> None:
        """Add a turn. ``keyed``: its answer follows the respondent's own earlier pick; ``control``: a check that the
        story was followed whose answer the story states and never varies (what it checks): both are recorded in
        the turn's meta, and the audit scores such turns on lines of their own, never gated."""
        answers = [answers] if isinstance(answers, str) else answers
        meta: dict[str, object] = {"type": kind, "asks": asks}
        if keyed:
            meta["keyed"] = keyed
        if control:
            meta["control"] = control
        if feedback is not None:
            feedback = feedback.model_copy(update={
                "right": articles(feedback.right) if feedback.right else feedback.right,
                "wrong": articles(feedback.wrong) if feedback.wrong else feedback.wrong,
                "by_answer": [f.model_copy(update={"text": articles(f.text)}) for f in feedback.by_answer]})
        if rubric is not None:
            rubric = rubric.model_copy(update={"key_inference": articles(rubric.key_inference),
                                               "false_inferences": [articles(f) for f in rubric.false_inferences]})
        options = [o.model_copy(update={"text": articles(o.text)}) for o in options or []]
        self.turns.append(Turn(story=articles(story), question=articles(question),
                               answers=[articles(cap(a)) for a in answers], image=image, feedback=feedback,
                               rubric=rubric, options=options, meta=meta))

    def yes_no(self, asks: str, question: str, answer: bool, why: str = "", rubric: Rubric | None = None, *,
               story: str = "", image: str | None = None, feedback: Feedback | None = None) -> None:
        """A yes/no question (no options shown); ``why`` follows the yes or no when the question asks why."""
        word = "yes" if answer else "no"
        self.turn(asks, question, f"{cap(word)}. {why}" if why else word, kind="yes/no", rubric=rubric,
                  story=story, image=image, feedback=feedback)

    def choose(self, asks: str, stem: str, options: list[str], answers: str | list[str], story: str = "",
               image: str | None = None, feedback: Feedback | None = None, labelled: bool = False,
               keyed: str | None = None) -> None:
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
        rest = self.shuffled(f"options: turn {len(self.turns) + 1}", [o for o in options if o != answers[0]])
        ordered = rest[:position] + [answers[0]] + rest[position:]
        if labelled:
            shown = [Option(label=LABELS[k], text=o) for k, o in enumerate(ordered)]
            question = f"{stem}? " + " or ".join(f"{o.label}: '{o.text}'" for o in shown)
        else:
            shown = [Option(text=o) for o in ordered]
            question = f"{stem}, {join_or(ordered)}?"
        self.turn(asks, question, answers, story=story, image=image, feedback=feedback, options=shown, kind="choice",
                  keyed=keyed)

    def why(self, asks: str, question: str, answer: str, key: str, false: list[str], story: str = "",
            feedback: Feedback | None = None, image: str | None = None) -> None:
        """An explanation question with its rubric: the key inference and the false inferences."""
        self.turn(asks, question, answer, story=story, feedback=feedback, image=image,
                  rubric=Rubric(key_inference=key, false_inferences=false), kind="why")


def right_wrong(right: str, wrong: str) -> Feedback:
    return Feedback(right=right, wrong=wrong)


def keyed_feedback(texts: dict[str, str]) -> Feedback:
    """Feedback keyed by the previous turn's answers (given uncapitalised, as in :meth:`StoryBuilder.turn`)."""
    return Feedback(by_answer=[AnswerFeedback(answer=cap(a), text=t) for a, t in texts.items()])


class Cast:
    """Picks distinct names and pronouns for one story, each a recorded draw of the builder (:meth:`StoryBuilder.pick`),
    so that no name goes with the key; shirts come from a palette no thing uses."""

    def __init__(self, b: StoryBuilder) -> None:
        self.b = b
        self.used: set[str] = set()
        self.shirts = b.shuffled("cast: shirts", lex.SHIRT_COLOURS)
        self.count = 0

    def _agent(self, name: str, pronoun: str, adult: bool, x: float, old: bool = False) -> Agent:
        self.used.add(name)
        agent_id = name.lower().replace(".", "").replace(" ", "_")
        return Agent(agent_id, name, pronoun, adult, self.shirts.pop(), x, old=old)

    def _key(self, what: str) -> str:
        self.count += 1
        return f"cast: {what} {self.count}"

    def child(self, x: float, pronoun: str | None = None) -> Agent:
        key = self._key("child")
        pronoun = pronoun or self.b.pick(f"{key}: pronoun", ("she", "he"))
        pool = [n for n in (lex.GIRLS if pronoun == "she" else lex.BOYS) if n not in self.used]
        return self._agent(self.b.pick(f"{key}: name", pool), pronoun, False, x)

    def pair(self, x1: float, x2: float) -> tuple[Agent, Agent]:
        """Two children of one gender (either), so that no pronoun tells apart the two slots a story swaps."""
        pronoun = self.b.pick(self._key("pair: pronoun"), ("she", "he"))
        return self.child(x1, pronoun), self.child(x2, pronoun)

    def adult(self, x: float, teacher: bool = False) -> Agent:
        pool = [a for a in (lex.TEACHERS if teacher else lex.ADULTS) if a[0] not in self.used]
        name, pronoun = self.b.pick(self._key("adult"), pool)
        return self._agent(name, pronoun, True, x, old=name in lex.GRANDPARENTS)
