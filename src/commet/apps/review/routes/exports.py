"""What a reviewer takes away: the review as spreadsheets, and the final items as a dataset folder (zip)."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response

from commet.apps.review.pages import Review

router = APIRouter()


@router.get("/export", response_class=HTMLResponse)
def export_page(request: Request, review: Review) -> Response:
    session, _, name = review.pages.signed_in(request)
    final, items = review.exports.counts()
    return review.pages.render(request, session, "export.html", user=name, final=final, items=items)


@router.get("/export/{name}.csv")
def export_csv(request: Request, review: Review, name: str) -> Response:
    _, _, viewer = review.pages.signed_in(request)
    if name not in review.exports.SPREADSHEETS:
        raise HTTPException(404)
    return Response(review.exports.spreadsheet(name, viewer), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="review-{name}.csv"'})


@router.get("/export/final.zip")
def export_zip(request: Request, review: Review) -> Response:
    """The final items as a validated dataset folder (what ``commet review export`` writes), zipped."""
    review.pages.signed_in(request)
    return Response(review.exports.final_zip(), media_type="application/zip",
                    headers={"Content-Disposition": 'attachment; filename="reviewed.zip"'})
