"""Judge-only candidates (``Turn.candidates``): the closed set an open answer is one of, used by the judges and
never shown to the model; checked by validation and carried by every format."""

from __future__ import annotations

from pathlib import Path

import pytest

from commet.engine.conversation import judge_request, user_text
from commet.format import Dataset, StoryTurn, validate_dataset
from commet.judges.prompts import user_prompt
from commet.judges.rules import RulesJudge
from commet.sources import load_dataset
from commet.sources.importers.opentom import places
from commet.taxonomy import Task, Taxonomy

STORY = ("Jack and Ella entered the front_yard. The lemon is in the green_bucket. Ella exited the front_yard. "
         "Jack moved the lemon to the blue_container.")


def storyturn(answers: list[str], candidates: list[str], options: list[dict[str, str]] | None = None) -> StoryTurn:
    return StoryTurn.model_validate({
        "id": "loc-1", "task": "loc", "category": "Belief", "source": "test",
        "turns": [{"story": STORY, "question": "Where will Ella look for the lemon?", "answers": answers,
                   "candidates": candidates, "options": options or [], "meta": {"answer_in_story": True}}]})


def dataset(*storyturns: StoryTurn) -> Dataset:
    task = Task("loc", "location", "Belief", ("belief",), "where someone will look", feedback="", picture="no")
    return Dataset(storyturns=list(storyturns), taxonomy=Taxonomy((task,), ("Belief",), ("belief",), declared=True))


def verdict(st: StoryTurn, reply: str) -> str:
    turn = st.turns[0]
    return RulesJudge().decide(judge_request(st, 0, user_text("", turn), reply, [])).outcome


@pytest.mark.parametrize(("reply", "outcome"), [
    ("green_bucket", "correct"), ("In the green_bucket.", "correct"), ("blue_container", "incorrect"),
    ("She will look in the blue_container.", "incorrect"), ("the blue_container or the green_bucket", "undecided"),
    ("Not the blue_container.", "undecided"), ("Maybe the green_bucket?", "undecided"), ("the garage", "undecided"),
])
def test_the_rules_judge_decides_by_the_candidates(reply: str, outcome: str) -> None:
    assert verdict(storyturn(["green_bucket"], ["green_bucket", "blue_container"]), reply) == outcome


def test_without_candidates_a_wrong_place_stays_undecided() -> None:
    """What ToMi and OpenToM imports did before: a bad model's run printed 0-100 %."""
    assert verdict(storyturn(["green_bucket"], []), "blue_container") == "undecided"


def test_candidates_reach_the_judge_but_never_the_model() -> None:
    st = storyturn(["green_bucket"], ["green_bucket", "blue_container"])
    turn = st.turns[0]
    message = user_text("", turn)
    assert message == f"{STORY}\n\nWhere will Ella look for the lemon?"  # as the benchmark asks it
    request = judge_request(st, 0, message, "blue_container", [])
    assert request.options == ((None, "green_bucket"), (None, "blue_container")) and request.options_shown is False
    assert request.fingerprint()["options_shown"] is False
    prompt = user_prompt(request)
    assert "not shown to the answerer" in prompt and "Options shown" not in prompt
    shown = StoryTurn.model_validate({**st.model_dump(), "turns": [
        {**turn.model_dump(), "candidates": [], "options": [{"text": "green_bucket"}, {"text": "blue_container"}]}]})
    shown_request = judge_request(shown, 0, user_text("", shown.turns[0]), "blue_container", [])
    assert shown_request.options_shown and "options_shown" not in shown_request.fingerprint()
    assert shown_request.fingerprint_json != request.fingerprint_json  # a cached verdict is never shared
    assert "Options shown" in user_prompt(shown_request)


