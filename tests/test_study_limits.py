"""The study app's limits, in process: rate limits per link token, bounded bodies, organiser page off."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from commet.apps.study.app import create_app
from commet.apps.study.build import build_study, load_study
from commet.apps.study.db import StudyDB
from commet.apps.study.panel import PanelIds
from commet.format import Dataset, StoryTurn, Turn


@pytest.fixture
def study(tmp_path: Path) -> tuple[Path, Path]:
    story = StoryTurn(id="s-1", task="false_belief_location", category="Belief",
                      turns=[Turn(story="Ana leaves.", question="Where will she look, the box or the bag?",
                                  answers=["Box"])])
    folder = Dataset([story], name="tiny").save(tmp_path / "ds")
    build_study(folder, tmp_path / "study.json", questionnaires=1)
    return tmp_path / "study.json", tmp_path / "study.sqlite"


def tokens(study: tuple[Path, Path], count: int) -> list[str]:
    study_path, db_path = study
    db = StudyDB(db_path, load_study(study_path)[0].digest())
    try:
        return db.create_participants([0] * count)
    finally:
        db.close()


def test_rate_limit_is_per_token(study: tuple[Path, Path]) -> None:
    client = TestClient(create_app(*study, participant_rate=3))
    first, second = tokens(study, 2)
    assert [client.get(f"/p/{first}").status_code for _ in range(4)] == [200, 200, 200, 429]
    assert client.get(f"/p/{second}").status_code == 200
    assert client.get("/p/../../etc/passwd").status_code == 404
    assert client.get("/p/" + "x" * 100).status_code == 404


def test_bodies_are_bounded_and_answers_judged(study: tuple[Path, Path]) -> None:
    client = TestClient(create_app(*study))
    [token] = tokens(study, 1)
    page = client.get(f"/p/{token}").text
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    assert client.post(f"/p/{token}/consent", data={"csrf": csrf}, follow_redirects=False).status_code == 400
    assert client.post(f"/p/{token}/consent", data={"csrf": csrf, "adult": "yes"},
                       follow_redirects=False).status_code == 303
    big = client.post(f"/p/{token}/answer", data={"csrf": csrf, "story": "1", "turn": "0", "response": "x" * 70_000})
    assert big.status_code == 413
    done = client.post(f"/p/{token}/answer", data={"csrf": csrf, "story": "1", "turn": "0", "response": "The box"})
    assert "reached the end of the study" in done.text
    row = sqlite3.connect(study[1]).execute("SELECT response, verdict, correct, judge FROM answers").fetchone()
    assert row == ("The box", "correct", 1, "rules")


def test_organiser_page_is_off_without_password(study: tuple[Path, Path]) -> None:
    client = TestClient(create_app(*study))
    response = client.get("/organiser")
    assert response.status_code == 403 and "--organiser-password-file" in response.text
    assert client.get("/organiser/export.csv").status_code == 403


def test_answer_limit_counts_answers_only_and_keeps_the_typed_answer(tmp_path: Path) -> None:
    """Page loads and pictures do not count; the answer over the limit is kept, with the seconds to wait."""
    stories = [StoryTurn(id=f"s-{n}", task=task, category="Belief",
                         turns=[Turn(story="Ana leaves.", question="Where will she look, the box or the bag?",
                                     answers=["Box"])])
               for n, task in enumerate(("false_belief_location", "diverse_belief", "implicit_false_belief"))]
    folder = Dataset(stories, name="three").save(tmp_path / "ds")
    build_study(folder, tmp_path / "study.json", questionnaires=1, grouping="task")
    client = TestClient(create_app(tmp_path / "study.json", tmp_path / "study.sqlite", answer_rate=2))
    [token] = tokens((tmp_path / "study.json", tmp_path / "study.sqlite"), 1)
    page = client.get(f"/p/{token}").text
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    client.post(f"/p/{token}/consent", data={"csrf": csrf, "adult": "yes"})
    assert all(client.get(f"/p/{token}").status_code == 200 for _ in range(150))  # reloads: never limited
    for story in (1, 2):
        client.post(f"/p/{token}/answer", data={"csrf": csrf, "story": str(story), "turn": "0", "response": "box"})
    limited = client.post(f"/p/{token}/answer", data={"csrf": csrf, "story": "3", "turn": "0",
                                                       "response": "In the box, because she left it there"})
    assert limited.status_code == 429 and 55 <= int(limited.headers["retry-after"]) <= 60
    wait = re.search(r"Please wait (\d+) seconds", limited.text)
    assert wait and int(wait.group(1)) == int(limited.headers["retry-after"])
    assert ">In the box, because she left it there</textarea>" in limited.text
    assert sqlite3.connect(tmp_path / "study.sqlite").execute("SELECT COUNT(*) FROM answers").fetchone()[0] == 2


def test_panel_joins_are_limited_per_address_and_returning_participants_never(study: tuple[Path, Path]) -> None:
    """One address flooding the panel link makes only ``joins_per_address`` participants a minute; people
    elsewhere still join, anyone who came before (the flooding address included) comes back at once, and past
    ``max_panel_participants`` the link says the study is full."""
    app = create_app(*study, participant_rate=50, joins_per_address=5, max_panel_participants=12)
    key = app.state.study.participation.db.entry_key()

    def client(address: str) -> TestClient:
        return TestClient(app, client=(address, 40000), follow_redirects=False)

    genuine, flood = client("10.0.0.7"), client("10.0.0.66")
    real = f"/join/{key}?PROLIFIC_PID=real1&STUDY_ID=S1&SESSION_ID=A1"
    own = genuine.get(real)
    assert own.status_code == 303 and own.headers["location"].startswith("/p/")
    statuses = [flood.get(f"/join/{key}?pid=fake{k}").status_code for k in range(20)]
    assert statuses == [303] * 5 + [429] * 15
    slowed = flood.get(f"/join/{key}?pid=fake99")
    assert "Please wait a minute" in slowed.text and slowed.headers["retry-after"] == "60"
    for _ in range(3):  # returning: never throttled, from their own address or the flooded one
        assert genuine.get(real).headers["location"] == own.headers["location"]
        assert flood.get(real).headers["location"] == own.headers["location"]
        assert flood.get(f"/join/{key}?pid=fake0").status_code == 303
    for k in range(6):  # six more people elsewhere: 12, the study's limit
        assert client(f"10.0.1.{k}").get(f"/join/{key}?pid=person{k}").status_code == 303
    full = client("10.0.2.1").get(f"/join/{key}?pid=one-too-many")
    assert full.status_code == 403 and "all the participants it takes" in full.text
    assert client("10.0.2.1").get(f"/join/{key}?pid=person3").status_code == 303  # those in continue
    count = sqlite3.connect(study[1]).execute("SELECT COUNT(*) FROM participants").fetchone()[0]
    assert count == 12


def test_a_panel_id_re_enters_only_with_its_panel_session(study: tuple[Path, Path]) -> None:
    """Prolific's id with another (or no) SESSION_ID does not open that participant's study; an id from a panel
    that names no session (``pid``) re-enters with the id alone."""
    app = create_app(*study)
    key = app.state.study.participation.db.entry_key()
    browser = TestClient(app, follow_redirects=False)
    first = browser.get(f"/join/{key}?PROLIFIC_PID=abc123&STUDY_ID=S1&SESSION_ID=SES1")
    assert browser.get(f"/join/{key}?PROLIFIC_PID=abc123&STUDY_ID=S1&SESSION_ID=SES1").headers["location"] == \
        first.headers["location"]
    refused = TestClient(app, follow_redirects=False).get(f"/join/{key}?PROLIFIC_PID=abc123&STUDY_ID=S1&SESSION_ID=SES2")
    assert refused.status_code == 403 and "another panel session" in refused.text
    for other in ("&STUDY_ID=S1", ""):  # Prolific always sends its session: a link without it is no Prolific link
        refused = TestClient(app, follow_redirects=False).get(f"/join/{key}?PROLIFIC_PID=abc123{other}")
        assert refused.status_code == 400 and "has no SESSION_ID" in refused.text, other
    unbound = TestClient(app, follow_redirects=False).get(f"/join/{key}?PROLIFIC_PID=newcomer")  # never enrolled unbound
    assert unbound.status_code == 400 and app.state.study.participation.db.panel_entry(
        PanelIds("prolific", "newcomer", None, "ANY")).token is None
    assert TestClient(app, follow_redirects=False).get(f"/join/{key}?workerId=W9&hitId=H1").status_code == 400
    mturk = f"/join/{key}?workerId=W1&assignmentId=AS1&hitId=H1"
    worker = browser.get(mturk).headers["location"]
    assert browser.get(mturk).headers["location"] == worker
    assert browser.get(f"/join/{key}?workerId=W1&assignmentId=AS2&hitId=H1").status_code == 403
    generic = browser.get(f"/join/{key}?pid=volunteer-1").headers["location"]
    assert TestClient(app, follow_redirects=False).get(f"/join/{key}?pid=volunteer-1").headers["location"] == generic


def test_control_characters_are_removed_from_answers(study: tuple[Path, Path]) -> None:
    """A NUL or an escape sequence never reaches the database (nor exports); line breaks and tabs stay, and bytes
    that were not UTF-8 arrive as U+FFFD, the parser's visible mark."""
    client = TestClient(create_app(*study))
    [token] = tokens(study, 1)
    csrf = re.search(r'name="csrf" value="([^"]+)"', client.get(f"/p/{token}").text).group(1)
    client.post(f"/p/{token}/consent", data={"csrf": csrf, "adult": "yes"})
    sent = client.post(f"/p/{token}/answer", content=f"csrf={csrf}&story=1&turn=0&response=".encode()
                       + b"The%00 box%1b%5b31m%0d%0a%09really%ff\x07",
                       headers={"content-type": "application/x-www-form-urlencoded"})
    assert "reached the end of the study" in sent.text
    [stored] = sqlite3.connect(study[1]).execute("SELECT response FROM answers").fetchone()
    assert stored == "The box[31m\n\treally\ufffd"
