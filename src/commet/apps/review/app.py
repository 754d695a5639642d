"""The expert-review web app (paper, section 3.2.2 and Appendix B), server-rendered with FastAPI + Jinja2.

Reviewers sign in, read each StoryTurn turn by turn with its pictures, edit its text (every
edit kept with author and time), check each picture against the five criteria of Table 5
(a failed criterion files an error under the matching Table 6 category), file text errors,
mark pictures for regeneration, regenerate them with the configured image model or upload a
replacement, compare versions, and accept or reject. Security: signed sessions, a CSRF token
on every form, every route but sign-in (and the stylesheet) behind a session, autoescaped
templates, pictures only from the dataset's own ``images/`` folder or from the store, bounded
request and upload sizes, and per-user rate limits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse, PlainTextResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import FormData, UploadFile

from commet.apps.review.db import (
    CRITERIA,
    ERROR_CATEGORIES,
    IMAGE_ERRORS,
    TEXT_ERRORS,
    Picture,
    ReviewDB,
    ReviewError,
)
from commet.apps.web import (
    SECURITY_HEADERS,
    BodySizeLimit,
    RateLimiter,
    Sessions,
    check_csrf,
    csrf_token,
    safe_child,
    templates,
)
from commet.format.dataset import Dataset, load_dataset
from commet.format.model import Feedback, StoryTurn
from commet.format.pipe import format_feedback, parse_feedback
from commet.format.validate import validate_storyturn
from commet.generation.llm.images import ImageModel, to_png
from commet.generation.llm.lint import lint_storyturn
from commet.generation.llm.prompts import image_prompt
from commet.models.base import ModelCallError
from commet.taxonomy import TASKS, TASKS_BY_ID

HERE = Path(__file__).parent
FIELD_LIMIT = 20_000  # characters of one text field


class NotSignedIn(Exception):
    """Raised by :func:`create_app`'s guard; answered with a redirect (GET) or 401."""


def feedback_lines(feedback: Feedback | None) -> list[tuple[str, str]]:
    """(condition, text) pairs for display."""
    if feedback is None:
        return []
    lines = [("Always", feedback.always)] if feedback.always else []
    if feedback.right is not None:
        lines.append(("If right", feedback.right))
    if feedback.wrong is not None:
        lines.append(("If wrong", feedback.wrong))
    lines += [(f"If the previous answer is {e.answer}", e.text) for e in feedback.by_answer]
    return lines


