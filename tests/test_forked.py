"""Work on a second core at start-up (commet.forked) and the content hash made there (Dataset.hashing_beside):
the same answer as made in the process, whatever happens to the child. Each case runs in a fresh interpreter of
its own (a pytest worker runs threads, and a threaded process never forks): real forks, real files."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from tests.fresh_interpreter import run_fresh

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="work is forked on Linux only")


def test_work_is_done_in_a_child_and_its_result_comes_back(tmp_path: Path) -> None:
    out = run_fresh("""
        import os
        from commet.forked import ForkedWork, fork_is_safe
        assert fork_is_safe()
        parent = os.getpid()
        with ForkedWork(lambda: {"pid": os.getpid(), "data": b"x" * 100_000}) as work:
            assert work.forked
            found = work.result()
            assert not work.forked
        assert found["pid"] != parent and found["data"] == b"x" * 100_000, found["pid"]
        try:
            os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            print("ok")  # the child was reaped
    """, tmp_path)
    assert out == "ok\n"


@pytest.mark.parametrize("failure", ["", 'raise RuntimeError("the child fails")',
                                     "os._exit(3)  # killed, crashed: no result written"])
@pytest.mark.parametrize("collect", ["result", "outcome"])
def test_a_failing_or_dead_child_gives_the_work_to_the_parent_or_no_outcome(collect: str, failure: str,
                                                                              tmp_path: Path) -> None:
    """``result()`` does the work of a failed child here; ``outcome()`` (for work whose effect is what counts, a file
    it writes: commet.sources.validation_cache.checked_ahead) gives None instead, and never does the work here."""
    out = run_fresh("""
        import os
        from commet.forked import ForkedWork
        parent = os.getpid()

        def work():
            if os.getpid() != parent:
                FAILURE
            return os.getpid()

        with ForkedWork(work) as forked:
            assert forked.forked
            found = forked.COLLECT()
            assert not forked.forked  # collected: reaped, once
        print("none" if found is None else "parent" if found == parent else "child")
    """.replace("FAILURE", failure or "pass").replace("COLLECT", collect), tmp_path)
    assert out == ("child\n" if not failure else "parent\n" if collect == "result" else "none\n")


def test_a_threaded_process_or_no_room_gets_the_work_done_here(tmp_path: Path) -> None:
    out = run_fresh("""
        import os, threading, time
        from commet.forked import ForkedWork, fork_is_safe
        parent = os.getpid()
        stop = threading.Event()
        thread = threading.Thread(target=stop.wait)
        thread.start()
        try:
            assert not fork_is_safe()
            with ForkedWork(os.getpid) as work:
                assert not work.forked and work.result() == parent  # never forked beside a thread
        finally:
            stop.set()
            thread.join()
        deadline = time.monotonic() + 30  # join() returns before the kernel has let the thread go: wait for it
        while len(os.listdir("/proc/self/task")) != 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        import commet.forked as forked_module
        assert fork_is_safe()
        forked_module.ROOM_FOR_COPIES = 10**9  # no room for a copy of this process: never forked
        assert not fork_is_safe()
        with ForkedWork(os.getpid) as work:
            assert not work.forked and work.result() == parent
        print("ok")
    """, tmp_path)
    assert out == "ok\n"


def test_a_child_not_collected_is_stopped_and_reaped(tmp_path: Path) -> None:
    out = run_fresh("""
        import os, time
        from commet.forked import ForkedWork
        started = time.monotonic()
        with ForkedWork(lambda: time.sleep(60)) as work:
            pid = work._pid
        assert time.monotonic() - started < 10
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            print("gone")
    """, tmp_path)
    assert out == "gone\n"


def _run_with_dataset(code: str, tmp_path: Path) -> str:
    """``code`` after :data:`DATASET`'s: a dataset just large enough to be checked on two cores, and its problems
    and hash made in one process."""
    bench = str(Path(__file__).resolve().parents[1] / "bench")
    return run_fresh(textwrap.dedent(DATASET.format(bench=bench)) + textwrap.dedent(code), tmp_path)


DATASET = """
    import os, sys
    sys.path.insert(0, {bench!r})
    import bench_openai_server as server_bench
    import commet.format.validate as validate_module
    from commet.format.validate import CHECKED_BESIDE_FROM, validate_and_hash, validate_dataset
    from commet.sources import load_dataset

    built = server_bench.build_dataset(CHECKED_BESIDE_FROM)
    built.storyturns[7].turns[1].answers[0] = "Sam likes the other snack better"  # a leak warning, in the child
    folder = built.save("data")
    checked_here = []
    rules = validate_module.validate_storyturn
    def counted(*args, **kwargs):
        checked_here.append(os.getpid())
        return rules(*args, **kwargs)
    validate_module.validate_storyturn = counted

    def fresh():
        return load_dataset(folder)
    expected_problems = validate_dataset(fresh())
    expected_hash = fresh().content_hash()
    assert any(p.field == "answer" for p in expected_problems)
    checked_here.clear()
"""


def test_two_cores_give_the_one_process_problems_and_hash(tmp_path: Path) -> None:
    out = _run_with_dataset("""
        dataset = fresh()
        problems, digest = validate_and_hash(dataset)
        assert problems == expected_problems and digest == expected_hash
        assert checked_here == []  # the StoryTurns' rules were checked in the child alone
        assert dataset.content_hash() == expected_hash  # kept for the run

        small = load_dataset(folder)
        small.storyturns = small.storyturns[:10]
        problems, digest = validate_and_hash(small)  # a small dataset: all here, no fork
        assert len(checked_here) == 10 and digest == small.content_hash()
        print("ok")
    """, tmp_path)
    assert out == "ok\n"


def test_a_broken_picture_or_a_broken_rule_is_found_as_in_one_process(tmp_path: Path) -> None:
    out = _run_with_dataset("""
        picture = folder / "images" / "img4.png"
        good = picture.read_bytes()
        picture.write_bytes(good[:40])  # a cut picture: the rules are checked again here, with its verdict
        expected = validate_dataset(fresh())
        assert any(p.field == "image" and p.severity == "error" for p in expected)
        checked_here.clear()
        problems, digest = validate_and_hash(fresh())
        assert problems == expected and digest is None and len(checked_here) == CHECKED_BESIDE_FROM
        picture.write_bytes(good)

        broken = fresh()
        broken.storyturns[5] = broken.storyturns[4]  # a duplicate id: found by the child
        expected = validate_dataset(broken)
        assert any(p.field == "id" and p.severity == "error" for p in expected)
        broken = fresh()
        broken.storyturns[5] = broken.storyturns[4]
        checked_here.clear()
        problems, digest = validate_and_hash(broken)
        assert problems == expected and digest is None and checked_here == []
        print("ok")
    """, tmp_path)
    assert out == "ok\n"


def test_a_first_load_keeps_the_one_process_hash_and_a_second_finds_it(tmp_path: Path) -> None:
    """What ``commet validate`` and ``commet eval`` call: the cache entry holds the hash made in one process."""
    out = _run_with_dataset("""
        from commet.sources.checked import load_checked
        first, warnings = load_checked(folder)
        assert first.content_hash() == expected_hash and warnings == expected_problems and checked_here == []
        second, warnings = load_checked(folder)  # from the cache entry: neither validated nor hashed
        assert second is not first and second.content_hash() == expected_hash and warnings == expected_problems
        assert checked_here == []
        print("ok")
    """, tmp_path)
    assert out == "ok\n"
