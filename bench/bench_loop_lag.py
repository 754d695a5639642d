"""How long one long reply holds the event loop, with the rules judge on the loop and off it.

    python bench/bench_loop_lag.py [--sizes 10000,100000,1000000] [--copies 4] [--runs 3]

Runs the bundled sample ``--copies`` times over (41 StoryTurns each, 64 in flight) from a replay
file whose replies are all short but one, of each ``--size`` characters (plain words: the rules
judge's patterns are linear on them), side by side with the judge deciding that reply on the
event loop (the baseline: ``OFF_LOOP_CHARS`` set past it) and in a worker thread (as shipped).
A probe task measures, between two of its passes, the CPU time the loop's thread spent (what a
callback holding the loop costs every other conversation; other work on the machine does not
count) and the wall time (which does include the GIL held by the judge's thread during one C
call on the whole reply). Prints medians over ``--runs`` and their ratios, baseline / shipped.
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
from commet.format import load_dataset
from commet.format.dataset import Dataset
from commet.judges import base as judges_base
from commet.judges.rules import RulesJudge
from commet.models.replay import create as replay_model
from commet.store import Store


def one_run(size: int, copies: int, folder: Path) -> tuple[float, float]:
    """(most loop-thread CPU between two probe passes, longest wall gap), in seconds."""
    sample = load_dataset("sample")
    stories = [st.model_copy(update={"id": f"{st.id}-{i}"}) for i in range(copies) for st in sample.storyturns]
    rng = random.Random(size)
    long_reply = " ".join(rng.choice(["the", "basket", "or", "box", "I", "think", "Ana"]) for _ in range(size // 4))
    replies = {st.id: ["The basket." for _ in st.turns] for st in stories}
    replies[stories[len(stories) // 3].id][0] = long_reply[:size]
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
                cpu, wall = time.thread_time(), time.perf_counter()
                await asyncio.sleep(0)
                worst[0] = max(worst[0], time.thread_time() - cpu)
                worst[1] = max(worst[1], time.perf_counter() - wall)

        watching = asyncio.create_task(probe())
        await engine.run()
        running = False
        await watching
        store.close()

    asyncio.run(main())
    return worst[0], worst[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--copies", type=int, default=4)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    shipped = judges_base.OFF_LOOP_CHARS
    print(f"{'reply chars':>12} {'on loop: cpu ms':>16} {'wall ms':>8} {'off loop: cpu ms':>17} {'wall ms':>8} "
          f"{'cpu ratio':>10} {'wall ratio':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            figures = {}
            for label, threshold in (("on", 10**12), ("off", shipped)):
                judges_base.OFF_LOOP_CHARS = threshold
                runs = [one_run(size, args.copies, Path(tmp)) for _ in range(args.runs)]
                figures[label] = (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
            judges_base.OFF_LOOP_CHARS = shipped
            (on_cpu, on_wall), (off_cpu, off_wall) = figures["on"], figures["off"]
            print(f"{size:>12,} {on_cpu * 1000:>16.1f} {on_wall * 1000:>8.1f} {off_cpu * 1000:>17.1f} "
                  f"{off_wall * 1000:>8.1f} {on_cpu / off_cpu:>10.1f} {on_wall / off_wall:>10.1f}")


if __name__ == "__main__":
    main()
