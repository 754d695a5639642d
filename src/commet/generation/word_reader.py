"""The word reader: a linear model over the words around each option, the audit's strongest shallow reader.

Why: the one-rule readers of :mod:`commet.generation.shallow_readers` miss a leak spread over many
words, each frame of a sentence marking the answer with a word of its own ("sees the table" in one,
"has a view of the table" in another). This reader weighs every word at once: for a listed option,
the words of the sentences that name it and the words just before and after each mention; for a
yes/no question, the words of the story so far and, apart, of the feedback and the questions. It is
a conditional logit (one weight per feature, shared by the options, with the option's text and
position as features too), trained per (task, turn) with an L2 penalty chosen by two-fold
cross-validation on the training items. It still never reasons about minds, and never links the
person a question asks about to the story.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

#: The family's name in audit lines.
WORDS = "words"
#: The L2 penalties tried, and the gradient steps of each fit.
PENALTIES = (0.003, 0.03, 0.3)
STEPS = 200
STEP_SIZE = 0.5
#: A feature must be seen in this many training items to get a weight.
MIN_ITEMS = 2


class Item(Protocol):
    """What the reader reads of a closed turn (a :class:`~commet.generation.shallow_readers.Reading`)."""

    @property
    def n(self) -> int: ...
    @property
    def texts(self) -> tuple[str, ...]: ...
    @property
    def right(self) -> tuple[frozenset[int], ...]: ...
    @property
    def words(self) -> frozenset[str]: ...
    @property
    def context_words(self) -> frozenset[str]: ...
    @property
    def option_words(self) -> tuple[frozenset[str], ...]: ...


def _features(item: Item) -> list[frozenset[str]]:
    """What the reader sees of each option of a closed turn."""
    if item.option_words:
        return [words | {f"text:{text}", f"position:{k}"}
                for k, (words, text) in enumerate(zip(item.option_words, item.texts, strict=True))]
    said = {f"W:{w}" for w in item.words} | {f"C:{w}" for w in item.context_words}
    return [frozenset(said | {"text:yes"}), frozenset({"text:no"})]


@dataclass(frozen=True)
class WordReader:
    """A fitted word reader for one (task, turn): a weight per feature."""

    weights: dict[str, float]

    def pick(self, item: Item) -> int:
        scores = [sum(self.weights.get(f, 0.0) for f in words) for words in _features(item)]
        return int(np.argmax(scores))

    def describe(self) -> str:
        top = sorted(self.weights.items(), key=lambda kv: (-abs(kv[1]), kv[0]))[:3]
        return "weighs " + ", ".join(f"{name} {weight:+.2f}" for name, weight in top) if top else "nothing learned"


def _design(items: Sequence[Item], vocabulary: dict[str, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """items x options x features (0/1), the options that exist (0, or -inf for padding), and the target
    (the right options, equally weighted)."""
    n = max(item.n for item in items)
    x = np.zeros((len(items), n, len(vocabulary)), dtype=np.float32)
    exists = np.full((len(items), n), -np.inf, dtype=np.float32)
    target = np.zeros((len(items), n), dtype=np.float32)
    for i, item in enumerate(items):
        for k, words in enumerate(_features(item)):
            x[i, k, [vocabulary[f] for f in words if f in vocabulary]] = 1.0
            exists[i, k] = 0.0
        right = sorted(item.right[0])
        target[i, right] = 1.0 / len(right)
    return x, exists, target


def _train(x: np.ndarray, exists: np.ndarray, target: np.ndarray, penalty: float) -> np.ndarray:
    weights = np.zeros(x.shape[2], dtype=np.float32)
    for _ in range(STEPS):
        scores = np.einsum("ikf,f->ik", x, weights) + exists
        scores -= scores.max(axis=1, keepdims=True)
        chances = np.exp(scores)
        chances /= chances.sum(axis=1, keepdims=True)
        gradient = np.einsum("ikf,ik->f", x, chances - target) / len(x) + penalty * weights
        weights -= STEP_SIZE * gradient
    return weights


def _accuracy(x: np.ndarray, exists: np.ndarray, target: np.ndarray, weights: np.ndarray) -> float:
    picks = (np.einsum("ikf,f->ik", x, weights) + exists).argmax(axis=1)
    return float((target[np.arange(len(x)), picks] > 0).mean())


def fit_word_reader(items: Sequence[Item]) -> WordReader:
    """The word reader of one (task, turn), fitted on ``items`` (items whose every option is right, a free
    pick, teach nothing and are left out)."""
    useful = [item for item in items if len(item.right[0]) < item.n]
    counts: dict[str, int] = {}
    for item in useful:
        for f in set().union(*_features(item)):
            counts[f] = counts.get(f, 0) + 1
    vocabulary = {f: j for j, f in enumerate(sorted(f for f, c in counts.items() if c >= MIN_ITEMS))}
    if len(useful) < 2 * MIN_ITEMS or not vocabulary:
        return WordReader({})
    x, exists, target = _design(useful, vocabulary)
    halves = (np.arange(len(useful)) % 2 == 0, np.arange(len(useful)) % 2 == 1)

    def held_out(penalty: float) -> float:
        return sum(_accuracy(x[b], exists[b], target[b], _train(x[a], exists[a], target[a], penalty))
                   for a, b in (halves, halves[::-1]))

    penalty = max(reversed(PENALTIES), key=held_out)  # ties go to the larger penalty
    weights = _train(x, exists, target, penalty)
    names = list(vocabulary)
    return WordReader({names[j]: float(w) for j, w in enumerate(weights) if w != 0.0})
