"""Imported benchmarks scored as their authors score them: a closed answer vocabulary decides every reply that is
exactly one of its words (ToMi's containers and rooms, OpenToM's places and other answer words, ExploreToM's),
and ToMBench's options import whatever notation repeats their label ("A：", "A: ", "(A)").

Fixtures are written here in each benchmark's published layout; replies are replayed through `commet eval`
(independent protocol, the rules judge) into a real SQLite file.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.cli import app
from commet.format.validate import repeated_option_label
from commet.reports.metrics import select_runs
from commet.sources import load_dataset
from commet.sources.importers import base, opentom, tomi
from commet.store import Store

runner = CliRunner()


def imported(tmp_path: Path, fmt: str, source: Path, *extra: str) -> Path:
    out = tmp_path / f"{fmt}-out"
    result = runner.invoke(app, ["import", fmt, str(source), "--out", str(out), "--protocol", "independent", *extra])
    assert result.exit_code == 0, result.output
    assert "0 validation errors" in result.output, result.output
    return out


def verdicts(tmp_path: Path, folder: Path, replies: dict[str, list[str]], run: str) -> dict[str, bool | None]:
    """The verdict on each given StoryTurn's one reply (the others answered with their expected answer)."""
    every = {st.id: [turn.answers[0] for turn in st.turns] for st in load_dataset(folder)} | replies
    path = tmp_path / f"{run}.json"
    path.write_text(json.dumps(every, ensure_ascii=False), encoding="utf-8")
    db = tmp_path / "runs.sqlite"
    result = runner.invoke(app, ["eval", "--model", f"replay:{path}", "--dataset", str(folder), "--db", str(db),
                                 "--run", run, "--quiet", "--undecided-feedback", "skip"])
    assert result.exit_code == 0, result.output
    with Store(db) as store:
        record = select_runs(store, [run])[0]
        return {row.story_id: row.correct for row in store.turn_rows(record.id) if row.story_id in replies}


TOMI_STORIES = [
    (["Aria entered the front_yard.", "Aiden entered the front_yard.", "The grapefruit is in the green_bucket.",
      "Aria moved the grapefruit to the blue_container.", "Aiden exited the front_yard.", "Noah entered the playroom."],
     [("Where was the grapefruit at the beginning?", "green_bucket", "memory"),
      ("Where will Aiden look for the grapefruit?", "green_bucket", "first_order_1_tom")], "false_belief"),
    (["Mila entered the cellar.", "Owen entered the cellar.", "The hat is in the red_drawer.",
      "Owen exited the cellar.", "Mila moved the hat to the green_suitcase."],
     [("Where is the hat really?", "green_suitcase", "reality"),
      ("Where does Owen think that Mila searches for the hat?", "red_drawer", "second_order_1_tom")],
     "second_order_false_belief"),
]


def write_tomi(folder: Path) -> Path:
    """A ToMi ``.txt`` and its ``.trace`` as the published ``tomi_balanced_story_types`` files are laid out."""
    folder.mkdir(parents=True)
    lines, traces = [], []
    for sentences, questions, story_type in TOMI_STORIES:
        for question, answer, kind in questions:
            lines += [f"{n} {sentence}" for n, sentence in enumerate(sentences, start=1)]
            lines.append(f"{len(sentences) + 1} {question}\t{answer}\t1")
            traces.append(f"enter_agent_0,agent_0_moves_obj,{kind},{story_type}")
    (folder / "fb_all_test.txt").write_text("\n".join(lines) + "\n")
    (folder / "fb_all_test.trace").write_text("\n".join(traces) + "\n")
    return folder / "fb_all_test.txt"


def test_tomi_where_questions_carry_the_whole_answer_vocabulary(tmp_path: Path) -> None:
    dataset = load_dataset(imported(tmp_path, "tomi", write_tomi(tmp_path / "tomi")))
    for st in dataset:
        candidates = st.turns[0].candidates
        assert candidates[0] in {"green_bucket", "red_drawer"}  # the story's own containers come first
        # rooms of any story of the file, containers of the other story, and ToMi's world lists
        assert {"front_yard", "playroom", "cellar", "red_drawer", "blue_container", "kitchen",
                "red_treasure_chest"} <= set(candidates)
        assert len(candidates) == len(set(candidates))


