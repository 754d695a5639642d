"""The study app's rules, one service per side: plain classes over the study and its database, no web types.

:class:`Participation` is a participant's way through their questionnaire (where they stand,
what a page shows them, how an answer is judged, scored and stored); :class:`Organiser` is the
organiser's side (the password, the dashboard's figures, new links, the exports). Routers
(:mod:`commet.apps.study.routes`) turn what they answer into pages and redirects.
"""

from __future__ import annotations

import functools
import hashlib
import sqlite3
from typing import Any

from commet.apps.signin import LoginThrottle, hash_password, throttled_check, verify_password
from commet.apps.study.build import Study, estimated_minutes, shows_image
from commet.apps.study.db import StudyDB
from commet.apps.study.export import participant_label, participant_status, response_records, to_csv, to_jsonl
from commet.apps.study.flow import Position, position, question_count
from commet.apps.study.panel import Ending, entry_link, kind_of
from commet.apps.web import form_text
from commet.engine.conversation import apply_branch_rules
from commet.format.model import StoryTurn
from commet.judges.base import Judge, JudgeRequest, Verdict

MAX_ANSWER_CHARS = 4000
MAX_LINKS_PER_REQUEST = 500
#: Share of undecided answers above which the organiser page flags a participant.
UNDECIDED_WARNING = 0.2
#: the participant statuses the dashboard counts per questionnaire
PARTICIPANT_STATUSES = ("invited", "in progress", "completed", "stopped", "screened out")


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
    textarea (and its ``maxlength``) counts as one character, so line breaks are LF again before anything counts;
    control characters are removed as in every form field of both apps (:func:`commet.apps.web.form_text`)."""
    return form_text(response)


class Participation:
    """A participant's questionnaire: where they stand, what their pages show, and their answers judged and kept."""

    def __init__(self, study: Study, storyturns: dict[str, StoryTurn], db: StudyDB, judge: Judge):
        self.study = study
        self.storyturns = storyturns
        self.db = db
        self.judge = judge

    def where(self, row: sqlite3.Row) -> Position | None:
        return position(self.study.questionnaire(row["questionnaire"]), self.storyturns, self.db.answers(row["token"]),
                        self.study.undecided_feedback)

    def in_progress(self, row: sqlite3.Row) -> Position | None:
        """Where a participant who has consented and not yet finished stands; None before and after."""
        return self.where(row) if row["consent_at"] is not None and row["finished_at"] is None else None

    def submitted_before(self, row: sqlite3.Row, story: int, turn: int, text: str) -> bool:
        """Whether this exact answer to this question is already stored (a double click, a resent form)."""
        order = self.study.questionnaire(row["questionnaire"]).storyturns
        if not 1 <= story <= len(order):
            return False
        return any(a["story_id"] == order[story - 1] and a["turn"] == turn and a["response"] == text
                   for a in self.db.answers(row["token"]))

    def question_view(self, row: sqlite3.Row, now: Position, draft: str | None) -> dict[str, Any]:
        """The question page's values (the text kept from a break when ``draft`` is None)."""
        questionnaire = self.study.questionnaire(row["questionnaire"])
        answered = len(self.db.answers(row["token"]))
        if draft is None:
            draft = self.db.draft(row["token"], now.storyturn.id, now.current.index)
        return {"token": row["token"], "at": now, "stories": len(questionnaire.storyturns), "answered": answered,
                "draft": draft,
                "styles": [feedback_style(t.feedback_kind) for t in now.turns]}

    def consent_view(self, row: sqlite3.Row) -> dict[str, Any]:
        """The consent page's values: how many stories, questions and pictures, and how long it takes."""
        questionnaire = self.study.questionnaire(row["questionnaire"])
        questions = question_count(questionnaire, self.storyturns)
        minutes = self.study.participant.minutes or estimated_minutes(len(questionnaire.storyturns), questions)
        pictured = sum(bool(self.storyturns[i].images) and shows_image(self.storyturns[i], questionnaire.image_policy)
                       for i in questionnaire.storyturns)
        return {"token": row["token"], "stories": len(questionnaire.storyturns), "questions": questions,
                "minutes": minutes, "pictured": pictured}

    async def judged(self, request: JudgeRequest) -> Verdict:
        """The judge's verdict; a failing judge leaves the answer undecided rather than losing it."""
        try:
            return await self.judge.judge(request)
        except Exception as exc:  # noqa: BLE001 - any judge failure must not block a participant
            return Verdict("undecided", None, f"judge failed: {type(exc).__name__}", self.judge.name)

    async def answer(self, row: sqlite3.Row, now: Position, text: str, story: int, turn: int) -> Position | None:
        """Judge ``text``, score it with the engine's branch rules and store it; the participant is finished after
        their last question. Returns where they stand when another tab's answer to this question was stored
        while this one was judged (this one is not saved), else None."""
        verdict = await self.judged(now.judge_request(text))
        score = apply_branch_rules(now.current.turn, verdict, now.active_branch)
        saved = self.db.add_answer(row["token"], now.storyturn.id, now.current.index, response=text,
                                   verdict=verdict.outcome, correct=None if score.correct is None else int(score.correct),
                                   branch=score.branch, active_branch=score.active_branch,
                                   feedback_kind=now.current.feedback_kind, judge=verdict.judge or self.judge.name,
                                   rationale=score.reason)
        if not saved and not self.submitted_before(row, story, turn, text):
            later = self.in_progress(row)
            if later is not None:
                return later
        if self.where(row) is None:
            self.db.finish(row["token"], Ending.completed.value)
        return None

    def ending(self, row: sqlite3.Row) -> Ending:
        """How a finished participant's study ended (databases before endings were kept: told by their answers)."""
        if row["ending"] is not None:
            return Ending(row["ending"])
        return Ending.completed if self.where(row) is None else Ending.withdrew

    def end_view(self, row: sqlite3.Row) -> dict[str, Any]:
        """The last page's values: how the study ended, and the panel's code and return link for it."""
        ending = self.ending(row)
        return {"ending": ending.value, "end": self.study.panel.end(ending), "panel": self.study.panel.name,
                "declined": row["consent_at"] is None}

    def keep_draft(self, row: sqlite3.Row, story: int, turn: int, response: str) -> None:
        """Keep the text typed so far for the current question (a break), when the form is for that question."""
        now = self.in_progress(row)
        if now is not None and (now.number, now.current.index) == (story, turn):
            self.db.save_draft(row["token"], now.storyturn.id, now.current.index, typed(response)[:MAX_ANSWER_CHARS])


