"""The organiser's pages at ``/organiser``: sign-in, the dashboard, new links, the answers exported."""

from __future__ import annotations

import asyncio
import secrets
from typing import Annotated

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from commet.apps.signin import client_address
from commet.apps.study.pages import Site, StudySite
from commet.apps.study.services import MAX_LINKS_PER_REQUEST
from commet.apps.web import check_csrf, csrf_token

router = APIRouter()


def dashboard(request: Request, site: StudySite, session: dict[str, str],
              new_links: list[str] | None = None) -> HTMLResponse:
    values = site.organiser.dashboard(str(request.base_url).rstrip("/"), new_links)
    return site.pages.render(request, "organiser.html", session, csrf=csrf_token(session), **values)


@router.get("/organiser", response_class=HTMLResponse)
async def organiser(request: Request, site: Site) -> HTMLResponse:
    session = site.organiser_session(request)
    if session is None:
        session = site.pages.sessions.load(request)
        return site.pages.render(request, "login.html", session, csrf=csrf_token(session))
    created = session.pop("new_links", "")  # shown once, after the redirect that follows creating them
    return dashboard(request, site, session, created.split() or None)


@router.post("/organiser/login", response_model=None)
async def login(request: Request, site: Site, password: Annotated[str, Form()] = "",
                csrf: Annotated[str, Form()] = "") -> Response:
    site.organiser_enabled()
    pages = site.pages
    session = pages.sessions.load(request)
    check_csrf(session, csrf)
    client = client_address(request)
    if site.organiser.wait_s(client) <= 0:  # guessed from everywhere: every attempt slowed, the right password let in
        await asyncio.sleep(site.organiser.throttle.delay_s("organiser"))
    right, wait = await site.organiser.sign_in(password, client)
    if wait > 0:
        return pages.render(request, "login.html", session, status=429, csrf=csrf_token(session),
                            error=f"Too many wrong passwords; try again in {int(wait) + 1} seconds.")
    if not right:
        return pages.render(request, "login.html", session, status=401, csrf=csrf_token(session),
                            error="Wrong password.")
    pages.sessions.drop(session)
    response = RedirectResponse("/organiser", status_code=303)
    pages.sessions.save(response, {"subject": site.organiser.subject, "csrf": secrets.token_urlsafe(24)})
    return response


@router.post("/organiser/logout")
async def logout(request: Request, site: Site, csrf: Annotated[str, Form()] = "") -> RedirectResponse:
    site.organiser_enabled()
    session = site.pages.sessions.load(request)
    check_csrf(session, csrf)
    response = RedirectResponse("/organiser", status_code=303)
    site.pages.sessions.clear(response, session)
    return response


@router.post("/organiser/links", response_model=None)
async def new_links(request: Request, site: Site, count: Annotated[int, Form()] = 1,
                    questionnaire: Annotated[str, Form()] = "", csrf: Annotated[str, Form()] = "") -> Response:
    session = site.organiser_session(request)
    if session is None:
        return RedirectResponse("/organiser", status_code=303)
    check_csrf(session, csrf)
    if not 1 <= count <= MAX_LINKS_PER_REQUEST:
        raise HTTPException(status_code=400, detail=f"Create between 1 and {MAX_LINKS_PER_REQUEST} links at once.")
    chosen = site.organiser.questionnaires_for(count, questionnaire)
    if chosen is None:
        raise HTTPException(status_code=400, detail="No such questionnaire.")
    # post/redirect/get: reloading the page that lists the new links must not create another batch
    session["new_links"] = " ".join(site.organiser.db.create_participants(chosen))
    response = RedirectResponse("/organiser#new-links", status_code=303)
    site.pages.sessions.save(response, session)
    return response


def export(request: Request, site: StudySite, kind: str) -> Response:
    if site.organiser_session(request) is None:
        raise HTTPException(status_code=403, detail="Log in on the organiser page first.")
    body, media = site.organiser.export(kind)
    return Response(body, media_type=f"{media}; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="responses.{kind}"'})


@router.get("/organiser/export.csv")
async def export_csv(request: Request, site: Site) -> Response:
    return export(request, site, "csv")


@router.get("/organiser/export.jsonl")
async def export_jsonl(request: Request, site: Site) -> Response:
    return export(request, site, "jsonl")
