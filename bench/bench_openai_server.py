"""Engine throughput against a real OpenAI-compatible HTTP server with a fixed answer delay.

    python bench/bench_openai_server.py [--stories 600] [--delay 0.1] [--concurrency 64] [--workers 1]
                                        [--transport direct|sdk] [--images on|off|needed] [--no-judge]
                                        [--picture-size 64x48] [--runs 5] [--server-loop select|epoll] [--inspect]

Builds ~600 StoryTurns (3 or 4 turns each, a quarter with a picture) in memory, starts an
asyncio HTTP/1.1 server (a minimal ``asyncio.Protocol``, keep-alive, many concurrent
connections, little CPU) on 127.0.0.1 in a SEPARATE PROCESS that answers every chat
completion after ``--delay`` seconds (the judge says "incorrect" to one request in five,
fixed by its bytes, so the report has real intervals). The server runs a ``select()`` event
loop, whose timers have microseconds; ``--server-loop epoll`` gives asyncio's default loop,
which rounds every timer up to the next millisecond. The output says how long the server
held each request over the delay. Then, ``--runs`` times, side by side:

* the engine in this process (``evaluate_async`` with a fresh SQLite store, imports done
  beforehand) with the candidate ``openai:cand`` and, unless ``--no-judge``, the LLM judge
  ``llm-only:openai:judge`` (every turn is two serial calls) at ``--concurrency`` stories in
  flight: its wall time and the client CPU per call (the server's CPU is not counted);
* the whole process as a user runs it: ``python -m commet.cli eval`` on the same StoryTurns
  saved as a dataset folder, timed from process start to exit (imports, validation, the
  run, the end-of-run report with its bootstrap);
* a bare aiohttp client making the same calls in the same slots and order (the engine's
  plan), with no engine, store or judge: what this machine, server and HTTP library cost;
  in this process, and as a process of its own (``bench/bare_aiohttp_client.py``), timed
  from start to exit as ``commet eval`` is;
* with ``--inspect``, inspect_ai's ``inspect eval commet/storyturns`` on the same dataset folder
  and server (where inspect_ai is installed).

Then the side by side of issue 47: the whole ``commet eval`` process's wall time and CPU per
call over the bare client's whole process (goals 1.05 and 2), and its first request to last
answer over the bound (goal 1.05).

The lower bound is ``max(longest story's critical path, total calls * delay / concurrency)``.
For each it prints wall / bound and the time from the first request's arrival to the last
answer's departure over the bound (the run without start-up and tail), and, for reference,
the wall time of a zero-overhead engine on the engine's plan and on the longest-first
schedule it used before. Figures are medians over the runs; the load average is printed
because on a shared machine wall times follow it (client CPU per call much less so).
"""

from __future__ import annotations

import argparse
import asyncio
import heapq
import importlib.util
import io
import json
import multiprocessing
import os
import random
import resource
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import zlib
from pathlib import Path
from typing import Any

_SPEC = importlib.util.spec_from_file_location("bare_aiohttp_client", Path(__file__).with_name("bare_aiohttp_client.py"))
assert _SPEC is not None and _SPEC.loader is not None
bare_aiohttp_client = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bare_aiohttp_client)

VERDICT = json.dumps({"verdict": "correct", "matched_answer": 1, "reason": "matches the expected answer"})


# ----------------------------------------------------------------------------- the server (child process)


