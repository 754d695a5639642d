"""Replies the rules judge once decided wrongly (an audit's labelled cases): each must now be right or undecided.

Every case is (question, expected answers, options, reply, the only verdicts allowed). The contract (spec
section 7) is that a decided verdict is never wrong; "undecided" is always allowed for a hard reply.
"""

from __future__ import annotations

import pytest

from commet.judges.base import JudgeRequest
from commet.judges.rules import RulesJudge

UNDECIDED = {"undecided"}
RIGHT = {"correct", "undecided"}
WRONG = {"incorrect", "undecided"}

NEGATIVE_CASES: list[tuple[str, list[str], list[tuple[str | None, str]], str, set[str]]] = [
    # a negative question: "yes, he isn't" says he is NOT lying, whatever the yes
    ("Isn't Leo lying?", ["Yes"], [], "Yes, he isn't.", WRONG),
    ("Isn't Leo lying?", ["Yes"], [], "Yes, he isn't lying.", WRONG),
    ("Is Leo lying when he says he didn't take the sticker?", ["Yes"], [], "Yes, he didn't.", WRONG),
    ("Didn't Sam see the dog?", ["No"], [], "No, he did.", WRONG),
    ("Isn't Leo lying?", ["Yes"], [], "Yes", {"correct"}),
]


def _verdict(question: str, expected: list[str], options: list[tuple[str | None, str]], reply: str) -> str:
    request = JudgeRequest(story_id="audit", task="audit", turn=0, context=(), story="", question=question,
                           expected=tuple(expected), response=reply, options=tuple(options))
    return RulesJudge().decide(request).outcome


LABELLED = [("A", "the basket"), ("B", "the box")]
PETS = [("A", "the goldfish"), ("B", "the hamster")]
LABEL_CASES: list[tuple[str, list[str], list[tuple[str | None, str]], str, set[str]]] = [
    # an option's label with another option's text: which one is meant? ("A" is also the article "a")
    ("Where will Sally look for her marble?", ["The basket"], LABELLED, "A) the box", UNDECIDED),
    ("Where will Sally look for her marble?", ["The basket"], LABELLED, "A, the box", UNDECIDED),
    ("Where will Sally look for her marble?", ["The basket"], LABELLED, "The answer is A, the box.", UNDECIDED),
    ("Where will Sally look for her marble?", ["The basket"], LABELLED, "B. The basket", UNDECIDED),
    ("Which pet will Ines take home?", ["The hamster"], PETS, "A: the hamster", UNDECIDED),
    ("Which pet will Ines take home? A. the goldfish B. the hamster", ["The hamster"], [], "A: the hamster",
     UNDECIDED),
    # label and text agree, or a bare label: still decided
    ("Where will Sally look for her marble?", ["The basket"], LABELLED, "A. the basket", {"correct"}),
    ("Where will Sally look for her marble?", ["The basket"], LABELLED, "B) the box", {"incorrect"}),
    ("Where will Sally look for her marble?", ["The basket"], LABELLED, "A", {"correct"}),
]


SNACK = "Sam likes a different snack than you. Which snack will Sam pick, the apple or the chocolate?"
CONTRAST_CASES: list[tuple[str, list[str], list[tuple[str | None, str]], str, set[str]]] = [
    # the question's own words may point away from the option the reply names
    (SNACK, ["The chocolate"], [], "Sam will pick a different snack than the apple.", RIGHT),
    (SNACK, ["The chocolate"], [], "A different snack than the apple", RIGHT),
    ("Sam likes the other snack. Which snack will Sam pick, the apple or the chocolate?", ["The chocolate"], [],
     "Sam will pick the other snack, not the apple", RIGHT),
    ("Sam likes the opposite snack to you. Which snack will Sam pick, the apple or the chocolate?",
     ["The chocolate"], [], "Sam will pick the opposite snack to the apple", RIGHT),
    (SNACK, ["The chocolate"], [], "Sam will pick the chocolate", {"correct"}),
    (SNACK, ["The chocolate"], [], "The apple", {"incorrect"}),
]


HATS = "Which hat does Ben want, the hat or the big hat?"
CONTAINED_CASES: list[tuple[str, list[str], list[tuple[str | None, str]], str, set[str]]] = [
    # one option's text inside another's: naming both is still naming both
    (HATS, ["The hat"], [], "The big hat, the hat", UNDECIDED),
    (HATS, ["The big hat"], [], "The hat, the big hat", UNDECIDED),
    ("Is Tom happy or unhappy?", ["Unhappy"], [], "Tom is happy, unhappy", UNDECIDED),
    ("Is Tom happy or unhappy?", ["Happy"], [], "Tom is unhappy, happy", UNDECIDED),
    # naming only the longer one, or only the shorter one, still decides
    (HATS, ["The hat"], [], "Ben does want the big hat", {"incorrect"}),
    (HATS, ["The big hat"], [], "Ben does want the big hat", {"correct"}),
    (HATS, ["The hat"], [], "Ben does want the hat", {"correct"}),
    ("Is Tom happy or unhappy?", ["Unhappy"], [], "Tom is unhappy", {"correct"}),
]


