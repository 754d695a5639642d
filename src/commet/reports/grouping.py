"""Accuracy grouped by any StoryTurn field or metadata key: ``commet report --by question_type``.

Why: imported benchmarks label their questions (question type, order of belief, ...) in
per-turn metadata (``turns[k].meta``); researchers compare models along those labels. A key
is looked up in the turn's ``meta``, then the StoryTurn's ``meta``, then the StoryTurn's own
fields (``task``, ``category``, ``source``, ``image_dependent``). Metadata lives in the dataset,
not the store, so a metadata key needs the dataset the runs were made on (checked by hash).
Grouped by task, StoryTurns marked controls (``meta["item"] == "control"``) are counted apart from
the task's test items ("false_belief_location (control)"); ``commet report --dataset`` adds that
table by default when the dataset has controls. Comprehension control turns (``turn.meta["control"]``: the story
states the answer) count in their StoryTurn's story accuracy, as every question does, but never in a question
accuracy: they get a row of their own ("moral_false_belief [control questions]").
"""

from __future__ import annotations

import json

from commet.format.dataset import Dataset
from commet.format.model import StoryTurn
from commet.reports.analyses import RUN_HEADER, Bootstrap, Cell, RunData, Section, StoryResult, TurnResult
from commet.reports.rundata import Controls
from commet.reports.sections import by_key

#: Keys the store itself records per StoryTurn (no dataset needed).
STORED_KEYS = ("task", "category", "source", "image_dependent")
MISSING = "(none)"
#: StoryTurn metadata naming an item a control beside the task's test items (``meta["item"]``, written by the
#: procedural generator): grouped by task, controls get a row of their own, never pooled with the test items.
ITEM, CONTROL = "item", "control"
#: the row of a value's comprehension control turns, apart from its test questions
CONTROL_QUESTIONS = "{} [control questions]"


def control_turns(dataset: Dataset) -> Controls:
    """The dataset's comprehension control turns (``turn.meta["control"]``, written by the procedural generator:
    a question whose answer the story states), by story id and turn index, with what each checks."""
    found: dict[str, dict[int, str]] = {}
    for storyturn in dataset.storyturns:
        for index, turn in enumerate(storyturn.turns):
            what = turn.meta.get(CONTROL)
            if what:
                found.setdefault(storyturn.id, {})[index] = _text(what)
    return found


def has_controls(dataset: Dataset) -> bool:
    """Whether any StoryTurn of the dataset is marked a control."""
    return any(st.meta.get(ITEM) == CONTROL for st in dataset.storyturns)


def dataset_keys(dataset: Dataset) -> set[str]:
    """The metadata keys of the dataset's StoryTurns and turns (what ``--by`` can group by, besides the fields)."""
    return {key for st in dataset.storyturns for meta in (st.meta, *(t.meta for t in st.turns)) for key in meta}


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _turn_values(story: StoryResult, key: str, storyturn: StoryTurn | None) -> list[str]:
    """The key's value for each stored turn of ``story``."""
    if storyturn is None:
        value = getattr(story, key) if key in STORED_KEYS else MISSING
        return [_text(value)] * len(story.turns)
    values = []
    for turn in story.turns:
        meta = storyturn.turns[turn.turn].meta if turn.turn < len(storyturn.turns) else {}
        if key in meta:
            values.append(_text(meta[key]))
        elif key in storyturn.meta:
            values.append(_text(storyturn.meta[key]))
        elif key in STORED_KEYS:
            values.append(_text(getattr(story, key)))
        else:
            values.append(MISSING)
    if key == "task" and storyturn.meta.get(ITEM) == CONTROL:
        values = [f"{value} (control)" for value in values]
    return values


def check_dataset(runs: list[RunData], dataset: Dataset) -> None:
    """Refuse (ValueError, one line) when a run was made on other StoryTurns than ``dataset``'s (a run that showed
    no pictures recorded the hash without them)."""
    for data in runs:
        if not dataset.hash_matches(data.run.dataset_hash):
            raise ValueError(f"run {data.run.name!r} was made on other StoryTurns than {dataset.source_file} "
                             f"(dataset {data.run.dataset_name!r}); give the dataset the run used")