def organiser_subject(secret: str, password: str | None) -> str:
    """The ``subject`` of organiser sessions opened with ``password``, kept in the store's ``web_sessions`` table: the
    same for the same password (a restart keeps the sessions), another for another (they are revoked). Derived with
    scrypt, as passwords are hashed, salted with the store's own secret: the store's file, which holds that secret,
    gives a guesser no faster check of the password than the password hash would."""
    if not password:
        return "organiser:off"  # no organiser page: every organiser session is revoked
    digest = hashlib.scrypt(password.encode(), salt=secret.encode(), n=2**14, r=8, p=1, dklen=12)
    return f"organiser:{digest.hex()}"


class Organiser:
    """The organiser's side: the password (off without one), the dashboard, new links and the exports.

    Organiser sessions name the password they were opened with, so a new password revokes the old ones.
    """

    def __init__(self, study: Study, storyturns: dict[str, StoryTurn], db: StudyDB, password: str | None,
                 throttle: LoginThrottle):
        self.study = study
        self.storyturns = storyturns
        self.db = db
        self.throttle = throttle
        self.password_hash = hash_password(password) if password else None
        self.subject = organiser_subject(db.session_secret(), password)
        db.revoke_other_organiser_sessions(self.subject)

    @property
    def enabled(self) -> bool:
        return self.password_hash is not None

    def wait_s(self, client: str | None) -> float:
        """How long the organiser must wait before trying a password again from ``client``."""
        return self.throttle.wait_s("organiser", client)

    async def sign_in(self, password: str, client: str | None) -> tuple[bool, float]:
        """(whether ``password`` is the organiser's, 0), or (False, seconds to wait) when the throttle refuses; the
        check runs off the event loop, counted before it starts (:func:`~commet.apps.signin.throttled_check`)."""
        assert self.password_hash is not None
        right, wait = await throttled_check(self.throttle, "organiser", client,
                                            functools.partial(verify_password, password, self.password_hash))
        return bool(right), wait

    def dashboard(self, base: str, new_links: list[str] | None) -> dict[str, Any]:
        """The organiser page's values: each participant, each questionnaire, the totals, links just made."""
        counts = self.db.answer_counts()
        undecided = self.db.undecided_counts()
        people = []
        for row in self.db.participants():
            questionnaire = self.study.questionnaire(row["questionnaire"])
            total = question_count(questionnaire, self.storyturns)
            answered = counts.get(row["token"], 0)
            open_ = undecided.get(row["token"], 0)
            people.append({"label": participant_label(row), "questionnaire": row["questionnaire"],
                           "panel_id": f"{row['panel']}: {row['panel_pid']}" if row["panel_pid"] else "",
                           "status": participant_status(row, answered, total), "answered": answered, "total": total,
                           "undecided": open_, "flag": answered > 0 and open_ / answered >= UNDECIDED_WARNING,
                           "link": f"{base}/p/{row['token']}"})
        summary = []
        for questionnaire in self.study.questionnaires:
            mine = [p for p in people if p["questionnaire"] == questionnaire.index]
            summary.append({"index": questionnaire.index, "policy": questionnaire.image_policy,
                            "storyturns": len(questionnaire.storyturns),
                            "questions": question_count(questionnaire, self.storyturns), "links": len(mine),
                            **{status.replace(" ", "_"): sum(p["status"] == status for p in mine)
                               for status in PARTICIPANT_STATUSES},
                            "answers": sum(int(p["answered"]) for p in mine),
                            "undecided": sum(int(p["undecided"]) for p in mine)})
        answers = sum(int(p["answered"]) for p in people)
        open_total = sum(int(p["undecided"]) for p in people)
        return {"summary": summary, "people": people, "new_links": [f"{base}/p/{token}" for token in new_links or []],
                "answers": answers, "undecided": open_total, "flagged": sum(bool(p["flag"]) for p in people),
                "warning_share": int(UNDECIDED_WARNING * 100), "placeholders": self.study.placeholders(),
                "panel_link": entry_link(base, self.db.entry_key(), kind_of(self.study.panel.name))
                if self.study.panel.enabled else ""}

    def questionnaires_for(self, count: int, questionnaire: str) -> list[int] | None:
        """The questionnaire of each of ``count`` new links: ``questionnaire`` (its index), or balanced when it is
        empty; None for no such questionnaire."""
        if questionnaire == "":
            return self.db.balanced_questionnaires(count, len(self.study.questionnaires))
        if questionnaire.isdigit() and int(questionnaire) < len(self.study.questionnaires):
            return [int(questionnaire)] * count
        return None

    def export(self, kind: str) -> tuple[str, str]:
        """Every answer as CSV (``kind`` "csv") or JSON lines: the body and its media type."""
        records = response_records(self.study, self.storyturns, self.db)
        return (to_csv(records), "text/csv") if kind == "csv" else (to_jsonl(records), "application/x-ndjson")
