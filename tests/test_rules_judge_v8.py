"""Rules judge v8: a restated yes/no predicate is read only where it is said of what the question asks about.

A set of 697 replies written blind to the judge's code (tests/data/rules_judge_v8_blind.jsonl), on real StoryTurns of
the bundled sample and of `commet generate procedural --seed 8`, in styles no earlier set used: chat-template tokens
left in the text, replies in the second person and addressed to the character, letters with a greeting and a
signature, postscripts that take the answer back or doubt it, implicit negators ("hardly", "far from", "anything
but", "too busy to", "little does he know", "none the wiser"), "not only ... but also", the former and the latter,
diffs, logic notation, key-value roles ("wrong_answer: ..."), passive voice, quoted thoughts, truncated replies,
repetition loops, answers given for another character or to another question. Labelled before the judge ran: one
wrong decided verdict, of one class: a clause that says the question's verb of something else was read as
restating the question ("She hardly knew him." to "Did Elsie know the shell was Kai's?" decided "no"; so did "She
didn't know what to do.", "He didn't see Dad." to "Did Mateo see what Dad put in the lunchbox?", "She knew it was a
shell.", "He saw Lina." to "Did Omar see Lina move the kite?"). A restatement now says the predicate with nothing
after it, a pro-form ("it", "that", "so") or the question's own complement: its words, as a clause where the
question's is one, with what the question's clause says of its subject ("Kai's"), and the action a verb of
perception is asked about ("move"). Chat-template tokens at a reply's edges ("B<|eot_id|>", "[/INST] B</s>") are
taken out. Probes after reading the code found that a JSON reply whose reasoning field opens with another option in the
question's frame ("Omar will look in the attic."), or whose answer field is an option's exact text, was decided
whatever its reasoning concluded; both are now undecided.
The tests below use other wording than the set.
"""

from __future__ import annotations

import pytest

from commet.judges.base import JudgeRequest
from commet.judges.rules import RulesJudge, decide
from tests.test_judges_calibration import SAMPLE, bench

STORY = ("Omar puts his kite in the shed and goes to school. While he is away, his sister Lina moves the kite to "
         "the attic. Later Lina tells Omar, \"The kite is in the shed,\" although she knows it is in the attic.")
KNOW = "Does Omar know that the kite is in the attic?"
SAW = "Did Omar see Lina move the kite?"
THINK = "Does Omar think the kite is in the shed?"
WHERE = "Does Omar know where the kite is now?"
WHOSE = "Did Lina know whose kite it was?"
LIE = "Is Lina lying?"
LOOK = "Where will Omar look for his kite, in the shed or in the attic?"
OPTIONS = ((None, "in the shed"), (None, "in the attic"))


def _ask(question: str, expected: str, response: str, options: tuple[tuple[str | None, str], ...] = ()) -> str:
    request = JudgeRequest(story_id="s", task="t", turn=0, context=(), story=STORY, question=question,
                           expected=(expected,), response=response, options=options, options_shown=True)
    return decide(request)[0]


async def test_no_wrong_decided_verdict_on_the_v8_set() -> None:
    cases = bench.load_labelled(bench.CALIBRATION.with_name("rules_judge_v8_blind.jsonl"))
    assert len(cases) >= 600 and {case.label for case in cases} == {"correct", "incorrect", "unclear"}
    figures = await bench.measure(RulesJudge(), cases, SAMPLE)
    assert [(o.case.response, o.case.label, o.rationale) for o in figures.wrong] == []
    assert len(figures.decided) > 120  # the plain replies of the set, template tokens among them, are still read


