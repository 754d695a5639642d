"""Rules judge v6: every sentence that gives an answer is read, and an option is named only by words that fit no other.

A set of 859 replies written blind to the judge's code (tests/data/rules_judge_v6_blind.jsonl: reasoning-model
output, \\boxed{} and <answer> tags, tables, JSON fences, conditionals, probability splits, options inside each
other, numeric options, yes/no idioms, eleven languages, emoji, later corrections) found two classes that the
judge decided although a careful person cannot: several bare answers that disagree ("The basket. The box. The
basket.": the judge read the opening and the closing sentence only), and an option whose words lie inside another
option's, named without its own article ("Box." where the options are "the box" and "the red box"). Probes after
reading the code found two more: a clause after the answer that says the question's predicate again without the
answer ("Sally never looks there.") or leaves its verb phrase out ("She'd be mistaken to."), and an answer line
whose marker is fused with a negation ("The answer isn't the box."). A second set of 213 replies of other styles,
written after the fix and labelled before the judge ran on it (rules_judge_v6_blind2.jsonl), found one more: a
sentence in the positive to a question with a negation of its own ("He'll open the red box first." to "Which box
will Sam NOT open first?"). The tests below use other wording.
"""

from __future__ import annotations

import pytest

from commet.judges.base import JudgeRequest
from commet.judges.rules import RulesJudge, decide
from tests.test_judges_calibration import SAMPLE, bench

STORY = "Zoe hides her cookie in the tin and goes to the park. While she is out, Max moves the cookie to the jar."
WHERE = "Where will Zoe look for her cookie?"
JARS = (("A", "the tin"), ("B", "the jar"))
FEEL = "How does Kit feel when the party is cancelled?"
FEELINGS = (("A", "glad"), ("B", "upset"))
HATS = (("A", "the hat"), ("B", "the hat with a star"))
HAT_STORY = "Ola owns a plain hat and a hat with a star. She loves the star one. Her brother hides both."
WHICH_HAT = "Which hat will Ola ask for?"


def _ask(question: str, expected: str, response: str, options: tuple[tuple[str | None, str], ...] = JARS,
         story: str = STORY) -> str:
    request = JudgeRequest(story_id="s", task="t", turn=0, context=(), story=story, question=question,
                           expected=(expected,), response=response, options=options, options_shown=True)
    return decide(request)[0]


@pytest.mark.parametrize(("name", "size", "decided"), [("rules_judge_v6_blind.jsonl", 600, 250),
                                                       ("rules_judge_v6_blind2.jsonl", 200, 60)])
async def test_no_wrong_decided_verdict_on_the_v6_blind_sets(name: str, size: int, decided: int) -> None:
    cases = bench.load_labelled(bench.CALIBRATION.with_name(name))
    assert len(cases) >= size and {case.label for case in cases} == {"correct", "incorrect", "unclear"}
    figures = await bench.measure(RulesJudge(), cases, SAMPLE)
    assert [(o.case.response, o.case.label, o.rationale) for o in figures.wrong] == []
    assert len(figures.decided) > decided  # the plain replies of the set are still read


@pytest.mark.parametrize(("question", "expected", "options", "reply"), [
    (WHERE, "the tin", JARS, "The tin. The jar. The tin."),
    (WHERE, "the tin", JARS, "The jar. The tin. The jar."),
    (WHERE, "the tin", JARS, "A. B. A."),
    (WHERE, "the tin", JARS, "In the jar!\n\nIn the tin!\n\nIn the jar!"),
    (WHERE, "the tin", JARS, "The jar, since it is there. The tin."),
    (WHERE, "the tin", JARS, "Jar? Tin? Tin."),
    (FEEL, "upset", FEELINGS, "Glad. Upset. Glad."),
    (FEEL, "upset", FEELINGS, "Upset? Glad? Upset."),
    (FEEL, "upset", FEELINGS, "Glad. Gutted. Glad."),
])
def test_bare_answers_that_disagree_are_undecided(question: str, expected: str,
                                                  options: tuple[tuple[str, str], ...], reply: str) -> None:
    assert _ask(question, expected, reply, options) == "undecided"


@pytest.mark.parametrize(("reply", "verdict"), [
    ("The tin. Max moved it while she was out.", "correct"),
    ("The tin. The tin!", "correct"),
    ("The options:\nA) the tin\nB) the jar\n\nZoe never saw Max, so my answer is A.", "correct"),
    ("The jar. Zoe hid it in the tin, but the jar.", "undecided"),
])
def test_one_answer_with_reasoning_or_a_copy_of_the_options_still_decides(reply: str, verdict: str) -> None:
    assert _ask(WHERE, "the tin", reply) == verdict


@pytest.mark.parametrize("reply", ["Hat.", "A hat.", "Hat!", "She'll ask for a hat.", "Not the hat with a star, hat."])
def test_an_option_inside_another_named_without_its_article_is_undecided(reply: str) -> None:
    assert _ask(WHICH_HAT, "the hat with a star", reply, HATS, HAT_STORY) == "undecided"


