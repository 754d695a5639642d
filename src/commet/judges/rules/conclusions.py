"""The conclusion of a longer reply: an answer line, a single bold answer, a "so ..." sentence, an opening answer.

A chat model seldom answers with the option alone. It writes "Final answer: B" after its reasoning,
"**Answer:** the basket" before an explanation, "So Sally will look in the basket.", "La respuesta
correcta es la B", "答案是B". The reply decides when its conclusion is certain:

* an answer line ("Final answer: B", "The answer is (b)", "Answer: the basket", in English, Spanish,
  German, French, Japanese or Chinese, by label or option text): every one in the reply names the same
  option, and nothing after the last one names another option, hedges, negates it or changes it;
* else a single bold answer (``**B**``, ``**the basket**``), under the same conditions;
* else the last "so / therefore / thus ..." sentence that names one option in the question's frame, when
  the reply's opening answer (if it has one) names the same option and nothing after it spoils it;
* else an opening sentence that names one option in the question's frame, with nothing after it that
  spoils it (a polite preamble such as "Great question!" is not the opening sentence).

Reasoning before the conclusion may name any option and ask questions: it is not the answer. A sentence that is
an answer of its own (an option alone, or with a reason: "The box.") is one, wherever it stands: where it names
another option than the conclusion, the reply says two answers and is undecided ("The basket. The box. The
basket."). After the conclusion, a clause that says the question's predicate again must name the same option,
and one that leaves its verb phrase out is not read ("Sally never looks there.", "She'd be mistaken to.").
"""

from __future__ import annotations

import bisect
import enum
from collections.abc import Sequence
from dataclasses import dataclass

from commet.judges.rules.labels import leading_label
from commet.judges.rules.lexicon import answer_markers, hedged, judged, lexicon, negation_count, stem
from commet.judges.rules.marks import Reply
from commet.judges.rules.options import Choice, Named, cut_short, named_options, place_kept
from commet.judges.rules.roles import Frame, Reading, emotion_named, predicates, sentence_choice
from commet.judges.rules.tails import REJECTING, World, unread_clause
from commet.text import char_kind

#: words that open a reason after an answer ("The shed because he never saw it moved")
_REASONS = frozenset({"because", "since", "as", "cause", "given", "porque", "weil", "da", "parce", "car", "因为", "由于"})
#: the most words an answer is looked for in after an answer line's marker (the text is bounded, whatever it is)
ANSWER_WORDS = 40


class Unclear(enum.Enum):
    """A statement that names an option but cannot be read as choosing exactly one."""

    UNCLEAR = "unclear"
    #: a label with another option's text ("A) the box" where A is the basket, "the basket (B)"): the reply says
    #: two answers, so no other statement of it that restates either may decide
    MISMATCH = "a label and another option's text"


Read = int | Unclear | None  # an option's index, unclear, or names no option


@dataclass(frozen=True)
class Statement:
    """A place where the reply states its answer."""

    kind: str  # "answer line", "bold answer", "conclusion", "opening answer"
    start: int  # offset in the reply's text where it starts
    end: int  # offset where what follows it starts
    read: Read


def sentence_end(reply: Reply, offset: int) -> int:
    """Offset of the end of the sentence that runs on at ``offset``."""
    ends = reply.sentence_ends
    return ends[bisect.bisect_left(ends, offset)] if ends and ends[-1] >= offset else len(reply.clean)


def first_content(reply: Reply, token: int) -> int:
    """The first token at or after ``token`` that is no filler ("is", "would be", ":", "option", "la" before
    a label): where an answer line's answer starts."""
    lists = lexicon()
    tokens = reply.tokens
    for _ in range(3):
        matches = lists.marker_fillers.matches(tokens[token:token + 4])
        if matches and matches[0][0] == 0:
            token += matches[0][1]
            continue
        if token + 1 < len(tokens) and tokens[token] in lists.foreign_articles and len(tokens[token + 1]) <= 2 \
                and (token + 2 >= len(tokens) or reply.boundary(token + 2)):
            token += 1  # "la B", "die B"
        break
    return token


