"""The human-study app end to end in headless Chromium, then its answers as a ``human`` run in a report.

One server (uvicorn in a thread, no access log) serves a hand-made three-StoryTurn study for
the whole module; each test uses its own participant links.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import playwright.sync_api as playwright_api
import pytest
import uvicorn
from PIL import Image
from playwright.sync_api import expect
from typer.testing import CliRunner

from commet.apps.study.app import create_app
from commet.apps.study.build import Study, build_study
from commet.apps.study.db import StudyDB
from commet.cli import app as cli
from commet.engine import evaluate_async
from commet.reports import accuracy_table, run_metrics
from commet.store import Store
from tests.conftest import launch_chromium

PASSWORD = "organiser secret 42"

SNACK = {
    "id": "snack-1", "task": "diverse_desire", "category": "Desire", "image_dependent": False,
    "turns": [
        {"story": "Meet Sam. It is snack time! There is a red apple and a chocolate bar.", "image": "snack.png",
         "question": "Which snack do you like best, the apple or the chocolate?", "answers": ["Apple", "Chocolate"]},
        {"story": "Sam likes the other snack better.",
         "feedback": {"by_answer": [{"answer": "Apple", "text": "So you like the apple."},
                                    {"answer": "Chocolate", "text": "So you like the chocolate."}]},
         "question": "So which snack will Sam pick, the apple or the chocolate?", "answers": ["Chocolate", "Apple"]},
        {"feedback": {"right": "Yes! Sam picks the snack he likes.", "wrong": "Actually, Sam picks the other snack."},
         "question": "Is Sam happy with his snack, yes or no?", "answers": ["Yes"]},
    ],
}
BALL = {
    "id": "ball-1", "task": "false_belief_location", "category": "Belief", "image_dependent": False,
    "turns": [
        {"story": "Ana puts her ball in the basket and goes outside. Ben moves the ball to the box.",
         "question": "Where will Ana look for her ball, the basket or the box?", "answers": ["Basket"]},
        {"feedback": {"right": "That's right, she did not see Ben move it.",
                      "wrong": "Remember, Ana was outside when Ben moved it."},
         "question": "Where is the ball really, the basket or the box?", "answers": ["Box"]},
    ],
}
MUFFIN = {
    "id": "muffin-1", "task": "reference_hard_perspective", "category": "Percept", "image_dependent": True,
    "turns": [
        {"story": "Dad packs a snack for Mia. Mia says: I want the big muffin.", "image": "muffins.png",
         "question": "Which muffin will Dad pack, the big one or the medium one?", "answers": ["Medium"],
         "options": [{"text": "Big"}, {"text": "Medium"}]},  # so that the rules judge can call "The big one" wrong
        {"feedback": {"right": "Yes, Dad cannot see the big muffin from where he stands.",
                      "wrong": "Look again: Dad cannot see the big muffin from where he stands."},
         "question": "Did Mia get the muffin she wanted, yes or no?", "answers": ["No"]},
    ],
}

#: Per StoryTurn: the answers typed, and the feedback text each answer must bring on the next turn.
RIGHT = {"snack-1": ["Apple", "Chocolate", "Yes"], "ball-1": ["The basket", "The box"],
         "muffin-1": ["The medium one", "No"]}
RIGHT_FEEDBACK = {"snack-1": ["So you like the apple.", "Yes! Sam picks the snack he likes."],
                  "ball-1": ["That's right, she did not see Ben move it."],
                  "muffin-1": ["Yes, Dad cannot see the big muffin from where he stands."]}
MIXED = {"snack-1": ["I like the apple.", "The apple.", "Yes"], "ball-1": ["In the basket", "The box"],
         "muffin-1": ["The big one", "No"]}
MIXED_FEEDBACK = {"snack-1": ["So you like the apple.", "Actually, Sam picks the other snack."],
                  "ball-1": ["That's right, she did not see Ben move it."],
                  "muffin-1": ["Look again: Dad cannot see the big muffin from where he stands."]}


@dataclass
class Served:
    url: str
    study: Study
    study_path: Path
    db_path: Path
    dataset: Path

    def links(self, questionnaire: int, count: int = 1) -> list[str]:
        db = StudyDB(self.db_path, self.study.digest())
        try:
            return [f"{self.url}/p/{token}" for token in db.create_participants([questionnaire] * count)]
        finally:
            db.close()


def write_dataset(folder: Path) -> Path:
    (folder / "images").mkdir(parents=True)
    Image.new("RGB", (64, 48), (200, 60, 60)).save(folder / "images" / "snack.png")
    Image.new("RGB", (64, 48), (150, 100, 40)).save(folder / "images" / "muffins.png")
    with (folder / "storyturns.jsonl").open("w") as out:
        for storyturn in (SNACK, BALL, MUFFIN):
            out.write(json.dumps(storyturn) + "\n")
    return folder


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("study")
    dataset = write_dataset(root / "ds")
    study = build_study(dataset, root / "study.json", questionnaires=2, seed=7)
    web = create_app(root / "study.json", root / "study.sqlite", judge="rules", organiser_password=PASSWORD)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(web, access_log=False, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started
    yield Served(f"http://127.0.0.1:{port}", study, root / "study.json", root / "study.sqlite", dataset)
    server.should_exit = True
    thread.join(timeout=10)
    sock.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with playwright_api.sync_playwright() as p:
        chromium = launch_chromium(p)
        yield chromium
        chromium.close()


def agree(page) -> None:  # noqa: ANN001 - playwright Page
    """Give consent and wait for the page the server sends back (a lookup right after the click raced it)."""
    page.check("#adult")
    with page.expect_navigation():
        page.click("#agree")


def answer(page, text: str) -> None:  # noqa: ANN001 - playwright Page
    """Submit an answer and wait for the page the server sends back (not only for the click)."""
    page.fill("#response", text)
    with page.expect_navigation():
        page.click("#submit")


def shown_feedback(page) -> str | None:  # noqa: ANN001
    return page.inner_text("#feedback") if page.locator("#feedback").count() else None


def play_story(page, story_id: str, replies: list[str], feedback: list[str]) -> None:  # noqa: ANN001
    """Answer one StoryTurn turn by turn, checking the exact feedback each answer brings on the next turn."""
    for k, reply in enumerate(replies):
        assert shown_feedback(page) == (feedback[k - 1] if k else None), (story_id, k)
        answer(page, reply)


def test_participant_sees_right_and_wrong_feedback(served: Served, browser) -> None:  # noqa: ANN001
    """Questionnaire 0 shows every picture; right and wrong answers bring their own feedback text."""
    [link] = served.links(0)
    page = browser.new_page()
    page.goto(link)
    assert "anonymous" in page.inner_text("#consent")
    # policy "all" shows every picture, but the ball story has none: the consent page does not promise one
    assert "2 of the 3 stories come with pictures." in page.inner_text("#duration")
    agree(page)
    order = served.study.questionnaire(0).storyturns
    for number, story_id in enumerate(order, start=1):
        assert page.inner_text("#where").startswith(f"Story {number} of 3")
        if story_id in ("snack-1", "muffin-1"):  # policy "all": the text-complete snack story shows its picture too
            src = page.get_attribute("#current img", "src")
            assert src is not None and page.request.get(served.url + src).headers["content-type"] == "image/png"
        play_story(page, story_id, MIXED[story_id], MIXED_FEEDBACK[story_id])
    assert "reached the end of the study" in page.inner_text("#message")
    page.close()


def test_pause_resume_and_stop(served: Served, browser) -> None:  # noqa: ANN001
    """Questionnaire 1 (pictures only where needed): close the page mid-story, reopen the link, go on, stop.

    Every check after a click waits for its condition (Playwright's ``expect`` retries until it holds or
    times out): reading the page right after a click may read the page before the navigation.
    """
    [link] = served.links(1)
    first, second = served.study.questionnaire(1).storyturns[:2]
    where, pictures = "#where", "#current img"
    context = browser.new_context()
    page = context.new_page()
    page.goto(link)
    expect(page.locator("#duration")).to_contain_text("One of the 3 stories comes with a picture.")  # only muffin-1
    agree(page)
    expect(page.locator(where)).to_have_text(re.compile(r"^Story 1 of 3 · 0 questions answered"))
    expect(page.locator(pictures)).to_have_count(1 if first == "muffin-1" else 0)
    answer(page, RIGHT[first][0])
    expect(page.locator(where)).to_have_text(re.compile(r"^Story 1 of 3 · 1 question answered"))
    context.close()  # pause: the browser and its cookies are gone

    context = browser.new_context()
    page = context.new_page()
    page.goto(link)
    expect(page.locator(where)).to_have_text(re.compile(r"^Story 1 of 3 · 1 question answered"))
    expect(page.locator(".given")).to_have_text(f"Your answer: {RIGHT[first][0]}")
    assert shown_feedback(page) == RIGHT_FEEDBACK[first][0]
    for reply in RIGHT[first][1:]:
        answer(page, reply)
    expect(page.locator(where)).to_have_text(re.compile(r"^Story 2 of 3"))
    expect(page.locator(pictures)).to_have_count(1 if second == "muffin-1" else 0)
    answer(page, RIGHT[second][0])
    page.click("#pause")
    expect(page.locator("#link")).to_have_text(link)
    page.click("#continue")
    expect(page.locator(where)).to_have_text(re.compile(r"^Story 2 of 3"))
    page.click("#stop")
    page.click("#confirm-stop")
    expect(page.locator("#message")).to_contain_text("You stopped the study")
    page.goto(link)
    expect(page.locator("#message")).to_contain_text("You stopped the study")
    context.close()


def test_empty_answer_is_refused_and_forms_need_csrf(served: Served, browser) -> None:  # noqa: ANN001
    [link] = served.links(0)
    page = browser.new_page()
    page.goto(link)
    agree(page)
    page.eval_on_selector("#response", "e => e.removeAttribute('required')")
    answer(page, "   ")
    assert page.inner_text("#error") == "Please type an answer."
    forged = page.request.post(link + "/answer", form={"response": "x", "story": "1", "turn": "0", "csrf": "no"})
    assert forged.status == 403
    assert page.request.get(served.url + "/p/not-a-real-token").status == 404
    headers = page.request.get(link).headers
    assert headers["x-frame-options"] == "DENY" and "frame-ancestors 'none'" in headers["content-security-policy"]
    page.close()


def test_organiser_progress_links_and_export(served: Served, browser) -> None:  # noqa: ANN001
    page = browser.new_page()
    page.goto(served.url + "/organiser")
    page.fill("#password", "wrong")
    page.click("#login")
    assert page.inner_text("#error") == "Wrong password."
    assert page.request.get(served.url + "/organiser/export.csv").status == 403
    page.fill("#password", PASSWORD)
    page.click("#login")
    expect(page.locator("#progress-title")).to_have_text("Progress per questionnaire")  # waits for the page
    page.fill("#count", "2")
    page.click("#create-links")
    expect(page.locator("#new-links code")).to_have_count(2)
    new = page.locator("#new-links code").all_inner_texts()
    assert len(new) == 2 and all(link.startswith(served.url + "/p/") for link in new)
    with page.expect_download() as download:
        page.click("#export-csv")
    csv_text = Path(download.value.path()).read_text()
    with page.expect_download() as download:
        page.click("#export-jsonl")
    records = [json.loads(line) for line in Path(download.value.path()).read_text().splitlines()]
    mixed = [r for r in records if r["response"] == "I like the apple."]
    assert mixed and mixed[0]["correct"] is True and mixed[0]["branch"] == 0
    wrong = [r for r in records if r["story_id"] == "snack-1" and r["response"] == "The apple."]
    assert wrong[0]["correct"] is False and wrong[0]["participant"].startswith("P")
    after_wrong = [r for r in records if r["story_id"] == "snack-1" and r["turn"] == 2 and r["status"] == "completed"]
    assert after_wrong[0]["feedback"] == "Actually, Sam picks the other snack."
    assert after_wrong[0]["feedback_kind"] == "wrong"
    assert "I like the apple." in csv_text and csv_text.startswith(
        "participant,panel,panel_pid,panel_study,panel_session,questionnaire,image_policy")
    tokens = [row[0] for row in sqlite3.connect(served.db_path).execute("SELECT token FROM participants")]
    assert not any(token in csv_text for token in tokens), "link tokens must not leave the study database"
    assert len(page.locator("#progress tbody tr").all()) == 2
    statuses = page.locator("#participants tbody tr td:nth-child(4)").all_inner_texts()
    assert {"completed", "stopped", "invited"} <= set(statuses)
    page.close()


def test_database_holds_no_request_metadata(served: Served, browser) -> None:  # noqa: ANN001
    """Every value of every table, and the raw files, lack the client address, user agent and header names."""
    [link] = served.links(0)
    page = browser.new_page(extra_http_headers={"X-Forwarded-For": "203.0.113.9", "Accept-Language": "de-CH"})
    agent = page.evaluate("navigator.userAgent")
    page.goto(link)
    agree(page)
    answer(page, RIGHT[served.study.questionnaire(0).storyturns[0]][0])  # decided: the story stays unfinished
    page.close()
    db = sqlite3.connect(served.db_path)
    assert db.execute("SELECT COUNT(*) FROM answers").fetchone()[0] > 0
    needles = ["127.0.0.1", "203.0.113.9", agent, "HeadlessChrome", "Mozilla", "de-CH", "user-agent", "user_agent",
               "accept-language", "x-forwarded-for", "sec-ch-ua", "referer", "host"]
    tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    assert set(tables) == {"meta", "participants", "answers", "drafts", "web_sessions", "web_keys"}  # sessions, key
    for table in tables:
        columns = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
        assert not {"ip", "address", "agent", "headers", "email", "name"} & set(columns)
        for row in db.execute(f"SELECT * FROM {table}"):
            for column, value in zip(columns, row, strict=True):
                for needle in needles:
                    assert needle.lower() not in str(value).lower(), (table, column, needle)
    db.close()
    raw = b"".join(p.read_bytes() for p in served.db_path.parent.glob("study.sqlite*"))
    for needle in ("127.0.0.1", "203.0.113.9", agent, "de-CH"):
        assert needle.encode() not in raw


def test_human_row_in_report(served: Served, tmp_path: Path) -> None:
    """The answers above become a run with model 'human' beside a model run, scored the same way."""
    store_path = tmp_path / "commet.sqlite"
    baseline = evaluate_async("baseline:first-option", served.dataset, judge="rules", db=store_path, run="baseline")
    with ThreadPoolExecutor(1) as pool:  # the browser fixture's event loop is running in this thread
        pool.submit(asyncio.run, baseline).result()
    result = CliRunner().invoke(cli, ["study", "export-run", str(served.study_path), "--study-db",
                                      str(served.db_path), "--db", str(store_path), "--run", "human",
                                      "--policy", "both"])
    assert result.exit_code == 0, result.output
    with Store(store_path) as store:
        human = store.get_run("human")
        assert human is not None and human.model == "human"
        metrics = run_metrics(store, human)
        stories = {row.story_id: row for row in store.story_rows(human.id)}
        header, rows = accuracy_table([run_metrics(store, r) for r in store.runs()])
    # mixed participant: 3 complete StoryTurns, only ball-1 right; pause/stop participant: first StoryTurn right
    assert metrics.stories.correct == 2 and metrics.stories.total == 4, stories
    first = {"snack-1": "Desire", "ball-1": "Belief", "muffin-1": "Percept"}[served.study.questionnaire(1).storyturns[0]]
    expected = {"Desire": (0, 1), "Belief": (1, 1), "Percept": (0, 1)}
    expected[first] = (expected[first][0] + 1, expected[first][1] + 1)
    assert {c: (t.correct, t.total) for c, t in metrics.per_category.items()} == expected
    assert all("#P" in story_id for story_id in stories)
    assert {row.category for row in stories.values()} <= {"Desire", "Belief", "Percept"}
    assert any(row.image_dependent for row in stories.values() if row.story_id.startswith("muffin-1"))
    human_row = next(r for r in rows if r[1] == "human")
    assert human_row[header.index("Overall")] == "50.00 (2/4)"
    report = CliRunner().invoke(cli, ["report", "--db", str(store_path), "--format", "markdown"])
    assert report.exit_code == 0, report.output
    lines = report.output.splitlines()
    assert any(line.startswith("| human | human |") and "50.0" in line for line in lines)
    assert any(line.startswith("| baseline | baseline:first-option |") for line in lines)
    again = CliRunner().invoke(cli, ["study", "export-run", str(served.study_path), "--study-db",
                                     str(served.db_path), "--db", str(store_path), "--run", "human", "--policy",
                                     "both"])
    assert again.exit_code == 0, again.output  # a re-export brings the same run up to date
    clash = CliRunner().invoke(cli, ["study", "export-run", str(served.study_path), "--study-db",
                                     str(served.db_path), "--db", str(store_path), "--run", "human",
                                     "--policy", "all"])
    assert clash.exit_code == 2 and "already exists" in clash.output
