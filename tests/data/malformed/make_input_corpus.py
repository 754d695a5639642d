"""Build the second malformed-input corpus: ``python tests/data/malformed/make_input_corpus.py`` (rewrites input/).

Issue 30's dataset classes, wider than its examples: pictures reaching outside the dataset, too
large to read or to resize; lone surrogates; numbers and nesting out of range; keys named twice;
feedback branches given twice or without their colon; option labels used twice; Hugging Face
cells of the wrong type; symbolic-link loops; errors that must stay one bounded line. Each case is
a dataset with one problem; ``input/cases.json`` says where it is (file, line, column, story, turn,
field, a piece of the message) and at which stage it is refused: ``load`` (every command that reads
a dataset: validate, eval, stats, convert, study build, review serve) or ``check`` (the commands
that validate: all but stats and convert). ``input/controls/`` holds valid datasets next to those
mistakes, which must pass. Cases that cannot live in git (a FIFO, a 1 GiB sparse picture, a 50 MB
id) are made by tests/test_malformed_input.py itself.
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

HERE = Path(__file__).resolve().parent / "input"
CASES = HERE / "cases"
CONTROLS = HERE / "controls"
OUTSIDE = HERE / "outside"

STORY = "Ana puts her ball in the basket and goes out. Ben moves it to the box."
QUESTION = "Where will Ana look, the basket or the box?"
TURN0 = f"{STORY} | | {QUESTION} | | The basket"
TURN1 = " | If right: Yes.; If wrong: Remember, Ana was outside. | Why? | | Because she did not see Ben move it"
PIPE = {"id": "in-1", "task": "false_belief_location", "category": "Belief", "storyturn": [TURN0, TURN1]}
CANONICAL = {
    "id": "c-1", "task": "false_belief_location", "category": "Belief", "mental_states": ["belief"],
    "image_dependent": False, "source": "corpus",
    "turns": [
        {"story": STORY, "question": QUESTION, "answers": ["The basket"]},
        {"feedback": {"right": "Yes.", "wrong": "Remember, Ana was outside."}, "question": "Why?",
         "answers": ["Because she did not see Ben move it"]},
    ],
}
FRUIT = {"id": "dd-1", "task": "diverse_desire", "category": "Desire", "storyturn": [
    "Snack time. | | Which do you like, the apple or the pear? | | Apple; Pear",
    "Kim likes the other one. | If the previous answer is Apple: So Kim likes the pear.; If the previous answer is "
    "Pear: So Kim likes the apple. | Which will Kim pick, the apple or the pear? | | Pear; Apple",
]}
HF_FILE = "data/test-00000-of-00001.parquet"

manifest: list[dict[str, object]] = []


def expect(name: str, why: str, *, file: str, path: str | None = None, stage: str = "load", line: int | None = None,
           column: int | None = None, story: str | None = None, turn: int | None = None, field: str | None = None,
           says: str = "") -> None:
    """Record a case (``path`` relative to cases/, its name by default) and the one located error it must give."""
    assert stage in ("load", "check")
    manifest.append({"name": name, "path": path or name, "why": why, "stage": stage, "expect": {
        "file": file, "line": line, "column": column, "story": story, "turn": turn, "field": field, "says": says}})


def case_dir(name: str) -> Path:
    folder = CASES / name
    folder.mkdir(parents=True)
    return folder


def jsonl(*records: object) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def write(name: str, text: str, file: str = "data.jsonl") -> str:
    """A one-file case; returns the path to give the commands (relative to cases/)."""
    (case_dir(name) / file).write_text(text, encoding="utf-8")
    return f"{name}/{file}"


def column_of(line: str, piece: str) -> int:
    return line.index(piece) + 1


def png(width: int = 32, height: int = 24) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 80, 60)).save(out, format="PNG")
    return out.getvalue()


def grey_png(width: int, height: int) -> bytes:
    """A real, fully decodable greyscale PNG of any size (rows of zeros compress to almost nothing)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    raw = zlib.compress(b"\x00" * ((width + 1) * height), 9)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", raw) + chunk(b"IEND", b""))


# ----------------------------------------------------------------------------------------------- pictures


