"""Time from launch to the first model request of ``commet eval``, on a cold and on a warm cache.

    python bench/bench_startup.py DATASET [DATASET ...] [--runs 3] [--concurrency 64]
    python bench/bench_startup.py --generate 540 --generate 20000 [--runs 3]

For each dataset folder (or each generated size: the StoryTurns of bench/bench_openai_server.py, a quarter
with a picture of 64x48, saved as a dataset folder), ``commet eval --model openai:cand --judge
llm-only:openai:judge`` is started against the loopback server of bench/bench_openai_server.py (its own
process; it answers after 30 s, so nothing but the start-up is measured), and the time from launch to the
server seeing the first request is taken, with the CPU seconds of the process and of the children it waited
for up to then (read from ``/proc``); the process is then stopped by Ctrl-C (SIGINT), as a user stops a run,
and waited for: a first run writes its validation cache entry when its run ends (also by Ctrl-C), after its
first request. ``cold``: an empty cache folder (``COMMET_CACHE_DIR``), the
first run on this data; ``warm``: the same data run again (its validation and pictures' checks read from
the cache). Generated data is measured once it is :data:`TRUSTED_AFTER_S` old, as a user's data is. Figures
are medians of ``--runs``; the load average is printed, since wall times follow it, and so is
the bare aiohttp client's own launch to its request (Python and aiohttp's import, one POST: no client starts
sooner on this machine now), with each figure's excess over it.

``--instructions`` also counts, with valgrind, the instructions of a warm run from launch to its first
``connect()`` (where its first request leaves), the hash seed fixed: a figure that does not move with the
machine's load (to about 0.01 %), for comparing two versions on a shared machine (``--against SRC`` runs a
second source tree, e.g. a ``git archive`` of an earlier commit, beside this one's).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # the server bench, importable by the server's spawned process
import bench_openai_server as server_bench  # noqa: E402

#: the server's answer delay: far longer than any start-up, so the process only waits once it has sent
ANSWER_DELAY_S = 30.0
#: how long a run stopped by Ctrl-C after its first request may take to end (and write its cache entry)
STOP_WAIT_S = 60.0


def _stats(base_url: str, path: str = "/stats") -> dict[str, float]:
    with urllib.request.urlopen(f"{base_url}{path}") as response:
        return json.loads(response.read())


def _cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds of a running process and of the children it has waited for (a first load's
    forked validation, :mod:`commet.forked`), from Linux's ``/proc``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(fields[at]) for at in (11, 12, 13, 14)) / os.sysconf("SC_CLK_TCK")


def _eval(base_url: str, folder: Path, db: Path, concurrency: int) -> list[str]:
    """The arguments of the ``commet eval`` measured (its model and judge at the loopback server)."""
    opts = f"base_url={base_url}/v1&timeout=60&transport=direct"
    return ["eval", "--model", f"openai:cand?{opts}", "--judge", f"llm-only:openai:judge?{opts}", "--dataset",
            str(folder), "--db", str(db), "--concurrency", str(concurrency), "--quiet"]


def _environment(cache: Path, src: str | None = None) -> dict[str, str]:
    """The process's environment: its cache folder, and the ``commet`` package this script imports (or ``src``)."""
    if src is None:
        import commet

        src = str(Path(commet.__file__).resolve().parents[1])
    return {**os.environ, "COMMET_CACHE_DIR": str(cache), "OPENAI_API_KEY": "bench",
            "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))}


def first_request(base_url: str, folder: Path, cache: Path, concurrency: int,
                  src: str | None = None) -> dict[str, float]:
    """Launch ``commet eval`` on ``folder``; seconds and CPU seconds from launch to the first request."""
    env = _environment(cache, src)
    _stats(base_url, "/reset")
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "commet.cli", *_eval(base_url, folder, Path(tmp) / "b.sqlite", concurrency)]
        start = time.time()
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            arrival, cpu = _at_first_request(base_url, process, "commet eval")
            process.send_signal(signal.SIGINT)  # Ctrl-C: the run stops as a user stops it (its cache entry written)
            process.wait(STOP_WAIT_S)
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
                process.wait()
    return {"wall": arrival - start, "cpu": cpu}


