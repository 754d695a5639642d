"""Re-judging stored responses with another judge: no model call, branch rules re-applied, feedback compared."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.cli import app
from commet.engine import EvalSettings, evaluate, evaluate_async
from commet.engine.rejudge import FeedbackChange, RejudgeError, rejudge
from commet.judges import create_judge
from commet.judges.prompts import PROMPT_VERSION
from commet.store import Store
from tests.judge_server import REPLIES, JudgeServer, verdict, write_dataset, write_replies

LLM = f"llm:openai:judge-model@{PROMPT_VERSION}"


@pytest.fixture(autouse=True)
def _dummy_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-test-key")


def fair(model: str, answer: str, expected: list[str], question: str) -> str:
    """Right for 'why' answers that mention seeing or different likes; 'the sweet one' is the apple."""
    if "sweet one" in answer:
        return verdict(True, 1, "the sweet one is the apple")
    ok = any(w in answer.lower() for w in ("saw", "see", "different"))
    return verdict(ok, 1 if ok else None, "key inference" if ok else "no key inference")


def turns(store: Store, run: str) -> dict[tuple[str, int], dict]:
    record = store.get_run(run)
    assert record is not None
    return {(r.story_id, r.turn): r.columns() for r in store.turn_rows(record.id)}


async def test_rejudge_reuses_responses_reapplies_branches_and_lists_feedback_changes(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "ds")
    replies = {**REPLIES, "dd": ["Hmm, I would go for the sweet one.", "Sam will pick the apple.", "No idea."]}
    model = write_replies(tmp_path / "replies.json", replies)
    db = tmp_path / "r.sqlite"
    # the 'wrong' undecided-feedback policy lets the conversations go on past undecided answers
    await evaluate_async(model, dataset, judge="rules", db=db, run="base",
                         settings=EvalSettings(undecided_feedback="wrong"))
    with JudgeServer(fair) as server, Store(db) as store:
        judge = create_judge(server.spec())
        report = await rejudge(store, "base", judge, dataset)
        await judge.aclose()
        assert server.calls == 2  # fb 1 and dd 0: what the rules left undecided ("No idea." is decided wrong)
        old, new = turns(store, "base"), turns(store, report.run.name)
        model_calls = store.db.execute("SELECT COUNT(*) FROM call_log WHERE run_id = ? AND kind = 'model'",
                                       (report.run.id,)).fetchone()[0]
        stories = {r.story_id: r.columns()["correct"] for r in store.story_rows(report.run.id)}
    assert report.run.name == f"base~rules+{LLM}" and report.run.judge == f"rules+{LLM}"
    assert report.run.settings.rejudged_from == "base" and report.run.model == "replay:replies.json"
    assert model_calls == 0
    for key, row in old.items():  # the conversation stays as it happened
        assert {f: new[key][f] for f in ("prompt", "response", "feedback_kind", "model_key")} == \
               {f: row[f] for f in ("prompt", "response", "feedback_kind", "model_key")}
    assert old[("fb", 1)]["correct"] is None and new[("fb", 1)]["correct"] == 1
    # 'the sweet one' fixes the apple branch, so the rules' match of 'apple' at turn 1 is now the wrong branch
    assert old[("dd", 1)]["correct"] == 1 and new[("dd", 1)]["correct"] == 0
    assert new[("dd", 1)]["active_branch"] == 0 and "branch 1" in new[("dd", 1)]["rationale"]
    assert report.decided_by == {"rules": 4, LLM: 2}
    assert (report.judge_calls, report.cached) == (6, 0)
    assert report.feedback_changes == [FeedbackChange("fb", 2, "wrong-undecided", "right"),
                                       FeedbackChange("dd", 1, "none", "answer:Apple"),
                                       FeedbackChange("dd", 2, "right", "wrong")]
    assert report.changed == [("fb", 1, None, True), ("dd", 0, None, True), ("dd", 1, True, False)]
    assert stories == {"fb": 1, "dd": 0}


async def test_rejudging_the_same_answers_again_costs_no_call(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "ds")
    model = write_replies(tmp_path / "replies.json")
    db = tmp_path / "r.sqlite"
    with JudgeServer(fair) as server, Store(db) as store:
        await evaluate_async(model, dataset, judge=server.spec(), db=db, run="base")
        assert server.calls == 2
        judge = create_judge(server.spec())
        first = await rejudge(store, "base", judge, dataset, new_name="copy")
        again = await rejudge(store, "base", judge, dataset, new_name="copy")  # resuming the same re-judging
        await judge.aclose()
        assert server.calls == 2
    assert first.cached == 6 and again.cached == 6 and first.feedback_changes == []
    with pytest.raises(RejudgeError, match="no run named"):
        await rejudge(Store(db), "nosuch", create_judge("rules"), dataset)


async def test_rejudge_refuses_another_dataset_and_a_taken_name(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "ds")
    model = write_replies(tmp_path / "replies.json")
    db = tmp_path / "r.sqlite"
    await evaluate_async(model, dataset, judge="rules", db=db, run="base")
    dataset.storyturns[0].turns[0].answers = ["The garage"]
    with Store(db) as store:
        with pytest.raises(RejudgeError, match="not the one run"):
            await rejudge(store, "base", create_judge("rules"), dataset)
        with pytest.raises(RejudgeError, match="already exists"):
            await rejudge(store, "base", create_judge("rules"), write_dataset(tmp_path / "ds"), new_name="base")


def test_cli_rejudge_prints_changes_and_both_runs(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "ds")
    model = write_replies(tmp_path / "replies.json")
    db = tmp_path / "r.sqlite"
    evaluate(model, dataset, judge="rules", db=db, run="base", settings=EvalSettings(undecided_feedback="wrong"))
    with JudgeServer(fair) as server:
        result = CliRunner().invoke(app, ["rejudge", "--db", str(db), "--run", "base", "--judge", server.spec(),
                                          "--as", "llm", "--dataset", str(tmp_path / "ds")])
    assert result.exit_code == 0, result.output
    assert server.calls == 2
    assert "re-judged 6 answers of run base into run llm" in result.output
    assert f"decided by: rules 4, {LLM} 2" in result.output
    # the fake judge's replies carry 11 prompt and 3 completion tokens; a base_url model has no price
    assert "judge tokens: 22 in, 6 out, price unknown" in result.output
    assert "1 turns where the new verdicts would have chosen" in result.output
    assert "wrong-undecided" in result.output and "Story accuracy" in result.output
    # without --dataset: found where the run recorded reading it; moved away, the command says to pass it
    found = CliRunner().invoke(app, ["rejudge", "--db", str(db), "--run", "base", "--judge", "rules", "--as", "again"])
    assert found.exit_code == 0, found.output
    (tmp_path / "ds").rename(tmp_path / "moved")
    missing = CliRunner().invoke(app, ["rejudge", "--db", str(db), "--run", "base", "--judge", "rules", "--as", "x"])
    assert missing.exit_code == 2 and "pass it with --dataset" in missing.output


@pytest.mark.parametrize(("edit", "message"), [
    # every stored setting is checked by the one settings model when the store reads the run: the file, the run
    # and the field are named, and nothing is re-judged with a default in its place
    ("'$.generation.temperature', 'hot'", "r.sqlite: run 'base': stored setting generation.temperature='hot' is "
                                          "refused: Input should be a valid number"),
    ("'$.limit', 0", "r.sqlite: run 'base': stored setting limit=0 is refused: Input should be greater than or "
                     "equal to 1"),
    ("'$.undecided_feedback', 'maybe'", "r.sqlite: run 'base': stored setting undecided_feedback='maybe' "
                                        "is not one of stop, skip, wrong"),
])
def test_rejudge_refuses_stored_settings_that_do_not_validate_and_writes_nothing(
        tmp_path: Path, edit: str, message: str) -> None:
    dataset = write_dataset(tmp_path / "ds")
    model = write_replies(tmp_path / "replies.json")
    db = tmp_path / "r.sqlite"
    evaluate(model, dataset, judge="rules", db=db, run="base", settings=EvalSettings(undecided_feedback="wrong"))
    with Store(db) as store:  # a file edited by hand (or written by a newer version with other rules)
        store.db.execute(f"UPDATE runs SET settings_json = json_set(settings_json, {edit}) WHERE name = 'base'")
        runs_before = store.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    result = CliRunner().invoke(app, ["rejudge", "--db", str(db), "--run", "base", "--judge", "rules",
                                      "--dataset", str(tmp_path / "ds")])
    assert result.exit_code == 2, result.output
    line = result.output.strip()
    assert "\n" not in line and "Traceback" not in line
    assert line.startswith("error: ") and message in line, line
    with Store(db) as store:  # refused before a run was created (the default policy wrote no defaults)
        assert store.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == runs_before
