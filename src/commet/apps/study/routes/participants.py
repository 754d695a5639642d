"""A participant's pages at ``/p/<token>``: consent, each question, its pictures, a break, stopping; and a panel's
entry link ``/join/<key>``, which gives each participant the panel sends their own ``/p/<token>``."""

from __future__ import annotations

import math
import secrets
from typing import Annotated

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from commet.apps.files import static_file
from commet.apps.signin import client_address
from commet.apps.study.pages import STATIC_DIR, Site
from commet.apps.study.panel import Ending, PanelIdError, PanelIds, panel_ids, previewing
from commet.apps.study.services import MAX_ANSWER_CHARS, typed
from commet.apps.web import csrf_token, csrf_valid

router = APIRouter()


@router.get("/", response_class=HTMLResponse)
async def home(request: Request, site: Site) -> HTMLResponse:
    return site.pages.render(request, "message.html", heading=site.pages.study.title,
                             message="To take part, open the personal link you were given.")


@router.get("/static/{name}")
async def static(name: str) -> Response:
    return static_file(STATIC_DIR, name)


def _panel_ids(request: Request) -> PanelIds | None:
    try:
        return panel_ids(request.query_params)
    except PanelIdError as exc:
        raise HTTPException(status_code=400, detail=f"Sorry, {exc}. Please open the study again from the panel's "
                                                    "page.") from None


@router.get("/join/{key}", response_model=None)
async def join(request: Request, site: Site, key: str) -> Response:
    """A panel's participant arrives: their own link (made now, or theirs from before), without the ids in the URL."""
    pages = site.pages
    if not secrets.compare_digest(key.encode(), site.participation.db.entry_key().encode()):
        pages.unknown_links.check("unknown")
        raise HTTPException(status_code=404)
    if previewing(request.query_params):
        return pages.render(request, "message.html", heading=pages.study.title,
                            message="This is a preview. Accept the task to take part; the study starts here then.")
    ids = _panel_ids(request)
    if ids is None:
        raise HTTPException(status_code=400, detail="This link lacks the participant id your panel adds to it. "
                                                    "Please open the study from the panel's page.")
    db = site.participation.db
    entry = db.panel_entry(ids)  # someone who came before is never throttled: only new participants count
    if entry.token is None and not entry.other_session:
        pages.new_panel_participant(client_address(request))
        entry = db.panel_participant(ids, len(pages.study.questionnaires), limit=pages.max_panel_participants)
    if entry.other_session:
        raise HTTPException(status_code=403, detail="This panel id already takes part in this study from another "
                                                    "panel session. Please open the study from your panel's page.")
    if entry.full:
        raise HTTPException(status_code=403, detail="This study has all the participants it takes; please return "
                                                    "it on your panel's page. Thank you!")
    return RedirectResponse(f"/p/{entry.token}", status_code=303)


@router.get("/p/{token}", response_class=HTMLResponse)
async def participant_page(request: Request, site: Site, token: str) -> Response:
    pages, flow = site.pages, site.participation
    row = pages.participant(token)
    ids = _panel_ids(request)
    if ids is not None:  # a personal link sent through a panel: keep its ids, then drop them from the address
        flow.db.name_panel_ids(token, ids)
        return RedirectResponse(f"/p/{token}", status_code=303)
    if row["finished_at"] is not None:
        return pages.end_page(request, row)
    if row["consent_at"] is None:
        return pages.consent_page(request, row)
    now = flow.where(row)
    if now is None:
        flow.db.finish(token, Ending.completed.value)
        return pages.end_page(request, pages.participant(token))
    return pages.question_page(request, row, now)


@router.post("/p/{token}/consent", response_model=None)
async def consent(request: Request, site: Site, token: str, csrf: Annotated[str, Form()] = "",
                  adult: Annotated[str, Form()] = "") -> Response:
    pages = site.pages
    row = pages.participant(token)
    if row["finished_at"] is not None:  # declined or screened out (a resent form): the link stays closed
        return RedirectResponse(f"/p/{token}", status_code=303)
    if not csrf_valid(pages.sessions.load(request), csrf):
        if row["consent_at"] is not None:
            return RedirectResponse(f"/p/{token}", status_code=303)
        return pages.consent_page(request, row, status=403, error="This page was open for a long time (or your "
                                  "browser blocks cookies); please confirm and press the button again.")
    if pages.study.participant.adult_confirmation and adult != "yes" and row["consent_at"] is None:
        return pages.consent_page(request, row, status=400, error="Please confirm the statement above to take part.")
    site.participation.db.consent(token)
    return RedirectResponse(f"/p/{token}", status_code=303)


