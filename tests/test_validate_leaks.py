"""The leak check of `commet validate`: one Unicode normalisation (the judge's), warnings by default, errors
under --strict, and third-party conversions (ToMi, the booklet) that validate with warnings, never refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.cli import app
from commet.format.validate import LEAK_WARNINGS_LISTED
from commet.sources import validate_path
from commet.text import normalize, words


def _storyturn(sid: str, story: str, question: str, answer: str, *, task: str = "false_belief_location",
               category: str = "Belief") -> dict:
    return {"id": sid, "task": task, "category": category, "mental_states": [], "image_dependent": False,
            "source": "test", "meta": {},
            "turns": [{"story": story, "feedback": None, "question": question, "image": None, "answers": [answer],
                       "options": [], "rubric": None, "meta": {}}]}


def _write(tmp_path: Path, records: list[dict]) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def _leaks(problems: list) -> list:
    return [p for p in problems if p.field == "answer" and "leak" in p.message]


@pytest.mark.parametrize(("story", "answer"), [
    ("The pear is in the red wicker basket. Omar leaves.", "red_wicker_basket"),
    ("The pear is in the red_wicker_basket. Omar leaves.", "red wicker basket"),
    ("The pear is in the red-wicker basket. Omar leaves.", "Red wicker basket"),
    ("苹果在红色的篮子里。小周离开了厨房。", "红色的篮子"),
    ("りんごは赤いかごの中にあります。", "赤いかご"),
    ("La pera está en la cesta de mimbre roja.", "la cesta de mimbre roja"),
    ("नाशपाती लाल टोकरी में है।", "लाल टोकरी"),
])
def test_a_leak_is_found_in_any_script_and_with_joined_words(tmp_path: Path, story: str, answer: str) -> None:
    """Underscores and hyphens join words (`red_wicker_basket` is `red wicker basket`); Chinese and Japanese are
    compared character by character; marks of Devanagari stay inside their words."""
    record = _storyturn("leak-1", story, "Where is the pear?", answer)
    problems = validate_path(_write(tmp_path, [record]))
    assert [p.severity for p in _leaks(problems)] == ["warning"], problems
    assert normalize(answer, drop_articles=False) in normalize(story, drop_articles=False)


def test_same_words_same_severity_whatever_joins_them(tmp_path: Path) -> None:
    """`red_wicker_basket` and `red wicker basket` are three words either way: the same finding under --strict."""
    story = "The pear is in the red_wicker_basket and the red_box."
    found = []
    for answer in ("red_wicker_basket", "red wicker basket", "red-wicker-basket"):
        problems = validate_path(_write(tmp_path, [_storyturn("j", story, "Where is the pear?", answer)]), strict=True)
        found.append([(p.severity, p.message.split("appears")[1]) for p in _leaks(problems)])
    assert found[0] == found[1] == found[2] and found[0][0][0] == "error"
    assert words("red_wicker_basket") == words("red wicker basket") == ["red", "wicker", "basket"]


def test_no_leak_where_the_answer_is_not_in_the_story(tmp_path: Path) -> None:
    records = [_storyturn("a", "小林把苹果放进了盒子。", "苹果在哪里？", "篮子"),
               _storyturn("b", "The pear is in the red_box.", "Where is the pear?", "green_basket"),
               # an option the question names is no leak
               _storyturn("c", "Ana has a red box and a blue box.", "Which box, the red box or the blue box?",
                          "the red box")]
    assert _leaks(validate_path(_write(tmp_path, records))) == []


def _tomi_like(count: int) -> list[dict]:
    """An independent conversion of ToMi as a user would write it: the answer is a container named in the story."""
    records = []
    for i in range(count):
        story = ("Mila entered the hallway. Omar entered the hallway. The pear is in the red_box. Omar exited the "
                 "hallway. Mila moved the pear to the green_basket.")
        records.append(_storyturn(f"tomi-{i}", story, "Where will Omar look for the pear?", "red_box"))
    return records


def _booklet_like() -> list[dict]:
    """The booklet's false-belief item converted by hand: the answer and its reason are told in the story."""
    return [
        _storyturn("booklet-1", "Sally puts her marble in the basket and goes out. Anne moves the marble to the box. "
                   "Sally did not see Anne move it.", "Where will Sally look for her marble?", "In the basket"),
        _storyturn("booklet-2", "Sally puts her marble in the basket and goes out. Anne moves the marble to the box. "
                   "Sally did not see Anne move it.", "Why will Sally look there?",
                   "Because Sally did not see Anne move it", task="false_belief_location"),
    ]


