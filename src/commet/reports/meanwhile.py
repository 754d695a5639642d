"""Work done by a forked process while this one does other work: both cores of a laptop used for one report.

A large report's HTML page falls into parts that need nothing but what is already in memory: the plots
(drawn from the tables) and the transcripts. :func:`meanwhile` starts a part in a child forked from this
process, which sends its result back pickled, while this process does the rest. (The tables themselves
are not split so: a child reading the runs' StoryTurns copies every page of them it touches, reference
counts being writes, which cost about what the second core saved.)

It forks only on Linux and only from a process with no other Python thread (forking a threaded process can
copy a lock another thread holds); elsewhere, and when the child fails or dies, the work is done here when
its result is asked for, so that an error is raised where the caller expects it.
"""

from __future__ import annotations

import gc
import multiprocessing
import sys
import threading
import warnings
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import TypeVar

T = TypeVar("T")


def meanwhile(work: Callable[[], T]) -> Callable[[], T]:
    """``work`` started in a forked process; returns the function that waits for its result (or computes it)."""
    if not sys.platform.startswith("linux") or threading.active_count() > 1:
        return work
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_send_result, args=(work, send), daemon=True)
    with warnings.catch_warnings():
        # Python 3.12+ warns when the process has other (native) threads: here only NumPy's OpenBLAS workers,
        # which OpenBLAS stops and restarts around a fork itself; no Python thread runs (checked above)
        warnings.filterwarnings("ignore", message=r"This process .* is multi-threaded", category=DeprecationWarning)
        child.start()
    send.close()

    def result() -> T:
        try:
            sent: tuple[T] | None = receive.recv()
        except EOFError:  # the process died
            sent = None
        finally:
            receive.close()
            child.join()
        return work() if sent is None else sent[0]

    return result


def _send_result(work: Callable[[], object], send: Connection) -> None:
    """In the forked process: ``(result,)``, or None when the work failed (the parent then does it, and raises)."""
    # the objects inherited from the parent are never scanned for reference cycles here (they hold none, and
    # scanning a large report's million objects took a fifth of the time); the work's own objects are
    gc.freeze()
    gc.enable()
    try:
        send.send((work(),))
    except BaseException:  # noqa: BLE001 - raised again by the parent, which does the work itself
        send.send(None)
    finally:
        send.close()
