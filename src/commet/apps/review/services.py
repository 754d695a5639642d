"""The review app's rules, one service per concern: plain classes over the review store, no web types.

A router parses the request, calls a service (or, where that is all it does, one method of the
store) and turns the answer into a page or a redirect (:mod:`commet.apps.review.pages`). What
a service decides is said in words the router shows as they are; what it refuses is a
:class:`~commet.apps.review.db.ReviewError` (a :class:`~commet.apps.review.db.StaleRevision` when
the item moved on), or an outcome the router tells apart (:class:`EditConflict`).
"""

from __future__ import annotations

import functools
import io
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from commet.apps.review.db import (
    CRITERIA,
    ERROR_CATEGORIES,
    IMAGE_ERRORS,
    STATUS_KINDS,
    TEXT_ERRORS,
    CheckInput,
    OverviewRow,
    Picture,
    ReviewDB,
    ReviewError,
    StaleRevision,
    UnknownRevision,
    check_password,
    open_for_me,
)
from commet.apps.review.display import feedback_lines
from commet.apps.review.merge import FieldKey, FieldMerge, merge_fields, merged_with, turn_values, values_at
from commet.apps.signin import LoginThrottle, password_check, throttled_check
from commet.apps.web import MAX_UPLOAD_PIXELS, decode_picture
from commet.format.dataset import Dataset
from commet.format.model import StoryTurn
from commet.format.pipe import format_feedback, parse_feedback
from commet.format.validate import validate_storyturn
from commet.generation.llm.images import ImageModel
from commet.generation.llm.lint import lint_storyturn
from commet.generation.llm.prompts import image_prompt
from commet.models.base import ModelCallError
from commet.taxonomy import TASKS, TASKS_BY_ID

PAGE_SIZE = 50
#: The item list's filters: (value, label).
FILTERS = (("", "All items"), ("mine", "Open for me"), *((kind, kind) for kind in STATUS_KINDS))
#: how often an edit is merged and saved again when another reviewer saves in between
EDIT_ATTEMPTS = 3


# ---------------------------------------------------------------------------------------- users

@dataclass(frozen=True)
class SignIn:
    """A sign-in's answer: the reviewer's id (None: refused), or how long to wait before trying again."""

    user_id: int | None
    wait_s: float = 0.0


class Accounts:
    """Signing in (throttled per name and client) and changing one's password."""

    def __init__(self, store: ReviewDB, throttle: LoginThrottle):
        self.store = store
        self.throttle = throttle

    async def sign_in(self, name: str, password: str, client: str | None, device: str | None = None) -> SignIn:
        """Check the password unless the throttle refuses first; the check (scrypt) runs off the event loop, counted
        by the throttle before it starts (:func:`~commet.apps.signin.throttled_check`). ``device``: the id of the
        browser's valid device cookie entry for this name (it signed in as this name before), which the throttle
        exempts from the address's block and counts failures for (:class:`~commet.apps.signin.LoginThrottle`)."""
        uid, wait = await throttled_check(self.throttle, name, client,
                                          functools.partial(self.store.authenticate, name, password), device)
        return SignIn(uid, wait)

    async def change_password(self, user_id: int, name: str, current: str, new: str, again: str,
                              client: str | None) -> str | None:
        """Why the password was not changed, or None once it is (every session of the reviewer is revoked).

        The current password is checked as a sign-in is, under the same throttle (a stolen session is no way to
        guess it faster), and off the event loop, as is hashing the new one."""
        right, wait = await throttled_check(self.throttle, name, client,
                                            functools.partial(self.store.verify, user_id, current))
        if wait > 0:
            return f"Too many wrong passwords from here or for this name; try again in {int(wait) + 1} s."
        if not right:
            return "The current password is wrong; nothing changed."
        try:
            check_password(new)  # the length first: typing it again would not help
        except ReviewError as exc:
            return f"{exc}; nothing changed."
        if new != again:
            return "The two new passwords differ; nothing changed."
        try:
            await password_check(self.store.set_password, name, new)  # revokes every session of this reviewer
        except ReviewError as exc:
            return f"{exc}; nothing changed."
        return None


# ---------------------------------------------------------------------------------------- items

@dataclass(frozen=True)
class ItemListPage:
    """One page of the items list, as filtered."""

    rows: list[OverviewRow]
    lint: dict[str, int]  # item id -> lint findings of its current revision
    page: int
    pages_total: int
    matching: int


