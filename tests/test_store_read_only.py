"""The commands that only read a store (report, runs, export, judges, compare) open it read-only: they work on
read-only media and while another process holds a write transaction, and leave the file byte for byte.

Read-only media is real: the store's folder bind-mounted read-only in a private mount namespace
(``unshare -rm``; even root cannot write there). The writer is a real second process holding
``BEGIN IMMEDIATE`` with a row inserted and not committed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import commet

SOURCE = str(Path(commet.__file__).resolve().parents[1])
ENV = {**os.environ, "PYTHONPATH": SOURCE, "COLUMNS": "200"}
READERS = {
    "report": ["report"],
    "runs": ["runs"],
    "export": ["export", "--run", "a", "--out", "{out}/a.jsonl"],
    "judges": ["judges"],
    "compare": ["compare", "a", "b"],
}


def commet_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "commet.cli", *args], capture_output=True, text=True, env=ENV,
                          timeout=timeout)


def digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two runs of the sample (a and b), closed cleanly: the folder holds the store file alone."""
    db = tmp_path_factory.mktemp("ro") / "data" / "s.sqlite"
    for name, model in (("a", "baseline:first-option"), ("b", "baseline:random-option")):
        result = commet_cli("eval", "--model", model, "--db", str(db), "--run", name, "--quiet", "--limit", "8")
        assert result.returncode == 0, result.stderr
    return db


def test_read_commands_work_on_read_only_media_and_write_nothing(store: Path, tmp_path: Path) -> None:
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare to mount a folder read-only")
    folder, out = store.parent, tmp_path / "out"
    out.mkdir()
    before = digest(folder)
    script = [f"mount --bind {folder} {folder} && mount -o remount,bind,ro {folder} || exit 99",
              f"touch {folder}/probe 2>/dev/null && exit 98"]  # the mount must really refuse writes
    for name, args in READERS.items():
        command = " ".join(f"'{a.format(out=out)}'" for a in args)
        script.append(f"{sys.executable} -m commet.cli {command} --db {store} > {out}/{name}.out 2> {out}/{name}.err;"
                      f" echo $? > {out}/{name}.rc")
    ran = subprocess.run(["unshare", "-rm", "sh", "-c", "\n".join(script)], env=ENV, timeout=600)
    if ran.returncode == 99:
        pytest.skip("cannot mount in a private namespace here")
    assert ran.returncode != 98, "the read-only mount accepted a write"
    for name in READERS:
        stderr = (out / f"{name}.err").read_text()
        assert (out / f"{name}.rc").read_text().strip() == "0", (name, stderr)
        assert "Traceback" not in stderr, (name, stderr)
    assert "Story accuracy" in (out / "report.out").read_text()
    assert len((out / "a.jsonl").read_text().splitlines()) > 8
    assert digest(folder) == before


def test_read_commands_do_not_wait_for_a_writer(store: Path, tmp_path: Path) -> None:
    copy = tmp_path / "busy.sqlite"
    shutil.copy(store, copy)
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sqlite3, sys, time\n"
        f"db = sqlite3.connect({str(copy)!r}, isolation_level=None)\n"
        "db.execute('BEGIN IMMEDIATE')\n"
        "db.execute(\"UPDATE runs SET status = 'running'\")\n"
        "print('holding', flush=True)\n"
        "time.sleep(120)\n")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        for name, args in READERS.items():
            started = time.monotonic()
            result = commet_cli(*(a.format(out=tmp_path) for a in args), "--db", str(copy), timeout=25)
            assert result.returncode == 0, (name, result.stderr)
            assert time.monotonic() - started < 25  # the write lock waits 30 s; a reader does not wait for it
        listed = commet_cli("runs", "--db", str(copy))
        assert "running" not in listed.stdout  # the writer's uncommitted change is not seen
    finally:
        holder.kill()
        holder.wait()


def test_an_older_store_without_the_newer_tables_is_read_without_being_changed(store: Path, tmp_path: Path) -> None:
    old = tmp_path / "old.sqlite"
    shutil.copy(store, old)
    with sqlite3.connect(old) as con:  # as a store from before shards, leases and rate budgets
        for table in ("shards", "leases", "call_leases", "rate_budget"):
            con.execute(f"DROP TABLE IF EXISTS {table}")
    con.close()
    before = hashlib.sha256(old.read_bytes()).hexdigest()
    for name, args in READERS.items():
        result = commet_cli(*(a.format(out=tmp_path) for a in args), "--db", str(old))
        assert result.returncode == 0, (name, result.stderr)
    assert hashlib.sha256(old.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("old")) == ["old.sqlite"]  # no -wal left
    with sqlite3.connect(old) as con:
        tables = {row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "shards" not in tables and "labels" not in tables
