"""Hub-style datasets in the layouts a third party may publish, built with `datasets` itself.

Every fixture holds the same StoryTurns (the bundled sample's, reduced to what a pipe-format release
can say: no rubric, no metadata, options only where the question names them), so that each loads
to exactly :func:`reference` and runs to the same tables. Tasks and categories are spelled as
other people spell them ("Diverse Desire", "belief-emotion", "Non-Literal Communication").

* :func:`layout_a`: one row per StoryTurn, turns in the paper's pipe format (a list, or one string),
  pictures in a ``List(Image())`` column named by file (or left unnamed, matched in order);
* :func:`layout_b`: one row per turn, a story's rows shuffled, grouped by ``story_id``, ordered by ``turn_no``,
  each row's picture in an ``Image()`` column;
* :func:`layout_c`: an image folder whose ``metadata.jsonl`` rows name their picture file;
* :func:`hub_cache`: a folder placed as the Hub cache's snapshot of ``OWNER/NAME`` (refs/main).
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from pathlib import Path

import datasets

from commet.format.dataset import Dataset
from commet.format.model import StoryTurn
from commet.format.pipe import format_feedback, options_in_question, to_pipe
from commet.sources import load_dataset

COMMIT = "0123456789abcdef0123456789abcdef01234567"
TASK_NAMES = {"common_desire": "Common Desire", "diverse_belief": "diverse-belief", "sarcasm": "SARCASM"}
CATEGORY_SPELLINGS = {"Belief_Emotion": "belief-emotion", "NLCE": "Non-Literal Communication with Emotion",
                      "NLC": "non literal communication", "MBK": "mbk", "Belief_Desire": "Belief Desire"}


def reference() -> Dataset:
    """The sample's StoryTurns as a pipe-format release carries them (with their pictures)."""
    sample = load_dataset("sample")
    stories = []
    for st in sample.storyturns:
        copy = st.model_copy(deep=True)
        copy.meta = {}
        copy.source = "fixture"
        for turn in copy.turns:
            turn.rubric = None
            turn.meta = {}
            turn.options = options_in_question(turn.question)
        stories.append(copy)
    data = Dataset(storyturns=stories, name="fixture", licence="MIT")
    data.images = {image: sample.image_bytes(image) for st in stories for image in st.images}
    return data


def write_reference(folder: Path) -> Path:
    """The reference as a canonical dataset folder (storyturns.jsonl and images/)."""
    data = reference()
    (folder / "images").mkdir(parents=True)
    with (folder / "storyturns.jsonl").open("w", encoding="utf-8") as out:
        for st in data.storyturns:
            out.write(st.model_dump_json() + "\n")
    for image, picture in data.images.items():
        (folder / "images" / image).write_bytes(picture)
    return folder


def _task(st: StoryTurn) -> str:
    return TASK_NAMES.get(st.task, st.task.replace("_", " ").title())


def _category(st: StoryTurn) -> str:
    return CATEGORY_SPELLINGS.get(st.category, st.category)


def _card(folder: Path, data_files: str, *, cite: bool = False) -> None:
    paper = "\n\nData of the CoMMET paper (arXiv:2603.11915).\n" if cite else "\n"
    (folder / "README.md").write_text(
        f"---\nlicense: mit\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n    path: {data_files}\n"
        f"---\n# A ToM dataset{paper}", encoding="utf-8")


def layout_a(folder: Path, *, one_string: bool = False, named: bool = True, cite: bool = False) -> Path:
    """(a): one row per StoryTurn; turns a list of pipe strings (or one JSON string); pictures by name or order."""
    data = reference()
    rows: dict[str, list[object]] = {"story_id": [], "task": [], "category": [], "image_dependent": [],
                                     "storyturn": [], "images": [], "source": []}
    for st in data.storyturns:
        rows["story_id"].append(st.id)
        rows["task"].append(_task(st))
        rows["category"].append(_category(st))
        rows["image_dependent"].append(st.image_dependent)
        turns = to_pipe(st)
        rows["storyturn"].append(json.dumps(turns) if one_string else turns)
        rows["images"].append([{"bytes": data.images[i], "path": i if named else None} for i in st.images])
        rows["source"].append(st.source)
    features = datasets.Features({
        "story_id": datasets.Value("string"), "task": datasets.Value("string"), "category": datasets.Value("string"),
        "image_dependent": datasets.Value("bool"),
        "storyturn": datasets.Value("string") if one_string else datasets.Sequence(datasets.Value("string")),
        "images": datasets.Sequence(datasets.Image()), "source": datasets.Value("string")})
    (folder / "data").mkdir(parents=True)
    datasets.Dataset.from_dict(rows, features=features).to_parquet(str(folder / "data" / "test-00000-of-00001.parquet"))
    _card(folder, "data/test-*.parquet", cite=cite)
    return folder