def read_answer(reply: Reply, offset: int, choices: Sequence[Choice], frame: Frame, *,
                sentence: bool, by_label: bool = True) -> tuple[Read, int]:
    """What the text at ``offset`` answers (an option by label, unless ``by_label`` is false, by text, or, where
    ``sentence``, a sentence naming one option in the question's frame) and the offset after that answer."""
    text = reply.clean
    labels = [c.label for c in choices]
    lead = leading_label(text[offset:offset + 64]) if by_label else None
    if lead is not None and lead.label in labels and not lead.worded and number_label_clash(lead.label, choices):
        return Unclear.UNCLEAR, sentence_end(reply, offset)  # "3" where option 3 is "5 apples" and option 2 "3 apples"
    if lead is not None and lead.label in labels:
        rest_start = offset + lead.rest
        first = reply.token_at(rest_start)
        rest = reply.tokens[first:min(reply.token_at(sentence_end(reply, rest_start)), first + ANSWER_WORDS)]
        named = named_options(rest, choices)
        labelled = labels.index(lead.label)
        # "A box." where A is "the box" and B "the red box": the article "a" and a word that may be either option
        opens = bool(named) and named[0].start <= _lead_words(rest) and (lead.marked or not cut_short(
            reply.tokens[first - 1:first + named[0].end], Named(named[0].index, named[0].start + 1, named[0].end + 1),
            choices))
        following = leading_label(text[rest_start:rest_start + 64])
        if following is not None and following.label in labels and following.label != "a" \
                and (following.marked or following.rest >= len(text[rest_start:rest_start + 64].rstrip())):
            return Unclear.UNCLEAR, sentence_end(reply, rest_start)  # "A/B", "A, B", "A → B"
        # a label with no mark before more words of its sentence is a word of that sentence ("A dinosaur.", "A lot
        # of people say ...", "B is out.", "Option A is what I'd avoid"), unless they are its own option's text, a
        # reason ("A because ..."), an affirmation ("A is correct") or only emphasis ("A, definitely", "A it is")
        loose = (not lead.marked and bool(rest) and not opens and not _commits(rest, lead.label)
                 and text[rest_start:rest_start + 1] not in "([（【")  # "B (la boîte bleue)": a label and a note
        if not loose or (opens and named[0].index == labelled):
            if opens and named[0].index != labelled:
                return Unclear.MISMATCH, sentence_end(reply, rest_start)  # "A) the box" where A is the basket
            return labelled, (reply.ends[first + named[0].end - 1] if opens else rest_start)
    end = sentence_end(reply, offset)
    first = reply.token_at(offset)
    words = reply.tokens[first:min(reply.token_at(end), first + ANSWER_WORDS)]
    named = named_options(words, choices) or emotion_named(words, choices)
    if any(cut_short(words, name, choices) for name in named):
        return Unclear.UNCLEAR, end  # "Box." where the options are "the box" and "the red box"
    if named and named[0].start <= _lead_words(words) and not place_kept(words[:named[0].start],
                                                                          choices[named[0].index]):
        return Unclear.UNCLEAR, end  # "Under the basket." for "the basket": another place
    if named and named[0].start <= _lead_words(words) and _stands_alone(reply, first + named[0].end, end):
        after = reply.ends[first + named[0].end - 1]
        bracket = text[after:after + 4].lstrip()[:1]
        label = leading_label(text[after:after + 64]) if bracket and bracket in "([（" else None
        if label is not None and label.label in labels and labels.index(label.label) != named[0].index:
            return Unclear.MISMATCH, end  # "the basket (B)" where B is the box
        return named[0].index, after
    if not named:
        return None, end
    if not sentence:
        return Unclear.UNCLEAR, end
    clause = _first_clause(reply, first, first + len(words))
    if clause < first + len(words):  # "She'll look in the garage, where she parked it": the answer, then a comment
        read = sentence_choice(reply.tokens[first:clause], choices, frame)
        if isinstance(read, int):
            return read, reply.ends[clause - 1]
    read = sentence_choice(words, choices, frame)
    if isinstance(read, int) and _quoted(reply, first, named):
        return Unclear.UNCLEAR, end  # 'He is "happy".': quotes around the option in a sentence may mean "not really"
    if isinstance(read, int):
        return read, end
    return (Unclear.UNCLEAR if read in (Reading.HEDGED, Reading.SEVERAL) else None), end


