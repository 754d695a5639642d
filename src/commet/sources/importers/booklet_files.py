"""The digital ToM Booklet's published files, read into items: its two markdown scripts and its data file.

``ToM_Booklet_1_Digital.md`` / ``ToM_Booklet_2_Digital.md`` write each item as a numbered heading
(``### 5. False Beliefs - Reality Known``), an ``**Illustration:**`` line, a ``**Script:**`` and
paragraphs: narration, question lines ``**ToMS_2AFC_5.1:** text``, and what the experimenter says
depending on the answer (``- If right: ...``, ``[If he finds it: ... If he doesn't find it: ...]``,
``(If wrong: ...)``). ``tom-booklet-data.js`` holds some of the same items as JavaScript objects
(``const BOOKLET_1_DATA = {...}``) with options and, for some questions, ``correctAnswer``. Both
are read into the same :class:`Item` records, which :mod:`commet.sources.importers.booklet` turns
into StoryTurns with the booklet's answer key.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from commet.sources.importers import base


class BlockKind(str, Enum):
    narration = "narration"  # told to the participant
    question = "question"  # a question line with its id
    preference = "preference"  # the participant's own pick (tom-booklet-data.js writes it as a question)
    conditional = "conditional"  # said depending on the previous answer: right / wrong


@dataclass
class Block:
    """One piece of an item's script, in reading order."""

    kind: BlockKind
    text: str
    line: int | None
    qid: str | None = None
    options: list[str] = field(default_factory=list)  # tom-booklet-data.js: the choices it shows
    answer: str | None = None  # tom-booklet-data.js: its correctAnswer
    why: str | None = None  # tom-booklet-data.js: followUpExplanation ("Why/why not?")
    right: str | None = None  # conditional: said after a right answer
    wrong: str | None = None  # conditional: said after a wrong answer


@dataclass
class Item:
    """One booklet item: a task's story with its questions."""

    file: Path
    line: int | None
    booklet: int
    story: int | None  # booklet 1 tells two stories
    number: str
    title: str
    intro: str = ""  # the introduction of its booklet or story, told before the item
    images: list[str] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    filler: bool = False
    young_excluded: bool = False  # marked * (skipped for children under five)


#: (titles from their first non-blank to the line's end, trailing blanks stripped by the code: a lazy title before
#: ``\s*$`` was quadratic in trailing blanks)
_ITEM_HEADING = re.compile(r"^#{2,3}\s+(\d+(?:\.\d+)?)\.\s+(\S.*)$")
_STORY_HEADING = re.compile(r"^#{1,3}\s+Story\s+(\d+)\s*:\s*(\S.*)$", re.IGNORECASE)
_BOOKLET_HEADING = re.compile(r"^#\s+ToM Booklet\s*#\s*(\d+)", re.IGNORECASE)
_QUESTION_LINE = re.compile(r"^\*\*([A-Za-z][\w.]*?):\*\*\s*(.*)$")
_LABEL_LINE = re.compile(r"^\*\*(Illustration|Script|Introduction|Note)s?:\*\*\s*(.*)$", re.IGNORECASE)
_IF_LINE = re.compile(r"^-\s*If\s+([^:]{1,60}):(.+)$", re.IGNORECASE)  # (what is said is stripped by the code)
#: a picture's file name, tried only from the start of a name (from every character, quadratic in a long word)
_IMAGE_NAME = re.compile(r"(?<![\w.-])[\w.-]+\.(?:png|jpe?g|gif|webp)", re.IGNORECASE)
_NEGATIVE = re.compile(r"n't|\bnot\b|wrong|incorrect", re.IGNORECASE)


def negative(condition: str) -> bool:
    """Whether an "If ...:" condition is the wrong-answer branch ("If wrong", "If he doesn't find it")."""
    return _NEGATIVE.search(condition) is not None


def bracketed_conditional(text: str) -> tuple[str | None, str | None] | None:
    """``[If he finds it: X If he doesn't find it: Y]`` or ``(If wrong: Y)``: the right and wrong texts."""
    stripped = text.strip().rstrip(".").strip()
    if not (stripped[:1] in "[(" and stripped[-1:] in "])" and re.match(r"^[\[(]\s*If\s", stripped)):
        return None
    right = wrong = None
    parts = re.split(r"(?:^|\s)If\s+([^:]{1,60}):\s*", stripped[1:-1])
    for condition, said in zip(parts[1::2], parts[2::2], strict=True):
        if negative(condition):
            wrong = said.strip()
        else:
            right = said.strip()
    return right, wrong


