"""The engine: branch and feedback semantics, scoring, determinism, caching and resume."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.cli import app
from commet.engine import EvalSettings, RunConflictError, evaluate_async
from commet.models.images import prepare_image
from commet.reports import run_metrics
from commet.reports.export import turn_records
from commet.sources import read_storyturns
from commet.store import Store

DD_RIGHT = ["I like the pear.", "Kim will pick the cookie."]


async def run(dataset: Path, model: str, db: Path, name: str = "r", **settings: object):
    return await evaluate_async(model, dataset, judge="rules", db=db, run=name,
                                settings=EvalSettings(**settings), concurrency=4)


def turns(db: Path, name: str = "r") -> dict[tuple[str, int], dict]:
    with Store(db) as store:
        record = store.get_run(name)
        assert record is not None
        return {(t["story_id"], t["turn"]): t for t in turn_records(store, record)}


async def test_answer_keyed_feedback_and_branch_fixing(pipe_dataset: Path, replay_file, tmp_path: Path) -> None:
    replies = replay_file({"dd-1": DD_RIGHT, "fb-1": ["The basket.", "No.", "The box."]})
    await run(pipe_dataset, f"replay:{replies}", tmp_path / "s.sqlite")
    t = turns(tmp_path / "s.sqlite")
    assert t[("dd-1", 0)]["correct"] is True and t[("dd-1", 0)]["branch"] == 0
    assert t[("dd-1", 1)]["prompt"].startswith("So Kim likes the cookie.\n\nKim likes the other snack better.")
    assert t[("dd-1", 1)]["feedback_kind"] == "answer:Pear"
    assert t[("dd-1", 1)]["correct"] is True and t[("dd-1", 1)]["branch"] == 0


async def test_other_branch_fixes_the_other_expected_answer(pipe_dataset: Path, replay_file, tmp_path: Path) -> None:
    replies = replay_file({"dd-1": ["The cookie!", "The pear."], "fb-1": ["The basket.", "No.", "The box."]})
    await run(pipe_dataset, f"replay:{replies}", tmp_path / "s.sqlite")
    t = turns(tmp_path / "s.sqlite")
    assert t[("dd-1", 0)]["branch"] == 1
    assert t[("dd-1", 1)]["prompt"].startswith("So Kim likes the pear.")
    assert t[("dd-1", 1)]["correct"] is True and t[("dd-1", 1)]["branch"] == 1


async def test_later_answer_matching_the_other_branch_is_wrong(pipe_dataset: Path, replay_file,
                                                               tmp_path: Path) -> None:
    replies = replay_file({"dd-1": ["Pear", "Pear"], "fb-1": ["The basket.", "No.", "The box."]})
    await run(pipe_dataset, f"replay:{replies}", tmp_path / "s.sqlite")
    t = turns(tmp_path / "s.sqlite")
    assert t[("dd-1", 1)]["correct"] is False
    assert "story is on branch 0" in t[("dd-1", 1)]["rationale"]


async def test_right_and_wrong_feedback_texts(pipe_dataset: Path, replay_file, tmp_path: Path) -> None:
    right = replay_file({"dd-1": DD_RIGHT, "fb-1": ["The basket.", "No.", "The box."]}, "right.json")
    wrong = replay_file({"dd-1": DD_RIGHT, "fb-1": ["The box.", "No.", "The box."]}, "wrong.json")
    await run(pipe_dataset, f"replay:{right}", tmp_path / "s.sqlite", "right")
    await run(pipe_dataset, f"replay:{wrong}", tmp_path / "s.sqlite", "wrong")
    ok, bad = turns(tmp_path / "s.sqlite", "right"), turns(tmp_path / "s.sqlite", "wrong")
    assert ok[("fb-1", 1)]["prompt"] == "Yes, she did not see Ben move it.\n\nIs the ball in the basket now?"
    assert ok[("fb-1", 1)]["feedback_kind"] == "right"
    assert bad[("fb-1", 0)]["correct"] is False
    assert bad[("fb-1", 1)]["prompt"].startswith("Remember, Ana was outside when Ben moved it.\n\n")
    assert bad[("fb-1", 1)]["feedback_kind"] == "wrong"
    assert ok[("fb-1", 2)]["prompt"] == "Where is the ball really, the basket or the box?"  # no feedback


async def test_correctness_only_and_no_feedback(pipe_dataset: Path, replay_file, tmp_path: Path) -> None:
    wrong = replay_file({"dd-1": DD_RIGHT, "fb-1": ["The box.", "No.", "The box."]})
    db = tmp_path / "s.sqlite"
    await run(pipe_dataset, f"replay:{wrong}", db, "c", feedback="correctness")
    await run(pipe_dataset, f"replay:{wrong}", db, "n", feedback="none")
    c, n = turns(db, "c"), turns(db, "n")
    # the paper's control wording (Appendix I) replaces right/wrong feedback
    assert c[("fb-1", 1)]["prompt"] == "Your answer is wrong.\n\nIs the ball in the basket now?"
    assert c[("fb-1", 1)]["feedback_kind"] == "correctness-wrong"
    assert c[("fb-1", 2)]["prompt"].startswith("Your answer is right.") is False  # turn 2 carries no feedback
    assert n[("fb-1", 1)]["prompt"] == "Is the ball in the basket now?"
    # answer-keyed feedback carries a story fact the next question needs: it stays in every condition
    for condition in (c, n):
        assert condition[("dd-1", 1)]["prompt"].startswith("So Kim likes the cookie.\n\nKim likes")
        assert condition[("dd-1", 1)]["feedback_kind"] == "answer:Pear"
    with Store(db) as store:
        assert store.get_run("c").settings.stored["correctness_texts"] == {"right": "Your answer is right.",
                                                                    "wrong": "Your answer is wrong."}


async def test_correctness_texts_are_configurable_and_recorded(pipe_dataset: Path, replay_file,
                                                               tmp_path: Path) -> None:
    from commet.engine.conversation import CorrectnessTexts

    replies = replay_file({"dd-1": DD_RIGHT, "fb-1": ["The basket.", "No.", "The box."]})
    db = tmp_path / "s.sqlite"
    texts = CorrectnessTexts(right="Correct.", wrong="Incorrect.")
    await run(pipe_dataset, f"replay:{replies}", db, "own", feedback="correctness", correctness_texts=texts)
    assert turns(db, "own")[("fb-1", 1)]["prompt"] == "Correct.\n\nIs the ball in the basket now?"
    with Store(db) as store:
        assert store.get_run("own").settings.stored["correctness_texts"] == {"right": "Correct.", "wrong": "Incorrect."}


async def test_story_accuracy_is_all_or_nothing(pipe_dataset: Path, replay_file, tmp_path: Path) -> None:
    replies = replay_file({"dd-1": DD_RIGHT, "fb-1": ["The basket.", "No.", "In the basket."]})
    db = tmp_path / "s.sqlite"
    await run(pipe_dataset, f"replay:{replies}", db)
    with Store(db) as store:
        metrics = run_metrics(store, store.get_run("r"))
    assert (metrics.questions.correct, metrics.questions.total) == (4, 5)
    assert (metrics.stories.correct, metrics.stories.total) == (1, 2)
    assert metrics.per_category["Belief"].correct == 0 and metrics.per_category["Desire"].correct == 1


UNDECIDED_FIRST = {"dd-1": DD_RIGHT, "fb-1": ["She will look where she left it.", "No.", "The box."]}


async def test_undecided_is_never_correct_and_is_counted(pipe_dataset: Path, replay_file, tmp_path: Path) -> None:
    replies = replay_file(UNDECIDED_FIRST)
    db = tmp_path / "s.sqlite"
    await run(pipe_dataset, f"replay:{replies}", db, undecided_feedback="wrong")
    t = turns(db)
    assert t[("fb-1", 0)]["correct"] is None
    assert t[("fb-1", 1)]["feedback_kind"] == "wrong-undecided"
    with Store(db) as store:
        metrics = run_metrics(store, store.get_run("r"))
    assert metrics.undecided_turns == 1 and metrics.stories.correct == 1


@pytest.mark.parametrize(("policy", "fb_turns", "turn_1_prompt", "kind", "status"), [
    ("wrong", 3, "Remember, Ana was outside when Ben moved it.\n\nIs the ball in the basket now?",
     "wrong-undecided", "done"),
    ("skip", 3, "Is the ball in the basket now?", "skipped-undecided", "done"),
    ("stop", 1, None, None, "stopped"),
])
async def test_undecided_feedback_policy_in_transcripts(pipe_dataset: Path, replay_file, tmp_path: Path, policy: str,
                                                        fb_turns: int, turn_1_prompt: str | None, kind: str | None,
                                                        status: str) -> None:
    """After an undecided answer, the turn whose feedback depends on it follows the run's recorded policy."""
    replies = replay_file(UNDECIDED_FIRST)
    db = tmp_path / "s.sqlite"
    await run(pipe_dataset, f"replay:{replies}", db, undecided_feedback=policy)
    with Store(db) as store:
        record = store.get_run("r")
        assert record is not None and record.settings.undecided_feedback == policy
        transcript = [r.columns() for r in store.turn_rows(record.id) if r.story_id == "fb-1"]
        story = next(r.columns() for r in store.story_rows(record.id) if r.story_id == "fb-1")
        model_calls = store.db.execute("SELECT COUNT(*) FROM call_log WHERE run_id = ? AND kind = 'model' "
                                       "AND story_id = 'fb-1'", (record.id,)).fetchone()[0]
    assert len(transcript) == fb_turns and model_calls == fb_turns
    assert transcript[0]["outcome"] == "undecided"
    assert story["status"] == status and (story["correct"] is None) == (status == "stopped")
    if turn_1_prompt is not None:
        assert transcript[1]["prompt"] == turn_1_prompt and transcript[1]["feedback_kind"] == kind
    # a stopped story is finished: running again makes no call and does not ask turn 1
    await run(pipe_dataset, f"replay:{replies}", db, undecided_feedback=policy)
    assert len([t for t in turns(db) if t[0] == "fb-1"]) == fb_turns


