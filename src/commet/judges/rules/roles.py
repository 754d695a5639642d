"""Who does what: a sentence decides only when it names the question's people in the question's frame.

"What kind of balloon does Dad think Nadia wants?" asks about Dad's belief. "Dad wants a star
balloon." names the option in another frame (what Dad wants), and "Nadia wants a star balloon."
states what Nadia wants, not what Dad thinks: neither decides. "Dad thinks Nadia wants a star
balloon." and "A star balloon." do. A sentence decides when:

* it names exactly one option (or, where every option is a feeling, one feeling word that can mean
  only one of them: "sad" for "happy or upset?", never for "sad or angry?");
* its other words are the question's own (by stem: "thinks" for "think", "believes" for "think"),
  function words (of English, Spanish, German or French), or words that say a choice is made, in the
  question's order where the question has two people or people as options (the order keeps their
  roles: "Mia will give the apple to Sam", not "Sam will give the apple to Mia");
* unless it names the option alone, it refers to every person the question names (by name; by a
  pronoun only where the question names one person), and it has every verb of thinking, wanting,
  knowing or saying the question has;
* it has no hedge, contrast, negation or judgement word, no word pointing away from the option it names
  ("a different snack than the apple"), and it is no copy of (the start of) the question.
"""

from __future__ import annotations

import enum
import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from commet.judges.rules.lexicon import hedged, judged, lexicon, mental_stems, negation_count, stem, tokens_of
from commet.judges.rules.options import Choice, Named, named_options, place_kept
from commet.text import char_kind, word_spans

#: a sentence longer than this never decides by naming an option (its conclusion may come late)
MAX_SENTENCE_WORDS = 24


class Reading(enum.Enum):
    """Why a sentence decides nothing."""

    NONE = "names no option"
    SEVERAL = "names several options"
    HEDGED = "hedges, contrasts, negates or judges"
    OTHER_WORDS = "says more than which option, or in another order than the question"
    OTHER_ROLE = "names other people or another frame than the question's"
    REPEATS = "repeats the question"
    TOO_LONG = "too long a sentence"


@dataclass(frozen=True)
class Frame:
    """What a question asks about: its words (and their stems), its people and its mental verbs."""

    tokens: tuple[str, ...]
    stems: tuple[str, ...]
    persons: tuple[frozenset[str], ...]
    verbs: frozenset[str]
    unspaced: bool  # written in a script without spaces: no frame can be read
    negative: bool  # a negative question ("Isn't he lying?", "Does she not know?")
    roles_by_order: bool  # two people, or people as options: only the question's word order keeps their roles
    claims: frozenset[str]  # stems of the words after its main clause ("lying when he says he didn't break it")
    #: it addresses the respondent ("Which toy do you like best?"): "I like the kite" answers it
    addressed: bool = False
    #: it asks which one someone other than the respondent picks, wants or takes ("Which would Lena pick?"):
    #: "I'd pick the ice lolly" is then the respondent's own pick, not an answer
    others_choice: bool = False
    #: the words of the sentence that asks (the story before it aside): where its predicate is read
    asking: tuple[str, ...] = ()


#: words that open a question and are capitalised for that alone
_QUESTION_OPENERS = frozenset({"is", "are", "was", "were", "do", "does", "did", "will", "would", "can", "could",
                               "should", "has", "have", "had", "if", "after", "before", "when", "now", "so", "and",
                               "then", "look", "imagine", "remember", "story", "question", "mr", "mrs", "ms"})