@pytest.mark.parametrize("wrong", ["playroom", "cellar", "kitchen", "blue_treasure_chest", "TV_room"])
def test_tomi_a_reply_that_is_any_vocabulary_word_is_decided(tmp_path: Path, wrong: str) -> None:
    """ToMi scores by exact match: a room, another story's container or a container of ToMi's world that this file
    never names is wrong, and the expected container right, never undecided."""
    folder = imported(tmp_path, "tomi", write_tomi(tmp_path / "tomi"))
    dataset = load_dataset(folder)
    right = verdicts(tmp_path, folder, {st.id: [st.turns[0].answers[0]] for st in dataset}, "right")
    assert set(right.values()) == {True}
    replies = {st.id: [wrong] for st in dataset if wrong != st.turns[0].answers[0]}
    assert set(verdicts(tmp_path, folder, replies, "wrong").values()) == {False}


def write_opentom(folder: Path, original: str, moved: str, answers: list[str]) -> Path:
    folder.mkdir(parents=True)
    meta = {"s1": {"plot_info": {"mover": "Ana", "affected_char": "Ben", "eoi": "scarf",
                                 "original_place": original, "move_to_place": moved},
                   "narrative": f"Ana put the scarf in the {original}. Ben left. Ana moved it to the {moved}.",
                   "observed": False}}
    (folder / "meta_data.json").write_text(json.dumps(meta))
    questions = {"s1": [{"question": f"From Ben's perspective, where is the scarf precisely? ({n})", "answer": answer,
                         "type": "location-fo"} for n, answer in enumerate(answers)]}
    (folder / "location_fg_fo_new.json").write_text(json.dumps(questions))
    (folder / "location_cg_fo.json").write_text(json.dumps({"s1": [
        {"question": "From Ben's perspective, is the scarf in its initial location?", "answer": "Yes",
         "type": "location-fo"}]}))
    return folder


@pytest.mark.parametrize("wrong", ["No", "yes", "more full", "less accessible", "neutral"])
def test_opentom_a_where_question_answered_with_another_answer_word_is_wrong(tmp_path: Path, wrong: str) -> None:
    """The authors' evaluator picks the place the reply shares most words with: "No" shares none, so it is wrong."""
    folder = imported(tmp_path, "opentom", write_opentom(tmp_path / "ot", "wicker basket", "donation bin",
                                                         ["wicker basket", "donation bin"]))
    dataset = load_dataset(folder)
    fine = [st for st in dataset if not st.turns[0].options]
    assert len(fine) == 2
    assert set(verdicts(tmp_path, folder, {st.id: [wrong] for st in fine}, "wrong").values()) == {False}
    right = verdicts(tmp_path, folder, {st.id: [st.turns[0].answers[0]] for st in fine}, "right")
    assert set(right.values()) == {True}


def test_opentom_leaves_out_a_word_the_authors_evaluator_would_score_right() -> None:
    """A vocabulary word that shares the expected place's words is scored right by the authors' lexical overlap:
    it is not a candidate (a reply naming it stays undecided) rather than decided wrong."""
    plot = {"original_place": "neutral zone", "move_to_place": "kitchen"}
    assert opentom.authors_fine_location_right("neutral", "neutral zone", "neutral zone", "kitchen")
    candidates = opentom.fine_candidates(plot, "neutral zone")
    assert candidates[:2] == ["neutral zone", "kitchen"] and "neutral" not in candidates and "No" in candidates
    # the other place shares no word: a reply naming it is wrong, so it stays in
    assert not opentom.authors_fine_location_right("kitchen", "neutral zone", "neutral zone", "kitchen")


def write_exploretom(path: Path) -> Path:
    structure = ("Isla entered the pottery studio. Isla moved the paintbrush to the plastic storage bin, which is "
                 "also located in the pottery studio. Dev entered the pottery studio. Isla left the pottery studio. "
                 "Dev moved the paintbrush to the wooden crate, which is also located in the pottery studio.")
    header = ["", "story_structure", "infilled_story", "question", "expected_answer", "qprop=params",
              "qprop=nth_order", "qprop=non_unique_mental_state"]
    rows = [["0", structure, "Isla tucked the paintbrush into the bin; Dev later moved it to the crate.",
             "In which container will Isla search for the paintbrush?", "plastic storage bin",
             "(['Isla'], 'paintbrush', 'container_location')", "1", "True"],
            ["1", structure, "Isla tucked the paintbrush into the bin; Dev later moved it to the crate.",
             "Does Dev know where the paintbrush is?", "yes", "(['Dev'], 'paintbrush', 'knowledge')", "1", "False"]]
    path.parent.mkdir(parents=True)
    with path.open("w", newline="") as out:
        csv.writer(out).writerows([header, *rows])
    return path


