"""End to end in headless Chromium: sign in, review, edit, file picture errors, regenerate, reach consensus, export."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright
from typer.testing import CliRunner

from commet.apps.review.db import ReviewDB
from commet.cli import app as cli
from commet.format import load_dataset, validate_dataset
from commet.format.validate import has_errors
from commet.generation.llm.images import create_image_model
from tests.conftest import launch_chromium
from tests.fakeservers import FakeServer
from tests.llm_gen_servers import openai_image_reply, small_png
from tests.review_server import PASSWORD, running_app

REGENERATED = small_png((220, 80, 40), (320, 240))


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = launch_chromium(playwright)
        yield launched
        launched.close()


def sign_in(browser: Browser, base: str, name: str) -> Page:
    page = browser.new_context(base_url=base).new_page()
    page.goto("/")
    expect(page).to_have_url(f"{base}/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    expect(page.locator("h1")).to_have_text("Items")
    return page


def decide(page: Page, item: str, decision: str, note: str = "") -> None:
    page.goto(f"/items/{item}")
    page.fill("form[action$='/decision'] input[name=note]", note)
    page.click(f"button[value={decision}]")
    expect(page.locator(".flash")).to_contain_text("Decision saved")


def test_review_to_consensus_and_export(browser: Browser, tmp_path: Path) -> None:
    with FakeServer("openai", lambda request: openai_image_reply(REGENERATED)) as images:
        painter = create_image_model(f"openai:gpt-image-1?base_url={images.url}/v1")
        with running_app(tmp_path, image_model=painter) as (base, db):
            alice = browser.new_context(base_url=base).new_page()
            alice.goto("/login")
            alice.fill("input[name=name]", "alice")
            alice.fill("input[name=password]", "not the password")
            alice.click("button[type=submit]")
            expect(alice.locator(".flash")).to_have_text("Unknown user or wrong password.")
            alice.close()
            alice = sign_in(browser, base, "alice")
            expect(alice.locator("tbody tr")).to_have_count(2)

            # read the item turn by turn with its picture
            alice.click("text=rh-1")
            expect(alice.locator("section.turn")).to_have_count(2)
            expect(alice.locator("#turn-2 .feedback")).to_contain_text("If wrong: Look again at what Tom can see.")
            assert alice.locator("#turn-1 figure img").evaluate("img => img.naturalWidth") == 320

            # edit the text: kept as history with author and time
            alice.click("#turn-1 summary:has-text('Edit this turn')")
            alice.fill("#turn-1 textarea[name=story]", "Three toy boats float in the bath: a big one, a middle one "
                                                        "and a small one. Tom sits at the end of the bath.")
            alice.click("#turn-1 button:has-text('Save turn 1')")
            expect(alice.locator(".flash")).to_have_text("Turn 1 saved (revision 2).")
            expect(alice.locator("#turn-1 .story")).to_contain_text("Three toy boats")
            expect(alice.locator(".history tbody tr")).to_have_count(1)
            expect(alice.locator(".history tbody tr")).to_contain_text("alice")

            # check the picture against Table 5; failed criteria file Table 6 errors
            for key, verdict in (("text_artifacts", "fail"), ("spatial", "fail"), ("narrative", "pass"),
                                 ("duplication", "pass"), ("clues", "pass")):
                alice.check(f"#turn-1 input[name=c_{key}][value={verdict}]")
            alice.fill("#turn-1 .checks input[name=note]", "a label on the tub; boats in the wrong order")
            alice.click("#turn-1 button:has-text('Save picture checks')")
            expect(alice.locator(".flash")).to_contain_text("errors filed: Unintended text artifacts, "
                                                            "Incorrect spatial relationships")

            # mark for regeneration, regenerate with the image model, compare versions
            alice.click("#turn-1 summary:has-text('Regenerate or replace')")
            alice.fill("#turn-1 form[action$='/mark'] input[name=note]", "remove the label")
            alice.click("#turn-1 button:has-text('Mark for regeneration')")
            expect(alice.locator("#turn-1 .marked")).to_contain_text("Marked for regeneration by alice: remove the label")
            alice.click("#turn-1 summary:has-text('Regenerate or replace')")
            alice.fill("#turn-1 textarea[name=prompt]", "Three toy boats in a bath, no text anywhere.")
            alice.click("#turn-1 button:has-text('Regenerate with openai:gpt-image-1')")
            expect(alice.locator("h1")).to_have_text("bath.png: 2 versions")
            expect(alice.locator(".version")).to_have_count(2)
            expect(alice.locator(".version.current h2")).to_contain_text("Version 2")
            assert images.requests[0].json["prompt"] == "Three toy boats in a bath, no text anywhere."
            alice.click("button:has-text('Use version 1')")
            expect(alice.locator(".flash")).to_have_text("bath.png: version 1 is now current.")
            alice.goto(alice.url.split("#")[0].replace("/items/rh-1", "/items/rh-1/versions/1"))
            alice.click("button:has-text('Use version 2')")
            expect(alice.locator("#turn-1 figcaption")).to_contain_text("version 2 of 2 (regenerated)")
            expect(alice.locator("#turn-1 .marked")).to_have_count(0)

            for key in ("text_artifacts", "spatial", "narrative", "duplication", "clues"):
                alice.check(f"#turn-1 input[name=c_{key}][value=pass]")
            alice.click("#turn-1 button:has-text('Save picture checks')")
            decide(alice, "rh-1", "accept")
            expect(alice.locator("#status")).to_have_text("1 of 3 accepts")

            # bob accepts, carol disagrees (picture and decision), then agrees after a second look
            bob = sign_in(browser, base, "bob")
            decide(bob, "rh-1", "accept")
            carol = sign_in(browser, base, "carol")
            carol.goto("/items/rh-1")
            carol.check("#turn-1 input[name=c_clues][value=fail]")
            carol.click("#turn-1 button:has-text('Save picture checks')")
            decide(carol, "rh-1", "reject", "the big boat is visible")
            carol.goto("/disagreements")
            expect(carol.locator("tbody tr")).to_have_count(1)
            expect(carol.locator("tbody")).to_contain_text("accepted by alice, bob; rejected by carol")
            expect(carol.locator("tbody")).to_contain_text("Unintended clues passed by alice, failed by carol")
            carol.goto("/items/rh-1")
            carol.check("#turn-1 input[name=c_clues][value=pass]")
            carol.click("#turn-1 button:has-text('Save picture checks')")
            decide(carol, "rh-1", "accept")
            expect(carol.locator("#status")).to_have_text("final")
            carol.goto("/disagreements")
            expect(carol.locator("main")).to_contain_text("No disagreements.")

            decide(bob, "xss-1", "accept")
            bob.goto("/")
            expect(bob.locator("tbody tr:has-text('rh-1') .badge")).to_have_text("final")

            bob.goto("/stats")
            table6 = bob.locator("#table6 tbody tr")
            expect(table6.nth(0)).to_contain_text("Unintended text artifacts")
            expect(table6.nth(0)).to_contain_text("50.0%")  # v1 under its most prominent error, v2 under clues
            expect(table6.nth(4)).to_contain_text("Unintended clues1")
            expect(bob.locator("main")).to_contain_text("2 erroneous picture version(s); 1 of 1 picture(s) revised")
            expect(bob.locator("#progress tr:has-text('alice')")).to_contain_text("1 / 2")
            expect(bob.locator("#progress tr:has-text('bob')")).to_contain_text("2 / 2")

            store = ReviewDB(db)
            assert store.status("rh-1").final and not store.status("xss-1").final
            assert {r["category"] for r in store.errors("rh-1")} == {"text_artifacts", "spatial", "clues"}
            out = tmp_path / "reviewed"
            result = CliRunner().invoke(cli, ["review", "export", "--db", str(db), "--out", str(out)])
            assert result.exit_code == 0, result.output

            # an edit after consensus reopens the item: the three accepts were for an older revision
            bob.goto("/items/rh-1")
            bob.click("#turn-2 summary:has-text('Edit this turn')")
            bob.fill("#turn-2 textarea[name=question]", "Which boat will Tom pass to Mia?")
            bob.click("#turn-2 button:has-text('Save turn 2')")
            expect(bob.locator("#status")).to_have_text("open")
        exported = load_dataset(out)
        assert [st.id for st in exported] == ["rh-1"]
        st = exported.get("rh-1")
        assert st.turns[0].story.startswith("Three toy boats") and st.meta["review"]["reviewers"] == 3
        assert exported.image_bytes("bath.png") == REGENERATED
        assert not has_errors(validate_dataset(exported))
