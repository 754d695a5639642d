"""Who a request comes from and which host it names, as `commet review serve` and `commet study serve` see it.

Both servers run as the real command (uvicorn on 127.0.0.1, port 0) and are spoken to over HTTP:
proxy headers (X-Forwarded-For, X-Real-IP, Forwarded) from 127.0.0.1 no longer choose the client
address the sign-in throttle counts (rotating X-Forwarded-For defeated it), unless
``--forwarded-allow-ips`` names the proxy; sign-ins are also throttled per account, whatever the
address; a request naming a host the server does not answer to is refused (DNS rebinding), in
headless Chromium too, whose resolver maps an attacker's name to 127.0.0.1.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import sync_playwright

import commet
from commet.apps.guards import AllowedHosts, host_name
from commet.apps.signin import LoginThrottle
from tests.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.review_server import PASSWORD, write_dataset

WRONG = "not the password 1"
#: the package under test, whatever the working folder of the command
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(commet.__file__).resolve().parents[1]),
                                                    os.environ.get("PYTHONPATH", "")])}
#: the headers a client may forge to pass for another address
FORGED = ("X-Forwarded-For", "X-Real-IP", "Forwarded")


@contextmanager
def served(args: list[str], announced: str, cwd: Path) -> Iterator[str]:
    """The base URL of ``commet ARGS --port 0`` (its first line names it), stopped afterwards."""
    server = subprocess.Popen([sys.executable, "-m", "commet.cli", *args, "--port", "0"], cwd=cwd, env=ENV,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline() if server.stdout else ""
        match = re.search(announced, line)
        assert match, (line, server.stderr.read() if server.stderr and server.poll() is not None else "")
        base = match.group(1)
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(base + "/favicon.ico", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not answer"
                time.sleep(0.05)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture(scope="module")
def review_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("review")
    write_dataset(folder / "ds")
    added = subprocess.run([sys.executable, "-m", "commet.cli", "review", "add-user", "alice", "--password-stdin",
                            "--db", "review.sqlite"], cwd=folder, env=ENV, input=PASSWORD + "\n", capture_output=True,
                           text=True, timeout=60)
    assert added.returncode == 0, added.stderr
    return folder


def review(folder: Path, *extra: str) -> Iterator[str]:
    return served(["review", "serve", "--dataset", "ds", "--db", "review.sqlite", *extra],
                  r"at (http://127\.0\.0\.1:\d+)/", folder)


def csrf(client: httpx.Client, path: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', client.get(path).text)
    assert found, path
    return found.group(1)


def review_sign_in(client: httpx.Client, password: str, forged: str | None) -> httpx.Response:
    """One sign-in as alice, the proxy headers claiming ``forged`` as the client address."""
    headers = {name: (f"for={forged}" if name == "Forwarded" else forged) for name in FORGED} if forged else {}
    return client.post("/login", data={"csrf": csrf(client, "/login"), "name": "alice", "password": password},
                       headers=headers)


def guesses_until_throttled(client: httpx.Client, addresses: list[str]) -> int:
    """Wrong passwords, each claiming the next address, until one is answered 429; how many were checked."""
    for checked, address in enumerate(addresses):
        answer = review_sign_in(client, WRONG, address)
        if answer.status_code == 429:
            assert "Too many failed sign-ins" in answer.text
            return checked
        assert answer.headers["location"] == "/login"
    return len(addresses)


def test_forged_proxy_headers_do_not_defeat_the_sign_in_throttle(review_folder: Path) -> None:
    with review(review_folder) as base, httpx.Client(base_url=base, follow_redirects=False, timeout=30) as client:
        # the backoff starts after 5 free failures (1 s, 2 s, 4 s ...): the guesses are refused within a few more,
        # though each claims another address (uvicorn believed X-Forwarded-For from 127.0.0.1: never refused)
        checked = guesses_until_throttled(client, [f"203.0.113.{n}" for n in range(12)])
        assert 5 <= checked < 12
        refused = review_sign_in(client, PASSWORD, "203.0.113.99")  # the right password waits too
        assert refused.status_code == 429


def test_behind_a_named_proxy_guesses_from_many_addresses_are_throttled_per_account(review_folder: Path) -> None:
    with review(review_folder, "--forwarded-allow-ips", "127.0.0.1") as base, \
            httpx.Client(base_url=base, follow_redirects=False, timeout=30) as client:
        # the proxy is believed, each address is new (no pair reaches its 5 free failures): the account's 20 free
        # failures, then every attempt on it is delayed (1 s, 2 s ...), never refused: the owner still gets in
        assert guesses_until_throttled(client, [f"198.51.100.{n}" for n in range(20)]) == 20
        started = time.monotonic()
        assert review_sign_in(client, WRONG, "198.51.100.50").headers["location"] == "/login"
        assert time.monotonic() - started >= 1.0
        started = time.monotonic()
        owner = review_sign_in(client, PASSWORD, "198.51.100.200")
        assert owner.status_code == 303 and owner.headers["location"] == "/" and time.monotonic() - started >= 2.0
        with httpx.Client(base_url=base, follow_redirects=False, timeout=30) as other:
            bob = other.post("/login", data={"csrf": csrf(other, "/login"), "name": "bob", "password": WRONG})
            assert bob.status_code == 303  # another account is not slowed


def test_a_request_naming_another_host_is_refused(review_folder: Path) -> None:
    with review(review_folder, "--allowed-hosts", "review.example.org,*.lab.test") as base:
        port = base.rsplit(":", 1)[1]
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost", f"review.example.org:{port}",
                     f"pc7.lab.test:{port}", "REVIEW.EXAMPLE.ORG.", f"[::1]:{port}"):
            answer = httpx.get(base + "/login", headers={"Host": host})
            assert answer.status_code == 200, host
        for host in (f"evil.example:{port}", "127.0.0.1.evil.example", f"lab.test:{port}", "10.0.0.7", "",
                     "localhost:80x", "a b", "user@localhost", "[::1"):
            answer = httpx.get(base + "/login", headers={"Host": host})
            assert answer.status_code == 400 and "set-cookie" not in answer.headers, host
            assert "does not answer to that host name" in answer.text
        posted = httpx.post(base + "/login", headers={"Host": f"evil.example:{port}"},
                            data={"name": "alice", "password": PASSWORD})
        assert posted.status_code == 400
        assert raw_status(port, b"GET /login HTTP/1.0\r\n\r\n") == 400  # no Host at all
        assert raw_status(port, f"GET /login HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nHost: evil.example\r\n\r\n"
                          .encode()) == 400


def raw_status(port: str, request: bytes) -> int:
    with socket.create_connection(("127.0.0.1", int(port)), timeout=10) as sock:
        sock.sendall(request)
        head = sock.recv(4096).split(b"\r\n", 1)[0]
    return int(head.split()[1])


def test_the_study_server_ignores_forged_proxy_headers_and_foreign_hosts(tmp_path: Path) -> None:
    from commet.apps.study.build import ParticipantTexts, build_study
    from commet.format import Dataset, StoryTurn, Turn

    turn = Turn(story="Ana leaves.", question="Where will she look, the box or the bag?", answers=["Box"])
    Dataset([StoryTurn(id="s-1", task="false_belief_location", category="Belief", turns=[turn])],
            name="tiny").save(tmp_path / "ds")
    build_study(tmp_path / "ds", tmp_path / "study.json", questionnaires=1,
                participant=ParticipantTexts(contact="The Story Lab: lab@example.org"))
    (tmp_path / "organiser.txt").write_text("organiser pass 42\n")
    args = ["study", "serve", "study.json", "--db", "study.sqlite", "--organiser-password-file", "organiser.txt"]
    with served(args, r"study at (http://127\.0\.0\.1:\d+)/", tmp_path) as base, \
            httpx.Client(base_url=base, follow_redirects=False, timeout=30) as client:
        statuses = []
        for n in range(16):  # the study's 10 free organiser failures, then its backoff; each "from" another address
            forged = {name: f"192.0.2.{n}" for name in FORGED}
            statuses.append(client.post("/organiser/login", headers=forged,
                                        data={"csrf": csrf(client, "/organiser"), "password": WRONG}).status_code)
            if statuses[-1] == 429:
                break
        assert statuses[:10] == [401] * 10 and statuses[-1] == 429, statuses
        refused = client.post("/organiser/login", data={"csrf": csrf(client, "/organiser"),
                                                        "password": "organiser pass 42"},
                              headers={"X-Forwarded-For": "192.0.2.77"})
        assert refused.status_code == 429 and "Too many wrong passwords" in refused.text
        port = base.rsplit(":", 1)[1]
        assert httpx.get(base + "/organiser", headers={"Host": f"rebind.test:{port}"}).status_code == 400


def test_dns_rebinding_is_refused_in_chromium(review_folder: Path) -> None:
    """The attacker's name resolves to 127.0.0.1 (Chromium's resolver is told so): the page never loads;
    the same name given to --allowed-hosts (a name the operator serves under) loads it."""
    rules = "--host-resolver-rules=MAP rebind.test 127.0.0.1, MAP review.lab.test 127.0.0.1"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, rules])
        try:
            page = browser.new_page()
            with review(review_folder, "--allowed-hosts", "review.lab.test") as base:
                port = base.rsplit(":", 1)[1]
                answer = page.goto(f"http://rebind.test:{port}/login")
                assert answer is not None and answer.status == 400
                assert "does not answer to that host name" in page.content()
                assert page.context.cookies() == []
                answer = page.goto(f"http://review.lab.test:{port}/login")
                assert answer is not None and answer.status == 200
                assert page.locator("input[name=password]").count() == 1
        finally:
            browser.close()


# ------------------------------------------------------------------------------------ the rules themselves


@pytest.mark.parametrize(("bound", "extra", "allowed", "refused"), [
    ("127.0.0.1", [], ["127.0.0.1:8000", "localhost", "[::1]:8000", "LOCALHOST."], ["evil.test", "10.0.0.1", ""]),
    ("0.0.0.0", [], ["localhost:1", "192.168.1.20:8000", "[fe80::1]"], ["evil.test", "my-pc.local"]),
    ("192.168.1.20", ["review.example.org"], ["192.168.1.20:8000", "review.example.org"],
     ["localhost", "127.0.0.1", "10.0.0.1"]),
    ("127.0.0.1", ["*.example.org"], ["a.example.org", "a.b.example.org:9"], ["example.org", "aexample.org"]),
    ("127.0.0.1", ["*"], ["anything.test", "x"], []),
])
def test_allowed_hosts(bound: str, extra: list[str], allowed: list[str], refused: list[str]) -> None:
    hosts = AllowedHosts.for_server(bound, extra)
    assert [h for h in allowed if not hosts.allows(h)] == []
    assert [h for h in refused if hosts.allows(h)] == []


def test_host_names_are_parsed_strictly() -> None:
    assert host_name("Example.ORG.:8000") == "example.org"
    assert host_name("[::1]:80") == "::1"
    assert [host_name(bad) for bad in ("a:b", "[::1", "[::1]x", "a/b", "u@h", ":80", "a b")] == [None] * 7


def test_the_throttle_counts_an_account_over_all_addresses() -> None:
    now = [0.0]
    throttle = LoginThrottle(free=2, base_s=1.0, max_delay_s=4.0, account_free=4, clock=lambda: now[0])
    waits, delays = [], []
    for n in range(7):
        waits.append(throttle.wait_s("Bob", f"10.0.0.{n}"))  # a new address each time: no pair reaches 2
        delays.append(throttle.delay_s("Bob"))
        throttle.failed("bob", f"10.0.0.{n}")
    assert waits == [0] * 7  # a name guessed from everywhere is never refused (the owner is never locked out)...
    assert delays == [0, 0, 0, 0, 1, 2, 4]  # ...but every attempt on it is delayed, at most max_delay_s
    assert throttle.delay_s("alice") == 0 and throttle.wait_s("alice", "10.0.0.1") == 0
    assert throttle.wait_s("bob", "10.0.0.99") == 0 and throttle.delay_s("bob") == 4
    throttle.succeeded("bob", "10.0.0.99")
    assert throttle.accounts == {} and throttle.delay_s("bob") == 0
