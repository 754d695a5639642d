"""Engine throughput against a real OpenAI-compatible HTTP server with a fixed answer delay.

    python bench/bench_openai_server.py [--stories 600] [--delay 0.1] [--concurrency 64] [--workers 1]
                                        [--transport direct|sdk] [--no-judge]

Builds ~600 StoryTurns (3 or 4 turns each, a quarter with a picture) in memory, starts an
asyncio HTTP/1.1 server (a minimal ``asyncio.Protocol``, keep-alive, many concurrent
connections, little CPU) on 127.0.0.1 in a SEPARATE PROCESS that
answers every chat completion after ``--delay`` seconds, then runs the real engine
(``commet.engine.Engine`` with a fresh SQLite store) with the candidate ``openai:cand`` and,
unless ``--no-judge``, the LLM judge ``llm-only:openai:judge`` (so every turn is two serial
calls) through that server at ``--concurrency`` stories in flight.

It prints the wall time of the run, the lower bound
``max(longest story's critical path, total calls * delay / concurrency)``, their ratio
(goal: < 1.1) and the client process's CPU time per call. The server's CPU is not counted
(it runs in its own process). To tell the engine's overhead from the workload's, it also
prints when the first request arrived and the last answer left, the wall time of a
zero-overhead engine (longest stories first, each into the first free slot, every call
exactly ``--delay``: above the bound by the last wave alone), and, as the baseline run side
by side, the wall time of a bare aiohttp client making the same calls in the same slots and
order against the same server, with no engine, store or judge.
"""

from __future__ import annotations

import argparse
import asyncio
import heapq
import io
import json
import multiprocessing
import os
import resource
import socket
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

VERDICT = json.dumps({"verdict": "correct", "matched_answer": 1, "reason": "matches the expected answer"})


# ----------------------------------------------------------------------------- the server (child process)


class _Http(asyncio.Protocol):
    """A minimal HTTP/1.1 keep-alive server protocol: parse, wait ``delay``, answer. Cheap on CPU."""

    def __init__(self, delay: float, counts: dict[str, float]):
        self.delay, self.counts = delay, counts
        self.buffer = b""
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
            body = self.buffer[head_end + 4:total]
            self.buffer = self.buffer[total:]
            path = head.split(" ", 2)[1]
            asyncio.get_running_loop().create_task(self.answer(path, body))

    async def answer(self, path: str, body: bytes) -> None:
        if path == "/stats":
            payload = json.dumps(self.counts).encode()
        else:
            model = "judge" if b'"model":"judge"' in body or b'"model": "judge"' in body else "cand"
            self.counts[model] += 1
            self.counts.setdefault("first_arrival", time.time())
            await asyncio.sleep(self.delay)
            payload = JUDGE_REPLY if model == "judge" else CAND_REPLY
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


CAND_REPLY = _reply("cand", "Apple")
JUDGE_REPLY = _reply("judge", VERDICT)


def serve(port: int, delay: float, ready) -> None:  # noqa: ANN001 - a multiprocessing Event
    """Child process: an asyncio server answering every chat completion after ``delay`` seconds."""
    counts: dict[str, float] = {"cand": 0, "judge": 0}

    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(lambda: _Http(delay, counts), "127.0.0.1", port, backlog=4096)
        ready.set()
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ----------------------------------------------------------------------------- the data


def tiny_png(seed: int) -> bytes:
    from PIL import Image

    image = Image.new("RGB", (64, 48), ((seed * 37) % 256, (seed * 91) % 256, 128))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def build_dataset(n: int):
    from commet.format.dataset import Dataset
    from commet.format.model import Feedback, StoryTurn, Turn

    stories, images = [], {}
    for i in range(n):
        image = None
        if i % 4 == 0:
            image = f"img{i}.png"
            images[image] = tiny_png(i)
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


# ----------------------------------------------------------------------------- the run