class _Http(asyncio.Protocol):
    """A minimal HTTP/1.1 keep-alive server protocol: parse, wait ``delay``, answer. Cheap on CPU."""

    def __init__(self, delay: float, counts: dict[str, float]):
        self.delay, self.counts = delay, counts
        self.buffer = bytearray()  # appended to in place: a body of megabytes arrives in many pieces
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport):  # type: ignore[override]
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            head_end = self.buffer.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = self.buffer[:head_end].decode("latin-1")
            length = 0
            for line in head.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            total = head_end + 4 + length
            if len(self.buffer) < total:
                return
            body = bytes(self.buffer[head_end + 4:total])
            del self.buffer[:total]
            path = head.split(" ", 2)[1]
            asyncio.get_running_loop().create_task(self.answer(path, body))

    async def answer(self, path: str, body: bytes) -> None:
        if path == "/stats":
            payload = json.dumps(self.counts).encode()
        elif path == "/reset":
            self.counts.clear()
            self.counts.update(cand=0, judge=0, held_over=0.0)
            payload = b"{}"
        else:
            model = "judge" if b'"model":"judge"' in body or b'"model": "judge"' in body else "cand"
            self.counts[model] += 1
            self.counts.setdefault("first_arrival", time.time())
            arrival = time.monotonic()
            await asyncio.sleep(self.delay)
            self.counts["held_over"] += time.monotonic() - arrival - self.delay
            # one judge verdict in five is "incorrect" (fixed by the request's bytes), so the report has real intervals
            payload = (JUDGE_WRONG if zlib.crc32(body) % 5 == 0 else JUDGE_REPLY) if model == "judge" else CAND_REPLY
            if path.endswith("/responses"):  # OpenAI's Responses API (inspect_ai's model roles use it)
                payload = RESPONSES[payload]
            self.counts["last_answer"] = time.time()
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                                 + str(len(payload)).encode() + b"\r\n\r\n" + payload)


def _reply(model: str, text: str) -> bytes:
    return json.dumps({
        "id": "x", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55},
    }).encode()


