"""Hugging Face ``datasets`` folders (``save_to_disk`` / ``load_from_disk``), pictures embedded.

Each row is one StoryTurn; ``turns`` is a list of structs and ``feedback`` is kept as a JSON
string (its shape varies per turn, which Arrow schemas dislike). Pictures travel in an
``image_files`` column of ``{"id", "bytes"}`` so the folder is self-contained.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from commet.format.model import StoryTurn
from commet.format.problems import FormatError, Problem

if TYPE_CHECKING:
    from commet.format.dataset import Dataset


def _require_datasets():  # noqa: ANN202 - returns the module
    try:
        import datasets
    except ImportError:
        raise RuntimeError("the Hugging Face format needs the 'datasets' extra: pip install 'commet-bench[datasets]'") from None
    return datasets


def save_hf(dataset: Dataset, folder: Path) -> Path:
    datasets = _require_datasets()
    rows: dict[str, list[object]] = {k: [] for k in ("id", "task", "category", "mental_states", "image_dependent",
                                                      "source", "turns", "meta", "image_files")}
    for st in dataset.storyturns:
        rows["id"].append(st.id)
        rows["task"].append(st.task)
        rows["category"].append(st.category)
        rows["mental_states"].append(st.mental_states)
        rows["image_dependent"].append(st.image_dependent)
        rows["source"].append(st.source)
        rows["meta"].append(json.dumps(st.meta))
        rows["turns"].append([
            {"story": t.story, "feedback": t.feedback.model_dump_json() if t.feedback else "",
             "question": t.question, "image": t.image or "", "answers": t.answers}
            for t in st.turns
        ])
        rows["image_files"].append([
            {"id": image_id, "bytes": dataset.image_bytes(image_id)}
            for image_id in dict.fromkeys(st.images) if dataset.has_image(image_id)
        ])
    hf = datasets.Dataset.from_dict(rows)
    hf.info.description = json.dumps(dataset.metadata())
    folder.mkdir(parents=True, exist_ok=True)
    hf.save_to_disk(str(folder))
    return folder


def load_hf(folder: Path) -> Dataset:
    from commet.format.dataset import Dataset

    datasets = _require_datasets()
    loaded = datasets.load_from_disk(str(folder))
    if isinstance(loaded, datasets.DatasetDict):
        loaded = loaded[next(iter(loaded))]
    meta: dict[str, object] = {}
    try:
        meta = json.loads(loaded.info.description or "{}")
    except json.JSONDecodeError:
        meta = {}
    dataset = Dataset(storyturns=[], name=str(meta.get("name", folder.name)), version=str(meta.get("version", "0")),
                      licence=str(meta.get("licence", "unspecified")), description=str(meta.get("description", "")),
                      source_file=str(folder))
    for index, row in enumerate(loaded):
        turns = []
        for turn in row["turns"]:
            turns.append({
                "story": turn["story"], "question": turn["question"], "image": turn["image"] or None,
                "answers": turn["answers"],
                "feedback": json.loads(turn["feedback"]) if turn["feedback"] else None,
            })
        try:
            st = StoryTurn(id=row["id"], task=row["task"], category=row["category"],
                           mental_states=row["mental_states"], image_dependent=row["image_dependent"],
                           source=row["source"], turns=turns, meta=json.loads(row.get("meta") or "{}"))
        except ValueError as exc:
            raise FormatError([Problem(str(folder), index + 1, row.get("id"), None, None,
                                       str(exc).splitlines()[0])]) from None
        dataset.storyturns.append(st)
        dataset.lines[st.id] = index + 1
        for image in row.get("image_files") or []:
            dataset.images[image["id"]] = image["bytes"]
    return dataset
