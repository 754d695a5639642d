"""Store shapes checked figure by figure against a hand computation from the raw SQLite rows: runs stopped, skipped
or fed back wrongly at undecided answers, runs with pictures on and only where needed, a run whose calls failed for
some StoryTurns, a run cut short by --limit, and a panel whose members disagree.

Every expected figure is recomputed here in plain Python from the ``stories`` and ``turns`` tables (the paper's
story accuracy: a StoryTurn right only when all its questions are; undecided answers a range; a StoryTurn with a
failed call left out) and compared with ``commet report --format csv`` and ``commet compare``. Found by this probe:
Tables 1 and 2 counted only the scored StoryTurns in Stories (the summary all of them), and a figure whose
StoryTurns all had the same share right (each one of two questions right) or a paired difference whose pairs all
agreed printed a point interval.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import sqlite3
from collections import defaultdict
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from commet.cli import app
from commet.engine import EvalSettings, evaluate_async
from commet.format.dataset import Dataset
from commet.format.model import Feedback, StoryTurn, Turn
from commet.reports.ppi import clopper_pearson
from commet.sources import load_dataset
from tests.judge_server import JudgeServer, verdict

R, W, U = "The apple.", "The pear.", "I am not sure, the apple or the pear."
QUESTION = "Which fruit, the apple or the pear?"
CATEGORIES = ["Belief", "Desire", "Emotion"]
TASKS = {"Belief": "false_belief_location", "Desire": "diverse_desire", "Emotion": "emotion_reminder"}
runner = CliRunner()


def _png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (24, 16), (30, 120, 200)).save(buffer, format="PNG")
    return buffer.getvalue()


def _story(k: int, turns: int) -> StoryTurn:
    dependent = k % 3 == 0
    first = Turn(story=f"Story s{k}.", image=f"pic-s{k}", question=QUESTION, answers=["The apple"])
    rest = [Turn(feedback=Feedback(right="Good.", wrong="It is the apple."), question=QUESTION, answers=["The apple"])
            for _ in range(turns - 1)]
    return StoryTurn(id=f"s{k}", task="reference_easy" if dependent else TASKS[CATEGORIES[k % 3]],
                     category="Percept" if dependent else CATEGORIES[k % 3], image_dependent=dependent,
                     turns=[first, *rest])


def _dataset() -> Dataset:
    stories = [_story(k, 2 + k % 2) for k in range(12)]
    return Dataset(stories, name="probe", images={f"pic-s{k}": _png() for k in range(12)})


#: first run's replies: an undecided answer on a first turn (s1, s7: stopped under 'stop'), on a later turn (s4),
#: after a wrong one (s5), and a wrong answer fed back (s2, s8)
FIRST = {f"s{k}": [R] * (2 + k % 2) for k in range(12)}
FIRST.update({"s1": [U, R, R], "s7": [U, W, R], "s4": [R, U], "s5": [W, U, R], "s2": [W, R], "s8": [R, W]})
#: second run: s0 and s9 wrong; s3 and s10 have no reply (their calls fail for good: not scored)
SECOND = {f"s{k}": [R] * (2 + k % 2) for k in range(12) if k not in (3, 10)}
SECOND.update({"s0": [W, R], "s9": [R, R, W]})


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("probe")
    (root / "first.json").write_text(json.dumps(FIRST))
    (root / "second.json").write_text(json.dumps(SECOND))
    path = root / "probe.sqlite"

    async def fill() -> None:
        for mode in ("stop", "skip", "wrong"):
            await evaluate_async(f"replay:{root / 'first.json'}", _dataset(), judge="rules", db=path, run=mode,
                                 settings=EvalSettings(undecided_feedback=mode))
        await evaluate_async(f"replay:{root / 'second.json'}", _dataset(), judge="rules", db=path, run="needed",
                             settings=EvalSettings(images="needed"))
        await evaluate_async(f"replay:{root / 'first.json'}", _dataset(), judge="rules", db=path, run="limited",
                             settings=EvalSettings(limit=5))
    asyncio.run(fill())
    return path


def _hand(path: Path) -> dict[str, dict[str, object]]:
    """Per run, from the raw rows: each StoryTurn's class (right, wrong, range, not scored) and the answered turns."""
    con = sqlite3.connect(path)
    runs = dict(con.execute("SELECT id, name FROM runs"))
    out: dict[str, dict[str, object]] = {}
    for run_id, name in runs.items():
        stories = {sid: {"category": cat, "dependent": bool(dep), "status": status, "turns": []}
                   for sid, cat, dep, status in con.execute(
                       "SELECT story_id, category, image_dependent, status FROM stories WHERE run_id = ?", (run_id,))}
        for sid, turn, outcome, error in con.execute(
                "SELECT story_id, turn, outcome, error_kind FROM turns WHERE run_id = ? ORDER BY story_id, turn",
                (run_id,)):
            stories[sid]["turns"].append((turn, outcome, error))  # type: ignore[attr-defined]
        for story in stories.values():
            outcomes = [o for _, o, _ in story["turns"]]  # type: ignore[attr-defined]
            failed = story["status"] == "failed" or any(e for _, _, e in story["turns"])  # type: ignore[attr-defined]
            story["class"] = ("not scored" if failed else "wrong" if "incorrect" in outcomes
                              else "range" if "undecided" in outcomes or story["status"] == "stopped" else "right")
        out[name] = stories
    con.close()
    return out


