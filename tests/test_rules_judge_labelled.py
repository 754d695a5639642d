"""The rules judge's contract: on the labelled sets, a decided verdict is never wrong.

tests/data/rules_judge_labelled.jsonl holds self-contained replies a careful person labelled
against the expected answer: plain answers, case and punctuation variants, paraphrases, letters
and option text, Chinese and Japanese, and the hard kinds (hedges, contrasts, self-corrections,
idioms, rhetorical questions, negated options, long replies whose conclusion differs from their
opening). The bundled sample's calibration set, tests/data/rules_judge_audit.jsonl (replies written
to break the judge, some of them ``unclear``: no decided verdict is right there),
tests/data/rules_judge_realistic.jsonl (replies the way chat models write them),
tests/data/rules_judge_adversarial.jsonl (marks that change meaning, labels after separators, roles,
copies of the question) and the red-team sets tests/data/rules_judge_redteam_*.jsonl (written blind
to the judge's code, as an independent reviewer scores it, and the probes found after reading it)
are held to the same contract, in the unit path and through ``commet.evaluate``. All eight are
measured by bench/judge_calibration.py, which prints the decided share and the precision.
"""

from __future__ import annotations

from collections import Counter

import pytest

from commet.judges.rules import RulesJudge
from tests.test_judges_calibration import CASES, SAMPLE, bench

LABELLED = bench.load_labelled()
AUDIT = bench.load_labelled(bench.AUDIT)
REALISTIC = bench.load_labelled(bench.REALISTIC)
ADVERSARIAL = bench.load_labelled(bench.ADVERSARIAL)
REDTEAM_REALISTIC = bench.load_labelled(bench.REDTEAM_REALISTIC)
REDTEAM_ADVERSARIAL = bench.load_labelled(bench.REDTEAM_ADVERSARIAL)
REDTEAM_PROBES = bench.load_labelled(bench.REDTEAM_PROBES)


def test_labelled_set_is_large_and_covers_every_kind() -> None:
    assert len(LABELLED) >= 250
    kinds = Counter(case.note for case in LABELLED)
    for kind in ("hedge", "contrast", "self-correction", "idiom", "rhetorical", "negated-option", "both-options",
                 "long-conclusion", "letter", "option-text", "chinese", "japanese", "paraphrase", "case",
                 "punctuation", "plain", "exact-explanation", "contradiction"):
        assert kinds[kind] >= 1, kind
    labels = Counter(case.label for case in LABELLED)
    assert labels["correct"] >= 100 and labels["incorrect"] >= 100
    assert len({(c.question, c.response, c.active_branch) for c in LABELLED}) == len(LABELLED)


def test_realistic_and_adversarial_sets_are_large_and_cover_every_kind() -> None:
    assert len(REALISTIC) >= 300 and len(ADVERSARIAL) >= 150
    for cases, kinds in (
            (REALISTIC, ("plain", "final-answer", "cot-wrong-first", "markdown", "preamble", "long-explanation",
                         "spanish", "german", "french", "japanese", "chinese", "belief", "emotion", "yes-no",
                         "yes-no-explanation", "why")),
            (ADVERSARIAL, ("strike", "cross-tick", "question-mark", "emoji", "emoji-only", "shrug", "sarcasm",
                           "capitals", "label-separator", "several-labels", "role-swap", "question-copy", "reversal",
                           "exact-with-marks", "yes-no-contradiction", "bidi"))):
        found = Counter(case.note for case in cases)
        for kind in kinds:
            assert found[kind] >= 1, kind
        assert {case.label for case in cases} == {"correct", "incorrect", "unclear"}
        assert len({(c.question, c.response) for c in cases}) == len(cases)
    assert sum(case.label == "unclear" for case in ADVERSARIAL) >= 150


def test_red_team_sets_cover_every_question_kind_and_reply_kind() -> None:
    """The blind red-team sets: questions of every benchmark style (ToMi candidates, ToMBench's four options,
    OpenToM, BigToM's a/b, yes/no, second order, feelings, "which would X pick", "why" with a rubric) and the
    reply kinds an independent reviewer writes."""
    assert len(REDTEAM_REALISTIC) + len(REDTEAM_ADVERSARIAL) >= 400
    for cases, kinds in (
            (REDTEAM_REALISTIC, ("plain", "final-answer", "cot-wrong-first", "markdown", "preamble", "long-explanation",
                                 "restated", "spanish", "german", "french", "japanese", "chinese", "belief", "emotion",
                                 "number", "quoted", "article-plural", "typo", "emoji-trailing", "yes-no",
                                 "yes-no-explanation", "why", "second-order", "desire")),
            (REDTEAM_ADVERSARIAL, ("self-correction", "both-options", "conditional", "negation", "hedge", "sarcasm",
                                   "irony", "different-question", "refusal", "inside-word", "label-in-prose",
                                   "letter-list", "table", "code-block", "html", "latex", "zero-width", "bidi",
                                   "homoglyph", "full-width", "repeated", "empty-looking", "question-copy",
                                   "role-swap", "strike", "label-separator"))):
        found = Counter(case.note for case in cases)
        assert [kind for kind in kinds if not found[kind]] == []
        assert len({(c.question, c.response) for c in cases}) == len(cases)
    assert sum(case.rubric is not None for case in REDTEAM_REALISTIC) >= 10
    assert Counter(case.label for case in REDTEAM_ADVERSARIAL)["unclear"] >= 200