@pytest.mark.parametrize(("reply", "verdict"), [
    ("The hat.", "incorrect"), ("A) the hat", "incorrect"), ("The hat with a star.", "correct"),
    ("B", "correct"), ("She will ask for the hat with a star.", "correct"),
])
def test_options_inside_each_other_by_their_own_words_still_decide(reply: str, verdict: str) -> None:
    assert _ask(WHICH_HAT, "the hat with a star", reply, HATS, HAT_STORY) == verdict


@pytest.mark.parametrize("reply", [
    "The tin. Zoe never looks there.",
    "Zoe will look in the tin. She will look there only at the very end.",
    "A. She looks there last.",
    "The tin. She would be silly to.",
    "The tin, as she should.",
    "The jar. Zoe won't look there, though.",
])
def test_a_clause_that_says_the_questions_predicate_again_without_the_answer_is_undecided(reply: str) -> None:
    assert _ask(WHERE, "the tin", reply) == "undecided"


@pytest.mark.parametrize(("reply", "verdict"), [
    ("The tin. She didn't see Max move it.", "correct"),
    ("Zoe will look in the tin, because she hid it there.", "correct"),
    ("The jar, since Max put it there.", "incorrect"),
])
def test_reasons_after_the_answer_still_decide(reply: str, verdict: str) -> None:
    assert _ask(WHERE, "the tin", reply) == verdict


@pytest.mark.parametrize("reply", ["The answer isn't the jar.", "The answer's not the jar.",
                                   "The correct answer isn't the tin.", "The final answer wasn't the jar."])
def test_an_answer_marker_fused_with_a_negation_is_no_answer_line(reply: str) -> None:
    assert _ask(WHERE, "the tin", reply) == "undecided"


def test_an_answer_marker_of_whole_words_still_decides() -> None:
    assert _ask(WHERE, "the tin", "The answer is the jar.") == "incorrect"
    assert _ask(WHERE, "the tin", "The answer is the tin.") == "correct"


NOT_FIRST = "Which tin will Zoe not open first?"


@pytest.mark.parametrize("reply", ["Zoe will open the tin first.", "She opens the jar first.",
                                   "Zoe won't open the jar first.", "Zoe will not open the tin first."])
def test_a_sentence_to_a_question_with_a_negation_of_its_own_is_undecided(reply: str) -> None:
    assert _ask(NOT_FIRST, "the jar", reply, (("A", "the tin"), ("B", "the jar"))) == "undecided"


@pytest.mark.parametrize(("question", "reply", "verdict"), [
    (NOT_FIRST, "The jar.", "correct"), (NOT_FIRST, "A", "incorrect"),
    ("How does Zoe feel, surprised or not surprised?", "She feels surprised.", "correct"),
])
def test_the_option_alone_still_decides_and_a_negation_inside_an_option_is_no_negative_question(
        question: str, reply: str, verdict: str) -> None:
    options = (("A", "the tin"), ("B", "the jar")) if question == NOT_FIRST else ((None, "surprised"),
                                                                                  (None, "not surprised"))
    expected = "the jar" if question == NOT_FIRST else "surprised"
    assert _ask(question, expected, reply, options) == verdict


@pytest.mark.parametrize("reply", ['{"answer": "A"} {"answer": "B"}', '{"answer": "B"}\n{"answer": "A"}',
                                   '"answer": "B"} and then {"answer": "A"'])
def test_an_answer_line_the_judge_cannot_read_leaves_the_reply_undecided(reply: str) -> None:
    assert _ask(WHERE, "the tin", reply) == "undecided"


@pytest.mark.parametrize(("reply", "verdict"), [('{"answer": "A"}', "correct"), ('Answer: "B"', "incorrect")])
def test_one_answer_line_in_quotes_still_decides(reply: str, verdict: str) -> None:
    assert _ask(WHERE, "the tin", reply) == verdict


KNOW = "Does Zoe know that the cookie is in the jar?"


@pytest.mark.parametrize("reply", ["No. She doesn't. She does.", "No, she doesn't, she does.", "Yes. She does. She doesn't.",
                                   "Answer: no. Answer: yes.", "Final answer: yes\n\nFinal answer: no"])
def test_a_yes_no_reply_that_answers_again_the_other_way_is_undecided(reply: str) -> None:
    assert _ask(KNOW, "No", reply, ()) == "undecided"


@pytest.mark.parametrize(("reply", "verdict"), [("No. She doesn't.", "correct"), ("No. She doesn't. She doesn't.", "correct"),
                                                ("Answer: no. Final answer: no.", "correct"), ("Yes, she does.", "incorrect")])
def test_a_yes_no_reply_that_answers_again_the_same_way_still_decides(reply: str, verdict: str) -> None:
    assert _ask(KNOW, "No", reply, ()) == verdict
