"""Whether two checkouts store the same run, row for row: a check for changes meant to make the engine cheaper.

    python bench/compare_run_rows.py OTHER/src [--stories 200]

Runs bench_engine_instructions.py's workload (bench_openai_server.py's StoryTurns, candidate, LLM judge and
replies, every post answered at once) with this checkout's ``src`` and with ``OTHER/src``, each in a process of
its own with a results store of its own, then compares every table of the two stores: the same rows, column for
column, leaving out only what differs from one run to the next whatever the code (the times a row was written,
a call's latency, the run's timing and package version, the leases' owners and heartbeats). Prints the rows of
each table and exits 1 at the first difference, naming the table, the column and the row.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import sqlite3
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

#: columns whose values differ between two runs of the same code (clock, machine, process)
VOLATILE = {"created_at", "started_at", "finished_at", "updated", "updated_at", "latency_s", "heartbeat",
            "heartbeat_at", "owner", "expires_at", "package_version", "pid", "host"}


def run_child(stories: int, db: Path) -> None:
    """One run of ``stories`` StoryTurns into the store ``db`` (the workload of bench_engine_instructions.py)."""
    spec = importlib.util.spec_from_file_location("bench_engine_instructions",
                                                  Path(__file__).with_name("bench_engine_instructions.py"))
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    from commet.engine import EvalSettings, evaluate_async
    from commet.models import openai_compat

    server = bench.server_bench

    async def answer_at_once(self: object, body: bytes) -> bytes:
        await asyncio.sleep(0)
        if b'"model":"judge"' in body or b'"model": "judge"' in body:
            return server.JUDGE_WRONG if zlib.crc32(body) % 5 == 0 else server.JUDGE_REPLY
        return server.CAND_REPLY

    openai_compat.DirectChatTransport.post = answer_at_once  # type: ignore[method-assign]
    model, judge = server._model_specs(argparse.Namespace(transport="direct", judge=True), "http://127.0.0.1:9")
    asyncio.run(evaluate_async(model, server.build_dataset(stories), judge=judge, db=db, run="bench",
                               settings=EvalSettings(images="on"), concurrency=64, workers=1))


def rows(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every table's rows without the volatile columns, sorted (their order of insertion may differ)."""
    connection = sqlite3.connect(db)
    try:
        tables = [name for (name,) in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        out: dict[str, list[tuple[object, ...]]] = {}
        for table in tables:
            columns = [row[1] for row in connection.execute(f"PRAGMA table_info({table})")
                       if row[1] not in VOLATILE and not (row[1] == "id" and row[5])]  # autoincrement ids
            selected = ", ".join(f'"{column}"' for column in columns)
            out[table] = sorted((tuple(row) for row in connection.execute(f"SELECT {selected} FROM {table}")), key=repr)
            out[table].insert(0, tuple(columns))
        return out
    finally:
        connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("other", help="the other checkout's src folder")
    parser.add_argument("--stories", type=int, default=200)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(int(args.child[0]), Path(args.child[1]))
        return
    here = str(Path(__file__).resolve().parents[1] / "src")
    with tempfile.TemporaryDirectory() as tmp:
        stores = []
        for name, src in (("this", here), ("other", args.other)):
            db = Path(tmp) / f"{name}.sqlite"
            env = {**os.environ, "OPENAI_API_KEY": "bench", "PYTHONPATH": src}
            subprocess.run([sys.executable, __file__, args.other, "--child", str(args.stories), str(db)], env=env,
                           check=True)
            stores.append(rows(db))
    this, other = stores
    if sorted(this) != sorted(other):
        raise SystemExit(f"the tables differ: {sorted(this)} against {sorted(other)}")
    for table in sorted(this):
        mine, theirs = this[table], other[table]
        if mine[0] != theirs[0]:
            raise SystemExit(f"{table}: columns {mine[0]} against {theirs[0]}")
        if len(mine) != len(theirs):
            raise SystemExit(f"{table}: {len(mine) - 1} rows against {len(theirs) - 1}")
        for a, b in zip(mine[1:], theirs[1:], strict=True):
            if a != b:
                column = next(c for c, x, y in zip(mine[0], a, b, strict=True) if x != y)
                raise SystemExit(f"{table}: column {column} differs in row {a!r:.300} against {b!r:.300}")
        print(f"{table}: {len(mine) - 1} rows, the same ({len(mine[0])} columns compared)")


if __name__ == "__main__":
    main()
