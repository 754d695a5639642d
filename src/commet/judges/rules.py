"""The ``rules`` judge: fast, deterministic, and never wrong when it decides.

Its contract (spec section 7): a decided verdict is never wrong. It decides only when the
reply's conclusion is unambiguous, and says ``undecided`` for everything else, which a
cascade sends to an LLM judge (or a person). It decides:

* exact answers: the whole reply (after answer boilerplate such as "The answer is" or
  "I think") is one expected answer, one option's label ("B", "(b)", "Option B", "b)"),
  one option's text, or a label with its own text ("B. the box");
* yes/no answers: a bare yes or no, or a yes/no followed by punctuation and a tail that
  only restates the question (with the polarity the yes/no implies; never when the question
  itself has a negation, whose restatement's polarity cannot be counted); a reply that commits
  to the opposite yes/no is wrong;
* short sentences that name exactly one option, only when the question itself names the
  options (``Turn.options`` or "..., the apple or the chocolate?") and every expected
  answer is one of them, and the sentence's other words come from the question, in the question's
  order (so that the option keeps the question's role);
* an explanation only when the reply is that explanation, word for word.

Anything with a hedge, a contrast or concession, a self-correction, both options, a negated
option, a question mark, or a conclusion that may differ from the opening is undecided.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from commet.judges.base import Judge, JudgeRequest, Verdict, decided_off_the_loop
from commet.text import contains_phrase, fold, labelled_options, normalize, question_options, words

#: expected answers up to this many words are "short": a sentence naming one may decide
SHORT_ANSWER_WORDS = 4
#: a sentence longer than this never decides by naming an option (its conclusion may come late)
MAX_SENTENCE_WORDS = 14

_YES = {"yes", "yeah", "yep", "yup"}
_NO = {"no", "nope", "nah"}
_NEGATIONS = {"not", "no", "never", "nothing", "nobody", "none", "neither", "nor", "without", "hardly",
              "nowhere", "cannot", "noone"}
#: words that make a conclusion uncertain or two-sided: hedges, contrasts, self-corrections, alternatives,
#: and words that point away from the option named
_UNCERTAIN = {
    "maybe", "perhaps", "probably", "possibly", "might", "may", "could", "unsure", "guess", "either", "likely",
    "unlikely", "unclear", "depends", "depending", "seems", "seem", "suppose", "presumably", "apparently",
    "but", "although", "though", "however", "yet", "whereas", "while", "except", "instead", "rather", "actually",
    "wait", "sorry", "correction", "mean", "oops", "nevertheless", "nonetheless", "otherwise", "unless", "or",
    "both", "neither", "nor", "and/or", "if", "hmm", "um", "uh", "er", "doubt", "kidding", "joking", "scratch",
    "correct", "incorrect", "wrong", "right", "true", "false", "tricky", "hard", "difficult", "trick",
    # words that point away from the option they name ("a different snack than the apple"); the sentence rule
    # allows the question's own words, and a question may use these ("Sam likes a different snack than you")
    "other", "another", "different", "differently", "than", "opposite", "unlike", "besides", "else",
}
_FUNCTION_WORDS = {
    "a", "an", "the", "i", "you", "he", "she", "it", "we", "they", "me", "him", "her", "us", "them", "my", "your",
    "his", "its", "our", "their", "this", "that", "these", "those", "one", "ones", "is", "are", "was", "were", "be",
    "been", "being", "am", "will", "would", "shall", "should", "can", "do", "does", "did", "has", "have", "had",
    "'s", "s", "'ll", "ll", "'d", "d", "'re", "re", "'m", "m", "'ve", "ve", "in", "on", "at", "to", "into", "onto",
    "under", "inside", "behind", "from", "with", "for", "of", "by", "there", "here", "so", "very", "really",
    "definitely", "certainly", "surely", "indeed", "absolutely", "totally", "quite",
}
#: words a reply may use to say it chooses, beyond the question's own words
_CHOICE_WORDS = {"pick", "picks", "choose", "chooses", "select", "selects", "go", "goes", "answer", "option",
                 "choice", "say", "says"}
#: answer boilerplate stripped from the front of a reply before an exact comparison
_PREFIX = re.compile(
    r"(?i)^\s*(?:(?:my\s+|the\s+)?(?:final\s+|correct\s+)?answer\s*(?:is\s*)?[:：]?\s*|i\s+think\s*(?:that\s+|it'?s\s+|it\s+is\s+)?"
    r"|i'?d\s+say\s+|i\s+would\s+say\s+|i\s+(?:would\s+|will\s+|'?d\s+)?(?:choose|pick|select|go\s+with)\s+"
    r"|答案\s*(?:是|为|：|:)?\s*|我选(?!项)\s*|选(?!项)\s*)")
_MARKDOWN = re.compile(r"[*_`#>]+")
#: a bare option label: "B", "(b)", "b)", "B.", "[B]", "[[B]]" (ToMBench's reply format), "Option B", "选项B", "B选项"
_BARE_LABEL = re.compile(r"(?i)^(?:option|choice|选项)?\s*[(\[（]{0,2}\s*([a-z]|\d{1,2})\s*[)\]）]{0,2}\s*[.:：)]?\s*(?:选项)?$")
#: a label followed by text: "B. the box", "(b) the box", "B) the box", "B: the box"
_LABEL_WITH_TEXT = re.compile(r"(?i)^(?:option\s+)?(?:[(\[（]\s*([a-z]|\d{1,2})\s*[)\]）]|([a-z]|\d{1,2})\s*[.:：)])\s*(.+)$")
#: a reply that opens with an option label and goes on: "A) the box", "A, the box", "(b): the basket"
_LEADING_LABEL = re.compile(r"(?i)^(?:option\s+|choice\s+)?(?:[(\[（]\s*([a-z]|\d{1,2})\s*[)\]）]\s*[.:：,，]?|([a-z]|\d{1,2})\s*[.:：),，])\s*(\S.*)$")
_NON_ANSWERS = {"i don't know", "i do not know", "don't know", "dunno", "no idea", "i have no idea", "not sure",
                "i'm not sure", "i am not sure", "i can't tell", "i cannot tell", "can't tell", "cannot tell",
                "i can't say", "i cannot say", "unknown", "i can't answer", "i cannot answer", "no comment"}
#: word beginnings that make "I don't know" a possible answer: in the expected answer (someone does not know, has no
#: idea or clue, knows nothing) or in a question about what someone says ("What will Tom say?": "I don't know.")
_NOT_KNOWING_ANSWER = ("know", "knew", "sure", "idea", "clue", "tell", "told", "unknown", "unaware", "aware", "nothing",
                       "certain", "say", "said", "repl", "answer", "respon")
_SPEECH_QUESTION = ("say", "said", "tell", "told", "repl", "answer", "respon")
#: what may stand between option labels in a reply that lists several ("A/B", "A, B", "A and B", "A & B")
_LABEL_SEPARATORS = re.compile(r"(?:[\s/,，;&+|]|\band\b)+")
_PREPOSITIONS = {"in", "on", "at", "under", "inside", "into", "onto", "behind", "to", "the", "a", "an"}


@dataclass(frozen=True)
class _Choice:
    """One option the respondent was offered, and the expected answer it is (None: a wrong option)."""

    label: str | None
    text: str
    expected: int | None


def _core(text: str) -> str:
    """Normalised text without leading prepositions and articles: "in the basket" and "the basket" -> "basket"."""
    tokens = normalize(text).split()
    while len(tokens) > 1 and tokens[0] in _PREPOSITIONS:
        tokens = tokens[1:]
    return " ".join(tokens)


def _strip_reply(response: str) -> str:
    """The reply without markdown, surrounding quotes, trailing full stops and answer boilerplate."""
    text = _MARKDOWN.sub("", fold(response)).strip()
    previous = None
    while previous != text:
        previous = text
        text = _PREFIX.sub("", text, count=1).strip().strip("\"'\u201c\u201d\u300c\u300d").strip()
        text = text.rstrip(".!。！ \t\n").strip()
    return text


def _negations(tokens: Sequence[str]) -> int:
    return sum(1 for t in tokens if t in _NEGATIONS or t.endswith("n't"))


def _without_contraction(token: str) -> str:
    if token.endswith("n't"):
        stem = token[:-3]
        return {"wo": "will", "ca": "can", "sha": "shall"}.get(stem, stem)
    return token


def _uncertain(text: str, tokens: Sequence[str]) -> bool:
    """A hedge, contrast, self-correction, alternative, rhetorical question or trailing-off in the reply."""
    if "?" in text or "？" in text or "..." in text or "…" in text:
        return True
    if any(t in _UNCERTAIN for t in tokens):
        return True
    return any(a in _YES | _NO and b in _YES | _NO for a, b in zip(tokens, tokens[1:], strict=False))


class RulesJudge(Judge):
    name = "rules"
    cacheable = False  # free and deterministic: recomputed rather than stored in the cache

    async def judge(self, request: JudgeRequest) -> Verdict:
        return await decided_off_the_loop(self.decide, request)

    def decide(self, request: JudgeRequest) -> Verdict:
        if not words(request.response):
            return self._verdict("incorrect", None, "empty reply")
        reply = _strip_reply(request.response)
        choices = self._choices(request)
        exact = self._exact(request, reply, choices)
        if exact is not None:
            return exact
        if all(self._yes_no(e)[0] is not None for e in request.expected):
            return self._decide_yes_no(request)
        if normalize(reply, drop_articles=False) in _NON_ANSWERS and not _not_knowing_may_answer(request):
            return self._verdict("incorrect", None, "the reply gives no answer")
        return self._decide_sentence(request, choices)

    # the parts ----------------------------------------------------------------------------------------
    def _verdict(self, outcome: str, branch: int | None, rationale: str) -> Verdict:
        return Verdict(outcome, branch, rationale, self.name)  # type: ignore[arg-type]

    def _choices(self, request: JudgeRequest) -> list[_Choice] | None:
        """The options offered, each tied to the expected answer it is; None when they do not line up.

        Options come from the turn, else from labelled options or an "x or y?" list in the
        question. Every expected answer must be exactly one option (by text, by label, as
        "B. text", or as words found in that option alone), else naming an option proves
        nothing and only exact answers decide.
        """
        offered = _offered(request)
        if len(offered) < 2:
            return None
        cores = [_core(text) for _, text in offered]
        if len(set(cores)) < len(cores) or any(not c for c in cores):
            return None
        owner: list[int | None] = [None] * len(offered)
        for i, expected in enumerate(request.expected):
            hits = [j for j, (label, text) in enumerate(offered) if _is_option(expected, label, text)]
            if not hits:  # "Medium" names "the medium one" when no other option contains it
                hits = [j for j, core in enumerate(cores) if contains_phrase(core, _core(expected))]
            if len(hits) != 1 or owner[hits[0]] is not None:
                return None
            owner[hits[0]] = i
        return [_Choice(label, text, owner[j]) for j, (label, text) in enumerate(offered)]

    def _exact(self, request: JudgeRequest, reply: str, choices: list[_Choice] | None) -> Verdict | None:
        """The whole reply is one expected answer, or one option by label, text, or both."""
        if _uncertain(reply, []):
            return None
        offered = _offered(request)
        if _label_conflict(reply, offered):  # "A) the box" where A is the basket: which one is meant?
            return self._verdict("undecided", None, "reply's option label and option text disagree")
        literal = normalize(reply, drop_articles=False)
        if len(_labels_given(reply, offered)) > 1 and not any(
                literal == normalize(e, drop_articles=False) for e in request.expected):
            # "A/B", "A, B": dropping the article "a" would leave "b"
            return self._verdict("undecided", None, "reply gives the labels of several options")
        norm = normalize(reply)
        for i, expected in enumerate(request.expected):
            if norm and norm in (normalize(expected), normalize(_strip_reply(expected))):
                return self._verdict("correct", i, f"reply is the expected answer {expected!r}")
        if choices is None:
            return None
        labelled = [c for c in choices if c.label]
        picked: _Choice | None = None
        bare = _BARE_LABEL.match(reply)
        with_text = _LABEL_WITH_TEXT.match(reply)
        if bare and labelled:
            picked = next((c for c in labelled if fold(c.label or "") == fold(bare.group(1))), None)
            if picked is None:
                return None
        elif with_text and labelled:
            label, text = with_text.group(1) or with_text.group(2), with_text.group(3)
            by_label = next((c for c in labelled if fold(c.label or "") == fold(label)), None)
            if by_label is None or _core(text) != _core(by_label.text):
                return None
            picked = by_label
        else:
            picked = next((c for c in choices if _core(reply) == _core(c.text)), None)
        if picked is None:
            return None
        shown = f"{picked.label}. {picked.text}" if picked.label else picked.text
        if picked.expected is None:
            return self._verdict("incorrect", None, f"reply is another option ({shown!r})")
        return self._verdict("correct", picked.expected, f"reply is the expected option {shown!r}")

    @staticmethod
    def _yes_no(text: str) -> tuple[str | None, str]:
        """('yes'|'no'|None, the tail after it) when the text opens with a yes/no and punctuation."""
        stripped = _PREFIX.sub("", _MARKDOWN.sub("", fold(text)).strip(), count=1).strip()
        match = re.match(r"^(yes|yeah|yep|yup|no|nope|nah)(?:$|\s*([,.;:!—–-])\s*(.*))$", stripped, re.DOTALL)
        if match is None:
            return None, ""
        word = match.group(1)
        return ("yes" if word in _YES else "no"), (match.group(3) or "").strip()

    def _decide_yes_no(self, request: JudgeRequest) -> Verdict:
        said, tail = self._yes_no(request.response)
        if said is None:
            return self._verdict("undecided", None, "reply does not open with a clear yes or no")
        tail_tokens = words(tail)
        if tail and _uncertain(tail, tail_tokens) or any(t in _YES | _NO for t in tail_tokens):
            return self._verdict("undecided", None, "reply hedges, corrects itself or turns after its yes/no")
        question_tokens = words(request.question)
        question_negated = _negations(question_tokens) > 0
        expected = [self._yes_no(e) for e in request.expected]
        matches = [i for i, (word, _) in enumerate(expected) if word == said]
        wanted_negations = _negations(question_tokens) + (1 if said == "no" else 0)
        if not matches:
            if question_negated:
                return self._verdict("undecided", None, "yes/no to a negative question is ambiguous")
            if tail and not (_restates(tail_tokens, question_tokens, wanted_negations) or _short_reason(tail_tokens)):
                return self._verdict("undecided", None, f"reply says {said!r} but its tail may read the other way")
            want = expected[0][0]
            return self._verdict("incorrect", None, f"reply says {said!r}, expected {want!r}")
        i = matches[0]
        explanation = expected[i][1]
        if explanation:
            if tail and _same_explanation(tail, explanation):
                return self._verdict("correct", i, f"reply says {said!r} with the expected explanation")
            return self._verdict("undecided", None, f"reply says {said!r}; its explanation needs a judge")
        if not tail:
            return self._verdict("correct", i, f"reply says {said!r}")
        if question_negated:  # "Isn't he lying?" "Yes, he isn't.": a restatement's polarity cannot be counted
            return self._verdict("undecided", None, f"reply says {said!r} to a negative question and restates it")
        if _restates(tail_tokens, question_tokens, wanted_negations):
            return self._verdict("correct", i, f"reply says {said!r} and restates the question")
        return self._verdict("undecided", None, f"reply says {said!r} but adds more than the question")

    def _decide_sentence(self, request: JudgeRequest, choices: list[_Choice] | None) -> Verdict:
        """A short sentence that names exactly one offered option, in the question's own words."""
        if choices is None:
            return self._verdict("undecided", None, "no rule applies; needs an LLM judge or a person")
        if any(len(normalize(e).split()) > SHORT_ANSWER_WORDS for e in request.expected):
            return self._verdict("undecided", None, "the expected answer is an explanation; needs a judge")
        text = fold(request.response).strip()
        tokens = words(text)
        body = text.rstrip(".!。！ ")
        if len(tokens) > MAX_SENTENCE_WORDS or re.search(r"[.!;。！；\n]", body):
            return self._verdict("undecided", None, "a long or multi-sentence reply; needs a judge")
        if _uncertain(text, tokens) or _negations(tokens):
            return self._verdict("undecided", None, "reply hedges, negates or turns; needs a judge")
        norm = normalize(text)
        named = [c for c in choices if contains_phrase(norm, _core(c.text)) or contains_phrase(norm, normalize(c.text))]
        named = [c for c in named if _named_on_its_own(norm, c, named)]
        if len(named) != 1:
            return self._verdict("undecided", None, "reply names no option or several")
        choice = named[0]
        rest = re.sub(rf"(?<![\w']){re.escape(_core(choice.text))}(?![\w'])", " ", norm)
        allowed = set(words(request.question)) | _FUNCTION_WORDS | _CHOICE_WORDS | set(words(choice.text))
        if not all(_without_contraction(t) in allowed for t in rest.split()):
            return self._verdict("undecided", None, "reply says more than which option; needs a judge")
        if not _in_question_order(rest, request.question, choice):
            # "Who will give the apple to Sam, Mia or Tom?" "Sam will give the apple to Mia.": Mia is not the giver
            return self._verdict("undecided", None, "reply uses the question's words in another order; needs a judge")
        if choice.expected is None:
            return self._verdict("incorrect", None, f"reply names another option ({choice.text!r})")
        return self._verdict("correct", choice.expected, f"reply names the expected option {choice.text!r}")


