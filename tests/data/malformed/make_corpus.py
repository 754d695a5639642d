"""Build the malformed-input corpus: ``python tests/data/malformed/make_corpus.py`` (rewrites it in place).

Every case is a dataset (a file or a folder) with exactly one problem, and ``cases.json`` says
where ``commet validate`` must locate it: file, line, column, story, turn, field and a piece of
the message. ``controls/`` holds valid datasets in the shapes that are easy to break (CRLF line
endings, non-ASCII text, pretty-printed JSON, a symbolic link inside the folder): they must pass.
tests/test_malformed_corpus.py runs every case through ``commet validate`` and ``commet eval``.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import struct
import zlib
from pathlib import Path

from PIL import Image

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
CONTROLS = HERE / "controls"
OUTSIDE = HERE / "outside"

STORY = "Ana puts her ball in the basket and goes out. Ben moves it to the box."
TURN0 = f"{STORY} | | Where will Ana look, the basket or the box? | | The basket"
TURN1 = " | If right: Yes.; If wrong: Remember, Ana was outside. | Why? | | Because she did not see Ben move it"
TURN0_PIC = f"{STORY} | | Where will Ana look, the basket or the box? | pic1 | The basket"
PIPE = {"id": "ok-1", "task": "false_belief_location", "category": "Belief", "storyturn": [TURN0, TURN1]}
CANONICAL = {
    "id": "c-1", "task": "false_belief_location", "category": "Belief", "mental_states": ["belief"],
    "image_dependent": False, "source": "corpus",
    "turns": [
        {"story": STORY, "question": "Where will Ana look, the basket or the box?", "answers": ["The basket"]},
        {"feedback": {"right": "Yes.", "wrong": "Remember, Ana was outside."}, "question": "Why?",
         "answers": ["Because she did not see Ben move it"]},
    ],
}
DESIRE = {"id": "dd-1", "task": "diverse_desire", "category": "Desire", "storyturn": [
    "Snack time. | | Which do you like, the pear or the plum? | | Pear; Plum",
    "Kim likes the other one. | If the previous answer is Pear: So Kim likes the plum.; If the previous answer is "
    "Plum: So Kim likes the pear. | Which will Kim pick, the pear or the plum? | | Plum; Pear",
]}

manifest: list[dict[str, object]] = []


def expect(name: str, path: str, why: str, *, file: str, line: int | None = None, column: int | None = None,
           story: str | None = None, turn: int | None = None, field: str | None = None, says: str = "") -> None:
    """Record a case: ``path`` relative to cases/, and the one located error it must give."""
    manifest.append({"name": name, "path": path, "why": why, "expect": {
        "file": file, "line": line, "column": column, "story": story, "turn": turn, "field": field, "says": says}})


def case_dir(name: str) -> Path:
    folder = CASES / name
    folder.mkdir(parents=True)
    return folder


def write_bytes(name: str, file: str, data: bytes) -> Path:
    path = case_dir(name) / file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def jsonl(*records: object, newline: str = "\n") -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + newline for r in records).encode()


def png(width: int = 32, height: int = 24, mode: str = "RGB") -> bytes:
    out = io.BytesIO()
    Image.new(mode, (width, height), 200 if mode != "RGB" else (200, 80, 60)).save(out, format="PNG")
    return out.getvalue()


def png_declaring(width: int, height: int) -> bytes:
    """A tiny PNG whose header declares ``width`` x ``height`` (the data is one empty row)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00" * (width + 1)))
            + chunk(b"IEND", b""))


def picture_case(name: str, why: str, picture: bytes | None, says: str, *, image_file: str = "pic1.png",
                 image_id: str = "pic1") -> Path:
    """A folder dataset whose one picture is ``picture`` (None: no file written)."""
    folder = case_dir(name)
    record = {**PIPE, "storyturn": [TURN0_PIC.replace("| pic1 |", f"| {image_id} |"), TURN1]}
    (folder / "storyturns.jsonl").write_bytes(jsonl(record))
    (folder / "images").mkdir()
    if picture is not None:
        (folder / "images" / image_file).write_bytes(picture)
    expect(name, name, why, file="storyturns.jsonl", line=1, story="ok-1", turn=0, field="image", says=says)
    return folder


