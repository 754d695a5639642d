"""The ``rules`` judge: fast, deterministic, and never wrong when it decides.

Its contract (spec section 7): a decided verdict is never wrong. It decides only what it reads whole:
every word of the span that carries the answer is a known answer form, and every other part of the
reply is recognised as not changing it; anything unexplained leaves it ``undecided``, which a cascade
sends to an LLM judge (or a person). In order (docs/rules-judge.md):

1. reasoning is scratch (:mod:`.scratch`): think blocks, "Reasoning:" sections and drafts never decide;
   ``\\boxed{}`` and a JSON answer field are answer lines;
2. a reply equal to an expected answer or an option's text (with its label or not), whatever its
   length, marks and script, decides (:func:`_literal`);
3. a word in a script the judge has no grammar for, that is no option's or answer's word nor a yes/no
   of the lexicon, leaves it undecided; so does a mark that changes meaning (:mod:`.marks`:
   strike-through, crosses and ticks, emoji, a shrug, a sarcasm tag); a question mark, a word in
   capitals or an emphasised word does where the reply states its answer, or after;
4. a copy of the question, or of its start, is no answer; a copy followed by an answer is read as the
   answer; polite preambles and lead-ins ("Great question!", "Based on the story, ...") are skipped;
5. several option labels ("A/B", "A – B", "A→B") decide nothing; "I don't know" is wrong unless not
   knowing may be the answer; a bare yes/no to a question that asks why, how, what (or which, where,
   who, when), and an option letter to a question that offers none, are wrong;
6. a yes/no question is decided by :mod:`.yesno` (clause by clause); other questions by the reply's
   conclusion (:mod:`.conclusions`: an answer line, a bold answer, a "so ..." sentence, the closing or
   the opening sentence), read by label, option text or a sentence in the question's frame
   (:mod:`.roles`), unless the reply answers by a description that names no option.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import replace

from commet.judges.base import Judge, JudgeRequest, Outcome, Verdict, decided_off_the_loop
from commet.judges.rules.conclusions import (
    Statement,
    Unclear,
    described,
    label_said_before,
    option_clause,
    other_bare_answer,
    statements,
    tail_problem,
)
from commet.judges.rules.labels import labels_only, leading_label
from commet.judges.rules.lexicon import answer_markers, lexicon, negation_count, tokens_of
from commet.judges.rules.marks import MAX_REPLY_CHARS, Mark, MarkKind, Reply, foreign_script, read_reply
from commet.judges.rules.options import Choice, choices_of, named_options, offered, question_stem
from commet.judges.rules.roles import (
    Frame,
    asking_sentence,
    emotion_named,
    negated_feeling,
    question_frame,
    repeats_question,
)
from commet.judges.rules.scratch import answer_part, json_reasoning
from commet.judges.rules.tails import World
from commet.judges.rules.yesno import opening_yes_no, pro_form_so, read_yes_no, yes_no_of
from commet.text import char_kind, fold

#: marks that make a reply undecided wherever they are
_ANYWHERE = {MarkKind.STRIKE, MarkKind.CROSS_OR_TICK, MarkKind.PICTOGRAPH, MarkKind.SHRUG, MarkKind.SARCASM,
             MarkKind.REORDERED}
_QUOTES = str.maketrans({c: '"' for c in "\u201c\u201d\u201e\u00ab\u00bb\u300c\u300d\u300e\u300f\uff02'"})
#: characters stripped around a whole reply before it is compared word for word
_WRAPPING = " \t\n\"*_`#>"
#: word beginnings that make "I don't know" a possible answer: in the expected answer (someone does not know, has
#: no idea or clue, knows nothing) or in a question about what someone says ("What will Tom say?": "I don't know.")
_NOT_KNOWING_ANSWER = ("know", "knew", "sure", "idea", "clue", "tell", "told", "unknown", "unaware", "aware",
                       "nothing", "certain", "say", "said", "repl", "answer", "respon")
_SPEECH_QUESTION = ("say", "said", "tell", "told", "repl", "answer", "respon")

Decision = tuple[Outcome, int | None, str]


def _undecided(why: str) -> Decision:
    return "undecided", None, why


class RulesJudge(Judge):
    name = "rules"
    cacheable = False  # free and deterministic: recomputed rather than stored in the cache
    reads_pictures = False  # decides from the reply's text

    async def judge(self, request: JudgeRequest) -> Verdict:
        return await decided_off_the_loop(self.decide, request)

    def decide(self, request: JudgeRequest) -> Verdict:
        outcome, branch, rationale = decide(request)
        return Verdict(outcome, branch, rationale, self.name)


def decide(request: JudgeRequest) -> Decision:
    """The rules judge's verdict on one reply: (outcome, matched expected answer, why)."""
    raw = request.response
    if len(raw) > MAX_REPLY_CHARS:
        return _undecided(f"reply longer than {MAX_REPLY_CHARS:,} characters; needs a judge")
    answer = answer_part(raw)
    reasoning = json_reasoning(raw)
    if answer != raw:
        if not read_reply(answer).tokens and read_reply(raw).tokens:
            return _undecided("reply is all reasoning (a think block, a draft) with no answer after it; needs a judge")
        request = replace(request, response=answer)
        raw = answer
    reply = read_reply(raw)
    if not reply.tokens:
        if any(unicodedata.category(ch)[0] not in "ZC" for ch in raw):
            return _undecided("reply has no words (emoji or symbols only); needs a judge")
        return "incorrect", None, "empty reply"
    choices = choices_of(request)
    frame = question_frame(question_stem(request), choices or [])
    literal = _literal(request, reply, choices, frame)
    if literal is not None and reasoning and choices is not None \
            and _concludes_elsewhere(reasoning, answer, choices, frame):
        # '{"answer": "in the shed", "reasoning": "... so the attic"}': an exact answer field says one thing of two
        return _undecided("reply's reasoning field concludes otherwise than its answer field; needs a judge")
    if literal is not None:
        return literal
    foreign = _foreign_word(request, reply)
    if foreign is not None:
        return _undecided(f"reply has words in a language the judge has no grammar for ({foreign!r}); needs a judge")
    world = World.of([request.story, request.question, *request.context, *request.expected,
                      *(text for _, text in offered(request))])
    unread = _unread_sentence(reply, world)
    if unread:
        return _undecided(f"reply has a sentence the judge cannot read (a word of a language it has no grammar for, "
                          f"or too few words it knows: {unread!r}); needs a judge")
    faces = _trailing_faces(reply)
    anywhere = [m for m in reply.marks if m.kind in _ANYWHERE and m not in faces]
    if anywhere:
        return _undecided(f"reply has {anywhere[0].kind.value} ({anywhere[0].text!r}); needs a judge")
    pictured = _pictured(reply, choices)
    if pictured is None:
        return _undecided("reply has a picture of something that is no option; needs a judge")
    decision = _decide(request, reply, choices, frame, world)
    if faces and decision[0] != "undecided" and not _faces_agree(faces, reply, choices):
        return _undecided(f"reply has a face ({faces[0].text!r}) that shows no feeling of the option it names; "
                          "needs a judge")
    if decision[0] != "undecided" and reasoning and choices is not None \
            and _concludes_elsewhere(reasoning, answer, choices, frame):
        return _undecided("reply's reasoning field concludes otherwise than its answer field; needs a judge")
    if decision[0] != "undecided" and pictured and choices is not None:
        shown = [choices[i].expected for i in pictured]
        # the pictures show one option, right where the words are right, wrong where they are wrong
        if len(shown) != 1 or (shown[0] is None) != (decision[0] == "incorrect") \
                or decision[0] == "correct" and shown[0] != decision[1]:
            return _undecided("reply's picture shows another option than its words; needs a judge")
    return decision


