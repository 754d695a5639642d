"""Shallow readers: predictors that read a story's surface but never reason about minds.

Why: an item measures Theory of Mind only if a reader who skims cannot answer it. The
story-blind learner (:mod:`commet.models.shortcut`) never reads the story; these readers,
the dataset audit's (:mod:`commet.generation.audit`), do, but only its surface, each as one
simple rule chosen per (task, turn) on training items and applied to held-out ones:

* ``order``: the option mentioned first, last, most or least often, k-th, in the last
  sentence (or not), first or last in the turn's own story, the longest or shortest option,
  the one whose words the question itself uses, the k-th colour named;
* ``cue word``: one word present in the story or not switches between two such rules (or
  fixed answers: "yes", "happy", the second option...). Beside the story's words, the reader
  counts the person the question asks about: named at least k times in the story, named first
  or last of everyone (a story that tells a test item and its control with the characters
  swapped between slots must name each slot as often);
* ``anchor``: the option named right after or before one word, or in the same sentence
  (or, of two options, the other one);
* ``context``: reads only the feedback texts and the earlier questions (and the current
  question): which option they name, and cue words in them;
* ``picture``: reads the scene of the latest picture, never the text: the biggest, middle or
  smallest thing among the options, the leftmost or rightmost, the nearest to or farthest from the
  picture's centre, the nearest to or farthest from a person the question names;
* ``position``: a lookup on where each option's thing is drawn: its exact pixel box (left edge and
  width, which is its place and its size) and its distance from the picture's centre, each mapped to
  the rate at which a thing drawn there was the answer in the training items; it picks the option
  drawn where answers were most often (a layout that puts the answer at spots the other options never
  take is read off at once);
* ``layout``: the same lookup on two cues at once: the picture's screens (whether there is one, and
  where) joined with each option's size rank among the options and the place it stands on (which one,
  and whether alone there), or with its spot; a layout where one kind of picture (no screen, say)
  always puts the answer at one size on one table is read off, though each cue alone is balanced;
* ``words``: a linear model over the words around each option, or over all the words read for a
  yes/no question (:mod:`commet.generation.word_reader`);
* ``mention``, ``people picture``, ``feedback``, ``statistics``, ``census``: a pseudo-word of :mod:`~commet.generation.surface_cues` switches between two rules; ``phrases`` (shown, never gated): the option whose words are said most or least often.

A rule that does not apply to an item (no option mentioned, no scene) answers the first
option (or "yes"), which a balanced set makes a chance answer. The earlier answers' key is a
separate, informational reader (``earlier answers``): it copies or flips an earlier expected
answer, which a respondent only has by answering right, so it shows designed consistencies
(naughty, so in trouble) rather than leaks.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from commet.format.model import StoryTurn
from commet.generation.surface_cues import (
    always_shown,
    census_cues,
    feedback_cues,
    mention_cues,
    people,
    picture_cues,
    statistics_cues,
)
from commet.generation.word_reader import WORDS
from commet.models.shortcut import closed_turn
from commet.text import normalize

_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
#: A capitalised word after the question's first word: the people it names ("Is Mia naughty?").
_PERSON = re.compile(r"(?<=\S )(?:(?:Mrs?|Ms|Dr)\. )?[A-Z][a-z]+(?: [A-Z][a-z]+)?")
#: Counts of the asked person's name past this are not told apart.
MAX_NAME_COUNT = 8
_SENTENCE_END = re.compile(r"(?<=[.!?])['\u2019\"]?\s+")
#: Words that never tell options apart (and "one", as in "the red one").
_FUNCTION = frozenset({"a", "an", "the", "in", "into", "on", "onto", "to", "at", "from", "of", "with", "one", "ones",
                       "it", "its", "and", "or", "by", "for", "under", "behind", "next"})
_COLOURS = ("red", "blue", "green", "yellow", "orange", "purple", "pink", "brown", "black", "white", "grey", "gray")
_YES_NO = ("yes", "no")
#: Cue readers over :mod:`commet.generation.surface_cues`: one pseudo-word switches between two answers.
MENTION, PEOPLE_PICTURE, FEEDBACK, STATISTICS, CENSUS = "mention", "people picture", "feedback", "statistics", "census"
CUE_FAMILIES = (MENTION, PEOPLE_PICTURE, FEEDBACK, STATISTICS, CENSUS)
#: Families whose accuracy is gated (the earlier-answers reader is informational).
POSITION, LAYOUT = "position", "layout"
#: The lookups on where the options are drawn (:class:`PositionReader`).
LOOKUPS = (POSITION, LAYOUT)
FAMILIES = ("order", "cue word", "anchor", "context", "picture", *LOOKUPS, *CUE_FAMILIES, WORDS)
#: ``phrases`` counts each option's exact words in the story: where a story lists things ("a red duck with a bow, a red
#: duck without ...") that counts how many a description fits, interpretation's own fact, so it is shown, not gated.
PHRASES = "phrases"
INFORMATIONAL = ("earlier answers", PHRASES)
#: A cue word must occur in at least this many training items, and be absent from as many.
MIN_WORD_ITEMS = 3
#: Words the word reader reads before and after each mention of an option.
BEFORE, AFTER = 3, 2


def stem(word: str) -> str:
    """A crude plural stem: ``apples`` and ``apple``, ``boxes`` and ``box`` compare equal."""
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) > 4 and word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


@dataclass
class Text:
    """Tokenised text: stemmed tokens and the sentence each belongs to."""

    tokens: list[str] = field(default_factory=list)
    sentence: list[int] = field(default_factory=list)

    @classmethod
    def of(cls, parts: Iterable[str]) -> Text:
        text = cls()
        count = 0
        for part in parts:
            for chunk in _SENTENCE_END.split(part.strip()):
                words = [stem(w) for w in _TOKEN.findall(chunk.lower())]
                if words:
                    text.tokens += words
                    text.sentence += [count] * len(words)
                    count += 1
        return text

    @property
    def sentences(self) -> int:
        return self.sentence[-1] + 1 if self.sentence else 0


def option_keys(options: Sequence[str]) -> list[tuple[str, ...]]:
    """Per option, its distinctive stemmed words: those no other option has (all its content words if none)."""
    content = [[stem(w) for w in _TOKEN.findall(o.lower()) if w not in _FUNCTION] for o in options]
    keys = []
    for k, words in enumerate(content):
        others = {w for j, ws in enumerate(content) if j != k for w in ws}
        keys.append(tuple(w for w in words if w not in others) or tuple(words))
    return keys


def _owned(text: Text, keys: Sequence[tuple[str, ...]]) -> Iterator[tuple[int, int]]:
    """(token position, option) for every token that is one option's distinctive word (and no other's)."""
    for position, token in enumerate(text.tokens):
        owners = [k for k, key in enumerate(keys) if token in key]
        if len(owners) == 1:
            yield position, owners[0]


def mentions(text: Text, keys: Sequence[tuple[str, ...]]) -> list[tuple[int, int]]:
    """(token position, option) for every mention: a run of an option's distinctive words counts once."""
    found: list[tuple[int, int]] = []
    previous = (-2, -1)
    for position, owner in _owned(text, keys):
        if previous != (position - 1, owner):
            found.append((position, owner))
        previous = (position, owner)
    return found


