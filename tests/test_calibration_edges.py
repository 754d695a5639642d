"""`commet calibrate` at the edges of what labels can say, every figure recomputed by hand from the store's rows:
a judge the people always agree with, one they never agree with, and labels of one class only.

Ten StoryTurns of two turns judged by the rules ("The apple." right, "The pear." wrong); a proportional sample of
six (seed 1) drawn by the CLI, labelled through the store. A kappa whose resamples cannot vary (every labelled
StoryTurn of a stratum alike) was a point, "-0.835 [-0.835, -0.835]", for the judge that is always wrong; an
undefined kappa was a bare "-" with no word of why.
"""

from __future__ import annotations

import asyncio
import csv
import json
from math import exp, lgamma, log, sqrt
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.cli import app
from commet.engine import evaluate_async
from commet.format.dataset import Dataset
from commet.format.model import Feedback, StoryTurn, Turn
from commet.store import Store
from commet.store.calibration import load_sample
from commet.store.labels import set_label

R, W = "The apple.", "The pear."
QUESTION = "Which fruit, the apple or the pear?"
IDS = [f"s{k}" for k in range(10)]
#: s1, s4, s7 all right; every other StoryTurn has one wrong answer (turn 1 for s0, s3, s6, s9; turn 2 else)
MIXED = {story: [R if (k + t) % 3 else W for t in range(2)] for k, story in enumerate(IDS)}
Z = 1.959963984540054
runner = CliRunner()


def _dataset() -> Dataset:
    def story(story_id: str) -> StoryTurn:
        return StoryTurn(id=story_id, task="false_belief_location", category="Belief", image_dependent=False,
                         turns=[Turn(story=f"Story {story_id}.", question=QUESTION, answers=["The apple"]),
                                Turn(feedback=Feedback(right="Good.", wrong="Look."), question=QUESTION,
                                     answers=["The apple"])])
    return Dataset([story(s) for s in IDS], name="edges")


def _calibrated(root: Path, replies: dict[str, list[str]], truth: str, sample: int) -> tuple[Path, list[str]]:
    """A run of ``replies``, a sample drawn by the CLI and labelled: ``truth`` 'judge' (the people agree with the
    judge), 'opposite' (they never do) or 'right' (every answer right)."""
    (root / "r.json").write_text(json.dumps(replies))
    db = root / "s.sqlite"
    asyncio.run(evaluate_async(f"replay:{root / 'r.json'}", _dataset(), judge="rules", db=db, run="run"))
    drawn = runner.invoke(app, ["calibrate", "--db", str(db), "--run", "run", "--sample", str(sample), "--seed", "1",
                                "--design", "proportional"])
    assert drawn.exit_code == 0, drawn.output
    with Store(db) as store:
        found = load_sample(store, "run")
        assert found is not None
        sampled = [item.story_id for item in found.items]
        for story in sampled:
            for turn, reply in enumerate(replies[story]):
                judged = reply == R
                right = {"judge": judged, "opposite": not judged, "right": True}[truth]
                set_label(store, run="run", story_id=story, turn=turn, response=reply,
                          label="correct" if right else "incorrect", labeller="ann")
        store.db.commit()
    return db, sampled


def _tables(db: Path, out: Path) -> dict[str, dict[str, str]]:
    result = runner.invoke(app, ["calibrate", "--db", str(db), "--run", "run", "--format", "csv", "--out", str(out),
                                 "--resamples", "200"])
    assert result.exit_code == 0, result.output
    return {name: next(csv.DictReader((out / f"{name}.csv").open()))
            for name in ("calibration", "judge-calibration")}


def _wilson(k: float, n: float) -> tuple[float, float]:
    centre, half = (k / n + Z * Z / (2 * n)), Z * sqrt(k / n * (1 - k / n) / n + Z * Z / (4 * n * n))
    return (centre - half) / (1 + Z * Z / n), (centre + half) / (1 + Z * Z / n)


