"""The shortcut audit of the procedural generator on several seed pairs: every reader, per task and overall.

Why: a counterbalanced generator must keep every reader that does not reason about minds near chance
on seeds nobody tuned to. For each seed pair (A, B) this generates ``--per-task`` StoryTurns per task of
each seed (stories and scenes; no picture is drawn), trains every reader of ``commet audit`` on A and
scores it on B and the other way round, and prints, per task, the worst reader's points above chance
(the booklet's keyed turns apart), then the overall figure of every reader.

    PYTHONPATH=src python bench/bench_procedural_audit.py --pairs 11:12 13:14 15:16 --per-task 40
    PYTHONPATH=src python bench/bench_procedural_audit.py --pairs 313:314 --per-task 200 --tasks sarcasm,non_sarcasm
    PYTHONPATH=src python bench/bench_procedural_audit.py --nuisance --pairs 7:0 --per-task 48
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


def sample(seed: int, per_task: int, scenes: dict[str, dict[str, object]], tasks: list[str]) -> list[StoryTurn]:
    out = []
    for task in tasks:
        for k in range(per_task):
            storyturn, builder = generate_storyturn(task, k, seed, is_image_dependent(task, k, per_task, 0.3),
                                                    slot=variant_slot(task, k, per_task, 0.3))
            scenes.update(builder.shipped)  # what the scene files hold
            out.append(storyturn)
    return out


def nuisance_table(seed: int, per_task: int) -> None:
    """The nuisance choices each task records (``meta["nuisance"]``): the largest gap between the counts of two
    values within one cell (task x variant x cell, the story fact crossed with it included) over the whole sample
    and over every prefix of it; then, per task, the named draws (``meta["draws"]``: names, colours, things, rooms,
    frames...) and how many of them change when only the item's place in the counterbalancing (its cell) changes."""
    found: dict[str, dict[str, Counter[tuple[object, ...]]]] = defaultdict(lambda: defaultdict(Counter))
    prefix_gap: dict[tuple[str, str], int] = defaultdict(int)
    draws: dict[str, Counter[str]] = defaultdict(Counter)
    for task in sorted(GENERATORS):
        for image in (False, True) if task in IMAGE_DEPENDENT_TASKS else (False,):
            running: dict[tuple[object, ...], Counter[int]] = defaultdict(Counter)
            for k in range(per_task):
                storyturn, _ = generate_storyturn(task, k, seed, image, slot=k)
                cell = storyturn.meta.get("cell", {})
                crossed = (image, cell.get("value"), cell.get("fact", {}).get("value"))
                for key, choice in storyturn.meta.get("nuisance", {}).items():
                    found[task][key][(*crossed, choice["value"])] += 1
                    counter = running[(*crossed, key)]
                    counter[choice["value"]] += 1
                    values = [counter.get(v, 0) for v in range(choice["of"])]
                    prefix_gap[(task, key)] = max(prefix_gap[(task, key)], max(values) - min(values))
                if not image and k < 4:  # the same item at another place in the sequence: another cell
                    moved, _ = generate_storyturn(task, k, seed, image, slot=k + 1)
                    for key, drawn in storyturn.meta["draws"].items():
                        other = moved.meta["draws"].get(key)
                        if other is not None and other["of"] == drawn["of"]:
                            draws[task]["compared"] += 1
                            draws[task]["changed"] += other["value"] != drawn["value"]
                    draws[task]["names"] = max(draws[task]["names"], len(storyturn.meta["draws"]))
    print(f"nuisance choices (seed {seed}, {per_task} per task and variant): the largest gap between two values' "
          "counts in one cell, over the whole sample and over every prefix of it")
    print("| task | nuisance choice (recorded key) | values | largest gap in a cell | in any prefix |")
    print("|---|---|---|---|---|")
    for task, keys in sorted(found.items()):
        for key, counts in sorted(keys.items()):
            cells: dict[tuple[object, ...], list[int]] = defaultdict(list)
            for (*crossed, _), n in counts.items():
                cells[tuple(crossed)].append(n)
            values = len({v for *_, v in counts})
            gap = max(max(ns) - min(ns) if len(ns) == values else max(ns) for ns in cells.values())
            print(f"| {task} | {key} | {values} | {gap} | {prefix_gap[(task, key)]} |")
    print()
    print("| task | named draws per story (names, colours, things, rooms, frames, wordings) | draws compared | "
          "changed with the cell |")
    print("|---|---|---|---|")
    for task, counts in sorted(draws.items()):
        print(f"| {task} | {counts['names']} | {counts['compared']} | {counts['changed']} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", nargs="+", default=["11:12", "13:14", "15:16"])
    parser.add_argument("--per-task", type=int, default=40)
    parser.add_argument("--tasks", default="all", help="Comma-separated task ids (a larger --per-task for a few).")
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
        tasks = sorted(GENERATORS) if args.tasks == "all" else args.tasks.split(",")
        audit = audit_dataset(sample(a, args.per_task, scenes, tasks), other=sample(b, args.per_task, scenes, tasks),
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
