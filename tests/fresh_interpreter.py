"""Code run in a fresh Python interpreter: for what a pytest worker cannot do itself (it runs threads, and a
threaded process never forks: commet.forked). This checkout's ``commet``, a cache folder of the run's own under
its working folder, and nothing else of the test process's environment."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import commet

SOURCE = str(Path(commet.__file__).resolve().parents[1])


def run_fresh(code: str, cwd: Path, *, timeout: float = 120) -> str:
    """``code`` (dedented) run in ``cwd``; its standard output, once it has exited 0 (else the test fails with
    everything it printed)."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env={"PYTHONPATH": SOURCE, "PATH": "/usr/bin:/bin",
                                                         "COMMET_CACHE_DIR": str(cwd / "cache")})
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout
