"""CPU work done on a second core at start-up, in a forked child, with the same answer as doing it here.

Why a process: Python threads take turns holding the GIL, so pure-Python work (serialising and hashing
20,000 StoryTurns: 0.4 s) put in a thread only slows the thread beside it. A forked child has its own
interpreter and a copy of everything loaded: it starts in milliseconds, computes while this process goes on
(validating the same StoryTurns), and hands back a small pickled result.

Only where that is safe: on Linux (fork without exec is unsafe with macOS's system libraries; Windows has no
fork), only in a process running one thread, counted by the kernel (a child of a threaded process could wait
forever on a lock another thread held at the fork), and only with room in memory for a copy of the process (a
dataset of millions of StoryTurns on a small machine is checked in one process, never risking the memory
killer). Anywhere else, and whenever the child fails (an error, a signal, a result that does not unpickle),
:meth:`ForkedWork.result` does the work in this process: a caller gets the same value either way, never an error
of the child's.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
import tempfile
from collections.abc import Callable
from typing import IO, Generic, TypeVar

T = TypeVar("T")
#: a child is forked only where the memory available holds this many copies of the process (:func:`fork_is_safe`)
ROOM_FOR_COPIES = 2


def fork_is_safe() -> bool:
    """Whether a child may be forked here: Linux, one thread in the whole process (C libraries' threads too), and
    room in memory for a whole copy of this process (a page is copied when either process writes to it, and
    Python's reference counts write to every object the child looks at: at worst the child copies them all)."""
    if sys.platform != "linux" or not hasattr(os, "fork"):
        return False
    try:
        if len(os.listdir("/proc/self/task")) != 1:
            return False
        with open("/proc/self/statm", encoding="ascii") as statm:
            resident = int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            available = next(int(line.split()[1]) * 1024 for line in meminfo if line.startswith("MemAvailable:"))
    except (OSError, ValueError, StopIteration, IndexError):
        return False
    return available >= ROOM_FOR_COPIES * resident


class ForkedWork(Generic[T]):
    """``work()``, started in a forked child when :func:`fork_is_safe`, collected by :meth:`result` (or, for work
    whose effect is what counts, waited for by :meth:`outcome`).

    Use it as a context manager: a child whose result is not collected (the caller failed or stopped) is killed
    and reaped when the block ends. ``work`` must not depend on what this process does after the fork (the child
    sees the memory as it was then) and must return something picklable.
    """

    def __init__(self, work: Callable[[], T]) -> None:
        self.work = work
        self._pid: int | None = None
        self._out: IO[bytes] | None = None
        if not fork_is_safe():
            return
        out = tempfile.TemporaryFile()  # noqa: SIM115 - kept open for the child; unnamed: nothing left behind
        try:
            pid = os.fork()
        except OSError:
            out.close()
            return
        if pid == 0:  # the child: compute, write, leave without running this process's exit handlers
            code = 1
            try:
                pickle.dump(work(), out, protocol=pickle.HIGHEST_PROTOCOL)
                out.flush()
                code = 0
            except BaseException:  # noqa: B036 - an error, Ctrl-C: the parent does the work itself
                pass
            finally:
                os._exit(code)
        self._pid, self._out = pid, out

    @property
    def forked(self) -> bool:
        """Whether the work was started in a child (not yet collected)."""
        return self._pid is not None

    def result(self) -> T:
        """The child's result once it has ended, or ``work()`` done here (no child, or the child failed)."""
        ended = self._collect()
        return ended[0] if ended is not None else self.work()

    def outcome(self) -> T | None:
        """The child's result once it has ended, or None (no child, or the child failed): for work whose effect is
        what counts (a file it writes), which the caller does not do again here."""
        ended = self._collect()
        return ended[0] if ended is not None else None

    def _collect(self) -> tuple[T] | None:
        """The child's result (in a tuple: a result may be None) once it has ended; None without one."""
        if self._pid is not None and self._out is not None:
            try:
                _, status = os.waitpid(self._pid, 0)
                self._pid = None  # reaped
                if os.waitstatus_to_exitcode(status) == 0:
                    self._out.seek(0)
                    found: T = pickle.load(self._out)
                    return (found,)
            except Exception:  # noqa: BLE001 - a result that does not read back: as if there was no child
                pass
            finally:
                self.cancel()  # (interrupted while waiting: the child is stopped and reaped)
        return None

    def cancel(self) -> None:
        """Stop and reap a child not collected yet; let go of its output."""
        if self._pid is not None:
            pid, self._pid = self._pid, None
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)
        if self._out is not None:
            self._out.close()
            self._out = None

    def __enter__(self) -> ForkedWork[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()
