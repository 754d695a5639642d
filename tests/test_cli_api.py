"""The Python API in notebooks, the README's snippet, convert with pictures, and messages in one style."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import commet
from commet.cli import app
from commet.extras import install_command
from commet.models.base import ModelSpecError, UnknownModelError
from commet.models.registry import create_model

README = Path(__file__).resolve().parents[1] / "README.md"
TERMINAL = {"COLUMNS": "80"}


def commet_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "commet.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, **TERMINAL}, timeout=180)


# ---------------------------------------------------------------------------------------- Python API


def test_the_top_level_names() -> None:
    assert {"evaluate", "evaluate_async", "load_dataset", "report", "EvalSettings"} <= set(commet.__all__)
    assert callable(commet.evaluate) and callable(commet.evaluate_async) and callable(commet.report)


async def test_evaluate_inside_a_running_event_loop_as_in_a_notebook(tmp_path: Path) -> None:
    """pytest-asyncio runs this test in an event loop, as Jupyter runs cells: asyncio.run() would fail here."""
    db = tmp_path / "nb.sqlite"
    first = commet.evaluate("baseline:first-option", "sample", db=db, settings=commet.EvalSettings(images="off"))
    assert first.run.status == "done" and first.results.complete
    assert first.progress.model_calls > 0 and 0 < first.results.questions <= 145  # the sample has 145 questions
    # a second call on the finished run makes no call and still reports the whole run
    second = commet.evaluate("baseline:first-option", "sample", db=db, settings=commet.EvalSettings(images="off"))
    assert second.progress.model_calls == 0 and second.progress.questions == 0
    assert second.results == first.results and second.results.questions_right == first.results.questions_right > 0
    awaited = await commet.evaluate_async("baseline:first-option", "sample", db=db,
                                          settings=commet.EvalSettings(images="off"))
    assert awaited.results == first.results and awaited.run.name == first.run.name
    assert f"`{first.run.name}`" in commet.report(db, [first.run.name])


def test_the_readme_python_snippet_runs_twice_with_the_same_output(tmp_path: Path) -> None:
    code = re.search(r"## From Python\n\n```python\n(.*?)```", README.read_text(), re.S)
    assert code is not None
    outputs = [subprocess.run([sys.executable, "-c", code.group(1)], capture_output=True, text=True, cwd=tmp_path,
                              timeout=120) for _ in range(2)]
    assert all(o.returncode == 0 for o in outputs), outputs[0].stderr
    assert outputs[0].stdout == outputs[1].stdout
    status, right, _, total, *_ = outputs[0].stdout.split()
    assert status == "done" and 0 < int(right) <= int(total) <= 145


# ---------------------------------------------------------------------------------------- convert


def image_hashes(db: Path) -> list[tuple[str, int, str]]:
    import sqlite3

    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT story_id, turn, images_json FROM turns ORDER BY story_id, turn").fetchall()
    return [(story, turn, images) for story, turn, images in rows if images != "[]"]


EVAL = ("eval", "--model", "baseline:first-option", "--quiet", "--run", "r")


@pytest.fixture(scope="module")
def sample_pictures_sent(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, int, str]]:
    """The pictures (ids and hashes) an eval of the bundled sample sends, turn by turn."""
    reference = tmp_path_factory.mktemp("reference") / "ref.sqlite"
    assert commet_cli(*EVAL, "--db", str(reference)).returncode == 0
    return image_hashes(reference)


@pytest.mark.parametrize(("target", "out"), [("pipe", "s.json"), ("pipe", "s.jsonl"), ("jsonl", "c.jsonl"),
                                             ("jsonl", "folder"), ("hf", "hfdir")])
def test_convert_carries_the_pictures_to_each_target_and_eval_sends_them(
        target: str, out: str, tmp_path: Path, sample_pictures_sent: list[tuple[str, int, str]]) -> None:
    args = EVAL
    converted = commet_cli("convert", "sample", "--to", target, "--out", out, cwd=tmp_path)
    assert converted.returncode == 0, converted.stderr
    assert converted.stdout.startswith(f"wrote 41 StoryTurns to {out} ")
    assert ("20 pictures embedded" if target == "hf" else "its 20 pictures to ") in converted.stdout
    assert commet_cli("validate", out, cwd=tmp_path).returncode == 0
    db = tmp_path / "converted.sqlite"
    result = commet_cli(*args, "--dataset", out, "--db", str(db), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    sent = image_hashes(db)
    assert len(sent) == 20 and sent == sample_pictures_sent  # the same pictures, byte for byte


def test_convert_refuses_to_lose_or_overwrite_pictures_unless_told(tmp_path: Path) -> None:
    source = tmp_path / "src"
    (source / "images").mkdir(parents=True)
    sample = commet.load_dataset("sample")
    with_pictures = [st for st in sample if st.images][:2]
    (source / "storyturns.jsonl").write_text("".join(st.model_dump_json() + "\n" for st in with_pictures))
    kept = with_pictures[0].images[0]
    (source / "images" / kept).write_bytes(sample.image_bytes(kept))  # the second story's is missing

    lost = commet_cli("convert", str(source), "--to", "pipe", "--out", str(tmp_path / "out" / "s.json"))
    assert lost.returncode == 2 and lost.stderr.startswith("error: 1 of 2 pictures the StoryTurns name are not in")
    assert "--no-pictures" in lost.stderr and not (tmp_path / "out" / "s.json").exists()

    alone = commet_cli("convert", str(source), "--to", "pipe", "--out", str(tmp_path / "s.json"), "--no-pictures")
    assert alone.returncode == 0 and alone.stdout.strip().endswith("without pictures (--no-pictures)")
    assert not (tmp_path / "images").exists()

    (source / "images" / with_pictures[1].images[0]).write_bytes(sample.image_bytes(with_pictures[1].images[0]))
    clash_dir = tmp_path / "clash"
    (clash_dir / "images").mkdir(parents=True)
    (clash_dir / "images" / kept).write_bytes(b"someone else's picture")
    clash = commet_cli("convert", str(source), "--to", "jsonl", "--out", str(clash_dir / "c.jsonl"))
    assert clash.returncode == 2 and "already exists with other content" in clash.stderr
    assert (clash_dir / "images" / kept).read_bytes() == b"someone else's picture"
    assert (source / "images" / kept).read_bytes() == sample.image_bytes(kept)  # the source untouched


# ---------------------------------------------------------------------------------------- messages


def test_a_missing_dataset_is_one_line_with_the_closest_name(tmp_path: Path) -> None:
    (tmp_path / "stories.jsonl").write_text("")
    for args, expected in [(["validate", "sampel"], "error: no dataset 'sampel': no such file or folder; "
                                                    "did you mean 'sample'?"),
                           (["eval", "--model", "baseline:first-option", "--dataset", "storis.jsonl"],
                            "error: no dataset 'storis.jsonl': no such file or folder; did you mean 'stories.jsonl'?"),
                           (["stats", "nope"], "error: no dataset 'nope': no such file or folder; give a dataset "
                                               "folder, a JSONL/JSON file, a Hugging Face folder, or 'sample'")]:
        result = commet_cli(*args, cwd=tmp_path)
        assert result.returncode == 2 and result.stderr.startswith(expected), result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(("spec", "message", "unknown"), [
    ("baseline:first-option?foo=1", "baseline:first-option: unknown option(s) 'foo'; known: reply", False),
    ("baseline:random-option?sed=2", "unknown option(s) 'sed' (did you mean 'seed'?); known: seed", False),
    ("baseline:first-optin", "unknown baseline 'first-optin' (did you mean 'first-option'?)", True),
    ("opnai:gpt-4o", "unknown model provider 'opnai' (did you mean 'openai'?)", True),
    ("openai:m?base_url=http://127.0.0.1:9/v1&timout=3", "openai: unknown option(s) 'timout' (did you mean 'timeout'?)",
     False),
])
def test_every_provider_refuses_unknown_options_with_the_closest_name(spec: str, message: str, unknown: bool,
                                                                      tmp_path: Path) -> None:
    """A name that is not there is an UnknownModelError; an option it does not know, the wider ModelSpecError."""
    with pytest.raises(ModelSpecError) as caught:
        create_model(spec)
    assert message in str(caught.value)
    assert isinstance(caught.value, UnknownModelError) is unknown
    result = CliRunner().invoke(app, ["eval", "--model", spec, "--db", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 2 and message in result.output and not (tmp_path / "s.sqlite").exists()


def test_all_missing_prerequisites_are_reported_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setitem(sys.modules, "openai", None)  # the SDK is not installed
    with pytest.raises(ModelSpecError) as caught:
        create_model("openai:gpt-4o?detial=low")
    text = str(caught.value)
    assert text.startswith("openai: 3 problems: unknown option(s) 'detial'")
    assert "no API key: set the environment variable OPENAI_API_KEY" in text
    assert f"the SDK (openai) is not installed: {install_command('openai')}" in text
    assert "\n" not in text


def all_commands(group: object, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and sub-command of a (typer) command group."""
    found: list[tuple[str, ...]] = []
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        found.append((*prefix, name))
        if hasattr(command, "commands"):
            found.extend(all_commands(command, (*prefix, name)))
    return found


