"""Yes/no answers, bare or with an explanation that neither contradicts nor hedges the yes or the no.

A reply opens with yes or no (after answer boilerplate), then may explain. The explanation decides
nothing by itself; it may only keep the verdict from being decided: a hedge, contrast or sarcasm,
another yes/no, a mark that changes meaning, or a clause that speaks of the question's predicate
("lying" in "Is Leo lying?", or its opposite: "honest", "mistaken", "the truth") with the other
polarity ("Yes, he is not lying", "Yes, because he is honest"). Its first clause must restate the
question's predicate, be elliptic ("Yes, he is.") or give a reason ("because ..."); a reply that opens
with a bare restatement ("Leo is lying.", "It is not fair.") says yes or no by its negations. A negative question ("Isn't he
lying?") decides only a bare yes or no: what "yes, he isn't" means cannot be counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from commet.judges.rules.lexicon import hedged, judged, lexicon, negation_count, stem, tokens_of
from commet.judges.rules.marks import Reply
from commet.judges.rules.roles import Frame

#: words that open a reason clause after a yes or no
_REASONS = frozenset({"because", "since", "as", "cause", "cos", "given", "for"})
#: words after which a question's main clause ends (its predicate is before them)
_SUBORDINATORS = frozenset({"that", "if", "whether", "when", "because", "where", "who", "what", "which", "while",
                            "after", "before", "about", "to"})
_AUXILIARIES = frozenset({"is", "are", "was", "were", "do", "does", "did", "will", "would", "can", "could",
                          "should", "has", "have", "had", "be", "been", "am", "it", "there", "not"})


@dataclass(frozen=True)
class YesNo:
    """A decision on a yes/no reply: (said, reason it cannot be decided)."""

    said: str | None  # "yes" / "no" / None
    problem: str = ""  # why nothing is decided, when said is None or the tail spoils it
    after: int = 0  # the first token after the yes or no


def yes_no_of(text: str) -> tuple[str | None, str]:
    """("yes"|"no"|None, the rest) when a text (an expected answer) opens with a yes or no."""
    tokens = tokens_of(text)
    if not tokens:
        return None, ""
    lists = lexicon()
    word = tokens[0]
    said = "yes" if word in lists.yes else "no" if word in lists.no else None
    if said is None or (len(tokens) > 1 and tokens[1] in ("one", "longer", "more", "way", "matter", "doubt")):
        return None, ""
    return said, " ".join(tokens[1:])


def predicate(frame: Frame) -> frozenset[str]:
    """Stems of the question's main clause's own words: "lying" in "Is Leo lying to Mrs Green when ...?"."""
    lists = lexicon()
    names = {w for person in frame.persons for w in person}
    words: list[str] = []
    for token in frame.tokens:
        if token in _SUBORDINATORS and words:
            break
        if token in _AUXILIARIES or token in lists.function_words or token in lists.question_words or token in names:
            continue
        words.append(stem(token))
    return frozenset(words)


def _opposites(pred: frozenset[str]) -> frozenset[str]:
    opposites = lexicon().opposites
    return frozenset(stem(w) for p in pred for w in opposites.get(p, ()))


def clause_polarity(tokens: Sequence[str], pred: frozenset[str]) -> int | None:
    """0 (says the predicate) or 1 (says its opposite) for a clause that speaks of the predicate; else None."""
    stems = [stem(t) for t in tokens]
    opposed = _opposites(pred)
    if not (set(stems) & pred or set(stems) & opposed):
        return None
    return (negation_count(tokens) + sum(1 for s in stems if s in opposed and s not in pred)) % 2


def restates(tokens: Sequence[str], frame: Frame, pred: frozenset[str]) -> bool:
    """The words only restate the question: its own words (by stem), function words, negations, opposites. A
    possessive the question does not use says whose ("She knew it was hers" to "Did Ruby know whose crayon it
    was?"): a claim, not a restatement."""
    lists = lexicon()
    asked = set(frame.stems) | {w for person in frame.persons for w in person} | _opposites(pred)
    return all((t in lists.function_words or t in lists.pronouns) and t not in lists.possessives or stem(t) in asked
               or negation_count([t]) for t in tokens)


def clauses(reply: Reply, start: int, end: int) -> list[tuple[int, int]]:
    """Token ranges of the clauses between tokens ``start`` and ``end`` (split at punctuation)."""
    found: list[tuple[int, int]] = []
    first = start
    for i in range(start + 1, end):
        if reply.boundary(i) or reply.tokens[i] in _REASONS:
            found.append((first, i))
            first = i
    if first < end:
        found.append((first, end))
    return found


def read_yes_no(reply: Reply, start: int, frame: Frame, negative_question: bool) -> YesNo:
    """What the reply from token ``start`` on says: yes, no, or why it cannot be told."""
    lists = lexicon()
    tokens = reply.tokens
    if start >= len(tokens):
        return YesNo(None, "no words")
    pred = predicate(frame)
    said, after = _opening_yes_no(reply, start)
    if said is None:
        rest = tokens[start:]
        if negative_question or len(rest) > 14 or any(reply.boundary(i) == "sentence" for i in range(start + 1,
                                                                                                   len(tokens))):
            return YesNo(None, "reply does not open with a clear yes or no")
        polarity = clause_polarity(rest, pred)
        if polarity is None or not restates(rest, frame, pred) or hedged(rest) or judged(rest, frame.tokens) \
                or _other_person(rest, frame):
            return YesNo(None, "reply does not open with a clear yes or no")  # "True." says yes, not "no lie"
        return YesNo("no" if polarity else "yes", after=len(tokens))
    tail = tokens[after:]
    if not tail:
        return YesNo(said, after=after)
    if negative_question:
        return YesNo(None, f"reply says {said!r} to a negative question and goes on")
    if hedged(tail) or any(t in lists.yes or t in lists.no for t in tail):
        return YesNo(None, f"reply says {said!r} but hedges, corrects itself or turns after it")
    if lists.judgements.found_in([t for t in tail if stem(t) not in frame.stems]):
        return YesNo(None, f"reply says {said!r} and judges something after it")
    parts = clauses(reply, after, len(tokens))
    first = tokens[parts[0][0]:parts[0][1]]
    elliptic = all(t in lists.function_words or t in lists.pronouns or negation_count([t]) for t in first)
    if elliptic and negation_count(first) % 2 != (said == "no"):
        return YesNo(None, f"reply says {said!r} but what follows reads the other way")
    restated = restates(first, frame, pred) and clause_polarity(first, pred) is not None
    if not (first[0] in _REASONS or elliptic or restated):
        return YesNo(None, f"reply says {said!r}; what follows neither restates the question nor gives a reason")
    for begin, end in parts:
        clause = tokens[begin:end]
        polarity = clause_polarity(clause, pred)
        if polarity is not None and polarity != (said == "no"):
            return YesNo(None, f"reply says {said!r} but a clause after it reads the other way")
        if polarity is not None and _other_person(clause, frame):
            return YesNo(None, f"reply says {said!r} of someone the question does not ask about")
        if polarity is None and ({stem(t) for t in clause} & frame.claims or all(negation_count([t]) for t in clause)):
            # "Yes, because he didn't break it" to "Is he lying when he says he didn't break it?": whether that
            # supports the yes depends on what the question's own claim means; a lone "NOT" reverses it
            return YesNo(None, f"reply says {said!r} and explains it with the question's own claim; needs a judge")
    return YesNo(said, after=after)


def _opening_yes_no(reply: Reply, start: int) -> tuple[str | None, int]:
    """("yes"|"no", the token after it) where the reply opens with a yes or no of its own ("Yes.", "No, ...",
    "I don't think so."); (None, start) where it does not ("No one saw it", "Yes he is" without punctuation)."""
    lists = lexicon()
    tokens = reply.tokens
    for phrase_said, phrases in (("no", lists.no_phrases), ("yes", lists.yes_phrases)):
        found = phrases.matches(tokens[start:start + 6])
        if found and found[0][0] == 0:
            after = start + found[0][1]
            return (phrase_said, after) if after >= len(tokens) or reply.boundary(after) else (None, start)
    word = tokens[start]
    said = "yes" if word in lists.yes else "no" if word in lists.no else None
    if said is None or start + 1 < len(tokens) and not reply.boundary(start + 1):
        return None, start
    return said, start + 1


def _other_person(clause: Sequence[str], frame: Frame) -> bool:
    """Whether a clause speaks in the first or second person ("Yes, I am lying") of a question about someone else;
    "I think", "I'd say" before the clause's own subject are no person of it."""
    lists = lexicon()
    if frame.addressed:
        return False
    lead = {i for start, end in lists.lead_ins.spans(clause) for i in range(start, end)}
    return any(i not in lead and (t in lists.first_person or t in lists.second_person) for i, t in enumerate(clause))