def _csv(path: Path, table: str, *args: str) -> dict[str, dict[str, str]]:
    result = runner.invoke(app, ["report", "--db", str(path), "--format", "csv", "--table", table, "--resamples",
                                 "100", *args])
    assert result.exit_code == 0, result.output
    return {row["Run"]: row for row in csv.DictReader(io.StringIO(result.stdout))}


def _range(row: dict[str, str], column: str, classes: list[str]) -> None:
    """``column`` of ``row`` against the hand-counted story classes: k, n, the upper figure and its hinging."""
    scored = [c for c in classes if c != "not scored"]
    low, high = scored.count("right"), scored.count("right") + scored.count("range")
    assert (row[f"{column} k"], row[f"{column} n"]) == (str(low), str(len(scored))), column
    if high != low:
        assert (row[f"{column} if undecided right k"], row[f"{column} hinging"]) == (str(high), str(high - low))
    if low == 0:  # the exact interval at the StoryTurns: [0, 1 - 0.025^(1/n)]
        assert float(row[f"{column} CI high"]) == pytest.approx(100 * (1 - 0.025 ** (1 / len(scored))), abs=1e-3)


def test_summary_and_tables_1_2_match_the_hand_count(db: Path) -> None:
    hand = _hand(db)
    summary = _csv(db, "summary")
    for name, stories in hand.items():
        classes = [s["class"] for s in stories.values()]
        row = summary[name]
        _range(row, "Story accuracy", classes)  # type: ignore[arg-type]
        answered = [o for s in stories.values() if s["class"] != "not scored"
                    for _, o, _ in s["turns"] if o in ("correct", "incorrect", "undecided")]  # type: ignore[attr-defined]
        assert (row["Question accuracy k"], row["Question accuracy n"]) == (
            str(answered.count("correct")), str(len(answered)))
        assert row["Undecided answers"] == str(answered.count("undecided"))
        assert row["Stories hinging on undecided"] == str(classes.count("range"))
        # stopped with no wrong answer before (one after a wrong answer counts wrong: s5 under 'stop')
        assert row["Stopped at undecided"] == str(sum(s["status"] == "stopped" and s["class"] == "range"
                                                      for s in stories.values()))
        assert (row["Stories"], row["Not scored"]) == (str(len(stories)), str(classes.count("not scored")))
    # the three undecided-feedback modes: stop ends s1 and s7 at turn 1 (both in the range: s7's later wrong
    # answer was never given); skip and wrong go on, so s7 counts wrong
    assert [hand["stop"][s]["status"] for s in ("s1", "s7", "s5")] == ["stopped"] * 3
    assert hand["stop"]["s5"]["class"] == "wrong"
    assert hand["skip"]["s7"]["class"] == hand["wrong"]["s7"]["class"] == "wrong"
    for key, dependent in (("text-complete", False), ("image-dependent", True)):
        table = _csv(db, key)
        for name, stories in hand.items():
            mine = [s for s in stories.values() if s["dependent"] == dependent]
            row = table[name]
            # Stories: the run's StoryTurns of the subset, as the summary counts them; Not scored apart
            assert row["Stories"] == str(len(mine)), (key, name)
            assert row["Not scored"] == str(sum(s["class"] == "not scored" for s in mine)), (key, name)
            _range(row, "Overall", [s["class"] for s in mine])  # type: ignore[misc]
            by_category: dict[str, list[str]] = defaultdict(list)
            for s in mine:
                by_category[s["category"]].append(s["class"])  # type: ignore[index,arg-type]
            for category, classes in by_category.items():
                _range(row, category, classes)
    # needed: s10 (text-complete) and s3 (image-dependent) not scored, each said in its table
    assert _csv(db, "text-complete")["needed"]["Not scored"] == _csv(db, "image-dependent")["needed"]["Not scored"] \
        == "1"