async def test_images_on_sends_the_prepared_picture_and_records_its_hash(pipe_dataset: Path, replay_file,
                                                                          tmp_path: Path) -> None:
    replies = replay_file({"dd-1": DD_RIGHT, "fb-1": ["The basket.", "No.", "The box."]})
    db = tmp_path / "s.sqlite"
    await run(pipe_dataset, f"replay:{replies}", db, "on")
    await run(pipe_dataset, f"replay:{replies}", db, "off", images="off")
    dataset = read_storyturns(pipe_dataset)
    prepared, _ = prepare_image(dataset.image_bytes("snack:table:1"))
    with Store(db) as store:
        on = store.db.execute("SELECT images_json FROM turns t JOIN runs r ON r.id = t.run_id "
                              "WHERE r.name = 'on' AND story_id = 'dd-1' AND turn = 0").fetchone()[0]
        requests = [json.loads(r[0]) for r in store.db.execute("SELECT request_json FROM model_calls")]
    assert json.loads(on) == [{"id": "snack:table:1", "sha256": hashlib.sha256(prepared).hexdigest()}]
    assert turns(db, "off")[("dd-1", 0)]["images"] == []
    sent_images = [p for req in requests for m in req["messages"] for p in m["parts"] if "image" in p]
    assert sent_images and all(p["sha256"] == hashlib.sha256(prepared).hexdigest() for p in sent_images)