def question_frame(question: str, choices: Sequence[Choice]) -> Frame:
    """The frame of a question (its stem, without a list of labelled options).

    People and verbs are read from the sentence that asks (the last one ending in a question mark: "Sam
    likes a different snack. Which snack will Sam pick?" asks what Sam picks, not what he likes), before
    an adjunct clause ("How will Leo feel when he sees ...?" asks how Leo feels). A person is a run of
    capitalised words that are never written in lower case in the question and are no function, question
    or mental-verb word and no option's word ("Mrs Green", "Nadia"; "Kai's" is Kai).
    """
    lists = lexicon()
    tokens = tuple(tokens_of(question))
    option_words = {word for choice in choices for word in choice.core}
    text = asking_sentence(unicodedata.normalize("NFKC", question))
    spans = word_spans(text)
    lower = {text[s:e].casefold() for s, e in spans if not text[s].isupper()}

    def is_name(word: str) -> bool:
        folded = (tokens_of(word) or [word.casefold()])[0]  # "Kai's" is Kai
        return (word[0].isupper() and folded not in lower and folded not in option_words and folded != "i"
                and folded not in lists.function_words and folded not in lists.question_words
                and folded not in _QUESTION_OPENERS and stem(folded) not in mental_stems())

    persons: list[set[str]] = []
    previous_end = -2
    main = _main_clause_end(text, spans)
    for index, (start, end) in enumerate(spans[:main]):
        word = text[start:end]
        if index == 0 or not is_name(word):  # the first word is capitalised for opening the sentence
            continue
        name = (tokens_of(word) or [word.casefold()])[0]
        if persons and text[previous_end:start] == " ":
            persons[-1].add(name)
        else:
            persons.append({name})
        previous_end = end
    main_words = tokens_of(text[: spans[main - 1][1]] if main else "")
    verbs = frozenset(stem(t) for t in main_words if stem(t) in mental_stems() and t not in option_words)
    unspaced = any(char_kind(ch) == "u" for ch in question)
    negative = negation_count(tokens_of(text)[:3]) > 0
    people_as_options = any(len(c.core) == 1 and _capitalised(c.text, c.core[0]) for c in choices) or bool(
        {"who", "whom", "whose", "wer", "wen", "wem", "quién", "quien", "qui"} & set(tokens_of(text)))
    subordinate = tokens_of(text[spans[main][0]:] if main < len(spans) else "")
    claims = frozenset(stem(t) for t in subordinate if t not in lists.function_words and t not in lists.question_words
                       and t not in _ADJUNCTS and not any(t in person for person in persons))
    choosing = {stem(v) for v in lists.choice_verbs}
    addressed = bool(set(tokens) & lists.second_person)
    others_choice = not addressed and any(stem(t) in choosing for t in tokens)
    return Frame(tokens, tuple(stem(t) for t in tokens), tuple(frozenset(p) for p in persons), verbs, unspaced,
                 negative, len(persons) > 1 or people_as_options, claims, addressed, others_choice,
                 tuple(tokens_of(text)))


def _asks_negated(frame: Frame, choices: Sequence[Choice]) -> bool:
    """Whether the asking sentence has a negation outside the options it names ("Which box will Sam NOT open?";
    not "How does Kai feel, surprised or not surprised?")."""
    asked = frame.asking or frame.tokens
    inside = {i for n in named_options(asked, choices) for i in range(n.start, n.end)}
    return bool(negation_count([t for i, t in enumerate(asked) if i not in inside]))


def predicates(frame: Frame) -> frozenset[str]:
    """The stems of the verbs the question asks about: the first word after each of its people that is no
    function word, person or question word ("look" of "Where will Sally look for her marble?", "think" and "look"
    of "Where does Anne think Sally will look?"). A later clause that has one of them says the answer again."""
    lists = lexicon()
    asked = frame.asking or frame.tokens
    people = {w for person in frame.persons for w in person}
    found = set()
    for i, token in enumerate(asked):
        if token not in people or i + 1 < len(asked) and asked[i + 1] in people | {"s"}:
            continue  # a name of several words, or one that owns what follows ("Omar's jacket")
        for j in range(i + 1, len(asked)):
            word = asked[j]
            if len(word) < 2 or not word.isalpha() or word in lists.function_words or word in people \
                    or word in lists.foreign_function_words \
                    or word in lists.foreign_articles or word in lists.question_words or word in lists.subject_pronouns:
                continue
            if asked[j - 1] not in lists.determiners and asked[j - 1] not in lists.possessives:
                found.add(stem(word))  # a word after a determiner is a noun ("su canica", "die Schokolade")
                break
    return frozenset(found)


