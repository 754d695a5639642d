"""``commet eval --finish RUN --judge SPEC``: StoryTurns stopped at an undecided answer continue from it, counted by hand.

Five StoryTurns, each question naming its two options, so the rules judge decides "The apple." (right) and "The pear."
(wrong) and leaves "Hmm, hard to say really." undecided. Every later turn carries right/wrong feedback, so under the
default ``--undecided-feedback stop`` a StoryTurn ends at an undecided answer that is not its last:

    a: apple, apple, apple  -> done, right            b: hmm | (pear, apple never asked)  -> stopped after 1 answer
    c: apple, hmm | (apple)  -> stopped after 2        d: pear, pear  -> done, wrong
    e: apple, hmm           -> done, holding an undecided last answer

The finishing judge is ``llm-only`` behind a real OpenAI-compatible server on 127.0.0.1 that says "hmm" is right
(and grades apple/pear as the rules do), so every answer it is asked about shows in its request count.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.cli import app
from commet.engine import evaluate_async
from commet.format.dataset import Dataset
from commet.format.model import Feedback, StoryTurn, Turn
from commet.reports.rundata import load_run
from commet.sources import load_dataset
from commet.store import Store, short_ids
from commet.store.records import StoryStatus
from tests.judge_server import JudgeServer, prompt_text, verdict

R, W, U = "The apple.", "The pear.", "Hmm, hard to say really."
QUESTION = "Which fruit, the apple or the pear?"
REPLIES = {"a": [R, R, R], "b": [U, W, R], "c": [R, U, R], "d": [W, W], "e": [R, U]}
RUN = "rules-run"


def _dataset(folder: Path) -> Dataset:
    def story(story_id: str, turns: int) -> StoryTurn:
        made = [Turn(story=f"Story {story_id}: an apple and a pear.", question=QUESTION, answers=["The apple"])]
        made += [Turn(feedback=Feedback(right="Good.", wrong="Look again: it is the apple."), question=QUESTION,
                      answers=["The apple"]) for _ in range(turns - 1)]
        return StoryTurn(id=story_id, task="false_belief_location", category="Belief", turns=made)

    Dataset([story(s, len(r)) for s, r in REPLIES.items()], name="finish").save(folder)
    return load_dataset(folder)


def decide(model: str, answer: str, expected: list[str], question: str) -> str:
    return verdict(answer != W, 1 if answer != W else None)


@pytest.fixture()
def world(tmp_path: Path) -> tuple[Path, Path, Path]:
    folder = tmp_path / "dataset"
    data = _dataset(folder)
    replies = tmp_path / "r.json"
    replies.write_text(json.dumps(REPLIES))
    db = tmp_path / "results.sqlite"
    summary = asyncio.run(evaluate_async(f"replay:{replies}", data, judge="rules", db=db, run=RUN))
    assert summary.progress.model_calls == 3 + 1 + 2 + 2 + 2  # b and c stopped: 10 calls
    return folder, replies, db


runner = CliRunner()


def test_the_report_names_the_command_that_finishes_stopped_storyturns(world: tuple[Path, Path, Path]) -> None:
    _, _, db = world
    report = runner.invoke(app, ["report", "--db", str(db), "--table", "summary", "--format", "markdown"])
    text = " ".join(report.stdout.split())
    run_id = short_ids([RUN])[RUN]  # the command names the run by its short id: short enough to paste whole
    assert f"To decide them and ask the stopped stories' remaining questions: " \
           f"commet eval --db {db} --finish {run_id} --judge openai:gpt-4o" in text
    assert "2 stories stopped at an undecided answer" in text


def test_finish_continues_from_the_undecided_answer_with_new_calls_only_after_it(
        world: tuple[Path, Path, Path]) -> None:
    folder, replies, db = world
    with JudgeServer(decide) as server:
        judge = f"llm-only:{server.spec('finisher')}"
        result = runner.invoke(app, ["eval", "--db", str(db), "--finish", RUN, "--judge", judge, "--model",
                                     f"replay:{replies}", "--quiet"])
        assert result.exit_code == 0, result.output
        # the judge is asked about what RUN left undecided (b's 1st, c's 2nd, e's 2nd answer) and about the answers to
        # the questions RUN never asked (b's 2nd and 3rd, c's 3rd): 6 requests; the 9 verdicts RUN decided are kept
        assert server.calls == 6
        answered = sorted(prompt_text(r.json["messages"][-1]["content"]).split("Answer to grade:\n<<<\n")[1][:-4]
                          for r in server.fake.requests)
        assert answered == sorted([U, W, R, U, R, U])
    name = f"{RUN}~finish:llm:openai:finisher@judge-v2"
    assert f"run {name} (id {short_ids([name])[name]}) finishes run {short_ids([RUN])[RUN]}: this time 3 model calls, 10 answered from the store" in " ".join(
        result.output.split())
    with Store(db) as store:
        finished = store.get_run(name)
        assert finished is not None and finished.settings.stored["finished_from"] == RUN
        assert finished.judge == "rules then llm:openai:finisher@judge-v2"
        stories = {s.story_id: s for s in store.story_rows(finished.id)}
        turns = {(t.story_id, t.turn): t for t in store.turn_rows(finished.id)}
    # every StoryTurn is done now: a right; b: hmm (right now), pear (wrong), apple -> wrong; c: apple, hmm (right),
    # apple -> right; d wrong; e: apple, hmm (right) -> right. Story accuracy 3/5 (RUN: 1/5, up to 4/5 if undecided
    # were right); answers right 3 + 2 + 3 + 0 + 2 = 10 of 13
    assert {s: (row.status, row.correct) for s, row in stories.items()} == {
        "a": (StoryStatus.done, True), "b": (StoryStatus.done, False), "c": (StoryStatus.done, True),
        "d": (StoryStatus.done, False), "e": (StoryStatus.done, True)}
    assert len(turns) == 13 and sum(t.correct is True for t in turns.values()) == 10
    # kept verdicts keep their judge, the new ones are the finisher's; b's 2nd turn shows the "right" feedback (its
    # first answer is right now), its 3rd the "wrong" one
    assert turns[("a", 0)].judge == "rules" and turns[("b", 0)].judge == "llm:openai:finisher@judge-v2"
    assert turns[("b", 1)].feedback_kind == "right" and turns[("b", 2)].feedback_kind == "wrong"
    # running it again makes no call at all (a resumed run)
    with JudgeServer(decide) as server:
        again = runner.invoke(app, ["eval", "--db", str(db), "--finish", RUN, "--judge",
                                    f"llm-only:{server.spec('finisher')}", "--model", f"replay:{replies}", "--quiet"])
        assert again.exit_code == 0, again.output
        assert server.calls == 0 and "is already complete: all 5 StoryTurns were scored earlier; nothing was run" \
            in " ".join(again.output.split())


def test_finish_refuses_what_it_cannot_do(world: tuple[Path, Path, Path], tmp_path: Path) -> None:
    _, replies, db = world
    no_judge = runner.invoke(app, ["eval", "--db", str(db), "--finish", RUN])
    assert no_judge.exit_code == 2 and "--finish needs --judge" in no_judge.output
    settings = runner.invoke(app, ["eval", "--db", str(db), "--finish", RUN, "--judge", "rules", "--images", "off"])
    assert settings.exit_code == 2 and "drop --images" in settings.output
    other = tmp_path / "other.json"
    other.write_text(json.dumps({s: [R] * len(r) for s, r in REPLIES.items()}))
    wrong_model = runner.invoke(app, ["eval", "--db", str(db), "--finish", RUN, "--judge", "rules", "--model",
                                      f"replay:{other}"])
    assert wrong_model.exit_code == 2 and "is not the model of run" in wrong_model.output
    no_model = runner.invoke(app, ["eval", "--db", str(db), "--finish", RUN, "--judge", "rules"])
    assert no_model.exit_code == 2 and "give --model as the run's eval command did" in no_model.output
    unknown = runner.invoke(app, ["eval", "--db", str(db), "--finish", "nosuch", "--judge", "rules"])
    assert unknown.exit_code == 2 and "no run named 'nosuch'" in unknown.output
    done_db = tmp_path / "done.sqlite"
    asyncio.run(evaluate_async(f"replay:{other}", load_dataset(world[0]), judge="rules", db=done_db, run="all-right"))
    nothing = runner.invoke(app, ["eval", "--db", str(done_db), "--finish", "all-right", "--judge", "rules",
                                  "--model", f"replay:{other}"])
    assert nothing.exit_code == 2 and "nothing to finish" in nothing.output
    with Store(db) as store:
        assert [r.name for r in store.runs()] == [RUN]  # nothing was written


def test_finish_reads_a_table_again_with_the_columns_the_run_recorded(tmp_path: Path) -> None:
    """A run of a table read with --columns is finished without --dataset: the table is read as the run read it."""
    from tests.hub_fixtures import _turn_rows

    rows = _turn_rows(_dataset(tmp_path / "canonical"))
    (tmp_path / "table" / "data").mkdir(parents=True)
    (tmp_path / "table" / "data" / "test.jsonl").write_text(  # a column no reader can guess: question as "q"
        "".join(json.dumps({("q" if key == "question" else key): value for key, value in row.items()}) + "\n"
                for row in rows))
    data = load_dataset(tmp_path / "table", columns="question=q")
    replies = tmp_path / "r.json"
    replies.write_text(json.dumps(REPLIES))
    db = tmp_path / "results.sqlite"
    asyncio.run(evaluate_async(f"replay:{replies}", data, judge="rules", db=db, run=RUN))
    with JudgeServer(decide) as server:
        result = runner.invoke(app, ["eval", "--db", str(db), "--finish", RUN, "--judge",
                                     f"llm-only:{server.spec('finisher')}", "--model", f"replay:{replies}", "--quiet"])
    assert "question=q" in result.output and "cannot tell which columns" not in result.output, result.output
    with Store(db) as store:
        finished = store.get_run(f"{RUN}~finish:llm:openai:finisher@judge-v2")
    assert finished is not None and finished.settings.recorded.finished_from == RUN
    assert finished.settings.recorded.dataset_columns == "question=q"


def test_finish_refuses_a_judge_that_decides_nothing_new(world: tuple[Path, Path, Path]) -> None:
    """--judge rules (or the run's own judge) gives the verdicts the run already has: refused, nothing written."""
    _, replies, db = world
    for judge in ("rules",):
        same = runner.invoke(app, ["eval", "--db", str(db), "--finish", RUN, "--judge", judge, "--model",
                                   f"replay:{replies}"])
        assert same.exit_code == 2 and "decides nothing that run" in same.output, same.output
    with Store(db) as store:
        assert [r.name for r in store.runs()] == [RUN]


def test_finish_with_a_failing_judge_says_so_and_counts_it(world: tuple[Path, Path, Path]) -> None:
    """A judge whose server cannot be reached: exit 3 with the failure and what to do, the calls that failed
    counted in the run line, the StoryTurns left as not scored in every figure, and no placeholder judge spec."""
    import socket

    _, replies, db = world
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = runner.invoke(app, ["eval", "--db", str(db), "--finish", RUN, "--judge",
                                 f"llm-only:openai:finisher?base_url=http://127.0.0.1:{port}/v1&max_attempts=1",
                                 "--model", f"replay:{replies}", "--quiet"])
    text = " ".join(result.output.split())
    assert result.exit_code == 3, text
    failed = int(re.search(r"(\d+) calls? failed for good", text).group(1))
    assert failed > 0 and "0 errors" not in text and "panel:A,B,C" not in text
    found = re.search(r"incomplete: (\d+) of 5 StoryTurns not scored \((\d+) with a call that failed for good", text)
    assert found and 0 < int(found.group(2)) <= failed, text
    assert "to do: the judge's server cannot be reached" in text
    not_scored = int(found.group(1))
    assert re.search(rf"│ Not scored │ {not_scored} │", text)  # the finishing run's table counts the same
    with Store(db) as store:
        [finished] = [r for r in store.runs() if r.name != RUN]
        assert load_run(store, finished).counts.not_scored == not_scored
