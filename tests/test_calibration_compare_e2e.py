"""Judge-corrected comparisons, the optimal design that continues, and the exact edge cases, end to end on a real
SQLite store: two replayed runs judged by the rules, a paired sample drawn with ``commet calibrate --pair``, labels
stored per answer, and ``commet compare`` / ``commet report`` / ``commet calibrate`` read back.

Sixteen StoryTurns of two turns ("Belief" s00-s07, "Desire" s08-s15). The rules judge is right about every answer
of run B (the people agree with it throughout) and wrong about three answers of run A, so the judged difference
A - B is off; with every StoryTurn labelled (a census of the paired sample) the corrected difference is the true one
exactly.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.cli import app
from commet.engine import evaluate_async
from commet.format.dataset import Dataset
from commet.format.model import Feedback, StoryTurn, Turn
from commet.reports.ppi import clopper_pearson
from commet.sources import load_dataset
from commet.store import Store
from commet.store.calibration import load_sample
from commet.store.labels import set_label

R, W = "The apple.", "The pear."
QUESTION = "Which fruit, the apple or the pear?"
IDS = [f"s{i:02d}" for i in range(16)]
REPLIES_A = {s: [R if (i + t) % 3 else W for t in range(2)] for i, s in enumerate(IDS)}
REPLIES_B = {s: [R if (i * 7 + t) % 4 else W for t in range(2)] for i, s in enumerate(IDS)}
#: the people's truth on A: as the rules judge says, except three answers it got wrong
TRUTH_A = {s: [reply == R for reply in replies] for s, replies in REPLIES_A.items()}
TRUTH_A["s01"][0], TRUTH_A["s04"][1], TRUTH_A["s09"][0] = (not TRUTH_A["s01"][0], not TRUTH_A["s04"][1],
                                                           not TRUTH_A["s09"][0])
TRUTH_B = {s: [reply == R for reply in replies] for s, replies in REPLIES_B.items()}

runner = CliRunner()


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("compare")
    turns = [Turn(story="A bowl holds an apple and a pear.", question=QUESTION, answers=["The apple"]),
             Turn(feedback=Feedback(right="Good.", wrong="Look again."), question=QUESTION, answers=["The apple"])]
    stories = [StoryTurn(id=s, task="false_belief_location", category="Belief" if i < 8 else "Desire", turns=turns)
               for i, s in enumerate(IDS)]
    Dataset(stories, name="compare").save(root / "dataset")
    data = load_dataset(root / "dataset")
    path = root / "results.sqlite"
    for run, replies in (("a", REPLIES_A), ("b", REPLIES_B), ("c", REPLIES_A)):
        (root / f"{run}.json").write_text(json.dumps(replies))
        asyncio.run(evaluate_async(f"replay:{root / run}.json", data, judge="rules", db=path, run=run))
    return path


def _label(db: Path, run: str, truth: dict[str, list[bool]], replies: dict[str, list[str]]) -> None:
    with Store(db) as store:
        for story, verdicts in truth.items():
            for turn, right in enumerate(verdicts):
                set_label(store, run=run, story_id=story, turn=turn, response=replies[story][turn],
                          label="correct" if right else "incorrect", labeller="ann")


def _right(truth: dict[str, list[bool]], stories: list[str]) -> tuple[float, float]:
    """(story accuracy, question accuracy) of these StoryTurns by ``truth``."""
    return (sum(all(truth[s]) for s in stories) / len(stories),
            sum(sum(truth[s]) for s in stories) / (2 * len(stories)))


def test_a_paired_census_gives_the_true_difference_and_exact_edges(db: Path, tmp_path: Path) -> None:
    before = runner.invoke(app, ["compare", "a", "b", "--db", str(db)], terminal_width=200)
    assert before.exit_code == 0 and "no paired sample of runs 'a' and 'b' yet" in before.output
    drawn = runner.invoke(app, ["calibrate", "--db", str(db), "--run", "a", "--pair", "b", "--sample", "16",
                                "--seed", "3"])
    assert drawn.exit_code == 0, drawn.output
    assert "drew 16 StoryTurns of run a" in drawn.output and "paired with run b" in drawn.output
    with Store(db) as store:
        first, second = load_sample(store, "a"), load_sample(store, "b")
    assert first is not None and second is not None and (first.partner, second.partner) == ("b", "a")
    assert [i.story_id for i in first.items] == [i.story_id for i in second.items] and len(first.items) == 16
    waiting = runner.invoke(app, ["compare", "a", "b", "--db", str(db)], terminal_width=200)
    assert "needs at least 2 StoryTurns labelled in both runs" in waiting.output
    _label(db, "a", TRUTH_A, REPLIES_A)
    _label(db, "b", TRUTH_B, REPLIES_B)

    shown = runner.invoke(app, ["report", "--db", str(db), "--run", "a", "--run", "b", "--table",
                                "corrected-differences", "--format", "csv", "--out", str(tmp_path / "csv")])
    assert shown.exit_code == 0, shown.output
    rows = list(csv.DictReader(io.StringIO((tmp_path / "csv" / "corrected-differences.csv").read_text())))
    by = {(r["Scope"], r["Measure"]): r for r in rows}
    assert set(by) == {(scope, measure) for scope in ("all StoryTurns", "text-complete: Belief",
                                                     "text-complete: Desire")
                       for measure in ("story accuracy", "question accuracy")}
    for scope, stories in (("all StoryTurns", IDS), ("text-complete: Belief", IDS[:8]),
                           ("text-complete: Desire", IDS[8:])):
        (story_a, question_a), (story_b, question_b) = _right(TRUTH_A, stories), _right(TRUTH_B, stories)
        for measure, a, b in (("story accuracy", story_a, story_b), ("question accuracy", question_a, question_b)):
            row = by[(scope, measure)]
            value = float(row["Corrected difference"].split(" ")[0])
            assert value == pytest.approx(100 * (a - b), abs=0.006), (scope, measure)  # the census: the truth
            assert float(row["A (corrected, %)"]) == pytest.approx(100 * a, abs=0.006)
            assert row["Labelled in both"] == str(len(stories))
    judged = {s: [reply == R for reply in replies] for s, replies in REPLIES_A.items()}
    assert float(by[("all StoryTurns", "question accuracy")]["Judged difference"]) == pytest.approx(
        100 * (_right(judged, IDS)[1] - _right(TRUTH_B, IDS)[1]), abs=0.006)
    compared = runner.invoke(app, ["compare", "a", "b", "--db", str(db)], terminal_width=250)
    assert compared.exit_code == 0 and "16 of the paired sample's 16 StoryTurns labelled in both runs" in compared.output
    assert "Judge-corrected differences" in compared.output and "text-complete: Desire" in compared.output

    # run b: the people agree with every verdict, and every StoryTurn is labelled: exact intervals, not points
    out = tmp_path / "b"
    assert runner.invoke(app, ["calibrate", "--db", str(db), "--run", "b", "--format", "csv", "--out",
                               str(out)]).exit_code == 0
    row = next(csv.DictReader(io.StringIO((out / "calibration.csv").read_text())))
    right = sum(all(v) for v in TRUTH_B.values())
    low, high = clopper_pearson(right, 16)
    assert float(row["Story accuracy (corrected) CI low"]) == pytest.approx(100 * low, abs=1e-3)
    assert float(row["Story accuracy (corrected) CI high"]) == pytest.approx(100 * high, abs=1e-3)
    judge = next(csv.DictReader(io.StringIO((out / "judge-calibration.csv").read_text())))
    kappa = judge["Kappa"]
    assert kappa.startswith("1.000 [") and not kappa.startswith("1.000 [1.000"), kappa
    assert float(judge["Accuracy"]) == 100.0 and float(judge["Accuracy CI low"]) < 100.0


def test_the_optimal_design_continues_a_sample_as_labels_come_in(db: Path) -> None:
    first = runner.invoke(app, ["calibrate", "--db", str(db), "--run", "c", "--sample", "6", "--seed", "2",
                                "--design", "optimal"])
    assert first.exit_code == 0 and "optimal design" in first.output, first.output
    with Store(db) as store:
        drawn = load_sample(store, "c")
    assert drawn is not None and len(drawn.items) == 6 and drawn.design.value == "optimal"
    more = runner.invoke(app, ["calibrate", "--db", str(db), "--run", "c", "--sample", "11"])
    assert more.exit_code == 0 and "added 5 StoryTurns to the sample of run c, now 11" in more.output, more.output
    with Store(db) as store:
        grown = load_sample(store, "c")
    assert grown is not None and grown.items[:6] == drawn.items and len({i.story_id for i in grown.items}) == 11
    assert [i.position for i in grown.items] == list(range(11))
    for refused, why in ((["--sample", "4"], "a larger --sample continues it"),
                         (["--sample", "12", "--seed", "5"], "continues with its own seed"),
                         (["--design", "proportional"], "--redraw replaces it"),
                         (["--pair", "c", "--redraw"], "--pair names another run"),
                         (["--pair", "nosuch", "--redraw"], "no run named 'nosuch'"),
                         (["--pair", "a"], "--redraw replaces it with one paired with 'a'")):
        again = runner.invoke(app, ["calibrate", "--db", str(db), "--run", "c", *refused])
        assert again.exit_code == 2 and why in again.output and "Traceback" not in again.output, (refused, again.output)
    with Store(db) as store:
        assert load_sample(store, "c") == grown  # nothing written by a refusal


def test_answers_marked_unsure_are_left_out_counted_and_bounded(db: Path) -> None:
    """Run c's sample (drawn above) labelled throughout, but for one answer that ann marked unsure: that StoryTurn is
    left out of the estimate and counted, and the figure with it counted in (the answer wrong, then right) is shown
    as the range leaving it out may hide."""
    from commet.reports.calibration import calibrate
    from commet.store.labelling import give_label, mark_unsure

    with Store(db) as store:
        sample, record = load_sample(store, "c"), store.get_run("c")
        assert sample is not None and record is not None
        by_stratum: dict[str, list[str]] = {}
        for item in sample.items:
            by_stratum.setdefault(item.stratum, []).append(item.story_id)
        unsure = max(by_stratum.values(), key=len)[-1]  # in the largest stratum: the others keep two labels
        for item in sample.items:
            for turn, right in enumerate(TRUTH_A[item.story_id]):
                if (item.story_id, turn) == (unsure, 1):
                    mark_unsure(store, run="c", story_id=unsure, turn=1, labeller="ann")
                else:
                    give_label(store, run="c", story_id=item.story_id, turn=turn, response=REPLIES_A[item.story_id][turn],
                               label="correct" if right else "incorrect", labeller="ann")
        found = calibrate(store, record)
    assert found is not None and found.story is not None and found.unsure == 1
    assert found.labelled == len(sample.items) - 1
    assert found.unsure_range is not None
    (story_wrong, story_right), (question_wrong, question_right) = found.unsure_range
    assert story_wrong <= story_right and question_wrong < question_right
    shown = runner.invoke(app, ["calibrate", "--db", str(db), "--run", "c"], terminal_width=250)
    assert shown.exit_code == 0 and "1 sampled StoryTurn is left out of the estimate" in shown.output, shown.output
    assert f"{100 * question_wrong:.1f}-{100 * question_right:.1f} %" in shown.output


def test_a_one_sided_redraw_breaks_the_pairing_and_says_so(db: Path) -> None:
    """Run b's half of the a/b paired sample drawn again on its own: compare has no paired sample, run a's calibration
    says the pairing is broken (no figure, no stale 'label run b too'), and continuing a's sample is refused rather
    than overwriting b's new sample."""
    redrawn = runner.invoke(app, ["calibrate", "--db", str(db), "--run", "b", "--sample", "6", "--redraw"])
    assert redrawn.exit_code == 0 and "run a's half of the old paired sample is no longer paired" in redrawn.output
    with Store(db) as store:
        b_sample = load_sample(store, "b")
    assert b_sample is not None and b_sample.partner is None
    compared = runner.invoke(app, ["compare", "a", "b", "--db", str(db)], terminal_width=200)
    assert "no paired sample of runs 'a' and 'b' yet" in compared.output
    shown = runner.invoke(app, ["calibrate", "--db", str(db), "--run", "a"], terminal_width=250)
    assert shown.exit_code == 0 and "the pairing is broken" in shown.output, shown.output
    assert "label its answers there too" not in shown.output
    grown = runner.invoke(app, ["calibrate", "--db", str(db), "--run", "a", "--sample", "17"], terminal_width=250)
    assert grown.exit_code == 2 and "the pairing is broken" in grown.output and "Traceback" not in grown.output
    with Store(db) as store:
        assert load_sample(store, "b") == b_sample  # b's own sample untouched
    repaired = runner.invoke(app, ["calibrate", "--db", str(db), "--run", "a", "--pair", "b", "--sample", "16",
                                   "--redraw"])
    assert repaired.exit_code == 0, repaired.output
    again = runner.invoke(app, ["compare", "a", "b", "--db", str(db)], terminal_width=250)
    assert "16 of the paired sample's 16 StoryTurns labelled in both runs" in again.output, again.output
