"""Validation: each kind of problem, located, with the CLI's exit codes."""

from __future__ import annotations

import io
import json
import threading
import warnings
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from commet.cli import app
from commet.format import validate
from commet.sources import validate_path
from tests.conftest import write_png
from tests.data.malformed.make_corpus import png, png_declaring

GOOD = {
    "id": "ok-1",
    "task": "false_belief_location",
    "category": "Belief",
    "storyturn": [
        "Ana puts her ball in the basket and goes out. Ben moves it to the box. | | Where will Ana look, the "
        "basket or the box? | pic1 | The basket",
        " | If right: Yes.; If wrong: Remember, Ana was outside. | Why? | | Because she did not see Ben move it",
    ],
}


def write(tmp_path: Path, *records: dict, with_image: bool = True) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    if with_image:
        write_png(tmp_path / "images" / "pic1.png")
    return path


def variant(**changes: object) -> dict:
    record = json.loads(json.dumps(GOOD))
    record.update(changes)
    return record


def only(problems: list, severity: str = "error") -> list[str]:
    return [str(p) for p in problems if p.severity == severity]


def test_good_file_has_no_problem(tmp_path: Path) -> None:
    assert validate_path(write(tmp_path, GOOD)) == []


def test_unrecognised_feedback_condition(tmp_path: Path) -> None:
    record = variant(storyturn=[GOOD["storyturn"][0], " | If rigth: Yes. | Why? | | Because she did not see it"])
    errors = only(validate_path(write(tmp_path, record)))
    assert len(errors) == 1 and "story=ok-1 turn=1 field=feedback" in errors[0] and "unrecognised" in errors[0]


def test_feedback_keyed_by_an_answer_the_previous_turn_does_not_have(tmp_path: Path) -> None:
    record = variant(storyturn=[GOOD["storyturn"][0],
                                " | If the previous answer is The garden: Hmm. | Why? | | Because she did not see it"])
    errors = only(validate_path(write(tmp_path, record)))
    assert any("turn=1 field=feedback" in e and "The garden" in e for e in errors)


def test_branch_counts_that_do_not_line_up(tmp_path: Path) -> None:
    record = variant(task="diverse_desire", category="Desire", storyturn=[
        "Snacks. | | Which do you like, the pear, the plum or the fig? | | Pear; Plum; Fig",
        "She likes another. | | Which will she pick, the pear or the plum? | | Plum; Pear",
    ])
    errors = only(validate_path(write(tmp_path, record)))
    assert any("turn=1 field=answer" in e and "branch counts must line up" in e for e in errors)


def test_feedback_on_first_turn(tmp_path: Path) -> None:
    record = variant(storyturn=["Story. | If right: Good. | Where, the basket or the box? | | The box"])
    errors = only(validate_path(write(tmp_path, record)))
    assert any("turn=0 field=feedback" in e and "first turn" in e for e in errors)


def test_missing_image(tmp_path: Path) -> None:
    errors = only(validate_path(write(tmp_path, GOOD, with_image=False)))
    assert any("turn=0 field=image" in e and "'pic1' not found" in e for e in errors)


