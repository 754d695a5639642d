"""Releases in layouts wider than those of tests/hub_fixtures.py, built here with `datasets` itself.

Each holds the same StoryTurns, :func:`reference`: the bundled sample's (41 StoryTurns, 145
questions, 20 pictures, 8 image-dependent, 19 branching turns), with labelled options on the
branching turns, so that what a layout says of options, branches, pictures and image-dependence is
checked field for field. Every builder writes a Hub-style folder (a card with its configs) that
`hf:PATH` reads and :func:`tests.hub_fixtures.hub_cache` places in a Hub cache.

* :func:`picture_rows`: one row per picture (a row with no picture for a StoryTurn without one), the
  StoryTurn's stories, questions, answers and feedback as JSON text in every row, the picture's turn
  counted from 0 (``zero=True``) or from 1 (no id column then: rows are grouped by their questions; no
  picture is on a last turn, so whether numbers count from 0 or 1 cannot be told: refused);
* :func:`numbered_pictures`: one row per StoryTurn, pipe-format turns in one string, pictures in
  ``Image_1``..``Image_4`` (or ``Pic1``..``Pic4``, which only a pattern mapping names);
* :func:`subset_configs`: two configs, ``text_complete`` and ``image_dependent``, no default, no column
  saying image-dependence; one row per turn, CSV files;
* :func:`camel_options`: CamelCase column names, options as one string in four notations, answers as JSON
  text, image-dependence as ``yes``/``no``;
* :func:`pictures_config`: a config of StoryTurns naming pictures by id, and a ``pictures`` config
  (``image_id``, ``image``) with the pictures, joined by id;
* :func:`chat_rows`: one row per question, a ``messages`` column in the OpenAI or Hugging Face chat
  format (text and image parts), the expected answer as the last assistant message;
* :func:`sharegpt_rows`: one row per StoryTurn, ShareGPT / LLaVA ``conversations`` (``from``, ``value``) with
  ``<image>`` tokens and an ``images`` column.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import datasets

from commet.format.dataset import Dataset
from commet.format.model import Option, StoryTurn
from commet.format.pipe import format_feedback, to_pipe
from tests import hub_fixtures

NOTATIONS = ("paren", "dot-lines", "paren-semicolon", "json")


def reference() -> Dataset:
    """The sample's StoryTurns as hub_fixtures has them, with labelled options on every branching turn."""
    data = hub_fixtures.reference()
    for st in data.storyturns:
        for turn in st.turns:
            if len(turn.answers) > 1:
                turn.options = [Option(label=chr(ord("A") + i), text=a) for i, a in enumerate(turn.answers)]
    return data


def write_reference(folder: Path, source: str = "fixture") -> Path:
    """The reference as a canonical folder; ``source`` as a release without a source column is read (its name)."""
    data = reference()
    for st in data.storyturns:
        st.source = source
    (folder / "images").mkdir(parents=True)
    with (folder / "storyturns.jsonl").open("w", encoding="utf-8") as out:
        for st in data.storyturns:
            out.write(st.model_dump_json() + "\n")
    for image, picture in data.images.items():
        (folder / "images" / image).write_bytes(picture)
    return folder


def _card(folder: Path, configs: list[tuple[str, str, str]], *, default: bool = False) -> None:
    """A card listing ``(config, split, path pattern)`` configs (the first marked default when ``default``)."""
    lines = ["---", "license: mit", "configs:"]
    for index, (config, split, path) in enumerate(configs):
        lines += [f"- config_name: {config}", *(["  default: true"] if default and index == 0 else []),
                  "  data_files:", f"  - split: {split}", f"    path: {path}"]
    (folder / "README.md").write_text("\n".join([*lines, "---", "# A release", ""]), encoding="utf-8")


def _options_text(options: list[Option], notation: str) -> str:
    if notation == "paren":
        return " ".join(f"{o.label}) {o.text}" for o in options)
    if notation == "dot-lines":
        return "\n".join(f"{o.label}. {o.text}" for o in options)
    if notation == "paren-semicolon":
        return "; ".join(f"({o.label}) {o.text}" for o in options)
    return json.dumps({o.label: o.text for o in options})


def _cell(data: Dataset, image: str | None, *, named: bool = True) -> dict[str, object] | None:
    return {"bytes": data.images[image], "path": image if named else None} if image else None


def _write(folder: Path, name: str, rows: list[dict[str, object]], features: datasets.Features) -> None:
    path = folder / "data" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_list(rows, features=features).to_parquet(str(path))


