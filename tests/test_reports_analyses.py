"""Every report table computed from a store filled by replay runs with known answers."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest
from PIL import Image

from commet.engine import EvalSettings, evaluate_async
from commet.format.dataset import Dataset
from commet.format.model import Feedback, StoryTurn, Turn
from commet.reports import Bootstrap, build_report, compare_runs
from commet.reports.analyses import Report, Section
from commet.reports.stats import Estimate
from commet.store import Store
from commet.store.settings import RunSettings

XSS = "<script>alert('x')</script>"


def _png(colour: tuple[int, int, int]) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (80, 60), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def toy_dataset() -> Dataset:
    """Two text-complete StoryTurns (Belief, Desire) and one image-dependent (Percept)."""
    tc1 = StoryTurn(id="tc1", task="false_belief_location", category="Belief", source="sample", turns=[
        Turn(story=f"Ana puts her ball in the basket and goes out. Ben moves it to the box. {XSS}",
             question="Where will Ana look for her ball, the basket or the box?", answers=["The basket"]),
        Turn(feedback=Feedback(right="Yes, she did not see.", wrong="Remember, Ana was outside."),
             question="Is the ball in the basket now?", answers=["No"]),
        Turn(feedback=Feedback(wrong="Ben moved it."), question="Where is the ball really, the basket or the box?",
             answers=["The box"]),
    ])
    tc2 = StoryTurn(id="tc2", task="common_desire", category="Desire", source="procedural", turns=[
        Turn(story="There is an apple and a cake.", question="Which do you like, the apple or the cake?",
             answers=["The apple"]),
        Turn(story="Kim likes the same one.", question="Which will Kim pick, the apple or the cake?",
             answers=["The apple"]),
    ])
    id1 = StoryTurn(id="id1", task="reference_easy", category="Percept", image_dependent=True, source="sample", turns=[
        Turn(story="Mia says: I want that cup.", image="cups", question="Which cup does she mean, the red cup or "
             "the blue cup?", answers=["The blue cup"]),
        Turn(feedback=Feedback(wrong="Look: only the blue cup is in her view."),
             question="Can she see the red cup?", answers=["No"]),
    ])
    return Dataset([tc1, tc2, id1], name="toy", images={"cups": _png((40, 90, 200))})


#: run name -> (replay file folder, replies, images, feedback)
RUNS = {
    "r1-on": ("r1", {"tc1": ["The box.", "No.", "The box."], "tc2": ["The apple.", "The apple."],
                     "id1": ["The red cup.", "Yes."]}, "on", "original"),
    "r1-off": ("r1", {"tc1": ["The box.", "No.", "The box."], "tc2": ["The apple.", "The apple."],
                      "id1": ["The red cup.", "Yes."]}, "off", "original"),
    "r1-corr": ("corr", {"tc1": ["The box.", "Yes.", "The box."], "tc2": ["The apple.", "The apple."],
                         "id1": ["The red cup.", "No."]}, "on", "correctness"),
}


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One store with three replay runs; every replay file is named r.json so all share the model 'replay:r.json'."""
    root = tmp_path_factory.mktemp("reports")
    dataset = toy_dataset()
    db = root / "s.sqlite"

    async def fill() -> None:
        for name, (folder, replies, images, feedback) in RUNS.items():
            path = root / folder / "r.json"
            path.parent.mkdir(exist_ok=True)
            path.write_text(json.dumps(replies))
            await evaluate_async(f"replay:{path}", dataset, judge="rules", db=db, run=name,
                                 settings=EvalSettings(images=images, feedback=feedback))

    asyncio.run(fill())
    dataset.save(root / "toy")
    return db


@pytest.fixture(scope="module")
def report(store_path: Path) -> Report:
    with Store(store_path) as store:
        return build_report(store, store.runs(), bootstrap=Bootstrap(resamples=500))


def cells(section: Section, first: str) -> dict[str, str | Estimate]:
    row = next(r for r in section.rows if r[0] == first)
    return dict(zip(section.header, row, strict=True))


def frac(cell: str | Estimate) -> tuple[float, float]:
    assert isinstance(cell, Estimate)
    return cell.k, cell.n


