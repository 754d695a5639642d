"""Rules judge v4 (issue 42): it decides only what it reads whole.

tests/data/rules_judge_v4_realistic.jsonl, rules_judge_v4_adversarial.jsonl and
rules_judge_v4_candidates.jsonl were written and labelled before the judge's code was read, in reply
styles no earlier set used (JSON and XML answers, ``\\boxed{}``, think blocks and "Reasoning:" sections,
yes/no idioms and elliptic answers, feelings by idiom, answers by description, labels followed by
words of Japanese, Korean, Russian, Greek, Thai, Hindi and German, option texts in six more scripts,
bare yes/no to why/how/what questions, ToMi's judge-only candidates under both protocols). Here: the
contract on them (no wrong decided verdict, 60 % of realistic right answers to questions other than
"why" decided in every realistic set), each class of issue 42 as a case of its own, the scratch reader,
and the verdict with its rationale the same through ``commet.evaluate``, ``commet eval`` and
``commet rejudge``.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import pytest

from commet.judges.base import JudgeRequest
from commet.judges.rules import RulesJudge, decide
from commet.judges.rules.scratch import answer_part
from tests.test_judges_calibration import SAMPLE, bench

V4_REALISTIC = bench.load_labelled(bench.V4_REALISTIC)
V4_ADVERSARIAL = bench.load_labelled(bench.V4_ADVERSARIAL)
V4_CANDIDATES = bench.load_labelled(bench.V4_CANDIDATES)
V4_PROBES = bench.load_labelled(bench.V4_PROBES)


def test_v4_sets_cover_the_new_reply_styles() -> None:
    assert len(V4_REALISTIC) >= 250 and len(V4_ADVERSARIAL) >= 150 and len(V4_CANDIDATES) >= 80
    for cases, kinds in (
            (V4_REALISTIC, ("structured-output", "reason-clause", "politeness", "think-block", "step-by-step",
                            "feeling-synonym", "labelled-options", "yes-no-idiom", "negation-scope", "why",
                            "how-what-bare", "open-what", "in-question-options", "korean", "hindi", "thai", "greek",
                            "russian", "arabic", "other-language-yes-no", "yes-no-what-frame", "yes-no-how-frame")),
            (V4_ADVERSARIAL, ("negation-opposite", "double-negation", "label-other-language",
                              "description-after-option", "think-vs-final", "hedge-before-answer", "negated-option",
                              "why-trap", "copy-of-question", "other-script-negation", "feeling-traps")),
            (V4_CANDIDATES, ("candidate-word", "candidate-partial"))):
        found = Counter(case.note for case in cases)
        assert [kind for kind in kinds if not found[kind]] == []
        assert len({(c.question, c.expected, c.options, c.response, c.protocol) for c in cases}) == len(cases)
    assert Counter(case.label for case in V4_ADVERSARIAL)["unclear"] >= 80
    assert {case.protocol for case in V4_CANDIDATES} == {"independent", "conversation"}


@pytest.mark.parametrize(("cases", "least_decided"), [(V4_REALISTIC, 0.6), (V4_ADVERSARIAL, 0.08),
                                                      (V4_CANDIDATES, 0.5), (V4_PROBES, 0.1)],
                         ids=["v4-realistic", "v4-adversarial", "v4-candidates", "v4-probes"])
async def test_no_wrong_decided_verdict_on_the_v4_sets(cases: list, least_decided: float) -> None:
    figures = await bench.measure(RulesJudge(), cases, SAMPLE)
    assert [(o.case.question, o.case.response, o.case.label, o.rationale) for o in figures.wrong] == []
    assert figures.coverage >= least_decided


@pytest.mark.parametrize("path", [bench.REALISTIC, bench.REDTEAM_REALISTIC, bench.V4_REALISTIC],
                         ids=["realistic", "redteam-realistic", "v4-realistic"])
async def test_sixty_percent_of_realistic_right_answers_to_other_than_why_questions_are_decided(path: Path) -> None:
    figures = await bench.measure(RulesJudge(), bench.load_labelled(path), SAMPLE)
    right = [o for o in figures.outcomes if o.case.label == "correct" and not bench.is_why(o.case)]
    decided = sum(o.correct is not None for o in right)
    assert len(right) >= 150 and decided >= 0.6 * len(right), (decided, len(right))


def _request(question: str, expected: tuple[str, ...], reply: str,
             options: tuple[tuple[str | None, str], ...] = ()) -> JudgeRequest:
    return JudgeRequest(story_id="s", task="t", turn=0, context=(), story="", question=question, expected=expected,
                        response=reply, options=options)


PEARL = "Aunt Pearl read an old timetable and believes it. Is Aunt Pearl lying?"
OSKAR = "Oskar hid the dinosaur under his pillow; his sister put it in the toybox. Where will Oskar look for it?"
OSKAR_OPTIONS = (("A", "the pillow"), ("B", "the toybox"))


@pytest.mark.parametrize(("question", "expected", "options", "reply", "outcome"), [
    # negations and opposites are read clause by clause, never summed
    (PEARL, ("No",), (), "She's not lying, she's mistaken.", "correct"),
    (PEARL, ("No",), (), "She is mistaken, not lying.", "correct"),
    ("Ray ate the cake and blamed the dog. Is Ray lying?", ("Yes",), (), "He isn't lying, he's mistaken.",
     "incorrect"),
    (PEARL, ("No",), (), "Honestly, no.", "correct"),
    ("Did Mina know the cake was gone?", ("No",), (), "She didn't know, she was unaware.", "correct"),
    (PEARL, ("No",), (), "She isn't lying, she isn't mistaken.", "undecided"),
    (PEARL, ("No",), (), "She's not not lying.", "undecided"),
    ("Does Leo know the cookies moved?", ("No",), (), "He wasn't unaware.", "undecided"),
    ("Does Leo know the cookies moved?", ("No",), (), "Not that he knows of.", "undecided"),
    # a label followed by words the judge has no grammar for
    (OSKAR, ("the pillow",), OSKAR_OPTIONS, "Aは違います。", "undecided"),
    (OSKAR, ("the pillow",), OSKAR_OPTIONS, "A ไม่ใช่คำตอบที่ถูก", "undecided"),
    (OSKAR, ("the pillow",), OSKAR_OPTIONS, "A. यह सही नहीं है।", "undecided"),
    (OSKAR, ("the pillow",), OSKAR_OPTIONS, "A. Das stimmt nicht.", "undecided"),
    (OSKAR, ("the pillow",), OSKAR_OPTIONS, "Aです。", "correct"),
    (OSKAR, ("the pillow",), OSKAR_OPTIONS, "A. Não é a resposta.", "undecided"),  # Latin letters, no grammar
    (OSKAR, ("the pillow",), OSKAR_OPTIONS, "A. Dat klopt niet.", "undecided"),
    (OSKAR, ("the pillow",), OSKAR_OPTIONS, "A. Bukan jawaban yang benar.", "undecided"),
    (OSKAR, ("the pillow",), OSKAR_OPTIONS, "A. He hid it there himself.", "correct"),
    # an answer by description after a statement naming an option; scratch never decides
    (OSKAR, ("the pillow",), OSKAR_OPTIONS,
     "The dinosaur is really in **the toybox**. Oskar will look where he hid it.", "undecided"),
    (OSKAR, ("the pillow",), OSKAR_OPTIONS, "<think>The toybox.</think>\nHe will look where he hid it.", "undecided"),
    (OSKAR, ("the pillow",), OSKAR_OPTIONS, "Answer: A. That is, wherever Mina put it.", "undecided"),
    (OSKAR, ("the pillow",), OSKAR_OPTIONS, "<think>The answer is A.</think>", "undecided"),
    (OSKAR, ("the pillow",), OSKAR_OPTIONS, "Reasoning: he will look under the pillow.", "undecided"),
    (OSKAR, ("the pillow",), OSKAR_OPTIONS, "<think>It is in the toybox now.</think>\n\nThe pillow.", "correct"),
    (OSKAR, ("the pillow",), OSKAR_OPTIONS, "Draft: A\nFinal: B", "incorrect"),
    # hedges before the answer line; an opening yes that is never withdrawn
    (OSKAR, ("the pillow",), OSKAR_OPTIONS, "Both are possible, but I'd go with the pillow.", "undecided"),
    ("Did Mina know the cake was gone?", ("No",), (), "Yes, she knew.\n\nSo the answer is no.", "undecided"),
    # the regression: options listed in the question are no copy of it
    ("Where are the paints now, in the art room or in the library?", ("In the library",), (), "The art room.",
     "incorrect"),
    ("Where are the paints now, in the art room or in the library?", ("in the art room",), (), "The art room.",
     "correct"),
    # usefulness: idioms, \boxed, JSON, option text in any script, feelings, wrong non-answers
    ("Is Priya pretending to be asleep?", ("Yes",), (), "I would say so.", "correct"),
    ("Is Priya pretending to be asleep?", ("Yes",), (), "Hardly.", "incorrect"),
    ("Did Jonas see where the present was hidden?", ("Yes",), (), "He certainly did.", "correct"),
    ("Did Jonas see where Ella hid it?", ("Yes",), (), "He certainly did.", "undecided"),  # which of the two?
    ("Did Jonas see where Ella hid it?", ("Yes",), (), "Absolutely not.", "incorrect"),
    ("Does Leo know the cookies moved?", ("No",), (), "Нет.", "correct"),
    ("Does Leo know the cookies moved?", ("No",), (), "Нет, он не знает.", "undecided"),
    (OSKAR, ("the pillow",), OSKAR_OPTIONS, "$\\boxed{\\text{A}}$", "correct"),
    (OSKAR, ("the pillow",), OSKAR_OPTIONS, '{"reasoning": "the toybox is where it is", "answer": "A"}', "correct"),
    ("미아는 어디에서 찾을까요?", ("바구니",), ((None, "바구니"), (None, "서랍")), "서랍.", "incorrect"),
    ("미아는 어디에서 찾을까요?", ("바구니",), ((None, "바구니"), (None, "서랍")), "바구니가 아니에요.", "undecided"),
    ("How does Maya feel, happy or sad?", ("sad",), (), "Gutted.", "correct"),
    ("How does Maya feel, happy or sad?", ("sad",), (), "Over the moon.", "incorrect"),
    ("How does Maya feel, happy or sad?", ("sad",), (), "Not sad.", "incorrect"),
    ("How does Jade feel, happy or scared?", ("scared",), (), "Not happy.", "undecided"),
    ("How does Maya feel, happy or sad?", ("sad",), (), "She isn't happy.", "undecided"),
    ("Why will Mia look in the basket?", ("Because she did not see Tom move it.",), (), "Yes.", "incorrect"),
    ("How does Leo know the cake is chocolate?", ("He saw it being baked.",), (), "No.", "incorrect"),
    ("Before opening it, what does Sam think is inside?", ("crayons",), (), "Yes.", "incorrect"),
    ("Why will Mia look in the basket?", ("Because she did not see Tom move it.",), (), "B", "incorrect"),
    ("What do you think: does Mia know the scarf moved?", ("No",), (), "No.", "correct"),
    ("What will Tom say when Mia asks if he took it?", ("No",), (), "No.", "correct"),
    ("What will Tom say when Mia asks where it is?", ("He doesn't know",), (), "No.", "undecided"),
    ("How many apples can Ben see, two or three?", ("two",), (), "2", "undecided"),
])
def test_each_class_of_issue_42(question: str, expected: tuple[str, ...], options: tuple[tuple[str | None, str], ...],
                                reply: str, outcome: str) -> None:
    verdict = decide(_request(question, expected, reply, options))
    assert verdict[0] == outcome, verdict


@pytest.mark.parametrize(("reply", "answer"), [
    ("<think>a</think>\nThe basket.", "The basket."),
    ("<THINK>a</THINK>B", "B"),
    ("reasoning first</think>B", "B"),
    ("<think>never closed B", ""),
    ("Thinking: a\nstill thinking\n\nAnswer: the basket", "Answer: the basket"),
    ("**Reasoning:** it moved.", ""),
    ("Draft: drawer\nFinal: basket", "Final answer: basket"),
    ("\\boxed{B}", "\nFinal answer: B\n"),
    ('```json\n{"answer": "B", "reasoning": "it moved"}\n```', "Answer: B"),
    ('{"answer": "B", "confidence": "low"}', '{"answer": "B", "confidence": "low"}'),  # a field that may qualify it
    ("B <think>no, A</think>", "B \nno, A"),  # after the answer: read as text, it may take it back
    ("Answer: the basket\nReasoning: so, the drawer.", "Answer: the basket\nReasoning: so, the drawer."),
    ('{"reasoning": "x"}', '{"reasoning": "x"}'),
    ("The answer: basket", "The answer: basket"),
])
def test_scratch_is_taken_out_before_the_judge_reads(reply: str, answer: str) -> None:
    assert answer_part(reply).strip() == answer.strip()


def _dataset_and_replies(cases: list, tmp_path: Path) -> tuple[Path, Path]:
    lines, replies = [], {}
    for i, case in enumerate(cases):
        turn = {"story": "", "feedback": None, "question": case.question, "image": None,
                "answers": list(case.expected), "meta": {},
                "options": [{"label": label, "text": text} for label, text in case.options],
                "candidates": list(case.candidates)}
        lines.append(json.dumps({"id": f"case-{i}", "task": "false_belief_location", "category": "Belief",
                                 "mental_states": [], "image_dependent": False, "source": "test",
                                 "meta": {"protocol": case.protocol} if case.protocol else {}, "turns": [turn]},
                                ensure_ascii=False))
        replies[f"case-{i}"] = [case.response]
    data, replay = tmp_path / "data.jsonl", tmp_path / "replies.json"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    replay.write_text(json.dumps(replies, ensure_ascii=False), encoding="utf-8")
    return data, replay


def test_verdict_and_rationale_are_the_same_through_evaluate_eval_and_rejudge(tmp_path: Path) -> None:
    """One reply each of every kind of the v4 sets: the unit path's verdict and rationale are what
    ``commet.evaluate`` stores, what ``commet eval`` stores, and what ``commet rejudge`` stores again."""
    from typer.testing import CliRunner

    from commet.cli import app
    from commet.store import Store

    picked: dict[tuple[str, str], object] = {}
    for case in V4_REALISTIC + V4_ADVERSARIAL + V4_CANDIDATES:
        picked.setdefault((case.note, case.label), case)
    cases = list(picked.values())
    unit = [decide(bench.request_for(case, SAMPLE)) for case in cases]  # type: ignore[arg-type]
    expected = [(None if outcome == "undecided" else outcome == "correct", why) for outcome, _, why in unit]
    assert len(cases) >= 60 and sum(o is not None for o, _ in expected) >= 20

    evaluated = asyncio.run(bench.measure_through_eval("rules", cases, tmp_path / "evaluate.sqlite"))  # type: ignore[arg-type]
    assert [(o.correct, o.rationale) for o in evaluated.outcomes] == expected

    data, replay = _dataset_and_replies(cases, tmp_path)
    db = tmp_path / "cli.sqlite"
    runner = CliRunner()
    result = runner.invoke(app, ["eval", "--dataset", str(data), "--model", f"replay:{replay}", "--judge", "rules",
                                 "--quiet", "--force", "--db", str(db), "--run", "replayed"])
    assert result.exit_code == 0, result.output
    again = runner.invoke(app, ["rejudge", "--db", str(db), "--run", "replayed", "--judge", "rules", "--as", "again"])
    assert again.exit_code == 0, again.output
    with Store(db) as store:
        for name in ("replayed", "again"):
            run = store.get_run(name)
            assert run is not None
            rows = {row.story_id: (row.correct, row.rationale) for row in store.turn_rows(run.id)}
            assert [rows[f"case-{i}"] for i in range(len(cases))] == expected, name


def test_bench_reports_the_rules_judge_speed() -> None:
    cases = {"v4": V4_REALISTIC[:40]}
    speed = bench.rules_speed(cases, SAMPLE)
    assert speed.replies == 40 and speed.seconds > 0 and speed.limit_ms > 0
    assert speed.longest_chars == max(len(case.response) for case in cases["v4"])
    assert "replies per second" in speed.line() and "12,000 characters" in speed.line()
