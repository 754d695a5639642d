"""What comes in from outside: input files read within bounds, JSON decoded within limits, text made valid.

Every file a command reads that is not a results store (datasets, replay files, sweep files,
study files, label files, password files) is untrusted: it may be a FIFO (reading it blocks
forever), a link to ``/dev/zero`` (reading it never ends), gigabytes, JSON nested 100,000 deep
(``RecursionError``) or an integer of 5,000 digits (Python refuses to convert it). Each is refused
here with one located line (:class:`~commet.format.problems.FormatError`: file, line, column,
field) before anything is read or written, instead of hanging or ending in a traceback.

Text from a model (a reply, an error message) or from JSON's ``\\uXXXX`` escapes may hold lone
surrogates: code points that are not Unicode text and that UTF-8 cannot encode, so SQLite, the
next request's JSON body and the terminal would fail on them. :func:`valid_text` replaces them
with U+FFFD and says how many it replaced.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from commet.format.problems import FormatError, Problem

MIB = 1024 * 1024
#: the size limit of an input file when its reader names none
DEFAULT_MAX_BYTES = 256 * MIB
#: JSON nested deeper than this is refused (every file CoMMET reads nests fewer than 10 levels)
MAX_JSON_DEPTH = 64
#: an integer in an input file with more digits than this is refused (far beyond any count or id)
MAX_INT_DIGITS = 30
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


def _refused(file: str, message: str, *, line: int | None = None, column: int | None = None,
             field: str | None = None) -> FormatError:
    return FormatError([Problem(file, line, None, None, field, message, column=column)])


def _size(count: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", MIB), ("KiB", 1 << 10)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} bytes"


def read_bytes(path: str | Path, *, what: str = "file", max_bytes: int = DEFAULT_MAX_BYTES,
               allow_pipe: bool = False) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; anything else is a located :class:`FormatError`.

    The file is opened without blocking (a FIFO would wait for a writer forever) and checked with
    ``fstat`` on the opened descriptor (so a link is judged by what it points to, and nothing can
    be swapped in between): a folder, a FIFO, a device (``/dev/zero``) or a socket is refused
    unread. The size is checked before reading and again while reading (a file still growing).
    ``what`` names the file in messages ("replay file"). ``allow_pipe`` also reads a pipe (a secret
    passed as ``<(command)``), up to ``max_bytes``: a FIFO nobody writes to reads as empty.
    """
    file = str(path)
    try:
        descriptor = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise _refused(file, f"no such {what}") from None
    except IsADirectoryError:
        raise _refused(file, f"is a folder, not a {what}") from None
    except OSError as exc:
        raise _refused(file, f"cannot read the {what}: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(descriptor)
        if stat.S_ISDIR(mode.st_mode):
            raise _refused(file, f"is a folder, not a {what}")
        if not stat.S_ISREG(mode.st_mode) and not (allow_pipe and stat.S_ISFIFO(mode.st_mode)):
            kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode.st_mode) else
                    "a device" if stat.S_ISCHR(mode.st_mode) or stat.S_ISBLK(mode.st_mode) else
                    "a socket" if stat.S_ISSOCK(mode.st_mode) else "not a regular file")
            raise _refused(file, f"is {kind}; a {what} must be a regular file")
        if stat.S_ISREG(mode.st_mode) and mode.st_size > max_bytes:
            raise _refused(file, f"is {mode.st_size:,} bytes; a {what} may be at most {max_bytes:,} bytes "
                                 f"({_size(max_bytes)})")
        os.set_blocking(descriptor, True)
        chunks, total = [], 0
        while chunk := os.read(descriptor, min(max_bytes + 1 - total, 16 * MIB) or 1):
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise _refused(file, f"grew past {max_bytes:,} bytes while it was read; a {what} may be at most "
                                     f"{max_bytes:,} bytes ({_size(max_bytes)})")
        return b"".join(chunks)
    except OSError as exc:
        raise _refused(file, f"cannot read the {what}: {exc.strerror or exc}") from None
    finally:
        os.close(descriptor)


