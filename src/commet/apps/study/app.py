"""The study web app: anonymous participants at ``/p/<token>``, the organiser at ``/organiser``.

Server-rendered pages, no JavaScript. A participant reads the consent page (how long the
study takes, who to contact, how full an answer should be, an adult confirmation), then
answers the questionnaire's StoryTurns turn by turn; each answer is judged online through
the Judge interface, scored with the engine's branch rules, and the next turn opens with the
feedback the engine would give a model, styled by its kind (story information is neutral, a
correction is never shown as praise). All state lives in the study database under the link's
token, so a participant can close the page and come back with the same link, or stop; text
typed before "Take a break" is kept, and an answer sent from an outdated page (a second tab)
is not saved and the participant is told so.

Limits a person never meets: answers are counted per link (``answer_rate`` a minute; page
loads and pictures only against a far higher bound). If the answer limit is ever met, the
page says how many seconds to wait and keeps the typed answer.

Privacy: no request metadata is read into the database (run uvicorn with
``access_log=False``); rate limits are keyed by link token, never by address.
"""

from __future__ import annotations

import hashlib
import math
import secrets
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated

from fastapi import FastAPI, Form, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.base import RequestResponseEndpoint

from commet.apps.study.build import estimated_minutes, load_study, shows_image
from commet.apps.study.db import StudyDB
from commet.apps.study.export import participant_label, participant_status, response_records, to_csv, to_jsonl
from commet.apps.study.flow import Position, position, question_count
from commet.apps.web import (
    SECURITY_HEADERS,
    LoginThrottle,
    RateLimiter,
    Sessions,
    check_csrf,
    client_address,
    csrf_token,
    csrf_valid,
    guarded_app,
    hash_password,
    malformed_request,
    safe_child,
    templates,
    verify_password,
)
from commet.engine.conversation import apply_branch_rules
from commet.judges.base import Judge, JudgeRequest, Verdict
from commet.judges.registry import create_judge

HERE = Path(__file__).parent
STATIC_DIR = HERE / "static"
MAX_BODY_BYTES = 64 * 1024
MAX_ANSWER_CHARS = 4000
MAX_LINKS_PER_REQUEST = 500
TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
IMAGE_TYPES = {b"\x89PNG": "image/png", b"\xff\xd8\xff": "image/jpeg", b"GIF8": "image/gif", b"RIFF": "image/webp"}
#: The study's session cookie: not the review app's, which may be served on another port of the same host.
SESSION_COOKIE = "commet_study_session"
#: Share of undecided answers above which the organiser page flags a participant.
UNDECIDED_WARNING = 0.2


def feedback_style(kind: str) -> str:
    """How a feedback kind (the engine's ``choose_feedback``) is shown: ``right``, ``correction`` or ``info``.

    Answer-keyed and unconditional feedback carry story facts, so they are neutral; only a
    "right" text is shown as confirmation, and a correction (also after an undecided answer)
    never looks like one.
    """
    if kind in ("right", "correctness-right"):
        return "right"
    if kind.startswith(("wrong", "correctness-wrong")):
        return "correction"
    return "info"


def typed(response: str) -> str:
    """The text a participant typed, as their browser holds it: a form sends each line break as CRLF, which the
    textarea (and its ``maxlength``) counts as one character, so line breaks are LF again before anything counts."""
    return response.replace("\r\n", "\n").replace("\r", "\n").strip()


def _image_type(data: bytes) -> str:
    return next((mime for magic, mime in IMAGE_TYPES.items() if data.startswith(magic)), "application/octet-stream")