def _concludes_elsewhere(reasoning: str, answer: str, choices: list[Choice], frame: Frame) -> bool:
    """Whether a JSON reply's reasoning field draws a conclusion (an answer line, a "so ..." sentence) that is not
    the answer field's option, or is unclear (``{"answer": "A", "reasoning": "... so actually B."}``): the reply
    then says two things. Reasoning that only mentions another option ("the toybox is where it is") concludes
    nothing."""
    said = read_reply(reasoning)
    if not said.tokens:
        return False
    labels = {c.label: i for i, c in enumerate(choices) if c.label}

    def named(words: Sequence[str]) -> set[int]:
        """The options ``words`` name, by text or by a label after their first word ("a" only where it ends them)."""
        return {n.index for n in named_options(words, choices)} | {
            labels[t] for i, t in enumerate(words[1:], 1) if t in labels and (t != "a" or i == len(words) - 1)}

    answered = named(read_reply(answer).tokens)
    found = statements(said, 0, choices, frame)
    drawn = [s.read for kind in ("answer line", "conclusion") for s in found[kind]]
    # a reasoning that opens by stating an option in the question's frame ("Hugo will look in the blue box.")
    # answers too; one it cannot read there only explains
    drawn += [s.read for s in found["opening answer"] if isinstance(s.read, int)]
    if any(not isinstance(read, int) or {read} != answered for read in drawn):
        return True
    markers = lexicon().sentence_markers
    for start, _ in markers.matches(said.tokens):  # "..., so actually B": a conclusion the reading above left unread
        if start and not said.boundary(start):
            continue
        end = next((i for i in range(start + 1, len(said.tokens)) if said.boundary(i)), len(said.tokens))
        concluded = named(said.tokens[start:end])
        if concluded and concluded != answered:
            return True
    return False


