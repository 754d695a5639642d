"""Study files: which StoryTurns each questionnaire holds and how it shows pictures (paper, Appendix D).

The paper crosses its Figure 3 task groups with the image requirement and gets 20
combinations; each questionnaire takes two StoryTurns of every combination that needs no
picture and one of every combination that does, 36 StoryTurns in all. The default grouping
(``paper``) reproduces that: text-complete StoryTurns are grouped by task, with each of the
taxonomy's minimal pairs (sarcasm and its sincere control, the two moral judgements) one
group, 16 groups; image-dependent StoryTurns are grouped by the categories of the paper's
Table 2 (Percept, Intention, MBK, NLC), 4 groups. ``task`` keeps the older grouping by the 18
booklet tasks on both sides.

A combination's StoryTurns are shuffled once (seeded) and dealt to the questionnaires in
turn, so that questionnaires share as few StoryTurns as the dataset allows; a combination
with too few StoryTurns gives what it has and is reported as a shortfall. Questionnaires
alternate between showing the pictures of every StoryTurn (``all``) and only those of
image-dependent StoryTurns (``needed``), so 8 questionnaires are 4 of each.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from commet.apps.study.panel import Ending
from commet.conditions import ImagePolicy, UndecidedFeedback
from commet.errors import CommetError
from commet.format.dataset import Dataset
from commet.format.model import StoryTurn
from commet.sources.checked import load_checked
from commet.sources.inputs import check_json, read_text
from commet.sources.loading import load_dataset
from commet.taxonomy import TASKS

#: A questionnaire's pictures, as study files, exports and ``--policy`` spell them: every picture
#: (``all``: the engine's ImagePolicy.on) or only those of image-dependent StoryTurns (``needed``).
#: A study keeps its own words (they are in every study file written), mapped onto the one enum.
QuestionnairePictures = Literal["all", "needed"]
PICTURE_POLICY: dict[str, ImagePolicy] = {"all": ImagePolicy.on, "needed": ImagePolicy.needed}
Grouping = Literal["paper", "task"]
STUDY_FORMAT: Final = "commet-study-1"
#: StoryTurns per questionnaire and combination (paper, Appendix D).
PER_IMAGE_DEPENDENT = 1
PER_TEXT_COMPLETE = 2
#: Figure 3 groups related tasks: each minimal pair of the taxonomy is one task group.
TASK_GROUPS = {"non_sarcasm": "sarcasm", "moral_true_belief": "moral_false_belief"}
#: The image-dependent combinations of the paper's design: Table 2's categories, in its column order.
IMAGE_CATEGORIES = ("Percept", "Intention", "MBK", "NLC")

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
DEFAULT_GUIDANCE = ("Answer each question in your own words, in a full sentence. When a question asks why, give "
                    "the reason from the story. One or two sentences are usually enough; a single word is often "
                    "too short to tell what you mean.")
DEFAULT_ADULT = "I am 18 years old or older."
DEFAULT_CONTACT = ("Questions about the study? Ask the person or team who sent you this link; they can put you in "
                   "touch with the researchers.")
#: Texts an ethics board would refuse as they are: ``study serve`` refuses to show them unless told to
#: (``--allow-placeholder-texts``). The contact must name the researchers and how to reach them.
PLACEHOLDER_TEXTS = {"participant.contact": DEFAULT_CONTACT}
#: Minutes a careful reader needs, used to tell participants how long the study takes.
MINUTES_PER_STORY = 0.5
MINUTES_PER_ANSWER = 0.5
#: How ``study build`` states the undecided policy (the same words as ``commet eval --undecided-feedback``).
UNDECIDED_HELP = {
    UndecidedFeedback.STOP: "undecided answers: stop, as `commet eval` by default (a story ends where its next "
                            "feedback rests on an answer the judge could not decide)",
    UndecidedFeedback.SKIP: "undecided answers: skip (feedback resting on one shows only its unconditional part; "
                            "`commet eval` stops there by default)",
    UndecidedFeedback.WRONG: "undecided answers: wrong (feedback resting on one is the 'wrong' text)",
}
GROUPING_HELP = {
    "paper": "paper (Appendix D): text-complete StoryTurns by Figure 3 task group, image-dependent ones by "
             "Table 2 category",
    "task": "task: the 18 booklet tasks, each with and without a needed picture",
}


class DatasetRef(BaseModel):
    """The dataset a study was built from, with the hash that pins its content."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="'sample', a Hub dataset (hf:OWNER/NAME@COMMIT), or a path relative to the "
                                  "study file's folder.")
    name: str
    hash: str
    columns: str | None = Field(default=None, description="The --columns mapping the dataset was read with.")


