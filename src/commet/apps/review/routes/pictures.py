"""Pictures: their versions, the files themselves, Table 5 checks, regeneration marks, new versions."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response
from starlette.datastructures import UploadFile

from commet.apps.files import static_file
from commet.apps.review.db import ReviewError, StaleRevision
from commet.apps.review.pages import HERE, Review, carried_checks, item_url, number, picture_anchor, text
from commet.apps.web import NotAPicture, UploadTooLarge

router = APIRouter()


@router.get("/items/{item_id}/versions/{picture_id}", response_class=HTMLResponse)
def versions_page(request: Request, review: Review, item_id: str, picture_id: int) -> Response:
    session, _, name = review.pages.signed_in(request)
    st, revision = review.pages.known_item(item_id)
    picture = review.pages.own_picture(item_id, picture_id)
    shown = review.view.versions(item_id, st, revision, picture, name)
    return review.pages.render(request, session, "versions.html", user=name, **shown.values)


@router.get("/static/{name}", include_in_schema=False)
def static(name: str) -> Response:
    """The app's own style sheet and script (no sign-in: the sign-in page uses them)."""
    return static_file(HERE / "static", name)


@router.get("/images/{name:path}")
def dataset_image(request: Request, review: Review, name: str) -> Response:
    review.pages.signed_in(request)
    return review.served.by_file_name(name)  # only a picture the dataset references (commet.apps.files)


@router.get("/pictures/{picture_id}.png")
def stored_picture(request: Request, review: Review, picture_id: int) -> Response:
    review.pages.signed_in(request)
    data = review.store.picture_data(picture_id)
    if not data:
        raise HTTPException(404)
    return Response(data, media_type="image/png")


@router.post("/items/{item_id}/checks")
async def picture_checks(request: Request, review: Review, item_id: str) -> Response:
    pages = review.pages
    session, uid, name, form = await pages.posted(request)
    pages.known_item(item_id)
    current = list(review.store.current_pictures(item_id).values())
    given = carried_checks(form, current)
    pressed = text(form, "checks")  # the picture whose "Save picture checks" button was pressed
    shown = next((p for p in current if str(p.id) == pressed), None) or next(
        (p for p in current if p.id in given), current[0] if current else None)
    if shown is None:
        raise HTTPException(400, "this item has no picture to check")
    at = f"checks-{shown.id}"
    if not given:
        return pages.refuse(session, item_url(item_id, at), "Choose pass or fail for at least one criterion.", form,
                            at=at)
    try:
        message = review.pictures.save_checks(current, given, uid, number(form, "revision"))
    except StaleRevision as exc:
        return pages.conflict(request, session, name, exc)
    except ReviewError as exc:
        return pages.refuse(session, item_url(item_id, at), f"{exc}.", form, at=at)
    return pages.back(session, item_url(item_id, at), message, at=at)


@router.post("/items/{item_id}/mark")
async def mark(request: Request, review: Review, item_id: str) -> Response:
    pages = review.pages
    session, uid, name, form = await pages.posted(request)
    st, _ = pages.known_item(item_id)
    picture = pages.own_picture(item_id, number(form, "picture_id"))
    withdraw = form.get("withdraw") == "yes"
    try:
        if withdraw:
            review.store.withdraw_regeneration(picture.id, uid, seen_revision=number(form, "revision"))
        else:
            review.store.mark_for_regeneration(picture.id, uid, text(form, "note"),
                                               seen_revision=number(form, "revision"))
    except StaleRevision as exc:
        return pages.conflict(request, session, name, exc)
    message = "mark withdrawn" if withdraw else "marked for regeneration"
    return pages.back(session, item_url(item_id, picture_anchor(st, picture.image_id)),
                      f"{picture.image_id} {message}.", at=f"mark-{picture.id}")


@router.post("/items/{item_id}/regenerate")
async def regenerate(request: Request, review: Review, item_id: str) -> Response:
    pages = review.pages
    session, uid, name, form = await pages.posted(request)
    picture = pages.own_picture(item_id, number(form, "picture_id"))
    prompt = text(form, "prompt")
    seen = number(form, "revision")
    at, url = f"regenerate-{picture.id}", item_url(item_id, picture_anchor(pages.known_item(item_id)[0],
                                                                           picture.image_id))
    try:
        new_id = await review.pictures.regenerate(item_id, picture, prompt, seen, uid)
    except StaleRevision as exc:
        return pages.conflict(request, session, name, exc)
    except ReviewError as exc:
        return pages.refuse(session, url, str(exc), form, at=at)
    return pages.back(session, f"{item_url(item_id)}/versions/{new_id}", f"{picture.image_id}: new version generated.")


@router.post("/items/{item_id}/upload")
async def upload(request: Request, review: Review, item_id: str) -> Response:
    pages = review.pages
    session, uid, name, form = await pages.posted(request)
    picture = pages.own_picture(item_id, number(form, "picture_id"))
    file = form.get("file")
    at, url = f"upload-{picture.id}", item_url(item_id, picture_anchor(pages.known_item(item_id)[0], picture.image_id))
    if not isinstance(file, UploadFile) or not file.filename:
        return pages.refuse(session, url, "Choose a picture file.", form, at=at)
    try:
        data = review.pictures.decoded(await file.read(review.pictures.max_upload_bytes + 1))
    except ReviewError as exc:
        return pages.refuse(session, url, str(exc), form, at=at)
    except UploadTooLarge as exc:
        raise HTTPException(413, f"Picture not stored: {exc}.") from None
    except NotAPicture:
        return pages.refuse(session, url, "Not stored: that file is not a picture.", form, at=at)
    try:
        new_id = review.store.add_version(item_id, picture.image_id, data, source="upload", user_id=uid,
                                          prompt=text(form, "note") or None, seen_revision=number(form, "revision"))
    except StaleRevision as exc:
        return pages.conflict(request, session, name, exc)
    return pages.back(session, f"{item_url(item_id)}/versions/{new_id}", f"{picture.image_id}: uploaded version stored.")


@router.post("/items/{item_id}/select")
async def select(request: Request, review: Review, item_id: str) -> Response:
    pages = review.pages
    session, uid, name, form = await pages.posted(request)
    picture = pages.own_picture(item_id, number(form, "picture_id"))
    try:
        review.store.select_version(item_id, picture.id, uid, seen_revision=number(form, "revision"))
    except StaleRevision as exc:
        return pages.conflict(request, session, name, exc)
    return pages.back(session, item_url(item_id), f"{picture.image_id}: version {picture.version} is now current.")