def _response(model: str, text: str) -> bytes:
    """The same reply in the Responses API's shape."""
    return json.dumps({
        "id": "resp_x", "object": "response", "created_at": 0, "status": "completed", "model": model,
        "output": [{"type": "message", "id": "msg_x", "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}],
        "parallel_tool_calls": False, "tool_choice": "auto", "tools": [],
        "usage": {"input_tokens": 50, "output_tokens": 5, "total_tokens": 55,
                  "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}},
    }).encode()


CAND_REPLY = _reply("cand", "Apple")
JUDGE_REPLY = _reply("judge", VERDICT)
JUDGE_WRONG_TEXT = json.dumps({"verdict": "incorrect", "matched_answer": None, "reason": "another answer"})
JUDGE_WRONG = _reply("judge", JUDGE_WRONG_TEXT)
RESPONSES = {CAND_REPLY: _response("cand", "Apple"), JUDGE_REPLY: _response("judge", VERDICT),
             JUDGE_WRONG: _response("judge", JUDGE_WRONG_TEXT)}


def serve(port: int, delay: float, ready, precise: bool) -> None:  # noqa: ANN001 - a multiprocessing Event
    """Child process: an asyncio server answering every chat completion after ``delay`` seconds.

    ``precise``: a ``select()`` loop, whose timeout has microseconds. asyncio's default epoll loop
    rounds every timer up to the next millisecond, so its answers came 0.68 ms late on average and
    left in bursts on millisecond ticks: a yardstick error the bound does not count. ``select()``
    handles file descriptors below 1024 only, hence the fallback for very high concurrency.
    """
    counts: dict[str, float] = {"cand": 0, "judge": 0, "held_over": 0.0}

    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(lambda: _Http(delay, counts), "127.0.0.1", port, backlog=4096)
        ready.set()
        async with server:
            await server.serve_forever()

    loop = asyncio.SelectorEventLoop(selectors.SelectSelector()) if precise else asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.run_until_complete(main())


SELECT_MAX_CONCURRENCY = 200  # the engine opens up to two connections per story in flight; select() takes fds < 1024


def add_server_loop_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--server-loop", choices=["select", "epoll"], default="select",
                        help="the server's event loop: select (timers to the microsecond; used up to concurrency "
                             f"{SELECT_MAX_CONCURRENCY}) or asyncio's default epoll (timers rounded up to the millisecond)")


def start_server(port: int, args: argparse.Namespace):  # noqa: ANN201 - (process, ready event, precise)
    """Start ``serve`` in a spawned process; ``precise`` says whether it got the ``select()`` loop."""
    precise = args.server_loop == "select" and args.concurrency <= SELECT_MAX_CONCURRENCY
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    server = ctx.Process(target=serve, args=(port, args.delay, ready, precise), daemon=True)
    server.start()
    return server, ready, precise


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ----------------------------------------------------------------------------- the data


def tiny_png(seed: int, size: tuple[int, int] = (64, 48)) -> bytes:
    """A plain picture of ``size``; above the default, a photograph's worth of bytes (seeded noise, which
    PNG cannot compress: about 3 bytes a pixel)."""
    from PIL import Image

    if size == (64, 48):
        image = Image.new("RGB", size, ((seed * 37) % 256, (seed * 91) % 256, 128))
    else:
        image = Image.frombytes("RGB", size, random.Random(seed).randbytes(size[0] * size[1] * 3))
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=1)
    return out.getvalue()


def build_dataset(n: int, picture_size: tuple[int, int] = (64, 48)):
    from commet.format.dataset import Dataset
    from commet.format.model import Feedback, StoryTurn, Turn

    stories, images = [], {}
    for i in range(n):
        image = None
        if i % 4 == 0:
            image = f"img{i}.png"
            images[image] = tiny_png(i, picture_size)
        turns = [
            Turn(story=f"Meet Sam #{i}. There is a shiny red apple and a yummy chocolate bar on the table.",
                 question="Which snack do you like best, the apple or the chocolate?", image=image,
                 answers=["Apple", "Chocolate"]),
            Turn(story="Sam likes the other snack better.", question="So which snack will Sam pick?",
                 answers=["Chocolate", "Apple"]),
            Turn(feedback=Feedback(right="That's right.", wrong="That's not right."),
                 story="Sam goes out to play.", question="Where is Sam now?", answers=["Outside"]),
        ]
        if i % 2:
            turns.append(Turn(story="Sam comes back hungry.", question="Is Sam hungry?", answers=["Yes"]))
        stories.append(StoryTurn(id=f"bench-{i}", task="diverse_desire", category="Desire", turns=turns,
                                 source="bench"))
    return Dataset(storyturns=stories, name="bench", images=images)


# ----------------------------------------------------------------------------- the runs


def _cpu_seconds() -> float:
    """This process's CPU time plus that of its finished child processes (the server is still running)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _server(base_url: str, path: str) -> dict[str, float]:
    with urllib.request.urlopen(f"{base_url}{path}") as response:
        return json.loads(response.read())


def _model_specs(args: argparse.Namespace, base_url: str) -> tuple[str, str]:
    opts = f"base_url={base_url}/v1&timeout=30&transport={args.transport}"
    return f"openai:cand?{opts}", (f"llm-only:openai:judge?{opts}" if args.judge else "rules")


def _timing(wall: float, cpu: float, start: float, end: float, counts: dict[str, float]) -> dict[str, float]:
    served = counts["cand"] + counts["judge"]
    return {"wall": wall, "cpu_ms_per_call": cpu * 1000 / max(served, 1), "served": served,
            "busy": counts["last_answer"] - counts["first_arrival"],  # first request to last answer
            "startup": counts["first_arrival"] - start,
            "held_ms": counts["held_over"] * 1000 / max(served, 1), "tail": end - counts["last_answer"]}


async def engine_in_process(args: argparse.Namespace, base_url: str, dataset) -> dict[str, float]:  # noqa: ANN001
    """The engine in this process (imports already done): what the engine itself costs per call."""
    from commet.engine import EvalSettings, evaluate_async

    model, judge = _model_specs(args, base_url)
    _server(base_url, "/reset")
    with tempfile.TemporaryDirectory() as tmp:
        cpu0, wall0, start = _cpu_seconds(), time.perf_counter(), time.time()
        summary = await evaluate_async(model, dataset, judge=judge, db=Path(tmp) / "bench.sqlite", run="bench",
                                       settings=EvalSettings(images=args.images), concurrency=args.concurrency,
                                       workers=args.workers)
        wall, end, cpu = time.perf_counter() - wall0, time.time(), _cpu_seconds() - cpu0
    result = _timing(wall, cpu, start, end, _server(base_url, "/stats"))
    result.update(errors=summary.progress.errors, questions=summary.progress.questions)
    return result


def whole_process(args: argparse.Namespace, base_url: str, folder: Path) -> dict[str, float]:
    """``commet eval`` as a user runs it, from process start to exit: imports, validation, run, report."""
    import commet

    model, judge = _model_specs(args, base_url)
    src = str(Path(commet.__file__).resolve().parents[1])  # the same checkout as this process's commet
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))}
    _server(base_url, "/reset")
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "commet.cli", "eval", "--model", model, "--judge", judge, "--dataset",
                   str(folder), "--db", str(Path(tmp) / "bench.sqlite"), "--concurrency", str(args.concurrency),
                   "--workers", str(args.workers), "--images", args.images, "--quiet"]
        cpu0, wall0, start = _cpu_seconds(), time.perf_counter(), time.time()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        wall, end, cpu = time.perf_counter() - wall0, time.time(), _cpu_seconds() - cpu0
    if done.returncode != 0:
        raise SystemExit(f"commet eval failed ({done.returncode}):\n{done.stderr}")
    return _timing(wall, cpu, start, end, _server(base_url, "/stats"))


def bare_plan(args: argparse.Namespace, base_url: str, calls_per_story: list[int]) -> dict[str, Any]:
    """The calls of a run for :mod:`bare_aiohttp_client`: the same calls in the same slots and order (the engine's
    plan), with a small fixed body."""
    from commet.engine.runner import START_INTERVAL_S
    from commet.engine.schedule import planned_order

    turns = [calls // (2 if args.judge else 1) for calls in calls_per_story]
    bodies = [json.dumps({"model": name, "messages": [{"role": "user", "content": "Which snack do you like best?"}]})
              for name in (("cand", "judge") if args.judge else ("cand",))]
    return {"url": f"{base_url}/v1/chat/completions", "bodies": bodies, "calls_per_story": calls_per_story,
            "order": planned_order(turns, args.concurrency), "concurrency": args.concurrency,
            "start_interval": START_INTERVAL_S}


async def bare_client(plan: dict[str, Any]) -> tuple[float, float]:
    """Wall time and CPU ms per call of the plan's calls made in this process with bare aiohttp.

    No engine, no store, no judging, a small fixed body: what this machine, this server and
    the HTTP library cost by themselves (the baseline the engine runs beside).
    """
    wall0, cpu0 = time.perf_counter(), _cpu_seconds()
    await bare_aiohttp_client.bare_calls(plan)
    return time.perf_counter() - wall0, (_cpu_seconds() - cpu0) * 1000 / sum(plan["calls_per_story"])


def bare_process(base_url: str, plan: dict[str, Any]) -> dict[str, float]:
    """The bare client as a process of its own, timed from start to exit as ``commet eval`` is: what a program
    making these calls, and nothing else, costs with Python's start and aiohttp's import."""
    _server(base_url, "/reset")
    with tempfile.TemporaryDirectory() as tmp:
        plan_file = Path(tmp) / "plan.json"
        plan_file.write_text(json.dumps(plan), encoding="utf-8")
        command = [sys.executable, str(Path(__file__).with_name("bare_aiohttp_client.py")), str(plan_file)]
        cpu0, wall0, start = _cpu_seconds(), time.perf_counter(), time.time()
        done = subprocess.run(command, capture_output=True, text=True)
        wall, end, cpu = time.perf_counter() - wall0, time.time(), _cpu_seconds() - cpu0
    if done.returncode != 0:
        raise SystemExit(f"the bare client failed ({done.returncode}):\n{done.stderr}")
    return _timing(wall, cpu, start, end, _server(base_url, "/stats"))


def inspect_process(args: argparse.Namespace, base_url: str, folder: Path) -> dict[str, float] | None:
    """``inspect eval commet/storyturns`` on the same dataset folder and server, timed from start to exit: the
    candidate ``openai/cand``, CoMMET's judge on the model role ``grader`` (``openai/judge``; rules first,
    so it makes fewer judge calls: figures per call and over its own bound), ``--concurrency`` samples and
    connections at once. None when inspect_ai is not installed."""
    import importlib.util

    if importlib.util.find_spec("inspect_ai") is None:
        return None
    _server(base_url, "/reset")
    env = {**os.environ, "OPENAI_BASE_URL": f"{base_url}/v1", "OPENAI_API_KEY": "bench"}
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-c", "from inspect_ai._cli.main import main; main()", "eval",
                   "commet/storyturns", "-T", f"dataset={folder}", "-T", f'images="{args.images}"',  # quoted: inspect reads -T values as YAML (on: true)
                   "-T", "judge=grader" if args.judge else "judge=rules", "--model", "openai/cand",
                   "-M", "responses_api=false",  # the chat completions the server answers (not the Responses API)
                   "--model-role", "grader=openai/judge", "--max-connections", str(args.concurrency),
                   "--max-samples", str(args.concurrency), "--log-dir", tmp, "--display", "none"]
        cpu0, wall0, start = _cpu_seconds(), time.perf_counter(), time.time()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        wall, end, cpu = time.perf_counter() - wall0, time.time(), _cpu_seconds() - cpu0
    if done.returncode != 0:
        raise SystemExit(f"inspect eval failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return _timing(wall, cpu, start, end, _server(base_url, "/stats"))


def side_by_side(process: list[dict[str, float]], bare: list[dict[str, float]], bound: float,
                 inspect: list[dict[str, float]]) -> list[tuple[str, float, float | None]]:
    """``(figure, value, goal)``: the whole ``commet eval`` process beside the bare client's whole process on the same
    calls (medians), and inspect_ai's beside both where it ran."""
    def med(runs: list[dict[str, float]], key: str) -> float:
        return statistics.median(run[key] for run in runs)

    rows: list[tuple[str, float, float | None]] = [
        ("whole process wall / bare client's whole process wall", med(process, "wall") / med(bare, "wall"), 1.05),
        ("whole process CPU per call / bare client's", med(process, "cpu_ms_per_call") / med(bare, "cpu_ms_per_call"),
         2.0),
        ("first request to last answer / bound", med(process, "busy") / bound, 1.05),
        ("first request after the start / bare client's", med(process, "startup") / med(bare, "startup"), None),
    ]
    if inspect:
        rows += [("inspect_ai CPU per call / CoMMET's", med(inspect, "cpu_ms_per_call") / med(process, "cpu_ms_per_call"),
                  None),
                 ("inspect_ai CPU per call / bare client's", med(inspect, "cpu_ms_per_call") / med(bare, "cpu_ms_per_call"),
                  None)]
    return rows