def _at_first_request(base_url: str, process: subprocess.Popen[bytes], what: str) -> tuple[float, float]:
    """When the server saw ``process``'s first request (its clock), and the process's CPU seconds then."""
    while "first_arrival" not in (counts := _stats(base_url)):
        if process.poll() is not None:
            raise SystemExit(f"{what} exited ({process.returncode}) before any request:\n"
                             + (process.stderr.read().decode() if process.stderr else ""))
        time.sleep(0.002)
    return counts["first_arrival"], _cpu_seconds(process.pid)


def bare_first_request(base_url: str) -> dict[str, float]:
    """Launch the bare aiohttp client (bench/bare_aiohttp_client.py: Python, aiohttp, one POST); seconds and CPU
    seconds from launch to its request: the floor of any client's start on this machine now, beside which
    ``commet eval``'s reads."""
    plan = {"url": f"{base_url}/v1/chat/completions", "bodies": ['{"model": "cand", "messages": []}'],
            "calls_per_story": [1], "order": [0], "concurrency": 1, "start_interval": 0.0}
    with tempfile.TemporaryDirectory() as tmp:
        plan_file = Path(tmp) / "plan.json"
        plan_file.write_text(json.dumps(plan), encoding="utf-8")
        _stats(base_url, "/reset")
        start = time.time()
        process = subprocess.Popen([sys.executable, str(Path(__file__).parent / "bare_aiohttp_client.py"),
                                    str(plan_file)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            arrival, cpu = _at_first_request(base_url, process, "the bare client")
        finally:
            process.kill()
            process.wait()
    return {"wall": arrival - start, "cpu": cpu}


#: ``commet eval`` run as the program runs it, ended at its first ``connect()``: where its first request leaves
STOPPED_AT_FIRST_CONNECT = ("import os, runpy, socket, sys\n"
                            "socket.socket.connect = lambda self, address: os._exit(0)\n"
                            "sys.argv = ['commet', *sys.argv[1:]]\n"
                            "runpy.run_module('commet.cli', run_name='__main__', alter_sys=True)\n")
#: a file younger than this when its validation cache entry was made is checked by content at the next run
#: (commet.sources.validation_cache: git's "racily clean" rule): generated data is left this long before it is
#: measured, as data a user runs was not written in the last seconds (else a warm run of 540 StoryTurns reads and
#: hashes their 870 kB again, about 4 ms)
TRUSTED_AFTER_S = 2.5


def wait_until_trusted(folders: list[Path]) -> None:
    """Sleep until the newest file under ``folders`` is :data:`TRUSTED_AFTER_S` old."""
    newest = max(path.stat().st_mtime for folder in folders for path in folder.rglob("*"))
    time.sleep(max(0.0, newest + TRUSTED_AFTER_S - time.time()))


def instructions_to_first_request(base_url: str, folder: Path, cache: Path, concurrency: int,
                                  src: str | None = None) -> int:
    """Instructions (valgrind) of a warm ``commet eval`` on ``folder`` from launch to its first ``connect()``."""
    env = {**_environment(cache, src), "PYTHONHASHSEED": "0"}
    with tempfile.TemporaryDirectory() as tmp:
        args = _eval(base_url, folder, Path(tmp) / "b.sqlite", concurrency)
        # the files old enough for the entry made next to trust their stat: an entry made sooner has them checked by
        # content at the counted run (15 million instructions more for 540 StoryTurns), so two trees counted one
        # after the other, the first made on younger files, would not be counted alike
        wait_until_trusted([folder])
        # a run stopped as a user stops it (Ctrl-C), after which its validation cache entry is written: eval writes it
        # when its run ends (or a child loading a small dataset ahead, as it starts), so a run ended at its first
        # connect() could leave the counted run a first run
        first_request(base_url, folder, cache, concurrency, src)
        Path(tmp, "b.sqlite").unlink(missing_ok=True)
        done = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                               f"--cachegrind-out-file={Path(tmp) / 'counts'}", sys.executable, "-c",
                               STOPPED_AT_FIRST_CONNECT, *args], env=env, capture_output=True, text=True)
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if found is None:
        raise SystemExit(f"valgrind counted nothing:\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def yardstick(runs: int) -> dict[str, float]:
    """Medians of CPU seconds of two starts on this machine now, beside which the figures read: Python's own, and a
    bare client's (Python and aiohttp imported), each a process of its own."""
    found = {}
    for name, code in (("python -c pass", "pass"), ("python -c 'import aiohttp'", "import aiohttp")):
        cpu = []
        for _ in range(max(runs, 3)):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([sys.executable, "-c", code], check=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        found[name] = statistics.median(cpu)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets", nargs="*", type=Path)
    parser.add_argument("--generate", type=int, action="append", default=[], metavar="N",
                        help="also a generated dataset of N StoryTurns (bench/bench_openai_server.py's)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--instructions", action="store_true",
                        help="also count a warm run's instructions to its first request (valgrind)")
    parser.add_argument("--against", metavar="SRC", help="with --instructions: also count those of this source tree")
    args = parser.parse_args(argv)
    namespace = argparse.Namespace(delay=ANSWER_DELAY_S, server_loop="epoll", concurrency=args.concurrency)
    port = server_bench.free_port()
    server, ready, _ = server_bench.start_server(port, namespace)
    base_url = f"http://127.0.0.1:{port}"
    load_before = os.getloadavg()
    rows: list[tuple[str, str, list[dict[str, float]]]] = []
    counted: list[tuple[str, str, int]] = []
    try:
        if not ready.wait(30):
            raise SystemExit("the server did not start")
        bare = [bare_first_request(base_url) for _ in range(args.runs)]
        with tempfile.TemporaryDirectory() as tmp:
            folders = list(args.datasets)
            for size in args.generate:
                folders.append(server_bench.build_dataset(size).save(Path(tmp) / f"generated-{size}"))
            if args.generate:  # as data a user runs: not written in the last seconds
                wait_until_trusted(folders)
            for folder in folders:
                cold, warm = [], []
                for run in range(args.runs):
                    cache = Path(tmp) / f"cache-{folder.name}-{run}"
                    cold.append(first_request(base_url, folder, cache, args.concurrency))
                    warm.append(first_request(base_url, folder, cache, args.concurrency))
                rows += [(str(folder), "cold (first run)", cold), (str(folder), "warm (same data again)", warm)]
                if args.instructions:
                    for src in ([None, args.against] if args.against else [None]):
                        cache = Path(tmp) / f"cache-{folder.name}-counted-{len(counted)}"
                        counted.append((str(folder), src or "this tree", instructions_to_first_request(
                            base_url, folder, cache, args.concurrency, src)))
    finally:
        server.terminate()
        server.join(5)
    print(f"load average (1, 5, 15 min) before {' '.join(f'{x:.2f}' for x in load_before)}, after "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs; medians of {args.runs}")
    print("yardstick, CPU s: " + ", ".join(f"{name} {cpu:.3f}" for name, cpu in yardstick(args.runs).items()))
    bare_wall = statistics.median(r["wall"] for r in bare)
    print(f"{'dataset':48} {'cache':24} {'to first request s':>19} {'CPU s':>7} {'over bare s':>12}   runs (wall)")
    print(f"{'(none: the bare aiohttp client, one POST)':48} {'':24} {bare_wall:19.3f} "
          f"{statistics.median(r['cpu'] for r in bare):7.3f} {0:12.3f}   " + " ".join(f"{r['wall']:.3f}" for r in bare))
    for name, kind, runs in rows:
        wall = statistics.median(r["wall"] for r in runs)
        print(f"{name[-48:]:48} {kind:24} {wall:19.3f} {statistics.median(r['cpu'] for r in runs):7.3f} "
              f"{wall - bare_wall:12.3f}   " + " ".join(f"{r['wall']:.3f}" for r in runs))
    for name, src, count in counted:
        print(f"{name[-48:]:48} warm, {src}: {count:,} instructions to the first request (valgrind)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