def file_cases() -> None:
    """Encodings, emptiness and JSON syntax."""
    write_bytes("empty-0-byte", "data.jsonl", b"")
    expect("empty-0-byte", "empty-0-byte/data.jsonl", "a 0-byte dataset", file="data.jsonl", says="empty dataset")
    write_bytes("empty-whitespace", "data.jsonl", b"  \n\n\t \r\n")
    expect("empty-whitespace", "empty-whitespace/data.jsonl", "only blanks", file="data.jsonl", says="empty dataset")
    write_bytes("empty-json-list", "data.json", b"[ ]\n")
    expect("empty-json-list", "empty-json-list/data.json", "an empty JSON list", file="data.json",
           says="empty dataset")
    folder = case_dir("empty-folder-jsonl")
    (folder / "storyturns.jsonl").write_bytes(b"")
    expect("empty-folder-jsonl", "empty-folder-jsonl", "a dataset folder with an empty storyturns.jsonl",
           file="storyturns.jsonl", says="empty dataset")
    write_bytes("utf8-bom", "data.jsonl", b"\xef\xbb\xbf" + jsonl(PIPE))
    expect("utf8-bom", "utf8-bom/data.jsonl", "UTF-8 with a byte-order mark", file="data.jsonl", line=1, column=1,
           says="byte-order mark")
    write_bytes("utf8-bom-crlf", "data.jsonl", b"\xef\xbb\xbf" + jsonl(PIPE, newline="\r\n"))
    expect("utf8-bom-crlf", "utf8-bom-crlf/data.jsonl", "BOM and CRLF line endings", file="data.jsonl", line=1,
           column=1, says="byte-order mark")
    write_bytes("utf16-le-bom", "data.jsonl", jsonl(PIPE).decode().encode("utf-16"))
    expect("utf16-le-bom", "utf16-le-bom/data.jsonl", "UTF-16 as Windows Notepad writes it", file="data.jsonl",
           line=1, column=1, says="UTF-16")
    write_bytes("utf16-no-bom", "data.jsonl", jsonl(PIPE).decode().encode("utf-16-le"))
    expect("utf16-no-bom", "utf16-no-bom/data.jsonl", "UTF-16 without a byte-order mark", file="data.jsonl",
           line=1, column=2, says="NUL byte")
    latin1 = jsonl({**PIPE, "id": "ok-1"}, {**PIPE, "id": "ok-2"}) + json.dumps(
        {**PIPE, "id": "ok-3", "storyturn": ["Zoë is here. | | Where is Zoë, the basket or the box? | | The basket"]},
        ensure_ascii=False).encode("latin-1") + b"\n"
    write_bytes("invalid-utf8-latin1", "data.jsonl", latin1)
    expect("invalid-utf8-latin1", "invalid-utf8-latin1/data.jsonl", "a Latin-1 byte in line 3", file="data.jsonl",
           line=3, column=88, says="byte 0xeb")
    write_bytes("binary-as-jsonl", "data.jsonl", png())
    expect("binary-as-jsonl", "binary-as-jsonl/data.jsonl", "a PNG named .jsonl", file="data.jsonl", line=1,
           column=1, says="not UTF-8")
    write_bytes("bom-mid-file", "data.jsonl", jsonl(PIPE) + b"\xef\xbb\xbf" + jsonl({**PIPE, "id": "ok-2"}))
    expect("bom-mid-file", "bom-mid-file/data.jsonl", "two files concatenated, the second with a BOM",
           file="data.jsonl", line=2, column=1, says="byte-order mark inside the file")
    write_bytes("nul-in-text", "data.jsonl", jsonl(PIPE) + b'{"id": "x\x00"}\n')
    expect("nul-in-text", "nul-in-text/data.jsonl", "a NUL byte on line 2", file="data.jsonl", line=2, column=10,
           says="NUL byte")
    records = [{**PIPE, "id": f"ok-{i}"} for i in range(1, 9)]
    pretty = json.dumps(records, indent=2).splitlines()
    broken = pretty.index('    "storyturn": [', 40)  # drop the comma before a record's storyturn: line ~40
    pretty[broken - 1] = pretty[broken - 1].rstrip(",")
    write_bytes("pretty-json-missing-comma", "data.json", ("\n".join(pretty) + "\n").encode())
    expect("pretty-json-missing-comma", "pretty-json-missing-comma/data.json",
           "a pretty-printed JSON list missing a comma deep inside", file="data.json", line=broken + 1, column=5,
           says="Expecting ',' delimiter")
    pretty_crlf = json.dumps(records[:3], indent=2).replace("\n  }\n]", "\n  },\n]").replace("\n", "\r\n")
    write_bytes("pretty-json-trailing-comma-crlf", "data.json", pretty_crlf.encode())
    expect("pretty-json-trailing-comma-crlf", "pretty-json-trailing-comma-crlf/data.json",
           "a trailing comma in a CRLF pretty-printed list", file="data.json",
           line=pretty_crlf.count("\r\n") + 1, column=1, says="trailing comma")
    write_bytes("jsonl-truncated-line", "data.jsonl",
                jsonl(PIPE, {**PIPE, "id": "ok-2"}) + json.dumps({**PIPE, "id": "ok-3"})[:70].encode() + b"\n")
    expect("jsonl-truncated-line", "jsonl-truncated-line/data.jsonl", "the last line cut short", file="data.jsonl",
           line=3, column=71, says="invalid JSON")
    write_bytes("jsonl-crlf-bad-line", "data.jsonl", jsonl(PIPE, newline="\r\n") + b'{"id": "ok-2",}\r\n')
    expect("jsonl-crlf-bad-line", "jsonl-crlf-bad-line/data.jsonl", "CRLF JSONL with a bad second line",
           file="data.jsonl", line=2, column=15, says="invalid JSON")
    write_bytes("deep-nesting", "data.json", b"[" * 20_000 + b"]" * 20_000)
    expect("deep-nesting", "deep-nesting/data.json", "20,000 nested lists", file="data.json", line=1, column=65,
           says="nested more than 64 levels")
    deep: object = "x"
    for _ in range(200):
        deep = {"k": deep}
    write_bytes("deep-nesting-meta", "data.jsonl", jsonl(PIPE, {**CANONICAL, "meta": deep}))
    expect("deep-nesting-meta", "deep-nesting-meta/data.jsonl", "a record nested 200 levels in its meta",
           file="data.jsonl", line=2, column=857, story="c-1", field="meta.k", says="nested more than 64 levels")
    write_bytes("top-level-number", "data.json", b"42\n")
    expect("top-level-number", "top-level-number/data.json", "a number, not records", file="data.json", line=1,
           says="got a number")
    write_bytes("jsonl-null-line", "data.jsonl", jsonl(PIPE, None))
    expect("jsonl-null-line", "jsonl-null-line/data.jsonl", "a null record", file="data.jsonl", line=2,
           says="got null")
    write_bytes("concatenated-objects", "data.json",
                (json.dumps(CANONICAL, indent=2) + "\n" + json.dumps({**CANONICAL, "id": "c-2"}, indent=2)).encode())
    expect("concatenated-objects", "concatenated-objects/data.json", "two pretty-printed objects in one file",
           file="data.json", line=json.dumps(CANONICAL, indent=2).count("\n") + 2, column=1, says="Extra data")
    write_bytes("markdown-not-json", "data.jsonl", b"# My stories\n\n- Ana puts her ball in the basket.\n")
    expect("markdown-not-json", "markdown-not-json/data.jsonl", "a Markdown file", file="data.jsonl", line=1,
           column=1, says="invalid JSON")


