"""Responses out of the study: CSV/JSONL for the organiser, and a ``human`` run for the results store.

The run is written with the engine's own store calls (``create_run``, ``record_turn``,
``record_story``), one story row per participant and completed StoryTurn, so that
``commet report`` scores people exactly like models. Story ids carry the participant's
number (``ST-ID#P0003``); task, category and image_dependent come from the StoryTurn, so
every per-category and per-subset table works. Prompts are the texts the person saw, and
verdicts are the ones judged online, which chose the feedback they got. Participants appear
only as numbers: link tokens never leave the study database.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

from commet.apps.study.build import PICTURE_POLICY, Study
from commet.apps.study.db import StudyDB
from commet.apps.study.flow import by_story, question_count, shown_turns
from commet.apps.study.panel import Ending
from commet.apps.web import csv_safe
from commet.conditions import FeedbackCondition
from commet.errors import CommetError
from commet.format.dataset import Dataset
from commet.format.model import StoryTurn
from commet.store.records import ShownTurn, StoryRecord, StoryStatus, TurnRecord
from commet.store.sqlite import RunRecord, RunStatus, Store

#: Which questionnaires a human run pools: one picture policy (``all``, ``needed``: see
#: :data:`~commet.apps.study.build.PICTURE_POLICY`) or ``both`` together. A filter over questionnaires,
#: not a condition of its own, so not an :class:`~commet.conditions.ImagePolicy`.
PolicyFilter = Literal["both", "all", "needed"]
#: What the ``Images`` column of ``commet report`` shows for each policy filter.
IMAGES_SETTING = {**{name: policy.value for name, policy in PICTURE_POLICY.items()},
                  "both": "+".join(PICTURE_POLICY[name].value for name in ("all", "needed"))}


def human_runs(name: str, policy: PolicyFilter | Literal["each"]) -> list[tuple[str, PolicyFilter]]:
    """The runs an export writes: ``each`` is one run per picture policy (the paper's Human "Yes" and "No" rows)."""
    if policy == "each":
        each: tuple[PolicyFilter, ...] = ("all", "needed")
        return [(f"{name}:images={IMAGES_SETTING[p]}", p) for p in each]
    return [(name, policy)]

EXPORT_FIELDS = ["participant", "panel", "panel_pid", "panel_study", "panel_session", "questionnaire", "image_policy", "status", "position", "story_id", "task",
                 "category", "image_dependent", "turn", "image", "feedback_kind", "feedback", "story", "question",
                 "expected", "response", "verdict", "correct", "branch", "judge", "rationale", "answered_at"]


def participant_label(participant: sqlite3.Row) -> str:
    return f"P{participant['id']:04d}"


#: the status each ending shows as (``stopped``: declined or stopped part way)
ENDING_STATUS = {Ending.completed.value: "completed", Ending.withdrew.value: "stopped",
                 Ending.screened_out.value: "screened out"}


def participant_status(participant: sqlite3.Row, answered: int, total: int) -> str:
    """invited, in progress, completed, stopped or screened out (``answered`` of ``total`` questions tell it for a
    participant who finished before endings were kept)."""
    if participant["finished_at"] is None:
        return "invited" if participant["consent_at"] is None else "in progress"
    if participant["ending"] is not None:
        return ENDING_STATUS[participant["ending"]]
    return "completed" if answered >= total else "stopped"


def response_records(study: Study, storyturns: Mapping[str, StoryTurn], db: StudyDB) -> list[dict[str, object]]:
    """One record per answered turn, participants by number, in questionnaire order."""
    counts = db.answer_counts()
    records: list[dict[str, object]] = []
    for participant in db.participants():
        questionnaire = study.questionnaire(participant["questionnaire"])
        answered = counts.get(participant["token"], 0)
        if not answered:
            continue
        status = participant_status(participant, answered, question_count(questionnaire, storyturns))
        grouped = by_story(db.answers(participant["token"]))
        for number, story_id in enumerate(questionnaire.storyturns, start=1):
            storyturn = storyturns[story_id]
            progress = shown_turns(storyturn, grouped.get(story_id, {}), questionnaire.image_policy,
                                   study.undecided_feedback)
            for shown in progress.turns:
                if shown.answer is None:
                    continue
                answer = shown.answer
                records.append({
                    "participant": participant_label(participant), "panel": participant["panel"],
                    "panel_pid": participant["panel_pid"], "panel_study": participant["panel_study"],
                    "panel_session": participant["panel_session"], "questionnaire": questionnaire.index,
                    "image_policy": questionnaire.image_policy, "status": status, "position": number,
                    "story_id": story_id, "task": storyturn.task, "category": storyturn.category,
                    "image_dependent": storyturn.image_dependent, "turn": shown.index, "image": shown.image,
                    "feedback_kind": shown.feedback_kind, "feedback": shown.feedback, "story": shown.turn.story,
                    "question": shown.turn.question, "expected": shown.turn.answers, "response": answer["response"],
                    "verdict": answer["verdict"],
                    "correct": None if answer["correct"] is None else bool(answer["correct"]),
                    "branch": answer["branch"], "judge": answer["judge"], "rationale": answer["rationale"],
                    "answered_at": answer["answered_at"],
                })
    return records


def to_jsonl(records: list[dict[str, object]]) -> str:
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


def to_csv(records: list[dict[str, object]]) -> str:
    """CSV with one row per answered turn; expected answers as a JSON list, booleans as 1/0.

    Text a spreadsheet would run as a formula (typed answers starting with ``=``, ``+`` ...)
    gets a leading ``'`` (OWASP CSV injection)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=EXPORT_FIELDS)
    writer.writeheader()
    for record in records:
        row = dict(record)
        row["expected"] = json.dumps(record["expected"], ensure_ascii=False)
        for key in ("image_dependent", "correct"):
            row[key] = "" if record[key] is None else int(bool(record[key]))
        writer.writerow({key: csv_safe(value) for key, value in row.items()})
    return buffer.getvalue()


class HumanRunConflictError(CommetError, ValueError):
    """The run name is taken by a run of another study, policy filter or model."""


@dataclass
class HumanRunSummary:
    run: RunRecord
    participants: int
    stories: int
    incomplete: int  # StoryTurns begun but not finished: left out of the run


def _config_hash(study: Study, policy: PolicyFilter) -> str:
    payload = {"model": "human", "study": study.digest(), "policy": policy}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _images_json(dataset: Dataset, image: str | None) -> str:
    if image is None or not dataset.has_image(image):
        return "[]"
    return json.dumps([{"id": image, "sha256": hashlib.sha256(dataset.image_bytes(image)).hexdigest()}])


def check_human_run(study: Study, store: Store, name: str, policy: PolicyFilter) -> None:
    """Refuse a run name taken by another study, policy filter or model (before anything is written)."""
    run = store.get_run(name)
    if run is not None and (run.config_hash != _config_hash(study, policy) or run.model != "human"):
        raise HumanRunConflictError(f"run {name!r} already exists in {store.path} with other responses or settings; "
                                    "pick another --run name")


def export_human_run(study: Study, dataset: Dataset, db: StudyDB, store: Store, *, name: str = "human",
                     policy: PolicyFilter = "both", dataset_path: str | None = None) -> HumanRunSummary:
    """Write (or bring up to date) the run ``name`` with model ``human`` from the study's answers.

    Only StoryTurns whose every question was answered, or that stopped at an undecided answer (recorded
    stopped, as the engine records a model's), become stories; ``policy`` keeps only
    the questionnaires showing all pictures (``all``) or only the needed ones (``needed``).
    """
    from commet.version import __version__

    storyturns = {storyturn.id: storyturn for storyturn in dataset}
    digest = _config_hash(study, policy)
    check_human_run(study, store, name, policy)
    run = store.get_run(name)
    rows: list[tuple[str, StoryTurn, list[TurnRecord], bool]] = []  # story id, StoryTurn, its turns, stopped
    participants: set[int] = set()
    judges: set[str] = set()
    incomplete = 0
    for participant in db.participants():
        questionnaire = study.questionnaire(participant["questionnaire"])
        if policy != "both" and questionnaire.image_policy != policy:
            continue
        grouped = by_story(db.answers(participant["token"]))
        for story_id in questionnaire.storyturns:
            storyturn = storyturns[story_id]
            got = grouped.get(story_id, {})
            progress = shown_turns(storyturn, got, questionnaire.image_policy, study.undecided_feedback)
            if progress.open or not got:
                incomplete += bool(got)
                continue
            turns = []
            for shown in progress.turns:
                answer = shown.answer
                assert answer is not None
                judges.add(answer["judge"])
                correct = answer["correct"]
                turns.append(TurnRecord.of(  # run id 0 until the run exists
                    0, f"{story_id}#{participant_label(participant)}", shown.index,
                    ShownTurn(shown.message, _images_json(dataset, shown.image),
                              shown.feedback_kind, json.dumps(shown.turn.answers)),
                    response=answer["response"], outcome=answer["verdict"],
                    correct=None if correct is None else bool(correct), branch=answer["branch"],
                    active_branch=answer["active_branch"], judge=answer["judge"], rationale=answer["rationale"]))
            rows.append((f"{story_id}#{participant_label(participant)}", storyturn, turns, progress.stopped))
            participants.add(participant["id"])
    if run is None:
        settings: dict[str, object] = {"images": IMAGES_SETTING[policy], "feedback": FeedbackCondition.original.value,
                                       "undecided_feedback": study.undecided_feedback.value, "system_prompt": "",
                                       "policy": policy, "study": study.digest(), "judges": sorted(judges)}
        if dataset_path is not None:  # where the report finds the pictures again
            settings["dataset_path"] = dataset_path
        run = store.create_run(name=name, model="human", judge="+".join(sorted(judges)) or study.judge,
                               settings=settings, config_hash=digest, dataset_name=study.dataset.name,
                               dataset_hash=study.dataset.hash, package_version=__version__, story_count=len(rows))
    else:  # a re-export only adds stories
        store.set_story_count(run.id, len(rows))
    with store.transaction():
        for position, (story_id, storyturn, turns, stopped) in enumerate(rows):
            for record in turns:
                store.record_turn(replace(record, run_id=run.id))
            store.record_story(StoryRecord(  # stopped at an undecided answer: not scored, as a model's story
                run.id, story_id, position=position, task=storyturn.task, category=storyturn.category,
                image_dependent=storyturn.image_dependent, source=storyturn.source,
                status=StoryStatus.stopped if stopped else StoryStatus.done,
                correct=None if stopped else all(record.correct is True for record in turns)))
    store.set_run_status(run.id, RunStatus.done)
    final = store.get_run(name)
    assert final is not None
    return HumanRunSummary(final, len(participants), len(rows), incomplete)
