"""Web hardening of both apps (issue 15, point 4) at the shared level, commet.apps.web.

The study app over raw HTTP (its ASGI app through httpx, with chosen client addresses): the
organiser sign-in backs off per client, sessions die at sign-out and when the organiser password
changes, POSTs from another site are refused, and typed answers that start like a formula reach
the CSV escaped. Then both apps in headless Chromium: a bomb upload answered 413, a copied
cookie dead after sign-out, a form posted from another site refused, the backoff page, and CSV
downloads with escaped cells.
"""

from __future__ import annotations

import csv
import http.client
import io
import re
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from fastapi.testclient import TestClient
from httpx import Response
from playwright.sync_api import Browser, expect, sync_playwright

from commet.apps.signin import LoginThrottle
from commet.apps.study.app import SESSION_COOKIE as STUDY_COOKIE
from commet.apps.study.app import create_app as create_study_app
from commet.apps.study.build import ParticipantTexts, build_study, load_study
from commet.apps.study.db import StudyDB
from commet.format import Dataset, StoryTurn, Turn
from tests.conftest import launch_chromium
from tests.review_server import PASSWORD, VIEWPORTS, check, running_app, serving
from tests.test_review_security import png_declaring

ORGANISER = "organiser pass 42"
FORMULA_ANSWERS = ["=1+1", "+SUM(A1)", "-3+4", "@cmd"]


