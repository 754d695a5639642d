"""The review app fails safely: no session, no CSRF token, `../` picture paths, `<script>` in a story, big bodies."""

from __future__ import annotations

import http.client
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from commet.apps.review.db import ReviewDB
from tests.review_server import PASSWORD, running_app


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    with running_app(tmp_path_factory.mktemp("review-sec")) as served:
        yield served


def csrf_of(html: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', html)
    assert match, "no CSRF field in the page"
    return match.group(1)


@contextmanager
def sign_in(base: str, name: str = "alice") -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base, follow_redirects=False) as client:
        token = csrf_of(client.get("/login").text)
        response = client.post("/login", data={"csrf": token, "name": name, "password": PASSWORD})
        assert response.status_code == 303 and response.headers["location"] == "/"
        yield client


def raw_get(base: str, path: str, cookie: str) -> tuple[int, bytes]:
    """A GET whose path goes on the wire exactly as written (no client-side dot-segment cleaning)."""
    host, port = base.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=5)
    connection.request("GET", path, headers={"Cookie": cookie})
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, body


def test_every_route_but_sign_in_needs_a_session(served: tuple[str, Path]) -> None:
    base, _ = served
    with httpx.Client(base_url=base, follow_redirects=False) as anonymous:
        for path in ("/", "/items/rh-1", "/stats", "/disagreements", "/images/bath.png", "/pictures/1.png",
                     "/items/rh-1/versions/1"):
            response = anonymous.get(path)
            assert response.status_code == 303 and response.headers["location"] == "/login", path
        for path in ("/items/rh-1/decision", "/items/rh-1/edit", "/logout"):
            assert anonymous.post(path, data={"decision": "accept"}).status_code == 401, path
    with httpx.Client(base_url=base, cookies={"commet_session": "eyJ1aWQiOiIxIn0.forged.sig"}) as forged:
        assert forged.get("/", follow_redirects=False).status_code == 303  # unsigned cookie: no session
    with httpx.Client(base_url=base, follow_redirects=False) as anonymous:
        login = anonymous.get("/login")
        assert login.status_code == 200
        assert login.headers["x-frame-options"] == "DENY" and "script-src 'self'" in login.headers["content-security-policy"]
        bad = anonymous.post("/login", data={"csrf": csrf_of(login.text), "name": "alice", "password": "wrong!"})
        assert bad.status_code == 303 and bad.headers["location"] == "/login"


def test_forms_without_a_valid_csrf_token_are_refused(served: tuple[str, Path]) -> None:
    base, db = served
    with sign_in(base) as client:
        for data in ({"decision": "accept"}, {"decision": "accept", "csrf": "not-the-token"}):
            assert client.post("/items/rh-1/decision", data=data).status_code == 403
        assert client.post("/items/rh-1/edit", data={"turn": "0", "story": "x", "question": "q",
                                                     "answers": "a"}).status_code == 403
        assert ReviewDB(db).decisions("rh-1") == [] and ReviewDB(db).edits("rh-1") == []
        with httpx.Client(base_url=base) as other:  # a token from another session does not work either
            foreign = csrf_of(other.get("/login").text)
        assert client.post("/items/rh-1/decision", data={"decision": "accept", "csrf": foreign}).status_code == 403
        token = csrf_of(client.get("/items/rh-1").text)
        assert client.post("/items/rh-1/decision", data={"decision": "accept", "csrf": token}).status_code == 303
        assert len(ReviewDB(db).decisions("rh-1")) == 1


def test_pictures_come_only_from_the_dataset_images_folder(served: tuple[str, Path]) -> None:
    base, _ = served
    with sign_in(base) as client:
        assert client.get("/images/bath.png").headers["content-type"] == "image/png"
        cookie = f"commet_session={client.cookies['commet_session']}"
    for path in ("/images/../secret.txt", "/images/../storyturns.jsonl", "/images/..%2Fsecret.txt",
                 "/images/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "/images//etc/passwd", "/images/..%5Csecret.txt",
                 "/images/bath.png%00.txt", "/pictures/../storyturns.jsonl"):
        status, body = raw_get(base, path, cookie)
        assert status == 404, path
        assert b"outside images" not in body and b"root:" not in body and b"storyturn" not in body


def test_story_markup_is_escaped(served: tuple[str, Path]) -> None:
    base, _ = served
    with sign_in(base) as client:
        html = client.get("/items/xss-1").text
    assert "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in html
    assert "<script>" not in html and "<img src=x" not in html


def test_request_and_upload_sizes_are_bounded(served: tuple[str, Path]) -> None:
    base, _ = served
    with sign_in(base) as client:
        token = csrf_of(client.get("/items/rh-1").text)
        big = client.post("/items/rh-1/errors", data={"csrf": token, "category": "text_other", "note": "x" * 400_000})
        assert big.status_code == 413
        files = {"file": ("big.png", b"\x89PNG" + b"0" * 300_000, "image/png")}
        upload = client.post("/items/rh-1/upload", data={"csrf": token, "picture_id": "1"}, files=files)
        assert upload.status_code == 303 and "larger than 256 KiB" in client.get("/items/rh-1").text
        files = {"file": ("huge.png", b"\x89PNG" + b"0" * 400_000, "image/png")}
        assert client.post("/items/rh-1/upload", data={"csrf": token, "picture_id": "1"}, files=files).status_code == 413
        fake = client.post("/items/rh-1/upload", data={"csrf": token, "picture_id": "1"},
                           files={"file": ("x.png", b"<svg onload=alert(1)>", "image/png")})
        assert fake.status_code == 303
        assert "not a picture" in client.get("/items/rh-1").text
        too_long = client.post("/items/rh-1/errors", data={"csrf": token, "category": "text_other", "note": "y" * 30_000})
        assert too_long.status_code == 413


def test_cli_accounts_and_export_errors(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from commet.cli import app as cli

    db = tmp_path / "review.sqlite"
    runner = CliRunner()
    added = runner.invoke(cli, ["review", "add-user", "dora", "--db", str(db), "--password-stdin"],
                          input="a long enough password\n")
    assert added.exit_code == 0, added.output
    assert ReviewDB(db).authenticate("dora", "a long enough password") is not None
    assert ReviewDB(db).authenticate("dora", "wrong") is None
    stored = ReviewDB(db).connect
    with stored() as conn:
        assert conn.execute("SELECT password_hash FROM users").fetchone()[0].startswith("scrypt$")
    again = runner.invoke(cli, ["review", "add-user", "dora", "--db", str(db), "--password-stdin"], input="x" * 12)
    assert again.exit_code == 2 and "already exists" in again.output
    short = runner.invoke(cli, ["review", "add-user", "eve", "--db", str(db), "--password-stdin"], input="short\n")
    assert short.exit_code == 2 and "at least 8" in short.output
    prompted = runner.invoke(cli, ["review", "add-user", "fay", "--db", str(db)], input="pass phrase 1\npass phrase 1\n")
    assert prompted.exit_code == 0 and "pass phrase" not in prompted.output
    missing = runner.invoke(cli, ["review", "export", "--db", str(tmp_path / "none.sqlite"), "--out", str(tmp_path / "o")])
    assert missing.exit_code == 2 and "no review store" in missing.output