@pytest.mark.parametrize(("question", "expected", "reply"), [
    (KNOW, "no", "He doesn't know Lina."),
    (KNOW, "no", "He barely knows his sister."),
    (KNOW, "no", "He didn't know what to say."),
    (KNOW, "no", "He knows the kite."),
    (KNOW, "no", "He knows it's his kite."),
    (KNOW, "no", "He knows it is in the shed."),
    (KNOW, "no", "No, he doesn't know his sister."),
    (KNOW, "no", "Yes, he knows it's a kite."),
    (SAW, "no", "He saw Lina."),
    (SAW, "no", "He didn't see Lina."),
    (SAW, "no", "He saw the kite."),
    (SAW, "no", "He didn't see the kite."),
    (THINK, "yes", "He thinks about the shed."),
    (THINK, "yes", "He thinks it's a kite."),
    (THINK, "yes", "He doesn't think the kite is red."),
    (WHERE, "no", "He doesn't know where Lina is."),
    (WHERE, "no", "He doesn't know where to look."),
    (WHOSE, "yes", "She knew him."),
    (WHOSE, "yes", "She knew it was a kite."),
    (WHERE, "no", "He knows where it was."),
    (WHOSE, "yes", "She knew that it was a kite."),
    (KNOW, "no", "He knows that it was a present."),
    (LIE, "yes", "Lina is not lying to her friend."),
])
def test_the_question_s_verb_said_of_something_else_is_undecided(question: str, expected: str, reply: str) -> None:
    assert _ask(question, expected, reply) == "undecided"


@pytest.mark.parametrize(("question", "expected", "reply", "outcome"), [
    (KNOW, "no", "He doesn't know it's in the attic.", "correct"),
    (KNOW, "no", "He doesn't know the kite is in the attic.", "correct"),
    (KNOW, "no", "He doesn't know that.", "correct"),
    (KNOW, "no", "He knows it's there.", "incorrect"),
    (KNOW, "no", "He doesn't know.", "correct"),
    (SAW, "no", "He didn't see it.", "correct"),
    (SAW, "no", "He didn't see Lina move the kite.", "correct"),
    (SAW, "no", "He saw Lina move it.", "incorrect"),
    (SAW, "no", "He saw nothing.", "correct"),
    (THINK, "yes", "He thinks it's in the shed.", "correct"),
    (THINK, "yes", "He thinks it's still there.", "correct"),
    (THINK, "yes", "He doesn't think so.", "incorrect"),
    (WHERE, "no", "He doesn't know where it is.", "correct"),
    (WHERE, "no", "No, he doesn't know where it is now.", "correct"),
    (WHOSE, "yes", "She knew whose it was.", "correct"),
    (LIE, "yes", "She's lying.", "correct"),
])
def test_the_question_s_own_complement_said_again_is_read(question: str, expected: str, reply: str,
                                                         outcome: str) -> None:
    assert _ask(question, expected, reply) == outcome


@pytest.mark.parametrize(("reply", "outcome"), [
    ("In the shed<|eot_id|>", "correct"),
    ("<|im_start|>assistant\nThe attic.<|im_end|>", "incorrect"),
    ("[/INST] In the shed</s>", "correct"),
    ("<start_of_turn>model\nAnswer: in the attic<end_of_turn>", "incorrect"),
    ("<|start_header_id|>assistant<|end_header_id|>\n\nOmar will look in the shed.<|eot_id|>", "correct"),
    ("In the shed<|im_end|>\n<|im_start|>user\nNo, the attic<|im_end|>", "undecided"),  # another turn follows
    ("<s>In the attic</s> In the shed", "undecided"),  # HTML's strike-through, not a template
    ("<s>In the shed</s>", "undecided"),
    ("<|eot_id|>", "undecided"),
])
def test_chat_template_tokens_at_the_edges_are_no_words_of_the_reply(reply: str, outcome: str) -> None:
    assert _ask(LOOK, "in the shed", reply, OPTIONS) == outcome


@pytest.mark.parametrize(("reply", "outcome"), [
    ('{"answer": "in the shed", "reasoning": "Omar will look in the attic."}', "undecided"),
    ('<|im_start|>assistant\n{"answer": "in the shed", "reasoning": "He will look in the attic."}<|im_end|>',
     "undecided"),
    ('{"answer": "in the shed", "reasoning": "He was at school. Omar will look in the attic."}', "undecided"),
    ('{"answer": "In the shed", "reasoning": "He did not see her, so actually the attic."}', "undecided"),
    ('{"answer": "in the shed", "reasoning": "Omar will look in the shed."}', "correct"),
    ('{"answer": "in the shed", "reasoning": "Lina moved it to the attic. Omar did not see."}', "correct"),
])
def test_a_json_reasoning_field_that_answers_otherwise_leaves_it_undecided(reply: str, outcome: str) -> None:
    assert _ask(LOOK, "in the shed", reply, OPTIONS) == outcome
