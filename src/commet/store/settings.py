"""A run's recorded settings, typed: what reports, re-judging and the tools read back from the store.

The store keeps the settings as the JSON the run wrote (``stored``: the engine's full settings, the
model's identity, where the dataset was read from, what a re-judged run was judged from, a human
run's study); that JSON, and so every config hash and every older file, stays exactly as it was.
The conditions are read into the enums of :mod:`commet.conditions`; a value outside them is an
error naming the run and the field, except a human run that pools questionnaires of several
picture policies (``images`` recorded as ``on+needed``): its ``images`` is None and
``images_label`` says what was pooled.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import TypeVar

from commet.conditions import FeedbackCondition, ImagePolicy, JudgeImages, UndecidedFeedback
from commet.store.errors import StoreError

Choice = TypeVar("Choice", bound=Enum)


class RunSettingsError(StoreError):
    """A stored setting outside its declared values (a damaged or foreign results file)."""


@dataclass(frozen=True)
class RunSettings:
    """The typed view of one run's stored settings (None: the run did not record that field)."""

    stored: Mapping[str, object]
    images: ImagePolicy | None
    images_label: str
    feedback: FeedbackCondition | None
    undecided_feedback: UndecidedFeedback | None
    judge_images: JudgeImages | None
    dataset_path: str | None
    rejudged_from: str | None
    #: how pictures were prepared for the model (largest side in pixels, file format)
    image_max_side: int = 1024
    image_format: str = "png"

    @classmethod
    def from_stored(cls, stored: Mapping[str, object], *, run: str = "?") -> RunSettings:
        images_value = stored.get("images")
        pooled = isinstance(images_value, str) and "+" in images_value
        if pooled:  # each pooled policy must be a real one
            for part in str(images_value).split("+"):
                _choice(ImagePolicy, "images", part, run)
        return cls(
            stored=dict(stored),
            images=None if pooled else _choice(ImagePolicy, "images", images_value, run),
            images_label="" if images_value is None else str(images_value),
            feedback=_choice(FeedbackCondition, "feedback", stored.get("feedback"), run),
            undecided_feedback=_choice(UndecidedFeedback, "undecided_feedback", stored.get("undecided_feedback"), run),
            judge_images=_choice(JudgeImages, "judge_images", stored.get("judge_images"), run),
            dataset_path=_text(stored.get("dataset_path")),
            rejudged_from=_text(stored.get("rejudged_from")),
            image_max_side=_whole(stored.get("image_max_side"), "image_max_side", 1024, run),
            image_format=_text(stored.get("image_format")) or "png",
        )


def _choice(kind: type[Choice], field: str, value: object, run: str) -> Choice | None:
    """``value`` as its enum (None when not recorded); a value outside it names the run and the field."""
    if value is None:
        return None
    try:
        return kind(value)
    except ValueError:
        raise RunSettingsError(f"run {run!r}: stored setting {field}={value!r} is not one of "
                               f"{', '.join(str(c.value) for c in kind)}") from None


def _whole(value: object, field: str, default: int, run: str) -> int:
    if value is None:
        return default
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    raise RunSettingsError(f"run {run!r}: stored setting {field}={value!r} is not a positive whole number")


def _text(value: object) -> str | None:
    return None if value is None or value == "" else str(value)
