"""Build the engine's malformed-input corpus: ``python tests/data/malformed/engine/make_corpus.py`` (rewrites it).

The files a run reads besides its dataset (replay files, sweep files, study files, label files, the
organiser's password file, results stores), each with one problem, and ``cases.json`` saying what
every command that reads it must answer: exit code 2, one line, where (line, column, story, turn)
and a piece of the message. Files git cannot hold (a FIFO, a link to ``/dev/zero``, a sparse file
of hundreds of MiB, a folder) are made by the test, named by ``special``. tests/test_engine_corpus.py
runs each case through every command it concerns; ``replies/`` holds replay files of odd but
valid replies that every run must take in its stride (exit 0).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
REPLIES = HERE / "replies"
STORY, OTHER = "sample-common_desire-1", "sample-common_desire-2"

manifest: list[dict[str, object]] = []


def case(name: str, kind: str, why: str, *, data: bytes | None = None, suffix: str = "", special: str | None = None,
         line: int | None = 0, column: int | None = None, story: str | None = None, turn: int | None = None,
         says: str) -> None:
    """One case: a file of ``kind`` (or a ``special`` one the test makes) and the one line it must get."""
    entry: dict[str, object] = {"name": name, "kind": kind, "why": why, "says": says, "line": line,
                                "column": column, "story": story, "turn": turn}
    if data is not None:
        path = CASES / f"{name}{suffix}"
        path.write_bytes(data)
        entry["file"] = path.name
    else:
        entry["special"] = special
    manifest.append(entry)


def specials(kind: str, what: str, size: int) -> None:
    """The files that are not regular files, or too large, for one kind of input."""
    case(f"{kind}-fifo", kind, "a FIFO: opening it for reading waits for a writer forever", special="fifo",
         says="is a FIFO (named pipe), not a regular file (refused, not read)")
    case(f"{kind}-dev-zero", kind, "a link to /dev/zero: reading it never ends", special="dev-zero",
         says="is a character device, not a regular file (refused, not read)")
    case(f"{kind}-folder", kind, "a folder where the file should be", special="folder", says="is a folder, not a file")
    case(f"{kind}-too-large", kind, f"a sparse file a byte past the {size - 1:,}-byte limit: refused unread",
         special=f"sparse:{size}", says=f"is {size:,} bytes, more than the {size - 1:,} a {what} may have")


def replay_cases() -> None:
    good = {STORY: ["The kite", "Because Mia likes it"]}
    specials("replay", "replay file", 256 * 1024 * 1024 + 1)
    case("replay-nested-100000", "replay", "a replay file nested 100,000 deep (was a RecursionError)",
         data=b"[" * 100_000 + b"]" * 100_000, suffix=".json", line=1, column=65,
         says="JSON nested more than 64 levels deep")
    case("replay-5000-digits", "replay", "a 5,000-digit integer (Python refuses to convert it)",
         data=b'{"' + STORY.encode() + b'": ["a"],\n "n": ' + b"7" * 5000 + b"}", suffix=".json", line=2, column=7,
         says="integer of 5,000 digits is out of range (at most 100 digits)")
    case("replay-nan", "replay", "NaN, which JSON does not have", data=b'{"x": NaN}', suffix=".json", line=1,
         column=7, says="NaN is not JSON (numbers must be finite)")
    case("replay-huge-float", "replay", "a number past any float", data=b'{"x": [1e999]}', suffix=".json", line=1,
         column=8, says="number 1e999 is out of range (too large for a 64-bit float)")
    case("replay-trailing-comma", "replay", "invalid JSON", data=b'{"a": ["x"],\n}', suffix=".json", line=2,
         column=1, says="invalid JSON: Expecting property name enclosed in double quotes")
    case("replay-empty", "replay", "a 0-byte file", data=b"", suffix=".json", line=1, column=1,
         says="invalid JSON: Expecting value")
    case("replay-latin1", "replay", "a Latin-1 byte", data=b'{"a": ["caf\xe9"]}', suffix=".json", line=1, column=12,
         says="not UTF-8 text: byte 0xe9")
    case("replay-utf16", "replay", "UTF-16 as Notepad writes it", data=json.dumps(good).encode("utf-16"),
         suffix=".json", line=1, column=1, says="UTF-16 text (byte-order mark)")
    case("replay-bom", "replay", "a UTF-8 byte-order mark", data=b"\xef\xbb\xbf" + json.dumps(good).encode(),
         suffix=".json", line=1, column=1, says="UTF-8 byte-order mark")
    case("replay-nul", "replay", "a NUL byte", data=b'{"a": ["x\x00"]}', suffix=".json", line=1, column=10,
         says="NUL byte in the text")
    case("replay-a-list", "replay", "a list instead of a map of story ids", data=b'["The kite"]', suffix=".json",
         line=1, says="a replay file maps story ids to lists of reply texts")
    case("replay-replies-not-a-list", "replay", "a story's replies as one text",
         data=json.dumps({OTHER: ["x"], STORY: "The kite"}, indent=1).encode(), suffix=".json", line=5,
         story=STORY, says="expected a list of reply texts, not a text")
    case("replay-reply-a-number", "replay", "a reply that is a number",
         data=json.dumps({STORY: ["The kite", 7]}).encode(), suffix=".json", line=1, story=STORY, turn=1,
         says="expected a reply text, not a number")
    case("replay-reply-null", "replay", "a reply that is null",
         data=json.dumps({STORY: [None]}).encode(), suffix=".json", line=1, story=STORY, turn=0,
         says="expected a reply text, not null")


def sweep_cases() -> None:
    specials("sweep", "sweep file", 1024 * 1024 + 1)
    case("sweep-nested-50000", "sweep", "a sweep file nested 50,000 deep (was a RecursionError)",
         data=b'models = ["baseline:first-option"]\nx = ' + b"[" * 50_000 + b"]" * 50_000 + b"\n", suffix=".toml",
         line=2, column=69, says="TOML nested more than 64 levels deep")
    case("sweep-inline-tables-deep", "sweep", "inline tables nested 10,000 deep",
         data=b'models = ["baseline:first-option"]\nx = ' + b"{a = " * 10_000 + b"1" + b"}" * 10_000 + b"\n",
         suffix=".toml", line=2, column=325, says="TOML nested more than 64 levels deep")
    case("sweep-5000-digits", "sweep", "a 5,000-digit integer",
         data=b'models = ["baseline:first-option"]\nconcurrency = ' + b"9" * 5000 + b"\n", suffix=".toml", line=2,
         column=15, says="integer of 5,000 digits is out of range (at most 100 digits)")
    case("sweep-latin1", "sweep", "a Latin-1 byte", data=b'models = ["caf\xe9"]\n', suffix=".toml", line=1,
         column=15, says="not UTF-8 text: byte 0xe9")
    case("sweep-nul", "sweep", "a NUL byte", data=b'models = ["a\x00"]\n', suffix=".toml", line=1, column=13,
         says="NUL byte in the text")


def study_cases() -> None:
    specials("study", "study file", 64 * 1024 * 1024 + 1)
    case("study-nested-100000", "study", "a study file nested 100,000 deep", data=b"[" * 100_000 + b"]" * 100_000,
         suffix=".json", line=1, column=65, says="JSON nested more than 64 levels deep")
    case("study-5000-digits", "study", "a 5,000-digit integer",
         data=b'{"title": "x",\n  "seed": ' + b"1" * 5000 + b"}", suffix=".json", line=2, column=11,
         says="integer of 5,000 digits is out of range (at most 100 digits)")
    case("study-latin1", "study", "a Latin-1 byte", data=b'{"title": "caf\xe9"}', suffix=".json", line=1, column=15,
         says="not UTF-8 text: byte 0xe9")


def labels_cases() -> None:
    specials("labels", "labels file", 128 * 1024 * 1024 + 1)


def password_cases() -> None:
    case("password-dev-zero", "password", "a link to /dev/zero as the password file", special="dev-zero",
         says="is a character device, not a regular file (refused, not read)")
    case("password-folder", "password", "a folder as the password file", special="folder",
         says="is a folder, not a file")
    case("password-too-large", "password", "a sparse 1 MiB password file", special=f"sparse:{1024 * 1024}",
         says="is 1,048,576 bytes, more than the 65,536 a password file may have")
    case("password-latin1", "password", "a password that is not UTF-8", data=b"caf\xe9\n", line=1, column=4,
         says="not UTF-8 text: byte 0xe9")


def store_cases() -> None:
    case("store-fifo", "store", "a FIFO as --db: SQLite would block opening it", special="fifo",
         line=None, says="is not a regular file, expected a results file (.sqlite)")
    case("store-dev-zero", "store", "a link to /dev/zero as --db", special="dev-zero", line=None,
         says="is not a regular file, expected a results file (.sqlite)")


def replies() -> None:
    """Replay files of replies a run must take in its stride: exit 0, the run done, nothing lost."""
    answers = {
        "lone-surrogates": ["The \\ud800 kite", "\\udfff"],
        "control-characters": ["The kite\x1b[31m red\x1b[0m", "\x07\x08\r\n\t"],
        "right-to-left-override": ["\u202eetik ehT", "Because \u2067she\u2069 does"],
        "nul-and-c1": ["The\x00kite", "\x85\x9b"],
        "100-kb": ["The kite " * 12_000, "x" * 100_000],
        "emoji-and-scripts": ["\U0001F600 the kite", "\u98a8\u7b5d\u3002"],
        "empty-and-blank": ["", " \n\t "],
    }
    REPLIES.mkdir()
    for name, texts in answers.items():
        body = json.dumps({STORY: texts}, ensure_ascii=False)
        (REPLIES / f"{name}.json").write_text(body.replace("\\\\u", "\\u"), encoding="utf-8")


def main() -> None:
    for folder in (CASES, REPLIES):
        shutil.rmtree(folder, ignore_errors=True)
    CASES.mkdir()
    for make in (replay_cases, sweep_cases, study_cases, labels_cases, password_cases, store_cases):
        make()
    replies()
    (HERE / "cases.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