def test_help_has_no_type_noise_on_flags_and_one_name_for_the_results_file() -> None:
    commands = all_commands(typer.main.get_command(app))
    assert len(commands) > 20
    results_file = {"--store"}
    for command in commands:
        result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "100"})
        assert result.exit_code == 0, command
        assert "<bool>" not in result.output, command
        assert not results_file & set(re.findall(r"--[a-z-]+", result.output)), command
    export_run = CliRunner().invoke(app, ["study", "export-run", "--help"], env={"COLUMNS": "100"}).output
    assert "--db <path>" in export_run and "SQLite results file" in export_run and "--study-db" in export_run
    generate = CliRunner().invoke(app, ["generate", "llm", "--help"], env={"COLUMNS": "100"}).output
    assert "docs/tasks.md" in generate and (README.parent / "docs" / "tasks.md").is_file()
    sweep = CliRunner().invoke(app, ["sweep", "--help"], env={"COLUMNS": "100"}).output
    from commet.engine.sweep import KNOWN_KEYS

    assert all(f"{key} =" in sweep for key in KNOWN_KEYS)  # every key of the sweep file is documented


def test_a_sweep_key_typo_gets_the_closest_name(tmp_path: Path) -> None:
    config = tmp_path / "grid.toml"
    config.write_text('models = ["baseline:first-option"]\nfeedbacks = ["none"]\n')
    result = CliRunner().invoke(app, ["sweep", str(config)])
    assert result.exit_code == 2 and "unknown key 'feedbacks' (did you mean 'feedback'?)" in result.output