def option_words(text: Text, keys: Sequence[tuple[str, ...]]) -> tuple[frozenset[str], ...]:
    """Per option, the words around its mentions in ``text``: ``S:w`` for each word of a sentence that names
    it, ``B1:w`` .. ``B3:w`` for the words just before a mention and ``A1:w``, ``A2:w`` just after."""
    by_sentence: dict[int, set[str]] = {}
    for token, sentence in zip(text.tokens, text.sentence, strict=True):
        by_sentence.setdefault(sentence, set()).add(token)
    found: list[set[str]] = [set() for _ in keys]
    for position, owner in _owned(text, keys):
        words = found[owner]
        words.update(f"S:{w}" for w in by_sentence[text.sentence[position]])
        words.update(f"B{d}:{text.tokens[position - d]}" for d in range(1, BEFORE + 1) if position - d >= 0)
        words.update(f"A{d}:{text.tokens[position + d]}" for d in range(1, AFTER + 1)
                     if position + d < len(text.tokens))
    return tuple(frozenset(words) for words in found)


@dataclass
class Reading:
    """A closed turn as the shallow readers see it, with every rule's pick (``-1``: the rule does not apply)."""

    task: str
    turn: int
    story_id: str
    n: int  # options (2 for yes/no)
    texts: tuple[str, ...]  # the options' normalised texts (yes, no for yes/no questions)
    right: tuple[frozenset[int], ...]  # per branch, the right options
    keyed: bool  # designed: follows the respondent's own earlier pick, or a control turn (excepted from the gate)
    words: frozenset[str]  # stemmed words of the story so far
    context_words: frozenset[str]
    picks: dict[str, dict[object, int]]  # family -> rule -> pick
    option_words: tuple[frozenset[str], ...] = ()  # listed options: the words around each (the word reader's)
    cues: Mapping[str, frozenset[str]] = field(default_factory=dict)  # cue family -> its pseudo-words
    positions: tuple[frozenset[str], ...] = ()  # listed options drawn in the picture: where each is (the lookup's)
    layout: tuple[frozenset[str], ...] = ()  # the same options: the picture's screens joined with each one's cues

    def spots(self, family: str) -> tuple[frozenset[str], ...]:
        """The keys a lookup of ``family`` (:data:`LOOKUPS`) reads per option."""
        return self.layout if family == LAYOUT else self.positions

    def cue_words(self, family: str) -> frozenset[str]:
        """The words a cue reader of ``family`` switches on."""
        if family == "context":
            return self.context_words
        return self.cues.get(family, frozenset()) if family in CUE_FAMILIES else self.words

    def correct(self, pick: int, branch: int = 0) -> bool:
        return pick in self.right[min(branch, len(self.right) - 1)]


