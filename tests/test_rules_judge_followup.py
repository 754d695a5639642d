"""Rules judge v4 follow-up (issue 42): the classes a held-out set still found on v4.

tests/data/rules_judge_v4_followup.jsonl was labelled before the judge ran on it: a label followed by another
option's text in any notation (also in the next sentence, or the text first and the other label after), yes/no
replies with a restating or reasoning clause, a trailing yes/no, elliptic answers, an option named in a sentence
with a modal verb, a negated option followed by the key, emoji after an answer. A decided verdict must be right;
the yes/no replies read with certainty must be decided.
"""

from __future__ import annotations

from collections import Counter

from commet.judges.base import JudgeRequest
from commet.judges.rules import RulesJudge, decide
from tests.test_judges_calibration import SAMPLE, bench

FOLLOWUP = bench.load_labelled(bench.V4_FOLLOWUP)


def test_followup_set_covers_its_classes() -> None:
    found = Counter(case.note for case in FOLLOWUP)
    assert {kind: found[kind] >= 10 for kind in ("label-other-text", "yes-no-clause", "option-in-sentence",
                                                 "emoji-after-answer")} == dict.fromkeys(
        ("label-other-text", "yes-no-clause", "option-in-sentence", "emoji-after-answer"), True)
    assert Counter(case.label for case in FOLLOWUP if case.note == "label-other-text")["unclear"] >= 30


async def test_no_wrong_decided_verdict_on_the_followup_set() -> None:
    figures = await bench.measure(RulesJudge(), FOLLOWUP, SAMPLE)
    assert [(o.case.question, o.case.response, o.case.label, o.rationale) for o in figures.wrong] == []
    yes_no = [o for o in figures.outcomes if o.case.note == "yes-no-clause" and o.case.label != "unclear"]
    assert sum(o.correct is not None for o in yes_no) >= 0.6 * len(yes_no)


def _ask(question: str, expected: str, response: str, options: tuple[tuple[str | None, str], ...] = ()) -> str:
    request = JudgeRequest(story_id="s", task="t", turn=0, context=(), story="", question=question,
                           expected=(expected,), response=response, options=options, options_shown=True, rubric=None)
    return decide(request)[0]


BOXES = (("A", "In the red box"), ("B", "In the blue box"))
WHERE = "Where will Nora look for her ball first?"


def test_a_label_with_another_options_text_is_undecided_wherever_the_text_is() -> None:
    for reply in ("The answer is A. The blue box.", "B.\nIn the red box.", "In the blue box — that's A.",
                  "A) the blue box", "Option B: the red box.", "The blue box, which is option A.",
                  "My pick is A.\n\nNora will look in the blue box because Sam moved it there."):
        assert _ask(WHERE, "In the red box", reply, BOXES) == "undecided", reply
    assert _ask(WHERE, "In the red box", "The answer is A. In the red box.", BOXES) == "correct"
    assert _ask(WHERE, "In the red box", "Answer: B. The blue box.", BOXES) == "incorrect"


def test_yes_no_with_a_clause_read_by_the_lexicon() -> None:
    lying = "Tom told Ana the dog ate the cookie and she believed him. Is Ana lying to Dad?"
    assert _ask(lying, "No", "Of course not, she was misled.") == "correct"
    assert _ask(lying, "No", "No, she's mistaken rather than lying.") == "correct"
    assert _ask(lying, "No", "She isn't lying, no.") == "correct"
    assert _ask(lying, "No", "Ana is lying, yes.") == "incorrect"
    for reply in ("Yes, she was misled.", "No, she's lying rather than mistaken.", "She's lying, no.",
                  "No, Dad was misled by her."):
        assert _ask(lying, "No", reply) == "undecided", reply
    knew = "Ben moved the marbles while Rosa was at school. Did Rosa know that the marbles were moved?"
    assert _ask(knew, "No", "She did not.") == "correct"
    assert _ask(knew, "No", "She knew, yes.") == "incorrect"
    assert _ask(knew, "No", "She didn't, yes.") == "undecided"


def test_a_rejected_option_then_the_answer() -> None:
    assert _ask(WHERE, "In the red box", "Not the blue box — the red one.", BOXES) == "correct"
    assert _ask(WHERE, "In the red box", "Not B — A.", BOXES) == "correct"
    assert _ask(WHERE, "In the red box", "Not A, B.", BOXES) == "incorrect"
    for reply in ("Not the blue box — but maybe the red one.", "Not the blue box, not the red box.",
                  "Not the blue box. The red one, or maybe the blue."):
        assert _ask(WHERE, "In the red box", reply, BOXES) == "undecided", reply
    negative = "Which box will Nora not look in first?"
    assert _ask(negative, "In the blue box", "Not the red box — the blue one.", BOXES) == "undecided"


def test_a_face_after_a_feeling_answer_decides_only_where_it_shows_that_feeling() -> None:
    feel = "Pia hoped for a bike and got socks. How does Pia feel, happy or sad?"
    options = ((None, "happy"), (None, "sad"))
    assert _ask(feel, "sad", "Sad 😢", options) == "correct"
    assert _ask(feel, "sad", "Happy 😀", options) == "incorrect"
    for reply in ("Happy 😢", "Sad 😂", "Sad 🙃", "Sad 🤔", "Sad ✅", "Sad 👎", "Not sad 😢", "😢 Sad", "Sad 😢😊"):
        assert _ask(feel, "sad", reply, options) == "undecided", reply
    assert _ask(WHERE, "In the red box", "In the red box 😊", BOXES) == "undecided"  # a face on no feeling


def test_a_label_then_a_description_is_undecided() -> None:
    for reply in ("A, where Sam put it.", "A: the box Sam moved it to.", "B, the one she put it in.", "A. The new place.",
                  "A (where the ball is now)", "Answer: B, the original spot.", "B, i.e. where she put it herself.",
                  "The blue box, i.e. where Sam put it."):
        assert _ask(WHERE, "In the red box", reply, BOXES) == "undecided", reply
    assert _ask(WHERE, "In the red box", "A. Nora didn't see Sam move it.", BOXES) == "correct"  # an explanation
    # of someone the story does not have: what it says of the answer is not read (docs/rules-judge.md, "tails")
    assert _ask(WHERE, "In the red box", "A. Sally didn't see Sam move it.", BOXES) == "undecided"
    assert _ask(WHERE, "In the red box", "A, i.e. the red box.", BOXES) == "correct"
