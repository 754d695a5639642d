"""Defects found by an audit of the two web apps, each pinned against a real server on 127.0.0.1 (and in headless
Chromium where the defect is in the browser)."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import httpx
import playwright.sync_api as playwright_api
import pytest

from commet.apps.review.app import create_app as review_app
from commet.apps.review.db import ReviewDB
from commet.apps.study.app import create_app as study_app
from commet.apps.study.build import build_study, load_study
from commet.apps.study.db import StudyDB
from commet.conditions import UndecidedFeedback
from commet.format.model import StoryTurn
from commet.judges.base import Judge, JudgeRequest, Verdict
from tests.browser_checks import sideways_overflow
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


#: A word longer than a phone is wide (a pasted URL, a hash): it must wrap, not widen the page.
LONG_WORD = "https://example.org/" + "x" * 300
LONGWORDS = {"id": "long-1", "task": "diverse_desire", "category": "Desire", "source": "test",
             "turns": [{"story": "Sam " + LONG_WORD, "question": "Which snack does Sam like, the apple or the " + LONG_WORD
                        + "?", "answers": ["The apple", "The " + LONG_WORD]},
                       {"feedback": {"always": "Look: " + LONG_WORD, "by_answer": [
                           {"answer": "The apple", "text": "So " + LONG_WORD},
                           {"answer": "The " + LONG_WORD, "text": "So the other one."}]},
                        "question": "Does Sam like it, yes or no?", "answers": ["Yes"]}]}
BLIND = {**PLAIN, "id": "blind-1"}
ORGANISER = "organiser pass 42"
BALL = {"id": "ball-1", "task": "false_belief_location", "category": "Belief", "source": "test",
        "turns": [{"story": "Ana puts her ball in the basket and goes out. Ben moves it to the box.", "image": "ball.png",
                   "question": "Where will Ana look for her ball, the basket or the box?", "answers": ["The basket"]},
                  {"feedback": {"right": "Yes, she did not see Ben.", "wrong": "Ana was outside."},
                   "question": "Where is the ball really, the basket or the box?", "answers": ["The box"]}]}


@dataclass
class Study:
    url: str
    db: StudyDB

    def link(self) -> str:
        return f"/p/{self.db.create_participants([0])[0]}"


def write_dataset(folder: Path, *storyturns: dict[str, object]) -> Path:
    (folder / "images").mkdir(parents=True)
    (folder / "images" / "ball.png").write_bytes(small_png((40, 120, 200), (64, 48)))
    (folder / "storyturns.jsonl").write_text("".join(json.dumps(StoryTurn.model_validate(st).model_dump()) + "\n"
                                                     for st in storyturns))
    return folder


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Study]:
    """The study app over BALL (one questionnaire, every picture), with the organiser page on."""
    root = tmp_path_factory.mktemp("audit-study")
    # the answers typed here (long words, 4000 characters) are nothing the rules judge can decide: skip keeps the
    # story going past them (the default, stop, would end it, as a model's)
    build_study(write_dataset(root / "dataset", BALL), root / "study.json", questionnaires=1,
                undecided=UndecidedFeedback.SKIP)
    db = StudyDB(root / "study.sqlite", load_study(root / "study.json")[0].digest())
    with serving(study_app(root / "study.json", root / "study.sqlite", judge="rules",
                           organiser_password=ORGANISER)) as base:
        yield Study(base, db)
    db.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[playwright_api.Browser]:
    with playwright_api.sync_playwright() as p:
        chromium = launch_chromium(p)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def review(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The review app over ODD, PLAIN, LONGWORDS and BLIND, with reviewers alice and bob."""
    folder = write_dataset(tmp_path_factory.mktemp("audit-review") / "dataset", ODD, PLAIN, LONGWORDS, BLIND)
    store = ReviewDB(folder.parent / "review.sqlite")
    store.add_user("alice", PASSWORD)
    store.add_user("bob", PASSWORD)
    with serving(review_app(folder, store)) as base:
        yield base