def _rank_rules(prefix: str, order: list[int], n: int) -> dict[object, int]:
    """``prefix k`` -> the option at rank k of ``order`` (distinct options, first first)."""
    return {f"{prefix} {k + 1}": option for k, option in enumerate(order[:n])}


def _order_rules(found: list[tuple[int, int]], text: Text, n: int, turn_start: int) -> dict[object, int]:
    rules: dict[object, int] = {}
    if not found:
        return rules
    first = list(dict.fromkeys(o for _, o in found))
    last = list(dict.fromkeys(o for _, o in reversed(found)))
    rules.update(_rank_rules("mentioned first, rank", first, n))
    rules.update(_rank_rules("mentioned last, rank", last, n))
    for nth in (2, 3):  # options ranked by their n-th mention
        at: dict[int, list[int]] = {}
        for position, option in found:
            at.setdefault(option, []).append(position)
        ranked = sorted((ps[nth - 1], o) for o, ps in at.items() if len(ps) >= nth)
        rules.update(_rank_rules(f"mention {nth} first, rank", [o for _, o in ranked], n))
    counts = [sum(1 for _, o in found if o == k) for k in range(n)]
    top, bottom = max(counts), min(counts)
    if counts.count(top) == 1:
        rules["mentioned most"] = counts.index(top)
    if counts.count(bottom) == 1:
        rules["mentioned least"] = counts.index(bottom)
    final = text.sentence[-1] if text.sentence else -1
    in_last = {o for p, o in found if text.sentence[p] == final}
    if len(in_last) == 1:
        rules["in the last sentence"] = next(iter(in_last))
        if n == 2:
            rules["not in the last sentence"] = 1 - next(iter(in_last))
    own = [(p, o) for p, o in found if text.sentence[p] >= turn_start]
    if own:
        rules["first in this turn's story"] = own[0][1]
        rules["last in this turn's story"] = own[-1][1]
    return rules


def _form_rules(options: Sequence[str], question: Text, keys: Sequence[tuple[str, ...]]) -> dict[object, int]:
    rules: dict[object, int] = {}
    lengths = [len(o) for o in options]
    if lengths.count(max(lengths)) == 1:
        rules["longest option"] = lengths.index(max(lengths))
    if lengths.count(min(lengths)) == 1:
        rules["shortest option"] = lengths.index(min(lengths))
    asked = {o for _, o in mentions(question, keys)}
    if len(asked) == 1:
        rules["named in the question"] = next(iter(asked))
        if len(options) == 2:
            rules["not named in the question"] = 1 - next(iter(asked))
    return rules


