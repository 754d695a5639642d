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
from commet.judges.rules.tails import World, clause_stands

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
    for token in frame.asking or frame.tokens:
        if token in _SUBORDINATORS and words:
            break
        if token in _AUXILIARIES or token in lists.function_words or token in lists.question_words or token in names:
            continue
        words.append(stem(token))
    return frozenset(words)


def _opposites(pred: frozenset[str]) -> frozenset[str]:
    opposites = lexicon().opposites
    return frozenset(stem(w) for p in pred for w in opposites.get(p, ()))


#: prefixes that make an opposite negative in itself ("unaware", "dishonest", "insincere")
_NEGATIVE_PREFIXES = ("un", "in", "im", "dis", "ir", "il", "non")
#: the polarity of a clause that speaks of the predicate but cannot be read (two negations, the predicate and its
#: opposite together: "She's not not lying", "not honest but not lying either")
UNREADABLE = -1


def clause_polarity(tokens: Sequence[str], pred: frozenset[str]) -> int | None:
    """0 (says the predicate), 1 (says its opposite) or :data:`UNREADABLE` for a clause that speaks of the
    predicate; None for one that does not. Negation is scoped to its clause and read, never counted: one word of
    the predicate or of its opposite (not both), with at most one negation ("not lying", "mistaken", "not
    mistaken", "telling the truth" to "Is he telling a lie?")."""
    lists = lexicon()
    phrased = [(i, kind) for p in pred if p in lists.predicate_phrases
               for kind, phrases in enumerate(lists.predicate_phrases[p]) for start, end in phrases.spans(tokens)
               for i in range(start, end)]
    inside = {i for i, _ in phrased}  # "had no idea": a phrase's own negation is no negation of the clause
    tokens = [t for i, t in enumerate(tokens) if i not in inside]
    stems = {stem(t) for t in tokens}
    said = stems & pred | ({"_said"} if any(kind == 0 for _, kind in phrased) else set())
    opposite = {s for s in stems - pred if s in _opposites(pred)} | ({"_opposite"} if any(kind for _, kind in phrased)
                                                                     else set())
    if not said and not opposite:
        return None
    if tokens[:2] == ["rather", "than"]:
        tokens = ["not", *tokens[2:]]  # "rather than lying": not lying
    negations = negation_count(tokens)
    # a word of the predicate and its own opposite together ("not honest but not lying") cannot be read, nor a
    # negated opposite that is itself negative ("not unaware", "not dishonest"): litotes are not read
    both = any(lists.opposites.get(s, frozenset()) & said for s in opposite) or bool(phrased and said and opposite)
    litotes = negations and any(t.startswith(_NEGATIVE_PREFIXES) and stem(t) in opposite for t in tokens)
    if both or litotes or negations > 1:
        return UNREADABLE
    return (negations + (1 if opposite else 0)) % 2


def restates(tokens: Sequence[str], frame: Frame, pred: frozenset[str]) -> bool:
    """The words only restate the question: its own words (by stem), function words, negations, opposites. A
    possessive the question does not use says whose ("She knew it was hers" to "Did Ruby know whose crayon it
    was?"): a claim, not a restatement."""
    lists = lexicon()
    asked = set(frame.stems) | {w for person in frame.persons for w in person} | _opposites(pred)
    return all((t in lists.function_words or t in lists.pronouns) and t not in lists.possessives or stem(t) in asked
               or negation_count([t]) for t in tokens)


#: words a restatement may put after the question's predicate without saying it of something else: pro-forms of
#: what is asked ("She knew it.", "He didn't see that.", "the one"), articles, auxiliaries, adverbs of time and place
_NEUTRAL_COMPLEMENT = frozenset({"it", "that", "this", "so", "they", "them", "one", "the", "a", "an", "is", "are",
                                 "was", "were", "be", "been", "s", "there", "then", "now", "still", "already",
                                 "about", "of", "at", "all", "either", "too", "anymore"})
#: words that make a complement a clause ("... the shell was Kai's", "... where the star is")
_CLAUSE_MARKERS = frozenset({"that", "if", "whether", "what", "which", "who", "whom", "whose", "where", "when", "how",
                             "is", "are", "was", "were", "am", "do", "does", "did", "has", "have", "had", "will",
                             "would", "can", "could", "should", "s", "re", "m", "ll", "d", "ve"})


