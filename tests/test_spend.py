"""Spend: judge tokens recorded and priced like model tokens, unknown prices said out loud, and
``--max-cost`` stopping a run cleanly (resumable) before its estimated spend passes the limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.cli import EXIT_SPEND_LIMIT, app
from commet.store import Store
from tests.fakeservers import FakeServer, openai_reply
from tests.judge_server import JudgeServer, verdict

#: 1 USD per million input tokens, 2 per million output: each fake reply (11 in, 3 out) costs 17e-6 USD
PRICED = "price_in=1&price_out=2"


@pytest.fixture(autouse=True)
def _dummy_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-test-key")


def _eval(args: list[str]):  # noqa: ANN202 - click's Result
    return CliRunner().invoke(app, ["eval", "--quiet", *args])


def test_judge_tokens_are_recorded_and_priced(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with FakeServer("openai", responder=lambda r: openai_reply("Because she did not see it.")) as model, \
            JudgeServer(lambda *_: verdict(True, 1)) as judge:
        result = _eval(["--model", f"openai:cand?base_url={model.url}/v1&{PRICED}", "--limit", "3",
                        "--judge", f"openai:j?base_url={judge.fake.url}/v1&{PRICED}", "--db", str(db), "--run", "r"])
        judged = judge.calls
    assert result.exit_code == 0, result.output
    assert judged > 0
    with Store(db) as store:
        run = store.get_run("r")
        assert run is not None
        spend = store.spend(run.id)
    assert (spend.judge_input_tokens, spend.judge_output_tokens) == (11 * judged, 3 * judged)
    assert spend.judge_cost == pytest.approx(judged * 17e-6)
    assert f"judge: {11 * judged} in, {3 * judged} out, estimated cost ${judged * 17e-6:.4f}" in result.output


def test_unknown_prices_are_said_and_a_spend_limit_refuses_them(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with FakeServer("openai") as model:
        result = _eval(["--model", f"openai:gpt-5.4?base_url={model.url}/v1", "--limit", "1", "--db", str(db)])
        assert result.exit_code == 0, result.output
        assert "price unknown" in result.output
        limited = _eval(["--model", f"openai:gpt-5.4?base_url={model.url}/v1", "--limit", "1", "--db", str(db),
                         "--run", "x", "--max-cost", "1"])
    assert limited.exit_code == 2 and "price unknown" in limited.output and "Traceback" not in limited.output


def test_max_cost_stops_cleanly_and_a_rerun_resumes_without_repeating_calls(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    spec_args = ["--limit", "12", "--concurrency", "2", "--db", str(db), "--run", "r"]
    with FakeServer("openai", responder=lambda r: openai_reply("The basket.")) as model:
        spec = f"openai:cand?base_url={model.url}/v1&{PRICED}"
        stopped = _eval(["--model", spec, *spec_args, "--max-cost", "0.0002"])  # about 11 calls
        first_calls = len(model.requests)
        assert stopped.exit_code == EXIT_SPEND_LIMIT, stopped.output
        assert "raise --max-cost and run the same command again to resume" in stopped.output
        with Store(db) as store:
            run = store.get_run("r")
            assert run is not None and run.status == "stopped-spend-limit"
            spent = store.spend(run.id)
        assert (spent.model_input_tokens * 1 + spent.model_output_tokens * 2) / 1e6 <= 0.0002
        assert 0 < first_calls < 30
        resumed = _eval(["--model", spec, *spec_args, "--max-cost", "1"])
        assert resumed.exit_code == 0, resumed.output
        with Store(db) as store:
            run = store.get_run("r")
            assert run is not None and run.status == "done"
            made = store.db.execute("SELECT COUNT(*) FROM call_log WHERE run_id = ? AND kind = 'model' AND cached = 0",
                                    (run.id,)).fetchone()[0]
        bodies = [json.dumps(r.json, sort_keys=True) for r in model.requests]
    # every request reached the server once: the rerun answered the first session's calls from the store
    assert len(bodies) == len(set(bodies)) == made
