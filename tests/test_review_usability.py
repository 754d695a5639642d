"""The review app for people: it reflows at 320 CSS px (WCAG 1.4.10) and at 200 % text on a phone (WCAG 1.4.4) without
sideways scrolling, a form sent after the session ended says so on the sign-in page, and signing in leads back to
where the reviewer was."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect, sync_playwright

from commet.apps.review.db import ReviewDB
from tests.browser_checks import PHONE, check_page
from tests.conftest import launch_chromium
from tests.review_server import PASSWORD, running_app

REFLOW = {"width": 320, "height": 640}
LONG_NAME = "reviewer-with-a-rather-long-name"


def _sign_in(page: Page) -> None:
    """Sign in as alice from the sign-in page, as a reviewer does (the page's own form)."""
    page.goto("/login")
    page.fill("input[name=name]", "alice")
    page.fill("input[name=password]", PASSWORD)
    page.click("main button[type=submit]")


def test_item_page_with_picture_checks_fits_320_px_and_200_percent_text(tmp_path: Path) -> None:
    with running_app(tmp_path) as (base, db_path), sync_playwright() as p:
        store = ReviewDB(db_path)
        reviewer = store.add_user(LONG_NAME, PASSWORD)
        [picture] = store.current_pictures("rh-1").values()
        store.record_checks(picture.id, reviewer, {"text_artifacts": True, "spatial": False, "narrative": True,
                                                   "duplication": True, "clues": True}, prominent="spatial")
        browser = launch_chromium(p)
        page = browser.new_page(viewport=REFLOW, base_url=base)
        _sign_in(page)
        expect(page.locator("h1")).to_have_text("Items")
        for path in ("/items/rh-1", f"/items/rh-1/versions/{picture.id}", "/stats"):
            page.goto(path)
            check_page(page, f"{path} at 320 px")
        page.set_viewport_size(PHONE)  # a phone with its text at 200 % (WCAG 1.4.4): still no sideways scrolling
        for path in ("/", "/items/rh-1", "/stats"):
            page.goto(path)
            page.evaluate("document.documentElement.style.fontSize = '200%'")
            check_page(page, f"{path} at 390 px with 200 % text", axe=False)
        page.goto("/items/rh-1")
        region = page.get_by_role("region", name=f"Picture checks of {picture.image_id}")
        expect(region.get_by_text(LONG_NAME)).to_have_count(5)  # one verdict a criterion: the other reviewers' verdicts stay readable
        browser.close()


def test_a_form_sent_after_the_session_ended_says_so_on_the_sign_in_page(tmp_path: Path) -> None:
    """Before: a bare ``sign in first`` line (no title, no language, no way on) and the decision silently lost."""
    with running_app(tmp_path) as (base, _), sync_playwright() as p:
        browser = launch_chromium(p)
        context = browser.new_context(viewport=PHONE, base_url=base)
        page = context.new_page()
        _sign_in(page)
        expect(page.locator("h1")).to_have_text("Items")
        page.goto("/items/xss-1")
        context.clear_cookies()  # the session ends while the reviewer reads the item
        with page.expect_response(f"{base}/items/xss-1/decision") as sent:
            page.click("#accept")
        assert sent.value.status == 401
        expect(page.get_by_role("alert")).to_have_text(
            "You are signed out (the session ended, or this browser dropped its cookie), so what you just sent "
            "was not saved. Sign in, then do it again.")
        check_page(page, "signed-out page at 390 px")
        page.fill("input[name=name]", "alice")
        page.fill("input[name=password]", PASSWORD)
        page.keyboard.press("Enter")  # the sign-in form on that page works by keyboard alone
        # back on the item whose decision was lost, to do it again (before: the item list, the item to find again)
        expect(page).to_have_url(f"{base}/items/xss-1")
        browser.close()


def test_signing_in_leads_back_to_the_page_asked_for(tmp_path: Path) -> None:
    """A link to an item opened while signed out (a bookmark, a link from a colleague, a session that ended) leads,
    after the sign-in, to that item and its query, not to the item list; nothing else is remembered."""
    with running_app(tmp_path) as (base, _), sync_playwright() as p:
        browser = launch_chromium(p)
        context = browser.new_context(viewport=PHONE, base_url=base)
        page = context.new_page()
        page.goto("/items/xss-1")
        expect(page).to_have_url(f"{base}/login")
        page.goto("/items/rh-1")  # the last page asked for is the one gone back to
        page.fill("input[name=name]", "alice")
        page.fill("input[name=password]", "not the password")
        page.click("main button[type=submit]")  # a failed try keeps where to go back to
        expect(page.get_by_text("Unknown user or wrong password.")).to_be_visible()
        page.fill("input[name=name]", "alice")
        page.fill("input[name=password]", PASSWORD)
        page.click("main button[type=submit]")
        expect(page).to_have_url(f"{base}/items/rh-1")
        page.click("form.signout button")
        page.goto("/?q=xss")  # a search: its query kept
        page.fill("input[name=name]", "alice")
        page.fill("input[name=password]", PASSWORD)
        page.click("main button[type=submit]")
        expect(page).to_have_url(f"{base}/?q=xss")
        page.click("form.signout button")
        _sign_in(page)  # signing in from the sign-in page itself: the item list, not the page of the last session
        expect(page).to_have_url(f"{base}/")
        browser.close()


def test_review_pictures_are_not_kept_by_the_browser(tmp_path: Path) -> None:
    """A picture seen while signed in is not in the browser's cache after sign-out (before: kept 5 minutes)."""
    with running_app(tmp_path) as (base, _), sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_context(base_url=base).new_page()
        _sign_in(page)
        with page.expect_response(lambda response: "/images/" in response.url) as served:
            page.goto("/items/rh-1")
        assert served.value.status == 200 and served.value.headers["cache-control"] == "no-store"
        browser.close()


def test_a_search_that_matches_nothing_says_so_and_leads_back(tmp_path: Path) -> None:
    """Before: the bare ``No items.`` of an empty dataset, whatever the search."""
    with running_app(tmp_path) as (base, _), sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_page(viewport=PHONE, base_url=base)
        _sign_in(page)
        page.fill("input[name=q]", "no such boat")
        page.select_option("select[name=status]", "mine")
        page.press("input[name=q]", "Enter")  # Enter in the search box sends the filter form
        expect(page.locator("#none")).to_have_text(
            "No item matches “no such boat” with the filter “Open for me”: show all items.")
        check_page(page, "empty search at 390 px")
        page.get_by_role("link", name="show all items").click()
        expect(page.locator("#count")).to_have_text("2 items.")
        browser.close()


def test_enter_in_a_note_sends_nothing_and_never_decides(tmp_path: Path) -> None:
    """Before: Enter in the decision's note (typing why the item is wrong) pressed the form's first button, Accept."""
    with running_app(tmp_path) as (base, db_path), sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_page(viewport=PHONE, base_url=base)
        sent: list[str] = []
        page.on("request", lambda request: sent.append(request.url) if request.method == "POST" else None)
        _sign_in(page)
        expect(page.locator("h1")).to_have_text("Items")
        sent.clear()
        for item, field in (("xss-1", "#verdict [name=note]"), ("rh-1", "#verdict [name=note]"),
                            ("rh-1", "input[name^=note_]")):
            page.goto(f"/items/{item}")
            page.locator(field).fill("the story gives the answer away")
            page.locator(field).press("Enter")
            page.wait_for_timeout(300)  # a form sent by Enter would be on its way by now
            expect(page.locator("#my-decision")).to_have_text("none yet")
            assert sent == [], (item, field)
        page.locator("input[name^=c_][value=fail]").first.check()
        page.keyboard.press("Enter")  # on a check radio Chromium presses the first enabled button: a save, no decision
        page.wait_for_timeout(300)
        expect(page.locator("#my-decision")).to_have_text("none yet")
        assert not [url for url in sent if url.endswith("/decision")]
        store = ReviewDB(db_path)
        assert store.status("xss-1").accepts == [] and store.status("rh-1").accepts == []
        page.goto("/items/xss-1")  # the buttons still work from the keyboard
        page.fill("#verdict [name=note]", "fine")
        page.focus("#accept")
        page.keyboard.press("Enter")
        expect(page.locator("#my-decision")).to_have_text("✓ accept")
        browser.close()
