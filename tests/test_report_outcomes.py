"""One outcome per StoryTurn, the same in every table, badge and transcript (issue 34, point 2).

A replay run whose six StoryTurns come out each way the rules judge and the engine can make
them: right, wrong, undecided (finished, hinging on an undecided answer), stopped at an
undecided answer, stopped after a wrong answer (wrong: nothing can make it right), and not
scored (a call failed). The HTML report's data, its runs table and the summary table must all
count them alike; before, a finished story hinging on an undecided answer was badged
"incorrect" and a stopped story with a wrong answer "undecided".
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from commet.engine import evaluate_async
from commet.engine.outcome import StoryOutcome, story_outcome
from commet.format.dataset import Dataset
from commet.format.model import Feedback, StoryTurn, Turn
from commet.reports import Bootstrap, build_report, render_report
from commet.reports.stats import Range
from commet.reports.transcripts import unpacked
from commet.store import Store
from commet.store.records import StoryStatus

RUN = "outcomes"
#: story id -> (replies, the outcome, the first turn not answered right)
CASES = {
    "right-1": (["The basket.", "No."], StoryOutcome.right, 0),
    "wrong-1": (["The box.", "No."], StoryOutcome.wrong, 1),
    "undecided-1": (["The basket.", "Perhaps."], StoryOutcome.undecided, 2),
    "stopped-1": (["She will look where she left it.", "No."], StoryOutcome.stopped, 1),
    "wrong-then-stopped-1": (["The box.", "Perhaps.", "The box."], StoryOutcome.wrong, 1),
    "failed-1": (["The basket."], StoryOutcome.not_scored, 2),
}


def belief_story(story_id: str, turns: int) -> StoryTurn:
    """A false-belief StoryTurn whose later turns' feedback rests on the answer before (so an undecided
    answer stops it under the default ``--undecided-feedback stop``)."""
    all_turns = [
        Turn(story="Ana puts her ball in the basket and goes out. Ben moves it to the box.",
             question="Where will Ana look for her ball, the basket or the box?", answers=["The basket"]),
        Turn(feedback=Feedback(right="Yes, she did not see it move.", wrong="Remember, Ana was outside."),
             question="Is the ball in the basket now?", answers=["No"]),
        Turn(feedback=Feedback(wrong="Ben moved it."), question="Where is the ball really, the basket or the box?",
             answers=["The box"]),
    ]
    return StoryTurn(id=story_id, task="false_belief_location", category="Belief", source="outcomes",
                     turns=all_turns[:turns])


def outcome_dataset() -> Dataset:
    return Dataset([belief_story(i, 3 if i.startswith("wrong-then") else 2) for i in CASES], name="outcomes")


def add_outcome_run(root: Path, db: Path) -> None:
    """The replay run of :data:`CASES` into the store ``db``."""
    replies = root / "outcome-replies.json"
    replies.write_text(json.dumps({story_id: case[0] for story_id, case in CASES.items()}))
    asyncio.run(evaluate_async(f"replay:{replies}", outcome_dataset(), judge="rules", db=db, run=RUN))


@pytest.fixture(scope="module")
def outcome_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("outcomes")
    add_outcome_run(root, root / "s.sqlite")
    return root / "s.sqlite"


def test_each_story_has_the_outcome_its_answers_give(outcome_store: Path) -> None:
    with Store(outcome_store) as store:
        report = build_report(store, store.runs(), bootstrap=Bootstrap(resamples=50))
    [run] = report.runs
    assert {s.story_id: s.outcome for s in run.stories} == {i: case[1] for i, case in CASES.items()}
    statuses = {s.story_id: s.status for s in run.stories}
    assert statuses["stopped-1"] is statuses["wrong-then-stopped-1"] is StoryStatus.stopped
    assert statuses["failed-1"] is StoryStatus.failed and statuses["undecided-1"] is StoryStatus.done


def test_the_summary_and_table_1_count_the_outcomes(outcome_store: Path) -> None:
    with Store(outcome_store) as store:
        report = build_report(store, store.runs(), bootstrap=Bootstrap(resamples=50))
    counts = Counter(case[1] for case in CASES.values())
    summary = report.section("summary")
    row = dict(zip(summary.header, summary.rows[0], strict=True))
    accuracy = row["Story accuracy"]
    assert isinstance(accuracy, Range)
    in_range = counts[StoryOutcome.undecided] + counts[StoryOutcome.stopped]
    assert (accuracy.k, accuracy.upper.k, accuracy.n) == (counts[StoryOutcome.right],
                                                          counts[StoryOutcome.right] + in_range,
                                                          len(CASES) - counts[StoryOutcome.not_scored])
    assert row["Stories hinging on undecided"] == str(in_range) == "2"
    assert row["Stopped at undecided"] == str(counts[StoryOutcome.stopped]) == "1"  # the one with a wrong answer is wrong
    assert row["Not scored"] == str(counts[StoryOutcome.not_scored]) == "1"
    # the notice counts the stories that stopped with the table, and says apart the one that counts wrong
    assert any("1 story stopped at an undecided answer and 1 more stopped with a wrong answer (counted wrong)" in notice.text for notice in report.notices), report.notices
    table1 = report.section("text-complete")
    overall = table1.rows[0][table1.header.index("Overall")]
    assert isinstance(overall, Range) and (overall.k, overall.upper.k, overall.n) == (1, 3, 5)


def test_the_html_report_badges_each_story_with_its_outcome(outcome_store: Path) -> None:
    with Store(outcome_store) as store:
        report = build_report(store, store.runs(), bootstrap=Bootstrap(resamples=50))
    page = render_report(report, "html")
    data = unpacked(re.search(r'id="transcript-data">([^<]*)<', page).group(1))  # type: ignore[union-attr]
    stories, texts = data["stories"], data["texts"]
    found = {texts[i]: (data["outcomes"][o], turn) for i, o, turn in zip(stories["id"], stories["outcome"],
                                                                          stories["turn"], strict=True)}
    assert found == {i: (str(case[1]), case[2]) for i, case in CASES.items()}
    # the runs table of the page counts the same outcomes
    for outcome in StoryOutcome:
        cell = re.search(rf'<td class="num" data-outcome="{outcome.value}">(?:<a [^>]*>)?(\d+)<', page)
        assert cell is not None and int(cell.group(1)) == sum(case[1] is outcome for case in CASES.values())


@pytest.mark.parametrize(("status", "scores", "stored", "expected"), [
    (StoryStatus.done, [True, True], True, StoryOutcome.right),
    (StoryStatus.done, [True, False], False, StoryOutcome.wrong),
    (StoryStatus.done, [False, None], False, StoryOutcome.wrong),  # a wrong answer decides, an undecided one cannot
    (StoryStatus.done, [None, True], False, StoryOutcome.undecided),
    (StoryStatus.stopped, [True, None], None, StoryOutcome.stopped),
    (StoryStatus.stopped, [False, None], None, StoryOutcome.wrong),
    (StoryStatus.failed, [True], None, StoryOutcome.not_scored),
    (StoryStatus.failed, [False], None, StoryOutcome.not_scored),  # a failed call is never scored, even after a wrong turn
    (StoryStatus.done, [], True, StoryOutcome.right),  # no stored turns: the story's own verdict
    (StoryStatus.done, [], None, StoryOutcome.undecided),
])
def test_story_outcome_rules(status: StoryStatus, scores: list[bool | None], stored: bool | None,
                             expected: StoryOutcome) -> None:
    assert story_outcome(status, scores, stored) is expected