def test_story_and_question_accuracy(report: Report) -> None:
    on = cells(report.section("summary"), "r1-on")
    assert frac(on["Story accuracy"]) == (1, 3)  # only tc2 fully right
    assert frac(on["Question accuracy"]) == (4, 7)  # tc1 2/3, tc2 2/2, id1 0/2
    assert on["Undecided answers"] == "0" and on["Not scored"] == "0"
    corr = cells(report.section("summary"), "r1-corr")
    assert frac(corr["Story accuracy"]) == (1, 3) and frac(corr["Question accuracy"]) == (4, 7)


def test_table1_text_complete_and_table2_image_dependent(report: Report) -> None:
    """The paper's columns, in its order, empty ones kept (as '-' when rendered)."""
    table1 = report.section("text-complete")
    assert table1.header[5:] == ["Overall", "Belief", "Emotion", "Intention", "Desire", "Percept", "Belief_Emotion",
                                 "Belief_Desire", "NLCE", "MBK"]
    row = cells(table1, "r1-off")
    assert row["Image"] == "No" and row["Stories"] == "2" and cells(table1, "r1-on")["Image"] == "Yes"
    assert frac(row["Overall"]) == (1, 2) and frac(row["Belief"]) == (0, 1) and frac(row["Desire"]) == (1, 1)
    assert frac(row["Emotion"]) == (0, 0)
    table2 = report.section("image-dependent")
    assert table2.header[5:] == ["Overall", "Percept", "Intention", "MBK", "NLC"]
    assert frac(cells(table2, "r1-on")["Percept"]) == (0, 1)


def test_table3_feedback_effectiveness(report: Report) -> None:
    """Per run: tc1 wrong, then feedback, then right (1/1); id1 wrong, feedback, wrong again (0/1)."""
    section = report.section("feedback")
    assert section.fraction and section.header[:3] == ["Run", "Model", "Feedback"]
    on, off = cells(section, "r1-on"), cells(section, "r1-off")
    assert on["Model"] == "replay:r.json"
    assert frac(on["VI not required, with image"]) == (1, 1) and frac(on["VI not required, no image"]) == (0, 0)
    assert frac(on["VI required, with image"]) == (0, 1)
    assert frac(off["VI not required, no image"]) == (1, 1) and frac(off["VI required, no image"]) == (0, 1)
    assert frac(off["VI not required, with image"]) == (0, 0)


def test_table14_original_versus_correctness(report: Report) -> None:
    """Correctness run: tc1 wrong->wrong->right gives 1/2, id1 wrong->right gives 1/1."""
    section = report.section("feedback-conditions")
    rows = {r[0]: dict(zip(section.header, r, strict=True)) for r in section.rows}
    assert set(rows) == {"r1-on", "r1-off", "r1-corr"}
    assert frac(rows["r1-on"]["Text-complete subset"]) == (1, 1)
    assert frac(rows["r1-on"]["Image-dependent subset"]) == (0, 1)
    assert frac(rows["r1-corr"]["Text-complete subset"]) == (1, 2)
    assert frac(rows["r1-corr"]["Image-dependent subset"]) == (1, 1)


def test_feedback_kinds_recorded_as_expected(store_path: Path) -> None:
    with Store(store_path) as store:
        run = store.get_run("r1-corr")
        assert run is not None
        kinds = {(r.story_id, r.turn): r.feedback_kind for r in store.turn_rows(run.id)}
    assert kinds[("tc1", 1)] == "correctness-wrong" and kinds[("tc1", 2)] == "correctness-wrong"
    assert kinds[("tc2", 1)] == "none"


def test_source_split(report: Report) -> None:
    sample, procedural = report.section("source-sample"), report.section("source-procedural")
    assert frac(cells(sample, "r1-on")["Overall"]) == (0, 2) and frac(cells(procedural, "r1-on")["Overall"]) == (1, 1)
    assert frac(cells(sample, "r1-on")["Image-dependent (Table 11)"]) == (0, 1)


def test_accuracy_by_turn(report: Report) -> None:
    row = cells(report.section("turns"), "r1-on")
    assert frac(row["Turn 1"]) == (1, 3) and frac(row["Turn 2"]) == (2, 3) and frac(row["Turn 3"]) == (1, 1)


def test_common_wrong_answers(report: Report) -> None:
    section = report.section("wrong-answers")
    found = {(r[0], r[1], r[2], r[3]): (r[4], r[5]) for r in section.rows}
    assert found[("r1-on", "false_belief_location", "The basket", "The box.")] == ("1", "1")
    assert found[("r1-corr", "reference_easy", "The blue cup", "The red cup.")] == ("1", "1")
    assert found[("r1-on", "reference_easy", "No", "Yes.")] == ("1", "2")


