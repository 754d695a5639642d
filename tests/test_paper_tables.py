"""The paper's tables checked against hand computation (issue 20 points 0, 1, 3, 4 and 11; issue 13 point 3).

One small crafted dataset, seven StoryTurns from two sources, every question naming its two
options so that the rules judge's verdict is plain: "The apple." is right, "The pear." is
wrong, "Hmm, hard to say really." is undecided. Replayed candidates run it with pictures on
and with pictures only where needed; a repeat of the first run and a re-judged copy (a
replayed LLM judge) stand for the copies that used to be pooled silently. Every expected
figure below is counted by hand in the comments, then compared with what
``commet report --format csv`` and ``commet judges --format csv`` print.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from commet.cli import app
from commet.engine import EvalSettings, ImagePolicy, evaluate_async
from commet.engine.conversation import UndecidedFeedback
from commet.engine.rejudge import rejudge
from commet.format.dataset import Dataset
from commet.format.model import Feedback, StoryTurn, Turn
from commet.judges import create_judge
from commet.judges.prompts import PROMPT_VERSION
from commet.store import Store, short_ids

R, W, U = "The apple.", "The pear.", "Hmm, hard to say really."
QUESTION = "Which fruit, the apple or the pear?"


def _png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (40, 30), (200, 40, 40)).save(buffer, format="PNG")
    return buffer.getvalue()


def _story(story_id: str, task: str, category: str, source: str, turns: int, image_dependent: bool) -> StoryTurn:
    made = [Turn(story=f"Story {story_id}.", image=f"pic-{story_id}", question=QUESTION, answers=["The apple"])]
    made += [Turn(feedback=Feedback(right="Good.", wrong="Look again: it is the apple."), question=QUESTION,
                  answers=["The apple"]) for _ in range(turns - 1)]
    return StoryTurn(id=story_id, task=task, category=category, source=source, image_dependent=image_dependent,
                     turns=made)


def paper_dataset() -> Dataset:
    """Text-complete: b1 Belief (3 turns), e1 Emotion, d1 Desire, n1 NLCE; image-dependent: p1 Percept,
    i1 Intention, m1 MBK. Sources: b1, e1, p1 'booklet'; the rest 'generated'. Every first turn has a picture."""
    stories = [
        _story("b1", "false_belief_location", "Belief", "booklet", 3, False),
        _story("e1", "emotion_reminder", "Emotion", "booklet", 2, False),
        _story("d1", "common_desire", "Desire", "generated", 2, False),
        _story("n1", "sarcasm", "NLCE", "generated", 2, False),
        _story("p1", "reference_easy", "Percept", "booklet", 2, True),
        _story("i1", "reference_hard_referent", "Intention", "generated", 2, True),
        _story("m1", "moral_false_belief", "MBK", "generated", 2, True),
    ]
    return Dataset(stories, name="paper-mini", images={f"pic-{s.id}": _png() for s in stories})


#: Replies of run "on" (and its repeat and the correctness run): b1 wrong, then right after feedback;
#: e1 wrong twice; d1 right; n1 undecided then right; p1 wrong then right; i1 right then wrong; m1 wrong twice.
REPLIES_A = {"b1": [W, R, R], "e1": [W, W], "d1": [R, R], "n1": [U, R], "p1": [W, R], "i1": [R, W], "m1": [W, W]}
#: Replies of run "needed": b1 wrong, wrong, right; e1 wrong, right; d1 wrong, right; n1, p1 right; i1 wrong, right;
#: m1 wrong twice.
REPLIES_B = {"b1": [W, W, R], "e1": [W, R], "d1": [W, R], "n1": [R, R], "p1": [R, R], "i1": [W, R], "m1": [W, W]}
#: Everything undecided on the first turn: every story hinges on it.
REPLIES_U = {story: [U] + [R] * (len(replies) - 1) for story, replies in REPLIES_A.items()}


def _verdicts(table: dict[str, list[bool | None]]) -> dict[str, list[str]]:
    """A replayed LLM judge's file: per story and turn a verdict, or an unparseable reply (undecided)."""
    def one(value: bool | None) -> str:
        if value is None:
            return "no verdict"
        return json.dumps({"verdict": "correct" if value else "incorrect", "matched_answer": 1 if value else None,
                           "reason": "replayed"})
    return {story: [one(v) for v in values] for story, values in table.items()}


