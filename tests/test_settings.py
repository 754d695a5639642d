"""One settings model (commet.store.settings.EvalSettings): eval's options and a sweep file's keys are the same
settings, checked the same way, and make the same runs; a stored run's settings are read back by that model."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from enum import Enum
from pathlib import Path

import click
import pytest
import typer
from typer.testing import CliRunner

from commet.cli import app
from commet.engine.rejudge import RejudgeError, rejudge
from commet.engine.sweep import (
    EVAL_OPTION_OF,
    NOT_SWEEP_KEYS,
    REPORT_KEYS,
    SweepConfigError,
    known_keys,
    load_config,
)
from commet.format.dataset import Dataset
from commet.judges.rules import RulesJudge
from commet.models.base import SettingError
from commet.store import Store
from commet.store.settings import EvalSettings, RunSettings, setting_names, stored_settings

runner = CliRunner()

#: a value for every setting, none of them its default: each one is seen to reach the run
VALUES: dict[str, object] = {
    "images": "off", "feedback": "correctness", "undecided_feedback": "skip", "correctness_right": "Correct.",
    "correctness_wrong": "Incorrect.", "judge_images": "off", "system_prompt": "Answer in a few words.",
    "temperature": 0.5, "max_tokens": 64, "seed": 7, "top_p": 0.9, "image_max_side": 256, "image_format": "jpeg",
    "limit": 2,
}


def eval_options() -> dict[str, click.Parameter]:
    command = typer.main.get_command(app).commands["eval"]  # type: ignore[attr-defined]
    return {str(param.name): param for param in command.params}


def drift(eval_names: set[str], sweep_keys: set[str]) -> list[str]:
    """What eval takes that a sweep does not, and the other way round (empty when they take the same)."""
    as_eval = {EVAL_OPTION_OF.get(key, key) for key in sweep_keys - set(REPORT_KEYS)}
    return ([f"eval --{name} has no sweep key" for name in sorted(eval_names - set(NOT_SWEEP_KEYS) - as_eval)]
            + [f"sweep key for --{name} has no eval option" for name in sorted(as_eval - eval_names)])


def test_eval_options_and_sweep_keys_are_the_same_settings() -> None:
    options = eval_options()
    assert drift(set(options), set(known_keys())) == []
    # the comparison sees a setting added to one side only (a field of EvalSettings becomes a sweep key at once;
    # eval's option is written by hand)
    assert drift(set(options), {*known_keys(), "top_k"}) == ["sweep key for --top_k has no eval option"]
    assert drift({*options, "top_k"}, set(known_keys())) == ["eval --top_k has no sweep key"]
    assert set(NOT_SWEEP_KEYS) <= set(options) and set(EVAL_OPTION_OF.values()) <= set(options)  # none stale
    # every setting is an option of eval, whose default (None: not given) is the model's
    defaults = EvalSettings().options()
    for name in setting_names():
        default = options[name].default
        if default is not None:
            assert (default.value if isinstance(default, Enum) else default) == (
                defaults[name].value if isinstance(defaults[name], Enum) else defaults[name]), name


def test_settings_are_typed_by_flat_names_and_back() -> None:
    assert set(VALUES) == set(setting_names())  # VALUES names every setting
    settings = EvalSettings.from_options(VALUES)
    assert all(value != EvalSettings().options()[name] for name, value in settings.options().items())
    assert EvalSettings.from_options(settings.options()) == settings
    assert settings.generation.top_p == 0.9 and settings.correctness_texts.wrong == "Incorrect."
    assert EvalSettings.from_options({"system_prompt": None}) == EvalSettings()  # None: not given, the default
    with pytest.raises(SettingError, match=r"^max_token: not a setting \(did you mean 'max_tokens'\?\)"):
        EvalSettings.from_options({"max_token": 5})
    with pytest.raises(TypeError, match="not a recorded field of a run: dataset"):
        stored_settings(EvalSettings(), dataset="x")  # a writer may only record what RunSettings reads


def _toml(values: dict[str, object]) -> str:
    return "".join(f"{key} = {json.dumps(value)}\n" for key, value in values.items())


def test_eval_and_a_sweep_given_the_same_settings_make_the_same_run(tmp_path: Path) -> None:
    eval_db, sweep_db = tmp_path / "e.sqlite", tmp_path / "s.sqlite"
    options = [item for name, value in VALUES.items() for item in (f"--{name.replace('_', '-')}", str(value))]
    result = runner.invoke(app, ["eval", "--model", "baseline:first-option", "--db", str(eval_db), "--run", "by-eval",
                                 "--quiet", *options])
    assert result.exit_code == 0, result.output
    config = tmp_path / "grid.toml"
    config.write_text(_toml({"models": ["baseline:first-option"], "db": "s.sqlite", **VALUES}))
    result = runner.invoke(app, ["sweep", str(config), "--quiet"])
    assert result.exit_code == 0, result.output
    [(by_eval_hash, by_eval)] = sqlite3.connect(eval_db).execute("SELECT config_hash, settings_json FROM runs")
    [(name, by_sweep_hash, by_sweep)] = sqlite3.connect(sweep_db).execute(
        "SELECT name, config_hash, settings_json FROM runs")
    assert name == "baseline:first-option@commet-sample:images=off,feedback=correctness"
    assert (by_sweep_hash, by_sweep) == (by_eval_hash, by_eval)
    with Store(sweep_db) as store:
        run = store.runs()[0]
    assert run.settings.eval_settings == EvalSettings.from_options(VALUES) and run.story_count == 2
    stored = json.loads(by_sweep)
    assert (stored["undecided_feedback"], stored["judge_images"], stored["generation"]["top_p"],
            stored["correctness_texts"]["right"], stored["image_format"]) == ("skip", "off", 0.9, "Correct.", "jpeg")


@pytest.mark.parametrize(("name", "value", "reason"), [
    ("top_p", 1.5, "Input should be less than or equal to 1, not 1.5"),
    ("max_tokens", 0, "Input should be greater than or equal to 1, not 0"),
    ("temperature", -1.0, "Input should be greater than or equal to 0, not -1.0"),
    ("image_max_side", 0, "Input should be greater than or equal to 1, not 0"),
    ("image_format", "gif", "'gif' is not one of png, jpeg"),
])
def test_a_sweep_refuses_a_setting_in_the_words_eval_does(tmp_path: Path, name: str, value: object,
                                                          reason: str) -> None:
    result = runner.invoke(app, ["eval", "--model", "baseline:first-option", "--db", str(tmp_path / "e.sqlite"),
                                 f"--{name.replace('_', '-')}", str(value)])
    assert result.exit_code == 2 and result.output.strip() == f"error: --{name.replace('_', '-')}: {reason}"
    config = tmp_path / "grid.toml"
    config.write_text(_toml({"models": ["baseline:first-option"], "db": "s.sqlite", name: value}))
    result = runner.invoke(app, ["sweep", str(config)])
    assert result.exit_code == 2 and result.output.strip() == f"error: {config}: {name}: {reason}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grid.toml"]  # nothing written by either


@pytest.mark.parametrize(("lines", "says"), [
    ('seed = "7"', "seed: Input should be a valid integer, not '7'"),
    ("limit = true", "limit: Input should be a valid integer, not True"),
    ("limit = 2.0", "limit: Input should be a valid integer, not 2.0"),
    ("system_prompt = 3", "system_prompt: Input should be a valid string, not 3"),
    ('correctness_right = ["Yes."]', "correctness_right: Input should be a valid string, not ['Yes.']"),
    ('undecided_feedback = "maybe"', "undecided_feedback: 'maybe' is not one of stop, skip, wrong"),
    ('judge_images = ["on"]', "judge_images: ['on'] is not one of needed, on, off"),  # one value: not an axis
    ('images = ["on", "sometimes"]', "images: 'sometimes' is not one of on, off, needed"),
    ("seed = 1979-05-27", "seed: datetime.date(1979, 5, 27) is not a number, text or true/false"),
    ("max_cost = -1", "max_cost: must be a number of USD, 0 or more, not -1.0"),
    ('max_cost = "5"', "max_cost: must be a number of USD, not '5'"),
    ("max_cost = nan", "max_cost: must be a number of USD, 0 or more, not nan"),
    ("concurrency = 2.5", "concurrency: must be a whole number, not 2.5"),
    ("concurrency = true", "concurrency: must be a whole number, not True"),
    ("judge = 3", "judge: must be a string, not 3"),
    ('columns = { other = "question=q" }', "columns: 'other' is not one of the datasets (sample)"),
    ("columns = 5", "columns: must be a string"),
    ('undecided_feedbak = "skip"', "unknown key 'undecided_feedbak' (did you mean 'undecided_feedback'?)"),
])
def test_a_sweep_file_value_of_the_wrong_kind_is_named(tmp_path: Path, lines: str, says: str) -> None:
    config = tmp_path / "grid.toml"
    config.write_text(f'models = ["baseline:first-option"]\n{lines}\n')
    with pytest.raises(SweepConfigError) as refused:
        load_config(config)
    assert str(refused.value).startswith(f"{config}: ") and says in str(refused.value), str(refused.value)


def test_a_sweep_takes_every_setting_and_its_own_keys(tmp_path: Path) -> None:
    config = tmp_path / "grid.toml"
    config.write_text('models = ["baseline:first-option"]\ndatasets = ["hf:me/tom", "rrchen2026/Theory_of_Mind_CoMMET",'
                      ' "tables/local", "sample"]\ncolumns = { "tables/local" = "question=q" }\nmax_cost = 2\n'
                      'undecided_feedback = "skip"\njudge_images = "on"\nfeedback = "none"\n')
    loaded = load_config(config)
    local = str(tmp_path / "tables" / "local")
    # a Hub dataset is a name, not a path beside the config file
    assert loaded.datasets == ["hf:me/tom", "rrchen2026/Theory_of_Mind_CoMMET", local, "sample"]
    assert loaded.columns == {local: "question=q"} and loaded.max_cost == 2.0
    cell = loaded.cells()[0]
    settings = loaded.cell_settings(cell)
    assert (settings.undecided_feedback.value, settings.judge_images.value, settings.feedback.value) == (
        "skip", "on", "none")
    config.write_text('models = ["baseline:first-option"]\ndatasets = ["a", "b"]\ncolumns = "question=q"\n')
    assert load_config(config).columns == {str(tmp_path / "a"): "question=q", str(tmp_path / "b"): "question=q"}


def test_a_sweep_stops_each_run_at_its_max_cost_and_exits_as_eval(tmp_path: Path) -> None:
    config = tmp_path / "grid.toml"
    config.write_text('models = ["baseline:first-option"]\ndb = "s.sqlite"\nmax_cost = 0\nlimit = 2\n')
    result = runner.invoke(app, ["sweep", str(config), "--quiet"])
    assert result.exit_code == 4, result.output
    assert "stopped-spend-limit: baseline:first-option@commet-sample" in result.output
    assert "stopped before max_cost; raise it and run the same command again to resume (exit code 4)" in " ".join(
        result.output.split())
    config.write_text('models = ["baseline:first-option"]\ndb = "s.sqlite"\nmax_cost = 1\nlimit = 2\n')
    assert runner.invoke(app, ["sweep", str(config), "--quiet"]).exit_code == 0  # a higher limit resumes it


def test_finish_refuses_every_setting_option(tmp_path: Path) -> None:
    for name in setting_names():
        result = runner.invoke(app, ["eval", "--finish", "r", "--judge", "rules", "--db", str(tmp_path / "x.sqlite"),
                                     f"--{name.replace('_', '-')}", str(VALUES[name])])
        option = f"--{name.replace('_', '-')}"
        assert result.exit_code == 2 and f"drop {option}" in result.output, (name, result.output)
    assert not (tmp_path / "x.sqlite").exists()


def test_a_human_run_has_no_eval_settings_and_is_not_re_judged(tmp_path: Path) -> None:
    empty = Dataset(storyturns=[], name="empty")
    stored = {"images": "on+needed", "feedback": "original", "system_prompt": "", "policy": "both", "study": "5e1f",
              "judges": ["rules"]}
    settings = RunSettings.from_stored(stored, run="people")
    assert settings.eval_settings is None and settings.images is None and settings.images_label == "on+needed"
    assert (settings.recorded.study, settings.recorded.judges, settings.undecided_feedback) == ("5e1f", ["rules"], None)
    with Store(tmp_path / "s.sqlite") as store:
        store.create_run(name="people", model="human", judge="rules", settings=stored, config_hash="h",
                         dataset_name="empty", dataset_hash=empty.content_hash(), package_version="0", story_count=0)
        with pytest.raises(RejudgeError, match="run 'people' was answered by people"):
            asyncio.run(rejudge(store, "people", RulesJudge(), empty))
        assert len(store.runs()) == 1  # nothing written


def test_a_stored_run_reads_back_its_recorded_fields() -> None:
    stored = stored_settings(EvalSettings.from_options(VALUES), model_identity={"spec": "m"},
                             dataset_path="hf:me/tom@0123", dataset_layout="rows", dataset_columns="question=q",
                             finished_from="base")
    settings = RunSettings.from_stored(stored, run="r")
    assert settings.eval_settings == EvalSettings.from_options(VALUES)
    assert (settings.recorded.dataset_columns, settings.recorded.finished_from, settings.dataset_path) == (
        "question=q", "base", "hf:me/tom@0123")
    assert (settings.image_max_side, settings.image_format) == (256, "jpeg")
    again = RunSettings.from_stored(settings.recorded_with(rejudged_from="r"), run="r~rules")
    assert again.rejudged_from == "r" and again.eval_settings == settings.eval_settings


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Hub unreachable and its caches in tmp_path (tables are read with `datasets`)."""
    import datasets
    import huggingface_hub

    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "datasets-cache")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)


