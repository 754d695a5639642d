"""The review's figures: the paper's Table 6, filings per category, each reviewer's progress."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from commet.apps.review.db import IMAGE_ERRORS
from commet.apps.review.pages import Review

router = APIRouter()


@router.get("/stats", response_class=HTMLResponse)
def stats_page(request: Request, review: Review) -> Response:
    session, _, name = review.pages.signed_in(request)
    return review.pages.render(request, session, "stats.html", user=name, stats=review.store.stats(name),
                               image_errors=IMAGE_ERRORS)