def folder_cases() -> None:
    """Dataset folders: dataset.json and storyturns.jsonl in the wrong shape."""
    def folder_with_meta(name: str, meta: bytes) -> None:
        folder = case_dir(name)
        (folder / "storyturns.jsonl").write_bytes(jsonl(PIPE))
        (folder / "dataset.json").write_bytes(meta)

    folder_with_meta("meta-is-a-list", b'[\n  "name", "tiny"\n]\n')
    expect("meta-is-a-list", "meta-is-a-list", "dataset.json is a list", file="dataset.json", line=1,
           says="must be a JSON object")
    folder_with_meta("meta-pretty-bad-json", b'{\n  "name": "tiny",\n  "version": "1"\n  "licence": "CC-BY-4.0"\n}\n')
    expect("meta-pretty-bad-json", "meta-pretty-bad-json", "dataset.json missing a comma on line 3",
           file="dataset.json", line=4, column=3, says="Expecting ',' delimiter")
    folder_with_meta("meta-name-number", b'{\n  "version": "1",\n  "name": 7\n}\n')
    expect("meta-name-number", "meta-name-number", "dataset.json with a numeric name", file="dataset.json", line=3,
           field="name", says="must be a string")
    folder_with_meta("meta-bom", b"\xef\xbb\xbf" + b'{"name": "tiny"}\n')
    expect("meta-bom", "meta-bom", "dataset.json with a BOM", file="dataset.json", line=1, column=1,
           says="byte-order mark")
    folder = case_dir("storyturns-is-a-folder")
    (folder / "storyturns.jsonl").mkdir()
    (folder / "storyturns.jsonl" / "part1.jsonl").write_bytes(jsonl(PIPE))
    expect("storyturns-is-a-folder", "storyturns-is-a-folder", "storyturns.jsonl is a folder",
           file="storyturns.jsonl", says="is a folder")
    folder = case_dir("folder-without-data")
    (folder / "stories.txt").write_bytes(b"nothing here\n")
    expect("folder-without-data", "folder-without-data", "a folder with neither storyturns.jsonl nor HF files",
           file="folder-without-data", says="not a dataset folder")


