"""What pictures cost a run: ``commet eval --images on`` over ``--images off``, first run and second, and a check.

    python bench/bench_pictures.py [--data DIR] [--per-task 30] [--runs 3] [--model baseline:first-option]
                                   [--src PATH] [--no-sample]

Generates the procedural set issue 47 measures (``commet generate procedural --per-task 30``: 540 StoryTurns,
about 750 pictures of 640x480 shown 1,320 times, 16 MB; ``--data`` reuses a folder made before), then runs
``python -m commet eval --model MODEL --quiet`` on it as a user does, each run a process of its own timed from
start to exit, ``--runs`` times each way, alternately:

* **first**: with an empty cache folder (``COMMET_CACHE_DIR``), as on a machine that never saw the data;
* **second**: with the cache folder a first run with pictures filled, as a second run on the same data.

For each it prints the medians of the whole process's wall time and CPU time (user + system of the child:
``resource.getrusage(RUSAGE_CHILDREN)``), with pictures and without, and on / off (issue 47's goal: at most
1.3). The same for the bundled sample (41 StoryTurns, 20 pictures) unless ``--no-sample``. Then the picture
check of every picture of the set in this process (:func:`commet.format.pictures.picture_problem`, the bytes
read beforehand): microseconds a picture, wall and CPU (``time.process_time``).

``--src PATH`` runs another checkout's code (its ``src`` folder) in the child processes and for the check: the
way to measure before and after side by side on one machine (``git archive COMMIT src | tar -x -C /tmp/old``).
The load average is printed before and after: on a shared machine wall times follow it, CPU times much less.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
#: the picture files of a dataset folder (a generated one also holds each picture's scene as JSON)
PICTURE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")


def child_env(src: Path, cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(src) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["COMMET_CACHE_DIR"] = str(cache)
    return env


def timed_eval(src: Path, dataset: str, model: str, images: str, cache: Path, work: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one whole ``commet eval`` process (a fresh results file each time)."""
    db = Path(tempfile.mkstemp(suffix=".sqlite", dir=work)[1])
    db.unlink()
    command = [sys.executable, "-m", "commet", "eval", "--dataset", dataset, "--model", model, "--images", images,
               "--quiet", "--db", str(db)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, env=child_env(src, cache), capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"commet eval failed ({done.returncode}):\n{done.stderr[-2000:]}")
    db.unlink(missing_ok=True)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def side_by_side(src: Path, dataset: str, model: str, runs: int, work: Path) -> dict[str, dict[str, list[float]]]:
    """``{"first"|"second": {"on wall"|"on cpu"|"off wall"|"off cpu": [...]}}``, runs alternating on and off."""
    figures: dict[str, dict[str, list[float]]] = {"first": {}, "second": {}}
    for _ in range(runs):
        filled = Path(tempfile.mkdtemp(prefix="cache-", dir=work))
        for images in ("on", "off"):
            wall, cpu = timed_eval(src, dataset, model, images, Path(tempfile.mkdtemp(prefix="cache-", dir=work)),
                                   work)
            figures["first"].setdefault(f"{images} wall", []).append(wall)
            figures["first"].setdefault(f"{images} cpu", []).append(cpu)
        timed_eval(src, dataset, model, "on", filled, work)  # fills the cache folder the second runs read
        for images in ("on", "off"):
            wall, cpu = timed_eval(src, dataset, model, images, filled, work)
            figures["second"].setdefault(f"{images} wall", []).append(wall)
            figures["second"].setdefault(f"{images} cpu", []).append(cpu)
    return figures


def print_table(title: str, figures: dict[str, dict[str, list[float]]]) -> None:
    print(f"\n{title}  (medians; seconds)")
    print(f"{'':8} {'on wall':>8} {'off wall':>9} {'on/off':>7}   {'on CPU':>7} {'off CPU':>8} {'on/off':>7}")
    for run, values in figures.items():
        m = {key: statistics.median(v) for key, v in values.items()}
        print(f"{run:8} {m['on wall']:8.2f} {m['off wall']:9.2f} {m['on wall'] / m['off wall']:7.2f}   "
              f"{m['on cpu']:7.2f} {m['off cpu']:8.2f} {m['on cpu'] / m['off cpu']:7.2f}")


def check_times(src: Path, data: Path) -> None:
    """The picture check of every picture file of the set, in a process of its own running ``src``'s code."""
    code = f"""
import time
from pathlib import Path
from commet.format.pictures import picture_problem
pictures = [p.read_bytes() for p in sorted(Path({str(data / 'images')!r}).iterdir()) if p.suffix.lower() in {PICTURE_SUFFIXES!r}]
picture_problem(pictures[0])
wall, cpu = time.perf_counter(), time.process_time()
refused = sum(picture_problem(p) is not None for p in pictures)
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
print(f"picture check: {{len(pictures)}} pictures ({{sum(map(len, pictures)) / 1e6:.1f}} MB), {{refused}} refused; "
      f"{{wall / len(pictures) * 1e6:.0f}} us wall, {{cpu / len(pictures) * 1e6:.0f}} us CPU a picture")
"""
    subprocess.run([sys.executable, "-c", code], env=child_env(src, Path(tempfile.mkdtemp())), check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help="a dataset folder made before (else generated into a temp folder)")
    parser.add_argument("--per-task", type=int, default=30)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--model", default="baseline:first-option")
    parser.add_argument("--src", type=Path, default=HERE / "src", help="the src folder whose code is measured")
    parser.add_argument("--no-sample", action="store_true", help="skip the bundled sample")
    args = parser.parse_args()
    src = args.src.resolve()
    print(f"code: {src}   load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}   cores: {os.cpu_count()}")
    with tempfile.TemporaryDirectory(prefix="bench-pictures-") as scratch:
        work = Path(scratch)
        data = args.data
        if data is None or not (data / "storyturns.jsonl").exists():
            data = data or work / "generated"
            subprocess.run([sys.executable, "-m", "commet", "generate", "procedural", "-o", str(data),
                            "--per-task", str(args.per_task)], env=child_env(src, work / "gen-cache"), check=True,
                           capture_output=True)
        records = [json.loads(line) for line in (data / "storyturns.jsonl").open(encoding="utf-8") if line.strip()]
        turns = [turn for record in records for turn in record.get("turns", [])]
        files = [f for f in (data / "images").iterdir() if f.suffix.lower() in PICTURE_SUFFIXES]
        print(f"data: {data} ({len(records)} StoryTurns, {len(files)} picture files, "
              f"{sum(f.stat().st_size for f in files) / 1e6:.1f} MB, {sum(bool(t.get('image')) for t in turns)} "
              f"turns with a picture)")
        print_table(f"{args.model} on the generated set, {args.runs} runs",
                    side_by_side(src, str(data), args.model, args.runs, work))
        if not args.no_sample:
            print_table(f"{args.model} on the bundled sample, {args.runs} runs",
                        side_by_side(src, "sample", args.model, args.runs, work))
        print()
        check_times(src, data)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