def read_markdown(path: Path) -> list[Item]:
    """The items of one ``ToM_Booklet_N_Digital.md``."""
    text = base.read_text(path)
    booklet = _booklet_number(path, text)
    items: list[Item] = []
    item: Item | None = None
    story: int | None = None
    intro: dict[int | None, list[str]] = {None: []}
    section = ""  # "intro", "item" or "" (material lists and notes after the items)
    paragraph: list[str] = []
    paragraph_line: int | None = None

    def flush() -> None:
        nonlocal paragraph, paragraph_line
        if paragraph:
            joined = " ".join(paragraph).strip()
            if section == "intro":
                intro.setdefault(story, []).append(joined)
            elif section == "item" and item is not None:
                _add_paragraph(item, joined, paragraph_line)
        paragraph, paragraph_line = [], None

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        heading = _BOOKLET_HEADING.match(line) or _STORY_HEADING.match(line) or _ITEM_HEADING.match(line)
        if line.startswith("#"):
            flush()
            if (match := _STORY_HEADING.match(line)) is not None:
                story, section = int(match.group(1)), "intro"
                intro[story] = []
            elif (match := _ITEM_HEADING.match(line)) is not None:
                title = match.group(2).rstrip()
                item = Item(file=path, line=number, booklet=booklet, story=story, number=match.group(1),
                            title=title.rstrip("*").strip(), filler=title.lower().startswith("filler"),
                            young_excluded=title.endswith("*"))
                items.append(item)
                section = "item"
            elif heading is None and line.lstrip("#").strip().lower() == "introduction":
                section = "intro"
            else:
                section, item = "", None
            continue
        if not line or line == "---":
            flush()
            continue
        label = _LABEL_LINE.match(line)
        if label is not None:
            flush()
            if label.group(1).lower() == "illustration":
                if item is not None and section == "item":
                    item.images.extend(_IMAGE_NAME.findall(label.group(2)))
            elif label.group(2):
                paragraph, paragraph_line = [label.group(2)], number
            continue
        question = _QUESTION_LINE.match(line)
        if question is not None or _IF_LINE.match(line):
            flush()
            if section == "item" and item is not None:
                _add_line(item, question, line, number)
            continue
        if not paragraph:
            paragraph_line = number
        paragraph.append(line)
    flush()
    for entry in items:
        entry.intro = clean_intro(intro.get(entry.story) or intro.get(None) or [])
    if not items:
        raise base.source_error(path, None, None, "no booklet items (numbered headings such as '## 5. False "
                                                  "Beliefs - Reality Known') in this file")
    return items


def _booklet_number(path: Path, text: str) -> int:
    for line in text.splitlines():
        match = _BOOKLET_HEADING.match(line.strip())
        if match:
            return int(match.group(1))
    match = re.search(r"Booklet[_ ]?(\d)", path.name, re.IGNORECASE)
    if match:
        return int(match.group(1))
    raise base.source_error(path, 1, "title", "no '# ToM Booklet #N' title and no booklet number in the file name")


def _add_line(item: Item, question: re.Match[str] | None, line: str, number: int) -> None:
    """A question line, or an "- If ...:" line: the variants of an empty question line before it, else
    feedback said after the previous question."""
    if question is not None:
        item.blocks.append(Block(BlockKind.question, question.group(2).strip(), number, qid=question.group(1)))
        return
    match = _IF_LINE.match(line)
    assert match is not None
    condition, said = match.group(1), match.group(2).strip()
    last = item.blocks[-1] if item.blocks else None
    if last is not None and last.kind is BlockKind.question and not last.text.strip("-: "):
        target = last  # "**ToMS_Expl_10.2:**" followed by "- If right: ... - If wrong: ...": two wordings
    elif last is not None and last.kind is BlockKind.conditional and last.line is not None and \
            last.line == number - 1:
        target = last
    else:
        target = Block(BlockKind.conditional, "", number)
        item.blocks.append(target)
    if negative(condition):
        target.wrong = said
    else:
        target.right = said