def _hand(sampled: list[str], truth: str, replies: dict[str, list[str]]) -> dict[str, float]:
    """PPI and the judge's weighted agreement and kappa, by hand: strata 'judged right' (every answer right by the
    rules) and 'judged wrong'; a labelled StoryTurn weighs its stratum's size over its labelled count."""
    judged = {s: [r == R for r in replies[s]] for s in IDS}
    truths = {s: [{"judge": v, "opposite": not v, "right": True}[truth] for v in judged[s]] for s in IDS}
    strata = {h: [s for s in IDS if all(judged[s]) == (h == "right")] for h in ("right", "wrong")}
    story_total, question_total = sum(all(v) for v in judged.values()), sum(sum(v) for v in judged.values())
    cells = [0.0] * 4  # both right, judge only, people only, neither: weighted
    for members in strata.values():
        mine = [s for s in members if s in sampled]
        if not mine:
            continue
        weight = len(members) / len(mine)
        story_total += weight * sum(all(truths[s]) - all(judged[s]) for s in mine)
        question_total += weight * sum(sum(truths[s]) - sum(judged[s]) for s in mine)
        for s in mine:
            for j, t in zip(judged[s], truths[s], strict=True):
                cells[{(True, True): 0, (True, False): 1, (False, True): 2, (False, False): 3}[j, t]] += weight
    total = sum(cells)
    first, second = (cells[0] + cells[1]) / total, (cells[0] + cells[2]) / total
    chance = first * second + (1 - first) * (1 - second)
    agree = (cells[0] + cells[3]) / total
    weights = [len(m) / len([s for s in m if s in sampled]) for m in strata.values() for s in m if s in sampled]
    effective = (2 * sum(weights)) ** 2 / sum(2 * w * w for w in weights)  # Kish, two answers per StoryTurn
    low, high = _wilson(agree * effective, effective)
    low, high = (0.0 if agree == 0 else low), (1.0 if agree == 1 else high)
    kappa = (agree - chance) / (1 - chance) if chance < 1 else float("nan")
    return {"story": 100 * story_total / 10, "question": 100 * question_total / 20, "agree": 100 * agree,
            "low": 100 * low, "high": 100 * high, "kappa": kappa,
            "kappa_low": (low - chance) / (1 - chance) if chance < 1 else float("nan"),
            "kappa_high": (high - chance) / (1 - chance) if chance < 1 else float("nan")}


def _student_quantile(df: float, p: float = 0.975) -> float:
    """Student's t quantile by bisection on its CDF, the regularised incomplete beta by Lentz's continued fraction
    (plain Python, independent of the package's Cornish-Fisher approximation)."""
    def beta_cf(a: float, b: float, x: float) -> float:
        c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
        d = 1 / d
        h = d
        for m in range(1, 300):
            for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                        -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
                d, c = 1 / (1 + num * d), 1 + num / c
                h *= d * c
        return h

    def cdf(t: float) -> float:
        x = df / (df + t * t)
        a, b = df / 2, 0.5
        front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log(1 - x)) / a
        tail = front * beta_cf(a, b, x) / 2  # P(T > |t|)
        return 1 - tail if t > 0 else tail

    low, high = 0.0, 50.0
    for _ in range(100):
        mid = (low + high) / 2
        low, high = (mid, high) if cdf(mid) < p else (low, mid)
    return (low + high) / 2


def _ppi_interval(sampled: list[str], truth: str, replies: dict[str, list[str]], story: bool) -> tuple[float, float]:
    """The stratified PPI interval as docs/calibration.md states it, by hand: per sampled stratum the rectifiers
    y - f of its labels with two pseudo-units at the ends of one answer's range (-r, 1 - r at the stratum's judged
    rate r), N_h^2 (1 - n_h/N_h) s_h^2 / n_h; the StoryTurns' part N/(N-1) m2 N / X^2, m2 by PPI; Student's t at
    Satterthwaite's degrees of freedom. (The pooled-labels ceiling on the pseudo-units does not bind here: the
    rules judge's labelled error rate bounds it at 1.44 or more, above what the pseudo-units add.)"""
    judged = {s: [r == R for r in replies[s]] for s in IDS}
    truths = {s: [{"judge": v, "opposite": not v, "right": True}[truth] for v in judged[s]] for s in IDS}
    x = {s: 1.0 if story else 2.0 for s in IDS}
    f = {s: float(all(judged[s])) if story else float(sum(judged[s])) for s in IDS}
    y = {s: float(all(truths[s])) if story else float(sum(truths[s])) for s in IDS}
    strata = [[s for s in IDS if all(judged[s]) == right] for right in (True, False)]
    total_x, n_all = sum(x.values()), len(IDS)
    theta = (sum(f.values()) + sum(len(m) * sum(y[s] - f[s] for s in m if s in sampled)
                                   / len([s for s in m if s in sampled]) for m in strata)) / total_x
    parts, dfs = [], 0.0
    for members in strata:
        mine = [s for s in members if s in sampled]
        rate = sum(f[s] for s in members) / sum(x[s] for s in members)  # right per answer
        values = [y[s] - f[s] for s in mine] + [-rate, 1 - rate]
        mean = sum(values) / len(values)
        variance = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
        big, small = len(members), len(mine)
        part = big ** 2 * (1 - small / big) / small * variance / total_x ** 2
        parts.append(part)
        dfs += part ** 2 / (small - 1)
    m2 = (sum((f[s] - theta * x[s]) ** 2 for s in IDS) + sum(
        len(m) * sum((y[s] - theta * x[s]) ** 2 - (f[s] - theta * x[s]) ** 2 for s in m if s in sampled)
        / len([s for s in m if s in sampled]) for m in strata)) / n_all
    stories = max(m2, 0.0) * n_all / (n_all - 1) * n_all / total_x ** 2
    total = sum(parts) + stories
    df = total ** 2 / (dfs + stories ** 2 / (n_all - 1))
    half = _student_quantile(df) * sqrt(total)
    return 100 * max(0.0, theta - half), 100 * min(1.0, theta + half)