def pipe_cases() -> None:
    """The paper's pipe format: fields, types, record keys."""
    def one(name: str, record: object, why: str, **where: object) -> None:
        write_bytes(name, "data.jsonl", jsonl(record))
        expect(name, f"{name}/data.jsonl", why, file="data.jsonl", line=1, **where)  # type: ignore[arg-type]

    one("pipe-four-fields", {**PIPE, "storyturn": [TURN0, " | Why? | | Because she did not see it"]},
        "a turn with 4 fields", story="ok-1", turn=1, says="expected 5 fields")
    one("pipe-six-fields", {**PIPE, "storyturn": [TURN0 + " | extra", TURN1]}, "a turn with 6 fields",
        story="ok-1", turn=0, says="found 6")
    one("pipe-turn-number", {**PIPE, "storyturn": [TURN0, 7]}, "a turn that is a number", story="ok-1", turn=1,
        field="storyturn", says="valid string")
    one("pipe-storyturn-string", {**PIPE, "storyturn": TURN0}, "storyturn is one string, not a list",
        story="ok-1", field="storyturn", says="valid list")
    one("pipe-storyturn-empty", {**PIPE, "storyturn": []}, "no turns", story="ok-1", field="turns",
        says="at least one turn")
    one("pipe-id-number", {**PIPE, "id": 12}, "a numeric id", field="id", says="valid string")
    one("pipe-task-list", {**PIPE, "task": ["false_belief_location"]}, "task given as a list", story="ok-1",
        field="task", says="valid string")
    one("pipe-image-dependent-string", {**PIPE, "image_dependent": "yes"}, "image_dependent as a string",
        story="ok-1", field="image_dependent", says="valid boolean")
    one("pipe-unknown-key", {**PIPE, "catgory": "Belief"}, "a misspelt key", story="ok-1", field="catgory",
        says="unknown field")
    one("pipe-blank-question", {**PIPE, "storyturn": [TURN0, " | | | | Because she did not see it"]},
        "a blank question", story="ok-1", turn=1, field="question", says="empty question")
    one("pipe-blank-answer", {**PIPE, "storyturn": [TURN0, " | | Why? | | "]}, "a blank answer", story="ok-1",
        turn=1, field="answer", says="empty answer")
    write_bytes("pipe-bare-list-no-task", "data.json", json.dumps([[TURN0, TURN1]]).encode())
    expect("pipe-bare-list-no-task", "pipe-bare-list-no-task/data.json", "bare turn lists carry no task",
           file="data.json", line=1, story="data-0001", field="task", says="no task given")
    one("pipe-empty-if-right", {**PIPE, "storyturn": [TURN0, " | If right: ; If wrong: No. | Why? | | Because she "
                                                             "did not see Ben move it"]},
        "an 'If right' with no text", story="ok-1", turn=1, field="feedback", says="empty 'If right'")
    one("pipe-misspelt-condition", {**PIPE, "storyturn": [TURN0, " | If rigth: Yes. | Why? | | Because she did "
                                                                 "not see Ben move it"]},
        "'If rigth:' is not a condition", story="ok-1", turn=1, field="feedback", says="unrecognised feedback")