def _add_paragraph(item: Item, text: str, line: int | None) -> None:
    conditional = bracketed_conditional(text)
    if conditional is not None:
        item.blocks.append(Block(BlockKind.conditional, "", line, right=conditional[0], wrong=conditional[1]))
    elif item.blocks and item.blocks[-1].kind is BlockKind.question and item.blocks[-1].line == (line or 0) - 1:
        item.blocks[-1].text = f"{item.blocks[-1].text} {text}".strip()  # a question line wrapped onto the next
    else:
        item.blocks.append(Block(BlockKind.narration, text, line))


#: what an introduction keeps: not the questions to the child, nor the grade the experimenter fills in
_GRADE = re.compile(r"\[\s*x\s*\]\s*grade|\bX grade|\{grade\}|\[[^\[\]]*grade[^\[\]]*\]", re.IGNORECASE)


def clean_intro(paragraphs: list[str]) -> str:
    """The booklet's (or story's) introduction as narration: sentences that ask the child something are left out,
    and so is what names the child's grade ("Well these kids are in [x] grade, just like you, and their teacher, Mr.
    Cook, just told ..." keeps "Their teacher, Mr. Cook, just told ..."). Each item is its own conversation, told
    after this introduction."""
    kept = []
    for sentence in sentences(" ".join(paragraphs)):
        grade = _GRADE.search(sentence)
        if grade is not None:
            rest = re.search(r",\s+and\s+(\S.*)$", sentence[grade.end():])
            sentence = rest.group(1)[:1].upper() + rest.group(1)[1:] if rest else ""
        if sentence and not sentence.rstrip().endswith("?"):
            kept.append(sentence)
    return " ".join(kept).strip()


_ABBREVIATION = re.compile(r"\b(?:Mr|Mrs|Ms|Dr|St)\.$")
_SENTENCE_END = re.compile(r"[.!?][\"'\u201d\])]?(?=\s+[\"'\u201c(\[]?[A-Z0-9])")


def sentences(text: str) -> list[str]:
    """Sentences of a paragraph, each with its closing mark (and a closing quote or bracket)."""
    text = text.strip()
    found, start = [], 0
    for end in _SENTENCE_END.finditer(text):
        if _ABBREVIATION.search(text, 0, end.end()):  # "Mr. Cook" is one sentence
            continue
        found.append(text[start:end.end()].strip())
        start = end.end()
    found.append(text[start:].strip())
    return [s for s in found if s]


# -- tom-booklet-data.js ------------------------------------------------------------------------------------

#: (a string or comment left open runs to its line's or the text's end: one that needed its close was tried again
#: from every quote, quadratic; an open string is then refused as a bad string literal)
_TOKEN = re.compile(r"""(?P<space>\s+)|(?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))|(?P<string>"(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?)
                        |(?P<word>[A-Za-z_$][\w$]*)|(?P<number>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)|(?P<punct>[{}\[\]:,;=.])""",
                    re.VERBOSE | re.DOTALL)
_DECLARATION = re.compile(r"\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?=[\[{])")


def read_data_js(path: Path) -> list[Item]:
    """The items of ``tom-booklet-data.js`` (``BOOKLET_1_DATA``, ``BOOKLET_2_DATA``; empty item lists skipped)."""
    text = base.read_text(path)
    items: list[Item] = []
    for match in _DECLARATION.finditer(text):
        value = _js_value(text, match.end(), path)
        number = re.search(r"BOOKLET_?(\d)", match.group(1))
        if number is None or not isinstance(value, dict):
            continue
        line = text.count("\n", 0, match.start()) + 1
        items.extend(_js_items(path, text, int(number.group(1)), value, line))
    if not items:
        raise base.source_error(path, None, None, "no booklet items (const BOOKLET_1_DATA = {...}) in this file")
    return items