def _commits(rest: Sequence[str], label: str) -> bool:
    """Whether the words after a label with no mark leave it the answer: a reason, an affirmation, or only
    function words, emphasis and the label again ("A is correct", "A because ...", "A for sure", "B B B"); in a
    script without spaces, a copula of the lexicon's ``label_endings`` ("Aです", "B吧" is none)."""
    lists = lexicon()
    if _reason_opens(rest):
        return True
    affirmed = lists.affirmations.matches(rest[:8])
    if affirmed and affirmed[0][0] == 0:
        return True
    if char_kind(rest[0][0]) == "u":
        return "".join(rest) in lists.label_endings
    return all(t in lists.function_words or t in lists.emphasis or t == label for t in rest)


def _reason_opens(tokens: Sequence[str]) -> bool:
    """Whether the words open with a reason ("because", "因为" written as two characters)."""
    return bool(tokens) and (tokens[0] in _REASONS or "".join(tokens[:2]) in _REASONS)


def _first_clause(reply: Reply, first: int, last: int) -> int:
    """The end (a token index) of the first clause of the words ``first`` to ``last``: before a comma, dash or
    bracket, or before a reason ("because", "since")."""
    for i in range(first + 1, last):
        if reply.boundary(i) or reply.tokens[i] in _REASONS:
            return i
    return last


def _stands_alone(reply: Reply, following: int, end: int) -> bool:
    """Whether an option named at the start of a sentence is an answer of its own: the sentence ends after it,
    or a comma, bracket, dash or a reason ("because", "since") follows it. "Tom does think Mia took the cake"
    is a sentence about Tom, read in the question's frame, not the answer "Tom" and a comment."""
    return (following >= len(reply.tokens) or reply.starts[following] >= end or bool(reply.boundary(following))
            or reply.tokens[following] in _REASONS)


#: quotation marks that may set off an option named in a sentence
_QUOTE_MARKS = frozenset("\"'\u2018\u2019\u201c\u201d\u00ab\u00bb\u300c\u300d")


def _quoted(reply: Reply, first: int, named: Sequence[Named]) -> bool:
    """Whether an option named in the sentence from token ``first`` is set off by quotation marks on both sides."""
    return any(set(reply.gap(first + n.start)) & _QUOTE_MARKS and set(reply.gap(first + n.end)) & _QUOTE_MARKS
               for n in named)


def number_label_clash(label: str, choices: Sequence[Choice]) -> bool:
    """Whether a label may be read as something else than a label: a number label where an option holds a number
    ("1" among "1. 3 cookies, 2. 5 cookies": a count too), a capital letter standing alone in an option's text
    ("B" among "A. row B, B. row C"): a reply of that label alone may mean either."""
    if not label.isdigit():
        capital = label.upper()
        return len(label) == 1 and label.isalpha() and any(
            word == capital for choice in choices for word in choice.text.replace("-", " ").split())
    # any number among the options ("3 cookies", "5 cookies"): a reply "1" may be a count as well as a label
    numbers = {word for spelt in lexicon().number_words.values() for word in spelt}
    return any(word.isdigit() or word in numbers for choice in choices for word in choice.core)


def _lead_words(tokens: Sequence[str]) -> int:
    """How many leading words are prepositions or articles ("in the basket": 2)."""
    lists = lexicon()
    count = 0
    while count < len(tokens) and (tokens[count] in lists.prepositions or tokens[count] in lists.foreign_articles):
        count += 1
    return count