def greedy_makespan(durations: list[float], slots: int) -> float:
    """Wall time of a zero-overhead engine handing the longest stories out first, each to the first free slot.

    (What the engine did before its balanced plan: above the bound by the last wave.)
    """
    free = [0.0] * slots
    for duration in sorted(durations, reverse=True):
        heapq.heapreplace(free, free[0] + duration)
    return max(free)


def stale_bytecode(package: Path) -> int:
    """How many of ``package``'s modules have no up-to-date cached bytecode (``__pycache__``).

    Each process that imports such a module compiles it from source first, and where
    ``PYTHONDONTWRITEBYTECODE`` is set (an editable install in a container, say) none is ever
    written: each ``commet eval`` then compiles CoMMET's modules again (about 0.15 s of CPU).
    """
    import importlib.util

    stale = 0
    for source in package.rglob("*.py"):
        cached = Path(importlib.util.cache_from_source(str(source)))
        try:
            header = cached.read_bytes()[:16]
        except OSError:
            stale += 1
            continue
        if int.from_bytes(header[4:8], "little") & 1:  # hash-based (PEP 552): the source's hash
            stale += header[8:16] != importlib.util.source_hash(source.read_bytes())
            continue
        stat = source.stat()  # timestamp-based: the source's mtime and size
        stale += (header[8:12] != (int(stat.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
                  or header[12:16] != (stat.st_size & 0xFFFFFFFF).to_bytes(4, "little"))
    return stale


def _size(text: str) -> tuple[int, int]:
    width, _, height = text.partition("x")
    return int(width), int(height)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stories", type=int, default=600)
    parser.add_argument("--delay", type=float, default=0.1, help="server answer delay, seconds")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--workers", type=int, default=1, help="engine worker processes (commet eval --workers)")
    parser.add_argument("--transport", choices=["direct", "sdk"], default="direct",
                        help="openai: transport (sdk: every request through the SDK's client.post)")
    parser.add_argument("--images", choices=["on", "off", "needed"], default="on", help="the run's picture policy")
    parser.add_argument("--picture-size", type=_size, default=(64, 48), metavar="WxH",
                        help="pictures (a quarter of the StoryTurns) of this size; 1024x768 is about 2.3 MB each")
    parser.add_argument("--no-judge", dest="judge", action="store_false", help="candidate only, rules judge")
    parser.add_argument("--runs", type=int, default=1, help="repeat everything; figures are medians")
    parser.add_argument("--inspect", action="store_true",
                        help="also inspect_ai's `inspect eval commet/storyturns` on the same work (when installed)")
    add_server_loop_option(parser)
    args = parser.parse_args(argv)

    os.environ.setdefault("OPENAI_API_KEY", "bench-dummy")
    port = free_port()
    server, ready, precise = start_server(port, args)
    load_before = os.getloadavg()
    engine_runs, process_runs, bare_runs, bare_process_runs, inspect_runs = [], [], [], [], []
    try:
        if not ready.wait(30):
            print("server did not start", file=sys.stderr)
            return 1
        base_url = f"http://127.0.0.1:{port}"
        import commet.engine  # noqa: F401 - import cost outside the in-process run (the whole process pays it)

        dataset = build_dataset(args.stories, args.picture_size)
        calls_per_story = [len(s.turns) * (2 if args.judge else 1) for s in dataset.storyturns]
        plan = bare_plan(args, base_url, calls_per_story)
        with tempfile.TemporaryDirectory() as tmp:
            folder = dataset.save(Path(tmp) / "dataset")
            for _ in range(args.runs):
                engine_runs.append(asyncio.run(engine_in_process(args, base_url, dataset)))
                process_runs.append(whole_process(args, base_url, folder))
                bare_runs.append(asyncio.run(bare_client(plan)))
                bare_process_runs.append(bare_process(base_url, plan))
                inspected = inspect_process(args, base_url, folder) if args.inspect else None
                if inspected is not None:
                    inspect_runs.append(inspected)
    finally:
        server.terminate()
        server.join(5)
    load_after = os.getloadavg()
    from commet.engine.schedule import planned_order, simulate

    total_calls = sum(calls_per_story)
    critical = max(calls_per_story) * args.delay
    bound = max(critical, total_calls * args.delay / args.concurrency)
    durations = [calls * args.delay for calls in calls_per_story]
    planned = simulate(durations, planned_order(calls_per_story, args.concurrency), args.concurrency)
    longest_first = greedy_makespan(durations, args.concurrency)

    def med(runs: list[dict[str, float]], key: str) -> float:
        return statistics.median(run[key] for run in runs)

    bare = statistics.median(wall for wall, _ in bare_runs)
    bare_cpu = statistics.median(cpu for _, cpu in bare_runs)
    print(f"stories={args.stories} delay={args.delay * 1000:.0f}ms concurrency={args.concurrency} "
          f"workers={args.workers} transport={args.transport} images={args.images} "
          f"pictures={args.picture_size[0]}x{args.picture_size[1]} "
          f"judge={'llm-only:openai:judge' if args.judge else 'rules (candidate only)'} runs={args.runs} "
          f"(medians) server loop={'select' if precise else 'epoll'}")
    print(f"load average (1, 5, 15 min) before {' '.join(f'{x:.2f}' for x in load_before)}, after "
          f"{' '.join(f'{x:.2f}' for x in load_after)} on {os.cpu_count()} CPUs")
    print(f"calls per run: expected {total_calls}, served {med(engine_runs, 'served'):.0f} (engine) "
          f"{med(process_runs, 'served'):.0f} (whole process); errors {med(engine_runs, 'errors'):.0f}, "
          f"questions {med(engine_runs, 'questions'):.0f}")
    print(f"lower bound {bound:.3f} s = max(critical path {critical:.3f} s, calls*delay/concurrency "
          f"{total_calls * args.delay / args.concurrency:.3f} s)")
    print()
    print(f"{'':34} {'wall s':>8} {'x bound':>8} {'first req->last answer':>23} {'CPU ms/call':>12}")
    for name, runs in (("engine, in process", engine_runs), ("whole process (commet eval)", process_runs)):
        print(f"{name:34} {med(runs, 'wall'):8.3f} {med(runs, 'wall') / bound:8.3f} "
              f"{med(runs, 'busy'):9.3f} s = {med(runs, 'busy') / bound:5.3f} x {med(runs, 'cpu_ms_per_call'):12.2f}")
        print(f"{'':36}(first request {med(runs, 'startup'):.3f} s after the start, last answer "
              f"{med(runs, 'tail'):.3f} s before the end; server held {med(runs, 'held_ms'):.3f} ms over delay)")
    print(f"{'bare aiohttp client, same plan':34} {bare:8.3f} {bare / bound:8.3f} {'':23} {bare_cpu:12.2f}")
    print(f"{'zero-overhead engine, its plan':34} {planned:8.3f} {planned / bound:8.3f}")
    print(f"{'zero-overhead, longest first':34} {longest_first:8.3f} {longest_first / bound:8.3f}  (the schedule before)")
    print()
    print(f"{'bare aiohttp client, whole process':34} {med(bare_process_runs, 'wall'):8.3f} "
          f"{med(bare_process_runs, 'wall') / bound:8.3f} {med(bare_process_runs, 'busy'):9.3f} s = "
          f"{med(bare_process_runs, 'busy') / bound:5.3f} x {med(bare_process_runs, 'cpu_ms_per_call'):12.2f}")
    print(f"{'':36}(first request {med(bare_process_runs, 'startup'):.3f} s after the start)")
    if inspect_runs:
        served = med(inspect_runs, "served")  # rules first, then the grader: fewer judge calls than CoMMET's run
        own_bound = max(critical, served * args.delay / args.concurrency)
        print(f"{'inspect_ai, whole process':34} {med(inspect_runs, 'wall'):8.3f} "
              f"{med(inspect_runs, 'wall') / own_bound:8.3f} {med(inspect_runs, 'busy'):9.3f} s = "
              f"{med(inspect_runs, 'busy') / own_bound:5.3f} x {med(inspect_runs, 'cpu_ms_per_call'):12.2f}")
        print(f"{'':36}({served:.0f} calls, its bound {own_bound:.3f} s; first request "
              f"{med(inspect_runs, 'startup'):.3f} s after the start)")
    elif args.inspect:
        print("inspect_ai is not installed: no side-by-side with it")
    print()
    ratios = side_by_side(process_runs, bare_process_runs, bound, inspect_runs)
    print("side by side (issue 47's goals):")
    for name, value, goal in ratios:
        print(f"  {name:58} {value:6.3f}" + (f"  (goal <= {goal})" if goal else ""))
    print(f"whole-process ratio {med(process_runs, 'wall') / bound:.3f} (goal <= 1.15); first request to last answer "
          f"{med(process_runs, 'busy') / bound:.3f} (goal <= 1.05); engine CPU {med(engine_runs, 'cpu_ms_per_call'):.2f} "
          f"ms per call (goal <= 0.5); engine wall / bare client {med(engine_runs, 'wall') / bare:.3f}, CPU "
          f"{med(engine_runs, 'cpu_ms_per_call') / bare_cpu:.2f}, whole process CPU / bare client "
          f"{med(process_runs, 'cpu_ms_per_call') / bare_cpu:.2f}")
    import commet

    stale = stale_bytecode(Path(commet.__file__).parent)
    if stale and sys.dont_write_bytecode:
        print(f"note: {stale} of CoMMET's modules have no up-to-date bytecode and PYTHONDONTWRITEBYTECODE is set, "
              "so every whole-process run compiled them (`python -m compileall -q src/commet` once avoids it)")
    if args.runs > 1:
        for name, runs in (("engine", engine_runs), ("whole process", process_runs)):
            print(f"  {name} per run: wall " + " ".join(f"{r['wall']:.3f}" for r in runs)
                  + "; CPU ms/call " + " ".join(f"{r['cpu_ms_per_call']:.2f}" for r in runs))
        print("  bare client per run: wall " + " ".join(f"{wall:.3f}" for wall, _ in bare_runs)
              + "; CPU ms/call " + " ".join(f"{cpu:.2f}" for _, cpu in bare_runs))
        for name, runs in (("bare client, whole process", bare_process_runs), ("inspect_ai", inspect_runs)):
            if runs:
                print(f"  {name} per run: wall " + " ".join(f"{r['wall']:.3f}" for r in runs)
                      + "; CPU ms/call " + " ".join(f"{r['cpu_ms_per_call']:.2f}" for r in runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
