"""A study run on a paid panel, end to end in headless Chromium at 1400x900 and 390x844 (issue 45, point 1).

``study build --panel prolific`` with a code per ending, ``study links --panel`` gives the one link for
Prolific, and people arrive with Prolific's ids (and MTurk's, and a generic ``pid``): each gets their own
questionnaire, comes back to it, and ends with the code and return link of how they ended (completed,
withdrew, screened out). Ids are stored and exported, never shown to another participant, and bad ids,
previews, links without an id and wrong keys are refused. With ``COMMET_SCREENSHOTS=DIR`` the panel pages
are photographed into DIR (docs/study.md's walkthrough).
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
from urllib.parse import urlsplit

import playwright.sync_api as playwright_api
import pytest
import uvicorn
from playwright.sync_api import expect
from typer.testing import CliRunner

from commet.apps.study.app import create_app
from commet.cli import app as cli
from commet.format import Dataset, StoryTurn, Turn
from commet.format.model import Feedback
from tests.browser_checks import DESKTOP, PHONE, check_page
from tests.conftest import launch_chromium

SHOTS = os.environ.get("COMMET_SCREENSHOTS")
PASSWORD = "organiser secret 45"
CONTACT = "Dr. Ana Berg, Story Lab, University of Example: ana.berg@example.org"
STORIES = [
    StoryTurn(id="ball", task="false_belief_location", category="Belief", turns=[
        Turn(story="Ana puts her ball in the basket and goes out. Ben moves it to the box.",
             question="Where will Ana look for her ball, the basket or the box?", answers=["The basket"]),
        Turn(feedback=Feedback(right="Yes, she did not see Ben move it.", wrong="Remember, Ana was outside."),
             question="Where is the ball really, the basket or the box?", answers=["The box"])]),
    StoryTurn(id="cup", task="true_belief_action", category="Intention", turns=[
        Turn(story="Lea has a red cup and a blue cup. She says: I will drink from the red cup.",
             question="Which cup will Lea drink from, the red one or the blue one?", answers=["The red one"])]),
]
REPLIES = {"ball": ["The basket", "The box"], "cup": ["The red one"]}
CODES = {"completed": "C7F2A9", "withdrew": "W0D4E1", "screened_out": "S3B8C2"}
PROLIFIC_RETURN = "https://app.prolific.com/submissions/complete?cc="


@dataclass
class Panel:
    url: str
    entry: str  # what `study links --panel prolific` printed, host and port as served
    study: Path
    db: Path


@pytest.fixture(scope="module")
def panel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Panel]:
    root = tmp_path_factory.mktemp("panel")
    folder = Dataset(STORIES, name="panel").save(root / "ds")
    built = CliRunner().invoke(cli, [
        "study", "build", "--dataset", str(folder), "--out", str(root / "study.json"), "--questionnaires", "2",
        "--contact", CONTACT, "--panel", "prolific", "--completion-code", CODES["completed"], "--withdrew-code",
        CODES["withdrew"], "--screened-out-code", CODES["screened_out"]])
    assert built.exit_code == 0, built.output
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    links = CliRunner().invoke(cli, ["study", "links", str(root / "study.json"), "--db", str(root / "study.sqlite"),
                                     "--panel", "prolific", "--base-url", url])
    assert links.exit_code == 0, links.output
    web = create_app(root / "study.json", root / "study.sqlite", judge="rules", organiser_password=PASSWORD)
    server = uvicorn.Server(uvicorn.Config(web, access_log=False, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started
    yield Panel(url, links.output.strip(), root / "study.json", root / "study.sqlite")
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


def prolific(entry: str, pid: str, session: str = "SES1") -> str:
    """The link as Prolific opens it: its placeholders filled with this participant's ids."""
    return (entry.replace("{{%PROLIFIC_PID%}}", pid).replace("{{%STUDY_ID%}}", "STUDY42")
            .replace("{{%SESSION_ID%}}", session))


def answer_everything(page) -> None:  # noqa: ANN001
    """Answer each question the page asks (the questionnaire's order is the server's: told by the question)."""
    while page.locator("#response").count():
        question = page.inner_text("#question")
        story = next(s.id for s in STORIES if any(t.question == question for t in s.turns))
        page.fill("#response", REPLIES[story][int(page.input_value("input[name=turn]"))])
        with page.expect_navigation():
            page.click("#submit")


