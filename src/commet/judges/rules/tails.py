"""What may follow an answer: each clause after it must be read as one that leaves the answer standing.

Why: the judge decides only what it reads whole. A list of the words that spoil an answer (hedges,
contrasts, judgements) can never be complete: "Reverse that.", "Just teasing.", "In your dreams.",
", said no one ever", ", Anne wrongly thinks." take an answer back, or give it to someone else, in words
no list foresaw. So a clause after the answer is accepted only when it is recognised as one of the kinds
that leave the answer standing, and anything else leaves the reply undecided:

* the chosen option again ("(the red box)", "option A"), or another one rejected ("not B");
* an affirmation ("is correct"), emphasis ("obviously", "no doubt"), the speaker's own mild lead-in
  ("I think"), a closing or a heading of the lexicon ("Hope this helps!", "Reason:"), a copula after a
  label in a script without spaces ("です");
* a rejection of a thing of the story that is not the answer ("a bike, not socks");
* a reason ("because ...", "since ...", "porque ...") that speaks of the story, not of the speaker,
  the listener or what someone says;
* a statement about the story: it has a subject from the story (a name of the story or the question, a
  subject pronoun, or a determiner with a word of the story: "the marble", "her brother") within its
  first words, after at most a connective ("and", "so", "where", "until") or a lead-in ("In the
  story,"); no word of the first or second person (the reply speaking of itself or its reader); no
  opening word that points back at what was said ("That was a joke."); and no verb of saying or
  thinking left without a complement of its own (", Anne wrongly thinks.", ", Mum says."), which would
  make the answer before it someone's belief or words.

What such a statement says is not read further: the other checks of the tail (another option named,
hedges, judgements, negations of the answer) still apply to it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from commet.judges.rules.lexicon import lexicon, stem, tokens_of
from commet.judges.rules.marks import Reply
from commet.judges.rules.options import Choice, named_options
from commet.text import word_spans

#: auxiliaries before a subject turn a clause into a condition or a question ("were she", "did he")
_AUXILIARIES = frozenset({"is", "are", "was", "were", "do", "does", "did", "has", "have", "had", "will", "would",
                          "shall", "should", "can", "could", "may", "might", "must", "am", "be"})
#: prepositions that make the person after them the source of what was said, not a subject ("per Sam", "as Sam
#: would have it": "as" opens no reason here, it is ambiguous)
_ATTRIBUTING = frozenset({"per", "by", "to", "with", "for", "according", "from", "of", "about", "like", "than", "as",
                          "selon", "après", "par", "pour", "de", "según", "por", "para", "laut", "von", "nach", "bei",
                          "für", "mit", "à", "a"})
#: how many words may open a statement before its subject ("The last time she met it", "After Anne left, she")
SUBJECT_WITHIN = 5


@dataclass(frozen=True)
class World:
    """What a reply may speak of: the names and the words of the story, the question, earlier turns and the
    answers and options (the judge's whole view of the turn)."""

    names: frozenset[str]  # words written with a capital there, and no word of the lexicon
    tokens: frozenset[str]  # every word there
    words: frozenset[str]  # every word there, and its stem

    @classmethod
    def of(cls, texts: Iterable[str]) -> World:
        lists = lexicon()
        names: set[str] = set()
        tokens: set[str] = set()
        for text in texts:
            text = unicodedata.normalize("NFKC", text)
            for start, end in word_spans(text):
                folded = tokens_of(text[start:end])
                if not folded:
                    continue
                tokens.update(folded)
                if text[start].isupper() and folded[0] not in lists.known_words:
                    names.add(folded[0])
        return cls(frozenset(names), frozenset(tokens), frozenset(tokens | {stem(word) for word in tokens}))


def unread_clause(reply: Reply, first: int, choices: Sequence[Choice], chosen: int | None, world: World, *,
                  addressed: bool = False) -> str:
    """The first clause from token ``first`` on that is not recognised as leaving the answer standing ("" when
    every one is). ``chosen`` is the option answered (None for a yes or no); ``addressed``: the question asks the
    respondent about themselves ("Which toy do you like?"), so "I" may be a statement's subject."""
    for clause in reply.clauses_from(first):
        if not clause_stands(clause, choices, chosen, world, addressed=addressed):
            return " ".join(clause)
    return ""


def clause_stands(clause: Sequence[str], choices: Sequence[Choice], chosen: int | None, world: World, *,
                  addressed: bool = False) -> bool:
    """Whether one clause after an answer is read as one of the kinds that leave it standing (module docstring)."""
    lists = lexicon()
    if not clause or tuple(clause) in lists.preambles or tuple(clause) in lists.assurances.entries \
            or tuple(clause) in lists.headers.entries \
            or "".join(clause) in lists.label_endings:  # "です" after "答えはA"
        return True
    if all(t in lists.emphasis for t in clause) or _own_lead_in(clause):
        return True
    if chosen is not None and _about_options(clause, choices, chosen):
        return True
    reason = lists.reasons.matches(clause[:3])
    if reason and reason[0][0] == 0:
        return _speaks_of_story(clause[reason[0][1]:], world, addressed, subject_needed=False)
    if _rejects_other(clause, choices, chosen, world):
        return True
    return _speaks_of_story(clause, world, addressed, subject_needed=True)


def _own_lead_in(clause: Sequence[str]) -> bool:
    """The clause is one of the speaker's own lead-ins and nothing else (", I think.", "I believe")."""
    found = lexicon().lead_ins.matches(clause)
    return bool(found) and found[0] == (0, len(clause)) and clause[0] in lexicon().first_person


#: words that reject what follows them in a clause of its own ("A, not B", "A, nicht B", "A, pas B", "A，不是B")
REJECTING = (("not",), ("nicht",), ("pas",), ("不", "是"))
#: words a clause that only names an option may have besides it ("the red one", "option A")
_NAMING = frozenset({"one", "ones", "option", "choice", "answer"})


def _about_options(clause: Sequence[str], choices: Sequence[Choice], chosen: int) -> bool:
    """The clause names the chosen option again (by label or text, alone or with an affirmation: "(option A)",
    "(the red box)", "A is correct", "A A") or rejects another one ("not B", "not the blue box")."""
    lists = lexicon()
    labels = {c.label: i for i, c in enumerate(choices) if c.label}
    lead = next((len(w) for w in REJECTING if tuple(clause[:len(w)]) == w), 0)
    bare = [t for t in clause[lead:] if t not in _NAMING]
    if bare and all(t in labels for t in bare) and len(set(bare)) == 1:  # before articles go: "a" is a label too
        return (labels[bare[0]] != chosen) if lead else (labels[bare[0]] == chosen)
    rest = [t for t in bare if t not in lists.prepositions and t not in lists.foreign_articles]
    affirmed = lists.affirmations.spans(rest)
    if affirmed and not lead:
        start, end = affirmed[-1]
        if end == len(rest):
            rest = rest[:start]
    if not rest:
        return not lead and bool(affirmed)
    if len(rest) == 1 and rest[0] in labels:
        return (labels[rest[0]] != chosen) if lead else (labels[rest[0]] == chosen)
    named = named_options(rest, choices)
    if len(named) != 1 or (named[0].start, named[0].end) != (0, len(rest)):
        return False
    return (named[0].index != chosen) if lead else (named[0].index == chosen)


def _rejects_other(clause: Sequence[str], choices: Sequence[Choice], chosen: int | None, world: World) -> bool:
    """The clause rejects a thing of the story that is not the answer ("not socks", "not near it"): "not" and
    words of the story, naming no option answered and not only pointing back ("not that", "not it")."""
    lists = lexicon()
    if clause[0] != "not" or len(clause) < 2 or all(t in lists.anaphors for t in clause[1:]):
        return False
    if chosen is not None and any(n.index == chosen for n in named_options(clause[1:], choices)):
        return False
    content = [t for t in clause[1:] if t not in lists.known_words]
    return bool(content) and all(t in world.words for t in content)


def _speaks_of_story(clause: Sequence[str], world: World, addressed: bool, *, subject_needed: bool) -> bool:
    """Whether the clause is a statement about the story (see the module's docstring); a reason
    (``subject_needed`` false) may open with a word pointing back ("because that's where she left it")."""
    lists = lexicon()
    lead = lists.lead_ins.matches(clause)
    if lead and lead[0][0] == 0 and lead[0][1] < len(clause):
        clause = clause[lead[0][1]:]  # "In the story, ...", "I think Anne moved it"
    connective = lists.connectives.matches(clause[:3])
    if connective and connective[0][0] == 0 and connective[0][1] < len(clause):
        clause = clause[connective[0][1]:]
    if not clause or subject_needed and clause[0] in lists.anaphors and clause[0] != "it" \
            and clause[0] not in world.words:
        return False  # "That was a joke.", "This is what a child would say." ("it" is read as a subject below)
    persons = lists.first_person | lists.second_person
    if any(t in persons and not (addressed and t in lists.first_person) for t in clause):
        return False  # the reply speaks of itself or its reader ("I retract that", "In your dreams")
    if "according" in clause:
        return False
    subject = _subject_at(clause, world)
    if subject_needed and subject is None:
        return False  # "Reverse that.", "Just teasing.", "Said no one ever.", ", per Sam.", ", affirme son père."
    return not _report_without_complement(clause, subject[0] if subject else 0)


def _subject_at(clause: Sequence[str], world: World) -> tuple[int, int] | None:
    """Where the clause's subject is (its first word and the word after it), within the clause's first
    :data:`SUBJECT_WITHIN` words: a name of the story, a subject pronoun, or a determiner with a word of the story
    ("the marble", "her brother"), with more words after it (a statement has a predicate: not ", per Sam.",
    ", dit son frère.") and no preposition right before it (", according to Sam", ", selon son père"); None
    when there is none."""
    lists = lexicon()
    for i, token in enumerate(clause[:SUBJECT_WITHIN]):
        if token in _AUXILIARIES or token in lists.yes or token in lists.no:
            return None  # "were she not so clever", "did she?": a condition or a question, not a statement
        end = None
        if token in world.names or token in lists.subject_pronouns:
            end = i + 1
            while end < len(clause) and clause[end] in world.names:
                end += 1  # "Mr Diaz"
        elif token == "it" and i + 1 < len(clause) and clause[i + 1] not in _AUXILIARIES and clause[i + 1] != "s":
            end = i + 1  # "it knocked her down"; not "It was a joke.", "It's a lie."
        elif token in lists.determiners and i + 1 < len(clause):
            nouns = [j for j in range(i + 1, min(i + 4, len(clause)))
                     if clause[j] in world.words and clause[j] not in lists.known_words]
            if nouns or token in lists.possessives:
                end = (nouns[0] if nouns else i + 1) + 1  # "the marble", "her brother", "her belief"
        if end is not None:
            if i > 0 and clause[i - 1] in _ATTRIBUTING or end >= len(clause):
                return None
            return i, end
    return None


def _report_without_complement(clause: Sequence[str], subject: int) -> bool:
    """Whether a verb of saying or thinking in the clause has no complement of its own: it comes before its
    subject (", said Anne", "So says Mum"), or nothing follows it but adverbs (emphasis, words in "-ly",
    "too"), words pointing back, or a phrase opened by a preposition (", Anne wrongly thinks.", "Mum thinks so
    too.", "Anne hopes in vain."): the words before it are then someone's belief or words, not the reply's."""
    lists = lexicon()
    for i, token in enumerate(clause):
        if stem(token) not in lists.reporting_verbs:
            continue
        if i < subject:
            return True
        after = [t for t in clause[i + 1:] if t not in lists.emphasis and not t.endswith("ly") and t not in _ALSO]
        if not after or all(t in lists.anaphors or t == "so" for t in after) or after[0] in _PHRASE_OPENERS:
            return True
    return False


#: adverbs of addition after a verb ("thinks so too", "says it as well")
_ALSO = frozenset({"too", "also", "as", "well", "again", "still"})
#: prepositions that open a phrase, not a complement, after a verb of saying or thinking ("hopes in vain")
_PHRASE_OPENERS = frozenset({"in", "on", "at", "with", "by", "for", "without", "from", "under", "behind", "into"})
