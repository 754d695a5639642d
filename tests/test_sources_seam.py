"""The seam between the StoryTurn format and its sources (issue 47): the format reads no file of a dataset.

A dataset's folder pictures are found and read through the :class:`~commet.format.dataset.PictureFolder` that
``commet.sources`` supplies; without one the format refuses to read them (it never falls back on a reader of
its own), and the one it was given travels with the dataset into worker processes.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

from PIL import Image

from commet.format.model import StoryTurn, Turn


def _folder(tmp_path: Path) -> Path:
    (tmp_path / "images").mkdir()
    Image.new("RGB", (4, 3), "red").save(tmp_path / "images" / "red.png")
    return tmp_path


def test_the_format_alone_reads_no_picture_file(tmp_path: Path) -> None:
    """In a process that imported the format and none of the sources, a folder's picture is refused with what to
    do, while pictures held in memory are served; no module of commet.sources was imported."""
    folder = _folder(tmp_path)
    script = f"""
import sys
from pathlib import Path
from commet.format import Dataset, validate_dataset, dataset_stats
data = Dataset(storyturns=[], root=Path({str(folder)!r}), images={{"blue.png": b"bytes"}})
assert data.image_bytes("blue.png") == b"bytes"
try:
    data.image_bytes("red.png")
except RuntimeError as exc:
    print("refused:", exc)
print("sources imported:", sorted(m for m in sys.modules if m.startswith("commet.sources")))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=os.environ, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "refused: the pictures of" in done.stdout and "commet.sources.picture_files installs it" in done.stdout
    assert "sources imported: []" in done.stdout


def test_the_folder_reader_is_given_installed_and_travels(tmp_path: Path) -> None:
    from commet.format.dataset import Dataset
    from commet.sources import load_dataset
    from commet.sources.picture_files import FOLDER_READER

    folder = _folder(tmp_path)
    story = StoryTurn(id="s1", task="first_order_belief", category="Belief", image_dependent=True,
                      turns=[Turn(story="A story.", question="Where?", answers=["here"], image="red")])
    Dataset([story], name="seam").save(folder)
    loaded = load_dataset(folder)
    assert loaded.folder_reader is FOLDER_READER and loaded.image_bytes("red").startswith(b"\x89PNG")
    made_later = Dataset(storyturns=[story], root=folder)  # a dataset built by hand gets the installed reader
    assert made_later.folder_reader is FOLDER_READER and made_later.has_image("red")
    copied = pickle.loads(pickle.dumps(made_later))  # as a worker process receives it
    assert copied.image_bytes("red") == loaded.image_bytes("red")
    assert copied.content_hash() == loaded.content_hash()
    assert loaded.locate_image("../red.png") == (None, "leads out of the dataset folder (refused, not read)")