async def test_concurrent_stories_really_interleave_and_give_the_same_results(pipe_dataset: Path,
                                                                              tmp_path: Path) -> None:
    """With concurrency 16 the offline baseline's stories run side by side (they yield to the loop):
    the recorded call order shows many stories started before the first one ended, and the
    results equal a one-at-a-time run."""
    from commet.engine import Engine
    from commet.format import Dataset
    from commet.judges.rules import RulesJudge
    from commet.models.registry import create_model

    base = read_storyturns(pipe_dataset)
    many = Dataset(storyturns=[st.model_copy(update={"id": f"{st.id}-{i}", "turns": [
        st.turns[0].model_copy(update={"story": f"{st.turns[0].story} ({i})"}), *st.turns[1:]]})
        for i in range(20) for st in base], name="many", root=base.root)  # no two stories share a call
    results, orders = [], []
    for concurrency in (1, 16):
        db = tmp_path / f"c{concurrency}.sqlite"
        # slots start together (no start interval): the order is deterministic. No pictures: a story
        # that shows one makes its first call once a thread has made the picture, a moment later
        with Store(db) as store:
            await Engine(model=create_model("baseline:random-option?seed=7"), judge=RulesJudge(), store=store,
                         dataset=many, concurrency=concurrency, start_interval=0,
                         settings=EvalSettings(images="off")).run("r")
        results.append(sorted((k, v["response"], v["correct"]) for k, v in turns(db).items()))
        with Store(db) as store:
            orders.append([(r["story_id"], r["turn"]) for r in store.db.execute(
                "SELECT story_id, turn FROM call_log WHERE kind = 'model' ORDER BY id")])
    assert results[0] == results[1]
    assert len({r[1] for r in results[0]}) > 1  # the random baseline really varies
    sequential, interleaved = orders
    first_story = sequential[0][0]
    assert [s for s, _ in sequential[:len(base.storyturns[0].turns)]] == [first_story] * 2  # one story at a time

    def started_before_first_finished(order: list[tuple[str, int]]) -> int:
        first = order[0][0]
        last_turn_of_first = max(i for i, (story, _) in enumerate(order) if story == first)
        return len({story for story, _ in order[:last_turn_of_first]})

    assert started_before_first_finished(sequential) == 1
    assert started_before_first_finished(interleaved) >= 16  # all 16 slots had a story in flight