class ItemList:
    """The items list (searched, filtered, paged) and the disagreements, as one reviewer may see them."""

    def __init__(self, store: ReviewDB):
        self.store = store
        self._lint_counts: dict[tuple[str, int], int] = {}

    def page(self, user_id: int, viewer: str, query: str, status: str, page: int) -> ItemListPage:
        rows = self.store.overview(user_id)
        needle = query.strip().casefold()[:100]
        if needle:
            rows = [r for r in rows if needle in r.id.casefold() or needle in (r.task or "").casefold()]
        if status == "mine":
            rows = [r for r in rows if open_for_me(r)]
        elif status in STATUS_KINDS:
            rows = [r for r in rows if r.status.kind == status and not r.status.blind_for(viewer)]
        pages_total = max(1, -(-len(rows) // PAGE_SIZE))
        page = min(max(page, 1), pages_total)
        shown = rows[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]
        lint = {}
        for row in shown:  # the lint of a revision never changes: computed once per (item, revision)
            key = (row.id, row.revision)
            if key not in self._lint_counts:
                self._lint_counts[key] = len(lint_storyturn(self.store.item(row.id)[0]))
            lint[row.id] = self._lint_counts[key]
        return ItemListPage(shown, lint, page, pages_total, len(rows))

    def disagreements(self, viewer: str) -> list[dict[str, object]]:
        """The items whose reviewers disagree, but those ``viewer`` reviews blind."""
        return [r for r in self.store.disagreements() if not r["status"].blind_for(viewer)]  # type: ignore[attr-defined]


@dataclass(frozen=True)
class PageContext:
    """What a page shows (its template's values) and the forms it has (where a message may go)."""

    values: dict[str, Any]
    placed: frozenset[str] = frozenset()


class ItemView:
    """An item's page and a picture's versions, with what a reviewer reviewing blind may not see left out."""

    def __init__(self, store: ReviewDB, image_model: ImageModel | None):
        self.store = store
        self.image_model = image_model

    def _checks(self, picture_id: int, viewer: str, blind: bool) -> dict[str, dict[str, bool]]:
        checks = self.store.checks(picture_id)
        if blind:
            checks = {key: {who: ok for who, ok in by.items() if who == viewer} for key, by in checks.items()}
        return checks

    def item(self, item_id: str, st: StoryTurn, revision: int, user_id: int, viewer: str) -> PageContext:
        status = self.store.status(item_id)
        blind = status.blind_for(viewer)
        current = self.store.current_pictures(item_id)
        probe = Dataset(storyturns=[st], images={i: b"" for i in current}, source_file=item_id)
        turns = []
        for k, turn in enumerate(st.turns):
            picture = current.get(turn.image) if turn.image else None
            entry: dict[str, Any] = {"k": k, "turn": turn, "feedback": feedback_lines(turn.feedback),
                                     "feedback_text": format_feedback(turn.feedback), "picture": picture}
            if picture is not None:
                entry.update(mine=self.store.checks_by(picture.id, user_id),
                             checks=self._checks(picture.id, viewer, blind),
                             prominent=self.store.prominent_by(picture.id, user_id),
                             first_shown=next(i for i, t in enumerate(st.turns) if t.image == turn.image) == k,
                             versions=len(self.store.versions(item_id, picture.image_id)),
                             prompt=picture.prompt or image_prompt(st, k, turn.story, turn.story or turn.question))
            turns.append(entry)
        errors = self.store.errors(item_id)
        decisions = self.store.decisions(item_id)
        if blind:
            errors = [e for e in errors if e["author"] == viewer or e["revision"] != revision]
            decisions = [d for d in decisions if d["author"] == viewer or d["revision"] != revision]
        previous, following = self.store.neighbours(item_id)
        placed = frozenset({"decide", "file-error", "meta", *(f"edit-{k + 1}" for k in range(len(st.turns))),
                            *(f"{form}-{picture.id}" for picture in current.values()
                              for form in ("checks", "mark", "regenerate", "upload"))})
        return PageContext({
            "st": st, "revision": revision, "turns": turns, "status": status, "blind": blind,
            "mine": self.store.my_decision(item_id, user_id), "outdated_accept": self.store.outdated_accept(item_id, user_id),
            "lint": lint_storyturn(st),
            "problems": validate_storyturn(st, probe, decode_pictures=False), "edits": self.store.edits(item_id),
            "errors": errors, "decisions": decisions, "regen": self.store.open_regen_requests(item_id),
            "criteria": CRITERIA, "image_errors": IMAGE_ERRORS, "text_errors": TEXT_ERRORS,
            "categories": ERROR_CATEGORIES, "tasks": TASKS, "pictures": list(current.values()),
            "can_regenerate": self.image_model is not None,
            "image_model": self.image_model.spec if self.image_model is not None else None,
            "previous": previous, "following": following}, placed)

    def versions(self, item_id: str, st: StoryTurn, revision: int, picture: Picture, viewer: str) -> PageContext:
        blind = self.store.status(item_id).blind_for(viewer)
        current = self.store.current_pictures(item_id).get(picture.image_id)
        versions = [{"picture": version, "checks": self._checks(version.id, viewer, blind)}
                    for version in self.store.versions(item_id, picture.image_id)]
        shown_in = [(k, turn) for k, turn in enumerate(st.turns) if turn.image == picture.image_id]
        return PageContext({"st": st, "image_id": picture.image_id, "versions": versions, "current": current,
                            "criteria": CRITERIA, "revision": revision, "shown_in": shown_in, "blind": blind})


@dataclass(frozen=True)
class EditResult:
    """An edit's outcome in words: saved (or nothing to save), or refused (the form is given back)."""

    message: str
    refused: bool = False


@dataclass(frozen=True)
class EditConflict:
    """An edit refused because the item moved on: what changed, what was not saved, the merge to confirm."""

    stale: StaleRevision
    unsaved: list[tuple[str, str]] = field(default_factory=list)
    fields: list[FieldMerge] = field(default_factory=list)
    resolve: dict[str, int] | None = None



def _reached(item_id: str, seen: int, revision: int) -> None:
    """Refuse an edit from a page that names a revision the item never reached: merged as if nothing changed since
    it, it would overwrite newer text with no conflict (the decision and mark forms were refused so already)."""
    if seen > revision:
        raise UnknownRevision(f"item {item_id!r} has no revision {seen} (it is at revision {revision})")

class TextEdits:
    """Edits of an item's text and of its task and variant, merged with what others saved since the form was shown.

    A field both changed is a conflict the reviewer resolves; fields only others changed are kept.
    """

    def __init__(self, store: ReviewDB):
        self.store = store

    def save_turn(self, item_id: str, k: int, user_id: int, seen: int,
                  sent: dict[FieldKey, str]) -> EditResult | EditConflict:
        """Save turn ``k``'s text as ``sent`` (its story, feedback, question and answers)."""
        for _ in range(EDIT_ATTEMPTS):  # a save by someone else between reading and writing: merge again
            st, revision = self.store.item(item_id)
            _reached(item_id, seen, revision)
            current: dict[FieldKey, str] = turn_values(st.turns[k], k)
            since = self.store.edits_since(item_id, seen)
            fields = merge_fields(values_at(current, since), current, sent)
            if any(field.conflict for field in fields):
                return EditConflict(StaleRevision(item_id, seen, revision, since), fields=fields,
                                    resolve={"turn": k, "revision": revision})
            values = {field.key[1]: field.value for field in fields}
            changes = [(k, key, current[(k, key)], value) for key, value in values.items() if value != current[(k, key)]]
            if not changes:
                return EditResult(f"Nothing to save: turn {k + 1} already reads so.")
            try:
                turn = st.turns[k].model_copy(update={"story": values["story"], "question": values["question"],
                                                      "feedback": parse_feedback(values["feedback"]),
                                                      "answers": values["answers"].split("\n")})
                updated = StoryTurn.model_validate({**st.model_dump(), "turns": [
                    t.model_dump() if i != k else turn.model_dump() for i, t in enumerate(st.turns)]})
            except ValidationError as exc:  # its first line ("1 validation error for StoryTurn") says nothing
                reasons = "; ".join(f"{' '.join(str(part) for part in error['loc'][2:]) or 'the item'}: {error['msg']}"
                                    for error in exc.errors())
                return EditResult(f"Edit not saved: {reasons}.", refused=True)
            except ValueError as exc:
                return EditResult(f"Edit not saved: {str(exc).splitlines()[0]}", refused=True)
            try:
                saved = self.store.save_edit(item_id, user_id, changes, updated, seen_revision=revision)
            except StaleRevision:
                continue
            return EditResult(f"Turn {k + 1} saved (revision {saved}).{merged_with(since, fields)}"
                              f"{self.accept_note(item_id, user_id, saved)}")
        return EditResult("Not saved: the item changed again while saving, three times; your text is kept: save it "
                          "again.", refused=True)

    def save_meta(self, item_id: str, st: StoryTurn, revision: int, user_id: int, seen: int, task_id: str,
                  image_dependent: bool) -> EditResult | EditConflict:
        """Save the item's task and variant (text-complete or image-dependent); the category follows from both."""
        _reached(item_id, seen, revision)
        current: dict[FieldKey, str] = {(None, "task"): st.task, (None, "image_dependent"): str(st.image_dependent)}
        sent: dict[FieldKey, str] = {(None, "task"): task_id, (None, "image_dependent"): str(image_dependent)}
        since = self.store.edits_since(item_id, seen)
        fields = merge_fields(values_at(current, since), current, sent)
        if any(field.conflict for field in fields):
            return EditConflict(StaleRevision(item_id, seen, revision, since),
                                [(field.label, field.sent) for field in fields if field.conflict], fields=fields)
        values = {field.key[1]: field.value for field in fields}
        changes = [(None, key, current[(None, key)], value) for key, value in values.items()
                   if value != current[(None, key)]]
        if not changes:
            return EditResult("Nothing to save: the task and variant already read so.")
        chosen_dependent = values["image_dependent"] == "True"
        chosen = TASKS_BY_ID[values["task"]]
        updated = st.model_copy(update={"task": chosen.id, "image_dependent": chosen_dependent,
                                        "category": chosen.category_for(chosen_dependent)})
        try:
            saved = self.store.save_edit(item_id, user_id, changes, updated, seen_revision=revision)
        except StaleRevision as exc:
            return EditConflict(exc, [(key, new) for _, key, _, new in changes])
        return EditResult(f"Task and variant saved (revision {saved}).{merged_with(since, fields)}"
                          f"{self.accept_note(item_id, user_id, saved)}")

    def accept_note(self, item_id: str, user_id: int, saved: int) -> str:
        """What an edit did to the editor's own accept: it counted for the earlier revision only."""
        accepted = self.store.outdated_accept(item_id, user_id)
        if accepted is None:
            return ""
        return (f" Your accept was for revision {accepted} and no longer counts: accept revision {saved} when you are "
                "done editing.")


# ---------------------------------------------------------------------------------------- pictures

class Pictures:
    """Table 5 checks of the current pictures, regeneration marks, and new versions (regenerated or uploaded)."""

    def __init__(self, store: ReviewDB, image_model: ImageModel | None, *, max_upload_bytes: int,
                 max_upload_pixels: int = MAX_UPLOAD_PIXELS):
        self.store = store
        self.image_model = image_model
        self.max_upload_bytes = max_upload_bytes
        self.max_upload_pixels = max_upload_pixels

    def save_checks(self, current: list[Picture], given: dict[int, CheckInput], user_id: int, seen: int) -> str:
        """Store the checks a form gave; says which were saved, what errors they filed, and which picture still
        needs its most prominent error named."""
        saved, filed = [], []
        for picture in current:
            if picture.id in given:
                filed += [(picture, key) for key in self.store.record_checks(
                    picture.id, user_id, given[picture.id].results, given[picture.id].note,
                    prominent=given[picture.id].prominent, seen_revision=seen)]
                saved.append(picture.label)
        message = "Checks of " + ", ".join(saved) + " saved"
        if filed:
            message += "; errors filed: " + ", ".join(IMAGE_ERRORS[k] for _, k in filed)
        unnamed = [p.label for p in current if p.id in given and self.store.needs_prominent(p.id, user_id)]
        if unnamed:
            message += "; choose the most prominent error of " + ", ".join(unnamed) + " (several criteria fail)"
        return message + "."

    async def regenerate(self, item_id: str, picture: Picture, prompt: str, seen: int, user_id: int) -> int:
        """A new version of ``picture`` drawn by the image model from ``prompt``, made current; its id."""
        if self.image_model is None:
            raise ReviewError("No image model configured (start with --image-model).")
        if not prompt:
            raise ReviewError("The prompt is empty.")
        self.store.require_revision(item_id, seen)
        try:
            data = await self.image_model.generate(prompt)
        except ModelCallError as exc:
            raise ReviewError(f"Regeneration failed: {exc}") from None
        return self.store.add_version(item_id, picture.image_id, data, source="regenerated", user_id=user_id,
                                      prompt=prompt, model=self.image_model.spec)

    def decoded(self, raw: bytes) -> bytes:
        """An uploaded file as the PNG to store (:class:`~commet.apps.web.UploadTooLarge` past the pixel limit,
        :class:`~commet.apps.web.NotAPicture` for what Pillow cannot decode)."""
        if len(raw) > self.max_upload_bytes:
            raise ReviewError(f"Not stored: the picture is larger than {self.max_upload_bytes // 1024} KiB; "
                              "choose it again once smaller.")
        return decode_picture(raw, max_pixels=self.max_upload_pixels)


# ---------------------------------------------------------------------------------------- exports

class Exports:
    """The review's spreadsheets and its final items as a zipped dataset folder."""

    #: the spreadsheets, by the name in their URL
    SPREADSHEETS = ("items", "errors")

    def __init__(self, store: ReviewDB):
        self.store = store

    def counts(self) -> tuple[int, int]:
        """Final items, all items."""
        return sum(s.final for s in self.store.statuses().values()), len(self.store.item_ids())

    def spreadsheet(self, name: str, viewer: str) -> str:
        return self.store.items_csv(viewer) if name == "items" else self.store.errors_csv(viewer)

    def final_zip(self) -> bytes:
        """The final items as a validated dataset folder (what ``commet review export`` writes), zipped."""
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "reviewed"
            self.store.export(folder)
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
                for path in sorted(folder.rglob("*")):
                    if path.is_file():
                        archive.write(path, path.relative_to(folder.parent).as_posix())
        return buffer.getvalue()