T, F = True, False
#: the rules' verdicts on REPLIES_A, with n1's undecided first answer decided right
JFIX = {"b1": [F, T, T], "e1": [F, F], "d1": [T, T], "n1": [T, T], "p1": [F, T], "i1": [T, F], "m1": [F, F]}
ALL_RIGHT = {story: [T] * (3 if story == "b1" else 2) for story in REPLIES_A}
#: judge 2 rejects (b1, 0) and (e1, 1); judge 3 rejects (b1, 0), (p1, 1) and (m1, 1); judge 1 accepts everything
J2 = {**ALL_RIGHT, "b1": [F, T, T], "e1": [T, F]}
J3 = {**ALL_RIGHT, "b1": [F, T, T], "p1": [T, F], "m1": [T, F]}


@pytest.fixture(scope="module")
def paper_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("paper")
    dataset = paper_dataset()
    db = root / "paper.sqlite"
    files = {}
    for folder, replies in (("a", REPLIES_A), ("b", REPLIES_B), ("u", REPLIES_U)):
        (root / folder).mkdir()
        files[folder] = root / folder / "r.json"  # one model name for all: replay:r.json
        files[folder].write_text(json.dumps(replies))
    for name, table in (("jfix", JFIX), ("j1", ALL_RIGHT), ("j2", J2), ("j3", J3)):
        (root / f"{name}.json").write_text(json.dumps(_verdicts(table)))

    async def fill() -> None:
        for run, folder, images, feedback in (("on", "a", "on", "original"), ("on-again", "a", "on", "original"),
                                              ("needed", "b", "needed", "original"),
                                              ("corr", "a", "on", "correctness")):
            # skip: n1's second turn shows only the unconditional feedback (kind skipped-undecided) and goes on
            await evaluate_async(f"replay:{files[folder]}", dataset, judge="rules", db=db, run=run,
                                 settings=EvalSettings(images=images, feedback=feedback,
                                                       undecided_feedback=UndecidedFeedback.SKIP))
        with Store(db) as store:
            for source, judge_file, name in (("on", "jfix", "on~jfix"), *((run, j, f"{run}~{j}") for run in
                                                                          ("on", "needed") for j in ("j1", "j2", "j3"))):
                judge = create_judge(f"llm-only:replay:{root / (judge_file + '.json')}")
                await rejudge(store, source, judge, dataset, new_name=name)
                await judge.aclose()

    asyncio.run(fill())
    return db


@pytest.fixture(scope="module")
def undecided_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("undecided")
    (root / "r.json").write_text(json.dumps(REPLIES_U))
    db = root / "u.sqlite"
    asyncio.run(evaluate_async(f"replay:{root / 'r.json'}", paper_dataset(), judge="rules", db=db, run="mostly-u"))
    return db


runner = CliRunner()


def report_csv(db: Path, table: str, *args: str) -> list[dict[str, str]]:
    """One table of ``commet report --format csv`` as dicts (the CSV goes to stdout, notices to stderr)."""
    result = runner.invoke(app, ["report", "--db", str(db), "--format", "csv", "--table", table,
                                 "--resamples", "100", *args])
    assert result.exit_code == 0, result.output
    return list(csv.DictReader(io.StringIO(result.stdout)))


def figure(row: dict[str, str], column: str) -> tuple[str, str]:
    """(k, n) of an estimate column (an empty one: 0 of 0, its value left blank)."""
    return row[f"{column} k"], row[f"{column} n"]


def by_run(rows: list[dict[str, str]], key: str = "Run") -> dict[str, dict[str, str]]:
    return {row[key]: row for row in rows}


