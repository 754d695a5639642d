"""The end of ``commet eval``: the report's modules imported while the run waits on answers, and an
exit that does not walk every object of the run once more."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from commet.cli import reporting
from commet.cli.reporting import REPORT_PREPARATION_AFTER_S, report_prepared_meanwhile


@pytest.fixture
def probe_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Two fresh modules to preload: one that records the thread it was imported in, one that fails."""
    (tmp_path / "preload_probe_ok.py").write_text("import threading\nTHREAD = threading.current_thread().name\n")
    (tmp_path / "preload_probe_bad.py").write_text("raise RuntimeError('broken module')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    names = ["preload_probe_bad", "preload_probe_ok"]
    for name in names:
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(reporting, "REPORT_MODULES", tuple(names))
    return names


async def test_the_modules_are_imported_in_a_thread_once_the_run_is_under_way(probe_modules: list[str]) -> None:
    from commet.reports import stats

    stats._resample_counts.cache_clear()
    interval = sys.getswitchinterval()
    with report_prepared_meanwhile(asyncio.get_running_loop(), stories=37):
        await asyncio.sleep(REPORT_PREPARATION_AFTER_S / 2)
        assert "preload_probe_ok" not in sys.modules  # not while the first requests are being sent
        await asyncio.sleep(REPORT_PREPARATION_AFTER_S)
    # waited for at the end; a module that fails to import is left to the report, which says what is wrong
    assert sys.modules["preload_probe_ok"].THREAD == "commet-report-preparation"
    # the bootstrap's draws for 37 StoryTurns are made and kept: the report finds them
    assert stats._resample_counts.cache_info().currsize == 1
    stats.bootstrap_ratio([1, 2, 0] * 12 + [3], [3] * 37)
    assert stats._resample_counts.cache_info().hits == 1
    assert "preload_probe_bad" not in sys.modules
    assert sys.getswitchinterval() == interval
    assert not any(t.name == "commet-report-preparation" for t in threading.enumerate())


async def test_a_run_shorter_than_the_delay_imports_nothing(probe_modules: list[str]) -> None:
    with report_prepared_meanwhile(asyncio.get_running_loop()):
        await asyncio.sleep(0)
    await asyncio.sleep(REPORT_PREPARATION_AFTER_S * 1.5)
    assert "preload_probe_ok" not in sys.modules


def _last_line_of_program(script: str) -> str:
    """The last line ``script`` prints, run as a program of its own (it must exit 0)."""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[-1]


def test_the_program_leaves_its_objects_out_of_the_last_collection_at_exit() -> None:
    script = ("import atexit, gc, sys\n"
              "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 1000))\n"
              "from commet.cli import main\n"
              "sys.argv = ['commet', 'validate', 'sample']\n"
              "main()\n")
    assert _last_line_of_program(script) == "frozen True"


def test_a_test_driving_the_app_in_its_own_process_keeps_its_collector_as_it_was(tmp_path: Path) -> None:
    import gc

    from typer.testing import CliRunner

    from commet.cli import app

    before, threshold = gc.get_freeze_count(), gc.get_threshold()
    result = CliRunner().invoke(app, ["eval", "--model", "baseline:first-option", "--db", str(tmp_path / "r.sqlite"),
                                      "--quiet", "--limit", "2"])
    assert result.exit_code == 0, result.output
    assert gc.get_freeze_count() == before
    assert gc.get_threshold() == threshold
    assert gc.isenabled()


def test_the_program_starts_up_without_collections_then_collects_its_young_objects_less_often(tmp_path: Path) -> None:
    """No collection while eval builds its model, judge and validated dataset (they live until the exit);
    during the run, the young generation is collected every YOUNG_OBJECTS_PER_COLLECTION allocations."""
    script = ("import gc, sys\n"
              "during = []\n"
              "def seen(phase, info):\n"
              "    frame = sys._getframe()\n"
              "    while frame is not None and frame.f_code.co_name != '_eval_inputs':\n"
              "        frame = frame.f_back\n"
              "    during.append(phase == 'start' and frame is not None)\n"
              "gc.callbacks.append(seen)\n"
              "from commet.cli import main\n"
              "from commet.cli.common import YOUNG_OBJECTS_PER_COLLECTION\n"
              f"sys.argv = ['commet', 'eval', '--model', 'baseline:first-option', '--db', {str(tmp_path / 'r.sqlite')!r},"
              " '--quiet']\n"
              "try:\n"
              "    main()\n"
              "finally:\n"
              "    print('collections', len(during) // 2, 'in start-up', sum(during),\n"
              "          'threshold', gc.get_threshold()[0] == YOUNG_OBJECTS_PER_COLLECTION)\n")
    words = _last_line_of_program(script).split()
    assert int(words[1]) > 0, "the probe saw no collection at all"
    assert words[2:] == ["in", "start-up", "0", "threshold", "True"]


def test_the_program_reads_its_command_line_without_collections_and_its_command_collects() -> None:
    """Building the command and reading its options (imports, click's objects: all alive until the exit) sets
    off no collection; the command itself runs with the collector on, as before."""
    script = ("import gc, sys\n"
              "seen = {'before the command': 0, 'in the command': 0}\n"
              "def where(phase, info):\n"
              "    names, frame = set(), sys._getframe()\n"
              "    while frame is not None:\n"
              "        names.add((frame.f_code.co_name, frame.f_code.co_filename.endswith('cli/__init__.py')))\n"
              "        frame = frame.f_back\n"
              "    if phase == 'start' and ('main', True) in names:\n"
              "        seen['in the command' if ('stats', True) in names else 'before the command'] += 1\n"
              "gc.callbacks.append(where)\n"
              "from commet.cli import main\n"
              "sys.argv = ['commet', 'stats', 'sample', '--json']\n"
              "try:\n"
              "    main()\n"
              "finally:\n"
              "    print(seen['before the command'], seen['in the command'] > 0, gc.isenabled())\n")
    assert _last_line_of_program(script) == "0 True True"


@pytest.mark.parametrize(("chosen", "expected"), [(None, "1"), ("4", "4")])
def test_the_program_runs_numpys_blas_on_one_thread_unless_the_user_chose(chosen: str | None, expected: str) -> None:
    """OpenBLAS's idle threads spin after each of the reports' small matrix products (about 0.1 s of CPU after
    a run's report): the program sets one thread before NumPy is first imported, and keeps a user's choice."""
    script = ("import atexit, os, sys\n"
              + (f"os.environ['OPENBLAS_NUM_THREADS'] = {chosen!r}\n" if chosen else
                 "os.environ.pop('OPENBLAS_NUM_THREADS', None)\n")
              + "from commet.cli import main\n"
              "imported_before = 'numpy' in sys.modules\n"
              "atexit.register(lambda: print('blas', os.environ.get('OPENBLAS_NUM_THREADS'), 'numpy before',"
              " imported_before, 'numpy after', 'numpy' in sys.modules))\n"
              "sys.argv = ['commet', 'report', '--help']\n"
              "main()\n")
    assert _last_line_of_program(script).split() == ["blas", expected, "numpy", "before", "False", "numpy",
                                                     "after", "False"]
