"""The published JSON Schema of a canonical StoryTurn line says what the model enforces.

Checked against documents, not only for being a schema: every line of the bundled sample is
accepted, and each broken document below is refused by the schema and by the StoryTurn model
alike. A schema reduced to ``{"type": "object"}`` fails here.
"""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from commet.cli import app
from commet.format import StoryTurn, storyturn_json_schema
from commet.sources import load_dataset

GOOD = {
    "id": "fb-1", "task": "false_belief_location", "category": "Belief", "mental_states": ["belief"],
    "image_dependent": False, "source": "hand",
    "turns": [
        {"story": "Ana puts her ball in the basket.", "question": "Where will Ana look?", "answers": ["The basket"],
         "image": None, "feedback": None},
        {"story": "", "question": "Is the ball in the basket now?", "answers": ["No"],
         "feedback": {"right": "Yes.", "wrong": "Remember, Ana was outside."}},
    ],
}


def broken(path: tuple[object, ...], value: object = ...) -> dict[str, object]:
    """GOOD with the field at ``path`` replaced by ``value`` (deleted when ``value`` is left out)."""
    document = copy.deepcopy(GOOD)
    parent: object = document
    for key in path[:-1]:
        parent = parent[key]  # type: ignore[index]
    if value is ...:
        del parent[path[-1]]  # type: ignore[arg-type, index]
    else:
        parent[path[-1]] = value  # type: ignore[index]
    return document


BAD = {
    "no id": broken(("id",)),
    "empty id": broken(("id",), ""),
    "no task": broken(("task",)),
    "no category": broken(("category",)),
    "no turns": broken(("turns",)),
    "empty turns": broken(("turns",), []),
    "unknown top-level field": broken(("colour",), "red"),
    "image_dependent not a boolean": broken(("image_dependent",), "sometimes"),
    "mental_states not a list": broken(("mental_states",), "belief"),
    "turn without question": broken(("turns", 0, "question")),
    "turn without answers": broken(("turns", 0, "answers")),
    "answers not a list": broken(("turns", 0, "answers"), "The basket"),
    "unknown turn field": broken(("turns", 1, "hint"), "look left"),
    "feedback with an unknown form": broken(("turns", 1, "feedback"), {"maybe": "Hm."}),
    "answer-keyed feedback without its answer": broken(("turns", 1, "feedback"), {"by_answer": [{"text": "So."}]}),
    "option without text": broken(("turns", 0, "options"), [{"label": "A"}]),
    "rubric without key inference": broken(("turns", 0, "rubric"), {"false_inferences": ["x"]}),
}


def test_the_schema_names_the_model_fields_and_what_is_required() -> None:
    schema = storyturn_json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert set(schema["properties"]) == set(StoryTurn.model_fields)
    assert set(schema["required"]) == {"id", "task", "category", "turns"}
    assert schema["additionalProperties"] is False
    turn = schema["$defs"]["Turn"]
    assert set(turn["required"]) == {"question", "answers"} and turn["additionalProperties"] is False
    assert {"story", "feedback", "question", "image", "answers", "options", "rubric", "meta"} <= set(turn["properties"])
    assert schema["properties"]["turns"]["minItems"] == 1
    jsonschema.Draft202012Validator.check_schema(schema)


def test_every_sample_line_is_accepted() -> None:
    validator = jsonschema.Draft202012Validator(storyturn_json_schema())
    sample = load_dataset("sample")
    assert len(sample) > 30
    for storyturn in sample:
        validator.validate(json.loads(storyturn.model_dump_json()))
    validator.validate(GOOD)
    StoryTurn.model_validate(GOOD)


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_broken_document_is_refused_by_the_schema_and_the_model_alike(case: str) -> None:
    document = BAD[case]
    assert not jsonschema.Draft202012Validator(storyturn_json_schema()).is_valid(document), case
    with pytest.raises(ValidationError):
        StoryTurn.model_validate(document)


def test_commet_schema_prints_the_same_schema() -> None:
    result = CliRunner().invoke(app, ["schema"])
    assert result.exit_code == 0 and json.loads(result.output) == storyturn_json_schema()
