"""A first run's load begun in a forked child while ``commet eval`` builds its models (issue 47:
commet.sources.checked.check_ahead, commet.sources.validation_cache.checked_ahead): the child keeps the validated
dataset in the validation cache, and the load after it reads the entry as a second run does, with the problems,
StoryTurns and hash a load in one process makes. Nothing is begun where the load would not read what the child
keeps; a refused dataset leaves nothing and is refused as before; a child whose block fails is stopped. Each case
runs in a fresh interpreter (a pytest worker runs threads, and a threaded process never forks): real forks, real
files, real ``commet eval`` processes."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.fresh_interpreter import SOURCE, run_fresh

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="work is forked on Linux only")

BENCH = str(Path(__file__).resolve().parents[1] / "bench")


def _run(code: str, tmp_path: Path) -> str:
    """``code`` after :data:`PRELUDE` in a fresh interpreter; its standard output."""
    return run_fresh(textwrap.dedent(PRELUDE.format(bench=BENCH)) + textwrap.dedent(code), tmp_path, timeout=180)


PRELUDE = """
    import os, sys, time
    sys.path.insert(0, {bench!r})
    from pathlib import Path
    import bench_openai_server as server_bench
    import commet.format.validate as validate_module
    import commet.sources.checked as checked_module
    import commet.sources.validation_cache as cache_module
    from commet.format.validate import DatasetRefused, validate_dataset
    from commet.sources import load_dataset
    from commet.sources.checked import check_ahead, load_checked

    PARENT = os.getpid()
    forks = []  # the pids of the children forked
    _fork = os.fork
    def counted_fork():
        pid = _fork()
        if pid:
            forks.append(pid)
        return pid
    os.fork = counted_fork

    CHECKED = Path("checked-by").resolve()  # the pid of each process that checked a StoryTurn's rules
    _rules = validate_module.validate_storyturn
    def recorded(*args, **kwargs):
        with open(CHECKED, "a") as out:
            out.write(f"{{os.getpid()}}\\n")
        return _rules(*args, **kwargs)
    validate_module.validate_storyturn = recorded

    def checked_by():
        found = {{int(pid) for pid in CHECKED.read_text().split()}} if CHECKED.exists() else set()
        CHECKED.unlink(missing_ok=True)
        return found

    def entries():
        kind = Path(os.environ["COMMET_CACHE_DIR"]) / cache_module.CACHE_KIND
        return sorted(p for p in kind.rglob("*") if p.is_file()) if kind.exists() else []

    def dataset(name, stories=60, leak=True):
        built = server_bench.build_dataset(stories)
        if leak:  # a warning: kept with the entry, given back by the load that reads it
            built.storyturns[7].turns[1].answers[0] = "Sam likes the other snack better"
        return built.save(name)