def _capitalised(text: str, word: str) -> bool:
    """Whether ``word`` is written with a capital in ``text`` (an option that may be a person's name: "Tom")."""
    folded = unicodedata.normalize("NFKC", text)
    return any(folded[s:e].casefold() == word and folded[s].isupper() for s, e in word_spans(folded))


#: words that open an adjunct clause of a question ("How will Leo feel when he sees ...?"): its people and
#: verbs are circumstances, not the frame an answer must keep
_ADJUNCTS = frozenset({"when", "if", "because", "after", "before", "while", "since", "until", "once", "as"})


def _main_clause_end(text: str, spans: Sequence[tuple[int, int]]) -> int:
    """How many words of the asking sentence come before its first adjunct clause."""
    for i, (start, end) in enumerate(spans):
        if i > 0 and text[start:end].casefold() in _ADJUNCTS:
            return i
    return len(spans)


def asking_sentence(question: str) -> str:
    """The last sentence of ``question`` that ends in a question mark (the whole question when none does)."""
    end = max(question.rfind("?"), question.rfind("？"))
    if end < 0:
        return question
    start = max(question.rfind(mark, 0, end) for mark in ".!?？。\n") + 1
    return question[start:end + 1]


#: words a reply may put around an option's own words and still only name it, as the question words it
OPTION_FILLERS = frozenset({"the", "a", "an", "one", "ones", "this", "that", "these", "those"})


def repeats_question(tokens: Sequence[str], frame: Frame, option_words: int = 1,
                     answer_words: Collection[str] = ()) -> bool:
    """The words are a copy of the question, cut short or not: its first three words or more, or a stretch of
    it two words longer than the option they name ("does Dad think Nadia wants, a star balloon"). A stretch
    made only of an option's or answer's words (``answer_words``) and fillers is the option as the question
    words it, not a copy: "The big one" to "the big one or the medium one?"."""
    if len(tokens) >= 3 and tuple(tokens) == frame.tokens[: len(tokens)]:
        return True
    if answer_words and all(token in answer_words or token in OPTION_FILLERS or token in lexicon().prepositions
                            for token in tokens):
        return False
    size = len(tokens)
    if size < option_words + 2 or size > len(frame.tokens):
        return False
    first = tokens[0]
    return any(frame.tokens[i] == first and tuple(frame.tokens[i:i + size]) == tuple(tokens)
               for i in range(len(frame.tokens) - size + 1))


def emotion_named(tokens: Sequence[str], choices: Sequence[Choice]) -> list[Named]:
    """Where every option is one feeling word, the feeling words of the sentence, each tied to the one option
    it can mean ("sad" for "happy or upset?"); empty when there is none, or one could mean several options
    ("upset" for "sad or angry?")."""
    lists = lexicon()
    families = [lists.emotions.get(choice.core) for choice in choices]
    if any(family is None for family in families):
        return []
    sides = [lists.valence.get(family[0]) if family else None for family in families]
    found: list[Named] = []
    for start, end in lists.emotion_words.matches(tokens):
        meant = lists.emotions[tuple(tokens[start:end])]
        # the word names an option when it can name the option's own (narrowest) feeling: "disappointed" names
        # "sad" (disappointment is a kind of sadness); else when it shares a feeling with an option that is the only
        # one of its valence: "sad" names "disappointed" in "happy or disappointed?", not among "delighted,
        # disappointed, angry or frightened", where a reply that is none of them does not choose between three
        options = [i for i, family in enumerate(families) if family and family[0] in meant]
        if not options:
            options = [i for i, family in enumerate(families) if family and set(family) & set(meant)
                       and sides[i] is not None and sides.count(sides[i]) == 1]
        if len(options) != 1:
            return []
        found.append(Named(options[0], start, end))
    return found