def _phrase_rules(story: str, options: Sequence[str]) -> dict[object, int]:
    """The option whose exact words (less a leading article) occur most, or least, often in the story so far."""
    counts = [len(re.findall(rf"\b{re.escape(re.sub(r'^(the|a|an) ', '', normalize(o)))}\b", normalize(story)))
              for o in options]
    rules: dict[object, int] = {}
    for name, best in (("said most often", max(counts)), ("said least often", min(counts))):
        if counts.count(best) == 1:
            rules[name] = counts.index(best)
    return rules


def _anchor_rules(found: list[tuple[int, int]], text: Text, n: int) -> dict[object, int]:
    """(word, mode) -> the option right after / before the word's last occurrence, or in its sentence."""
    rules: dict[object, int] = {}
    if not found:
        return rules
    last_at: dict[str, int] = {}
    for position, token in enumerate(text.tokens):
        last_at[token] = position
    for word, position in last_at.items():
        sentence = text.sentence[position]
        after = next(((p, o) for p, o in found if p > position), None)
        before = next(((p, o) for p, o in reversed(found) if p < position), None)
        inside = {o for p, o in found if text.sentence[p] == sentence}
        for mode, hit in (("after", after), ("before", before)):
            if hit is not None and text.sentence[hit[0]] == sentence:
                rules[(word, mode)] = hit[1]
                if n == 2:
                    rules[(word, f"not {mode}")] = 1 - hit[1]
        if len(inside) == 1:
            rules[(word, "same sentence")] = next(iter(inside))
            if n == 2:
                rules[(word, "not in its sentence")] = 1 - next(iter(inside))
    return rules


def _context_rules(found: list[tuple[int, int]], feedback: list[tuple[int, int]], n: int) -> dict[object, int]:
    rules: dict[object, int] = {}
    if found:
        first = list(dict.fromkeys(o for _, o in found))
        rules.update(_rank_rules("named first in the context, rank", first, n))
        rules["named last in the context"] = found[-1][1]
        counts = [sum(1 for _, o in found if o == k) for k in range(n)]
        if counts.count(max(counts)) == 1:
            rules["named most in the context"] = counts.index(max(counts))
    named = {o for _, o in feedback}
    if len(named) == 1:
        rules["named in the feedback"] = next(iter(named))
        if n == 2:
            rules["not named in the feedback"] = 1 - next(iter(named))
    return rules


def _entities(scene: Mapping[str, object], *kinds: str) -> list[Mapping[str, object]]:
    """The scene's entities of these kinds ("objects", "places", "agents"): the objects in their lists. Scene
    files are read as they are, so anything else there (a list that is not one, an entry that is no object)
    is no entity."""
    found: list[Mapping[str, object]] = []
    for kind in kinds:
        listed = scene.get(kind)
        if isinstance(listed, list):
            found += [entity for entity in listed if isinstance(entity, dict)]
    return found


def _centre_x(entity: Mapping[str, object]) -> float | None:
    """The horizontal centre of an entity's ``bbox`` ([x0, y0, x1, y1]); None without a usable one."""
    box = entity.get("bbox")
    if not isinstance(box, list) or len(box) != 4 or not all(isinstance(v, (int, float)) for v in box):
        return None
    return float(box[0] + box[2]) / 2


def _matched(scene: Mapping[str, object] | None, keys: Sequence[tuple[str, ...]]) -> list[Mapping[str, object]]:
    """The thing (or place) of the scene each option names, in option order; [] unless every option names
    exactly one. Only what the picture shows is read: a thing the scene marks ``"visible": false`` (inside a
    closed box, in a pocket) is not drawn, so no reader of the picture sees it."""
    if not scene:
        return []
    entities = [e for e in _entities(scene, "objects", "places") if e.get("visible", True) is not False]
    matched = []
    for key in keys:
        hits = []
        for entity in entities:
            words = {stem(w) for w in _TOKEN.findall(" ".join(str(entity.get(f, "") or "") for f in (
                "colour", "noun", "kind", "feature", "location")).lower())}
            if set(key) <= words:
                hits.append(entity)
        if len(hits) != 1:  # not in the picture, or more than one thing fits: no rank to read
            return []
        matched.append(hits[0])
    return matched


