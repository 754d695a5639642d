"""Signing in and out, and one's account (the password)."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from commet.apps.review.pages import Review
from commet.apps.signin import client_address
from commet.apps.web import AFTER_SIGN_IN, check_csrf, csrf_token, local_path

router = APIRouter()


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, review: Review) -> Response:
    return review.pages.render(request, review.pages.sessions.load(request), "login.html")


@router.post("/login")
async def login(request: Request, review: Review) -> Response:
    pages = review.pages
    session = pages.sessions.load(request)
    form = await request.form(max_files=0, max_fields=5)
    token = form.get("csrf")
    check_csrf(session, token if isinstance(token, str) else None)
    name = str(form.get("name", ""))[:64]
    await asyncio.sleep(review.accounts.throttle.delay_s(name))  # a name guessed from everywhere: slowed, not locked
    answer = await review.accounts.sign_in(name, str(form.get("password", ""))[:1024], client_address(request),
                                           pages.devices.device(request, name))
    if answer.wait_s > 0:
        session["flash"] = f"Too many failed sign-ins from here or for this name; try again in {int(answer.wait_s) + 1} s."
        return pages.render(request, session, "login.html", status_code=429)
    if answer.user_id is None:
        return pages.back(session, "/login", "Unknown user or wrong password.")
    pages.sessions.drop(session)  # a new session (and CSRF token) after sign-in: no fixation
    fresh: dict[str, str] = {"subject": f"user:{answer.user_id}"}
    csrf_token(fresh)
    back_to = session.get(AFTER_SIGN_IN)  # the page the reviewer was on when the session ended, if any
    response = pages.back(fresh, back_to if local_path(back_to) else "/")
    pages.devices.issue(request, response, name)  # this browser is now known for this name (a new device id)
    return response


@router.post("/logout")
async def logout(request: Request, review: Review) -> Response:
    session, _, _, _ = await review.pages.posted(request)
    response = RedirectResponse("/login", status_code=303)
    review.pages.sessions.clear(response, session)
    return response


@router.get("/account", response_class=HTMLResponse)
def account_page(request: Request, review: Review) -> Response:
    session, _, name = review.pages.signed_in(request)
    return review.pages.render(request, session, "account.html", user=name)


@router.post("/account/password")
async def change_password(request: Request, review: Review) -> Response:
    pages = review.pages
    session, uid, name, form = await pages.posted(request)
    refused = await review.accounts.change_password(uid, name, str(form.get("current", ""))[:1024],
                                                    str(form.get("new", ""))[:1024], str(form.get("again", ""))[:1024],
                                                    client_address(request))
    if refused is not None:
        return pages.back(session, "/account", refused)
    fresh: dict[str, str] = {"subject": f"user:{uid}"}
    csrf_token(fresh)
    return pages.back(fresh, "/account", "Password changed; every other session of yours is signed out.")