def sentence_choice(tokens: Sequence[str], choices: Sequence[Choice], frame: Frame) -> int | Reading:
    """The option a sentence names in the question's frame (its index), or why it names none."""
    lists = lexicon()
    if len(tokens) > MAX_SENTENCE_WORDS:
        return Reading.TOO_LONG
    named = named_options(tokens, choices) or emotion_named(tokens, choices)
    if repeats_question(tokens, frame, max((n.end - n.start for n in named), default=1),
                        {word for choice in choices for word in choice.core}):
        return Reading.REPEATS
    if not named:
        return Reading.NONE
    if len({n.index for n in named}) > 1:
        return Reading.SEVERAL
    if _asks_negated(frame, choices):
        # "He'll open the red box first." to "Which box will Sam NOT open first?": a sentence without the question's
        # negation answers the question without it, and one with it negates what it names: only the option decides
        return Reading.OTHER_WORDS
    lead = named[0].start
    while lead > 0 and (tokens[lead - 1] in lists.places or tokens[lead - 1] in lists.prepositions):
        lead -= 1
    if not place_kept(tokens[lead:named[0].start], choices[named[0].index]):
        return Reading.OTHER_WORDS  # "She'll look under the basket" for "the basket": another place
    article = named[0].start
    while article > 0 and tokens[article - 1] in ("the", "a", "an"):
        article -= 1
    if article > 0 and tokens[article - 1] in _OTHER_ROLE_PREPOSITIONS \
            and not _asks_with(tokens[article - 1], frame, choices):
        # "She'll look for the basket" to "Where will she look for her marble?": the basket is what she seeks, not
        # where; "He'll ask for the fairy book" to "Which book will he ask for?" keeps the question's own "for"
        return Reading.OTHER_WORDS
    outside = [t for i, t in enumerate(tokens) if not any(n.start <= i < n.end for n in named)]
    if hedged(outside, frame.tokens) or negation_count(tokens) or lists.pointing_away.found_in(outside) \
            or judged(outside, frame.tokens):
        return Reading.HEDGED
    if frame.unspaced or any(char_kind(t[0]) == "u" for t in outside):
        return Reading.OTHER_WORDS
    if not frame.addressed and set(outside) & lists.first_person:
        return Reading.OTHER_ROLE  # "I would pick the ice lolly" to "Which one would Lena pick?": the speaker's own
    if set(outside) & lists.frame_modals - set(frame.tokens):
        return Reading.OTHER_WORDS  # "Sally should look in the box" to "Where will Sally look?": another question
    chosen = choices[named[0].index]
    own = set(tokens_of(chosen.text))
    # "say" before the option chooses it ("She should say the hat with a star"); before a clause it reports
    # someone's words ("He says he's happy" to "Is Ben happy or sad?"), which are no answer in the frame
    people = {w for person in frame.persons for w in person} | lists.subject_pronouns | {"that", "it"}
    reported = any(t in _SAYING and i + 1 < len(tokens) and tokens[i + 1] in people for i, t in enumerate(tokens))
    skip = lists.function_words | lists.foreign_function_words | (lists.choice_words - (_SAYING if reported else set())) \
        | own
    content = [t for t in outside if t not in skip]
    asked = set(frame.stems) | {w for person in frame.persons for w in person}
    if any(stem(t) not in asked and t not in asked for t in content):
        return Reading.OTHER_WORDS
    if frame.roles_by_order and not _in_order(content, frame):
        return Reading.OTHER_WORDS
    if content and not _same_roles(tokens, frame) and not _option_and_noun(tokens, named[0], frame):
        return Reading.OTHER_ROLE
    return named[0].index


#: prepositions before an option that give it another role than a place or a thing chosen ("look for the basket")
_OTHER_ROLE_PREPOSITIONS = frozenset({"for", "about", "without", "than", "against"})
#: the choice words that say, not choose
_SAYING = frozenset({"say", "says"})