def csrf_of(html: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', html)
    assert match, "no CSRF field in the page"
    return match.group(1)


@contextmanager
def signed_in_client(base: str, name: str = "alice") -> Iterator[tuple[httpx.Client, str]]:
    """An HTTP client signed in as ``name``, and its session's CSRF token."""
    with httpx.Client(base_url=base, follow_redirects=False) as client:
        token = csrf_of(client.get("/login").text)
        assert client.post("/login", data={"csrf": token, "name": name, "password": PASSWORD}).status_code == 303
        yield client, csrf_of(client.get("/").text)


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


def test_review_odd_numbers_in_forms_and_urls_are_answered_without_a_500(review: str) -> None:
    """A Unicode digit ('²'.isdigit() is True, int('²') fails) in a form's number field, and a picture id too large
    for SQLite in a URL, are a bad request and a missing picture, never an internal error."""
    with signed_in_client(review) as (client, csrf):
        item = "/items/plain-1"
        for field, value in (("revision", "²"), ("revision", "١٢³"), ("turn", "²")):
            fields = {"csrf": csrf, "decision": "reject", "revision": "1", "turn": "0"}
            fields[field] = value
            action = "/edit" if field == "turn" else "/decision"
            response = client.post(item + action, data=fields)
            assert response.status_code == 400, (field, value, response.status_code)
            assert f"field {field} must be a number" in response.text
        huge = "9" * 30
        for path in (f"/pictures/{huge}.png", f"/items/{quote(ODD_ID, safe='')}/versions/{huge}",
                     f"/pictures/{2**63}.png"):
            response = client.get(path)
            assert response.status_code == 404, (path, response.status_code)
            assert "There is no such page or item." in response.text


def test_malformed_requests_get_the_apps_own_error_page_not_a_json_dump(review: str, study: Study) -> None:
    """A form or query field FastAPI cannot bind is a 400 page naming the field, a bad path segment a 404 page;
    neither is FastAPI's JSON validation dump (which echoes the input back)."""
    with signed_in_client(review) as (client, _):
        for path, status, says in (("/?page=abc", 400, "page not understood"),
                                   ("/pictures/abc.png", 404, "There is no such page or item."),
                                   ("/items/plain-1/versions/abc", 404, "There is no such page or item.")):
            response = client.get(path)
            assert (response.status_code, response.headers["content-type"]) == (status, "text/html; charset=utf-8"), path
            assert says in response.text and "int_parsing" not in response.text
    with httpx.Client(base_url=study.url) as client:
        link = study.link()
        csrf = csrf_of(client.get(link).text)
        assert client.post(f"{link}/consent", data={"csrf": csrf, "adult": "yes"}).status_code == 303
        response = client.post(f"{link}/answer", data={"csrf": csrf, "story": "abc", "turn": "0", "response": "x"})
        assert (response.status_code, response.headers["content-type"]) == (400, "text/html; charset=utf-8")
        assert "story not understood" in response.text and "int_parsing" not in response.text
        response = client.get(f"{link}/image/one/0")
        assert (response.status_code, response.headers["content-type"]) == (404, "text/html; charset=utf-8")
        assert "This page does not exist." in response.text
        assert "abc" not in client.post(f"{link}/answer", data={"csrf": csrf, "story": "1", "turn": "abc"}).text


PHONE = {"width": 375, "height": 667}


def test_a_long_word_wraps_instead_of_widening_the_page(browser: playwright_api.Browser, review: str,
                                                        study: Study) -> None:
    """A participant's pasted URL (shown back under "Your answer" and in the out-of-date notice), and a long word
    in a reviewed item's story, expected answers and feedback, wrap at phone width."""
    page = browser.new_page(viewport=PHONE)
    try:
        link = study.link()
        page.goto(study.url + link)
        page.check("#adult")
        page.click("#agree")
        page.fill("#response", LONG_WORD)
        page.click("#submit")
        page.wait_for_selector(".given")
        page.wait_for_load_state()  # the stylesheet, not only the markup
        assert sideways_overflow(page) == 0, "the answer shown back widens the question page"
        page.evaluate("document.querySelector('input[name=turn]').value = '0'")  # as an outdated tab would send it
        page.fill("#response", "Other " + LONG_WORD)
        page.click("#submit")
        page.wait_for_selector("#stale")
        page.wait_for_load_state()
        assert sideways_overflow(page) == 0, "the out-of-date notice widens the page"
    finally:
        page.close()
    page = signed_in_page(browser, review, PHONE)
    try:
        page.goto(f"{review}/items/long-1")
        assert sideways_overflow(page) == 0, "a long word in the item widens the review page"
    finally:
        page.close()


def test_an_answer_as_long_as_the_box_allows_is_saved_with_its_line_breaks(browser: playwright_api.Browser,
                                                                           study: Study) -> None:
    """The textarea takes 4000 characters, counting a line break as one; the form sends each as CRLF. An answer of
    4000 characters in 40 lines was refused ("under 4000 characters") and the kept text cut short."""
    typed = "\n".join(f"{k:02d} " + "a" * 96 for k in range(40))
    assert len(typed) == 3999
    page = browser.new_page()
    try:
        link = study.link()
        page.goto(study.url + link)
        page.check("#adult")
        page.click("#agree")
        page.focus("#response")
        page.keyboard.insert_text(typed + "!")
        assert page.evaluate("document.querySelector('#response').value.length") == 4000
        page.click("#submit")
        page.wait_for_load_state()
        assert page.locator("#error").count() == 0, page.locator("#error").inner_text()
        assert "1 question answered" in page.locator("#where").inner_text()
        (stored,) = study.db.answers(link.removeprefix("/p/"))
        assert stored["response"] == typed + "!"
    finally:
        page.close()


def test_an_edit_without_expected_answers_says_why_it_was_not_saved(browser: playwright_api.Browser,
                                                                    review: str) -> None:
    """Clearing a turn's expected answers was refused with "Edit not saved: 1 validation error for StoryTurn" after
    the page had been left (every other field typed was lost); the browser now keeps the form until the answers
    box is filled, and the server names what is missing."""
    with signed_in_client(review) as (client, csrf):
        response = client.post("/items/plain-1/edit", data={"csrf": csrf, "revision": "1", "turn": "0", "story": "new",
                                                           "question": "Where is the note?", "answers": " \n "})
        assert response.status_code == 303
        page = client.get(response.headers["location"].split("#")[0]).text
        assert "Edit not saved: turn 1 needs at least one expected answer." in page
        assert "validation error" not in page
    page = signed_in_page(browser, review)
    try:
        page.goto(f"{review}/items/plain-1")
        page.click("#turn-1 summary:text('Edit this turn')")
        page.fill("#turn-1 textarea[name=story]", "Ben hides a note in the drawer.")
        page.fill("#turn-1 textarea[name=answers]", "")
        page.click("#turn-1 button:text('Save turn 1')")
        assert page.evaluate("document.querySelector('#turn-1 textarea[name=answers]').validity.valueMissing")
        assert page.input_value("#turn-1 textarea[name=story]") == "Ben hides a note in the drawer."
        assert page.locator("#revision").inner_text() == "1"
    finally:
        page.close()


def test_spreadsheets_and_the_items_list_keep_independent_review_blind(review: str) -> None:
    """Once alice accepted blind-1, bob reviews it blind: the item page hid alice's decision, error filing and notes,
    but the Export page's spreadsheets (and the items list's error count) showed them to him."""
    def rows(client: httpx.Client, name: str) -> list[dict[str, str]]:
        return list(csv.DictReader(io.StringIO(client.get(f"/export/{name}.csv").text)))

    with signed_in_client(review, "alice") as (alice, csrf):
        for path, fields in (("errors", {"category": "other_task", "note": "alice's private doubt"}),
                             ("decision", {"decision": "accept", "note": "alice's accept note"})):
            assert alice.post(f"/items/blind-1/{path}", data={"csrf": csrf, "revision": "1", **fields}).status_code == 303
    with signed_in_client(review, "bob") as (bob, csrf):
        assert "awaiting your verdict" in bob.get("/items/blind-1").text
        (item,) = [row for row in rows(bob, "items") if row["item"] == "blind-1"]
        assert item["status"] == "awaiting your verdict"
        assert (item["accepted_by"], item["errors_filed"], item["decision_notes"]) == ("", "", "")
        assert [row for row in rows(bob, "errors") if row["item"] == "blind-1"] == []
        listed = bob.get("/", params={"q": "blind-1"}).text
        assert re.search(r'<td class="num wide">0</td>\s*<td>–</td>\s*</tr>', listed), "the list counts alice's filing"
        assert bob.post("/items/blind-1/decision", data={"csrf": csrf, "revision": "1", "decision": "reject"}
                        ).status_code == 303
        (item,) = [row for row in rows(bob, "items") if row["item"] == "blind-1"]  # his verdict given: all shown
        assert (item["accepted_by"], item["rejected_by"], item["errors_filed"]) == ("alice", "bob", "other_task")
        assert "alice: alice's accept note" in item["decision_notes"]
        assert [row["note"] for row in rows(bob, "errors") if row["item"] == "blind-1"] == ["alice's private doubt"]


class SlowJudge(Judge):
    """Calls every reply correct after a pause, as an LLM judge takes its time."""

    name = "slow"
    cacheable = False

    async def judge(self, request: JudgeRequest) -> Verdict:
        await asyncio.sleep(0.6)
        return Verdict("correct", 0, "slow", self.name)


def test_two_tabs_answering_the_same_question_at_once_are_told_which_answer_was_not_saved(tmp_path: Path) -> None:
    """Two answers to one question sent while the judge is still deciding the first: one is stored; the other was
    dropped silently (the page moved on as if it had been saved). It gets the out-of-date notice with its text."""
    build_study(write_dataset(tmp_path / "dataset", BALL), tmp_path / "study.json", questionnaires=1)
    app = study_app(tmp_path / "study.json", tmp_path / "study.sqlite", judge=SlowJudge())
    db = StudyDB(tmp_path / "study.sqlite", load_study(tmp_path / "study.json")[0].digest())
    link = f"/p/{db.create_participants([0])[0]}"
    with serving(app) as base, httpx.Client(base_url=base) as first, httpx.Client(base_url=base) as second:
        csrf = csrf_of(first.get(link).text)
        assert first.post(f"{link}/consent", data={"csrf": csrf, "adult": "yes"}).status_code == 303
        forms = [(first, csrf, "In the basket"), (second, csrf_of(second.get(link).text), "In the box, I think")]
        with ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(lambda form: form[0].post(f"{link}/answer", data={
                "csrf": form[1], "story": "1", "turn": "0", "response": form[2]}), forms))
    (stored,) = db.answers(link.removeprefix("/p/"))
    db.close()
    ((text, lost),) = [(text, response) for (_, _, text), response in zip(forms, answers, strict=True)
                       if text != stored["response"]]
    assert lost.status_code == 409
    assert "was <strong>not saved</strong>" in lost.text
    assert f'<q id="stale-text">{text}</q>' in lost.text


