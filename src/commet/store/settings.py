"""A run's settings, in one place: what a run is asked to do, and what a stored run says it did.

:class:`EvalSettings` is everything about a run that changes its results. ``commet eval``, ``commet
sweep``, ``commet rejudge``, ``commet eval --finish`` and the Python API all build it; the engine records
its JSON with the run and hashes it into the run's configuration. The names users type for it (eval's
options, a sweep file's keys: :func:`setting_names`) are derived from its fields, so a setting added
here is a sweep key at once, and ``tests/test_settings.py`` fails until eval has its option too.

:class:`RunSettings` reads a stored run's settings back: the JSON as the run wrote it (``stored``, kept
as it is, so every config hash and every older file stays what it was), the validated
:class:`EvalSettings` of a run a model answered (fields added since the run was made take their
defaults), and what the run recorded beside them (:class:`Recorded`: the model's identity, where and
how its dataset was read, the run it was re-judged or finished from, a human run's study). A stored
value that does not validate is a :class:`RunSettingsError` naming the run and the field, never a
default in its place. A human run (written by ``commet study export-run``; it records its ``study``)
has no EvalSettings; when it pools questionnaires of several picture policies (``images`` recorded as
``on+needed``) its ``images`` is None and ``images_label`` says what was pooled.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

from commet.conditions import FeedbackCondition, ImagePolicy, JudgeImages, UndecidedFeedback
from commet.models.base import GenerationSettings, SettingError, did_you_mean
from commet.store.errors import StoreError

DEFAULT_SYSTEM_PROMPT = (
    "You will read a short story told over several turns, with a picture in some turns. "
    "Answer each question about the story briefly and directly. When a question asks why, "
    "give the reason in one sentence."
)


class CorrectnessTexts(BaseModel):
    """The correctness-only control's two texts (paper, Appendix I: "Your answer is wrong."); recorded per run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    right: str = "Your answer is right."
    wrong: str = "Your answer is wrong."


PAPER_CORRECTNESS_TEXTS = CorrectnessTexts()


#: marks a field of EvalSettings added after runs were stored (``Field(default, json_schema_extra=ADDED_LATER)``):
#: left out of a run's recorded JSON and configuration hash while at its default, so every run made before it
#: keeps its hash, its default name and resumes
ADDED_LATER: dict[str, Any] = {"added_later": True}