def test_pictures_checked_in_threads_say_what_one_at_a_time_says(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A dataset of many pictures, good and bad, is checked in threads (Pillow decodes without the GIL):
    each picture's verdict is the one it gets alone, Pillow's own bomb warning included (refused, not
    printed), and the warnings filter is as it was afterwards."""
    bmp = io.BytesIO()
    Image.new("RGB", (8, 8)).save(bmp, format="BMP")
    kinds = {
        "good": png(640, 480),
        "truncated": png(640, 480)[:-200],
        "declared-bomb": png_declaring(20000, 20000),  # over Pillow's error limit
        "real-bomb": png(10000, 10000, "1"),  # 100 megapixels: over Pillow's warning limit only
        "not-a-picture": b"GIF89a? no, plain text",
        "bmp": bmp.getvalue(),
        "empty": b"",
    }
    records, expected = [], {}
    for copy in range(3):
        for kind, data in kinds.items():
            image_id = f"{kind}-{copy}"
            (tmp_path / "images").mkdir(exist_ok=True)
            (tmp_path / "images" / f"{image_id}.png").write_bytes(data)
            record = json.loads(json.dumps(GOOD))
            record["id"] = f"st-{image_id}"
            record["storyturn"][0] = record["storyturn"][0].replace("| pic1 |", f"| {image_id} |")
            records.append(record)
            expected[image_id] = validate.picture_problem(data)
    assert expected["good-0"] is None and "decompression bomb" in str(expected["real-bomb-0"])
    assert "decompression bomb" in str(expected["declared-bomb-0"])
    threads: list[str] = []
    check_one = validate._image_problem

    def recorded(dataset, image_id, decode=False):  # noqa: ANN001, ANN202 - the real check, noting the thread it ran in
        threads.append(threading.current_thread().name)
        return check_one(dataset, image_id, decode)

    monkeypatch.setattr(validate, "_image_problem", recorded)
    monkeypatch.setattr(validate.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(validate, "SEQUENTIAL_CHECKS_S", 0.0)  # the first picture alone, the rest in threads
    monkeypatch.setattr(validate, "THREADED_CHECK_S", 0.0)  # however quick it was
    filters_before = list(warnings.filters)
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        problems = validate_path(write(tmp_path, *records, with_image=False))
    assert not shown  # no Pillow warning reached the user: the real bomb is refused instead
    assert list(warnings.filters) == filters_before
    assert len(threads) == 3 * len(kinds)  # each id once: a header check costs less than hashing to find a verdict
    assert threads.count("MainThread") == 1 and len(set(threads) - {"MainThread"}) > 1
    assert all(name.startswith("commet-picture-check") for name in set(threads) - {"MainThread"})
    found = {p.story.removeprefix("st-"): p.message for p in problems if p.field == "image"}
    for image_id, why in expected.items():
        if why is None:
            assert image_id not in found
        else:
            assert found[image_id] == f"image {image_id!r} {why}"


def test_unknown_task(tmp_path: Path) -> None:
    errors = only(validate_path(write(tmp_path, variant(task="mind_reading"))))
    assert any("field=task" in e and "unknown task 'mind_reading'" in e for e in errors)


def test_duplicate_ids_name_the_second_line(tmp_path: Path) -> None:
    errors = only(validate_path(write(tmp_path, GOOD, GOOD)))
    assert len(errors) == 1
    assert ":2 story=ok-1" in errors[0] and "duplicate id (first at line 1)" in errors[0]


def test_answer_leaked_in_its_own_story(tmp_path: Path) -> None:
    """A verbatim leak is a warning (data a user imports was not written by them), an error under --strict."""
    record = variant(storyturn=[GOOD["storyturn"][0],
                                "She did not see Ben move it. | | Why will she look there? | | "
                                "Because she did not see Ben move it"])
    path = write(tmp_path, record)
    assert only(validate_path(path)) == []
    assert any("turn=1 field=answer" in w and "leak" in w for w in only(validate_path(path), "warning"))
    errors = only(validate_path(path, strict=True))
    assert any("turn=1 field=answer" in e and "appears verbatim" in e for e in errors)


def test_option_named_in_question_is_not_a_leak(tmp_path: Path) -> None:
    assert validate_path(write(tmp_path, GOOD)) == []  # "basket" is in the story but is an offered option


def test_answers_or_options_a_judge_cannot_tell_apart(tmp_path: Path) -> None:
    branches = variant(task="diverse_desire", category="Desire", storyturn=[
        "Snacks. | | Which do you like, the pear or the plum? | | The pear; Pear!",
        "She likes another. | | Which will she pick, the pear or the plum? | | The plum; The pear",
    ])
    errors = only(validate_path(write(tmp_path, branches)))
    assert errors == [f"{tmp_path / 'data.jsonl'}:1 story=ok-1 turn=0 field=answers: error: answers 0 and 1 are the "
                      "same once case, punctuation and articles are set aside ('The pear', 'Pear!'): a judge cannot "
                      "tell them apart"]
    turn = {"story": "Ana puts her ball in the basket and goes out.", "question": "Where will Ana look?",
            "answers": ["A"], "options": [{"label": "A", "text": "the basket"}, {"label": "b", "text": "the box"}]}
    canonical = {"id": "o-1", "task": "false_belief_location", "category": "Belief", "turns": [turn]}
    assert only(validate_path(write(tmp_path, canonical, with_image=False))) == []
    turn["options"] = [{"label": "A", "text": "the basket"}, {"label": "a", "text": "a Basket."}]
    errors = only(validate_path(write(tmp_path, canonical, with_image=False)))
    assert [e.split(": error: ")[1].split(" (")[0] for e in errors] == ["options 0 and 1 are the same once case, "
                                                                       "punctuation and articles are set aside",
                                                                       "option labels 0 and 1 are the same once "
                                                                       "case, punctuation and articles are set aside"]
    assert all("story=o-1 turn=0 field=options" in e for e in errors)


def test_unreadable_json_is_located(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(GOOD) + "\n{not json\n")
    problems = validate_path(path)
    assert len(problems) == 1 and str(problems[0]).startswith(f"{path}:2:2 ")


def test_canonical_schema_error_is_located(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"id": "c1", "task": "sarcasm", "category": "NLCE",
                                "turns": [{"story": "x", "question": "Why?", "answers": []}]}) + "\n")
    problems = validate_path(path)
    assert len(problems) == 1
    assert "story=c1 turn=0 field=answers" in str(problems[0])


@pytest.mark.parametrize(("records", "code"), [((GOOD,), 0), ((GOOD, GOOD), 2)])
def test_cli_exit_codes(tmp_path: Path, records: tuple, code: int) -> None:
    result = CliRunner().invoke(app, ["validate", str(write(tmp_path, *records))])
    assert result.exit_code == code, result.output


def test_cli_warnings_only_exit_zero(tmp_path: Path) -> None:
    record = variant(storyturn=[GOOD["storyturn"][0], " | | What happened next? | | Red door; Blue door"])
    result = CliRunner().invoke(app, ["validate", str(write(tmp_path, record))])
    assert result.exit_code == 0
    assert "warning:" in result.output


def test_answer_keyed_feedback_missing_a_branch_is_a_warning(tmp_path: Path) -> None:
    record = variant(task="diverse_desire", category="Desire", storyturn=[
        "Snacks. | | Which do you like, the pear or the plum? | | Pear; Plum",
        "She likes the other. | If the previous answer is Pear: She likes the plum. | Which will she pick, the pear "
        "or the plum? | | Plum; Pear",
    ])
    problems = validate_path(write(tmp_path, record))
    assert [str(p) for p in problems if p.severity == "error"] == []
    assert any("turn=1 field=feedback" in str(p) and "'Plum'" in str(p) for p in problems)


def test_every_problem_is_its_own_located_line(tmp_path: Path) -> None:
    path = tmp_path / "many.jsonl"
    path.write_text(json.dumps(GOOD) + "\n{broken\n" + json.dumps(variant(id=7)) + "\n"
                    + json.dumps(variant(id="ok-2", task="mind_reading")) + "\n" + json.dumps(variant(id="ok-2")) + "\n")
    write_png(tmp_path / "images" / "pic1.png")
    read_errors = [str(p) for p in validate_path(path)]
    assert read_errors == [f"{path}:2:2 story=- turn=- field=-: error: invalid JSON: Expecting property name "
                           "enclosed in double quotes",
                           f"{path}:3 story=- turn=- field=id: error: Input should be a valid string, got a number"]
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(variant(id="ok-2", task="mind_reading")) + "\n"
                    + json.dumps(variant(id="ok-2")) + "\n")
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.stdout.splitlines() == [
        f"{path}:2 story=ok-2 turn=- field=task: error: unknown task 'mind_reading'",
        f"{path}:3 story=ok-2 turn=- field=id: error: duplicate id (first at line 2)",
    ]
    evaluated = CliRunner().invoke(app, ["eval", "--model", "baseline:first-option", "--dataset", str(path),
                                         "--db", str(tmp_path / "s.sqlite"), "--force"])
    assert evaluated.exit_code == 2 and evaluated.stderr.splitlines() == result.stdout.splitlines()
    assert not (tmp_path / "s.sqlite").exists()


def test_problems_never_print_control_characters() -> None:
    from commet.format.problems import Problem, printable

    problem = Problem("f\x1b.jsonl", 3, "a\nb\u202ec\x00", 1, "fi\teld", "bad \r\n\x07", column=4)
    assert str(problem) == "f\\x1b.jsonl:3:4 story=a\\nb\\u202ec\\x00 turn=1 field=fi\\teld: error: bad \\r\\n\\x07"
    assert printable("Zoë 日本 ok") == "Zoë 日本 ok"


@pytest.mark.parametrize(("where", "char"), [("story", "\x00"), ("question", "\x1b"), ("options.1.text", "\x9b"),
                                             ("feedback.wrong", "\x7f"), ("rubric.key_inference", "\x01")])
def test_a_control_character_in_any_shown_text_is_an_error_naming_its_field(tmp_path: Path, where: str,
                                                                           char: str) -> None:
    """A NUL, an escape, a C1 control or DEL is no text anyone wrote: a damaged or mis-decoded file, refused with
    the field and the character's code (tab and line and paragraph breaks are text: the first turn holds them)."""
    turn: dict = {"story": "Ana puts her ball in the basket.\tThen she goes out.\r\nBen moves it.\x0c\x85\u2028Ana is back.",
                  "question": "Where will Ana look?", "options": [{"label": "A", "text": "the basket"},
                                                                 {"label": "B", "text": "the box"}],
                  "answers": ["the basket"]}
    second: dict = {"story": "She comes back.", "feedback": {"right": "Yes.", "wrong": "No."}, "question": "Why?",
                    "answers": ["She did not see it moved"], "rubric": {"key_inference": "She did not see it"}}
    record = {"id": "c1", "task": "false_belief_location", "category": "Belief", "turns": [turn, second]}
    assert only(validate_path(write(tmp_path, record))) == []
    target, path = (second, where) if where.startswith(("feedback", "rubric")) else (turn, where)
    *parents, last = path.split(".")
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    target[last] = target[last][:3] + char + target[last][3:]
    errors = only(validate_path(write(tmp_path, record)))
    assert len(errors) == 1 and f"field={where}:" in errors[0], errors
    assert f"U+{ord(char):04X} at character 4" in errors[0]


def test_the_plain_texts_the_control_check_searches_are_every_shown_text_in_order() -> None:
    """The fast list (validate._plain_texts) and the named walk (validate._shown_texts) list the same texts: a field
    added to one only would go unchecked, or be reported without being searched."""
    import commet.format.validate as checks
    from commet.format.model import Turn

    turn = Turn.model_validate({
        "story": "s", "question": "q", "options": [{"label": "A", "text": "o1"}, {"text": "o2"}],
        "answers": ["o1"], "candidates": ["c1", "c2"],
        "feedback": {"always": "fa", "right": "fr", "wrong": "fw", "by_answer": [{"answer": "o1", "text": "fb"}]},
        "rubric": {"key_inference": "k", "false_inferences": ["f1", "f2"]}})
    named = [text for _, text in checks._shown_texts(turn)]
    assert checks._plain_texts(turn) == named
    assert len(named) == 14  # every kind of text, each once