async def test_repeat_of_a_finished_run_makes_no_call(pipe_dataset: Path, replay_file, tmp_path: Path) -> None:
    replies = replay_file({"dd-1": DD_RIGHT, "fb-1": ["The basket.", "No.", "The box."]})
    db = tmp_path / "s.sqlite"
    first = await run(pipe_dataset, f"replay:{replies}", db)
    again = await run(pipe_dataset, f"replay:{replies}", db)
    assert first.progress.model_calls == 5
    assert again.progress.model_calls == 0 and again.progress.cached_calls == 0
    other_name = await run(pipe_dataset, f"replay:{replies}", db, "same-settings-new-name")
    assert other_name.progress.model_calls == 0 and other_name.progress.cached_calls == 5


async def test_same_name_other_settings_is_refused(pipe_dataset: Path, replay_file, tmp_path: Path) -> None:
    replies = replay_file({"dd-1": DD_RIGHT, "fb-1": ["The basket.", "No.", "The box."]})
    await run(pipe_dataset, f"replay:{replies}", tmp_path / "s.sqlite")
    with pytest.raises(RunConflictError):
        await run(pipe_dataset, f"replay:{replies}", tmp_path / "s.sqlite", images="off")


async def test_failed_call_is_recorded_not_scored_wrong(pipe_dataset: Path, replay_file, tmp_path: Path) -> None:
    replies = replay_file({"dd-1": DD_RIGHT, "fb-1": ["The basket."]})  # turn 1 missing -> the call fails
    db = tmp_path / "s.sqlite"
    summary = await run(pipe_dataset, f"replay:{replies}", db)
    assert summary.progress.errors == 1
    with Store(db) as store:
        metrics = run_metrics(store, store.get_run("r"))
    assert metrics.failed_stories == 1 and metrics.failed_turns == 1
    assert (metrics.stories.correct, metrics.stories.total) == (1, 1)
    assert turns(db)[("fb-1", 1)]["error"].startswith("replay file has no reply")


