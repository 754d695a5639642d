"""Writing a dataset in another format, pictures included (``commet convert``).

Every target can hold the pictures: a dataset folder keeps them in ``images/``; a canonical
or pipe file gets them in ``images/`` beside it, which is where the loaders look for the
pictures of a file; a Hugging Face folder embeds their bytes. What stops a conversion is a
picture that cannot be written there: one the source does not have, or a different file of the
same name already in the target's ``images/``. Then nothing is written and the error says
which, unless the caller asks for the StoryTurns without pictures.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from commet.errors import CommetError
from commet.format.dataset import IMAGE_EXTENSIONS, IMAGES_DIR, Dataset
from commet.format.pictures import PictureError
from commet.format.pipe import pipe_loss, to_pipe_record
from commet.format.problems import Problem
from commet.sources.targets import ConvertTarget


class ConvertError(CommetError, ValueError):
    """A conversion that would lose or overwrite pictures; nothing was written."""


@dataclass(frozen=True)
class ConvertResult:
    storyturns: int
    output: Path
    #: pictures written (or embedded), and where; 0 and None with ``pictures=False``
    pictures: int = 0
    pictures_at: Path | None = None
    #: pictures already in place with the same bytes (converting beside the source)
    unchanged: int = 0
    skipped: list[str] = field(default_factory=list)


def picture_ids(dataset: Dataset) -> list[str]:
    """Every picture the StoryTurns name, once, in order of first use."""
    return list(dict.fromkeys(image for st in dataset for image in st.images))


def convert(dataset: Dataset, target: ConvertTarget, out: Path, *, pictures: bool = True) -> ConvertResult:
    """Write ``dataset`` as ``target`` at ``out``; with ``pictures``, every picture goes where it can be loaded.

    Raises :class:`ConvertError` (before writing anything) when a picture is missing from the
    source, cannot be read (refused by its size or kind: every target reads all pictures before
    writing) or would overwrite a different file.
    """
    try:
        return _convert(dataset, target, out, pictures=pictures)
    except PictureError as exc:
        raise ConvertError(f"a picture cannot be read: it {exc}; nothing written; --no-pictures writes the "
                           "StoryTurns alone") from None


def _convert(dataset: Dataset, target: ConvertTarget, out: Path, *, pictures: bool) -> ConvertResult:
    ids = picture_ids(dataset)
    if not pictures:
        ids, dataset = [], replace(dataset, root=None, images={})
    missing = [image for image in ids if not dataset.has_image(image)]
    if missing:
        raise ConvertError(f"{len(missing)} of {len(ids)} pictures the StoryTurns name are not in the source "
                           f"(first: {missing[0]!r}); nothing written; --no-pictures writes the StoryTurns alone")
    if target is ConvertTarget.hf:
        from commet.sources.hf import save_hf

        save_hf(dataset, out)
        return ConvertResult(len(dataset), out, len(ids), out if ids else None)
    if target is ConvertTarget.jsonl and out.suffix != ".jsonl":
        folder = out / IMAGES_DIR
        for image in ids:
            path = folder / dataset.saved_image_name(image)
            source = dataset.image_path(image)
            if source is not None and path.exists() and source.resolve() == path.resolve():
                continue  # converting a folder into itself: the picture stays where it is
            _refuse_overwrite(path, dataset.image_bytes(image), image)
        dataset.save(out)  # a dataset folder: StoryTurns, metadata, images/
        return ConvertResult(len(dataset), out, len(ids), out / IMAGES_DIR if ids else None)
    folder = out.parent / IMAGES_DIR
    plan = [(image, folder / picture_file_name(dataset, image), dataset.image_bytes(image)) for image in ids]
    for image, path, data in plan:
        if not path.resolve().is_relative_to(folder.resolve()):
            raise ConvertError(f"picture {image!r} would be written outside {folder}; nothing written")
        _refuse_overwrite(path, data, image)
    if target is ConvertTarget.pipe:
        _refuse_pipe_loss(dataset)
    out.parent.mkdir(parents=True, exist_ok=True)  # as every other --out does
    if target is ConvertTarget.pipe and out.suffix == ".json":
        out.write_text(json.dumps([to_pipe_record(st) for st in dataset], indent=2, ensure_ascii=False) + "\n",
                       encoding="utf-8")
    elif target is ConvertTarget.pipe:
        dataset.save_pipe(out)
    else:
        with out.open("w", encoding="utf-8") as handle:
            for st in dataset:
                handle.write(st.model_dump_json() + "\n")
    unchanged = 0
    for _, path, data in plan:
        if path.is_file():
            unchanged += 1
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return ConvertResult(len(dataset), out, len(plan) - unchanged, folder if plan else None, unchanged)


def _refuse_pipe_loss(dataset: Dataset) -> None:
    """Refuse, before writing, a StoryTurn whose pipe record would read back otherwise (said where it is)."""
    for index, st in enumerate(dataset):
        loss = pipe_loss(st)
        if loss is not None:
            file, line = dataset.where(index)
            where = Problem(file, line, st.id, loss.turn, loss.field, loss.why)
            raise ConvertError(f"{where}; nothing written: convert --to jsonl keeps it as it is")


def _refuse_overwrite(path: Path, data: bytes, image: str) -> None:
    """A different file (or a folder) where picture ``image`` would be written stops the conversion."""
    if path.exists() and (not path.is_file() or path.read_bytes() != data):
        raise ConvertError(f"{path} already exists with other content (picture {image!r}); nothing written; "
                           "choose an --out in another folder")


def picture_file_name(dataset: Dataset, image_id: str) -> str:
    """A name the loaders find for ``image_id``: ``:`` as ``_``, the source's extension when the id has none."""
    stem = image_id.replace(":", "_")
    if stem.lower().endswith(IMAGE_EXTENSIONS):
        return stem
    source = dataset.image_path(image_id)
    if source is not None and source.suffix.lower() in IMAGE_EXTENSIONS:
        return stem + source.suffix.lower()
    return stem + _extension(dataset.image_bytes(image_id))


def _extension(data: bytes) -> str:
    from PIL import Image, UnidentifiedImageError

    try:
        kind = (Image.open(io.BytesIO(data)).format or "png").lower()
    except UnidentifiedImageError:
        kind = "png"
    extension = ".jpg" if kind == "jpeg" else f".{kind}"
    return extension if extension in IMAGE_EXTENSIONS else ".png"
