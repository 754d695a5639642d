"""Defects found by an audit of the two web apps, each pinned against a real server on 127.0.0.1 (and in headless
Chromium where the defect is in the browser)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import playwright.sync_api as playwright_api
import pytest

from commet.apps.review.app import create_app as review_app
from commet.apps.review.db import ReviewDB
from commet.format.model import StoryTurn
from tests.conftest import launch_chromium
from tests.llm_gen_servers import small_png
from tests.review_server import PASSWORD, serving

#: An id the validator accepts (no '/', printable, no surrounding blanks) holding every URL-special character.
ODD_ID = "odd?id=1&b #2 50%"
ODD = {"id": ODD_ID, "task": "false_belief_location", "category": "Belief", "source": "test",
       "turns": [{"story": "Ana puts her ball in the basket.", "image": "ball.png",
                  "question": "Where will Ana look for it?", "answers": ["The basket"]}]}
PLAIN = {"id": "plain-1", "task": "false_belief_location", "category": "Belief", "source": "test",
         "turns": [{"story": "Ben hides a note.", "question": "Where is the note?", "answers": ["The drawer"]}]}


@pytest.fixture(scope="module")
def browser() -> Iterator[playwright_api.Browser]:
    with playwright_api.sync_playwright() as p:
        chromium = launch_chromium(p)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def review(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The review app over ODD and PLAIN, with reviewer alice."""
    folder = tmp_path_factory.mktemp("audit-review") / "dataset"
    (folder / "images").mkdir(parents=True)
    (folder / "images" / "ball.png").write_bytes(small_png((40, 120, 200), (64, 48)))
    (folder / "storyturns.jsonl").write_text("".join(json.dumps(StoryTurn.model_validate(st).model_dump()) + "\n"
                                                     for st in (ODD, PLAIN)))
    store = ReviewDB(folder.parent / "review.sqlite")
    store.add_user("alice", PASSWORD)
    with serving(review_app(folder, store)) as base:
        yield base


def signed_in_page(browser: playwright_api.Browser, base: str, viewport: dict[str, int] | None = None
                   ) -> playwright_api.Page:
    page = browser.new_page(viewport=viewport or {"width": 1280, "height": 800})
    page.goto(f"{base}/login")
    page.fill("input[name=name]", "alice")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/")
    return page


def test_review_item_with_url_special_characters_in_its_id_opens_and_saves(browser: playwright_api.Browser,
                                                                           review: str) -> None:
    """An id with '?', '#', '&', '%' and a space is one path segment in every link, form and redirect."""
    page = signed_in_page(browser, review)
    try:
        page.click(f"a:text-is('{ODD_ID}')")
        page.wait_for_load_state()
        assert page.locator("h1").inner_text() == ODD_ID
        page.click("#turn-1 summary:text('Edit this turn')")
        page.fill("#turn-1 textarea[name=story]", "Ana puts her red ball in the basket.")
        page.click("#turn-1 button:text('Save turn 1')")
        page.wait_for_load_state()
        assert page.locator("h1").inner_text() == ODD_ID
        assert "Turn 1 saved (revision 2)" in page.locator(".flash").inner_text()
        assert page.locator("#revision").inner_text() == "2"
        page.click("figcaption a:text('compare versions')")
        page.wait_for_load_state()
        page.click(f"a:text('back to {ODD_ID}')")
        page.wait_for_load_state()
        assert page.locator("h1").inner_text() == ODD_ID
        page.click("#next-item")  # the neighbour's link, and from there back by the previous-item link
        page.wait_for_load_state()
        assert page.locator("h1").inner_text() == "plain-1"
        page.click("#prev-item")
        page.wait_for_load_state()
        assert page.locator("h1").inner_text() == ODD_ID
        page.click("#next-open")  # /next?after=<id>: the item after the odd one, not the first open item
        page.wait_for_load_state()
        assert page.locator("h1").inner_text() == "plain-1"
    finally:
        page.close()
