"""The run conditions are spelled once (commet.conditions) and read back from the store typed."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from commet.conditions import FeedbackCondition, ImagePolicy, JudgeImages, UndecidedFeedback
from commet.engine import EvalSettings
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
    ({"images": "on+often"}, "images='often'"),
    ({"feedback": "loud"}, "feedback='loud' is not one of original, correctness, none"),
    ({"image_max_side": "big"}, "image_max_side='big' is not a positive whole number"),
])
def test_a_stored_setting_outside_its_values_is_a_located_error(stored: dict[str, object], message: str) -> None:
    with pytest.raises(RunSettingsError, match=message.replace("(", r"\(").replace("+", r"\+")):
        RunSettings.from_stored(stored, run="r")