def create_app(dataset: str | Path | Dataset, db: str | Path | ReviewDB, *, secret: str,
               image_model: ImageModel | None = None, secure_cookies: bool = False,
               max_upload_bytes: int = 8 * 1024 * 1024) -> FastAPI:
    """The review app over ``dataset`` (imported into ``db`` on start; existing reviews are kept)."""
    data = dataset if isinstance(dataset, Dataset) else load_dataset(dataset)
    store = db if isinstance(db, ReviewDB) else ReviewDB(db)
    store.import_dataset(data)
    images_dir = data.images_dir
    sessions = Sessions(secret, secure=secure_cookies)
    pages = templates(HERE / "templates")
    pages.env.filters["when"] = lambda iso: iso[:16].replace("T", " ") + " UTC"
    actions = RateLimiter(limit=300, window_s=60)
    logins = RateLimiter(limit=10, window_s=60)

    app = FastAPI(title="CoMMET review", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(BodySizeLimit, max_bytes=max_upload_bytes + 64 * 1024)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Any) -> Response:
        response = await call_next(request)
        for key, value in SECURITY_HEADERS.items():
            response.headers.setdefault(key, value)
        response.headers.setdefault("Cache-Control", "no-store")
        return response

    @app.exception_handler(NotSignedIn)
    async def not_signed_in(request: Request, exc: NotSignedIn) -> Response:
        if request.method in ("GET", "HEAD"):
            return RedirectResponse("/login", status_code=303)
        return PlainTextResponse("sign in first", status_code=401)

    def signed_in(request: Request) -> tuple[dict[str, str], int, str]:
        session = sessions.load(request)
        uid = session.get("uid")
        name = store.user_name(int(uid)) if uid and uid.isdigit() else None
        if name is None:
            raise NotSignedIn
        return session, int(uid), name  # type: ignore[arg-type]

    async def posted(request: Request) -> tuple[dict[str, str], int, FormData]:
        """The signed-in user's CSRF-checked, rate-limited form."""
        session, uid, _ = signed_in(request)
        actions.check(f"user:{uid}")
        form = await request.form(max_files=1, max_fields=40, max_part_size=max_upload_bytes)
        token = form.get("csrf")
        check_csrf(session, token if isinstance(token, str) else None)
        return session, uid, form

    def text(form: FormData, key: str, default: str = "") -> str:
        value = form.get(key, default)
        if not isinstance(value, str):
            raise HTTPException(400, f"field {key} must be text")
        if len(value) > FIELD_LIMIT:
            raise HTTPException(413, f"field {key} is too long")
        return value.replace("\r\n", "\n").strip()

    def number(form: FormData, key: str) -> int:
        value = text(form, key)
        if not value.isdigit():
            raise HTTPException(400, f"field {key} must be a number")
        return int(value)

    def render(request: Request, session: dict[str, str], name: str, **context: Any) -> Response:
        flash = session.pop("flash", None)
        response = pages.TemplateResponse(request, name, {
            "csrf": csrf_token(session), "flash": flash, "user": context.pop("user", None), **context})
        sessions.save(response, session)
        return response

    def back(session: dict[str, str], url: str, message: str | None = None) -> Response:
        if message:
            session["flash"] = message
        response = RedirectResponse(url, status_code=303)
        sessions.save(response, session)
        return response

    def item_url(item_id: str) -> str:
        return f"/items/{item_id}"

    def own_picture(item_id: str, picture_id: int) -> Picture:
        try:
            picture = store.picture(picture_id)
        except ReviewError:
            raise HTTPException(404) from None
        if picture.item_id != item_id:
            raise HTTPException(400, "that picture belongs to another item")
        return picture

    def known_item(item_id: str) -> tuple[StoryTurn, int]:
        try:
            return store.item(item_id)
        except ReviewError:
            raise HTTPException(404, "no such item") from None

    # ------------------------------------------------------------------ sign-in

    @app.get("/login", response_class=HTMLResponse)
    def login_page(request: Request) -> Response:
        return render(request, sessions.load(request), "login.html")

    @app.post("/login")
    async def login(request: Request) -> Response:
        session = sessions.load(request)
        form = await request.form(max_files=0, max_fields=5)
        token = form.get("csrf")
        check_csrf(session, token if isinstance(token, str) else None)
        name = str(form.get("name", ""))[:64]
        logins.check(f"login:{name.lower()}")
        uid = store.authenticate(name, str(form.get("password", ""))[:1024])
        if uid is None:
            return back(session, "/login", "Unknown user or wrong password.")
        fresh: dict[str, str] = {"uid": str(uid)}
        csrf_token(fresh)  # a new token after sign-in
        return back(fresh, "/")

    @app.post("/logout")
    async def logout(request: Request) -> Response:
        await posted(request)
        response = RedirectResponse("/login", status_code=303)
        sessions.clear(response)
        return response

    # ------------------------------------------------------------------ pages

    @app.get("/", response_class=HTMLResponse)
    def index(request: Request) -> Response:
        session, uid, name = signed_in(request)
        rows = []
        for item_id in store.item_ids():
            st, revision = store.item(item_id)
            rows.append({"st": st, "revision": revision, "status": store.status(item_id),
                         "mine": store.my_decision(item_id, uid), "errors": len(store.errors(item_id)),
                         "lint": len(lint_storyturn(st)), "pictures": len(store.current_pictures(item_id))})
        return render(request, session, "index.html", user=name, rows=rows)

    @app.get("/items/{item_id}", response_class=HTMLResponse)
    def item_page(request: Request, item_id: str) -> Response:
        session, uid, name = signed_in(request)
        st, revision = known_item(item_id)
        current = store.current_pictures(item_id)
        probe = Dataset(storyturns=[st], images={i: b"" for i in current}, source_file=item_id)
        turns = []
        for k, turn in enumerate(st.turns):
            picture = current.get(turn.image) if turn.image else None
            entry: dict[str, Any] = {"k": k, "turn": turn, "feedback": feedback_lines(turn.feedback),
                                     "feedback_text": format_feedback(turn.feedback), "picture": picture}
            if picture is not None:
                entry.update(mine=store.checks_by(picture.id, uid), checks=store.checks(picture.id),
                             versions=len(store.versions(item_id, picture.image_id)),
                             prompt=picture.prompt or image_prompt(st, k, turn.story, turn.story or turn.question))
            turns.append(entry)
        return render(request, session, "item.html", user=name, st=st, revision=revision, turns=turns,
                      status=store.status(item_id), mine=store.my_decision(item_id, uid),
                      lint=lint_storyturn(st), problems=validate_storyturn(st, probe, decode_pictures=False),
                      edits=store.edits(item_id), errors=store.errors(item_id), decisions=store.decisions(item_id),
                      regen=store.open_regen_requests(item_id), criteria=CRITERIA, image_errors=IMAGE_ERRORS,
                      text_errors=TEXT_ERRORS, categories=ERROR_CATEGORIES, tasks=TASKS,
                      pictures=list(current.values()), can_regenerate=image_model is not None,
                      image_model=image_model.spec if image_model is not None else None)

    @app.get("/items/{item_id}/versions/{picture_id}", response_class=HTMLResponse)
    def versions_page(request: Request, item_id: str, picture_id: int) -> Response:
        session, _, name = signed_in(request)
        st, _ = known_item(item_id)
        picture = own_picture(item_id, picture_id)
        current = store.current_pictures(item_id).get(picture.image_id)
        versions = [{"picture": v, "checks": store.checks(v.id)} for v in store.versions(item_id, picture.image_id)]
        return render(request, session, "versions.html", user=name, st=st, image_id=picture.image_id,
                      versions=versions, current=current, criteria=CRITERIA)

    @app.get("/disagreements", response_class=HTMLResponse)
    def disagreements_page(request: Request) -> Response:
        session, _, name = signed_in(request)
        return render(request, session, "disagreements.html", user=name, rows=store.disagreements())

    @app.get("/stats", response_class=HTMLResponse)
    def stats_page(request: Request) -> Response:
        session, _, name = signed_in(request)
        return render(request, session, "stats.html", user=name, stats=store.stats())

    # ------------------------------------------------------------------ pictures

    @app.get("/images/{name:path}")
    def dataset_image(request: Request, name: str) -> Response:
        signed_in(request)
        if images_dir is None:
            raise HTTPException(404)
        return FileResponse(safe_child(images_dir, name))

    @app.get("/pictures/{picture_id}.png")
    def stored_picture(request: Request, picture_id: int) -> Response:
        signed_in(request)
        data = store.picture_data(picture_id)
        if not data:
            raise HTTPException(404)
        return Response(data, media_type="image/png")

    # ------------------------------------------------------------------ actions

    @app.post("/items/{item_id}/edit")
    async def edit_turn(request: Request, item_id: str) -> Response:
        session, uid, form = await posted(request)
        st, _ = known_item(item_id)
        k = number(form, "turn")
        if k >= len(st.turns):
            raise HTTPException(400, "no such turn")
        old = st.turns[k]
        answers = [a.strip() for a in text(form, "answers").split("\n") if a.strip()]
        new_values = {"story": text(form, "story"), "feedback": text(form, "feedback"),
                      "question": text(form, "question"), "answers": "\n".join(answers)}
        old_values = {"story": old.story, "feedback": format_feedback(old.feedback), "question": old.question,
                      "answers": "\n".join(old.answers)}
        changes = [(k, key, old_values[key], value) for key, value in new_values.items() if value != old_values[key]]
        if not changes:
            return back(session, item_url(item_id), "Nothing changed.")
        try:
            turn = old.model_copy(update={"story": new_values["story"], "question": new_values["question"],
                                          "feedback": parse_feedback(new_values["feedback"]), "answers": answers})
            updated = StoryTurn.model_validate({**st.model_dump(), "turns": [
                t.model_dump() if i != k else turn.model_dump() for i, t in enumerate(st.turns)]})
        except ValueError as exc:
            return back(session, item_url(item_id), f"Edit not saved: {str(exc).splitlines()[0]}")
        revision = store.save_edit(item_id, uid, changes, updated)
        return back(session, item_url(item_id), f"Turn {k + 1} saved (revision {revision}).")

    @app.post("/items/{item_id}/meta")
    async def edit_meta(request: Request, item_id: str) -> Response:
        session, uid, form = await posted(request)
        st, _ = known_item(item_id)
        task = TASKS_BY_ID.get(text(form, "task"))
        if task is None:
            raise HTTPException(400, "unknown task")
        image_dependent = form.get("image_dependent") == "on"
        changes = [(None, key, str(old), str(new)) for key, old, new in (
            ("task", st.task, task.id), ("image_dependent", st.image_dependent, image_dependent)) if old != new]
        if not changes:
            return back(session, item_url(item_id), "Nothing changed.")
        updated = st.model_copy(update={"task": task.id, "image_dependent": image_dependent,
                                        "category": task.category_for(image_dependent)})
        revision = store.save_edit(item_id, uid, changes, updated)
        return back(session, item_url(item_id), f"Task and variant saved (revision {revision}).")

    @app.post("/items/{item_id}/checks")
    async def picture_checks(request: Request, item_id: str) -> Response:
        session, uid, form = await posted(request)
        picture = own_picture(item_id, number(form, "picture_id"))
        results = {}
        for key, _, _ in CRITERIA:
            verdict = form.get(f"c_{key}")
            if verdict in ("pass", "fail"):
                results[key] = verdict == "pass"
        if not results:
            return back(session, item_url(item_id), "Choose pass or fail for at least one criterion.")
        filed = store.record_checks(picture.id, uid, results, text(form, "note"))
        message = f"Checks of {picture.image_id} v{picture.version} saved"
        if filed:
            message += "; errors filed: " + ", ".join(IMAGE_ERRORS[k] for k in filed)
        return back(session, item_url(item_id), message + ".")

    @app.post("/items/{item_id}/errors")
    async def file_error(request: Request, item_id: str) -> Response:
        session, uid, form = await posted(request)
        known_item(item_id)
        picture_id = number(form, "picture_id") if text(form, "picture_id") else None
        if picture_id is not None:
            own_picture(item_id, picture_id)
        try:
            store.file_error(item_id, uid, text(form, "category"), text(form, "note"), picture_id=picture_id)
        except ReviewError as exc:
            return back(session, item_url(item_id), str(exc))
        return back(session, item_url(item_id), "Error filed.")

    @app.post("/items/{item_id}/mark")
    async def mark(request: Request, item_id: str) -> Response:
        session, uid, form = await posted(request)
        picture = own_picture(item_id, number(form, "picture_id"))
        store.mark_for_regeneration(picture.id, uid, text(form, "note"))
        return back(session, item_url(item_id), f"{picture.image_id} marked for regeneration.")

    @app.post("/items/{item_id}/regenerate")
    async def regenerate(request: Request, item_id: str) -> Response:
        session, uid, form = await posted(request)
        picture = own_picture(item_id, number(form, "picture_id"))
        prompt = text(form, "prompt")
        if image_model is None:
            return back(session, item_url(item_id), "No image model configured (start with --image-model).")
        if not prompt:
            return back(session, item_url(item_id), "The prompt is empty.")
        try:
            data = await image_model.generate(prompt)
        except ModelCallError as exc:
            return back(session, item_url(item_id), f"Regeneration failed: {exc}")
        new_id = store.add_version(item_id, picture.image_id, data, source="regenerated", user_id=uid, prompt=prompt,
                                   model=image_model.spec)
        return back(session, f"/items/{item_id}/versions/{new_id}", f"{picture.image_id}: new version generated.")

    @app.post("/items/{item_id}/upload")
    async def upload(request: Request, item_id: str) -> Response:
        session, uid, form = await posted(request)
        picture = own_picture(item_id, number(form, "picture_id"))
        file = form.get("file")
        if not isinstance(file, UploadFile):
            return back(session, item_url(item_id), "Choose a picture file.")
        raw = await file.read(max_upload_bytes + 1)
        if len(raw) > max_upload_bytes:
            return back(session, item_url(item_id), f"The picture is larger than {max_upload_bytes // 1024} KiB.")
        try:
            data = to_png(raw)
        except ModelCallError:
            return back(session, item_url(item_id), "That file is not a picture.")
        new_id = store.add_version(item_id, picture.image_id, data, source="upload", user_id=uid,
                                   prompt=text(form, "note") or None)
        return back(session, f"/items/{item_id}/versions/{new_id}", f"{picture.image_id}: uploaded version stored.")

    @app.post("/items/{item_id}/select")
    async def select(request: Request, item_id: str) -> Response:
        session, _, form = await posted(request)
        picture = own_picture(item_id, number(form, "picture_id"))
        store.select_version(item_id, picture.id)
        return back(session, item_url(item_id), f"{picture.image_id}: version {picture.version} is now current.")

    @app.post("/items/{item_id}/decision")
    async def decide(request: Request, item_id: str) -> Response:
        session, uid, form = await posted(request)
        known_item(item_id)
        try:
            store.decide(item_id, uid, text(form, "decision"), text(form, "note"))
        except ReviewError as exc:
            return back(session, item_url(item_id), str(exc))
        status = store.status(item_id)
        return back(session, item_url(item_id), f"Decision saved; the item is {status.label}.")

    return app
