"""Dataset statistics: the paper's Figure 3 and section 3.2.3 figures for any dataset."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from commet.format.dataset import Dataset


@dataclass
class DatasetStats:
    storyturns: int
    questions: int
    images: int
    text_complete: int
    image_dependent: int
    turns_mean: float
    turns_max: int
    questions_mean: float
    questions_max: int
    pictures_missing: int = 0  # pictures named by a turn that the dataset does not have
    per_task: dict[str, int] = field(default_factory=dict)
    per_category: dict[str, int] = field(default_factory=dict)
    turns_per_task: dict[str, float] = field(default_factory=dict)


def dataset_stats(dataset: Dataset) -> DatasetStats:
    """Counts per task and category, turns and questions per StoryTurn, images and subsets.

    Every turn carries one question, so turns and questions per StoryTurn coincide in the
    StoryTurn format; both are reported because the paper reports both.
    """
    sts = dataset.storyturns
    turns = [len(st.turns) for st in sts]
    questions = [sum(1 for t in st.turns if t.question.strip()) for st in sts]
    per_task = Counter(st.task for st in sts)
    declared = dataset.taxonomy.task_ids  # the dataset's declared tasks, else the 18 booklet tasks
    ordered_tasks = [*declared, *sorted(set(per_task) - set(declared))]
    categories = Counter(st.category for st in sts)
    ordered_categories = [c for c in dataset.taxonomy.categories if c in categories] + \
        sorted(set(categories) - set(dataset.taxonomy.categories))
    turns_by_task: dict[str, list[int]] = {}
    for st in sts:
        turns_by_task.setdefault(st.task, []).append(len(st.turns))
    return DatasetStats(
        storyturns=len(sts),
        questions=sum(questions),
        images=len(named := {image for st in sts for image in st.images}),
        pictures_missing=sum(1 for image in named if not dataset.has_image(image)),
        text_complete=sum(1 for st in sts if not st.image_dependent),
        image_dependent=sum(1 for st in sts if st.image_dependent),
        turns_mean=sum(turns) / len(turns) if turns else 0.0,
        turns_max=max(turns, default=0),
        questions_mean=sum(questions) / len(questions) if questions else 0.0,
        questions_max=max(questions, default=0),
        per_task={task: per_task.get(task, 0) for task in ordered_tasks},
        per_category={c: categories[c] for c in ordered_categories},
        turns_per_task={task: sum(v) / len(v) for task, v in turns_by_task.items()},
    )