def picture_folder(name: str, image_id: str = "pic1", turns: int = 1) -> Path:
    """A dataset folder whose first ``turns`` StoryTurns show ``image_id`` in turn 0 (images/ made, empty)."""
    folder = case_dir(name)
    records = [{**PIPE, "id": f"in-{n + 1}", "storyturn": [TURN0.replace("| | The", f"| {image_id} | The"), TURN1]}
               for n in range(turns)]
    (folder / "storyturns.jsonl").write_text(jsonl(*records))
    (folder / "images").mkdir()
    return folder


def picture_cases() -> None:
    folder = picture_folder("picture-1x49000000")
    (folder / "images" / "pic1.png").write_bytes(grey_png(1, 49_000_000))
    expect("picture-1x49000000", "a real 1 x 49,000,000 PNG: under the pixel limit, but resizing it needs 2.4 GB",
           file="storyturns.jsonl", stage="check", line=1, story="in-1", turn=0, field="image",
           says="a side longer than 20,000 pixels")
    folder = picture_folder("picture-30000x2")
    (folder / "images" / "pic1.png").write_bytes(grey_png(30_000, 2))
    expect("picture-30000x2", "a wide strip: 60,000 pixels, one side too long", file="storyturns.jsonl",
           stage="check", line=1, story="in-1", turn=0, field="image", says="is 30000x2 pixels")
    folder = picture_folder("picture-refused-in-three-turns", turns=3)
    (folder / "images" / "pic1.png").write_bytes(b"<html>502 Bad Gateway</html>")
    expect("picture-refused-in-three-turns", "one broken picture shown by three StoryTurns: one line",
           file="storyturns.jsonl", stage="check", line=1, story="in-1", turn=0, field="image",
           says="(and 2 more turn(s) show it)")
    folder = picture_folder("picture-folder-links-out", "secret")
    (folder / "images").rmdir()
    os.symlink("../../outside", folder / "images")
    expect("picture-folder-links-out", "images/ is a symbolic link to a folder outside the dataset",
           file="storyturns.jsonl", stage="check", line=1, story="in-1", turn=0, field="image",
           says="out of the dataset folder")
    folder = picture_folder("picture-id-climbs-through-images", "images/../../../outside/secret.png")
    expect("picture-id-climbs-through-images", "an image id that enters images/ and climbs out",
           file="storyturns.jsonl", stage="check", line=1, story="in-1", turn=0, field="image",
           says="out of the dataset folder")
    folder = picture_folder("picture-link-to-dev-zero")
    os.symlink("/dev/zero", folder / "images" / "pic1.png")
    expect("picture-link-to-dev-zero", "a picture that is a link to /dev/zero (never ends)", file="storyturns.jsonl",
           stage="check", line=1, story="in-1", turn=0, field="image", says="out of the dataset folder")


def hf_rows(picture: object = None, **row: object) -> list[dict[str, object]]:
    turn = {"story": STORY, "feedback": None, "question": QUESTION, "image_id": "p1" if picture else None,
            "image": picture, "answers": ["The basket"], "options": [], "rubric": None, "meta": []}
    return [{"id": "h-1", "task": "false_belief_location", "category": "Belief", "mental_states": ["belief"],
             "image_dependent": False, "source": "hub", "meta": [], "turns": [turn], **row}]


def hf_folder(name: str, rows: list[dict[str, object]], file: str = HF_FILE, *, typed: bool = True) -> Path:
    """A Hub-style folder: one parquet file of ``rows`` (CoMMET's features when ``typed``, else as pyarrow infers)."""
    import datasets
    import pyarrow
    import pyarrow.parquet as pq

    from commet.sources.hf import _features

    folder = CASES / name
    (folder / file).parent.mkdir(parents=True, exist_ok=True)
    table = (datasets.Dataset.from_list(rows, features=_features()).data.table if typed
             else pyarrow.Table.from_pylist(rows))
    pq.write_table(table, folder / file)
    return folder


