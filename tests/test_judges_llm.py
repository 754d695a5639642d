"""LLM judge, cascade and judgment cache, against a real HTTP judge server on 127.0.0.1."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from commet.engine import evaluate_async
from commet.judges import create_judge
from commet.judges.base import JudgeRequest, UnknownJudgeError
from commet.judges.cascade import CascadeJudge
from commet.judges.llm import LLMJudge
from commet.judges.prompts import (
    PROMPT_VERSION,
    RETRY_PROMPT,
    SYSTEM_PROMPT,
    VerdictParseError,
    parse_verdict,
    user_prompt,
)
from commet.store import Store
from tests.fakeservers import error_reply, openai_reply
from tests.judge_server import JudgeServer, verdict, write_dataset, write_replies


@pytest.fixture(autouse=True)
def _dummy_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-test-key")


def why_judge(model: str, answer: str, expected: list[str], question: str) -> str:
    """The server's rule: a 'why' answer is right when it mentions not seeing, or different likes."""
    ok = any(word in answer.lower() for word in ("saw", "see", "different"))
    return verdict(ok, 1 if ok else None, "mentions the key inference" if ok else "misses the key inference")


def request(response: str, expected: tuple[str, ...] = ("Because he did not see Bea move it.",)) -> JudgeRequest:
    return JudgeRequest(story_id="fb", task="implicit_false_belief", turn=1, context=("Story: ...",), story="",
                        question="Why will he look there?", expected=expected, response=response)


def turn_rows(db: Path, run: str) -> list[dict]:
    with Store(db) as store:
        record = store.get_run(run)
        assert record is not None
        return [r.columns() for r in store.turn_rows(record.id)]


# ------------------------------------------------------------------------------- prompt and parser

#: The prompt's text per version: changing the wording without bumping PROMPT_VERSION fails here,
#: because cached verdicts of the old wording would be reused under the same name.
PROMPT_SHA256 = {"judge-v2": "c79e5b94f1f59e1994f8a3681b6408284811ce34b5b296a1d515373e6f2a3ff6"}


def test_prompt_changes_come_with_a_new_version() -> None:
    sample = JudgeRequest("s", "t", 1, ("Story: a\nQuestion: b\nReply: c",), "story", "question?", ("A", "B"), "reply",
                          options=(("A", "first"), ("B", "second")), rubric=("key", ("false one", "false two")),
                          feedback="feedback")
    text = SYSTEM_PROMPT + user_prompt(sample) + RETRY_PROMPT
    assert hashlib.sha256(text.encode()).hexdigest() == PROMPT_SHA256.get(PROMPT_VERSION)



def test_prompt_shows_context_question_expected_answers_and_response() -> None:
    text = user_prompt(request("He did not see.", ("Apple", "Chocolate")))
    assert "Story: ..." in text and "Why will he look there?" in text
    assert "1. Apple\n2. Chocolate" in text and "any one of them is correct" in text
    assert text.endswith("<<<\nHe did not see.\n>>>")


@pytest.mark.parametrize(("reply", "n", "expected"), [
    ('{"verdict": "correct", "matched_answer": 2, "reason": "r"}', 2, (True, 1)),
    ('```json\n{"verdict": "correct", "matched_answer": null, "reason": "r"}\n```', 1, (True, 0)),
    ('{"verdict": "incorrect", "matched_answer": 1, "reason": "r"}', 2, (False, None)),
])
def test_parse_verdict_accepts_the_json_object(reply: str, n: int, expected: tuple[bool, int | None]) -> None:
    parsed = parse_verdict(reply, n)
    assert (parsed.correct, parsed.branch) == expected


@pytest.mark.parametrize("reply", [
    "correct",
    'Sure! {"verdict": "correct", "matched_answer": 1, "reason": "r"}',
    '{"verdict": "right", "matched_answer": 1, "reason": "r"}',
    '{"verdict": "correct", "matched_answer": 3, "reason": "r"}',
    '{"verdict": "correct", "matched_answer": true, "reason": "r"}',
    '{"verdict": "correct", "reason": "r"}',
    '{"verdict": "correct", "matched_answer": null, "reason": "r"}',  # a branch point needs the branch
    '{"verdict": "incorrect", "matched_answer": null, "reason": ""}',
    "[1, 2]",
])
def test_parse_verdict_is_strict(reply: str) -> None:
    with pytest.raises(VerdictParseError):
        parse_verdict(reply, 2)


# ------------------------------------------------------------------------------- the LLM judge