def statements(reply: Reply, region: int, choices: Sequence[Choice], frame: Frame) -> dict[str, list[Statement]]:
    """Every place from token ``region`` on where the reply states an answer, by kind."""
    lists = lexicon()
    tokens = reply.tokens
    found: dict[str, list[Statement]] = {"answer line": [], "bold answer": [], "conclusion": [], "opening answer": []}
    by_label = not _numbered_lines(reply, choices)  # in a numbered list only answer lines and bold give labels
    for start, end in answer_markers(True).matches(tokens[region:]):
        start, end = start + region, end + region
        if frame.others_choice and tuple(tokens[start:end]) in lists.first_person_choices.entries \
                and not _label_follows(reply, first_content(reply, end), choices):
            continue  # "I'd pick the ice lolly" to "Which one would Lena pick?": the speaker's own pick
        before = tokens[max(region, start - 2):start]
        if start > region and not reply.boundary(start) and (negation_count(before) or judged(before)
                                                             or set(before) & lists.answer_qualifiers
                                                             or not _own_answer(reply, start, region)):
            found["answer line"].append(Statement("answer line", reply.starts[start], reply.ends[end - 1],
                                                  Unclear.UNCLEAR))  # "not the answer: B", "the wrong answer is B"
            continue
        content = first_content(reply, end)
        offset = reply.starts[content] if content < len(tokens) else len(reply.clean)
        read, after = read_answer(reply, offset, choices, frame, sentence=True)
        if read is None and content + 1 < len(tokens) and (negation_count(tokens[content:content + 1])
                                                           or hedged(tokens[content:content + 1])):
            read = Unclear.UNCLEAR  # "Final answer: not B", "The answer is maybe A"
        if read is None and content < len(tokens) and reply.boundary(content) and _has_label(tokens, content, choices):
            read = Unclear.UNCLEAR  # '{"answer": "A"} {"answer": "B"}': an answer line the judge cannot read
        if isinstance(read, int) and hedged(tokens[_sentence_start(reply, start, region):start], frame.tokens):
            read = Unclear.UNCLEAR  # "Both are possible, but I'd go with the red box.": a hedge before the answer
        if read is not None:
            found["answer line"].append(Statement("answer line", reply.starts[start], after, read))
    for start, end in reply.emphasis:
        if start < (reply.starts[region] if region < len(tokens) else len(reply.clean)):
            continue
        read, after = read_answer(reply, start, choices, frame, sentence=False)
        inside = reply.tokens[reply.token_at(after):reply.token_at(end)]
        if isinstance(read, int) and not inside:
            found["bold answer"].append(Statement("bold answer", start, end, read))
    for start, end in lists.sentence_markers.matches(tokens[region:]):
        start, end = start + region, end + region
        if start > region and not reply.boundary(start) and tokens[start - 1] not in ("and", "y", "und", "et"):
            continue  # "so" inside a clause ("so happy") concludes nothing
        content = first_content(reply, end)
        if content >= len(tokens):
            continue
        read, after = read_answer(reply, reply.starts[content], choices, frame, sentence=True, by_label=by_label)
        if read is not None:
            found["conclusion"].append(Statement("conclusion", reply.starts[start], after, read))
    if region < len(tokens):
        read, after = read_answer(reply, reply.starts[region], choices, frame, sentence=True, by_label=by_label)
        if read is not None:
            found["opening answer"].append(Statement("opening answer", reply.starts[region], after, read))
    closing = _closing_sentence(reply, region)
    if closing is not None and (not found["conclusion"] or found["conclusion"][-1].start < reply.starts[closing]):
        read, after = read_answer(reply, reply.starts[closing], choices, frame, sentence=True, by_label=by_label)
        if isinstance(read, int):  # a closing sentence that is not an answer is the end of an explanation
            found["conclusion"].append(Statement("closing answer", reply.starts[closing], after, read))
    # a markdown table's rows are cells ("| B | no |"), read together; none of them states the answer
    return {kind: [s for s in said if not reply.in_table(s.start)] for kind, said in found.items()}


#: words a clause that only names an option may have besides it ("the red one", "in the blue box", "option B")
_NAMING_WORDS = frozenset({"one", "ones", "option", "choice"})


def option_clause(words: Sequence[str], choices: Sequence[Choice]) -> int | None:
    """The option a clause consists of, and nothing else (its label, its words with articles, prepositions and
    "one", or its label and its own words: "the red one", "in the blue box", "option B", "A) the basket"); None
    for any other clause, and for a label with another option's words."""
    labels = [c.label for c in choices]
    bare = [t for t in words if t not in _NAMING_WORDS]
    if len(bare) == 1 and bare[0] in labels:  # before prepositions go: "a" is one in French
        return labels.index(bare[0])
    if len(bare) > 1 and bare[0] in labels:
        named = _named_alone(bare[1:], choices)
        if named is not None:
            return named if named == labels.index(bare[0]) else None
    return _named_alone(bare, choices)