# issue 20, point 4: Tables 1 and 2 first, the paper's columns in the paper's order ----------------------------
def test_table1_and_table2_are_the_papers(paper_store: Path) -> None:
    result = runner.invoke(app, ["report", "--db", str(paper_store), "--format", "csv", "--out",
                                 str(paper_store.parent / "csv"), "--resamples", "100"])
    assert result.exit_code == 0, result.output
    files = sorted(p.name for p in (paper_store.parent / "csv").iterdir())
    assert files[:2] == ["feedback-conditions.csv", "feedback.csv"] and "notices.txt" in files
    table1 = list(csv.reader(io.StringIO((paper_store.parent / "csv" / "text-complete.csv").read_text())))
    figures = [h for h in table1[0] if not h.endswith((" CI low", " CI high", " k", " n", " if undecided right",
                                                       " hinging", "right k"))]
    assert figures == ["Run", "Model", "Image", "Feedback", "Stories", "Overall", "Belief", "Emotion", "Intention",
                       "Desire", "Percept", "Belief_Emotion", "Belief_Desire", "NLCE", "MBK"]
    rows = by_run(report_csv(paper_store, "text-complete"))
    # run "on", pictures shown: b1 wrong, e1 wrong, d1 right, n1 undecided then right -> 1/4, 2/4 if undecided right
    on = rows["on"]
    assert (on["Image"], on["Stories"]) == ("Yes", "4")
    assert figure(on, "Overall") == ("1", "4") and on["Overall if undecided right k"] == "2"
    assert on["Overall hinging"] == "1"
    assert [figure(on, c) for c in ("Belief", "Emotion", "Desire", "NLCE")] == [("0", "1"), ("0", "1"), ("1", "1"),
                                                                              ("0", "1")]
    assert on["NLCE if undecided right k"] == "1"
    empty = ("Intention", "Percept", "Belief_Emotion", "Belief_Desire", "MBK")
    assert all(figure(on, c) == ("0", "0") and on[c] == "" for c in empty)  # no StoryTurn: no value
    # run "needed": no pictures for text-complete StoryTurns; only n1 right -> 1/4
    needed = rows["needed"]
    assert (needed["Image"], figure(needed, "Overall"), figure(needed, "NLCE")) == ("No", ("1", "4"), ("1", "1"))
    assert needed["Overall hinging"] == "0"
    # the re-judged copy decides n1 right: 2/4, and no range
    assert figure(rows["on~jfix"], "Overall") == ("2", "4") and rows["on~jfix"]["Overall hinging"] == "0"
    table2 = list(csv.reader(io.StringIO((paper_store.parent / "csv" / "image-dependent.csv").read_text())))
    assert [h for h in table2[0] if h in {"Overall", "Percept", "Intention", "MBK", "NLC"}] == [
        "Overall", "Percept", "Intention", "MBK", "NLC"]
    rows2 = by_run(report_csv(paper_store, "image-dependent"))
    # "on": p1, i1, m1 all wrong -> 0/3; "needed" (pictures shown where needed): p1 right -> 1/3
    assert rows2["on"]["Image"] == "Yes" and figure(rows2["on"], "Overall") == ("0", "3")
    assert rows2["needed"]["Image"] == "Yes" and figure(rows2["needed"], "Overall") == ("1", "3")
    assert [figure(rows2["needed"], c) for c in ("Percept", "Intention", "MBK", "NLC")] == [
        ("1", "1"), ("0", "1"), ("0", "1"), ("0", "0")]
    markdown = runner.invoke(app, ["report", "--db", str(paper_store), "--format", "markdown", "--resamples", "100"])
    text = markdown.stdout
    assert text.index("## Table 1:") < text.index("## Table 2:") < text.index("not a paper table")
    table1_md = text[text.index("## Table 1:"):text.index("## Table 2:")]
    assert "| on | replay:r.json | Yes | original | 4 | 25.00–50.00 [" in table1_md
    assert "| - | - |" in table1_md  # empty paper columns are shown, not dropped


# issue 20, point 3: --images needed -------------------------------------------------------------------------
def test_images_needed_shows_pictures_only_in_image_dependent_storyturns(paper_store: Path) -> None:
    with Store(paper_store) as store:
        run = store.get_run("needed")
        assert run is not None and run.settings.images is ImagePolicy.needed
        shown = {(r.story_id, r.turn): r.images for r in store.turn_rows(run.id)}
    assert [i["id"] for i in shown[("p1", 0)]] == ["pic-p1"] and [i["id"] for i in shown[("m1", 0)]] == ["pic-m1"]
    assert shown[("b1", 0)] == [] and shown[("d1", 0)] == []
    assert ImagePolicy("needed").shows_pictures(True) and not ImagePolicy("needed").shows_pictures(False)


