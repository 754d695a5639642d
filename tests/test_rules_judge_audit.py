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

CASES: list[tuple[str, list[str], list[tuple[str | None, str]], str, set[str]]] = [
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


@pytest.mark.parametrize(("question", "expected", "options", "reply", "allowed"), CASES,
                         ids=[f"{c[0][:30]}|{c[3]}" for c in CASES])
def test_decided_verdicts_are_right(question: str, expected: list[str], options: list[tuple[str | None, str]],
                                    reply: str, allowed: set[str]) -> None:
    assert _verdict(question, expected, options, reply) in allowed


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


@pytest.mark.parametrize(("question", "expected", "options", "reply", "allowed"), LABEL_CASES,
                         ids=[f"{c[0][:30]}|{c[3]}" for c in LABEL_CASES])
def test_a_label_with_another_options_text_is_undecided(question: str, expected: list[str],
                                                        options: list[tuple[str | None, str]], reply: str,
                                                        allowed: set[str]) -> None:
    assert _verdict(question, expected, options, reply) in allowed


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


@pytest.mark.parametrize(("question", "expected", "options", "reply", "allowed"), CONTRAST_CASES,
                         ids=[f"{c[0][:30]}|{c[3]}" for c in CONTRAST_CASES])
def test_a_reply_pointing_away_from_the_option_it_names_is_undecided(
        question: str, expected: list[str], options: list[tuple[str | None, str]], reply: str,
        allowed: set[str]) -> None:
    assert _verdict(question, expected, options, reply) in allowed


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


@pytest.mark.parametrize(("question", "expected", "options", "reply", "allowed"), CONTAINED_CASES,
                         ids=[f"{c[0][:30]}|{c[3]}" for c in CONTAINED_CASES])
def test_an_option_inside_another_named_on_its_own_counts(
        question: str, expected: list[str], options: list[tuple[str | None, str]], reply: str,
        allowed: set[str]) -> None:
    assert _verdict(question, expected, options, reply) in allowed


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


@pytest.mark.parametrize(("question", "expected", "options", "reply", "allowed"), TWO_LABEL_CASES,
                         ids=[f"{c[0][:30]}|{c[3]}" for c in TWO_LABEL_CASES])
def test_a_reply_with_two_options_labels_is_undecided(
        question: str, expected: list[str], options: list[tuple[str | None, str]], reply: str,
        allowed: set[str]) -> None:
    assert _verdict(question, expected, options, reply) in allowed


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


@pytest.mark.parametrize(("question", "expected", "options", "reply", "allowed"), ORDER_CASES,
                         ids=[f"{c[0][:30]}|{c[3]}" for c in ORDER_CASES])
def test_an_option_named_in_another_role_is_undecided(
        question: str, expected: list[str], options: list[tuple[str | None, str]], reply: str,
        allowed: set[str]) -> None:
    assert _verdict(question, expected, options, reply) in allowed


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


@pytest.mark.parametrize(("question", "expected", "options", "reply", "allowed"), NOT_KNOWING_CASES,
                         ids=[f"{c[0][:30]}|{c[1][0]}|{c[3]}" for c in NOT_KNOWING_CASES])
def test_i_dont_know_is_wrong_only_where_it_cannot_be_the_answer(
        question: str, expected: list[str], options: list[tuple[str | None, str]], reply: str,
        allowed: set[str]) -> None:
    assert _verdict(question, expected, options, reply) in allowed
