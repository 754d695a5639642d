"""The review app's web side, shared by its routers: who is signed in, forms, pages, redirects, refusals.

Everything here speaks HTTP (requests, forms, responses, status codes); the rules behind the
pages are in :mod:`commet.apps.review.services`. A router reaches both through :class:`ReviewApp`,
the app's one state object (``Depends(review_app)``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, cast

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException as StarletteHTTPException

from commet.apps.files import DatasetPictures
from commet.apps.review.db import (
    CRITERIA,
    CheckInput,
    Picture,
    ReviewDB,
    ReviewError,
    StaleRevision,
    UnknownRevision,
)
from commet.apps.review.display import item_segment
from commet.apps.review.merge import FieldMerge, word_diff
from commet.apps.review.services import Accounts, Exports, ItemList, ItemView, Pictures, TextEdits
from commet.apps.signin import DeviceCookies
from commet.apps.web import (
    AFTER_SIGN_IN,
    SECURITY_HEADERS,
    RateLimiter,
    Sessions,
    check_csrf,
    csrf_token,
    form_text,
    local_path,
    malformed_request,
    same_origin_path,
    store_unavailable,
    templates,
)
from commet.errors import CommetError
from commet.format.dataset import Dataset
from commet.format.model import StoryTurn
from commet.store.errors import StoreError

HERE = Path(__file__).parent
FIELD_LIMIT = 20_000  # characters of one text field
#: actions (form posts) one reviewer may make a minute
ACTIONS_PER_MINUTE = 300


class NotSignedIn(CommetError):
    """Raised by :meth:`ReviewPages.signed_in`; answered with a redirect (GET) or 401."""


def review_templates(*, calibration_pages: bool) -> Jinja2Templates:
    """The app's templates with its filters: times, item ids as one URL path segment, word diffs."""
    pages = templates(HERE / "templates")
    pages.env.filters["when"] = lambda iso: iso[:16].replace("T", " ") + " UTC"
    # an item id is one URL path segment: '?', '#', '%', '&' and spaces are allowed in ids (never '/')
    pages.env.filters["path"] = item_segment
    pages.env.globals["calibration_pages"] = calibration_pages
    pages.env.filters["diff"] = word_diff
    return pages


def text(form: FormData, key: str, default: str = "") -> str:
    """A text field of ``form`` as :func:`~commet.apps.web.form_text` keeps it (line breaks LF, control characters
    removed, stripped); 400 for a file, 413 past ``FIELD_LIMIT``."""
    value = form.get(key, default)
    if not isinstance(value, str):
        raise HTTPException(400, f"field {key} must be text")
    if len(value) > FIELD_LIMIT:
        raise HTTPException(413, f"field {key} is too long")
    return form_text(value)


def number(form: FormData, key: str) -> int:
    value = text(form, key)
    if not (value.isascii() and value.isdigit()) or len(value) > 12:  # '²'.isdigit(), but int('²') fails
        raise HTTPException(400, f"field {key} must be a number")
    return int(value)


def carried_checks(form: FormData, pictures: list[Picture]) -> dict[int, CheckInput]:
    """The Table 5 verdicts, notes and prominent errors a form sent, per current picture."""
    found = {}
    for picture in pictures:
        results = {}
        for key, _, _ in CRITERIA:
            verdict = form.get(f"c_{picture.id}_{key}")
            if verdict in ("pass", "fail"):
                results[key] = verdict == "pass"
        prominent = text(form, f"prominent_{picture.id}") or None
        if results or prominent:
            found[picture.id] = CheckInput(results, text(form, f"note_{picture.id}"), prominent)
    return found


def item_url(item_id: str, anchor: str | None = None) -> str:
    return f"/items/{item_segment(item_id)}" + (f"#{anchor}" if anchor else "")


def picture_anchor(st: StoryTurn, image_id: str) -> str | None:
    """The anchor of the first turn that shows ``image_id``."""
    k = next((k for k, turn in enumerate(st.turns) if turn.image == image_id), None)
    return f"turn-{k + 1}" if k is not None else None


