"""One run as shards on many "machines" (processes with their own stores), merged, equals an unsharded run."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

from commet.engine import EvalSettings, Shard, evaluate_async
from commet.reports.metrics import run_metrics
from commet.store.merge import MergeError, merge_stores
from commet.store.sqlite import Store
from tests.conftest import FALSE_BELIEF


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    """11 StoryTurns of two lengths, replies right and wrong (some feedback branches taken)."""
    dataset, replies = tmp_path / "stories.jsonl", {}
    with dataset.open("w") as out:
        for i in range(11):
            record = {**json.loads(json.dumps(FALSE_BELIEF).replace("Ana", f"Ana{i}")), "id": f"s-{i}"}
            record["storyturn"] = record["storyturn"][: 3 if i % 2 else 2]
            out.write(json.dumps(record) + "\n")
            replies[record["id"]] = ["The basket." if i % 3 else "The box.", "No." if i % 4 else "Yes.", "The box."]
    replay = tmp_path / "replies.json"
    replay.write_text(json.dumps(replies))
    return dataset, replay


def rows(db: Path, table: str) -> list[tuple]:
    with sqlite3.connect(db) as con:
        con.row_factory = None
        return con.execute(f"SELECT * FROM {table} ORDER BY story_id{', turn' if table == 'turns' else ''}").fetchall()


def metrics(db: Path) -> dict:
    with Store(db) as store:
        run = store.get_run("r")
        assert run is not None
        result = asdict(run_metrics(store, run))
    result.pop("run")
    return result


def test_shards_in_three_processes_merge_to_the_unsharded_run(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    dataset, replay = inputs
    shards = [tmp_path / f"shard{i}.sqlite" for i in range(3)]
    processes = [subprocess.Popen([sys.executable, "-m", "commet.cli", "eval", "--model", f"replay:{replay}",
                                   "--dataset", str(dataset), "--db", str(db), "--run", "r", "--quiet",
                                   "--shard", f"{i}/3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for i, db in enumerate(shards)]
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
    sizes = [len(rows(db, "stories")) for db in shards]
    assert sorted(sizes) == [3, 4, 4]  # a share each, nothing twice

    merged = tmp_path / "merged.sqlite"
    done = subprocess.run([sys.executable, "-m", "commet.cli", "merge", str(merged), *map(str, shards)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "run 'r': done" in done.stdout

    whole = tmp_path / "whole.sqlite"
    import asyncio

    asyncio.run(evaluate_async(f"replay:{replay}", dataset, db=whole, run="r"))
    assert rows(merged, "turns") == rows(whole, "turns") and len(rows(whole, "turns")) == 27
    assert rows(merged, "stories") == rows(whole, "stories")
    assert metrics(merged) == metrics(whole)
    with sqlite3.connect(merged) as con:
        assert con.execute("SELECT COUNT(*) FROM call_log WHERE kind = 'model'").fetchone()[0] == 27


async def test_merge_refuses_conflicts_and_writes_nothing(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    dataset, replay = inputs
    parts = []
    for i in range(3):
        db = tmp_path / f"p{i}.sqlite"
        await evaluate_async(f"replay:{replay}", dataset, db=db, run="r", shard=Shard(i, 3))
        parts.append(db)
    out = tmp_path / "out.sqlite"

    with pytest.raises(MergeError, match="shard 0/3 is also in"):
        merge_stores(out, [parts[0], parts[1], parts[0]])
    assert not out.exists()  # refused: no output left behind

    report = merge_stores(out, parts[:2])  # one shard missing: incomplete, not done
    assert report.runs == {"r": "incomplete"}
    with pytest.raises(MergeError, match="already in the output"):
        merge_stores(out, [parts[1]])
    assert merge_stores(out, [parts[2]]).runs == {"r": "done"}

    other = tmp_path / "other.sqlite"  # the same run name with other settings is not the same run
    await evaluate_async(f"replay:{replay}", dataset, db=other, run="r", settings=EvalSettings(feedback="none"),
                         shard=Shard(0, 3))
    before = rows(out, "turns")
    with pytest.raises(MergeError, match="another config hash"):
        merge_stores(out, [other])
    assert rows(out, "turns") == before

    broken = tmp_path / "broken.sqlite"
    broken.write_text("not a database")
    with pytest.raises(MergeError, match="not a CoMMET results store"):
        merge_stores(tmp_path / "x.sqlite", [broken])


def test_a_bad_shard_is_one_line_and_exit_2(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    dataset, replay = inputs
    for bad in ("3/3", "x/2"):
        done = subprocess.run([sys.executable, "-m", "commet.cli", "eval", "--model", f"replay:{replay}",
                               "--dataset", str(dataset), "--db", str(tmp_path / "s.sqlite"), "--shard", bad],
                              capture_output=True, text=True)
        assert done.returncode == 2 and done.stderr.startswith("error: --shard") and "Traceback" not in done.stderr
        assert not (tmp_path / "s.sqlite").exists()