def _kappa(text: str) -> tuple[float, float, float]:
    point, interval = text.split(" [")
    low, high = interval.rstrip("]").split(", ")
    return float(point), float(low), float(high)


@pytest.mark.parametrize("truth", ["judge", "opposite"])
def test_a_judge_always_or_never_agreeing_gets_a_kappa_interval_not_a_point(tmp_path: Path, truth: str) -> None:
    db, sampled = _calibrated(tmp_path, MIXED, truth, 6)
    hand = _hand(sampled, truth, MIXED)
    tables = _tables(db, tmp_path / "out")
    corrected, judge = tables["calibration"], tables["judge-calibration"]
    assert float(corrected["Story accuracy (corrected)"]) == pytest.approx(hand["story"], abs=1e-4)
    assert float(corrected["Question accuracy (corrected)"]) == pytest.approx(hand["question"], abs=1e-4)
    assert float(judge["Accuracy"]) == pytest.approx(hand["agree"], abs=1e-4)
    assert float(judge["Accuracy CI low"]) == pytest.approx(hand["low"], abs=1e-3)
    assert float(judge["Accuracy CI high"]) == pytest.approx(hand["high"], abs=1e-3)
    point, low, high = _kappa(judge["Kappa"])
    assert point == pytest.approx(hand["kappa"], abs=6e-4)
    # the resamples cannot vary (every labelled StoryTurn of a stratum is alike): the agreement's Wilson interval
    # carried to kappa at the observed chance agreement, never a point
    assert low == pytest.approx(max(-1.0, hand["kappa_low"]), abs=6e-4)
    assert high == pytest.approx(min(1.0, hand["kappa_high"]), abs=6e-4)
    assert high - low > 0.1
    for measure, story in (("Story", True), ("Question", False)):  # (0.05: the package's t is Cornish-Fisher's,
        low, high = _ppi_interval(sampled, truth, MIXED, story)  # within 0.004 of the exact quantile: 0.01 points here)
        column = f"{measure} accuracy (corrected)"
        assert float(corrected[f"{column} CI low"]) == pytest.approx(low, abs=0.05), (measure, low, high)
        assert float(corrected[f"{column} CI high"]) == pytest.approx(high, abs=0.05), (measure, low, high)
    if truth == "opposite":  # the always-wrong judge: corrected to the people's 0 % and 35 %
        assert (hand["story"], hand["question"], point) == (0.0, 35.0, pytest.approx(-0.835, abs=6e-4))


def test_labels_of_one_class_say_kappa_is_not_known_and_why(tmp_path: Path) -> None:
    replies = {story: [R, R] for story in IDS}
    db, sampled = _calibrated(tmp_path, replies, "right", 6)
    tables = _tables(db, tmp_path / "out")
    judge = tables["judge-calibration"]
    assert judge["Kappa"] == "not known"
    # agreement 12 of 12, equal weights: Wilson's lower end at n = 12
    assert float(judge["Accuracy CI low"]) == pytest.approx(100 * 12 / (12 + Z * Z), abs=1e-3)
    shown = runner.invoke(app, ["calibrate", "--db", str(db), "--run", "run", "--format", "markdown"])
    assert shown.exit_code == 0, shown.output
    assert "| not known |" in shown.stdout and "Kappa not known: " in shown.stdout and "nan" not in shown.stdout