@pytest.mark.parametrize(("cases", "least_decided"), [(LABELLED, 0.4), (CASES, 0.4), (AUDIT, 0.3), (REALISTIC, 0.6),
                                                      (ADVERSARIAL, 0.1), (REDTEAM_REALISTIC, 0.5),
                                                      (REDTEAM_ADVERSARIAL, 0.08), (REDTEAM_PROBES, 0.2)],
                         ids=["labelled-replies", "sample-calibration", "audit", "realistic", "adversarial",
                              "redteam-realistic", "redteam-adversarial", "redteam-probes"])
async def test_rules_judge_makes_no_wrong_decided_verdict(cases: list, least_decided: float) -> None:
    figures = await bench.measure(RulesJudge(), cases, SAMPLE)
    wrong = [(o.case.question or o.case.story_id, o.case.response, o.case.label) for o in figures.wrong]
    assert wrong == []
    # it must still decide the plain cases: a judge that never decides would pass the line above (the audit set
    # is mostly replies written to be hard)
    assert figures.coverage >= least_decided


@pytest.mark.parametrize("kind", ["plain", "letter", "option-text", "chinese", "japanese", "case"])
async def test_plain_answers_are_decided(kind: str) -> None:
    cases = [case for case in LABELLED if case.note == kind]
    figures = await bench.measure(RulesJudge(), cases, SAMPLE)
    undecided = [o.case.response for o in figures.outcomes if o.correct is None]
    assert len(undecided) <= len(cases) // 4, undecided


@pytest.mark.parametrize("cases", [REALISTIC, REDTEAM_REALISTIC], ids=["realistic", "redteam-realistic"])
async def test_half_the_realistic_right_answers_to_other_than_why_questions_are_decided(cases: list) -> None:
    figures = await bench.measure(RulesJudge(), cases, SAMPLE)
    right = [o for o in figures.outcomes if o.case.label == "correct" and not bench.is_why(o.case)]
    decided = sum(o.correct is not None for o in right)
    assert len(right) >= 200 and decided >= len(right) / 2, (decided, len(right))


@pytest.mark.parametrize("cases", [REALISTIC, ADVERSARIAL, AUDIT, REDTEAM_REALISTIC, REDTEAM_ADVERSARIAL,
                                   REDTEAM_PROBES],
                         ids=["realistic", "adversarial", "audit", "redteam-realistic", "redteam-adversarial",
                              "redteam-probes"])
async def test_commet_evaluate_with_a_replay_model_judges_as_the_unit_path(cases: list, tmp_path) -> None:  # noqa: ANN001
    """The engine's path (the StoryTurn's options, the judge's request, branch rules) gives every reply the
    verdict the judge gives it alone: independent sets are scored that way."""
    unit = await bench.measure(RulesJudge(), cases, SAMPLE)
    engine = await bench.measure_through_eval("rules", cases, tmp_path / "calibration.sqlite")
    assert [o.correct for o in engine.outcomes] == [o.correct for o in unit.outcomes]
    assert engine.wrong == []


def test_commet_eval_from_a_dataset_file_judges_as_the_unit_path(tmp_path) -> None:  # noqa: ANN001
    """Through the command line: a JSONL dataset (one StoryTurn a reply, options as the file gives them) and a
    replay file of the replies; each turn's stored verdict is the unit path's."""
    import json

    from typer.testing import CliRunner

    from commet.cli import app
    from commet.store import Store

    cases = [c for c in REALISTIC + ADVERSARIAL + REDTEAM_REALISTIC + REDTEAM_ADVERSARIAL
             if c.active_branch is None][::6]
    lines, replies = [], {}
    for i, case in enumerate(cases):
        lines.append(json.dumps({
            "id": f"case-{i}", "task": "false_belief_location", "category": "Belief", "mental_states": [],
            "image_dependent": False, "source": "test", "meta": {},
            "turns": [{"story": "A story.", "feedback": None, "question": case.question, "image": None,
                       "answers": list(case.expected), "rubric": None, "meta": {},
                       "options": [{"label": label, "text": text} for label, text in case.options]}]},
            ensure_ascii=False))
        replies[f"case-{i}"] = [case.response]
    (tmp_path / "data.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "replies.json").write_text(json.dumps(replies, ensure_ascii=False), encoding="utf-8")
    result = CliRunner().invoke(app, ["eval", "--dataset", str(tmp_path / "data.jsonl"), "--model",
                                      f"replay:{tmp_path / 'replies.json'}", "--judge", "rules", "--quiet", "--force",
                                      "--db", str(tmp_path / "r.sqlite"), "--run", "replayed"])
    assert result.exit_code == 0, result.output
    with Store(tmp_path / "r.sqlite") as store:
        run = store.get_run("replayed")
        assert run is not None
        stored = {row.story_id: row.correct for row in store.turn_rows(run.id)}
    unit = [RulesJudge().decide(bench.request_for(case, SAMPLE)) for case in cases]
    assert [stored[f"case-{i}"] for i in range(len(cases))] == [v.correct for v in unit]
    assert len(cases) >= 100 and sum(v.correct is not None for v in unit) >= 30
