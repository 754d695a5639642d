"""The review app fails safely, over raw HTTP against a real uvicorn server on 127.0.0.1: no session, no CSRF
token, `../` picture paths, `<script>` in a story, big bodies; and the web hardening of both apps (one
normal form for names, sign-in backoff per (name, client), decompression bombs, server-side sessions,
same-origin POSTs, formula-safe CSV) over raw HTTP and in Chromium."""

from __future__ import annotations

import csv
import http.client
import io
import re
import resource
import struct
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from PIL import Image
from typer.testing import CliRunner

from commet.apps.review.db import ReviewDB
from commet.apps.signin import LoginThrottle
from commet.apps.web import csv_safe, normalise_name
from commet.cli import app as cli
from tests.llm_gen_servers import small_png
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
        assert client.post("/items/rh-1/decision", data={"decision": "reject", "csrf": token,
                                                         "revision": "1"}).status_code == 303
        assert len(ReviewDB(db).decisions("rh-1")) == 1


def test_control_characters_are_removed_from_text_fields(served: tuple[str, Path]) -> None:
    """The review's text fields keep what both apps keep (commet.apps.web.form_text): no NUL or escape."""
    base, db = served
    with sign_in(base, "carol") as client:
        token = csrf_of(client.get("/items/rh-1").text)
        revision = str(ReviewDB(db).item("rh-1")[1])
        done = client.post("/items/rh-1/errors", data={"csrf": token, "revision": revision, "category": "text_other",
                                                       "note": "bad\x00 \x1b[2Jline\r\nnext\x7f"})
        assert done.status_code == 303, done.text
    notes = [row["note"] for row in ReviewDB(db).errors("rh-1")]
    assert "bad [2Jline\nnext" in notes


def test_a_revision_the_item_never_reached_is_a_bad_request(served: tuple[str, Path]) -> None:
    """A form naming a later revision than the item's is malformed (400), not a conflict with changes since."""
    base, db = served
    with sign_in(base, "alice") as client:
        token = csrf_of(client.get("/items/rh-1").text)
        current = ReviewDB(db).item("rh-1")[1]
        before = (len(ReviewDB(db).decisions("rh-1")), len(ReviewDB(db).errors("rh-1")))
        st = ReviewDB(db).item("rh-1")[0]
        turn = st.turns[0]
        for path, extra in (("/items/rh-1/decision", {"decision": "reject"}),
                            ("/items/rh-1/errors", {"category": "text_other", "note": "n"}),
                            ("/items/rh-1/edit", {"turn": "0", "story": "Overwritten.", "question": turn.question,
                                                  "answers": "\n".join(turn.answers), "feedback": ""}),
                            ("/items/rh-1/meta", {"task": "reference_easy"})):
            future = client.post(path, data={"csrf": token, "revision": "999999999999", **extra})
            assert future.status_code == 400 and "has no revision 999999999999" in future.text, path
            assert "changes since" not in future.text
        assert (len(ReviewDB(db).decisions("rh-1")), len(ReviewDB(db).errors("rh-1"))) == before
        assert ReviewDB(db).item("rh-1")[1] == current and ReviewDB(db).item("rh-1")[0] == st  # no text saved


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
    # a password too short is refused when first typed (not after typing it twice) and asked for again
    retyped = runner.invoke(cli, ["review", "add-user", "gus", "--db", str(db)],
                            input="short\nlong pass phrase\nlong pass phrase\n")
    assert retyped.exit_code == 0, retyped.output
    assert retyped.output.count("Password:") == 2 and retyped.output.count("Repeat for confirmation:") == 1
    assert retyped.output.index("at least 8 characters") < retyped.output.index("Repeat for confirmation:")
    assert ReviewDB(db).authenticate("gus", "long pass phrase") is not None
    # a name already taken, or unknown to set-password, is said before any password is asked for
    for argv in (["add-user", "FAY "], ["set-password", "nobody"]):
        early = runner.invoke(cli, ["review", *argv, "--db", str(db)], input="")
        assert early.exit_code == 2 and "Password" not in early.output, early.output
        assert "already exists" in early.output or "no user 'nobody'" in early.output
    missing = runner.invoke(cli, ["review", "export", "--db", str(tmp_path / "none.sqlite"), "--out", str(tmp_path / "o")])
    assert missing.exit_code == 2 and "no review store" in missing.output