def _asks_with(preposition: str, frame: Frame, choices: Sequence[Choice]) -> bool:
    """Whether the question's asking sentence has ``preposition`` with the options as its object: at its end ("Which
    book will he ask for?") or before the options ("ask for, the pirate book or the fairy book?")."""
    asked = frame.asking or frame.tokens
    for i, token in enumerate(asked):
        if token != preposition:
            continue
        rest = list(asked[i + 1:])
        while rest and rest[0] in ("the", "a", "an"):
            rest.pop(0)
        if not rest or any(n.start == 0 for n in named_options(rest, choices)):
            return True
    return False


def _option_and_noun(tokens: Sequence[str], named: Named, frame: Frame) -> bool:
    """Whether the sentence is the option and, after it, a word or two of the question that name no person and
    no verb of its frame ("5 marbles" to "How many marbles does Max think...?", "Kai's shell"): the option alone."""
    lists = lexicon()
    before, after = tokens[:named.start], tokens[named.end:]
    people = {w for person in frame.persons for w in person}
    verbs = mental_stems() | {stem(v) for v in lists.choice_verbs | lists.choice_words}
    return (0 < len(after) <= 2 and all(t in lists.prepositions for t in before)
            and all(t in frame.tokens and t not in people and t not in lists.function_words and stem(t) not in verbs
                    for t in after))


def _in_order(content: Sequence[str], frame: Frame) -> bool:
    """Whether the sentence's own words come in the question's order (so the option keeps the question's
    role: "Mia will give the apple to Sam" for "Who will give the apple to Sam?", not "Sam will give...")."""
    position = 0
    for token in content:
        wanted = stem(token)
        for i in range(position, len(frame.stems)):
            if frame.stems[i] == wanted or frame.tokens[i] == token:
                position = i + 1
                break
        else:
            return False
    return True


def _same_roles(tokens: Sequence[str], frame: Frame) -> bool:
    """Every person of the question referred to (a pronoun stands for the only one), every verb of its frame."""
    present = set(tokens)
    pronoun = bool(present & lexicon().pronouns)
    for person in frame.persons:
        if not person & present and not (pronoun and len(frame.persons) == 1):
            return False
    stems = {stem(t) for t in tokens}
    return frame.verbs <= stems


#: words that may stand around a negated feeling and leave it one ("not happy at all", "definitely not sad")
_AROUND_NEGATED_FEELING = frozenset({"at", "all", "one", "bit", "in", "the", "least", "slightest", "really", "very",
                                     "is", "feels", "feel", "was", "be", "would", "will", "d", "definitely",
                                     "certainly", "absolutely", "surely"})


def negated_feeling(tokens: Sequence[str], choices: Sequence[Choice]) -> int | None:
    """The option a negated feeling chooses ("Not sad." for "happy or sad?": happy), or None. It decides only
    where there are two options that are each other's opposites in the lexicon ("happy or sad?", not "happy or
    scared?": not happy need not be scared); the words are one negation, one feeling word that names one option
    and is no negative itself ("not unhappy" is not read), the person by name, and words that only frame them
    (a pronoun may be someone else)."""
    lists = lexicon()
    if len(choices) != 2 or negation_count(tokens) != 1 or any(len(c.core) != 1 for c in choices):
        return None
    first, second = (stem(choice.core[0]) for choice in choices)
    if second not in lists.opposites.get(first, frozenset()):
        return None
    named = emotion_named(tokens, choices)
    if len(named) != 1 or any(t.startswith(("un", "dis")) for t in tokens[named[0].start:named[0].end]):
        return None
    negation = next(i for i, t in enumerate(tokens) if negation_count([t]))
    if negation > named[0].start:
        return None  # "Sad? Not at all." and "happy, not" are read elsewhere, or not at all
    rest = [t for i, t in enumerate(tokens) if i != negation and not named[0].start <= i < named[0].end]
    if any(t not in _AROUND_NEGATED_FEELING for t in rest):
        return None
    return 1 - named[0].index
