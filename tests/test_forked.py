"""Work on a second core at start-up (commet.forked) and the content hash made there (Dataset.hashing_beside):
the same answer as made in the process, whatever happens to the child. Each case runs in a fresh interpreter of
its own (a pytest worker runs threads, and a threaded process never forks): real forks, real files."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import commet

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="work is forked on Linux only")

SOURCE = str(Path(commet.__file__).resolve().parents[1])


def _run(code: str, tmp_path: Path) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env={"PYTHONPATH": SOURCE, "PATH": "/usr/bin:/bin",
                                             "COMMET_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_work_is_done_in_a_child_and_its_result_comes_back(tmp_path: Path) -> None:
    out = _run("""
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


def test_a_failing_child_or_a_threaded_process_gets_the_work_done_here(tmp_path: Path) -> None:
    out = _run("""
        import os, threading
        from commet.forked import ForkedWork, fork_is_safe
        parent = os.getpid()

        def only_here():
            if os.getpid() != parent:
                raise RuntimeError("the child fails")
            return os.getpid()

        with ForkedWork(only_here) as work:
            assert work.forked
            assert work.result() == parent  # the child failed: done here
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
        print("ok")
    """, tmp_path)
    assert out == "ok\n"


def test_a_dead_child_gives_the_work_to_the_parent(tmp_path: Path) -> None:
    out = _run("""
        import os
        from commet.forked import ForkedWork
        parent = os.getpid()

        def work():
            if os.getpid() != parent:
                os._exit(3)  # killed, crashed: no result written
            return "made here"

        with ForkedWork(work) as forked:
            assert forked.forked
            print(forked.result())
    """, tmp_path)
    assert out == "made here\n"


def test_a_child_not_collected_is_stopped_and_reaped(tmp_path: Path) -> None:
    out = _run("""
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
    """``code`` after :data:`DATASET`'s: a dataset just large enough to be hashed beside, and its hash made here."""
    bench = str(Path(__file__).resolve().parents[1] / "bench")
    return _run(textwrap.dedent(DATASET.format(bench=bench)) + textwrap.dedent(code), tmp_path)


DATASET = """
    import os, sys, time
    sys.path.insert(0, {bench!r})
    import bench_openai_server as server_bench
    import commet.format.dataset as dataset_module
    from commet.format.dataset import Dataset
    from commet.sources import load_dataset

    folder = server_bench.build_dataset(dataset_module.HASHED_BESIDE_FROM).save("data")
    made_here = []
    digest = Dataset._content_digest
    def counted(self, pictures):
        made_here.append(os.getpid())
        return digest(self, pictures)
    Dataset._content_digest = counted

    def fresh():
        return load_dataset(folder)
    expected = fresh().content_hash()
    made_here.clear()
"""


def test_the_content_hash_made_beside_is_the_one_made_here(tmp_path: Path) -> None:
    out = _run_with_dataset("""
        from commet.format.validate import validate_dataset
        dataset = fresh()
        with dataset.hashing_beside() as hashing:
            assert hashing.forked is not None and hashing.forked.forked
            assert not [p for p in validate_dataset(dataset) if p.severity == "error"]  # reads every picture
            assert hashing.content_hash() == expected
        assert made_here == []  # made in the child alone
        assert dataset.content_hash() == expected and made_here == []  # and kept

        small = Dataset(storyturns=dataset.storyturns[:10], root=dataset.root)
        with small.hashing_beside() as hashing:
            assert hashing.forked is None  # a small dataset: hashed here, no fork
            assert hashing.content_hash() == small.content_hash()
        print("ok")
    """, tmp_path)
    assert out == "ok\n"


def test_a_picture_changed_after_its_check_read_is_hashed_again_here(tmp_path: Path) -> None:
    """The child reads the pictures itself: where its bytes are not those this process checked, its hash is not
    used (the hash is of the pictures as they are now, and made here)."""
    out = _run_with_dataset("""
        from commet.format.validate import validate_dataset
        dataset = fresh()
        validate_dataset(dataset)  # every picture read (and hashed) here
        picture = folder / "images" / "img0.png"
        picture.write_bytes(picture.read_bytes() + b"changed")  # the child will read these bytes
        with dataset.hashing_beside() as hashing:
            made = hashing.content_hash()
        assert made_here == [os.getpid()]  # the child's hash was not taken
        assert made == fresh().content_hash() != expected
        print("ok")
    """, tmp_path)
    assert out == "ok\n"


def test_a_first_validation_keeps_the_hash_made_beside_and_a_run_finds_it(tmp_path: Path) -> None:
    """`commet validate` on a dataset large enough to be hashed beside: the cache entry's hash, read by a second
    load, is the content hash made in one process."""
    out = _run_with_dataset("""
        from commet.sources.checked import load_checked
        first, _ = load_checked(folder)
        assert first.content_hash() == expected and made_here == []
        second, _ = load_checked(folder)  # from the cache entry: neither validated nor hashed
        assert second is not first and second.content_hash() == expected and made_here == []
        print("ok")
    """, tmp_path)
    assert out == "ok\n"