def test_table3_as_the_paper_lays_it_out(paper_store: Path) -> None:
    rows = by_run(report_csv(paper_store, "feedback"))
    columns = ("VI not required, with image", "VI not required, no image", "VI required, with image")
    assert [c for c in next(iter(rows.values())) if c in columns or c == "VI required, no image"] == list(columns)
    # "on": b1 wrong -> feedback -> right (1), e1 wrong -> feedback -> wrong (0): 1/2; n1's feedback rested on an
    # undecided answer: left out. Image-dependent: p1 1/1, m1 0/1 -> 1/2.
    assert [figure(rows["on"], c) for c in columns] == [("1", "2"), ("0", "0"), ("1", "2")]
    # "needed": text-complete without pictures: b1 0/1 then 1/1, e1 1/1, d1 1/1 -> 3/4; image-dependent with
    # pictures: i1 1/1, m1 0/1 -> 1/2
    assert [figure(rows["needed"], c) for c in columns] == [("0", "0"), ("3", "4"), ("1", "2")]
    result = runner.invoke(app, ["report", "--db", str(paper_store), "--format", "markdown", "--table", "feedback",
                                 "--resamples", "100", "--run", "on", "--run", "needed"])
    assert "| needed | replay:r.json | original | - | 3/4 (75.0%) [" in result.stdout
    # run "on" has 1 turn whose feedback rested on an undecided answer (n1's second turn); "needed" none
    assert "Left out: 1 turns whose feedback rested on an undecided answer" in result.stdout
    everything = runner.invoke(app, ["report", "--db", str(paper_store), "--format", "markdown", "--table",
                                     "feedback", "--resamples", "100"])
    # "on", its repeat, the correctness run and its four re-judged copies (the feedback sent stays): 7
    assert "Left out: 7 turns whose feedback rested on an undecided answer" in everything.stdout


def test_eval_and_sweep_accept_images_needed(tmp_path: Path) -> None:
    paper_dataset().save(tmp_path / "ds")
    (tmp_path / "r.json").write_text(json.dumps(REPLIES_B))
    db = tmp_path / "e.sqlite"
    result = runner.invoke(app, ["eval", "--model", f"replay:{tmp_path / 'r.json'}", "--dataset",
                                 str(tmp_path / "ds"), "--images", "needed", "--db", str(db), "--quiet"])
    assert result.exit_code == 0, result.output
    with Store(db) as store:
        (run,) = store.runs()
    assert run.settings.images is ImagePolicy.needed and ":images=needed," in run.name
    config = tmp_path / "s.toml"
    config.write_text(f'db = "s.sqlite"\nmodels = ["replay:{tmp_path / "r.json"}"]\nimages = ["needed"]\n'
                      f'datasets = ["{tmp_path / "ds"}"]\n')
    assert runner.invoke(app, ["sweep", str(config), "--quiet"]).exit_code == 0
    with Store(tmp_path / "s.sqlite") as store:
        assert [r.settings.images for r in store.runs()] == [ImagePolicy.needed]


