"""The study app's web side, shared by its routers: links checked and rate-limited, forms, pages, error pages.

Everything here speaks HTTP; the rules are in :mod:`commet.apps.study.services`. A router reaches
both through :class:`StudySite`, the app's one state object (``Depends(study_site)``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Annotated, cast

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException

from commet.apps.files import DatasetPictures
from commet.apps.study.build import Study
from commet.apps.study.db import StudyDB
from commet.apps.study.flow import Position
from commet.apps.study.panel import JOINS_PER_ADDRESS, MAX_PANEL_PARTICIPANTS
from commet.apps.study.services import MAX_ANSWER_CHARS, Organiser, Participation, typed
from commet.apps.web import (
    SECURITY_HEADERS,
    RateLimiter,
    Sessions,
    check_csrf,
    csrf_token,
    csrf_valid,
    malformed_request,
    store_unavailable,
)
from commet.format.dataset import Dataset

HERE = Path(__file__).parent
STATIC_DIR = HERE / "static"
JOIN_SLOW_DOWN = ("Many people started this study from your network in the last minute. Please wait a minute, then "
                  "open the study again from your panel's page.")
TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


class StudyPages:
    """Pages, sessions, and the participant a link names (404 for none, 429 past the per-link limit)."""

    def __init__(self, study: Study, db: StudyDB, sessions: Sessions, pages: Jinja2Templates,
                 participation: Participation, *, participant_rate: int, joins_per_address: int = JOINS_PER_ADDRESS,
                 max_panel_participants: int | None = MAX_PANEL_PARTICIPANTS):
        self.study = study
        self.db = db
        self.sessions = sessions
        self.templates = pages
        self.participation = participation
        self.per_token = RateLimiter(limit=participant_rate, window_s=60.0)
        self.unknown_links = RateLimiter(limit=participant_rate, window_s=60.0)
        #: new participants through the panel link, all addresses together (a panel sends hundreds a minute at most)
        self.joins = RateLimiter(limit=participant_rate, window_s=60.0)
        #: new participants through the panel link per client address (held in memory only)
        self.joins_from = RateLimiter(limit=joins_per_address, window_s=60.0)
        #: how many participants with panel ids the study takes (None: no limit)
        self.max_panel_participants = max_panel_participants

    def new_panel_participant(self, client: str | None) -> None:
        """Count a new participant through the panel link, or refuse it (429) past the per-address or overall rate."""
        if self.joins_from.wait_s(client or "-") > 0 or self.joins.wait_s("join") > 0:
            raise HTTPException(status_code=429, detail=JOIN_SLOW_DOWN)

    def render(self, request: Request, name: str, session: dict[str, str] | None = None, status: int = 200,
               **context: object) -> HTMLResponse:
        response = self.templates.TemplateResponse(request, name, {"study": self.study, **context}, status_code=status)
        if session is not None:
            self.sessions.save(response, session)
        return response

    def participant(self, token: str) -> sqlite3.Row:
        row = self.db.participant(token) if 0 < len(token) <= 64 and set(token) <= TOKEN_CHARS else None
        if row is None:
            self.unknown_links.check("unknown")
            raise HTTPException(status_code=404)
        self.per_token.check(token)
        return row

    def posted(self, request: Request, token: str, csrf: str) -> sqlite3.Row:
        """The participant a form is posted for, once the form's CSRF token is checked."""
        row = self.participant(token)
        check_csrf(self.sessions.load(request), csrf)
        return row

    def expired_form(self, request: Request, token: str, csrf: str,
                     response: str) -> tuple[sqlite3.Row, Response | None]:
        """The participant an answer or break form is posted for, and, when its CSRF token is no longer valid (the
        page stayed open past the session's lifetime, cookies were cleared), the page to answer instead: the
        current question again with the typed text kept, nothing stored, and a fresh token."""
        row = self.participant(token)
        if csrf_valid(self.sessions.load(request), csrf):
            return row, None
        now = self.participation.in_progress(row)
        if now is None:
            return row, RedirectResponse(f"/p/{token}", status_code=303)
        return row, self.question_page(request, row, now, status=403, draft=typed(response)[:MAX_ANSWER_CHARS],
                                       error="This page was open for a long time (or your browser blocks cookies), "
                                             "so your answer was not sent. It is kept below: please press Answer "
                                             "again.")

    def question_page(self, request: Request, row: sqlite3.Row, now: Position, error: str = "",
                      draft: str | None = None, stale: str | None = None, status: int = 200) -> HTMLResponse:
        session = self.sessions.load(request)
        values = self.participation.question_view(row, now, draft)
        return self.render(request, "question.html", session, status=status, csrf=csrf_token(session), error=error,
                           stale=stale, **values)

    def end_page(self, request: Request, row: sqlite3.Row) -> HTMLResponse:
        """The last page: how the study ended, with the panel's code and return link for that ending."""
        return self.render(request, "done.html", **self.participation.end_view(row))

    def consent_page(self, request: Request, row: sqlite3.Row, error: str = "", status: int = 200) -> HTMLResponse:
        session = self.sessions.load(request)
        values = self.participation.consent_view(row)
        return self.render(request, "consent.html", session, status=status, csrf=csrf_token(session), error=error,
                           **values)

    def install(self, app: FastAPI) -> None:
        """The app's security headers and error pages."""

        @app.middleware("http")
        async def security_headers(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
            response = await call_next(request)
            response.headers.update(SECURITY_HEADERS)
            response.headers["Cache-Control"] = "no-store"
            return response

        @app.exception_handler(StarletteHTTPException)
        async def error_page(request: Request, exc: StarletteHTTPException) -> Response:
            if exc.status_code == 429 and exc.detail == JOIN_SLOW_DOWN:
                response = self.render(request, "message.html", status=429, heading="Please wait a minute",
                                       message=JOIN_SLOW_DOWN)
                response.headers["Retry-After"] = "60"
                return response
            if exc.status_code == 429:  # only a script meets this one; still, say what to do and link back
                token = request.path_params.get("token")
                response = self.render(request, "message.html", status=429, heading="Please slow down",
                                       message="This link received more requests in the last minute than a person "
                                               "makes. Please wait a minute, then continue; your answers are saved.",
                                       back=f"/p/{token}" if isinstance(token, str) and set(token) <= TOKEN_CHARS
                                       else None)
                response.headers["Retry-After"] = "60"
                return response
            response = self.render(request, "message.html", status=exc.status_code, heading="Sorry",
                                   message=str(exc.detail) if exc.status_code != 404 else "This page does not exist.")
            response.headers.update(exc.headers or {})
            return response

        @app.exception_handler(sqlite3.DatabaseError)
        async def store_failed(request: Request, exc: sqlite3.DatabaseError) -> Response:
            page: Response = await error_page(request, store_unavailable(exc))
            return page

        @app.exception_handler(RequestValidationError)
        async def malformed(request: Request, exc: RequestValidationError) -> Response:
            page: Response = await error_page(request, malformed_request(exc))
            return page


@dataclass(frozen=True)
class StudySite:
    """What the study app's routers work with: its pages and its services (``app.state.study``)."""

    pages: StudyPages
    participation: Participation
    organiser: Organiser
    dataset: Dataset
    #: answers per link and minute (it tells how long to wait rather than refusing outright)
    answer_limit: RateLimiter

    @cached_property
    def served(self) -> DatasetPictures:
        """The dataset's pictures, the only dataset files the app serves."""
        return DatasetPictures(self.dataset)

    def organiser_enabled(self) -> None:
        if not self.organiser.enabled:
            raise HTTPException(status_code=403, detail="The organiser page is off: start the server with "
                                "--organiser-password-file.")

    def organiser_session(self, request: Request) -> dict[str, str] | None:
        """The organiser's session, None when the request has none (403 while the organiser pages are off)."""
        self.organiser_enabled()
        session = self.pages.sessions.load(request)
        return session if session.get("subject") == self.organiser.subject else None


async def study_site(request: Request) -> StudySite:
    """The app's state (an async dependency: no worker thread is taken to fetch it)."""
    return cast(StudySite, request.app.state.study)


#: a route's parameter that receives the app's state
Site = Annotated[StudySite, Depends(study_site)]