def canonical_cases() -> None:
    """Canonical JSONL with the wrong types or shapes."""
    def one(name: str, record: dict[str, object], why: str, **where: object) -> None:
        write_bytes(name, "data.jsonl", jsonl(PIPE, record))
        expect(name, f"{name}/data.jsonl", why, file="data.jsonl", line=2, **where)  # type: ignore[arg-type]

    turns = CANONICAL["turns"]
    one("canonical-no-answers", {**CANONICAL, "turns": [turns[0], {**turns[1], "answers": []}]}, "no answer",
        story="c-1", turn=1, field="answers", says="at least 1 item")
    one("canonical-question-number", {**CANONICAL, "turns": [{**turns[0], "question": 5}, turns[1]]},
        "a numeric question", story="c-1", turn=0, field="question", says="got a number")
    one("canonical-turns-object", {**CANONICAL, "turns": {"0": turns[0]}}, "turns as an object", story="c-1",
        field="turns", says="valid list")
    one("canonical-missing-turns", {k: v for k, v in CANONICAL.items() if k != "turns"}, "no turns", story="c-1",
        field="turns", says="Field required")
    one("canonical-blank-question", {**CANONICAL, "turns": [turns[0], {**turns[1], "question": "   "}]},
        "a question of blanks", story="c-1", turn=1, field="question", says="empty question")
    one("canonical-unknown-field", {**CANONICAL, "turn_count": 2}, "an unknown top-level field", story="c-1",
        field="turn_count", says="unknown field")
    one("canonical-empty-id", {**CANONICAL, "id": ""}, "an empty id", field="id", says="at least 1 character")
    one("canonical-bool-as-string", {**CANONICAL, "image_dependent": "false"}, "a boolean written as a string",
        story="c-1", field="image_dependent", says="valid boolean")
    one("canonical-feedback-string", {**CANONICAL, "turns": [turns[0], {**turns[1], "feedback": "Yes."}]},
        "feedback as a plain string", story="c-1", turn=1, field="feedback", says="valid dictionary")
    one("canonical-answers-string", {**CANONICAL, "turns": [turns[0], {**turns[1], "answers": "Because"}]},
        "answers as a string, not a list", story="c-1", turn=1, field="answers", says="valid list")


