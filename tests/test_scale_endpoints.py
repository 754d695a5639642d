"""One model spec, several OpenAI-compatible endpoints (replicas): spread load, survive a failing one."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from commet.engine import evaluate_async
from commet.models.base import ModelSpecError
from commet.models.endpoints import Endpoint, EndpointPool
from commet.models.registry import create_model
from tests.fakeservers import FakeServer, RecordedRequest, Reply, error_reply
from tests.test_scale_processes import answer, write_stories


def turns(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as con:
        return con.execute("SELECT story_id, turn, prompt, response, correct, branch, feedback_kind, error_kind "
                           "FROM turns ORDER BY story_id, turn").fetchall()


def paced(request: RecordedRequest) -> Reply:
    reply = answer(request)
    reply.delay = 0.01
    return reply


@pytest.mark.parametrize("failure", ["refused", "http_500"])
async def test_three_endpoints_one_failing_give_the_same_results_spread_evenly(tmp_path: Path, failure: str) -> None:
    dataset = write_stories(tmp_path / "stories.jsonl", 40)
    with FakeServer("openai", paced) as alone, FakeServer("openai", paced) as a, FakeServer("openai", paced) as b, \
            FakeServer("openai", lambda request: error_reply(500, "replica down")) as broken:
        bad_url = broken.url
        if failure == "refused":
            broken.stop()  # nothing listens there any more
        await evaluate_async(f"openai:fake?base_url={alone.url}/v1", dataset, db=tmp_path / "one.sqlite",
                             run="r", concurrency=8)
        spec = f"openai:fake?base_url={a.url}/v1,{bad_url}/v1,{b.url}/v1&backoff_base=0.01"
        summary = await evaluate_async(spec, dataset, db=tmp_path / "three.sqlite", run="r", concurrency=8)
        served = [len(a.requests), len(b.requests)]
        failed_there = len(broken.requests)
    assert summary.progress.errors == 0 and summary.run.status == "done"
    assert turns(tmp_path / "three.sqlite") == turns(tmp_path / "one.sqlite")
    assert len(turns(tmp_path / "one.sqlite")) == 120 and len(alone.requests) == 120
    assert sum(served) == 120  # every call answered once, by a healthy replica
    assert abs(served[0] - served[1]) <= 0.2 * max(served), served
    if failure == "http_500":
        assert 1 <= failed_there <= 10  # taken out after its failures, not asked for every call


def test_a_failing_endpoint_is_taken_out_and_tried_again_later() -> None:
    now = [0.0]
    pool = EndpointPool([Endpoint(name, name) for name in ("a", "b")], clock=lambda: now[0])
    picks = [pool.pick() for _ in range(4)]
    assert sorted(e.url for e in picks) == ["a", "a", "b", "b"]  # least outstanding work
    for endpoint in picks:
        pool.done(endpoint, failed=endpoint.url == "b")
    assert [e.url for e in pool.healthy()] == ["a"]  # b failed twice in a row: out for a while
    assert {pool.pick().url for _ in range(3)} == {"a"}
    now[0] = 2.5
    assert [e.url for e in pool.healthy()] == ["a", "b"]  # cool-down over: tried again
    probe = next(e for e in (pool.pick(), pool.pick()) if e.url == "b")
    pool.done(probe, failed=True)  # still failing: out again, for twice as long
    assert [e.url for e in pool.healthy()] == ["a"] and probe.out_until == pytest.approx(6.5)
    assert pool.pick({"a"}).url == "b"  # nothing healthy left to try: the one back soonest


def test_several_base_urls_are_recorded_sorted_and_only_where_supported() -> None:
    one = create_model("openai:m?base_url=http://b:1/v1,http://a:1/v1")
    two = create_model("openai:m?base_url=http://a:1/v1, http://b:1/v1")
    assert one.identity() == two.identity() and one.identity()["base_url"] == "http://a:1/v1,http://b:1/v1"
    assert [e.url for e in one.pool.endpoints] == ["http://b:1/v1", "http://a:1/v1"]
    with pytest.raises(ModelSpecError, match="openai: .*only"):
        create_model("anthropic:m?base_url=http://a:1,http://b:1")


async def test_sweep_cells_run_at_once_within_one_concurrency_per_endpoint(tmp_path: Path) -> None:
    import threading
    import time

    from commet.engine.sweep import SweepConfig, run_sweep

    dataset = write_stories(tmp_path / "stories.jsonl", 12)
    lock, in_flight, peak = threading.Lock(), [0], [0]

    def counted(request: RecordedRequest) -> Reply:
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        time.sleep(0.05)
        with lock:
            in_flight[0] -= 1
        return answer(request)

    with FakeServer("openai", counted) as server:
        url = f"{server.url}/v1"
        config = SweepConfig(models=[f"openai:m1?base_url={url}", f"openai:m2?base_url={url}"],
                             datasets=[str(dataset)], feedback=["original", "correctness"], concurrency=4,
                             db=tmp_path / "sweep.sqlite")
        names = await run_sweep(config)
        by_model = {m: [r.at for r in server.requests if r.json["model"] == m] for m in ("m1", "m2")}
        calls = len(server.requests)
    assert len(names) == 4 and calls == len({r.raw for r in server.requests}) > 100  # shared turns asked once
    assert peak[0] == 4  # one endpoint: the cells share its 4 slots, and fill them
    assert min(by_model["m2"]) < max(by_model["m1"])  # the cells overlap in time


def test_a_panel_member_may_list_several_endpoints() -> None:
    from commet.judges.registry import create_judge

    panel = create_judge("llm-only:panel:openai:a?base_url=http://x:1/v1,http://y:1/v1,rules,"
                         "llm-only:openai:b?base_url=http://z:1")
    assert len(panel.members) == 3
    assert [e.url for e in panel.members[0].model.pool.endpoints] == ["http://x:1/v1", "http://y:1/v1"]


async def test_the_llm_pipeline_keeps_its_chat_replies_in_a_store(tmp_path: Path) -> None:
    import json

    from commet.generation.llm import GenerationOptions, create_image_model, generate_storyturns
    from commet.sources import load_dataset
    from commet.store.sqlite import Store
    from tests.fakeservers import openai_reply
    from tests.llm_gen_servers import openai_image_reply, small_png
    from tests.test_generate_llm import EXEMPLAR, GOOD

    source = tmp_path / "src.jsonl"
    source.write_text(json.dumps(EXEMPLAR) + "\n")
    exemplars = load_dataset(source)
    exemplars.images["snack_table_1.png"] = small_png()
    exemplars = load_dataset(exemplars.save(tmp_path / "exemplars"))
    png = small_png()
    with FakeServer("openai", lambda r: openai_reply(json.dumps(GOOD))) as chat, \
            FakeServer("openai", lambda r: openai_image_reply(png)) as images, Store(tmp_path / "gen.sqlite") as cache:
        model = create_model(f"openai:gen?base_url={chat.url}/v1")
        painter = create_image_model(f"openai:gpt-image-1?base_url={images.url}/v1")
        options = GenerationOptions(task="diverse_desire", count=3, concurrency=3, seed=1)
        first = await generate_storyturns(model, painter, exemplars, options, cache=cache)
        assert len(chat.requests) == 3 and len(first.items) == 3  # three items at once, one call each
        again = await generate_storyturns(model, painter, exemplars, options, cache=cache)  # a rerun after a crash
        assert len(chat.requests) == 3  # every reply from the store
        assert [i.storyturn for i in again.items] == [i.storyturn for i in first.items]
        taken = {i.storyturn.id for i in first.items}
        more = await generate_storyturns(model, painter, exemplars, options, cache=cache, taken_ids=taken)
        assert len(chat.requests) == 6 and not taken & {i.storyturn.id for i in more.items}  # new items: asked afresh
        await model.aclose()
        await painter.aclose()
