"""Verdicts: error filings, accept or reject, and the items whose reviewers disagree."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from commet.apps.review.db import AcceptRefused, ReviewError, StaleRevision
from commet.apps.review.pages import Review, carried_checks, item_url, number, text

router = APIRouter()


@router.get("/disagreements", response_class=HTMLResponse)
def disagreements_page(request: Request, review: Review) -> Response:
    session, _, name = review.pages.signed_in(request)
    return review.pages.render(request, session, "disagreements.html", user=name,
                               rows=review.items.disagreements(name))


@router.post("/items/{item_id}/errors")
async def file_error(request: Request, review: Review, item_id: str) -> Response:
    pages = review.pages
    session, uid, name, form = await pages.posted(request)
    pages.known_item(item_id)
    picture_id = number(form, "picture_id") if text(form, "picture_id") else None
    if picture_id is not None:
        pages.own_picture(item_id, picture_id)
    try:
        filed = review.store.file_error(item_id, uid, text(form, "category"), text(form, "note"), picture_id=picture_id,
                                        seen_revision=number(form, "revision"))
    except StaleRevision as exc:
        return pages.conflict(request, session, name, exc)
    except ReviewError as exc:
        return pages.refuse(session, item_url(item_id, "file-error"), f"Not filed: {exc}.", form, at="file-error")
    return pages.back(session, item_url(item_id, "file-error"), "Error filed." if filed else
                      "Already filed: you filed this very error on this revision (the form was sent twice).",
                      at="file-error")


@router.post("/items/{item_id}/decision")
async def decide(request: Request, review: Review, item_id: str) -> Response:
    pages = review.pages
    session, uid, name, form = await pages.posted(request)
    pages.known_item(item_id)
    current = list(review.store.current_pictures(item_id).values())
    try:
        review.store.decide(item_id, uid, text(form, "decision"), text(form, "note"),
                            seen_revision=number(form, "revision"), checks=carried_checks(form, current))
    except StaleRevision as exc:
        return pages.conflict(request, session, name, exc, [("Decision", text(form, "decision"))])
    except ReviewError as exc:
        prefix = "" if isinstance(exc, AcceptRefused) else "Not saved: "
        return pages.refuse(session, item_url(item_id, "decide"), f"{prefix}{exc}", form, at="decide")
    status = review.store.status(item_id)
    return pages.back(session, item_url(item_id, "decide"), f"Decision saved; the item is {status.label}.",
                      at="decide")
