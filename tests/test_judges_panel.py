"""Panels of LLM judges: majority vote, members' verdicts stored, cached like any judge."""

from __future__ import annotations

from pathlib import Path

import pytest

from commet.engine import evaluate_async
from commet.judges import create_judge
from commet.judges.base import JudgeRequest
from commet.judges.cascade import CascadeJudge
from commet.judges.panel import PanelJudge
from commet.judges.prompts import PROMPT_VERSION
from commet.reports.agreement import agreement_report
from commet.store import Store
from tests.judge_server import JudgeServer, verdict, write_dataset, write_replies


@pytest.fixture(autouse=True)
def _dummy_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-test-key")


def name(model: str) -> str:
    return f"llm:openai:{model}@{PROMPT_VERSION}"


def strict_c(model: str, answer: str, expected: list[str], question: str) -> str:
    """judge-a and judge-b accept any answer mentioning seeing or different likes; judge-c accepts nothing."""
    ok = model != "judge-c" and any(w in answer.lower() for w in ("saw", "see", "different"))
    return verdict(ok, 1 if ok else None, f"{model} says {'yes' if ok else 'no'}")


def branch_vote(model: str, answer: str, expected: list[str], question: str) -> str:
    return verdict(True, {"judge-a": 1, "judge-b": 2, "judge-c": 2}[model])


def split_vote(model: str, answer: str, expected: list[str], question: str) -> str:
    return {"judge-a": verdict(True, 1), "judge-b": verdict(False), "judge-c": "not json"}[model]


def panel_spec(server: JudgeServer, prefix: str = "") -> str:
    return prefix + "panel:" + ",".join(server.spec(m) for m in ("judge-a", "judge-b", "judge-c"))


REQUEST = JudgeRequest(story_id="dd", task="diverse_desire", turn=1, context=(), story="",
                       question="Which snack will Sam pick, the apple or the chocolate?",
                       expected=("Chocolate", "Apple"), response="He saw the apple and picked it.")


async def test_panel_majority_wins_and_every_members_verdict_is_kept() -> None:
    with JudgeServer(strict_c) as server:
        panel = create_judge(panel_spec(server, "llm-only:"))
        assert isinstance(panel, PanelJudge)
        assert panel.name == f"panel({name('judge-a')},{name('judge-b')},{name('judge-c')})"
        got = await panel.judge(REQUEST)
        await panel.aclose()
    assert (got.outcome, got.branch, got.judge) == ("correct", 0, panel.name)
    assert got.rationale.startswith("2 of 3 members")
    members = got.details["members"]
    assert [(m["judge"], m["outcome"]) for m in members] == [
        (name("judge-a"), "correct"), (name("judge-b"), "correct"), (name("judge-c"), "incorrect")]
    assert sorted(server.models_called()) == ["judge-a", "judge-b", "judge-c"]


async def test_panel_majority_is_on_outcome_and_branch() -> None:
    with JudgeServer(branch_vote) as server:
        panel = create_judge(panel_spec(server, "llm-only:"))
        got = await panel.judge(REQUEST)
        await panel.aclose()
    assert (got.outcome, got.branch) == ("correct", 1)


async def test_panel_without_majority_is_undecided_and_not_cached_when_a_member_failed() -> None:
    with JudgeServer(split_vote) as server:
        panel = create_judge(panel_spec(server, "llm-only:"))
        got = await panel.judge(REQUEST)
        await panel.aclose()
    assert got.outcome == "undecided" and got.rationale.startswith("no majority")
    assert "unparseable" in str(got.error)  # the engine does not cache it
    assert [m["outcome"] for m in got.details["members"]] == ["correct", "incorrect", "undecided"]


async def test_panel_run_sits_behind_the_rules_stores_members_and_is_cached(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "ds")
    model = write_replies(tmp_path / "replies.json")
    db = tmp_path / "r.sqlite"
    with JudgeServer(strict_c) as server:
        judge = create_judge(panel_spec(server))
        assert isinstance(judge, CascadeJudge) and isinstance(judge.fallback, PanelJudge)
        await judge.aclose()
        await evaluate_async(model, dataset, judge=panel_spec(server), db=db, run="panel")
        assert server.calls == 6  # two "why" answers, three members each
        await evaluate_async(model, dataset, judge=panel_spec(server), db=db, run="again")
        assert server.calls == 6
    with Store(db) as store:
        run = store.get_run("panel")
        assert run is not None
        rows = store.turn_rows(run.id)
        panel_rows = [r for r in rows if (r.judge or "").startswith("panel(")]
        assert len(panel_rows) == 2 and all(r.correct is True for r in panel_rows)
        details = store.cached_judgment(panel_rows[0].judgment_key or "").details
        assert len(details["members"]) == 3
        # one panel run gives the members' pairwise agreement (on the answers the panel judged)
        report = agreement_report(store, ["panel"])
    pairs = {(a.a, a.b): (a.agree, a.disagree) for a in report.pairwise}
    assert pairs[(name("judge-a"), name("judge-b"))] == (2, 0)
    assert pairs[(name("judge-a"), name("judge-c"))] == (0, 2)
    assert report.disagreements == 2