def _turn_rows(data: Dataset) -> list[dict[str, object]]:
    rows = []
    for st in data.storyturns:
        for k, turn in enumerate(st.turns):
            rows.append({"story_id": st.id, "turn_no": k + 1, "task": _task(st), "category": _category(st),
                         "image_dependent": "image-dependent" if st.image_dependent else "text-complete",
                         "story": turn.story, "feedback": format_feedback(turn.feedback), "question": turn.question,
                         "answer": list(turn.answers), "image": turn.image, "source": st.source})
    stories = [st.id for st in data.storyturns]
    shuffle = random.Random(7)  # each story's turns out of order (the turn column orders them), stories in order
    return sorted(rows, key=lambda row: (stories.index(str(row["story_id"])), shuffle.random()))


def layout_b(folder: Path, *, columns: dict[str, str] | None = None) -> Path:
    """(b): one row per turn (a story's rows out of order), each with its picture; ``columns`` renames columns (unknown names)."""
    data = reference()
    rows = _turn_rows(data)
    for row in rows:
        image = row.pop("image")
        row["image"] = {"bytes": data.images[image], "path": image} if image else None
    features = datasets.Features({
        "story_id": datasets.Value("string"), "turn_no": datasets.Value("int64"), "task": datasets.Value("string"),
        "category": datasets.Value("string"), "image_dependent": datasets.Value("string"),
        "story": datasets.Value("string"), "feedback": datasets.Value("string"), "question": datasets.Value("string"),
        "answer": datasets.Sequence(datasets.Value("string")), "image": datasets.Image(),
        "source": datasets.Value("string")})
    table = datasets.Dataset.from_list(rows, features=features)
    if columns:
        table = table.rename_columns(columns)
    (folder / "data").mkdir(parents=True)
    table.to_parquet(str(folder / "data" / "test-00000-of-00001.parquet"))
    _card(folder, "data/test-*.parquet")
    return folder


def layout_c(folder: Path) -> Path:
    """(c): an image folder; metadata.jsonl has one row per turn naming its picture file (null without one);
    answers as "A; B" text, feedback as a struct, image-dependence as yes/no."""
    data = reference()
    (folder / "test").mkdir(parents=True)
    with (folder / "test" / "metadata.jsonl").open("w", encoding="utf-8") as out:
        for st in data.storyturns:
            for k, turn in enumerate(st.turns):
                out.write(json.dumps({
                    "file_name": turn.image, "story_id": st.id, "turn": k, "task": st.task.replace("_", "-"),
                    "category": _category(st), "needs_image": "yes" if st.image_dependent else "no",
                    "story": turn.story, "question": turn.question, "answer": "; ".join(turn.answers),
                    "feedback": turn.feedback.model_dump() if turn.feedback else None, "source": st.source}) + "\n")
    for image, picture in data.images.items():
        (folder / "test" / image).write_bytes(picture)
    return folder


def hub_cache(cache: Path, repo: str, snapshot: Path) -> Path:
    """Place ``snapshot`` as the Hub cache's copy of dataset ``repo`` at main (files as blobs, linked)."""
    storage = cache / f"datasets--{repo.replace('/', '--')}"
    target = storage / "snapshots" / COMMIT
    for file in sorted(p for p in snapshot.rglob("*") if p.is_file()):
        blob = storage / "blobs" / hashlib.sha1(file.read_bytes()).hexdigest()
        blob.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(file, blob)
        link = target / file.relative_to(snapshot)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(Path("../" * (len(link.relative_to(storage).parts) - 1)) / blob.relative_to(storage))
    (storage / "refs").mkdir()
    (storage / "refs" / "main").write_text(COMMIT)
    return target