def _half_width(scene: Mapping[str, object]) -> float:
    width = scene.get("width")
    return float(width) / 2 if isinstance(width, (int, float)) else 320.0


def _scene_rules(scene: Mapping[str, object] | None, keys: Sequence[tuple[str, ...]], question: str = ""
                 ) -> dict[object, int]:
    """Size and left-to-right rank of the things (or places) the options name, in the scene, which of them
    stands nearest to (or farthest from) the picture's centre, and which stands nearest to (or farthest from)
    each person the question names, in the order it names them."""
    matched = _matched(scene, keys)
    if not matched:
        return {}
    assert scene is not None
    rules: dict[object, int] = {}
    sizes = [size for e in matched if isinstance(size := e.get("size"), int)]
    if len(sizes) == len(matched) and len(set(sizes)) == len(sizes):
        by_size = sorted(range(len(sizes)), key=lambda k: sizes[k])
        rules.update({"smallest": by_size[0], "biggest": by_size[-1]})
        if len(by_size) == 3:
            rules["middle-sized"] = by_size[1]
    xs = [x for e in matched if (x := _centre_x(e)) is not None]
    if len(xs) == len(matched) and len(set(xs)) == len(xs):
        by_x = sorted(range(len(xs)), key=lambda k: xs[k])
        rules.update({"leftmost": by_x[0], "rightmost": by_x[-1]})
        if len(by_x) == 3:
            rules["middle"] = by_x[1]
        centre = [round(abs(x - _half_width(scene)), 1) for x in xs]
        if len(set(centre)) == len(centre):
            rules["nearest the centre"] = centre.index(min(centre))
            rules["farthest from the centre"] = centre.index(max(centre))
        people = {str(a.get("name")): x for a in _entities(scene, "agents") if (x := _centre_x(a)) is not None}
        for rank, name in enumerate(n for n in dict.fromkeys(_PERSON.findall(question)) if n in people):
            distance = [abs(x - people[name]) for x in xs]
            if len(set(distance)) == len(distance):
                rules[f"nearest to person {rank + 1}"] = distance.index(min(distance))
                rules[f"farthest from person {rank + 1}"] = distance.index(max(distance))
    return rules


def _positions(scene: Mapping[str, object] | None, keys: Sequence[tuple[str, ...]]) -> tuple[frozenset[str], ...]:
    """Per option, where its thing is drawn, as lookup keys: the exact box (left edge and width, in whole
    pixels: the spot and the size), the centre alone, and the distance from the picture's centre."""
    found = []
    for entity in _matched(scene, keys):
        box = entity.get("bbox")
        if not isinstance(box, list) or len(box) != 4 or not all(isinstance(v, (int, float)) for v in box):
            return ()
        assert scene is not None
        centre = (box[0] + box[2]) / 2
        found.append(frozenset({f"box:{round(box[0])}:{round(box[2] - box[0])}", f"x:{round(centre)}",
                                f"from centre:{round(abs(centre - _half_width(scene)))}"}))
    return tuple(found)


def _box(entity: Mapping[str, object]) -> list[float] | None:
    box = entity.get("bbox")
    if not isinstance(box, list) or len(box) != 4 or not all(isinstance(v, (int, float)) for v in box):
        return None
    return [float(v) for v in box]