def create_app(study_path: Path, db_path: Path, *, judge: Judge | str | None = None,
               organiser_password: str | None = None, secure_cookies: bool = False,
               participant_rate: int = 600, answer_rate: int = 60, login_rate: int = 10) -> FastAPI:
    """The study app for ``study_path`` with participants in ``db_path``.

    ``judge`` defaults to the study's judge spec; without ``organiser_password`` the organiser
    pages are off. ``answer_rate`` bounds answers per link and minute (one a second: no person
    types that fast), ``participant_rate`` all requests per link and minute (page loads and
    pictures included), ``login_rate`` organiser login attempts per minute.
    """
    study, dataset = load_study(study_path)
    storyturns = {storyturn.id: storyturn for storyturn in dataset}
    the_judge = create_judge(judge or study.judge) if not isinstance(judge, Judge) else judge
    db = StudyDB(db_path, study.digest())
    sessions = Sessions(db_path, secure=secure_cookies, cookie=SESSION_COOKIE)
    password_hash = hash_password(organiser_password) if organiser_password else None
    # organiser sessions name the password they were opened with: a new password revokes the old ones
    organiser_subject = "organiser:" + hashlib.sha256(
        f"{db.session_secret()}\n{organiser_password or ''}".encode()).hexdigest()[:24]
    db.revoke_other_organiser_sessions(organiser_subject)
    per_token = RateLimiter(limit=participant_rate, window_s=60.0)
    answer_limit = RateLimiter(answer_rate, 60.0)  # tells how long to wait instead of refusing outright
    unknown_links = RateLimiter(limit=participant_rate, window_s=60.0)
    logins = LoginThrottle(free=login_rate)
    pages = templates(HERE / "templates")

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        await the_judge.aclose()
        db.close()

    app = guarded_app("CoMMET study", max_body_bytes=MAX_BODY_BYTES, lifespan=lifespan)

    @app.middleware("http")
    async def security_headers(request: Request, call_next: RequestResponseEndpoint) -> Response:
        response = await call_next(request)
        response.headers.update(SECURITY_HEADERS)
        response.headers["Cache-Control"] = "no-store"
        return response

    def render(request: Request, name: str, session: dict[str, str] | None = None, status: int = 200,
               **context: object) -> HTMLResponse:
        response = pages.TemplateResponse(request, name, {"study": study, **context}, status_code=status)
        if session is not None:
            sessions.save(response, session)
        return response

    @app.exception_handler(StarletteHTTPException)
    async def error_page(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 429:  # only a script meets this one; still, say what to do and link back
            token = request.path_params.get("token")
            response = render(request, "message.html", status=429, heading="Please slow down",
                              message="This link received more requests in the last minute than a person makes. "
                                      "Please wait a minute, then continue; your answers are saved.",
                              back=f"/p/{token}" if isinstance(token, str) and set(token) <= TOKEN_CHARS else None)
            response.headers["Retry-After"] = "60"
            return response
        return render(request, "message.html", status=exc.status_code, heading="Sorry",
                      message=str(exc.detail) if exc.status_code != 404 else "This page does not exist.")

    @app.exception_handler(RequestValidationError)
    async def malformed(request: Request, exc: RequestValidationError) -> Response:
        return await error_page(request, malformed_request(exc))

    # participants ---------------------------------------------------------------------------------
    def participant(token: str) -> sqlite3.Row:
        row = db.participant(token) if 0 < len(token) <= 64 and set(token) <= TOKEN_CHARS else None
        if row is None:
            unknown_links.check("unknown")
            raise HTTPException(status_code=404)
        per_token.check(token)
        return row

    def posted(request: Request, token: str, csrf: str) -> sqlite3.Row:
        """The participant a form is posted for, once the form's CSRF token is checked."""
        row = participant(token)
        check_csrf(sessions.load(request), csrf)
        return row

    def expired_form(request: Request, token: str, csrf: str, response: str) -> tuple[sqlite3.Row, Response | None]:
        """The participant an answer or break form is posted for, and, when its CSRF token is no longer valid (the
        page stayed open past the session's lifetime, cookies were cleared), the page to answer instead: the
        current question again with the typed text kept, nothing stored, and a fresh token."""
        row = participant(token)
        if csrf_valid(sessions.load(request), csrf):
            return row, None
        now = in_progress(row)
        if now is None:
            return row, RedirectResponse(f"/p/{token}", status_code=303)
        return row, question_page(request, row, now, status=403, draft=typed(response)[:MAX_ANSWER_CHARS],
                                  error="This page was open for a long time (or your browser blocks cookies), so "
                                        "your answer was not sent. It is kept below: please press Answer again.")

    def where(row: sqlite3.Row) -> Position | None:
        return position(study.questionnaire(row["questionnaire"]), storyturns, db.answers(row["token"]))

    def in_progress(row: sqlite3.Row) -> Position | None:
        """Where a participant who has consented and not yet finished stands; None before and after."""
        return where(row) if row["consent_at"] is not None and row["finished_at"] is None else None

    def question_page(request: Request, row: sqlite3.Row, now: Position, error: str = "",
                      draft: str | None = None, stale: str | None = None, status: int = 200) -> HTMLResponse:
        session = sessions.load(request)
        questionnaire = study.questionnaire(row["questionnaire"])
        answered = len(db.answers(row["token"]))
        if draft is None:
            draft = db.draft(row["token"], now.storyturn.id, now.current.index)
        return render(request, "question.html", session, status=status, token=row["token"], csrf=csrf_token(session),
                      at=now, stories=len(questionnaire.storyturns), answered=answered,
                      questions=question_count(questionnaire, storyturns), error=error, draft=draft, stale=stale,
                      styles=[feedback_style(t.feedback_kind) for t in now.turns])

    def consent_page(request: Request, row: sqlite3.Row, error: str = "", status: int = 200) -> HTMLResponse:
        session = sessions.load(request)
        questionnaire = study.questionnaire(row["questionnaire"])
        questions = question_count(questionnaire, storyturns)
        minutes = study.participant.minutes or estimated_minutes(len(questionnaire.storyturns), questions)
        pictured = sum(bool(storyturns[i].images) and shows_image(storyturns[i], questionnaire.image_policy)
                       for i in questionnaire.storyturns)
        return render(request, "consent.html", session, status=status, token=row["token"], csrf=csrf_token(session),
                      stories=len(questionnaire.storyturns), questions=questions, minutes=minutes,
                      pictured=pictured, error=error)

    def submitted_before(row: sqlite3.Row, story: int, turn: int, text: str) -> bool:
        """Whether this exact answer to this question is already stored (a double click, a resent form)."""
        order = study.questionnaire(row["questionnaire"]).storyturns
        if not 1 <= story <= len(order):
            return False
        return any(a["story_id"] == order[story - 1] and a["turn"] == turn and a["response"] == text
                   for a in db.answers(row["token"]))

    @app.get("/", response_class=HTMLResponse)
    async def home(request: Request) -> HTMLResponse:
        return render(request, "message.html", heading=study.title,
                      message="To take part, open the personal link you were given.")

    @app.get("/static/{name}")
    async def static(name: str) -> FileResponse:
        return FileResponse(safe_child(STATIC_DIR, name))

    @app.get("/p/{token}", response_class=HTMLResponse)
    async def participant_page(request: Request, token: str) -> HTMLResponse:
        row = participant(token)
        if row["finished_at"] is not None:
            return render(request, "done.html", completed=where(row) is None)
        if row["consent_at"] is None:
            return consent_page(request, row)
        now = where(row)
        if now is None:
            db.finish(token)
            return render(request, "done.html", completed=True)
        return question_page(request, row, now)

    @app.post("/p/{token}/consent", response_model=None)
    async def consent(request: Request, token: str, csrf: Annotated[str, Form()] = "",
                      adult: Annotated[str, Form()] = "") -> Response:
        row = participant(token)
        if not csrf_valid(sessions.load(request), csrf):
            if row["consent_at"] is not None:
                return RedirectResponse(f"/p/{token}", status_code=303)
            return consent_page(request, row, status=403, error="This page was open for a long time (or your browser "
                                "blocks cookies); please confirm and press the button again.")
        if study.participant.adult_confirmation and adult != "yes" and row["consent_at"] is None:
            return consent_page(request, row, status=400, error="Please confirm the statement above to take part.")
        db.consent(token)
        return RedirectResponse(f"/p/{token}", status_code=303)

    async def judged(request: JudgeRequest) -> Verdict:
        """The judge's verdict; a failing judge leaves the answer undecided rather than losing it."""
        try:
            return await the_judge.judge(request)
        except Exception as exc:  # noqa: BLE001 - any judge failure must not block a participant
            return Verdict("undecided", None, f"judge failed: {type(exc).__name__}", the_judge.name)

    @app.post("/p/{token}/answer", response_model=None)
    async def answer(request: Request, token: str, response: Annotated[str, Form()] = "",
                     story: Annotated[int, Form()] = 0, turn: Annotated[int, Form()] = -1,
                     csrf: Annotated[str, Form()] = "") -> Response:
        row, refused = expired_form(request, token, csrf, response)
        if refused is not None:
            return refused
        now = in_progress(row)
        text = typed(response)
        if now is None or (now.number, now.current.index) != (story, turn):
            if now is None or submitted_before(row, story, turn, text):
                return RedirectResponse(f"/p/{token}", status_code=303)
            # an outdated page (a second tab, the back button): say so, show what was not saved
            return question_page(request, row, now, stale=text[:MAX_ANSWER_CHARS], status=409)
        if not text:
            return question_page(request, row, now, error="Please type an answer.")
        if len(text) > MAX_ANSWER_CHARS:
            return question_page(request, row, now, error=f"Please keep your answer under {MAX_ANSWER_CHARS} "
                                 "characters.", draft=text[:MAX_ANSWER_CHARS])
        wait = answer_limit.wait_s(token)
        if wait > 0:
            seconds = math.ceil(wait)
            page = question_page(request, row, now, status=429, draft=text,
                                 error=f"You are answering faster than this study allows. Please wait {seconds} "
                                       "seconds, then press Answer again: your answer is kept below.")
            page.headers["Retry-After"] = str(seconds)
            return page
        verdict = await judged(now.judge_request(text))
        score = apply_branch_rules(now.current.turn, verdict, now.active_branch)
        saved = db.add_answer(token, now.storyturn.id, now.current.index, response=text, verdict=verdict.outcome,
                              correct=None if score.correct is None else int(score.correct), branch=score.branch,
                              active_branch=score.active_branch, feedback_kind=now.current.feedback_kind,
                              judge=verdict.judge or the_judge.name, rationale=score.reason)
        if not saved and not submitted_before(row, story, turn, text):
            # another tab's answer to this question was stored while this one was being judged: not saved, say so
            later = in_progress(row)
            if later is not None:
                return question_page(request, row, later, stale=text, status=409)
        if where(row) is None:
            db.finish(token)
        return RedirectResponse(f"/p/{token}", status_code=303)

    @app.get("/p/{token}/image/{story}/{turn}")
    async def image(token: str, story: int, turn: int) -> Response:
        row = participant(token)
        now = in_progress(row)
        if now is None or story != now.number or not 0 <= turn < len(now.turns):
            raise HTTPException(status_code=404)
        image_id = now.turns[turn].image
        if image_id is None or not dataset.has_image(image_id):
            raise HTTPException(status_code=404)
        data = dataset.image_bytes(image_id)
        return Response(data, media_type=_image_type(data))

    @app.get("/p/{token}/pause", response_class=HTMLResponse)
    async def pause(request: Request, token: str) -> HTMLResponse:
        participant(token)
        return render(request, "pause.html", token=token)

    @app.post("/p/{token}/pause", response_model=None)
    async def take_break(request: Request, token: str, response: Annotated[str, Form()] = "",
                         story: Annotated[int, Form()] = 0, turn: Annotated[int, Form()] = -1,
                         csrf: Annotated[str, Form()] = "") -> Response:
        """Keep the text typed so far for the current question, then show the break page."""
        row, refused = expired_form(request, token, csrf, response)
        if refused is not None:
            return refused
        now = in_progress(row)
        if now is not None and (now.number, now.current.index) == (story, turn):
            db.save_draft(token, now.storyturn.id, now.current.index, typed(response)[:MAX_ANSWER_CHARS])
        return RedirectResponse(f"/p/{token}/pause", status_code=303)

    @app.get("/p/{token}/stop", response_class=HTMLResponse)
    async def stop_page(request: Request, token: str) -> HTMLResponse:
        row = participant(token)
        if row["finished_at"] is not None:
            return render(request, "done.html", completed=where(row) is None)
        session = sessions.load(request)
        return render(request, "stop.html", session, token=token, csrf=csrf_token(session))

    @app.post("/p/{token}/stop")
    async def stop(request: Request, token: str, csrf: Annotated[str, Form()] = "") -> RedirectResponse:
        posted(request, token, csrf)
        db.finish(token)
        return RedirectResponse(f"/p/{token}", status_code=303)

    # organiser ------------------------------------------------------------------------------------
    def organiser_enabled() -> None:
        if password_hash is None:
            raise HTTPException(status_code=403, detail="The organiser page is off: start the server with "
                                "--organiser-password-file.")

    def organiser_session(request: Request) -> dict[str, str] | None:
        organiser_enabled()
        session = sessions.load(request)
        return session if session.get("subject") == organiser_subject else None

    def dashboard(request: Request, session: dict[str, str], new_links: list[str] | None = None) -> HTMLResponse:
        counts = db.answer_counts()
        undecided = db.undecided_counts()
        base = str(request.base_url).rstrip("/")
        people = []
        for row in db.participants():
            questionnaire = study.questionnaire(row["questionnaire"])
            total = question_count(questionnaire, storyturns)
            answered = counts.get(row["token"], 0)
            open_ = undecided.get(row["token"], 0)
            people.append({"label": participant_label(row), "questionnaire": row["questionnaire"],
                           "status": participant_status(row, answered, total), "answered": answered, "total": total,
                           "undecided": open_, "flag": answered > 0 and open_ / answered >= UNDECIDED_WARNING,
                           "link": f"{base}/p/{row['token']}"})
        summary = []
        for questionnaire in study.questionnaires:
            mine = [p for p in people if p["questionnaire"] == questionnaire.index]
            summary.append({"index": questionnaire.index, "policy": questionnaire.image_policy,
                            "storyturns": len(questionnaire.storyturns),
                            "questions": question_count(questionnaire, storyturns), "links": len(mine),
                            **{status.replace(" ", "_"): sum(p["status"] == status for p in mine)
                               for status in ("invited", "in progress", "completed", "stopped")},
                            "answers": sum(int(p["answered"]) for p in mine),
                            "undecided": sum(int(p["undecided"]) for p in mine)})
        answers = sum(int(p["answered"]) for p in people)
        open_total = sum(int(p["undecided"]) for p in people)
        return render(request, "organiser.html", session, csrf=csrf_token(session), summary=summary, people=people,
                      new_links=[f"{base}/p/{token}" for token in new_links or []], answers=answers,
                      undecided=open_total, flagged=sum(bool(p["flag"]) for p in people),
                      warning_share=int(UNDECIDED_WARNING * 100))

    @app.get("/organiser", response_class=HTMLResponse)
    async def organiser(request: Request) -> HTMLResponse:
        session = organiser_session(request)
        if session is None:
            session = sessions.load(request)
            return render(request, "login.html", session, csrf=csrf_token(session))
        created = session.pop("new_links", "")  # shown once, after the redirect that follows creating them
        return dashboard(request, session, created.split() or None)

    @app.post("/organiser/login", response_model=None)
    async def login(request: Request, password: Annotated[str, Form()] = "",
                    csrf: Annotated[str, Form()] = "") -> Response:
        organiser_enabled()
        session = sessions.load(request)
        check_csrf(session, csrf)
        client = client_address(request)
        wait = logins.wait_s("organiser", client)
        if wait > 0:
            return render(request, "login.html", session, status=429, csrf=csrf_token(session),
                          error=f"Too many wrong passwords; try again in {int(wait) + 1} seconds.")
        assert password_hash is not None
        if not verify_password(password, password_hash):
            logins.failed("organiser", client)
            return render(request, "login.html", session, status=401, csrf=csrf_token(session),
                          error="Wrong password.")
        logins.succeeded("organiser", client)
        sessions.drop(session)
        response = RedirectResponse("/organiser", status_code=303)
        sessions.save(response, {"subject": organiser_subject, "csrf": secrets.token_urlsafe(24)})
        return response

    @app.post("/organiser/logout")
    async def logout(request: Request, csrf: Annotated[str, Form()] = "") -> RedirectResponse:
        organiser_enabled()
        session = sessions.load(request)
        check_csrf(session, csrf)
        response = RedirectResponse("/organiser", status_code=303)
        sessions.clear(response, session)
        return response

    @app.post("/organiser/links", response_model=None)
    async def new_links(request: Request, count: Annotated[int, Form()] = 1,
                        questionnaire: Annotated[str, Form()] = "", csrf: Annotated[str, Form()] = "") -> Response:
        session = organiser_session(request)
        if session is None:
            return RedirectResponse("/organiser", status_code=303)
        check_csrf(session, csrf)
        if not 1 <= count <= MAX_LINKS_PER_REQUEST:
            raise HTTPException(status_code=400, detail=f"Create between 1 and {MAX_LINKS_PER_REQUEST} links at once.")
        if questionnaire == "":
            chosen = db.balanced_questionnaires(count, len(study.questionnaires))
        elif questionnaire.isdigit() and int(questionnaire) < len(study.questionnaires):
            chosen = [int(questionnaire)] * count
        else:
            raise HTTPException(status_code=400, detail="No such questionnaire.")
        # post/redirect/get: reloading the page that lists the new links must not create another batch
        session["new_links"] = " ".join(db.create_participants(chosen))
        response = RedirectResponse("/organiser#new-links", status_code=303)
        sessions.save(response, session)
        return response

    def export(request: Request, kind: str) -> Response:
        if organiser_session(request) is None:
            raise HTTPException(status_code=403, detail="Log in on the organiser page first.")
        records = response_records(study, storyturns, db)
        body, media = (to_csv(records), "text/csv") if kind == "csv" else (to_jsonl(records), "application/x-ndjson")
        return Response(body, media_type=f"{media}; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="responses.{kind}"'})

    @app.get("/organiser/export.csv")
    async def export_csv(request: Request) -> Response:
        return export(request, "csv")

    @app.get("/organiser/export.jsonl")
    async def export_jsonl(request: Request) -> Response:
        return export(request, "jsonl")

    return app
