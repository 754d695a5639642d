"""Bad input, as the real ``commet`` program meets it: one line naming what is wrong, exit code 2, no
traceback, and nothing written (docs/cli.md)."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import commet

#: the package under test, whatever the working folder of the command
SOURCE = str(Path(commet.__file__).resolve().parents[1])


def commet_cli(*args: str, cwd: Path, stdin: str | None = None,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200", "PYTHONPATH": os.pathsep.join([SOURCE, os.environ.get("PYTHONPATH", "")]),
           **(env or {})}
    return subprocess.run([sys.executable, "-m", "commet.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, input=stdin, timeout=180)


def refused(result: subprocess.CompletedProcess, *says: str) -> None:
    """Exit 2 and one line on stderr, saying each of ``says``."""
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr
    for words in says:
        assert words in result.stderr, result.stderr


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` and a hash of its bytes."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


# ------------------------------------------------------------- the study and review apps' SQLite files


@pytest.fixture(scope="module")
def study_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("study")
    built = commet_cli("study", "build", "--dataset", "sample", "--out", "study.json", cwd=folder)
    assert built.returncode == 0, built.stderr
    return folder / "study.json"


@pytest.mark.parametrize("kind", ["not sqlite", "another program's", "a results store", "a folder"])
def test_the_study_and_review_apps_refuse_a_file_that_is_not_their_store_untouched(
        kind: str, tmp_path: Path, study_file: Path) -> None:
    db = tmp_path / "x.sqlite"
    if kind == "not sqlite":
        db.write_text("not a database at all\n")
    elif kind == "another program's":
        with sqlite3.connect(db) as con:
            con.execute("CREATE TABLE t (x)")
    elif kind == "a results store":
        made = commet_cli("eval", "--model", "baseline:first-option", "--quiet", "--limit", "1", "--db", str(db),
                          cwd=tmp_path)
        assert made.returncode == 0, made.stderr
    else:
        db.mkdir()
    before = snapshot(tmp_path)
    for args, stdin in [(["study", "links", str(study_file), "--db", str(db)], None),
                        (["study", "export", str(study_file), "--out", "answers.csv", "--db", str(db)], None),
                        (["review", "add-user", "ada", "--password-stdin", "--db", str(db)], "long enough password\n"),
                        (["review", "export", "--out", "final", "--db", str(db)], None)]:
        result = commet_cli(*args, cwd=tmp_path, stdin=stdin)
        if kind == "a folder" and args[:2] == ["review", "export"]:
            refused(result, "no review store at")
            continue
        refused(result, str(db), "is a folder" if kind == "a folder" else "not a")
        assert snapshot(tmp_path) == before  # no answers file, no dataset folder, the store byte for byte


def test_a_new_study_database_in_a_new_folder_is_made(tmp_path: Path, study_file: Path) -> None:
    result = commet_cli("study", "links", str(study_file), "--db", "new/study.sqlite", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "new" / "study.sqlite").is_file()


# ------------------------------------------------------------------------------------ benchmark imports

IMPORTERS = Path(__file__).parent / "data" / "importers"


def _mmtomqa_episode_list(folder: Path) -> Path:
    lines = (IMPORTERS / "mmtomqa" / "questions.json").read_text().splitlines()
    first = json.loads(lines[0])
    (folder / "questions.json").write_text("\n".join([json.dumps({**first, "episode": [3]}), *lines[1:]]) + "\n")
    return folder / "questions.json"


def _mumatom_with(field: str, value: object) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        for name in ("questions.json", "texts.json"):
            (folder / name).write_text((IMPORTERS / "mumatom" / name).read_text())
        questions = json.loads((folder / "questions.json").read_text())
        for record in questions.values():
            record[field] = value
        (folder / "questions.json").write_text(json.dumps(questions, indent=4))
        return folder

    return make


@pytest.mark.parametrize(("importer", "make", "says"), [
    ("mmtomqa", _mmtomqa_episode_list, "questions.json:1 story=- turn=- field=episode: error: expected an episode"),
    ("mumatom", _mumatom_with("questions", {}), "story=812 turn=- field=questions: error: no questions"),
    ("mumatom", _mumatom_with("labels", 7), "story=812 turn=- field=labels: error: expected a 'labels' object"),
])
def test_a_benchmark_record_of_the_wrong_shape_is_one_located_line(
        importer: str, make: Callable[[Path], Path], says: str, tmp_path: Path) -> None:
    (tmp_path / "source").mkdir()
    source = make(tmp_path / "source")
    before = snapshot(tmp_path)
    result = commet_cli("import", importer, str(source), "--out", "imported", cwd=tmp_path)
    refused(result, says)
    assert snapshot(tmp_path) == before and not (tmp_path / "imported").exists()


# --------------------------------------------------------------------------------- model spec options


@pytest.mark.parametrize("spec", [
    "openai:gpt-4o?base_url=http://127.0.0.1:9/v1&timeout=nan",
    "openai:gpt-4o?base_url=http://127.0.0.1:9/v1&timeout=-1",
    "openai:gpt-4o?base_url=http://127.0.0.1:9/v1&rpm=nan",
    "openai:gpt-4o?base_url=http://127.0.0.1:9/v1&backoff_max=inf",
    "openai:gpt-4o?base_url=http://127.0.0.1:9/v1&price_in=-1",
    "openai:gpt-4o?base_url=http://127.0.0.1:9/v1&price_out=nan",
    "replay:answers.json?delay=inf",
    "replay:answers.json?delay=-1",
])
def test_a_numeric_model_option_that_is_not_finite_or_is_negative_is_refused(spec: str, tmp_path: Path) -> None:
    (tmp_path / "answers.json").write_text('{"sample-common_desire-1": ["The kite", "The kite"]}')
    result = commet_cli("eval", "--model", spec, "--quiet", "--limit", "1", "--db", "r.sqlite", cwd=tmp_path)
    option = spec.rsplit("&" if "&" in spec else "?", 1)[1]
    refused(result, f"option {option.split('=')[0]}=")
    assert not (tmp_path / "r.sqlite").exists()


def test_a_replay_file_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "answers.json").write_bytes(b'{"sample-common_desire-1": ["caf\xe9"]}')
    result = commet_cli("eval", "--model", "replay:answers.json", "--quiet", "--db", "r.sqlite", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr == ("answers.json:1:33 story=- turn=- field=-: error: not UTF-8 text: byte 0xe9 (invalid "
                             "continuation byte); save the file as UTF-8\n")
    assert not (tmp_path / "r.sqlite").exists()


# ------------------------------------------------------------------------------------------- convert


def test_convert_into_a_dataset_folder_never_overwrites_a_different_picture(tmp_path: Path) -> None:
    out = tmp_path / "folder"
    (out / "images").mkdir(parents=True)
    (out / "images" / "sample-common_desire-1-0.png").write_bytes(b"someone else's picture")
    before = snapshot(tmp_path)
    result = commet_cli("convert", "sample", "--to", "jsonl", "--out", "folder", cwd=tmp_path)
    refused(result, "folder/images/sample-common_desire-1-0.png already exists with other content")
    assert snapshot(tmp_path) == before  # no storyturns.jsonl, no dataset.json, the picture as it was

    again = commet_cli("convert", "sample", "--to", "jsonl", "--out", "copy", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    same = commet_cli("convert", "sample", "--to", "jsonl", "--out", "copy", cwd=tmp_path)  # the same bytes: fine
    assert same.returncode == 0, same.stderr
    into_itself = commet_cli("convert", "copy", "--to", "jsonl", "--out", "copy", cwd=tmp_path)
    assert into_itself.returncode == 0, into_itself.stderr


# -------------------------------------------------------------------------------------------- generate


@pytest.mark.parametrize("option", [["--per-task", "0"], ["--tasks", ","], ["--tasks", " "]])
def test_generating_an_empty_dataset_is_refused_before_anything_is_written(option: list[str], tmp_path: Path) -> None:
    result = commet_cli("generate", "procedural", "--out", "made", *option, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and option[0] in result.stderr
    assert not (tmp_path / "made").exists()


# ----------------------------------------------------------------------------------------------- study


@pytest.mark.parametrize("text", ['{"dataset": 5}', "[1]", '{"title": "cut off'])
def test_a_file_that_is_not_a_study_file_is_one_line(text: str, tmp_path: Path) -> None:
    (tmp_path / "study.json").write_text(text)
    for args in (["links"], ["export", "--out", "answers.csv"], ["export-run"]):
        result = commet_cli("study", args[0], "study.json", *args[1:], cwd=tmp_path)
        refused(result, "study.json is not a study file: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["study.json"]


@pytest.mark.parametrize("option", [["--count", "0"], ["--count", "-1"], ["--questionnaire", "99"]])
def test_study_links_with_bad_options_makes_no_participant_database(
        option: list[str], tmp_path: Path, study_file: Path) -> None:
    result = commet_cli("study", "links", str(study_file), "--db", "study.sqlite", *option, cwd=tmp_path)
    refused(result, "--count must be at least 1" if option[0] == "--count" else "no questionnaire 99")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("out", ["answers.txt", "answers", "answers.json"])
def test_study_export_to_a_file_that_is_neither_csv_nor_jsonl_is_refused(out: str, tmp_path: Path,
                                                                         study_file: Path) -> None:
    result = commet_cli("study", "export", str(study_file), "--out", out, "--db", "study.sqlite", cwd=tmp_path)
    refused(result, f"--out {out}: write the answers to a .csv or a .jsonl file")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("judge", "says"), [
    ("nope", "--judge: unknown judge 'nope'"), ("openai:gpt-4o?bogus=1", "unknown option(s) 'bogus'"),
    ("panel:rules,openai:gpt-4o?timeout=-1", "option timeout='-1'")])
def test_study_build_refuses_a_judge_its_server_could_not_build(judge: str, says: str, tmp_path: Path) -> None:
    result = commet_cli("study", "build", "--dataset", "sample", "--judge", judge, cwd=tmp_path,
                        env={"OPENAI_API_KEY": "sk-test-not-a-real-key-0123456789"})
    refused(result, says)
    assert list(tmp_path.iterdir()) == []


def test_study_build_takes_a_judge_whose_key_is_only_where_the_server_runs(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env["PYTHONPATH"] = os.pathsep.join([SOURCE, os.environ.get("PYTHONPATH", "")])
    result = subprocess.run([sys.executable, "-m", "commet.cli", "study", "build", "--dataset", "sample", "--judge",
                             "openai:gpt-4o"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "study.json").read_text())["judge"] == "openai:gpt-4o"


def test_a_hugging_face_model_that_cannot_be_loaded_is_one_line(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    result = commet_cli("eval", "--model", "hf:commet-tests/no-such-model", "--quiet", "--db", "r.sqlite", cwd=tmp_path)
    refused(result, "hf: cannot load 'commet-tests/no-such-model'")
    assert not (tmp_path / "r.sqlite").exists()


# ------------------------------------------------------------------------------ commands that read a store


@pytest.mark.parametrize("args", [["report"], ["runs"], ["judges"], ["compare", "a", "b"],
                                  ["export", "--run", "a", "--out", "a.jsonl"]])
def test_a_command_that_reads_a_store_leaves_an_empty_file_empty(args: list[str], tmp_path: Path) -> None:
    (tmp_path / "results.sqlite").touch()
    result = commet_cli(*args, "--db", "results.sqlite", cwd=tmp_path)
    refused(result, "no results store at results.sqlite")
    assert [(p.name, p.stat().st_size) for p in tmp_path.iterdir()] == [("results.sqlite", 0)]


# ----------------------------------------------------------------------------------------------- sweep


def test_a_sweep_file_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "grid.toml").write_bytes(b'models = ["baseline:first-option"]\nrun_prefix = "caf\xe9"\n')
    result = commet_cli("sweep", "grid.toml", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr  # the bounded reader's located line
    assert result.stderr == ("grid.toml:2:18 story=- turn=- field=-: error: not UTF-8 text: byte 0xe9 (invalid "
                             "continuation byte); save the file as UTF-8\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grid.toml"]


@pytest.mark.parametrize(("setting", "says"), [("concurrency = 0", "concurrency: must be at least 1, not 0"),
                                               ("concurrency = -1", "concurrency: must be at least 1, not -1"),
                                               ("limit = 0", "limit: Input should be greater than or equal to 1, not 0")])
def test_a_sweep_file_refuses_what_eval_refuses_before_anything_runs(setting: str, says: str, tmp_path: Path) -> None:
    (tmp_path / "grid.toml").write_text(f'models = ["baseline:first-option"]\n{setting}\n')
    result = commet_cli("sweep", "grid.toml", cwd=tmp_path)
    refused(result, f"grid.toml: {says}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grid.toml"]


def test_a_bad_model_spec_in_one_sweep_cell_is_refused_before_the_store_is_made(tmp_path: Path) -> None:
    (tmp_path / "grid.toml").write_text('models = ["baseline:first-option", "openai:gpt-4o?timeout=nan"]\n'
                                        'db = "s.sqlite"\n')
    result = commet_cli("sweep", "grid.toml", cwd=tmp_path, env={"OPENAI_API_KEY": "sk-test-not-a-real-key-0123456789"})
    refused(result, "timeout")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grid.toml"]


# ----------------------------------------------------------------------------------------------- audit


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_audit_refuses_a_fail_above_that_could_never_fail(value: str, tmp_path: Path) -> None:
    refused(commet_cli("audit", "sample", "--fail-above", value, cwd=tmp_path), "--fail-above")


# -------------------------------------------------------------------------------------------- generate llm


@pytest.mark.parametrize("prefix", ["../up", "a/b", " padded"])
def test_generate_llm_refuses_an_id_prefix_that_makes_invalid_ids(prefix: str, tmp_path: Path) -> None:
    result = commet_cli("generate", "llm", "--out", "made", "--task", "diverse_desire",
                        "--model", "openai:gpt-4o?base_url=http://127.0.0.1:9/v1&max_attempts=1",
                        "--image-model", "openai:gpt-image-1", "--id-prefix", prefix, cwd=tmp_path,
                        env={"OPENAI_API_KEY": "sk-test-not-a-real-key-0123456789"})
    refused(result, "--id-prefix: ")
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------------------------ secrets

SECRET = "sk-SECRET0123456789abcdefghij"


@pytest.mark.parametrize("base_url", [f"http://127.0.0.1:9/v1?key={SECRET}", "http://127.0.0.1:9/v1?api-key=abc123",
                                      f"http://127.0.0.1:9/{SECRET}/v1"])
def test_a_key_in_a_base_url_is_refused_before_it_reaches_the_store(base_url: str, tmp_path: Path) -> None:
    from urllib.parse import quote

    spec = f"openai:gpt-4o?max_attempts=1&base_url={quote(base_url, safe=':/')}"
    result = commet_cli("eval", "--model", spec, "--quiet", "--limit", "1", "--db", "r.sqlite", cwd=tmp_path,
                        env={"OPENAI_API_KEY": "sk-test-not-a-real-key-0123456789"})
    refused(result, "put credentials in an environment variable")
    assert SECRET not in result.stderr + result.stdout and not (tmp_path / "r.sqlite").exists()


@pytest.mark.parametrize(("base_url", "refused_"), [
    ("http://my-desk-server:8000/v1", False), ("http://risk-model.internal:8000/v1", False),
    ("https://api.runpod.ai/v2/disk-abcdef1234567890abcd/openai/v1", False),
    ("https://x.openai.azure.com/openai?api-version=2024-02-01", False),
    (f"http://h:8000/v1/{SECRET}", True), (f"http://h:8000/v1?x={SECRET}", True), ("http://h/v1?Key=abc", True),
    (f"http://h/v1%3Fk%3D{SECRET}", True), ("http://user:pw@h/v1", True)])
def test_only_a_credential_in_a_base_url_is_taken_for_one(base_url: str, refused_: bool) -> None:
    from commet.models.remote import _credential_in_url

    assert _credential_in_url(base_url) is refused_


@pytest.mark.parametrize("option", ["--model", "--judge"])
def test_a_key_pasted_as_the_model_name_is_refused_and_never_repeated(option: str, tmp_path: Path) -> None:
    spec = f"openai:{SECRET}"
    args = ["--model", spec] if option == "--model" else ["--model", "baseline:first-option", "--judge", spec]
    result = commet_cli("eval", *args, "--quiet", "--db", "r.sqlite", cwd=tmp_path,
                        env={"OPENAI_API_KEY": "sk-test-not-a-real-key-0123456789"})
    refused(result, "the model name looks like an API key")
    assert SECRET not in result.stderr + result.stdout and not (tmp_path / "r.sqlite").exists()


def test_a_base_url_with_an_ordinary_query_is_still_accepted(tmp_path: Path) -> None:
    spec = "openai:gpt-4o?max_attempts=1&base_url=http://127.0.0.1:9/v1%3Fapi-version%3D2024-02-01"
    result = commet_cli("eval", "--model", spec, "--quiet", "--limit", "1", "--db", "r.sqlite", cwd=tmp_path,
                        env={"OPENAI_API_KEY": "sk-test-not-a-real-key-0123456789"})
    assert result.returncode == 3, result.stderr  # it ran: the server is not there


# --------------------------------------------------------------------------------------------- run names


@pytest.mark.parametrize("name", ["evil\x1b[31mred", "two\nlines", " ", "trailing "])
def test_a_run_name_that_would_break_lines_or_drive_the_terminal_is_refused(name: str, tmp_path: Path) -> None:
    result = commet_cli("eval", "--model", "baseline:first-option", "--quiet", "--limit", "1", "--db", "r.sqlite",
                        "--run", name, cwd=tmp_path)
    refused(result, "--run: a run name cannot")
    assert "\x1b" not in result.stderr and not (tmp_path / "r.sqlite").exists()
    (tmp_path / "grid.toml").write_text(f'models = ["baseline:first-option"]\nrun_prefix = {json.dumps(name)}\n')
    if not name.isprintable():
        refused(commet_cli("sweep", "grid.toml", cwd=tmp_path), "run_prefix: a run name cannot")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["grid.toml"]
