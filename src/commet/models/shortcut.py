"""A shortcut learner that never reads the story: the ``baseline:shortcut`` model, and the dataset audit's
story-blind predictor (:mod:`commet.generation.audit`).

Why: a benchmark item measures Theory of Mind only if it cannot be answered without
reasoning about minds. :class:`ShortcutLearner` learns, from one half of a dataset (or one
of two datasets), the regularities a test-wise respondent could exploit without reading the
story (the answer's position among the options, the yes/no answer, and the answer text) per
(task, turn) and per question wording.

Only closed turns count (:func:`closed_turn`): a turn whose options are listed (``Turn.options``
or named in the question, "... the apple or the cookie?") or whose expected answers are yes/no.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum

from commet.format.model import StoryTurn, Turn
from commet.text import normalize, question_options

#: A wording key needs this many training turns before it is preferred over its (task, turn) key.
MIN_WORDING_SUPPORT = 5
#: A word belongs to a question's wording (its template) when at least this share of the training
#: questions of the same (task, turn) have it; rarer words (the thing, the animal) are content.
TEMPLATE_SHARE = 0.5
_YES_NO = ("yes", "no")
_NAME = re.compile(r"(?<=[a-z,;'] )(?:Mrs?\.|Ms\.|Aunt|Uncle)?\s?[A-Z][a-z]+(?:'s)?")


class Strategy(str, Enum):
    """How a learned key answers: by the most common answer position, answer text or yes/no."""

    position = "position"
    text = "text"
    yes_no = "yes_no"


@dataclass(frozen=True)
class ClosedTurn:
    """A scoreable turn: its options (normalised) and the options or yes/no answers that are right."""

    task: str
    index: int
    wording: str
    options: tuple[str, ...]  # empty for yes/no
    right: tuple[frozenset[int], ...]  # per branch: the right option indexes (yes=0, no=1 for yes/no)

    @property
    def n_choices(self) -> int:
        return len(self.options) or 2


def _yes_no(answer: str) -> int | None:
    first = normalize(answer).split()[:1]
    return _YES_NO.index(first[0]) if first and first[0] in _YES_NO else None


def turn_options(turn: Turn) -> list[str]:
    """The options shown: ``Turn.options`` when listed, else those the question names."""
    return [o.text for o in turn.options] if turn.options else question_options(turn.question)


def wording_key(question: str, options: Sequence[str]) -> str:
    """The question with its options and proper names masked: what a respondent sees as its form."""
    text = question
    for option in sorted(options, key=len, reverse=True):
        text = text.replace(option, "<opt>")
    text = _NAME.sub(" <name>", text)
    return normalize(text.replace("<opt>", " optx ").replace("<name>", " namex "))


def _option_index(options: Sequence[str], answer: str) -> int | None:
    want = normalize(answer)
    for k, option in enumerate(options):
        if normalize(option) == want:
            return k
    hits = [k for k, option in enumerate(options) if normalize(option) and (normalize(option) in want or want in
                                                                              normalize(option))]
    return hits[0] if len(hits) == 1 else None


def closed_turn(task: str, index: int, turn: Turn) -> ClosedTurn | None:
    """The turn as a closed question, or None when it is open (an explanation) or unscoreable."""
    options = turn_options(turn)
    if options:
        right = [_option_index(options, a) for a in turn.answers]
        if any(r is None for r in right):
            return None
        branches = tuple(frozenset({r}) for r in right if r is not None)
    else:
        yn = [_yes_no(a) for a in turn.answers]
        if any(v is None for v in yn):
            return None
        branches = tuple(frozenset({v}) for v in yn if v is not None)
    return ClosedTurn(task, index, wording_key(turn.question, options), tuple(normalize(o) for o in options),
                      branches)


def closed_turns(storyturn: StoryTurn) -> list[ClosedTurn | None]:
    return [closed_turn(storyturn.task, k, t) for k, t in enumerate(storyturn.turns)]


@dataclass
class _Stats:
    positions: Counter[int] = field(default_factory=Counter)
    texts: Counter[str] = field(default_factory=Counter)
    yes_no: Counter[int] = field(default_factory=Counter)
    seen: list[tuple[ClosedTurn, int]] = field(default_factory=list)  # (turn, right option) for strategy choice
    strategy: Strategy = Strategy.position


class ShortcutLearner:
    """Learns answer position, yes/no and answer text per (task, turn) and per question wording."""

    def __init__(self) -> None:
        self.by_turn: dict[tuple[str, int], _Stats] = defaultdict(_Stats)
        self.by_wording: dict[str, _Stats] = defaultdict(_Stats)
        self.template_words: dict[tuple[str, int], set[str]] = {}

    def template(self, closed: ClosedTurn) -> str:
        """The question's wording without its content words (those rare in its (task, turn))."""
        words = self.template_words.get((closed.task, closed.index))
        return closed.wording if words is None else " ".join(w for w in closed.wording.split() if w in words)

    def fit(self, storyturns: Iterable[StoryTurn]) -> ShortcutLearner:
        training = [c for st in storyturns for c in closed_turns(st)
                    if c is not None and len(frozenset().union(*c.right)) < c.n_choices]  # free picks teach nothing
        frequency: dict[tuple[str, int], Counter[str]] = defaultdict(Counter)
        count: Counter[tuple[str, int]] = Counter()
        for closed in training:
            frequency[(closed.task, closed.index)].update(set(closed.wording.split()))
            count[(closed.task, closed.index)] += 1
        self.template_words = {key: {w for w, n in words.items() if n >= TEMPLATE_SHARE * count[key]}
                               for key, words in frequency.items()}
        for closed in training:
            right = min(closed.right[0])  # training follows the first branch
            for stats in (self.by_turn[(closed.task, closed.index)], self.by_wording[self.template(closed)]):
                if closed.options:
                    stats.positions[right] += 1
                    stats.texts[closed.options[right]] += 1
                else:
                    stats.yes_no[right] += 1
                stats.seen.append((closed, right))
        for stats in (*self.by_turn.values(), *self.by_wording.values()):
            stats.strategy = self._best_strategy(stats)
        return self

    def _best_strategy(self, stats: _Stats) -> Strategy:
        if not any(c.options for c, _ in stats.seen):
            return Strategy.yes_no
        scores = {s: sum(self._apply(stats, s, c) == r for c, r in stats.seen) for s in (Strategy.position,
                                                                                          Strategy.text)}
        return max(scores, key=lambda s: (scores[s], s == Strategy.position))

    @staticmethod
    def _apply(stats: _Stats, strategy: Strategy, closed: ClosedTurn) -> int:
        if not closed.options:
            return stats.yes_no.most_common(1)[0][0] if stats.yes_no else 0
        n = len(closed.options)
        if strategy == Strategy.text:
            counts = [stats.texts.get(o, 0) for o in closed.options]
            if max(counts) > 0:
                return counts.index(max(counts))
        by_position = [stats.positions.get(k, 0) for k in range(n)]
        return by_position.index(max(by_position))

    def predict(self, closed: ClosedTurn) -> int:
        """The option index (yes=0 / no=1 for yes/no) the learner picks, from the most specific key it knows."""
        wording = self.by_wording.get(self.template(closed))
        stats = wording if wording is not None and len(wording.seen) >= MIN_WORDING_SUPPORT else \
            self.by_turn.get((closed.task, closed.index))
        if stats is None:
            stats = wording if wording is not None else _Stats()
        return self._apply(stats, stats.strategy, closed)

    def answer_text(self, question: str, options: Sequence[str], task: str = "", index: int = -1) -> str:
        """A reply to a question as shown (for the ``baseline:shortcut`` model)."""
        closed = ClosedTurn(task, index, wording_key(question, options), tuple(normalize(o) for o in options), ())
        pick = self.predict(closed)
        text = options[pick] if options else _YES_NO[pick]
        return text[:1].upper() + text[1:] + "."


def split_halves(storyturns: Sequence[StoryTurn]) -> tuple[list[StoryTurn], list[StoryTurn]]:
    """Per task, the first half of its StoryTurns (in dataset order) and the rest (an odd one goes to the rest)."""
    by_task: dict[str, list[StoryTurn]] = defaultdict(list)
    for storyturn in storyturns:
        by_task[storyturn.task].append(storyturn)
    first: list[StoryTurn] = []
    second: list[StoryTurn] = []
    for items in by_task.values():
        first.extend(items[: len(items) // 2])
        second.extend(items[len(items) // 2:])
    return first, second
