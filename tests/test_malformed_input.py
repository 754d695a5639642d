"""The second malformed-input corpus (tests/data/malformed/input, built by make_input_corpus.py): issue 30's classes.

Every case goes through every command that reads its dataset, in this process: ``validate`` (stdout),
``eval`` against a real store holding a finished run, ``study build`` and ``review serve``, and, for
mistakes the loader itself refuses, ``stats`` and ``convert``. Each exits 2 with exactly the one
located line the manifest names, no traceback, and writes nothing (no store row, no study file, no
review store, no converted folder). The controls pass. Cases that cannot live in git (a FIFO, a link
to /dev/zero, a 1 GiB sparse picture, a 600 MB sparse dataset, a 50 MB id) are made here and run as the
real program, with a time limit and its peak memory measured.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from click.testing import CliRunner

import commet
from commet.cli import app as typer_app
from commet.format.pictures import MAX_DECODED_BYTES, size_problem
from tests.test_malformed_corpus import one_run_store, row_counts

app = typer.main.get_command(typer_app)

CORPUS = Path(__file__).parent / "data" / "malformed" / "input"
CASES = json.loads((CORPUS / "cases.json").read_text(encoding="utf-8"))
CONTROLS = sorted(p for p in (CORPUS / "controls").iterdir() if p.is_dir())
LOCATED = re.compile(r"^(?P<file>.+?):(?P<line>\d+)(?::(?P<column>\d+))? story=(?P<story>.*) turn=(?P<turn>\S+) "
                     r"field=(?P<field>\S+): (?P<severity>error|warning): (?P<message>.+)$")
SOURCE = str(Path(commet.__file__).resolve().parents[1])


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return one_run_store(tmp_path_factory)


def located(text: str) -> list[str]:
    return [line for line in text.splitlines() if LOCATED.match(line)]


def matches(line: str, want: dict[str, object]) -> None:
    """``line`` is the located error ``want`` describes (the file by its path's end: HF files sit in folders)."""
    found = LOCATED.match(line)
    assert found is not None, line
    assert found["severity"] == "error", line
    assert found["file"].endswith(str(want["file"])), line
    assert found["line"] == str(want["line"] or 0), line
    assert found["column"] == (str(want["column"]) if want["column"] else None), line
    assert found["story"] == (want["story"] if want["story"] is not None else "-"), line
    assert found["turn"] == (str(want["turn"]) if want["turn"] is not None else "-"), line
    assert found["field"] == (want["field"] or "-"), line
    assert str(want["says"]) in found["message"], line
    assert len(line) < 1200 and line.isprintable(), line


def test_the_corpus_covers_every_class() -> None:
    names = [case["name"] for case in CASES]
    assert len(names) >= 50 and len(set(names)) == len(names)
    for prefix in ("picture-", "hf-image-", "hf-image-dependent-", "hf-duplicate-id-", "surrogate-", "int-",
                   "float-", "nesting-", "json-key-twice-", "pipe-if-", "pipe-answer-", "pipe-option-", "canonical-",
                   "jsonl-", "hf-self-links"):
        assert any(name.startswith(prefix) for name in names), prefix


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_every_command_refuses_the_case_with_its_one_line(case: dict, store: Path, tmp_path: Path) -> None:
    if case["name"].startswith("hf-"):
        pytest.importorskip("datasets")
    dataset = str(CORPUS / "cases" / case["path"])
    runner = CliRunner()

    checked = runner.invoke(app, ["validate", dataset])
    assert checked.exit_code == 2, checked.output
    assert "Traceback" not in checked.output and isinstance(checked.exception, SystemExit)
    assert len(checked.stdout.splitlines()) == 1 and "1 errors, 0 warnings" in checked.stderr, checked.output
    line = checked.stdout.strip()
    matches(line, case["expect"])

    before = row_counts(store)
    commands = {
        "eval": ["eval", "--model", "baseline:first-option", "--dataset", dataset, "--db", str(store), "--quiet",
                 "--force"],
        "study build": ["study", "build", "--dataset", dataset, "--out", str(tmp_path / "study.json")],
        "review serve": ["review", "serve", "--dataset", dataset, "--db", str(tmp_path / "review.sqlite"),
                         "--port", "9"],
    }
    if case["stage"] == "load":
        commands["stats"] = ["stats", dataset]
        commands["convert"] = ["convert", dataset, "--to", "jsonl", "--out", str(tmp_path / "converted")]
    for name, args in commands.items():
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (name, result.output)
        assert "Traceback" not in result.output and isinstance(result.exception, SystemExit), (name, result.output)
        assert located(result.stderr) == [line] and result.stdout == "", (name, result.output)
    assert row_counts(store) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no study file, review store or converted folder


@pytest.mark.parametrize("control", CONTROLS, ids=[c.name for c in CONTROLS])
def test_the_controls_pass(control: Path, store: Path, tmp_path: Path) -> None:
    dataset = str(control / "data.jsonl") if (control / "data.jsonl").is_file() else str(control)
    runner = CliRunner()
    checked = runner.invoke(app, ["validate", dataset])
    assert checked.exit_code == 0 and checked.stdout == "", checked.output
    assert "0 errors, 0 warnings" in checked.stderr
    evaluated = runner.invoke(app, ["eval", "--model", "baseline:first-option", "--dataset", dataset,
                                    "--db", str(store), "--quiet", "--run", f"input-control-{control.name}"])
    assert evaluated.exit_code == 0, evaluated.output
    converted = runner.invoke(app, ["convert", dataset, "--to", "jsonl", "--out", str(tmp_path / "out")])
    assert converted.exit_code == 0, converted.output
    again = runner.invoke(app, ["validate", str(tmp_path / "out")])
    assert again.exit_code == 0, again.output


def test_a_hugging_face_control_reads_its_parquet_file_once_through_45_self_links() -> None:
    pytest.importorskip("pyarrow")
    from commet.sources import load_dataset

    dataset = load_dataset(CORPUS / "controls" / "hf-folder-with-self-links")
    assert [st.id for st in dataset] == ["h-1", "h-2"] and [st.image_dependent for st in dataset] == [True, False]


def test_the_memory_limit_covers_what_the_pixel_limit_does_not() -> None:
    assert size_problem(10_000, 10_000, "RGBA", max_pixels=10**9) is not None  # 400 MB of pixels
    assert size_problem(7_000, 7_000, "L") is None and MAX_DECODED_BYTES >= 7_000 * 7_000 * 4


# ------------------------------------------------------------ cases made here, run as the real program

#: runs the CLI and writes its peak resident memory (KiB) to $PEAK_FILE on the way out
#: the program's own peak resident memory in KiB: VmHWM belongs to this process's address space, made at exec
#: (ru_maxrss would carry the forking test process's size over into the child's)
PEAK = ("import atexit, os, runpy, sys; "
        "atexit.register(lambda: open(os.environ['PEAK_FILE'], 'w').write(next("
        "line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM:')))); "
        "sys.argv = ['commet', *sys.argv[1:]]; runpy.run_module('commet.cli', run_name='__main__')")


def real_program(*args: str, cwd: Path) -> tuple[subprocess.CompletedProcess, int]:
    """``commet ARGS`` in a process of its own, at most 60 s; its result and peak memory in MiB."""
    peak = cwd / "peak.txt"
    env = {**os.environ, "PEAK_FILE": str(peak), "COLUMNS": "200",
           "PYTHONPATH": os.pathsep.join([SOURCE, os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-c", PEAK, *args], capture_output=True, text=True, cwd=cwd, env=env,
                            timeout=60)
    mib = int(peak.read_text()) // 1024
    peak.unlink()
    return result, mib


PIPE = {"id": "in-1", "task": "false_belief_location", "category": "Belief", "storyturn": [
    "Ana puts her ball in the basket and goes out. | | Where will Ana look, the basket or the box? | pic1 | The basket"]}


def made_case(kind: str, folder: Path) -> tuple[str, str]:
    """A case that cannot be committed: (the dataset to hand the commands, what its one line says)."""
    (folder / "images").mkdir(parents=True)
    (folder / "storyturns.jsonl").write_text(json.dumps(PIPE) + "\n")
    if kind == "fifo-dataset-file":
        (folder / "storyturns.jsonl").unlink()
        os.mkfifo(folder / "storyturns.jsonl")
        return str(folder), "is a FIFO (named pipe), not a regular file (refused, not read)"
    if kind == "dev-zero-dataset-file":
        os.symlink("/dev/zero", folder / "data.jsonl")
        return str(folder / "data.jsonl"), "is a character device, not a regular file (refused, not read)"
    if kind == "sparse-600mb-dataset-file":
        with open(folder / "data.jsonl", "wb") as handle:
            handle.truncate(600 * 1024 * 1024)
        return str(folder / "data.jsonl"), "is 629,145,600 bytes, more than the 536,870,912 a dataset file may have"
    if kind == "dataset-file-link-loop":
        (folder / "storyturns.jsonl").unlink()
        os.symlink("storyturns.jsonl", folder / "storyturns.jsonl")
        return str(folder), "cannot be read: Too many levels of symbolic links"
    if kind == "sparse-1gib-picture":
        with open(folder / "images" / "pic1.png", "wb") as handle:
            handle.truncate(1 << 30)
        return str(folder), "is 1,073,741,824 bytes, more than the 52,428,800 a picture may have (refused, not read)"
    if kind == "fifo-picture-in-hf-cell":
        import pyarrow
        import pyarrow.parquet as pq

        os.mkfifo(folder / "pic.png")
        turn = {"story": "Ana leaves.", "question": "Where will Ana look?", "answers": ["The box"],
                "image": {"bytes": None, "path": "pic.png"}}
        pq.write_table(pyarrow.Table.from_pylist([{"id": "h-1", "task": "false_belief_location", "turns": [turn]}]),
                       folder / "data.parquet")
        return str(folder / "data.parquet"), "picture is a FIFO (named pipe), not a regular file (refused, not read)"
    assert kind == "id-50-mb"
    no_picture = [PIPE["storyturn"][0].replace("| pic1 |", "| |")]  # type: ignore[index]
    (folder / "data.jsonl").write_text(json.dumps({**PIPE, "id": "x" * 50_000_000, "storyturn": no_picture}) + "\n")
    return str(folder / "data.jsonl"), "id is 50,000,000 characters long (at most 200)"


@pytest.mark.parametrize("kind", ["fifo-dataset-file", "dev-zero-dataset-file", "sparse-600mb-dataset-file",
                                  "dataset-file-link-loop", "sparse-1gib-picture", "fifo-picture-in-hf-cell",
                                  "id-50-mb"])
def test_what_cannot_be_committed_is_refused_at_once_in_bounded_memory(kind: str, tmp_path: Path) -> None:
    if kind == "fifo-picture-in-hf-cell":
        pytest.importorskip("pyarrow")
    dataset, says = made_case(kind, tmp_path / "case")
    result, mib = real_program("validate", dataset, cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 1 and LOCATED.match(lines[0]) and says in lines[0], result.stdout[:2000]
    assert len(lines[0]) < 1200
    assert mib < (400 if kind == "id-50-mb" else 250), mib  # the 50 MB id is read (its file is 50 MB): once
    evaluated = CliRunner().invoke(app, ["eval", "--model", "baseline:first-option", "--dataset", dataset,
                                         "--db", str(tmp_path / "r.sqlite"), "--quiet"])
    assert evaluated.exit_code == 2 and located(evaluated.stderr) == lines, evaluated.output
    assert not (tmp_path / "r.sqlite").exists()
    if kind == "sparse-1gib-picture":  # convert reads pictures without validating: refused before writing
        converted = CliRunner().invoke(app, ["convert", dataset, "--to", "jsonl", "--out", str(tmp_path / "out")])
        assert converted.exit_code == 2 and converted.stderr.count("\n") == 1, converted.output
        assert "a picture cannot be read: it is 1,073,741,824 bytes" in converted.stderr
        assert not (tmp_path / "out").exists()


def test_review_export_refuses_a_dataset_broken_since_it_was_served(tmp_path: Path) -> None:
    from commet.apps.review.db import ReviewDB
    from commet.sources import load_dataset

    folder = tmp_path / "reviewed"
    folder.mkdir()
    (folder / "storyturns.jsonl").write_text(json.dumps({**PIPE, "storyturn": [PIPE["storyturn"][0].replace(  # type: ignore[index]
        "| pic1 |", "| |")]}) + "\n")
    ReviewDB(tmp_path / "review.sqlite").import_dataset(load_dataset(folder))
    (folder / "storyturns.jsonl").write_text('{"id": "in-1", "n": ' + "9" * 5000 + "}\n")
    result = CliRunner().invoke(app, ["review", "export", "--out", str(tmp_path / "final"), "--db",
                                      str(tmp_path / "review.sqlite"), "--dataset", str(folder)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert len(located(result.stderr)) == 1 and "integer of 5,000 digits" in result.stderr, result.output
    assert not (tmp_path / "final").exists()


ADVERSARIAL = {"spaces": " " * 100_000, "semicolons": "; " * 50_000, "labels": "A. " * 33_000,
               "label pairs": "(a) (b) " * 12_500, "markers": "; If right" * 10_000, "quotes": '"' * 100_000,
               "brackets": "[" * 100_000, "colons": "If the previous answer is " + ":" * 100_000,
               "answers": "A; " * 33_000}


@pytest.mark.parametrize("text", list(ADVERSARIAL))
def test_100_kb_of_adversarial_text_in_any_pipe_field_is_read_at_once_in_few_lines(text: str, tmp_path: Path) -> None:
    """Each of the five fields of a turn holding 100 KB built to make parsers backtrack or repeat themselves:
    read and validated in well under a second each (a question of 'A. ' x 33,000 took 100 s), with at most two
    lines (32,999 repeated answers were 32,999 lines)."""
    import time

    value = ADVERSARIAL[text]
    for field in range(5):
        parts = ["Ana leaves.", "", "Where will Ana look?", "", "The box"]
        parts[field] = value if field == 1 else value.replace("|", "/")
        record = {"id": f"adv-{field}", "task": "false_belief_location",
                  "storyturn": ["Ana hides a box. | | Where is it? | | Under the bed", " | ".join(parts)]}
        path = tmp_path / f"{field}.jsonl"
        path.write_text(json.dumps(record) + "\n")
        started = time.perf_counter()
        result = CliRunner().invoke(app, ["validate", str(path)])
        assert time.perf_counter() - started < 10, (text, field)  # a guard against hangs, not a benchmark
        assert result.exit_code in (0, 2) and isinstance(result.exception, (SystemExit, type(None))), result.output[:500]
        lines = result.stdout.splitlines()
        assert len(lines) <= 2 and all(LOCATED.match(line) and len(line) < 1200 for line in lines), (text, field)