def _layout(scene: Mapping[str, object] | None, keys: Sequence[tuple[str, ...]]) -> tuple[frozenset[str], ...]:
    """Per option, two cues of the picture at once, as lookup keys: the screens (``screen: none``, or whether
    there is one with ``screen: yes``, or where each stands: ``screen at 150,470``) joined with the option's size
    rank among the options (``rank:?`` if they are not all sized and distinct) and its place (the place's centre,
    and whether the option stands there alone or with how many of the others), or with the option's centre."""
    matched = _matched(scene, keys)
    if not matched:
        return ()
    assert scene is not None
    boxes = [_box(e) for e in matched]
    if any(box is None for box in boxes):
        return ()
    screens = sorted(round((box[0] + box[2]) / 2) for o in _entities(scene, "occluders") if (box := _box(o)))
    present = f"screen: {'yes' if screens else 'none'}"
    where = f"screen at {','.join(map(str, screens))}" if screens else present
    places = {str(p.get("id")): box for p in _entities(scene, "places") if (box := _box(p)) is not None}
    sizes = [size for e in matched if isinstance(size := e.get("size"), int)]
    ranked = len(sizes) == len(matched) and len(set(sizes)) == len(sizes)
    found = []
    for k, (entity, box) in enumerate(zip(matched, boxes, strict=True)):
        assert box is not None
        rank = f"rank:{sorted(sizes).index(sizes[k]) + 1}" if ranked else "rank:?"
        location = entity.get("location")
        on = places.get(str(location)) if location is not None else None
        place = f"on:{round((on[0] + on[2]) / 2)}" if on is not None else "on:-"
        shared = sum(1 for e in matched if location is not None and e.get("location") == location) - 1
        company = f"with:{shared}"
        found.append(frozenset({f"{present}|{rank}|{company}", f"{where}|{rank}|{place}|{company}",
                                f"{where}|x:{round((box[0] + box[2]) / 2)}"}))
    return tuple(found)


@dataclass(frozen=True)
class PositionReader:
    """A fitted lookup for one (task, turn) (``family``: where each option is drawn, or the layout's joint cues):
    per lookup key, (times an option drawn there was right, times an option was drawn there) on the training
    items."""

    rates: dict[str, tuple[int, int]]
    family: str = POSITION

    def score(self, spots: frozenset[str], n: int) -> float:
        """The best smoothed rate of being the answer among the option's lookup keys (chance, 1/n, unseen)."""
        return max(((right + 1 / n) / (seen + 1) for right, seen in (self.rates.get(s, (0, 0)) for s in spots)),
                   default=1 / n)

    def pick(self, item: Reading) -> int:
        found = item.spots(self.family)
        if len(found) != item.n:
            return 0
        scores = [self.score(spots, item.n) for spots in found]
        return int(np.argmax(scores))

    def describe(self) -> str:
        seen = [(right / count, count, key) for key, (right, count) in self.rates.items() if count >= MIN_WORD_ITEMS]
        if not seen:
            return "nothing learned"
        rate, count, key = max(seen)
        return f"drawn at {key}: the answer {100 * rate:.0f} % of {count}"


def fit_position_reader(items: Sequence[Reading], family: str = POSITION) -> PositionReader:
    """The lookup of ``family`` (:data:`LOOKUPS`) for one (task, turn), counted on ``items`` (free picks, every
    option right, teach nothing)."""
    rates: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for item in items:
        found = item.spots(family)
        if len(found) != item.n or len(item.right[0]) >= item.n:
            continue
        for k, spots in enumerate(found):
            for spot in spots:
                rates[spot][0] += k in item.right[0]
                rates[spot][1] += 1
    return PositionReader({key: (right, seen) for key, (right, seen) in rates.items()}, family)


def _earlier_rules(earlier: list[tuple[tuple[str, ...], int]], texts: tuple[str, ...]) -> dict[object, int]:
    """Copy or flip an earlier turn's expected answer (k turns back)."""
    rules: dict[object, int] = {}
    for back, (their_texts, their_right) in enumerate(reversed(earlier), start=1):
        answer = their_texts[their_right]
        if answer in texts:
            rules[f"same as {back} closed turn(s) back"] = texts.index(answer)
            if len(texts) == 2:
                rules[f"other than {back} closed turn(s) back"] = 1 - texts.index(answer)
    return rules


def _asked_person(question: str, story: str) -> frozenset[str]:
    """Pseudo-words about the first person the question names: how often the story names them
    (``@asked>=k``), and whether they are the first or the last person the story names."""
    asked = _PERSON.findall(question)
    if not asked:
        return frozenset()
    name = asked[0]
    count = len(re.findall(rf"\b{re.escape(name)}\b", story))
    words = {f"@asked>={k}" for k in range(1, min(count, MAX_NAME_COUNT) + 1)}
    people = [m for m in _PERSON.findall(story)]
    if people and people[0] == name:
        words.add("@asked-named-first")
    if people and people[-1] == name:
        words.add("@asked-named-last")
    return frozenset(words)