def test_wrong_answers_never_pool_expected_answers_across_stories() -> None:
    """The same wrong reply to two questions expecting different answers is two rows, each with its own answer."""
    from commet.reports.analyses import RunData, StoryResult, TurnResult, wrong_answers_section
    from commet.store.sqlite import RunRecord

    def story(story_id: str, expected: str) -> StoryResult:
        turn = TurnResult(turn=0, prompt="q", images=[], feedback_kind="none", response="The box.",
                          expected=[expected], outcome="incorrect", correct=False, judge="rules", rationale=None,
                          error=None)
        return StoryResult(story_id, "false_belief_location", "Belief", False, "sample", "done", False, [turn])

    run = RunRecord(id=1, name="r", model="m", judge="rules", settings=RunSettings.from_stored({"images": "on", "feedback": "original"}),
                    config_hash="", dataset_name="d", dataset_hash="", package_version="", story_count=3,
                    status="done", started_at="", finished_at=None)
    data = RunData(run, [story("a", "The basket"), story("b", "The basket"), story("c", "The drawer")])
    section = wrong_answers_section([data])
    assert [row[1:] for row in section.rows] == [["false_belief_location", "The basket", "The box.", "2", "1"],
                                                 ["false_belief_location", "The drawer", "The box.", "1", "1"]]


def test_a_wrong_reply_with_control_characters_is_shown_not_obeyed() -> None:
    """A model's reply is any text: an escape sequence in it is shown as \\x1b in every format, and the terminal
    table never carries the raw character."""
    import io

    from rich.console import Console

    from commet.reports.analyses import Report, RunData, StoryResult, TurnResult, wrong_answers_section
    from commet.reports.render import render_report, to_rich_tables
    from commet.store.sqlite import RunRecord

    reply = "The \x1b[8mbox\rThe basket"
    turn = TurnResult(turn=0, prompt="q", images=[], feedback_kind="none", response=reply, expected=["The basket"],
                      outcome="incorrect", correct=False, judge="rules", rationale=None, error=None)
    run = RunRecord(id=1, name="r", model="m", judge="rules",
                    settings=RunSettings.from_stored({"images": "on", "feedback": "original"}), config_hash="",
                    dataset_name="d", dataset_hash="", package_version="", story_count=1, status="done",
                    started_at="", finished_at=None)
    data = RunData(run, [StoryResult("a", "false_belief_location", "Belief", False, "sample", "done", False, [turn])])
    section = wrong_answers_section([data])
    assert section.rows[0][3] == "The \\x1b[8mbox The basket"  # one line: the carriage return is a blank
    report = Report([data], [section])
    console = Console(file=io.StringIO(), width=200, record=True)
    for renderable in to_rich_tables(report, 200):
        console.print(renderable)
    terminal = console.export_text()
    assert "\x1b" not in terminal and "\r" not in terminal and "\\x1b[8mbox" in terminal
    for fmt in ("markdown", "csv", "latex"):
        assert "\x1b" not in render_report(report, fmt), fmt


def test_intervals_contain_estimates_and_are_deterministic(store_path: Path, report: Report) -> None:
    for section in report.sections:
        for row in section.rows:
            for cell in row:
                if isinstance(cell, Estimate) and cell.value is not None:
                    assert cell.low is not None and cell.high is not None
                    assert cell.low <= cell.value <= cell.high
    with Store(store_path) as store:
        again = build_report(store, store.runs(), bootstrap=Bootstrap(resamples=500))
    assert [s.rows for s in again.sections] == [s.rows for s in report.sections]


def test_compare_runs_is_paired_on_story_ids(store_path: Path) -> None:
    with Store(store_path) as store:
        a, b = store.get_run("r1-on"), store.get_run("r1-corr")
        assert a is not None and b is not None
        result = compare_runs(store, a, b, bootstrap=Bootstrap(resamples=500))
    p = result.paired
    assert (p.items, p.both_right, p.a_only, p.b_only, p.both_wrong) == (3, 1, 0, 0, 2)
    assert p.difference == 0 and p.p_value == 1.0 and not p.significant