def semantic_cases() -> None:
    """Data that reads but must not run: what `commet validate` rejects."""
    def one(name: str, records: list[dict[str, object]], why: str, line: int = 1, **where: object) -> None:
        write_bytes(name, "data.jsonl", jsonl(*records))
        expect(name, f"{name}/data.jsonl", why, file="data.jsonl", line=line, **where)  # type: ignore[arg-type]

    one("unknown-task", [{**PIPE, "task": "mind_reading"}], "a task outside the taxonomy", story="ok-1",
        field="task", says="unknown task 'mind_reading'")
    one("unknown-category", [{**PIPE, "category": "Beliefs"}], "a category outside the taxonomy", story="ok-1",
        field="category", says="unknown category 'Beliefs'")
    one("duplicate-id", [PIPE, {**CANONICAL, "id": "ok-1"}], "two different StoryTurns with one id", line=2,
        story="ok-1", field="id", says="duplicate id (first at line 1)")
    one("branch-count-mismatch", [{**DESIRE, "storyturn": [
        "Snacks. | | Which do you like, the pear, the plum or the fig? | | Pear; Plum; Fig",
        "She likes another. | | Which will she pick, the pear or the plum? | | Plum; Pear"]}],
        "3 branches, then 2", story="dd-1", turn=1, field="answer", says="branch counts must line up")
    one("feedback-keyed-missing-answer", [{**PIPE, "storyturn": [
        TURN0, " | If the previous answer is The garden: Hmm. | Why? | | Because she did not see Ben move it"]}],
        "feedback for an answer turn 0 does not have", story="ok-1", turn=1, field="feedback", says="The garden")
    one("conditional-feedback-turn0", [{**PIPE, "storyturn": [
        "Story. | If right: Good. | Where will Ana look, the basket or the box? | | The box"]}],
        "'If right' on the first turn", story="ok-1", turn=0, field="feedback", says="first turn")
    one("image-dependent-no-image", [{**PIPE, "image_dependent": True, "category": "Belief"}],
        "image-dependent but no picture", story="ok-1", field="image_dependent", says="has no image")
    # an answer in its own story is a warning (an error only under `validate --strict`): tests/test_validate_leaks.py
    one("id-path-traversal", [{**PIPE, "id": "../../etc/passwd"}], "an id that is a path", story="../../etc/passwd",
        field="id", says="path separator")
    one("id-backslash", [{**PIPE, "id": "..\\..\\boot.ini"}], "a Windows path as id", story="..\\..\\boot.ini",
        field="id", says="path separator")
    one("id-newline", [{**PIPE, "id": "ok-1\nstory=forged turn=0 field=-: error: fake"}],
        "an id that would split a line", story="ok-1\\nstory=forged turn=0 field=-: error: fake", field="id",
        says="control or invisible")
    one("id-ansi-escape", [{**PIPE, "id": "ok-\x1b[2J\x1b[31mred"}], "an id that clears the terminal",
        story="ok-\\x1b[2J\\x1b[31mred", field="id", says="control or invisible")
    one("id-bidi-override", [{**PIPE, "id": "ok-\u202egnp.exe"}], "a right-to-left override", story="ok-\\u202egnp.exe",
        field="id", says="control or invisible")
    one("id-leading-blank", [{**PIPE, "id": " ok-1"}], "an id with a leading blank", story=" ok-1", field="id",
        says="leading or trailing blanks")
    one("id-too-long", [{**PIPE, "id": "x" * 300}], "a 300-character id (shown shortened)",
        story="x" * 130 + "...(300 characters)..." + "x" * 40, field="id", says="300 characters")
    one("id-dot-dot", [{**PIPE, "id": ".."}], "'..' as id", story="..", field="id", says="path separator")
    one("pipe-task-null", [{**PIPE, "task": None, "category": "Belief"}],
        "a pipe record with task null", story="ok-1", field="task", says="no task given")