def _cpu_seconds() -> float:
    """This process's CPU time plus that of its finished worker processes (the server is still running)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


async def run_bench(args: argparse.Namespace, base_url: str) -> dict[str, float]:
    from commet.engine import EvalSettings, evaluate_async

    dataset = build_dataset(args.stories)
    opts = f"base_url={base_url}/v1&timeout=30&transport={args.transport}"
    judge = f"llm-only:openai:judge?{opts}" if args.judge else "rules"
    with tempfile.TemporaryDirectory() as tmp:
        cpu0, wall0, start = _cpu_seconds(), time.perf_counter(), time.time()
        summary = await evaluate_async(f"openai:cand?{opts}", dataset, judge=judge, db=Path(tmp) / "bench.sqlite",
                                       run="bench", settings=EvalSettings(), concurrency=args.concurrency,
                                       workers=args.workers)
        wall = time.perf_counter() - wall0
        end = time.time()
        cpu = _cpu_seconds() - cpu0
    calls_per_story = [len(s.turns) * (2 if args.judge else 1) for s in dataset.storyturns]
    total_calls = sum(calls_per_story)
    critical = max(calls_per_story) * args.delay
    bound = max(critical, total_calls * args.delay / args.concurrency)
    greedy = greedy_makespan([calls * args.delay for calls in calls_per_story], args.concurrency)
    return {"wall": wall, "cpu": cpu, "start": start, "end": end, "total_calls": total_calls, "critical": critical,
            "bound": bound, "greedy": greedy, "calls_per_story": calls_per_story,
            "errors": summary.progress.errors, "questions": summary.progress.questions,
            "model_calls": summary.progress.model_calls}


async def bare_client(args: argparse.Namespace, base_url: str, calls_per_story: list[int]) -> float:
    """Wall time of the same calls in the same slots and order, made with bare aiohttp.

    No engine, no store, no judging, a small fixed body: what this machine, this server and
    the HTTP library cost by themselves (the baseline the engine runs beside).
    """
    import aiohttp

    from commet.engine.runner import START_INTERVAL_S

    url = f"{base_url}/v1/chat/completions"
    headers = {"Content-Type": "application/json", "Authorization": "Bearer bench"}
    bodies = [json.dumps({"model": name, "messages": [{"role": "user", "content": "Which snack do you like best?"}]})
              .encode() for name in (("cand", "judge") if args.judge else ("cand",))]
    stories = iter(sorted(calls_per_story, reverse=True))  # shared: the next story goes to the first free slot

    async def slot(session: aiohttp.ClientSession, start_after: float) -> None:
        await asyncio.sleep(start_after)
        for calls in stories:
            for k in range(calls):
                async with session.post(url, data=bodies[k % len(bodies)], headers=headers) as response:
                    json.loads(await response.read())

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1000)) as session:
        wall0 = time.perf_counter()
        await asyncio.gather(*(slot(session, i * START_INTERVAL_S) for i in range(args.concurrency)))
        return time.perf_counter() - wall0


def greedy_makespan(durations: list[float], slots: int) -> float:
    """Wall time of a zero-overhead engine: stories longest first, each into the first free slot.

    Above the lower bound by the last wave alone (slots finishing their last story at
    different times), which no scheduler that keeps a story in one slot can avoid.
    """
    free = [0.0] * slots
    for duration in sorted(durations, reverse=True):
        heapq.heapreplace(free, free[0] + duration)
    return max(free)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stories", type=int, default=600)
    parser.add_argument("--delay", type=float, default=0.1, help="server answer delay, seconds")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--workers", type=int, default=1, help="engine worker processes (commet eval --workers)")
    parser.add_argument("--transport", choices=["direct", "sdk"], default="direct",
                        help="openai: transport (sdk: every request through the SDK's client.post)")
    parser.add_argument("--no-judge", dest="judge", action="store_false", help="candidate only, rules judge")
    args = parser.parse_args(argv)

    os.environ.setdefault("OPENAI_API_KEY", "bench-dummy")
    port = free_port()
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    server = ctx.Process(target=serve, args=(port, args.delay, ready), daemon=True)
    server.start()
    try:
        if not ready.wait(30):
            print("server did not start", file=sys.stderr)
            return 1
        base_url = f"http://127.0.0.1:{port}"
        import openai  # noqa: F401

        import commet.engine  # noqa: F401 - import cost outside the timed region

        result = asyncio.run(run_bench(args, base_url))
        with urllib.request.urlopen(f"{base_url}/stats") as response:
            counts = json.loads(response.read())
        bare = asyncio.run(bare_client(args, base_url, result["calls_per_story"]))
    finally:
        server.terminate()
        server.join(5)
    served = int(counts["cand"] + counts["judge"])
    print(f"stories={args.stories} delay={args.delay * 1000:.0f}ms concurrency={args.concurrency} "
          f"workers={args.workers} transport={args.transport} "
          f"judge={'llm-only:openai:judge' if args.judge else 'rules (candidate only)'}")
    print(f"calls: expected {result['total_calls']:.0f}, served {served} (candidate {counts['cand']:.0f}, judge {counts['judge']:.0f}), "
          f"errors {result['errors']:.0f}, questions {result['questions']:.0f}")
    print(f"wall time        {result['wall']:.3f} s")
    print(f"lower bound      {result['bound']:.3f} s  (critical path {result['critical']:.3f} s, "
          f"calls*delay/concurrency {result['total_calls'] * args.delay / args.concurrency:.3f} s)")
    print(f"  first request  {counts['first_arrival'] - result['start']:.3f} s after the start "
          f"(building clients, opening the store)")
    print(f"  last answer    {result['end'] - counts['last_answer']:.3f} s before the end (scoring, closing the run)")
    print(f"ratio            {result['wall'] / result['bound']:.3f}  (goal < 1.1)")
    print(f"  zero-overhead engine  {result['greedy']:.3f} s = {result['greedy'] / result['bound']:.3f} x bound "
          "(longest first, no CPU, no latency: the last wave's cost)")
    print(f"  wall / that           {result['wall'] / result['greedy']:.3f}")
    print(f"  bare aiohttp client   {bare:.3f} s = {bare / result['bound']:.3f} x bound (the same calls in the same "
          "slots and order; no engine, store or judge)")
    print(f"  wall / bare client    {result['wall'] / bare:.3f}  (the engine's own overhead)")
    print(f"client CPU/call  {result['cpu'] * 1000 / max(served, 1):.2f} ms  (total {result['cpu']:.2f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
