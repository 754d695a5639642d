"""The review app as reviewers use it, in headless Chromium at 1400x900 and 390x844.

Three reviewers take an item through a failed criterion, its fix and the final consensus (in the
paper's order: one expert corrects, two review blind to each other); two reviewers edit one item
at once without losing an update; an accept on a stale revision is refused. Every page on the way
is checked for sideways scrolling and with axe-core.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright
from typer.testing import CliRunner

from commet.apps.review.db import ReviewDB
from commet.cli import app as cli
from commet.format import validate_dataset
from commet.format.validate import has_errors
from commet.generation.llm.images import create_image_model
from commet.sources import load_dataset
from tests.browser_checks import check_page
from tests.conftest import launch_chromium
from tests.fakeservers import FakeServer
from tests.llm_gen_servers import openai_image_reply, small_png
from tests.review_server import PASSWORD, VIEWPORTS, check, running_app

REGENERATED = small_png((220, 80, 40), (320, 240))
FIVE = ("text_artifacts", "spatial", "narrative", "duplication", "clues")


expect.set_options(timeout=20_000)  # the machine running the suite may be busy

@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = launch_chromium(playwright)
        yield launched
        launched.close()


def open_page(browser: Browser, base: str, viewport: str) -> Page:
    context = browser.new_context(base_url=base, viewport=VIEWPORTS[viewport], accept_downloads=True)
    return context.new_page()


def sign_in(browser: Browser, base: str, name: str, viewport: str, seen: set[str] | None = None) -> Page:
    page = open_page(browser, base, viewport)
    page.goto("/")
    expect(page).to_have_url(f"{base}/login")
    if seen is not None:
        check(page, seen)
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", PASSWORD)
    page.click("main button[type=submit]")
    expect(page.locator("h1")).to_have_text("Items")
    return page


def press(page: Page, *keys: str) -> None:
    """Press shortcut keys once the page's deferred script listens (a key pressed earlier is lost)."""
    expect(page.locator("html[data-keys=on]")).to_have_count(1)
    for key in keys:
        page.keyboard.press(key)


def flash(page: Page) -> str:
    return page.locator(".flash").inner_text()


def top(page: Page, selector: str) -> float:
    return page.evaluate("s => document.querySelector(s).getBoundingClientRect().top", selector)


def in_view(page: Page, selector: str) -> bool:
    return page.evaluate("s => { const box = document.querySelector(s).getBoundingClientRect(); "
                         "return box.top >= 0 && box.bottom <= window.innerHeight; }", selector)


