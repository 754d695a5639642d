"""The HTML report of a large store, built and opened in Chromium, beside the report of an older commit.

    python bench/bench_html_report.py [--stories 20000] [--runs 3] [--baseline f07dc53] [--store DIR]

Builds a store of about ``--stories`` StoryTurn results: the bundled sample copied under new ids
into one dataset folder (pictures included), run by the two honest baselines with pictures on and
off and both feedback conditions (eight runs, judged by the rules judge). ``--store DIR`` keeps it
there and reuses it. Then, for this checkout and for ``--baseline`` (a commit whose
``src/commet`` is taken with ``git archive``; the commit before issue 34's report), each
``--runs`` times in a fresh process, as ``commet report --format html`` does:

* the whole process: wall time, CPU time (with the process drawing the plots) and peak memory (RSS, the
  larger of the two processes), and the bytes written;
* inside it: loading the runs and computing the tables (shared with every report format) and
  writing the HTML page (plots, pictures, transcripts);
* the page in Chromium (Debian's /usr/bin/chromium, headless) at 1400x900: first paint and first
  contentful paint, the load event, when the transcripts are ready to explore (this checkout's page
  draws them after its first paint), the number of DOM nodes and the JavaScript heap.

Prints medians side by side with new / old ratios, and the machine's load average before and after
(the bench's own processes count in the second): on a busy machine wall times follow the load (CPU
times much less so).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
#: the last commit before issue 34 changed the HTML report
BASELINE = "f07dc53"

#: runs in a fresh process with PYTHONPATH at the code to measure; prints one JSON line of figures
BUILD = """
import json, resource, sys, time
from pathlib import Path
started = time.perf_counter()
from commet.reports import build_report, render_report, select_runs
from commet.store import Store
imported = time.perf_counter()
with Store(sys.argv[1]) as store:
    report = build_report(store, select_runs(store, None))
tables = time.perf_counter()
Path(sys.argv[2]).write_text(render_report(report, "html"), encoding="utf-8")
written = time.perf_counter()
own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"imports_s": imported - started, "tables_s": tables - imported, "html_s": written - tables,
                  "cpu_s": own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime,
                  "rss_mb": max(own.ru_maxrss, children.ru_maxrss) / 1024}))
"""


def build_store(folder: Path, stories: int) -> Path:
    """The store of about ``stories`` StoryTurn results (made once per folder)."""
    from commet.engine import EvalSettings, evaluate_async
    from commet.format import Dataset
    from commet.sources import load_dataset

    db = folder / "bench.sqlite"
    if db.is_file():
        return db
    sample = load_dataset("sample")
    runs = [(model, images, feedback) for model in ("baseline:first-option", "baseline:random-option")
            for images in ("on", "off") for feedback in ("original", "correctness")]
    copies = -(-stories // (len(sample) * len(runs)))
    storyturns = [st.model_copy(update={"id": f"{st.id}~{copy:03d}"}) for copy in range(copies) for st in sample]
    pictures = {image: sample.image_bytes(image) for st in sample for image in st.images}
    dataset = Dataset(storyturns=storyturns, name="bench-report", images=pictures).save(folder / "dataset")

    async def fill() -> None:
        for model, images, feedback in runs:
            await evaluate_async(model, str(dataset), judge="rules", db=db, concurrency=64,
                                 settings=EvalSettings(images=images, feedback=feedback))

    started = time.perf_counter()
    asyncio.run(fill())
    print(f"store: {len(storyturns) * len(runs):,} StoryTurn results in {len(runs)} runs "
          f"({time.perf_counter() - started:.0f} s to make)")
    return db


def baseline_source(commit: str, into: Path) -> Path | None:
    """``src/`` of ``commit`` unpacked into ``into`` (None when git cannot give it)."""
    archive = into / "baseline.tar"
    done = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", "-o", str(archive), commit, "src"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"baseline {commit}: {done.stderr.strip() or 'git archive failed'}; only this checkout is measured")
        return None
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def build(source: Path, db: Path, out: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(source)}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", BUILD, str(db), str(out)], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"report failed ({source}):\n{done.stderr[-3000:]}")
    return {"wall_s": wall, **json.loads(done.stdout.strip().splitlines()[-1]), "size_mb": out.stat().st_size / 1e6}


def open_page(page_file: Path) -> dict[str, float]:
    """The page in a fresh headless Chromium: paint times, load, transcripts ready, DOM nodes, JS heap."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            session = page.context.new_cdp_session(page)
            session.send("Performance.enable")
            page.goto(page_file.as_uri(), wait_until="load", timeout=300_000)
            if page.evaluate("document.getElementById('transcript-data') !== null"):
                page.wait_for_selector("html[data-transcripts=ready]", state="attached", timeout=300_000)
            figures = page.evaluate("""() => {
                const paint = Object.fromEntries(performance.getEntriesByType('paint').map(e => [e.name, e.startTime]));
                const nav = performance.getEntriesByType('navigation')[0];
                return {first_paint_ms: paint['first-paint'], first_contentful_paint_ms: paint['first-contentful-paint'],
                        load_ms: nav.loadEventEnd, ready_ms: performance.now(),
                        dom_nodes: document.getElementsByTagName('*').length};
            }""")
            metrics = {m["name"]: m["value"] for m in session.send("Performance.getMetrics")["metrics"]}
            figures["js_heap_mb"] = metrics.get("JSHeapUsedSize", 0) / 1e6
            return figures
        finally:
            browser.close()