class ReviewPages:
    """Sessions, sign-in, CSRF-checked and rate-limited forms, and the pages and redirects every router sends."""

    def __init__(self, store: ReviewDB, sessions: Sessions, pages: Jinja2Templates, *, max_upload_bytes: int,
                 devices: DeviceCookies | None = None):
        self.store = store
        self.sessions = sessions
        #: the sign-in form's device cookies (their Secure flag as the sessions' cookie has it)
        self.devices = devices or DeviceCookies(store.path, secure=sessions.secure)
        self.templates = pages
        self.max_upload_bytes = max_upload_bytes
        self.actions = RateLimiter(limit=ACTIONS_PER_MINUTE, window_s=60)

    def signed_in(self, request: Request) -> tuple[dict[str, str], int, str]:
        """The request's session, user id and name (:class:`NotSignedIn` without a reviewer's session)."""
        session = self.sessions.load(request)
        subject = session.get("subject", "")
        uid = subject.removeprefix("user:")
        name = self.store.user_name(int(uid)) if subject.startswith("user:") and uid.isdigit() else None
        if name is None:
            raise NotSignedIn
        return session, int(uid), name

    async def posted(self, request: Request) -> tuple[dict[str, str], int, str, FormData]:
        """The signed-in user's CSRF-checked, rate-limited form."""
        session, uid, name = self.signed_in(request)
        self.actions.check(f"user:{uid}")
        form = await request.form(max_files=1, max_fields=80, max_part_size=self.max_upload_bytes)
        token = form.get("csrf")
        check_csrf(session, token if isinstance(token, str) else None)
        return session, uid, name, form

    def render(self, request: Request, session: dict[str, str], name: str, status_code: int = 200,
               placed: frozenset[str] = frozenset(), **context: Any) -> Response:
        """A page; the last action's message goes beside the form it came from when the page has that form
        (``placed``: the forms it has), else on top, and a refused form gets back what it sent."""
        flash, at = session.pop("flash", None), session.pop("flash_at", None)
        refused, kept = session.pop("refused", None) == "1", json.loads(session.pop("kept", "{}"))
        response = self.templates.TemplateResponse(request, name, {
            "csrf": csrf_token(session), "flash": flash, "flash_at": at if at in placed else None,
            "refused": refused, "kept": kept.get("fields", {}), "kept_form": kept.get("form"),
            "user": context.pop("user", None), **context}, status_code=status_code)
        self.sessions.save(response, session)
        return response

    def back(self, session: dict[str, str], url: str, message: str | None = None, *, at: str | None = None) -> Response:
        """Redirect to ``url`` with ``message`` shown beside the form ``at`` (or on top)."""
        if message:
            session["flash"] = message
            if at:
                session["flash_at"] = at
        response = RedirectResponse(url, status_code=303)
        self.sessions.save(response, session)
        return response

    def refuse(self, session: dict[str, str], url: str, message: str, form: FormData, *, at: str) -> Response:
        """A refused action: its reason beside the form's buttons, and everything the form sent typed in again."""
        fields = {key: value[:FIELD_LIMIT] for key, value in form.multi_items()
                  if isinstance(value, str) and key not in ("csrf", "revision")}
        session["refused"] = "1"
        session["kept"] = json.dumps({"form": at, "fields": fields})
        return self.back(session, url, message, at=at)

    def conflict(self, request: Request, session: dict[str, str], name: str, exc: StaleRevision,
                 unsaved: list[tuple[str, str]] | None = None, *, fields: list[FieldMerge] | None = None,
                 resolve: dict[str, int] | None = None) -> Response:
        """409: the write was refused because the item moved on; show what changed (word by word), what was not
        saved and, for a turn's text changed by both, a form holding the merge to confirm."""
        return self.render(request, session, "conflict.html", status_code=409, user=name, exc=exc,
                           unsaved=unsaved or [], fields=fields or [], resolve=resolve)

    def known_item(self, item_id: str) -> tuple[StoryTurn, int]:
        """The item's current StoryTurn and revision (404 for an unknown item)."""
        try:
            return self.store.item(item_id)
        except ReviewError:
            raise HTTPException(404) from None

    def own_picture(self, item_id: str, picture_id: int) -> Picture:
        """A picture version of this item (404 for an unknown picture, 400 for another item's)."""
        try:
            picture = self.store.picture(picture_id)
        except ReviewError:
            raise HTTPException(404) from None
        if picture.item_id != item_id:
            raise HTTPException(400, "that picture belongs to another item")
        return picture

    def install(self, app: FastAPI) -> None:
        """The app's security headers, sign-in redirect and error pages."""

        @app.middleware("http")
        async def security_headers(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
            response = await call_next(request)
            for key, value in SECURITY_HEADERS.items():
                response.headers.setdefault(key, value)
            response.headers.setdefault("Cache-Control", "no-store")
            return response

        @app.exception_handler(NotSignedIn)
        async def not_signed_in(request: Request, exc: NotSignedIn) -> Response:
            session = self.sessions.load(request)
            back_to: str | None
            if request.method in ("GET", "HEAD"):
                back_to = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            else:  # the page the form was on, when this app sent it there
                back_to = same_origin_path(request.headers.get("referer"), request)
            if local_path(back_to):  # where the reviewer was: the sign-in leads back there, not to the item list
                session[AFTER_SIGN_IN] = back_to
            if request.method in ("GET", "HEAD"):
                redirect = RedirectResponse("/login", status_code=303)
                self.sessions.save(redirect, session)
                return redirect
            # a form sent after the session ended: the sign-in page (not a bare line) says what was lost
            session["refused"] = "1"
            session["flash"] = ("You are signed out (the session ended, or this browser dropped its cookie), so what "
                                "you just sent was not saved. Sign in, then do it again.")
            return self.render(request, session, "login.html", status_code=401)

        @app.exception_handler(StarletteHTTPException)
        async def error_page(request: Request, exc: StarletteHTTPException) -> Response:
            messages = {404: "There is no such page or item.", 413: "That is too large.", 429: "Too many requests; "
                        "wait a moment and try again.", 403: "That request was refused."}
            detail = exc.detail if isinstance(exc.detail, str) and exc.status_code != 404 else messages.get(
                exc.status_code)
            return self.templates.TemplateResponse(request, "error.html", {
                "user": None, "csrf": "", "flash": None, "status": exc.status_code, "message": detail or "Something "
                "went wrong."}, status_code=exc.status_code, headers=getattr(exc, "headers", None))

        @app.exception_handler(RequestValidationError)
        async def malformed(request: Request, exc: RequestValidationError) -> Response:
            page: Response = await error_page(request, malformed_request(exc))
            return page

        @app.exception_handler(UnknownRevision)
        async def unknown_revision(request: Request, exc: UnknownRevision) -> Response:
            page: Response = await error_page(request, StarletteHTTPException(400, f"{exc}; reload the item."))
            return page

        @app.exception_handler(sqlite3.DatabaseError)
        async def store_failed(request: Request, exc: sqlite3.DatabaseError) -> Response:
            page: Response = await error_page(request, store_unavailable(exc))
            return page

        @app.exception_handler(StoreError)
        async def unusable_store(request: Request, exc: StoreError) -> Response:
            """A results store the Calibration pages cannot use (a damaged sample, a table of another shape):
            said on the page with what to do, never a server error."""
            page: Response = await error_page(request, StarletteHTTPException(409, str(exc)))
            return page


@dataclass(frozen=True)
class ReviewApp:
    """What the review app's routers work with: its pages and its services (``app.state.review``)."""

    pages: ReviewPages
    accounts: Accounts
    items: ItemList
    view: ItemView
    edits: TextEdits
    pictures: Pictures
    exports: Exports
    dataset: Dataset
    #: the results store whose calibration samples are labelled here (None: no calibration pages)
    results: Path | None = None

    @property
    def store(self) -> ReviewDB:
        return self.pages.store

    @cached_property
    def served(self) -> DatasetPictures:
        """The dataset's pictures, the only dataset files the app serves."""
        return DatasetPictures(self.dataset)


async def review_app(request: Request) -> ReviewApp:
    """The app's state (an async dependency: no worker thread is taken to fetch it)."""
    return cast(ReviewApp, request.app.state.review)


#: a route's parameter that receives the app's state
Review = Annotated[ReviewApp, Depends(review_app)]