# issue 20, point 0: every table per run; pooling only when asked, naming the runs ------------------------------
def test_tables_3_and_14_report_per_run_unless_pooled(paper_store: Path) -> None:
    rows = by_run(report_csv(paper_store, "feedback"))
    columns = ("VI not required, with image", "VI not required, no image", "VI required, with image")
    # the repeat and the re-judged copy are rows of their own with the run's own figures, not added up
    for run in ("on", "on-again", "on~jfix"):
        assert [figure(rows[run], c) for c in columns] == [("1", "2"), ("0", "0"), ("1", "2")], run
    pooled = by_run(report_csv(paper_store, "feedback", "--pool", "--run", "on", "--run", "on-again", "--run",
                               "on~jfix", "--run", "needed", "--run", "corr"), "Runs")
    row = pooled["pooled: on, on-again, needed"]
    # "on" and its repeat "on-again" hold the same stored answers (the repeat answered from the store): 1/2 once,
    # not 2/4; "needed" (other replies): 3/4 without pictures and 1/2 with, beside on's 1/2 with pictures
    assert [figure(row, c) for c in columns] == [("1", "2"), ("3", "4"), ("2", "4")]
    # the re-judged copy has on's answers (and another judge): pooled, they would count twice
    assert [figure(pooled["on~jfix"], c) for c in columns] == [("1", "2"), ("0", "0"), ("1", "2")]
    assert [figure(pooled["corr"], c) for c in columns] == [("1", "2"), ("0", "0"), ("1", "2")]
    table14 = by_run(report_csv(paper_store, "feedback-conditions"))
    # the correctness run's verdicts are the same as "on"'s (same replies): 1/2 and 1/2 both
    for run in ("on", "corr"):
        assert figure(table14[run], "Text-complete subset") == ("1", "2")
        assert figure(table14[run], "Image-dependent subset") == ("1", "2")
    assert figure(table14["needed"], "Text-complete subset") == ("3", "4")
    pooled14 = by_run(report_csv(paper_store, "feedback-conditions", "--pool", "--run", "on", "--run", "on-again",
                                 "--run", "corr"), "Runs")
    assert figure(pooled14["pooled: on, on-again"], "Text-complete subset") == ("1", "2")  # the same answers once


def test_pooling_keeps_judges_apart_and_never_counts_the_same_answers_twice(paper_store: Path) -> None:
    from dataclasses import replace

    from commet.reports.analyses import RunData, units

    with Store(paper_store) as store:
        record = {name: store.get_run(name) for name in ("on", "on-again", "needed", "on~j1", "needed~j1", "on~j2")}
    # a second copy of "on" re-judged by the same judge as on~j1: the same answers and the same judge
    again = replace(record["on~j1"], name="on~j1-again")
    runs = [RunData(r, []) for r in (*record.values(), again)]
    grouped = {unit.label: [d.run.name for d in unit.runs] for unit in units(runs, lambda d: (d.run.model, d.feedback))}
    assert grouped == {
        "pooled: on, on-again, needed": ["on", "on-again", "needed"],  # the rules judge's runs of two answer sets
        "pooled: on~j1, needed~j1": ["on~j1", "needed~j1"],  # judge j1, on's and needed's answers
        "on~j2": ["on~j2"],  # another judge
        "on~j1-again": ["on~j1-again"],  # on's answers again, by j1 again
    }


# issue 20, point 11: one table per source --------------------------------------------------------------------
def test_each_source_has_its_own_table(paper_store: Path) -> None:
    booklet = by_run(report_csv(paper_store, "source-booklet"))
    generated = by_run(report_csv(paper_store, "source-generated"))
    tc, vi = "Text-complete (Table 12)", "Image-dependent (Table 11)"
    # booklet: b1, e1 (text-complete), p1 (image-dependent). "on": all wrong; "needed": p1 right
    assert [figure(booklet["on"], c) for c in ("Overall", tc, vi)] == [("0", "3"), ("0", "2"), ("0", "1")]
    assert [figure(booklet["needed"], c) for c in ("Overall", tc, vi)] == [("1", "3"), ("0", "2"), ("1", "1")]
    # generated: d1, n1 (text-complete), i1, m1. "on": d1 right, n1 hinges -> 1/4 (2 if undecided right)
    assert [figure(generated["on"], c) for c in ("Overall", tc, vi)] == [("1", "4"), ("1", "2"), ("0", "2")]
    assert generated["on"]["Overall if undecided right k"] == "2" and generated["on"][f"{tc} hinging"] == "1"
    assert [figure(generated["needed"], c) for c in ("Overall", tc, vi)] == [("1", "4"), ("1", "2"), ("0", "2")]
    assert booklet["on"]["Stories"] == "3" and generated["on"]["Stories"] == "4"


