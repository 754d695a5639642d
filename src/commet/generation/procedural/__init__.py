"""Procedural StoryTurn generator: stories, answers and pictures computed from one world model.

>>> from commet.generation.procedural import generate_dataset
>>> dataset = generate_dataset(tasks=["sarcasm"], per_task=2, seed=7)

Every answer, branch answer and feedback text is read off the world state (see
:mod:`.world`), and every picture is drawn from the same state (see :mod:`.render`);
each picture's scene is written beside it as ``images/<image>.scene.json``. A seed
reproduces a dataset byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from commet.format.dataset import IMAGES_DIR, Dataset
from commet.format.model import StoryTurn
from commet.generation.procedural.builder import StoryBuilder
from commet.generation.procedural.render import draw_picture, png_bytes
from commet.generation.procedural.tasks import GENERATORS, IMAGE_DEPENDENT_TASKS, PAIRS
from commet.taxonomy import TASKS, get_task

__all__ = ["GENERATORS", "IMAGE_DEPENDENT_TASKS", "ProceduralDataset", "generate_dataset", "generate_storyturn",
           "is_image_dependent", "storyturn_text", "variant_slot", "write_dataset"]


@dataclass
class ProceduralDataset(Dataset):
    """A :class:`~commet.format.Dataset` that also carries each picture's scene JSON and writes it on save."""

    scenes: dict[str, bytes] = field(default_factory=dict)  # file name -> JSON bytes

    def save(self, folder: str | Path) -> Path:
        folder = super().save(folder)
        for name, data in self.scenes.items():
            (folder / IMAGES_DIR / name).write_bytes(data)
        return folder


#: Draws tried for a StoryTurn whose text repeats an earlier one of the same dataset.
MAX_ATTEMPTS = 20


def storyturn_text(storyturn: StoryTurn) -> str:
    """Everything a respondent reads: stories, feedback texts and questions, in order."""
    parts: list[str] = []
    for turn in storyturn.turns:
        if turn.feedback is not None:
            parts += [turn.feedback.right or "", turn.feedback.wrong or "",
                      *(f.text for f in turn.feedback.by_answer)]
        parts += [turn.story, turn.question]
    return " ".join(p for p in parts if p)


def _resolve_tasks(tasks: str | Sequence[str]) -> list[str]:
    if isinstance(tasks, str):
        tasks = [t.id for t in TASKS] if tasks == "all" else [tasks]
    for task_id in tasks:
        get_task(task_id)  # KeyError naming the known tasks
    return list(tasks)