def _in_question_order(rest: str, question: str, choice: _Choice) -> bool:
    """Whether the reply's own content words (the question's, beyond function words and the option) come in the
    question's order, so that the option keeps the question's role: "Mia will give the apple to Sam" for "Who will
    give the apple to Sam?", not "Sam will give the apple to Mia"."""
    asked = words(question)
    skip = _FUNCTION_WORDS | _CHOICE_WORDS | set(words(choice.text))
    position = 0
    for token in (_without_contraction(t) for t in rest.split()):
        if token in skip:
            continue
        try:
            position = asked.index(token, position) + 1
        except ValueError:
            return False
    return True


def _named_on_its_own(norm: str, choice: _Choice, named: Sequence[_Choice]) -> bool:
    """Whether the normalised reply names ``choice`` outside the longer named options that contain it: "the big
    hat" names only the big hat, "the big hat, the hat" names both."""
    core = _core(choice.text)
    rest = norm
    for other in named:
        if other is not choice and contains_phrase(_core(other.text), core):
            rest = re.sub(rf"(?<![\w']){re.escape(_core(other.text))}(?![\w'])", " | ", rest)
    return contains_phrase(rest, core) or contains_phrase(rest, normalize(choice.text))


def _not_knowing_may_answer(request: JudgeRequest) -> bool:
    """Whether a reply such as "I don't know" may be the answer rather than no answer: the expected answer is about
    not knowing ("He has no clue", "Nothing"), or the question asks what someone says or replies."""
    expected = [w for e in request.expected for w in words(e)]
    return (any(w.startswith(_NOT_KNOWING_ANSWER) for w in expected)
            or any(w.startswith(_SPEECH_QUESTION) for w in words(request.question)))