def _named_alone(words: Sequence[str], choices: Sequence[Choice]) -> int | None:
    """The option ``words`` name (by its words, or as a feeling of the lexicon) with nothing but articles and
    prepositions besides it."""
    rest = [t for t in words if t not in lexicon().prepositions]
    if not rest:
        return None
    named = named_options(rest, choices) or emotion_named(rest, choices)  # "Gutted." names "sad" by the lexicon
    kept = [t for t in rest if t not in ("a", "an", "the")]
    if not kept or len(named) != 1 or cut_short(rest, named[0], choices) or named[0].end - named[0].start != len(kept) \
            or named[0].start != rest.index(kept[0]):
        return None
    return named[0].index


def other_bare_answer(reply: Reply, region: int, choices: Sequence[Choice], conclusion: Statement) -> int | None:
    """Another option than the conclusion's that a sentence of the reply gives as an answer of its own: the
    sentence is the option alone, or the option and a reason ("The basket. The box. The basket.", "Sad? Happy?
    Sad.", "The box, since it is there. So, the basket."); None where there is none. Such a sentence is an
    answer, not reasoning about one, so the reply says two answers and nothing tells which one stands. A copy of
    the option list (every option on a line of its own with its label: "A) Anna / B) Bea / C) Carl") is no
    answer."""
    labels = [c.label for c in choices]
    bare: list[tuple[int, bool]] = []  # (option, given as its label and its own words)
    for sentence in _sentences_from(reply, region):
        clauses = list(_clauses(reply, sentence))
        if reply.in_table(reply.starts[sentence[0]]):
            continue
        first = reply.tokens[clauses[0][0]:clauses[0][1]]
        chosen = option_clause(first, choices)
        if chosen is None or len(clauses) > 2 \
                or len(clauses) == 2 and not _reason_opens(reply.tokens[clauses[1][0]:clauses[1][1]]):
            continue
        bare.append((chosen, len(first) > 1 and first[0] == labels[chosen]))
    listed = {chosen for chosen, with_label in bare if with_label}
    copy = len(listed) == len(choices)
    return next((chosen for chosen, with_label in bare
                 if chosen != conclusion.read and not (copy and with_label)), None)


def _sentences_from(reply: Reply, region: int) -> list[tuple[int, int]]:
    """The token spans [start, end) of the reply's sentences from token ``region`` on."""
    spans = []
    begin = region
    for end in range(region + 1, len(reply.tokens) + 1):
        if end == len(reply.tokens) or reply.boundary(end) == "sentence":
            spans.append((begin, end))
            begin = end
    return spans


def _clauses(reply: Reply, span: tuple[int, int]) -> list[tuple[int, int]]:
    """The token spans of the clauses of the sentence ``span``."""
    spans = []
    begin = span[0]
    for end in range(span[0] + 1, span[1] + 1):
        if end == span[1] or reply.boundary(end):
            spans.append((begin, end))
            begin = end
    return spans


def _has_label(tokens: Sequence[str], content: int, choices: Sequence[Choice]) -> bool:
    """Whether the first word of an answer line's answer is an option's label (a label it could not read as one)."""
    return tokens[content] in {c.label for c in choices if c.label}


def _own_answer(reply: Reply, marker: int, region: int) -> bool:
    """Whether an answer marker at token ``marker`` is the reply's own: its clause has before it only a lead-in
    and the lexicon's ``answer_owners`` ("So my final answer:", "I would answer"), not someone else ("Most
    people's answer:", "A toddler's answer:", "Anne would answer", "The lazy answer is")."""
    lists = lexicon()
    begin = marker
    while begin > region and not reply.boundary(begin):
        begin -= 1
    words = reply.tokens[begin:marker]
    at = 0
    for phrases in (lists.lead_ins, lists.first_person_choices):  # "Based on the story", "Je choisis"
        found = phrases.matches(words)
        if found and found[0][0] == 0:
            at = found[0][1]
    while at < len(words):  # every other word one of the owners' phrases ("so my final", "所以")
        found = lists.answer_owners.matches(words[at:])
        if not found or found[0][0] != 0:
            return False
        at += found[0][1]
    return True


def _sentence_start(reply: Reply, token: int, region: int) -> int:
    """The first token of the sentence token ``token`` is in (not before ``region``, at most
    :data:`ANSWER_WORDS` words back)."""
    floor = max(region, token - ANSWER_WORDS)
    while token > floor and reply.boundary(token) != "sentence":
        token -= 1
    return token


