"""`commet import`: each benchmark's published layout (fixtures in tests/data/importers) -> a clean
dataset -> a replay of the right answers scores 100 % with the rules judge, under both protocols."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.cli import app
from commet.engine.conversation import options_text
from commet.format import validate_dataset
from commet.reports.metrics import run_metrics, select_runs
from commet.sources import load_dataset
from commet.sources.importers import FORMATS, Protocol, import_benchmark
from commet.store import Store

DATA = Path(__file__).parent / "data" / "importers"
runner = CliRunner()

#: format -> (source inside tests/data/importers, stories, questions, licence)
CASES = {
    "tomi": ("tomi/test.txt", 2, 6, "CC-BY-NC-4.0"),
    "hitom": ("hitom/Hi-ToM_data.json", 2, 5, "Apache-2.0"),
    "bigtom": ("bigtom/bigtom.csv", 8, 12, "MIT"),
    "tombench": ("tombench", 2, 3, "MIT"),
    "opentom": ("opentom/opentom_data", 1, 6, "CC-BY-NC-4.0"),
    "fantom": ("fantom/fantom_v1.json", 1, 6, "MIT"),  # short context: the "no:long" question left out
    "exploretom": ("exploretom/ExploreToM-data-sample.csv", 2, 4, "CC-BY-NC-4.0"),
    "mmtomqa": ("mmtomqa/questions.json", 3, 3, "MIT"),
    "mumatom": ("mumatom", 1, 2, "Apache-2.0"),
}


def test_every_format_has_a_fixture() -> None:
    """The booklet's scripted conversations are tested in test_import_booklet.py and test_importers_replay.py."""
    assert set(CASES) == set(FORMATS) - {"booklet"}


