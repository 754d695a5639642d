"""What comes in from outside, as located refusals: input files read within bounds, JSON and TOML within
limits, text made valid.

Every file a command reads that is not a results store (datasets, replay files, sweep files,
study files, label files, password files) is untrusted: it may be a FIFO (reading it blocks
forever), a link to ``/dev/zero`` (reading it never ends), gigabytes, JSON or TOML nested 100,000
deep (``RecursionError``) or an integer of 5,000 digits (Python refuses to convert it). The limits
are :mod:`commet.sources.bounded`'s; here each refusal becomes one located line
(:class:`~commet.format.problems.FormatError`: file, line, column) before anything is written,
instead of a hang or a traceback.

Text from a model (a reply, an error message) or from JSON's ``\\uXXXX`` escapes may hold lone
surrogates: code points that are not Unicode text and that UTF-8 cannot encode, so SQLite, the
next request's JSON body and the terminal would fail on them. :func:`valid_text` replaces them
with U+FFFD and says how many it replaced.
"""

from __future__ import annotations

import codecs
import json
import re
from pathlib import Path
from typing import Any

from commet.format.problems import FormatError, Problem
from commet.sources.bounded import (
    MAX_INT_DIGITS,
    MAX_JSON_DEPTH,
    InputFileError,
    JSONLimitError,
    loads,
    packed_kind,
    read_regular_file,
)

MIB = 1024 * 1024
#: the size limit of an input file when its reader names none
DEFAULT_MAX_BYTES = 256 * MIB
REPLACEMENT = "\ufffd"


# ----------------------------------------------------------------------------- valid text


def valid_text(text: str) -> tuple[str, int]:
    """``text`` as valid Unicode: a surrogate pair joined into its character, every lone surrogate replaced
    by U+FFFD; and how many code points were replaced (0 for valid text, the usual case, checked in C)."""
    if text.isascii():
        return text, 0
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        return text, 0
    # UTF-16 holds each surrogate as it is: decoding joins the pairs and replaces the lone ones
    repaired = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return repaired, repaired.count(REPLACEMENT) - text.count(REPLACEMENT)


# ----------------------------------------------------------------------------- files


def _refused(file: str, message: str, *, line: int | None = None, column: int | None = None) -> FormatError:
    return FormatError([Problem(file, line, None, None, None, message, column=column)])