# ---------------------------------------------------------------------------------------------- web hardening

def png_declaring(width: int, height: int) -> bytes:
    """A small real PNG whose header is rewritten to declare ``width`` x ``height`` (a decompression bomb)."""
    out = io.BytesIO()
    Image.new("RGB", (64, 64), (200, 30, 30)).save(out, format="PNG")
    data = bytearray(out.getvalue())
    ihdr = data[12:29]  # b"IHDR" + 13 bytes of header
    ihdr[4:12] = struct.pack(">II", width, height)
    data[12:29] = ihdr
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(ihdr)))
    return bytes(data)


def real_bomb() -> bytes:
    """A genuine 20000 x 20000 picture that compresses to a few tens of KiB."""
    out = io.BytesIO()
    Image.new("1", (20_000, 20_000)).save(out, format="PNG", optimize=True)
    return out.getvalue()


def client_at(base: str, address: str) -> httpx.Client:
    """An HTTP client whose connections come from ``address`` (another loopback address is another client)."""
    return httpx.Client(base_url=base, follow_redirects=False, transport=httpx.HTTPTransport(local_address=address))


def attempt(client: httpx.Client, name: str, password: str) -> httpx.Response:
    return client.post("/login", data={"csrf": csrf_of(client.get("/login").text), "name": name, "password": password})


def test_login_throttle_backs_off_and_caps() -> None:
    now = [0.0]
    throttle = LoginThrottle(free=3, base_s=1.0, max_delay_s=8.0, clock=lambda: now[0])
    waits = []
    for _ in range(8):
        waits.append(throttle.wait_s(" Bob", "10.0.0.1"))
        throttle.failed("BOB\t", "10.0.0.1")
    assert waits == [0, 0, 0, 1, 2, 4, 8, 8]  # one key for every spelling of bob; the wait never exceeds 8 s
    assert throttle.wait_s("bob", "10.0.0.2") == 0  # another client is not slowed down
    now[0] += 8
    assert throttle.wait_s("bob", "10.0.0.1") == 0
    throttle.succeeded("bob", "10.0.0.1")
    assert throttle.failures == {}
    assert normalise_name("\tＢｏｂ ") == normalise_name("bob") == "bob"


def test_names_have_one_normal_form_and_a_guesser_does_not_lock_out_the_owner(tmp_path: Path) -> None:
    throttle = LoginThrottle(free=3, base_s=0.5, max_delay_s=1.0)
    with running_app(tmp_path, login_throttle=throttle) as (base, _), client_at(base, "127.0.0.1") as here, \
            client_at(base, "127.0.0.2") as owner:
        for spelling in ("bob", " bob", "BOB ", "\tbob", "ｂｏｂ"):
            response = attempt(here, spelling, PASSWORD)
            assert response.status_code == 303 and response.headers["location"] == "/", spelling
            here.cookies.clear()
        for spelling in ("bob ", " BOB", "\tbob"):  # three guesses, whatever the spelling, count for one name
            assert attempt(here, spelling, "guess 123").headers["location"] == "/login"
        refused = attempt(here, "bob", PASSWORD)
        assert refused.status_code == 429 and "Too many failed sign-ins" in refused.text
        assert attempt(here, "alice", PASSWORD).status_code == 303  # other names are not affected
        assert attempt(owner, "bob", PASSWORD).headers["location"] == "/"  # the owner elsewhere: at once
        time.sleep(1.05)  # and on the guesser's own machine after at most max_delay_s
        here.cookies.clear()
        assert attempt(here, "bob", PASSWORD).headers["location"] == "/"