def test_a_sweep_reads_a_table_with_its_columns_and_records_them(tmp_path: Path, offline: None) -> None:
    from tests import hub_fixtures

    hub_fixtures.layout_b(tmp_path / "odd", columns={"question": "q"})  # a column no reader can guess
    config = tmp_path / "grid.toml"
    config.write_text('models = ["baseline:first-option"]\ndb = "s.sqlite"\ndatasets = ["odd"]\nlimit = 2\n')
    result = runner.invoke(app, ["sweep", str(config), "--quiet"])
    assert result.exit_code == 2 and "--columns" in result.output and not (tmp_path / "s.sqlite").exists()
    config.write_text(config.read_text() + 'columns = { odd = "question=q" }\n')
    result = runner.invoke(app, ["sweep", str(config), "--quiet"])
    assert result.exit_code == 0, result.output
    with Store(tmp_path / "s.sqlite") as store:
        [run] = store.runs()
    assert run.settings.recorded.dataset_columns == "question=q"
    assert run.settings.dataset_path == str((tmp_path / "odd").resolve())


def test_a_setting_added_later_leaves_the_hash_of_every_earlier_run_as_it_was() -> None:
    from pydantic import Field

    from commet.engine.runner import config_hash
    from commet.models.registry import create_model
    from commet.store.settings import ADDED_LATER
    from tests.test_conditions import OLD_CONFIG_HASHES

    class Later(EvalSettings):  # what EvalSettings becomes when a setting is added with its mark
        top_k: int | None = Field(default=None, json_schema_extra=ADDED_LATER)

    model, judge = create_model("baseline:first-option"), RulesJudge()
    assert Later().recorded() == EvalSettings().recorded() == EvalSettings().model_dump(mode="json")
    assert config_hash(model, judge, Later(), "0" * 64) == OLD_CONFIG_HASHES["default"]
    assert Later(top_k=5).recorded() == {**EvalSettings().recorded(), "top_k": 5}  # set: recorded and hashed
    assert config_hash(model, judge, Later(top_k=5), "0" * 64) != OLD_CONFIG_HASHES["default"]
    stored = stored_settings(Later(), model_identity={"spec": "m"})
    assert "top_k" not in stored and RunSettings.from_stored(stored).eval_settings == EvalSettings()