def picture_rows(folder: Path, *, zero: bool = True, native: bool = False) -> Path:
    """``native``: the lists as list columns (answers a list of lists), not JSON text."""
    data = reference()
    rows = []
    text = (lambda value: value) if native else json.dumps
    for st in data.storyturns:
        shared = {"task": st.task, "category": st.category, "image_dependent": st.image_dependent,
                  "stories": text([t.story for t in st.turns]),
                  "questions": text([t.question for t in st.turns]),
                  "answers": text([list(t.answers) for t in st.turns]),
                  "feedbacks": text([format_feedback(t.feedback) for t in st.turns]),
                  "options": json.dumps([[o.model_dump() for o in t.options] for t in st.turns])}
        if zero:
            shared = {"uid": st.id, **shared}
        pictured = [(k, t.image) for k, t in enumerate(st.turns) if t.image]
        for k, image in pictured or [(0, None)]:
            rows.append({**shared, "turn_idx": k + (0 if zero else 1), "image": _cell(data, image)})
    value = datasets.Value
    strings = [value("string")] if native else value("string")
    features = datasets.Features({**({"uid": value("string")} if zero else {}), "task": value("string"),
                                  "category": value("string"), "image_dependent": value("bool"),
                                  "stories": strings, "questions": strings, "feedbacks": strings,
                                  "answers": [[value("string")]] if native else value("string"),
                                  "options": value("string"),
                                  "turn_idx": value("int64"), "image": datasets.Image()})
    _write(folder, "train-00000-of-00001.parquet", rows, features)
    _card(folder, [("default", "train", "data/train-*.parquet")])
    return folder


def numbered_pictures(folder: Path, *, prefix: str = "Image_") -> Path:
    data = reference()
    rows = []
    for st in data.storyturns:
        row: dict[str, object] = {"id": st.id, "task": st.task, "category": st.category,
                                  "image_dependent": st.image_dependent, "storyturn": json.dumps(to_pipe(st))}
        images = st.images
        for n in range(1, 5):
            row[f"{prefix}{n}"] = _cell(data, images[n - 1]) if n <= len(images) else None
        rows.append(row)
    value = datasets.Value
    features = datasets.Features({"id": value("string"), "task": value("string"), "category": value("string"),
                                  "image_dependent": value("bool"), "storyturn": value("string"),
                                  **{f"{prefix}{n}": datasets.Image() for n in range(1, 5)}})
    _write(folder, "test-00000-of-00001.parquet", rows, features)
    _card(folder, [("default", "test", "data/test-*.parquet")])
    return folder


def _turn_rows(st: StoryTurn, data: Dataset) -> list[dict[str, object]]:
    return [{"story_id": st.id, "turn": k, "task": st.task, "category": st.category, "story": t.story,
             "feedback": format_feedback(t.feedback), "question": t.question, "answer": " ; ".join(t.answers),
             "options": json.dumps([o.model_dump() for o in t.options]) if t.options else "",
             "file_name": t.image or ""} for k, t in enumerate(st.turns)]


