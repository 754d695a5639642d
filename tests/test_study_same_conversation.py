"""A volunteer meets the conversation a model with the same answers meets, turn by turn (issue 45, point 2).

Volunteers answer a crafted study through the real app (in process): typed answers the rules judge
leaves undecided (one before feedback that rests on it, one before a turn without such feedback), a
wrong answer followed by a correction, answer-keyed feedback. The same answers are then given by a
replay model to ``commet eval``'s engine with its defaults (rules judge, undecided: stop). Every turn's
message, feedback kind, verdict and score, and every story's status (done or stopped) must agree. A
study built with ``--undecided-feedback skip`` must not agree: the comparison can tell.
"""

from __future__ import annotations

import asyncio
import json
import random
import socket
from pathlib import Path

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from commet.apps.study.app import create_app
from commet.apps.study.build import TASK_GROUPS, adjacent_pairs, build_study, load_study, spread
from commet.apps.study.db import StudyDB
from commet.cli import app as cli
from commet.conditions import UndecidedFeedback
from commet.engine import evaluate_async
from commet.format import Dataset, StoryTurn, Turn
from commet.format.model import AnswerFeedback, Feedback
from commet.sources import load_dataset
from commet.store import Store
from tests.test_study_export import answer_all

BALL = StoryTurn(id="ball", task="false_belief_location", category="Belief", turns=[
    Turn(story="Ana puts her ball in the basket and goes out. Ben moves it to the box.",
         question="Where will Ana look for her ball, the basket or the box?", answers=["The basket"]),
    Turn(feedback=Feedback(right="Yes, she did not see Ben move it.", wrong="Remember, Ana was outside."),
         question="Where is the ball really, the basket or the box?", answers=["The box"]),
    Turn(question="Did Ana see Ben move the ball, yes or no?", answers=["No"])])
SNACK = StoryTurn(id="snack", task="diverse_desire", category="Desire", turns=[
    Turn(story="There is an apple and a cookie.", question="Which snack do you like best, the apple or the cookie?",
         answers=["Apple", "Cookie"]),
    Turn(feedback=Feedback(by_answer=[AnswerFeedback(answer="Apple", text="So you like the apple."),
                                      AnswerFeedback(answer="Cookie", text="So you like the cookie.")]),
         story="Sam likes the other snack better.", question="Which snack will Sam pick, the apple or the cookie?",
         answers=["Cookie", "Apple"]),
    Turn(feedback=Feedback(right="Yes! Sam picks the snack he likes.", wrong="Actually, Sam picks the other one."),
         question="Is Sam happy with his snack, yes or no?", answers=["Yes"])])
CUP = StoryTurn(id="cup", task="true_belief_action", category="Intention", turns=[
    Turn(story="Lea has a red cup and a blue cup. She says: I will drink from the red cup.",
         question="Which cup will Lea drink from, the red one or the blue one?", answers=["The red one"]),
    Turn(story="Tom puts both cups on the shelf while Lea watches.",  # no feedback: an undecided answer goes on
         question="Where will Lea look for her cup, the shelf or the table?", answers=["The shelf"]),
    Turn(feedback=Feedback(right="That's right.", wrong="She saw Tom move them."),
         question="Is Lea surprised to find her cup on the shelf, yes or no?", answers=["No"])])
STORIES = [BALL, SNACK, CUP]
ORDER = ["ball", "snack", "cup"]
#: What two volunteers type: undecided answers (stop, go on), wrong answers and corrections, keyed feedback.
PEOPLE = [
    {"ball": ["She'll check where she left it", "The box", "No"],  # undecided before right/wrong feedback: stops
     "snack": ["The cookie", "The apple", "Yes"],
     "cup": ["Hmm, hard to say", "The shelf", "Yes"]},  # undecided, no feedback next: goes on; last one wrong
    {"ball": ["The box", "The box", "No"],  # wrong, then the correction
     "snack": ["The apple", "The apple", "Yes"],  # keyed feedback, then wrong and corrected
     "cup": ["The red one", "I think the shelf, or maybe the table", "No"]},  # undecided before feedback: stops
]


def dataset(tmp_path: Path) -> Path:
    return Dataset(STORIES, name="conversation").save(tmp_path / "ds")