@pytest.mark.parametrize("wrong", ["pottery studio", "yes", "does not know about it", "wooden crate"])
def test_exploretom_a_container_question_answered_with_another_vocabulary_word_is_wrong(
        tmp_path: Path, wrong: str) -> None:
    folder = imported(tmp_path, "exploretom", write_exploretom(tmp_path / "et" / "ExploreToM-data-sample.csv"))
    dataset = load_dataset(folder)
    container = [st for st in dataset if st.turns[0].candidates]
    assert len(container) == 1
    assert verdicts(tmp_path, folder, {container[0].id: [wrong]}, "wrong") == {container[0].id: False}


@pytest.mark.parametrize(("written", "text"), [
    ("A: 有人说了不合适的话", "有人说了不合适的话"), ("A：有人说了不合适的话", "有人说了不合适的话"),
    ("A、有人说了", "有人说了"), ("A．有人", "有人"), ("(A) 有人", "有人"), ("（A）有人", "有人"), ("【A】有人", "有人"),
    ("A. A sad face", "A sad face"), ("A sad face", "A sad face"), ("a) the basket", "the basket"),
    ("B: not its own label", "B: not its own label"), ("A:", "A:"),
])
def test_an_option_loses_only_a_copy_of_its_own_label(written: str, text: str) -> None:
    assert base.without_own_label(written, "A") == text


def test_tombench_chinese_with_full_width_colons_imports_and_scores(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    records = [{"能力\nABILITY": "Non-Literal Communication: Faux pas", "序号\nINDEX": n,
                "故事": f"经理分享了喜讯{n}。", "问题": "这个故事中是否有人说了不合适的话?",
                "选项A": f"A{colon}故事中有人说了不合适的话", "选项B": f"B{colon}故事中没有人说不合适的话。",
                "选项C": float("nan"), "选项D": float("nan"),
                "STORY": f"The manager shared good news {n}.", "QUESTION": "Did anyone say something inappropriate?",
                "OPTION-A": "A. Someone said something inappropriate", "OPTION-B": "B. No one did",
                "OPTION-C": float("nan"), "OPTION-D": float("nan"), "答案\nANSWER": "B"}
               for n, colon in enumerate(("：", ": ", ":", "、"), start=1)]
    (folder / "Faux-pas Recognition Test.jsonl").write_text(
        "\n".join(json.dumps(r, ensure_ascii=False).replace("NaN", "NaN") for r in records) + "\n", encoding="utf-8")
    out = imported(tmp_path, "tombench", folder, "--language", "zh")
    dataset = load_dataset(out)
    for st in dataset:
        assert [o.text for o in st.turns[0].options] == ["故事中有人说了不合适的话", "故事中没有人说不合适的话。"]
    right = verdicts(tmp_path, out, {st.id: ["故事中没有人说不合适的话。"] for st in dataset}, "right")
    wrong = verdicts(tmp_path, out, {st.id: ["A"] for st in dataset}, "wrong")
    assert set(right.values()) == {True} and set(wrong.values()) == {False}


def test_a_label_like_word_inside_an_option_is_no_error_when_options_are_given(tmp_path: Path) -> None:
    """"... to Company B.\\nD. ..." reads like a second label B; options given as a field are what a reply is judged
    by, so only a question whose options exist as text alone is checked (ToMBench English imported with 1 error)."""
    question = ("How does she convince Company B?\nA. Detail her work.\nB. Show interest.\n"
                "C. Explain her value to Company B.\nD. Reveal other offers.")
    assert repeated_option_label(question) is not None  # read as text alone, it is ambiguous
    folder = tmp_path / "data"
    folder.mkdir()
    record = {"能力\nABILITY": "Desire: Desires influence on actions", "序号\nINDEX": 1, "故事": "张敏有两个工作机会。",
              "问题": "张敏如何说服B公司？", "选项A": "A. 介绍成就", "选项B": "B. 表达兴趣", "选项C": "C. 说明价值",
              "选项D": "D. 透露其他报价", "STORY": "Zhang Min has two offers.",
              "QUESTION": "How does Zhang Min convince Company B?", "OPTION-A": "A. Detail her work.",
              "OPTION-B": "B. Show interest.", "OPTION-C": "C. Explain her value to Company B.",
              "OPTION-D": "D. Reveal other offers.", "答案\nANSWER": "D"}
    (folder / "Persuasion Story Task.jsonl").write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    dataset = load_dataset(imported(tmp_path, "tombench", folder, "--language", "en"))
    assert [o.text for o in dataset.storyturns[0].turns[0].options][2] == "Explain her value to Company B."


def test_tomi_world_vocabulary_is_data() -> None:
    words = tomi.world_vocabulary()
    assert "green_treasure_chest" in words and "TV_room" in words and len(words) == len(set(words)) == 3 * 13 + 30