def hf_cases() -> None:
    where = {"file": HF_FILE, "line": 1, "story": "h-1", "turn": 0, "field": "image"}
    hf_folder("hf-image-absolute-path", hf_rows({"bytes": None, "path": "/etc/hostname"}))
    expect("hf-image-absolute-path", "an Image cell naming /etc/hostname (convert copied it byte for byte)",
           **where, says="is absolute")  # type: ignore[arg-type]
    hf_folder("hf-image-dot-dot", hf_rows({"bytes": None, "path": "../../../outside/secret.png"}))
    expect("hf-image-dot-dot", "an Image cell climbing out with ..", **where,  # type: ignore[arg-type]
           says="leads out of the dataset folder")
    folder = hf_folder("hf-image-symlink-out", hf_rows({"bytes": None, "path": "pic.png"}))
    os.symlink("../../../outside/secret.png", folder / "data" / "pic.png")
    expect("hf-image-symlink-out", "an Image cell naming a link that points out", **where,  # type: ignore[arg-type]
           says="symbolic link pointing out of the dataset folder")
    hf_folder("hf-image-path-missing", hf_rows({"bytes": None, "path": "gone.png"}))
    expect("hf-image-path-missing", "an Image cell naming a file that is not there (no bytes)", **where,  # type: ignore[arg-type]
           says="not found in the dataset folder")
    hf_folder("hf-image-1x49000000-bytes", hf_rows({"bytes": grey_png(1, 49_000_000), "path": "tall.png"}))
    expect("hf-image-1x49000000-bytes", "the 1 x 49,000,000 PNG embedded in the parquet file", stage="check",
           file=HF_FILE, line=1, story="h-1", turn=0, field="image", says="a side longer than 20,000 pixels")
    for name, value, shown in (("hf-image-dependent-text-false", "false", "str 'false'"),
                               ("hf-image-dependent-two", 2, "int 2"),
                               ("hf-image-dependent-yes", "yes", "str 'yes'")):
        hf_folder(name, hf_rows(image_dependent=value), typed=False)
        expect(name, f"image_dependent stored as {shown}", file=HF_FILE, line=1, story="h-1", field="image_dependent",
               says=f"must be true or false (or 1 or 0), not {shown}")
    folder = hf_folder("hf-duplicate-id-across-files", hf_rows(), "data/test-00000-of-00002.parquet")
    hf_folder("hf-duplicate-id-across-files", hf_rows(), "data/test-00001-of-00002.parquet")
    expect("hf-duplicate-id-across-files", "one id in two parquet shards", stage="check",
           file="data/test-00001-of-00002.parquet", line=1, story="h-1", field="id",
           says="data/test-00000-of-00002.parquet:1)")
    folder = CASES / "hf-duplicate-id-across-splits"
    hf_folder("hf-duplicate-id-across-splits", hf_rows(), "data/test-00000-of-00001.parquet")
    hf_folder("hf-duplicate-id-across-splits", hf_rows(), "data/train-00000-of-00001.parquet")
    expect("hf-duplicate-id-across-splits", "one id in the test and the train split", stage="check",
           file="data/train-00000-of-00001.parquet", line=1, story="h-1", field="id",
           says="data/test-00000-of-00001.parquet:1)")
    folder = case_dir("hf-self-links-no-data")
    for n in range(45):
        os.symlink(".", folder / f"again{n}")
    expect("hf-self-links-no-data", "45 symbolic self-links and no data (grew as 45^4: 30 s and 1.5 GB)",
           path="hf-self-links-no-data", file="hf-self-links-no-data", says="not a dataset folder")


# ----------------------------------------------------------------------------------- text, numbers, nesting