def picture_cases() -> None:
    """Pictures: decoded in full, under a pixel limit, inside the dataset folder."""
    picture_case("image-missing", "the picture file is absent", None, "not found")
    picture_case("image-text-named-png", "a text file named .png", b"this is not a picture\n", "is not a picture")
    picture_case("image-html-named-png", "an HTML error page saved as .png",
                 b"<!DOCTYPE html><html><body>404 Not Found</body></html>", "is not a picture")
    picture_case("image-empty", "a 0-byte picture", b"", "empty file")
    whole = png(64, 48)
    picture_case("image-truncated-png", "a PNG cut in half", whole[: len(whole) // 2], "truncated or corrupt")
    picture_case("image-garbage-after-signature", "a PNG signature followed by garbage",
                 b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4, "is not a picture")
    picture_case("image-bomb-declared", "a tiny PNG declaring 20000x20000", png_declaring(20000, 20000),
                 "decompression bomb")
    picture_case("image-bomb-real", "a real 1-bit 10000x10000 PNG (100 megapixels)", png(10000, 10000, "1"),
                 "decompression bomb")
    picture_case("image-over-limit", "a PNG declaring 8000x8000: under Pillow's limit, over CoMMET's",
                 png_declaring(8000, 8000), "8000x8000 pixels, more than the limit")
    out = io.BytesIO()
    Image.new("RGB", (64, 48), (10, 200, 10)).save(out, format="JPEG")
    picture_case("image-truncated-jpeg", "a JPEG cut short", out.getvalue()[:300], "truncated or corrupt",
                 image_file="pic1.jpg")
    out = io.BytesIO()
    Image.new("RGB", (16, 16)).save(out, format="BMP")
    picture_case("image-bmp-named-png", "a BMP file named .png", out.getvalue(), "is a BMP picture")
    picture_case("image-gif-garbage", "a GIF header and nothing usable", b"GIF89a" + b"\x00" * 5, "is not a picture",
                 image_file="pic1.gif")
    picture_case("image-id-traversal", "an image id that climbs out of the folder", None,
                 "leads out of the dataset folder", image_id="../../../../etc/passwd")
    picture_case("image-id-absolute", "an absolute image path", None, "leads out of the dataset folder",
                 image_id="/etc/passwd")
    folder = picture_case("image-symlink-out", "a symbolic link to a picture outside the dataset folder", None,
                          "symbolic link pointing out of the dataset folder")
    os.symlink(os.path.relpath(OUTSIDE / "secret.png", folder / "images"), folder / "images" / "pic1.png")
    folder = picture_case("image-symlink-absolute", "a symbolic link to /etc/hostname", None,
                          "symbolic link pointing out of the dataset folder")
    os.symlink("/etc/hostname", folder / "images" / "pic1.png")
    folder = picture_case("image-is-folder", "a folder named pic1.png", None, "is a folder")
    (folder / "images" / "pic1.png").mkdir()
    (folder / "images" / "pic1.png" / "README").write_text("a folder, not a picture\n")
    folder = picture_case("image-broken-symlink", "a symbolic link to nothing", None, "broken symbolic link")
    os.symlink("nowhere.png", folder / "images" / "pic1.png")
    folder = picture_case("image-symlink-loop", "a symbolic link to itself", None, "cannot be looked at")
    os.symlink("pic1.png", folder / "images" / "pic1.png")
    picture_case("image-id-control-char", "an image id with a bell character", None, "control characters",
                 image_id="pic1\a")


def hf_cases() -> None:
    """Hugging Face save_to_disk folders, broken the ways copies and downloads break them."""
    import datasets

    def saved(name: str, rows: dict[str, list[object]]) -> Path:
        folder = case_dir(name)
        datasets.Dataset.from_dict(rows).save_to_disk(str(folder))
        for junk in folder.glob("cache-*"):
            junk.unlink()
        return folder

    rows = {"id": ["h-1"], "task": ["sarcasm"], "category": ["NLCE"], "mental_states": [["emotion"]],
            "image_dependent": [False], "source": ["hub"], "meta": ["{}"], "image_files": [[]],
            "turns": [[{"story": "Dan gets cold soup.", "feedback": "", "question": "Is he happy or sad?",
                        "image": "", "answers": ["Sad"]}]]}
    folder = saved("hf-no-arrow-file", rows)
    for arrow in folder.glob("*.arrow"):
        arrow.unlink()
    expect("hf-no-arrow-file", "hf-no-arrow-file", "the arrow file was not copied", file="hf-no-arrow-file")
    folder = saved("hf-corrupt-arrow", rows)
    for arrow in folder.glob("*.arrow"):
        arrow.write_bytes(b"this is not an arrow stream" * 10)
    expect("hf-corrupt-arrow", "hf-corrupt-arrow", "garbage in the arrow file", file="hf-corrupt-arrow")
    folder = saved("hf-truncated-arrow", rows)
    for arrow in folder.glob("*.arrow"):
        arrow.write_bytes(arrow.read_bytes()[: arrow.stat().st_size // 2])
    expect("hf-truncated-arrow", "hf-truncated-arrow", "an arrow file cut in half", file="hf-truncated-arrow")
    saved("hf-wrong-columns", {"question": ["Is he happy or sad?"], "answer": ["Sad"]})
    expect("hf-wrong-columns", "hf-wrong-columns", "a dataset of other columns", file="hf-wrong-columns")
    no_answers = {**rows, "turns": [[{**rows["turns"][0][0], "answers": []}]]}  # type: ignore[index, dict-item]
    saved("hf-row-without-answers", no_answers)
    expect("hf-row-without-answers", "hf-row-without-answers", "a row whose turn has no expected answer",
           file="hf-row-without-answers")
    folder = saved("hf-state-bad-json", rows)
    (folder / "state.json").write_text('{"_data_files": [\n')
    expect("hf-state-bad-json", "hf-state-bad-json", "state.json cut short", file="hf-state-bad-json")


def controls() -> None:
    """Valid datasets in shapes that are easy to mishandle: each must pass validate and eval."""
    def control(name: str, file: str, data: bytes) -> Path:
        path = CONTROLS / name / file
        path.parent.mkdir(parents=True)
        path.write_bytes(data)
        return path

    control("crlf-jsonl", "data.jsonl", jsonl(PIPE, {**PIPE, "id": "ok-2"}, newline="\r\n"))
    control("crlf-pretty-json", "data.json", json.dumps([PIPE, CANONICAL], indent=2).replace("\n", "\r\n").encode())
    control("lone-cr", "data.jsonl", jsonl(PIPE, CANONICAL, newline="\r"))
    control("utf8-non-ascii", "data.jsonl", jsonl({**PIPE, "id": "zoë-1", "storyturn": [
        "Zoë puts her ball in the basket and goes out. Björn moves it to the box. | | Where will Zoë look, the "
        "basket or the box? | | The basket", TURN1]}, {**CANONICAL, "id": "日本-1"}))
    control("line-separator-in-text", "data.jsonl", jsonl(PIPE, {**CANONICAL, "turns": [
        {**CANONICAL["turns"][0], "story": STORY + "\u2028Then it rains.\u0085"},  # type: ignore[index]
        CANONICAL["turns"][1]]}))  # type: ignore[index]
    control("single-pretty-object", "data.json", json.dumps(CANONICAL, indent=2).encode())
    path = control("folder-with-pictures", "storyturns.jsonl", jsonl(
        {**PIPE, "storyturn": [TURN0_PIC, TURN1]},
        {**PIPE, "id": "ok-2", "storyturn": [TURN0_PIC.replace("| pic1 |", "| shared:pic2 |"), TURN1]},
        {**PIPE, "id": "ok-3", "storyturn": [TURN0_PIC.replace("| pic1 |", "| pic3 |"), TURN1]}))
    (path.parent / "images").mkdir()
    (path.parent / "images" / "pic1.png").write_bytes(png())
    (path.parent / "images" / "shared_pic2.png").write_bytes(png(20, 20, "L"))
    out = io.BytesIO()
    Image.new("RGB", (40, 30), (10, 200, 10)).save(out, format="JPEG")
    (path.parent / "images" / "real.jpg").write_bytes(out.getvalue())
    os.symlink("real.jpg", path.parent / "images" / "pic3.jpg")  # a link inside the folder is fine
    (path.parent / "dataset.json").write_text('{\r\n  "name": "controls",\r\n  "version": 2\r\n}\r\n')


def main() -> None:
    for folder in (CASES, CONTROLS, OUTSIDE):
        shutil.rmtree(folder, ignore_errors=True)
    OUTSIDE.mkdir()
    (OUTSIDE / "secret.png").write_bytes(png())
    file_cases()
    folder_cases()
    pipe_cases()
    canonical_cases()
    semantic_cases()
    picture_cases()
    hf_cases()
    controls()
    names = [c["name"] for c in manifest]
    assert len(names) == len(set(names)), "case names must be unique"
    (HERE / "cases.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=True) + "\n")
    print(f"{len(manifest)} malformed cases, {len(list(CONTROLS.iterdir()))} controls in {HERE}")


if __name__ == "__main__":
    main()
