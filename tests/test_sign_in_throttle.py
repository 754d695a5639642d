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

from commet.apps.study.app import create_app as create_study_app
from commet.apps.study.build import build_study
from commet.apps.web import LoginThrottle
from commet.format import Dataset, StoryTurn, Turn
from tests.review_server import PASSWORD, running_app, serving
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
