"""``commet calibrate`` end to end on a real SQLite store: a replayed run judged by the rules, a seeded sample drawn
and recorded, labels given with ``commet label --calibration`` and in the review app in headless Chromium, and the
corrected figures and the judge's confusion compared with a hand computation.

Eleven StoryTurns of two turns, each question naming its two options: "The apple." is right by the rules judge,
"The pear." wrong, "Hmm, hard to say really." undecided (on second turns, so no StoryTurn stops). The people's
truth differs from the judge on three answers: s2's second "The apple." is wrong after all, s4's first "The pear."
right, and of the two undecided answers s6's is right and s7's wrong.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image
from playwright.sync_api import Browser, Page, expect, sync_playwright
from typer.testing import CliRunner

from commet.apps.review.app import create_app
from commet.apps.review.db import ReviewDB
from commet.cli import app
from commet.engine import evaluate_async
from commet.format.dataset import Dataset
from commet.format.model import Feedback, StoryTurn, Turn
from commet.reports.ppi import t_value
from commet.sources import load_dataset
from commet.store import Store
from commet.store.calibration import load_sample
from commet.store.labels import all_labels
from tests.conftest import launch_chromium
from tests.review_server import PASSWORD, VIEWPORTS, check, serving

R, W, U = "The apple.", "The pear.", "Hmm, hard to say really."
QUESTION = "Which fruit, the apple or the pear?"
REPLIES = {"s0": [R, R], "s1": [R, R], "s2": [R, R], "s3": [R, W], "s4": [W, R], "s5": [W, W], "s6": [R, U],
           "s7": [R, U], "s8": [R, R], "s9": [W, R], "p0": [R, R]}
#: the people's truth: as the rules judge says, except these
TRUTH = {story: [reply == R for reply in replies] for story, replies in REPLIES.items()}
TRUTH["s2"][1], TRUTH["s4"][0], TRUTH["s6"][1], TRUTH["s7"][1] = False, True, True, False
#: seed 7 draws (by sha256("7:" + id)) s2, p0, s8, s1 of the five judged right, s4, s3 of the four judged wrong,
#: and both undecided; in the order s4, s2, s3, s7, p0, s8, s1, s6
SEED, SAMPLE = 7, ["s4", "s2", "s3", "s7", "p0", "s8", "s1", "s6"]
RUN = "calibrated"

expect.set_options(timeout=20_000)


def _png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), (40, 160, 90)).save(buffer, format="PNG")
    return buffer.getvalue()


def _dataset(folder: Path) -> Path:
    def story(story_id: str) -> StoryTurn:
        first = Turn(story=f"Story {story_id}: a bowl holds an apple and a pear.", question=QUESTION,
                     answers=["The apple"], image="p0.png" if story_id == "p0" else None)
        second = Turn(feedback=Feedback(right="Good.", wrong="Look again."), question=QUESTION, answers=["The apple"])
        return StoryTurn(id=story_id, task="reference_easy" if story_id == "p0" else "false_belief_location",
                         category="Percept" if story_id == "p0" else "Belief", image_dependent=story_id == "p0",
                         turns=[first, second])

    Dataset([story(s) for s in REPLIES], name="calibration", images={"p0.png": _png()}).save(folder)
    return folder


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("calibration")
    folder = _dataset(root / "dataset")
    (root / "r.json").write_text(json.dumps(REPLIES))
    db = root / "results.sqlite"
    asyncio.run(evaluate_async(f"replay:{root / 'r.json'}", load_dataset(folder), judge="rules", db=db, run=RUN))
    return folder, db


runner = CliRunner()


def _hand_ppi(pop: dict[str, list[str]], value) -> float:  # noqa: ANN001 - a function of a StoryTurn
    """sum over the run of the judge's figure, plus each stratum's size times the mean correction of its labelled."""
    total = sum(value(story, judged=True) for members in pop.values() for story in members)
    for members in pop.values():
        labelled = [s for s in members if s in SAMPLE]
        total += len(members) * sum(value(s, judged=False) - value(s, judged=True) for s in labelled) / len(labelled)
    return total


def _story_right(story: str, *, judged: bool) -> float:
    verdicts = [reply == R for reply in REPLIES[story]] if judged else TRUTH[story]
    return float(all(verdicts))


def _answers_right(story: str, *, judged: bool) -> float:
    return float(sum([reply == R for reply in REPLIES[story]] if judged else TRUTH[story]))


STRATA = {"rules only, judged right": ["s0", "s1", "s2", "s8", "p0"],
          "rules only, judged wrong": ["s3", "s4", "s5", "s9"], "undecided answers": ["s6", "s7"]}


def test_draw_is_seeded_recorded_and_refused_again_without_redraw(world: tuple[Path, Path]) -> None:
    _, db = world
    drawn = runner.invoke(app, ["calibrate", "--db", str(db), "--run", RUN, "--sample", "8", "--seed", str(SEED),
                                "--design", "proportional"])  # the hand-computed shares below are proportional's
    assert drawn.exit_code == 0, drawn.output
    assert "drew 8 StoryTurns" in drawn.output and "rules only, judged right: 4 of 5" in drawn.output
    with Store(db) as store:
        sample = load_sample(store, RUN)
    assert sample is not None and [item.story_id for item in sample.items] == SAMPLE
    assert sample.population == {h: len(m) for h, m in STRATA.items()} and sample.seed == SEED
    for other in (["--sample", "5"], ["--seed", "8"]):
        again = runner.invoke(app, ["calibrate", "--db", str(db), "--run", RUN, *other])
        assert again.exit_code == 2 and "already has a calibration sample (8 StoryTurns, seed 7" in again.output
    shown = runner.invoke(app, ["calibrate", "--db", str(db), "--run", RUN])  # the sample as it stands
    assert shown.exit_code == 0 and "0 of the 8 sampled StoryTurns labelled" in shown.output
    none = runner.invoke(app, ["calibrate", "--db", str(db), "--run", "nosuch", "--sample", "5"])
    assert none.exit_code == 2 and "no run named 'nosuch'" in none.output
    assert "needs at least 2 labelled StoryTurns in every stratum" in drawn.output


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = launch_chromium(playwright)
        yield launched
        launched.close()


def _sign_in(browser: Browser, base: str, viewport: str) -> Page:
    page = browser.new_context(base_url=base, viewport=VIEWPORTS[viewport]).new_page()
    page.goto("/login")
    page.fill("input[name=name]", "alice")
    page.fill("input[name=password]", PASSWORD)
    page.click("main button[type=submit]")
    expect(page.locator("h1")).to_have_text("Items")
    return page


def test_labels_from_the_cli_and_the_review_app_give_the_hand_computed_calibration(
        world: tuple[Path, Path], browser: Browser, tmp_path: Path) -> None:
    folder, db = world
    with Store(db) as results:
        drawn = load_sample(results, RUN) is not None
    if not drawn:  # (this test run alone)
        assert runner.invoke(app, ["calibrate", "--db", str(db), "--run", RUN, "--sample", "8", "--seed",
                                   str(SEED), "--design", "proportional"]).exit_code == 0
    # ann labels the first two sampled StoryTurns (s4, s2) in the terminal, then quits
    order = [(story, turn) for story in SAMPLE for turn in range(2)]
    keys = "".join("y\n" if TRUTH[s][t] else "n\n" for s, t in order[:4]) + "q\n"
    labelled = runner.invoke(app, ["label", "--db", str(db), "--run", RUN, "--labeller", "ann", "--calibration"],
                             input=keys)
    assert labelled.exit_code == 0, labelled.output
    assert "stored 4 labels; 12 answers of the calibration sample of run calibrated are not labelled by ann" \
        in labelled.output
    assert labelled.output.index("Story s4") < labelled.output.index("Story s2")  # the sample's order

    # alice labels every answer of the sample in the review app (she agrees with ann on s4 and s2)
    store = ReviewDB(tmp_path / "review.sqlite")
    store.add_user("alice", PASSWORD)
    seen: set[str] = set()
    with serving(create_app(folder, store, results=db)) as base:
        page = _sign_in(browser, base, "desktop")
        page.click("nav >> text=Calibration")
        expect(page.locator("h1")).to_have_text("Label answers for judge calibration")
        expect(page.locator("table.grid tbody tr")).to_have_count(1)
        check(page, seen)
        page.click("text=Label next")
        for number, (story, turn) in enumerate(order):
            expect(page.locator("#progress")).to_have_text(f"{number} of 16 answers labelled by you")
            assert (page.locator("#story").inner_text(), page.locator("#turn").inner_text()) == (story, str(turn + 1))
            assert page.locator("#reply").inner_text() == REPLIES[story][turn]
            if story == "p0" and turn == 0:  # the picture the model saw, from the dataset served
                image = page.locator("#this-turn img")
                expect(image).to_have_count(1)
                page.wait_for_function("document.querySelector('#this-turn img').complete")  # loaded, or failed
                assert page.evaluate("document.querySelector('#this-turn img').naturalWidth") == 64
            if number == 1:
                assert page.locator("details.card .exchange").count() == 1  # the conversation so far
                check(page, seen)
            page.click("#right" if TRUTH[story][turn] else "#wrong")
        expect(page.locator(".flash")).to_contain_text("Every answer of run calibrated's calibration sample has "
                                                       "your label")
        for viewport in ("phone",):  # the same pages fit a phone and pass axe-core
            phone = _sign_in(browser, base, viewport)
            phone.goto("/calibration")
            check(phone, set())
    with Store(db) as results:
        by = {(label.labeller, label.story_id, label.turn): label.label for label in all_labels(results)}
    assert len([k for k in by if k[0] == "alice"]) == 16 and len([k for k in by if k[0] == "ann"]) == 4
    assert by[("alice", "s4", 0)] == "correct" and by[("alice", "s2", 1)] == "incorrect"

    out = tmp_path / "calibration.v1"  # a folder whose name has a dot
    result = runner.invoke(app, ["calibrate", "--db", str(db), "--run", RUN, "--format", "csv", "--out", str(out)])
    assert result.exit_code == 0, result.output
    row = next(csv.DictReader(io.StringIO((out / "calibration.csv").read_text())))
    # by hand: story accuracy (5 + 5 (-1/4) + 4 (1/2) + 2 (1/2)) / 11 = 6.75 / 11; the people's truth is 6 / 11
    story = _hand_ppi(STRATA, _story_right)
    question = _hand_ppi(STRATA, _answers_right)
    assert story == pytest.approx(6.75) and question == pytest.approx(16.75)
    assert float(row["Story accuracy (corrected)"]) == pytest.approx(100 * 6.75 / 11, abs=1e-3)
    assert float(row["Question accuracy (corrected)"]) == pytest.approx(100 * 16.75 / 22, abs=1e-3)
    assert (row["Story accuracy (judged) k"], row["Story accuracy (judged) n"]) == ("5", "11")
    assert row["Labelled"] == "8 of 8"
    # the interval: labels part from stratum 'judged right' (n = 4 of 5; rectifiers -1, 0, 0, 0) and 'judged wrong'
    # (2 of 4; 1, 0); the undecided stratum is a census. Each sampled stratum's variance counts two pseudo-units at
    # the ends of one answer's rectifier there: -1 and 0 where the judge said right, 0 and 1 where it said wrong
    def part(big: int, values: list[float], ends: list[float]) -> float:
        padded = values + ends
        mean = sum(padded) / len(padded)
        squares = sum((v - mean) ** 2 for v in padded)
        return big ** 2 * (1 - len(values) / big) / len(values) * squares / (len(padded) - 1) / 11 ** 2
    labels = [part(5, [-1, 0, 0, 0], [-1, 0]), part(4, [1, 0], [0, 1])]
    theta = 6.75 / 11
    judged = [_story_right(s, judged=True) for m in STRATA.values() for s in m]
    true = {s: _story_right(s, judged=False) for s in SAMPLE}
    m2 = sum((f - theta) ** 2 for f in judged) / 11 + sum(
        len(members) / 11 * sum((true[s] - theta) ** 2 - (_story_right(s, judged=True) - theta) ** 2
                                for s in members if s in SAMPLE) / sum(s in SAMPLE for s in members)
        for members in STRATA.values())
    stories = m2 * 11 / 10 / 11
    df = (sum(labels) + stories) ** 2 / (labels[0] ** 2 / 3 + labels[1] ** 2 / 1 + stories ** 2 / 10)
    half = float(t_value(df)) * (sum(labels) + stories) ** 0.5
    assert float(row["Story accuracy (corrected) CI low"]) == pytest.approx(100 * max(0, theta - half), abs=1e-3)
    assert float(row["Story accuracy (corrected) CI high"]) == pytest.approx(100 * min(1, theta + half), abs=1e-3)

    judges = list(csv.DictReader(io.StringIO((out / "judge-calibration.csv").read_text())))
    assert [j["Judge"] for j in judges] == ["rules"]
    rules = judges[0]
    assert (rules["Answers"], rules["Undecided"], rules["Labelled"]) == ("22", "2 (9.1%)", "16")
    confusion = [rules[f"{v} / people {h}"] for v in ("Right", "Wrong", "Undecided") for h in ("right", "wrong")]
    assert confusion == ["11", "1", "1", "1", "1", "1"]
    # accuracy on the decided answers, weighted 5/4, 4/2, 2/2 by stratum: (7 * 1.25 + 3 * 2 + 2) / (8 * 1.25 + 4 * 2
    # + 2) = 16.75 / 20; kappa from the weighted cells (14.75, 1.25, 2, 2): (0.8375 - 0.7025) / (1 - 0.7025)
    assert float(rules["Accuracy"]) == pytest.approx(83.75, abs=1e-3)
    assert rules["Kappa"].startswith("0.454 [")

    # the report shows the same corrected figures, in every format
    for fmt, needle in (("markdown", "61.36 ["), ("latex", "61.36 "), ("html", '<span class="v">61.36</span>')):
        shown = runner.invoke(app, ["report", "--db", str(db), "--format", fmt, "--table", "calibration"])
        assert shown.exit_code == 0 and needle in shown.output, (fmt, shown.output[-800:])
    terminal = runner.invoke(app, ["report", "--db", str(db), "--table", "calibration"], terminal_width=200)
    assert "61.4 [" in terminal.output



def test_review_serve_refuses_a_results_store_that_is_not_one(world: tuple[Path, Path], tmp_path: Path) -> None:
    folder, _ = world
    missing = runner.invoke(app, ["review", "serve", "--dataset", str(folder), "--db", str(tmp_path / "r.sqlite"),
                                  "--results", str(tmp_path / "nowhere.sqlite")])
    assert missing.exit_code == 2 and "no results store there" in missing.output
    (tmp_path / "not.sqlite").write_text("not a database")
    other = runner.invoke(app, ["review", "serve", "--dataset", str(folder), "--db", str(tmp_path / "r.sqlite"),
                                "--results", str(tmp_path / "not.sqlite")])
    assert other.exit_code == 2 and other.output.startswith("error: --results") and "Traceback" not in other.output
