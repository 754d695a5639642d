"""Measure the procedural generator: StoryTurns per second and pictures per second.

Each figure is printed beside a baseline run on the same items, with the wall-time ratio:

* full generation (``generate_dataset``: stories, scenes, pictures, PNG bytes) against
  text-only generation (``generate_storyturn``: stories and scene JSON, no drawing);
* drawing a picture and encoding it as PNG against just encoding a blank PNG of the same
  size (what the encoder alone costs), and against drawing with the id mask as well
  (``draw``, what the tests use).

It then prints, per task, the variety of a larger text-only sample (``--variety`` StoryTurns
per task): distinct sentence skeletons (names, colours, things and places masked; see
``commet.generation.procedural.variety``), vocabulary size, and the audit (``commet audit``):
the accuracy of the story-blind learner and of the best shallow reader beside chance, trained
on the sample of ``--seed`` and scored on that of ``--seed + 1`` (and the other way round).

    python bench/bench_procedural.py                  # 18 tasks x 5, best of 3 (well under a minute)
    python bench/bench_procedural.py --per-task 20 --repeat 5 --variety 120
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from PIL import Image

from commet.generation.audit import BLIND, FAMILIES, audit_dataset
from commet.generation.procedural import generate_dataset, generate_storyturn, is_image_dependent
from commet.generation.procedural.render import HEIGHT, WIDTH, draw, draw_picture, png_bytes
from commet.generation.procedural.variety import skeleton_counts, storyturn_words, vocabulary_sizes
from commet.taxonomy import TASKS


def best_of(repeat: int, run: Callable[[], object]) -> float:
    """The fastest wall time of ``repeat`` runs (the least disturbed by other work on the machine)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def row(label: str, count: int, unit: str, seconds: float, baseline_label: str, baseline: float) -> str:
    return (f"{label:<34} {count / seconds:9.1f} {unit}/s   {seconds:7.3f} s | {baseline_label:<30} "
            f"{count / baseline:9.1f} {unit}/s   {baseline:7.3f} s | ratio {seconds / baseline:6.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-task", type=int, default=5, help="StoryTurns per task (18 tasks)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--share", type=float, default=0.3, help="image-dependent share")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the best is kept")
    parser.add_argument("--variety", type=int, default=48, help="StoryTurns per task for the variety table")
    args = parser.parse_args()

    tasks = [t.id for t in TASKS]
    plan = [(task, k, is_image_dependent(task, k, args.per_task, args.share))
            for task in tasks for k in range(args.per_task)]
    n_items = len(plan)

    def text_only() -> None:
        for task, k, image in plan:
            generate_storyturn(task, k, args.seed, image)

    dataset = generate_dataset(per_task=args.per_task, seed=args.seed, image_dependent_share=args.share)
    assert len(dataset) == n_items
    scenes = [scene for task, k, image in plan for scene in generate_storyturn(task, k, args.seed, image)[1]
              .scenes.values()]
    n_pictures = len(scenes)
    blank = Image.new("RGB", (WIDTH, HEIGHT), (250, 236, 200))

    full = best_of(args.repeat, lambda: generate_dataset(per_task=args.per_task, seed=args.seed,
                                                         image_dependent_share=args.share))
    text = best_of(args.repeat, text_only)
    encode = best_of(args.repeat, lambda: [png_bytes(draw_picture(s)) for s in scenes])
    blank_png = best_of(args.repeat, lambda: [png_bytes(blank) for _ in scenes])
    paint = best_of(args.repeat, lambda: [draw_picture(s) for s in scenes])
    with_mask = best_of(args.repeat, lambda: [draw(s) for s in scenes])

    print(f"procedural generator: {len(tasks)} tasks x {args.per_task} = {n_items} StoryTurns, "
          f"{n_pictures} pictures ({WIDTH}x{HEIGHT}), seed {args.seed}, best of {args.repeat}")
    print(row("full generation", n_items, "StoryTurns", full, "text-only (stories + scenes)", text))
    print(row("pictures in full generation", n_pictures, "pictures", full, "text-only (stories + scenes)", text))
    print(row("draw + PNG encode", n_pictures, "pictures", encode, "blank PNG encode, same size", blank_png))
    print(row("draw only (no mask)", n_pictures, "pictures", paint, "draw with id mask (tests)", with_mask))
    png_kb = sum(len(b) for b in dataset.images.values()) / max(1, len(dataset.images)) / 1024
    print(f"mean PNG size {png_kb:.1f} kB; drawing is {paint / encode:.0%} of draw + encode; "
          f"generation per StoryTurn {1000 * full / n_items:.1f} ms (text-only {1000 * text / n_items:.2f} ms)")

    variety(tasks, args.variety, args.seed, args.share)


def variety(tasks: list[str], per_task: int, seed: int, share: float) -> None:
    """Skeletons, vocabulary and the audit per task, on text-only samples of two seeds."""
    start = time.perf_counter()
    scenes: dict[str, dict] = {}

    def sample(s: int) -> list:
        out = []
        for task in tasks:
            for k in range(per_task):
                storyturn, builder = generate_storyturn(task, k, s, is_image_dependent(task, k, per_task, share))
                scenes.update(builder.scenes)
                out.append(storyturn)
        return out

    storyturns, other = sample(seed), sample(seed + 1)
    seconds = (time.perf_counter() - start) / 2
    skeletons, vocabulary = skeleton_counts(storyturns), vocabulary_sizes(storyturns)
    audit = audit_dataset(storyturns, other=other, scenes=scenes)
    print(f"\nvariety and counterbalancing: {per_task} StoryTurns per task, seeds {seed} and {seed + 1} (text-only, "
          f"{1000 * seconds / len(storyturns):.2f} ms per StoryTurn)")
    print(f"{'task':<28} {'skeletons':>9} {'vocabulary':>10} {'blind %':>8} {'best reader %':>14} {'chance %':>8}")
    for task in tasks:
        blind = audit.line(task, BLIND)
        if blind.turns:
            best = max((audit.line(task, f) for f in FAMILIES), key=lambda line: line.accuracy)
            scores = (f"{100 * blind.accuracy:8.1f} {100 * best.accuracy:8.1f} {best.family[:5]:>5} "
                      f"{100 * blind.chance_rate:8.1f}")
        else:
            scores = f"{'-':>8} {'-':>14} {'-':>8}"
        print(f"{task:<28} {skeletons[task]:9d} {vocabulary[task]:10d} {scores}")
    everything = {w for st in storyturns for w in storyturn_words(st)}
    print(f"{'all tasks':<28} {sum(skeletons.values()):9d} {len(everything):10d}")


if __name__ == "__main__":
    main()