def confirm(page: Page, key: str) -> None:
    """A verdict by key: it asks first, and Enter confirms (the dialog's button has the focus)."""
    press(page, key)
    expect(page.locator("#confirm")).to_be_visible()
    expect(page.locator("#confirm-yes")).to_be_focused()
    page.keyboard.press("Enter")


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_three_reviewers_fail_fix_and_agree(browser: Browser, tmp_path: Path, viewport: str) -> None:
    seen: set[str] = set()
    with FakeServer("openai", lambda request: openai_image_reply(REGENERATED)) as images:
        painter = create_image_model(f"openai:gpt-image-1?base_url={images.url}/v1")
        with running_app(tmp_path, image_model=painter) as (base, db):
            # the first expert reviews and corrects; "ALICE " is alice (one normal form for names)
            alice = sign_in(browser, base, " ALICE ", viewport, seen)
            check(alice, seen)
            expect(alice.locator(".items tbody tr")).to_have_count(2)
            alice.click("text=rh-1")
            check(alice, seen)
            expect(alice.locator("#keys")).to_contain_text("a accept")
            expect(alice.locator("section.turn")).to_have_count(2)
            expect(alice.locator("#turn-2 .feedback")).to_contain_text("If wrong: Look again at what Tom can see.")
            assert alice.locator("#turn-1 figure img").evaluate("img => img.naturalWidth") == 320

            alice.click("#turn-1 summary:has-text('Edit this turn')")
            alice.fill("#turn-1 textarea[name=story]", "Three toy boats float in the bath: a big one, a middle one "
                                                        "and a small one. Tom sits at the end of the bath.")
            alice.click("#turn-1 button:has-text('Save turn 1')")
            expect(alice.locator(".flash")).to_have_text("Turn 1 saved (revision 2).")
            expect(alice.locator("#turn-1 .story")).to_contain_text("Three toy boats")

            # Table 5 checks with the keyboard (Shift+digit fails, digit passes the criterion of the picture in view)
            alice.locator("#turn-1 .checks").scroll_into_view_if_needed()
            press(alice, "Shift+Digit1", "Shift+Digit2", "Digit3", "Digit4", "Digit5")
            assert alice.locator("input[name=c_1_text_artifacts][value=fail]").is_checked()
            assert alice.locator("input[name=c_1_clues][value=pass]").is_checked()
            save_checks = "#turn-1 button[name=checks]"
            alice.locator(save_checks).scroll_into_view_if_needed()
            before = top(alice, save_checks)
            alice.fill("input[name=note_1]", "a label on the tub; boats in the wrong order")
            alice.click(save_checks)
            expect(alice.locator("#turn-1 .checks .flash")).to_have_text(
                "Checks of bath.png v1 saved; errors filed: Unintended text artifacts, Incorrect spatial relationships; "
                "choose the most prominent error of bath.png v1 (several criteria fail).")
            alice.wait_for_load_state("load")
            # the save kept the button where it was on screen, its message beside it
            assert abs(top(alice, save_checks) - before) < 4, (before, top(alice, save_checks))
            assert in_view(alice, "#said")
            alice.select_option("select[name=prominent_1]", "text_artifacts")
            alice.click("#turn-1 button:has-text('Save picture checks')")
            expect(alice.locator(".flash")).to_have_text("Checks of bath.png v1 saved.")
            expect(alice.locator("#turn-1 .verdicts").first).to_contain_text("✗ alice")

            # an accept is refused while a criterion fails, and while a picture waits for regeneration; pressing a
            # asks first (Escape: nothing happens), the reason shows beside the buttons, and nothing typed is lost
            alice.locator("#turn-1 .checks").scroll_into_view_if_needed()
            press(alice, "a")
            expect(alice.locator("#confirm")).to_be_visible()
            alice.keyboard.press("Escape")
            expect(alice.locator("#confirm")).to_be_hidden()
            assert ReviewDB(db).decisions("rh-1") == []
            alice.fill("#verdict input[name=note]", "the picture needs a fix")
            alice.fill("input[name=note_1]", "a label on the tub")
            alice.click("#turn-2 summary:has-text('Edit this turn')")
            alice.fill("#turn-2 textarea[name=question]", "Which boat will Tom hand to Mia?")  # not sent: kept too
            alice.evaluate("document.activeElement.blur()")  # (a key typed into a field is text, not a shortcut)
            alice.locator("#turn-1 .checks").scroll_into_view_if_needed()
            confirm(alice, "a")
            refusal = alice.locator("#decide .flash.refused")
            expect(refusal).to_contain_text("Not accepted: bath.png v1 fails unintended text artifacts")
            alice.wait_for_load_state("load")
            assert refusal.get_attribute("role") == "alert" and in_view(alice, "#said")
            expect(alice.locator("#verdict input[name=note]")).to_have_value("the picture needs a fix")
            expect(alice.locator("input[name=note_1]")).to_have_value("a label on the tub")
            expect(alice.locator("#turn-2 textarea[name=question]")).to_have_value("Which boat will Tom hand to Mia?")
            expect(alice.locator("#turn-2 details.edit")).to_have_attribute("open", "")
            # the same by mouse: the button stays where it was, the reason beside it
            alice.locator("#accept").scroll_into_view_if_needed()
            before = top(alice, "#accept")
            alice.click("#accept")
            expect(alice.locator("#decide .flash.refused")).to_contain_text("Not accepted")
            alice.wait_for_load_state("load")
            assert abs(top(alice, "#accept") - before) < 4 and in_view(alice, "#said"), (before, top(alice, "#accept"))
            expect(alice.locator("#verdict input[name=note]")).to_have_value("the picture needs a fix")
            check(alice, seen)
            alice.fill("#verdict input[name=note]", "")
            alice.fill("#turn-2 textarea[name=question]", "Which boat will Tom pass?")
            alice.click("#turn-1 summary:has-text('Regenerate or replace')")
            alice.fill("#turn-1 form[action$='/mark'] input[name=note]", "remove the label")
            alice.click("#turn-1 button:has-text('Mark for regeneration')")
            expect(alice.locator("#turn-1 .marked")).to_contain_text("Marked for regeneration by alice: remove the label")
            # the message is beside the form it came from, left open
            expect(alice.locator("#turn-1 details.regen[open] .flash")).to_have_text("bath.png marked for regeneration.")
            alice.fill("#turn-1 textarea[name=prompt]", "Three toy boats in a bath, no text anywhere.")
            alice.click("#turn-1 button:has-text('Regenerate with openai:gpt-image-1')")
            expect(alice.locator("h1")).to_have_text("bath.png: 2 versions")
            check(alice, seen)
            expect(alice.locator(".illustrates")).to_contain_text("Three toy boats float in the bath")
            expect(alice.locator(".illustrates")).to_contain_text("Which boat can Tom not see from where he sits?")
            expect(alice.locator(".version.current h2")).to_contain_text("Version 2")
            assert images.requests[0].json["prompt"] == "Three toy boats in a bath, no text anywhere."

            alice.goto("/items/rh-1")
            expect(alice.locator("#turn-1 .marked")).to_have_count(0)  # the new version closed the mark
            alice.locator("#turn-1 .checks").scroll_into_view_if_needed()
            press(alice, *(f"Digit{digit}" for digit in "12345"))
            confirm(alice, "a")  # the accept carries the five checks: nothing saved separately
            expect(alice.locator(".flash")).to_have_text("Decision saved; the item is 1 of 3 accepts.")
            expect(alice.locator("#status")).to_have_text("1 of 3 accepts")

            # two more review independently: bob does not see alice's verdicts until he gave his
            bob = sign_in(browser, base, "bob", viewport)
            bob.goto("/items/rh-1")
            expect(bob.locator("#blind")).to_be_visible()
            expect(bob.locator("#status")).to_have_text("awaiting your verdict")
            expect(bob.locator("#turn-1 .verdicts").first).not_to_contain_text("alice")
            expect(bob.locator("#decide")).not_to_contain_text("Accepted by")
            for key in FIVE:
                bob.check(f"input[name=c_2_{key}][value=pass]")
            bob.click("#accept")
            expect(bob.locator(".flash")).to_have_text("Decision saved; the item is 2 of 3 accepts.")
            expect(bob.locator("#turn-1 .verdicts").first).to_contain_text("✓ alice")

            carol = sign_in(browser, base, "carol", viewport)
            carol.goto("/items/rh-1")
            expect(carol.locator("#status")).to_have_text("awaiting your verdict")
            for key in FIVE[:4]:
                carol.check(f"input[name=c_2_{key}][value=pass]")
            carol.check("input[name=c_2_clues][value=fail]")
            carol.click("#accept")
            expect(carol.locator(".flash")).to_contain_text("Not accepted: bath.png v2 fails unintended clues")
            carol.fill("#verdict input[name=note]", "the answer is given away in turn 2")
            carol.click("#reject")
            expect(carol.locator(".flash")).to_have_text("Decision saved; the item is disagreement.")
            carol.goto("/disagreements")
            check(carol, seen)
            expect(carol.locator("tbody")).to_contain_text("accepted by alice, bob; rejected by carol")
            expect(carol.locator("tbody")).to_contain_text("Unintended clues passed by alice, bob, failed by carol")

            # the fix: a new revision reopens the item; all three accept it and it is final
            carol.goto("/items/rh-1")
            carol.click("#turn-2 summary:has-text('Edit this turn')")
            carol.fill("#turn-2 textarea[name=question]", "Which boat will Tom pass to Mia?")
            carol.click("#turn-2 button:has-text('Save turn 2')")
            expect(carol.locator(".flash")).to_have_text("Turn 2 saved (revision 4).")
            expect(carol.locator("#status")).to_have_text("open")
            carol.check("input[name=c_2_clues][value=pass]")
            carol.click("#accept")
            expect(carol.locator(".flash")).to_have_text("Decision saved; the item is 1 of 3 accepts.")
            for reviewer, count in ((alice, "2 of 3 accepts"), (bob, "final")):
                reviewer.goto("/items/rh-1")
                expect(reviewer.locator("#status")).to_have_text("awaiting your verdict")
                reviewer.click("#accept")  # their five passed checks of v2 still stand
                expect(reviewer.locator(".flash")).to_have_text(f"Decision saved; the item is {count}.")

            bob.goto("/?status=final")
            expect(bob.locator(".items tbody tr")).to_have_count(1)
            expect(bob.locator(".items tbody tr .badge").first).to_have_text("✓ final")
            bob.goto("/next")
            expect(bob.locator("h1")).to_have_text("xss-1")  # the next item still waiting for bob
            bob.goto("/stats")
            check(bob, seen)
            row = bob.locator("#table6 tr[data-key=text_artifacts] td")
            expect(row.nth(0)).to_contain_text("1 (100.0%)")  # All images: alice found it first, chose text artifacts
            expect(bob.locator("#table6 thead")).to_contain_text("Final items")
            expect(bob.locator("#pictures-line")).to_contain_text("1 of 1 image(s) erroneous; 1 revised")

            bob.goto("/export")
            check(bob, seen)
            with bob.expect_download() as download:
                bob.click("#export-items")
            rows = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text())))
            assert [(r["item"], r["status"], r["accepted_by"]) for r in rows] == [
                ("rh-1", "final", "alice bob carol"), ("xss-1", "open", "")]
            bob.goto("/account")
            check(bob, seen)
            bob.goto("/items/no-such-item")
            expect(bob.locator("h1")).to_have_text("Not found")
            check(bob, seen)

            store = ReviewDB(db)
            assert store.status("rh-1").final and store.status("rh-1").revision == 4
            out = tmp_path / "reviewed"
            result = CliRunner().invoke(cli, ["review", "export", "--db", str(db), "--out", str(out)])
            assert result.exit_code == 0, result.output
        exported = load_dataset(out)
        assert [st.id for st in exported] == ["rh-1"]
        st = exported.get("rh-1")
        assert st.turns[1].question == "Which boat will Tom pass to Mia?" and st.meta["review"]["reviewers"] == 3
        assert exported.image_bytes("bath.png") == REGENERATED
        assert not has_errors(validate_dataset(exported))


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_two_reviewers_edit_one_item_at_once(browser: Browser, tmp_path: Path, viewport: str) -> None:
    seen: set[str] = set()
    with running_app(tmp_path) as (base, db):
        alice = sign_in(browser, base, "alice", viewport)
        bob = sign_in(browser, base, "bob", viewport)
        for page in (alice, bob):
            page.goto("/items/rh-1")
        alice.click("#turn-1 summary:has-text('Edit this turn')")
        alice.fill("#turn-1 textarea[name=story]", "Three boats float in the bath. The tap hides the big one.")
        alice.click("#turn-1 button:has-text('Save turn 1')")
        expect(alice.locator(".flash")).to_have_text("Turn 1 saved (revision 2).")

        # bob's page still shows revision 1; he edits another turn: merged, nothing asked, nothing lost
        bob.click("#turn-2 summary:has-text('Edit this turn')")
        bob.fill("#turn-2 textarea[name=question]", "Which boat will Tom hand over?")
        bob.click("#turn-2 button:has-text('Save turn 2')")
        expect(bob.locator("#turn-2 .flash")).to_have_text(
            "Turn 2 saved (revision 3). Merged with alice's change to turn 1 story (revision 2), saved since you opened it.")
        st, revision = ReviewDB(db).item("rh-1")
        assert revision == 3 and st.turns[0].story.endswith("The tap hides the big one.")
        assert st.turns[1].question == "Which boat will Tom hand over?"
        # the history shows each change word by word
        history = bob.locator("table.history tbody tr").first.locator("td.change")
        expect(history.locator("del")).to_have_text("pass?")
        expect(history.locator("ins")).to_have_text("hand over?")

        # both change turn 1's story, differently: only that field asks, word by word; the question merges
        alice.goto("/items/rh-1")
        bob.goto("/items/rh-1")
        alice.click("#turn-1 summary:has-text('Edit this turn')")
        alice.fill("#turn-1 textarea[name=story]", "Three boats float in the bath. The tap hides the middle one.")
        alice.click("#turn-1 button:has-text('Save turn 1')")
        expect(alice.locator(".flash")).to_have_text("Turn 1 saved (revision 4).")
        bob.click("#turn-1 summary:has-text('Edit this turn')")
        bob.fill("#turn-1 textarea[name=story]", "Three boats float in the bath. A sponge hides the big one.")
        bob.fill("#turn-1 textarea[name=question]", "Which boat can Tom not see from his seat?")
        bob.click("#turn-1 button:has-text('Save turn 1')")
        expect(bob.locator("h1")).to_contain_text("Not saved: rh-1 changed while you had it open")
        check(bob, seen)
        merge = bob.locator(".merge")
        expect(merge).to_have_count(1)
        expect(merge.locator("h3")).to_have_text("Turn 1 story")
        expect(merge.locator("p").nth(0).locator("del")).to_have_text("big")  # alice's change: one word, not the text
        expect(merge.locator("p").nth(0).locator("ins")).to_have_text("middle")
        expect(merge.locator("p").nth(1).locator("del")).to_have_text("The tap")
        expect(merge.locator("p").nth(1).locator("ins")).to_have_text("A sponge")
        expect(bob.locator("#changed td.change del")).to_have_text(["big"])
        expect(bob.locator("#resolve")).to_contain_text("Merged without asking: Turn 1 feedback (as saved), Turn 1 "
                                                        "question (yours), Turn 1 answers (as saved).")
        assert ReviewDB(db).item("rh-1")[1] == 4  # nothing saved yet
        bob.fill("#resolve textarea[name=story]", "Three boats float in the bath. A sponge hides the middle one.")
        bob.click("#resolve button[type=submit]")
        expect(bob.locator("#turn-1 .flash")).to_contain_text("Turn 1 saved (revision 5).")
        st, _ = ReviewDB(db).item("rh-1")
        assert st.turns[0].story == "Three boats float in the bath. A sponge hides the middle one."
        assert st.turns[0].question == "Which boat can Tom not see from his seat?"
        assert st.turns[1].question == "Which boat will Tom hand over?"


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_an_accept_on_a_stale_revision_is_refused(browser: Browser, tmp_path: Path, viewport: str) -> None:
    with running_app(tmp_path) as (base, db):
        bob = sign_in(browser, base, "bob", viewport)
        bob.goto("/items/rh-1")
        for key in FIVE:
            bob.check(f"input[name=c_1_{key}][value=pass]")
        alice = sign_in(browser, base, "alice", viewport)
        alice.goto("/items/rh-1/versions/1")
        alice.goto("/items/rh-1")
        alice.click("#turn-1 summary:has-text('Edit this turn')")
        alice.fill("#turn-1 textarea[name=story]", "Three boats float in the bath.")
        alice.click("#turn-1 button:has-text('Save turn 1')")
        expect(alice.locator(".flash")).to_have_text("Turn 1 saved (revision 2).")

        bob.click("#accept")  # bob saw revision 1
        expect(bob.locator("h1")).to_contain_text("Not saved: rh-1 changed")
        expect(bob.locator(".conflict")).to_contain_text("You were looking at revision 1; the item is now at revision 2")
        check(bob)
        store = ReviewDB(db)
        assert store.decisions("rh-1") == [] and store.checks(1) == {}
        bob.click("text=Open revision 2 of rh-1")
        expect(bob.locator("#revision")).to_have_text("2")
        for key in FIVE:
            bob.check(f"input[name=c_1_{key}][value=pass]")
        bob.click("#accept")
        expect(bob.locator(".flash")).to_have_text("Decision saved; the item is 1 of 3 accepts.")
        assert [(d["author"], d["revision"]) for d in store.decisions("rh-1")] == [("bob", 2)]


def test_the_page_checks_catch_overflow_and_unlabelled_inputs(browser: Browser) -> None:
    """The two checks above can fail: a page 2000 px wide and an unlabelled file input are caught."""
    page = browser.new_context(viewport=VIEWPORTS["phone"]).new_page()
    page.set_content('<!doctype html><html lang="en"><head><title>t</title></head><body><main>'
                     '<div style="width: 2000px">wide</div></main></body></html>')
    with pytest.raises(AssertionError, match=r"px wider than the 390 px viewport"):
        check_page(page, "wide")
    page.set_content('<!doctype html><html lang="en"><head><title>t</title></head><body><main>'
                     '<input type="file"></main></body></html>')
    with pytest.raises(AssertionError, match="label"):
        check_page(page, "unlabelled")
    page.context.close()
