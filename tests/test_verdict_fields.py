"""A verdict's spend and failure are typed fields (usage, cost_usd, error, error_kind), while the judgment
cache keeps storing them in the details JSON exactly as before: stores written by earlier versions read back
the same, and new rows are byte for byte what earlier versions wrote."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from commet.engine import evaluate_async
from commet.judges import create_judge
from commet.judges.base import JudgeRequest, Verdict
from commet.models.base import Usage
from commet.store import Store
from tests.fakeservers import openai_reply
from tests.judge_server import JudgeServer, verdict, write_dataset, write_replies

#: 11 prompt and 3 completion tokens per reply (the fake server's usage) at 2 and 10 USD per million
PRICED = "&price_in=2&price_out=10"
ONE_CALL_USD = 5.2e-05  # (11 * 2 + 3 * 10) / 1e6


@pytest.fixture(autouse=True)
def _dummy_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-test-key")


def always_right(model: str, answer: str, expected: list[str], question: str) -> str:
    return verdict(True, 1, "fine")


def judgment_rows(db: Path) -> list[str]:
    with sqlite3.connect(db) as connection:
        return [row[0] for row in connection.execute("SELECT details_json FROM judgments ORDER BY key")]


async def test_an_llm_judges_spend_is_typed_and_stored_as_earlier_versions_stored_it(tmp_path: Path) -> None:
    dataset, model, db = write_dataset(tmp_path / "ds"), write_replies(tmp_path / "r.json"), tmp_path / "s.sqlite"
    with JudgeServer(always_right) as server:
        judge = create_judge("llm-only:" + server.spec("judge-a") + PRICED)
        got = await judge.judge(_request())
        await judge.aclose()
        assert (got.usage, got.cost_usd, got.error, got.error_kind) == (Usage(11, 3), ONE_CALL_USD, None, None)
        assert got.details == {"attempts": 1} and got.spent() == (11, 3, ONE_CALL_USD)
        summary = await evaluate_async(model, dataset, judge="llm-only:" + server.spec("judge-a") + PRICED, db=db,
                                       run="first")
    rows = judgment_rows(db)
    assert len(rows) == 6  # every turn went to the LLM judge
    # the exact text earlier versions wrote: the typed fields under their old keys, sorted
    assert set(rows) == {'{"attempts": 1, "cost_usd": 5.2e-05, "usage": {"input_tokens": 11, "output_tokens": 3}}'}
    with Store(db) as store:
        spend = store.spend(summary.run.id)
    assert (spend.judge_input_tokens, spend.judge_output_tokens) == (66, 18)
    assert spend.judge_cost == pytest.approx(6 * ONE_CALL_USD)


async def test_an_unpriced_judge_stores_a_null_cost_and_reads_back_unknown(tmp_path: Path) -> None:
    dataset, model, db = write_dataset(tmp_path / "ds"), write_replies(tmp_path / "r.json"), tmp_path / "s.sqlite"
    with JudgeServer(always_right) as server:
        server.fake.queue(openai_reply("not a verdict"))  # the first judgment needs a second attempt
        await evaluate_async(model, dataset, judge="llm-only:" + server.spec("judge-a"), db=db, run="first",
                             concurrency=1)
    rows = judgment_rows(db)
    assert '{"attempts": 2, "cost_usd": null, "usage": {"input_tokens": 22, "output_tokens": 6}}' in rows
    with Store(db) as store:
        cached = [store.cached_judgment(key) for (key,) in store.db.execute("SELECT key FROM judgments")]
    verdicts = [c.verdict() for c in cached if c is not None]
    assert sorted(v.spent() for v in verdicts) == [(11, 3, None)] * 5 + [(22, 6, None)]
    assert all(v.details.keys() == {"attempts"} for v in verdicts)  # the typed keys left the details


async def test_a_panels_spend_sums_its_members_and_is_unknown_when_one_is_unpriced() -> None:
    with JudgeServer(always_right) as server:
        priced = create_judge("llm-only:panel:" + ",".join(server.spec(m) + PRICED for m in ("a", "b", "c")))
        got = await priced.judge(_request())
        await priced.aclose()
        assert (got.usage, got.cost_usd) == (Usage(33, 9), pytest.approx(3 * ONE_CALL_USD))
        server.fake.queue(openai_reply("no verdict"), openai_reply("none"), openai_reply("still none"))
        mixed = create_judge("llm-only:panel:" + ",".join([server.spec("a"), server.spec("b") + PRICED,
                                                            server.spec("c") + PRICED]))
        got = await mixed.judge(_request())
        await mixed.aclose()
    assert got.usage is not None and got.cost_usd is None  # one member's price is unknown
    assert got.stored_details()["cost_usd"] is None and "error" not in got.stored_details()


def _legacy_store(db: Path, rows: dict[str, dict[str, object]]) -> None:
    """Judgment rows written the way earlier versions wrote them: everything in one details JSON."""
    with Store(db) as store:
        run = store.create_run(name="legacy", model="replay:x", judge="llm:openai:j@judge-v2", settings={},
                               config_hash="c", dataset_name="d", dataset_hash="h", package_version="0",
                               story_count=1)
        for key, details in rows.items():
            store.record_judgment(run_id=run.id, story_id="s", turn=0, key=key, judge="llm:openai:j@judge-v2",
                                  request_json="{}", outcome="correct", branch=0, rationale="ok", details=details,
                                  latency_s=0.1)


@pytest.mark.parametrize(("details", "fields", "extras"), [
    ({"attempts": 1, "cost_usd": 0.25, "usage": {"input_tokens": 7, "output_tokens": 2}},
     (Usage(7, 2), 0.25, None, None), {"attempts": 1}),
    ({"attempts": 3, "cost_usd": None, "usage": {"input_tokens": 7, "output_tokens": 2}, "rules": "unsure"},
     (Usage(7, 2), None, None, None), {"attempts": 3, "rules": "unsure"}),
    ({"usage": {"input_tokens": 5, "output_tokens": 1}}, (Usage(5, 1), None, None, None), {}),  # no cost: unknown
    ({"members": [{"judge": "rules", "outcome": "correct"}]}, (None, None, None, None),
     {"members": [{"judge": "rules", "outcome": "correct"}]}),  # free judges: nothing spent
    ({"cost_usd": 0.5}, (Usage(0, 0), 0.5, None, None), {}),
    ({"usage": "garbled", "cost_usd": "x"}, (Usage(0, 0), None, None, None), {}),  # counted, price unknown
    ({"error": "HTTP 503", "error_kind": "judge_http_503", "usage": {"input_tokens": 1, "output_tokens": 0},
      "cost_usd": 0}, (Usage(1, 0), 0.0, "HTTP 503", "judge_http_503"), {}),
])
def test_judgments_stored_by_earlier_versions_read_back_with_typed_fields(
        tmp_path: Path, details: dict[str, object], fields: tuple[object, ...], extras: dict[str, object]) -> None:
    db = tmp_path / "old.sqlite"
    _legacy_store(db, {"k1": details})
    with Store(db) as store:
        cached = store.cached_judgment("k1")
    assert cached is not None
    got = cached.verdict()
    assert (got.outcome, got.branch, got.rationale, got.judge) == ("correct", 0, "ok", "llm:openai:j@judge-v2")
    assert (got.usage, got.cost_usd, got.error, got.error_kind) == fields
    assert got.details == extras
    assert cached.details == details  # the raw JSON (panel members for the agreement report) is unchanged


def test_stored_details_and_from_stored_are_inverse() -> None:
    shapes = [Verdict("correct", 1, "r", "j"),
              Verdict("incorrect", None, "r", "j", {"attempts": 2}, Usage(3, 4), 0.001),
              Verdict("incorrect", None, "r", "j", {"attempts": 2}, Usage(3, 4), None),
              Verdict("undecided", None, "r", "j", {"raw": "x"}, Usage(1, 1), 0.0, "unparseable", "judge_unparseable")]
    for original in shapes:
        stored = json.loads(json.dumps(original.stored_details(), sort_keys=True))
        assert Verdict.from_stored(original.outcome, original.branch, original.rationale, original.judge,
                                   stored) == original
    assert shapes[0].stored_details() == {} and shapes[0].spent() == (0, 0, 0.0)


def _request() -> JudgeRequest:
    return JudgeRequest(story_id="fb", task="implicit_false_belief", turn=1, context=(), story="",
                        question="Why will he look there?", expected=("Because he did not see it move.",),
                        response="He never saw it.")