def csrf_of(html: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', html)
    assert match, "no CSRF field in the page"
    return match.group(1)


@pytest.fixture
def study(tmp_path: Path) -> tuple[Path, Path]:
    turn = Turn(story="Ana leaves.", question="Where will she look, the box or the bag?", answers=["Box"])
    stories = [StoryTurn(id=f"s-{i}", task="false_belief_location", category="Belief", turns=[turn, turn])
               for i in range(2)]  # two StoryTurns of two questions: one questionnaire asks all four
    folder = Dataset(stories, name="tiny").save(tmp_path / "ds")
    build_study(folder, tmp_path / "study.json", questionnaires=1,
                participant=ParticipantTexts(contact="The Story Lab: lab@example.org"))
    return tmp_path / "study.json", tmp_path / "study.sqlite"


def asgi_client(app: object, address: str) -> TestClient:
    """The ASGI app through httpx (starlette's TestClient), its requests coming from ``address``.

    Used without ``with``: the app's shutdown (which closes its database) must not run between clients."""
    return TestClient(app, base_url="http://study.test", follow_redirects=False, client=(address, 40000))  # type: ignore[arg-type]


def organiser_login(client: TestClient, password: str) -> Response:
    token = csrf_of(client.get("/organiser").text)
    return client.post("/organiser/login", data={"csrf": token, "password": password})


def test_study_organiser_backoff_sessions_origin_and_csv(study: tuple[Path, Path]) -> None:
    study_path, db_path = study
    app = create_study_app(study_path, db_path, judge="rules", organiser_password=ORGANISER, login_rate=3)
    guesser, owner, participant, copy = (asgi_client(app, f"10.0.0.{n}") for n in range(1, 5))
    for _ in range(3):
        assert organiser_login(guesser, "wrong").status_code == 401
    throttled = organiser_login(guesser, ORGANISER)
    assert throttled.status_code == 429 and "try again in" in throttled.text
    assert organiser_login(owner, ORGANISER).status_code == 303  # the organiser elsewhere is not locked out
    assert "Organiser: " in owner.get("/organiser").text

    # a participant types answers that a spreadsheet would run as formulas
    db = StudyDB(db_path, load_study(study_path)[0].digest())
    [token] = db.create_participants([0])
    db.close()
    csrf = csrf_of(participant.get(f"/p/{token}").text)
    participant.post(f"/p/{token}/consent", data={"csrf": csrf, "adult": "yes"})
    for k, answer in enumerate(FORMULA_ANSWERS):
        participant.post(f"/p/{token}/answer", data={"csrf": csrf, "story": str(k // 2 + 1), "turn": str(k % 2),
                                                     "response": answer})
    rows = list(csv.DictReader(io.StringIO(owner.get("/organiser/export.csv").text, newline="")))
    assert sorted(r["response"] for r in rows) == sorted("'" + a for a in FORMULA_ANSWERS)

    # a POST from another site is refused even with a valid token
    form = {"csrf": csrf_of(owner.get("/organiser").text), "count": "1"}
    for headers in ({"Origin": "http://evil.example"}, {"Referer": "http://evil.example/x"}, {"Origin": "null"}):
        refused = owner.post("/organiser/links", data=form, headers=headers)
        assert refused.status_code == 403 and "cross-site" in refused.text
    assert owner.post("/organiser/links", data=form, headers={"Origin": "http://study.test"}).status_code == 303

    # sign-out kills a copied cookie too
    cookie = owner.cookies[STUDY_COOKIE]
    copy.cookies.set(STUDY_COOKIE, cookie)
    assert "Organiser: " in copy.get("/organiser").text
    owner.post("/organiser/logout", data={"csrf": csrf_of(owner.get("/organiser").text)})
    assert "Organiser: " not in copy.get("/organiser").text
    assert organiser_login(owner, ORGANISER).status_code == 303
    kept = owner.cookies[STUDY_COOKIE]

    # a new organiser password (the server restarted with another one) revokes the old sessions
    renewed = create_study_app(study_path, db_path, judge="rules", organiser_password="another pass 7")
    old = asgi_client(renewed, "10.0.0.2")
    old.cookies.set(STUDY_COOKIE, kept)
    assert "Organiser: " not in old.get("/organiser").text
    assert organiser_login(old, "another pass 7").status_code == 303


expect.set_options(timeout=20_000)  # the machine running the suite may be busy

@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = launch_chromium(playwright)
        yield launched
        launched.close()


ATTACK = """<!doctype html><html lang="en"><head><title>prize</title></head><body><main>
<form method="post" action="{action}"><input type="hidden" name="csrf" value="{csrf}">{fields}
<button type="submit" id="go">Win a prize</button></form></main></body></html>"""


def cross_site_post(browser: Browser, action: str, csrf: str, fields: dict[str, str], cookies: list) -> str:
    """Submit a form from a page of another site (http://evil.test) carrying a leaked CSRF token."""
    context = browser.new_context()
    context.add_cookies(cookies)
    hidden = "".join(f'<input type="hidden" name="{k}" value="{v}">' for k, v in fields.items())
    context.route("http://evil.test/**", lambda route: route.fulfill(
        body=ATTACK.format(action=action, csrf=csrf, fields=hidden), content_type="text/html"))
    page = context.new_page()
    page.goto("http://evil.test/prize")
    page.click("#go")
    page.wait_for_load_state()
    text = page.inner_text("body")
    context.close()
    return text


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_review_hardening_in_chromium(browser: Browser, tmp_path: Path, viewport: str) -> None:
    throttle = LoginThrottle(free=2, base_s=30, max_delay_s=30)
    with running_app(tmp_path, login_throttle=throttle) as (base, db):
        context = browser.new_context(base_url=base, viewport=VIEWPORTS[viewport], accept_downloads=True)
        page = context.new_page()
        for _ in range(2):
            page.goto("/login")
            page.fill("input[name=name]", " Bob")
            page.fill("input[name=password]", "a guess")
            page.click("main button[type=submit]")
            expect(page.locator(".flash")).to_have_text("Unknown user or wrong password.")
        page.fill("input[name=name]", "BOB")
        page.fill("input[name=password]", PASSWORD)
        page.click("main button[type=submit]")
        expect(page.locator(".flash")).to_contain_text("Too many failed sign-ins from here or for this name; try again in")
        check(page)
        page.fill("input[name=name]", "alice")
        page.fill("input[name=password]", PASSWORD)
        page.click("main button[type=submit]")
        expect(page.locator("h1")).to_have_text("Items")

        # a decompression bomb chosen in the upload form: 413, nothing stored
        page.goto("/items/rh-1")
        page.click("#turn-1 summary:has-text('Regenerate or replace')")
        page.set_input_files("#turn-1 input[type=file]", files=[{"name": "bomb.png", "mimeType": "image/png",
                                                                 "buffer": png_declaring(12_000, 12_000)}])
        page.click("#turn-1 button:has-text('Upload a replacement')")
        expect(page.locator("h1")).to_have_text("Too large")
        expect(page.locator("main")).to_contain_text("Picture not stored: the picture declares far too many pixels")
        check(page)

        # formula-like notes reach the spreadsheet escaped
        page.goto("/items/xss-1")
        page.select_option("#decide ~ section select[name=category]", "text_other")
        page.fill("#decide ~ section input[name=note]", "=HYPERLINK(\"http://evil.example\")")
        page.click("button:has-text('File error')")
        expect(page.locator(".flash")).to_have_text("Error filed.")
        page.goto("/export")
        with page.expect_download() as download:
            page.click("#export-errors")
        [row] = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text(), newline="")))
        assert row["note"] == "'=HYPERLINK(\"http://evil.example\")"

        # a form on another site with a leaked token is refused by its Origin
        token = csrf_of(page.content())
        refused = cross_site_post(browser, f"{base}/items/xss-1/decision", token,
                                  {"revision": "1", "decision": "reject"}, context.cookies())
        assert "cross-site request refused" in refused
        from commet.apps.review.db import ReviewDB

        assert ReviewDB(db).decisions("xss-1") == []

        # a password change signs out every other session of the reviewer
        other = browser.new_context(base_url=base).new_page()
        other.goto("/login")
        other.fill("input[name=name]", "ALICE")
        other.fill("input[name=password]", PASSWORD)
        other.click("main button[type=submit]")
        expect(other.locator("h1")).to_have_text("Items")
        page.goto("/account")
        page.fill("input[name=current]", PASSWORD)
        page.fill("input[name=new]", "a new password 9")
        page.fill("input[name=again]", "a new password 9")
        page.click("main button[type=submit]")
        expect(page.locator(".flash")).to_have_text("Password changed; every other session of yours is signed out.")
        check(page)
        other.goto("/")
        expect(other).to_have_url(f"{base}/login")
        other.context.close()

        # sign-out ends the session on the server: a copied cookie no longer works
        cookies = context.cookies()
        page.click("button:has-text('Sign out')")
        expect(page).to_have_url(f"{base}/login")
        thief = browser.new_context(base_url=base)
        thief.add_cookies(cookies)
        stolen = thief.new_page()
        stolen.goto("/")
        expect(stolen).to_have_url(f"{base}/login")
        thief.close()
        context.close()


