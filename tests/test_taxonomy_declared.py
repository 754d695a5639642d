"""Open taxonomy: a dataset declares its own tasks and categories in dataset.json; validation checks them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.cli import app
from commet.format import FormatError
from commet.sources import load_dataset, validate_path
from commet.taxonomy import BOOKLET, Taxonomy, TaxonomyError

DECLARATION = {
    "name": "tomi-mini",
    "license": "CC-BY-NC-4.0",
    "language": ["en"],
    "categories": ["First-order belief", "Second-order belief", "Reality", "NLCE", "NLC"],
    "mental_states": ["belief", "knowledge", "non_literal_communication", "emotion", "desire"],
    "tasks": {
        "tomi_belief": {"categories": ["First-order belief", "Second-order belief"], "name": "ToMi belief",
                        "description": "Where will X look for the object?", "mental_states": ["belief"]},
        "tomi_reality": {"categories": ["Reality"]},
        "sarcasm": {},
    },
}


def storyturn(task: str, category: str, story_id: str = "t1", states: list[str] | None = None) -> dict:
    return {"id": story_id, "task": task, "category": category, "mental_states": states or [],
            "turns": [{"story": "Sally puts the marble in the basket and leaves.",
                       "question": "Where will Sally look?", "answers": ["The basket"],
                       "meta": {"question_type": "first_order", "order": 1}}]}


def write_folder(tmp_path: Path, meta: dict, *records: dict) -> Path:
    folder = tmp_path / "ds"
    folder.mkdir(exist_ok=True)
    (folder / "dataset.json").write_text(json.dumps(meta, indent=2))
    (folder / "storyturns.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


def test_declared_tasks_validate_and_booklet_ones_are_refused(tmp_path: Path) -> None:
    folder = write_folder(tmp_path, DECLARATION, storyturn("tomi_belief", "Second-order belief"),
                          storyturn("sarcasm", "NLCE", "t2"), storyturn("false_belief_location", "Belief", "t3"))
    dataset = load_dataset(folder)
    assert dataset.taxonomy.declared and dataset.taxonomy.task_ids == ("tomi_belief", "tomi_reality", "sarcasm")
    assert dataset.taxonomy.categories[:3] == ("First-order belief", "Second-order belief", "Reality")
    assert dataset.taxonomy.task("sarcasm") == BOOKLET.task("sarcasm")  # {} takes the booklet's definition
    assert dataset.licence == "CC-BY-NC-4.0"
    errors = [str(p) for p in validate_path(folder) if p.severity == "error"]
    assert all("story=t3" in e for e in errors), errors  # the booklet task (and its category) is not declared
    assert any("field=task" in e and "declared in dataset.json" in e for e in errors)


def test_category_outside_the_declared_ones_is_an_error(tmp_path: Path) -> None:
    folder = write_folder(tmp_path, DECLARATION, storyturn("tomi_belief", "Belief"))
    errors = [str(p) for p in validate_path(folder) if p.severity == "error"]
    assert any("field=category" in e and "unknown category 'Belief'" in e for e in errors), errors


def test_undeclared_mental_state_warns(tmp_path: Path) -> None:
    folder = write_folder(tmp_path, DECLARATION, storyturn("tomi_belief", "First-order belief", states=["percept"]))
    warnings = [str(p) for p in validate_path(folder) if p.severity == "warning"]
    assert any("field=mental_states" in w for w in warnings)


def test_without_declaration_the_booklet_applies(tmp_path: Path) -> None:
    folder = write_folder(tmp_path, {"name": "x"}, storyturn("tomi_belief", "Belief"))
    assert load_dataset(folder).taxonomy is BOOKLET
    errors = [str(p) for p in validate_path(folder) if p.severity == "error"]
    assert any("unknown task 'tomi_belief'" in e for e in errors)


@pytest.mark.parametrize(("tasks", "field", "words"), [
    ({"a": {"name": "A"}}, "tasks.a.categories", "required"),
    ({"a": {"categories": []}}, "tasks.a.categories", "must not be empty"),
    ({"a": {"categories": ["X"], "colour": "red"}}, "tasks.a.colour", "unknown key"),
    ({"a": {"categories": ["Nope"]}}, "tasks.a.categories", "not among the declared categories"),
    ({"a": {"categories": ["X"], "mental_states": ["telepathy"]}}, "tasks.a.mental_states", "not among"),
    ({"a": "Belief"}, "tasks.a", "must be an object"),
    ([], "tasks", "non-empty object"),
])
def test_bad_declaration_is_a_located_error(tmp_path: Path, tasks: object, field: str, words: str) -> None:
    meta = {"name": "bad", "categories": ["X"], "mental_states": ["belief"], "tasks": tasks}
    folder = write_folder(tmp_path, meta, storyturn("a", "X"))
    with pytest.raises(FormatError) as caught:
        load_dataset(folder)
    problem = caught.value.problems[0]
    assert problem.file.endswith("dataset.json") and problem.field == field and words in problem.message
    assert problem.line is not None and problem.line > 1
    result = CliRunner().invoke(app, ["validate", str(folder)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"field={field}" in result.output


def test_declaration_survives_save_and_load(tmp_path: Path) -> None:
    folder = write_folder(tmp_path, DECLARATION, storyturn("tomi_belief", "First-order belief"))
    dataset = load_dataset(folder)
    dataset.save(tmp_path / "copy")
    again = load_dataset(tmp_path / "copy")
    assert again.taxonomy == dataset.taxonomy and again.licence == dataset.licence
    meta = json.loads((tmp_path / "copy" / "dataset.json").read_text())
    assert set(meta["tasks"]) == {"tomi_belief", "tomi_reality", "sarcasm"} and "taxonomy" not in meta


def test_booklet_declaration_round_trips() -> None:
    assert Taxonomy.from_json(BOOKLET.to_json()).tasks == BOOKLET.tasks
    with pytest.raises(TaxonomyError):
        Taxonomy.from_json({"tasks": {"": {"categories": ["X"]}}})


def test_stats_list_the_declared_tasks_and_categories_in_order(tmp_path: Path) -> None:
    from commet.format import dataset_stats

    folder = write_folder(tmp_path, DECLARATION, storyturn("tomi_reality", "Reality"),
                          storyturn("tomi_belief", "First-order belief", "t2"))
    stats = dataset_stats(load_dataset(folder))
    assert list(stats.per_task) == ["tomi_belief", "tomi_reality", "sarcasm"]
    assert list(stats.per_category) == ["First-order belief", "Reality"]