#: titles before a name ("Mrs Green"): no word of a predicate
_TITLES = frozenset({"mr", "mrs", "ms", "miss", "dr", "mx"})


def _complement(tokens: Sequence[str], pred: frozenset[str], also: frozenset[str] = frozenset()) -> Sequence[str]:
    """The words after the first word of the predicate (or of ``also``) in ``tokens``; all of them where it has
    none."""
    pivot = next((i for i, t in enumerate(tokens) if t not in _TITLES and (stem(t) in pred or stem(t) in also)), None)
    return tokens if pivot is None else tokens[pivot + 1:]


def same_complement(tokens: Sequence[str], frame: Frame, pred: frozenset[str]) -> bool:
    """Whether a clause that says the question's predicate says it of what the question asks about: after the
    predicate only pro-forms ("She knew it."), nothing ("He didn't see."), or the question's own complement said
    again (:func:`_restated_complement`). "She hardly knew him.", "She didn't know what to do." and "She knew the
    shell." say the verb of something else, and "He didn't see Dad." to "Did Mateo see what Dad put in the
    lunchbox?" of one of its words in another role."""
    if not any(t not in _TITLES and (stem(t) in pred or stem(t) in _opposites(pred)) for t in tokens):
        return True
    return _restated_complement(_complement(tokens, pred, _opposites(pred)), frame, pred)


def _restated_complement(complement: Sequence[str], frame: Frame, pred: frozenset[str]) -> bool:
    """Whether the words after a reply's predicate are the question's complement said again: only its words and
    pro-forms, as a clause where the question's is one ("She knew it was Kai's" to "Did Elsie know the shell was
    Kai's?"), saying the same of its subject in the same tense ("it was a shell", "where it was" to "where it is
    now" are other claims), and keeping the action a verb of perception is asked about ("Lina move the kite")."""
    lists = lexicon()
    asked = _complement(frame.asking or frame.tokens, pred)
    opposites = _opposites(pred)
    said = [t for t in complement if t not in lists.emphasis and t not in _REASON_ADVERBS
            and not negation_count([t]) and stem(t) not in opposites]
    asked_stems = {stem(t) for t in asked}
    if any(t not in _NEUTRAL_COMPLEMENT and stem(t) not in asked_stems for t in said):
        return False
    asked_copula, said_copula = _predicative(asked), _predicative(complement)
    if asked_copula is not None and said_copula is not None and asked_copula[0] != said_copula[0]:
        return False  # "She knows where it was." to "Does Mia know where the star is right now?"
    if not any(t not in _NEUTRAL_COMPLEMENT for t in said):
        return True
    verb = next((stem(t) for t in frame.asking or frame.tokens if t not in _TITLES and stem(t) in pred), "")
    action = next((stem(t) for t in asked if stem(t) in pred), None)
    if verb in _PERCEPTION and action is not None and action not in {stem(t) for t in complement}:
        return False  # "He saw Lina." to "Did he see Lina move the kite?": who was seen, not what she did
    # "Kai's" of "the shell was Kai's" is what the question's clause says of its subject: the reply's must say it
    return not _is_clause(asked) or _is_clause(complement) and asked_copula in (None, said_copula)


#: verbs of perception, whose complement is someone and what they do ("see Lina move the kite")
_PERCEPTION = frozenset({"see", "watch", "hear", "notic", "observ", "spot", "feel"})
#: copulas, and the contracted ones ("it's", "they're"), before what a complement clause says of its subject
_COPULAS = frozenset({"is", "are", "was", "were", "be", "been", "am", "s", "re"})
#: words of time and place that leave what a clause says the same ("where it is right now", "it's still there")
_CIRCUMSTANCES = frozenset({"now", "right", "today", "still", "then", "already", "anymore", "here", "there", "yet"})


