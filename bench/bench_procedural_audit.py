"""The shortcut audit of the procedural generator on several seed pairs: every reader, per task and overall.

Why: a counterbalanced generator must keep every reader that does not reason about minds near chance
on seeds nobody tuned to. For each seed pair (A, B) this generates ``--per-task`` StoryTurns per task of
each seed (stories and scenes; no picture is drawn), trains every reader of ``commet audit`` on A and
scores it on B and the other way round, and prints, per task, the worst reader's points above chance
(the booklet's keyed turns apart), then the overall figure of every reader.

    PYTHONPATH=src python bench/bench_procedural_audit.py --pairs 11:12 13:14 15:16 --per-task 40
    PYTHONPATH=src python bench/bench_procedural_audit.py --nuisance --pairs 7:0 --per-task 24
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict

from commet.format.model import StoryTurn
from commet.generation.audit import BLIND, FAMILIES, audit_dataset
from commet.generation.procedural import (
    GENERATORS,
    IMAGE_DEPENDENT_TASKS,
    generate_storyturn,
    is_image_dependent,
    variant_slot,
)

GATED = (BLIND, *FAMILIES)


def sample(seed: int, per_task: int, scenes: dict[str, dict[str, object]]) -> list[StoryTurn]:
    out = []
    for task in sorted(GENERATORS):
        for k in range(per_task):
            storyturn, builder = generate_storyturn(task, k, seed, is_image_dependent(task, k, per_task, 0.3),
                                                    slot=variant_slot(task, k, per_task, 0.3))
            scenes.update(builder.scenes)
            out.append(storyturn)
    return out


def nuisance_table(seed: int, per_task: int) -> None:
    """The nuisance choices each task records (``meta["nuisance"]``), with the largest gap between the counts of
    two values within one cell (task x variant x cell), over text-only and image-only samples."""
    found: dict[str, dict[str, Counter[tuple[object, ...]]]] = defaultdict(lambda: defaultdict(Counter))
    for task in sorted(GENERATORS):
        for image in (False, True) if task in IMAGE_DEPENDENT_TASKS else (False,):
            for k in range(per_task):
                storyturn, _ = generate_storyturn(task, k, seed, image, slot=k)
                cell = storyturn.meta.get("cell", {})
                for key, choice in storyturn.meta.get("nuisance", {}).items():
                    found[task][key][(image, cell.get("value"), choice["value"])] += 1
    print(f"nuisance choices (seed {seed}, {per_task} per task and variant): the largest gap between two values' "
          "counts in one cell")
    print("| task | nuisance choice (recorded key) | values | largest gap in a cell |")
    print("|---|---|---|---|")
    for task, keys in sorted(found.items()):
        for key, counts in sorted(keys.items()):
            cells: dict[tuple[object, ...], list[int]] = defaultdict(list)
            for (image, cell, _), n in counts.items():
                cells[(image, cell)].append(n)
            values = len({v for *_, v in counts})
            gap = max(max(ns) - min(ns) if len(ns) == values else max(ns) for ns in cells.values())
            print(f"| {task} | {key} | {values} | {gap} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", nargs="+", default=["11:12", "13:14", "15:16"])
    parser.add_argument("--per-task", type=int, default=40)
    parser.add_argument("--nuisance", action="store_true", help="Print the nuisance-variable table instead.")
    args = parser.parse_args()
    if args.nuisance:
        nuisance_table(int(args.pairs[0].split(":")[0]), args.per_task)
        return
    worst: dict[str, tuple[float, str, str]] = {}
    overall: dict[str, list[float]] = defaultdict(list)
    for pair in args.pairs:
        a, b = (int(s) for s in pair.split(":"))
        scenes: dict[str, dict[str, object]] = {}
        audit = audit_dataset(sample(a, args.per_task, scenes), other=sample(b, args.per_task, scenes),
                              scenes=scenes)
        for task in audit.tasks():
            for family in GATED:
                line = audit.line(task, family)
                if line.turns and (task not in worst or line.excess > worst[task][0]):
                    worst[task] = (line.excess, family, pair)
        for family in GATED:
            overall[family].append(audit.overall(family).excess)
    print(f"seed pairs {' '.join(args.pairs)}, {args.per_task} StoryTurns per task and seed")
    print("| task | worst reader | points above chance | seed pair |")
    print("|---|---|---|---|")
    for task, (excess, family, pair) in sorted(worst.items()):
        print(f"| {task} | {family} | {excess:+.1f}{' !' if excess > 15 else ''} | {pair} |")
    print()
    print("| reader | " + " | ".join(args.pairs) + " |")
    print("|---|" + "---|" * len(args.pairs))
    for family in GATED:
        print(f"| {family} | " + " | ".join(f"{x:+.1f}{' !' if x > 10 else ''}" for x in overall[family]) + " |")


if __name__ == "__main__":
    main()