"""


def test_a_first_load_is_kept_by_a_child_and_read_as_a_second_load_reads_it(tmp_path: Path) -> None:
    out = _run("""
        folder = dataset("data")
        expected_problems = validate_dataset(load_dataset(folder))
        expected = load_dataset(folder)
        expected_hash = expected.content_hash()
        assert any(p.field == "answer" for p in expected_problems)
        checked_by()
        with cache_module.writes_deferred():  # as commet eval: this process's entries wait for the block's end
            with check_ahead(folder):
                assert len(forks) == 1
            assert len(entries()) == 1  # the child's is written at once
            assert PARENT not in (by := checked_by()) and by, by  # the rules were checked in the child alone
            loaded, warnings = load_checked(folder)
        assert checked_by() == set()  # read as a second load reads it: not checked again here
        assert warnings == expected_problems
        assert loaded.content_hash() == expected_hash
        assert [s.model_dump() for s in loaded.storyturns] == [s.model_dump() for s in expected.storyturns]
        assert loaded.name == expected.name and len(entries()) == 1
        with check_ahead(folder):  # an entry there: nothing begun (the load reads it)
            pass
        assert len(forks) == 1
        print("ok")
    """, tmp_path)
    assert out == "ok\n"


def test_nothing_is_begun_where_the_load_would_not_read_what_the_child_keeps(tmp_path: Path) -> None:
    out = _run("""
        import threading
        small = dataset("small", stories=8, leak=False)
        size = (small / "storyturns.jsonl").stat().st_size + (small / "dataset.json").stat().st_size
        begun = []
        def tried(path, **options):
            before = len(forks)
            with check_ahead(path, **options):
                pass
            begun.append(len(forks) - before)

        cache_module.AHEAD_MAX_BYTES = size - 1  # larger than the limit: loaded in the process, as before
        tried(small)
        cache_module.AHEAD_MAX_BYTES = size
        tried(small, columns="story=text")  # a table read by its columns, an adapter: never kept in the cache
        tried(small, adapter="adapt.py:make")
        for other in ("hf:someone/data", "missing-folder", "table.csv"):
            Path("table.csv").write_text("story,question\\n")
            tried(other)
        stop = threading.Event()
        thread = threading.Thread(target=stop.wait)
        thread.start()
        tried(small)  # a threaded process never forks
        stop.set()
        thread.join()
        deadline = time.monotonic() + 30  # (join() returns before the kernel lets the thread go)
        while len(os.listdir("/proc/self/task")) != 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert begun == [0] * 7 and entries() == [], begun
        tried(small)  # the same dataset at the limit, in a process of one thread: begun
        assert begun[-1] == 1 and len(entries()) == 1
        tried(small)  # and now it has an entry: not again
        assert begun[-1] == 0
        print("ok")
    """, tmp_path)
    assert out == "ok\n"


def test_a_refused_dataset_leaves_no_entry_and_is_refused_with_every_problem(tmp_path: Path) -> None:
    out = _run("""
        folder = dataset("data", stories=20)
        lines = (folder / "storyturns.jsonl").read_text().splitlines()
        broken = __import__("json").loads(lines[3])
        broken["turns"][0]["image"] = "no-such-picture"  # an error of the checks, not of the reading
        lines[3] = __import__("json").dumps(broken)
        (folder / "storyturns.jsonl").write_text("\\n".join(lines) + "\\n")
        expected = validate_dataset(load_dataset(folder))
        assert any(p.severity == "error" for p in expected)
        with check_ahead(folder):
            assert len(forks) == 1
        assert entries() == []
        try:
            load_checked(folder)
        except DatasetRefused as refused:
            assert refused.problems == expected, refused.problems
        else:
            raise AssertionError("not refused")
        broken["turns"][0]["answers"] = []  # one that cannot be read: refused as before
        lines[3] = __import__("json").dumps(broken)
        (folder / "storyturns.jsonl").write_text("\\n".join(lines) + "\\n")
        with check_ahead(folder):
            pass
        assert len(forks) == 2 and entries() == []
        try:
            load_checked(folder)
        except DatasetRefused as refused:
            assert [str(p) for p in refused.problems] == [
                "data/storyturns.jsonl:4 story=bench-3 turn=0 field=answers: error: List should have at least 1 item "
                "after validation, not 0"], refused.problems
        else:
            raise AssertionError("not refused")
        print("ok")
    """, tmp_path)
    assert out == "ok\n"


def test_a_block_left_by_an_error_stops_its_child(tmp_path: Path) -> None:
    out = _run("""
        folder = dataset("data", stories=10)
        def slow(path):  # the child's load: far longer than the test
            time.sleep(120)
        checked_module.load_dataset = slow
        started = time.monotonic()
        try:
            with check_ahead(folder):
                assert len(forks) == 1
                raise RuntimeError("the model spec is refused")
        except RuntimeError:
            pass
        assert time.monotonic() - started < 30
        try:
            os.kill(forks[0], 0)
        except ProcessLookupError:
            print("stopped and reaped")
        assert entries() == []
    """, tmp_path)
    assert out == "stopped and reaped\n"


def _eval(tmp_path: Path, folder: Path, db: Path, cache: str) -> subprocess.CompletedProcess[str]:
    replies = tmp_path / "replies.json"
    stories = [json.loads(line)["id"] for line in (folder / "storyturns.jsonl").read_text().splitlines()]
    replies.write_text(json.dumps({story: ["the basket"] * 10 for story in stories}), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": SOURCE, "COMMET_CACHE_DIR": cache}
    return subprocess.run([sys.executable, "-m", "commet.cli", "eval", "--model", f"replay:{replies}", "--dataset",
                           str(folder), "--db", str(db), "--run", "r", "--quiet", "--force"],
                          capture_output=True, text=True, env=env, timeout=180)


def test_eval_with_a_child_ahead_records_what_it_records_without(tmp_path: Path) -> None:
    """Real `commet eval` processes on one dataset: with the cache (a child loads ahead) and without it (caching off,
    loaded in the process): the same run, the same rows."""
    sys.path.insert(0, BENCH)
    import bench_openai_server as server_bench

    folder = server_bench.build_dataset(40).save(tmp_path / "data")
    cache = tmp_path / "cache"
    ahead = _eval(tmp_path, folder, tmp_path / "ahead.sqlite", str(cache))
    here = _eval(tmp_path, folder, tmp_path / "here.sqlite", "")
    for done in (ahead, here):
        assert done.returncode in (0, 3) and "Traceback" not in done.stderr, done.stderr
    assert len([p for p in (cache / "validated-datasets").rglob("*") if p.is_file()]) == 1

    def rows(db: Path) -> tuple[list[tuple[object, ...]], ...]:
        with sqlite3.connect(db) as con:
            return (con.execute("SELECT name, config_hash, dataset_name, dataset_hash, story_count FROM runs").fetchall(),
                    con.execute("SELECT * FROM turns ORDER BY 2, 3").fetchall(),
                    con.execute("SELECT * FROM stories ORDER BY 2").fetchall())

    assert rows(tmp_path / "ahead.sqlite") == rows(tmp_path / "here.sqlite")
