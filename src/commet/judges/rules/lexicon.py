"""The rules judge's word lists (``lexicon.json``: data, not code), read once, as phrases of normalised words.

A phrase is found in a reply's words by looking up each run of up to its length of consecutive words:
one pass, whatever the reply (no pattern that can backtrack). Words are compared as :func:`tokens_of`
makes them (:func:`commet.text.words`, then contractions split), so Chinese and Japanese are compared
character by character.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from commet.text import words

_SOURCE = Path(__file__).with_name("lexicon.json")
#: contractions split into their words: "she'll" -> she will, "don't" -> do not, "l'option" -> l option
_SUFFIXES = {"'s": "s", "'ll": "will", "'d": "d", "'re": "are", "'m": "am", "'ve": "have"}
_NOT_STEMS = {"wo": "will", "ca": "can", "sha": "shall", "ai": "is"}
_ELIDED = {"l'": "l", "d'": "de", "j'": "je", "n'": "ne", "qu'": "que", "s'": "se", "c'": "ce", "m'": "me", "t'": "te"}


def split_contractions(tokens: Iterable[str]) -> list[str]:
    """Words with English contractions and French elisions split: the form every list is compared in."""
    out: list[str] = []
    for token in tokens:
        if "'" not in token:
            out.append(token)
            continue
        if token.endswith("n't") and len(token) > 3:
            out += [_NOT_STEMS.get(token[:-3], token[:-3]), "not"]
            continue
        head, _, rest = token.partition("'")
        if rest and f"{head}'" in _ELIDED:
            out += [_ELIDED[f"{head}'"], *split_contractions([rest])]
            continue
        suffix = next((s for s in _SUFFIXES if token.endswith(s) and len(token) > len(s)), None)
        out += [token[: -len(suffix)], _SUFFIXES[suffix]] if suffix else [token]
    return out


def tokens_of(text: str) -> list[str]:
    """The words of ``text`` as the judge compares them (:func:`commet.text.words`, contractions split)."""
    return split_contractions(words(text))


@dataclass(frozen=True)
class Phrases:
    """A set of phrases, each a tuple of normalised words, indexed by first word (with their lengths, longest
    first)."""

    entries: frozenset[tuple[str, ...]]
    by_first: dict[str, tuple[int, ...]]

    @classmethod
    def of(cls, texts: Iterable[str]) -> Phrases:
        return cls.of_entries(frozenset(tuple(tokens_of(text)) for text in texts) - {()})

    @classmethod
    def of_entries(cls, entries: frozenset[tuple[str, ...]]) -> Phrases:
        lengths: dict[str, set[int]] = {}
        for entry in entries:
            lengths.setdefault(entry[0], set()).add(len(entry))
        return cls(entries, {first: tuple(sorted(sizes, reverse=True)) for first, sizes in lengths.items()})

    def spans(self, tokens: Sequence[str]) -> list[tuple[int, int]]:
        """(start, end) of every phrase found in ``tokens``, longest first at each start."""
        found = []
        for start, token in enumerate(tokens):
            for size in self.by_first.get(token, ()):
                if size == 1 or start + size <= len(tokens) and tuple(tokens[start:start + size]) in self.entries:
                    found.append((start, start + size))
                    break
        return found

    def matches(self, tokens: Sequence[str]) -> list[tuple[int, int]]:
        """(start, end) of the phrases found, left to right, the longest at each place, none overlapping."""
        found: list[tuple[int, int]] = []
        for start, end in self.spans(tokens):
            if not found or start >= found[-1][1]:
                found.append((start, end))
        return found

    def found_in(self, tokens: Sequence[str]) -> bool:
        return bool(self.spans(tokens))

    def __contains__(self, word: object) -> bool:
        return (word,) in self.entries


@dataclass(frozen=True)
class Lexicon:
    """Every list of ``lexicon.json`` in the form the judge uses."""

    hedges: Phrases
    hedge_exceptions: Phrases
    contrasts: Phrases
    judgements: Phrases
    judgement_exceptions: Phrases
    affirmations: Phrases
    yes_phrases: Phrases
    no_phrases: Phrases
    pointing_away: Phrases
    negations: Phrases
    sarcasm: Phrases
    yes: frozenset[str]
    no: frozenset[str]
    function_words: frozenset[str]
    foreign_function_words: frozenset[str]
    pronouns: frozenset[str]
    first_person: frozenset[str]
    possessives: frozenset[str]
    second_person: frozenset[str]
    frame_modals: frozenset[str]
    number_words: dict[str, frozenset[str]]  # a digit's words in the six languages
    choice_words: frozenset[str]
    question_words: frozenset[str]
    mental_verbs: frozenset[str]
    synonyms: dict[str, str]
    irregular: dict[str, str]
    opposites: dict[str, frozenset[str]]
    #: emoji of faces that show one plain feeling (by Unicode name), and the feeling word they show
    face_feelings: dict[str, tuple[str, ...]]
    #: by a predicate's stem, the phrases that say it and those that say its opposite in a reason clause
    predicate_phrases: dict[str, tuple[Phrases, Phrases]]
    preambles: frozenset[tuple[str, ...]]
    lead_ins: Phrases
    strong_markers: Phrases
    first_person_choices: Phrases
    answer_qualifiers: frozenset[str]  # words before "answer" that make it no answer line ("the wrong answer is")
    places: dict[str, str]  # a preposition of place and the place it names ("inside" -> "in", "beneath" -> "under")
    choice_verbs: frozenset[str]
    emphasis: frozenset[str]
    sentence_markers: Phrases
    marker_fillers: Phrases
    foreign_articles: frozenset[str]
    prepositions: frozenset[str]
    non_answers: frozenset[str]
    #: what may follow an option's label in a script without spaces and leave it the answer ("Aです", "B。")
    label_endings: frozenset[str]
    #: words that point back to what was just said ("that", "das", "cela", "これ"): a clause they open may judge it
    anaphors: frozenset[str]
    #: words that describe an answer instead of naming it ("wherever", "whichever")
    descriptions: frozenset[str]
    #: phrases that open a restatement of the answer ("that is", "in other words", "i.e.")
    restatements: Phrases
    #: every word of every list (``common_words`` too: frequent words of English, Spanish, German and French that
    #: are no cue): the words of the languages the judge has grammar for that it knows by name
    known_words: frozenset[str]
    #: frequent words of languages the judge has no grammar for ("não", "niet", "değil"): a reply with one of them
    #: may say anything of its answer
    other_language_words: frozenset[str]
    emotions: dict[tuple[str, ...], tuple[str, ...]]  # the feelings a word can name, the narrowest first
    valence: dict[str, str]  # a feeling's valence ("positive", "negative"), where it has one
    emotion_words: Phrases
    #: what may follow an answer and leave it standing (:mod:`commet.judges.rules.tails`)
    headers: Phrases
    assurances: Phrases
    reasons: Phrases
    connectives: Phrases
    subject_pronouns: frozenset[str]
    determiners: frozenset[str]
    reporting_verbs: frozenset[str]  # by stem
    complementizers: frozenset[str]
    answer_owners: Phrases


def _symmetric(pairs: dict[str, list[str]], irregular: dict[str, str]) -> dict[str, frozenset[str]]:
    """Opposites by stem, both ways: "lie" has "truth" among its opposites, so "truth" has "lie"."""
    found: dict[str, set[str]] = {}
    for key, opposed in pairs.items():
        stem_of_key = _plain_stem(key, irregular)
        for word in opposed:
            stem_of_word = _plain_stem(word, irregular)
            found.setdefault(stem_of_key, set()).add(stem_of_word)
            found.setdefault(stem_of_word, set()).add(stem_of_key)
    return {key: frozenset(words) for key, words in found.items()}


def _words(texts: Iterable[str]) -> frozenset[str]:
    return frozenset(" ".join(tokens_of(text)) for text in texts)


@cache
def lexicon() -> Lexicon:
    """The lists, read from ``lexicon.json`` once per process."""
    data = json.loads(_SOURCE.read_text(encoding="utf-8"))
    emotions = {tuple(tokens_of(word)): tuple(families) for word, families in data["emotions"].items()}
    irregular = dict(data["irregular_verbs"])
    synonyms = {_plain_stem(word, irregular): _plain_stem(group[0], irregular)
                for group in data["verb_synonyms"] for word in group}
    return Lexicon(
        hedges=Phrases.of(data["hedges"]), hedge_exceptions=Phrases.of(data["hedge_exceptions"]),
        contrasts=Phrases.of(data["contrasts"]), judgements=Phrases.of(data["judgements"]),
        judgement_exceptions=Phrases.of(data["judgement_exceptions"]), affirmations=Phrases.of(data["affirmations"]),
        yes_phrases=Phrases.of(data["yes_phrases"]), no_phrases=Phrases.of(data["no_phrases"]),
        pointing_away=Phrases.of(data["pointing_away"]), negations=Phrases.of(data["negations"]),
        sarcasm=Phrases.of(data["sarcasm"]), yes=_words(data["yes"]), no=_words(data["no"]),
        function_words=_words(data["function_words"]), pronouns=_words(data["pronouns"]),
        first_person=_words(data["first_person"]), second_person=_words(data["second_person"]),
        possessives=_words(data["possessives"]),
        frame_modals=_words(data["frame_modals"]),
        number_words={digit: _words(spelt) for digit, spelt in data["number_words"].items()},
        foreign_function_words=_words(data["foreign_function_words"]),
        choice_words=_words(data["choice_words"]), question_words=_words(data["question_words"]),
        mental_verbs=_words(data["mental_verbs"]), synonyms=synonyms, irregular=irregular,
        opposites=_symmetric(data["predicate_opposites"], irregular),
        face_feelings={name: tuple(tokens_of(word)) for name, word in data["face_feelings"].items()
                       if not name.startswith("_")},
        predicate_phrases={_plain_stem(key, irregular): (Phrases.of(said["same"]), Phrases.of(said["opposite"]))
                           for key, said in data["predicate_phrases"].items() if not key.startswith("_")},
        preambles=frozenset(tuple(tokens_of(text)) for text in data["preamble_sentences"]),
        lead_ins=Phrases.of(data["lead_ins"]), strong_markers=Phrases.of(data["strong_markers"]),
        first_person_choices=Phrases.of(data["first_person_choices"]),
        answer_qualifiers=_words(data["answer_qualifiers"]),
        places={word: place for place, words in data["places"].items() for word in words},
        choice_verbs=_words(data["choice_verbs"]),
        emphasis=_words(data["emphasis"]),
        sentence_markers=Phrases.of(data["sentence_markers"]), marker_fillers=Phrases.of(data["marker_fillers"]),
        foreign_articles=_words(data["foreign_articles"]), prepositions=_words(data["prepositions"]),
        non_answers=_words(data["non_answers"]),
        anaphors=_words(data["anaphors"]), descriptions=_words(data["descriptions"]),
        restatements=Phrases.of(data["restatements"]), known_words=_every_word({k: v for k, v in data.items() if k != "other_language_words"}),
        other_language_words=_words(data["other_language_words"]),
        label_endings=frozenset("".join(tokens_of(text)) for text in data["label_endings"]),
        emotions=emotions, emotion_words=Phrases.of_entries(frozenset(emotions)),
        valence={feeling: side for side, feelings in data["feeling_valence"].items() for feeling in feelings},
        headers=Phrases.of(data["headers"]), assurances=Phrases.of(data["assurances"]), reasons=Phrases.of(data["reasons"]),
        connectives=Phrases.of(data["connectives"]), subject_pronouns=_words(data["subject_pronouns"]),
        determiners=_words(data["determiners"]),
        reporting_verbs=frozenset(synonyms.get(base, base) for verb in data["reporting_verbs"]
                                  for form in _inflections(verb) if (base := _plain_stem(form, irregular))),
        complementizers=_words(data["complementizers"]), answer_owners=Phrases.of(data["answer_owners"]))


def _inflections(verb: str) -> tuple[str, ...]:
    """A verb and its regular forms ("guess", "guesses", "guessed", "guessing"): the crude stem does not bring them
    all to one ("guess" -> "gues", "guesses" -> "guess"), so a list of verbs compared by stem holds every form's."""
    bare = verb[:-1] if verb.endswith("e") else verb
    return verb, f"{verb}s", f"{verb}es", f"{bare}ed", f"{bare}ing"