#: words before "where" that make it point back to what was named ("that's where she left it")
_POINTING_BACK = frozenset({"s", "is", "was", "are", "were", "that", "this", "exactly", "just", "right", "precisely"})


def described(reply: Reply, region: int, choices: Sequence[Choice], frame: Frame) -> bool:
    """Whether a clause from token ``region`` on gives the answer by a description that names no option: "Mia will
    look where she left it", "wherever Tom put it", "That is, the place she remembers". The judge cannot tell which
    option a description means, so it cannot tell whether it agrees with an option named elsewhere."""
    lists = lexicon()
    tokens = reply.tokens
    asks_where = "where" in frame.tokens
    begin = region
    for end in range(region + 1, len(tokens) + 1):
        if end < len(tokens) and not reply.boundary(end):
            continue
        clause = tokens[begin:end]
        begin = end
        if not clause or named_options(clause, choices) or emotion_named(clause, choices):
            continue
        restating = lists.restatements.matches(clause[:4])
        if set(clause) & lists.descriptions or restating and restating[0][0] == 0:
            return True
        if asks_where and any(t == "where" and clause[i - 1] not in _POINTING_BACK for i, t in enumerate(clause)
                              if i > 0):
            return True  # "She will look where she left it"; not "that's where she left it", which points back
    return False


def _label_follows(reply: Reply, token: int, choices: Sequence[Choice]) -> bool:
    """Whether an option's label stands at token ``token`` ("I'd choose B": an answer, whoever the question is
    about)."""
    if token >= len(reply.tokens):
        return False
    lead = leading_label(reply.clean[reply.starts[token]:reply.starts[token] + 64])
    return lead is not None and lead.label in {c.label for c in choices if c.label} and not (
        lead.label == "a" and not lead.marked and reply.starts[token] + lead.rest < len(reply.clean)
        and reply.clean[reply.starts[token] + lead.rest:][:1].isalpha())


def _numbered_lines(reply: Reply, choices: Sequence[Choice]) -> bool:
    """Whether two or more lines of the reply open with different option labels ("1. Noah left. 2. His sister
    came in."): a numbered list of reasoning, whose first number is no answer."""
    labels = {c.label for c in choices if c.label}
    found = set()
    for line in reply.clean.split("\n"):
        lead = leading_label(line[:64])
        if lead is not None and lead.marked and lead.label in labels:
            found.add(lead.label)
    return len(found) > 1


def _closing_sentence(reply: Reply, region: int) -> int | None:
    """The first word of the reply's last sentence that is no polite closing ("Hope this helps!"), when that
    is not its opening sentence."""
    lists = lexicon()
    end = len(reply.tokens)
    for _ in range(3):
        start = end - 1
        while start > region and reply.boundary(start) != "sentence":
            start -= 1
        if start <= region:
            return None
        if tuple(reply.tokens[start:end]) not in lists.preambles:
            return start
        end = start
    return None


