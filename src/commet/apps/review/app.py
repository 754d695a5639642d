"""The expert-review web app (paper, section 3.2.2 and Appendix B), server-rendered with FastAPI + Jinja2.

Reviewers sign in, read each StoryTurn turn by turn with its pictures, edit its text (every
edit kept with author and time), check each picture against the five criteria of Table 5
(a failed criterion files an error under the matching Table 6 category, and the reviewer
names the most prominent one), file text errors, mark pictures for regeneration, regenerate
them with the configured image model or upload a replacement, compare versions, and accept
or reject. Review runs in the paper's order (one expert corrects first, two more review
independently, blind to each other's verdicts until they gave theirs); every form carries the
revision it showed, and a write on a stale revision is refused with what changed (409).

Security (shared with the study app, :mod:`commet.apps.web`): server-side sessions revoked at
sign-out and password change, a CSRF token on every form, same-origin POSTs only, sign-in
throttled per (name, client) with a capped backoff, every route but sign-in (and static files)
behind a session, autoescaped templates, pictures only from the dataset's own ``images/``
folder or from the store, uploads decoded under a pixel limit, bounded request sizes, and
per-reviewer rate limits.
"""

from __future__ import annotations

import io
import json
import tempfile
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, PlainTextResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import ValidationError
from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.base import RequestResponseEndpoint

from commet.apps.review.db import (
    CRITERIA,
    ERROR_CATEGORIES,
    IMAGE_ERRORS,
    STATUS_KINDS,
    TEXT_ERRORS,
    AcceptRefused,
    CheckInput,
    Picture,
    ReviewDB,
    ReviewError,
    StaleRevision,
    check_password,
    open_for_me,
)
from commet.apps.review.display import feedback_lines, item_segment
from commet.apps.review.merge import (
    FieldKey,
    FieldMerge,
    merge_fields,
    merged_with,
    turn_values,
    values_at,
    word_diff,
)
from commet.apps.web import (
    MAX_UPLOAD_PIXELS,
    SECURITY_HEADERS,
    LoginThrottle,
    NotAPicture,
    RateLimiter,
    Sessions,
    UploadTooLarge,
    check_csrf,
    client_address,
    csrf_token,
    decode_picture,
    guarded_app,
    malformed_request,
    safe_child,
    templates,
)
from commet.errors import CommetError
from commet.format.dataset import Dataset
from commet.format.loading import load_dataset
from commet.format.model import StoryTurn
from commet.format.pipe import format_feedback, parse_feedback
from commet.format.validate import validate_storyturn
from commet.generation.llm.images import ImageModel
from commet.generation.llm.lint import lint_storyturn
from commet.generation.llm.prompts import image_prompt
from commet.models.base import ModelCallError
from commet.taxonomy import TASKS, TASKS_BY_ID

HERE = Path(__file__).parent
FIELD_LIMIT = 20_000  # characters of one text field
PAGE_SIZE = 50
#: The item list's filters: (value, label).
FILTERS = (("", "All items"), ("mine", "Open for me"), *((kind, kind) for kind in STATUS_KINDS))


class NotSignedIn(CommetError):
    """Raised by :func:`create_app`'s guard; answered with a redirect (GET) or 401."""


