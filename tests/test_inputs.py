"""commet.format.inputs, the bounded reader every input file goes through, on what the corpus cannot show:
brackets and digits inside strings and comments are not counted, pipes are read when allowed, pairs of
surrogates are characters."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from commet.format.inputs import check_json, check_toml, load_json, read_bytes, read_text, valid_text
from commet.format.problems import FormatError


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


def test_brackets_and_digits_inside_json_strings_are_not_counted() -> None:
    inside = '{"a": "' + "[" * 500 + "9" * 500 + '", "b": ["\\"[[[", 1.' + "5" * 100 + "]}"
    check_json(inside, file="f.json")
    assert load_json(inside, file="f.json")["b"][0] == '"[[['
    with pytest.raises(FormatError, match=r"f.json:1:9 .*nested more than 3"):
        check_json('{"a": [[[[1]]]]}', file="f.json", max_depth=3)


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
        with pytest.raises(FormatError, match="grew past 4,096 bytes"):
            read_bytes(f"/dev/fd/{reader}", what="password file", max_bytes=4096, allow_pipe=True)
    finally:
        feeding.join()
        os.close(reader)