def tail_problem(reply: Reply, offset: int, chosen: int, choices: Sequence[Choice], frame: Frame, world: World, *,
                 by_label: bool = True) -> str:
    """Why what follows a conclusion spoils it ("" when nothing does): another option named, a hedge,
    contrast or self-correction, the chosen option negated, a judgement; after an answer ``by_label`` alone, a
    description that says it again ("A, where Sam put it."), which may fit another option; and any clause that
    is not read as leaving the answer standing (:func:`~commet.judges.rules.tails.unread_clause`)."""
    lists = lexicon()
    tokens = reply.tokens[reply.token_at(offset):]
    affirmed = lists.affirmations.matches(tokens[:8])
    if affirmed and affirmed[0][0] == 0:  # "Option A is correct."
        tokens = tokens[affirmed[0][1]:]
    if not tokens or _rejections_only(reply, len(reply.tokens) - len(tokens), chosen, choices):
        return ""
    named = named_options(tokens, choices) + emotion_named(tokens, choices)
    if any(n.index != chosen for n in named):
        return "names another option after its conclusion"
    first = len(reply.tokens) - len(tokens)
    other_labels = {c.label for i, c in enumerate(choices) if c.label and i != chosen}
    if any(t in other_labels and (t not in ("a", "i") or _standalone(reply, first + i) or t == "a" and _ends_clause(
            reply, first + i)) for i, t in enumerate(tokens)):
        return "gives another option's label after its conclusion"  # "a" only where it is no article ("that's A.")
    clause = tokens[:next((i for i in range(1, len(tokens)) if reply.boundary(first + i)), len(tokens))]
    if not reply.boundary(first) and not _reason_opens(clause) and negation_count(clause):
        return "negates its conclusion in the same clause"  # "Aではない", "B不是", "A is not it"
    own = {choices[chosen].label, "option", "choice"}
    restating = lists.restatements.matches(tokens[:4])  # "i.e.", "that is", "in other words": surely a restatement
    marked = restating[0][1] if restating and restating[0][0] == 0 and restating[0][1] < len(tokens) else 0
    said = tokens[marked:marked + next((i for i in range(1, len(tokens) - marked) if reply.boundary(first + marked + i)),
                                       len(tokens) - marked)]
    sentence = reply.boundary(first + marked) == "sentence" and not marked
    if (by_label or marked) and (said[0] in _RESTATING or marked) and not named and not set(said) <= own \
            and not (sentence and len(said) < _sentence_length(reply, first)):
        # "A, where Sam put it.", "A: the box Sam moved it to.", "A. The new place.": the answer said again by a
        # description, which may fit another option; the judge cannot tell which option it means (an answer by the
        # option's own words is the answer, and the description a comment on it). A sentence of
        # several clauses after the answer is an explanation ("The last time she met it, it knocked her down.")
        return "says its answer again by a description that names no option"
    if hedged(tokens, frame.tokens):
        return "hedges, contrasts or corrects itself after its conclusion"
    if named and negation_count(tokens) or _label_negated(reply, len(reply.tokens) - len(tokens), choices[chosen]):
        return "negates after its conclusion"
    if _anaphor_negated(reply, first):
        return "says of its answer that it is not so ('B. That is not right.', 'B. Das stimmt nicht.')"
    if _bare_negation(reply, len(reply.tokens) - len(tokens), choices):
        return "takes its conclusion back with a bare negation ('... not.', '(not)')"
    if judged(tokens, frame.tokens) or lists.pointing_away.found_in([t for t in tokens if stem(t) not in frame.stems]):
        return "judges or points away after its conclusion"
    again = _said_again(reply, first, chosen, choices, frame)
    if again:
        return again
    unread = unread_clause(reply, first, choices, chosen, world, addressed=frame.addressed)
    if unread:
        return f"says after its conclusion what is not read as leaving it standing ({unread!r})"
    return ""




#: the last words of a clause whose verb phrase is left out, to be read from what came before ("She'd be
#: wrong to.", "She won't.", "as she should"): they say something of the answer that the judge cannot read
_ELLIPSIS = frozenset({"to", "do", "does", "did", "will", "would", "should", "shall", "can", "could", "may", "might",
                       "must", "not"})


def _said_again(reply: Reply, first: int, chosen: int, choices: Sequence[Choice], frame: Frame) -> str:
    """Why a clause from token ``first`` on speaks of the answer itself in words that are not read: it says the
    question's predicate again ("look" of "Where will Sally look?") without reading as the chosen option in the
    question's frame ("Sally never looks there.", "She will look there last."), or it leaves its verb phrase out
    ("She'd be mistaken to.", "She does."); "" where no clause does."""
    verbs = predicates(frame)
    for clause in reply.clauses_from(first):
        if len(clause) > 1 and clause[-1] in _ELLIPSIS:
            return f"leaves a verb phrase out after its conclusion ({' '.join(clause)!r})"
        if any(stem(t) in verbs for t in clause) and sentence_choice(clause, choices, frame) != chosen:
            return f"says the question's predicate again without naming its answer ({' '.join(clause)!r})"
    return ""