def surrogate_cases() -> None:
    line = json.dumps({**PIPE, "storyturn": [TURN0.replace("goes out", "goes \\ud800out"), TURN1]})
    line = line.replace("\\\\ud800", "\\ud800")
    path = write("surrogate-pipe-story", line + "\n")
    expect("surrogate-pipe-story", "a lone high surrogate in a pipe story", path=path, file="data.jsonl", line=1,
           column=column_of(line, "\\ud800"), story="in-1", turn=0, field="story", says="lone surrogate U+D800")
    record = json.loads(json.dumps(CANONICAL))
    record["turns"][1]["question"] = "Why@?"
    line = json.dumps(record).replace("Why@?", "Why\\udc00?")
    path = write("surrogate-canonical-question", jsonl(PIPE) + line + "\n")
    expect("surrogate-canonical-question", "a lone low surrogate in a canonical question", path=path,
           file="data.jsonl", line=2, column=column_of(line, "\\udc00"), story="c-1", turn=1, field="question",
           says="lone surrogate U+DC00")
    record = json.loads(json.dumps(CANONICAL))
    record["turns"][1]["feedback"]["wrong"] = "Look@again."
    line = json.dumps(record).replace("Look@again", "Look\\ud83dagain")  # half of an emoji
    path = write("surrogate-half-emoji-feedback", line + "\n")
    expect("surrogate-half-emoji-feedback", "the first half of an emoji's surrogate pair, alone", path=path,
           file="data.jsonl", line=1, column=column_of(line, "\\ud83d"), story="c-1", turn=1, field="feedback.wrong",
           says="lone surrogate U+D83D")
    line = json.dumps({**CANONICAL, "meta": {"note@": 1}}).replace("note@", "note\\udfff")
    path = write("surrogate-meta-key", line + "\n")
    expect("surrogate-meta-key", "a lone surrogate in a meta key", path=path, file="data.jsonl", line=1,
           column=column_of(line, "\\udfff"), story="c-1", field="meta.note\\udfff", says="lone surrogate U+DFFF")
    line = json.dumps({**PIPE, "id": "in-@"}).replace("in-@", "in-\\ud800")
    path = write("surrogate-id", line + "\n")
    expect("surrogate-id", "a lone surrogate in the id", path=path, file="data.jsonl", line=1,
           column=column_of(line, "\\ud800"), story="in-\\ud800", field="id", says="lone surrogate")
    pretty = json.dumps([PIPE, {**PIPE, "id": "in-2", "source": "web@"}], indent=2).replace("web@", "web\\ud800")
    path = write("surrogate-pretty-json-list", pretty, "data.json")
    number = pretty[: pretty.index("\\ud800")].count("\n") + 1
    expect("surrogate-pretty-json-list", "a lone surrogate in the second record of a JSON list", path=path,
           file="data.json", line=number, column=column_of(pretty.splitlines()[number - 1], "\\ud800"), story="in-2",
           field="source", says="lone surrogate")
    folder = case_dir("surrogate-dataset-json")
    (folder / "storyturns.jsonl").write_text(jsonl(PIPE))
    (folder / "dataset.json").write_text('{"name": "tom\\ud800", "version": "1"}\n')
    expect("surrogate-dataset-json", "a lone surrogate in dataset.json's name", file="dataset.json", line=1,
           column=14, field="name", says="lone surrogate")


def number_cases() -> None:
    huge = "9" * 5000
    line = json.dumps({**CANONICAL, "meta": {"n": 0}}).replace('"n": 0', f'"n": {huge}')
    path = write("int-5000-digits-meta", line + "\n")
    expect("int-5000-digits-meta", "a 5,000-digit integer (a traceback from validate, eval and study build)",
           path=path, file="data.jsonl", line=1, column=column_of(line, huge), story="c-1", field="meta.n",
           says="integer of 5,000 digits is out of range")
    big = "-1" + "0" * 100
    line = json.dumps({**PIPE, "turn_extras": [{"meta": {"order": 0}}, {}]}).replace('"order": 0', f'"order": {big}')
    path = write("int-101-digits-turn-extras", line + "\n")
    expect("int-101-digits-turn-extras", "a negative 101-digit integer in a pipe record's turn_extras", path=path,
           file="data.jsonl", line=1, column=column_of(line, big), story="in-1", turn=0, field="meta.order",
           says="integer of 101 digits is out of range (at most 100 digits)")
    line = json.dumps({**CANONICAL, "meta": {"weight": 0}}).replace('"weight": 0', '"weight": 1e400')
    path = write("float-1e400", line + "\n")
    expect("float-1e400", "a number too large for a float (read as inf)", path=path, file="data.jsonl", line=1,
           column=column_of(line, "1e400"), story="c-1", field="meta.weight", says="number 1e400 is out of range")
    for name, constant in (("nan-in-meta", "NaN"), ("minus-infinity-in-meta", "-Infinity")):
        line = json.dumps({**CANONICAL, "meta": {"score": 0}}).replace('"score": 0', f'"score": {constant}')
        path = write(name, jsonl(PIPE) + line + "\n")
        expect(name, f"{constant}, which Python reads and JSON does not have", path=path, file="data.jsonl", line=2,
               column=column_of(line, constant), story="c-1", field="meta.score", says=f"{constant} is not JSON")
    digits = "1." + "5" * 500
    line = json.dumps({**CANONICAL, "meta": {"p": 0}}).replace('"p": 0', f'"p": {digits}')
    path = write("float-500-digits", line + "\n")
    expect("float-500-digits", "a 502-character number", path=path, file="data.jsonl", line=1,
           column=column_of(line, digits), story="c-1", field="meta.p", says="number of 502 characters is too long")
    folder = case_dir("int-huge-in-dataset-json")
    (folder / "storyturns.jsonl").write_text(jsonl(PIPE))
    (folder / "dataset.json").write_text('{\n  "name": "x",\n  "version": ' + "7" * 300 + "\n}\n")
    expect("int-huge-in-dataset-json", "a 300-digit version in dataset.json", file="dataset.json", line=3,
           column=14, field="version", says="integer of 300 digits is out of range")
    line = "[" * 100_000 + "]" * 100_000
    path = write("nesting-100000-jsonl-line", jsonl(PIPE) + line + "\n")
    expect("nesting-100000-jsonl-line", "a JSONL line nested 100,000 deep", path=path, file="data.jsonl", line=2,
           column=65, says="nested more than 64 levels")