async def test_llm_judge_names_model_and_prompt_version_and_returns_the_verdict() -> None:
    with JudgeServer(why_judge) as server:
        judge = create_judge("llm-only:" + server.spec("judge-a"))
        assert isinstance(judge, LLMJudge)
        assert judge.name == f"llm:openai:judge-a@{PROMPT_VERSION}"
        got = await judge.judge(request("He never saw Bea move it."))
        await judge.aclose()
    assert (got.outcome, got.branch, got.judge) == ("correct", 0, judge.name)
    assert got.rationale == "mentions the key inference"
    assert server.calls == 1
    body = server.fake.requests[0].json
    assert body["temperature"] == 0.0 and body["messages"][0]["role"] == "system"


async def test_unparseable_verdict_is_retried_then_accepted() -> None:
    with JudgeServer(why_judge) as server:
        server.fake.queue(openai_reply("I think it is correct."))
        judge = create_judge("llm-only:" + server.spec())
        got = await judge.judge(request("He never saw it."))
        await judge.aclose()
        retry = server.fake.requests[1].json["messages"]
    assert got.outcome == "correct" and got.details["attempts"] == 2
    assert retry[-2] == {"role": "assistant", "content": "I think it is correct."}
    assert "not a valid verdict" in retry[-1]["content"]


async def test_verdict_unparseable_after_retries_is_undecided_with_an_error() -> None:
    with JudgeServer(lambda *a: "no idea") as server:
        judge = create_judge("llm-only:" + server.spec())
        got = await judge.judge(request("He never saw it."))
        await judge.aclose()
    assert server.calls == 3
    assert got.outcome == "undecided" and "unparseable" in str(got.error)
    assert got.details["raw"] == "no idea"


async def test_failed_judge_call_is_undecided_with_an_error() -> None:
    with JudgeServer(why_judge) as server:
        server.fake.queue(error_reply(400, "bad request"))
        judge = create_judge("llm-only:" + server.spec())
        got = await judge.judge(request("He never saw it."))
        await judge.aclose()
    assert got.outcome == "undecided" and got.error_kind == "judge_http_400"


def test_bad_judge_specs_are_one_clear_error() -> None:
    with pytest.raises(UnknownJudgeError, match="unknown model provider"):
        create_judge("nosuch:model")
    with pytest.raises(UnknownJudgeError, match="at least two"):
        create_judge("panel:openai:a?base_url=http://127.0.0.1:9/v1")


# ------------------------------------------------------------------------------- cascade and cache


async def test_cascade_rules_decide_what_they_can_and_the_llm_the_rest(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "ds")
    model = write_replies(tmp_path / "replies.json")
    db = tmp_path / "r.sqlite"
    with JudgeServer(why_judge) as server:
        judge = create_judge(server.spec("judge-a"))
        assert isinstance(judge, CascadeJudge) and judge.name == f"rules+llm:openai:judge-a@{PROMPT_VERSION}"
        summary = await evaluate_async(model, dataset, judge=server.spec("judge-a"), db=db, run="first")
        first_calls = server.calls
    rows = turn_rows(db, "first")
    by_judge = {(r["story_id"], r["turn"]): r["judge"] for r in rows}
    llm = f"llm:openai:judge-a@{PROMPT_VERSION}"
    assert by_judge == {("fb", 0): "rules", ("fb", 1): llm, ("fb", 2): "rules",
                        ("dd", 0): "rules", ("dd", 1): "rules", ("dd", 2): llm}
    assert first_calls == 2  # only the two "why" answers reached the LLM judge
    assert all(r["correct"] == 1 for r in rows)
    assert summary.run.judge == judge.name
    assert summary.progress.questions_right == 6
    await judge.aclose()


async def test_second_run_makes_zero_judge_calls(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "ds")
    model = write_replies(tmp_path / "replies.json")
    db = tmp_path / "r.sqlite"
    with JudgeServer(why_judge) as server:
        await evaluate_async(model, dataset, judge=server.spec(), db=db, run="first")
        assert server.calls == 2
        summary = await evaluate_async(model, dataset, judge=server.spec(), db=db, run="second")
        assert server.calls == 2  # every verdict came from the store
    assert summary.call_counts["judge_calls"] == 0 and summary.call_counts["judge_cached"] == 6
    assert [r["judge"] for r in turn_rows(db, "second")] == [r["judge"] for r in turn_rows(db, "first")]