def test_an_answer_from_a_page_whose_session_ended_is_kept_and_can_be_sent_again(browser: playwright_api.Browser,
                                                                                   study: Study) -> None:
    """A participant's session (and with it the form's CSRF token) ends after two idle days or when cookies are
    cleared; pressing Answer on a page left open gave a bare 'Sorry: missing or invalid CSRF token' and the typed
    answer was lost. The question comes back with the text in the box and a fresh token; nothing was stored."""
    context = browser.new_context()
    page = context.new_page()
    try:
        link = study.link()
        page.goto(study.url + link)
        page.check("#adult")
        context.clear_cookies()  # the consent page outlived its session
        page.click("#agree")
        assert "press the button again" in page.locator("#error").inner_text()
        page.check("#adult")
        page.click("#agree")
        page.fill("#response", "In the basket, she did not see Ben.")
        context.clear_cookies()
        page.click("#submit")
        assert "your answer was not sent" in page.locator("#error").inner_text()
        assert page.input_value("#response") == "In the basket, she did not see Ben."
        assert study.db.answers(link.removeprefix("/p/")) == []
        context.clear_cookies()
        page.click("#pause")  # a break from an expired page keeps the text too
        assert page.input_value("#response") == "In the basket, she did not see Ben."
        page.click("#submit")
        assert "1 question answered" in page.locator("#where").inner_text()
        (stored,) = study.db.answers(link.removeprefix("/p/"))
        assert stored["response"] == "In the basket, she did not see Ben."
    finally:
        context.close()


