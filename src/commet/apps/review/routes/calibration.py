"""Labelling a run's calibration sample in the review app (``commet review serve --results commet.sqlite``).

Each reviewer labels, in the sample's order, every answer of the StoryTurns ``commet calibrate``
drew: the story so far as the model saw it (its earlier turns and replies), this turn's message
and pictures, the expected answer(s) and the reply, then "right" or "wrong" (keys r and w), or
"unsure" (u: the answer comes again after the others); "undo" (z) takes the last label back and
"back" (b) shows the answer before. The reply and the buttons stay in view whatever the story's
length, with progress and the time left at the reviewer's pace. A label goes to the
results store's ``labels`` table under the reviewer's name, exactly as ``commet label`` writes it,
so ``commet calibrate`` counts both alike. Pages sit behind the app's sign-in; forms carry its
CSRF token; a label names the reply it was given to, and one given to a reply that changed since
the page was shown is refused.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response
from starlette.datastructures import FormData

from commet.apps.review.pages import Review
from commet.engine.conversation import user_text
from commet.store import Store
from commet.store.calibration import ITEM_COLUMNS, SAMPLE_COLUMNS, SampledStory, sample_answers, sampled_runs
from commet.store.errors import StoreError, check_table_shape
from commet.store.labelling import (
    give_label,
    labels_by,
    last_given,
    mark_unsure,
    remove,
    seconds_per_label,
    time_left,
    unsure_by,
)
from commet.store.labels import LABEL_COLUMNS, labelled_by

#: ``/calibration`` (the runs with a sample, your progress) and ``/calibration/label?run=NAME`` (your next
#: answer to label); included when the app is started with a results store
router = APIRouter()
#: what each button of the label page says it saved
VERDICT_WORDS = {"correct": "right", "incorrect": "wrong", "unsure": "marked unsure: it comes again after the others"}


def _fingerprint(response: str) -> str:
    return hashlib.sha256(response.encode()).hexdigest()[:16]


def _results(review: Review) -> Path:
    assert review.results is not None  # (the router is included only with a results store)
    return review.results


def _store(review: Review) -> Store:
    results = _results(review)
    if not results.is_file():
        raise HTTPException(404, f"no results store at {results}")
    store = Store(results)
    try:  # a labels or calibration table of another shape: said on the page, never a server error
        for table, columns in (("labels", LABEL_COLUMNS), ("calibration_samples", SAMPLE_COLUMNS),
                               ("calibration_items", ITEM_COLUMNS)):
            check_table_shape(store.db, table, columns)
    except StoreError as exc:
        store.close()
        raise HTTPException(409, f"{results}: {exc}") from None
    return store


def _sample_of(db: Store, run: str) -> list[tuple[SampledStory, Any]]:
    record = db.get_run(run)
    if record is None:
        raise HTTPException(404)
    return sample_answers(db, record)


def _label_url(run: str, at: tuple[str, int] | None = None) -> str:
    query = {"run": run} if at is None else {"run": run, "story": at[0], "turn": str(at[1])}
    return "/calibration/label?" + urlencode(query)


@router.get("/calibration", response_class=HTMLResponse)
def calibration_index(request: Request, review: Review) -> Response:
    session, _, name = review.pages.signed_in(request)
    rows = []
    with _store(review) as db:
        for run in sampled_runs(db):
            answers = _sample_of(db, run)
            mine = labelled_by(db, run, name)
            rows.append({"run": run, "stories": len({item.story_id for item, _ in answers}),
                         "answers": len(answers),
                         "mine": sum((item.story_id, turn.turn) in mine for item, turn in answers),
                         "link": "/calibration/label?" + urlencode({"run": run}),
                         "last": _label_url(run, (answers[-1][0].story_id, answers[-1][1].turn)) if answers else None})
    return review.pages.render(request, session, "calibration.html", user=name, rows=rows,
                               results=str(_results(review)))


@router.get("/calibration/label", response_class=HTMLResponse)
def label_page(request: Request, review: Review, run: str = "", story: str = "", turn: int = -1) -> Response:
    """One answer to label: the reviewer's next (answers marked unsure last), or the one ``story``/``turn`` names
    (going back); progress and an estimate of the time left."""
    session, _, name = review.pages.signed_in(request)
    with _store(review) as db:
        answers = _sample_of(db, run)
        mine = labels_by(db, run, name)
        unsure = unsure_by(db, run, name)
        keys = [(item.story_id, row.turn) for item, row in answers]
        todo = sorted((i for i, key in enumerate(keys) if key not in mine), key=lambda i: keys[i] in unsure)
        if (story, turn) in keys:
            index = keys.index((story, turn))
        elif todo:
            index = todo[0]
        else:
            return review.pages.back(session, "/calibration",
                                     f"Every answer of run {run}'s calibration sample has your label.")
        item, row = answers[index]
        record = db.get_run(run)
        assert record is not None
        earlier = [r for r in db.turn_rows(record.id)
                   if r.story_id == item.story_id and r.turn < row.turn and r.response is not None]
        pace = seconds_per_label(db, run, name)
        undo = last_given(db, run, name)
    pictures = [{"id": image["id"], "url": "/calibration/picture?" + urlencode({"id": image["id"]}),
                 "found": review.dataset.image_path(image["id"]) is not None} for image in row.images]
    return review.pages.render(request, session, "calibration_label.html", user=name, run=run, item=item, turn=row,
                               question=_question(review, row.story_id, row.turn, row.prompt),
                               earlier=earlier, pictures=pictures, fingerprint=_fingerprint(row.response or ""),
                               done=len(keys) - len(todo), total=len(keys), left=time_left(pace, len(todo)),
                               given=mine.get(keys[index]), unsure=keys[index] in unsure,
                               back=_label_url(run, keys[index - 1]) if index > 0 else None,
                               next=_label_url(run) if index not in todo[:1] else None, can_undo=undo in keys)


def _question(review: Review, story_id: str, k: int, prompt: str) -> str | None:
    """The turn's question for the label panel, when the dataset served holds this very turn (its message ends
    the stored prompt); else None (the prompt shows it)."""
    try:
        turn = review.dataset.get(story_id).turns[k]
    except (KeyError, IndexError):
        return None
    return turn.question if prompt.endswith(user_text("", turn)) else None


@router.post("/calibration/label")
async def label_answer(request: Request, review: Review) -> Response:
    session, _, name, form = await review.pages.posted(request)
    run, story_id, turn_text, verdict, shown = (_field(form, key) for key in
                                                ("run", "story", "turn", "verdict", "fingerprint"))
    if verdict not in VERDICT_WORDS or not turn_text.isascii() or not turn_text.isdigit():
        raise HTTPException(400, "a label is correct, incorrect or unsure, for one turn")
    with _store(review) as db:
        found = next((turn for item, turn in _sample_of(db, run)
                      if item.story_id == story_id and turn.turn == int(turn_text)), None)
        if found is None:
            raise HTTPException(404)
        if _fingerprint(found.response or "") != shown:
            return review.pages.back(session, _label_url(run),
                                     "That reply changed since the page was shown; nothing was saved. Label it again.")
        if verdict == "unsure":
            mark_unsure(db, run=run, story_id=story_id, turn=found.turn, labeller=name)
        else:
            give_label(db, run=run, story_id=story_id, turn=found.turn, response=found.response or "", label=verdict,
                 labeller=name)
    return review.pages.back(session, _label_url(run),
                             f"Saved: turn {found.turn + 1} of {story_id} is {VERDICT_WORDS[verdict]}.")


@router.post("/calibration/undo")
async def undo(request: Request, review: Review) -> Response:
    """Take back the reviewer's last label (or unsure mark) of the run and show that answer again."""
    session, _, name, form = await review.pages.posted(request)
    run = _field(form, "run")
    with _store(review) as db:
        keys = {(item.story_id, row.turn) for item, row in _sample_of(db, run)}
        last = last_given(db, run, name)
        if last is None or last not in keys:  # (a label given outside the sample, e.g. `commet label --disputed`)
            return review.pages.back(session, _label_url(run), "Nothing to undo: your last label of this run is not "
                                     "on its calibration sample." if last else "Nothing to undo: you have not "
                                     "labelled this run.")
        remove(db, run=run, story_id=last[0], turn=last[1], labeller=name)
    return review.pages.back(session, _label_url(run, last),
                             f"Undone: your label of turn {last[1] + 1} of {last[0]} is taken back; label it again.")


@router.get("/calibration/picture")
def picture(request: Request, review: Review, id: str = "") -> Response:  # noqa: A002 - the query parameter's name
    review.pages.signed_in(request)
    return review.served.by_id(id)  # only a picture the dataset references (commet.apps.files)


def _field(form: FormData, key: str) -> str:
    value = form.get(key, "")
    if not isinstance(value, str) or len(value) > 2000:
        raise HTTPException(400, f"field {key} must be short text")
    return value