class EvalSettings(BaseModel):
    """Everything about a run that changes its results; recorded with the run and hashed (:meth:`recorded`).

    The fields' names and defaults are part of every stored run and config hash: a new field needs a
    default that gives the results of the runs made before it, and the :data:`ADDED_LATER` mark.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    images: ImagePolicy = ImagePolicy.on
    feedback: FeedbackCondition = FeedbackCondition.original
    undecided_feedback: UndecidedFeedback = UndecidedFeedback.STOP
    correctness_texts: CorrectnessTexts = PAPER_CORRECTNESS_TEXTS
    judge_images: JudgeImages = JudgeImages.NEEDED
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    generation: GenerationSettings = Field(default_factory=GenerationSettings)
    #: how pictures are prepared for the model (largest side in pixels, file format)
    image_max_side: int = Field(default=1024, ge=1)
    image_format: Literal["png", "jpeg"] = "png"
    #: only the first ``limit`` StoryTurns
    limit: int | None = Field(default=None, ge=1)

    @classmethod
    def from_options(cls, options: Mapping[str, object], *, from_file: bool = False) -> EvalSettings:
        """Settings from the names users type (:func:`setting_names`); a value of None is one not given (the
        default). ``from_file``: values read from a file (TOML, JSON) are taken as they are typed there (no
        ``"3"`` for 3). A name that is not a setting, or a refused value, is a :class:`SettingError` naming
        the setting as typed (``max_tokens: Input should be greater than or equal to 1, not 0``)."""
        names = _flat_names()
        tree: dict[str, Any] = {}
        for name, value in options.items():
            if name not in names:
                raise SettingError(name, f"not a setting{did_you_mean(name, names)} (settings: {', '.join(names)})")
            if value is None:
                continue
            if from_file and not _is_json(value):  # a TOML date: no setting is one
                raise SettingError(name, f"{value!r} is not a number, text or true/false")
            field, inner = names[name]
            if inner is None:
                tree[field] = value
            else:
                tree.setdefault(field, {})[inner] = value
        try:
            return cls.model_validate_json(json.dumps(tree), strict=True) if from_file else cls.model_validate(tree)
        except ValidationError as exc:
            error = exc.errors()[0]
            flat = {where: name for name, where in names.items()}
            at = (str(error["loc"][0]), str(error["loc"][1]) if len(error["loc"]) > 1 else None)
            raise SettingError(flat.get(at, ".".join(str(part) for part in error["loc"])), _reason(error)) from None

    def recorded(self) -> dict[str, object]:
        """The JSON a run records and hashes: every field, one marked :data:`ADDED_LATER` only when not at its
        default (a nested settings model's fields likewise)."""
        return _recorded_json(self)

    def options(self) -> dict[str, object]:
        """The settings by the names users type (the inverse of :meth:`from_options`)."""
        values = self.model_dump()
        return {name: values[field] if inner is None else values[field][inner]
                for name, (field, inner) in _flat_names().items()}


def _recorded_json(settings: BaseModel) -> dict[str, object]:
    dumped = settings.model_dump(mode="json")
    for name, info in type(settings).model_fields.items():
        value = getattr(settings, name)
        if info.json_schema_extra == ADDED_LATER and value == info.get_default(call_default_factory=True):
            del dumped[name]
        elif isinstance(value, BaseModel):
            dumped[name] = _recorded_json(value)
    return dumped


#: the settings models inside EvalSettings, spelt flat where users type settings: each of their fields by its own
#: name after this prefix (``generation.max_tokens`` is ``max_tokens``, ``correctness_texts.right`` is
#: ``correctness_right``)
FLAT_PREFIX = {"generation": "", "correctness_texts": "correctness_"}


@functools.cache
def _flat_names() -> dict[str, tuple[str, str | None]]:
    """Each setting's name as users type it -> (EvalSettings field, field inside it or None), in field order."""
    names: dict[str, tuple[str, str | None]] = {}
    for field, info in EvalSettings.model_fields.items():
        kind = info.annotation
        inside = kind.model_fields if isinstance(kind, type) and issubclass(kind, BaseModel) else None
        spelt = [(field, None)] if inside is None else [(FLAT_PREFIX[field] + inner, inner) for inner in inside]
        for name, inner in spelt:
            if name in names:
                raise TypeError(f"EvalSettings: two settings are typed {name!r}; give {field} another FLAT_PREFIX")
            names[name] = (field, inner)
    return names


def setting_names() -> tuple[str, ...]:
    """Every setting as users type it: eval's options (``--max-tokens``), a sweep file's keys (``max_tokens``)."""
    return tuple(_flat_names())


def _is_json(value: object) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _choices(error: ErrorDetails) -> list[str] | None:
    """The values a refused choice (an enum, a literal) may take; None for any other refusal."""
    if error["type"] not in ("enum", "literal_error"):
        return None
    return re.findall(r"'([^']*)'", str(error.get("ctx", {}).get("expected", "")))


def _reason(error: ErrorDetails) -> str:
    """Why a value was refused: ``'x' is not one of a, b, c`` for a choice, else pydantic's reason and the value."""
    choices = _choices(error)
    if choices is not None:
        return f"{error['input']!r} is not one of {', '.join(choices)}"
    return f"{error['msg']}, not {error['input']!r}"


class RunSettingsError(StoreError):
    """A stored setting that does not validate (a damaged or foreign results file): names the run and the field."""


class Recorded(BaseModel):
    """What a run records beside its settings: who answered, where its data was read from and how, which run it
    was made from; a human run's study. Keys no field names are kept in ``RunSettings.stored`` unread."""

    # (protected_namespaces: pydantic before 2.10 warns of a field named model_*, model_identity here)
    model_config = ConfigDict(extra="ignore", frozen=True, protected_namespaces=())

    #: the answering model's identity (spec and the options that change replies); absent from a human run
    model_identity: dict[str, Any] | None = None
    #: where the dataset was read from (a folder, a file, ``hf:OWNER/NAME@COMMIT``), and for a table written by
    #: others how it was read and its ``--columns`` mapping
    dataset_path: str | None = None
    dataset_layout: str | None = None
    dataset_columns: str | None = None
    #: the ``--adapter FILE.py:FUNCTION`` that made the StoryTurns, and its source text (hashed with the dataset)
    dataset_adapter: str | None = None
    dataset_adapter_source: str | None = None
    #: the run this one re-judged (``commet rejudge``) or finished (``commet eval --finish``)
    rejudged_from: str | None = None
    finished_from: str | None = None
    #: a human run's study (its digest), picture-policy filter and the judges of its answers
    study: str | None = None
    policy: str | None = None
    judges: list[str] | None = None


#: the recorded fields that say how a run's dataset was read: not part of its configuration (a ``--columns``
#: mapping is, through the dataset's hash)
READ_FROM = ("dataset_path", "dataset_layout", "dataset_columns", "dataset_adapter", "dataset_adapter_source")


def stored_settings(settings: EvalSettings, **recorded: object) -> dict[str, object]:
    """The settings JSON a run stores: ``settings`` and what it records beside them (:class:`Recorded` fields)."""
    return {**settings.recorded(), **_recorded(recorded)}


def _recorded(recorded: Mapping[str, object]) -> Mapping[str, object]:
    unknown = sorted(set(recorded) - set(Recorded.model_fields))
    if unknown:  # a key a reader would not know: declare it in Recorded first
        raise TypeError(f"not a recorded field of a run: {', '.join(unknown)}")
    return recorded


Choice = TypeVar("Choice", bound=Enum)
Settings = TypeVar("Settings", bound=BaseModel)


@dataclass(frozen=True)
class RunSettings:
    """One run's stored settings read back, typed (see the module)."""

    stored: Mapping[str, object]
    #: the settings the run was made with; None for a human run (answered by people in the study app)
    eval_settings: EvalSettings | None
    recorded: Recorded
    images: ImagePolicy | None
    images_label: str
    feedback: FeedbackCondition | None

    @classmethod
    def from_stored(cls, stored: Mapping[str, object], *, run: str = "?") -> RunSettings:
        recorded = _validated(Recorded, stored, run)
        if recorded.study is not None:
            return cls._human(stored, recorded, run)
        settings = _validated(EvalSettings, {k: v for k, v in stored.items() if k in EvalSettings.model_fields}, run)
        return cls(dict(stored), settings, recorded, settings.images, settings.images.value, settings.feedback)

    @classmethod
    def _human(cls, stored: Mapping[str, object], recorded: Recorded, run: str) -> RunSettings:
        images = stored.get("images")
        pooled = isinstance(images, str) and "+" in images
        if pooled:  # each pooled policy must be a real one
            for part in str(images).split("+"):
                _choice(ImagePolicy, "images", part, run)
        return cls(dict(stored), None, recorded, None if pooled else _choice(ImagePolicy, "images", images, run),
                   "" if images is None else str(images), _choice(FeedbackCondition, "feedback", stored.get("feedback"),
                                                                  run))

    def recorded_with(self, **recorded: object) -> dict[str, object]:
        """The stored JSON with more recorded fields (a re-judged run's copy of its source's settings)."""
        return {**self.stored, **_recorded(recorded)}

    @property
    def undecided_feedback(self) -> UndecidedFeedback | None:
        return None if self.eval_settings is None else self.eval_settings.undecided_feedback

    @property
    def judge_images(self) -> JudgeImages | None:
        return None if self.eval_settings is None else self.eval_settings.judge_images

    @property
    def image_max_side(self) -> int:
        """How the run's pictures were prepared for the model (a human run's: as an eval run's by default)."""
        return (self.eval_settings or _DEFAULTS).image_max_side

    @property
    def image_format(self) -> str:
        return (self.eval_settings or _DEFAULTS).image_format

    @property
    def dataset_path(self) -> str | None:
        return self.recorded.dataset_path or None

    @property
    def rejudged_from(self) -> str | None:
        return self.recorded.rejudged_from or None


_DEFAULTS = EvalSettings()


def _validated(model: type[Settings], stored: Mapping[str, object], run: str) -> Settings:
    """``model`` from stored JSON values, taken as they are typed; a refused one names the run and the field."""
    try:
        return model.model_validate_json(json.dumps(stored), strict=True)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = f"{'.'.join(str(part) for part in error['loc'])}={error['input']!r}"
        choices = _choices(error)
        said = f"is not one of {', '.join(choices)}" if choices is not None else f"is refused: {error['msg']}"
        raise RunSettingsError(f"run {run!r}: stored setting {where} {said}") from None
    except (TypeError, ValueError) as exc:  # not JSON values (a caller's own mapping)
        raise RunSettingsError(f"run {run!r}: stored settings are not JSON values ({exc})") from None


def _choice(kind: type[Choice], field: str, value: object, run: str) -> Choice | None:
    """``value`` as its enum (None when not recorded); a value outside it names the run and the field."""
    if value is None:
        return None
    try:
        return kind(value)
    except ValueError:
        raise RunSettingsError(f"run {run!r}: stored setting {field}={value!r} is not one of "
                               f"{', '.join(str(c.value) for c in kind)}") from None