def _foreign_word(request: JudgeRequest, reply: Reply) -> str | None:
    """The first word of the reply in a script the judge has no grammar for that is no word of an option or
    expected answer and no yes or no of the lexicon ("Нет, он не знает": "он"); None when there is none."""
    if not any(foreign_script(ch) for ch in reply.clean):
        return None
    lists = lexicon()
    known = {word for text in [*request.expected, *(text for _, text in offered(request))] for word in tokens_of(text)}
    known |= lists.yes | lists.no | {w for phrase in lists.yes_phrases.entries | lists.no_phrases.entries for w in phrase}
    return next((token for token in reply.tokens if token not in known and any(foreign_script(ch) for ch in token)),
                None)


#: the least share of a sentence's words (in Latin letters) that must be known for the sentence to be read
_LEAST_KNOWN = 1 / 3


def _unread_sentence(reply: Reply, world: World) -> str:
    """A sentence of the reply in Latin letters with a frequent word of a language the judge has no grammar for
    ("não", "niet", "değil"), or too few of whose words it knows (the lexicon's, the question's, the story's,
    the answers' and options' words; letters and numbers are read as labels): such a sentence ("Não é a
    resposta.", "Dat klopt niet." after an answer) may say anything about it; "" when there is none. Scripts
    without spaces are read by their own rules."""
    lists = lexicon()
    foreign = lists.other_language_words - lists.known_words - world.tokens

    def known(token: str) -> bool:
        return token in lists.known_words or token in world.tokens

    begin = 0
    for end in range(1, len(reply.tokens) + 1):
        if end < len(reply.tokens) and reply.boundary(end) != "sentence":
            continue
        words = [t for t in reply.tokens[begin:end] if len(t) > 1 and t[0].isalpha() and char_kind(t[0]) == "w"]
        begin = end
        if words and (set(words) & foreign or sum(map(known, words)) < _LEAST_KNOWN * len(words)):
            return " ".join(words)
    return ""


def _trailing_faces(reply: Reply) -> list[Mark]:
    """The emoji after the reply's last word that are faces of one plain feeling (the lexicon's ``face_feelings``:
    "Sad 😢"); any of them before or among the words, and every other face, hand, tick or cross, is no decoration."""
    faces = lexicon().face_feelings
    last = reply.ends[-1] if reply.ends else 0
    trailing = [m for m in reply.marks if m.start >= last]
    if not trailing or any(m.kind is not MarkKind.PICTOGRAPH or unicodedata.name(m.text[0], "") not in faces
                           for m in trailing):
        return []
    return trailing


