"""Draw a contact sheet of the procedural generator: one thumbnail per task, then one story's pictures in order.

Each thumbnail is the first picture of the task's first StoryTurn (the image-dependent
variant where the task has one, since that is where the picture matters most), with the
task id as a caption line under it. A task whose stories carry no picture gets a grey tile
saying so. The last row shows every picture of one story that unfolds (``--story``, the
moral true-belief item by default: the swap, the spoiled paper and the tears, the new paper):
consecutive pictures show what the story changed. Run ``python scripts/make_contact_sheet.py
[--seed S] [--out PATH]``; the default writes ``docs/procedural-contact-sheet.png``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from commet.generation.procedural import IMAGE_DEPENDENT_TASKS, generate_storyturn
from commet.generation.procedural.render import draw
from commet.taxonomy import TASKS

THUMB = (320, 240)
CAPTION = 18
GAP = 8
COLUMNS = 3


def thumbnail(task_id: str, seed: int) -> Image.Image:
    """The task's first picture, shrunk; a grey tile for a task without pictures."""
    storyturn, builder = generate_storyturn(task_id, 0, seed, image_dependent=task_id in IMAGE_DEPENDENT_TASKS)
    first = next((turn.image for turn in storyturn.turns if turn.image), None)
    if first is None:
        tile = Image.new("RGB", THUMB, (225, 225, 225))
        ImageDraw.Draw(tile).text((THUMB[0] // 2, THUMB[1] // 2), "(text-only task: no picture)",
                                  fill=(90, 90, 90), font=ImageFont.load_default(), anchor="mm")
        return tile
    picture, _ = draw(builder.scenes[first])
    return fit(picture)


def fit(picture: Image.Image) -> Image.Image:
    """The picture shrunk into a tile, its shape kept (the referent's pictures are wider), on white."""
    scale = min(THUMB[0] / picture.width, THUMB[1] / picture.height)
    size = (round(picture.width * scale), round(picture.height * scale))
    tile = Image.new("RGB", THUMB, (255, 255, 255))
    tile.paste(picture.resize(size, Image.Resampling.LANCZOS), ((THUMB[0] - size[0]) // 2, (THUMB[1] - size[1]) // 2))
    return tile


def contact_sheet(seed: int = 1, columns: int = COLUMNS, story: str = "moral_true_belief") -> Image.Image:
    tasks = [task.id for task in TASKS]
    storyturn, builder = generate_storyturn(story, 0, seed)
    sequence = [builder.scenes[t.image] for t in storyturn.turns if t.image]
    rows = -(-len(tasks) // columns) + -(-len(sequence) // columns)
    cell_w, cell_h = THUMB[0] + GAP, THUMB[1] + CAPTION + GAP
    sheet = Image.new("RGB", (columns * cell_w + GAP, rows * cell_h + GAP), (255, 255, 255))
    pen = ImageDraw.Draw(sheet)
    font = ImageFont.load_default()
    tiles = [(thumbnail(task_id, seed), f"{k + 1}. {task_id}" + (" (image-dependent)" if task_id in
                                                                  IMAGE_DEPENDENT_TASKS else ""))
             for k, task_id in enumerate(tasks)]
    tiles += [None] * (-len(tiles) % columns)  # the story starts a row of its own
    tiles += [(fit(draw(scene)[0]), f"{story}, picture {k + 1} of "
               f"{len(sequence)}") for k, scene in enumerate(sequence)]
    for k, tile in enumerate(tiles):
        if tile is None:
            continue
        x, y = GAP + (k % columns) * cell_w, GAP + (k // columns) * cell_h
        sheet.paste(tile[0], (x, y))
        pen.text((x + 2, y + THUMB[1] + 3), tile[1], fill=(20, 20, 20), font=font)
    return sheet


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--columns", type=int, default=COLUMNS)
    parser.add_argument("--story", default="moral_true_belief", help="the task whose first story's pictures end the "
                                                                      "sheet")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "docs"
                        / "procedural-contact-sheet.png")
    args = parser.parse_args()
    sheet = contact_sheet(args.seed, args.columns, args.story)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(args.out, optimize=True)
    print(f"wrote {args.out} ({sheet.width}x{sheet.height})")


if __name__ == "__main__":
    main()