def test_study_hardening_in_chromium(browser: Browser, study: tuple[Path, Path]) -> None:
    import socket
    import threading
    import time

    import uvicorn

    study_path, db_path = study
    app = create_study_app(study_path, db_path, judge="rules", organiser_password=ORGANISER)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    server = uvicorn.Server(uvicorn.Config(app, access_log=False, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    try:
        db = StudyDB(db_path, load_study(study_path)[0].digest())
        [token] = db.create_participants([0])
        db.close()
        context = browser.new_context(base_url=base, accept_downloads=True)
        page = context.new_page()
        page.goto(f"/p/{token}")
        if page.locator("#adult").count():
            page.check("#adult")
        page.click("#agree")
        for answer in FORMULA_ANSWERS:
            page.fill("#response", answer)
            page.click("#submit")
        page.goto("/organiser")
        page.fill("#password", ORGANISER)
        page.click("#login")
        expect(page.locator("h1")).to_contain_text("Organiser: ")
        with page.expect_download() as download:
            page.click("#export-csv")
        rows = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text(), newline="")))
        assert sorted(r["response"] for r in rows) == sorted("'" + a for a in FORMULA_ANSWERS)

        token_field = csrf_of(page.content())
        refused = cross_site_post(browser, f"{base}/organiser/links", token_field, {"count": "2"}, context.cookies())
        assert "cross-site request refused" in refused

        cookies = context.cookies()
        page.click("#logout")
        thief = browser.new_context(base_url=base)
        thief.add_cookies(cookies)
        stolen = thief.new_page()
        stolen.goto("/organiser")
        expect(stolen.locator("#login")).to_be_visible()
        thief.close()
        context.close()
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def test_sessions_expire_on_the_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Signed-in sessions end 14 days after sign-in; anonymous ones two days after their last use."""
    from starlette.requests import Request
    from starlette.responses import Response

    from commet.apps import web

    clock = [1_000_000.0]
    monkeypatch.setattr(web.time, "time", lambda: clock[0])
    sessions = web.Sessions(tmp_path / "app.sqlite")

    def request_with(token: str | None) -> Request:
        headers = [(b"cookie", f"{web.SESSION_COOKIE}={token}".encode())] if token else []
        return Request({"type": "http", "method": "GET", "path": "/", "headers": headers})

    signed, anonymous = {"subject": "user:1", "csrf": "a"}, {"csrf": "b"}
    cookies = {}
    for name, data in (("signed", signed), ("anonymous", anonymous)):
        sessions.save(Response(), data)
        cookies[name] = data["_sid"]
    first_anonymous = cookies["anonymous"]
    day = 24 * 3600
    for _ in range(13):  # used every day for 13 days; the browser keeps the newest cookie
        clock[0] += day
        for name, csrf in (("signed", "a"), ("anonymous", "b")):
            loaded = sessions.load(request_with(cookies[name]))
            assert loaded["csrf"] == csrf
            sessions.save(Response(), loaded)
            cookies[name] = loaded["_sid"]
    clock[0] += day + 1
    assert sessions.load(request_with(cookies["signed"])) == {}  # 14 days after sign-in, however busy
    assert sessions.load(request_with(cookies["anonymous"]))["csrf"] == "b"  # still in use
    assert sessions.load(request_with(first_anonymous)) == {}  # an old anonymous cookie: its two days are over
    clock[0] += 2 * day + 1
    assert sessions.load(request_with(cookies["anonymous"])) == {}  # two idle days
    assert sessions.load(request_with("forged-token")) == {} and sessions.load(request_with(None)) == {}


def test_anonymous_sessions_take_no_row_and_cannot_be_forged(tmp_path: Path) -> None:
    """An anonymous session is a signed cookie: no row however many are made; an altered value, a cookie signed
    under another store's key or one claiming a subject loads as no session; signing in makes the one row."""
    import sqlite3

    from starlette.requests import Request
    from starlette.responses import Response

    from commet.apps import web

    path = tmp_path / "app.sqlite"
    sessions = web.Sessions(path)

    def request_with(value: str) -> Request:
        return Request({"type": "http", "method": "GET", "path": "/",
                        "headers": [(b"cookie", f"{web.SESSION_COOKIE}={value}".encode())]})

    made = []
    for k in range(200):
        data = {"csrf": f"token-{k}", "flash": "Unknown user or wrong password."}
        sessions.save(Response(), data)
        made.append(data["_sid"])
    rows = sqlite3.connect(path).execute("SELECT COUNT(*) FROM web_sessions").fetchone()[0]
    assert rows == 0
    assert sessions.load(request_with(made[7]))["csrf"] == "token-7"
    assert web.Sessions(path).load(request_with(made[7]))["csrf"] == "token-7"  # the key is the store's, kept
    body, _, signature = made[7].removeprefix(web.SIGNED_PREFIX).partition(".")
    altered = web.SIGNED_PREFIX + body[:-2] + ("AA" if body[-2:] != "AA" else "BB") + "." + signature
    assert sessions.load(request_with(altered)) == {}
    other = web.Sessions(tmp_path / "other.sqlite")
    assert other.load(request_with(made[7])) == {}  # another store's key
    forged = web.Sessions(tmp_path / "app.sqlite")._signed({"subject": "user:1", "csrf": "x"})
    assert sessions.load(request_with(forged)) == {}  # a subject never comes from a cookie
    huge = {"csrf": "kept", "flash": "x" * 10_000}
    sessions.save(Response(), huge)
    assert len(huge["_sid"]) < 4000 and sessions.load(request_with(huge["_sid"])) == {"csrf": "kept",
                                                                                       "_sid": huge["_sid"]}
    signed_in = {"subject": "user:1", "csrf": "y"}
    sessions.save(Response(), signed_in)
    assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM web_sessions").fetchone()[0] == 1
    assert sessions.load(request_with(signed_in["_sid"]))["subject"] == "user:1"