def _offered(request: JudgeRequest) -> list[tuple[str | None, str]]:
    """The options shown: the turn's, else labelled options or an "x or y?" list in the question."""
    if request.options:
        return list(request.options)
    labelled = labelled_options(request.question)
    return list(labelled[1]) if labelled else [(None, o) for o in question_options(request.question)]


def _labels_given(reply: str, offered: Sequence[tuple[str | None, str]]) -> set[int]:
    """The offered options whose labels make up the whole reply with separators only ("A/B", "A, B", "B & A").

    Only a reply of nothing but labels counts: in "B. a box" the "a" is an article, not option A.
    """
    labels = {fold(label): i for i, (label, _) in enumerate(offered) if label is not None}
    parts = [part.strip("()[]（）") for part in _LABEL_SEPARATORS.split(_strip_reply(reply))]
    parts = [part for part in parts if part]
    if not parts or any(part not in labels for part in parts):
        return set()
    return {labels[part] for part in parts}


def _label_conflict(reply: str, offered: Sequence[tuple[str | None, str]]) -> bool:
    """The reply opens with one option's label but its text names another option ("A) the box", A the basket).

    A leading "A" is also the article "a", so without this check "A: the hamster" reads as "the hamster".
    """
    match = _LEADING_LABEL.match(reply)
    if match is None:
        return False
    label, text = match.group(1) or match.group(2), match.group(3)
    by_label = [i for i, (own, _) in enumerate(offered) if own is not None and fold(own) == fold(label)]
    if len(by_label) != 1:
        return False
    norm = normalize(text)
    named = {i for i, (_, option) in enumerate(offered)
             if _core(text) == _core(option) or contains_phrase(norm, _core(option))}
    return bool(named - set(by_label))