def image_dependent_count(per_task: int, share: float) -> int:
    """How many of a task's StoryTurns are image-dependent (for tasks that have that variant)."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"image-dependent share must be between 0 and 1, got {share}")
    return round(per_task * share)


def is_image_dependent(task_id: str, index: int, per_task: int, share: float) -> bool:
    """Whether the task's StoryTurn ``index`` is image-dependent: the share is spread evenly over the
    indexes (not bunched at the end), so both halves of a task hold both variants."""
    if task_id not in IMAGE_DEPENDENT_TASKS:
        return False
    n_image = image_dependent_count(per_task, share)
    return n_image > 0 and (index * n_image) // per_task != ((index + 1) * n_image) // per_task


def variant_slot(task_id: str, index: int, per_task: int, share: float) -> int:
    """The rank of the task's StoryTurn ``index`` among the task's StoryTurns of the same variant: the
    counterbalancing runs over it, so that every cell is balanced within the text and the image-dependent items."""
    mine = is_image_dependent(task_id, index, per_task, share)
    return sum(1 for k in range(index) if is_image_dependent(task_id, k, per_task, share) == mine)


def generate_storyturn(task_id: str, index: int, seed: int, image_dependent: bool = False, attempt: int = 0,
                       slot: int | None = None) -> tuple[StoryTurn, StoryBuilder]:
    """One StoryTurn of a task, and the builder holding its scenes; deterministic in (task, index, seed).

    Minimal pairs (sarcasm / non_sarcasm, moral_false_belief / moral_true_belief) share their named draws
    (:meth:`StoryBuilder.pick`, seeded by the pair's group), so the two members with the same index share names,
    things and places.
    ``attempt`` > 0 redraws names, things and phrases (not the counterbalanced variant), to avoid a
    duplicate within a dataset. ``slot`` (:func:`variant_slot`) is the item's rank within its variant: with it,
    the counterbalancing runs within each variant; without it, over the indexes.
    """
    task = get_task(task_id)
    if image_dependent and task_id not in IMAGE_DEPENDENT_TASKS:
        raise ValueError(f"task {task_id!r} has no image-dependent variant")
    group = "+".join(sorted((task_id, PAIRS[task_id]))) if task_id in PAIRS else task_id
    suffix = "img" if image_dependent else "txt"
    builder = StoryBuilder(f"proc-{seed}-{task_id}-{index + 1:03d}-{suffix}", group=group, index=index,
                           seed=seed, slot=slot, variant=suffix, attempt=attempt)
    GENERATORS[task_id](builder, image_dependent)
    builder.shipped, scene_ids = builder.shipped_scenes()
    meta: dict[str, object] = {
        "generator": "procedural",
        "seed": seed,
        "index": index,
        **builder.meta,
        "scenes": {image_id: f"{image_id}.scene.json" for image_id in builder.scenes},
        "scene ids": scene_ids,
        "world": builder.facts,
    }
    if task_id in PAIRS:
        meta["pair"] = f"proc-{seed}-{PAIRS[task_id]}-{index + 1:03d}-{suffix}"
    storyturn = StoryTurn(id=builder.story_id, task=task_id, category=task.category_for(image_dependent),
                          mental_states=list(task.mental_states), image_dependent=image_dependent,
                          source="procedural", turns=builder.turns, meta=meta)
    return storyturn, builder


def generate_dataset(tasks: str | Sequence[str] = "all", per_task: int = 3, seed: int = 0,
                     image_dependent_share: float = 0.3) -> ProceduralDataset:
    """Generate ``per_task`` StoryTurns for each task, pictures and scene files included.

    For tasks with an image-dependent variant, ``round(per_task * image_dependent_share)`` StoryTurns,
    spread evenly over the indexes, are image-dependent; the others (and all StoryTurns of other tasks)
    are text-complete. No two StoryTurns of the set have the same text (a repeat is drawn again).
    """
    if per_task < 0:
        raise ValueError("per_task must not be negative")
    image_dependent_count(per_task, image_dependent_share)  # checks the share
    storyturns: list[StoryTurn] = []
    images: dict[str, bytes] = {}
    scenes: dict[str, bytes] = {}
    seen: set[str] = set()
    for task_id in _resolve_tasks(tasks):
        for index in range(per_task):
            image_dependent = is_image_dependent(task_id, index, per_task, image_dependent_share)
            slot = variant_slot(task_id, index, per_task, image_dependent_share)
            for attempt in range(MAX_ATTEMPTS):
                storyturn, builder = generate_storyturn(task_id, index, seed, image_dependent, attempt, slot)
                text = storyturn_text(storyturn)
                if text not in seen:
                    break
            else:
                raise RuntimeError(f"{task_id} {index}: no new story in {MAX_ATTEMPTS} draws")
            seen.add(text)
            storyturns.append(storyturn)
            for image_id, scene in builder.shipped.items():  # as the scene files hold them: neutral ids, no key
                images[f"{image_id}.png"] = png_bytes(draw_picture(scene))
                scenes[f"{image_id}.scene.json"] = (json.dumps(scene, indent=1, sort_keys=True) + "\n").encode()
    return ProceduralDataset(
        storyturns=storyturns, name=f"procedural-seed{seed}", version="1", licence="Apache-2.0",
        description=f"Procedurally generated StoryTurns (seed {seed}, {per_task} per task, image-dependent share "
                    f"{image_dependent_share}); answers and pictures computed from one world model.",
        images=images, scenes=scenes)


def write_dataset(out: str | Path, tasks: str | Sequence[str] = "all", per_task: int = 3, seed: int = 0,
                  image_dependent_share: float = 0.3) -> Path:
    """Generate and save a dataset folder (storyturns.jsonl, images/*.png, images/*.scene.json, dataset.json)."""
    dataset = generate_dataset(tasks=tasks, per_task=per_task, seed=seed,
                               image_dependent_share=image_dependent_share)
    return dataset.save(out)