def test_third_party_conversions_validate_with_counted_warnings(tmp_path: Path) -> None:
    """Our own conversions of ToMi and of the booklet validate (exit 0 with warnings); the leaks beyond the first
    few are counted in one warning; --strict refuses the verbatim ones (exit 2)."""
    runner = CliRunner()
    for name, records in (("tomi", _tomi_like(25)), ("booklet", _booklet_like())):
        folder = tmp_path / name
        folder.mkdir()
        path = _write(folder, records)
        result = runner.invoke(app, ["validate", str(path)])
        assert result.exit_code == 0, result.output
        assert "0 errors" in result.output and "warning:" in result.output
        problems = validate_path(path)
        leaks = _leaks(problems)
        assert leaks and all(p.severity == "warning" for p in leaks)
        if name == "tomi":
            assert len(leaks) == LEAK_WARNINGS_LISTED + 1
            assert "25 answers in 25 StoryTurns" in leaks[-1].message and "15 of them not listed" in leaks[-1].message
        strict = runner.invoke(app, ["validate", "--strict", str(path)])
        verbatim = name == "booklet"  # "Sally did not see Anne move it" (6 words) is verbatim; "red_box" is short
        assert strict.exit_code == (2 if verbatim else 0), strict.output


def test_leak_warnings_never_gate_a_run_other_warnings_need_force(tmp_path: Path) -> None:
    """Third-party data is never refused for a leak the user did not write: eval runs a dataset whose only
    warnings are possible leaks without --force, and says so; any other warning (a category that does not
    match its task) still needs --force, and --force never lets an error through."""
    path = _write(tmp_path, _booklet_like())
    runner = CliRunner()
    args = ["eval", "--dataset", str(path), "--model", "baseline:first-option", "--judge", "rules", "--quiet",
            "--db", str(tmp_path / "r.sqlite")]
    leaks_only = runner.invoke(app, args)
    assert leaks_only.exit_code == 0, leaks_only.output
    assert "(leak)" in leaks_only.output and "running with 2 possible answer leak warning(s)" in leaks_only.output
    mismatched = _booklet_like()
    mismatched[0]["category"] = "Emotion"  # not a category of false_belief_location: a warning that gates
    (tmp_path / "mismatched").mkdir()
    gated = _write(tmp_path / "mismatched", mismatched)
    args = ["eval", "--dataset", str(gated), "--model", "baseline:first-option", "--quiet",
            "--db", str(tmp_path / "g.sqlite")]
    refused = runner.invoke(app, args)
    assert refused.exit_code == 2 and "warning" in refused.output and "--force" in refused.output
    assert not (tmp_path / "g.sqlite").exists()
    forced = runner.invoke(app, [*args, "--force"])
    assert forced.exit_code == 0, forced.output
    assert "running despite 3 warning(s) (--force)" in forced.output
    broken = _booklet_like()
    broken[0]["turns"][0]["question"] = " "  # an error: an empty question
    (tmp_path / "broken").mkdir()
    erroneous = _write(tmp_path / "broken", broken)
    still_refused = runner.invoke(app, ["eval", "--dataset", str(erroneous), "--model", "baseline:first-option",
                                        "--quiet", "--db", str(tmp_path / "b.sqlite"), "--force"])
    assert still_refused.exit_code == 2 and "empty question" in still_refused.output
    assert not (tmp_path / "b.sqlite").exists()