def _faces_agree(faces: list[Mark], reply: Reply, choices: list[Choice] | None) -> bool:
    """Whether the words name one option that is a feeling, with no negation, and every face shows that very
    feeling ("Sad 😢" for "happy or sad?"; not "Happy 😢", "Not sad 😢", nor a face after an answer that is no
    feeling)."""
    if choices is None or negation_count(reply.tokens):
        return False  # "Not sad 😢": the face shows what the words deny
    said = {n.index for n in named_options(reply.tokens, choices) + emotion_named(reply.tokens, choices)}
    shown = [{n.index for n in emotion_named(lexicon().face_feelings[unicodedata.name(m.text[0])], choices)}
             for m in faces]
    return len(said) == 1 and all(indices == said for indices in shown)


def _pictured(reply: Reply, choices: list[Choice] | None) -> set[int] | None:
    """The options the reply's pictures of things show ("popcorn 🍿": the popcorn), by the words of their Unicode
    names; None when a picture shows no option (or there are no options to show): it may mean anything."""
    shown: set[int] = set()
    for mark in reply.marks:
        if mark.kind is not MarkKind.PICTURE:
            continue
        words = {w.rstrip("s") for w in unicodedata.name(mark.text, "").casefold().replace("-", " ").split()}
        hits = {i for i, c in enumerate(choices or []) if words & {w.rstrip("s") for w in c.core}}
        if not hits:
            return None
        shown |= hits
    return shown


def _decide(request: JudgeRequest, reply: Reply, choices: list[Choice] | None, frame: Frame,
            world: World) -> Decision:
    """The verdict on a reply with no mark that leaves it undecided anywhere."""
    region = _region(reply, request, frame)
    if region is None:
        return _undecided("reply repeats (the start of) the question")
    rest = reply.tokens[region:]
    if not rest:
        return _undecided("reply has no answer after its preamble")
    if all(yes_no_of(e)[0] is not None for e in request.expected) and not _by_label(reply, region, choices):
        return _decide_yes_no(request, reply, region, frame, world)
    if " ".join(rest) in lexicon().non_answers and not _not_knowing_may_answer(request):
        return "incorrect", None, "the reply gives no answer"
    stray = _stray_answer(request, reply, region, choices, frame)
    if stray:
        return "incorrect", None, stray
    if choices is None:
        return _undecided("no rule applies (no options that line up with the expected answers); needs a judge")
    given = labels_only(rest, [c.label for c in choices if c.label])
    if given is not None and len(set(given)) > 1:
        return _undecided("reply gives the labels of several options")
    return _decide_choice(request, reply, region, choices, frame, world)


#: words that open a question asking for something other than yes or no
_WH_WORDS = frozenset({"why", "how", "what", "which", "where", "who", "whom", "whose", "when"})
#: auxiliaries that open a yes/no question inside a wh-question ("What do you think: does Mia know?")
_YES_NO_OPENERS = frozenset({"is", "are", "was", "were", "do", "does", "did", "will", "would", "can", "could",
                             "should", "has", "have", "had", "isn't", "doesn't", "didn't", "won't", "wasn't"})


