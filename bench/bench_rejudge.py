"""Re-judging throughput against a real OpenAI-compatible HTTP server with a fixed answer delay.

    python bench/bench_rejudge.py [--stories 200] [--delay 0.1] [--concurrency 64]

Runs the StoryTurns of bench/bench_openai_server.py once with a replayed candidate and the
rules judge (no network), then re-judges the stored answers with the bare LLM judge
``llm-only:openai:judge`` through the same kind of server (its own process, answering every
call after ``--delay`` seconds) at ``--concurrency`` calls in flight. Every turn is one judge
call and no request depends on another's verdict, so the lower bound is
``ceil(calls / concurrency) * delay``. It prints the wall time, the bound, their ratio (goal
<= 1.2) and, side by side, what the same calls would take one after another (the way
``commet rejudge`` worked before it ran concurrently).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import math
import multiprocessing
import os
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stories", type=int, default=200)
    parser.add_argument("--delay", type=float, default=0.1, help="server answer delay, seconds")
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args(argv)

    os.environ.setdefault("OPENAI_API_KEY", "bench-dummy")
    port = server_bench.free_port()
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    server = ctx.Process(target=server_bench.serve, args=(port, args.delay, ready), daemon=True)
    server.start()
    try:
        if not ready.wait(30):
            print("server did not start", file=sys.stderr)
            return 1
        base_url = f"http://127.0.0.1:{port}"
        import commet.engine  # noqa: F401 - import cost outside the timed region

        result = asyncio.run(run(args, base_url))
        with urllib.request.urlopen(f"{base_url}/stats") as response:
            counts = json.loads(response.read())
    finally:
        server.terminate()
        server.join(5)
    print(f"stories={args.stories} delay={args.delay * 1000:.0f}ms concurrency={args.concurrency} "
          f"judge=llm-only:openai:judge")
    print(f"judge calls: made {result['calls']:.0f}, served {counts['judge']:.0f}, turns {result['turns']:.0f}")
    print(f"wall time        {result['wall']:.3f} s")
    print(f"lower bound      {result['bound']:.3f} s  (ceil(calls / concurrency) * delay)")
    print(f"ratio            {result['wall'] / result['bound']:.3f}  (goal <= 1.2)")
    print(f"  one at a time  {result['serial']:.3f} s = {result['serial'] / result['wall']:.1f} x this run "
          "(serial re-judging, as before)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
