"""Labelling a run's calibration sample in the review app (``commet review serve --results commet.sqlite``).

Each reviewer labels, in the sample's order, every answer of the StoryTurns ``commet calibrate``
drew: the story so far as the model saw it (its earlier turns and replies), this turn's message
and pictures, the expected answer(s) and the reply, then "right" or "wrong". A label goes to the
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
from commet.store import Store
from commet.store.calibration import ITEM_COLUMNS, SAMPLE_COLUMNS, SampledStory, sample_answers, sampled_runs
from commet.store.errors import StoreError, check_table_shape
from commet.store.labels import LABEL_COLUMNS, labelled_by, set_label

#: ``/calibration`` (the runs with a sample, your progress) and ``/calibration/label?run=NAME`` (your next
#: answer to label); included when the app is started with a results store
router = APIRouter()


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
                         "link": "/calibration/label?" + urlencode({"run": run})})
    return review.pages.render(request, session, "calibration.html", user=name, rows=rows,
                               results=str(_results(review)))


@router.get("/calibration/label", response_class=HTMLResponse)
def label_page(request: Request, review: Review, run: str = "") -> Response:
    session, _, name = review.pages.signed_in(request)
    with _store(review) as db:
        answers = _sample_of(db, run)
        mine = labelled_by(db, run, name)
        todo = [(item, turn) for item, turn in answers if (item.story_id, turn.turn) not in mine]
        if not todo:
            return review.pages.back(session, "/calibration",
                                     f"Every answer of run {run}'s calibration sample has your label.")
        item, turn = todo[0]
        record = db.get_run(run)
        assert record is not None
        earlier = [row for row in db.turn_rows(record.id)
                   if row.story_id == item.story_id and row.turn < turn.turn and row.response is not None]
    pictures = [{"id": image["id"], "url": "/calibration/picture?" + urlencode({"id": image["id"]}),
                 "found": review.dataset.image_path(image["id"]) is not None} for image in turn.images]
    return review.pages.render(request, session, "calibration_label.html", user=name, run=run, item=item, turn=turn,
                               earlier=earlier, pictures=pictures, fingerprint=_fingerprint(turn.response or ""),
                               done=len(answers) - len(todo), total=len(answers))


@router.post("/calibration/label")
async def give_label(request: Request, review: Review) -> Response:
    session, _, name, form = await review.pages.posted(request)
    run, story_id, turn_text, verdict, shown = (_field(form, key) for key in
                                                ("run", "story", "turn", "verdict", "fingerprint"))
    if verdict not in ("correct", "incorrect") or not turn_text.isascii() or not turn_text.isdigit():
        raise HTTPException(400, "a label is correct or incorrect, for one turn")
    with _store(review) as db:
        found = next((turn for item, turn in _sample_of(db, run)
                      if item.story_id == story_id and turn.turn == int(turn_text)), None)
        if found is None:
            raise HTTPException(404)
        if _fingerprint(found.response or "") != shown:
            return review.pages.back(session, "/calibration/label?" + urlencode({"run": run}),
                                     "That reply changed since the page was shown; nothing was saved. Label it again.")
        set_label(db, run=run, story_id=story_id, turn=found.turn, response=found.response or "", label=verdict,
                  labeller=name)
    return review.pages.back(session, "/calibration/label?" + urlencode({"run": run}),
                             f"Saved: turn {found.turn + 1} of {story_id} is "
                             f"{'right' if verdict == 'correct' else 'wrong'}.")


@router.get("/calibration/picture")
def picture(request: Request, review: Review, id: str = "") -> Response:  # noqa: A002 - the query parameter's name
    review.pages.signed_in(request)
    return review.served.by_id(id)  # only a picture the dataset references (commet.apps.files)


def _field(form: FormData, key: str) -> str:
    value = form.get(key, "")
    if not isinstance(value, str) or len(value) > 2000:
        raise HTTPException(400, f"field {key} must be short text")
    return value
