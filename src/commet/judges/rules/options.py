"""The options a respondent was offered, tied to the expected answers, and where a reply names them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from commet.judges.base import JudgeRequest
from commet.judges.rules.labels import leading_label
from commet.judges.rules.lexicon import lexicon, tokens_of
from commet.text import fold, labelled_options, question_options

_ARTICLES = frozenset({"a", "an", "the"})


@dataclass(frozen=True)
class Choice:
    """One option the respondent was offered, and the expected answer it is (None: a wrong option)."""

    label: str | None  # folded
    text: str
    expected: int | None
    core: tuple[str, ...]  # its words without articles and leading prepositions ("in the basket" -> basket)

    def shown(self) -> str:
        return f"{self.label.upper()}. {self.text}" if self.label else self.text


def core_words(text: str) -> tuple[str, ...]:
    """Words of an option or answer without articles (any of the six languages' leading ones) and
    leading prepositions: "In the basket", "the basket" and "la basket" -> ("basket",)."""
    lists = lexicon()
    tokens = [t for t in tokens_of(text) if t not in _ARTICLES] or tokens_of(text)
    while len(tokens) > 1 and (tokens[0] in lists.prepositions or tokens[0] in lists.foreign_articles):
        tokens = tokens[1:]
    return tuple(tokens)


def offered(request: JudgeRequest) -> list[tuple[str | None, str]]:
    """The options shown: the turn's, else labelled options or an "x or y?" list in the question. Judge-only
    candidates (``options_shown`` false) carry no labels: the answerer never saw one, so "A" or "1" names none."""
    if request.options:
        return list(request.options) if request.options_shown else [(None, text) for _, text in request.options]
    labelled = labelled_options(request.question)
    return list(labelled[1]) if labelled else [(None, o) for o in question_options(request.question)]


def question_stem(request: JudgeRequest) -> str:
    """The question without a list of labelled options after it."""
    labelled = labelled_options(request.question)
    return labelled[0] if labelled and not request.options else request.question


def _is_option(expected: str, label: str | None, text: str) -> bool:
    """Whether an expected answer is this option: its text, its label, or "label. text"."""
    if core_words(expected) == core_words(text):
        return True
    if label is None:
        return False
    folded = fold(expected).strip()
    lead = leading_label(folded)
    if lead is None or lead.label != fold(label):
        return False
    rest = folded[lead.rest:].strip(" .")
    return not rest or core_words(rest) == core_words(text)


def choices_of(request: JudgeRequest) -> list[Choice] | None:
    """The options offered, each tied to the expected answer it is; None when they do not line up.

    Every expected answer must be exactly one option (by text, by label, as "B. text", or as words
    found in that option alone), else naming an option proves nothing and only exact answers decide.
    """
    shown = offered(request)
    if len(shown) < 2:
        return None
    cores = [core_words(text) for _, text in shown]
    if len(set(cores)) < len(cores) or any(not c for c in cores):
        return None
    owner: list[int | None] = [None] * len(shown)
    for i, expected in enumerate(request.expected):
        hits = [j for j, (label, text) in enumerate(shown) if _is_option(expected, label, text)]
        if not hits:  # "Medium" names "the medium one" when no other option contains it
            wanted = core_words(expected)
            hits = [j for j, core in enumerate(cores) if wanted and find(core, wanted)]
        if len(hits) != 1 or owner[hits[0]] is not None:
            return None
        owner[hits[0]] = i
    return [Choice(fold(label) if label else None, text, owner[j], cores[j]) for j, (label, text) in enumerate(shown)]


def place_kept(before: Sequence[str], choice: Choice) -> bool:
    """Whether the prepositions right before an option named in a reply keep the option's place: one of its own
    ("On the top shelf": "on the shelf"; "the ball by the tree": "the one by the tree"), or, for an option without
    one, "in", "at" or "to" ("in the basket"); "under the basket" or "from the box" names another place."""
    places = lexicon().places
    said = {places[t] for t in before if t in places}
    if not said:
        return True
    own = {places[t] for t in tokens_of(choice.text) if t in places}  # "the ball by the tree": "by the tree"
    return said <= (own or {"in", "at"})


def distinctive_words(choices: Sequence[Choice], index: int) -> tuple[str, ...]:
    """The words of an option that no other option has, where all options share the rest ("star" of "a star
    balloon" against "a heart balloon"); empty where the options share nothing or it has no words of its own."""
    common = set(choices[0].core).intersection(*(c.core for c in choices[1:]))
    if not common:
        return ()
    own = tuple(word for word in choices[index].core if word not in common)
    others = {word for j, c in enumerate(choices) if j != index for word in c.core}
    return own if own and not set(own) & others else ()


def cut_short(words: Sequence[str], name: Named, choices: Sequence[Choice]) -> bool:
    """Whether an option named at ``name`` in ``words`` may be another option cut short: its words lie inside
    another option's ("the box" inside "the red box") and the reply does not give them with the option's own
    article ("Box.", "a box"), so they may name either."""
    article = _nested_article(choices, name.index)
    if article is None:
        return False
    at = name.start
    return (words[at - 1] if at and words[at - 1] in _ARTICLES else "") != article


def _nested_article(choices: Sequence[Choice], index: int) -> str | None:
    """The article an option's words need in a reply to name it ("" for none) where they lie inside another
    option's words ("the box" inside "the red box", "the hat" inside "the hat with a star"): "Box." or "a box"
    may be either option cut short; only the option's own words with its own article ("the box") name it.
    None where the option lies inside no other (its words alone name it)."""
    core = choices[index].core
    if not any(j != index and len(c.core) > len(core) and find(c.core, core) for j, c in enumerate(choices)):
        return None
    words = tokens_of(choices[index].text)
    at = next(iter(find(words, core)), 0)
    return words[at - 1] if at and words[at - 1] in _ARTICLES else ""


def find(tokens: Sequence[str], phrase: Sequence[str]) -> list[int]:
    """Start of every occurrence of ``phrase`` in ``tokens``."""
    size = len(phrase)
    if not size:
        return []
    first = phrase[0]
    return [i for i, token in enumerate(tokens) if token == first and tuple(tokens[i:i + size]) == tuple(phrase)]


@dataclass(frozen=True)
class Named:
    """An option named in a run of words, at words [start, end) of that run."""

    index: int
    start: int
    end: int


def named_options(tokens: Sequence[str], choices: Sequence[Choice]) -> list[Named]:
    """Every place ``tokens`` name an option by its words (articles ignored), or by the words that set it apart
    from options sharing the rest ("the blue one", "Red." for "the red box or the blue box"); an option inside a
    longer named option is not counted ("the big hat" names the big hat, not also "the hat")."""
    kept = [(i, t) for i, t in enumerate(tokens) if t not in _ARTICLES]
    words = [t for _, t in kept]
    found: list[Named] = []
    for index, choice in enumerate(choices):
        for phrase in {choice.core, distinctive_words(choices, index)} - {()}:
            for start in find(words, phrase):
                found.append(Named(index, kept[start][0], kept[start + len(phrase) - 1][0] + 1))
    found.sort(key=lambda n: (n.start, -n.end))
    kept_names: list[Named] = []
    reach = -1  # the furthest end of the names before: one that reaches this one's end contains it
    for name in found:
        if reach < name.end:
            kept_names.append(name)
        reach = max(reach, name.end)
    return kept_names