@router.post("/p/{token}/decline")
async def decline(request: Request, site: Site, token: str, csrf: Annotated[str, Form()] = "",
                  ending: Annotated[str, Form()] = "") -> RedirectResponse:
    """A panel participant who does not take part (withdrew) or cannot confirm the consent statement (screened
    out): the link closes with that ending, whose code the last page gives."""
    row = site.pages.posted(request, token, csrf)
    if ending not in (Ending.withdrew.value, Ending.screened_out.value):
        raise HTTPException(status_code=400, detail="Please choose one of the buttons.")
    if row["consent_at"] is None:
        site.participation.db.finish(token, ending)
    return RedirectResponse(f"/p/{token}", status_code=303)


@router.post("/p/{token}/answer", response_model=None)
async def answer(request: Request, site: Site, token: str, response: Annotated[str, Form()] = "",
                 story: Annotated[int, Form()] = 0, turn: Annotated[int, Form()] = -1,
                 csrf: Annotated[str, Form()] = "") -> Response:
    pages, flow = site.pages, site.participation
    row, refused = pages.expired_form(request, token, csrf, response)
    if refused is not None:
        return refused
    now = flow.in_progress(row)
    text = typed(response)
    if now is None or (now.number, now.current.index) != (story, turn):
        if now is None or flow.submitted_before(row, story, turn, text):
            return RedirectResponse(f"/p/{token}", status_code=303)
        # an outdated page (a second tab, the back button): say so, show what was not saved
        return pages.question_page(request, row, now, stale=text[:MAX_ANSWER_CHARS], status=409)
    if not text:
        return pages.question_page(request, row, now, error="Please type an answer.")
    if len(text) > MAX_ANSWER_CHARS:
        return pages.question_page(request, row, now, error=f"Please keep your answer under {MAX_ANSWER_CHARS} "
                                   "characters.", draft=text[:MAX_ANSWER_CHARS])
    wait = site.answer_limit.wait_s(token)
    if wait > 0:
        seconds = math.ceil(wait)
        page = pages.question_page(request, row, now, status=429, draft=text,
                                   error=f"You are answering faster than this study allows. Please wait {seconds} "
                                         "seconds, then press Answer again: your answer is kept below.")
        page.headers["Retry-After"] = str(seconds)
        return page
    later = await flow.answer(row, now, text, story, turn)
    if later is not None:  # another tab's answer to this question was stored while this one was judged: not saved
        return pages.question_page(request, row, later, stale=text, status=409)
    return RedirectResponse(f"/p/{token}", status_code=303)


@router.get("/p/{token}/image/{story}/{turn}")
async def image(site: Site, token: str, story: int, turn: int) -> Response:
    row = site.pages.participant(token)
    now = site.participation.in_progress(row)
    if now is None or story != now.number or not 0 <= turn < len(now.turns):
        raise HTTPException(status_code=404)
    image_id = now.turns[turn].image
    if image_id is None:
        raise HTTPException(status_code=404)
    return site.served.by_id(image_id)  # only a picture the dataset references (commet.apps.files)


@router.get("/p/{token}/pause", response_class=HTMLResponse)
async def pause(request: Request, site: Site, token: str) -> HTMLResponse:
    site.pages.participant(token)
    return site.pages.render(request, "pause.html", token=token)


@router.post("/p/{token}/pause", response_model=None)
async def take_break(request: Request, site: Site, token: str, response: Annotated[str, Form()] = "",
                     story: Annotated[int, Form()] = 0, turn: Annotated[int, Form()] = -1,
                     csrf: Annotated[str, Form()] = "") -> Response:
    """Keep the text typed so far for the current question, then show the break page."""
    row, refused = site.pages.expired_form(request, token, csrf, response)
    if refused is not None:
        return refused
    site.participation.keep_draft(row, story, turn, response)
    return RedirectResponse(f"/p/{token}/pause", status_code=303)


@router.get("/p/{token}/stop", response_class=HTMLResponse)
async def stop_page(request: Request, site: Site, token: str) -> HTMLResponse:
    pages = site.pages
    row = pages.participant(token)
    if row["finished_at"] is not None:
        return pages.end_page(request, row)
    session = pages.sessions.load(request)
    return pages.render(request, "stop.html", session, token=token, csrf=csrf_token(session))


@router.post("/p/{token}/stop")
async def stop(request: Request, site: Site, token: str, csrf: Annotated[str, Form()] = "") -> RedirectResponse:
    site.pages.posted(request, token, csrf)
    site.participation.db.finish(token, Ending.withdrew.value)
    return RedirectResponse(f"/p/{token}", status_code=303)