def _stray_answer(request: JudgeRequest, reply: Reply, region: int, choices: list[Choice] | None,
                  frame: Frame) -> str:
    """Why a reply is certainly no answer to a question that asks why, how, what, which, where, who or when (""
    when it may be one): a bare yes or no, or an option letter where the question offers no options. Left alone:
    a question that also asks yes or no ("What do you think: does she know?", "Was he lying? Why?"), one that
    asks what someone says ("What will Tom say?"; "Why does Gran say sorry?" asks why), and one whose options,
    expected answers or own words have that yes, no or letter."""
    asking = frame.asking or frame.tokens
    sentence = asking_sentence(request.question)
    if any((words := tokens_of(asking_sentence(part + "?"))) and words[0] in _YES_NO_OPENERS
           for part in request.question.replace("？", "?").split("?")[:-1]):
        return ""  # "Was Jasper lying? Why?": a yes/no question asked as well
    openers = [words[0] for part in _split_clauses(sentence) if (words := tokens_of(part))]
    wh = next((word for word in openers if word in _WH_WORDS), None)
    if wh is None or any(word in _YES_NO_OPENERS for word in openers):
        return ""
    if wh in ("what", "which") and any(w.startswith(_SPEECH_QUESTION) for w in asking):
        return ""  # "What will Tom say?": "No." may be what he says
    answers = {word for text in [*request.expected, *(t for _, t in offered(request))] for word in tokens_of(text)}
    said, after = opening_yes_no(reply, region)
    if said is not None and after >= len(reply.tokens) and not answers & (lexicon().yes | lexicon().no):
        return f"reply says {said!r} to a question that asks {wh!r}"
    rest = reply.tokens[region:]
    if choices is None and not offered(request) and len(rest) == 1 and len(rest[0]) == 1 and "a" <= rest[0] <= "e" \
            and rest[0] not in answers and rest[0] not in tokens_of(request.question) \
            and not _letter_in_story(rest[0], request) \
            and leading_label(reply.clean[reply.starts[region]:]) is not None:  # not "b" where the question has "b)"
        return f"reply is an option label ({rest[0].upper()!r}) to a question that offers no options"
    return ""


def _letter_in_story(letter: str, request: JudgeRequest) -> bool:
    """Whether the story or an earlier turn has ``letter`` as a capital standing alone ("seat D", "a B on the
    shirt"): a reply of that letter may name it, not an option."""
    capital = letter.upper()
    for text in (request.story, *request.context):
        at = text.find(capital)
        while at >= 0:
            if (at == 0 or not text[at - 1].isalnum()) and (at + 1 == len(text) or not text[at + 1].isalnum()):
                return True
            at = text.find(capital, at + 1)
    return False


def _split_clauses(text: str) -> list[str]:
    """``text`` split at commas, colons, semicolons and dashes."""
    parts = [text]
    for mark in ",:;—–":
        parts = [piece for part in parts for piece in part.split(mark)]
    return parts


def _by_label(reply: Reply, region: int, choices: list[Choice] | None) -> bool:
    """Whether the reply opens with an option's label ("B" where B is "No"): read as a choice, not as a yes/no."""
    if choices is None or region >= len(reply.tokens):
        return False
    lead = leading_label(reply.clean[reply.starts[region]:reply.starts[region] + 64])
    return lead is not None and lead.label in {c.label for c in choices if c.label}


def _canonical(text: str) -> str:
    """A text for word-for-word comparison: folded, quotes made one, spaces collapsed, wrapping and a final
    full stop removed (question marks, inner punctuation and marks kept)."""
    text = " ".join(fold(text).translate(_QUOTES).split())
    previous = None
    while previous != text:
        previous = text
        text = text.strip(_WRAPPING).rstrip(".!。！ ").strip(_WRAPPING)
    return text


def _literal(request: JudgeRequest, reply: Reply, choices: list[Choice] | None, frame: Frame) -> Decision | None:
    """The whole reply (or what follows an answer line's marker) is an expected answer, an option's text, or a
    label with its option's text, word for word: decided, whatever its length, script or marks."""
    candidates = [_canonical(request.response)]
    markers = answer_markers(not frame.others_choice).matches(reply.tokens[:6])
    after = markers[0][1] if markers and markers[0][0] == 0 else 0
    if after and (after == len(reply.tokens) or reply.starts[after] >= reply.ends[after - 1]):
        # the marker's last word is whole: "The answer isn't the box" is "the answer is" and "not" in one word
        candidates.append(_canonical(reply.text[reply.ends[after - 1]:].lstrip(" :：-·")))
    expected = {_canonical(e): i for i, e in enumerate(request.expected)}
    for text in candidates:
        if text in expected:
            return "correct", expected[text], f"reply is the expected answer {request.expected[expected[text]]!r}"
    if choices is None:
        return None
    by_text = {_canonical(c.text): c for c in choices}
    for text in candidates:
        choice = by_text.get(text)
        lead = leading_label(text) if choice is None else None
        if lead is not None and lead.marked:
            labelled = next((c for c in choices if c.label == lead.label), None)
            if labelled is not None and _canonical(text[lead.rest:]) == _canonical(labelled.text):
                choice = labelled
        if choice is not None:
            return _chosen(choice, "reply is")
    return None