def fetch(base: str, method: str, path: str) -> tuple[int, dict[str, str], bytes]:
    """One request over a real connection: status, headers (lower-case names, no date), body."""
    connection = http.client.HTTPConnection(urlsplit(base).netloc, timeout=10)
    connection.request(method, path)
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, {k.lower(): v for k, v in response.getheaders() if k.lower() != "date"}, body


def test_head_is_answered_as_get_without_a_body(study: tuple[Path, Path], tmp_path: Path) -> None:
    study_path, db_path = study
    db = StudyDB(db_path, load_study(study_path)[0].digest())
    [token] = db.create_participants([0])
    db.close()
    study_app = create_study_app(study_path, db_path, judge="rules")
    with serving(study_app) as study_base, running_app(tmp_path / "review") as (review_base, _):
        for base, path, status in [(study_base, "/", 200), (study_base, f"/p/{token}", 200),
                                   (study_base, "/p/no-such-link", 404), (study_base, f"/p/{token}/answer", 405),
                                   (review_base, "/login", 200), (review_base, "/static/review.js", 200)]:
            got, got_headers, got_body = fetch(base, "GET", path)
            head, head_headers, head_body = fetch(base, "HEAD", path)
            assert (got, head) == (status, status), (base, path)
            assert head_body == b"" and got_body, (base, path)
            for name in ("content-type", "content-length", "content-security-policy", "x-frame-options"):
                assert head_headers.get(name) == got_headers.get(name), (path, name)


def test_serve_binds_first_a_busy_port_is_one_line_and_port_0_is_announced(study: tuple[Path, Path]) -> None:
    import socket
    import subprocess
    import sys

    study_path, db_path = study
    command = [sys.executable, "-m", "commet.cli", "study", "serve", str(study_path), "--db", str(db_path)]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = subprocess.run([*command, "--port", str(port)], capture_output=True, text=True, timeout=60)
    assert busy.returncode == 2 and busy.stdout == ""
    assert busy.stderr.strip().startswith(f"error: cannot listen on 127.0.0.1:{port}: "), busy.stderr
    server = subprocess.Popen([*command, "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        announced = server.stdout.readline() if server.stdout else ""
        match = re.match(r"study at (http://127\.0\.0\.1:(\d+))/p/<token>; organiser page off", announced)
        assert match and match.group(2) != "0", announced
        deadline = time.monotonic() + 30
        while True:  # the line is printed once the port is bound; uvicorn then starts answering
            try:
                status = fetch(match.group(1), "GET", "/")[0]
                break
            except OSError:
                assert time.monotonic() < deadline, "the study app did not answer"
                time.sleep(0.1)
        assert status == 200
    finally:
        server.terminate()
        server.wait(timeout=30)