@pytest.mark.parametrize(("answers", "candidates", "options", "message"), [
    (["green_bucket"], ["green_bucket", "blue_container"], None, None),
    (["the green_bucket"], ["green_bucket", "blue_container"], None, None),  # articles aside, the same place
    (["green_bucket"], ["green_bucket"], None, "at least two candidates"),
    (["red_box"], ["green_bucket", "blue_container"], None, "'red_box' is not one of the candidates"),
    (["green_bucket"], ["green_bucket", "the green_bucket"], None, "candidates 0 and 1 are the same"),
    (["green_bucket"], ["green_bucket", "blue_container"], [{"text": "green_bucket"}, {"text": "blue_container"}],
     "a turn with options has no candidates"),
])
def test_validation_of_candidates(answers: list[str], candidates: list[str], options: list[dict[str, str]] | None,
                                  message: str | None) -> None:
    problems = [p for p in validate_dataset(dataset(storyturn(answers, candidates, options))) if p.severity == "error"]
    if message is None:
        assert problems == []
    else:
        assert [(p.field, message in p.message) for p in problems] == [("candidates", True)], problems


def test_candidates_survive_the_pipe_record_and_the_canonical_folder(tmp_path: Path) -> None:
    original = dataset(storyturn(["green_bucket"], ["green_bucket", "blue_container"]))
    original.save_pipe(tmp_path / "pipe.jsonl")
    original.save(tmp_path / "canonical")
    for path in (tmp_path / "pipe.jsonl", tmp_path / "canonical"):
        assert load_dataset(path).storyturns[0].turns[0].candidates == ["green_bucket", "blue_container"], path


def test_candidates_survive_the_hub_export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("datasets")
    from commet.sources.hf import save_hf

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    folder = save_hf(dataset(storyturn(["green_bucket"], ["green_bucket", "blue_container"])), tmp_path / "hub")
    assert load_dataset(folder).storyturns[0].turns[0].candidates == ["green_bucket", "blue_container"]


@pytest.mark.parametrize(("plot", "answer", "expected"), [
    ({"original_place": "basket", "move_to_place": "a donation bin"}, "a donation bin", ["basket", "a donation bin"]),
    ({"original_place": "basket", "move_to_place": "a donation bin"}, "donation bin", ["basket", "donation bin"]),
    ({"original_place": "basket", "move_to_place": "a donation bin"}, "basket", ["basket", "a donation bin"]),
    # a typo in the published plot is written as the answer; a place that is neither leaves the question open
    ({"original_place": "bottle", "move_to_place": "center of dinint table"}, "center of dining table",
     ["bottle", "center of dining table"]),
    ({"original_place": "bottle", "move_to_place": "drawer"}, "kitchen", []),
    ({"original_place": "drawer", "move_to_place": "the drawer"}, "drawer", []),
    ("not a plot", "drawer", []),
])
def test_opentom_fine_location_places(plot: object, answer: str, expected: list[str]) -> None:
    assert places(plot, answer) == expected


def test_a_dataset_without_candidates_keeps_the_hash_it_had_before_the_field_existed() -> None:
    """Runs record their dataset's content hash (and their default name carries it): a field added to the format
    must not change it for data that does not use the field, or earlier runs would never resume."""
    import json as json_module

    from commet.format.dataset import hashed_json
    from commet.sources import load_dataset

    sample = load_dataset("sample")
    for storyturn in sample.storyturns:
        before = json_module.loads(storyturn.model_dump_json())
        for turn in before["turns"]:
            del turn["candidates"]  # the JSON as it was before turns had candidates
        assert json_module.loads(hashed_json(storyturn)) == before
        assert hashed_json(storyturn) == json_module.dumps(before, separators=(",", ":"), ensure_ascii=False)
    assert sample.content_hash(pictures=False).startswith("17af6b801b2a")  # as recorded by runs before the field
    storyturn = sample.storyturns[0]
    with_candidates = storyturn.model_copy(deep=True)
    with_candidates.turns[0].candidates = ["the basket", "the box"]
    assert hashed_json(with_candidates) != hashed_json(storyturn) and "the basket" in hashed_json(with_candidates)