def by_key_section(runs: list[RunData], key: str, boot: Bootstrap, dataset: Dataset | None = None) -> Section:
    """Question accuracy per value of ``key`` and, where every turn of a story has one value, story accuracy (all
    its turns, controls included); a value's comprehension control turns on a row of their own."""
    if dataset is None and key not in STORED_KEYS:
        raise ValueError(f"--by {key}: metadata keys are read from the dataset; give --dataset "
                         f"(the store knows only {', '.join(STORED_KEYS)})")
    if dataset is not None and key not in STORED_KEYS:
        known = dataset_keys(dataset)
        if key not in known:  # a table of one '(none)' group would only hide the misspelt or absent key
            found = ", ".join(sorted(known)[:12]) or "none"
            raise ValueError(f"--by {key}: no StoryTurn or turn of {dataset.source_file} has the key {key!r} (keys: "
                             f"{', '.join(STORED_KEYS)}; metadata: {found})"
                             + ("; accuracy by turn index is the 'turns' table (--table turns)"
                                if key in ("turn", "turns", "turn_index") else ""))
    by_id = {st.id: st for st in dataset.storyturns} if dataset is not None else {}
    rows: list[list[Cell]] = []
    unscored_any = any(not s.counted for data in runs for s in data.stories)
    for data in runs:
        # (value, control turns?) -> one list of turns per StoryTurn
        turns: dict[tuple[str, bool], list[list[TurnResult]]] = {}
        stories: dict[str, list[StoryResult]] = {}
        unscored: dict[str, int] = {}  # StoryTurns of the value left out (a call failed for good): counted, as everywhere
        for story in data.stories:
            values = _turn_values(story, key, by_id.get(story.story_id) if dataset is not None else None)
            if not story.counted:
                if values and len(set(values)) == 1:
                    unscored[values[0]] = unscored.get(values[0], 0) + 1
                continue
            mine: dict[tuple[str, bool], list[TurnResult]] = {}
            for turn, value in zip(story.turns, values, strict=True):
                mine.setdefault((value, turn.control is not None), []).append(turn)
            for group_key, group in mine.items():
                turns.setdefault(group_key, []).append(group)
            if values and len(set(values)) == 1:
                stories.setdefault(values[0], []).append(story)
        for value in [*stories, *unscored]:  # (a StoryTurn of control turns only still has its story row)
            turns.setdefault((value, False), [])
        for value, controls in sorted(turns, key=lambda v: (v[0] == MISSING, v)):
            answered = sum(t.answered for group in turns[value, controls] for t in group)
            members = [] if controls else stories.get(value, [])
            left_out = 0 if controls else unscored.get(value, 0)
            if not answered and not members and not left_out:
                continue
            label = CONTROL_QUESTIONS.format(value) if controls else value
            rows.append([data.run.name, data.run.model, data.images, data.feedback, label, str(answered),
                         boot.questions(turns[value, controls], controls=controls) if answered else "-",
                         str(len(members) + left_out) if members or left_out else "-",
                         *([str(left_out) if not controls else "-"] if unscored_any else []),
                         boot.stories(members) if members else "-"])
    return Section(by_key(key), f"Accuracy by {key} (%, 95% CI)",
                   [*RUN_HEADER, key, "Questions", "Question accuracy", "Stories",
                    *(["Not scored"] if unscored_any else []), "Story accuracy"], rows,
                   f"Questions: answered turns whose {key} has that value (resampled by StoryTurn). Stories: "
                   f"StoryTurns whose turns all share it ('-' when none do)"
                   + (", scored or not, as the summary counts them; Not scored: those with a call that failed for "
                      "good, left out of every accuracy" if unscored_any else "") + f". {MISSING}: the key is absent. "
                   + ("(control): the task's controls, apart from its test items. " if key == "task" else "")
                   + ("[control questions]: the comprehension control turns (the story states the answer), never in "
                      "a question accuracy with the test questions; " if dataset is not None else
                      "Without --dataset the comprehension control turns are not known and count as questions; ")
                   + "story accuracy counts every turn of a StoryTurn. "
                   "a-b: undecided answers counted wrong - counted right.")
