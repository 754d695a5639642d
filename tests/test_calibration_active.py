"""The active design (issue 46): each StoryTurn drawn with a probability that grows with the judge's uncertainty,
the accuracy estimated with inverse-probability weights. By hand on a tiny example, unbiased and covering by
simulation (fixed seeds), and end to end through a real SQLite store, ``commet calibrate`` and ``commet label``."""

from __future__ import annotations

import asyncio
import csv
import hashlib
import importlib.util
import io
import json
import sys
from math import sqrt
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from commet.cli import app
from commet.conditions import Design
from commet.engine import EvalSettings, evaluate, evaluate_async
from commet.engine.rejudge import rejudge
from commet.judges import create_judge
from commet.reports.active import PSEUDO_LABELS, active_ppi, inclusion, weights
from commet.reports.calibration import split_answers
from commet.reports.ppi import t_value
from commet.sources import load_dataset
from commet.store import Store
from commet.store.calibration import load_sample
from tests.judge_server import REPLIES as SERVER_REPLIES
from tests.judge_server import JudgeServer, write_dataset, write_replies
from tests.test_calibration_e2e import REPLIES, TRUTH, U, _dataset
from tests.test_judges_agreement import three_judges

runner = CliRunner()
BENCH = Path(__file__).resolve().parent.parent / "bench" / "bench_calibration.py"