async def test_a_new_prompt_version_or_judge_model_is_not_answered_from_the_cache(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "ds")
    model = write_replies(tmp_path / "replies.json")
    db = tmp_path / "r.sqlite"
    with JudgeServer(why_judge) as server:
        await evaluate_async(model, dataset, judge=server.spec("judge-a"), db=db, run="a")
        await evaluate_async(model, dataset, judge=server.spec("judge-b"), db=db, run="b")
        assert server.models_called() == ["judge-a"] * 2 + ["judge-b"] * 2
        from commet.models.registry import create_model

        other = CascadeJudge(LLMJudge(create_model(server.spec("judge-a")), version="judge-v0"))
        await evaluate_async(model, dataset, judge=other, db=db, run="v0")
        await other.aclose()
        assert server.calls == 6


async def test_judge_errors_are_not_cached_and_are_asked_again(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "ds")
    model = write_replies(tmp_path / "replies.json")
    db = tmp_path / "r.sqlite"
    with JudgeServer(why_judge) as server:
        server.fake.queue(*[openai_reply("garbage")] * 6)  # both "why" answers fail all three attempts
        await evaluate_async(model, dataset, judge=server.spec(), db=db, run="first", concurrency=1)
        rows = turn_rows(db, "first")
        assert [r["outcome"] for r in rows if r["judge"] != "rules"] == ["undecided", "undecided"]
        assert {r["error_kind"] for r in rows if r["judge"] != "rules"} == {"judge_unparseable"}
        await evaluate_async(model, dataset, judge=server.spec(), db=db, run="second")
        assert server.calls == 8  # asked again, now answered
    assert all(r["correct"] == 1 for r in turn_rows(db, "second"))


# ------------------------------------------------------------------------------- rubric and pictures

def _rubric_dataset(folder: Path) -> Path:
    """One image-dependent StoryTurn whose "why" turn carries a rubric, and one text-complete twin."""
    from PIL import Image

    (folder / "images").mkdir(parents=True)
    Image.new("RGB", (40, 30), (10, 120, 200)).save(folder / "images" / "robot.png")
    turns = [
        {"story": "Leo wished for a ball. His mother did not hear him change his wish to a robot.",
         "question": "What is in the box, a ball or a robot?", "image": "robot", "answers": ["A robot"],
         "options": [{"label": "A", "text": "a ball"}, {"label": "B", "text": "a robot"}]},
        {"question": "Why is Leo surprised?", "answers": ["Because he did not expect the robot"],
         "rubric": {"key_inference": "Leo did not expect a robot",
                    "false_inferences": ["Leo knew his mother had not heard him"]}},
    ]
    rows = [{"id": "pic", "task": "interpretation", "category": "Percept", "image_dependent": True, "turns": turns},
            {"id": "txt", "task": "interpretation", "category": "Percept", "image_dependent": False, "turns": turns}]
    (folder / "storyturns.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


@pytest.mark.parametrize(("judge_images", "pictures_for"), [("needed", {"pic"}), ("on", {"pic", "txt"}),
                                                            ("off", set())])
async def test_rubric_and_picture_reach_the_judge_in_the_wire_format(tmp_path: Path, judge_images: str,
                                                                     pictures_for: set[str]) -> None:
    import base64

    from commet.engine import EvalSettings
    from commet.models.images import prepare_image

    folder = _rubric_dataset(tmp_path / "ds")
    replies = write_replies(tmp_path / "r.json", {"pic": ["B", "He thought he would get a ball."],
                                                   "txt": ["B", "He thought he would get a ball."]})
    with JudgeServer(lambda *_: verdict(True, 1)) as server:
        await evaluate_async(replies, folder, judge=server.spec(), db=tmp_path / "r.sqlite",
                             settings=EvalSettings(judge_images=judge_images))
        requests = [r.json for r in server.fake.requests]
    assert len(requests) == 2  # "B" is decided by the rules (option letter); each "why" goes to the LLM judge
    picture, _ = prepare_image((folder / "images" / "robot.png").read_bytes())
    data_url = "data:image/png;base64," + base64.b64encode(picture).decode("ascii")
    with_pictures = 0
    for body in requests:
        user = body["messages"][1]
        assert user["role"] == "user" and body["messages"][0]["role"] == "system"
        content = user["content"]
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        text = "".join(p["text"] for p in parts if p["type"] == "text")
        assert "Grading rubric:\nKey inference the answer must contain: Leo did not expect a robot" in text
        assert "False inferences that make the answer incorrect:\n- Leo knew his mother had not heard him" in text
        images = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
        if images:
            assert images == [data_url] and "Pictures the answerer saw: 1 attached" in text
            with_pictures += 1
        else:
            assert "Pictures the answerer saw" not in text
    assert with_pictures == len(pictures_for)