def read_bytes(path: str | Path, *, what: str = "file", max_bytes: int = DEFAULT_MAX_BYTES,
               allow_pipe: bool = False) -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (:func:`~commet.sources.bounded.read_regular_file`:
    a FIFO, a device or a folder refused unread, the size checked before and while reading); anything else
    is a located :class:`FormatError`. ``what`` names the file ("replay file"); ``allow_pipe`` also reads a
    pipe (a secret passed as ``<(command)``)."""
    try:
        return read_regular_file(path, max_bytes=max_bytes, what=what, pipes=allow_pipe)
    except FileNotFoundError:
        raise _refused(str(path), f"no such {what}") from None
    except InputFileError as exc:
        raise _refused(str(path), str(exc)) from None


def _position(data: bytes | str, index: int) -> tuple[int, int]:
    """1-based line and column of an index."""
    if isinstance(data, bytes):
        start, line = data.rfind(b"\n", 0, index) + 1, data.count(b"\n", 0, index) + 1
    else:
        start, line = data.rfind("\n", 0, index) + 1, data.count("\n", 0, index) + 1
    return line, index - start + 1


def decode_text(data: bytes, file: str) -> str:
    """UTF-8 text without byte-order mark or NUL, line endings made ``\\n``; a located error otherwise."""
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)) and len(data) % 4 == 0:
        raise _refused(file, "UTF-32 text (byte-order mark); save the file as UTF-8 without BOM", line=1, column=1)
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise _refused(file, "UTF-16 text (byte-order mark); save the file as UTF-8 without BOM", line=1, column=1)
    if data.startswith(codecs.BOM_UTF8):
        raise _refused(file, "the file starts with a UTF-8 byte-order mark; save it as UTF-8 without BOM",
                       line=1, column=1)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        packed = packed_kind(data[:512])
        if packed is not None:
            raise _refused(file, f"a {packed} file, not text: decompress or extract it and give the file inside"
                           ) from None
        line, _ = _position(data, exc.start)
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        column = len(data[line_start:exc.start].decode("utf-8", errors="replace")) + 1
        raise _refused(file, f"not UTF-8 text: byte 0x{data[exc.start]:02x} ({exc.reason}); save the file as UTF-8",
                       line=line, column=column) from None
    if "\x00" in text:
        line, column = _position(text, text.index("\x00"))
        raise _refused(file, "NUL byte in the text (UTF-16 without byte-order mark, or not a text file)",
                       line=line, column=column)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_text(path: str | Path, *, what: str = "file", max_bytes: int = DEFAULT_MAX_BYTES,
              allow_pipe: bool = False) -> str:
    """:func:`read_bytes`, then :func:`decode_text`."""
    return decode_text(read_bytes(path, what=what, max_bytes=max_bytes, allow_pipe=allow_pipe), str(path))


# ----------------------------------------------------------------------------- JSON


def load_json(text: str, *, file: str, surrogates: bool = False) -> Any:
    """JSON ``text`` decoded within :mod:`commet.sources.bounded`'s limits (nesting, digits, finite numbers,
    keys named once, and lone surrogates unless ``surrogates``); each refusal, and invalid JSON, is a
    :class:`FormatError` with its line and column."""
    try:
        return loads(text, surrogates=surrogates)
    except JSONLimitError as exc:
        line, column = _position(text, exc.pos)
        raise _refused(file, exc.msg, line=line, column=column) from None
    except json.JSONDecodeError as exc:
        line, column = _position(text, exc.pos)
        raise _refused(file, f"invalid JSON: {exc.msg}", line=line, column=column) from None


def check_json(text: str, *, file: str) -> None:
    """Refuse JSON past :mod:`commet.sources.bounded`'s limits with a located :class:`FormatError`, and leave
    invalid JSON to the caller's own parser (which says it in its words)."""
    try:
        loads(text)
    except JSONLimitError as exc:
        line, column = _position(text, exc.pos)
        raise _refused(file, exc.msg, line=line, column=column) from None
    except json.JSONDecodeError:
        return


# ----------------------------------------------------------------------------- TOML

#: what a TOML document holds outside its values' text: strings (multi-line first, a string left open runs to
#: the end of its line, or of the file for a multi-line one), comments, brackets, and integers (not the digits of
#: a float's fraction or exponent)
_TOML_TOKEN = re.compile(r'"""[\s\S]*?(?:"""|\Z)|\'\'\'[\s\S]*?(?:\'\'\'|\Z)|"(?:[^"\\\n]|\\.)*"?|\'[^\'\n]*\'?'
                         r"|#[^\n]*|[\[\]{}]|(?<![.\w])[0-9][0-9_]*(?![.\w])")


def check_toml(text: str, *, file: str, max_depth: int = MAX_JSON_DEPTH, max_int_digits: int = MAX_INT_DIGITS) -> None:
    """Refuse, with a located :class:`FormatError`, TOML nested deeper than ``max_depth`` (arrays and inline tables:
    the standard parser recurses into each) or holding a number of more than ``max_int_digits`` digits (it
    would convert it whole); linear in the text, before the parser sees it."""
    depth = 0
    for token in _TOML_TOKEN.finditer(text):
        piece = token.group()
        if piece in ("[", "{"):
            depth += 1
            if depth > max_depth:
                line, column = _position(text, token.start())
                raise _refused(file, f"TOML nested more than {max_depth} levels deep", line=line, column=column)
        elif piece in ("]", "}"):
            depth = max(0, depth - 1)
        elif piece[0].isdigit() and len(piece.replace("_", "")) > max_int_digits:
            line, column = _position(text, token.start())
            raise _refused(file, f"integer of {len(piece.replace('_', '')):,} digits is out of range (at most "
                                 f"{max_int_digits} digits)", line=line, column=column)