def create_app(dataset: str | Path | Dataset, db: str | Path | ReviewDB, *,
               image_model: ImageModel | None = None, secure_cookies: bool = False,
               max_upload_bytes: int = 8 * 1024 * 1024, max_upload_pixels: int = MAX_UPLOAD_PIXELS,
               login_throttle: LoginThrottle | None = None, results: str | Path | None = None) -> FastAPI:
    """The review app over ``dataset`` (imported into ``db`` on start; existing reviews are kept; sessions live in
    ``db`` too); with ``results`` (a results store), also the pages that label its runs' calibration samples."""
    data = dataset if isinstance(dataset, Dataset) else load_dataset(dataset)
    store = db if isinstance(db, ReviewDB) else ReviewDB(db)
    store.import_dataset(data)
    images_dir = data.images_dir
    sessions = Sessions(store.path, secure=secure_cookies)
    pages = templates(HERE / "templates")
    pages.env.filters["when"] = lambda iso: iso[:16].replace("T", " ") + " UTC"
    # an item id is one URL path segment: '?', '#', '%', '&' and spaces are allowed in ids (never '/')
    pages.env.filters["path"] = item_segment
    pages.env.globals["calibration_pages"] = results is not None
    pages.env.filters["diff"] = word_diff
    actions = RateLimiter(limit=300, window_s=60)
    logins = login_throttle or LoginThrottle()
    lint_counts: dict[tuple[str, int], int] = {}

    app = guarded_app("CoMMET review", max_body_bytes=max_upload_bytes + 64 * 1024)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")

    @app.middleware("http")
    async def security_headers(request: Request, call_next: RequestResponseEndpoint) -> Response:
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

    @app.exception_handler(StarletteHTTPException)
    async def error_page(request: Request, exc: StarletteHTTPException) -> Response:
        messages = {404: "There is no such page or item.", 413: "That is too large.", 429: "Too many requests; "
                    "wait a moment and try again.", 403: "That request was refused."}
        detail = exc.detail if isinstance(exc.detail, str) and exc.status_code != 404 else messages.get(exc.status_code)
        return pages.TemplateResponse(request, "error.html", {
            "user": None, "csrf": "", "flash": None, "status": exc.status_code, "message": detail or "Something "
            "went wrong."}, status_code=exc.status_code, headers=getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def malformed(request: Request, exc: RequestValidationError) -> Response:
        return await error_page(request, malformed_request(exc))

    def signed_in(request: Request) -> tuple[dict[str, str], int, str]:
        session = sessions.load(request)
        subject = session.get("subject", "")
        uid = subject.removeprefix("user:")
        name = store.user_name(int(uid)) if subject.startswith("user:") and uid.isdigit() else None
        if name is None:
            raise NotSignedIn
        return session, int(uid), name

    async def posted(request: Request) -> tuple[dict[str, str], int, str, FormData]:
        """The signed-in user's CSRF-checked, rate-limited form."""
        session, uid, name = signed_in(request)
        actions.check(f"user:{uid}")
        form = await request.form(max_files=1, max_fields=80, max_part_size=max_upload_bytes)
        token = form.get("csrf")
        check_csrf(session, token if isinstance(token, str) else None)
        return session, uid, name, form

    def text(form: FormData, key: str, default: str = "") -> str:
        value = form.get(key, default)
        if not isinstance(value, str):
            raise HTTPException(400, f"field {key} must be text")
        if len(value) > FIELD_LIMIT:
            raise HTTPException(413, f"field {key} is too long")
        return value.replace("\r\n", "\n").strip()

    def number(form: FormData, key: str) -> int:
        value = text(form, key)
        if not (value.isascii() and value.isdigit()) or len(value) > 12:  # '²'.isdigit(), but int('²') fails
            raise HTTPException(400, f"field {key} must be a number")
        return int(value)

    def render(request: Request, session: dict[str, str], name: str, status_code: int = 200,
               placed: frozenset[str] = frozenset(), **context: Any) -> Response:
        """A page; the last action's message goes beside the form it came from when the page has that form
        (``placed``: the forms it has), else on top, and a refused form gets back what it sent."""
        flash, at = session.pop("flash", None), session.pop("flash_at", None)
        refused, kept = session.pop("refused", None) == "1", json.loads(session.pop("kept", "{}"))
        response = pages.TemplateResponse(request, name, {
            "csrf": csrf_token(session), "flash": flash, "flash_at": at if at in placed else None,
            "refused": refused, "kept": kept.get("fields", {}), "kept_form": kept.get("form"),
            "user": context.pop("user", None), **context}, status_code=status_code)
        sessions.save(response, session)
        return response

    def back(session: dict[str, str], url: str, message: str | None = None, *, at: str | None = None) -> Response:
        """Redirect to ``url`` with ``message`` shown beside the form ``at`` (or on top)."""
        if message:
            session["flash"] = message
            if at:
                session["flash_at"] = at
        response = RedirectResponse(url, status_code=303)
        sessions.save(response, session)
        return response

    def refuse(session: dict[str, str], url: str, message: str, form: FormData, *, at: str) -> Response:
        """A refused action: its reason beside the form's buttons, and everything the form sent typed in again."""
        fields = {key: value[:FIELD_LIMIT] for key, value in form.multi_items()
                  if isinstance(value, str) and key not in ("csrf", "revision")}
        session["refused"] = "1"
        session["kept"] = json.dumps({"form": at, "fields": fields})
        return back(session, url, message, at=at)

    def item_url(item_id: str, anchor: str | None = None) -> str:
        return f"/items/{item_segment(item_id)}" + (f"#{anchor}" if anchor else "")

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
            raise HTTPException(404) from None

    def conflict(request: Request, session: dict[str, str], name: str, exc: StaleRevision,
                 unsaved: list[tuple[str, str]] | None = None, *, fields: list[FieldMerge] | None = None,
                 resolve: dict[str, int] | None = None) -> Response:
        """409: the write was refused because the item moved on; show what changed (word by word), what was not
        saved and, for a turn's text changed by both, a form holding the merge to confirm."""
        return render(request, session, "conflict.html", status_code=409, user=name, exc=exc, unsaved=unsaved or [],
                      fields=fields or [], resolve=resolve)

    def picture_anchor(st: StoryTurn, image_id: str) -> str | None:
        k = next((k for k, turn in enumerate(st.turns) if turn.image == image_id), None)
        return f"turn-{k + 1}" if k is not None else None

    # ------------------------------------------------------------------ sign-in, account

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
        client = client_address(request)
        wait = logins.wait_s(name, client)
        if wait > 0:
            session["flash"] = f"Too many failed sign-ins for this name; try again in {int(wait) + 1} s."
            return render(request, session, "login.html", status_code=429)
        uid = store.authenticate(name, str(form.get("password", ""))[:1024])
        if uid is None:
            logins.failed(name, client)
            return back(session, "/login", "Unknown user or wrong password.")
        logins.succeeded(name, client)
        sessions.drop(session)  # a new session (and CSRF token) after sign-in: no fixation
        fresh: dict[str, str] = {"subject": f"user:{uid}"}
        csrf_token(fresh)
        return back(fresh, "/")

    @app.post("/logout")
    async def logout(request: Request) -> Response:
        session, _, _, _ = await posted(request)
        response = RedirectResponse("/login", status_code=303)
        sessions.clear(response, session)
        return response

    @app.get("/account", response_class=HTMLResponse)
    def account_page(request: Request) -> Response:
        session, _, name = signed_in(request)
        return render(request, session, "account.html", user=name)

    @app.post("/account/password")
    async def change_password(request: Request) -> Response:
        session, uid, name, form = await posted(request)
        if not store.verify(uid, str(form.get("current", ""))[:1024]):
            return back(session, "/account", "The current password is wrong; nothing changed.")
        new, again = str(form.get("new", ""))[:1024], str(form.get("again", ""))[:1024]
        try:
            check_password(new)  # the length first: typing it again would not help
        except ReviewError as exc:
            return back(session, "/account", f"{exc}; nothing changed.")
        if new != again:
            return back(session, "/account", "The two new passwords differ; nothing changed.")
        try:
            store.set_password(name, new)  # revokes every session of this reviewer, this one included
        except ReviewError as exc:
            return back(session, "/account", f"{exc}; nothing changed.")
        fresh: dict[str, str] = {"subject": f"user:{uid}"}
        csrf_token(fresh)
        return back(fresh, "/account", "Password changed; every other session of yours is signed out.")

    # ------------------------------------------------------------------ pages

    @app.get("/", response_class=HTMLResponse)
    def index(request: Request, q: str = "", status: str = "", page: int = 1) -> Response:
        session, uid, name = signed_in(request)
        rows = store.overview(uid)
        needle = q.strip().casefold()[:100]
        if needle:
            rows = [r for r in rows if needle in r.id.casefold() or needle in (r.task or "").casefold()]
        if status == "mine":
            rows = [r for r in rows if open_for_me(r)]
        elif status in STATUS_KINDS:
            rows = [r for r in rows if r.status.kind == status and not r.status.blind_for(name)]
        pages_total = max(1, -(-len(rows) // PAGE_SIZE))
        page = min(max(page, 1), pages_total)
        shown = rows[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]
        lint = {}
        for row in shown:  # the lint of a revision never changes: computed once per (item, revision)
            key = (row.id, row.revision)
            if key not in lint_counts:
                lint_counts[key] = len(lint_storyturn(store.item(row.id)[0]))
            lint[row.id] = lint_counts[key]

        def link(to: int) -> str:
            return "/?" + urlencode({k: v for k, v in (("q", q), ("status", status), ("page", to)) if v})

        return render(request, session, "index.html", user=name, rows=shown, lint=lint, q=q, status=status,
                      filters=FILTERS, page=page, pages_total=pages_total, matching=len(rows),
                      prev_link=link(page - 1) if page > 1 else None,
                      next_link=link(page + 1) if page < pages_total else None)

    @app.get("/next")
    def next_open(request: Request, after: str = "") -> Response:
        session, uid, _ = signed_in(request)
        found = store.next_open_for(uid, after or None)
        if found is None:
            return back(session, "/?status=mine", "Nothing is waiting for your verdict.")
        return RedirectResponse(item_url(found), status_code=303)

    @app.get("/items/{item_id}", response_class=HTMLResponse)
    def item_page(request: Request, item_id: str) -> Response:
        session, uid, name = signed_in(request)
        st, revision = known_item(item_id)
        status = store.status(item_id)
        blind = status.blind_for(name)
        current = store.current_pictures(item_id)
        probe = Dataset(storyturns=[st], images={i: b"" for i in current}, source_file=item_id)
        turns = []
        for k, turn in enumerate(st.turns):
            picture = current.get(turn.image) if turn.image else None
            entry: dict[str, Any] = {"k": k, "turn": turn, "feedback": feedback_lines(turn.feedback),
                                     "feedback_text": format_feedback(turn.feedback), "picture": picture}
            if picture is not None:
                checks = store.checks(picture.id)
                if blind:
                    checks = {key: {who: ok for who, ok in by.items() if who == name} for key, by in checks.items()}
                entry.update(mine=store.checks_by(picture.id, uid), checks=checks,
                             prominent=store.prominent_by(picture.id, uid),
                             first_shown=next(i for i, t in enumerate(st.turns) if t.image == turn.image) == k,
                             versions=len(store.versions(item_id, picture.image_id)),
                             prompt=picture.prompt or image_prompt(st, k, turn.story, turn.story or turn.question))
            turns.append(entry)
        errors = store.errors(item_id)
        decisions = store.decisions(item_id)
        if blind:
            errors = [e for e in errors if e["author"] == name or e["revision"] != revision]
            decisions = [d for d in decisions if d["author"] == name or d["revision"] != revision]
        previous, following = store.neighbours(item_id)
        placed = frozenset({"decide", "file-error", "meta", *(f"edit-{k + 1}" for k in range(len(st.turns))),
                            *(f"{form}-{picture.id}" for picture in current.values()
                              for form in ("checks", "mark", "regenerate", "upload"))})
        return render(request, session, "item.html", placed=placed, user=name, st=st, revision=revision, turns=turns,
                      status=status, blind=blind, mine=store.my_decision(item_id, uid),
                      lint=lint_storyturn(st), problems=validate_storyturn(st, probe, decode_pictures=False),
                      edits=store.edits(item_id), errors=errors, decisions=decisions,
                      regen=store.open_regen_requests(item_id), criteria=CRITERIA, image_errors=IMAGE_ERRORS,
                      text_errors=TEXT_ERRORS, categories=ERROR_CATEGORIES, tasks=TASKS,
                      pictures=list(current.values()), can_regenerate=image_model is not None,
                      image_model=image_model.spec if image_model is not None else None,
                      previous=previous, following=following)

    @app.get("/items/{item_id}/versions/{picture_id}", response_class=HTMLResponse)
    def versions_page(request: Request, item_id: str, picture_id: int) -> Response:
        session, _, name = signed_in(request)
        st, revision = known_item(item_id)
        picture = own_picture(item_id, picture_id)
        blind = store.status(item_id).blind_for(name)
        current = store.current_pictures(item_id).get(picture.image_id)
        versions = []
        for version in store.versions(item_id, picture.image_id):
            checks = store.checks(version.id)
            if blind:
                checks = {key: {who: ok for who, ok in by.items() if who == name} for key, by in checks.items()}
            versions.append({"picture": version, "checks": checks})
        shown_in = [(k, turn) for k, turn in enumerate(st.turns) if turn.image == picture.image_id]
        return render(request, session, "versions.html", user=name, st=st, image_id=picture.image_id,
                      versions=versions, current=current, criteria=CRITERIA, revision=revision, shown_in=shown_in,
                      blind=blind)

    @app.get("/disagreements", response_class=HTMLResponse)
    def disagreements_page(request: Request) -> Response:
        session, _, name = signed_in(request)
        rows = [r for r in store.disagreements() if not r["status"].blind_for(name)]  # type: ignore[attr-defined]
        return render(request, session, "disagreements.html", user=name, rows=rows)

    @app.get("/stats", response_class=HTMLResponse)
    def stats_page(request: Request) -> Response:
        session, _, name = signed_in(request)
        return render(request, session, "stats.html", user=name, stats=store.stats(), image_errors=IMAGE_ERRORS)

    @app.get("/export", response_class=HTMLResponse)
    def export_page(request: Request) -> Response:
        session, _, name = signed_in(request)
        final = sum(s.final for s in store.statuses().values())
        return render(request, session, "export.html", user=name, final=final, items=len(store.item_ids()))

    @app.get("/export/{name}.csv")
    def export_csv(request: Request, name: str) -> Response:
        _, _, viewer = signed_in(request)
        if name not in ("items", "errors"):
            raise HTTPException(404)
        body = store.items_csv(viewer) if name == "items" else store.errors_csv(viewer)
        return Response(body, media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="review-{name}.csv"'})

    @app.get("/export/final.zip")
    def export_zip(request: Request) -> Response:
        """The final items as a validated dataset folder (what ``commet review export`` writes), zipped."""
        signed_in(request)
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "reviewed"
            store.export(folder)
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
                for path in sorted(folder.rglob("*")):
                    if path.is_file():
                        archive.write(path, path.relative_to(folder.parent).as_posix())
        return Response(buffer.getvalue(), media_type="application/zip",
                        headers={"Content-Disposition": 'attachment; filename="reviewed.zip"'})

    if results is not None:
        from commet.apps.review.calibration import add_calibration_pages

        add_calibration_pages(app, Path(results), data, signed_in=signed_in, posted=posted, render=render, back=back)

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

    @app.post("/items/{item_id}/edit")
    async def edit_turn(request: Request, item_id: str) -> Response:
        """Save a turn's text; edits saved since the form's revision to other fields are kept (merged)."""
        session, uid, name, form = await posted(request)
        k, seen = number(form, "turn"), number(form, "revision")
        answers = [a.strip() for a in text(form, "answers").split("\n") if a.strip()]
        sent: dict[FieldKey, str] = {(k, "story"): text(form, "story"), (k, "feedback"): text(form, "feedback"),
                                     (k, "question"): text(form, "question"), (k, "answers"): "\n".join(answers)}
        at, url = f"edit-{k + 1}", item_url(item_id, f"turn-{k + 1}")
        if not answers:
            return refuse(session, url, f"Edit not saved: turn {k + 1} needs at least one expected answer.", form, at=at)
        for _ in range(3):  # a save by someone else between reading and writing: merge again
            st, revision = known_item(item_id)
            if k >= len(st.turns):
                raise HTTPException(400, "no such turn")
            current: dict[FieldKey, str] = turn_values(st.turns[k], k)
            since = store.edits_since(item_id, seen)
            fields = merge_fields(values_at(current, since), current, sent)
            if any(field.conflict for field in fields):
                return conflict(request, session, name, StaleRevision(item_id, seen, revision, since),
                                fields=fields, resolve={"turn": k, "revision": revision})
            values = {field.key[1]: field.value for field in fields}
            changes = [(k, key, current[(k, key)], value) for key, value in values.items() if value != current[(k, key)]]
            if not changes:
                return back(session, url, f"Nothing to save: turn {k + 1} already reads so.", at=at)
            try:
                turn = st.turns[k].model_copy(update={"story": values["story"], "question": values["question"],
                                                      "feedback": parse_feedback(values["feedback"]),
                                                      "answers": values["answers"].split("\n")})
                updated = StoryTurn.model_validate({**st.model_dump(), "turns": [
                    t.model_dump() if i != k else turn.model_dump() for i, t in enumerate(st.turns)]})
            except ValidationError as exc:  # its first line ("1 validation error for StoryTurn") says nothing
                reasons = "; ".join(f"{' '.join(str(part) for part in error['loc'][2:]) or 'the item'}: {error['msg']}"
                                    for error in exc.errors())
                return refuse(session, url, f"Edit not saved: {reasons}.", form, at=at)
            except ValueError as exc:
                return refuse(session, url, f"Edit not saved: {str(exc).splitlines()[0]}", form, at=at)
            try:
                saved = store.save_edit(item_id, uid, changes, updated, seen_revision=revision)
            except StaleRevision:
                continue
            return back(session, url, f"Turn {k + 1} saved (revision {saved}).{merged_with(since, fields)}", at=at)
        return refuse(session, url, "Not saved: the item changed again while saving, three times; your text is "
                      "kept: save it again.", form, at=at)

    @app.post("/items/{item_id}/meta")
    async def edit_meta(request: Request, item_id: str) -> Response:
        session, uid, name, form = await posted(request)
        st, revision = known_item(item_id)
        task = TASKS_BY_ID.get(text(form, "task"))
        if task is None:
            raise HTTPException(400, "unknown task")
        seen = number(form, "revision")
        current: dict[FieldKey, str] = {(None, "task"): st.task, (None, "image_dependent"): str(st.image_dependent)}
        sent: dict[FieldKey, str] = {(None, "task"): task.id,
                                     (None, "image_dependent"): str(form.get("image_dependent") == "on")}
        since = store.edits_since(item_id, seen)
        fields = merge_fields(values_at(current, since), current, sent)
        if any(field.conflict for field in fields):
            return conflict(request, session, name, StaleRevision(item_id, seen, revision, since),
                            [(field.label, field.sent) for field in fields if field.conflict], fields=fields)
        values = {field.key[1]: field.value for field in fields}
        changes = [(None, key, current[(None, key)], value) for key, value in values.items()
                   if value != current[(None, key)]]
        if not changes:
            return back(session, item_url(item_id), "Nothing to save: the task and variant already read so.", at="meta")
        image_dependent = values["image_dependent"] == "True"
        chosen = TASKS_BY_ID[values["task"]]
        updated = st.model_copy(update={"task": chosen.id, "image_dependent": image_dependent,
                                        "category": chosen.category_for(image_dependent)})
        try:
            saved = store.save_edit(item_id, uid, changes, updated, seen_revision=revision)
        except StaleRevision as exc:
            return conflict(request, session, name, exc, [(key, new) for _, key, _, new in changes])
        return back(session, item_url(item_id), f"Task and variant saved (revision {saved}).{merged_with(since, fields)}",
                    at="meta")

    @app.post("/items/{item_id}/checks")
    async def picture_checks(request: Request, item_id: str) -> Response:
        session, uid, name, form = await posted(request)
        known_item(item_id)
        current = list(store.current_pictures(item_id).values())
        given = carried_checks(form, current)
        pressed = text(form, "checks")  # the picture whose "Save picture checks" button was pressed
        shown = next((p for p in current if str(p.id) == pressed), None) or next(
            (p for p in current if p.id in given), current[0] if current else None)
        if shown is None:
            raise HTTPException(400, "this item has no picture to check")
        at = f"checks-{shown.id}"
        if not given:
            return refuse(session, item_url(item_id, at), "Choose pass or fail for at least one criterion.", form, at=at)
        saved, filed = [], []
        try:
            for picture in current:
                if picture.id in given:
                    filed += [(picture, key) for key in store.record_checks(
                        picture.id, uid, given[picture.id].results, given[picture.id].note,
                        prominent=given[picture.id].prominent, seen_revision=number(form, "revision"))]
                    saved.append(picture.label)
        except StaleRevision as exc:
            return conflict(request, session, name, exc)
        except ReviewError as exc:
            return refuse(session, item_url(item_id, at), f"{exc}.", form, at=at)
        message = "Checks of " + ", ".join(saved) + " saved"
        if filed:
            message += "; errors filed: " + ", ".join(IMAGE_ERRORS[k] for _, k in filed)
        unnamed = [p.label for p in current if p.id in given and store.needs_prominent(p.id, uid)]
        if unnamed:
            message += "; choose the most prominent error of " + ", ".join(unnamed) + " (several criteria fail)"
        return back(session, item_url(item_id, at), message + ".", at=at)

    @app.post("/items/{item_id}/errors")
    async def file_error(request: Request, item_id: str) -> Response:
        session, uid, name, form = await posted(request)
        known_item(item_id)
        picture_id = number(form, "picture_id") if text(form, "picture_id") else None
        if picture_id is not None:
            own_picture(item_id, picture_id)
        try:
            store.file_error(item_id, uid, text(form, "category"), text(form, "note"), picture_id=picture_id,
                             seen_revision=number(form, "revision"))
        except StaleRevision as exc:
            return conflict(request, session, name, exc)
        except ReviewError as exc:
            return refuse(session, item_url(item_id, "file-error"), f"Not filed: {exc}.", form, at="file-error")
        return back(session, item_url(item_id, "file-error"), "Error filed.", at="file-error")

    @app.post("/items/{item_id}/mark")
    async def mark(request: Request, item_id: str) -> Response:
        session, uid, name, form = await posted(request)
        st, _ = known_item(item_id)
        picture = own_picture(item_id, number(form, "picture_id"))
        withdraw = form.get("withdraw") == "yes"
        try:
            if withdraw:
                store.withdraw_regeneration(picture.id, uid, seen_revision=number(form, "revision"))
            else:
                store.mark_for_regeneration(picture.id, uid, text(form, "note"), seen_revision=number(form, "revision"))
        except StaleRevision as exc:
            return conflict(request, session, name, exc)
        message = "mark withdrawn" if withdraw else "marked for regeneration"
        return back(session, item_url(item_id, picture_anchor(st, picture.image_id)), f"{picture.image_id} {message}.",
                    at=f"mark-{picture.id}")

    @app.post("/items/{item_id}/regenerate")
    async def regenerate(request: Request, item_id: str) -> Response:
        session, uid, name, form = await posted(request)
        picture = own_picture(item_id, number(form, "picture_id"))
        prompt = text(form, "prompt")
        seen = number(form, "revision")
        at, url = f"regenerate-{picture.id}", item_url(item_id, picture_anchor(known_item(item_id)[0], picture.image_id))
        if image_model is None:
            return refuse(session, url, "No image model configured (start with --image-model).", form, at=at)
        if not prompt:
            return refuse(session, url, "The prompt is empty.", form, at=at)
        try:
            store.require_revision(item_id, seen)
        except StaleRevision as exc:
            return conflict(request, session, name, exc)
        try:
            data = await image_model.generate(prompt)
        except ModelCallError as exc:
            return refuse(session, url, f"Regeneration failed: {exc}", form, at=at)
        new_id = store.add_version(item_id, picture.image_id, data, source="regenerated", user_id=uid, prompt=prompt,
                                   model=image_model.spec)
        return back(session, f"{item_url(item_id)}/versions/{new_id}", f"{picture.image_id}: new version generated.")

    @app.post("/items/{item_id}/upload")
    async def upload(request: Request, item_id: str) -> Response:
        session, uid, name, form = await posted(request)
        picture = own_picture(item_id, number(form, "picture_id"))
        file = form.get("file")
        at, url = f"upload-{picture.id}", item_url(item_id, picture_anchor(known_item(item_id)[0], picture.image_id))
        if not isinstance(file, UploadFile) or not file.filename:
            return refuse(session, url, "Choose a picture file.", form, at=at)
        raw = await file.read(max_upload_bytes + 1)
        if len(raw) > max_upload_bytes:
            return refuse(session, url, f"Not stored: the picture is larger than {max_upload_bytes // 1024} KiB; "
                          "choose it again once smaller.", form, at=at)
        try:
            data = decode_picture(raw, max_pixels=max_upload_pixels)
        except UploadTooLarge as exc:
            raise HTTPException(413, f"Picture not stored: {exc}.") from None
        except NotAPicture:
            return refuse(session, url, "Not stored: that file is not a picture.", form, at=at)
        try:
            new_id = store.add_version(item_id, picture.image_id, data, source="upload", user_id=uid,
                                       prompt=text(form, "note") or None, seen_revision=number(form, "revision"))
        except StaleRevision as exc:
            return conflict(request, session, name, exc)
        return back(session, f"{item_url(item_id)}/versions/{new_id}", f"{picture.image_id}: uploaded version stored.")

    @app.post("/items/{item_id}/select")
    async def select(request: Request, item_id: str) -> Response:
        session, uid, name, form = await posted(request)
        picture = own_picture(item_id, number(form, "picture_id"))
        try:
            store.select_version(item_id, picture.id, uid, seen_revision=number(form, "revision"))
        except StaleRevision as exc:
            return conflict(request, session, name, exc)
        return back(session, item_url(item_id), f"{picture.image_id}: version {picture.version} is now current.")

    @app.post("/items/{item_id}/decision")
    async def decide(request: Request, item_id: str) -> Response:
        session, uid, name, form = await posted(request)
        known_item(item_id)
        current = list(store.current_pictures(item_id).values())
        try:
            store.decide(item_id, uid, text(form, "decision"), text(form, "note"),
                         seen_revision=number(form, "revision"), checks=carried_checks(form, current))
        except StaleRevision as exc:
            return conflict(request, session, name, exc, [("Decision", text(form, "decision"))])
        except ReviewError as exc:
            prefix = "" if isinstance(exc, AcceptRefused) else "Not saved: "
            return refuse(session, item_url(item_id, "decide"), f"{prefix}{exc}", form, at="decide")
        status = store.status(item_id)
        return back(session, item_url(item_id, "decide"), f"Decision saved; the item is {status.label}.", at="decide")

    return app