def test_cli_eval_export_and_report(pipe_dataset: Path, replay_file, tmp_path: Path) -> None:
    replies = replay_file({"dd-1": DD_RIGHT, "fb-1": ["The basket.", "No.", "The box."]})
    db, out = tmp_path / "s.sqlite", tmp_path / "export.jsonl"
    runner = CliRunner()
    result = runner.invoke(app, ["eval", "--model", f"replay:{replies}", "--dataset", str(pipe_dataset), "--db",
                                 str(db), "--run", "cli", "--quiet"])
    assert result.exit_code == 0, result.output
    assert "100.0" in result.output
    result = runner.invoke(app, ["export", "--db", str(db), "--run", "cli", "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 5
    assert set(lines[0]) >= {"story_id", "turn", "prompt", "images", "response", "expected", "correct", "branch",
                             "judge"}
    assert lines[0]["images"] == ["snack:table:1"] and lines[0]["expected"] == ["Pear", "Cookie"]
    result = runner.invoke(app, ["report", "--db", str(db), "--format", "markdown"])
    assert "| cli | replay:replies.json | on | original | 2 | 100.00 [15.81, 100.00] (2/2) |" in result.output
    result = runner.invoke(app, ["runs", "--db", str(db)])
    assert "cli" in result.output and "done" in result.output


@pytest.mark.parametrize("args", [
    ["eval", "--model", "nosuch:thing"],
    ["eval", "--model", "baseline"],
    ["eval", "--model", "baseline:first-option", "--dataset", "/no/such/dataset.jsonl"],
    ["eval", "--model", "replay:/no/such/replies.json"],
])
def test_bad_input_is_one_line_and_exit_2(args: list[str], tmp_path: Path) -> None:
    result = CliRunner().invoke(app, [*args, "--db", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert result.output.startswith("error: ") or ": error: " in result.output  # a dataset problem is located


async def test_identical_stories_with_different_replays_are_not_conflated(tmp_path: Path, replay_file) -> None:
    from commet.format import Dataset
    from commet.format.model import StoryTurn, Turn

    turn = Turn(story="A cat.", question="Is it a cat?", answers=["Yes"])
    stories = [StoryTurn(id=i, task="sarcasm", category="NLCE", turns=[turn]) for i in ("a", "b")]
    replies = replay_file({"a": ["Yes."], "b": ["No."]})
    db = tmp_path / "s.sqlite"
    await evaluate_async(f"replay:{replies}", Dataset(storyturns=stories, name="twins"), db=db, run="r")
    t = turns(db)
    assert (t[("a", 0)]["correct"], t[("b", 0)]["correct"]) == (True, False)


async def test_worker_processes_give_the_same_results_and_resume(pipe_dataset: Path, tmp_path: Path) -> None:
    from commet.format import Dataset

    base = read_storyturns(pipe_dataset)
    many = Dataset(storyturns=[st.model_copy(update={"id": f"{st.id}-{i}"}) for i in range(12) for st in base],
                   name="many", root=base.root)
    seen: list[int] = []
    one = await evaluate_async("baseline:random-option?seed=3", many, db=tmp_path / "one.sqlite", run="r")
    two = await evaluate_async("baseline:random-option?seed=3", many, db=tmp_path / "two.sqlite", run="r",
                               workers=2, on_progress=lambda p: seen.append(p.stories_done))
    assert turns(tmp_path / "one.sqlite") == turns(tmp_path / "two.sqlite")
    for summary in (one, two):  # identical stories share calls once the first is stored
        assert summary.progress.model_calls + summary.progress.cached_calls == 60
        assert summary.progress.cached_calls > 0
    assert seen and seen[-1] == 24 and two.run.status == "done"
    again = await evaluate_async("baseline:random-option?seed=3", many, db=tmp_path / "two.sqlite", run="r",
                                 workers=2)
    assert again.progress.model_calls == 0
    with pytest.raises(ValueError, match="spec strings"):
        from commet.models.baseline import FirstOptionBaseline

        await evaluate_async(FirstOptionBaseline(), many, db=tmp_path / "x.sqlite", workers=2)


async def test_a_trial_with_limit_does_not_block_the_full_run(pipe_dataset: Path, tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    trial = await evaluate_async("baseline:first-option", pipe_dataset, db=db, settings=EvalSettings(limit=1))
    full = await evaluate_async("baseline:first-option", pipe_dataset, db=db)
    assert ",limit=1,cfg=" in trial.run.name and trial.run.story_count == 1
    assert full.run.story_count == 2 and full.progress.cached_calls == 2  # the trial's calls are reused


async def test_the_judge_sees_what_the_model_saw(pipe_dataset: Path, replay_file, tmp_path: Path) -> None:
    from commet.judges.base import Judge, JudgeRequest, Verdict
    from commet.judges.rules import RulesJudge

    class Recording(Judge):
        name = "recording"
        cacheable = False

        def __init__(self) -> None:
            self.requests: list[JudgeRequest] = []

        async def judge(self, request: JudgeRequest) -> Verdict:
            self.requests.append(request)
            return RulesJudge().decide(request)

    judge = Recording()
    replies = replay_file({"dd-1": DD_RIGHT, "fb-1": ["The box.", "No.", "The box."]})
    await evaluate_async(f"replay:{replies}", pipe_dataset, judge=judge, db=tmp_path / "s.sqlite", concurrency=1)
    second = next(r for r in judge.requests if r.story_id == "fb-1" and r.turn == 1)
    assert second.feedback == "Remember, Ana was outside when Ben moved it."  # labelled as feedback
    assert second.story == ""  # the turn has no story text of its own
    assert second.context == ("Ana puts her ball in the basket and goes outside. Ben moves the ball to the box."
                              "\n\nWhere will Ana look for her ball, the basket or the box?\nReply: The box.",)


async def test_a_judge_that_fails_leaves_the_run_incomplete_and_a_rerun_retries_it(pipe_dataset: Path,
                                                                                    replay_file, tmp_path: Path) -> None:
    """'done' means every StoryTurn scored: a judge call that failed for good leaves its turn undecided, the
    run 'incomplete' with the failure listed; the same run with the judge working again completes."""
    from commet.judges.base import Judge, JudgeRequest, Verdict
    from commet.judges.rules import RulesJudge

    class Flaky(Judge):
        name = "flaky-judge"

        def __init__(self) -> None:
            self.down = True

        async def judge(self, request: JudgeRequest) -> Verdict:
            if self.down and request.story_id == "fb-1" and request.turn == 1:
                return Verdict("undecided", rationale="judge unavailable", judge=self.name,
                               error="HTTP 503 from judge", error_kind="judge_http_503")
            return await RulesJudge().judge(request)

    replies = replay_file({"dd-1": DD_RIGHT, "fb-1": ["The basket.", "No.", "The box."]})
    db, judge = tmp_path / "s.sqlite", Flaky()
    first = await evaluate_async(f"replay:{replies}", pipe_dataset, judge=judge, db=db, run="r")
    assert first.run.status == "incomplete" and not first.results.complete
    assert (first.results.stories_done, first.results.stories_scored) == (2, 1)
    [failure] = first.results.failures
    assert (failure.kind, failure.what, failure.turns, failure.first_story, failure.first_turn) == \
        ("judge_http_503", "judge", 1, "fb-1", 1)
    assert failure.first_message == "HTTP 503 from judge"
    judge.down = False
    second = await evaluate_async(f"replay:{replies}", pipe_dataset, judge=judge, db=db, run="r")
    assert second.run.status == "done" and second.results.complete and second.results.failures == []
    assert second.progress.model_calls == 0 and second.progress.cached_calls == 3  # only fb-1 again, from the store
    assert second.results.questions_right == 5


async def test_a_judge_failure_is_listed_with_its_latest_message_on_every_failed_turn(pipe_dataset: Path,
                                                                                      replay_file,
                                                                                      tmp_path: Path) -> None:
    """Each failed turn's message is the last failed judge call of that turn (a rerun while the judge is still down
    adds a newer one); turns of several stories and kinds are counted apart."""
    from commet.judges.base import Judge, JudgeRequest, Verdict

    class Down(Judge):
        name = "down-judge"
        tries = 0

        async def judge(self, request: JudgeRequest) -> Verdict:
            kind = "judge_http_503" if request.story_id == "fb-1" else "judge_timeout"
            return Verdict("undecided", rationale="judge unavailable", judge=self.name,
                           error=f"{kind} try {self.tries} at {request.story_id}/{request.turn}", error_kind=kind)

    replies = replay_file({"dd-1": DD_RIGHT, "fb-1": ["The basket.", "No.", "The box."]})
    db, judge = tmp_path / "s.sqlite", Down()
    for tries in (1, 2):
        judge.tries = tries
        summary = await evaluate_async(f"replay:{replies}", pipe_dataset, judge=judge, db=db, run="r")
    failures = {f.kind: f for f in summary.results.failures}
    assert set(failures) == {"judge_http_503", "judge_timeout"}
    first = failures["judge_http_503"]
    assert first.what == "judge" and first.first_story == "fb-1"
    assert first.first_message == f"judge_http_503 try 2 at fb-1/{first.first_turn}"
    assert failures["judge_timeout"].first_message.startswith("judge_timeout try 2 at dd-1/")


async def test_a_model_call_that_fails_leaves_the_run_incomplete_until_a_rerun_scores_it(
        pipe_dataset: Path, tmp_path: Path) -> None:
    from commet.models.base import Model, ModelCallError, ModelRequest, ModelResponse

    class Down(Model):
        spec = "test:down-once"

        def __init__(self) -> None:
            self.down = True

        async def generate(self, request: ModelRequest) -> ModelResponse:
            if self.down and request.tags.get("story_id") == "dd-1":
                raise ModelCallError("HTTP 401 from provider: Incorrect API key provided: ***", kind="auth",
                                     status=401)
            return ModelResponse(text="The basket.")

    model, db = Down(), tmp_path / "s.sqlite"
    first = await evaluate_async(model, pipe_dataset, db=db, run="r")
    assert first.run.status == "incomplete" and first.results.stories_failed == 1
    assert [(f.kind, f.what, f.turns) for f in first.results.failures] == [("auth", "model", 1)]
    model.down = False

    def calls_for(story: str) -> int:
        with Store(db) as store:
            return store.db.execute("SELECT COUNT(*) FROM call_log WHERE story_id = ?", (story,)).fetchone()[0]

    fb_calls = calls_for("fb-1")
    second = await evaluate_async(model, pipe_dataset, db=db, run="r")
    assert second.run.status == "done" and second.results.failures == [] and second.results.stories_failed == 0
    assert second.progress.model_calls >= 1 and calls_for("fb-1") == fb_calls  # only dd-1 ran again


async def test_stories_that_never_wait_still_let_the_loop_run(tmp_path: Path) -> None:
    """A story answered from the store never waits: between two of them the engine lets the event loop
    run (commits, Ctrl-C). (A story that waited for answers has let it run already and goes straight on
    to the next: the bench's figures show that, not this test.)"""
    import asyncio

    from commet.sources import load_dataset

    sample = load_dataset("sample")
    db = tmp_path / "s.sqlite"
    settings = EvalSettings(images="off")
    await evaluate_async("baseline:first-option", sample, judge="rules", db=db, run="first", settings=settings)
    progress = []
    seen: set[int] = set()  # stories done, as each pass of the loop finds them
    stop = False

    def tick() -> None:
        if progress:
            seen.add(progress[-1].stories_done)
        if not stop:
            asyncio.get_running_loop().call_soon(tick)

    asyncio.get_running_loop().call_soon(tick)
    again = await evaluate_async("baseline:first-option", sample, judge="rules", db=db, run="again",
                                 settings=settings, concurrency=2, on_progress=progress.append)
    stop = True
    assert again.progress.model_calls == 0 and again.progress.cached_calls > 0  # every answer from the store
    assert again.results.stories_done == len(sample.storyturns)
    assert len(seen) >= len(sample.storyturns) // 2  # the loop ran between a slot's stories
