"""Password checks run off the event loop, and attempts sent together never pass the throttle's limits together.

Real uvicorn servers on 127.0.0.1; each attacker is its own loopback address (127.0.0.x) sending its attempts at
once (``asyncio.gather`` over one ``httpx.AsyncClient``). A check (scrypt) takes 40 to 100 ms here, so twenty attempts
are in flight together: counted only after their checks, all twenty would pass a limit of five.
"""

from __future__ import annotations

import asyncio
import re
import statistics
import time
from pathlib import Path

import httpx

from commet.apps.signin import DEVICE_COOKIE, LoginThrottle, Reserved
from commet.apps.study.app import create_app as create_study_app
from tests.review_server import PASSWORD, running_app, serving
from tests.test_sign_in_throttle import ORGANISER, study  # noqa: F401 - the fixture

ATTEMPTS = 20


def client_at(base: str, address: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=base, follow_redirects=False, timeout=30,
                             transport=httpx.AsyncHTTPTransport(local_address=address))


async def csrf(client: httpx.AsyncClient, page: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', (await client.get(page)).text)
    assert match, f"no CSRF field in {page}"
    return match.group(1)


async def together(client: httpx.AsyncClient, path: str, forms: list[dict[str, str]]) -> list[int]:
    """The statuses of ``forms`` posted to ``path`` all at once."""
    return [r.status_code for r in await asyncio.gather(*(client.post(path, data=form) for form in forms))]


def test_a_reservation_counts_at_once_and_is_taken_back_exactly() -> None:
    now = [0.0]
    throttle = LoginThrottle(free=2, address_limit=3, device_free=2, clock=lambda: now[0])
    held = [throttle.reserve(f"name{n}", "10.0.0.1") for n in range(5)]  # five in flight together
    assert [isinstance(r, Reserved) for r in held] == [True, True, True, False, False]
    right = held[0]
    assert isinstance(right, Reserved)
    throttle.settle(right, True)  # its password was right: no failure of the address's
    assert isinstance(throttle.reserve("name9", "10.0.0.1"), Reserved)
    assert not isinstance(throttle.reserve("name10", "10.0.0.1"), Reserved)  # three wrong in flight again
    for reserved in held[1:3]:
        assert isinstance(reserved, Reserved)
        throttle.release(reserved)  # no answer came (an error): as if never tried
    assert list(throttle.addresses["10.0.0.1"]) == [0.0] and "name1" not in throttle.accounts
    # a device's attempts: counted for the device, not the address, and its wear taken back on release
    first, second = (throttle.reserve("bob", "10.0.0.2", "dev") for _ in range(2))
    assert isinstance(first, Reserved) and isinstance(second, Reserved) and first.device == "dev"
    assert not throttle.trusted("bob", "dev") and "10.0.0.2" not in throttle.addresses
    throttle.release(second)
    assert throttle.trusted("bob", "dev")


def test_review_attempts_sent_together_are_held_to_each_limit(tmp_path: Path) -> None:
    throttle = LoginThrottle(free=3, base_s=30.0, address_limit=5, device_free=4)

    async def run(base: str) -> None:
        async with client_at(base, "127.0.1.1") as sprayer, client_at(base, "127.0.1.2") as guesser, \
                client_at(base, "127.0.1.3") as owner, client_at(base, "127.0.1.1") as thief:
            token = await csrf(sprayer, "/login")
            statuses = await together(sprayer, "/login", [{"csrf": token, "name": f"name{n}", "password": "Summer2026!"}
                                                          for n in range(ATTEMPTS)])
            assert sorted(statuses) == [303] * 5 + [429] * 15  # the address's limit: five wrong answers, no more
            token = await csrf(guesser, "/login")
            statuses = await together(guesser, "/login", [{"csrf": token, "name": "alice", "password": f"guess {n}"}
                                                          for n in range(ATTEMPTS)])
            assert sorted(statuses) == [303] * 3 + [429] * 17  # the (name, address) pair's free failures

            # The owner signs in elsewhere and gets a device cookie; a copy of it, on the blocked sprayer's address,
            # is worth device_free guesses however many are sent at once.
            token = await csrf(owner, "/login")
            signed = await owner.post("/login", data={"csrf": token, "name": "bob", "password": PASSWORD})
            assert signed.headers["location"] == "/"
            thief.cookies.set(DEVICE_COOKIE, owner.cookies[DEVICE_COOKIE], path="/login")
            token = await csrf(thief, "/login")
            statuses = await together(thief, "/login", [{"csrf": token, "name": "bob", "password": f"guess {n}"}
                                                        for n in range(ATTEMPTS)])
            assert sorted(statuses) == [303] * 3 + [429] * 17  # the pair's three, within the device's four
            throttle.failures.clear()  # the pair's backoff over, the device's count is what is left to test
            statuses = await together(thief, "/login", [{"csrf": token, "name": "bob", "password": f"again {n}"}
                                                        for n in range(ATTEMPTS)])
            assert sorted(statuses) == [303] * 1 + [429] * 19  # the device's fourth and last guess

            # An attempt with the right password is counted back: the owner's address is not used up by signing in.
            assert list(throttle.addresses.get("127.0.1.3", [])) == []

    with running_app(tmp_path, login_throttle=throttle) as (base, _):
        asyncio.run(run(base))


def test_study_organiser_attempts_sent_together_get_exactly_the_limit(study: Path) -> None:  # noqa: F811
    app = create_study_app(study / "study.json", study / "study.sqlite", judge="rules", organiser_password=ORGANISER,
                           login_rate=5)

    async def run(base: str) -> None:
        async with client_at(base, "127.0.1.4") as attacker, client_at(base, "127.0.1.5") as owner:
            token = await csrf(attacker, "/organiser")
            statuses = await together(attacker, "/organiser/login", [{"csrf": token, "password": f"guess {n}"}
                                                                     for n in range(ATTEMPTS)])
            assert sorted(statuses) == [401] * 5 + [429] * 15
            token = await csrf(owner, "/organiser")
            assert (await owner.post("/organiser/login", data={"csrf": token, "password": ORGANISER})).status_code == 303

    with serving(app) as base:
        asyncio.run(run(base))


def test_the_server_keeps_answering_while_passwords_are_checked(tmp_path: Path) -> None:
    """Twelve wrong passwords at once (a second or more of scrypt): other requests are answered meanwhile. With the
    checks on the event loop, one request waited for nearly all of them and two or three were answered in all."""
    throttle = LoginThrottle(free=50, address_limit=100)

    async def run(base: str) -> None:
        async with client_at(base, "127.0.1.6") as guesser, client_at(base, "127.0.1.7") as reader:
            token = await csrf(guesser, "/login")
            await reader.get("/static/review.css")
            answered: list[float] = []
            burst = asyncio.create_task(together(guesser, "/login", [{"csrf": token, "name": f"n{n}", "password": "x"}
                                                                     for n in range(12)]))
            started = time.monotonic()
            while not burst.done():
                sent = time.monotonic()
                assert (await reader.get("/static/review.css")).status_code == 200
                if not burst.done():
                    answered.append(time.monotonic() - sent)
            took = time.monotonic() - started
            assert sorted(await burst) == [303] * 12
            assert len(answered) >= 10, f"{len(answered)} requests answered in {took:.2f} s of password checks"
            # the typical wait, not the longest: on a loaded machine (another test process on the other core) one
            # request may wait for the CPU; with the checks on the loop every request waited for several of them
            typical = statistics.median(answered)
            assert typical < took / 10, f"half the requests waited over {typical:.2f} s of {took:.2f} s"

    with running_app(tmp_path, login_throttle=throttle) as (base, _):
        asyncio.run(run(base))
