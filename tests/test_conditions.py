"""The run conditions are spelled once (commet.conditions) and read back from the store typed."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from commet.conditions import FeedbackCondition, ImagePolicy, JudgeImages, UndecidedFeedback
from commet.engine import EvalSettings
from commet.engine.rejudge import rejudge
from commet.engine.runner import Engine, config_hash
from commet.format.dataset import Dataset
from commet.judges.rules import RulesJudge
from commet.models.base import GenerationSettings
from commet.models.registry import create_model
from commet.store import Store
from commet.store.settings import RunSettings, RunSettingsError


def test_conditions_print_as_their_values_and_dump_as_before() -> None:
    assert f"images={ImagePolicy.off},feedback={FeedbackCondition.correctness}" == "images=off,feedback=correctness"
    assert str(UndecidedFeedback.STOP) == "stop" and f"{JudgeImages.NEEDED:>7}" == " needed"
    dumped = EvalSettings(images=ImagePolicy.needed, feedback=FeedbackCondition.none).model_dump(mode="json")
    assert (dumped["images"], dumped["feedback"], dumped["undecided_feedback"], dumped["judge_images"]) == (
        "needed", "none", "stop", "needed")
    # a string given where the enum is declared (a notebook, an older caller) is read into the enum
    assert EvalSettings(feedback="correctness").feedback is FeedbackCondition.correctness  # type: ignore[arg-type]


def _store_with(tmp_path: Path, settings: dict[str, object], name: str = "r") -> Path:
    db = tmp_path / "old.sqlite"
    with Store(db) as store:
        store.create_run(name=name, model="m", judge="rules", settings=settings, config_hash="h", dataset_name="d",
                         dataset_hash="x", package_version="0", story_count=1)
    return db


@pytest.mark.parametrize(("stored", "images", "label", "feedback"), [
    # an eval run as every version wrote it
    ({"images": "off", "feedback": "correctness", "undecided_feedback": "skip", "judge_images": "on",
      "system_prompt": "", "image_max_side": 512, "image_format": "jpeg", "model_identity": {"spec": "m"},
      "dataset_path": "/data/x"}, ImagePolicy.off, "off", FeedbackCondition.correctness),
    # a run from before the undecided and judge-images policies existed
    ({"images": "on", "feedback": "original", "system_prompt": "s"}, ImagePolicy.on, "on", FeedbackCondition.original),
    # a re-judged run copies its source's settings and names it
    ({"images": "needed", "feedback": "none", "rejudged_from": "base"}, ImagePolicy.needed, "needed",
     FeedbackCondition.none),
    # a human run pooling both questionnaire kinds
    ({"images": "on+needed", "feedback": "original", "policy": "both", "study": "abc", "judges": ["rules"]},
     None, "on+needed", FeedbackCondition.original),
])
def test_stored_settings_of_every_writer_read_back_typed_and_unchanged(
        tmp_path: Path, stored: dict[str, object], images: ImagePolicy | None, label: str,
        feedback: FeedbackCondition) -> None:
    db = _store_with(tmp_path, stored)
    raw = sqlite3.connect(db).execute("SELECT settings_json FROM runs").fetchone()[0]
    assert raw == json.dumps(stored, sort_keys=True)  # the JSON on disk is what the writer gave
    with Store(db) as store:
        run = store.get_run("r")
    assert run is not None
    settings = run.settings
    assert (settings.images, settings.images_label, settings.feedback) == (images, label, feedback)
    assert dict(settings.stored) == stored  # nothing dropped: config comparisons and re-judging see it all
    assert settings.rejudged_from == stored.get("rejudged_from")
    assert settings.dataset_path == stored.get("dataset_path")
    assert settings.image_max_side == stored.get("image_max_side", 1024)
    assert settings.image_format == stored.get("image_format", "png")


@pytest.mark.parametrize(("stored", "message"), [
    ({"images": "sometimes"}, "run 'r': stored setting images='sometimes' is not one of on, off, needed"),
    ({"images": "on+needed"}, "images='on+needed' is not one of on, off, needed"),  # pooled: only a human run
    ({"images": "on+often", "study": "s"}, "images='often' is not one of on, off, needed"),
    ({"feedback": "loud"}, "feedback='loud' is not one of original, correctness, none"),
    ({"undecided_feedback": "guess"}, "undecided_feedback='guess' is not one of stop, skip, wrong"),
    ({"image_format": "gif"}, "image_format='gif' is not one of png, jpeg"),
    ({"image_max_side": "big"}, "image_max_side='big' is refused: Input should be a valid integer"),
    ({"image_max_side": 0}, "image_max_side=0 is refused: Input should be greater than or equal to 1"),
    ({"image_max_side": True}, "image_max_side=True is refused: Input should be a valid integer"),
    ({"limit": "3"}, "limit='3' is refused: Input should be a valid integer"),
    ({"generation": {"max_tokens": 0}}, "generation.max_tokens=0 is refused: Input should be greater than or equal"),
    ({"generation": {"top_k": 5}}, "generation.top_k=5 is refused: Extra inputs are not permitted"),
    ({"correctness_texts": {"right": 1}}, "correctness_texts.right=1 is refused: Input should be a valid string"),
    ({"system_prompt": None}, "system_prompt=None is refused: Input should be a valid string"),
    ({"model_identity": "m"}, "model_identity='m' is refused: Input should be an object"),
    ({"dataset_path": 5}, "dataset_path=5 is refused: Input should be a valid string"),
    ({"judges": "rules", "study": "s"}, "judges='rules' is refused: Input should be a valid array"),
])
def test_a_stored_setting_outside_its_values_is_a_located_error(stored: dict[str, object], message: str) -> None:
    with pytest.raises(RunSettingsError, match=message.replace("(", r"\(").replace("+", r"\+")):
        RunSettings.from_stored(stored, run="r")


# --- Stored settings and config hashes stay byte for byte what the string settings wrote ----------------------
#
# The values below were computed with the code before the conditions became enums (commit 2e9d410's parent,
# `git archive 2e9d410^ src`), by the same steps as the tests run: EvalSettings()/FIXED with the model
# baseline:first-option, the rules judge, dataset hash "0"*64 for config_hash; Engine.open_run on an empty
# in-memory dataset for the eval runs' settings_json; engine rejudge of "fixed" into "fixed-again".
# The human run's JSON is what apps/study/export.py wrote then (policy "both", one judge, a dataset path).

FIXED = EvalSettings(images=ImagePolicy.needed, feedback=FeedbackCondition.correctness,
                     undecided_feedback=UndecidedFeedback.SKIP, judge_images=JudgeImages.ON,
                     system_prompt="Answer briefly.", generation=GenerationSettings(temperature=0.5, max_tokens=64),
                     image_max_side=512, image_format="jpeg", limit=3)
OLD_CONFIG_HASHES = {
    "default": "817ddb6f7fe262585f531e4e737777fe5e3ed2f4c1ec086c90406092388c1156",
    "fixed": "b476209c711383138945d0cf82fa55347540ec37e8dcc7ef0cbc7b4186ce6e4f",
}
_CORRECTNESS = '"correctness_texts": {"right": "Your answer is right.", "wrong": "Your answer is wrong."}'
_IDENTITY = '"model_identity": {"reply": "Yes.", "spec": "baseline:first-option"}'
OLD_SETTINGS_JSON = {
    "default": (
        "3dd181c81afb04a750962d4d4c15a5942c25078cb7054a662b8ac946b354ff5f",
        "{" + _CORRECTNESS + ', "feedback": "original", "generation": {"max_tokens": 512, "seed": null, '
        '"temperature": 0.0, "top_p": null}, "image_format": "png", "image_max_side": 1024, "images": "on", '
        '"judge_images": "needed", "limit": null, ' + _IDENTITY + ', "system_prompt": "You will read a short story '
        "told over several turns, with a picture in some turns. Answer each question about the story briefly and "
        'directly. When a question asks why, give the reason in one sentence.", "undecided_feedback": "stop"}'),
    "fixed": (
        "2408278085a98efc966198faa7980a32b80ec74c730f62cdada2b5c8d0a91ebc",
        "{" + _CORRECTNESS + ', "feedback": "correctness", "generation": {"max_tokens": 64, "seed": null, '
        '"temperature": 0.5, "top_p": null}, "image_format": "jpeg", "image_max_side": 512, "images": "needed", '
        '"judge_images": "on", "limit": 3, ' + _IDENTITY + ', "system_prompt": "Answer briefly.", '
        '"undecided_feedback": "skip"}'),
    "fixed-again": (
        "79cca1548c8ce3dc79e04faca763c1112355ba31be074d8fed615bb5afebd9ee",
        "{" + _CORRECTNESS + ', "feedback": "correctness", "generation": {"max_tokens": 64, "seed": null, '
        '"temperature": 0.5, "top_p": null}, "image_format": "jpeg", "image_max_side": 512, "images": "needed", '
        '"judge_images": "on", "limit": 3, ' + _IDENTITY + ', "rejudged_from": "fixed", '
        '"system_prompt": "Answer briefly.", "undecided_feedback": "skip"}'),
}
OLD_HUMAN_SETTINGS_JSON = ('{"dataset_path": "/data/crafted", "feedback": "original", "images": "on+needed", '
                           '"judges": ["rules"], "policy": "both", "study": "5e1f", "system_prompt": ""}')


def test_config_hashes_are_those_of_the_string_settings() -> None:
    model, judge = create_model("baseline:first-option"), RulesJudge()
    assert config_hash(model, judge, EvalSettings(), "0" * 64) == OLD_CONFIG_HASHES["default"]
    assert config_hash(model, judge, FIXED, "0" * 64) == OLD_CONFIG_HASHES["fixed"]


def test_eval_and_rejudged_runs_store_the_settings_json_of_the_string_settings(tmp_path: Path) -> None:
    model, judge, empty = create_model("baseline:first-option"), RulesJudge(), Dataset(storyturns=[], name="empty")
    with Store(tmp_path / "s.sqlite") as store:
        for name, settings in (("default", EvalSettings()), ("fixed", FIXED)):
            Engine(model=model, judge=judge, dataset=empty, store=store, settings=settings).open_run(name)
        asyncio.run(rejudge(store, "fixed", judge, empty, new_name="fixed-again"))
    rows = sqlite3.connect(tmp_path / "s.sqlite").execute("SELECT name, config_hash, settings_json FROM runs")
    assert {name: (digest, raw) for name, digest, raw in rows} == OLD_SETTINGS_JSON


def test_a_store_file_written_with_string_settings_reads_typed(tmp_path: Path) -> None:
    db, empty = tmp_path / "old.sqlite", Dataset(storyturns=[], name="empty")
    with Store(db) as store:
        for name in [*OLD_SETTINGS_JSON, "human"]:
            store.create_run(name=name, model="m", judge="rules", settings={}, config_hash="h", dataset_name="empty",
                             dataset_hash=empty.content_hash(), package_version="0", story_count=0)
    with sqlite3.connect(db) as raw:  # the rows exactly as the older version left them on disk
        raw.executemany("UPDATE runs SET settings_json = ? WHERE name = ?",
                        [*((text, name) for name, (_, text) in OLD_SETTINGS_JSON.items()),
                         (OLD_HUMAN_SETTINGS_JSON, "human")])
    with Store(db) as store:
        runs = {name: store.get_run(name) for name in [*OLD_SETTINGS_JSON, "human"]}
    settings = {name: run.settings for name, run in runs.items() if run is not None}
    assert [(s.images, s.images_label, s.feedback, s.undecided_feedback, s.judge_images)
            for s in settings.values()] == [
        (ImagePolicy.on, "on", FeedbackCondition.original, UndecidedFeedback.STOP, JudgeImages.NEEDED),
        (ImagePolicy.needed, "needed", FeedbackCondition.correctness, UndecidedFeedback.SKIP, JudgeImages.ON),
        (ImagePolicy.needed, "needed", FeedbackCondition.correctness, UndecidedFeedback.SKIP, JudgeImages.ON),
        (None, "on+needed", FeedbackCondition.original, None, None)]
    assert (settings["fixed"].image_max_side, settings["fixed"].image_format) == (512, "jpeg")
    assert (settings["fixed-again"].rejudged_from, settings["fixed"].rejudged_from) == ("fixed", None)
    assert settings["human"].dataset_path == "/data/crafted"
    # every key is kept as written, also those no typed field reads (model identity, a study's digest)
    for name, (_, text) in OLD_SETTINGS_JSON.items():
        assert json.dumps(dict(settings[name].stored), sort_keys=True) == text
    assert json.dumps(dict(settings["human"].stored), sort_keys=True) == OLD_HUMAN_SETTINGS_JSON
    # a run of the old file re-judged now copies its settings unchanged
    with Store(db) as store:
        asyncio.run(rejudge(store, "fixed", RulesJudge(), empty, new_name="again"))
    again = sqlite3.connect(db).execute("SELECT settings_json FROM runs WHERE name = 'again'").fetchone()[0]
    assert again == OLD_SETTINGS_JSON["fixed-again"][1]
