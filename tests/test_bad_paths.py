"""Paths that are not what a command expects, as the real ``commet`` program meets them (a probe of every command
with every odd path): an empty dataset, a FIFO or a device given as a benchmark file, a file name with a line break,
a link loop, a store whose name holds a URI character. Each is one line, exit code 2, no traceback and nothing
written; a good file with an odd name is read as itself."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.test_bad_input_refusals import commet_cli, snapshot


def refused(result: subprocess.CompletedProcess[str], *says: str) -> None:
    """Exit 2, no traceback, and one line on stderr (an ``error:`` line or a located problem line) saying each of
    ``says``."""
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    for words in says:
        assert words in result.stderr, result.stderr


@pytest.mark.parametrize("args", [["stats", "empty.jsonl"], ["audit", "empty.jsonl"],
                                  ["convert", "empty.jsonl", "--to", "jsonl", "--out", "out.jsonl"],
                                  ["report", "--db", "r.sqlite", "--dataset", "empty.jsonl"]])
def test_a_dataset_with_no_storyturns_is_refused_by_every_command_as_validate_refuses_it(
        args: list[str], tmp_path: Path) -> None:
    """Before: stats printed zero rows, audit printed nothing and convert wrote an empty file, all with exit 0 (a
    figure that looks like a result, from a file that was never data); validate and eval refused it."""
    (tmp_path / "empty.jsonl").write_bytes(b"")
    before = snapshot(tmp_path)
    refused(commet_cli(*args, cwd=tmp_path), "empty.jsonl", "empty dataset: no StoryTurns")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("format_name", ["tomi", "bigtom"])
@pytest.mark.parametrize("source", ["fifo", "/dev/zero"])
def test_a_benchmark_file_that_is_a_fifo_or_a_device_is_refused_unread(format_name: str, source: str,
                                                                      tmp_path: Path) -> None:
    """Before: ``commet import`` waited forever on a FIFO nobody writes to, and read ``/dev/zero`` without end."""
    os.mkfifo(tmp_path / "fifo")
    result = commet_cli("import", format_name, source, "--out", "out", cwd=tmp_path)
    refused(result, "not a regular file (refused, not read)")
    assert not (tmp_path / "out").exists()


def test_an_error_naming_a_file_with_a_line_break_is_still_one_line(tmp_path: Path) -> None:
    """A file name may hold any character but ``/``: the error shows it escaped (before: the line break split the
    error into two lines, and a control character in a name would drive the terminal)."""
    name = "results\nfrom \x1b[31mred.sqlite"
    (tmp_path / name).write_text("not a store\n", encoding="utf-8")
    result = commet_cli("runs", "--db", name, cwd=tmp_path)
    refused(result, "results\\nfrom \\x1b[31mred.sqlite: not a CoMMET results store")


def test_merge_refuses_a_link_loop_in_one_line(tmp_path: Path) -> None:
    """Before: a traceback (``Path.resolve`` raises RuntimeError on a loop before Python 3.13)."""
    os.symlink(tmp_path / "loop2", tmp_path / "loop1")
    os.symlink(tmp_path / "loop1", tmp_path / "loop2")
    refused(commet_cli("merge", "merged.sqlite", "loop1", cwd=tmp_path), "loop1: no such store file")
    assert not (tmp_path / "merged.sqlite").exists()


def test_merge_reads_a_shard_whose_name_holds_a_uri_character(tmp_path: Path) -> None:
    """Before: ``shard#1.sqlite`` was opened as the URI ``file:shard`` with a fragment: a new empty file ``shard`` was
    made and the real shard was said not to be a store."""
    made = commet_cli("eval", "--model", "baseline:first-option", "--limit", "2", "--quiet", "--db", "shard#1.sqlite",
                      cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    result = commet_cli("merge", "merged.sqlite", "shard#1.sqlite", cwd=tmp_path)
    assert result.returncode == 0 and "added 2 story rows" in result.stdout, result.stdout + result.stderr
    assert not (tmp_path / "shard").exists()


@pytest.mark.skipif(not Path("/proc/version").is_file(), reason="needs Linux's /proc")
@pytest.mark.parametrize("command", [["report"], ["export", "--run", "RUN"]])
def test_a_write_to_the_output_that_fails_is_one_line_naming_it(command: list[str], tmp_path: Path) -> None:
    """``/proc/version`` opens for writing and refuses the write itself (EIO), as a full quota, a network file system
    or a device can. Before: a traceback, since the error of a write to an open file names no file."""
    made = commet_cli("eval", "--model", "baseline:first-option", "--limit", "2", "--quiet", "--db", "r.sqlite",
                      cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    run = commet_cli("runs", "--db", "r.sqlite", cwd=tmp_path).stdout.split()[-1]
    args = [run if arg == "RUN" else arg for arg in command]
    refused(commet_cli(*args, "--db", "r.sqlite", "--out", "/proc/version", cwd=tmp_path),
            "error: /proc/version: cannot write: Input/output error")


@pytest.mark.parametrize(("args", "start", "end"), [
    (["eval", "--model", "baseline:first-option", "--concurrency", "0"],
     "error: Invalid value for '--concurrency': Input should be greater than or equal to 1 (see ", "eval --help)"),
    (["eval", "--no-such-option"], "error: No such option: --no-such-option", "eval --help)"),
    (["evaluate"], "error: No such command 'evaluate'", "--help)"),
    (["convert", "sample"], "error: Missing option '--to'. Choose from: jsonl, pipe, hf (see ", "convert --help)"),
    (["report", "--format", "pdf"], "'pdf' is not one of", "report --help)"),
])
def test_a_usage_error_is_one_line_like_every_other_refusal(args: list[str], start: str, end: str,
                                                           tmp_path: Path) -> None:
    """Before: click's four lines (the usage, a hint, a blank line, the error, its choices on lines of their own),
    where every other refusal is one line."""
    result = commet_cli(*args, cwd=tmp_path)  # the command's help named as it was started (commet, python -m ...)
    refused(result, start)
    assert result.stderr.rstrip("\n").endswith(end), result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_group_named_alone_still_shows_its_help_and_help_still_exits_0(tmp_path: Path) -> None:
    alone = commet_cli("generate", cwd=tmp_path)
    assert alone.returncode == 2 and "generate [OPTIONS] COMMAND" in alone.stderr and "procedural" in alone.stderr
    asked = commet_cli("eval", "--help", cwd=tmp_path)
    assert asked.returncode == 0 and "eval [OPTIONS]" in asked.stdout and asked.stderr == ""


def test_a_dataset_saved_over_another_leaves_none_of_its_pictures(tmp_path: Path) -> None:
    """Before: the replaced dataset's pictures stayed in ``images/`` (validation passes, so they were published or
    reviewed with the new one). A file the replaced dataset did not name is kept."""
    folder = tmp_path / "out"
    first = commet_cli("convert", "sample", "--to", "jsonl", "--out", str(folder), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    old = {p.name for p in (folder / "images").iterdir()}
    assert old, "the sample has pictures"
    (folder / "images" / "my-notes.txt").write_text("not the dataset's\n", encoding="utf-8")
    second = commet_cli("import", "tomi", str(_tomi(tmp_path)), "--out", str(folder), cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert sorted(p.name for p in (folder / "images").iterdir()) == ["my-notes.txt"]


def test_a_replaced_dataset_that_cannot_be_read_whole_loses_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    assert commet_cli("convert", "sample", "--to", "jsonl", "--out", str(folder), cwd=tmp_path).returncode == 0
    old = sorted(p.name for p in (folder / "images").iterdir())
    with (folder / "storyturns.jsonl").open("a", encoding="utf-8") as out:
        out.write("{not a StoryTurn\n")
    assert commet_cli("import", "tomi", str(_tomi(tmp_path)), "--out", str(folder), cwd=tmp_path).returncode == 0
    assert sorted(p.name for p in (folder / "images").iterdir()) == old  # which pictures were its own is not known


def _tomi(tmp_path: Path) -> Path:
    """A one-story ToMi file (its published layout), a dataset without pictures."""
    path = tmp_path / "tomi.txt"
    path.write_text("1 Mary entered the kitchen.\n2 John entered the kitchen.\n3 The apple is in the box.\n"
                    "4 John exited the kitchen.\n5 Mary moved the apple to the basket.\n"
                    "6 Where will John look for the apple?\tbox\t1\n", encoding="utf-8")
    return path
