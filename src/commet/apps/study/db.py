"""The study database: participants (an unguessable token and a questionnaire) and their answers.

Nothing about the person or the request is stored: no name, e-mail, IP address, user agent or
header, only what the participant typed, how it was judged and when, and, for a participant sent
by a recruiting panel, the panel's pseudonymous ids from the link (participant, study, session),
which the panel needs to pay them and the organiser needs to match its records.
"""

from __future__ import annotations

import secrets
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

from commet.apps.study.panel import PanelIds
from commet.apps.web import SESSION_SCHEMA, check_app_store, set_up_store
from commet.errors import CommetError
from commet.store.sqlite import META_TABLE, now

SCHEMA = META_TABLE + """
CREATE TABLE IF NOT EXISTS participants (
    id INTEGER PRIMARY KEY,
    token TEXT UNIQUE NOT NULL,
    questionnaire INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    consent_at TEXT,
    finished_at TEXT,
    ending TEXT,
    panel TEXT,
    panel_pid TEXT,
    panel_study TEXT,
    panel_session TEXT
);
CREATE TABLE IF NOT EXISTS answers (
    token TEXT NOT NULL REFERENCES participants(token),
    story_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    response TEXT NOT NULL,
    verdict TEXT NOT NULL,
    correct INTEGER,
    branch INTEGER,
    active_branch INTEGER,
    feedback_kind TEXT NOT NULL,
    judge TEXT NOT NULL,
    rationale TEXT NOT NULL,
    answered_at TEXT NOT NULL,
    PRIMARY KEY (token, story_id, turn)
);
CREATE TABLE IF NOT EXISTS drafts (
    token TEXT PRIMARY KEY REFERENCES participants(token),
    story_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    text TEXT NOT NULL
);
"""

TOKEN_BYTES = 32
#: Participant columns added after the first release (in SCHEMA too); an older database gets them when opened.
LATER_COLUMNS = ("ending", "panel", "panel_pid", "panel_study", "panel_session")
#: A panel's participant id names one participant: one who comes back continues where they left.
PANEL_INDEX = ("CREATE UNIQUE INDEX IF NOT EXISTS participants_panel ON participants(panel, panel_pid) "
               "WHERE panel_pid IS NOT NULL")


@dataclass(frozen=True)
class PanelEntry:
    """A panel participant arriving: their link (``token``), or none, because another panel session holds their
    id (``other_session``), the study has all the panel participants it takes (``full``), or they are new."""

    token: str | None
    other_session: bool = False
    full: bool = False


def _entry(row: sqlite3.Row | None, ids: PanelIds) -> PanelEntry:
    if row is None:
        return PanelEntry(None)
    if row["panel_session"] is not None and row["panel_session"] != ids.session:
        return PanelEntry(None, other_session=True)
    return PanelEntry(row["token"])


class StudyDatabaseError(CommetError, ValueError):
    """A database that belongs to another study."""


