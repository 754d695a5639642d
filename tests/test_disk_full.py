"""A disk that fills up during a run: one line naming the store and the free space, exit code 5, and the same
command resumes once there is space, with the results of a run that never met a full disk.

The disk is real: a tmpfs of a few hundred KiB, mounted in a private mount namespace (``unshare -rm``,
no privileges needed where user namespaces are allowed), so SQLite really gets ENOSPC and reports
SQLITE_FULL. The namespace is gone when the script ends; the store is copied out before.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import commet

SOURCE = str(Path(commet.__file__).resolve().parents[1])
EVAL = "eval --model baseline:first-option --dataset sample --quiet --concurrency 64 --run r"


def _can_mount_tmpfs(folder: Path) -> bool:
    if shutil.which("unshare") is None:
        return False
    folder.mkdir(parents=True, exist_ok=True)
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {folder}"],
                           capture_output=True, timeout=30)
    return probe.returncode == 0


def in_a_small_disk(tmp_path: Path, script: str, size: str = "300k") -> dict[str, str]:
    """Run ``script`` (sh) with $D a fresh tmpfs of ``size``; return the files it left in $OUT, as text."""
    disk, out = tmp_path / "disk", tmp_path / "out"
    if not _can_mount_tmpfs(disk):
        pytest.skip("needs an unprivileged mount namespace (unshare -rm) to mount a small tmpfs")
    out.mkdir()
    commet_cli = f"{sys.executable} -m commet.cli"
    body = f"mount -t tmpfs -o size={size} tmpfs \"$D\" && cd \"$D\" && {script}"
    subprocess.run(["unshare", "-rm", "sh", "-c", body], check=True, timeout=600,
                   env={**os.environ, "D": str(disk), "OUT": str(out), "COMMET": commet_cli, "PYTHONPATH": SOURCE,
                        "COLUMNS": "300"})
    return {p.name: p.read_text() for p in out.iterdir() if p.suffix != ".sqlite"}


def turns(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as con:
        return con.execute("SELECT story_id, turn, response, outcome, correct FROM turns ORDER BY 1, 2").fetchall()


def one_disk_full_line(stderr: str, store: str) -> None:
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"error: {store}: cannot write the results store: the disk is full ("), stderr
    assert "free on its file system)" in lines[0] and "run the same command again to resume (exit code 5)" in lines[0]


def test_a_full_disk_stops_eval_with_one_line_and_exit_5_and_the_run_resumes(tmp_path: Path) -> None:
    reference = tmp_path / "reference.sqlite"
    done = subprocess.run([sys.executable, "-m", "commet.cli", *EVAL.split(), "--db", str(reference)],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": SOURCE})
    assert done.returncode == 0, done.stderr
    files = in_a_small_disk(tmp_path, f"""
        $COMMET {EVAL} --db "$D/s.sqlite" > "$OUT/out1" 2> "$OUT/err1"; echo $? > "$OUT/rc1"
        $COMMET runs --db "$D/s.sqlite" > "$OUT/runs1" 2>&1
        mount -o remount,size=64m "$D"
        $COMMET {EVAL} --db "$D/s.sqlite" > "$OUT/out2" 2> "$OUT/err2"; echo $? > "$OUT/rc2"
        cp "$D/s.sqlite" "$OUT/final.sqlite"
    """)
    assert files["rc1"].strip() == "5", files["err1"]
    one_disk_full_line(files["err1"], str(tmp_path / "disk" / "s.sqlite"))
    assert files["out1"] == ""
    assert files["rc2"].strip() == "0", files["err2"]
    kept = int(files["out2"].split(" answered from the store")[0].rsplit(" ", 1)[1])
    assert kept > 0  # what was committed before the disk filled was not asked again
    assert turns(tmp_path / "out" / "final.sqlite") == turns(reference)  # as if the disk had never filled


def test_an_export_onto_a_full_disk_is_one_line_and_exit_5(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    done = subprocess.run([sys.executable, "-m", "commet.cli", *EVAL.split(), "--db", str(store)],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": SOURCE})
    assert done.returncode == 0, done.stderr
    files = in_a_small_disk(tmp_path, f"""
        $COMMET export --db {store} --run r --out "$D/turns.jsonl" > "$OUT/out" 2> "$OUT/err"; echo $? > "$OUT/rc"
    """, size="16k")
    assert files["rc"].strip() == "5", files["err"]
    lines = files["err"].strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in files["err"]
    assert lines[0].startswith(f"error: {tmp_path / 'disk' / 'turns.jsonl'}: cannot write: the disk is full ("), lines


def test_a_full_disk_under_worker_processes_is_the_same_one_line(tmp_path: Path) -> None:
    files = in_a_small_disk(tmp_path, f"""
        $COMMET {EVAL} --workers 2 --db "$D/s.sqlite" > "$OUT/out" 2> "$OUT/err"; echo $? > "$OUT/rc"
    """)
    assert files["rc"].strip() == "5", files["err"]
    one_disk_full_line(files["err"], str(tmp_path / "disk" / "s.sqlite"))