def _predicative(tokens: Sequence[str]) -> tuple[bool, frozenset[str]] | None:
    """Whether a complement clause's copula is in the past, and the stems it says of its subject ("Kai's" of "the
    shell was Kai's", "a shell" of "it was a shell"; nothing of "where it is right now"); None where it has no
    copula. "where it was" is not "where it is right now"."""
    lists = lexicon()
    at = next((i for i, t in enumerate(tokens) if t in _COPULAS
               and (t not in _CONTRACTED or i and tokens[i - 1] in _CONTRACTING)), None)
    if at is None:
        return None
    return tokens[at] in ("was", "were"), frozenset(
        stem(t) for t in tokens[at + 1:] if t not in _NEUTRAL_COMPLEMENT and t not in _CIRCUMSTANCES
        and t not in lists.emphasis and not negation_count([t]))


#: contracted auxiliaries ("it's", "they're") and the words they contract with; "s" after a noun is a possessive
#: ("Kai's shell"), no verb
_CONTRACTED = frozenset({"s", "re", "m", "ll", "d", "ve"})
_CONTRACTING = frozenset({"it", "that", "this", "there", "here", "he", "she", "they", "we", "you", "i", "who",
                          "what", "where"})


def _is_clause(tokens: Sequence[str]) -> bool:
    """Whether a complement has a clause's opener or verb ("the shell was Kai's", "where it is", "it's his"), not
    only a noun phrase ("the shell", "Kai's shell")."""
    return any(t in _CLAUSE_MARKERS and (t not in _CONTRACTED or i and tokens[i - 1] in _CONTRACTING)
               for i, t in enumerate(tokens))


def clauses(reply: Reply, start: int, end: int, subordinate: bool = False) -> list[tuple[int, int]]:
    """Token ranges of the clauses between tokens ``start`` and ``end`` (split at punctuation and reasons, and
    where ``subordinate`` at the words that open a subordinate clause: "not | that he knows of")."""
    found: list[tuple[int, int]] = []
    first = start
    for i in range(start + 1, end):
        if reply.boundary(i) or reply.tokens[i] in _REASONS or subordinate and reply.tokens[i] in _SUBORDINATORS \
                or reply.tokens[i:i + 2] == ["rather", "than"]:
            found.append((first, i))
            first = i
    if first < end:
        found.append((first, end))
    return found


def read_yes_no(reply: Reply, start: int, frame: Frame, negative_question: bool, world: World) -> YesNo:
    """What the reply from token ``start`` on says: yes, no, or why it cannot be told."""
    lists = lexicon()
    tokens = reply.tokens
    if start >= len(tokens):
        return YesNo(None, "no words")
    pred = predicate(frame)
    said, after = opening_yes_no(reply, start)
    if said is None:
        return _read_clauses(reply, start, frame, pred, negative_question)
    tail = tokens[after:]
    if not tail:
        return YesNo(said, after=after)
    if negative_question:
        return YesNo(None, f"reply says {said!r} to a negative question and goes on")
    phrased = {i for p in pred if p in lists.predicate_phrases for phrases in lists.predicate_phrases[p]
               for start, end in phrases.spans(tail) for i in range(start, end)}  # "had no idea": no second no
    if hedged(tail) or any((t in lists.yes or t in lists.no) and i not in phrased for i, t in enumerate(tail)):
        return YesNo(None, f"reply says {said!r} but hedges, corrects itself or turns after it")
    if lists.judgements.found_in([t for t in tail if stem(t) not in frame.stems]):
        return YesNo(None, f"reply says {said!r} and judges something after it")
    parts = clauses(reply, after, len(tokens))
    first = tokens[parts[0][0]:parts[0][1]]
    elliptic = all(t in lists.function_words or t in lists.pronouns or negation_count([t]) for t in first)
    if elliptic and negation_count(first) % 2 != (said == "no"):
        return YesNo(None, f"reply says {said!r} but what follows reads the other way")
    restated = restates(first, frame, pred) and clause_polarity(first, pred) is not None \
        and same_complement(first, frame, pred)
    if not (first[0] in _REASONS or elliptic or restated or _reason_of_subject(first, frame, pred)):
        return YesNo(None, f"reply says {said!r}; what follows neither restates the question nor gives a reason")
    for begin, end in parts:
        clause = tokens[begin:end]
        polarity = clause_polarity(clause, pred)
        if polarity is None and all(t in lists.function_words or t in lists.pronouns or negation_count([t])
                                    for t in clause):
            polarity = negation_count(clause) % 2  # "No. He doesn't. He does.": each elliptic clause answers again
        if polarity is None and not (begin == parts[0][0] and elliptic) \
                and not clause_stands(clause, (), None, world, addressed=frame.addressed):
            # "Yes, she's lying. Reverse that.", "No, he isn't lying, Mia falsely says.": a clause that is neither
            # the predicate said again nor read as leaving the yes or no standing
            return YesNo(None, f"reply says {said!r}, then what is not read as leaving it standing "
                               f"({' '.join(clause)!r}); needs a judge")
        if polarity == UNREADABLE:
            return YesNo(None, f"reply says {said!r} but a clause after it negates twice or says both ways")
        if polarity is not None and polarity != (said == "no"):
            return YesNo(None, f"reply says {said!r} but a clause after it reads the other way")
        if polarity is not None and _other_person(clause, frame):
            return YesNo(None, f"reply says {said!r} of someone the question does not ask about")
        if polarity is not None and not same_complement(clause, frame, pred):
            return YesNo(None, f"reply says {said!r}, then the question's verb of something else; needs a judge")
        if polarity is None and ({stem(t) for t in clause} & frame.claims or all(negation_count([t]) for t in clause)):
            # "Yes, because he didn't break it" to "Is he lying when he says he didn't break it?": whether that
            # supports the yes depends on what the question's own claim means; a lone "NOT" reverses it
            return YesNo(None, f"reply says {said!r} and explains it with the question's own claim; needs a judge")
    return YesNo(said, after=after)