class StudyDB:
    """One SQLite file per study; safe to share between the server's threads."""

    def __init__(self, path: Path, study_digest: str):
        self.path = path
        self.lock = threading.Lock()
        refused = check_app_store(Path(path), "study database", "participants")
        if refused is not None:
            raise StudyDatabaseError(refused)
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        set_up_store(Path(path), SCHEMA + SESSION_SCHEMA, lambda db: db.execute(
            "INSERT OR IGNORE INTO meta(key, value) VALUES ('study', ?)", (study_digest,)))
        self.db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA busy_timeout=10000")
        bound = self.db.execute("SELECT value FROM meta WHERE key = 'study'").fetchone()["value"]
        if bound != study_digest:
            self.db.close()
            raise StudyDatabaseError(f"{path} holds another study's participants; use a new --db")
        self._add_later_columns()

    def _add_later_columns(self) -> None:
        """Bring a database made before panels up to date, once: other processes opening it at the same moment
        wait for the write lock and then find the columns there."""
        def up_to_date() -> bool:
            have = {row["name"] for row in self.db.execute("PRAGMA table_info(participants)")}
            indexed = self.db.execute("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = "
                                      "'participants_panel'").fetchone()
            return set(LATER_COLUMNS) <= have and indexed is not None

        if up_to_date():  # (no write lock taken on every open)
            return
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                have = {row["name"] for row in self.db.execute("PRAGMA table_info(participants)")}
                for column in LATER_COLUMNS:
                    if column not in have:
                        self.db.execute(f"ALTER TABLE participants ADD COLUMN {column} TEXT")
                self.db.execute(PANEL_INDEX)
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def close(self) -> None:
        self.db.close()

    def session_secret(self) -> str:
        """The key signing session cookies, kept so that a restarted server keeps its sessions."""
        with self.lock:
            self.db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('session_secret', ?)",
                            (secrets.token_urlsafe(32),))
            secret: str = self.db.execute("SELECT value FROM meta WHERE key = 'session_secret'").fetchone()["value"]
            return secret

    def revoke_other_organiser_sessions(self, subject: str) -> None:
        """Delete organiser sessions opened with another password (the web layer's ``web_sessions`` table)."""
        with self.lock:
            self.db.execute("DELETE FROM web_sessions WHERE subject LIKE 'organiser:%' AND subject != ?", (subject,))

    # participants ---------------------------------------------------------------------------------
    def create_participants(self, questionnaires: list[int]) -> list[str]:
        """One new link token per entry, assigned to that questionnaire."""
        tokens = [secrets.token_urlsafe(TOKEN_BYTES) for _ in questionnaires]
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                self.db.executemany("INSERT INTO participants(token, questionnaire, created_at) VALUES (?, ?, ?)",
                                    [(t, q, now()) for t, q in zip(tokens, questionnaires, strict=True)])
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")
        return tokens

    def balanced_questionnaires(self, count: int, questionnaires: int) -> list[int]:
        """Questionnaires for ``count`` new links, each going to the one with the fewest links so far."""
        taken = dict.fromkeys(range(questionnaires), 0)
        for row in self.db.execute("SELECT questionnaire, COUNT(*) AS n FROM participants GROUP BY questionnaire"):
            if row["questionnaire"] in taken:
                taken[row["questionnaire"]] = row["n"]
        chosen = []
        for _ in range(count):
            q = min(taken, key=lambda k: (taken[k], k))
            taken[q] += 1
            chosen.append(q)
        return chosen

    def participant(self, token: str) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self.db.execute("SELECT * FROM participants WHERE token = ?", (token,)).fetchone()
        return row

    def participants(self) -> list[sqlite3.Row]:
        return list(self.db.execute("SELECT * FROM participants ORDER BY id"))

    def consent(self, token: str) -> None:
        with self.lock:
            self.db.execute("UPDATE participants SET consent_at = ? WHERE token = ? AND consent_at IS NULL",
                            (now(), token))

    def finish(self, token: str, ending: str) -> None:
        """Mark the participant as done, with how it ended (an ``Ending``); the first ending stays."""
        with self.lock:
            self.db.execute("UPDATE participants SET finished_at = ?, ending = ? WHERE token = ? AND finished_at IS NULL",
                            (now(), ending, token))

    def entry_key(self) -> str:
        """The unguessable part of the study's panel link (``/join/<key>``), made once and kept."""
        with self.lock:
            self.db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('entry_key', ?)",
                            (secrets.token_urlsafe(16),))
            key: str = self.db.execute("SELECT value FROM meta WHERE key = 'entry_key'").fetchone()["value"]
            return key

    def panel_entry(self, ids: PanelIds) -> PanelEntry:
        """How the panel participant ``ids`` names comes back: their link when they came before with the same
        panel session (or when neither visit names one), refused when their first visit named another session,
        new when they never came."""
        row = self.db.execute("SELECT token, panel_session FROM participants WHERE panel = ? AND panel_pid = ?",
                              (ids.panel, ids.pid)).fetchone()
        return _entry(row, ids)

    def panel_participant(self, ids: PanelIds, questionnaires: int, *, limit: int | None = None) -> PanelEntry:
        """The link of the panel participant ``ids`` names: theirs when they came before (:meth:`panel_entry`),
        else a new one on the questionnaire with the fewest links, unless ``limit`` participants with panel ids
        are there already (``full``)."""
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                row = self.db.execute("SELECT token, panel_session FROM participants WHERE panel = ? AND panel_pid = ?",
                                      (ids.panel, ids.pid)).fetchone()
                if row is not None:
                    entry = _entry(row, ids)
                elif limit is not None and self.db.execute(
                        "SELECT COUNT(*) FROM participants WHERE panel_pid IS NOT NULL").fetchone()[0] >= limit:
                    entry = PanelEntry(None, full=True)
                else:
                    token = secrets.token_urlsafe(TOKEN_BYTES)
                    self.db.execute(
                        "INSERT INTO participants(token, questionnaire, created_at, panel, panel_pid, panel_study, "
                        "panel_session) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (token, self.balanced_questionnaires(1, questionnaires)[0], now(), ids.panel, ids.pid,
                         ids.study, ids.session))
                    entry = PanelEntry(token)
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")
        return entry

    def name_panel_ids(self, token: str, ids: PanelIds) -> bool:
        """Keep the panel ids a personal link was opened with, unless the link has some already or another link
        holds this panel id; whether they were kept."""
        with self.lock:
            taken = self.db.execute("SELECT 1 FROM participants WHERE panel = ? AND panel_pid = ?",
                                    (ids.panel, ids.pid)).fetchone()
            if taken is not None:
                return False
            cursor = self.db.execute(
                "UPDATE participants SET panel = ?, panel_pid = ?, panel_study = ?, panel_session = ? "
                "WHERE token = ? AND panel_pid IS NULL", (ids.panel, ids.pid, ids.study, ids.session, token))
            return cursor.rowcount == 1

    # answers --------------------------------------------------------------------------------------
    def answers(self, token: str) -> list[sqlite3.Row]:
        return list(self.db.execute("SELECT * FROM answers WHERE token = ? ORDER BY story_id, turn", (token,)))

    def answer_counts(self) -> dict[str, int]:
        rows = self.db.execute("SELECT token, COUNT(*) AS n FROM answers GROUP BY token")
        return {row["token"]: row["n"] for row in rows}

    def undecided_counts(self) -> dict[str, int]:
        """Answers per link that the judge could not decide (they count as not correct until labelled)."""
        rows = self.db.execute("SELECT token, COUNT(*) AS n FROM answers WHERE verdict = 'undecided' GROUP BY token")
        return {row["token"]: row["n"] for row in rows}

    # drafts ---------------------------------------------------------------------------------------
    def save_draft(self, token: str, story_id: str, turn: int, text: str) -> None:
        """Keep what a participant typed but did not submit (one draft per link: the current question)."""
        with self.lock:
            if text:
                self.db.execute("INSERT OR REPLACE INTO drafts(token, story_id, turn, text) VALUES (?, ?, ?, ?)",
                                (token, story_id, turn, text))
            else:
                self.db.execute("DELETE FROM drafts WHERE token = ?", (token,))

    def draft(self, token: str, story_id: str, turn: int) -> str:
        """The kept text for this question, or '' (a draft for another question is stale and ignored)."""
        row = self.db.execute("SELECT text FROM drafts WHERE token = ? AND story_id = ? AND turn = ?",
                              (token, story_id, turn)).fetchone()
        return row["text"] if row else ""

    def add_answer(self, token: str, story_id: str, turn: int, **fields: object) -> bool:
        """Store one judged answer; False when that turn was already answered (a repeated submit)."""
        columns = ["token", "story_id", "turn", *fields, "answered_at"]
        values = [token, story_id, turn, *fields.values(), now()]
        with self.lock:
            cursor = self.db.execute(
                f"INSERT OR IGNORE INTO answers({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                values)
            self.db.execute("DELETE FROM drafts WHERE token = ?", (token,))
        return cursor.rowcount == 1
