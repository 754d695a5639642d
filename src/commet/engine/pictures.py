"""Pictures as every provider and LLM judge receives them: the run's size and format policy applied once."""

from __future__ import annotations

from commet.format.dataset import Dataset
from commet.models.base import ImagePart


class PictureCache:
    """Prepared pictures of one dataset, by image id (each decoded, resized and hashed once per run)."""

    def __init__(self, dataset: Dataset, *, max_side: int, fmt: str):
        self.dataset = dataset
        self.max_side = max_side
        self.fmt = fmt
        self._parts: dict[str, ImagePart] = {}

    def part(self, image_id: str) -> ImagePart:
        if image_id not in self._parts:
            from commet.models.images import prepare_image

            data, mime = prepare_image(self.dataset.image_bytes(image_id), max_side=self.max_side, fmt=self.fmt)
            self._parts[image_id] = ImagePart(data=data, mime=mime, image_id=image_id)
        return self._parts[image_id]