class Questionnaire(BaseModel):
    model_config = ConfigDict(extra="forbid")

    index: int
    image_policy: QuestionnairePictures
    storyturns: list[str]


class Combination(BaseModel):
    """A (group, image requirement) combination: how many StoryTurns each questionnaire wants and the dataset has."""

    model_config = ConfigDict(extra="forbid")

    group: str = Field(validation_alias=AliasChoices("group", "task"),
                       description="A task or task group (text-complete), or a category (image-dependent, paper design).")
    image_dependent: bool
    wanted: int
    available: int

    def __str__(self) -> str:
        subset = "image-dependent" if self.image_dependent else "text-complete"
        return f"{self.group} ({subset}): {self.available} of {self.wanted} StoryTurns per questionnaire"


#: Where each panel's completion URL sends a code; ``{code}`` is replaced.
PANEL_RETURN_URLS = {"Prolific": "https://app.prolific.com/submissions/complete?cc={code}"}


class PanelEnd(BaseModel):
    """What the last page gives a participant who ended this way: a code to paste, a link back to the panel."""

    model_config = ConfigDict(extra="forbid")

    code: str = Field(default="", max_length=200, description="Shown to the participant; empty: none.")
    url: str = Field(default="", max_length=2000, description="The panel page the last page links to; empty: none.")

    @field_validator("url")
    @classmethod
    def _web_address(cls, value: str) -> str:
        if value and not value.startswith(("https://", "http://")):
            raise ValueError("a panel URL starts with https:// (or http://)")
        return value

    @property
    def given(self) -> bool:
        return bool(self.code or self.url)