def subset_configs(folder: Path) -> Path:
    """Two configs, no default: StoryTurns as CSV rows, pictures as files named by the rows."""
    data = reference()
    import csv

    for config, dependent in (("text_complete", False), ("image_dependent", True)):
        path = folder / config / "test.csv"
        path.parent.mkdir(parents=True)
        stories = [st for st in data.storyturns if st.image_dependent is dependent]
        rows = [row for st in stories for row in _turn_rows(st, data)]
        with path.open("w", encoding="utf-8", newline="") as out:
            writer = csv.DictWriter(out, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    (folder / "images").mkdir()
    for image, picture in data.images.items():
        (folder / "images" / image).write_bytes(picture)
    _card(folder, [("text_complete", "test", "text_complete/*.csv"), ("image_dependent", "test", "image_dependent/*.csv")])
    return folder


def camel_options(folder: Path) -> Path:
    data = reference()
    rows = []
    count = 0
    for st in data.storyturns:
        for k, t in enumerate(st.turns):
            notation = NOTATIONS[count % len(NOTATIONS)]
            count += bool(t.options)
            rows.append({"StoryID": st.id, "TurnNo": k + 1, "TaskType": st.task.replace("_", " ").title(),
                         "MentalStateCategory": st.category, "NeedsImage": "yes" if st.image_dependent else "no",
                         "StoryText": t.story, "FeedbackText": format_feedback(t.feedback), "Question": t.question,
                         "Answers": json.dumps(list(t.answers)),
                         "Options": _options_text(t.options, notation) if t.options else None,
                         "Picture": _cell(data, t.image), "Annotator": "r1"})
    value = datasets.Value
    features = datasets.Features({"StoryID": value("string"), "TurnNo": value("int32"), "TaskType": value("string"),
                                  "MentalStateCategory": value("string"), "NeedsImage": value("string"),
                                  "StoryText": value("string"), "FeedbackText": value("string"),
                                  "Question": value("string"), "Answers": value("string"), "Options": value("string"),
                                  "Picture": datasets.Image(), "Annotator": value("string")})
    _write(folder, "test-00000-of-00001.parquet", rows, features)
    _card(folder, [("default", "test", "data/test-*.parquet")])
    return folder


def pictures_config(folder: Path) -> Path:
    data = reference()
    rows = [{"id": st.id, "task": st.task, "category": st.category, "image_dependent": st.image_dependent,
             "storyturn": list(to_pipe(st))} for st in data.storyturns]
    value = datasets.Value
    _write(folder, "stories.parquet", rows, datasets.Features({
        "id": value("string"), "task": value("string"), "category": value("string"),
        "image_dependent": value("bool"), "storyturn": datasets.Sequence(value("string"))}))
    pictures = [{"image_id": image, "image": {"bytes": picture, "path": None}} for image, picture in data.images.items()]
    _write(folder, "pictures.parquet", pictures, datasets.Features({"image_id": value("string"),
                                                                    "image": datasets.Image()}))
    _card(folder, [("storyturns", "test", "data/stories.parquet"), ("pictures", "test", "data/pictures.parquet")])
    return folder


def _data_url(picture: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(picture).decode()


def chat_rows(folder: Path, *, style: str = "openai") -> Path:
    """One row per question; ``messages`` holds the conversation up to it, the expected answers (branches joined
    by " ; ") as the last assistant message. OpenAI: JSON lines, ``image_url`` parts with data URLs, an assistant's
    content as text; Hugging Face: parquet, ``{"type": "image"}`` parts and the pictures in an ``images`` column."""
    data = reference()
    rows = []
    for st in data.storyturns:
        system = "Answer briefly."
        history: list[dict[str, object]] = [{"role": "system", "content": system if style == "openai" else
                                             [{"type": "text", "text": system}]}]
        pictures: list[dict[str, object]] = []
        for k, t in enumerate(st.turns):
            parts: list[dict[str, object]] = []
            if t.feedback is not None:
                parts.append({"type": "text", "text": f"Feedback: {format_feedback(t.feedback)}"})
            if t.story:
                parts.append({"type": "text", "text": f"Story: {t.story}"})
            if t.image:
                if style == "openai":
                    parts.append({"type": "image_url", "image_url": {"url": _data_url(data.images[t.image])}})
                else:
                    parts.append({"type": "image", "text": None})
                    pictures.append({"bytes": data.images[t.image], "path": t.image})
            parts.append({"type": "text", "text": f"Question: {t.question}"})
            answer = " ; ".join(t.answers)
            history.append({"role": "user", "content": parts})
            history.append({"role": "assistant", "content": answer if style == "openai" else
                            [{"type": "text", "text": answer}]})
            rows.append({"story_id": st.id, "turn": k, "task": st.task, "category": st.category,
                         "image_dependent": st.image_dependent, "messages": [dict(m) for m in history],
                         "options": json.dumps([o.model_dump() for o in t.options]) if t.options else "",
                         **({"images": list(pictures)} if style != "openai" else {})})
    if style == "openai":
        (folder / "data").mkdir(parents=True)
        with (folder / "data" / "test.jsonl").open("w", encoding="utf-8") as out:
            out.writelines(json.dumps(row) + "\n" for row in rows)
        _card(folder, [("default", "test", "data/test.jsonl")])
        return folder
    value = datasets.Value
    content = [{"type": value("string"), "text": value("string")}]
    features = datasets.Features({"story_id": value("string"), "turn": value("int64"), "task": value("string"),
                                  "category": value("string"), "image_dependent": value("bool"),
                                  "messages": [{"role": value("string"), "content": content}],
                                  "options": value("string"), "images": [datasets.Image()]})
    _write(folder, "test-00000-of-00001.parquet", rows, features)
    _card(folder, [("default", "test", "data/test-*.parquet")])
    return folder


def sharegpt_rows(folder: Path) -> Path:
    """One row per StoryTurn in the ShareGPT / LLaVA style: ``conversations`` of ``{from, value}`` (human, gpt), a
    ``<image>`` token where a picture is shown, the pictures in an ``images`` column (no options)."""
    data = reference()
    rows = []
    for st in data.storyturns:
        talk: list[dict[str, str]] = []
        for t in st.turns:
            text = "\n\n".join(part for part in (
                f"Feedback: {format_feedback(t.feedback)}" if t.feedback else "",
                f"Story: {t.story}" if t.story else "", "<image>" if t.image else "", f"Question: {t.question}")
                if part)
            talk += [{"from": "human", "value": text}, {"from": "gpt", "value": " ; ".join(t.answers)}]
        rows.append({"id": st.id, "task": st.task, "category": st.category, "image_dependent": st.image_dependent,
                     "conversations": talk, "images": [_cell(data, image) for image in st.images]})
    value = datasets.Value
    features = datasets.Features({"id": value("string"), "task": value("string"), "category": value("string"),
                                  "image_dependent": value("bool"),
                                  "conversations": [{"from": value("string"), "value": value("string")}],
                                  "images": [datasets.Image()]})
    _write(folder, "test-00000-of-00001.parquet", rows, features)
    _card(folder, [("default", "test", "data/test-*.parquet")])
    return folder