def test_an_unknown_name_costs_one_scrypt_run_like_a_known_one(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Sign-in does the same work whether the name exists or not (counted, not timed): one scrypt run, the
    unknown name's hash made once when the app starts."""
    import hashlib

    from commet.apps import signin

    signin.unknown_user_hash.cache_clear()
    runs = [0]
    scrypt = hashlib.scrypt

    def counted(*args: object, **kwargs: object) -> bytes:
        runs[0] += 1
        return scrypt(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(signin.hashlib, "scrypt", counted)
    with running_app(tmp_path) as (base, _), httpx.Client(base_url=base) as client:
        work = {}
        for name, password in (("nobody", "guess 123"), ("nobody-else", PASSWORD), ("alice", "guess 123")):
            token = csrf_of(client.get("/login").text)
            before = runs[0]
            response = client.post("/login", data={"csrf": token, "name": name, "password": password},
                                   follow_redirects=False)
            assert response.headers["location"] == "/login"
            work[name] = runs[0] - before
        assert work == {"nobody": 1, "nobody-else": 1, "alice": 1}
        before = runs[0]
        assert attempt(client, "bob", PASSWORD).headers["location"] == "/"
        assert runs[0] - before == 1


def test_anonymous_visitors_leave_no_session_rows(tmp_path: Path) -> None:
    """Loading the sign-in page (and failing to sign in) makes no row; the anonymous form's CSRF token is a signed
    cookie: without it, with another visitor's token, or from another site the POST is refused."""
    import sqlite3

    with running_app(tmp_path) as (base, db), httpx.Client(base_url=base, follow_redirects=False) as client:
        for _ in range(300):
            assert client.get("/login").status_code == 200
        with httpx.Client(base_url=base) as stranger:
            for _ in range(50):
                assert stranger.get("/login").status_code == 200
            foreign = csrf_of(stranger.get("/login").text)
        token = csrf_of(client.get("/login").text)
        assert attempt(client, "alice", "wrong guess").headers["location"] == "/login"
        assert "Unknown user or wrong password" in client.get("/login").text  # the message rode in the cookie
        rows = sqlite3.connect(db).execute("SELECT COUNT(*) FROM web_sessions").fetchone()[0]
        assert rows == 0
        form = {"name": "alice", "password": PASSWORD}
        assert client.post("/login", data=form).status_code == 403
        assert client.post("/login", data={**form, "csrf": foreign}).status_code == 403
        assert client.post("/login", data={**form, "csrf": token},
                           headers={"Origin": "http://evil.example"}).status_code == 403
        assert client.post("/login", data={**form, "csrf": csrf_of(client.get("/login").text)}).status_code == 303
        rows = sqlite3.connect(db).execute("SELECT COUNT(*) FROM web_sessions").fetchone()[0]
        assert rows == 1  # the signed-in session


def test_uploads_are_decoded_under_a_pixel_limit(served: tuple[str, Path]) -> None:
    base, db = served
    store = ReviewDB(db)
    with sign_in(base) as client:
        token = csrf_of(client.get("/items/rh-1").text)
        revision = str(store.item("rh-1")[1])
        bombs = (("declared.png", png_declaring(12_000, 12_000)), ("real.png", real_bomb()))
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # the server runs in this process
        for name, data in bombs:
            assert len(data) < 200_000
            response = client.post("/items/rh-1/upload", data={"csrf": token, "picture_id": "1", "revision": revision},
                                   files={"file": (name, data, "image/png")})
            assert response.status_code == 413, (name, response.status_code)
            assert "Too large" in response.text and "at most 25,000,000 pixels" in response.text
        grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
        assert grown_mib < 100, f"the server grew by {grown_mib:.0f} MiB decoding bombs"
        assert len(store.versions("rh-1", "bath.png")) == 1
        ok = client.post("/items/rh-1/upload", data={"csrf": token, "picture_id": "1", "revision": revision},
                         files={"file": ("fine.png", small_png((1, 2, 3), (80, 60)), "image/png")})
        assert ok.status_code == 303 and len(store.versions("rh-1", "bath.png")) == 2


def test_sessions_live_on_the_server_and_die_at_sign_out_and_password_change(tmp_path: Path) -> None:
    with running_app(tmp_path) as (base, db):
        with sign_in(base, "carol") as first:
            cookie = first.cookies["commet_session"]
            with httpx.Client(base_url=base, cookies={"commet_session": cookie}) as copy:
                assert copy.get("/", follow_redirects=False).status_code == 200
                first.post("/logout", data={"csrf": csrf_of(first.get("/").text)})
                assert copy.get("/", follow_redirects=False).headers["location"] == "/login"  # revoked with it
        assert cookie.encode() not in b"".join(p.read_bytes() for p in tmp_path.glob("review.sqlite*"))

        with sign_in(base, "carol") as one, sign_in(base, "carol") as other:
            token = csrf_of(one.get("/account").text)
            changed = one.post("/account/password", data={"csrf": token, "current": PASSWORD, "new": "new pass 123",
                                                          "again": "new pass 123"})
            assert changed.status_code == 303
            assert one.get("/").status_code == 200  # the browser that changed it gets a new session
            assert other.get("/").headers["location"] == "/login"  # every other session is gone
            result = CliRunner().invoke(cli, ["review", "set-password", "carol", "--db", str(db), "--password-stdin"],
                                        input="third pass 1\n")
            assert result.exit_code == 0, result.output
            assert one.get("/").headers["location"] == "/login"
            assert ReviewDB(db).authenticate("Carol", "third pass 1") is not None


def test_posts_from_another_site_are_refused(served: tuple[str, Path]) -> None:
    base, db = served
    store = ReviewDB(db)
    with sign_in(base, "bob") as client:
        token = csrf_of(client.get("/items/xss-1").text)
        form = {"csrf": token, "revision": str(store.item("xss-1")[1]), "decision": "reject"}
        for headers in ({"Origin": "http://evil.example"}, {"Origin": "null"},
                        {"Referer": "http://evil.example/page"}, {"Origin": "http://127.0.0.1.evil.example"}):
            refused = client.post("/items/xss-1/decision", data=form, headers=headers)
            assert refused.status_code == 403 and "cross-site" in refused.text, headers
        assert store.decisions("xss-1") == []
        same = client.post("/items/xss-1/decision", data=form, headers={"Origin": base})
        assert same.status_code == 303 and len(store.decisions("xss-1")) == 1


FORMULAS = ["=HYPERLINK(\"http://evil.example\",\"x\")", "+1+1", "-2+3", "@SUM(A1:A2)", "\ttab lead", "\rcarriage return lead"]  # distinct: one filing each


def test_csv_exports_escape_formula_cells(served: tuple[str, Path]) -> None:
    base, db = served
    with sign_in(base, "alice") as client:
        token = csrf_of(client.get("/items/xss-1").text)
        revision = str(ReviewDB(db).item("xss-1")[1])
        for note in [*FORMULAS, "a = b, plain"]:
            assert client.post("/items/xss-1/errors", data={"csrf": token, "revision": revision, "category":
                                                            "text_other", "note": note}).status_code == 303
        body = client.get("/export/errors.csv")
        assert body.headers["content-type"].startswith("text/csv")
    notes = [row["note"] for row in csv.DictReader(io.StringIO(body.text, newline="")) if row["item"] == "xss-1"]
    # the form strips surrounding white space, so tab and CR leads arrive as plain text
    expected = ["'" + f.strip() if f.strip()[0] in "=+-@" else f.strip() for f in FORMULAS] + ["a = b, plain"]
    assert notes == expected
    assert csv_safe("\tx") == "'\tx" and csv_safe("\rx") == "'\rx" and csv_safe(-1) == -1 and csv_safe("a=1") == "a=1"
