"""commet.sources.inputs, the bounded reader every input file goes through, on what the corpus cannot show:
brackets and digits inside strings and comments are not counted, pipes are read when allowed, pairs of
surrogates are characters."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from commet.format.problems import FormatError
from commet.sources.inputs import check_json, check_toml, load_json, read_bytes, read_text, valid_text


@pytest.mark.parametrize("text, expected", [
    ("plain ascii", ("plain ascii", 0)),
    ("caf\u00e9 \u98a8", ("caf\u00e9 \u98a8", 0)),
    ("a\ud800b", ("a\ufffdb", 1)),
    ("\udc80\udc81", ("\ufffd\ufffd", 2)),
    ("\ud83d\ude00", ("\U0001F600", 0)),  # a pair held as two code points is one character
    ("\ufffd\ud800", ("\ufffd\ufffd", 1)),  # a replacement character already there is not counted
    ("x\ude00\ud83d", ("x\ufffd\ufffd", 2)),  # low before high is no pair
])
def test_valid_text_replaces_lone_surrogates_and_counts_them(text: str, expected: tuple[str, int]) -> None:
    assert valid_text(text) == expected


def test_json_refusals_are_located_and_invalid_json_is_left_to_the_callers_parser() -> None:
    inside = '{"a": "' + "[" * 500 + "9" * 500 + '", "b": ["\\"[[[", 1.' + "5" * 100 + "]}"
    check_json(inside, file="f.json")
    assert load_json(inside, file="f.json")["b"][0] == '"[[['
    with pytest.raises(FormatError, match=r"f.json:2:65 .*nested more than 64"):
        check_json('{"a":\n ' + "[" * 100 + "]" * 100 + "}", file="f.json")
    with pytest.raises(FormatError, match=r"f.json:1:1 .*key 'a' appears twice"):
        load_json('{"b": {"a": 1, "a": 2}}', file="f.json")
    check_json('{"a": ', file="f.json")  # invalid: the caller's parser says so in its words
    with pytest.raises(FormatError, match=r"f.json:1:7 .*invalid JSON: Expecting value"):
        load_json('{"a": ', file="f.json")
    assert load_json('["\\ud800"]', file="f.json", surrogates=True) == ["\ud800"]  # made valid by its reader
    with pytest.raises(FormatError, match=r"lone surrogate U\+D800"):
        load_json('["\\ud800"]', file="f.json")


def test_brackets_and_digits_in_toml_strings_and_comments_are_not_counted() -> None:
    text = ('models = ["[[[[", \'[[[[\', """\n[[[[\n' + "9" * 99 + '"""]  # [[[[ ' + "9" * 99 + "\n"
            "ratio = 3." + "1" * 60 + "\nwhen = 1979-05-27\n[table]\n[[array]]\nk = {a = [1, [2]]}\n")
    check_toml(text, file="s.toml", max_depth=3)
    with pytest.raises(FormatError, match=r"s.toml:2:8 .*TOML nested more than 3"):
        check_toml("a = 1\nb = [[[[1]]]]\n", file="s.toml", max_depth=3)


def test_a_pipe_is_read_when_allowed_and_a_fifo_without_writer_reads_empty(tmp_path: Path) -> None:
    reader, writer = os.pipe()
    feeding = threading.Thread(target=lambda: (os.write(writer, b"secret\n"), os.close(writer)))
    feeding.start()
    try:
        assert read_text(f"/dev/fd/{reader}", what="password file", allow_pipe=True) == "secret\n"
    finally:
        feeding.join()
        os.close(reader)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert read_bytes(fifo, what="password file", allow_pipe=True) == b""  # no writer: empty, never blocks
    with pytest.raises(FormatError, match="is a FIFO"):
        read_bytes(fifo, what="replay file")


def test_a_pipe_longer_than_the_limit_is_refused() -> None:
    reader, writer = os.pipe()
    feeding = threading.Thread(target=lambda: (os.write(writer, b"x" * 5000), os.close(writer)))
    feeding.start()
    try:
        with pytest.raises(FormatError, match="grew past the 4,096 bytes a password file may have"):
            read_bytes(f"/dev/fd/{reader}", what="password file", max_bytes=4096, allow_pipe=True)
    finally:
        feeding.join()
        os.close(reader)