#: verbs of a lead-in after which "so" says yes and "not" says no ("I'd say so", "I believe not")
_SAYING = frozenset({"say", "think", "believe", "guess", "suppose", "hope", "afraid", "reckon", "imagine"})
#: the most words a reply without a yes or no may have to be read clause by clause
_MAX_CLAUSE_READ_WORDS = 20


def _read_clauses(reply: Reply, start: int, frame: Frame, pred: frozenset[str], negative_question: bool) -> YesNo:
    """A reply with no yes or no of its own, read clause by clause: each clause restates the question's predicate
    (or its opposite) with its own negation, or is an elliptic answer ("He certainly did.", "She isn't."), and all
    say the same ("She's not lying, she's mistaken."); any clause that does neither leaves it undecided."""
    tokens = reply.tokens
    rest = tokens[start:]
    unclear = YesNo(None, "reply does not open with a clear yes or no")
    if negative_question or len(rest) > _MAX_CLAUSE_READ_WORDS or hedged(rest) or judged(rest, frame.tokens):
        return unclear
    said: set[int] = set()
    for begin, end in clauses(reply, start, len(tokens), subordinate=True):
        clause: Sequence[str] = tokens[begin:end]
        interjection = _interjection(clause, frame)
        if interjection is not None:
            # "No she does", "She is lying no": the "no" answers by itself; it is no negation of the clause
            clause = interjection[1]
        if begin > start and clause[0] in _COMPLEMENT_OPENERS and not _subordinate_restates(clause, frame, pred):
            return unclear  # "She knew | that it was a shell" to "Did she know the shell was Kai's?"
        polarity = clause_polarity(clause, pred)
        if polarity is None and clause[0] in _SUBORDINATORS and not negation_count(clause) \
                and restates(clause[1:], frame, pred) and _subordinate_restates(clause, frame, pred):
            continue  # "... that the cookies are on the top shelf": the question's own claim, restated
        if polarity is None and said and len(clause) == 1 and (clause[0] in lexicon().yes or clause[0] in lexicon().no):
            polarity = 0 if clause[0] in lexicon().yes else 1  # "Tom is lying, yes.", "She didn't know, no."
        elif polarity is None:
            polarity = _elliptic(clause, frame)
        elif not restates(clause, frame, pred) or _other_person(clause, frame) \
                or not same_complement(clause, frame, pred):
            return unclear  # "True." says yes, not "no lie"; "I am not lying" speaks of someone else
        if polarity is None or polarity == UNREADABLE:
            return YesNo(None, "reply has a clause that neither restates the question nor answers it elliptically")
        if interjection is not None and polarity != interjection[0]:
            return YesNo(None, "reply's yes or no and the clause run on after it read different ways")
        said.add(polarity)
    if len(said) != 1:
        return YesNo(None, "reply's clauses read both ways")
    return YesNo("no" if said.pop() else "yes", after=len(tokens))