def test_a_prolific_participant_completes_and_gets_the_completion_code(panel: Panel, browser) -> None:  # noqa: ANN001
    """On a laptop; the phone's pages are checked by the tests below (decline, screen-out, stop)."""
    viewport = "desktop"
    entry = urlsplit(panel.entry)
    assert entry.path.startswith("/join/") and entry.query == (
        "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}")
    pid = f"5f1c{viewport}0a9b8c7d6e5f4a3b"
    context = browser.new_context(viewport=DESKTOP if viewport == "desktop" else PHONE)
    page = context.new_page()
    page.goto(prolific(panel.entry, pid))
    assert "/p/" in page.url and pid not in page.url  # the ids are kept by the server, not left in the address
    own = page.url
    check_page(page, f"consent ({viewport})")
    assert CONTACT in page.inner_text("#contact")
    shot(page, f"panel-consent-{viewport}")
    page.check("#adult")
    with page.expect_navigation():
        page.click("#agree")
    answer_everything(page)
    expect(page.locator("#code")).to_have_text(CODES["completed"])
    back = page.locator("#return")
    assert back.get_attribute("href") == PROLIFIC_RETURN + CODES["completed"] and "Prolific" in back.inner_text()
    check_page(page, f"completion ({viewport})")
    shot(page, f"panel-completed-{viewport}")
    assert pid not in page.content()
    # Prolific's link again (a reload, a second click): the same participant, still finished
    page.goto(prolific(panel.entry, pid))
    assert page.url == own and page.inner_text("#code") == CODES["completed"]
    # the id with another Prolific session (someone who learnt the id): not let into this participant's study
    other = page.goto(prolific(panel.entry, pid, session="SES2"))
    assert other is not None and other.status == 403 and "/join/" in page.url and "another" in page.content()
    context.close()
    with sqlite3.connect(panel.db) as db:
        row = db.execute("SELECT panel, panel_study, panel_session, ending FROM participants WHERE panel_pid = ?",
                         (pid,)).fetchone()
    assert row == ("prolific", "STUDY42", "SES1", "completed")


def test_declining_and_screening_out_give_their_own_codes(panel: Panel, browser) -> None:  # noqa: ANN001
    for button, ending, viewport in (("#withdraw", "withdrew", PHONE), ("#screened-out", "screened_out", DESKTOP)):
        context = browser.new_context(viewport=viewport)
        page = context.new_page()
        page.goto(prolific(panel.entry, f"60aa{ending}"))
        with page.expect_navigation():
            page.click(button)
        expect(page.locator("#code")).to_have_text(CODES[ending])
        assert page.get_attribute("#return", "href") == PROLIFIC_RETURN + CODES[ending]
        check_page(page, f"{ending} ({viewport['width']} px)")
        shot(page, f"panel-{ending.replace('_', '-')}-{'phone' if viewport is PHONE else 'desktop'}")
        page.goto(page.url)  # the link is closed: the same ending again, the consent page never
        assert page.inner_text("#code") == CODES[ending] and page.locator("#agree").count() == 0
        token = page.url.rsplit("/", 1)[1]
        late = page.request.post(f"{panel.url}/p/{token}/consent", form={"csrf": "x", "adult": "yes"})
        assert late.ok and CODES[ending] in late.text()  # a consent sent afterwards does not reopen it
        context.close()


def test_stopping_part_way_gives_the_withdrew_code(panel: Panel, browser) -> None:  # noqa: ANN001
    page = browser.new_page(viewport=PHONE)
    page.goto(prolific(panel.entry, "61bbstopper"))
    check_page(page, "consent (phone)")
    assert "keep the participant id Prolific gave" in page.inner_text("#panel-id-note")
    shot(page, "panel-consent-phone")
    page.check("#adult")
    with page.expect_navigation():
        page.click("#agree")
    page.fill("#response", "The basket")
    with page.expect_navigation():
        page.click("#submit")
    page.click("#stop")
    with page.expect_navigation():
        page.click("#confirm-stop")
    expect(page.locator("#code")).to_have_text(CODES["withdrew"])
    assert "You stopped the study" in page.inner_text("#message")
    check_page(page, "withdrew part way (phone)")
    page.close()


