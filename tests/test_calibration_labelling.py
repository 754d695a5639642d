"""Labelling at keyboard speed (issue 45, point 3): keys for right, wrong, unsure, undo and back on the review app's
Calibration page and in ``commet label``; the reply and the buttons in view without scrolling at 1400x900 and
390x844 however long the story and large the picture; readable text; progress and the time left.

A real results store (a replay model judged by the rules), a calibration sample drawn by ``commet calibrate``, the
review app served on 127.0.0.1 and driven in headless Chromium by keys only (its item page's radio buttons are
measured on the phone too: issue 45, point 8). With ``COMMET_SCREENSHOTS=DIR`` the
label page's first screen is photographed into DIR.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image
from playwright.sync_api import Browser, Page, expect, sync_playwright
from typer.testing import CliRunner

from commet.apps.review.app import create_app
from commet.apps.review.db import ReviewDB
from commet.cli import app
from commet.engine import evaluate_async
from commet.format.dataset import Dataset
from commet.format.model import Feedback, StoryTurn, Turn
from commet.sources import load_dataset
from commet.store import Store
from commet.store.calibration import sample_answers
from commet.store.labelling import labels_by, unsure_by
from tests.conftest import launch_chromium
from tests.review_server import PASSWORD, VIEWPORTS, check, serving

SHOTS = os.environ.get("COMMET_SCREENSHOTS")
RUN = "labelled"
QUESTION = "Which fruit will Kim take, the apple or the pear?"
#: a long story: ten paragraphs, the model saw all of them before the question
LONG = "\n\n".join(f"Paragraph {n}: Kim walks through the market and looks at the fruit stands, the baskets of "
                   "apples and pears, and the people queueing for bread in the morning sun." for n in range(10))
REPLIES = {f"s{n}": ["The apple.", "Hmm, the pear, I think?"] for n in range(4)}


def _picture() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (1600, 1200), (60, 140, 90)).save(buffer, format="PNG")  # larger than any screen shows
    return buffer.getvalue()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("labelling")
    stories = [StoryTurn(id=story_id, task="false_belief_location", category="Belief", turns=[
        Turn(story=LONG, question=QUESTION, answers=["The apple"], image="market.png"),
        Turn(feedback=Feedback(right="Good.", wrong="Look again."), question=QUESTION, answers=["The apple"])])
        for story_id in REPLIES]
    Dataset(stories, name="labelling", images={"market.png": _picture()}).save(root / "dataset")
    (root / "r.json").write_text(json.dumps(REPLIES))
    db = root / "results.sqlite"
    asyncio.run(evaluate_async(f"replay:{root / 'r.json'}", load_dataset(root / "dataset"), judge="rules", db=db,
                               run=RUN))
    drawn = CliRunner().invoke(app, ["calibrate", "--db", str(db), "--run", RUN, "--sample", "3"])
    assert drawn.exit_code == 0, drawn.output
    return root / "dataset", db


def _order(db: Path) -> list[tuple[str, int]]:
    with Store(db) as store:
        record = store.get_run(RUN)
        assert record is not None
        return [(item.story_id, row.turn) for item, row in sample_answers(store, record)]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = launch_chromium(playwright)
        yield launched
        launched.close()


def _in_view(page: Page, selector: str) -> None:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    height = page.viewport_size["height"]
    assert box["y"] >= 0 and box["y"] + box["height"] <= height, f"{selector} is not in view: {box} in {height} px"


def _shown(page: Page) -> tuple[str, int]:
    return page.inner_text("#story"), int(page.inner_text("#turn")) - 1


def _press(page: Page, key: str) -> None:
    with page.expect_navigation():
        page.keyboard.press(key)


def _signed_in(browser: Browser, base: str, name: str, viewport: str) -> Page:
    page = browser.new_context(base_url=base, viewport=VIEWPORTS[viewport]).new_page()
    page.goto("/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", PASSWORD)
    page.click("main button[type=submit]")
    return page


def test_keys_label_undo_go_back_and_the_reply_stays_in_view(world: tuple[Path, Path], browser: Browser,
                                                             tmp_path: Path) -> None:
    """A reviewer on a laptop checks the first screen and labels one answer by key; one on a phone goes through the
    whole sample by keys: right, wrong, back, undo, unsure."""
    folder, db = world
    order = _order(db)
    store = ReviewDB(tmp_path / "review.sqlite")
    for viewport in VIEWPORTS:
        store.add_user(f"rev-{viewport}", PASSWORD)
    with serving(create_app(folder, store, results=db)) as base:
        laptop = _signed_in(browser, base, "rev-desktop", "desktop")
        laptop.goto(f"/calibration/label?run={RUN}")
        laptop.wait_for_function("document.documentElement.dataset.keys === 'on'")
        for selector in ("#question", "#reply", "#right", "#wrong", "#unsure"):
            _in_view(laptop, selector)
        check(laptop, set())
        _press(laptop, "r")
        assert _shown(laptop) == order[1] and "is right" in laptop.inner_text("#said")
        for selector in ("#question", "#reply", "#right", "#wrong", "#unsure", "#undo", "#back"):
            _in_view(laptop, selector)  # after a label the page keeps them in view too
        if SHOTS:  # the first screen, as the reviewer sees it without scrolling
            Path(SHOTS).mkdir(parents=True, exist_ok=True)
            laptop.screenshot(path=str(Path(SHOTS) / "label-desktop.png"))
        _labelling_by_keys(browser, base, db, order)


def _labelling_by_keys(browser: Browser, base: str, db: Path, order: list[tuple[str, int]]) -> None:
    """The whole sample on a phone by keys; the reply and the buttons in view at every answer."""
    name = "rev-phone"
    page = _signed_in(browser, base, name, "phone")
    page.goto("/items/s0")  # the item page's radio buttons are a finger's size on a phone (24 px, WCAG 2.5.8)
    radios = page.locator("input[type=radio]")
    assert radios.count() >= 10
    for index in range(radios.count()):
        box = radios.nth(index).bounding_box()
        assert box is not None and box["width"] >= 24 and box["height"] >= 24, box
    page.goto(f"/calibration/label?run={RUN}")
    page.wait_for_function("document.documentElement.dataset.keys === 'on'")
    check(page, set())
    # readable: the story in the page's own type at 15 px or more, not small monospace
    family = page.evaluate("getComputedStyle(document.getElementById('prompt')).fontFamily")
    size = float(page.evaluate("getComputedStyle(document.getElementById('prompt')).fontSize")[:-2])
    assert "monospace" not in family and size >= 15
    for step in range(len(order) - 1):
        assert _shown(page) == order[step]
        for selector in ("#question", "#reply", "#right", "#wrong", "#unsure"):
            _in_view(page, selector)  # at the top of the page, whatever the story and picture
        assert page.inner_text("#question") == QUESTION
        expect(page.locator("#progress")).to_have_text(f"{step} of {len(order)} answers labelled by you")
        _press(page, "r" if step % 2 == 0 else "w")
    last, before = order[-1], order[-2]
    assert _shown(page) == last
    if SHOTS:  # the first screen, as the reviewer sees it without scrolling
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / "label-phone.png"))
    assert page.locator("#time-left").inner_text().endswith(" left")  # a pace is measured: the time left
    _press(page, "b")  # back: the answer before, with its label, which a key replaces
    first, other = ("right", "wrong") if (len(order) - 2) % 2 == 0 else ("wrong", "right")
    assert _shown(page) == before and f"now: {first}" in page.inner_text("#given")
    _in_view(page, "#right")
    _press(page, other[0])
    assert _shown(page) == last  # then on to the next to label
    with Store(db) as results:
        assert labels_by(results, RUN, name)[before] == {"right": "correct", "wrong": "incorrect"}[other]
    _press(page, "z")  # undo: the last label is taken back and its answer shown
    assert _shown(page) == before and "taken back" in page.inner_text("#said")
    with Store(db) as results:
        assert before not in labels_by(results, RUN, name)
    _press(page, "u")  # unsure: not a label; the answer comes again after the others
    with Store(db) as results:
        assert before in unsure_by(results, RUN, name) and before not in labels_by(results, RUN, name)
    assert _shown(page) == last
    check(page, set())
    _press(page, "w")
    assert _shown(page) == before and "unsure" in page.inner_text("#given")
    _press(page, "w")
    expect(page.locator(".flash")).to_contain_text("has your label")
    with Store(db) as results:
        assert len(labels_by(results, RUN, name)) == len(order) and not unsure_by(results, RUN, name)
    with page.expect_navigation():  # all done: the labels can still be gone through from the last one back
        page.click("a.review-labels")
    assert _shown(page) == last and "now:" in page.inner_text("#given")
    _press(page, "b")
    assert _shown(page) == before


def test_commet_label_keys_unsure_undo_and_back(world: tuple[Path, Path]) -> None:
    _, db = world
    order = _order(db)
    keys = ["y",  # 1st right
            "u",  # 2nd unsure: asked again at the end
            "n",  # 3rd wrong
            "z",  # undo: the 3rd is shown again, unlabelled
            "y",  # 3rd right
            "b",  # back: the 3rd again, with its label
            "n",  # 3rd wrong after all
            "q"]
    result = CliRunner().invoke(app, ["label", "--db", str(db), "--run", RUN, "--labeller", "cli", "--calibration"],
                                input="".join(k + "\n" for k in keys))
    assert result.exit_code == 0, result.output
    assert "undone: turn" in result.output and "your label now: right" in result.output
    assert f"stored 2 labels; {len(order) - 2} answers of the calibration sample" in result.output
    with Store(db) as results:
        assert labels_by(results, RUN, "cli") == {order[0]: "correct", order[2]: "incorrect"}
        assert unsure_by(results, RUN, "cli") == {order[1]}
    # resumed: the answer marked unsure comes last
    again = CliRunner().invoke(app, ["label", "--db", str(db), "--run", RUN, "--labeller", "cli", "--calibration"],
                               input="y\n" * len(order))
    assert again.exit_code == 0, again.output
    asked = [line for line in again.output.splitlines() if " of " in line and "story" in line]
    assert asked[-1].split("story ")[1].split()[0] == order[1][0] and len(asked) == len(order) - 2