def readings(storyturn: StoryTurn, scenes: Mapping[str, Mapping[str, object]] | None = None) -> list[Reading]:
    """The closed turns (:func:`~commet.models.shortcut.closed_turn`) of a StoryTurn as shallow readers see them."""
    found: list[Reading] = []
    stories: list[str] = []
    context: list[str] = []
    feedback_now: list[str] = []
    earlier: list[tuple[tuple[str, ...], int]] = []
    latest_scene = None
    shown: list[Mapping[str, object]] = []  # every picture so far
    feedback_all: list[str] = []
    names = people([t.story for t in storyturn.turns] + [t.question for t in storyturn.turns])
    for k, turn in enumerate(storyturn.turns):
        turn_start = Text.of(stories).sentences
        stories.append(turn.story)
        feedback_now = []
        if turn.feedback is not None:
            feedback_now = [turn.feedback.right or "", turn.feedback.wrong or "",
                            *(f.text for f in turn.feedback.by_answer)]
        context += feedback_now
        feedback_all += feedback_now
        if turn.image and scenes is not None and turn.image in scenes:
            latest_scene = scenes[turn.image]
            shown.append(latest_scene)
        shape = closed_turn(storyturn.task, k, turn)
        if shape is None:
            context.append(turn.question)
            continue
        options = shape.options
        texts = options or _YES_NO
        keys = option_keys(texts) if options else [("yes",), ("no",)]
        story = Text.of(stories)
        question_only = turn.question
        for option in sorted((o.text for o in turn.options), key=len, reverse=True):
            question_only = question_only.replace(option, " ")
        context_text = Text.of([*context, question_only])
        picks: dict[str, dict[object, int]] = {}
        if options:
            story_found = mentions(story, keys)
            order = _order_rules(story_found, story, len(options), turn_start)
            colours = [t for t in story.tokens if t in _COLOURS]
            option_colour = [[c for c in _COLOURS if c in key] for key in keys]
            named = list(dict.fromkeys(colours))
            for rank, colour in enumerate(named):
                owners = [j for j, cs in enumerate(option_colour) if cs == [colour]]
                if len(owners) == 1:
                    order[f"colour named {rank + 1}"] = owners[0]
            order |= _form_rules([normalize(o) for o in options], Text.of([question_only]), keys)
            picks["order"] = order
            picks[PHRASES] = _phrase_rules(" ".join(stories), options)
            picks["anchor"] = _anchor_rules(story_found, story, len(options))
            picks["picture"] = _scene_rules(latest_scene, keys, turn.question)
            positions, layout = _positions(latest_scene, keys), _layout(latest_scene, keys)
        else:
            positions, layout = (), ()
            picks["order"], picks["anchor"], picks["picture"], picks[PHRASES] = {}, {}, {}, {}
        picks["context"] = _context_rules(mentions(context_text, keys), mentions(Text.of(feedback_now), keys),
                                          len(texts)) if options else {}
        right_index = min(shape.right[0]) if shape.right else 0
        picks["earlier answers"] = _earlier_rules(earlier, texts)
        found.append(Reading(
            task=storyturn.task, turn=k, story_id=storyturn.id, n=len(texts), texts=tuple(texts),
            right=shape.right, keyed=bool(turn.meta.get("keyed") or turn.meta.get("control")),
            words=frozenset(story.tokens) | _asked_person(turn.question, " ".join(stories)),
            context_words=frozenset(context_text.tokens), picks=picks,
            option_words=option_words(story, keys) if options else (),
            cues={MENTION: mention_cues(turn.question, " ".join(stories), names), CENSUS: census_cues(stories, turn.question, shown, names),
                  PEOPLE_PICTURE: picture_cues(turn.question, shown, names), FEEDBACK: feedback_cues(turn.question, feedback_all, names),
                  STATISTICS: statistics_cues(stories, turn.question, shown)}, positions=positions, layout=layout))
        earlier.append((tuple(texts), right_index))
        context.append(turn.question)
    return found


# --- learning one rule per (task, turn) ----------------------------------------------------------

def _prior_rules(reading: Reading) -> dict[object, int]:
    """Fixed answers: the k-th option, or the option with a given text ("yes", "happy")."""
    return {**{("position", k): k for k in range(reading.n)}, **{("text", t): k for k, t in enumerate(reading.texts)}}