def test_mturk_generic_ids_previews_and_bad_links(panel: Panel, browser) -> None:  # noqa: ANN001
    join = panel.entry.split("?")[0]
    page = browser.new_page(viewport=PHONE)
    preview = page.goto(join + "?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H1")
    assert preview.status == 200 and "preview" in page.inner_text("#message")
    page.goto(join + "?workerId=A1B2C3D4E5F6G7&assignmentId=3ABC&hitId=3HIT&turkSubmitTo=https://www.mturk.com")
    assert "/p/" in page.url and page.locator("#agree").count() == 1
    page.goto(join + "?pid=volunteer-17")
    assert "/p/" in page.url
    for query, status, said in (("?PROLIFIC_PID=<script>", 400, "not valid"), ("", 400, "lacks the participant id"),
                                ("?pid=" + "x" * 101, 400, "not valid")):
        response = page.goto(join + query)
        assert response.status == status and said in page.inner_text("#message"), query
    assert page.goto(panel.url + "/join/not-the-key?pid=someone").status == 404
    page.close()
    with sqlite3.connect(panel.db) as db:
        rows = dict(db.execute("SELECT panel_pid, panel || ':' || IFNULL(panel_session, '') FROM participants"))
    assert rows["A1B2C3D4E5F6G7"] == "mturk:3ABC" and rows["volunteer-17"] == "generic:"
    assert not any(pid.startswith("<") for pid in rows)


def test_a_personal_link_keeps_the_panel_id_it_was_opened_with(panel: Panel, browser) -> None:  # noqa: ANN001
    made = CliRunner().invoke(cli, ["study", "links", str(panel.study), "--db", str(panel.db), "--base-url",
                                    panel.url])
    assert made.exit_code == 0, made.output
    link = made.output.strip()
    page = browser.new_page()
    page.goto(link + "?pid=personal-9")
    assert page.url == link and page.locator("#agree").count() == 1
    page.goto(link + "?pid=someone-else")  # a link keeps its first id
    page.close()
    with sqlite3.connect(panel.db) as db:
        assert db.execute("SELECT panel_pid FROM participants WHERE token = ?",
                          (link.rsplit("/", 1)[1],)).fetchone() == ("personal-9",)


def test_ids_are_exported_and_shown_only_to_the_organiser(panel: Panel, browser, tmp_path: Path) -> None:  # noqa: ANN001
    # a participant of its own, so that the test stands alone
    page = browser.new_page()
    page.goto(prolific(panel.entry, "62ccexported"))
    page.check("#adult")
    with page.expect_navigation():
        page.click("#agree")
    answer_everything(page)
    page.goto(prolific(panel.entry, "63ddsomeoneelse"))  # another participant's pages hold no one else's id
    assert "62ccexported" not in page.content()
    out = tmp_path / "answers.jsonl"
    exported = CliRunner().invoke(cli, ["study", "export", str(panel.study), "--db", str(panel.db), "--out", str(out)])
    assert exported.exit_code == 0, exported.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    mine = [r for r in records if r["panel_pid"] == "62ccexported"]
    assert len(mine) == 3 and {r["panel"] for r in mine} == {"prolific"} and mine[0]["panel_study"] == "STUDY42"
    assert {r["status"] for r in mine} == {"completed"}
    page.goto(panel.url + "/organiser")
    page.fill("#password", PASSWORD)
    with page.expect_navigation():
        page.click("#login")
    assert "prolific: 62ccexported" in page.inner_text("#participants")
    assert page.inner_text("#panel-link") == panel.entry  # what `study links --panel prolific` printed
    check_page(page, "organiser with panel ids")
    shot(page, "panel-organiser-desktop")
    page.close()


def test_a_participant_database_from_before_panels_is_brought_up_to_date(tmp_path: Path) -> None:
    """An older database (no ending or panel columns) opens, keeps its participants and takes panel ids."""
    from commet.apps.study.build import build_study
    from commet.apps.study.db import LATER_COLUMNS, StudyDB
    from commet.apps.study.panel import PanelIds

    folder = Dataset(STORIES, name="panel").save(tmp_path / "ds")
    digest = build_study(folder, tmp_path / "s.json", questionnaires=1).digest()
    db = StudyDB(tmp_path / "s.sqlite", digest)
    [token] = db.create_participants([0])
    db.close()
    with sqlite3.connect(tmp_path / "s.sqlite") as old:  # as the first release made it
        old.execute("DROP INDEX participants_panel")
        for column in LATER_COLUMNS:
            old.execute(f"ALTER TABLE participants DROP COLUMN {column}")
    db = StudyDB(tmp_path / "s.sqlite", digest)
    assert db.participant(token)["ending"] is None
    other = db.panel_participant(PanelIds("prolific", "abc123", "S", "X"), 1).token
    assert other not in (None, token) and db.panel_participant(PanelIds("prolific", "abc123", "S", "X"), 1).token == other
    db.close()