@pytest.fixture(scope="module")
def bench():  # noqa: ANN201 - the bench module
    spec = importlib.util.spec_from_file_location("bench_calibration", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_estimate_and_its_variance_by_hand() -> None:
    w = np.array([0.5, 0.2, 0.4, 0.1, 0.3])
    u = np.array([0.25, 0.5, 0.9, 0.05, 0.6])  # priorities 2, 0.4, 0.444, 2, 0.5: the first two are 0 and 3
    chosen, pi = inclusion(w, u, 2)
    tau = 0.5  # the third priority
    assert chosen.tolist() == [[True, False, False, True, False]]
    assert np.allclose(pi, np.minimum(1, w / tau))  # 1, 0.4, 0.8, 0.2, 0.6
    x, f = np.array([2.0, 1, 3, 1, 2]), np.array([1.0, 1, 2, 1, 2])
    y = np.array([2.0, 0, 0, 0, 0])  # labelled: unit 0 (2 right, judged 1), unit 3 (0 right, judged 1)
    strata = np.array([0, 0, 1, 1, 1])
    found = active_ppi(x, f, y, chosen, pi, strata)
    hand = (7 + (2 - 1) / 1.0 + (0 - 1) / 0.2) / 9  # judged total + sum (y - f) / pi, over the answers
    assert float(found.theta[0]) == pytest.approx(hand, abs=1e-12)
    # labels variance: per stratum (n A + m * sum(1/pi - 1)) / (n + 1), A the unbiased sum of (y - f)^2 (1 - pi)/pi^2
    rate0, rate1 = 2 / 3, 5 / 6  # judged rates of the strata
    m0, m1 = (rate0 ** 2 + (1 - rate0) ** 2) / 2, (rate1 ** 2 + (1 - rate1) ** 2) / 2
    part0 = (1 * 0.0 + PSEUDO_LABELS * m0 * (0 + 1.5)) / (1 + PSEUDO_LABELS)
    part1 = (1 * (1 * 0.8 / 0.04) + PSEUDO_LABELS * m1 * (0.25 + 4 + 2 / 3)) / (1 + PSEUDO_LABELS)
    assert float(found.se_labels[0]) ** 2 == pytest.approx((part0 + part1) / 81, rel=1e-12)
    # StoryTurns part: N/(N-1) m2 N / X^2, m2 the PPI (IPW) mean of (y - theta x)^2
    judged = (f - hand * x) ** 2
    m2 = (judged.sum() + ((y - hand * x) ** 2 - judged)[[0, 3]] @ np.array([1 / 1.0, 1 / 0.2])) / 5
    assert float(found.se_stories[0]) ** 2 == pytest.approx(m2 * 5 / 4 * 5 / 81, rel=1e-12)
    parts = np.array([part0, part1]) / 81
    var = (part0 + part1) / 81 + m2 * 5 / 4 * 5 / 81
    df = var ** 2 / ((parts ** 2).sum() + (m2 * 5 / 4 * 5 / 81) ** 2 / 4)
    half = float(t_value(df)) * sqrt(var)
    assert float(found.low[0]) == pytest.approx(max(0.0, hand - half)) and float(found.high[0]) == pytest.approx(
        min(1.0, hand + half))


def test_inverse_probability_weights_keep_the_estimate_unbiased(bench) -> None:  # noqa: ANN001
    rng = np.random.default_rng(11)
    run = bench.simulate(bench.Judge(0.7, 0.97), rng, 1, 300)  # one fixed run: its true accuracy is known exactly
    draws = 4000
    x = np.broadcast_to(run.turns.astype(float), (draws, 300))
    w = weights(run.uncertainty)
    chosen, pi = inclusion(np.broadcast_to(w, (draws, 300)), rng.random((draws, 300)), 25)
    assert (chosen.sum(axis=1) == 25).all()
    strata = bench.strata_of(run)
    found = active_ppi(x, np.broadcast_to(run.question_f, x.shape), np.broadcast_to(run.question_y, x.shape), chosen,
                       pi, strata)
    truth = float(run.question_y.sum() / run.turns.sum())
    judged = float(run.question_f.sum() / run.turns.sum())
    assert abs(judged - truth) > 0.05  # the judge is biased ...
    assert abs(found.theta.mean() - truth) < 3 * found.theta.std() / sqrt(draws)  # ... the estimate is not
    # the labels variance it reports is about the estimate's spread over the draws (conservative: pseudo-labels)
    assert 0.9 * found.theta.std() < float(np.sqrt(np.mean(found.se_labels ** 2))) < 1.6 * found.theta.std()


@pytest.mark.parametrize("labels", [10, 15, 30])
def test_the_active_interval_covers_at_small_budgets(bench, labels: int) -> None:  # noqa: ANN001
    for judge in (bench.Judge(0.99, 0.99), bench.Judge(0.7, 0.97)):
        story, question, _, _ = bench.coverage(judge, labels, runs=300, stories=600, seed=5, design=Design.active)
        assert story >= 93 and question >= 93, (judge, labels, story, question)


def _priority_order(stories: dict[str, list[str]], seed: int) -> list[str]:
    """By hand: the prior error rates (rules 0.02, undecided 0.5), weights sqrt(sum), floored at half the
    mean, priorities weight / uniform(sha256("active:SEED:ID"))."""
    raw = {s: sqrt(sum(0.5 if r == U else 0.02 for r in replies)) for s, replies in stories.items()}
    floor = 0.5 * sum(raw.values()) / len(raw)
    draw = {s: (int(hashlib.sha256(f"active:{seed}:{s}".encode()).hexdigest()[:13], 16) + 0.5) / 16 ** 13
            for s in stories}
    return sorted(stories, key=lambda s: -max(raw[s], floor) / draw[s])


def test_active_sample_through_the_store_label_and_calibrate(tmp_path: Path) -> None:
    folder = _dataset(tmp_path / "dataset")
    (tmp_path / "r.json").write_text(json.dumps(REPLIES))
    db = tmp_path / "results.sqlite"
    asyncio.run(evaluate_async(f"replay:{tmp_path / 'r.json'}", load_dataset(folder), judge="rules", db=db, run="a"))
    base = ["calibrate", "--db", str(db), "--run", "a"]
    refused = runner.invoke(app, [*base, "--sample", "8", "--design", "active", "--estimator", "ppi++"])
    assert refused.exit_code == 2 and "leave --estimator out" in refused.output
    drawn = runner.invoke(app, [*base, "--sample", "8", "--design", "active", "--seed", "3"])
    assert drawn.exit_code == 0, drawn.output
    assert "drew 8 StoryTurns of run a (seed 3, active design" in drawn.output
    order = _priority_order(REPLIES, 3)
    with Store(db) as store:
        sample = load_sample(store, "a")
    assert sample is not None and sample.design is Design.active
    assert [item.story_id for item in sample.items] == order[:8]
    assert sample.rates == {"rules": 0.02, "undecided": 0.5}
    assert "an active sample needs its first 6 StoryTurns labelled, in its order (labelled from the start: 0)" \
        in drawn.output
    # ann labels the first six StoryTurns in the terminal, in the sample's order, then quits
    first = order[:6]
    keys = "".join("y\n" if v else "n\n" for s in first for v in TRUTH[s]) + "q\n"
    labelled = runner.invoke(app, ["label", "--db", str(db), "--run", "a", "--labeller", "ann", "--calibration"],
                             input=keys)
    assert labelled.exit_code == 0, labelled.output
    assert labelled.output.index(f"Story {first[0]}") < labelled.output.index(f"Story {first[1]}")
    result = runner.invoke(app, [*base, "--format", "csv", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    row = next(csv.DictReader(io.StringIO((tmp_path / "out" / "calibration.csv").read_text())))
    # by hand: tau is the 7th priority; pi = min(1, w / tau); answers right = judged + sum (y - f) / pi
    raw = {s: sqrt(sum(0.5 if r == U else 0.02 for r in replies)) for s, replies in REPLIES.items()}
    floor = 0.5 * sum(raw.values()) / len(raw)
    draw = {s: (int(hashlib.sha256(f"active:3:{s}".encode()).hexdigest()[:13], 16) + 0.5) / 16 ** 13 for s in REPLIES}
    w = {s: max(raw[s], floor) for s in REPLIES}
    tau = w[order[6]] / draw[order[6]]
    judged = sum(r == "The apple." for replies in REPLIES.values() for r in replies)
    right = judged + sum((sum(TRUTH[s]) - sum(r == "The apple." for r in REPLIES[s])) / min(1, w[s] / tau)
                         for s in first)
    stories = sum(all(r == "The apple." for r in replies) for replies in REPLIES.values()) + sum(
        (all(TRUTH[s]) - all(r == "The apple." for r in REPLIES[s])) / min(1, w[s] / tau) for s in first)
    assert float(row["Question accuracy (corrected)"]) == pytest.approx(100 * right / 22, abs=1e-3)
    assert float(row["Story accuracy (corrected)"]) == pytest.approx(100 * stories / 11, abs=1e-3)
    assert row["Labelled"] == "6 of 8"
    shown = runner.invoke(app, [*base, "--format", "markdown"])
    assert "active PPI (inverse-probability weights), 6 StoryTurns labelled in order" in shown.output
    report = runner.invoke(app, ["report", "--db", str(db), "--run", "a", "--table", "calibration", "--format", "csv",
                                 "--out", str(tmp_path / "report")])
    assert report.exit_code == 0, report.output
    same = next(csv.DictReader(io.StringIO((tmp_path / "report" / "calibration.csv").read_text())))
    assert same["Story accuracy (corrected)"] == row["Story accuracy (corrected)"]
    assert same["Question accuracy (corrected) CI low"] == row["Question accuracy (corrected) CI low"]
    # a larger --sample continues the same order; another design is refused
    grown = runner.invoke(app, [*base, "--sample", "10"])
    assert grown.exit_code == 0 and "added 2 StoryTurns to the sample of run a, now 10" in grown.output
    with Store(db) as store:
        again = load_sample(store, "a")
    assert again is not None and [item.story_id for item in again.items] == order[:10]
    # drawn again, the weights learn from the labels given: each decider's disagreements over its labelled answers,
    # shrunk towards its prior (8 answers' worth); an undecided answer errs when the people call it right
    redrawn = runner.invoke(app, [*base, "--sample", "8", "--design", "active", "--seed", "4", "--redraw"])
    assert redrawn.exit_code == 0, redrawn.output
    pairs = [(reply, truth) for s in first for reply, truth in zip(REPLIES[s], TRUTH[s], strict=True)]
    rules = [(reply == "The apple.") is not truth for reply, truth in pairs if reply != U]
    undecided = [truth for reply, truth in pairs if reply == U]
    with Store(db) as store:
        learned = load_sample(store, "a")
    assert learned is not None and learned.rates == pytest.approx(
        {"rules": (sum(rules) + 8 * 0.02) / (len(rules) + 8), "undecided": (sum(undecided) + 8 * 0.5) / (len(undecided)
                                                                                                         + 8)})
    assert sum(rules) >= 1 and undecided  # the labels above hold a rules error and an undecided answer
    switched = runner.invoke(app, [*base, "--sample", "11", "--design", "optimal"])
    assert switched.exit_code == 2
    assert "the run's sample is active: a larger --sample continues it only with that design" in switched.output


def test_a_panel_that_splits_makes_its_answers_more_uncertain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run judged by a panel of three loopback LLM judges: judge-b rejects the answer with 'never', judge-c the one
    with 'taste', so the panel decides those two answers 2 to 1 and the others unanimously."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-test-key")
    dataset = write_dataset(tmp_path / "ds")
    db = tmp_path / "r.sqlite"
    evaluate(write_replies(tmp_path / "replies.json"), dataset, judge="rules", db=db, run="base",
             settings=EvalSettings(undecided_feedback="wrong"))

    async def panel(server: JudgeServer) -> str:
        judge = create_judge("llm-only:panel:" + ",".join(server.spec(m) for m in ("judge-a", "judge-b", "judge-c")))
        with Store(db) as store:
            await rejudge(store, "base", judge, dataset, new_name="p")
        await judge.aclose()
        return judge.name

    with JudgeServer(three_judges) as server:
        name = asyncio.run(panel(server))
    with Store(db) as store:
        record = store.get_run("p")
        assert record is not None
        split = split_answers(store, record)
    assert split == {(story, turn) for story, replies in SERVER_REPLIES.items() for turn, reply in enumerate(replies)
                     if "never" in reply or "taste" in reply}
    drawn = runner.invoke(app, ["calibrate", "--db", str(db), "--run", "p", "--sample", "2", "--design", "active"])
    assert drawn.exit_code == 0, drawn.output
    with Store(db) as store:
        sample = load_sample(store, "p")
    assert sample is not None and sample.rates == {name: 0.15, f"{name} split": 0.3}