def _rejections_only(reply: Reply, first: int, chosen: int, choices: Sequence[Choice]) -> bool:
    """Whether every clause from token ``first`` on rejects another option and says nothing else ("A, not B.",
    "The red box, not the blue one.", "Kai's, not Elsie's."): the conclusion stands."""
    lists = lexicon()
    labels = {c.label: i for i, c in enumerate(choices) if c.label}
    for clause in reply.clauses_from(first):
        lead = next((len(w) for w in REJECTING if tuple(clause[:len(w)]) == w), 0)
        rest = [t for t in clause[lead:] if t not in lists.prepositions and t not in ("option", "one", "ones")]
        if not lead or not rest:
            return False
        if len(rest) == 1 and rest[0] in labels and labels[rest[0]] != chosen:
            continue
        named = named_options(rest, choices)
        if len(named) != 1 or named[0].index == chosen or (named[0].start, named[0].end) != (0, len(rest)):
            return False
    return True


def _standalone(reply: Reply, i: int) -> bool:
    """Whether token ``i`` stands alone between punctuation or the reply's ends ("Update: a." but not "a thing")."""
    return (i == 0 or bool(reply.boundary(i))) and (i + 1 >= len(reply.tokens) or bool(reply.boundary(i + 1)))


#: words that open a description of the answer right after it (a noun phrase or a relative clause): "the box Sam
#: moved it to", "where she left it", "that's the one she hid", "which is the new place"
_RESTATING = frozenset({"the", "a", "an", "that", "this", "these", "those", "where", "which", "what", "whichever",
                        "wherever", "one", "her", "his", "their", "its", "whose"})
#: copulas after which a lone "a" ending its clause is a label ("that's A.", "which is A"): an article never ends one
_COPULAS = frozenset({"is", "s", "was", "be", "option", "choice", "answer"})


def _sentence_length(reply: Reply, first: int) -> int:
    """How many words the sentence that starts at token ``first`` has."""
    end = first + 1
    while end < len(reply.tokens) and reply.boundary(end) != "sentence":
        end += 1
    return end - first


def label_said_before(reply: Reply, region: int, until: int, choices: Sequence[Choice]) -> int | None:
    """The option whose label ends a sentence after a copula before token ``until`` ("My pick is A.", "I'd say it's
    B."): an answer given before the one the reply concludes with; None where there is none."""
    labels = [c.label for c in choices]
    for i in range(region + 1, min(until, len(reply.tokens))):
        if reply.tokens[i] in labels and reply.tokens[i - 1] in _COPULAS and (
                i + 1 >= len(reply.tokens) or reply.boundary(i + 1) == "sentence"):
            return labels.index(reply.tokens[i])
    return None


def _ends_clause(reply: Reply, i: int) -> bool:
    """Whether token ``i`` ends its clause or the reply after a copula ("that's A."): an article never does."""
    return (i + 1 >= len(reply.tokens) or bool(reply.boundary(i + 1))) and reply.tokens[i - 1] in _COPULAS


def _label_negated(reply: Reply, first: int, choice: Choice) -> bool:
    """Whether a negation from token ``first`` on stands right before the chosen option's label, alone in its clause
    ("A, not A.", "B. Not option B."): the conclusion taken back."""
    tokens = reply.tokens
    for i in range(first, len(tokens) - 1):
        if not negation_count(tokens[i:i + 1]):
            continue
        at = i + 2 if tokens[i + 1] in ("option", "even") else i + 1
        if at < len(tokens) and tokens[at] == choice.label and (at + 1 == len(tokens) or reply.boundary(at + 1)):
            return True
    return False


def _anaphor_negated(reply: Reply, first: int) -> bool:
    """Whether a clause from token ``first`` on opens with a word that points back (``that``, ``this``, ``it``,
    ``das``, ``cela``, ``eso``, ``これ``...) and negates: it may say the answer just given is not so."""
    anaphors = lexicon().anaphors
    return any(clause and clause[0] in anaphors and negation_count(clause) for clause in reply.clauses_from(first))


def _bare_negation(reply: Reply, first: int, choices: Sequence[Choice]) -> bool:
    """Whether a clause from token ``first`` on is only a negation (with function words and emphasis: "not",
    "(not)", "obviously not", "no"): said after an answer, it takes the answer back ("not A" negates option A)."""
    lists = lexicon()
    labels = {c.label for c in choices if c.label}
    for clause in reply.clauses_from(first):
        negations = [t for t in clause if t in lists.no or negation_count([t])]
        if negations and all((t in lists.function_words and t not in labels) or t in lists.emphasis or t in negations
                             for t in clause):
            return True
    return False