# issue 20, point 1: judge agreement per (run, story, turn) ---------------------------------------------------
def test_judge_agreement_counts_each_run_story_and_turn(paper_store: Path, tmp_path: Path) -> None:
    runs = [f"{run}~{j}" for run in ("on", "needed") for j in ("j1", "j2", "j3")]
    # labels on both candidate runs: (b1, 0) wrong in both, (e1, 1) right in "on"
    labels = tmp_path / "labels.csv"
    labels.write_text("run,story_id,turn,label,labeller\non,b1,0,incorrect,ann\non,e1,1,correct,ann\n"
                      "needed~j2,b1,0,incorrect,ann\n")
    imported = runner.invoke(app, ["label", "import", str(labels), "--db", str(paper_store)])
    assert imported.exit_code == 0, imported.output
    result = runner.invoke(app, ["judges", "--db", str(paper_store), "--format", "csv",
                                 *(a for run in runs for a in ("--run", run))])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    j1, j2, j3 = (f"llm:replay:{j}.json@{PROMPT_VERSION}" for j in ("j1", "j2", "j3"))
    among = {r["Pair"]: r for r in rows if r["Table"].startswith("Agreement among judges")}
    # 15 answers per run, 2 runs: 30 items. j1 vs j2 differ on 2 per run, j1 vs j3 on 3, j2 vs j3 on 3
    # ((e1, 1), (p1, 1), (m1, 1)); kappa(j2, j3): observed 24/30, chance (26*24 + 4*6)/900 -> 0.286
    assert [among[f"{j1} vs {j2}"][k] for k in ("Agree", "Disagree", "n", "Agreement", "Kappa")] == [
        "26", "4", "30", "86.67%", "0.000"]
    assert [among[f"{j1} vs {j3}"][k] for k in ("Agree", "Disagree", "n", "Agreement")] == ["24", "6", "30", "80.00%"]
    assert [among[f"{j2} vs {j3}"][k] for k in ("Agree", "Disagree", "n", "Kappa")] == ["24", "6", "30", "0.286"]
    # disputed: (b1, 0), (e1, 1), (p1, 1), (m1, 1) in each run: 8. Labelled among them: on (b1, 0), on (e1, 1),
    # needed (b1, 0): j1 agrees once, j2 twice, j3 three times
    people = {r["Pair"]: r for r in rows if r["Table"].startswith("Agreement with people where")}
    assert all(r["Table"].startswith("Agreement with people where the judges disagree (8 answers")
               for r in people.values())
    assert [people[f"human vs {j}"]["Agree"] + "/" + people[f"human vs {j}"]["n"] for j in (j1, j2, j3)] == [
        "1/3", "2/3", "3/3"]
    markdown = runner.invoke(app, ["judges", "--db", str(paper_store), "--format", "markdown",
                                   *(a for run in runs for a in ("--run", run))]).stdout
    assert "(30 answers of 2 run(s) pooled: on, needed; one answer per run, story and turn)" in markdown


# issue 13, point 3: honest undecided everywhere ----------------------------------------------------------------
def hint(db: Path, run: str = "on", stopped: bool = False) -> tuple[str, str]:
    """The undecided notice of run ``run`` (1 of 7 stories hinging on its one undecided answer): its text and the
    command that decides it, the run by its short id."""
    with Store(db) as store:
        run_id = short_ids(r.name for r in store.runs())[run]
    if stopped:  # re-judging cannot ask a stopped story's last question: finishing does
        return (f"Run {run_id}: 1 answer left undecided by the rules judge and 1 story stopped at an undecided "
                "answer; 1 of 7 scored stories hinge on them. To decide them and ask the stopped stories' remaining "
                "questions:", f"commet eval --db {db} --finish {run_id} --judge openai:gpt-4o")
    return (f"Run {run_id}: 1 answer left undecided by the rules judge; 1 of 7 scored stories hinge on them. To "
            "decide them (or run with --judge MODEL):", f"commet rejudge --db {db} --run {run_id} --judge openai:gpt-4o")