def volunteer_runs(tmp_path: Path, undecided: UndecidedFeedback | None) -> Path:
    """Two volunteers through the app, exported as the run ``human`` (pictures: all) into a results store."""
    folder = dataset(tmp_path)
    kwargs = {} if undecided is None else {"undecided": undecided}
    study = build_study(folder, tmp_path / "study.json", questionnaires=1, grouping="task", **kwargs)
    study.questionnaires[0].storyturns = ORDER
    study.save(tmp_path / "study.json")
    db = StudyDB(tmp_path / "study.sqlite", load_study(tmp_path / "study.json")[0].digest())
    tokens = db.create_participants([0] * len(PEOPLE))
    db.close()
    with TestClient(create_app(tmp_path / "study.json", tmp_path / "study.sqlite")) as client:
        for token, replies in zip(tokens, PEOPLE, strict=True):
            answer_all(client, token, ORDER, replies)
    store = tmp_path / "commet.sqlite"
    result = CliRunner().invoke(cli, ["study", "export-run", str(tmp_path / "study.json"), "--study-db",
                                      str(tmp_path / "study.sqlite"), "--db", str(store), "--policy", "all"])
    assert result.exit_code == 0, result.output
    return store


def conversations(store: Path, run: str) -> dict[str, tuple[str, list[tuple[str, str, str, str, bool | None]]]]:
    """Per story: its status and, per turn, (message, feedback kind, response, verdict, score)."""
    with Store(store) as db:
        record = db.get_run(run)
        assert record is not None
        turns: dict[str, list[tuple[str, str, str, str, bool | None]]] = {}
        for row in db.turn_rows(record.id):
            turns.setdefault(row.story_id, []).append((row.prompt, row.feedback_kind, row.response or "",
                                                       row.outcome or "", row.correct))
        return {story.story_id: (story.status.value, turns.get(story.story_id, []))
                for story in db.story_rows(record.id)}


def model_conversations(tmp_path: Path, store: Path, replies: dict[str, list[str]], run: str):  # noqa: ANN201
    """What ``commet eval`` (its defaults: rules judge, undecided stop) makes of a replay model giving ``replies``."""
    replay = tmp_path / f"{run}.json"
    replay.write_text(json.dumps(replies))
    asyncio.run(evaluate_async(f"replay:{replay}", load_dataset(tmp_path / "ds"), judge="rules", db=store, run=run))
    return conversations(store, run)


def test_a_volunteer_meets_the_models_conversation_turn_by_turn(tmp_path: Path) -> None:
    store = volunteer_runs(tmp_path, undecided=None)  # the default of `study build`
    people = conversations(store, "human")
    stopped = set()
    for number, replies in enumerate(PEOPLE, start=1):
        model = model_conversations(tmp_path, store, replies, f"model-{number}")
        for story_id, (status, turns) in model.items():
            human_status, human_turns = people[f"{story_id}#P{number:04d}"]
            assert human_status == status, (number, story_id)
            assert human_turns == turns, (number, story_id)  # message, feedback kind, reply, verdict, score
            if status == "stopped":
                stopped.add((number, story_id))
    # the crafted answers reach every path: two stories stop, an undecided answer before plain turns goes on,
    # a correction and answer-keyed feedback are shown
    assert stopped == {(1, "ball"), (2, "cup")}
    first = people["cup#P0001"][1]
    assert [t[3] for t in first] == ["undecided", "correct", "incorrect"]
    kinds = {kind for _, turns in people.values() for _, kind, *_ in turns}
    assert {"wrong", "answer:Apple", "right"} <= kinds


def test_the_old_skip_policy_gives_another_conversation(tmp_path: Path) -> None:
    """Where feedback rests on an undecided answer, skip goes on and stop does not: the comparison tells them apart."""
    store = volunteer_runs(tmp_path, undecided=UndecidedFeedback.SKIP)
    people = conversations(store, "human")
    model = model_conversations(tmp_path, store, PEOPLE[0], "model-1")
    assert model["ball"][0] == "stopped" and people["ball#P0001"][0] == "done"
    assert len(people["ball#P0001"][1]) == 3 and people["ball#P0001"][1][1][1] == "skipped-undecided"


