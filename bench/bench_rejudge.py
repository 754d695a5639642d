"""Re-judging throughput against a real OpenAI-compatible HTTP server with a fixed answer delay.

    python bench/bench_rejudge.py [--stories 200] [--delay 0.1] [--concurrency 64] [--runs 3]
                               [--server-loop select|epoll]

Runs the StoryTurns of bench/bench_openai_server.py once with a replayed candidate and the
rules judge (no network), then re-judges the stored answers with the bare LLM judge
``llm-only:openai:judge`` through the same kind of server (its own process, answering every
call after ``--delay`` seconds) at ``--concurrency`` calls in flight. Every turn is one judge
call and no request depends on another's verdict, so the lower bound is
``ceil(calls / concurrency) * delay``. It prints the wall time, the bound, their ratio (goal
<= 1.2) and, side by side, a bare aiohttp client making the same number of calls at the same
concurrency (no engine, no store: what this machine, this server and the HTTP library cost by
themselves) and what the same calls would take one after another (the way ``commet rejudge``
worked before it ran concurrently). ``--runs N`` prints medians of N runs of each.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import math
import os
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

_SPEC = importlib.util.spec_from_file_location("bench_openai_server", Path(__file__).with_name("bench_openai_server.py"))
assert _SPEC is not None and _SPEC.loader is not None
server_bench = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = server_bench
_SPEC.loader.exec_module(server_bench)


async def run(args: argparse.Namespace, base_url: str) -> dict[str, float]:
    from commet.engine import EvalSettings, evaluate_async
    from commet.engine.rejudge import rejudge
    from commet.judges import create_judge
    from commet.store import Store

    dataset = server_bench.build_dataset(args.stories)
    replies = {s.id: [t.answers[0] for t in s.turns] for s in dataset.storyturns}
    with tempfile.TemporaryDirectory() as tmp:
        replay = Path(tmp) / "replies.json"
        replay.write_text(json.dumps(replies), encoding="utf-8")
        db = Path(tmp) / "bench.sqlite"
        await evaluate_async(f"replay:{replay}", dataset, judge="rules", db=db, run="base",
                             settings=EvalSettings(undecided_feedback="wrong"), concurrency=64)
        judge = create_judge(f"llm-only:openai:judge?base_url={base_url}/v1&timeout=30")
        with Store(db) as store:
            started = time.perf_counter()
            report = await rejudge(store, "base", judge, dataset, concurrency=args.concurrency)
            wall = time.perf_counter() - started
        await judge.aclose()
    calls = report.judge_calls
    return {"wall": wall, "calls": calls, "bound": math.ceil(calls / args.concurrency) * args.delay,
            "serial": calls * args.delay, "turns": report.turns}


async def bare_client(args: argparse.Namespace, base_url: str, calls: int) -> float:
    """Wall time of ``calls`` judge calls with a small fixed body from ``concurrency`` bare aiohttp workers."""
    import aiohttp

    url = f"{base_url}/v1/chat/completions"
    headers = {"Content-Type": "application/json", "Authorization": "Bearer bench"}
    body = json.dumps({"model": "judge", "messages": [{"role": "user", "content": "Is the answer right?"}]}).encode()
    left = iter(range(calls))

    async def worker(session: aiohttp.ClientSession) -> None:
        for _ in left:
            async with session.post(url, data=body, headers=headers) as response:
                json.loads(await response.read())

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1000)) as session:
        started = time.perf_counter()
        await asyncio.gather(*(worker(session) for _ in range(min(args.concurrency, calls))))
        return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stories", type=int, default=200)
    parser.add_argument("--delay", type=float, default=0.1, help="server answer delay, seconds")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--runs", type=int, default=1, help="runs of each, medians printed")
    server_bench.add_server_loop_option(parser)
    args = parser.parse_args(argv)

    os.environ.setdefault("OPENAI_API_KEY", "bench-dummy")
    port = server_bench.free_port()
    server, ready, precise = server_bench.start_server(port, args)
    try:
        if not ready.wait(30):
            print("server did not start", file=sys.stderr)
            return 1
        base_url = f"http://127.0.0.1:{port}"
        import commet.engine  # noqa: F401 - import cost outside the timed region

        results, bare_walls = [], []
        for _ in range(max(1, args.runs)):
            results.append(asyncio.run(run(args, base_url)))
            bare_walls.append(asyncio.run(bare_client(args, base_url, int(results[-1]["calls"]))))
        with urllib.request.urlopen(f"{base_url}/stats") as response:
            counts = json.loads(response.read())
    finally:
        server.terminate()
        server.join(5)
    result = results[0]
    wall = statistics.median(r["wall"] for r in results)
    bare = statistics.median(bare_walls)
    bound = result["bound"]
    print(f"stories={args.stories} delay={args.delay * 1000:.0f}ms concurrency={args.concurrency} "
          f"judge=llm-only:openai:judge runs={len(results)} (medians) server loop={'select' if precise else 'epoll'}")
    print(f"judge calls per run: made {result['calls']:.0f}, turns {result['turns']:.0f}; "
          f"served in all {counts['judge']:.0f}; the server held each "
          f"{counts['held_over'] * 1000 / max(counts['cand'] + counts['judge'], 1):.3f} ms over the delay (all runs)")
    print(f"lower bound               {bound:.3f} s  (ceil(calls / concurrency) * delay)")
    print(f"commet rejudge            {wall:.3f} s  ratio {wall / bound:.3f}  (goal <= 1.2)")
    print(f"bare aiohttp client       {bare:.3f} s  ratio {bare / bound:.3f}  (same calls, same concurrency)")
    print(f"rejudge / bare client     {wall / bare:.3f}")
    print(f"  one at a time           {result['serial']:.3f} s = {result['serial'] / wall:.1f} x this run "
          "(serial re-judging, as before)")
    if len(results) > 1:
        print("  rejudge per run: " + " ".join(f"{r['wall']:.3f}" for r in results))
        print("  bare client per run: " + " ".join(f"{b:.3f}" for b in bare_walls))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