class Panel(BaseModel):
    """A recruiting panel (Prolific, MTurk...): its name and the code and return link of each ending."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(default="", max_length=100, description="Shown on the last page's button ('Return to NAME').")
    completed: PanelEnd = Field(default_factory=PanelEnd)
    withdrew: PanelEnd = Field(default_factory=PanelEnd)
    screened_out: PanelEnd = Field(default_factory=PanelEnd)

    def end(self, ending: Ending) -> PanelEnd:
        end: PanelEnd = getattr(self, ending.value)
        return end

    @property
    def enabled(self) -> bool:
        """Whether participants come from a panel: then they may decline or be screened out with a code."""
        return bool(self.name) or any(self.end(e).given for e in Ending)


class ParticipantTexts(BaseModel):
    """What the consent page tells participants beyond the consent paragraphs; the organiser may edit each."""

    model_config = ConfigDict(extra="forbid")

    contact: str = DEFAULT_CONTACT
    guidance: str = DEFAULT_GUIDANCE
    adult_confirmation: str = Field(default=DEFAULT_ADULT, description="The statement a participant ticks to start; empty: none.")
    minutes: int | None = Field(default=None, description="How long the study takes; None: estimated per questionnaire.")


class Study(BaseModel):
    """The content of ``study.json``."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["commet-study-1"] = STUDY_FORMAT
    title: str = DEFAULT_TITLE
    consent: list[str] = Field(default_factory=lambda: list(DEFAULT_CONSENT))
    participant: ParticipantTexts = Field(default_factory=ParticipantTexts)
    dataset: DatasetRef
    judge: str = "rules"
    #: what a turn resting on an undecided answer does; files written before it existed skipped that feedback
    undecided_feedback: UndecidedFeedback = UndecidedFeedback.SKIP
    panel: Panel = Field(default_factory=Panel)
    seed: int
    grouping: Grouping = "task"  # files written before the paper's design was the default grouped by task
    questionnaires: list[Questionnaire]
    combinations: list[Combination] = Field(default_factory=list)
    shortfalls: list[Combination] = Field(default_factory=list)

    def questionnaire(self, index: int) -> Questionnaire:
        return self.questionnaires[index]

    def digest(self) -> str:
        """What ties a participant database to this study: dataset hash, questionnaires and undecided policy."""
        payload: dict[str, object] = {"dataset": self.dataset.hash,
                                      "questionnaires": [q.model_dump() for q in self.questionnaires]}
        if self.undecided_feedback is not UndecidedFeedback.SKIP:  # what people met; files before it had no key
            payload["undecided_feedback"] = self.undecided_feedback.value
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def design(self) -> list[str]:
        """The design in a few lines: grouping, combinations, StoryTurns per questionnaire, image conditions."""
        text = [c for c in self.combinations if not c.image_dependent]
        pictures = [c for c in self.combinations if c.image_dependent]
        sizes = sorted({len(q.storyturns) for q in self.questionnaires})
        policies = [q.image_policy for q in self.questionnaires]
        lines = [f"grouping: {GROUPING_HELP[self.grouping]}"]
        if self.combinations:
            lines.append(f"{len(self.combinations)} combinations: {len(text)} text-complete x {PER_TEXT_COMPLETE}, "
                         f"{len(pictures)} image-dependent x {PER_IMAGE_DEPENDENT} = "
                         f"{len(text) * PER_TEXT_COMPLETE + len(pictures) * PER_IMAGE_DEPENDENT} StoryTurns wanted")
        lines.append(f"StoryTurns per questionnaire: {' or '.join(map(str, sizes))}")
        lines.append(f"{len(policies)} questionnaires: {policies.count('all')} with all pictures, "
                     f"{policies.count('needed')} with pictures only where needed")
        lines.append(f"judge: {self.judge}, online; {UNDECIDED_HELP[self.undecided_feedback]}")
        if self.judge == "rules" and self.undecided_feedback is UndecidedFeedback.STOP:
            lines.append("  the rules judge leaves many typed answers undecided, each ending its story: give an LLM "
                         "judge (--judge MODEL) to decide them online")
        return lines

    def placeholders(self) -> list[str]:
        """The participant texts still at a placeholder (``study serve`` refuses them unless told to)."""
        values = {"participant.contact": self.participant.contact}
        return [field for field, text in PLACEHOLDER_TEXTS.items() if values[field].strip() in ("", text)]

    def save(self, path: Path) -> Path:
        path.write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")
        return path


class StudyError(CommetError, ValueError):
    """A study file that cannot be used (unreadable, or its dataset changed)."""


def shows_image(storyturn: StoryTurn, policy: QuestionnairePictures) -> bool:
    """Whether a questionnaire with this policy shows the StoryTurn's pictures."""
    return PICTURE_POLICY[policy].shows_pictures(storyturn.image_dependent)


def group_of(storyturn: StoryTurn, grouping: Grouping) -> str:
    """The group a StoryTurn is drawn from: its task, its task group, or (image-dependent, paper) its category."""
    if grouping == "task":
        return storyturn.task
    if storyturn.image_dependent:
        return storyturn.category
    return TASK_GROUPS.get(storyturn.task, storyturn.task)