@pytest.mark.parametrize(("lines", "message"), [
    ('format = "pdf"', "'format' must be one of csv, html, latex, markdown, table, not 'pdf'"),
    ('out = "grid.csv"\nformat = "csv"', "a CSV report is one file per table; give a folder"),
    ('out = "grid.pdf"', "cannot write a report to"),
])
def test_a_sweep_report_target_is_refused_before_any_cell_runs(tmp_path: Path, lines: str, message: str) -> None:
    config = tmp_path / "grid.toml"
    config.write_text(f'models = ["baseline:first-option"]\ndb = "grid.sqlite"\n{lines}\n')
    result = CliRunner().invoke(app, ["sweep", str(config)])
    assert result.exit_code == 2 and message in result.output and str(config) in result.output, result.output
    assert not (tmp_path / "grid.sqlite").exists()  # nothing ran, nothing written


def test_study_export_run_takes_the_results_file_as_db_and_refuses_both_names(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["study", "export-run", str(tmp_path / "study.json"), "--db", "a.sqlite",
                                      "--store", "b.sqlite"])
    assert result.exit_code == 2 and "give the results file once, with --db" in result.output


@pytest.mark.parametrize(("options", "message"), [
    (["--max-tokens", "0"], "--max-tokens: Input should be greater than or equal to 1, not 0"),
    (["--temperature", "-0.5"], "--temperature: Input should be greater than or equal to 0, not -0.5"),
    (["--temperature", "nan"], "--temperature: Input should be a finite number, not nan"),
])
def test_sampling_settings_no_provider_accepts_are_refused_before_anything_runs(
        tmp_path: Path, options: list[str], message: str) -> None:
    db = tmp_path / "r.sqlite"
    result = CliRunner().invoke(app, ["eval", "--model", "baseline:first-option", "--db", str(db), "--quiet",
                                      *options])
    assert result.exit_code == 2 and result.output.strip() == f"error: {message}", result.output
    assert not db.exists()
    config = tmp_path / "grid.toml"
    key, value = options[0].removeprefix("--").replace("-", "_"), options[1]
    config.write_text(f'models = ["baseline:first-option"]\ndb = "grid.sqlite"\n{key} = {value}\n')
    result = CliRunner().invoke(app, ["sweep", str(config)])
    field, why = message.removeprefix("--").split(": ", 1)
    assert result.exit_code == 2 and result.output.strip() == f"error: {config}: {field.replace('-', '_')}: {why}"
    assert not (tmp_path / "grid.sqlite").exists()


def test_the_python_api_names_a_refused_setting_as_the_settings_do() -> None:
    from commet.models.base import GenerationSettings, SettingError

    with pytest.raises(SettingError) as refused:
        GenerationSettings.checked(temperature=0.0, top_p=1.5)
    assert (refused.value.field, refused.value.reason) == ("top_p", "Input should be less than or equal to 1, not 1.5")
    assert str(refused.value) == "top_p: Input should be less than or equal to 1, not 1.5"
    assert isinstance(refused.value, ValueError)  # callers that catch ValueError keep working


def test_a_path_the_system_refuses_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    commet.evaluate("baseline:first-option", "sample", db=db, run="b")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    for command in (["report", "--db", str(db), "--out", str(blocker / "r.md")],
                    ["export", "--db", str(db), "--run", "b", "--out", str(blocker / "b.jsonl")],
                    ["convert", "sample", "--to", "pipe", "--out", str(blocker / "s.json"), "--no-pictures"]):
        result = CliRunner().invoke(app, command)
        assert result.exit_code == 2, (command, result.output)
        assert result.output.strip() in (f"error: {blocker}: is a file, where a folder is needed",
                                         f"error: {blocker / 'r.md'}: {blocker} is a file, where a folder is needed",
                                         f"error: {blocker / 'b.jsonl'}: {blocker} is a file, where a folder is needed"), \
            (command, result.output)
        assert "Traceback" not in result.output
    made = tmp_path / "new" / "folder" / "s.json"  # a folder that is not there yet is made, as by every --out
    result = CliRunner().invoke(app, ["convert", "sample", "--to", "pipe", "--out", str(made)])
    assert result.exit_code == 0 and made.is_file() and (made.parent / "images").is_dir(), result.output