def _chosen(choice: Choice, how: str) -> Decision:
    if choice.expected is None:
        return "incorrect", None, f"{how} another option ({choice.shown()!r})"
    return "correct", choice.expected, f"{how} the expected option {choice.shown()!r}"


def _region(reply: Reply, request: JudgeRequest, frame: Frame) -> int | None:
    """The first word of the reply's answer: after a copy of the question, polite preambles and lead-ins; None
    when the reply is a copy of (the start of) the question and nothing else."""
    lists = lexicon()
    tokens = reply.tokens
    region = 1 if tokens[:1] == ["question"] else 0
    for question in (tokens_of(request.question), list(frame.tokens)):
        if question and tokens[region:region + len(question)] == question:
            if region + len(question) >= len(tokens):
                return None
            region += len(question)
            break
    answer_words = {word for text in [*request.expected, *(text for _, text in offered(request))]
                    for word in tokens_of(text)}
    if repeats_question(tokens[region:], frame, answer_words=answer_words):
        return None
    for _ in range(4):
        end = region + 1
        while end < len(tokens) and not reply.boundary(end):
            end += 1
        if end >= len(tokens) or tuple(tokens[region:end]) not in lists.preambles:
            break
        region = end
    lead = lists.lead_ins.matches(tokens[region:region + 8])
    if lead and lead[0][0] == 0 and region + lead[0][1] < len(tokens):
        region += lead[0][1]
        if tokens[region] == "that" and region + 1 < len(tokens):
            region += 1
    return region


def _suspicious(reply: Reply, offset: int, request: JudgeRequest) -> Mark | None:
    """A question mark, or a word in capitals or emphasised that is no option's, answer's or question's word
    ("*such*", "NEVER"), at or after ``offset``: where the reply states its answer, such marks change it."""
    lists = lexicon()
    allowed = set(tokens_of(" ".join([request.question, *request.expected, *(t for _, t in offered(request))])))
    allowed |= lists.prepositions | lists.yes | lists.no | {w for p in lists.preambles for w in p}
    allowed |= {w for phrase in answer_markers(True).entries | lists.sentence_markers.entries for w in phrase}
    allowed |= {fold(label) for label, _ in offered(request) if label}
    allowed -= lists.function_words - lists.prepositions  # "*so*", "*such*", "SO", "*really*": emphasis of a word
    allowed = {word for word in allowed if not negation_count([word])}  # "NOT", "*never*": an emphatic negation
    for mark in reply.marks_from(offset, {MarkKind.QUESTION, MarkKind.CAPITALS}):
        if mark.kind is MarkKind.QUESTION or not set(tokens_of(mark.text)) <= allowed:
            return mark
    for start, end in reply.emphasis:
        if start >= offset and not set(tokens_of(reply.clean[start:end])) <= allowed:
            return Mark(MarkKind.EMPHASIS, start, reply.text[start:end])
    return None


