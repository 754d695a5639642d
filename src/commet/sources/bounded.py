"""Bounded readers for input files: what a hostile or broken file can cost is fixed in advance.

* :func:`read_regular_file` reads a regular file only (a FIFO would block forever, ``/dev/zero``
  never ends), refuses it by its size before reading, and never reads more than the limit even
  when the file grows meanwhile.
* :func:`loads_bounded` parses JSON refusing what Python's parser turns into a crash or a
  silent change: nesting deeper than a limit (RecursionError), integers of more than 100 digits
  (a 5,000-digit number is a ValueError from ``int``, and big ones cost quadratic time to convert;
  a 128-bit identifier has 39 digits; beyond 64 bits, metadata keeps them as JSON text),
  non-finite numbers (``NaN``, ``Infinity``, ``1e999``, which are not JSON), lone UTF-16
  surrogates (``"\\ud800"``: text that can be neither stored nor written as UTF-8), and a key
  named twice in one object (json keeps the last value and drops the other without a word).

Every refusal is a :class:`JSONLimitError`, a :class:`json.JSONDecodeError` with the position of
the offending value, so callers locate it (line and column) as they locate a syntax error.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

from commet.errors import CommetError
from commet.format.dataset import Signature

#: Deepest JSON nesting accepted (StoryTurns nest about 6 levels).
MAX_JSON_DEPTH = 64
#: Most digits an integer may have (a 128-bit identifier has 39).
MAX_INT_DIGITS = 100
#: Longest number literal read (digits, sign, exponent): longer ones are refused before conversion.
MAX_NUMBER_CHARS = 400


class InputFileError(CommetError, ValueError):
    """A file refused before (or while) reading it: not a regular file, too large, unreadable.

    ``str()`` is the reason, said after the file's name ("is not a regular file (a FIFO)").
    """


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def read_regular_file(path: str | Path, *, max_bytes: int, what: str = "file", pipes: bool = False,
                      follow_links: bool = True) -> bytes:
    """The bytes of the regular file at ``path`` (links followed), at most ``max_bytes``.

    Opened without blocking and checked on the open descriptor, so a FIFO, a device or a file
    swapped for one after a check is refused, never read. Raises :class:`InputFileError` (and
    FileNotFoundError when nothing is there). ``pipes`` also reads a pipe (a secret passed as
    ``<(command)``) up to ``max_bytes``; a FIFO nobody writes to reads as empty, never blocks.
    ``follow_links=False`` refuses a symbolic link in the last step (a file a web app serves).
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(path, flags)
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise InputFileError("is a folder, not a file") from None
    except OSError as exc:
        raise InputFileError(f"cannot be read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(descriptor)
        if stat.S_ISDIR(info.st_mode):
            raise InputFileError("is a folder, not a file")
        if stat.S_ISFIFO(info.st_mode) and pipes:
            os.set_blocking(descriptor, True)  # opened without a writer, it now reads what one writes, or EOF
        elif not stat.S_ISREG(info.st_mode):
            raise InputFileError(f"is {_kind(info.st_mode)}, not a regular file (refused, not read)")
        if info.st_size > max_bytes:
            raise InputFileError(f"is {info.st_size:,} bytes, more than the {max_bytes:,} a {what} may have "
                                 "(refused, not read)")
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(descriptor, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:
            raise InputFileError(f"grew past the {max_bytes:,} bytes a {what} may have while it was read")
        return b"".join(chunks)
    except OSError as exc:
        raise InputFileError(f"cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(descriptor)


def inside(root: Path, name: str, *, absolute: bool = False, links_into: tuple[Path, ...] = ()) -> Path:
    """The path ``name`` names below ``root``, refused (:class:`InputFileError`, nothing read) when it would
    leave it: a URL, ``..``, a symbolic link pointing out, or an absolute path (one inside ``root`` only with
    ``absolute``: ``datasets`` writes absolute picture paths into its own cells).

    Every file a dataset names (a picture, a ``state.json`` data file) is found through this, so a dataset
    cannot make CoMMET read, copy or send a file from elsewhere on the machine. ``links_into``: folders a
    link inside ``root`` may also point into (a Hub cache snapshot's files are links to its repository's blobs)."""
    shown = name if len(name) <= 120 else name[:100] + "..."
    if "://" in name or name.startswith(("hf:", "s3:", "gs:", "file:")):
        raise InputFileError(f"{shown!r} is a URL: only files inside the dataset folder are read (refused, not read)")
    if "\x00" in name or not name:
        raise InputFileError(f"{shown!r} is not a file name (refused, not read)")
    given = Path(name)
    if (given.is_absolute() or given.drive) and not absolute:
        raise InputFileError(f"{shown!r} is an absolute path: only files inside the dataset folder are read "
                             "(refused, not read)")
    if ".." in given.parts:
        raise InputFileError(f"{shown!r} climbs out of the dataset folder with '..' (refused, not read)")
    top = root.resolve()
    candidate = given if given.is_absolute() else top / given
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a link loop (Python < 3.13)
        raise InputFileError(f"{shown!r} cannot be looked at: {getattr(exc, 'strerror', None) or exc}") from None
    lexical = Path(os.path.normpath(candidate))
    if not resolved.is_relative_to(top) and not (lexical.is_relative_to(top) and any(
            resolved.is_relative_to(other.resolve()) for other in links_into)):
        if given.is_absolute() and not lexical.is_relative_to(top):
            raise InputFileError(f"{shown!r} is an absolute path outside the dataset folder (refused, not read)")
        raise InputFileError(f"{shown!r} is a symbolic link pointing out of the dataset folder (refused, not read)")
    return resolved


def file_signature(path: str | Path) -> Signature | None:
    """What says a file (or folder) is unchanged, links followed: ``(size, mtime_ns, ctime_ns, inode, device)``;
    None where there is nothing to look at (the validation cache's inputs, a dataset's picture files)."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):  # (ValueError: a NUL in the path)
        return None
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev


def walk_levels(folder: Path, depth: int, visit: Callable[[os.DirEntry[str]], bool]) -> None:
    """Every entry under ``folder``, at most ``depth`` folders down, folder by folder in name order, breadth first:
    ``visit(entry)`` says whether to go into it. A folder that cannot be listed is passed over. What an entry is
    (links followed or not, hidden ones skipped or not) is ``visit``'s to decide: the one walk of CoMMET's readers."""
    level = [folder]
    for _ in range(depth + 1):
        below: list[Path] = []
        for directory in level:
            try:
                entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
            except OSError:
                continue
            below += [Path(entry.path) for entry in entries if visit(entry)]
        level = below


def files_under(folder: Path, suffix: str | tuple[str, ...], depth: int) -> list[Path]:
    """The regular files named ``*suffix`` (any of several, in any case) under ``folder``, at most ``depth``
    folders down, in path order.

    Each folder and file is visited once, by its device and inode (links followed), so symbolic links
    that loop (``ln -s . again``) cost nothing: 45 self-links made a walk that followed them grow as
    45^4 (30 s and 1.5 GB), and find every file once per path to it. Hidden folders are skipped.
    """
    found: list[Path] = []
    seen: set[tuple[int, int]] = set()
    try:
        top = folder.stat()
        seen.add((top.st_dev, top.st_ino))
    except OSError:
        return []

    def visit(entry: os.DirEntry[str]) -> bool:
        try:
            info = entry.stat()  # links followed: a linked folder or file is visited as its target
        except OSError:
            return False
        if (info.st_dev, info.st_ino) in seen:
            return False
        if stat.S_ISREG(info.st_mode) and entry.name.lower().endswith(suffix):
            seen.add((info.st_dev, info.st_ino))
            found.append(Path(entry.path))
        elif stat.S_ISDIR(info.st_mode) and not entry.name.startswith("."):
            seen.add((info.st_dev, info.st_ino))
            return True
        return False

    walk_levels(folder, depth, visit)
    return sorted(found)


class JSONLimitError(CommetError, json.JSONDecodeError):
    """JSON that parses but is refused (too deep, a number out of range, a lone surrogate), at ``pos``.

    For a lone surrogate, ``value`` is the decoded value and ``path`` the keys leading to the string
    that holds it, so that a caller can name the record and field as well.
    """

    def __init__(self, msg: str, doc: str, pos: int, *, value: object = None, path: list[str | int] | None = None,
                 exact: bool = True):
        super().__init__(msg, doc, pos)
        self.value = value
        self.path = path
        #: whether ``pos`` is the offending character itself (else: where the value holding it starts)
        self.exact = exact


class _DuplicateKeys(dict[str, object]):
    """An object that named one key twice (``first`` kept, as json does, would silently drop a value)."""

    key: str


def first_key_twice(pairs: list[tuple[str, object]]) -> str:
    """The first key of a JSON object's ``pairs`` named a second time (one pass: an object may have many keys); the
    caller knows one is (``dict(pairs)`` came out shorter)."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            return key
        seen.add(key)
    raise ValueError("no key is named twice")


class _Refused:
    """A number or constant the parser met and refused: it stands in the decoded value where the number was,
    so that the refusal can name the record and key that hold it."""

    __slots__ = ("literal", "message")

    def __init__(self, literal: str, message: str):
        self.literal = literal
        self.message = message


def _int_or_refused(literal: str) -> int | _Refused:
    digits = len(literal.lstrip("-"))
    if digits > MAX_INT_DIGITS:  # never handed to int(): 5,000 digits is a ValueError there, and slow before it
        return _Refused(literal, f"integer of {digits:,} digits is out of range (at most {MAX_INT_DIGITS} digits)")
    return int(literal)


def _float_or_refused(literal: str) -> float | _Refused:
    if len(literal) > MAX_NUMBER_CHARS:
        return _Refused(literal, f"number of {len(literal):,} characters is too long")
    value = float(literal)
    if not math.isfinite(value):
        return _Refused(literal, f"number {literal[:40]} is out of range (too large for a 64-bit float)")
    return value


def _constant_refused(literal: str) -> _Refused:
    return _Refused(literal, f"{literal} is not JSON (numbers must be finite)")


#: a string (its closing quote optional, so that an unclosed one is consumed once: linear time) or a token
_STRING_OR_NUMBER = re.compile(r'"(?:[^"\\]|\\.)*"?|-?Infinity|NaN|-?[0-9][0-9.eE+-]*')
_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]')
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _literal_position(text: str, start: int, literal: str) -> int:
    """Where the number or constant ``literal`` first stands outside a string, from ``start``."""
    for match in _STRING_OR_NUMBER.finditer(text, start):
        if match.group() == literal:
            return match.start()
    return start


def depth_position(text: str, start: int, limit: int) -> int:
    """Where nesting first goes deeper than ``limit`` (strings skipped), or ``start``."""
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(text, start):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > limit:
                return match.start()
        elif token in "]}":
            depth -= 1
    return start


def _deep_path(value: object, limit: int) -> list[str | int] | None:
    """The key path to the first container (in document order) deeper than ``limit``, or None."""
    stack: list[tuple[object, list[str | int]]] = [(value, [])]
    while stack:
        item, path = stack.pop()
        if isinstance(item, (dict, list)) and len(path) >= limit:
            return path
        if isinstance(item, dict):
            stack.extend((child, [*path, key]) for key, child in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((child, [*path, index]) for index, child in reversed(list(enumerate(item))))
    return None


def _first_path(value: object, found: Callable[[object], bool]) -> tuple[list[str | int], object] | None:
    """The key path to the first item (in document order) for which ``found`` holds, and the item."""
    stack: list[tuple[object, list[str | int]]] = [(value, [])]
    while stack:
        item, path = stack.pop()
        if found(item):
            return path, item
        if isinstance(item, dict):
            for key, child in reversed(item.items()):
                if found(key):
                    return [*path, key], key
                stack.append((child, [*path, key]))
        elif isinstance(item, list):
            stack.extend((child, [*path, index]) for index, child in reversed(list(enumerate(item))))
    return None


def _has_surrogate(item: object) -> bool:
    return isinstance(item, str) and _LONE_SURROGATE.search(item) is not None


def surrogate_message(text: str) -> str:
    """What is wrong with a string holding a lone surrogate, naming the code point."""
    match = _LONE_SURROGATE.search(text)
    point = f"U+{ord(match.group()):04X}" if match else "a surrogate"
    return (f"lone surrogate {point} (a \\u escape without its pair): not valid Unicode text, "
            "which no store or file can hold; fix or remove the escape")


def loads_bounded(text: str, start: int = 0, *, max_depth: int = MAX_JSON_DEPTH,
                  whole: bool = True, surrogates: bool = False) -> tuple[object, int]:
    """One JSON value of ``text`` from ``start``: ``(value, end)``, refused as :class:`JSONLimitError`
    when it nests deeper than ``max_depth``, holds a number out of range or a lone surrogate.

    ``whole``: the value must be all that is left of ``text`` (blanks aside), as :func:`json.loads`;
    otherwise the text after ``end`` is the caller's (``raw_decode``). ``surrogates``: lone surrogates
    are let through, for a caller that makes the text valid itself and counts it (a replay file's
    replies, as a model's: :func:`commet.sources.inputs.valid_text`).
    """
    index = start
    while index < len(text) and text[index] in " \t\n\r":
        index += 1
    if text.startswith("\ufeff", index):
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, index)
    refused: list[_Refused] = []

    def keep(made: object) -> object:
        if isinstance(made, _Refused):
            refused.append(made)
        return made

    duplicated: list[_DuplicateKeys] = []

    def pairs_to_dict(pairs: list[tuple[str, object]]) -> dict[str, object]:
        made = dict(pairs)
        if len(made) == len(pairs):
            return made
        marked = _DuplicateKeys(made)
        marked.key = first_key_twice(pairs)
        duplicated.append(marked)
        return marked

    decoder = json.JSONDecoder(parse_int=lambda s: keep(_int_or_refused(s)),
                               parse_float=lambda s: keep(_float_or_refused(s)),
                               parse_constant=lambda s: keep(_constant_refused(s)),
                               object_pairs_hook=pairs_to_dict)
    try:
        value, end = decoder.raw_decode(text, index)
    except RecursionError:
        raise JSONLimitError(f"JSON nested more than {max_depth} levels deep", text,
                             depth_position(text, index, max_depth)) from None
    if whole:
        rest = end
        while rest < len(text) and text[rest] in " \t\n\r":
            rest += 1
        if rest < len(text):
            raise json.JSONDecodeError("Extra data", text, rest)
    # a container ``max_depth`` levels down needs more opening brackets than that (those in strings counted
    # too: never fewer): most values are looked through only when they might nest that deep
    bracketed = text.count("{", index, end) + text.count("[", index, end) > max_depth
    deep = _deep_path(value, max_depth) if bracketed else None
    if deep is not None:
        raise JSONLimitError(f"JSON nested more than {max_depth} levels deep", text,
                             depth_position(text, index, max_depth), value=value, path=deep)
    if refused:
        found = _first_path(value, lambda item: isinstance(item, _Refused))
        first = found[1] if found is not None and isinstance(found[1], _Refused) else refused[0]
        raise JSONLimitError(first.message, text, _literal_position(text, index, first.literal), value=value,
                             path=found[0] if found else None)
    if duplicated:
        found = _first_path(value, lambda item: isinstance(item, _DuplicateKeys))
        twice = found[1] if found is not None and isinstance(found[1], _DuplicateKeys) else duplicated[0]
        raise JSONLimitError(f"key {twice.key!r} appears twice in one object: one of its values would be dropped",
                             text, index, value=value, path=[*found[0], twice.key] if found else None, exact=False)
    if not surrogates and _SURROGATE_ESCAPE.search(text, index, end):
        found = _first_path(value, _has_surrogate)
        if found is not None:
            escape = next((m for m in _SURROGATE_ESCAPE.finditer(text, index, end)
                           if not _paired(text, m.start(), m.end())), None)
            raise JSONLimitError(surrogate_message(str(found[1])), text, escape.start() if escape else index,
                                 value=value, path=found[0])
    return value, end


def _paired(text: str, start: int, end: int) -> bool:
    """Whether the surrogate escape at ``text[start:end]`` is half of a valid pair."""
    code = int(text[start + 2:end], 16)
    if code < 0xDC00:  # a high surrogate: a low one must follow
        follow = text[end:end + 6]
        return bool(_SURROGATE_ESCAPE.fullmatch(follow)) and int(follow[2:], 16) >= 0xDC00
    before = text[max(0, start - 6):start]
    return bool(_SURROGATE_ESCAPE.fullmatch(before)) and int(before[2:], 16) < 0xDC00


def loads(text: str, *, max_depth: int = MAX_JSON_DEPTH, surrogates: bool = False) -> object:
    """:func:`loads_bounded` of a whole text: the one JSON value it holds."""
    return loads_bounded(text, max_depth=max_depth, surrogates=surrogates)[0]


#: the first bytes of compressed files and archives (tar: ``ustar`` at byte 257)
_MAGIC = ((b"\x1f\x8b", "gzip-compressed"), (b"PK\x03\x04", "zip archive"), (b"BZh", "bzip2-compressed"),
          (b"\xfd7zXZ\x00", "xz-compressed"), (b"\x28\xb5\x2f\xfd", "zstd-compressed"), (b"7z\xbc\xaf\x27\x1c", "7z archive"))


def packed_kind(head: bytes) -> str | None:
    """What compressed file or archive ``head`` (a file's first 512 bytes) starts, None for anything else. Why: such
    a file read as text fails as "not UTF-8", which does not say what to do (decompress or extract it)."""
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    return "tar archive" if head[257:262] == b"ustar" else None