def _correct_matrix(items: Sequence[Reading], rules: list[object], picks: Callable[[Reading], Mapping[object, int]]
                    ) -> np.ndarray:
    """items x rules: whether the rule's pick (the first option where it does not apply) is right."""
    index = {rule: j for j, rule in enumerate(rules)}
    matrix = np.zeros((len(items), len(rules)), dtype=np.float32)
    for i, item in enumerate(items):
        row = matrix[i]
        fallback = item.correct(0)
        if fallback:
            row[:] = 1.0
        for rule, pick in picks(item).items():
            j = index.get(rule)
            if j is not None:
                row[j] = float(item.correct(pick))
    return matrix


@dataclass(frozen=True)
class Rule:
    """A learned shallow rule: one rule, or a cue word switching between two."""

    family: str
    rule: object
    word: str | None = None
    absent: object = None  # the rule used when ``word`` is not there

    def pick(self, item: Reading) -> int:
        if self.word is None:
            return _lookup(item, self.family, self.rule)
        words = item.cue_words(self.family)
        return _lookup(item, self.family, self.rule if self.word in words else self.absent)

    def describe(self) -> str:
        if self.word is None:
            return _name(self.rule)
        return f"'{self.word}' -> {_name(self.rule)}, else {_name(self.absent)}"


def _name(rule: object) -> str:
    if isinstance(rule, tuple) and rule and rule[0] == "position":
        return f"option {rule[1] + 1}"
    if isinstance(rule, tuple) and rule and rule[0] == "text":
        return f"'{rule[1]}'"
    if isinstance(rule, tuple):
        return f"{rule[1]} '{rule[0]}'"
    return str(rule)


def _lookup(item: Reading, family: str, rule: object) -> int:
    if isinstance(rule, tuple) and rule and rule[0] in ("position", "text"):
        pick = _prior_rules(item).get(rule, -1)
    else:
        source = "order" if family == "cue word" or family in CUE_FAMILIES else family
        pick = item.picks[source].get(rule, -1)
        if pick < 0 and (family in ("cue word", "context") or family in CUE_FAMILIES):
            pick = _prior_rules(item).get(rule, -1)
    return pick if 0 <= pick < item.n else 0


def _vocabulary(items: Sequence[Reading], family: str) -> list[str]:
    counts: dict[str, int] = defaultdict(int)
    for item in items:
        for word in item.cue_words(family):
            counts[word] += 1
    words = sorted(w for w, c in counts.items() if MIN_WORD_ITEMS <= c <= len(items) - MIN_WORD_ITEMS)
    return always_shown((item.cue_words(family) for item in items), words) if family == PEOPLE_PICTURE else words


def _best(rules: list[object], scores: np.ndarray) -> object:
    return rules[int(np.argmax(scores))]


def fit_rule(items: Sequence[Reading], family: str) -> Rule:
    """The family's best rule on ``items`` (one (task, turn)), by training accuracy; ties go to the first."""
    if family in ("order", "anchor", "picture", *INFORMATIONAL):
        rules = sorted({r for item in items for r in item.picks[family]}, key=repr)
        if not rules:
            return Rule(family, ("position", 0))
        matrix = _correct_matrix(items, rules, lambda item: item.picks[family])
        return Rule(family, _best(rules, matrix.sum(axis=0)))
    source = "context" if family == "context" else "order"
    rules = sorted({r for item in items for r in (*item.picks[source], *_prior_rules(item))}, key=repr)
    matrix = _correct_matrix(items, rules, lambda item: {**_prior_rules(item), **item.picks[source]})
    totals = matrix.sum(axis=0)
    plain = Rule(family, _best(rules, totals))
    words = _vocabulary(items, family)
    if not words:
        return plain
    presence = np.array([[w in item.cue_words(family) for w in words] for item in items], dtype=np.float32)
    with_word = presence.T @ matrix  # words x rules
    without = totals[None, :] - with_word
    best_with, best_without = with_word.argmax(axis=1), without.argmax(axis=1)
    score = with_word.max(axis=1) + without.max(axis=1)
    w = int(np.argmax(score))
    if score[w] <= totals.max():
        return plain
    return Rule(family, rules[int(best_with[w])], words[w], rules[int(best_without[w])])