def test_by_turn_matches_the_hand_count(db: Path) -> None:
    hand = _hand(db)
    turns = _csv(db, "turns")
    for name, stories in hand.items():
        per_turn: dict[int, list[str]] = defaultdict(list)
        for s in stories.values():
            if s["class"] != "not scored":
                for turn, outcome, _ in s["turns"]:  # type: ignore[attr-defined]
                    if outcome in ("correct", "incorrect", "undecided"):
                        per_turn[turn + 1].append(outcome)
        for turn, outcomes in per_turn.items():
            row = turns[name]
            assert (row[f"Turn {turn} k"], row[f"Turn {turn} n"]) == (
                str(outcomes.count("correct")), str(len(outcomes))), (name, turn)
            assert row[f"Turn {turn} if undecided right k"] == str(len(outcomes) - outcomes.count("incorrect"))


def test_a_figure_whose_storyturns_all_have_the_same_share_right_has_an_exact_interval(tmp_path: Path) -> None:
    """Each StoryTurn one of its two questions right: every resample gives 50 %, so the bootstrap's interval was
    the point [50, 50]; Clopper-Pearson's at the StoryTurns instead (4 of 8 StoryTurns' worth: [15.7, 84.3])."""
    stories = [_story(k, 2) for k in (1, 2, 4, 5, 7, 8, 10, 11)]  # text-complete, two turns each
    replies = {s.id: [R, W] if k % 2 else [W, R] for k, s in enumerate(stories)}
    (tmp_path / "r.json").write_text(json.dumps(replies))
    path = tmp_path / "half.sqlite"
    asyncio.run(evaluate_async(f"replay:{tmp_path / 'r.json'}", Dataset(stories, name="half", images={
        f"pic-{s.id}": _png() for s in stories}), judge="rules",
                               db=path, run="half"))
    row = _csv(path, "summary")["half"]
    low, high = clopper_pearson(4, 8)
    assert (row["Question accuracy k"], row["Question accuracy n"], row["Question accuracy"]) == ("8", "16", "50")
    assert float(row["Question accuracy CI low"]) == pytest.approx(100 * low, abs=1e-3)
    assert float(row["Question accuracy CI high"]) == pytest.approx(100 * high, abs=1e-3)


def test_compare_pairs_only_the_storyturns_both_scored_and_an_all_agreeing_pair_has_an_exact_interval(
        db: Path) -> None:
    hand = _hand(db)

    def compared(a: str, b: str) -> str:
        result = runner.invoke(app, ["compare", a, b, "--db", str(db), "--resamples", "200"])
        assert result.exit_code == 0, result.output
        return " ".join(result.output.split())

    # skip against needed: needed lacks s3 and s10; s1, s4, s5 hinge in skip (left out, said)
    text = compared("skip", "needed")
    both = [s for s in hand["skip"] if hand["needed"][s]["class"] != "not scored"
            and hand["skip"][s]["class"] != "not scored"]
    decided = [s for s in both if "range" not in (hand["skip"][s]["class"], hand["needed"][s]["class"])]
    a_only = sum(hand["skip"][s]["class"] == "right" and hand["needed"][s]["class"] == "wrong" for s in decided)
    b_only = sum(hand["skip"][s]["class"] == "wrong" and hand["needed"][s]["class"] == "right" for s in decided)
    assert f"Paired comparison on {len(decided)} StoryTurns" in text
    assert f"(discordant: {a_only} A only, {b_only} B only)" in text
    assert f"left out: {len(hand['skip']) - len(both)} StoryTurns scored only in A, 0 only in B" in text
    assert f"left out: {len(both) - len(decided)} StoryTurns whose result hinges on undecided answers" in text
    # limited (s0..s4) against wrong: the same answers, so every pair agrees; the interval is the exact one of
    # 0 discordant of n, +-(100 - 100 * 0.025^(1/n)), not the bootstrap's point [+0.00, +0.00]
    text = compared("limited", "wrong")
    decided = [s for s in hand["limited"] if hand["limited"][s]["class"] != "range"]
    bound = 100 - 100 * 0.025 ** (1 / len(decided))
    assert f"Paired comparison on {len(decided)} StoryTurns" in text
    assert f"exact CI (the pairs all differ alike) [{-bound:+.2f}, {bound:+.2f}]" in text