def _combinations(dataset: Dataset, grouping: Grouping) -> dict[tuple[str, bool], list[str]]:
    """StoryTurn ids per (group, image-dependent), in taxonomy order; every group the design expects included."""
    found: dict[tuple[str, bool], list[str]] = {}
    for storyturn in dataset:
        found.setdefault((group_of(storyturn, grouping), storyturn.image_dependent), []).append(storyturn.id)
    order = {task.id: i for i, task in enumerate(TASKS)}
    order.update({category: len(TASKS) + i for i, category in enumerate(IMAGE_CATEGORIES)})
    expected = {(TASK_GROUPS.get(task.id, task.id) if grouping == "paper" else task.id, False) for task in TASKS}
    if grouping == "paper":
        expected |= {(category, True) for category in IMAGE_CATEGORIES}
    ranked = sorted(set(found) | expected, key=lambda key: (key[1], order.get(key[0], len(order)), key[0]))
    return {key: sorted(found.get(key, [])) for key in ranked}


def select_questionnaires(dataset: Dataset, count: int, seed: int, grouping: Grouping = "paper",
                          ) -> tuple[list[Questionnaire], list[Combination]]:
    """The questionnaires of Appendix D and every combination, with what the dataset had of it."""
    if count < 1:
        raise StudyError("a study needs at least one questionnaire")
    rng = random.Random(seed)
    chosen: list[list[str]] = [[] for _ in range(count)]
    combinations: list[Combination] = []
    for (group, image_dependent), ids in _combinations(dataset, grouping).items():
        wanted = PER_IMAGE_DEPENDENT if image_dependent else PER_TEXT_COMPLETE
        take = min(wanted, len(ids))
        combinations.append(Combination(group=group, image_dependent=image_dependent, wanted=wanted, available=len(ids)))
        rng.shuffle(ids)
        for q in range(count):
            chosen[q].extend(ids[(q * take + i) % len(ids)] for i in range(take))
    groups = {storyturn.id: TASK_GROUPS.get(storyturn.task, storyturn.task) for storyturn in dataset}
    questionnaires = []
    for q, ids in enumerate(chosen):
        ids = spread(ids, groups, rng)
        questionnaires.append(Questionnaire(index=q, image_policy="all" if q % 2 == 0 else "needed", storyturns=ids))
    return questionnaires, combinations


