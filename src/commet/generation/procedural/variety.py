"""How varied generated StoryTurns are: sentence skeletons, vocabulary, and closeness to the paper's own.

A StoryTurn's **skeleton** is everything it says (stories, feedback, questions, answers) with the
words that merely fill slots masked: names, colours, the nouns of things, places, rooms, animals
and prizes. Two StoryTurns with one skeleton differ only in who and what; different settings,
actions and reasons make different skeletons. **Similarity** is difflib's SequenceMatcher ratio on
word lists, the measure used to keep generated stories away from the StoryTurns the paper prints.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from difflib import SequenceMatcher

from commet.format.model import StoryTurn
from commet.generation.procedural import lexicon as lex
from commet.generation.procedural.tasks.feeling import HABITATS
from commet.generation.procedural.tasks.moral import HARMS

_WORD = re.compile(r"[a-z0-9']+")


def _slot_words() -> frozenset[str]:
    kinds = (*lex.TOYS, *lex.SNACKS, lex.HATS, lex.CARD, lex.JELLY, lex.STICKER, lex.BALLOON, lex.DUCK)
    phrases = [*lex.GIRLS, *lex.BOYS, *(n for n, _ in lex.ADULTS), *(n for n, _ in lex.TEACHERS), *lex.COLOURS,
               *(k.noun for k in kinds), *(k.plural for k in kinds), *(r[0] for r in lex.ROOMS), *lex.CONTAINERS,
               *lex.SURFACES, *lex.OCCLUDERS, *(a[0] for animals in HABITATS.values() for a in animals),
               *HABITATS, *lex.PRIZES, *(h[0] for h in HARMS), *(h[2] for h in HARMS), "mrs", "mr", "ms", "aunt",
               "uncle"]
    return frozenset(w for phrase in phrases for w in _WORD.findall(phrase.lower().replace("'s", "")))


SLOT_WORDS = _slot_words()


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("'s ", " "))


def storyturn_words(storyturn: StoryTurn) -> list[str]:
    """Every word a StoryTurn says: stories, feedback, questions and expected answers, in order."""
    parts: list[str] = []
    for turn in storyturn.turns:
        if turn.feedback is not None:
            parts += [turn.feedback.right or "", turn.feedback.wrong or "", *(f.text for f in turn.feedback.by_answer)]
        parts += [turn.story, turn.question, *turn.answers]
    return words(" ".join(parts))


def skeleton(storyturn: StoryTurn) -> str:
    """The StoryTurn's words with slot fillers (names, colours, things, places, rooms, animals) masked."""
    return " ".join("_" if w in SLOT_WORDS else w for w in storyturn_words(storyturn))


def skeleton_counts(storyturns: Iterable[StoryTurn]) -> dict[str, int]:
    """Distinct skeletons per task."""
    found: dict[str, set[str]] = {}
    for storyturn in storyturns:
        found.setdefault(storyturn.task, set()).add(skeleton(storyturn))
    return {task: len(s) for task, s in sorted(found.items())}


def vocabulary_sizes(storyturns: Iterable[StoryTurn]) -> dict[str, int]:
    """Distinct words per task."""
    found: dict[str, set[str]] = {}
    for storyturn in storyturns:
        found.setdefault(storyturn.task, set()).update(storyturn_words(storyturn))
    return {task: len(s) for task, s in sorted(found.items())}


def closest(storyturn: StoryTurn, references: list[list[str]], floor: float = 0.0) -> float:
    """The highest similarity (difflib's ratio: 2 x matching words / total words) of a StoryTurn to any
    reference word list (those that cannot beat ``floor`` are skipped by difflib's cheap upper bounds)."""
    mine = storyturn_words(storyturn)
    best = floor
    for reference in references:
        matcher = SequenceMatcher(None, mine, reference, autojunk=False)
        if matcher.real_quick_ratio() > best and matcher.quick_ratio() > best:
            best = max(best, matcher.ratio())
    return best
