"""Shared fixtures: small datasets written to disk the way users write them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

#: Debian's chromium, started the way this project's browser tests start it.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def launch_chromium(playwright):  # noqa: ANN001, ANN201 - playwright's sync API objects
    """A headless Debian chromium through playwright (never a downloaded browser)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


DIVERSE_DESIRE = {
    "id": "dd-1",
    "task": "diverse_desire",
    "category": "Desire",
    "image_dependent": False,
    "storyturn": [
        "Meet Kim. It is snack time! There is a ripe pear and a warm cookie. | | Which snack do you like best, "
        "the pear or the cookie? | snack:table:1 | Pear; Cookie",
        "Kim likes the other snack better. | If the previous answer is Pear: So Kim likes the cookie.; "
        "If the previous answer is Cookie: So Kim likes the pear. | So which snack will Kim pick, the pear or "
        "the cookie? | | Cookie; Pear",
    ],
}

FALSE_BELIEF = {
    "id": "fb-1",
    "task": "false_belief_location",
    "category": "Belief",
    "image_dependent": False,
    "storyturn": [
        "Ana puts her ball in the basket and goes outside. Ben moves the ball to the box. | | Where will Ana look "
        "for her ball, the basket or the box? | | The basket",
        " | If right: Yes, she did not see Ben move it.; If wrong: Remember, Ana was outside when Ben moved it. | "
        "Is the ball in the basket now? | | No",
        " | | Where is the ball really, the basket or the box? | | The box",
    ],
}


def write_png(path: Path, colour: tuple[int, int, int] = (200, 80, 60)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (64, 48), colour).save(path)
    return path


@pytest.fixture
def pipe_dataset(tmp_path: Path) -> Path:
    """A dataset folder in pipe records (JSONL) with one picture whose id uses ':' and its file '_'."""
    folder = tmp_path / "ds"
    write_png(folder / "images" / "snack_table_1.png")
    with (folder / "stories.jsonl").open("w") as out:
        for record in (DIVERSE_DESIRE, FALSE_BELIEF):
            out.write(json.dumps(record) + "\n")
    return folder / "stories.jsonl"


@pytest.fixture
def replay_file(tmp_path: Path):
    def write(replies: dict[str, list[str]], name: str = "replies.json") -> Path:
        path = tmp_path / name
        path.write_text(json.dumps(replies))
        return path

    return write



@pytest.fixture(autouse=True)
def _content_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Picture checks and prepared pictures cached in an empty folder of each test's own (commands the test starts
    too): never in the user's cache folder, and no test sees what another one cached."""
    monkeypatch.setenv("COMMET_CACHE_DIR", str(tmp_path_factory.mktemp("commet-cache")))