def duplicate_key_cases() -> None:
    line = json.dumps(CANONICAL).replace('"question": "Why?"', '"question": "Why?", "question": "How?"')
    path = write("json-key-twice-question", line + "\n")
    expect("json-key-twice-question", "a turn naming 'question' twice (json kept the last)", path=path,
           file="data.jsonl", line=1, story="c-1", turn=1, field="question", says="key 'question' appears twice")
    line = json.dumps(CANONICAL).replace('"right": "Yes."', '"right": "Yes.", "right": "Well done."')
    path = write("json-key-twice-feedback", line + "\n")
    expect("json-key-twice-feedback", "a feedback object with two 'right' texts", path=path, file="data.jsonl",
           line=1, story="c-1", turn=1, field="feedback.right", says="key 'right' appears twice")
    line = json.dumps(PIPE).replace('"task": "false_belief_location"',
                                    '"task": "false_belief_location", "task": "sarcasm"')
    path = write("json-key-twice-task", jsonl({**PIPE, "id": "in-0"}) + line + "\n")
    expect("json-key-twice-task", "a pipe record naming its task twice", path=path, file="data.jsonl", line=2,
           story="in-1", field="task", says="key 'task' appears twice")


# ------------------------------------------------------------------------------------------------ parsers


def feedback_case(name: str, why: str, feedback: str, says: str, *, record: dict[str, object] | None = None,
                  turn: int = 1) -> None:
    base = record or PIPE
    turns = list(base["storyturn"])  # type: ignore[call-overload]
    fields = turns[turn].split("|")
    fields[1] = f" {feedback} "
    turns[turn] = "|".join(fields)
    path = write(name, jsonl({**base, "storyturn": turns}))
    expect(name, why, path=path, file="data.jsonl", line=1, story=str(base["id"]), turn=turn, field="feedback",
           says=says)