SALLY = "Where will Sally look for her marble?"
TWO_LABEL_CASES: list[tuple[str, list[str], list[tuple[str | None, str]], str, set[str]]] = [
    # two options' labels: the leading "A" must not be dropped as the article "a"
    *((SALLY, ["B"], LABELLED, reply, UNDECIDED) for reply in ("A/B", "A, B", "A B", "A & B", "B/A")),
    ("Where will Sally look for her marble? A. the basket B. the box", ["B"], [], "A/B", UNDECIDED),
    (SALLY, ["B"], LABELLED, "B", {"correct"}),
    (SALLY, ["B"], LABELLED, "A", {"incorrect"}),
    (SALLY, ["B"], LABELLED, "the box", {"correct"}),
    *((SALLY, ["B"], LABELLED, reply, UNDECIDED) for reply in ("The answer is A/B", "A and B", "(A) (B)")),
    # an option whose text starts with the article "a" is no second label: "B. a box" names B alone
    *((SALLY, ["B"], [("A", "a basket"), ("B", "a box")], reply, {"correct"})
      for reply in ("B. a box", "B) a box", "(B) a box", "Answer: B. a box", "B. A box")),
    (SALLY, ["B"], [("A", "a basket"), ("B", "a box")], "A. a basket", {"incorrect"}),
]


GIVE = "Who will give the apple to Sam, Mia or Tom?"
THINK = "Who does Mia think took the cake, Tom or Sam?"
ORDER_CASES: list[tuple[str, list[str], list[tuple[str | None, str]], str, set[str]]] = [
    # the option named in another role than the question asks about
    (GIVE, ["Mia"], [], "Sam will give the apple to Mia.", WRONG),
    (THINK, ["Tom"], [], "Tom does think Mia took the cake.", WRONG),
    # the question's order: decided
    (GIVE, ["Mia"], [], "Mia will give the apple to Sam.", {"correct"}),
    (THINK, ["Tom"], [], "Mia does think Tom took the cake.", {"correct"}),
    (THINK, ["Tom"], [], "Mia does think Sam took the cake.", {"incorrect"}),
    ("Where will Jonah look for his ball, the shed or the garage?", ["The shed"], [],
     "Jonah will look for his ball in the shed.", {"correct"}),
]


SAY = "What will Tom say when Mia asks where the cake is?"
NOT_KNOWING_CASES: list[tuple[str, list[str], list[tuple[str | None, str]], str, set[str]]] = [
    # "I don't know" may be the answer: what someone says, or that someone does not know
    (SAY, ["He has no clue"], [], "I don't know.", RIGHT),
    (SAY, ["That he has no clue where it is"], [], "No idea.", RIGHT),
    ("What does Tom know about who took the cake?", ["Nothing"], [], "I don't know.", RIGHT),
    ("What does Tom know about who took the cake?", ["He knows nothing"], [], "I don't know.", RIGHT),
    # where it is no answer, it is still wrong
    ("Where is the ball now?", ["In the garage"], [], "I don't know.", {"incorrect"}),
    ("Where will Jonah look for his ball, the shed or the garage?", ["The shed"], [], "No idea.", {"incorrect"}),
]


#: each kind of reply the audit found decided wrongly, with its cases
KINDS = {"negative question": NEGATIVE_CASES, "label and text disagree": LABEL_CASES, "pointing away": CONTRAST_CASES,
         "option inside another": CONTAINED_CASES, "several labels": TWO_LABEL_CASES, "another role": ORDER_CASES,
         "I don't know": NOT_KNOWING_CASES}
ALL_CASES = [(kind, *case) for kind, cases in KINDS.items() for case in cases]


@pytest.mark.parametrize(("kind", "question", "expected", "options", "reply", "allowed"), ALL_CASES,
                         ids=[f"{c[0]}|{c[1][:30]}|{c[4]}" for c in ALL_CASES])
def test_decided_verdicts_are_right(kind: str, question: str, expected: list[str],
                                    options: list[tuple[str | None, str]], reply: str, allowed: set[str]) -> None:
    assert _verdict(question, expected, options, reply) in allowed
