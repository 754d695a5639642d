"""Reports that fit a terminal (issue 21, point 2): rendered at 80 and 120 columns by rich, and once in a real
terminal under tmux; ``eval``'s end-of-run table at 80 columns; ``--format table --out`` keeps headers whole."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from commet.cli import app
from commet.reports import Bootstrap, build_report
from commet.reports.render import to_rich_tables
from commet.store import Store
from tests.test_paper_tables import REPLIES_A, paper_dataset, paper_store  # noqa: F401 - fixture

#: words that must appear whole in every layout: headers, categories, run names
WHOLE = ("Belief_Emotion", "Belief_Desire", "Intention", "Question accuracy", "VI not required, with image",
         "on~jfix", "replay:r.json")


def _render(store: Path, width: int) -> list[str]:
    with Store(store) as s:
        report = build_report(s, s.runs(), bootstrap=Bootstrap(resamples=100))
    console = Console(file=io.StringIO(), width=width, record=True)
    for renderable in to_rich_tables(report, width):
        console.print(renderable)
    return console.export_text().splitlines()


def _check_fits(lines: list[str], width: int) -> None:
    assert max(len(line) for line in lines) <= width
    text = "\n".join(lines)
    for word in WHOLE:
        assert word in text, word
    # no column squeezed to one or two characters: the old failure printed headers as R/u/n, b/a/s/e/l/i/n/e
    assert not any(line.count("│") >= 4 and all(len(cell.strip()) <= 2 for cell in line.split("│")[1:-1])
                   and any(cell.strip() for cell in line.split("│")[1:-1]) for line in lines)


@pytest.mark.parametrize("width", [80, 120])
def test_report_fits_the_width(paper_store: Path, width: int) -> None:  # noqa: F811
    lines = _render(paper_store, width)
    _check_fits(lines, width)
    for title in ("Table 1: text-complete subset", "Table 2: image-dependent subset", "Table 3: feedback",
                  "Table 14: original versus correctness-only feedback"):
        assert any(title in line for line in lines), title


def test_table_file_keeps_headers_whole(paper_store: Path, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "r.txt"
    result = CliRunner().invoke(app, ["report", "--db", str(paper_store), "--out", str(out), "--resamples", "100"])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    header = next(line for line in text.splitlines() if "Belief_Emotion" in line)
    for name in ("Run", "Overall", "Belief", "Emotion", "Intention", "Desire", "Percept", "Belief_Desire", "NLCE",
                 "MBK"):
        assert f" {name} " in header  # every header on one line, none folded
    assert "VI not required, with image" in text


def _tmux(tmp_path: Path, command: str, width: int) -> list[str]:
    """Run ``command`` in a detached tmux session of ``width`` columns and return the whole pane."""
    number = len(list(tmp_path.glob("run-*.sh")))
    socket = f"commet-test-{tmp_path.name}-{number}"
    done = tmp_path / f"done-{number}"
    script = tmp_path / f"run-{number}.sh"
    script.write_text(f"cd {tmp_path}\n{command}\ntouch {done}\nsleep 60\n")
    base = ["tmux", "-L", socket, "-f", "/dev/null"]
    subprocess.run([*base, "new-session", "-d", "-x", str(width), "-y", "50", "-s", "t", "bash", str(script)],
                   check=True)
    try:
        subprocess.run([*base, "set-option", "-t", "t", "history-limit", "20000"], check=True)
        deadline = time.monotonic() + 120
        while not done.exists():
            assert time.monotonic() < deadline, "the command did not finish in tmux"
            time.sleep(0.2)
        pane = subprocess.run([*base, "capture-pane", "-p", "-t", "t", "-S", "-", "-E", "-"], check=True,
                              capture_output=True, text=True).stdout
    finally:
        subprocess.run([*base, "kill-server"], check=False)
    return pane.rstrip("\n").splitlines()


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)")
def test_report_and_eval_in_a_real_terminal(paper_store: Path, tmp_path: Path) -> None:  # noqa: F811
    python = f"PYTHONPATH={':'.join(sys.path)} {sys.executable} -m commet.cli"
    report = _tmux(tmp_path, f"{python} report --db {paper_store} --resamples 100", 80)
    _check_fits(report, 80)
    two = _tmux(tmp_path, f"{python} report --db {paper_store} --run on --run needed --resamples 100", 120)
    assert max(len(line) for line in two) <= 120 and "Belief_Emotion" in "\n".join(two)
    assert len(two) < 200, len(two)  # the old output at 120 columns was 294 lines of fragments for one run
    paper_dataset().save(tmp_path / "ds")
    (tmp_path / "r.json").write_text(json.dumps(REPLIES_A))
    evaluated = _tmux(tmp_path, f"{python} eval --model replay:{tmp_path / 'r.json'} --dataset {tmp_path / 'ds'} "
                                f"--db {tmp_path / 'e.sqlite'} --run on", 80)
    assert max(len(line) for line in evaluated) <= 80
    text = "\n".join(evaluated)
    assert "14.29–28.57 [" in text and "Story accuracy" in text and "Table 1, text-complete" in text
    assert "left undecided by the rules judge" in text


def test_story_text_is_never_read_as_markup() -> None:
    from commet.reports.analyses import Section
    from commet.reports.render import fitted_tables

    section = Section("wrong-answers", "Wrong [bold]answers[/bold]", ["Run", "Wrong answer"],
                      [["r", "[red]The box[/red] and [link=x]"]])
    for width in (30, 120):
        console = Console(file=io.StringIO(), width=width, record=True)
        for renderable in fitted_tables(section, width):
            console.print(renderable)
        text = "".join(console.export_text().replace("│", " ").split())
        assert "[red]Thebox[/red]and[link=x]" in text and "[bold]answers[/bold]" in text


@pytest.mark.parametrize("width", [None, 40])
def test_a_blank_column_name_is_a_blank_header_not_a_crash(width: int | None) -> None:
    """A section whose header holds an empty name renders it as a blank header, at full width and fitted to
    a narrow terminal (rich refused the None it used to be given: NotRenderableError; found by mypy --strict)."""
    from commet.reports import Report
    from commet.reports.rundata import Section

    section = Section("by-key", "Accuracy by key", ["", "Stories", "Story accuracy"],
                      [["", "3", "66.67"], ["b", "2", "50.00"]])
    console = Console(file=io.StringIO(), width=120, record=True)
    for renderable in to_rich_tables(Report(runs=[], sections=[section]), width):
        console.print(renderable)
    text = console.export_text()
    assert "Accuracy by key" in text and "66.67" in text and "50.00" in text