def _split(model: str, answer: str, expected: list[str], question: str) -> str:
    """Four members: a and d go by 'saw'; b and c reverse it on answers saying 'maybe' (a 2-2 split: no majority)."""
    right = "saw" in answer
    if model in ("judge-b", "judge-c") and "maybe" in answer:
        right = not right
    return verdict(right, 1 if right else None)


def _unanimous(model: str, answer: str, expected: list[str], question: str) -> str:
    return verdict("saw" in answer, 1 if "saw" in answer else None)


def test_a_split_panel_stopped_then_rejudged_matches_the_hand_count(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A panel of four whose members split 2-2 on some answers leaves them undecided (no member failed); under
    --undecided-feedback stop two StoryTurns stop at their first answer. `commet rejudge` with a unanimous panel
    decides them (one wrong: the StoryTurn counts wrong, its later questions never asked)."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-test-key")
    question = "Why does Sam pick it?"
    stories = [StoryTurn(id=f"p{k}", task=TASKS[CATEGORIES[k % 3]], category=CATEGORIES[k % 3], image_dependent=False,
                         turns=[Turn(story=f"Story p{k}.", question=question, answers=["Because he saw it"]),
                                Turn(feedback=Feedback(right="Good.", wrong="Look."), question=question,
                                     answers=["Because he saw it"])]) for k in range(6)]
    folder = tmp_path / "data"
    Dataset(stories, name="panel").save(folder)
    replies = {"p0": ["dunno maybe", "he saw"], "p1": ["he saw", "he saw maybe"], "p2": ["he saw", "dunno"],
               "p3": ["he saw maybe", "he saw"], "p4": ["he saw", "he saw"], "p5": ["dunno", "he saw"]}
    (tmp_path / "r.json").write_text(json.dumps(replies))
    path = tmp_path / "panel.sqlite"
    with JudgeServer(_split) as server:
        panel = "panel:" + ",".join(server.spec(m) for m in ("judge-a", "judge-b", "judge-c", "judge-d"))
        asyncio.run(evaluate_async(f"replay:{tmp_path / 'r.json'}", load_dataset(folder), judge=panel, db=path,
                                   run="split", settings=EvalSettings(undecided_feedback="stop")))
    with JudgeServer(_unanimous) as server:
        panel = "panel:" + ",".join(server.spec(m) for m in ("judge-a", "judge-b", "judge-c"))
        rejudged = runner.invoke(app, ["rejudge", "--db", str(path), "--run", "split", "--judge", panel, "--as",
                                       "decided", "--dataset", str(folder)])
        assert rejudged.exit_code == 0, rejudged.output
    hand = _hand(path)
    # split: p0 and p3 stop at an undecided first answer (range); p1's second answer undecided (range); p2 and p5
    # wrong; p4 right. decided: p0 wrong (its 'dunno' decided), p3 right so far but stopped (range: never asked)
    assert {s: v["class"] for s, v in hand["split"].items()} == {
        "p0": "range", "p1": "range", "p2": "wrong", "p3": "range", "p4": "right", "p5": "wrong"}
    assert {s: v["class"] for s, v in hand["decided"].items()} == {
        "p0": "wrong", "p1": "right", "p2": "wrong", "p3": "range", "p4": "right", "p5": "wrong"}
    summary = _csv(path, "summary")
    for name, stories_of in hand.items():
        classes = [v["class"] for v in stories_of.values()]
        _range(summary[name], "Story accuracy", classes)  # type: ignore[arg-type]
        assert summary[name]["Stopped at undecided"] == str(sum(
            v["status"] == "stopped" and v["class"] == "range" for v in stories_of.values()))
    assert (summary["split"]["Undecided answers"], summary["decided"]["Undecided answers"]) == ("3", "0")
    shown = runner.invoke(app, ["report", "--db", str(path), "--table", "summary", "--resamples", "100"])
    text = " ".join(shown.output.split())
    # decided: p3 still stopped (in the range), p0 stopped at an answer since decided wrong: said as such
    assert "1 story stopped at an undecided answer and 1 more stopped with a wrong answer (counted wrong)" in text