def _subordinate_restates(clause: Sequence[str], frame: Frame, pred: frozenset[str]) -> bool:
    """Whether a subordinate clause that may be the predicate's complement ("... where it is", "... about it") is the
    question's own: it opens with a word of the question's complement and says it again (:func:`_restated_complement`:
    "... what to do" to "Did he see what Dad put in the box?" asks another question, "... that it was a shell" to
    "Did she know the shell was Kai's?" says another thing). A reason or time clause ("because ...") is no
    complement."""
    if clause[0] not in _COMPLEMENT_OPENERS or clause[1:] and all(t in _PRO_FORMS for t in clause[1:]):
        return True
    complement = _complement(frame.asking or frame.tokens, pred)
    opens = stem(clause[0]) in {stem(t) for t in complement} or clause[0] == "that" and (
        len(clause) == 1 or _is_clause(complement))  # "She knew that (the shell was Kai's)"
    return opens and _restated_complement(clause, frame, pred)


#: the words that open a verb's complement clause ("know where ...", "see what ...", "know about ...")
_COMPLEMENT_OPENERS = frozenset({"that", "if", "whether", "what", "which", "who", "whom", "whose", "where", "when",
                                 "how", "to", "about"})
#: pro-forms of what the question asks about ("about it", "to that")
_PRO_FORMS = frozenset({"it", "that", "this", "them", "so"})


#: words after which a clause-opening yes or no is an interjection, not a determiner ("No she does", not "No one")
_INTERJECTED_SUBJECTS = frozenset({"it", "i", "you", "we"})


def _interjection(clause: Sequence[str], frame: Frame) -> tuple[int, Sequence[str]] | None:
    """(polarity: 0 yes, 1 no; the clause without it) for a yes or no run on into its clause without punctuation,
    before the clause's subject ("No she does", "Yes he is", "No Mia knows", "No really she knows") or at its end
    ("She is lying no", "She knows yes"); else None. Such a word answers by itself: it is not the clause's own
    negation (the clause must say the same), unlike "no" before a noun ("No one knows", "She is no liar")."""
    lists = lexicon()
    names = {w for person in frame.persons for w in person}
    if len(clause) < 2:
        return None
    if clause[-1] in lists.yes or clause[-1] in lists.no:
        return (0 if clause[-1] in lists.yes else 1), clause[:-1]
    if len(clause) < 3 or not (clause[0] in lists.yes or clause[0] in lists.no):
        return None
    # adverbs may stand between the word and the subject ("No really she knows", "Yes of course he did")
    subject = next((t for t in clause[1:] if t in _INTERJECTED_SUBJECTS
                    or t not in lists.emphasis and t not in _REASON_ADVERBS and t != "of"), "")
    if subject in lists.subject_pronouns or subject in _INTERJECTED_SUBJECTS or subject in names:
        return (0 if clause[0] in lists.yes else 1), clause[1:]
    return None


def _reason_of_subject(clause: Sequence[str], frame: Frame, pred: frozenset[str]) -> bool:
    """Whether a clause after a yes or no is a reason read by the lexicon's phrases and opposites ("she was misled",
    "he made up the dog story", "she honestly believes it"): it opens with the question's person, as a subject
    pronoun or by name, names no one else and has no agent ("by"), so its polarity is that person's (it is then
    checked against the yes or no like any clause). The predicate's own word must restate the question (a
    possessive it does not use is a claim: "Yes, she knew it was her crayon" to "Did Ruby know whose it was?")."""
    lists = lexicon()
    names = {w for person in frame.persons for w in person}
    claims = {stem(t) for t in clause} & pred or set(clause) & lists.possessives - set(frame.tokens)
    if not clause or claims or not (clause[0] in _SUBJECT_PRONOUNS or clause[0] in names) or "by" in clause \
            or any(t in names for t in clause[1:]) or clause_polarity(clause, pred) not in (0, 1):
        return False
    # the reason is said of the subject itself: only auxiliaries and adverbs stand between them ("she honestly
    # believes"; not "she made him believe it", where someone else believes)
    starts = [start for p in pred if p in lists.predicate_phrases for phrases in lists.predicate_phrases[p]
              for start, _ in phrases.spans(clause)]
    starts += [i for i, t in enumerate(clause) if stem(t) in _opposites(pred)]
    first = min(starts, default=len(clause))
    return all(t in _AUXILIARIES or t in _REASON_ADVERBS or t in lists.emphasis for t in clause[1:first])


