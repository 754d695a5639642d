"""Sign-in throttling an attacker cannot turn against the owner, and bounded request headers (issue 44, point 9).

Real uvicorn servers on 127.0.0.1, each client on its own loopback address (127.0.0.x): one address
spraying one password over 40 names is refused after its limit while the owner elsewhere signs in;
an account guessed from many addresses is delayed, never refused; the study organiser gets exactly
``login_rate`` wrong passwords a minute per address; a 100 KB header is 431 in both apps.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import Response

from commet.apps.review.app import create_app as create_review_app
from commet.apps.signin import DEVICE_COOKIE, DEVICE_PREFIX, DeviceCookies, LoginThrottle
from commet.apps.study.app import create_app as create_study_app
from commet.apps.study.build import build_study
from commet.format import Dataset, StoryTurn, Turn
from tests.review_server import PASSWORD, running_app, serving, write_dataset
from tests.test_review_security import attempt, client_at, csrf_of

ORGANISER = "organiser pass 42"


def test_spraying_one_password_over_many_names_is_counted_per_address() -> None:
    now = [0.0]
    throttle = LoginThrottle(free=5, clock=lambda: now[0])  # 20 failures per address and 15 minutes
    waits = []
    for n in range(40):
        waits.append(throttle.wait_s(f"user{n}", "10.0.0.1"))
        if not waits[-1]:
            throttle.failed(f"user{n}", "10.0.0.1")
    assert waits[:20] == [0] * 20 and all(w > 0 for w in waits[20:])
    assert throttle.wait_s("user0", "10.0.0.2") == 0  # another address is not slowed
    now[0] += 900
    assert throttle.wait_s("user99", "10.0.0.1") == 0  # the window passed


def test_the_organiser_limit_is_exact() -> None:
    now = [0.0]
    throttle = LoginThrottle(free=10, address_limit=10, address_window_s=60.0, clock=lambda: now[0])
    allowed = 0
    for _ in range(30):
        now[0] += 0.5
        if throttle.wait_s("organiser", "10.0.0.1") == 0:
            allowed += 1
            throttle.failed("organiser", "10.0.0.1")
    assert allowed == 10  # in the first 15 s, exactly 10
    now[0] = 60.4  # a minute after the first failure (at 0.5 s): still refused
    assert throttle.wait_s("organiser", "10.0.0.1") > 0
    now[0] = 60.6
    assert throttle.wait_s("organiser", "10.0.0.1") == 0


def test_review_spraying_is_refused_per_address_and_the_owner_gets_in(tmp_path: Path) -> None:
    throttle = LoginThrottle(free=3, base_s=0.2, max_delay_s=0.6, address_limit=8)
    with running_app(tmp_path, login_throttle=throttle) as (base, _), client_at(base, "127.0.0.5") as sprayer, \
            client_at(base, "127.0.0.6") as owner:
        answered = 0
        for n in range(40):
            response = attempt(sprayer, f"name{n}", "Summer2026!")
            if response.status_code == 429:
                break
            assert response.headers["location"] == "/login"
            answered += 1
        assert answered == 8
        assert attempt(sprayer, "alice", PASSWORD).status_code == 429  # this address waits, whatever the name
        assert attempt(owner, "alice", PASSWORD).headers["location"] == "/"


def test_a_device_is_exempt_from_its_address_block_only_while_it_fails_little() -> None:
    now = [0.0]
    throttle = LoginThrottle(free=5, address_limit=4, address_window_s=60.0, clock=lambda: now[0])
    for k in range(4):
        throttle.failed(f"x{k}", "10.0.0.1")
    assert throttle.wait_s("alice", "10.0.0.1") == 60.0  # the address is blocked, whatever the name...
    assert throttle.wait_s("alice", "10.0.0.1", device="d-alice") == 0.0  # ...but for a known device
    for _ in range(3):  # a known device's failures count for it, not for its (unblocked) address
        throttle.failed("bob", "10.0.0.2", device="d-bob")
    assert "10.0.0.2" not in throttle.addresses and throttle.wait_s("carol", "10.0.0.2") == 0.0
    for _ in range(5):
        assert throttle.wait_s("alice", "10.0.0.1", device="d-alice") == 0.0
        throttle.failed("alice", "10.0.0.1", device="d-alice")
    assert not throttle.trusted("alice", "d-alice") and throttle.trusted("ALICE ", "d-other")
    assert throttle.wait_s("alice", "10.0.0.1", device="d-alice") == 60.0  # five failures: exempt no more
    assert throttle.wait_s("alice", "10.0.0.1", device="d-other") == 1.0  # a device skips the block, not the pair
    throttle.failed("alice", "10.0.0.1", device="d-alice")  # counted against the address again
    assert len(throttle.addresses["10.0.0.1"]) == 4 and throttle.addresses["10.0.0.1"][-1] == now[0]
    now[0] = 61.0
    assert throttle.wait_s("bob", "10.0.0.1") == 0.0  # the window passed
    assert not throttle.trusted("alice", "d-alice")  # a worn-out device id stays so (a new sign-in issues another)


def test_a_worn_out_device_stays_worn_out_however_many_other_attempts_pass() -> None:
    """Worn-out device ids are kept apart from the failure counts: filling the counts with other devices' single
    failures (each a new sign-in's new id) does not push a stolen cookie's worn-out id out, making it new again."""
    throttle = LoginThrottle(free=5, max_keys=4, clock=lambda: 0.0)
    for _ in range(5):
        throttle.failed("alice", "10.0.0.1", device="stolen")
    assert not throttle.trusted("alice", "stolen")
    for k in range(40):  # the guesser's own account: a new device id each time, one failure each
        throttle.failed("mallory", "10.0.0.2", device=f"own{k}")
    assert not throttle.trusted("alice", "stolen")
    for k in range(4):  # only as many other worn-out ids as the table holds push it out
        for _ in range(5):
            throttle.failed("mallory", "10.0.0.2", device=f"worn{k}")
    assert throttle.trusted("alice", "stolen")


def device_cookie(client: httpx.Client) -> str:
    value = client.cookies.get(DEVICE_COOKIE)
    assert value, "no device cookie"
    return value


def with_device(client: httpx.Client, value: str) -> httpx.Client:
    client.cookies.clear()
    client.cookies.set(DEVICE_COOKIE, value, domain="127.0.0.1", path="/login")  # where the app sets it
    return client


def test_review_a_device_cookie_lets_the_owner_in_past_a_blocked_shared_address(tmp_path: Path) -> None:
    """The owner signed in before from this browser (a device cookie); a sprayer behind the same address (an ssh
    tunnel, a NAT) blocks the address: the owner with the cookie still gets in, without it waits; a forged,
    altered or other store's cookie, or alice's cookie for bob, gives nothing; a cookie that keeps failing loses
    its exemption."""
    throttle = LoginThrottle(free=5, base_s=0.2, max_delay_s=0.4, address_limit=8)
    here = "127.0.0.9"
    with running_app(tmp_path, login_throttle=throttle) as (base, _), client_at(base, here) as owner, \
            client_at(base, here) as sprayer, client_at(base, here) as other:
        signed_in = attempt(owner, "Alice", PASSWORD)
        assert signed_in.headers["location"] == "/"
        issued = next(h for h in signed_in.headers.get_list("set-cookie") if h.startswith(DEVICE_COOKIE + "="))
        attributes = {part.strip().split("=")[0].lower() for part in issued.split(";")[1:]}
        assert {"httponly", "path", "max-age", "samesite"} <= attributes and "secure" not in attributes
        assert "samesite=strict" in issued.lower() and "path=/login" in issued.lower()
        assert f"max-age={180 * 24 * 3600}" in issued.lower()
        alice = device_cookie(owner)
        owner.cookies.clear()
        with_device(owner, alice)

        for n in range(8):
            assert attempt(sprayer, f"name{n}", "Summer2026!").headers["location"] == "/login"
        assert attempt(sprayer, "name9", "Summer2026!").status_code == 429
        assert attempt(other, "alice", PASSWORD).status_code == 429  # no cookie: this address waits

        body, signature = alice.removeprefix(DEVICE_PREFIX).split(".")
        altered = DEVICE_PREFIX + body[:-2] + ("AA" if body[-2:] != "AA" else "BB") + "." + signature
        forged = DEVICE_PREFIX + body + "." + "A" * len(signature)
        elsewhere = Response()
        DeviceCookies(tmp_path / "other.sqlite").issue(Request({"type": "http", "headers": []}), elsewhere, "alice")
        foreign = elsewhere.headers["set-cookie"].split(";")[0].split("=", 1)[1]
        for value in (altered, forged, foreign, "junk"):
            assert attempt(with_device(other, value), "alice", PASSWORD).status_code == 429, value
        assert attempt(with_device(other, alice), "bob", PASSWORD).status_code == 429  # alice's, not bob's

        assert attempt(owner, "alice", PASSWORD).headers["location"] == "/"  # the owner's browser gets in
        renewed = device_cookie(owner)
        assert renewed != alice  # a new device id with each sign-in

        thief = with_device(other, renewed)  # a copied cookie: a few guesses, not an endless supply
        for n in range(5):
            assert attempt(thief, "alice", f"guess {n}").headers["location"] == "/login"
        time.sleep(0.5)  # past the pair's backoff (five failures): what refuses now is the address's block
        assert attempt(thief, "alice", PASSWORD).status_code == 429  # worn out: the address's block applies
        assert attempt(with_device(owner, renewed), "alice", PASSWORD).status_code == 429  # the same cookie
        assert attempt(with_device(owner, alice), "alice", PASSWORD).headers["location"] == "/"  # another one


def test_a_device_cookie_holds_a_few_names_for_180_days(tmp_path: Path) -> None:
    """One cookie for the reviewers sharing a browser (the most recent eight), each entry for its own name only,
    valid 180 days; Secure when asked (as the session cookie is); the key is the store's, kept across restarts."""
    now = [1_000_000.0]
    devices = DeviceCookies(tmp_path / "app.sqlite", secure=True, clock=lambda: now[0])

    def request_with(value: str | None) -> Request:
        headers = [(b"cookie", f"{DEVICE_COOKIE}={value}".encode())] if value else []
        return Request({"type": "http", "headers": headers})

    value = None
    for n in range(10):
        response = Response()
        devices.issue(request_with(value), response, f" Reviewer{n} ")
        header = response.headers["set-cookie"]
        value = header.split(";")[0].split("=", 1)[1]
        assert "secure" in header.lower() and "httponly" in header.lower() and len(value) < 1000
    held = request_with(value)
    assert [name for name, _, _ in devices.entries(held)] == [f"reviewer{n}" for n in range(9, 1, -1)]
    assert devices.device(held, "REVIEWER5") and devices.device(held, "reviewer1") is None
    assert devices.device(held, "reviewer5") != devices.device(held, "reviewer6")
    again = DeviceCookies(tmp_path / "app.sqlite", clock=lambda: now[0])  # the server restarted
    assert again.device(held, "reviewer5") == devices.device(held, "reviewer5")
    app = create_review_app(write_dataset(tmp_path / "dataset"), tmp_path / "review.sqlite", secure_cookies=True)
    assert app.state.review.pages.devices.secure  # as the session cookie
    now[0] += 180 * 24 * 3600
    assert devices.entries(held) == []  # 180 days after they were issued


def test_review_an_account_guessed_from_everywhere_delays_but_never_locks_out(tmp_path: Path) -> None:
    throttle = LoginThrottle(free=3, base_s=0.3, max_delay_s=0.6, account_free=6)
    with running_app(tmp_path, login_throttle=throttle) as (base, _):
        for n in range(10):  # ten addresses, one guess each: no address or pair reaches a limit
            with client_at(base, f"127.0.1.{n + 1}") as guesser:
                assert attempt(guesser, "bob", f"guess {n}").headers["location"] == "/login"
        with client_at(base, "127.0.2.1") as owner:
            started = time.monotonic()
            response = attempt(owner, "bob", PASSWORD)
            assert response.status_code == 303 and response.headers["location"] == "/"  # in, not 429
            assert time.monotonic() - started >= 0.6  # delayed by the name's backoff


@pytest.fixture
def study(tmp_path: Path) -> Path:
    turn = Turn(story="Ana leaves.", question="Where will she look, the box or the bag?", answers=["Box"])
    folder = Dataset([StoryTurn(id="s-1", task="false_belief_location", category="Belief", turns=[turn])],
                     name="tiny").save(tmp_path / "ds")
    build_study(folder, tmp_path / "study.json", questionnaires=1)
    return tmp_path


def organiser_login(client: httpx.Client, password: str) -> httpx.Response:
    return client.post("/organiser/login", data={"csrf": csrf_of(client.get("/organiser").text), "password": password})


def test_study_organiser_gets_exactly_the_limit_and_the_owner_elsewhere_gets_in(study: Path) -> None:
    app = create_study_app(study / "study.json", study / "study.sqlite", judge="rules", organiser_password=ORGANISER,
                           login_rate=10)
    with serving(app) as base, client_at(base, "127.0.0.7") as attacker, client_at(base, "127.0.0.8") as owner:
        statuses = [organiser_login(attacker, f"guess {n}").status_code for n in range(14)]
        assert statuses == [401] * 10 + [429] * 4
        assert organiser_login(attacker, ORGANISER).status_code == 429  # this address waits out its minute
        assert organiser_login(owner, ORGANISER).status_code == 303


def test_huge_request_headers_are_431_in_both_apps(tmp_path: Path, study: Path) -> None:
    with running_app(tmp_path / "review") as (review, _), \
            serving(create_study_app(study / "study.json", study / "study.sqlite", judge="rules")) as site:
        for base, page in ((review, "/login"), (site, "/")):
            assert httpx.get(base + page, headers={"X-Note": "a" * 8_000}).status_code == 200
            for headers in ({"X-Big": "a" * 100_000}, {"Cookie": "c=" + "b" * 20_000},
                            {f"X-{n}": "c" * 1_000 for n in range(40)}):
                answer = httpx.get(base + page, headers=headers)
                assert answer.status_code == 431 and "set-cookie" not in answer.headers, (base, list(headers)[:1])
