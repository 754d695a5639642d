"""How long long replies hold the event loop, with the rules judge on the loop and off it.

    python bench/bench_loop_lag.py [--sizes 4000,8000,11999] [--copies 4] [--runs 3]

Runs the bundled sample ``--copies`` times over (41 StoryTurns each, 64 in flight) from a replay
file whose first replies are ``--size`` characters of plain words (the rules judge reads replies
up to 12,000 characters; longer ones it leaves undecided at once), side by side with the judge
deciding them on the event loop (the baseline: ``OFF_LOOP_CHARS`` set past them) and in a worker
thread (as shipped). Every callback the loop runs is timed in the loop's thread: the longest is
what one step of one conversation made every other one wait (CPU time: other work on the machine
does not count). Also the longest wall-clock gap between two passes of a probe task (which
includes the GIL the judge's thread holds during a C call). Medians over ``--runs``, and their
ratios, baseline / shipped. The run's own first and last steps (opening it: the dataset's hash;
closing it: its results) take about 8 to 12 ms once, which is the floor of the off-loop column;
the steps of the conversations off the loop stay under about 4 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from commet.conditions import ImagePolicy
from commet.engine import Engine, EvalSettings
from commet.format.dataset import Dataset
from commet.judges import base as judges_base
from commet.judges.rules import RulesJudge
from commet.models.replay import create as replay_model
from commet.sources import load_dataset
from commet.store import Store


def one_run(size: int, copies: int, folder: Path) -> tuple[float, float]:
    """(most loop-thread CPU one callback took, longest wall gap between two probe passes), in seconds."""
    sample = load_dataset("sample")
    stories = [st.model_copy(update={"id": f"{st.id}-{i}"}) for i in range(copies) for st in sample.storyturns]
    rng = random.Random(size)
    long_reply = " ".join(rng.choice(["the", "basket", "or", "box", "I", "think", "Ana"]) for _ in range(size // 4))
    replies = {st.id: [long_reply[:size]] + ["The basket." for _ in st.turns[1:]] for st in stories}
    (folder / "r.json").write_text(json.dumps(replies))
    worst = [0.0, 0.0]

    async def main() -> None:
        store = Store(folder / f"s{time.monotonic_ns()}.sqlite")
        engine = Engine(model=replay_model(str(folder / "r.json"), {"delay": "0.002"}), judge=RulesJudge(),
                        store=store, dataset=Dataset(stories, name="lag", root=sample.root), concurrency=64,
                        settings=EvalSettings(images=ImagePolicy.off))
        running = True

        async def probe() -> None:
            while running:
                wall = time.perf_counter()
                await asyncio.sleep(0)
                worst[1] = max(worst[1], time.perf_counter() - wall)

        watching = asyncio.create_task(probe())
        await engine.run()
        running = False
        await watching
        store.close()

    run_callback = asyncio.events.Handle._run

    def timed(handle: asyncio.events.Handle) -> None:
        before = time.thread_time()
        run_callback(handle)
        worst[0] = max(worst[0], time.thread_time() - before)

    asyncio.events.Handle._run = timed  # type: ignore[method-assign]
    try:
        asyncio.run(main())
    finally:
        asyncio.events.Handle._run = run_callback  # type: ignore[method-assign]
    return worst[0], worst[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="4000,8000,11999")
    parser.add_argument("--copies", type=int, default=4)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    shipped = judges_base.OFF_LOOP_CHARS
    print(f"{'reply chars':>12} {'on loop: callback cpu ms':>25} {'gap ms':>7} {'off loop: callback cpu ms':>26} "
          f"{'gap ms':>7} {'cpu ratio':>10} {'gap ratio':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            figures = {}
            for label, threshold in (("on", 10**12), ("off", shipped)):
                judges_base.OFF_LOOP_CHARS = threshold
                runs = [one_run(size, args.copies, Path(tmp)) for _ in range(args.runs)]
                figures[label] = (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
            judges_base.OFF_LOOP_CHARS = shipped
            (on_cpu, on_wall), (off_cpu, off_wall) = figures["on"], figures["off"]
            print(f"{size:>12,} {on_cpu * 1000:>25.1f} {on_wall * 1000:>7.1f} {off_cpu * 1000:>26.1f} "
                  f"{off_wall * 1000:>7.1f} {on_cpu / off_cpu:>10.1f} {on_wall / off_wall:>10.1f}")


if __name__ == "__main__":
    main()
