"""Judge agreement (paper Tables 7-10) and human labels: one run re-judged by three LLM judges and labelled."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.cli import app
from commet.engine import EvalSettings, evaluate
from commet.engine.rejudge import rejudge
from commet.judges import create_judge
from commet.judges.prompts import PROMPT_VERSION
from commet.reports.agreement import agreement_report, cohen_kappa, people_verdicts, report_tables
from commet.store import Store
from commet.store.labels import LabelError, import_csv, set_label, turns_to_label
from tests.judge_server import REPLIES, JudgeServer, verdict, write_dataset, write_replies


def name(model: str) -> str:
    return f"llm:openai:{model}@{PROMPT_VERSION}"


def three_judges(model: str, answer: str, expected: list[str], question: str) -> str:
    """judge-a accepts everything; judge-b rejects the answer with 'never'; judge-c the one with 'taste'."""
    wrong = {"judge-a": "", "judge-b": "never", "judge-c": "taste"}[model]
    ok = not wrong or wrong not in answer
    return verdict(ok, 1 if ok else None)


@pytest.fixture
def store_with_judges(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run 'base' judged by the rules, re-judged by three bare LLM judges (runs a, b, c)."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-test-key")
    dataset = write_dataset(tmp_path / "ds")
    db = tmp_path / "r.sqlite"
    evaluate(write_replies(tmp_path / "replies.json"), dataset, judge="rules", db=db, run="base",
             settings=EvalSettings(undecided_feedback="wrong"))  # every turn answered, whatever the rules decide

    async def rejudge_all(server: JudgeServer) -> None:
        with Store(db) as store:
            for model in ("judge-a", "judge-b", "judge-c"):
                judge = create_judge("llm-only:" + server.spec(model))
                await rejudge(store, "base", judge, dataset, new_name=model[-1])
                await judge.aclose()

    with JudgeServer(three_judges) as server:
        asyncio.run(rejudge_all(server))
        assert server.calls == 18
    return db


LABELS_CSV = ("run,story_id,turn,label,labeller\n"
              "base,fb,0,correct,ann\n"
              "base,fb,1,correct,ann\n"
              "a,dd,2,incorrect,ann\n"  # labels follow the answer into every re-judged copy
              "base,dd,2,Incorrect,bo\n")


def test_an_answer_whose_judging_failed_is_left_out_and_the_tables_say_so(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A panel whose third member fails where the other two disagree has no verdict there: the answer is not an
    'undecided' of the panel, and the agreement tables name it as left out."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-test-key")
    dataset = write_dataset(tmp_path / "ds")
    db = tmp_path / "r.sqlite"
    evaluate(write_replies(tmp_path / "replies.json"), dataset, judge="rules", db=db, run="base",
             settings=EvalSettings(undecided_feedback="wrong"))

    def decide(model: str, answer: str, expected: list[str], question: str) -> str:
        if model == "judge-x":  # judge-a's verdicts, but no verdict at all on the answer with 'never'
            return "I would rather not say." if "never" in answer else three_judges("judge-a", answer, expected, question)
        return three_judges(model, answer, expected, question)

    async def rejudge_with_panel(server: JudgeServer) -> None:
        judge = create_judge("llm-only:panel:" + ",".join(server.spec(m) for m in ("judge-a", "judge-b", "judge-x")))
        with Store(db) as store:
            await rejudge(store, "base", judge, dataset, new_name="p")
        await judge.aclose()

    with JudgeServer(decide) as server:
        asyncio.run(rejudge_with_panel(server))
    with Store(db) as store:
        report = agreement_report(store, ["p"])
    panel = next(judge for judge in report.judges if judge.startswith("panel("))
    assert report.failed == {"p": 1}
    assert (report.decided[panel], report.undecided[panel]) == (5, 0)  # not counted as undecided
    assert (report.decided[name("judge-a")], report.decided[name("judge-b")]) == (5, 5)
    assert "1 answer(s) of p left out: judging them failed" in report_tables(report)[1][0]


def test_cohen_kappa() -> None:
    a = [True, True, False, False, True, False]
    b = [True, False, False, False, True, True]
    assert cohen_kappa(list(zip(a, b, strict=True))) == pytest.approx(1 / 3)
    assert cohen_kappa([(True, True), (False, False)]) == pytest.approx(1.0)
    assert cohen_kappa([(True, True), (True, True)]) is None  # chance agreement is 1: undefined
    assert cohen_kappa([]) is None


def test_pairwise_agreement_and_agreement_with_people(store_with_judges: Path, tmp_path: Path) -> None:
    (tmp_path / "labels.csv").write_text(LABELS_CSV)
    with Store(store_with_judges) as store:
        assert import_csv(store, tmp_path / "labels.csv") == 4
        report = agreement_report(store)
    rules, a, b, c = "rules", name("judge-a"), name("judge-b"), name("judge-c")
    assert report.judges == sorted([rules, a, b, c])
    assert report.who_decided[("base", rules)] == {rules: 6} and report.who_decided[("a", a)] == {a: 6}
    assert report.decided == {rules: 4, a: 6, b: 6, c: 6} and report.undecided[rules] == 2
    pairs = {(x.a, x.b): x for x in report.pairwise}
    assert (pairs[(a, b)].agree, pairs[(a, b)].disagree) == (5, 1)
    assert (pairs[(a, c)].agree, pairs[(a, c)].disagree) == (5, 1)
    assert (pairs[(b, c)].agree, pairs[(b, c)].disagree) == (4, 2)
    assert pairs[(b, c)].percent == pytest.approx(66.666, abs=0.01)
    assert pairs[(b, c)].kappa == pytest.approx(-0.2)
    assert pairs[(a, b)].kappa == pytest.approx(0.0)
    assert (pairs[(a, rules)].agree, pairs[(a, rules)].disagree) == (4, 0)  # only where the rules decided
    # people: fb 1 is correct, dd 2 is incorrect; these are exactly the two answers the judges disagree on
    assert report.disagreements == 2 and report.labelled == 3
    on_disputes = {x.b: (x.agree, x.disagree) for x in report.human_on_disagreements}
    assert on_disputes == {a: (1, 1), b: (0, 2), c: (2, 0), rules: (0, 0)}
    on_all = {x.b: (x.agree, x.disagree) for x in report.human_on_all}
    assert on_all == {a: (2, 1), b: (1, 2), c: (3, 0), rules: (1, 0)}


def test_agreement_for_chosen_runs_and_subsets(store_with_judges: Path) -> None:
    with Store(store_with_judges) as store:
        two = agreement_report(store, ["a", "b"])
        none = agreement_report(store, ["a", "b"], subset="image-dependent")
        with pytest.raises(KeyError, match="nosuch"):
            agreement_report(store, ["nosuch"])
    assert [(x.agree, x.disagree) for x in two.pairwise] == [(5, 1)]
    assert [(x.agree, x.disagree) for x in none.pairwise] == [(0, 0)] and none.pairwise[0].percent is None


def test_label_import_is_checked_and_all_or_nothing(store_with_judges: Path, tmp_path: Path) -> None:
    bad = {
        "bad_label.csv": ("run,story_id,turn,label,labeller\nbase,fb,0,correct,ann\nbase,fb,1,maybe,ann\n",
                          "bad_label.csv:3: label must be correct or incorrect"),
        "bad_turn.csv": ("run,story_id,turn,label,labeller\nbase,fb,9,correct,ann\n", "no answered turn 9"),
        "bad_run.csv": ("run,story_id,turn,label,labeller\nnosuch,fb,0,correct,ann\n", "no run named 'nosuch'"),
        "bad_header.csv": ("run,story,turn,label\n", "missing column(s) story_id, labeller"),
        "twice.csv": ("run,story_id,turn,label,labeller\nbase,fb,0,correct,ann\nbase,fb,1,correct,ann\n"
                      "base,fb,0,incorrect, ann\n", "twice.csv:4: conflicting labels for turn 0 of story 'fb' by "
                                                     "'ann' (lines 2 and 4: correct and incorrect)"),
        "quoted.csv": ('run,story_id,turn,label,labeller\n"base",fb,0,correct,"ann,\nlee"\nbase,fb,1,maybe,x\n',
                       "quoted.csv:2: labeller 'ann,.nlee' holds a line break"),  # a record over two lines
        "latin1.csv": ("run,story_id,turn,label,labeller\nbase,fb,0,correct,Zoë\n".encode("latin-1"),
                       "latin1.csv:2: not UTF-8 text: byte 0xeb (invalid continuation byte); save the file as UTF-8"),
    }
    with Store(store_with_judges) as store:
        for file, (text, message) in bad.items():
            if isinstance(text, bytes):
                (tmp_path / file).write_bytes(text)
            else:
                (tmp_path / file).write_text(text)
            with pytest.raises(LabelError, match=message.replace("(", r"\(").replace(")", r"\)")):
                import_csv(store, tmp_path / file)
        # nothing from the failed files was kept, not even an empty labels table
        assert store.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'labels'").fetchone() is None
        assert people_verdicts(store) == {}
        set_label(store, run="base", story_id="fb", turn=0, response=REPLIES["fb"][0], label="correct", labeller="x")
        set_label(store, run="base", story_id="fb", turn=0, response=REPLIES["fb"][0], label="incorrect",
                  labeller="y")
        assert people_verdicts(store) == {}  # a tie is no verdict
        run = store.get_run("base")
        assert run is not None
        assert len(turns_to_label(store, run, "x")) == 5 and len(turns_to_label(store, run, "z")) == 6


def test_cli_judges_tables_in_markdown_and_csv(store_with_judges: Path, tmp_path: Path) -> None:
    (tmp_path / "labels.csv").write_text(LABELS_CSV)
    runner = CliRunner()
    imported = runner.invoke(app, ["label", "import", str(tmp_path / "labels.csv"), "--db", str(store_with_judges)])
    assert imported.exit_code == 0 and "imported 4 labels" in imported.output
    markdown = runner.invoke(app, ["judges", "--db", str(store_with_judges), "--run", "b", "--run", "c",
                                   "--format", "markdown"])
    assert markdown.exit_code == 0, markdown.output
    assert f"| {name('judge-b')} vs {name('judge-c')} | 4 | 2 | 6 | 66.67% | -0.200 |" in markdown.output
    assert f"| human vs {name('judge-c')} | 2 | 0 | 2 | 100.00% |" in markdown.output
    assert "### Agreement with people where the judges disagree (2 answers" in markdown.output
    assert f"| b | {name('judge-b')} | {name('judge-b')} | 6 |" in markdown.output  # who decided, per run
    csv_out = runner.invoke(app, ["judges", "--db", str(store_with_judges), "--format", "csv"])
    assert csv_out.exit_code == 0 and csv_out.output.startswith("Table,Pair,Agree,Disagree,n,Agreement,Kappa")
    table = runner.invoke(app, ["judges", "--db", str(store_with_judges)])
    assert table.exit_code == 0 and "Agreement among judges" in table.output
    unknown = runner.invoke(app, ["judges", "--db", str(store_with_judges), "--run", "nosuch"])
    assert unknown.exit_code == 2 and "nosuch" in unknown.output


def test_cli_label_flow_is_resumable(store_with_judges: Path) -> None:
    runner = CliRunner()
    args = ["label", "--db", str(store_with_judges), "--run", "base", "--labeller", "ann"]
    first = runner.invoke(app, args, input="y\ns\nn\nq\n")
    assert first.exit_code == 0, first.output
    assert "Jonah puts his ball in the shed" in first.output and "expected:" in first.output
    assert "stored 2 labels; 4 answers of run base are not labelled by ann yet" in first.output
    second = runner.invoke(app, args, input="y\nq\n")
    assert "stored 1 labels; 3 answers" in second.output
    assert "He never saw his sister" in second.output  # the skipped answer comes back first
    with Store(store_with_judges) as store:
        labels = {(k[1], k[2]): v for k, v in people_verdicts(store).items()}
    assert labels == {("fb", 0): True, ("fb", 1): True, ("fb", 2): False}
    disputed = runner.invoke(app, [*args[:-1], "bo", "--disputed"], input="q\n")
    assert "1 of 2" in disputed.output  # only the two answers the judges disagree on
    assert runner.invoke(app, ["label", "--db", str(store_with_judges)]).exit_code == 2
