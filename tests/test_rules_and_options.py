"""Option finding in questions, and the rules judge's certain decisions."""

from __future__ import annotations

import pytest

from commet.judges.base import JudgeRequest
from commet.judges.rules import RulesJudge
from commet.text import question_options


@pytest.mark.parametrize(("question", "options"), [
    ("Which snack do you like best, the apple or the chocolate?", ["the apple", "the chocolate"]),
    ("So which snack will Sam pick? The apple or the chocolate?", ["The apple", "the chocolate"]),
    ("How does Mia feel, Sad or Fine?", ["Sad", "Fine"]),
    ("Is he happy or sad?", ["happy", "sad"]),
    ("Is Hana happy or sad when she opens the tin?", ["happy", "sad"]),
    ("Is she happy, sad, or angry?", ["happy", "sad", "angry"]),
    ("Who is lying, Tom or Ann?", ["Tom", "Ann"]),
    ("Before she opens it, what will Hana think is inside the tin, crayons or marbles?", ["crayons", "marbles"]),
    ("Which pumpkin will she pick, the small one, the middle-sized one or the big one?",
     ["the small one", "the middle-sized one", "the big one"]),
    ("Which clue should Ana give, 'the red hat' or 'the hat with a star'?", ["the red hat", "the hat with a star"]),
    ("Where will Tom look: in the box or under the bed?", ["in the box", "under the bed"]),
    ("Is Leo lying?", []),
    ("Why did he say that?", []),
])
def test_question_options(question: str, options: list[str]) -> None:
    assert question_options(question) == options


def verdict(response: str, expected: list[str], question: str = "Which one, the pear or the cookie?"):
    request = JudgeRequest(story_id="s", task="t", turn=0, context=(), story="", question=question,
                           expected=tuple(expected), response=response)
    return RulesJudge().decide(request)


MUFFINS = "Which muffin will Dad pack, the big one or the medium one?"


@pytest.mark.parametrize(("response", "outcome"), [
    ("The big one", "incorrect"),  # the option as the question words it: an answer, not a copy of the question
    ("the medium one.", "correct"),
    ("Medium one", "correct"),
    ("the big one or the medium one", "undecided"),  # both
    ("the big one or", "undecided"),  # a stretch of the question cut short
    ("Which muffin will Dad pack, the big one", "undecided"),  # its start
    ("Dad pack, the big one", "undecided"),  # a stretch of it with the question's own words
])
def test_an_option_worded_as_the_question_words_it_is_an_answer_a_stretch_of_the_question_is_not(
        response: str, outcome: str) -> None:
    request = JudgeRequest(story_id="s", task="t", turn=0, context=(), story="", question=MUFFINS,
                           expected=("Medium",), response=response, options=((None, "Big"), (None, "Medium")))
    assert RulesJudge().decide(request).outcome == outcome


@pytest.mark.parametrize(("response", "expected", "outcome", "branch"), [
    ("The pear.", ["Pear", "Cookie"], "correct", 0),
    ("I would pick the cookie!", ["Pear", "Cookie"], "correct", 1),
    ("Both the pear and the cookie.", ["Pear", "Cookie"], "undecided", None),
    ("Not the pear, I think.", ["Pear"], "undecided", None),
    ("The cookie.", ["Pear"], "incorrect", None),
    ("Hmm, something sweet.", ["Pear"], "undecided", None),
    ("", ["Pear"], "incorrect", None),
])
def test_short_answers(response: str, expected: list[str], outcome: str, branch: int | None) -> None:
    result = verdict(response, expected)
    assert (result.outcome, result.branch) == (outcome, branch)


@pytest.mark.parametrize(("response", "expected", "outcome"), [
    ("Yes.", "Yes", "correct"),
    ("Yes, it is.", "Yes", "correct"),
    ("Yes, he is lying.", "Yes", "undecided"),  # the tail says more than the question: a judge decides
    ("No, he is not.", "Yes", "incorrect"),
    ("I think no.", "No", "correct"),
    ("He might be.", "Yes", "undecided"),
    ("No. She did not know Tom did it.", "No. Because she did not see Tom do it", "undecided"),
    ("Yes, because she did not see Tom do it.", "No. Because she did not see Tom do it", "incorrect"),
    ("No, because she did not see Tom do it.", "No. Because she did not see Tom do it", "correct"),
])
def test_yes_no_answers(response: str, expected: str, outcome: str) -> None:
    assert verdict(response, [expected], "Is it fair?").outcome == outcome


def test_explanations_are_left_to_a_judge_unless_given_word_for_word() -> None:
    expected = ["Because she did not see Ben move the ball"]
    assert verdict("She was outside.", expected, "Why?").outcome == "undecided"
    assert verdict("Because she did not see Ben move the ball.", expected, "Why?").outcome == "correct"


HINTING_EN = [("A", "George wants to say he does not want to listen to any of Angela's ideas"),
              ("B", "George wants Angela to provide some travel advice"),
              ("C", 'George wants to say, "Can I drink something?" or "Can we rest a few minutes before we start '
                    'talking about business?"'),
              ("D", "George wants to complain to Angela about his trip")]
HINTING_ZH = [("A", "George想说他不想听Angela的任何想法"), ("B", "George想让Angela提供一些旅游的建议"),
              ("C", "George想说，“我能喝点什么吗？”或者“我们在开始谈论业务之前，我能休息几分钟吗？”"),
              ("D", "George想向Angela抱怨他的旅行")]


@pytest.mark.parametrize("options", [HINTING_EN, HINTING_ZH], ids=["english", "chinese"])
def test_an_exact_expected_answer_decides_whatever_its_length_and_marks(options: list[tuple[str, str]]) -> None:
    """ToMBench's Hinting item 1: the expected answer is option C, two questions in quotes. A reply equal to it word
    for word is right, with or without its label, in either language; another option word for word is wrong."""
    expected = options[2][1]

    def judged(reply: str) -> str:
        request = JudgeRequest(story_id="s", task="t", turn=0, context=(), story="", question="What is the real "
                               "meaning George wants to express?", expected=(expected,), response=reply,
                               options=tuple(options))
        return RulesJudge().decide(request).outcome

    assert judged(expected) == "correct"
    assert judged(f"C. {expected}") == "correct"
    assert judged(f"  {expected}  ") == "correct"
    assert judged(options[3][1]) == "incorrect"
    assert judged(f"B. {expected}") == "undecided"  # a label that disagrees with the text
    assert judged(f"{options[3][1]}?") == "undecided"  # another option, questioned
