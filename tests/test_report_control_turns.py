"""Comprehension control turns and paired comparisons, checked against figures computed by hand.

A crafted dataset (written here, with one picture) is run by two scripted models (``replay:``) into a real
SQLite store with the rules judge; every expected figure below is worked out in the comments from the
replies, never read from the package.

A comprehension control turn (``turn.meta["control"]``: the story states its answer) is a question of its
StoryTurn, so story accuracy (the paper's: right only when every question is) counts it; it is no test
question, so question accuracy leaves it out and the report counts it apart (Control questions).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from commet.cli import app

YES_NO = [{"label": "A", "text": "yes"}, {"label": "B", "text": "no"}]
CHECKS = "comprehension: the story says so"
UNSURE = "I really cannot say."


def _turn(question: str, answer: str, *, control: bool = False, image: str | None = None) -> dict[str, object]:
    turn: dict[str, object] = {"story": f"Story before {question}", "question": question, "answers": [answer],
                               "options": YES_NO}
    if control:
        turn["meta"] = {"control": CHECKS}
    if image:
        turn["image"] = image
    return turn


def _story(story_id: str, task: str, category: str, turns: list[dict[str, object]],
           image_dependent: bool = False) -> dict[str, object]:
    return {"id": story_id, "task": task, "category": category, "source": "crafted", "turns": turns,
            "image_dependent": image_dependent}


def _stories(s3_answer: str = "no") -> list[dict[str, object]]:
    return [
        _story("s1", "false_belief_location", "Belief",
               [_turn("s1 q1?", "yes"), _turn("s1 q2?", "no"), _turn("s1 sad?", "yes", control=True)]),
        _story("s2", "false_belief_location", "Belief", [_turn("s2 q1?", "yes"), _turn("s2 sad?", "yes", control=True)]),
        _story("s3", "emotion_reminder", "Emotion", [_turn("s3 q1?", s3_answer), _turn("s3 q2?", "yes")]),
        _story("s4", "emotion_reminder", "Emotion", [_turn("s4 q1?", "yes")]),
        _story("s5", "false_belief_location", "Belief", [_turn("s5 q1?", "yes", image="p1.png")],
               image_dependent=True),
        *(_story(f"s{i}", "true_belief_action", "Intention", [_turn(f"s{i} q1?", "yes")]) for i in range(6, 10)),
    ]


#: A: s1 tests right, its control wrong; s2 test wrong, control right; s3 right; s4 undecided; s5..s9 right
REPLIES_A = {"s1": ["yes", "no", "no"], "s2": ["no", "yes"], "s3": ["no", "yes"], "s4": [UNSURE], "s5": ["yes"],
             **{f"s{i}": ["yes"] for i in range(6, 10)}}
#: B: s1, s2 and s4 right; s3 (first question), s5..s9 wrong
REPLIES_B = {"s1": ["yes", "no", "yes"], "s2": ["yes", "yes"], "s3": ["yes", "yes"], "s4": ["yes"], "s5": ["no"],
             **{f"s{i}": ["no"] for i in range(6, 10)}}


def _dataset(folder: Path, stories: list[dict[str, object]]) -> Path:
    (folder / "images").mkdir(parents=True)
    Image.new("RGB", (8, 8), (200, 30, 30)).save(folder / "images" / "p1.png")
    (folder / "storyturns.jsonl").write_text("".join(json.dumps(s) + "\n" for s in stories), encoding="utf-8")
    return folder


def _eval(db: Path, dataset: Path, replies: Path, run: str, *extra: str) -> str:
    result = CliRunner().invoke(app, ["eval", "--dataset", str(dataset), "--model", f"replay:{replies}", "--run", run,
                                      "--db", str(db), "--quiet", *extra])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def crafted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    root = tmp_path_factory.mktemp("controls")
    dataset = _dataset(root / "ds", _stories())
    # another version of the dataset, under the same name: one expected answer changed
    changed = _dataset(root / "v2" / "ds", _stories(s3_answer="yes"))
    for name, replies in (("A", REPLIES_A), ("B", REPLIES_B)):
        (root / f"{name}.json").write_text(json.dumps(replies), encoding="utf-8")
    db = root / "r.sqlite"
    brief = _eval(db, dataset, root / "A.json", "A")
    _eval(db, dataset, root / "B.json", "B")
    _eval(db, changed, root / "A.json", "C")
    _eval(db, dataset, root / "A.json", "D", "--images", "off")
    return {"db": db, "dataset": dataset, "brief": brief}


def _table(crafted: dict[str, object], key: str, *extra: str) -> dict[str, dict[str, str]]:
    """A table of runs A and B as CSV, its rows by run (the --by tables: by run and value)."""
    result = CliRunner().invoke(app, ["report", "--db", str(crafted["db"]), "--run", "A", "--run", "B",
                                      "--format", "csv", "--table", key, *extra])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    by = key.removeprefix("by-") if key.startswith("by-") else None
    return {row["Run"] if by is None else f"{row['Run']}|{row[by]}": row for row in rows}


def _k_n(row: dict[str, str], column: str) -> tuple[str, str, str]:
    """k, k counting undecided answers right, n of a figure (CSV: one column each)."""
    return row[f"{column} k"], row[f"{column} if undecided right k"], row[f"{column} n"]


def test_question_accuracy_counts_test_questions_and_the_controls_apart(crafted: dict[str, object]) -> None:
    summary = _table(crafted, "summary", "--dataset", str(crafted["dataset"]))
    a, b = summary["A"], summary["B"]
    # A, test questions: s1 2 of 2, s2 0 of 1, s3 2 of 2, s4 undecided (0, or 1 if right), s5..s9 5 of 5: 9-10 of 11;
    # its controls: s1's wrong, s2's right: 1 of 2
    assert _k_n(a, "Question accuracy") == ("9", "10", "11")
    assert _k_n(a, "Control questions") == ("1", "1", "2")
    assert a["Control questions"] == "50"
    # story accuracy counts every question, controls too: s1 (control wrong) and s2 wrong, s4 hinges: 6-7 of 9
    assert _k_n(a, "Story accuracy") == ("6", "7", "9")
    # B: tests s1 2, s2 1, s3 1 of 2, s4 1, s5..s9 0: 5 of 11; both controls right, 2 of 2: at 100 % the exact
    # interval, [0.025^(1/2), 1] = [15.81, 100]
    assert _k_n(b, "Question accuracy") == ("5", "5", "11")
    assert (b["Control questions"], b["Control questions CI low"], b["Control questions CI high"]) == (
        "100", "15.8114", "100")
    assert _k_n(b, "Story accuracy") == ("3", "3", "9")  # s1, s2, s4


def test_without_the_dataset_the_report_says_control_turns_are_not_known(crafted: dict[str, object]) -> None:
    summary = _table(crafted, "summary")
    # the store alone cannot tell them: every answered turn counts (A: 9-10 of 11 tests and 1 of 2 controls), and
    # the Control questions cell and the note say so rather than show a figure
    assert _k_n(summary["A"], "Question accuracy") == ("10", "11", "13")
    assert summary["A"]["Control questions"] == "not known"
    note = CliRunner().invoke(app, ["report", "--db", str(crafted["db"]), "--run", "A", "--table", "summary",
                                    "--format", "markdown"]).stdout
    assert "give the run's --dataset to tell them" in note


def test_question_accuracy_by_turn_has_test_questions_only(crafted: dict[str, object]) -> None:
    turns = _table(crafted, "turns", "--dataset", str(crafted["dataset"]))
    a = turns["A"]
    # turn 1: s1 right, s2 wrong, s3 right, s4 undecided, s5..s9 right: 7-8 of 9; turn 2: s1 and s3 right (s2's second
    # turn is its control): 2 of 2; turn 3 is only s1's control: no column
    assert _k_n(a, "Turn 1") == ("7", "8", "9")
    assert _k_n(a, "Turn 2") == ("2", "2", "2")
    assert "Turn 3" not in a


def test_by_task_rows_keep_control_questions_apart_and_stories_whole(crafted: dict[str, object]) -> None:
    rows = _table(crafted, "by-task", "--dataset", str(crafted["dataset"]), "--by", "task")
    tests, controls = rows["A|false_belief_location"], rows["A|false_belief_location [control questions]"]
    # A's false_belief_location tests: s1 2 right, s2 0 of 1, s5 1: 3 of 4; stories s1, s2 wrong, s5 right: 1 of 3
    assert (tests["Questions"], tests["Question accuracy k"], tests["Stories"], tests["Story accuracy k"]) == (
        "4", "3", "3", "1")
    # its control questions: 1 of 2, no stories of their own
    assert (controls["Questions"], controls["Question accuracy k"], controls["Stories"]) == ("2", "1", "-")


def test_eval_prints_the_control_questions_of_its_own_dataset(crafted: dict[str, object]) -> None:
    brief = str(crafted["brief"])
    line = next(line for line in brief.splitlines() if "Control questions" in line)
    assert "(1/2)" in line and "50.00" in line


def test_compare_pairs_by_story_and_its_p_value_is_mcnemars(crafted: dict[str, object]) -> None:
    result = CliRunner().invoke(app, ["compare", "A", "B", "--db", str(crafted["db"])])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    # s4 hinges on an undecided answer in A: left out; 8 paired. A right only: s3, s5..s9 (6); B only: s1, s2 (2).
    # A 6/8 = 75 %, B 2/8 = 25 %; McNemar: 2 * P(X <= 2), X ~ Bin(8, 1/2) = 2 * (1 + 8 + 28) / 256 = 0.2890625
    assert "story accuracy 75.00% on the 8 compared" in text and "story accuracy 25.00% on the 8 compared" in text
    assert "difference A - B: +50.00 points" in text
    assert "McNemar exact p = 0.2891 (discordant: 6 A only, 2 B only)" in text
    assert "1 StoryTurns whose result hinges on undecided answers" in text


def test_compare_refuses_runs_on_another_version_of_the_dataset(crafted: dict[str, object]) -> None:
    result = CliRunner().invoke(app, ["compare", "A", "C", "--db", str(crafted["db"])])
    assert result.exit_code == 2
    assert "were made on different StoryTurns" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_compare_pairs_a_run_without_pictures_with_the_same_run_with_them(crafted: dict[str, object]) -> None:
    # D is A's replies run with --images off: its dataset hash leaves the pictures out, yet the StoryTurns are the
    # same; paired, nothing differs, and each side says its picture setting
    result = CliRunner().invoke(app, ["compare", "A", "D", "--db", str(crafted["db"])])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "A = A (images on" in text and "B = D (images off" in text
    assert "difference A - B: +0.00 points" in text and "(discordant: 0 A only, 0 B only)" in text


def test_pooling_keeps_runs_on_another_version_of_the_dataset_apart(crafted: dict[str, object]) -> None:
    # A and C: one model, judge, feedback and dataset name, but C's StoryTurns expect another answer to s3's first
    # question: its wrong answer there ("no" against "yes") is C's own row, never pooled with A's answers
    result = CliRunner().invoke(app, ["report", "--db", str(crafted["db"]), "--run", "A", "--run", "C", "--pool",
                                      "--format", "csv", "--table", "wrong-answers"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert {row["Runs"] for row in rows} == {"A", "C"}
    assert [(r["Task"], r["Expected"], r["Wrong answer"]) for r in rows if r["Runs"] == "C" and r["Turns"] == "1"
            and r["Task"] == "emotion_reminder"] == [("emotion_reminder", "yes", "no")]


def test_the_python_api_tallies_test_and_control_questions_apart(crafted: dict[str, object]) -> None:
    from commet.reports import accuracy_table, run_metrics
    from commet.reports.grouping import control_turns
    from commet.sources import load_dataset
    from commet.store import Store

    controls = control_turns(load_dataset(str(crafted["dataset"])))
    assert controls == {"s1": {2: CHECKS}, "s2": {1: CHECKS}}
    with Store(Path(str(crafted["db"]))) as store:
        metrics = run_metrics(store, store.find_run("A"), controls)
    # A: tests 9 of 11 right (s4's undecided answer is not right), controls 1 of 2, stories 6 of 9 right
    assert (metrics.questions.correct, metrics.questions.total) == (9, 11)
    assert (metrics.control_questions.correct, metrics.control_questions.total) == (1, 2)
    assert (metrics.stories.correct, metrics.stories.total) == (6, 9)
    header, rows = accuracy_table([metrics])
    assert rows[0][header.index("Control questions")] == "50.00 (1/2)"


def test_judge_corrected_question_accuracy_leaves_the_control_turns_out(crafted: dict[str, object],
                                                                         tmp_path: Path) -> None:
    import shutil

    db = tmp_path / "labelled.sqlite"
    shutil.copy(Path(str(crafted["db"])), db)
    # people label every answer of B as the judge did, except two: s6's answer "no" is right to them (the judge: wrong)
    # and s1's control answer "yes" wrong (the judge: right)
    flips = {("s6", 0), ("s1", 2)}
    stories = {str(s["id"]): s for s in _stories()}
    lines = ["run,story_id,turn,label,labeller"]
    for story_id, replies in REPLIES_B.items():
        turns = stories[story_id]["turns"]
        assert isinstance(turns, list)
        for k, reply in enumerate(replies):
            right = (reply == turns[k]["answers"][0]) != ((story_id, k) in flips)
            lines.append(f"B,{story_id},{k},{'correct' if right else 'incorrect'},ann")
    (tmp_path / "labels.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for args in (["label", "import", str(tmp_path / "labels.csv"), "--db", str(db)],
                 ["calibrate", "--db", str(db), "--run", "B", "--sample", "9"]):  # every scored StoryTurn: a census
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output

    def corrected(*extra: str) -> dict[str, str]:
        result = CliRunner().invoke(app, ["report", "--db", str(db), "--run", "B", "--format", "csv", "--table",
                                          "calibration", *extra])
        assert result.exit_code == 0, result.output
        return next(csv.DictReader(io.StringIO(result.stdout)))

    row = corrected("--dataset", str(crafted["dataset"]))
    # a census: the corrected figures are the people's. Stories: B's right ones were s1, s2, s4; s1 is wrong to them
    # (its control), s6 right: s2, s4, s6 = 3 of 9. Test questions: 5 of 11 judged right, s6's too: 6 of 11
    assert float(row["Story accuracy (corrected)"]) == pytest.approx(100 * 3 / 9, abs=1e-3)
    assert float(row["Question accuracy (corrected)"]) == pytest.approx(100 * 6 / 11, abs=1e-3)
    assert float(row["Question accuracy (judged)"]) == pytest.approx(100 * 5 / 11, abs=1e-3)
    # without the dataset the control turns count as questions (the note says so): 6 + 1 (s2's control) of 13
    plain = corrected()
    assert float(plain["Question accuracy (corrected)"]) == pytest.approx(100 * 7 / 13, abs=1e-3)
