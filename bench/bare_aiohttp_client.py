"""A bare aiohttp client making a plan's calls: the floor CoMMET's figures are set beside.

    python bench/bare_aiohttp_client.py PLAN.json

Used by bench/bench_openai_server.py, in its own process (``bare_process``: timed from start to exit as
``commet eval`` is, with Python's start and aiohttp's import) and in process (``bare_calls``). The plan
says the URL, the request bodies (one per call of a turn, in turn), each story's calls, the order in which
stories go to the first free slot (the engine's plan), the number of slots and how far apart they start.
No engine, store or judge: a small fixed body, the reply parsed as JSON.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any


async def bare_calls(plan: dict[str, Any]) -> None:
    import aiohttp

    url, headers = plan["url"], {"Content-Type": "application/json", "Authorization": "Bearer bench"}
    bodies = [body.encode() for body in plan["bodies"]]
    calls_per_story: list[int] = plan["calls_per_story"]
    stories = iter(plan["order"])  # each story to the first free slot, in the engine's order

    async def slot(session: aiohttp.ClientSession, index: int) -> None:
        await asyncio.sleep(index * plan["start_interval"])
        for story in stories:
            for k in range(calls_per_story[story]):
                async with session.post(url, data=bodies[k % len(bodies)], headers=headers) as response:
                    json.loads(await response.read())

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1000)) as session:
        await asyncio.gather(*(slot(session, i) for i in range(min(plan["concurrency"], len(calls_per_story)))))


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as plan_file:
        asyncio.run(bare_calls(json.load(plan_file)))
