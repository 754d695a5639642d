"""The engine's own work per call, counted in instructions: steady where CPU time on a shared machine is not.

    python bench/bench_engine_instructions.py [--stories 100,400] [--against OTHER/src]

Runs the workload of bench/bench_openai_server.py (its StoryTurns, its candidate and LLM judge, its
replies) in process with the OpenAI-compatible transport's HTTP post answered at once, for two dataset
sizes, each in a process of its own under valgrind's cachegrind, and prints the instructions of each
process and their difference per call: what CoMMET does for a call beyond HTTP (the conversation's
body and cache key, the judge's prompt and verdict, the store's rows, the schedule), without the
imports and start-up both sizes share. A count repeats to about 0.1 % from one run to the next, so a
change of 1 % shows, where five runs of CPU time on this 2-core machine spread over 10 % and more.
The aiohttp client's own work per call is measured beside a bare client by bench_openai_server.py.
``--against`` counts another checkout's ``src`` the same way (a worktree of an earlier commit, say:
``git worktree add /tmp/before <commit>``) and prints the two side by side with their ratio.

Without valgrind it says so and prints CPU seconds instead (as noisy as any timing here).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

_SPEC = importlib.util.spec_from_file_location("bench_openai_server", Path(__file__).with_name("bench_openai_server.py"))
assert _SPEC is not None and _SPEC.loader is not None
server_bench = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = server_bench
_SPEC.loader.exec_module(server_bench)

#: calls per StoryTurn of bench_openai_server's dataset (a candidate call and a judge call per turn)
CALLS_PER_TWO_STORIES = 14


def run_engine(stories: int) -> None:
    """One run of ``stories`` StoryTurns with every post answered at once (the bench server's replies)."""
    from commet.engine import EvalSettings, evaluate_async
    from commet.models import openai_compat

    async def answer_at_once(self: object, body: bytes) -> bytes:
        await asyncio.sleep(0)  # as an answer that arrives: the other stories go on meanwhile
        if b'"model":"judge"' in body or b'"model": "judge"' in body:
            return server_bench.JUDGE_WRONG if zlib.crc32(body) % 5 == 0 else server_bench.JUDGE_REPLY
        return server_bench.CAND_REPLY

    openai_compat.DirectChatTransport.post = answer_at_once  # type: ignore[method-assign]
    args = argparse.Namespace(transport="direct", judge=True)
    model, judge = server_bench._model_specs(args, "http://127.0.0.1:9")
    dataset = server_bench.build_dataset(stories)
    gc.freeze()  # as commet eval does once started (commet.cli.common.Program.starting_up)
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(evaluate_async(model, dataset, judge=judge, db=Path(tmp) / "bench.sqlite", run="bench",
                                   settings=EvalSettings(images="on"), concurrency=64, workers=1))


def instructions(stories: int, src: str | None = None) -> int:
    """The instructions of a whole process running ``stories`` StoryTurns, as cachegrind counts them (CoMMET
    imported from ``src`` when given)."""
    command = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
               sys.executable, __file__, "--child", str(stories)]
    env = {**os.environ, "OPENAI_API_KEY": "bench"}
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    match = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if done.returncode != 0 or match is None:
        raise SystemExit(f"valgrind run failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return int(match[1].replace(",", ""))


def cpu_seconds(stories: int) -> float:
    started = time.process_time()
    run_engine(stories)
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stories", default="100,400", help="the two dataset sizes (StoryTurns), comma-separated")
    parser.add_argument("--against", help="another checkout's src folder, counted the same way beside this one")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        run_engine(args.child)
        return
    small, large = sorted(int(n) for n in args.stories.split(","))
    calls = (large - small) * CALLS_PER_TWO_STORIES // 2
    if shutil.which("valgrind") is None:
        os.environ.setdefault("OPENAI_API_KEY", "bench")
        print("valgrind is not installed: CPU seconds instead of instructions (noisy on a shared machine)")
        first, second = cpu_seconds(small), cpu_seconds(large)
        print(f"{small} StoryTurns: {first:.3f} s; {large}: {second:.3f} s; per call {(second - first) / calls * 1e3:.3f} ms")
        return
    here = str(Path(__file__).resolve().parents[1] / "src")  # this checkout, whatever is installed
    first, second = instructions(small, here), instructions(large, here)
    per_call = (second - first) // calls
    print(f"{small} StoryTurns: {first:,} instructions; {large}: {second:,}")
    print(f"the engine's own work: {per_call:,} instructions per call ({calls:,} calls apart)")
    if args.against:
        other = (instructions(large, args.against) - instructions(small, args.against)) // calls
        print(f"{args.against}: {other:,} instructions per call; this checkout / that one {per_call / other:.3f}")


if __name__ == "__main__":
    main()