def cli(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def import_to(tmp_path: Path, fmt: str, protocol: str, *extra: str) -> Path:
    out = tmp_path / f"{fmt}-{protocol}"
    code, output = cli("import", fmt, str(DATA / CASES[fmt][0]), "--out", str(out), "--protocol", protocol, *extra)
    assert code == 0, output
    return out


def replay_score(tmp_path: Path, dataset: Path, replies: dict[str, list[str]], feedback: str = "original"):
    replay = tmp_path / f"replay-{dataset.name}.json"
    replay.write_text(json.dumps(replies, ensure_ascii=False), encoding="utf-8")
    db = tmp_path / "runs.sqlite"
    code, output = cli("eval", "--model", f"replay:{replay}", "--dataset", str(dataset), "--db", str(db),
                       "--run", f"{dataset.name}-{feedback}", "--feedback", feedback, "--quiet")
    assert code == 0, output
    with Store(db) as store:
        return run_metrics(store, select_runs(store, [f"{dataset.name}-{feedback}"])[0])


@pytest.mark.parametrize("protocol", ["conversation", "independent"])
@pytest.mark.parametrize("fmt", sorted(CASES))
def test_import_validates_and_right_answers_score_100(tmp_path: Path, fmt: str, protocol: str) -> None:
    out = import_to(tmp_path, fmt, protocol)
    code, output = cli("validate", str(out))
    assert code == 0 and "0 errors, 0 warnings" in output, output

    dataset = load_dataset(out)
    _, stories, questions, licence = CASES[fmt]
    assert len(dataset) == (stories if protocol == "conversation" else questions)
    assert sum(len(st.turns) for st in dataset) == questions
    assert dataset.licence == licence
    assert dataset.taxonomy.declared and {st.task for st in dataset} <= set(dataset.taxonomy.task_ids)
    meta = json.loads((out / "dataset.json").read_text(encoding="utf-8"))
    assert meta["source"]["protocol"] == protocol and meta["source"]["licence"] == licence
    for st in dataset:
        for turn in st.turns:
            assert turn.meta.get("question_type"), (st.id, turn.question)
            if turn.options:  # the expected answer is one of the options shown
                assert turn.answers[0] in [o.text for o in turn.options]
    for st in dataset:  # the question already lists its options as the original prompt does: not twice
        assert all(options_text(turn) == "" for turn in st.turns), st.id
    if protocol == "conversation":
        assert all(st.turns[k].feedback.wrong == "Your answer is wrong." for st in dataset for k in range(1, len(st.turns)))

    right = {st.id: [turn.answers[0] for turn in st.turns] for st in dataset}
    metrics = replay_score(tmp_path, out, right)
    assert metrics.undecided_turns == 0 and metrics.failed_turns == 0
    assert metrics.stories.correct == metrics.stories.total == len(dataset)
    assert metrics.questions.correct == questions


@pytest.mark.parametrize("fmt", ["hitom", "tombench", "mmtomqa", "mumatom", "bigtom"])
def test_a_wrong_option_scores_wrong(tmp_path: Path, fmt: str) -> None:
    """The replay check can fail: naming another option's text is judged wrong, never right."""
    out = import_to(tmp_path, fmt, "independent")
    dataset = load_dataset(out)
    wrong = {st.id: [next(o.text for o in t.options if o.text != t.answers[0]) for t in st.turns] for st in dataset}
    metrics = replay_score(tmp_path, out, wrong)
    assert metrics.stories.correct == 0


LETTER_STYLES = ("({})", "{}", "Option {}", "The answer is {}.")


@pytest.mark.parametrize("protocol", ["conversation", "independent"])
@pytest.mark.parametrize("fmt", ["hitom", "tombench", "mmtomqa", "mumatom", "bigtom", "fantom"])
def test_answer_letters_score_100(tmp_path: Path, fmt: str, protocol: str) -> None:
    """Replies that name the right option by its letter ("(b)", "B", "Option B", "The answer is B.")."""
    out = import_to(tmp_path, fmt, protocol)
    dataset = load_dataset(out)
    letters, position = {}, 0
    for st in dataset:
        replies = []
        for turn in st.turns:
            label = turn.meta.get("answer_label")
            position += 1
            replies.append(LETTER_STYLES[position % len(LETTER_STYLES)].format(label) if label else turn.answers[0])
        letters[st.id] = replies
    metrics = replay_score(tmp_path, out, letters)
    assert metrics.undecided_turns == 0
    assert metrics.stories.correct == metrics.stories.total


def test_tomi_reads_the_trace(tmp_path: Path) -> None:
    result = import_benchmark("tomi", DATA / "tomi" / "test.txt", Protocol.conversation)
    first, second = result.dataset.storyturns
    assert first.task == "tomi_false_belief" and second.task == "tomi_true_belief"
    assert [t.meta["question_type"] for t in first.turns] == ["memory", "first_order", "second_order", "reality"]
    assert [t.meta["order"] for t in first.turns] == [0, 1, 2, 0]
    assert first.turns[1].meta["tom"] is True and second.turns[0].meta["tom"] is False
    assert first.turns[0].story.startswith("Mila entered the hallway.") and first.turns[1].story == ""
    assert first.turns[1].question == "Where will Omar look for the pear?" and first.turns[1].answers == ["red_box"]

    alone = tmp_path / "alone.txt"  # without its .trace file: types from ToMi's question templates
    alone.write_text((DATA / "tomi" / "test.txt").read_text(encoding="utf-8"), encoding="utf-8")
    untraced = import_benchmark("tomi", alone).dataset.storyturns[0]
    assert untraced.task == "tomi"
    assert [t.meta["question_type"] for t in untraced.turns] == ["memory", "first_order", "second_order", "reality"]


def test_options_labels_and_orders() -> None:
    hitom = import_benchmark("hitom", DATA / "hitom" / "Hi-ToM_data.json").dataset
    turn = hitom.storyturns[0].turns[2]
    assert [o.label for o in turn.options] == ["A", "B", "C", "D"] and turn.answers == ["blue_tin"]
    assert turn.meta["answer_label"] == "B" and turn.meta["order"] == 2 and "B. blue_tin" in turn.question
    assert [st.task for st in hitom] == ["hitom_no_tell", "hitom_tell"]

    mm = import_benchmark("mmtomqa", DATA / "mmtomqa" / "questions.json").dataset
    assert [st.task for st in mm] == ["mmtomqa_belief", "mmtomqa_goal", "mmtomqa_belief"]
    assert mm.storyturns[2].turns[0].answers == ["Jon thinks that the remote control is not on the desk."]
    assert mm.storyturns[1].turns[0].meta["question_type"] == "goal_given_true_belief"
    assert mm.taxonomy.categories == ("Belief", "Goal")

    big = import_benchmark("bigtom", DATA / "bigtom" / "bigtom.csv").dataset
    false_belief = next(st for st in big if st.id.endswith("false_belief-forward"))
    assert "Lena does not see the child pouring sand into the can." in false_belief.turns[0].story
    assert false_belief.turns[0].answers == ["Lena believes the green can holds rain water."]
    assert false_belief.turns[1].answers == ["Lena will water the roses with the green can."]
    assert [o.label for o in false_belief.turns[0].options] == ["a", "b"]
    true_belief = next(st for st in big if st.id.endswith("-true_belief-forward"))
    assert true_belief.turns[0].answers == ["Lena believes the green can holds sand."]


def test_tombench_languages_and_tasks() -> None:
    zh = import_benchmark("tombench", DATA / "tombench", options=_options(language="zh")).dataset
    assert zh.languages == ["zh"]
    first = zh.storyturns[0]
    assert first.task == "tombench_false_belief_task" and first.category == "Belief"
    assert first.turns[0].answers == ["篮子"] and "[答案选项]" in first.turns[0].question
    faux = next(st for st in zh if st.task == "tombench_faux_pas_recognition_test")
    assert faux.category == "NLC" and [o.text for o in faux.turns[0].options] == ["有人说了不合适的话", "没有人说不合适的话"]
    en = import_benchmark("tombench", DATA / "tombench" / "Faux-pas Recognition Test.jsonl").dataset
    assert [o.label for o in en.storyturns[0].turns[0].options] == ["A", "B"]  # C and D are NaN


def test_fantom_and_opentom_question_kinds() -> None:
    fantom = import_benchmark("fantom", DATA / "fantom" / "fantom_v1.json").dataset.storyturns[0]
    kinds = [t.meta["question_type"] for t in fantom.turns]
    assert kinds == ["fact", "belief:multiple-choice", "answerability:list", "info_accessibility:list",
                     "answerability:binary", "answerability:binary"]  # "no:long": not with the short conversation
    whole = import_benchmark("fantom", DATA / "fantom" / "fantom_v1.json", options=_options(context="full"))
    assert whole.dataset.storyturns[0].turns[-1].meta["question_type"] == "info_accessibility:binary"
    assert whole.dataset.storyturns[0].turns[-1].answers == ["no"]  # the published "no:long", with the full one
    assert fantom.turns[2].rubric is not None and "Nia, Owen" in fantom.turns[2].rubric.key_inference
    assert fantom.turns[0].story.startswith("Nia: I finally adopted a puppy")
    full = import_benchmark("fantom", DATA / "fantom" / "fantom_v1.json", options=_options(context="full"))
    assert full.dataset.storyturns[0].turns[0].story.startswith("Nia: Good morning")

    opentom = import_benchmark("opentom", DATA / "opentom" / "opentom_data").dataset.storyturns[0]
    assert [t.meta["question_type"] for t in opentom.turns] == [
        "location_coarse", "location_coarse", "location_fine", "fullness", "accessibility", "attitude"]
    assert [o.text for o in opentom.turns[5].options] == ["positive", "neutral", "negative"]
    assert opentom.turns[2].options == [] and opentom.turns[2].meta["answer_in_story"] is True


def test_mumatom_falls_back_to_the_bytes_description(tmp_path: Path) -> None:
    folder = tmp_path / "muma"
    folder.mkdir()
    shutil.copy(DATA / "mumatom" / "questions.json", folder / "questions.json")
    dataset = import_benchmark("mumatom", folder / "questions.json").dataset
    story = dataset.storyturns[0].turns[0].story
    assert story.startswith("Ana walked into the kitchen") and "\"Do you know where the mug is?\"" in story
    assert dataset.storyturns[0].turns[1].answers == [
        "When giving information, Raj has been trying to prevent Ana from finding the mug"]


def _options(**values: str):  # noqa: ANN202
    from commet.sources.importers import ImportOptions

    return ImportOptions(**values)


def _copy(tmp_path: Path, fmt: str) -> Path:
    source = DATA / CASES[fmt][0]
    target = tmp_path / "src" / source.name
    if source.is_dir():
        shutil.copytree(source, target)
    else:
        target.parent.mkdir(parents=True)
        shutil.copy(source, target)
        trace = source.with_suffix(".trace")
        if trace.is_file():
            shutil.copy(trace, target.with_suffix(".trace"))
    return target


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


BROKEN = {
    "tomi": ("test.txt", "6 Where is the pear really?\tgreen_basket\t5", "6 Where is the pear really?", ":24 ", "question"),
    "hitom": ("Hi-ToM_data.json", '"answer": "red_jar"', '"answer": "yellow_jar"', ":", "data[1].answer"),
    "bigtom": ("bigtom.csv", ";auto;0", "", ":1 ", None),
    "tombench": ("False Belief Task.jsonl", '"答案\\nANSWER": "C"', '"答案\\nANSWER": "E"', ":2 ", "答案 ANSWER"),
    "opentom": ("attitude.json", '"answer": "positive"', '"answer": "cheerful"', ":", "answer"),
    "fantom": ("fantom_v1.json", '"correct_answer": "no:long"', '"correct_answer": "maybe"', ":", "infoAccessibilityQAs_binary.correct_answer"),
    "exploretom": ("ExploreToM-data-sample.csv", ",1,True,True,False", ",one,True,True,False", ":4 ", "qprop=nth_order"),
    "mmtomqa": ("questions.json", '"answer": "b"', '"answer": "c"', ":3 ", "answer"),
    "mumatom": ("questions.json", '"2": "C) When', '"2": "D) When', ":", "answers.2"),
}


@pytest.mark.parametrize("fmt", sorted(BROKEN))
def test_bad_source_is_one_located_line_exit_2_nothing_written(tmp_path: Path, fmt: str) -> None:
    name, old, new, line_mark, field = BROKEN[fmt]
    source = _copy(tmp_path, fmt)
    target = source if source.is_file() else next(source.rglob(name))
    if source.is_file() and source.name != name:
        target = source.parent / name
    if fmt == "bigtom":  # drop the last ten fields of the row
        text = target.read_text(encoding="utf-8")
        target.write_text(";".join(text.split(";")[:7]) + "\n", encoding="utf-8")
    else:
        _edit(target, old, new)
    out = tmp_path / "out"
    result = runner.invoke(app, ["import", fmt, str(source), "--out", str(out)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and target.name in lines[0], result.output
    assert line_mark in lines[0], lines[0]
    if field is not None:
        assert f"field={field}:" in lines[0], lines[0]
    assert "Traceback" not in result.output
    assert not out.exists()


def test_unknown_format_and_missing_source(tmp_path: Path) -> None:
    code, output = cli("import", "nosuch", str(tmp_path), "--out", str(tmp_path / "o"))
    assert code == 2
    code, output = cli("import", "tomi", str(tmp_path / "absent.txt"), "--out", str(tmp_path / "o"))
    assert code == 2 and "absent.txt" in output and "file not found" in output
    assert not (tmp_path / "o").exists()


def test_imported_dataset_validates_in_memory() -> None:
    """The Python API gives the same dataset the CLI writes, and it validates without writing anything."""
    for fmt, (source, *_rest) in CASES.items():
        result = import_benchmark(fmt, DATA / source, Protocol.independent)
        assert [p for p in validate_dataset(result.dataset) if p.severity == "error"] == [], fmt


@pytest.mark.parametrize(("fmt", "name"), [("tombench", "False Belief Task.jsonl"), ("mmtomqa", "questions.json")])
def test_a_line_that_is_not_json_is_located_by_its_line(tmp_path: Path, fmt: str, name: str) -> None:
    source = _copy(tmp_path, fmt)
    target = source if source.is_file() and source.name == name else next(
        path for path in (source.rglob(name) if source.is_dir() else source.parent.rglob(name)))
    lines = target.read_text(encoding="utf-8").splitlines()
    lines.insert(1, "")  # blank lines are skipped but counted
    lines.insert(2, '{"truncated": ')
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    result = runner.invoke(app, ["import", fmt, str(source), "--out", str(out)])
    assert result.exit_code == 2, result.output
    [line] = [line for line in result.output.splitlines() if line.strip()]
    assert line.startswith(f"error: {target}:3 ") and "invalid JSON: Expecting value" in line, line
    assert not out.exists()


def test_hitom_asks_each_question_once_whatever_its_prompting_types(tmp_path: Path) -> None:
    """The published Hi-ToM_data.json holds every question once per prompting type (CoTP and VP); each was
    imported twice (a story's questions asked again in one conversation, each item scored twice)."""
    records = json.loads((DATA / "hitom" / "Hi-ToM_data.json").read_text(encoding="utf-8"))
    records = records["data"] if isinstance(records, dict) else records
    doubled = [{**record, "prompting_type": kind} for kind in ("CoTP", "VP") for record in records]
    source = tmp_path / "Hi-ToM_data.json"
    source.write_text(json.dumps({"data": doubled}), encoding="utf-8")
    once = import_benchmark("hitom", DATA / "hitom" / "Hi-ToM_data.json").dataset
    twice = import_benchmark("hitom", source).dataset
    assert [[t.question for t in st.turns] for st in twice] == [[t.question for t in st.turns] for st in once]
    assert all(st.meta["prompting_types"] == ["CoTP", "VP"] for st in twice)
    independent = import_benchmark("hitom", source, protocol=Protocol.independent).dataset
    assert len(independent.storyturns) == sum(len(st.turns) for st in once)


def test_an_earlier_bigtom_layout_with_one_more_column_is_refused(tmp_path: Path) -> None:
    """The authors' earlier bigtom.csv (513c8bd) has an "alternate desire" column before the random event: read by
    position, every later field was the one before it and all four controls came out wrong, with no error."""
    row = (DATA / "bigtom" / "bigtom.csv").read_text(encoding="utf-8").strip().split(";")
    older = [*row[:14], "Lena wants to feed the ducks instead.", *row[14:]]
    source = tmp_path / "bigtom.csv"
    source.write_text(";".join(older) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["import", "bigtom", str(source), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and f"{source}:1 " in result.output and "20 ';'-separated fields" in result.output
    assert not (tmp_path / "out").exists()


def test_a_tombench_file_of_several_abilities_declares_them_all(tmp_path: Path) -> None:
    """One ToMBench file may hold items of several abilities (the Strange Story Task does): imported alone, its
    dataset declares every category its tasks use (it was refused for an undeclared one)."""
    lines = [json.loads(line) for line in (DATA / "tombench" / "False Belief Task.jsonl").read_text(
        encoding="utf-8").splitlines() if line.strip()]
    mixed = [lines[0], *[{**line, "能力\nABILITY": "Non-Literal Communication: Irony/Sarcasm", "STORY": f"Story {k}.",
                          "故事": f"故事{k}。"} for k, line in enumerate(lines[1:])]]
    source = tmp_path / "Strange Story Task.jsonl"
    source.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in mixed), encoding="utf-8")
    dataset = import_benchmark("tombench", source).dataset
    assert validate_dataset(dataset) == [] and len({st.category for st in dataset.storyturns}) == 2


@pytest.mark.parametrize(("answer", "says"), [("C) banana", "option C) is"), ("Apple", "expected 'X) option'")])
def test_a_mumatom_answer_must_be_its_letter_and_that_option(answer: str, says: str, tmp_path: Path) -> None:
    source = _copy(tmp_path, "mumatom")
    questions = source if source.is_file() else next(source.rglob("questions.json"))
    data = json.loads(questions.read_text(encoding="utf-8"))
    first = data[0] if isinstance(data, list) else next(iter(data.values()))
    number = next(iter(first["answers"]))
    first["answers"][number] = answer
    questions.write_text(json.dumps(data), encoding="utf-8")
    result = CliRunner().invoke(app, ["import", "mumatom", str(questions), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and says in result.output and f"answers.{number}" in result.output


def test_a_tombench_field_that_is_no_text_is_refused(tmp_path: Path) -> None:
    """A list where ToMBench writes text became the story "['...']" with no error."""
    lines = (DATA / "tombench" / "False Belief Task.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record["STORY"] = [record["STORY"]]
    source = tmp_path / "False Belief Task.jsonl"
    source.write_text(lines[0] + "\n" + json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["import", "tombench", str(source), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and f"{source}:2 " in result.output and "field=STORY" in result.output \
        and "must be text, not list" in result.output
    assert not (tmp_path / "out").exists()