def parser_cases() -> None:
    feedback_case("pipe-if-right-twice", "'If right: A; If right: B' dropped A",
                  "If right: Yes.; If right: Well done.; If wrong: Look again.", "'If right' is given twice")
    feedback_case("pipe-if-wrong-twice-by-synonym", "'If wrong' and 'If incorrect' are one branch",
                  "If right: Yes.; If wrong: No.; If incorrect: Look again.", "'If wrong' is given twice")
    feedback_case("pipe-answer-key-twice", "a repeated 'If the previous answer is Apple:' was kept twice",
                  "If the previous answer is Apple: So Kim likes the pear.; If the previous answer is Apple: "
                  "Kim likes pears.; If the previous answer is Pear: So Kim likes the apple.",
                  "feedback for the previous answer 'Apple' is given twice", record=FRUIT)
    feedback_case("pipe-answer-key-case-variants", "'Apple' and 'apple' name one branch",
                  "If the previous answer is Apple: So Kim likes the pear.; If the previous answer is apple: "
                  "Kim likes pears.; If the previous answer is Pear: So Kim likes the apple.",
                  "(also as 'Apple')", record=FRUIT)
    feedback_case("pipe-wrong-marker-without-colon", "'If wrong' without its colon was glued onto 'If right'",
                  "If right: Yes.; If wrong Remember, Ana was outside.", "marker 'If wrong' without its colon")
    feedback_case("pipe-right-marker-comma", "'If right,' where a colon belongs",
                  "If right, Yes.; If wrong: Remember, Ana was outside.", "marker 'If right' without its colon")
    feedback_case("pipe-answer-marker-without-colon", "an answer marker running into the next branch",
                  "If the previous answer is Apple So Kim likes the pear.; If the previous answer is Pear: So Kim "
                  "likes the apple.", "marker 'If the previous answer is' without its colon", record=FRUIT)
    feedback_case("pipe-marker-after-sentence", "a second marker after a full stop, without its colon",
                  "If right: Yes. If wrong Remember, Ana was outside.", "marker 'If wrong' without its colon")
    for name, question, label in (
            ("pipe-option-label-twice", "Which box? A. red B. blue A. green", "'A'"),
            ("pipe-option-label-twice-brackets", "Which box? (a) red (b) blue (c) green (b) pink", "'b'"),
            ("pipe-option-label-twice-numbers", "Which box?\n1) red\n2) blue\n1) green", "'1'"),
            ("pipe-option-list-started-twice", "Which box? A. red A. blue B. green", "'A'")):
        turns = [TURN0, TURN1.replace("| Why? |", f"| {question} |")]
        path = write(name, jsonl({**PIPE, "storyturn": turns}))
        expect(name, f"options {question.split('? ')[-1]!r}: a label used twice", path=path, stage="check",
               file="data.jsonl", line=1, story="in-1", turn=1, field="question",
               says=f"option label {label} is used twice")
    record = json.loads(json.dumps(CANONICAL))
    record["turns"][0]["answers"] = ["Apple", "Pear"]
    record["turns"][0]["question"] = "Which do you like, the apple or the pear?"
    record["task"], record["category"] = "diverse_desire", "Desire"
    record["turns"][1] = {"feedback": {"by_answer": [
        {"answer": "Apple", "text": "So Kim likes the pear."}, {"answer": "apple", "text": "Kim likes pears."},
        {"answer": "Pear", "text": "So Kim likes the apple."}]},
        "question": "Which will Kim pick, the apple or the pear?", "answers": ["Pear", "Apple"]}
    path = write("canonical-feedback-keyed-apple-and-apple", jsonl(record))
    expect("canonical-feedback-keyed-apple-and-apple", "canonical by_answer keyed 'Apple' and 'apple'", path=path,
           stage="check", file="data.jsonl", line=1, story="c-1", turn=1, field="feedback",
           says="feedback keyed twice by the previous answer 'apple'")
    record = json.loads(json.dumps(CANONICAL))
    record["turns"][1]["question"] = "Why? (a) she forgot (b) she did not see (a) she guessed"
    path = write("canonical-question-label-twice", jsonl(record))
    expect("canonical-question-label-twice", "a canonical question whose written options repeat a label", path=path,
           stage="check", file="data.jsonl", line=1, story="c-1", turn=1, field="question",
           says="option label 'a' is used twice")


# ------------------------------------------------------------------------------------- one line per mistake


