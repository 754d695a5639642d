"""The sarcasm pair's picture-size readers over many seed pairs: chance, or a leak?

Why: a scratch probe read sarcasm and non_sarcasm at 61 to 63 % off the size of the picture (its PNG bytes
and its zlib-compressed pixels, joined in quantile bins) on two seed pairs. By construction the picture cannot tell
the key: what is served is the asked child's wish in one cell and the other child's in the other, and the two wishes
are one ordered draw of two snacks (``snacks``), seeded without the cell, so the served snack is the same draw in
both cells; the happy and the cross face swap children, whose spots are balanced within the cell. This bench
settles it by numbers: for each of ``--pairs`` fresh seed pairs (A, B) it draws every picture of ``--per-task``
StoryTurns per task and seed, learns per task a lookup from the picture's size bins to the key (the answer's text:
happy or sad; and its position) on A, scores it on B and the other way round, and prints every pair's accuracy, the
mean over pairs with its standard error, and a permutation test of the sizes between the cells over all pictures.

    PYTHONPATH=src python bench/bench_picture_size_reader.py --pairs 40 --per-task 100
"""

from __future__ import annotations

import argparse
import statistics
import zlib
from collections import Counter, defaultdict

import numpy as np

from commet.generation.procedural import generate_storyturn, is_image_dependent, variant_slot
from commet.generation.procedural.render import draw_picture, png_bytes

TASKS = ("sarcasm", "non_sarcasm")
BINS = 5


def sizes(task: str, seed: int, per_task: int) -> list[tuple[int, int, str, int, int]]:
    """Per StoryTurn: PNG bytes, zlib bytes, the key's text, the key's position, and the cell."""
    out = []
    for k in range(per_task):
        image = is_image_dependent(task, k, per_task, 0.3)
        storyturn, builder = generate_storyturn(task, k, seed, image, slot=variant_slot(task, k, per_task, 0.3))
        turn = next(t for t in storyturn.turns if t.meta.get("asks") == "feels")
        picture = draw_picture(builder.shipped[storyturn.turns[0].image or ""])
        key = turn.answers[0].lower()
        position = [o.text.lower() for o in turn.options].index(key)
        out.append((len(png_bytes(picture)), len(zlib.compress(picture.tobytes(), 6)), key, position,
                    int(storyturn.meta["cell"]["value"])))
    return out


def _bin(edges: np.ndarray, value: int) -> int:
    return int(np.searchsorted(edges, value, side="right"))


def fit_score(train: list[tuple[int, int, str, int, int]], test: list[tuple[int, int, str, int, int]],
              target: int) -> tuple[int, int]:
    """A lookup from (PNG bin, zlib bin) to the majority target of the training items; right answers on ``test``."""
    edges = [np.quantile([row[f] for row in train], np.linspace(0, 1, BINS + 1)[1:-1]) for f in (0, 1)]
    table: dict[tuple[int, int], Counter[object]] = defaultdict(Counter)
    overall: Counter[object] = Counter(row[target] for row in train)
    for row in train:
        table[(_bin(edges[0], row[0]), _bin(edges[1], row[1]))][row[target]] += 1
    right = 0
    for row in test:
        seen = table.get((_bin(edges[0], row[0]), _bin(edges[1], row[1]))) or overall
        right += seen.most_common(1)[0][0] == row[target]
    return right, len(test)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=40)
    parser.add_argument("--per-task", type=int, default=100)
    parser.add_argument("--first-seed", type=int, default=1001)
    args = parser.parse_args()
    rates: dict[tuple[str, str], list[float]] = defaultdict(list)
    pooled: dict[str, dict[int, list[int]]] = {t: defaultdict(list) for t in TASKS}
    for p in range(args.pairs):
        a, b = args.first_seed + 2 * p, args.first_seed + 2 * p + 1
        for task in TASKS:
            one, two = sizes(task, a, args.per_task), sizes(task, b, args.per_task)
            for row in one + two:
                pooled[task][row[4]].append(row[1])
            for name, target in (("key text", 2), ("key position", 3)):
                r1, n1 = fit_score(one, two, target)
                r2, n2 = fit_score(two, one, target)
                rates[(task, name)].append(100 * (r1 + r2) / (n1 + n2))
    print(f"{args.pairs} seed pairs from {args.first_seed}, {args.per_task} StoryTurns per task and seed")
    print("| task | target | mean % | se | sd | min | max | pairs >= 61 | z (mean - 50) / se |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (task, name), values in sorted(rates.items()):
        mean, sd = statistics.mean(values), statistics.stdev(values)
        print(f"| {task} | {name} | {mean:.2f} | {sd / len(values) ** 0.5:.2f} | {sd:.2f} | {min(values):.1f} | "
              f"{max(values):.1f} | {sum(v >= 61 for v in values)} | {(mean - 50) / (sd / len(values) ** 0.5):+.2f} |")
    print()
    print("| task | zlib bytes, cell 0 | cell 1 | permutation p (difference of means, 2000 shuffles) |")
    print("|---|---|---|---|")
    shuffle = np.random.default_rng(0)
    for task, cells in pooled.items():
        x, y = np.array(cells[0]), np.array(cells[1])
        both, seen = np.concatenate([x, y]), abs(x.mean() - y.mean())
        null = [abs(d[: len(x)].mean() - d[len(x):].mean()) for d in (shuffle.permutation(both) for _ in range(2000))]
        print(f"| {task} | {x.mean():.0f} (n {len(x)}) | {y.mean():.0f} (n {len(y)}) | "
              f"{(1 + sum(v >= seen for v in null)) / 2001:.2f} |")


if __name__ == "__main__":
    main()
