"""The study web app: anonymous participants at ``/p/<token>``, the organiser at ``/organiser``.

Server-rendered pages, no JavaScript. A participant reads the consent page (how long the
study takes, who to contact, how full an answer should be, an adult confirmation), then
answers the questionnaire's StoryTurns turn by turn; each answer is judged online through
the Judge interface, scored with the engine's branch rules, and the next turn opens with the
feedback the engine would give a model, styled by its kind (story information is neutral, a
correction is never shown as praise). All state lives in the study database under the link's
token, so a participant can close the page and come back with the same link, or stop; text
typed before "Take a break" is kept, and an answer sent from an outdated page (a second tab)
is not saved and the participant is told so.

Limits a person never meets: answers are counted per link (``answer_rate`` a minute; page
loads and pictures only against a far higher bound). If the answer limit is ever met, the
page says how many seconds to wait and keeps the typed answer.

Privacy: no request metadata is read into the database (run uvicorn with
``access_log=False``); rate limits are keyed by link token, never by address.

``create_app`` assembles the app: the pages shared by its routers (:mod:`~commet.apps.study.pages`),
the services holding the study's rules (:mod:`~commet.apps.study.services`: the participants'
way through their questionnaires, the organiser's side), and the two routers
(:mod:`~commet.apps.study.routes`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI

from commet.apps.guards import guarded_app
from commet.apps.signin import LoginThrottle
from commet.apps.study.build import load_study
from commet.apps.study.db import StudyDB
from commet.apps.study.pages import HERE, StudyPages, StudySite
from commet.apps.study.panel import JOINS_PER_ADDRESS, MAX_PANEL_PARTICIPANTS
from commet.apps.study.routes import organiser, participants
from commet.apps.study.services import Organiser, Participation
from commet.apps.web import RateLimiter, Sessions, templates
from commet.judges.base import Judge
from commet.judges.registry import create_judge

MAX_BODY_BYTES = 64 * 1024
#: The study's session cookie: not the review app's, which may be served on another port of the same host.
SESSION_COOKIE = "commet_study_session"


def create_app(study_path: Path, db_path: Path, *, judge: Judge | str | None = None,
               organiser_password: str | None = None, secure_cookies: bool = False,
               participant_rate: int = 600, answer_rate: int = 60, login_rate: int = 10,
               joins_per_address: int = JOINS_PER_ADDRESS,
               max_panel_participants: int | None = MAX_PANEL_PARTICIPANTS) -> FastAPI:
    """The study app for ``study_path`` with participants in ``db_path``.

    ``judge`` defaults to the study's judge spec; without ``organiser_password`` the organiser
    pages are off. ``answer_rate`` bounds answers per link and minute (one a second: no person
    types that fast), ``participant_rate`` all requests per link and minute (page loads and
    pictures included), ``login_rate`` organiser login attempts per minute. Through the panel link,
    ``joins_per_address`` new participants a minute come from one client address (``participant_rate`` from
    all together; a participant who comes back is never counted), and at most ``max_panel_participants``
    participants with panel ids are made (None: no limit).
    """
    study, dataset = load_study(study_path)
    storyturns = {storyturn.id: storyturn for storyturn in dataset}
    the_judge = create_judge(judge or study.judge) if not isinstance(judge, Judge) else judge
    db = StudyDB(db_path, study.digest())
    sessions = Sessions(db_path, secure=secure_cookies, cookie=SESSION_COOKIE)
    participation = Participation(study, storyturns, db, the_judge)
    site = StudySite(
        StudyPages(study, db, sessions, templates(HERE / "templates"), participation,
                   participant_rate=participant_rate, joins_per_address=joins_per_address,
                   max_panel_participants=max_panel_participants),
        participation, Organiser(study, storyturns, db, organiser_password, LoginThrottle(
            free=login_rate, address_limit=login_rate, address_window_s=60.0)),
        dataset, RateLimiter(answer_rate, 60.0))

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        await the_judge.aclose()
        db.close()

    app = guarded_app("CoMMET study", max_body_bytes=MAX_BODY_BYTES, lifespan=lifespan)
    app.state.study = site
    site.pages.install(app)
    app.include_router(participants.router)
    app.include_router(organiser.router)
    return app
