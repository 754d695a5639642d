"""`commet import booklet`: the ToM Booklet's digital files (fixtures in their published layout, written here) ->
StoryTurns of the 18 booklet tasks with the booklet's own branches, scripted feedback and pictures."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from commet.cli import app
from commet.format import validate_dataset
from commet.sources import load_dataset
from commet.sources.importers import Protocol, import_benchmark
from commet.sources.importers.booklet import answer_key
from commet.sources.importers.booklet_files import read_data_js, sentences
from commet.taxonomy import TASKS_BY_ID

FOLDER = Path(__file__).parent / "data" / "importers_published" / "booklet"
runner = CliRunner()


def by_id(source: Path = FOLDER, protocol: Protocol = Protocol.conversation):  # noqa: ANN201
    dataset = import_benchmark("booklet", source, protocol).dataset
    return {st.id: st for st in dataset}, dataset


def test_each_item_is_one_storyturn_of_its_task_with_the_papers_category() -> None:
    stories, dataset = by_id()
    assert not dataset.taxonomy.declared  # the booklet's own 18 tasks
    assert "booklet-b1-s1-6" not in stories and "booklet-b2-9" not in stories  # fillers are not scored
    for st in stories.values():
        assert st.category == TASKS_BY_ID[st.task].category and st.source == "booklet"
    assert stories["booklet-b2-18"].task == "second_order_belief_desire"
    assert stories["booklet-b2-18"].category == "Belief_Desire"
    assert stories["booklet-b2-18"].meta["skipped_under_five"] is True
    assert stories["booklet-b1-s2-8"].category == "MBK"
    assert validate_dataset(dataset) == []


def test_the_participants_pick_is_a_branch_and_the_next_line_feedback_keyed_by_it() -> None:
    stories, _ = by_id()
    henry = stories["booklet-b2-1"]
    pick, choose = henry.turns
    assert pick.question == "Which snack do you like better, apples or strawberries?"
    assert pick.answers == ["Apples", "Strawberries"] and pick.story.endswith("or he could eat strawberries.")
    assert choose.question == "So which one will Henry choose to eat?" and choose.answers == ["Apples", "Strawberries"]
    assert [(f.answer, f.text) for f in choose.feedback.by_answer] == [
        ("Apples", "You like apples? Henry also likes apples better."),
        ("Strawberries", "You like strawberries? Henry also likes strawberries better.")]
    kari = stories["booklet-b2-2"].turns[1]  # diverse desire: the other one
    assert kari.answers == ["Granola bars", "Trail mix"]
    assert kari.feedback.by_answer[0].text == "You like trail mix? Yum! But Kari actually likes granola bars better."
    jonathan = stories["booklet-b1-s1-3"]  # the pick inside the script's paragraph, its lead-in with another wording
    assert jonathan.turns[0].question.startswith("Without peeking, where do you think the book is")
    assert jonathan.turns[1].answers == ["Behind the chair", "Under the table"]
    assert jonathan.turns[1].feedback.by_answer[0].text == "Good guess! But Jonathan thinks his book is behind the " \
                                                           "reading chair."


def test_scripted_right_and_wrong_feedback_lands_on_the_next_question() -> None:
    stories, _ = by_id()
    jenni = stories["booklet-b2-15"]
    assert [t.meta["question_id"] for t in jenni.turns] == ["ToMS_Cont_15.1", "ToMS_2AFC_15.2"]  # 15.3 is not scored
    assert jenni.turns[1].feedback.right == "That's right, Jenni's snack is on the desk."
    assert jenni.turns[1].feedback.wrong == "Remember, Mr. Cook moved Jenni's snack to the desk."
    josh = stories["booklet-b2-10"].turns[1]  # one question written in two wordings
    assert josh.question == "Why will she pack that for snack?"
    assert (josh.feedback.right, josh.feedback.wrong) == ("That's right, Mom packs carrot sticks.",
                                                          "Oh look, Mom is actually packing carrot sticks.")
    melanie = stories["booklet-b2-16"]  # "(If wrong: ...)" after 16.2 reaches 16.4 over the unscored 16.3
    ids = [t.meta["question_id"] for t in melanie.turns]
    assert "ToMS_Expl_16.3" not in ids and ids[2] == "ToMS_Expl_16.4"
    assert melanie.turns[2].feedback.wrong == "Actually, Melanie knew that it was Mitch's cookie"
    assert melanie.turns[1].story.startswith("Melanie sees Mitch's cookie in his desk.")
    cookie = stories["booklet-b1-s2-4"].turns[1]
    assert cookie.question == "Can you tell me why?" and cookie.feedback.right is None
    assert cookie.feedback.wrong.startswith("Actually, Joshua takes the cookie from the grass")
    jonathan = stories["booklet-b1-s1-3"]  # "[If he finds it: ...]" after the last question: nothing to ask next
    assert len(jonathan.turns) == 2


def test_what_the_participant_is_not_told_is_left_out() -> None:
    stories, _ = by_id()
    madison = stories["booklet-b1-s1-5"].turns[0].story
    assert "[image]" not in madison and "somebody found the book! And put it under the rug." in madison
    ivan = stories["booklet-b1-s2-3"].turns[0]
    assert "So tell me" not in ivan.story and "Correct if wrong" not in ivan.story
    assert ivan.question.endswith("Where will Joshua look first for Ivan? Behind the bush or in the play house?")
    clue = stories["booklet-b1-s2-7"].turns[0].story
    assert "Ivan goes first and draws a clue." in clue and "How did you know" not in clue and "Not coded" not in clue
    assert "What is this a picture of?" not in clue and "Note:" not in clue
    assert "[drawing looks much more like a tree]" in clue  # a fact the picture shows, written for the experimenter
    emma = stories["booklet-b2-18"]
    assert not any("*" in t.question or "*" in t.story for t in emma.turns)
    intro = stories["booklet-b2-8"].turns[0].story
    assert intro.startswith("This is a story about a classroom. Their teacher, Mr. Cook, just said that it is snack")
    assert "grade" not in intro and "Are you ready" not in intro
    truck = stories["booklet-b1-s2-8"]
    assert truck.turns[-1].question == "Why/why not?"  # the uncoded questions after it are not asked


def test_why_after_a_forced_choice_is_a_turn_of_its_own_and_control_questions_are_judged() -> None:
    stories, _ = by_id()
    ethan = stories["booklet-b1-s1-7"].turns
    assert ethan[3].question == "Is Ethan being mean and naughty for taking Paul's book?" and ethan[3].answers == ["No"]
    assert ethan[4].question == "Why/why not?" and ethan[4].rubric is not None and ethan[4].meta["question_id"].endswith("#why")
    truck = stories["booklet-b1-s2-8"].turns
    assert truck[0].question.endswith("for losing his truck?") and truck[1].question == "Why?/Why not?"
    luke = stories["booklet-b2-8"].turns[3]
    assert luke.question == "What snack does Luke want?" and luke.options == []
    assert luke.candidates == ["Crackers", "Chips"] and luke.answers == ["Crackers"]


def test_tom_booklet_data_js_is_read_as_javascript() -> None:
    items = read_data_js(FOLDER / "tom-booklet-data.js")
    assert [(i.booklet, i.story, i.number) for i in items] == [
        (1, 1, "1"), (1, 1, "2"), (1, 1, "4"), (1, 1, "6"), (2, None, "1"), (2, None, "19")]
    assert items[3].filler and items[5].young_excluded
    stories, _ = by_id(FOLDER / "tom-booklet-data.js")
    sam = stories["booklet-b1-s1-1"]
    assert sam.turns[0].question == "What do you like better- bicycles, or fire trucks?"
    assert sam.turns[1].feedback.by_answer[1].text == "You do? That's great! Sam also likes the book about fire trucks!"
    assert stories["booklet-b2-19"].turns[0].story.endswith("She says, 'Mmm, my favorite.' (say sarcastically!)")


def test_the_independent_protocol_keeps_a_pick_with_the_question_that_depends_on_it() -> None:
    stories, dataset = by_id(protocol=Protocol.independent)
    henry = stories["booklet-b2-1-q1"]
    assert len(henry.turns) == 2 and henry.turns[1].feedback.by_answer  # alone, "which will Henry choose?" is any
    ethan = stories["booklet-b1-s1-7-q2"]
    assert len(ethan.turns) == 1 and ethan.turns[0].feedback is None
    assert "Let's see what he does." in ethan.turns[0].story  # told up to the question
    assert validate_dataset(dataset) == []


def png(colour: str) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 6), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def test_illustrations_beside_the_files_are_the_pictures(tmp_path: Path) -> None:
    folder = tmp_path / "booklet"
    shutil.copytree(FOLDER, folder)
    pictures = folder / "ToM_Booklet_2_illustrations"
    pictures.mkdir()
    for number in (1, 10):
        (pictures / f"MIT_BOOKLET_ColorFINAL_{number}.png").write_bytes(png("red"))
    out = tmp_path / "out"
    result = runner.invoke(app, ["import", "booklet", str(folder), "--out", str(out)])
    assert result.exit_code == 0, result.output
    dataset = load_dataset(out)
    stories = {st.id: st for st in dataset}
    josh = stories["booklet-b2-10"]  # "the one near the glasses": only the picture says which
    assert josh.image_dependent and josh.turns[0].image == "MIT_BOOKLET_ColorFINAL_10.png"
    assert stories["booklet-b2-1"].turns[0].image and not stories["booklet-b2-1"].image_dependent
    assert dataset.image_bytes("MIT_BOOKLET_ColorFINAL_10.png") == png("red")
    assert validate_dataset(dataset) == []
    assert not by_id()[0]["booklet-b2-10"].image_dependent  # without the picture it is not claimed


def test_the_answer_key_covers_the_18_tasks_and_each_answer_is_an_option() -> None:
    key = answer_key()
    assert {item.task.id for item in key.values() if item.booklet == 2} == set(TASKS_BY_ID)
    for qid, item in key.items():
        spec = item.questions[qid]
        assert spec.answer or spec.branches, qid
        if spec.options and spec.answer:
            assert spec.answer in spec.options, qid
        if spec.candidates:
            assert spec.answer in spec.candidates and not spec.options, qid
        if spec.branches:
            assert item.preference is not None and len(spec.options) == len(item.preference["options"]), qid


def test_sentences_keep_titles_and_quotes_together() -> None:
    assert sentences('Mr. Cook says, "No cookies left." Then Megan cries! Why?') == [
        'Mr. Cook says, "No cookies left."', "Then Megan cries!", "Why?"]


@pytest.mark.parametrize(("name", "old", "new", "where", "field"), [
    ("ToM_Booklet_2_Digital.md", "**ToMS_2AFC_19.2:**", "**ToMS_2AFC_19.9:**", ":", "ToMS_2AFC_19.9"),
    ("ToM_Booklet_2_Digital.md", "**ToMS_2AFC_1.1:** You like [that one]? Henry also likes [that one] better, so which "
     "one will Henry choose to eat?", "**ToMS_2AFC_1.1:** Henry will choose.", ":", "ToMS_2AFC_1.1"),
    ("tom-booklet-data.js", 'type: "Common Desires",', 'type: Common Desires,', ":", None),
])
def test_a_bad_file_is_one_located_line_exit_2_nothing_written(tmp_path: Path, name: str, old: str, new: str,
                                                                where: str, field: str | None) -> None:
    source = tmp_path / name
    text = (FOLDER / name).read_text(encoding="utf-8")
    assert old in text
    source.write_text(text.replace(old, new, 1), encoding="utf-8")
    out = tmp_path / "out"
    result = runner.invoke(app, ["import", "booklet", str(source), "--out", str(out)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: {source}{where}") and "Traceback" not in result.output
    if field is not None:
        assert f"field={field}:" in lines[0], lines[0]
    assert not out.exists()


def test_a_folder_without_the_booklet_files_is_refused(tmp_path: Path) -> None:
    result = runner.invoke(app, ["import", "booklet", str(tmp_path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "ToM_Booklet_1_Digital.md" in result.output
