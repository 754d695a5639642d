"""The slow imports of the providers a command line names, begun in a thread as the program starts (issue 47:
commet.forked.ImportsAhead, commet.cli.common.Program.import_ahead): begun only for the providers named, in every
form a spec names one; waited for before any fork, so a first run's load still goes to a child. Each case runs in
a fresh interpreter: what is imported, and whether the process is threaded, are the process's own."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.fresh_interpreter import run_fresh

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="/proc/self/task is Linux's")

BEGUN = """
    import sys
    from commet.cli.common import Program
    from commet.forked import ImportsAhead, fork_is_safe
    Program.import_ahead({args!r})
    begun = ImportsAhead.thread is not None
    safe = fork_is_safe()  # waits for the thread: one thread again
    print(begun, safe, "aiohttp" in sys.modules, ImportsAhead.thread is None)
"""


@pytest.mark.parametrize(("args", "begun"), [
    (["eval", "--model", "openai:gpt-4o-mini?base_url=http://127.0.0.1:9/v1", "--dataset", "sample"], True),
    (["eval", "--model=openai:gpt-4o-mini", "--dataset", "sample"], True),
    (["eval", "--model", "baseline:first-option", "--judge", "llm-only:openai:judge?timeout=5"], True),
    (["rejudge", "RUN", "--judge", "panel:baseline:first-option,openai:b"], True),
    (["eval", "--model", "baseline:first-option", "--judge", "rules"], False),
    (["eval", "--model", "hf:./tiny", "--dataset", "openai"], False),  # (a dataset named so is no spec)
    (["eval", "--model", "openai:gpt-4o", "--help"], False),
    (["eval", "--model"], False),
])
def test_imports_are_begun_for_the_providers_named_and_waited_for_before_a_fork(tmp_path: Path, args: list[str],
                                                                                begun: bool) -> None:
    out = run_fresh(BEGUN.format(args=args), tmp_path).split()
    assert out == [str(begun), "True", str(begun), "True"]


def test_a_fork_after_imports_ahead_is_made_from_one_thread(tmp_path: Path) -> None:
    out = run_fresh("""
        import os
        from commet.forked import ForkedWork, ImportsAhead
        ImportsAhead.start(["aiohttp", "no_such_module_here"])  # (one that fails is left to the program)
        parent = os.getpid()
        with ForkedWork(os.getpid) as work:
            assert work.forked
            child = work.result()
        assert child != parent and len(os.listdir("/proc/self/task")) == 1
        import aiohttp
        print(aiohttp.ClientSession.__name__)
    """, tmp_path)
    assert out == "ClientSession\n"


def test_one_core_begins_nothing(tmp_path: Path) -> None:
    out = run_fresh("""
        import os, sys
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
        from commet.forked import ImportsAhead
        ImportsAhead.start(["aiohttp"])
        print(ImportsAhead.thread is None, "aiohttp" in sys.modules)
    """, tmp_path)
    assert out == "True False\n"
