"""Findings of an attacker's and a careless operator's probes of both web apps, each against real servers on 127.0.0.1.

* Behind a TLS proxy (uvicorn believing its ``X-Forwarded-Proto``) the session and device cookies were sent
  without ``Secure`` unless the operator also remembered ``--secure-cookies``.
* A full disk (a real 2 MiB tmpfs in a private mount namespace) answered "Internal Server Error" with a traceback
  in the log; now a 503 page that says nothing was saved, with the security headers and ``Retry-After``, and
  both stores stay whole and work once there is space.
* The study store held, for each organiser session, a SHA-256 of the store's own secret and the organiser password:
  whoever had the file (it holds the secret too) could test guesses of the password at SHA-256 speed, past scrypt.
* A review form sent twice (a double click, a page resent, two tabs at once) filed the same error twice (so Table 6's
  per-category and per-reviewer counts grew), stored the same decision and note twice (the notes column of the
  items spreadsheet repeated it), and the same regeneration mark twice; each now counts once.
* A password change committed the new password, then deleted the reviewer's sessions in a second transaction: a crash
  (or a failed write) between the two left the old sessions, a thief's included, alive with the new password.
* A page of another site on the same host (any other port is the same site, so the browser sends the session
  cookie) could embed the app's pictures, and learn from their loading that a reviewer is signed in and which
  pictures exist; answers now carry ``Cross-Origin-Resource-Policy: same-origin`` (and ``-Opener-Policy``).
* The current-password check of a password change was not throttled: a stolen session could guess the password
  (to keep the account after a sign-out) at the rate limit of ordinary actions.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
import uvicorn
from playwright.sync_api import sync_playwright

from commet.apps.review.app import create_app as create_review_app
from commet.apps.review.db import ReviewDB
from commet.apps.signin import LoginThrottle
from commet.apps.study.app import create_app as create_study_app
from commet.apps.web import local_path
from tests.browser_checks import DESKTOP, PHONE, check_page
from tests.conftest import launch_chromium
from tests.review_server import PASSWORD, free_port, running_app, serving, write_dataset
from tests.test_disk_full import _can_mount_tmpfs
from tests.test_review_security import csrf_of, sign_in
from tests.test_sign_in_throttle import ORGANISER, study  # noqa: F401 - the fixture

ROOT = Path(__file__).resolve().parents[1]


def behind_a_proxy(app: object) -> tuple[uvicorn.Server, str]:
    """``app`` served as ``commet review serve --forwarded-allow-ips 127.0.0.1`` serves it (a proxy on this machine)."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",  # type: ignore[arg-type]
                                           lifespan="off", proxy_headers=True, forwarded_allow_ips="127.0.0.1"))
    threading.Thread(target=server.run, daemon=True).start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    return server, f"http://127.0.0.1:{port}"


def cookie_flags(response: httpx.Response) -> dict[str, set[str]]:
    """Each cookie the response sets: its attribute names, lower case."""
    flags = {}
    for header in response.headers.get_list("set-cookie"):
        name, *attributes = header.split(";")
        flags[name.split("=")[0].strip()] = {a.split("=")[0].strip().lower() for a in attributes}
    return flags


def sent_back(response: httpx.Response, name: str) -> dict[str, str]:
    """The Cookie header a browser on the https side sends back (httpx keeps Secure cookies off plain http)."""
    return {"Cookie": f"{name}={response.cookies[name]}"}


def test_cookies_set_over_https_are_secure_behind_a_proxy(tmp_path: Path, study: Path) -> None:  # noqa: F811
    store = ReviewDB(tmp_path / "review.sqlite")
    store.add_user("alice", PASSWORD)
    review, review_base = behind_a_proxy(create_review_app(write_dataset(tmp_path / "review-ds"), store))
    organiser, study_base = behind_a_proxy(create_study_app(study / "study.json", study / "study.sqlite", judge="rules",
                                                            organiser_password=ORGANISER))
    https = {"X-Forwarded-Proto": "https"}
    try:
        with httpx.Client(base_url=review_base, headers=https) as client:
            page = client.get("/login")
            assert cookie_flags(page)["commet_session"] >= {"secure", "httponly", "samesite"}
            signed = client.post("/login", data={"csrf": csrf_of(page.text), "name": "alice", "password": PASSWORD},
                                 headers=sent_back(page, "commet_session"))
            assert signed.headers["location"] == "/"
            flags = cookie_flags(signed)
            assert "secure" in flags["commet_session"] and "secure" in flags["commet_device"]
            assert [h.lower().count("secure") for h in signed.headers.get_list("set-cookie")] == [1, 1]  # once each
        with httpx.Client(base_url=study_base, headers=https) as client:
            page = client.get("/organiser")
            assert "secure" in cookie_flags(page)["commet_study_session"]
            signed = client.post("/organiser/login", data={"csrf": csrf_of(page.text), "password": ORGANISER},
                                 headers=sent_back(page, "commet_study_session"))
            assert signed.status_code == 303 and "secure" in cookie_flags(signed)["commet_study_session"]
        with httpx.Client(base_url=review_base) as plain:  # plain HTTP on this machine keeps working
            assert "secure" not in cookie_flags(plain.get("/login"))["commet_session"]
    finally:
        review.should_exit = organiser.should_exit = True