def _decide_choice(request: JudgeRequest, reply: Reply, region: int, choices: list[Choice],
                   frame: Frame, world: World) -> Decision:
    flipped = negated_feeling(reply.tokens[region:], choices)
    if flipped is not None and not reply.marks_from(reply.starts[region]):
        return _chosen(choices[flipped], "reply negates the other feeling, so it names")
    rejected_first = _rejection_then_answer(reply, region, choices, frame, world)
    if rejected_first is not None:
        return _chosen(choices[rejected_first], "reply rejects one option, then names")
    if described(reply, region, choices, frame):
        return _undecided("reply gives its answer by a description that names no option; needs a judge")
    found = statements(reply, region, choices, frame)
    statement = _conclusion(found)
    if isinstance(statement, str):
        return _undecided(statement)
    mark = _suspicious(reply, statement.start, request)
    if mark is not None:
        return _undecided(f"reply has {mark.kind.value} ({mark.text!r}) where it answers; needs a judge")
    assert isinstance(statement.read, int)
    earlier = label_said_before(reply, region, reply.token_at(statement.start), choices)
    if earlier is not None and earlier != statement.read:
        return _undecided(f"reply gives option {choices[earlier].label!r} before it names another; needs a judge")
    other = other_bare_answer(reply, region, choices, statement)
    if other is not None:
        return _undecided(f"reply gives {choices[other].shown()!r} in a sentence of its own besides its "
                          f"{statement.kind}; needs a judge")
    span = reply.tokens[reply.token_at(statement.start):reply.token_at(statement.end)]
    by_text = bool(named_options(span, choices) or emotion_named(span, choices))
    problem = tail_problem(reply, statement.end, statement.read, choices, frame, world, by_label=not by_text)
    if problem:
        return _undecided(f"reply {problem}; needs a judge")
    return _chosen(choices[statement.read], f"reply's {statement.kind} names")


def _rejection_then_answer(reply: Reply, region: int, choices: list[Choice], frame: Frame,
                           world: World) -> int | None:
    """The option of a reply that opens by rejecting one option and then names another, each in a clause of its
    own, with nothing after it that spoils it ("Not the blue box — the red one.", "Not A. B."): the mirror of "the
    red box, not the blue one"; None for any other reply, and for a question with a negation of its own."""
    tokens = reply.tokens
    if tokens[region] != "not" or reply.marks_from(reply.starts[region]) \
            or negation_count(frame.asking or frame.tokens):
        return None  # "Which box will she not look in?": what "not the red box" answers is unclear
    cut = next((i for i in range(region + 1, len(tokens)) if reply.boundary(i)), len(tokens))
    end = next((i for i in range(cut + 1, len(tokens)) if reply.boundary(i)), len(tokens))
    if cut >= len(tokens):
        return None
    rejected = option_clause(tokens[region + 1:cut], choices)
    chosen = option_clause(tokens[cut:end], choices)
    if rejected is None or chosen is None or rejected == chosen:
        return None
    if end < len(tokens) and tail_problem(reply, reply.starts[end], chosen, choices, frame, world):
        return None
    return chosen


def _conclusion(found: dict[str, list[Statement]]) -> Statement | str:
    """The statement the reply's answer rests on, or why there is none that is certain."""
    opening = found["opening answer"][0] if found["opening answer"] else None
    for kind in ("answer line", "bold answer", "conclusion"):
        said = found[kind]
        if not said:
            continue
        if any(isinstance(s.read, Unclear) for s in said) and kind != "conclusion":
            return f"reply's {kind} is unclear (several options, a label that disagrees with its text, a hedge)"
        if kind != "conclusion" and len({s.read for s in said}) > 1:
            return f"reply's {kind}s name different options"
        last = said[-1]
        if opening is not None and opening.read is Unclear.MISMATCH and last.start < opening.end:
            # "The answer is A. The blue box." where A is the red box: the conclusion restates an opening that
            # reads two ways (a label and another option's text), so it is no reading of its own
            return f"reply's opening answer reads two ways (a label and another option's text) where its {kind} is"
        if isinstance(last.read, Unclear):
            return f"reply's last {kind} hedges or names several options"
        if opening is not None and isinstance(opening.read, int) and opening.end <= last.start \
                and opening.read != last.read:  # the reply committed to an answer first, then named another
            # "Hugo will look in the red box. Final answer: the blue box": two answers; reasoning that only
            # considers an option ("At first glance, one might say the box") commits to none
            return f"reply's opening answer and its {kind} differ"
        return last
    if opening is None:
        return "reply states no option in the question's frame; needs a judge"
    if isinstance(opening.read, Unclear):
        return "reply hedges, negates or names several options; needs a judge"
    return opening


