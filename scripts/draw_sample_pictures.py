"""Draw the bundled sample's pictures from its scene files, with the procedural generator's renderer.

Each picture of the sample (src/commet/data/sample/images/NAME.png) is a declarative, hand-edited
scene (src/commet/data/sample/scenes/NAME.json: people, places, things and what hides what, with
pixel boxes) painted by :mod:`commet.generation.procedural.render`, the one renderer. Edit a scene,
then run ``python scripts/draw_sample_pictures.py [FOLDER]`` to draw the pictures again (into the
sample's images folder unless FOLDER is given); the same scenes always give the same bytes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from commet.generation.procedural.render import draw_picture, png_bytes
from commet.sources import bundled_sample_path

#: Colours in each picture's palette: small files, and the edges stay smooth.
COLOURS = 48


def draw_all(folder: Path) -> list[Path]:
    """Draw every scene of the sample into ``folder``; returns the written paths."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for scene_path in sorted((bundled_sample_path() / "scenes").glob("*.json")):
        path = folder / f"{scene_path.stem}.png"
        path.write_bytes(png_bytes(draw_picture(json.loads(scene_path.read_text())), colours=COLOURS))
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    folder = Path(argv[1]) if len(argv) > 1 else bundled_sample_path() / "images"
    for path in draw_all(folder):
        print(f"{path}  {path.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
