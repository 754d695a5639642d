"""A volunteer's whole study in headless Chromium at 1400x900 and 390x844 (issue 19, point 3).

Consent (duration, adult confirmation, contact, guidance), a whole questionnaire at human
speed (typing key by key, pausing to read) and at a fast pace (47 answers as fast as the
browser goes) without being locked out, a break that keeps typed text, a stale second tab
that is told, feedback styled by kind, and the organiser's undecided counts. Every page is
checked for sideways overflow and with axe-core. With ``COMMET_SCREENSHOTS=DIR`` the main
pages are also photographed into DIR (``scripts/study_screenshots.sh`` refreshes docs/study).
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import playwright.sync_api as playwright_api
import pytest
import uvicorn

from commet.apps.study.app import create_app
from commet.apps.study.build import Questionnaire, build_study
from commet.apps.study.db import StudyDB
from tests.browser_checks import DESKTOP, PHONE, check_page
from tests.conftest import launch_chromium
from tests.test_study_web import write_dataset

PASSWORD = "organiser secret 42"
SHOTS = os.environ.get("COMMET_SCREENSHOTS")
VIEWPORTS = {"desktop": DESKTOP, "phone": PHONE}
COLOURS = ["red", "blue", "green", "yellow", "white", "black", "pink", "brown", "grey", "orange"]


def counting_story(n: int) -> dict[str, object]:
    """A four-turn StoryTurn with closed questions: ten of these make the long questionnaire."""
    colour, other = COLOURS[n], COLOURS[(n + 1) % len(COLOURS)]
    return {"id": f"cups-{n}", "task": "true_belief_action", "category": "Intention", "image_dependent": False,
            "turns": [
                {"story": f"Lea has a {colour} cup and a {other} cup. She says: I will drink from the {colour} cup.",
                 "question": f"Which cup will Lea drink from, the {colour} one or the {other} one?",
                 "answers": [colour.title()]},
                {"feedback": {"right": "Yes, she said so.", "wrong": f"Remember, she said the {colour} cup."},
                 "story": "Tom moves both cups to the shelf while Lea watches.",
                 "question": "Does Lea know where the cups are now, yes or no?", "answers": ["Yes"]},
                {"question": "Where will Lea look for her cup, the shelf or the table?", "answers": ["Shelf"]},
                {"feedback": {"right": "That's right.", "wrong": "She saw Tom move them."},
                 "question": "Is Lea surprised to find her cup on the shelf, yes or no?", "answers": ["No"]},
            ]}


LONG = [counting_story(n) for n in range(10)]
#: Replies for the long questionnaire (right answers, typed tersely the way a hurried person would).
FAST_REPLIES = {s["id"]: [s["turns"][0]["answers"][0].lower(), "yes", "the shelf", "no"] for s in LONG}
FAST_REPLIES.update({"snack-1": ["Apple", "Chocolate", "Yes"], "ball-1": ["The basket", "The box"],
                     "muffin-1": ["The medium one", "No"]})
SHORT_ORDER = ["snack-1", "ball-1", "muffin-1"]
FEEDBACK_PAGES = {("snack-1", 1), ("snack-1", 2), ("ball-1", 1)}
LONG_ORDER = [*SHORT_ORDER, *(s["id"] for s in LONG)]
#: Human-speed replies: full sentences, the second snack answer wrong (a correction follows).
HUMAN_REPLIES = {"snack-1": ["I would pick the apple.", "He will pick the apple.", "Yes, he is happy."],
                 "ball-1": ["She will look in the basket.", "It is really in the box."],
                 # the rules judge cannot decide this one (it names both muffins) and the next turn's feedback rests
                 # on it: the story ends there, as a model's does under `commet eval`'s default
                 "muffin-1": ["The medium one, he cannot see the big one."]}


@dataclass
class Served:
    url: str
    db_path: Path
    digest: str

    def link(self, questionnaire: int) -> str:
        db = StudyDB(self.db_path, self.digest)
        try:
            return f"{self.url}/p/{db.create_participants([questionnaire])[0]}"
        finally:
            db.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("volunteer")
    dataset = write_dataset(root / "ds")
    with (dataset / "storyturns.jsonl").open("a") as out:
        for story in LONG:
            out.write(json.dumps(story) + "\n")
    study = build_study(dataset, root / "study.json", questionnaires=2, seed=1)
    # by hand: 0 = the three stories with every picture, 1 = those and the ten long ones, pictures where needed
    study.questionnaires = [Questionnaire(index=0, image_policy="all", storyturns=SHORT_ORDER),
                            Questionnaire(index=1, image_policy="needed", storyturns=LONG_ORDER)]
    study.save(root / "study.json")
    web = create_app(root / "study.json", root / "study.sqlite", judge="rules", organiser_password=PASSWORD)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(web, access_log=False, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started
    yield Served(f"http://127.0.0.1:{sock.getsockname()[1]}", root / "study.sqlite", study.digest())
    server.should_exit = True
    thread.join(timeout=10)
    sock.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with playwright_api.sync_playwright() as p:
        chromium = launch_chromium(p)
        yield chromium
        chromium.close()


def shot(page, name: str) -> None:  # noqa: ANN001 - playwright Page
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)


#: The consent page's duration, by hand: half a minute per story and per typed answer, rounded up to 5 minutes.
DURATION = {0: "It takes about 5 minutes: 3 short stories and 7 questions",  # 1.5 + 3.5
            1: "It takes about 30 minutes: 13 short stories and 47 questions"}  # 6.5 + 23.5


def consent(page, viewport: str) -> None:  # noqa: ANN001
    """The consent page tells duration, contact and guidance, and needs the adult confirmation."""
    check_page(page, f"consent ({viewport})")
    text = page.inner_text("main")
    assert " ".join(page.inner_text("#duration").split()).startswith(tuple(DURATION.values()))
    assert "Contact" in text and "How to answer" in text and "18 years old or older" in text
    shot(page, f"consent-{viewport}")
    page.click("#agree")  # the browser refuses: the box is required
    assert page.locator("#where").count() == 0
    page.check("#adult")
    page.click("#agree")
    page.wait_for_selector("#where")


def answered_count(served: Served, link: str) -> int:
    token = link.rsplit("/", 1)[1]
    with sqlite3.connect(served.db_path) as db:
        return db.execute("SELECT COUNT(*) FROM answers WHERE token = ?", (token,)).fetchone()[0]


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_volunteer_at_human_speed(served: Served, browser, viewport: str) -> None:  # noqa: ANN001
    """Typing key by key and pausing to read; a break keeps the typed text; feedback styled by its kind."""
    link = served.link(0)
    context = browser.new_context(viewport=VIEWPORTS[viewport])
    page = context.new_page()
    page.goto(link)
    consent(page, viewport)
    styles: dict[str, str] = {}
    for number, story_id in enumerate(SHORT_ORDER, start=1):
        for k, reply in enumerate(HUMAN_REPLIES[story_id]):
            assert page.inner_text("#where").startswith(f"Story {number} of 3")
            if page.locator("#feedback").count():
                styles[page.inner_text("#feedback")] = page.get_attribute("#feedback", "class")
            # axe on each story's first page and on the first page after each kind of feedback
            check_page(page, f"question {story_id}/{k} ({viewport})", axe=k == 0 or (story_id, k) in FEEDBACK_PAGES)
            page.wait_for_timeout(150)  # reading
            page.click("#response")
            if (story_id, k) == ("ball-1", 0):  # a break half-way through typing keeps the text
                page.keyboard.type("She will look", delay=25)
                page.click("#pause")
                check_page(page, f"break ({viewport})")
                shot(page, f"break-{viewport}")
                page.click("#continue")
                assert page.input_value("#response") == "She will look"
                page.fill("#response", "")
                page.click("#response")
            page.keyboard.type(reply, delay=25)
            if (story_id, k) == ("snack-1", 2):
                shot(page, f"question-{viewport}")
            page.click("#submit")
            page.wait_for_load_state()
    assert "reached the end of the study" in page.inner_text("#message")
    check_page(page, f"done ({viewport})")
    # "So you like the apple." is story information; the wrong pick brings a correction; "That's right" confirms
    assert styles["So you like the apple."] == "feedback feedback-info"
    assert styles["Actually, Sam picks the other snack."] == "feedback feedback-correction"
    assert styles["That's right, she did not see Ben move it."] == "feedback feedback-right"
    assert answered_count(served, link) == 6
    context.close()


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_volunteer_at_a_fast_pace_is_never_locked_out(served: Served, browser, viewport: str) -> None:  # noqa: ANN001
    """47 answers as fast as the browser goes, each with its page load (and pictures): no limit is met."""
    link = served.link(1)
    context = browser.new_context(viewport=VIEWPORTS[viewport])
    page = context.new_page()
    page.goto(link)
    consent(page, viewport)
    started = time.monotonic()
    statuses: list[int] = []
    page.on("response", lambda r: statuses.append(r.status))
    for number, story_id in enumerate(LONG_ORDER, start=1):
        for reply in FAST_REPLIES[story_id]:
            assert page.inner_text("#where").startswith(f"Story {number} of 13"), page.inner_text("main")[:300]
            page.fill("#response", reply)
            page.click("#submit")
            page.wait_for_load_state()
        if number in (1, 4):
            check_page(page, f"question after story {number} ({viewport})")
    elapsed = time.monotonic() - started
    assert "reached the end of the study" in page.inner_text("#message")
    assert 429 not in statuses and answered_count(served, link) == 47
    assert elapsed < 60, "the pace must be faster than the one-answer-a-second limit allows over a minute"
    context.close()


def test_stale_second_tab_is_told_and_nothing_is_lost(served: Served, browser) -> None:  # noqa: ANN001
    link = served.link(0)
    context = browser.new_context(viewport=PHONE)
    first = context.new_page()
    first.goto(link)
    consent(first, "phone")
    second = context.new_page()
    second.goto(link)
    first.fill("#response", "Apple")
    first.click("#submit")
    first.wait_for_load_state()
    second.fill("#response", "Chocolate, from the old tab")
    second.click("#submit")
    second.wait_for_load_state()
    assert "not saved" in second.inner_text("#stale")
    assert second.inner_text("#stale-text") == "Chocolate, from the old tab"
    assert second.inner_text("#feedback") == "So you like the apple."  # the question the person is at now
    check_page(second, "stale tab (phone)")
    shot(second, "stale-tab-phone")
    assert answered_count(served, link) == 1
    context.close()


def test_organiser_sees_undecided_answers_and_fits_a_phone(served: Served, browser) -> None:  # noqa: ANN001
    link = served.link(0)
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    page.goto(link)
    consent(page, "phone")
    for reply in ("Hmm, something sweet", "Hard to say", "Maybe"):  # the rules judge cannot decide these
        page.fill("#response", reply)
        page.click("#submit")
        page.wait_for_load_state()
    for viewport in ("phone", "desktop"):
        page.set_viewport_size(VIEWPORTS[viewport])
        page.goto(served.url + "/organiser")
        if page.locator("#password").count():
            check_page(page, f"organiser login ({viewport})")
            page.fill("#password", PASSWORD)
            page.click("#login")
            page.wait_for_load_state()
        assert "answers are undecided" in page.inner_text("#undecided-warning")
        row = page.locator("#participants tbody tr.flagged")
        assert row.count() >= 1 and "3" in row.first.locator("td.undecided").inner_text()
        first = page.locator("#participants tbody tr").first
        link_height = first.locator("td.link").bounding_box()["height"]
        assert link_height == first.locator("td").first.bounding_box()["height"] < 40, "a link must stay on one line"
        check_page(page, f"organiser ({viewport})")
        shot(page, f"organiser-{viewport}")
    context.close()
