"""Work done by a forked process while the report process does the rest (the HTML report's plots): the same
result, and failures raised here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from commet.reports.meanwhile import meanwhile


@pytest.fixture
def no_other_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fork is made from a process with no other Python thread: the suite may have left idle ones."""
    monkeypatch.setattr("commet.reports.meanwhile.threading.active_count", lambda: 1)


@pytest.mark.usefixtures("no_other_thread")
def test_the_result_comes_from_the_forked_process() -> None:
    pid, result = meanwhile(lambda: (os.getpid(), [1.5, None, "x"]))()
    assert pid != os.getpid() and result == [1.5, None, "x"]
    assert meanwhile(lambda: None)() is None  # a result of None is a result, not a failure


@pytest.mark.usefixtures("no_other_thread")
def test_failed_work_is_done_again_here_and_raises_here(tmp_path: Path) -> None:
    parent = os.getpid()

    def fails() -> int:
        (tmp_path / ("child" if os.getpid() != parent else "parent")).touch()
        raise ValueError("the work's own error")

    waiting = meanwhile(fails)
    with pytest.raises(ValueError, match="the work's own error"):
        waiting()
    assert (tmp_path / "child").is_file() and (tmp_path / "parent").is_file()


@pytest.mark.usefixtures("no_other_thread")
def test_a_dead_process_s_work_is_done_here(tmp_path: Path) -> None:
    parent = os.getpid()

    def dies_elsewhere() -> str:
        if os.getpid() != parent:
            (tmp_path / "child").touch()
            os._exit(3)
        return "done here"

    assert meanwhile(dies_elsewhere)() == "done here"
    assert (tmp_path / "child").is_file()


def test_no_fork_beside_other_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forking a threaded process can copy a lock another thread holds: the work is then done here, when asked."""
    monkeypatch.setattr("commet.reports.meanwhile.threading.active_count", lambda: 2)
    calls = []
    waiting = meanwhile(lambda: calls.append(os.getpid()) or "here")
    assert calls == []
    assert waiting() == "here" and calls == [os.getpid()]