#: adverbs that may stand between a reason's subject and its verb ("she honestly believes", "she was simply misled")
_REASON_ADVERBS = frozenset({"s", "honestly", "really", "genuinely", "truly", "only", "just", "simply", "actually",
                             "clearly", "obviously", "certainly", "definitely", "totally", "completely"})


def _elliptic(clause: Sequence[str], frame: Frame) -> int | None:
    """The polarity of an elliptic answer ("He certainly did.", "She is not.", "Of course he does.", "Sure
    does."): the question's person as a pronoun (where it names one person) or by name, or none, then an
    auxiliary with at most one negation, and nothing but emphasis; None for any other clause."""
    lists = lexicon()
    names = {w for person in frame.persons for w in person}
    auxiliaries = [t for t in clause if t in _ELLIPTIC_AUXILIARIES]
    subjects = [t for t in clause if t in _SUBJECT_PRONOUNS or t in names]
    others = [t for t in clause if t not in _ELLIPTIC_AUXILIARIES and t not in subjects and t not in lists.emphasis
              and t not in ("of", "course", "sure") and not negation_count([t])]
    if len(auxiliaries) != 1 or others or len(subjects) > 1 or negation_count(clause) > 1:
        return None
    if subjects and subjects[0] in _SUBJECT_PRONOUNS and len(frame.persons) != 1:
        return None  # "He did." where the question names two people: which one?
    if clause.index(auxiliaries[0]) < (clause.index(subjects[0]) if subjects else 0):
        return None  # "Did he?", "Does she": a question back
    asked = next((t for t in frame.asking if t in _ELLIPTIC_AUXILIARIES), None)
    if asked is not None and _AUXILIARY_FAMILY[asked] != _AUXILIARY_FAMILY[auxiliaries[0]]:
        return None  # "He has." to "Does Leo know ...?": an answer to another question
    return 1 if negation_count(clause) else 0


#: the pronouns an elliptic answer may open with ("She did."), standing for the question's one person
_SUBJECT_PRONOUNS = frozenset({"he", "she", "they"})
#: the auxiliaries an elliptic answer ends on ("She did.", "He isn't."), each with its family: an elliptic answer
#: repeats the question's auxiliary ("Did he see?": "He did.", "He does."; not "He has.")
_AUXILIARY_FAMILY = {"is": "be", "are": "be", "was": "be", "were": "be", "am": "be", "do": "do", "does": "do",
                     "did": "do", "will": "will", "would": "will", "can": "can", "could": "can", "has": "have",
                     "have": "have", "had": "have", "should": "shall", "shall": "shall"}
_ELLIPTIC_AUXILIARIES = frozenset(_AUXILIARY_FAMILY)


def pro_form_so(reply: Reply, at: int) -> bool:
    """Whether token ``at`` is the "so" that stands for a clause after a verb of saying or thinking ("She doesn't
    think so", "He says so"), not the "so" that opens a conclusion ("She was outside so no")."""
    before = reply.tokens[at - 1] if at > 0 else ""
    return reply.tokens[at] == "so" and not reply.boundary(at) and stem(before) in {stem(w) for w in _SAYING}


def opening_yes_no(reply: Reply, start: int) -> tuple[str | None, int]:
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
    if said is None and start > 0 and tokens[start - 1] in _SAYING and not reply.boundary(start):
        said = {"so": "yes", "not": "no"}.get(word)  # "I would say so", "I think not" after their lead-in
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
