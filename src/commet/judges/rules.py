"""The ``rules`` judge: fast, deterministic, and never marks a wrong answer right.

It decides only what it can decide with certainty:

* yes/no answers ("Yes", "No. Because ...") by the reply's leading yes or no;
* short answers by normalised exact match or whole-phrase containment, telling which
  expected answer (branch) matched;
* clear mismatches: the reply names another option (another branch's answer or an option
  the question offers) and not the expected one, or says the opposite yes/no;
* explanations only when the reply contains the whole expected explanation.

Everything else is ``undecided``: never counted as correct, always reported, and left to
an LLM judge when one is configured.
"""

from __future__ import annotations

import re

from commet.judges.base import Judge, JudgeRequest, Verdict
from commet.text import contains_phrase, normalize, question_options

SHORT_ANSWER_WORDS = 4
_YES = {"yes", "yeah", "yep", "yup", "correct", "true"}
_NO = {"no", "nope", "nah", "false"}
_NEGATION = re.compile(r"(?:\bnot|n't|\bnever|\bno)\s+(?:\w+\s+){0,2}$")


def leading_yes_no(text: str) -> str | None:
    """'yes' or 'no' when the text starts with one (after 'I think', 'well', ...)."""
    words = normalize(text, drop_articles=False).split()
    while words and words[0] in {"well", "i", "think", "so", "hmm", "oh", "um", "answer", "my", "is"}:
        words = words[1:]
    if not words:
        return None
    if words[0] in _YES:
        return "yes"
    if words[0] in _NO:
        return "no"
    return None


def _mentions(response: str, phrase: str) -> bool:
    """Whole-phrase mention that is not negated just before ("not the apple")."""
    if not contains_phrase(response, phrase):
        return False
    for match in re.finditer(rf"(?<![a-z0-9']){re.escape(phrase)}(?![a-z0-9'])", response):
        if not _NEGATION.search(response[: match.start()]):
            return True
    return False


class RulesJudge(Judge):
    name = "rules"
    cacheable = False  # free and deterministic: recomputed rather than stored in the cache

    async def judge(self, request: JudgeRequest) -> Verdict:
        return self.decide(request)

    def decide(self, request: JudgeRequest) -> Verdict:
        response = normalize(request.response)
        expected = [normalize(e) for e in request.expected]
        if not response:
            return Verdict("incorrect", None, "empty reply", self.name)

        yes_no = [leading_yes_no(e) for e in request.expected]
        if len(expected) == 1 and yes_no[0] is not None:
            return self._yes_no(request, yes_no[0], expected[0])

        options = [normalize(x) for x in question_options(request.question)]
        named_other = [o for o in options if _mentions(response, o)
                       and not any(contains_phrase(o, e) or contains_phrase(e, o) for e in expected if e)]
        matched = [i for i, e in enumerate(expected) if e and (response == e or _mentions(response, e))]
        if len(matched) == 1:
            i = matched[0]
            if len(expected[i].split()) <= SHORT_ANSWER_WORDS or response == expected[i]:
                if named_other:  # "the shed or the garage"
                    return Verdict("undecided", None, "reply names the expected answer and another option", self.name)
                return Verdict("correct", i, f"reply names the expected answer {request.expected[i]!r}", self.name)
            return Verdict("correct", i, "reply contains the whole expected explanation", self.name)
        if len(matched) > 1:
            return Verdict("undecided", None, "reply names more than one expected answer", self.name)

        # the question's options must be the expected answers' own words ("the book about space" may be "the space
        # book"), else naming one is no proof of a wrong answer
        aligned = all(any(contains_phrase(o, e) or contains_phrase(e, o) for o in options) for e in expected)
        if named_other and aligned and all(len(e.split()) <= SHORT_ANSWER_WORDS for e in expected):
            return Verdict("incorrect", None, f"reply names another option ({named_other[0]!r})", self.name)
        return Verdict("undecided", None, "no rule applies; needs an LLM judge or a person", self.name)

    def _yes_no(self, request: JudgeRequest, want: str, expected: str) -> Verdict:
        got = leading_yes_no(request.response)
        explanation = " ".join(expected.split()[1:])
        if got is None:
            return Verdict("undecided", None, "reply does not start with yes or no", self.name)
        if got != want:
            return Verdict("incorrect", None, f"reply says {got!r}, expected {want!r}", self.name)
        if not explanation or contains_phrase(normalize(request.response), explanation):
            return Verdict("correct", 0, f"reply says {want!r}" + (" and gives the explanation" if explanation else ""),
                           self.name)
        return Verdict("undecided", None, f"reply says {want!r} but its explanation needs a judge", self.name)