def _position(data: bytes | str, index: int) -> tuple[int, int]:
    """1-based line and column of an index."""
    newline = b"\n" if isinstance(data, bytes) else "\n"
    start = data.rfind(newline, 0, index) + 1  # type: ignore[arg-type]
    return data.count(newline, 0, index) + 1, index - start + 1  # type: ignore[arg-type]


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


#: a JSON string (to its closing quote, or to the end of its line when unclosed), a bracket, or a number
_JSON_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"?|[\[\]{}]|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|-?Infinity|NaN')


class _Refusal(ValueError):
    """Raised inside the JSON decoder by a hook; located afterwards by the number it refused."""

    def __init__(self, message: str, number: str):
        super().__init__(message)
        self.message = message
        self.number = number


def check_json(text: str, *, file: str, max_depth: int = MAX_JSON_DEPTH, max_int_digits: int = MAX_INT_DIGITS) -> None:
    """Refuse, with a located :class:`FormatError`, JSON nested deeper than ``max_depth`` (the decoder recurses
    into each level: 100,000 is a RecursionError) or holding an integer of more than ``max_int_digits`` digits
    (Python refuses to convert 4,300); one linear pass over the text, strings skipped, before any decoder sees
    it. Invalid JSON is left to the decoder."""
    depth = 0
    for token in _JSON_TOKEN.finditer(text):
        piece = token.group()
        if piece in ("[", "{"):
            depth += 1
            if depth > max_depth:
                line, column = _position(text, token.start())
                raise _refused(file, f"JSON nested more than {max_depth} levels deep", line=line, column=column)
        elif piece in ("]", "}"):
            depth -= 1
        elif piece.lstrip("-").isdigit() and len(piece.lstrip("-")) > max_int_digits:
            line, column = _position(text, token.start())
            raise _refused(file, f"an integer of {len(piece.lstrip('-'))} digits; at most {max_int_digits} are read",
                           line=line, column=column)


def _number_at(text: str, number: str) -> int:
    """Where a number stands in JSON ``text`` (strings skipped), or 0."""
    return next((token.start() for token in _JSON_TOKEN.finditer(text) if token.group() == number), 0)


def load_json(text: str, *, file: str, max_depth: int = MAX_JSON_DEPTH, max_int_digits: int = MAX_INT_DIGITS) -> Any:
    """JSON ``text`` decoded within limits; every refusal is a :class:`FormatError` with its line and column.

    Refused: what :func:`check_json` refuses (checked first, so nothing recurses deeply), invalid JSON,
    ``NaN`` and ``Infinity`` (not JSON), numbers too large for a float.
    """
    check_json(text, file=file, max_depth=max_depth, max_int_digits=max_int_digits)

    def number(digits: str) -> float:
        value = float(digits)
        if value in (float("inf"), float("-inf")):
            raise _Refusal(f"a number too large to read ({digits if len(digits) <= 20 else digits[:20] + '…'})",
                           digits)
        return value

    def constant(name: str) -> float:
        raise _Refusal(f"{name} is not a JSON number", name)

    try:
        return json.loads(text, parse_float=number, parse_constant=constant)
    except _Refusal as exc:
        line, column = _position(text, _number_at(text, exc.number))
        raise _refused(file, exc.message, line=line, column=column) from None
    except json.JSONDecodeError as exc:
        line, column = _position(text, exc.pos)
        raise _refused(file, f"invalid JSON: {exc.msg}", line=line, column=column) from None
    except RecursionError:  # pragma: no cover - the depth was checked first
        raise _refused(file, f"JSON nested more than {max_depth} levels deep") from None


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
            raise _refused(file, f"a number of {len(piece.replace('_', ''))} digits; at most {max_int_digits} are "
                                 "read", line=line, column=column)