def test_undecided_range_and_hint_in_every_format(paper_store: Path, tmp_path: Path) -> None:
    text, command = hint(paper_store)
    args = ["report", "--db", str(paper_store), "--run", "on", "--resamples", "100"]
    table = runner.invoke(app, args)
    assert f"{text} {command}" in " ".join(table.stdout.split()) and "14.3–28.6" in table.stdout  # 1/7 .. 2/7
    assert f"\n  {command}\n" in table.stdout  # the command on a line of its own, whole
    markdown = runner.invoke(app, [*args, "--format", "markdown"]).stdout
    assert f"{text}\n\n    {command}\n" in markdown and f"**{text}" not in markdown  # plain, not bold
    assert "14.29–28.57 [" in markdown and "] (1–2/7) |" in markdown
    latex = runner.invoke(app, [*args, "--format", "latex"]).stdout
    assert "undecided by the rules judge" in latex and "14.29--28.57" in latex
    csv_one = runner.invoke(app, [*args, "--format", "csv", "--table", "summary"])
    assert f"{text} {command}" in csv_one.stderr and text not in csv_one.stdout
    summary = list(csv.DictReader(io.StringIO(csv_one.stdout)))[0]
    assert (summary["Story accuracy k"], summary["Story accuracy if undecided right k"]) == ("1", "2")
    assert (summary["Undecided answers"], summary["Stories hinging on undecided"]) == ("1", "1")
    runner.invoke(app, [*args, "--format", "csv", "--out", str(tmp_path / "csv")])
    assert (tmp_path / "csv" / "notices.txt").read_text().splitlines()[1:] == [f"{text} {command}"]
    html = runner.invoke(app, [*args, "--format", "html"]).stdout
    assert "left undecided by the rules judge" in html and "14.29–28.57" in html
    decided = runner.invoke(app, ["report", "--db", str(paper_store), "--run", "needed", "--format", "markdown"])
    assert "undecided" not in decided.stdout.split("## Table 1")[0]  # no undecided answer, no notice


def test_mostly_undecided_run_says_so_before_the_table(undecided_store: Path) -> None:
    text = runner.invoke(app, ["report", "--db", str(undecided_store), "--resamples", "100"]).stdout
    with Store(undecided_store) as store:
        run_id = short_ids(r.name for r in store.runs())["mostly-u"]
    warning = f"Run {run_id}: 7 of 7 scored stories hinge on undecided answers, so its story accuracy is mostly not judged."
    assert text.splitlines()[0] == warning and text.index(warning) < text.index("Table 1")
    assert "0.0–100.0 [" in text  # every story stopped at its undecided first answer (the default policy)
    markdown = runner.invoke(app, ["report", "--db", str(undecided_store), "--format", "markdown"]).stdout
    assert " 0.00 [" not in markdown  # never a bare 0 % that is really "not judged"


def test_eval_end_of_run_shows_the_range_and_the_hint(tmp_path: Path) -> None:
    paper_dataset().save(tmp_path / "ds")
    (tmp_path / "r.json").write_text(json.dumps(REPLIES_A))
    db = tmp_path / "e.sqlite"
    result = runner.invoke(app, ["eval", "--model", f"replay:{tmp_path / 'r.json'}", "--dataset",
                                 str(tmp_path / "ds"), "--db", str(db), "--run", "on", "--quiet"])
    assert result.exit_code == 0, result.output
    # the default --undecided-feedback stop ends n1 at its undecided answer: counted in the range; re-judging cannot
    # ask n1's last question, so the hint names the command that finishes it
    text, command = hint(db, stopped=True)
    assert f"{text} {command}" in " ".join(result.stdout.split())
    assert "14.29–28.57 [" in result.stdout and "(1–2/7)" in result.stdout


def test_eval_on_the_bundled_sample_prints_the_range_and_the_hint(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    result = runner.invoke(app, ["eval", "--model", "baseline:first-option", "--db", str(db), "--quiet"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    with Store(db) as store:
        (run,) = store.runs()
        undecided = sum(row.response is not None and row.correct is None for row in store.turn_rows(run.id))
    assert undecided > 0  # the baseline's replies to "why" questions are left to an LLM judge
    assert f"Run {run.short_id}: {undecided} answers left undecided by the rules judge" in text
    # some StoryTurns stopped at an undecided answer: the hint names the command that finishes them
    assert f"commet eval --db {db} --finish {run.short_id} --judge openai:gpt-4o" in text
    story = next(line for line in result.stdout.splitlines() if "Story accuracy" in line)
    assert "–" in story  # a range, never a bare figure while stories hinge on undecided answers