ROWS = [("whole process, wall (s)", "wall_s"), ("whole process, CPU (s)", "cpu_s"), ("peak memory (MB)", "rss_mb"),
        ("imports (s)", "imports_s"), ("runs and tables (s)", "tables_s"), ("HTML page (s)", "html_s"),
        ("file written (MB)", "size_mb"), ("Chromium: first paint (ms)", "first_paint_ms"),
        ("Chromium: first contentful paint (ms)", "first_contentful_paint_ms"), ("Chromium: load event (ms)", "load_ms"),
        ("Chromium: transcripts ready (ms)", "ready_ms"), ("Chromium: DOM nodes", "dom_nodes"),
        ("Chromium: JS heap (MB)", "js_heap_mb")]


def measure(source: Path, db: Path, out: Path, runs: int) -> dict[str, float]:
    samples = []
    for _ in range(runs):
        figures = build(source, db, out)
        figures.update(open_page(out))
        samples.append(figures)
    return {key: statistics.median(s[key] for s in samples if s.get(key) is not None) for key in samples[0]
            if any(s.get(key) is not None for s in samples)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stories", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3, help="measurements of each report (medians are printed)")
    parser.add_argument("--baseline", default=BASELINE, help="commit of the old report ('' for none)")
    parser.add_argument("--store", type=Path, help="folder keeping the store between bench runs")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        folder = args.store or work / "store"
        folder.mkdir(parents=True, exist_ok=True)
        db = build_store(folder, args.stories)
        results = {"new": measure(ROOT / "src", db, work / "new.html", args.runs)}
        old = baseline_source(args.baseline, work) if args.baseline else None
        if old is not None:
            results["old"] = measure(old, db, work / "old.html", args.runs)
    print(f"\nHTML report of {args.stories:,} StoryTurn results, medians of {args.runs}; load average "
          f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores")
    print(f"{'':40} {'old ' + args.baseline if old else '':>14} {'this checkout':>14} {'new / old':>10}")
    for label, key in ROWS:
        new = results["new"].get(key)
        before = results.get("old", {}).get(key)
        ratio = f"{new / before:10.3f}" if new is not None and before else ""
        print(f"{label:40} {'' if before is None else f'{before:14.2f}'} {'' if new is None else f'{new:14.2f}'} "
              f"{ratio}")
    new = results["new"]
    print(f"\ngoals: built in under 3 s ({new['wall_s']:.2f} s wall, {new['cpu_s']:.2f} s CPU); first paint under "
          f"2 s ({new.get('first_paint_ms', float('nan')) / 1000:.2f} s)")


if __name__ == "__main__":
    main()