def test_build_prints_which_judge_and_undecided_policy(tmp_path: Path) -> None:
    folder = dataset(tmp_path)
    result = CliRunner().invoke(cli, ["study", "build", "--dataset", str(folder), "--out", str(tmp_path / "s.json"),
                                      "--questionnaires", "2"])
    assert result.exit_code == 0, result.output
    assert "judge: rules, online; undecided answers: stop, as `commet eval` by default" in result.output
    assert "give an LLM judge (--judge MODEL)" in result.output
    study = json.loads((tmp_path / "s.json").read_text())
    assert study["undecided_feedback"] == "stop"
    skip = CliRunner().invoke(cli, ["study", "build", "--dataset", str(folder), "--out", str(tmp_path / "k.json"),
                                    "--undecided-feedback", "skip"])
    assert skip.exit_code == 0 and "undecided answers: skip" in skip.output


def test_stories_of_one_task_group_are_never_neighbours() -> None:
    """300 random questionnaires (minimal pairs, several of one task, one group up to all of them) keep stories of
    one task group apart whenever the counts allow it, and else have the fewest neighbours any order can have."""
    tasks = ["sarcasm", "non_sarcasm", "moral_false_belief", "moral_true_belief", "diverse_desire", "false_belief_location"]
    for seed in range(300):
        rng = random.Random(seed)
        picked = [rng.choice(tasks[: rng.randint(1, len(tasks))]) for _ in range(rng.randint(1, 40))]
        groups = {f"s{i}": TASK_GROUPS.get(task, task) for i, task in enumerate(picked)}
        order = spread(list(groups), groups, random.Random(seed))
        assert sorted(order) == sorted(groups)
        together = sum(groups[a] == groups[b] for a, b in zip(order, order[1:], strict=False))
        counts = [list(groups.values()).count(g) for g in set(groups.values())]
        least = max(0, 2 * max(counts) - len(order) - 1)  # the fewest neighbours of one group any order can have
        assert together == least, (seed, order, groups)


def test_the_sample_questionnaires_keep_minimal_pairs_apart(tmp_path: Path) -> None:
    """The bundled sample (sarcasm-1 and its sincere control were positions 1 and 2) under several seeds."""
    sample = {storyturn.id: storyturn for storyturn in load_dataset("sample")}
    for seed in range(3):
        study = build_study("sample", tmp_path / "study.json", questionnaires=8, seed=seed)
        for questionnaire in study.questionnaires:
            assert adjacent_pairs(questionnaire, sample) == [], (seed, questionnaire.index)


def test_serve_refuses_placeholder_texts_unless_told_and_hints_at_port(tmp_path: Path) -> None:
    folder = Dataset(STORIES, name="panel").save(tmp_path / "ds")
    built = CliRunner().invoke(cli, ["study", "build", "--dataset", str(folder), "--out", str(tmp_path / "s.json")])
    assert built.exit_code == 0 and "participant.contact is a placeholder" in built.output
    refused = CliRunner().invoke(cli, ["study", "serve", str(tmp_path / "s.json"), "--db", str(tmp_path / "s.sqlite")])
    assert refused.exit_code == 2 and "participant.contact is still the built-in placeholder" in refused.output
    assert "--allow-placeholder-texts" in refused.output and "Traceback" not in refused.output
    with socket.socket() as taken:  # past the texts, the server meets a port in use: one line with the way out
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = CliRunner().invoke(cli, ["study", "serve", str(tmp_path / "s.json"), "--db", str(tmp_path / "s.sqlite"),
                                        "--allow-placeholder-texts", "--port", str(port)])
    assert busy.exit_code == 2 and f"cannot listen on 127.0.0.1:{port}" in busy.output
    assert "choose another port with --port N" in busy.output and "Traceback" not in busy.output
    # a panel link for a study without panel codes: printed, with a warning that nobody would get a code
    bare = CliRunner().invoke(cli, ["study", "links", str(tmp_path / "s.json"), "--db", str(tmp_path / "s.sqlite"),
                                    "--panel", "generic", "--base-url", "https://study.example.org"])
    assert bare.exit_code == 0 and "https://study.example.org/join/" in bare.output
    assert "has no completion code, so participants finish without one" in bare.output