def error_line_cases() -> None:
    pretty = json.dumps({**PIPE, "id": "in-2"}, indent=2)
    path = write("jsonl-record-pretty-printed", jsonl(PIPE) + pretty + "\n" + jsonl({**PIPE, "id": "in-3"}))
    expect("jsonl-record-pretty-printed", "a JSONL record spread over 9 lines (one error a line)", path=path,
           file="data.jsonl", line=2, says=f"one record spread over lines 2 to {1 + pretty.count(chr(10)) + 1}")
    broken = pretty.replace('"category": "Belief",', '"category": "Belief"')
    at = broken[: broken.index('"storyturn"')].count("\n") + 2
    path = write("jsonl-record-pretty-and-broken", jsonl(PIPE) + broken + "\n" + jsonl({**PIPE, "id": "in-3"}))
    expect("jsonl-record-pretty-and-broken", "a pretty-printed record missing a comma inside a JSONL file",
           path=path, file="data.jsonl", line=at, column=3, says="Expecting ',' delimiter (in a record spread over")
    path = write("jsonl-markdown-block", jsonl(PIPE) + "# Notes\n\nThese are *my* stories.\nMore text.\n\n"
                 + jsonl({**PIPE, "id": "in-2"}))
    expect("jsonl-markdown-block", "a block of Markdown between records", path=path, file="data.jsonl", line=2,
           column=1, says="(and the 2 line(s) after it, up to the next record, do not parse either)")
    task = "unknown-" + "t" * 5000
    path = write("task-5000-characters", jsonl({**PIPE, "task": task}))
    expect("task-5000-characters", "a 5,000-character task name: the message is shortened", path=path,
           stage="check", file="data.jsonl", line=1, story="in-1", field="task",
           says=f"({len(f'unknown task {task!r}'):,} characters)")


# ------------------------------------------------------------------------------------------------ controls


def controls() -> None:
    """Valid datasets beside the mistakes: each must pass validate and eval."""
    def control(name: str, file: str, text: str) -> Path:
        path = CONTROLS / name / file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    pair = json.dumps({**PIPE, "storyturn": [TURN0.replace("goes out", "goes out @"), TURN1]}).replace("@", "\\ud83d\\ude00")
    control("escaped-surrogate-pair-and-backslash", "data.jsonl",
            pair + "\n" + json.dumps({**PIPE, "id": "in-2", "source": "a \\ud800 written out"}) + "\n")
    control("big-integers-and-floats", "data.jsonl", jsonl({**CANONICAL, "meta": {
        "max": 2**63 - 1, "min": -(2**63), "uuid": 2**128 - 1, "hundred_digits": 10**100 - 1, "small": 1e-300,
        "big": 1.5e300, "neg": -0.0}}))
    control("feedback-if-words-inside-text", "data.jsonl", jsonl({**PIPE, "storyturn": [TURN0, TURN1.replace(
        "If wrong: Remember, Ana was outside.", "If wrong: Remember: she asked what to do if wrong, and left.")]}))
    control("options-once-each", "data.jsonl", jsonl({**PIPE, "storyturn": [TURN0, TURN1.replace(
        "| Why? |", "| Why? A. she forgot B. she did not see C. she guessed |")]}))
    control("name-like-option-before-list", "data.jsonl", jsonl({**PIPE, "storyturn": [TURN0, TURN1.replace(
        "| Why? |", "| Did Mr. B. Smith see it? A. yes B. no |").replace("Because she did not see Ben move it",
                                                                          "B. no")]}))  # an answer among its options
    hf_control()


def hf_control() -> None:
    """A Hub-style folder with 45 symbolic self-links (its parquet file found once), image_dependent as 1 and 0,
    and a picture whose cell names a file inside the folder (no bytes)."""
    import pyarrow
    import pyarrow.parquet as pq

    folder = CONTROLS / "hf-folder-with-self-links"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "p1.png").write_bytes(png())
    rows = [*hf_rows({"bytes": None, "path": "p1.png"}, image_dependent=1),
            *hf_rows(id="h-2", image_dependent=0)]
    pq.write_table(pyarrow.Table.from_pylist(rows), folder / HF_FILE)
    for n in range(45):
        os.symlink(".", folder / f"again{n}")


def main() -> None:
    for folder in (CASES, CONTROLS, OUTSIDE):
        shutil.rmtree(folder, ignore_errors=True)
    OUTSIDE.mkdir(parents=True)
    (OUTSIDE / "secret.png").write_bytes(png())
    picture_cases()
    hf_cases()
    surrogate_cases()
    number_cases()
    duplicate_key_cases()
    parser_cases()
    error_line_cases()
    controls()
    names = [c["name"] for c in manifest]
    assert len(names) == len(set(names)), "case names must be unique"
    (HERE / "cases.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=True) + "\n")
    print(f"{len(manifest)} malformed cases, {len(list(CONTROLS.iterdir()))} controls in {HERE}")


if __name__ == "__main__":
    main()
