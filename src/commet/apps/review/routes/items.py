"""The items: the list, the next item open for the reviewer, an item's page, and edits of its text."""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from commet.apps.review.merge import FieldKey
from commet.apps.review.pages import Review, item_url, number, text
from commet.apps.review.services import FILTERS, EditConflict
from commet.taxonomy import TASKS_BY_ID

router = APIRouter()


@router.get("/", response_class=HTMLResponse)
def index(request: Request, review: Review, q: str = "", status: str = "", page: int = 1) -> Response:
    session, uid, name = review.pages.signed_in(request)
    listed = review.items.page(uid, name, q, status, page)

    def link(to: int) -> str:
        return "/?" + urlencode({k: v for k, v in (("q", q), ("status", status), ("page", to)) if v})

    return review.pages.render(request, session, "index.html", user=name, rows=listed.rows, lint=listed.lint, q=q,
                               status=status, filters=FILTERS, page=listed.page, pages_total=listed.pages_total,
                               matching=listed.matching, prev_link=link(listed.page - 1) if listed.page > 1 else None,
                               next_link=link(listed.page + 1) if listed.page < listed.pages_total else None)


@router.get("/next")
def next_open(request: Request, review: Review, after: str = "") -> Response:
    session, uid, _ = review.pages.signed_in(request)
    found = review.store.next_open_for(uid, after or None)
    if found is None:
        return review.pages.back(session, "/?status=mine", "Nothing is waiting for your verdict.")
    return RedirectResponse(item_url(found), status_code=303)


@router.get("/items/{item_id}", response_class=HTMLResponse)
def item_page(request: Request, review: Review, item_id: str) -> Response:
    session, uid, name = review.pages.signed_in(request)
    st, revision = review.pages.known_item(item_id)
    shown = review.view.item(item_id, st, revision, uid, name)
    return review.pages.render(request, session, "item.html", placed=shown.placed, user=name, **shown.values)


@router.post("/items/{item_id}/edit")
async def edit_turn(request: Request, review: Review, item_id: str) -> Response:
    """Save a turn's text; edits saved since the form's revision to other fields are kept (merged)."""
    pages = review.pages
    session, uid, name, form = await pages.posted(request)
    k, seen = number(form, "turn"), number(form, "revision")
    answers = [a.strip() for a in text(form, "answers").split("\n") if a.strip()]
    sent: dict[FieldKey, str] = {(k, "story"): text(form, "story"), (k, "feedback"): text(form, "feedback"),
                                 (k, "question"): text(form, "question"), (k, "answers"): "\n".join(answers)}
    at, url = f"edit-{k + 1}", item_url(item_id, f"turn-{k + 1}")
    if not answers:
        return pages.refuse(session, url, f"Edit not saved: turn {k + 1} needs at least one expected answer.", form,
                            at=at)
    st, _ = pages.known_item(item_id)
    if k >= len(st.turns):
        raise HTTPException(400, "no such turn")
    outcome = review.edits.save_turn(item_id, k, uid, seen, sent)
    if isinstance(outcome, EditConflict):
        return pages.conflict(request, session, name, outcome.stale, outcome.unsaved, fields=outcome.fields,
                              resolve=outcome.resolve)
    if outcome.refused:
        return pages.refuse(session, url, outcome.message, form, at=at)
    return pages.back(session, url, outcome.message, at=at)


@router.post("/items/{item_id}/meta")
async def edit_meta(request: Request, review: Review, item_id: str) -> Response:
    pages = review.pages
    session, uid, name, form = await pages.posted(request)
    st, revision = pages.known_item(item_id)
    task = TASKS_BY_ID.get(text(form, "task"))
    if task is None:
        raise HTTPException(400, "unknown task")
    outcome = review.edits.save_meta(item_id, st, revision, uid, number(form, "revision"), task.id,
                                     form.get("image_dependent") == "on")
    if isinstance(outcome, EditConflict):
        return pages.conflict(request, session, name, outcome.stale, outcome.unsaved, fields=outcome.fields)
    return pages.back(session, item_url(item_id), outcome.message, at="meta")