def test_a_full_disk_is_a_503_page_and_both_stores_stay_whole(tmp_path: Path) -> None:
    disk, work = tmp_path / "disk", tmp_path / "work"
    if not _can_mount_tmpfs(disk):
        pytest.skip("needs an unprivileged mount namespace (unshare -rm) to mount a small tmpfs")
    work.mkdir()
    run = subprocess.run(["unshare", "-rm", sys.executable, "-m", "tests.full_disk_apps", str(disk), str(work)],
                         capture_output=True, text=True, timeout=120, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])})
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    for action in ("edit", "sign_in", "answer"):
        answer = seen[action]
        assert answer["status"] == 503 and answer["retry"] == "60" and answer["csp"], (action, answer["status"])
        assert "cannot save anything right now" in answer["text"] and "Nothing was saved" in answer["text"], action
    assert seen["after"] == [200, 200, 303]  # space again: the item, the question and a sign-in work
    assert seen["whole"] == ["ok", "ok"]
    assert "Traceback" not in run.stderr
    logged = [line for line in run.stderr.splitlines() if "SQLite store failed" in line]
    assert len(logged) == 3 and not any(PASSWORD in line or "/p/" in line for line in logged)


def test_guessing_the_current_password_on_the_account_page_is_throttled(tmp_path: Path) -> None:
    throttle = LoginThrottle(free=3, base_s=30.0, address_limit=5)
    with running_app(tmp_path, login_throttle=throttle) as (base, _), sign_in(base, "alice") as alice:
        said = []
        for n in range(6):
            token = csrf_of(alice.get("/account").text)
            alice.post("/account/password", data={"csrf": token, "current": f"guess {n}", "new": "a new long password",
                                                  "again": "a new long password"})
            said.append(re.search(r"(The current password is wrong|Too many wrong passwords)",
                                  alice.get("/account").text).group(1))  # type: ignore[union-attr]
        assert said == ["The current password is wrong"] * 3 + ["Too many wrong passwords"] * 3
        with httpx.Client(base_url=base) as other:  # the address's count is the sign-in's: this address waits too
            response = other.post("/login", data={"csrf": csrf_of(other.get("/login").text), "name": "alice",
                                                  "password": PASSWORD})
            assert response.status_code == 429


def test_the_study_store_gives_no_fast_check_of_the_organiser_password(study: Path) -> None:  # noqa: F811
    app = create_study_app(study / "study.json", study / "study.sqlite", judge="rules", organiser_password=ORGANISER)
    with serving(app) as base, httpx.Client(base_url=base) as client:
        page = client.get("/organiser")
        assert client.post("/organiser/login", data={"csrf": csrf_of(page.text),
                                                     "password": ORGANISER}).status_code == 303
    with sqlite3.connect(study / "study.sqlite") as db:
        secret = db.execute("SELECT value FROM meta WHERE key = 'session_secret'").fetchone()[0]
        (subject,) = {row[0] for row in db.execute("SELECT subject FROM web_sessions WHERE subject IS NOT NULL")}
        dump = "\n".join(db.iterdump())
    assert ORGANISER not in dump
    fast = hashlib.sha256(f"{secret}\n{ORGANISER}".encode()).hexdigest()
    assert fast[:24] not in subject  # what a SHA-256 guess would match
    slow = hashlib.scrypt(ORGANISER.encode(), salt=secret.encode(), n=2**14, r=8, p=1, dklen=12).hex()
    assert subject == f"organiser:{slow}"  # a guess costs one scrypt run, as against a password hash