def _decide_yes_no(request: JudgeRequest, reply: Reply, region: int, frame: Frame, world: World) -> Decision:
    start = _yes_no_line(reply, region, frame)
    if reply.in_table(reply.starts[start] if start < len(reply.tokens) else len(reply.clean)):
        return _undecided("reply answers in a table's cells; needs a judge")
    read = read_yes_no(reply, start, frame, frame.negative, world)
    if read.said is None:
        return _undecided(read.problem)
    lines = {opening_yes_no(reply, at)[0] for at in _yes_no_lines(reply, region, frame)} - {None}
    if len(lines) > 1:
        return _undecided("reply's answer lines say yes and no; needs a judge")  # "Answer: no. Answer: yes."
    if start > region:  # an answer line after an opening yes or no that it never withdrew: two answers
        opening = opening_yes_no(reply, region)[0]
        if opening is not None and opening != read.said:
            return _undecided(f"reply opens with {opening!r} and concludes {read.said!r}; needs a judge")
    mark = _suspicious(reply, reply.starts[start], request)
    if mark is not None:
        return _undecided(f"reply has {mark.kind.value} ({mark.text!r}) where it answers; needs a judge")
    expected = [yes_no_of(e) for e in request.expected]
    matches = [i for i, (word, _) in enumerate(expected) if word == read.said]
    if not matches:
        if frame.negative:
            return _undecided("yes/no to a negative question is ambiguous")
        return "incorrect", None, f"reply says {read.said!r}, expected {expected[0][0]!r}"
    i = matches[0]
    explanation = expected[i][1]
    if explanation:
        if _same_explanation(reply.tokens[read.after:], explanation):
            return "correct", i, f"reply says {read.said!r} with the expected explanation"
        return _undecided(f"reply says {read.said!r}; its explanation needs a judge")
    return "correct", i, f"reply says {read.said!r}"


def _yes_no_line(reply: Reply, region: int, frame: Frame) -> int:
    """Where the reply's yes or no is: after the last answer line ("Final answer: No") or "so"-conclusion
    ("So, yes, ...") that is followed by one, else the start of its answer."""
    found = _yes_no_lines(reply, region, frame)
    return found[-1] if found else region


def _yes_no_lines(reply: Reply, region: int, frame: Frame) -> list[int]:
    """Where each answer line ("Answer: no"), else each "so"-conclusion, that is followed by a yes or no puts it."""
    lists = lexicon()
    tokens = reply.tokens
    for phrases in (answer_markers(not frame.others_choice), lists.sentence_markers):
        found = [region + end for start, end in phrases.matches(tokens[region:])
                 if region + end < len(tokens) and (tokens[region + end] in lists.yes or tokens[region + end] in lists.no)
                 and not pro_form_so(reply, region + start)]  # "She doesn't think so yes": no "so"-conclusion
        if found:
            return found
    return []


def _same_explanation(tail: Sequence[str], explanation: str) -> bool:
    """The reply's explanation is the expected one, word for word (a leading "because" aside)."""
    def core(tokens: Sequence[str]) -> list[str]:
        return list(tokens[1:] if tokens[:1] == ["because"] else tokens)
    wanted = core(tokens_of(explanation))
    return bool(wanted) and core(tail) == wanted


def _not_knowing_may_answer(request: JudgeRequest) -> bool:
    """Whether a reply such as "I don't know" may be the answer rather than no answer: the expected answer is about
    not knowing ("He has no clue", "Nothing"), or the question asks what someone says or replies."""
    expected = [w for e in request.expected for w in tokens_of(e)]
    return (any(w.startswith(_NOT_KNOWING_ANSWER) for w in expected)
            or any(w.startswith(_SPEECH_QUESTION) for w in tokens_of(request.question)))