def _is_option(expected: str, label: str | None, text: str) -> bool:
    """Whether an expected answer is this option: its text, its label, or "label. text"."""
    norm = normalize(expected)
    if _core(expected) == _core(text) or norm == normalize(text):
        return True
    if label is None:
        return False
    bare = _BARE_LABEL.match(fold(expected).strip())
    if bare:
        return fold(bare.group(1)) == fold(label)
    with_text = _LABEL_WITH_TEXT.match(fold(expected).strip())
    return with_text is not None and fold(with_text.group(1) or with_text.group(2)) == fold(label) \
        and _core(with_text.group(3)) == _core(text)


def _restates(tail: Sequence[str], question: Sequence[str], negations: int) -> bool:
    """The tail only restates the question ("No, he did not."), with the polarity its yes/no implies."""
    allowed = set(question) | _FUNCTION_WORDS | _NEGATIONS
    return all(_without_contraction(t) in allowed for t in tail) and _negations(tail) == negations


def _short_reason(tail: Sequence[str]) -> bool:
    """A short "because ..." tail with no conclusion of its own ("so", "therefore"): the yes/no stands."""
    return (tail[:1] in (["because"], ["since"]) and len(tail) <= 12
            and not set(tail) & {"so", "therefore", "thus", "hence", "means", "answer", "conclusion", "overall"})


def _same_explanation(reply_tail: str, explanation: str) -> bool:
    """The reply's explanation is the expected one, word for word (a leading "because" aside)."""
    def core(text: str) -> str:
        tokens = normalize(text).split()
        return " ".join(tokens[1:] if tokens[:1] == ["because"] else tokens)
    return bool(core(explanation)) and core(reply_tail) == core(explanation)