def test_a_review_form_sent_twice_counts_once(tmp_path: Path) -> None:
    with running_app(tmp_path) as (base, db_path), sign_in(base, "alice") as alice:
        page = alice.get("/items/rh-1").text
        form = {"csrf": csrf_of(page), "revision": re.search(r'name="revision" value="(\d+)"', page).group(1)}  # type: ignore[union-attr]
        picture = re.search(r'name="picture_id" value="(\d+)"', page).group(1)  # type: ignore[union-attr]
        sends = [("/items/rh-1/errors", {**form, "category": "spatial", "picture_id": picture, "note": "boat floats"}),
                 ("/items/rh-1/errors", {**form, "category": "text_other", "note": "typo"}),
                 ("/items/rh-1/mark", {**form, "picture_id": picture, "note": "redraw the boats"}),
                 ("/items/rh-1/decision", {**form, "decision": "reject", "note": "the boats overlap"})]

        async def at_once(path: str, data: dict[str, str]) -> None:  # two tabs sending one form together
            async with httpx.AsyncClient(base_url=base, cookies=alice.cookies) as tabs:
                await asyncio.gather(tabs.post(path, data=data), tabs.post(path, data=data))

        for path, data in sends:
            assert alice.post(path, data=data).status_code == 303
            asyncio.run(at_once(path, data))
        again = alice.post(sends[0][0], data=sends[0][1], follow_redirects=True).text
        assert "Already filed" in again
        assert alice.post(sends[0][0], data={**sends[0][1], "note": "and one sinks"}).status_code == 303  # another error
        with sqlite3.connect(db_path) as db:
            counts = [db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                      for table in ("error_filings", "regen_requests", "decisions")]
        assert counts == [3, 1, 1]
        items_csv = alice.get("/export/items.csv").text
        assert items_csv.count("the boats overlap") == 1


def test_a_new_password_and_the_end_of_the_old_sessions_commit_together(tmp_path: Path) -> None:
    with running_app(tmp_path) as (base, db_path), sign_in(base, "alice") as alice:
        with sqlite3.connect(db_path) as db:  # the session delete fails, as a crash between two commits would
            db.execute("CREATE TRIGGER keep_sessions BEFORE DELETE ON web_sessions BEGIN "
                       "SELECT RAISE(ABORT, 'simulated failure'); END")
        store = ReviewDB(db_path)
        with pytest.raises(sqlite3.IntegrityError, match="simulated failure"):
            store.set_password("alice", "a brand new password")
        assert store.authenticate("alice", PASSWORD) is not None  # nothing changed: the old password still holds
        assert alice.get("/account").status_code == 200
        with sqlite3.connect(db_path) as db:
            db.execute("DROP TRIGGER keep_sessions")
        store.set_password("alice", "a brand new password")
        assert alice.get("/account").status_code == 303  # the session ended with the change


def other_site(picture: str) -> object:
    """An ASGI app whose one page embeds ``picture`` (an address on another port: another origin, the same site)."""
    async def app(scope: dict[str, object], receive: object, send: object) -> None:
        body = f'<!doctype html><title>other</title><img id="probe" src="{picture}" alt="">'.encode()
        await send({"type": "http.response.start", "status": 200,  # type: ignore[operator]
                    "headers": [(b"content-type", b"text/html"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})  # type: ignore[operator]
    return app


def test_a_damaged_store_is_a_503_page_that_fits_both_widths(tmp_path: Path) -> None:
    """A review store that fails under the running server (its first page overwritten: "file is not a database") is
    the app's own 503 page, readable at 1400 and 390 px (no sideways scrolling, no serious axe finding). First, in
    the same browser: a page of another site on this host cannot embed the signed-in reviewer's pictures."""
    with running_app(tmp_path) as (base, db_path), sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            page = browser.new_page(viewport=DESKTOP)
            page.goto(base + "/login")
            page.fill("input[name=name]", "alice")
            page.fill("input[name=password]", PASSWORD)
            page.click("button[type=submit]")
            page.wait_for_url(base + "/")
            # Another site on this host (any port is the same site, so the browser sends the session cookie): its
            # page may not embed the app's pictures, or their loading would tell it who is signed in and to what.
            with serving(other_site(base + "/images/bath.png")) as other:
                page.goto(other)
                page.wait_for_load_state("load")
                assert page.evaluate("document.getElementById('probe').naturalWidth") == 0
            assert page.goto(base + "/images/bath.png").status == 200  # the app's own pages show it  # type: ignore[union-attr]
            with db_path.open("r+b") as damaged:
                damaged.write(b"not a database" * 8)
            for viewport in (DESKTOP, PHONE):
                page.set_viewport_size(viewport)
                response = page.goto(base + "/items/rh-1")
                assert response is not None and response.status == 503
                assert "cannot save anything right now (its data is damaged)" in page.inner_text("main")
                check_page(page, f"503 at {viewport['width']} px")
        finally:
            browser.close()


@pytest.mark.parametrize("target", [None, "", "items", "//evil.example/x", "/\\evil.example", "/\t/evil.example",
                                    "https://evil.example/", "/login", "/login?x=1", "/logout", "/items/a\nb",
                                    "/" + "a" * 2001])
def test_a_sign_in_never_leads_off_the_app(target: str | None) -> None:
    """Where a sign-in leads back to comes from the request (its path, or its Referer): only a plain path of the app,
    never another site (an open redirect) nor the sign-in or sign-out page."""
    assert not local_path(target)


@pytest.mark.parametrize("target", ["/", "/items/rh-1", "/items?q=xss&page=2", "/%2F%2Fevil.example"])
def test_a_sign_in_leads_back_to_a_page_of_the_app(target: str) -> None:
    assert local_path(target)
