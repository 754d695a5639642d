"""The pictures of an HTML report: found again in the dataset each run used, checked, embedded once.

Pictures come from the dataset folder each run recorded, else from a dataset found by the run's
content hash (its recorded path, the bundled sample, the dataset's name as a path), and from
``--dataset`` when given; a picture is embedded only when its bytes have the hash the run stored
for it, and the report says for each run where its pictures came from or why they are missing.
Each picture is a JPEG thumbnail stored once, as a ``data:`` URI.
"""

from __future__ import annotations

import base64
import hashlib
import io
from dataclasses import dataclass
from pathlib import Path

from commet.format.dataset import IMAGES_DIR, Dataset
from commet.reports.analyses import RunData
from commet.sources.loading import load_dataset
from commet.store.settings import RunSettings

THUMBNAIL_SIDE = 360


def data_uri(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def thumbnail(data: bytes, side: int = THUMBNAIL_SIDE) -> str:
    """A picture shrunk to fit ``side`` pixels, as a JPEG data URI."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as opened:
        image = opened.convert("RGBA")
        canvas = Image.new("RGB", image.size, "white")
        canvas.paste(image, mask=image.getchannel("A"))
        canvas.thumbnail((side, side))
        buffer = io.BytesIO()
        canvas.save(buffer, format="JPEG", quality=82)
    return data_uri(buffer.getvalue(), "image/jpeg")


@dataclass(frozen=True)
class RunPictures:
    """Where one run's pictures come from: the datasets to look in and a note for the reader."""

    sources: tuple[Dataset, ...]
    note: str


class DatasetFinder:
    """Finds the dataset a run used, by its recorded path or by content hash; each location loaded once."""

    def __init__(self, given: Dataset | None = None):
        self.given = given
        self.given_hash = given.content_hash() if given is not None else None
        self.loaded: dict[str, Dataset | None] = {}
        self.folders: dict[str, Dataset] = {}
        self.hashes: dict[str, str] = {}

    def load(self, location: str, columns: str | None = None, adapter: str | None = None) -> Dataset | None:
        if location not in self.loaded:
            try:
                self.loaded[location] = load_dataset(location, columns=columns, adapter=adapter)
            except Exception:  # noqa: BLE001 - any unreadable candidate just is not the run's dataset
                self.loaded[location] = None
        return self.loaded[location]

    def content_hash(self, location: str, dataset: Dataset) -> str:
        if location not in self.hashes:
            self.hashes[location] = dataset.content_hash()
        return self.hashes[location]

    def for_run(self, data: RunData) -> RunPictures:
        run = data.run
        if not any(t.images for s in data.stories for t in s.turns):
            return RunPictures((), "")
        given = (self.given,) if self.given is not None else ()
        if self.given_hash == run.dataset_hash:
            return RunPictures(given, "Pictures from the dataset given with --dataset.")
        recorded = run.settings.dataset_path
        if recorded and Path(recorded, IMAGES_DIR).is_dir() and all(
                image.get("sha256") for s in data.stories for t in s.turns for image in t.images):
            # every picture will be checked by the hash the run stored for it: its files are enough (reading and
            # hashing the StoryTurns to identify the dataset took most of a large report's picture time)
            folder = self.folders.setdefault(recorded, Dataset(storyturns=[], root=Path(recorded)))
            return RunPictures((*given, folder), f"Pictures from {recorded} (recorded with the run).")
        candidates = [recorded] if recorded else []
        candidates += [c for c in ("sample", run.dataset_name) if c not in candidates]
        recorded_columns = run.settings.recorded.dataset_columns  # how a table's columns were mapped
        for location in candidates:
            found = self.load(location, *((recorded_columns, run.settings.recorded.dataset_adapter)
                                          if location == recorded else (None, None)))
            if found is not None and self.content_hash(location, found) == run.dataset_hash:
                how = "recorded with the run" if location == recorded else "found by content hash"
                return RunPictures((*given, found), f"Pictures from {location} ({how}).")
        where = f"recorded at {recorded}" if recorded else "no path recorded"
        if given:
            return RunPictures(given, f"The run's own dataset was not found ({where}); pictures come from --dataset "
                                      "where their content hash matches the run's.")
        return RunPictures((), f"The run's dataset ({run.dataset_name}, content hash {run.dataset_hash[:12]}) was not "
                               f"found ({where}): pictures are shown by id. Pass --dataset DIR to embed them.")


def _matches(data: bytes, sha256: str, settings: RunSettings) -> bool:
    """Whether ``sha256`` is that of a picture file's bytes (a run whose model and judge read no picture, the human
    study) or, only then made, of the same picture prepared the way the run sent it (read from the
    prepared-picture cache where the run made it)."""
    from commet.models.images import prepared_picture

    if hashlib.sha256(data).hexdigest() == sha256:
        return True
    try:
        sent, _ = prepared_picture(data, max_side=settings.image_max_side, fmt=settings.image_format)
    except (ValueError, OSError):
        return False
    return hashlib.sha256(sent).hexdigest() == sha256


class Pictures:
    """Picture (id, hash) pairs to keys of the embedded picture table, loading each picture at most once."""

    def __init__(self) -> None:
        self.keys: dict[tuple[str, str], str | None] = {}
        self.uris: dict[str, str] = {}

    def key(self, image_id: str, sha256: str, sources: tuple[Dataset, ...], settings: RunSettings) -> str | None:
        """The embedded picture for this id whose bytes hash to ``sha256`` (any bytes when the run stored no hash).

        Model runs store the hash of the picture as the model received it (resized and encoded with
        the run's settings), runs whose model and judge read no picture (baselines) and the human study the hash
        of the file: either matches.
        """
        if (image_id, sha256) not in self.keys:
            self.keys[(image_id, sha256)] = None
            for dataset in sources:
                if not dataset.has_image(image_id):
                    continue
                data = dataset.image_bytes(image_id)
                if sha256 and not _matches(data, sha256, settings):
                    continue
                key = f"p{len(self.uris)}"
                self.uris[key] = thumbnail(data)
                self.keys[(image_id, sha256)] = key
                break
        return self.keys[(image_id, sha256)]
