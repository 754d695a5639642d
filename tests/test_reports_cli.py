"""``commet report`` in every format, ``commet compare`` and ``commet sweep``."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.cli import app
from commet.engine import EvalSettings, evaluate
from commet.reports import Bootstrap, compare_runs
from commet.store import Store, short_ids
from tests.test_reports_analyses import store_path, toy_dataset  # noqa: F401 - fixture

runner = CliRunner()


def invoke(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_csv_is_one_file_per_table(store_path: Path, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "csv"
    result = runner.invoke(app, ["report", "--db", str(store_path), "--run", "r1-on", "--format", "csv",
                                 "--out", str(out), "--resamples", "200"])
    assert result.exit_code == 0, result.output
    files = sorted(p.name for p in out.iterdir())
    assert files == ["feedback.csv", "image-dependent.csv", "source-procedural.csv", "source-sample.csv",
                     "summary.csv", "text-complete.csv", "turns.csv", "wrong-answers.csv"]
    for file in out.iterdir():  # one shape per file: every row as long as the header
        rows = list(csv.reader(io.StringIO(file.read_text())))
        assert len({len(r) for r in rows}) == 1, file.name
    summary = list(csv.reader(io.StringIO((out / "summary.csv").read_text())))
    header = summary[0]
    assert header[5:10] == ["Story accuracy", "Story accuracy CI low", "Story accuracy CI high", "Story accuracy k",
                            "Story accuracy n"]
    assert summary[1][0] == "r1-on" and summary[1][header.index("Story accuracy k")] == "1"
    one = invoke("report", "--db", str(store_path), "--run", "r1-on", "--format", "csv", "--table", "summary",
                 "--resamples", "200")
    assert one == (out / "summary.csv").read_text()
    mixed = runner.invoke(app, ["report", "--db", str(store_path), "--format", "csv"])
    assert mixed.exit_code == 2 and "--table" in mixed.output and "--out DIR" in mixed.output
    single = runner.invoke(app, ["report", "--db", str(store_path), "--out", str(tmp_path / "r.csv")])
    assert single.exit_code == 2 and not (tmp_path / "r.csv").exists()


def test_pdf_and_contradicting_suffixes_are_refused(store_path: Path, tmp_path: Path) -> None:  # noqa: F811
    for args in (["--out", str(tmp_path / "x.pdf")], ["--format", "markdown", "--out", str(tmp_path / "x.pdf")],
                 ["--format", "markdown", "--out", str(tmp_path / "x.tex")]):
        result = runner.invoke(app, ["report", "--db", str(store_path), *args])
        assert result.exit_code == 2, result.output
        assert result.output.startswith("error: ") and result.output.count("\n") == 1
    assert not any(tmp_path.iterdir())


def test_markdown_latex_and_terminal(store_path: Path, tmp_path: Path) -> None:  # noqa: F811
    markdown = invoke("report", "--db", str(store_path), "--format", "markdown", "--resamples", "200")
    for title in ("Table 1: text-complete subset", "Table 2: image-dependent subset", "Table 3: feedback",
                  "Table 14: original versus correctness-only", "Source sample", "by turn", "wrong answers"):
        assert title in markdown
    assert markdown.index("Table 1:") < markdown.index("Table 2:") < markdown.index("Summary per run")
    out = tmp_path / "tables.tex"
    invoke("report", "--db", str(store_path), "--out", str(out), "--resamples", "200")  # format from suffix
    latex = out.read_text()
    assert latex.count(r"\toprule") == latex.count(r"\bottomrule") >= 8 and r"Belief\_Emotion" in latex
    assert "r1-corr" in invoke("report", "--db", str(store_path), "--resamples", "200")


def test_compare_leaves_out_stories_that_hinge_on_undecided_answers_and_says_so(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    for model, run in (("baseline:random-option", "a"), ("baseline:first-option", "b")):
        evaluate(model, "sample", db=db, run=run, settings=EvalSettings(images="off", feedback="correctness"))
    with Store(db) as store:
        a, b = store.get_run("a"), store.get_run("b")
        assert a is not None and b is not None
        result = compare_runs(store, a, b, bootstrap=Bootstrap(resamples=200))

        def story_results(run_id: int) -> dict[str, tuple[bool, bool]]:
            """Per StoryTurn counted in story accuracy: (right as counted, right if undecided answers were right)."""
            turns: dict[str, list[bool | None]] = {}
            for row in store.turn_rows(run_id):
                turns.setdefault(row.story_id, []).append(row.correct)
            return {s.story_id: (s.correct is True, all(c is not False for c in turns[s.story_id]))
                    for s in store.story_rows(run_id) if str(s.status) in ("done", "stopped")}

        in_a, in_b = story_results(a.id), story_results(b.id)
    hinging = {i for i in in_a.keys() & in_b.keys() if in_a[i][0] != in_a[i][1] or in_b[i][0] != in_b[i][1]}
    decided = (in_a.keys() & in_b.keys()) - hinging
    assert hinging and result.undecided == len(hinging)  # the sample has replies the rules leave undecided
    assert result.paired.items == len(decided)
    assert result.paired.both_right == sum(in_a[i][0] and in_b[i][0] for i in decided)
    assert result.paired.a_only == sum(in_a[i][0] and not in_b[i][0] for i in decided)
    text = runner.invoke(app, ["compare", "a", "b", "--db", str(db), "--resamples", "200"]).output
    assert f"left out: {len(hinging)} StoryTurns whose result hinges on undecided answers in A or B" in text
    assert f"on the {len(decided)} compared" in text


def test_unknown_run_is_one_line_error(store_path: Path) -> None:  # noqa: F811
    result = runner.invoke(app, ["report", "--db", str(store_path), "--run", "nope"])
    assert result.exit_code == 2 and "no run named 'nope'" in result.output


def test_compare_command(store_path: Path) -> None:  # noqa: F811
    text = invoke("compare", "--db", str(store_path), "r1-on", "r1-corr", "--resamples", "200")
    assert "McNemar exact p = 1" in text and "no evidence of a real difference" in text


def test_sweep_runs_a_grid_resumes_and_reports(tmp_path: Path) -> None:
    toy_dataset().save(tmp_path / "toy")
    (tmp_path / "r.json").write_text(json.dumps({"tc1": ["The basket.", "No.", "The box."],
                                                 "tc2": ["The cake.", "The apple."],
                                                 "id1": ["The blue cup.", "No."]}))
    config = tmp_path / "sweep.toml"
    config.write_text('db = "out/sweep.sqlite"\nout = "out/report.md"\njudge = "rules"\nconcurrency = 2\n'
                      f'models = ["replay:{tmp_path / "r.json"}", "baseline:first-option"]\n'
                      'images = ["on", "off"]\nfeedback = ["original", "correctness"]\ndatasets = ["toy"]\n')
    invoke("sweep", str(config), "--quiet")
    with Store(tmp_path / "out" / "sweep.sqlite") as store:
        names = [r.name for r in store.runs()]
        assert len(names) == 8 and "baseline:first-option@toy:images=off,feedback=correctness" in names
        calls = store.db.execute("SELECT COUNT(*) FROM call_log WHERE cached = 0").fetchone()[0]
    report = (tmp_path / "out" / "report.md").read_text()
    assert f"| replay:{tmp_path / 'r.json'}@toy:images=on,feedback=original | replay:r.json | on | original | 3 | " \
        "66.67 [" in report and "] (2/3) |" in report
    invoke("sweep", str(config), "--quiet")  # everything is already done: no new call
    with Store(tmp_path / "out" / "sweep.sqlite") as store:
        assert store.db.execute("SELECT COUNT(*) FROM call_log WHERE cached = 0").fetchone()[0] == calls
        assert len(store.runs()) == 8


def test_sweep_config_errors(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text('models = ["baseline:first-option"]\nimages = ["maybe"]\n')
    result = runner.invoke(app, ["sweep", str(config)])
    assert result.exit_code == 2 and "'maybe' is not one of on, off, needed" in result.output
    config.write_text('models = ["baseline:first-option"]\nout = "report.csv"\n')
    result = runner.invoke(app, ["sweep", str(config)])
    assert result.exit_code == 2 and "one file per table" in result.output
    config.write_text('models = ["baseline:first-option"]\nout = "report.pdf"\n')
    result = runner.invoke(app, ["sweep", str(config)])
    assert result.exit_code == 2 and "reports are text" in result.output


def test_latex_prints_text_as_written(tmp_path: Path) -> None:
    """Commands in the report's notices keep their "--" (LaTeX would set an en dash: a reader copying
    `commet rejudge --db ...` from the PDF would get a broken command), and no text character is
    LaTeX markup."""
    from commet.reports.latex import escape

    assert escape("commet rejudge --db a_b.sqlite --judge x") == r"commet rejudge -{}-db a\_b.sqlite -{}-judge x"
    assert escape("---") == "-{}-{}-" and escape("a<b>c") == r"a\textless{}b\textgreater{}c"
    db = tmp_path / "r.sqlite"
    evaluate("baseline:random-option", "sample", db=db, run="a", settings=EvalSettings(images="off"))
    latex = invoke("report", "--db", str(db), "--format", "latex", "--resamples", "100")
    notices = [line for line in latex.splitlines() if line.startswith(r"\noindent")]
    assert notices and all(" --" not in line for line in notices)
    # (the sample's stories stop at undecided "why" answers: the notice names `commet eval --finish`)
    run_id = short_ids(["a"])["a"]
    assert any(r"commet eval -{}-db" in line and rf"-{{}}-finish {run_id}" in line for line in notices)


def test_csv_holds_every_figure_the_tables_print(tmp_path: Path) -> None:
    """A range "a–b [low, high]" (stories hinging on undecided answers) is four CSV columns: the
    figure, its CI low, "if undecided right" and "if undecided right CI high"."""
    import re

    db = tmp_path / "r.sqlite"
    evaluate("baseline:random-option", "sample", db=db, run="a", settings=EvalSettings(images="off"))
    markdown = invoke("report", "--db", str(db), "--format", "markdown", "--resamples", "200")
    invoke("report", "--db", str(db), "--format", "csv", "--out", str(tmp_path / "csv"), "--resamples", "200")
    table = markdown.split("## Table 1")[1].split("\n\n")[1].splitlines()
    header = [h.strip() for h in table[0].strip("|").split("|")]
    printed = dict(zip(header, (c.strip() for c in table[2].strip("|").split("|")), strict=True))
    row = next(csv.DictReader((tmp_path / "csv" / "text-complete.csv").open()))
    ranges = 0
    for category in header[5:]:
        found = re.match(r"([\d.]+)(?:–([\d.]+))? \[([\d.]+), ([\d.]+)\]", printed[category])
        if found is None:
            continue  # no StoryTurn of this category
        value, upper, low, high = found.groups()
        assert float(row[category]) == pytest.approx(float(value), abs=0.005)
        assert float(row[f"{category} CI low"]) == pytest.approx(float(low), abs=0.005)
        if upper is None:
            assert float(row[f"{category} CI high"]) == pytest.approx(float(high), abs=0.005)
        else:
            ranges += 1
            assert float(row[f"{category} if undecided right"]) == pytest.approx(float(upper), abs=0.005)
            assert float(row[f"{category} if undecided right CI high"]) == pytest.approx(float(high), abs=0.005)
    assert ranges >= 2