def _every_word(data: object) -> frozenset[str]:
    """The words of every string in the lists (keys and values alike), as :func:`tokens_of` makes them."""
    found: set[str] = set()
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.update(tokens_of(item))
        elif isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, list):
            stack += item
    return frozenset(found)


def _plain_stem(word: str, irregular: dict[str, str]) -> str:
    """A crude stem: irregular forms looked up, then a suffix and a final "e" dropped ("believes",
    "believed", "believing" -> "believ"; "lying", "lies" -> "li"; "putting" -> "put")."""
    base = irregular.get(word, word)
    if base == word:
        for suffix, keep in (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
            if word.endswith(suffix) and len(word) - len(suffix) >= 2:
                if suffix == "es" and not word[:-2].endswith(("s", "x", "z", "ch", "sh")):
                    continue
                base = word[: len(word) - len(suffix)] + keep
                break
        if len(base) >= 4 and base[-1] == base[-2] and base[-1] not in "aeiouls":
            base = base[:-1]
    return base[:-1] if len(base) > 3 and base.endswith("e") else base


@cache
def answer_markers(first_person: bool) -> Phrases:
    """The phrases that open an answer line: the strong markers, with the first-person choices ("I'd pick") where
    ``first_person`` (not where the question asks which one someone else picks: "I'd pick" is then the speaker's
    own pick, not the answer)."""
    lists = lexicon()
    if not first_person:
        return lists.strong_markers
    return Phrases.of_entries(lists.strong_markers.entries | lists.first_person_choices.entries)


@lru_cache(maxsize=16384)
def stem(word: str) -> str:
    """The stem by which verb forms and their synonyms compare: "thinks", "thought", "believes" -> one stem."""
    lists = lexicon()
    base = _plain_stem(word, lists.irregular)
    return lists.synonyms.get(base, base)


@cache
def mental_stems() -> frozenset[str]:
    """Stems of the verbs of thinking, wanting, knowing and saying."""
    return frozenset(stem(verb) for verb in lexicon().mental_verbs)


def judged(tokens: Sequence[str], asked: Iterable[str] = ()) -> bool:
    """A judgement word ("correct", "wrong", "true") among ``tokens``, not one the question itself uses and not in
    a set phrase ("false belief", "right now")."""
    lists = lexicon()
    excused = {i for s, e in lists.judgement_exceptions.spans(tokens) for i in range(s, e)}
    asked_stems = {stem(word) for word in asked}
    return any(s not in excused and stem(tokens[s]) not in asked_stems for s, _ in lists.judgements.spans(tokens))


def negation_count(tokens: Sequence[str]) -> int:
    """Negation words among ``tokens`` (contractions split: "don't" is do not)."""
    return len(lexicon().negations.spans(tokens))


#: contrast words that a question's own words excuse ("Which box will Kim open first?": "first"), unlike these
_NEVER_EXCUSED = frozenset({"or", "but", "both", "either", "neither", "nor", "however", "although", "though",
                            "actually", "wait", "instead", "rather", "unless"})


def hedged(tokens: Sequence[str], asked: Iterable[str] = ()) -> bool:
    """A hedge, a contrast or self-correction, or a sarcasm phrase among ``tokens``; a contrast word the question
    itself uses (``asked``) is no contrast ("first" in "Which box will Kim open first?")."""
    lists = lexicon()
    excused = set(asked) - _NEVER_EXCUSED
    # a contrast or hedge inside a set phrase that says the opposite is none ("could not", "no doubt", "rather than":
    # the clause after it is negated, and read as such)
    exceptions = {i for start, end in lists.hedge_exceptions.spans(tokens) for i in range(start, end)}
    if any((tuple(tokens[s:e]) != (tokens[s],) or tokens[s] not in excused) and s not in exceptions
           for s, e in lists.contrasts.spans(tokens)):
        return True
    if lists.sarcasm.found_in(tokens):
        return True
    spans = lists.hedges.spans(tokens)
    if not spans:
        return False
    return any(start not in exceptions for start, _ in spans)