def _can_follow(counts: Mapping[str, int], last: str | None) -> bool:
    """Whether items with these group counts can be lined up with no two neighbours of one group, the first
    not of group ``last``."""
    n = sum(counts.values())
    return all(c <= (n + 1) // 2 for c in counts.values()) and (last is None or counts.get(last, 0) <= n // 2)


def spread(ids: Sequence[str], groups: Mapping[str, str], rng: random.Random) -> list[str]:
    """``ids`` in a random order where no two neighbours share a task group (a minimal pair such as sarcasm and its
    sincere control, or two StoryTurns of one task), whenever the counts allow it."""
    left: dict[str, list[str]] = {}
    for story_id in rng.sample(list(ids), len(ids)):
        left.setdefault(groups[story_id], []).append(story_id)
    order: list[str] = []
    last: str | None = None
    while left:
        counts = {group: len(members) for group, members in left.items()}
        others = [g for g in counts if g != last]
        possible = [g for g in others if _can_follow({**counts, g: counts[g] - 1}, g)]
        if possible:
            group = rng.choice(sorted(possible))
        else:  # too many of one group to keep apart: use it whenever allowed, so its neighbours are fewest
            group = max(sorted(others) or sorted(counts), key=lambda g: counts[g])
        order.append(left[group].pop())
        if not left[group]:
            del left[group]
        last = group
    return order


def adjacent_pairs(questionnaire: Questionnaire, storyturns: Mapping[str, StoryTurn]) -> list[tuple[str, str]]:
    """Neighbouring StoryTurns of one task group (only where a questionnaire holds too many of one group)."""
    def group(story_id: str) -> str:
        task = storyturns[story_id].task
        return TASK_GROUPS.get(task, task)
    ids = questionnaire.storyturns
    return [(a, b) for a, b in zip(ids, ids[1:], strict=False) if group(a) == group(b)]


def build_study(dataset_path: str | Path, out: Path, *, questionnaires: int = 8, seed: int = 0,
                judge: str = "rules", grouping: Grouping = "paper", participant: ParticipantTexts | None = None,
                title: str = DEFAULT_TITLE, loaded: Dataset | None = None,
                undecided: UndecidedFeedback = UndecidedFeedback.STOP, panel: Panel | None = None) -> Study:
    """Select the questionnaires from a dataset and write ``out`` (study.json).

    ``loaded`` is the dataset at ``dataset_path`` already checked by the caller; without it the
    dataset is loaded through :func:`load_checked`, which refuses one with problems.
    """
    dataset = loaded if loaded is not None else load_checked(dataset_path)[0]
    selected, combinations = select_questionnaires(dataset, questionnaires, seed, grouping)
    if str(dataset_path) == "sample":
        stored = "sample"
    elif dataset.origin is not None and dataset.origin.location.startswith("hf:"):
        stored = dataset.origin.location  # the Hub dataset at the commit it was read at
    else:
        stored = os.path.relpath(Path(dataset_path).resolve(), out.resolve().parent)
    shortfalls = [c for c in combinations if c.available < c.wanted]
    study = Study(title=title, participant=participant or ParticipantTexts(),
                  dataset=DatasetRef(path=stored, name=dataset.name, hash=dataset.content_hash(),
                                     columns=dataset.origin.columns if dataset.origin is not None else None), judge=judge,
                  undecided_feedback=undecided, panel=panel or Panel(),
                  seed=seed, grouping=grouping, questionnaires=selected, combinations=combinations,
                  shortfalls=shortfalls)
    study.save(out)
    return study


def dataset_location(study: Study, study_path: Path) -> str:
    """Where the study's dataset is: ``sample`` or a path (absolute, resolved from the study file's folder)."""
    location = study.dataset.path
    if location == "sample" or location.startswith("hf:"):
        return location
    return str((study_path.resolve().parent / location).resolve())


#: the largest study file read (questionnaires name StoryTurns; the StoryTurns stay in the dataset)
MAX_STUDY_BYTES = 64 * 1024 * 1024


def load_study(path: Path) -> tuple[Study, Dataset]:
    """Read a study file and its dataset; the dataset must still have the content it was built from."""
    if not path.exists():
        raise StudyError(f"no study file at {path}")
    text = read_text(path, what="study file", max_bytes=MAX_STUDY_BYTES)  # a FIFO, /dev/zero, 1 GB: refused
    check_json(text, file=str(path))  # nesting and numbers within bounds, each refusal located
    try:
        study = Study.model_validate_json(text)
    except ValidationError as exc:  # its text is many lines; the first problem, in one
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise StudyError(f"{path} is not a study file: {where + ': ' if where else ''}{error['msg']}{more}") from None
    except ValueError as exc:
        raise StudyError(f"{path} is not a study file: {exc}") from None
    location = study.dataset.path
    dataset = load_dataset(dataset_location(study, path), columns=study.dataset.columns)
    if dataset.content_hash() != study.dataset.hash:
        raise StudyError(f"the dataset at {location} changed since {path} was built; build the study again")
    known = {storyturn.id for storyturn in dataset}
    missing = sorted({i for q in study.questionnaires for i in q.storyturns} - known)
    if missing:
        raise StudyError(f"{path} names StoryTurns the dataset lacks: {', '.join(missing[:5])}")
    return study, dataset


def estimated_minutes(storyturns: int, answers: int) -> int:
    """How long a careful participant needs, rounded up to 5 minutes."""
    minutes = storyturns * MINUTES_PER_STORY + answers * MINUTES_PER_ANSWER
    return max(5, 5 * -(-int(minutes + 0.999) // 5))