def _js_value(text: str, start: int, path: Path) -> object:
    """The JavaScript object or array literal starting at ``start``, as JSON (keys quoted, trailing commas and
    comments dropped); what is not a literal is a located error."""
    out: list[str] = []
    depth = 0
    position = start
    while position < len(text):
        match = _TOKEN.match(text, position)
        line = text.count("\n", 0, position) + 1
        if match is None:
            raise base.source_error(path, line, None, f"cannot read this JavaScript literal at {text[position:position + 20]!r}")
        position = match.end()
        kind, token = match.lastgroup, match.group()
        if kind in ("space", "comment"):
            continue
        if kind == "string":
            escapes = len(token[:-1]) - len(token[:-1].rstrip("\\"))  # backslashes before the last character
            if len(token) < 2 or token[-1] != token[0] or escapes % 2:
                raise base.source_error(path, line, None, f"a string left open: {token[:40]!r}")
            body = token[1:-1]
            if token[0] == "'":
                body = body.replace("\\'", "'").replace('"', '\\"')
            try:
                out.append(json.dumps(json.loads(f'"{body}"')))
            except json.JSONDecodeError:
                raise base.source_error(path, line, None, f"bad string literal {token[:40]!r}") from None
        elif kind == "word":
            following = _TOKEN.match(text, position)
            while following is not None and following.lastgroup in ("space", "comment"):
                following = _TOKEN.match(text, following.end())
            if following is not None and following.group() == ":":
                out.append(json.dumps(token))
            elif token in ("true", "false", "null"):
                out.append(token)
            else:
                raise base.source_error(path, line, None, f"unexpected JavaScript name {token!r} in a data literal")
        elif token in "]}":
            if out and out[-1] == ",":
                out.pop()  # trailing comma
            out.append(token)
            depth -= 1
            if depth == 0:
                break
        elif token in "[{":
            out.append(token)
            depth += 1
        else:
            out.append(token)
    try:
        return json.loads("".join(out))
    except json.JSONDecodeError as exc:
        raise base.source_error(path, text.count("\n", 0, start) + 1, None, f"cannot read this literal: {exc.msg}") from None


def _js_items(path: Path, text: str, booklet: int, data: dict[str, object], line: int) -> list[Item]:
    intro = data.get("introduction")
    intro_text = clean_intro([str(intro.get("text") or "")]) if isinstance(intro, dict) else ""
    groups: list[tuple[int | None, object]] = []
    for key, value in data.items():
        named = re.fullmatch(r"story(\d+)", key)
        if named is not None and isinstance(value, dict):
            groups.append((int(named.group(1)), value.get("items")))
        elif key == "items":
            groups.append((None, value))
    items: list[Item] = []
    for story, entries in groups:
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict):
                raise base.source_error(path, line, "items", "expected item objects")
            items.append(_js_item(path, text, booklet, story, entry, intro_text))
    return items


def _js_item(path: Path, text: str, booklet: int, story: int | None, entry: dict[str, object], intro: str) -> Item:
    item_id = str(entry.get("id") or "")
    line = base.json_line(text, f'"{item_id}"') if item_id else None
    title = str(entry.get("type") or "")
    item = Item(file=path, line=line, booklet=booklet, story=story, number=str(entry.get("number") or item_id),
                title=title, intro=intro, images=_IMAGE_NAME.findall(str(entry.get("illustration") or "")),
                filler=entry.get("scored") is False or title.lower().startswith("filler"),
                young_excluded=bool(entry.get("excludeForYoung")))
    for paragraph in re.split(r"\n\s*\n", str(entry.get("script") or "")):
        if paragraph.strip():
            _add_paragraph(item, " ".join(paragraph.split()), None)
    questions = entry.get("questions")
    for question in questions if isinstance(questions, list) else []:
        if not isinstance(question, dict) or not isinstance(question.get("text"), str):
            raise base.source_error(path, line, "questions", "a question needs its 'text'", story=item_id)
        qid = str(question.get("id") or "")
        kind = str(question.get("type") or "")
        options = [str(o) for o in question.get("options") or []]
        where = base.json_line(text, f'"{qid}"') if qid else line
        if kind in ("preference", "free_response") or "_Pref_" in qid:
            item.blocks.append(Block(BlockKind.preference, question["text"].strip(), where, qid=qid, options=options))
            continue
        answer = question.get("correctAnswer")
        item.blocks.append(Block(BlockKind.question, question["text"].strip(), where, qid=qid, options=options,
                                 answer=str(answer) if answer is not None else None,
                                 why=str(question.get("followUpExplanation") or "") or None))
    return item
