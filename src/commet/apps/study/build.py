"""Study files: which StoryTurns each questionnaire holds and how it shows pictures (paper, Appendix D).

For every (task, image requirement) combination of the dataset, each questionnaire takes one
image-dependent StoryTurn or two text-complete ones. A combination's StoryTurns are shuffled
once (seeded) and dealt to the questionnaires in turn, so that questionnaires share as few
StoryTurns as the dataset allows; a combination with too few StoryTurns gives what it has and
is reported as a shortfall. Questionnaires alternate between showing the pictures of every
StoryTurn (``all``) and only those of image-dependent StoryTurns (``needed``).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from commet.format.dataset import Dataset, load_dataset
from commet.format.model import StoryTurn
from commet.format.validate import load_checked
from commet.taxonomy import TASKS

ImagePolicy = Literal["all", "needed"]
STUDY_FORMAT = "commet-study-1"
#: StoryTurns per questionnaire and combination (paper, Appendix D).
PER_IMAGE_DEPENDENT = 1
PER_TEXT_COMPLETE = 2

DEFAULT_TITLE = "A study of story understanding"
DEFAULT_CONSENT = [
    "You will read short stories, told a few sentences at a time, and answer a question after each part "
    "in your own words. Some parts come with a picture.",
    "Taking part is voluntary and anonymous. We store only the answers you type and when you gave them: no "
    "name, no e-mail address, no IP address, no details of your device or browser.",
    "You can take a break at any time: close the page and come back later with the same link. You can also "
    "stop at any time; the answers you gave until then may be used.",
    "Your answers are used for research on how people and AI systems understand stories about what others "
    "think, want and feel.",
]


class DatasetRef(BaseModel):
    """The dataset a study was built from, with the hash that pins its content."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="As given, or relative to the study file's folder.")
    name: str
    hash: str


class Questionnaire(BaseModel):
    model_config = ConfigDict(extra="forbid")

    index: int
    image_policy: ImagePolicy
    storyturns: list[str]


class Shortfall(BaseModel):
    """A (task, image requirement) combination with fewer StoryTurns than one questionnaire wants."""

    model_config = ConfigDict(extra="forbid")

    task: str
    image_dependent: bool
    wanted: int
    available: int

    def __str__(self) -> str:
        subset = "image-dependent" if self.image_dependent else "text-complete"
        return f"{self.task} ({subset}): {self.available} of {self.wanted} StoryTurns per questionnaire"


class Study(BaseModel):
    """The content of ``study.json``."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["commet-study-1"] = STUDY_FORMAT
    title: str = DEFAULT_TITLE
    consent: list[str] = Field(default_factory=lambda: list(DEFAULT_CONSENT))
    dataset: DatasetRef
    judge: str = "rules"
    seed: int
    questionnaires: list[Questionnaire]
    shortfalls: list[Shortfall] = Field(default_factory=list)

    def questionnaire(self, index: int) -> Questionnaire:
        return self.questionnaires[index]

    def digest(self) -> str:
        """What ties a participant database to this study: dataset hash and questionnaires."""
        payload = {"dataset": self.dataset.hash, "questionnaires": [q.model_dump() for q in self.questionnaires]}
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def save(self, path: Path) -> Path:
        path.write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")
        return path


class StudyError(ValueError):
    """A study file that cannot be used (unreadable, or its dataset changed)."""


def shows_image(storyturn: StoryTurn, policy: ImagePolicy) -> bool:
    """Whether a questionnaire with this policy shows the StoryTurn's pictures."""
    return policy == "all" or storyturn.image_dependent


def _combinations(dataset: Dataset) -> dict[tuple[str, bool], list[str]]:
    """StoryTurn ids per (task, image-dependent), in taxonomy order; every task's text-complete one included."""
    found: dict[tuple[str, bool], list[str]] = {}
    for storyturn in dataset:
        found.setdefault((storyturn.task, storyturn.image_dependent), []).append(storyturn.id)
    order = {task.id: i for i, task in enumerate(TASKS)}
    keys = set(found) | {(task.id, False) for task in TASKS}
    ranked = sorted(keys, key=lambda key: (order.get(key[0], len(order)), key[0], key[1]))
    return {key: sorted(found.get(key, [])) for key in ranked}


def select_questionnaires(dataset: Dataset, count: int, seed: int) -> tuple[list[Questionnaire], list[Shortfall]]:
    """The questionnaires of Appendix D and the combinations that had too few StoryTurns."""
    if count < 1:
        raise StudyError("a study needs at least one questionnaire")
    rng = random.Random(seed)
    chosen: list[list[str]] = [[] for _ in range(count)]
    shortfalls: list[Shortfall] = []
    for (task, image_dependent), ids in _combinations(dataset).items():
        wanted = PER_IMAGE_DEPENDENT if image_dependent else PER_TEXT_COMPLETE
        take = min(wanted, len(ids))
        if take < wanted:
            shortfalls.append(Shortfall(task=task, image_dependent=image_dependent, wanted=wanted, available=take))
        rng.shuffle(ids)
        for q in range(count):
            chosen[q].extend(ids[(q * take + i) % len(ids)] for i in range(take))
    questionnaires = []
    for q, ids in enumerate(chosen):
        rng.shuffle(ids)
        questionnaires.append(Questionnaire(index=q, image_policy="all" if q % 2 == 0 else "needed", storyturns=ids))
    return questionnaires, shortfalls


def build_study(dataset_path: str | Path, out: Path, *, questionnaires: int = 8, seed: int = 0,
                judge: str = "rules", loaded: Dataset | None = None) -> Study:
    """Select the questionnaires from a dataset and write ``out`` (study.json).

    ``loaded`` is the dataset at ``dataset_path`` already checked by the caller; without it the
    dataset is loaded through :func:`load_checked`, which refuses one with problems.
    """
    dataset = loaded if loaded is not None else load_checked(dataset_path)[0]
    selected, shortfalls = select_questionnaires(dataset, questionnaires, seed)
    if str(dataset_path) == "sample":
        stored = "sample"
    else:
        stored = os.path.relpath(Path(dataset_path).resolve(), out.resolve().parent)
    study = Study(dataset=DatasetRef(path=stored, name=dataset.name, hash=dataset.content_hash()), judge=judge,
                  seed=seed, questionnaires=selected, shortfalls=shortfalls)
    study.save(out)
    return study


def load_study(path: Path) -> tuple[Study, Dataset]:
    """Read a study file and its dataset; the dataset must still have the content it was built from."""
    try:
        study = Study.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StudyError(f"no study file at {path}") from None
    except ValueError as exc:
        raise StudyError(f"{path} is not a study file: {exc}") from None
    location = study.dataset.path
    dataset = load_dataset(location if location == "sample" else path.resolve().parent / location)
    if dataset.content_hash() != study.dataset.hash:
        raise StudyError(f"the dataset at {location} changed since {path} was built; build the study again")
    known = {storyturn.id for storyturn in dataset}
    missing = sorted({i for q in study.questionnaires for i in q.storyturns} - known)
    if missing:
        raise StudyError(f"{path} names StoryTurns the dataset lacks: {', '.join(missing[:5])}")
    return study, dataset