@pytest.mark.parametrize("key", ["category", "task"])
def test_by_tables_match_the_hand_count_and_count_unscored_storyturns_as_the_summary(db: Path, key: str) -> None:
    hand = _hand(db)
    con = sqlite3.connect(db)
    values = {(name, sid): value for name, sid, value in con.execute(
        f"SELECT r.name, s.story_id, s.{key} FROM stories s JOIN runs r ON r.id = s.run_id")}
    con.close()
    result = runner.invoke(app, ["report", "--db", str(db), "--format", "csv", "--by", key, "--table", f"by-{key}",
                                 "--resamples", "100"])
    assert result.exit_code == 0, result.output
    rows = {(row["Run"], row[key]): row for row in csv.DictReader(io.StringIO(result.stdout))}
    expected_rows = set()
    for name, stories in hand.items():
        groups: dict[str, list[dict[str, object]]] = defaultdict(list)
        for sid, story in stories.items():
            groups[values[name, sid]].append(story)
        for value, members in groups.items():
            expected_rows.add((name, value))
            row = rows[name, value]
            scored = [m for m in members if m["class"] != "not scored"]
            answered = [o for m in scored for _, o, _ in m["turns"]  # type: ignore[attr-defined]
                        if o in ("correct", "incorrect", "undecided")]
            assert (row["Questions"], row["Question accuracy k"]) == (str(len(answered)),
                                                                      str(answered.count("correct")))
            # Stories: every StoryTurn of the value, as the summary counts them (needed: s3, s10 not scored)
            assert (row["Stories"], row["Not scored"]) == (str(len(members)), str(len(members) - len(scored)))
            _range(row, "Story accuracy", [m["class"] for m in scored])  # type: ignore[misc]
    assert set(rows) == expected_rows  # no row for a value a run lacks (an empty group is no row, not a 0)
    assert any(row["Not scored"] != "0" for row in rows.values())


def test_an_accuracy_over_storyturns_none_scored_says_not_known(tmp_path: Path) -> None:
    """Every call failed for good: the run has StoryTurns but no accuracy. Each format says "not known" with a note
    where it was a '-' that read as an empty group; a category with no StoryTurn at all stays '-'."""
    (tmp_path / "none.json").write_text("{}")
    path = tmp_path / "none.sqlite"
    asyncio.run(evaluate_async(f"replay:{tmp_path / 'none.json'}", _dataset(), judge="rules", db=path, run="nothing",
                               settings=EvalSettings(limit=3)))  # s0 (image-dependent), s1 (Desire), s2 (Emotion)
    summary = _csv(path, "summary")["nothing"]
    assert (summary["Stories"], summary["Not scored"]) == ("3", "3")
    assert summary["Story accuracy"] == summary["Question accuracy"] == "not known"
    table1 = _csv(path, "text-complete")["nothing"]
    assert (table1["Stories"], table1["Not scored"], table1["Overall"]) == ("2", "2", "not known")
    assert table1["Desire"] == table1["Emotion"] == "not known" and table1["Belief"] == ""  # no Belief StoryTurn
    for form in ("markdown", "html", "table"):
        shown = runner.invoke(app, ["report", "--db", str(path), "--format", form, "--resamples", "100", "--table",
                                    "summary", "--table", "text-complete"])  # (HTML: the headline too)
        assert shown.exit_code == 0, shown.output
        text = " ".join(shown.output.split())
        assert "not known: StoryTurns there, none scored" in text and "nan" not in text.lower().split()


def test_by_a_key_no_storyturn_has_is_refused_not_a_table_of_one_empty_group(db: Path, tmp_path: Path) -> None:
    folder = tmp_path / "data"
    _dataset().save(folder)
    for key, hint in (("turn", "accuracy by turn index is the 'turns' table"), ("question_typ", "metadata: none")):
        result = runner.invoke(app, ["report", "--db", str(db), "--by", key, "--dataset", str(folder), "--resamples",
                                     "100"])
        assert result.exit_code == 2, result.output
        assert f"--by {key}: no StoryTurn or turn of " in result.output and hint in result.output
        assert "Traceback" not in result.output