def test_review_and_study_on_one_host_keep_their_own_sessions(browser: playwright_api.Browser, review: str,
                                                              study: Study) -> None:
    """Cookies ignore the port: with one cookie name, opening the study (on another port of 127.0.0.1) replaced the
    reviewer's session cookie and signed them out of the review app, and the review sign-in page did the same to
    the study's organiser."""
    page = signed_in_page(browser, review)
    try:
        page.goto(study.url + study.link())
        page.goto(f"{study.url}/organiser")
        page.fill("#password", ORGANISER)
        page.click("#login")
        assert page.locator("h1").inner_text().startswith("Organiser: ")
        page.goto(f"{review}/")
        assert page.url == f"{review}/", "opening the study signed the reviewer out"
        page.goto(f"{review}/login")
        page.goto(f"{study.url}/organiser")
        assert page.locator("h1").inner_text().startswith("Organiser: "), "the review app signed the organiser out"
    finally:
        page.close()


def test_reloading_the_organiser_page_after_creating_links_creates_no_more(browser: playwright_api.Browser,
                                                                           study: Study) -> None:
    """The new links were the answer to the POST itself, so reloading that page (to see progress) sent the form
    again and created another batch. Now the POST redirects to the organiser page, which shows them once."""
    page = browser.new_page()
    try:
        page.goto(f"{study.url}/organiser")
        page.fill("#password", ORGANISER)
        page.click("#login")
        before = len(study.db.participants())
        page.fill("#count", "3")
        page.click("#create-links")
        page.wait_for_load_state()
        assert page.url == f"{study.url}/organiser#new-links"
        shown = page.locator("#new-links code").all_inner_texts()
        assert len(shown) == 3 and len(study.db.participants()) == before + 3
        assert all(link.startswith(f"{study.url}/p/") for link in shown)
        page.reload()
        page.wait_for_load_state()
        assert len(study.db.participants()) == before + 3, "the reload created more links"
        assert page.locator("#new-links").count() == 0  # shown once
        assert page.locator("#participants tbody tr").count() == before + 3
    finally:
        page.close()
