"""One check for every picture: what `commet validate` passes, the run can prepare, and what it refuses, the run
refuses the same way before decoding (commet.format.pictures.opened_picture).

A 1 x 49,000,000 PNG was under the pixel limit, passed validate, and then made the run's Lanczos resize
allocate 2.4 GB (MemoryError, the run left `failed`)."""

from __future__ import annotations

import functools
import io

import pytest
from PIL import Image

from commet.format.pictures import PictureError, PictureTooLarge, picture_problem
from commet.models.images import prepare_image
from tests.data.malformed import make_input_corpus

#: the malformed-input corpus's real, fully decodable greyscale PNG of any size (kept: the largest take a while)
grey_png = functools.cache(make_input_corpus.grey_png)


def saved(image: Image.Image, fmt: str, **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, format=fmt, **options)
    return out.getvalue()


def rotated_jpeg() -> bytes:
    exif = Image.Exif()
    exif[0x0112] = 6  # taken sideways
    return saved(Image.new("RGB", (40, 20), (10, 120, 30)), "JPEG", exif=exif)


def animated_gif() -> bytes:
    frames = [Image.new("P", (16, 16), n) for n in range(5)]
    return saved(frames[0], "GIF", save_all=True, append_images=frames[1:])


PICTURES = {
    "png": (saved(Image.new("RGB", (64, 48), (200, 80, 60)), "PNG"), None),
    "rotated jpeg": (rotated_jpeg(), None),
    "animated gif": (animated_gif(), None),
    "webp with alpha": (saved(Image.new("RGBA", (30, 30), (1, 2, 3, 100)), "WEBP"), None),
    "a long strip at the side limit": (grey_png(20_000, 3), None),
    "1 x 49,000,000": (grey_png(1, 49_000_000), "a side longer than 20,000 pixels"),
    "49,000,000 x 1": (grey_png(49_000_000, 1), "a side longer than 20,000 pixels"),
    "20,001 x 1": (grey_png(20_001, 1), "a side longer than 20,000 pixels"),
    "8000 x 8000 declared": (grey_png(8000, 8000), "more than the limit of 50,000,000"),
    "truncated png": (saved(Image.new("RGB", (64, 48), (200, 80, 60)), "PNG")[:60], "truncated or corrupt"),
    "bmp": (saved(Image.new("RGB", (8, 8)), "BMP"), "is a BMP picture"),
    "text": (b"not a picture at all", "is not a picture"),
    "empty": (b"", "is an empty file"),
}


@pytest.mark.parametrize("name", list(PICTURES))
def test_validate_and_the_run_agree_on_every_picture(name: str) -> None:
    data, refused = PICTURES[name]
    problem = picture_problem(data)
    if refused is None:
        assert problem is None, problem
        sent, mime = prepare_image(data, max_side=64)
        with Image.open(io.BytesIO(sent)) as image:
            assert max(image.size) <= 64 and mime == "image/png"
    else:
        assert problem is not None and refused in problem, problem
        with pytest.raises(PictureError) as raised:
            prepare_image(data, max_side=64)
        assert str(raised.value) == problem  # the same words, from the same check


def test_a_sideways_photograph_is_sent_upright() -> None:
    sent, _ = prepare_image(rotated_jpeg(), max_side=64)
    with Image.open(io.BytesIO(sent)) as image:
        assert image.size == (20, 40)


def test_size_refusals_say_so_for_the_upload_answer() -> None:
    with pytest.raises(PictureTooLarge) as raised:
        prepare_image(grey_png(1, 49_000_000))
    assert raised.value.size == (1, 49_000_000)
