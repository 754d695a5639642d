"""The paper's pipe format: every messy case of spec section 2, and a lossless round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commet.format import FormatError, to_pipe
from commet.format.pipe import RawStoryTurn, decide_branches, format_feedback, parse_feedback, parse_storyturn
from commet.sources import load_dataset, read_storyturns

LEO = [
    'Mrs. Green puts a gold sticker on her desk. Leo takes it and hides it in his pocket. She asks Leo, "Do you '
    'know where the sticker went?" Leo says, "No, maybe the wind blew it away." | | Is Leo lying? | | Yes',
    ' | | Is the sticker really gone? | | No',
    ' | | Even though the sticker is safe in Leo\'s pocket, Mia feels sad. Why? | | Because she didn\'t know; she '
    'thought the sticker was lost forever',
]


def parse(turns: list[str], **fields: object):
    return parse_storyturn(RawStoryTurn(turns=turns, **fields), file="f.jsonl", default_id="s1")


def test_whitespace_missing_space_and_empty_fields() -> None:
    st, warnings = parse(["  Meet Kim.   |   |Which one, the pear or the cookie?|  |  Pear ;Cookie  ",
                          "Kim likes the other one.| |So which will Kim pick, the pear or the cookie? | | Cookie; Pear"])
    assert warnings == []
    assert st.turns[0].story == "Meet Kim."
    assert st.turns[0].feedback is None
    assert st.turns[0].question == "Which one, the pear or the cookie?"
    assert st.turns[0].image is None
    assert st.turns[0].answers == ["Pear", "Cookie"]
    assert st.turns[1].answers == ["Cookie", "Pear"]


def test_semicolon_inside_one_explanation_is_not_a_branch() -> None:
    st, warnings = parse(LEO)
    assert st.turns[2].answers == ["Because she didn't know; she thought the sticker was lost forever"]
    assert not any(t.is_branch_point for t in st.turns)  # one branch
    assert warnings == []


def test_branch_semicolons_corroborated_by_answer_keyed_feedback() -> None:
    st, warnings = parse([
        "Two boxes. | | Where do you think the kitten is hiding? | | Garage; Kitchen",
        " | If the previous answer is Garage: Tom thinks it is in the kitchen.; If the previous answer is Kitchen: "
        "Tom thinks it is in the garage. | Where will Tom look? | | Kitchen; Garage",
    ])
    assert [t.answers for t in st.turns] == [["Garage", "Kitchen"], ["Kitchen", "Garage"]]
    fb = st.turns[1].feedback
    assert fb is not None and [(e.answer, e.text) for e in fb.by_answer] == [
        ("Garage", "Tom thinks it is in the kitchen."), ("Kitchen", "Tom thinks it is in the garage.")]
    assert warnings == []


def test_uncorroborated_branch_is_reported_as_ambiguous() -> None:
    _, warnings = parse(["A story. | | What happened? | | Red door; Blue door"])
    assert len(warnings) == 1
    assert "f.jsonl" in str(warnings[0]) and "story=s1 turn=0 field=answer" in str(warnings[0])


def test_right_wrong_feedback_and_round_trip_of_feedback_text() -> None:
    fb = parse_feedback("If right: Yes; she did not see it.; If wrong: Remember, she was outside.")
    assert fb is not None
    assert fb.right == "Yes; she did not see it."
    assert fb.wrong == "Remember, she was outside."
    assert parse_feedback(format_feedback(fb)) == fb


def test_unconditional_feedback_is_kept() -> None:
    fb = parse_feedback("Look at the picture again.")
    assert fb is not None and fb.always == "Look at the picture again."


def test_pipe_inside_quotes_does_not_split() -> None:
    st, _ = parse(['He wrote "left | right" on the card. | | What did he write? | | Left or right'])
    assert st.turns[0].story == 'He wrote "left | right" on the card.'
    assert st.turns[0].answers == ["Left or right"]


def test_malformed_turn_names_file_story_turn() -> None:
    with pytest.raises(FormatError) as info:
        parse(["only | three | fields"], id="bad-1")
    message = str(info.value)
    assert message.startswith("f.jsonl:")
    assert "story=bad-1 turn=0" in message and "expected 5 fields" in message


def test_empty_question_is_located() -> None:
    with pytest.raises(FormatError) as info:
        parse(["Story | | | | Yes", " | | Q? | | No"], id="s9")
    assert "story=s9 turn=0 field=question" in str(info.value)


def test_image_id_with_colons_resolves_to_underscore_file_without_extension(pipe_dataset: Path) -> None:
    dataset = read_storyturns(pipe_dataset)
    image_id = dataset.get("dd-1").turns[0].image
    assert image_id == "snack:table:1"
    path = dataset.image_path(image_id)
    assert path is not None and path.name == "snack_table_1.png"


@pytest.mark.parametrize("layout", ["json-list", "jsonl-lists", "json-records", "jsonl-records"])
def test_every_input_layout(tmp_path: Path, layout: str) -> None:
    from tests.conftest import DIVERSE_DESIRE, FALSE_BELIEF

    records = [DIVERSE_DESIRE, FALSE_BELIEF]
    lists = [r["storyturn"] for r in records]
    path = tmp_path / ("in.json" if layout.startswith("json-") else "in.jsonl")
    if layout == "json-list":
        path.write_text(json.dumps(lists, indent=2))
    elif layout == "jsonl-lists":
        path.write_text("\n".join(json.dumps(x) for x in lists) + "\n")
    elif layout == "json-records":
        path.write_text(json.dumps(records, indent=1))
    else:
        path.write_text("\n".join(json.dumps(x) for x in records) + "\n")
    dataset = read_storyturns(path)
    assert [len(st.turns) for st in dataset] == [2, 3]
    assert dataset.storyturns[0].turns[1].answers == ["Cookie", "Pear"]
    if "records" in layout:
        assert [st.id for st in dataset] == ["dd-1", "fb-1"]
        assert dataset.storyturns[1].task == "false_belief_location"
    else:
        assert dataset.storyturns[1].id == "in-0002"
    # line numbers point at each StoryTurn's first line
    assert dataset.line_list[0] < dataset.line_list[1]


def test_round_trip_pipe_canonical_pipe_loses_nothing(pipe_dataset: Path, tmp_path: Path) -> None:
    original = read_storyturns(pipe_dataset)
    pipe_out = tmp_path / "again.jsonl"
    original.save_pipe(pipe_out)
    again = read_storyturns(pipe_out)
    assert [st.model_dump() for st in again] == [st.model_dump() for st in original]
    canonical = tmp_path / "canonical"
    original.save(canonical)
    reloaded = load_dataset(canonical)
    assert [st.model_dump() for st in reloaded] == [st.model_dump() for st in original]
    assert reloaded.image_bytes("snack:table:1") == original.image_bytes("snack:table:1")
    # field by field, the pipe text equals the input up to whitespace around '|'
    from tests.conftest import DIVERSE_DESIRE

    def fields(turn: str) -> list[str]:
        return [f.strip() for f in turn.split("|")]

    assert [fields(t) for t in to_pipe(reloaded.get("dd-1"))] == [fields(t) for t in DIVERSE_DESIRE["storyturn"]]


def test_leo_round_trip_keeps_the_explanation_whole(tmp_path: Path) -> None:
    st, _ = parse(LEO)
    again, _ = parse(to_pipe(st))
    assert again == st


def test_the_papers_printed_table_13_imports_with_a_warning(tmp_path):
    """Table 13 prints StoryTurns as quoted turns with unescaped quotes inside: read as printed, with a warning."""
    # the three samples exactly as the paper prints them (copied from Table 13 of the paper's text)
    printed = (Path(__file__).parent / "data" / "paper_table13.txt").read_text(encoding="utf-8").splitlines()
    assert len(printed) == 3
    source = tmp_path / "table13.txt"
    source.write_text("\n".join(printed) + "\n", encoding="utf-8")
    data = load_dataset(source)
    assert [len(st.turns) for st in data] == [1, 3, 7]
    deception = data.storyturns[2]
    assert deception.turns[0].story.endswith('Leo tells her, "No, maybe the wind blew it out the window."')
    assert deception.turns[0].answers == ["Yes"]
    # a semicolon inside one explanation is not a branch
    assert deception.turns[5].answers == ["Because she didn’t know; she thought the sticker was lost forever"]
    assert deception.turns[4].question == "How does Mia feel, Sad or Fine?"
    # the one-turn sample is valid JSON (one quoted turn); the other two are not, and are named
    printed_warnings = [w for w in data.warnings if "printed form" in w.message]
    assert [w.line for w in printed_warnings] == [2, 3]
    spatial = data.storyturns[0].turns[0]
    assert spatial.image == "story_5_2025-12-27 11:22:07.738437_1"
    # a line that is neither JSON nor the printed form is still a located error
    broken = tmp_path / "broken.txt"
    broken.write_text('"only | three | fields", "x"\n', encoding="utf-8")
    with pytest.raises(FormatError):
        load_dataset(broken)


def test_long_branch_options_follow_the_structure():
    long_a, long_b = "The duck with the striped hat on it", "The duck with the dotted scarf on it"
    lined_up = decide_branches([f"{long_a}; {long_b}", f"{long_b}; {long_a}"], ["q1", "q2"], [None, None])
    assert lined_up.answers == [[long_a, long_b], [long_b, long_a]] and lined_up.notes == []
    alone = decide_branches([f"{long_a}; {long_b}", "Yes"], ["q1", "q2"], [None, None])
    assert alone.answers == [[f"{long_a}; {long_b}"], ["Yes"]]
    assert len(alone.notes) == 1 and "longer than five words" in alone.notes[0][1]
