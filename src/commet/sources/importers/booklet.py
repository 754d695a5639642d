"""The ToM Booklet Task (Richardson et al. 2018), from the published files of its digital version.

SOURCE is the folder of the digital implementation (its two ``ToM_Booklet_N_Digital.md`` scripts,
else ``tom-booklet-data.js``), or one of those files. Each scored item becomes a StoryTurn of the
18 booklet tasks (shared/spec/tasks.md) with the paper's reporting category; filler items are
skipped. The files give the questions but not, save a few, the answers: the answer key ships with
CoMMET (``booklet_key.json``, data) and names each item's task. The booklet's own scripting is
kept: the participant's pick of a preference question is a branch ("You like apples? Henry also
likes apples better" is feedback keyed by that answer), what the experimenter says after a right or
a wrong answer is right/wrong feedback, narration between questions is story text, and
illustrations found beside the files are the turns' pictures. Questions marked "(not included in
score)" or "(not coded)", stage directions and the closing lines after an item's last question are
left out. See docs/importers.md for every choice.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from commet.format.model import AnswerFeedback, Feedback, Option, Rubric
from commet.format.pictures import MAX_IMAGE_BYTES
from commet.sources.bounded import InputFileError, read_regular_file
from commet.sources.importers import base
from commet.sources.importers.booklet_files import (
    Block,
    BlockKind,
    Item,
    read_data_js,
    read_markdown,
    sentences,
)
from commet.taxonomy import BOOKLET, Task, get_task

#: the booklet's own 18 tasks and the paper's categories: not declared in dataset.json, as for CoMMET's own data
TAXONOMY = BOOKLET
MARKDOWN_FILES = ("ToM_Booklet_1_Digital.md", "ToM_Booklet_2_Digital.md")
DATA_FILE = "tom-booklet-data.js"
#: the participant's pick, as the two files write it where the experimenter fills it in
_PICKED = re.compile(r"\[\s*that one\s*\]|\[\s*\]|\{childChoice\}", re.IGNORECASE)
_OTHER = re.compile(r"\[\s*(?:the\s+)?other one\s*\]|\{opposite\}", re.IGNORECASE)
_UNSCORED = re.compile(r"\((?:not included in (?:the )?score|not coded)[^)]*\)\.?", re.IGNORECASE)
_TRAILING_WHY = re.compile(r"^(?P<asked>.*\?[\]\)]?)\s+(?P<why>Why\??\s*/\s*[Ww]hy not\??|Why( not)?\?)$", re.DOTALL)
#: (no blanks around it in the pattern: they are stripped by the code; two quantifiers that could both take them
#: made a long run of blanks quadratic)
_INLINE_IF = re.compile(r"\(If [^:]{1,80}:(?P<said>[^)]*)\)\.?", re.IGNORECASE)
_YOUNG_MARK = re.compile(r"(?<=[.!?\"'\u201d\w])\*+(?=\s|$)")


def variant(source: Path, options: base.ImportOptions) -> str | None:
    """One booklet's file is a dataset of its own (``booklet-2-...``); the folder holds both."""
    match = re.search(r"Booklet_(\d)", source.name)
    return match.group(1) if source.is_file() and match else None


def read(source: Path, options: base.ImportOptions) -> list[base.SourceStory]:
    items = [item for path in _files(source) for item in _read(path)]
    key = answer_key()
    stories = [_story(item, key, source) for item in items if not item.filler]
    return [story for story in stories if story.questions]


def _files(source: Path) -> list[Path]:
    if source.is_file():
        return [source]
    markdown = [source / name for name in MARKDOWN_FILES if (source / name).is_file()]
    if markdown:
        return markdown
    if (source / DATA_FILE).is_file():
        return [source / DATA_FILE]
    raise base.source_error(source, None, None, f"no {' or '.join(MARKDOWN_FILES)} and no {DATA_FILE} in this folder")


def _read(path: Path) -> list[Item]:
    if path.suffix.lower() == ".js":
        return read_data_js(path)
    if path.suffix.lower() in (".md", ".markdown"):
        return read_markdown(path)
    raise base.source_error(path, None, None, f"expected {' or '.join(MARKDOWN_FILES)} or {DATA_FILE}")


@dataclass(frozen=True)
class QuestionKey:
    """What a right answer to one question is (an entry of ``booklet_key.json``)."""

    answer: str | None = None
    options: tuple[str, ...] = ()  # shown with the question
    candidates: tuple[str, ...] = ()  # judge-only: the closed set an open control question's answer is one of
    branches: str | None = None  # "same" or "opposite": the answer follows the participant's pick
    rubric: Rubric | None = None
    why: QuestionKey | None = None  # the question's trailing "Why?", a turn of its own

    @classmethod
    def parse(cls, raw: dict[str, object]) -> QuestionKey:
        def strings(name: str) -> tuple[str, ...]:
            value = raw.get(name)
            return tuple(str(v) for v in value) if isinstance(value, list) else ()
        rubric, why, answer = raw.get("rubric"), raw.get("why"), raw.get("answer")
        return cls(answer=str(answer) if answer is not None else None, options=strings("options"),
                   candidates=strings("candidates"), branches=str(raw["branches"]) if raw.get("branches") else None,
                   rubric=Rubric.model_validate(rubric) if isinstance(rubric, dict) else None,
                   why=cls.parse(why) if isinstance(why, dict) else None)


@dataclass(frozen=True)
class KeyItem:
    """One item of the answer key: its task, its preference question (if any) and its questions' answers."""

    booklet: int
    number: str
    task: Task
    questions: dict[str, QuestionKey]
    preference: dict[str, list[str]] | None = None
    picture: bool = False


@cache
def answer_key() -> dict[str, KeyItem]:
    """Question id -> the key item it belongs to (``booklet_key.json``)."""
    raw = json.loads(resources.files(__package__).joinpath("booklet_key.json").read_text("utf-8"))
    found: dict[str, KeyItem] = {}
    for entry in raw["items"]:
        item = KeyItem(booklet=entry["booklet"], number=str(entry["number"]), task=get_task(entry["task"]),
                       questions={qid: QuestionKey.parse(spec) for qid, spec in entry["questions"].items()},
                       preference=entry.get("preference"), picture=bool(entry.get("picture")))
        found.update(dict.fromkeys(item.questions, item))
    return found


def _story(item: Item, key: dict[str, KeyItem], source: Path) -> base.SourceStory:
    ids = [block.qid for block in item.blocks if block.kind is BlockKind.question and block.qid]
    entry = next((key[qid] for qid in ids if qid in key), None)
    where = f"item {item.number} ({item.title})"
    if entry is None:
        raise base.source_error(item.file, item.line, "questions", f"{where}: none of its questions "
                                f"({', '.join(ids) or 'no question ids'}) is in the booklet's answer key")
    story_key = f"b{item.booklet}-" + (f"s{item.story}-" if item.story else "") + item.number.replace(".", "_")
    builder = _Builder(item, entry, story_key)
    questions = builder.questions()
    image = _picture(item, source)
    pictures: dict[str, bytes] = {}
    if image is not None and questions:
        questions[0].image = image[0]
        pictures[image[0]] = image[1]
    return base.SourceStory(
        key=story_key, task=entry.task, story=item.intro, questions=questions, line=item.line, scripted=True,
        image_dependent=entry.picture and image is not None, pictures=pictures,
        meta={"booklet": item.booklet, "item": item.number, "title": item.title, "story_number": item.story,
              "illustrations": item.images, "picture_needed": entry.picture,
              "skipped_under_five": item.young_excluded, "file": item.file.name})


def _picture(item: Item, source: Path) -> tuple[str, bytes] | None:
    """The item's first illustration, when the file is beside the script (or in its illustrations folder)."""
    folder = source if source.is_dir() else source.parent
    for name in item.images[:1]:
        for path in (folder / name, folder / f"ToM_Booklet_{item.booklet}_illustrations" / name):
            if path.is_file():  # a regular file within the picture size limit, else a located error
                try:
                    return name, read_regular_file(path, max_bytes=MAX_IMAGE_BYTES, what="picture")
                except InputFileError as exc:
                    raise base.source_error(path, None, "image", str(exc)) from None
    return None


class _Builder:
    """Turns one item's blocks into questions with their narration, feedback and answers."""

    def __init__(self, item: Item, entry: KeyItem, story_key: str):
        self.item, self.entry, self.story_key = item, entry, story_key
        self.where = f"item {item.number} ({item.title})"
        self.picks: list[str] = []  # the preference question's options, its branches
        self.mode = "same"  # whether the next question's branches follow the pick ("same") or not ("opposite")
        self.keyed: Feedback | None = None  # the next question's lead-in, by pick

    def fail(self, line: int | None, field_name: str, message: str) -> Exception:
        return base.source_error(self.item.file, line or self.item.line, field_name, f"{self.where}: {message}",
                                 story=self.story_key)

    def questions(self) -> list[base.SourceQuestion]:
        blocks = list(self.item.blocks)
        if self.entry.preference is not None:
            blocks = self._preference(blocks)
        blocks = [b for b in blocks if not (b.kind is BlockKind.narration and not _said(b.text))]
        out: list[base.SourceQuestion] = []
        told: list[str] = []
        feedback: Feedback | None = None
        for block in blocks:
            if block.kind is BlockKind.narration:
                told.append(_said(block.text))
            elif block.kind is BlockKind.conditional:
                feedback = _merge(feedback, Feedback(right=_clean_or_none(block.right),
                                                     wrong=_clean_or_none(block.wrong)))
            elif block.kind is BlockKind.question and not _UNSCORED.search(block.text):
                asked = self._asked(block)
                asked[0].story = "\n\n".join(t for t in told if t)
                asked[0].feedback = _merge(feedback, asked[0].feedback)
                out.extend(asked)
                told, feedback = [], None
        return out

    # -- the participant's own pick ------------------------------------------------------------------------
    def _preference(self, blocks: list[Block]) -> list[Block]:
        """Blocks with the preference question made a question of its own and the next question's lead-in (with
        the pick filled in) made feedback keyed by the pick."""
        assert self.entry.preference is not None
        target = next((b for b in blocks if b.kind is BlockKind.question and b.qid in self.entry.questions
                       and self.entry.questions[b.qid].branches), None)
        if target is None or target.qid is None:
            raise self.fail(None, "questions", "the answer key's branching question is not in the file")
        at = blocks.index(target)
        explicit = next((i for i in range(at) if blocks[i].kind is BlockKind.preference), None)
        if explicit is not None:  # tom-booklet-data.js writes the preference question as a question
            question_text = blocks[explicit].text
            head = blocks[:explicit] + blocks[explicit + 1:at]
            lead = sentences(target.text)
        else:  # the last "x or y?" sentence before the pick is filled in, in the narration or the line itself
            pieces = [(i, j, s) for i in range(at) if blocks[i].kind is BlockKind.narration
                      for j, s in enumerate(sentences(blocks[i].text))]
            pieces += [(at, j, s) for j, s in enumerate(sentences(target.text))]
            filled = next((n for n, (_, _, s) in enumerate(pieces) if _PICKED.search(s) or _OTHER.search(s)),
                          len(pieces))
            asked = [n for n in range(filled) if pieces[n][2].rstrip().endswith("?") and " or " in pieces[n][2]]
            if not asked:
                raise self.fail(target.line, "preference", f"no preference question ('... x or y?') before {target.qid}")
            index, position, question_text = pieces[asked[-1]]
            earlier = sentences(blocks[index].text)[:position] if index < at else []
            head = blocks[:index] + ([Block(BlockKind.narration, " ".join(earlier), blocks[index].line)]
                                     if earlier else [])
            lead = [s for (i, j, s) in pieces[asked[-1] + 1:]]
            head += [b for b in blocks[index + 1:at] if b.kind is not BlockKind.narration]
        final, lead = _final_question(lead)
        if not final:
            raise self.fail(target.line, target.qid, "no question after the pick is filled in")
        picks, fill = self.entry.preference["options"], self.entry.preference["fill"]
        keyed = [AnswerFeedback(answer=pick, text=_fill(" ".join(lead), fill, i)) for i, pick in enumerate(picks)]
        self.keyed = Feedback(by_answer=keyed) if all(k.text for k in keyed) else None
        self.picks, self.mode = list(picks), str(self.entry.questions[target.qid].branches)
        asked_block = Block(BlockKind.question, question_text, target.line, qid=f"{target.qid}#preference")
        answer_block = Block(BlockKind.question, " ".join(final), target.line, qid=target.qid)
        return [*head, asked_block, answer_block, *blocks[at + 1:]]

    # -- one question line ---------------------------------------------------------------------------------
    def _asked(self, block: Block) -> list[base.SourceQuestion]:
        qid = block.qid or ""
        if qid.endswith("#preference"):
            return [base.SourceQuestion(text=_clean(block.text), answer=self.picks[0], branches=list(self.picks),
                                        options=[Option(text=p) for p in self.picks], line=block.line,
                                        meta={"question_id": qid.removesuffix("#preference"),
                                              "question_type": "preference"})]
        spec = self.entry.questions.get(qid)
        if spec is None:
            if not (block.options and block.answer):
                raise self.fail(block.line, qid or "question", f"question {qid!r} is not in the booklet's answer key")
            spec = QuestionKey(answer=block.answer, options=tuple(block.options))
        text, feedback = self._wordings(block)
        why = block.why
        split = _TRAILING_WHY.match(text)
        if split and spec.why is not None:
            text, why = split.group("asked").strip(), split.group("why")
        if spec.branches:
            return [self._branch_question(block, text, spec)]
        first = self._question(text, spec, qid, block.line, _kind(qid))
        first.feedback = feedback
        if why and spec.why is not None:
            return [first, self._question(why, spec.why, f"{qid}#why", block.line, "explanation")]
        return [first]

    def _wordings(self, block: Block) -> tuple[str, Feedback | None]:
        """The question as asked, and the feedback its own line carries: a line written in two wordings (after a
        right and after a wrong answer) keeps what both ask; an inline "(If ...: ...)" is the wrong wording."""
        if block.right is not None or block.wrong is not None:
            right, wrong = sentences(_clean(block.right or "")), sentences(_clean(block.wrong or ""))
            asked = [s for s in (right or wrong) if s.rstrip().endswith("?")][-1:] or (right or wrong)[-1:]
            strip = [s for s in right if s not in asked], [s for s in wrong if not s.rstrip().endswith("?")]
            return " ".join(asked), Feedback(right=" ".join(strip[0]) or None, wrong=" ".join(strip[1]) or None)
        text = block.text
        inline = _INLINE_IF.search(text)
        feedback = None
        if inline is not None:
            said = [s for s in sentences(inline.group("said")) if not s.rstrip().endswith("?")]
            feedback = Feedback(wrong=" ".join(said)) if said else None
            text = text[:inline.start()].rstrip() + text[inline.end():]
        return _clean(text), feedback

    def _branch_question(self, block: Block, text: str, spec: QuestionKey) -> base.SourceQuestion:
        options = list(spec.options or self.picks)
        if len(options) != len(self.picks):
            raise self.fail(block.line, block.qid or "question", "the branching question needs as many options as "
                                                                 "the preference question")
        answers = options if self.mode == "same" else list(reversed(options))
        return base.SourceQuestion(text=_clean(text), answer=answers[0], branches=answers, line=block.line,
                                   options=[Option(text=o) for o in options], feedback=self.keyed,
                                   meta={"question_id": block.qid, "question_type": "forced_choice",
                                         "branches": self.mode})

    def _question(self, text: str, spec: QuestionKey, qid: str, line: int | None,
                  kind: str) -> base.SourceQuestion:
        answer = spec.answer
        if not answer or not answer.strip():
            raise self.fail(line, qid, "the answer key gives no answer")
        options = [Option(text=o) for o in spec.options]
        if options and answer not in spec.options:
            raise self.fail(line, qid, f"answer {answer!r} is not one of the options")
        return base.SourceQuestion(text=text, answer=answer, line=line, options=options,
                                   candidates=list(spec.candidates), rubric=spec.rubric,
                                   meta={"question_id": qid, "question_type": kind})


def _kind(qid: str) -> str:
    """The booklet's question code: 2AFC, 2AFCImp, EXPL/Expl or Cont."""
    code = qid.split("_")[1].lower() if qid.count("_") >= 2 else ""
    return {"2afc": "forced_choice", "2afcimp": "implicit", "expl": "explanation", "cont": "control"}.get(code, code)


def _final_question(said: list[str]) -> tuple[list[str], list[str]]:
    """The question that closes a line (its trailing sentences ending in "?", without the pick) and the lead-in
    before it; "Henry also likes [that one] better, so which one will Henry choose?" is split at ", so"."""
    final: list[str] = []
    lead = list(said)
    while lead and lead[-1].rstrip().endswith("?") and not (_PICKED.search(lead[-1]) or _OTHER.search(lead[-1])):
        final.insert(0, lead.pop())
    if not final and lead and ", so " in lead[-1]:
        head, tail = lead[-1].rsplit(", so ", 1)
        lead[-1] = head.rstrip(",") + "."
        final = [f"So {tail}"]
    return final, lead


def _fill(text: str, fill: list[str], pick: int) -> str:
    """The lead-in with the participant's pick (and the other one) written in."""
    text = _PICKED.sub(fill[pick], text)
    return _clean(_OTHER.sub(fill[1 - pick], text))


def _said(text: str) -> str:
    """What of a narration paragraph the participant is told: not an admin note "(...)" or a stage direction in
    brackets, not a question the booklet does not score ("... How did you know? (Not coded- ...)"), and nothing of
    a paragraph that only asks (the scored questions have ids). Rhetorical questions inside the story stay."""
    stripped = text.strip()
    if (stripped[:1] == "(" and stripped.rstrip(".")[-1:] == ")") or \
            (stripped[:1] == "[" and stripped.rstrip(".")[-1:] == "]"):
        return ""
    said: list[str] = []
    for sentence in sentences(stripped):
        if _UNSCORED.search(sentence):  # the mark, with the questions it is about
            while said and said[-1].rstrip().endswith("?"):
                said.pop()
            sentence = _UNSCORED.sub("", sentence).strip()
            if not sentence or sentence.endswith("?"):
                continue
        if re.fullmatch(r"\([^()]*\)\.?", sentence.strip()):  # a note to the experimenter on its own
            continue
        said.append(sentence)
    if all(_clean(s).rstrip().rstrip("])").endswith("?") for s in said):
        return ""
    return _clean(" ".join(said), narration=True)


def _clean(text: str, *, narration: bool = False) -> str:
    """Published text without the marks meant for the experimenter: "[image]", the under-five asterisks; brackets
    around a choice list in a question are kept as text ("[Will she feel happy or sad?]")."""
    text = re.sub(r"\[\s*image\s*\]", " ", text, flags=re.IGNORECASE)
    text = _YOUNG_MARK.sub("", text)
    if not narration:
        text = _unbracketed(text)
    return " ".join(text.split())


def _unbracketed(text: str) -> str:
    """``text`` with each "[...]" replaced by what it holds (a "[" and the first "]" after it), in one pass: the
    pattern that did it looked for a "]" from every "[", quadratic in a run of "[" without one."""
    pieces, at = [], 0
    while (opening := text.find("[", at)) >= 0 and (closing := text.find("]", opening)) >= 0:
        pieces += [text[at:opening], text[opening + 1:closing]]
        at = closing + 1
    return "".join(pieces) + text[at:]


def _clean_or_none(text: str | None) -> str | None:
    return _clean(text) or None if text else None


def _merge(first: Feedback | None, second: Feedback | None) -> Feedback | None:
    """Feedback said in two places before one question (a line after the previous question, the question's own)."""
    if first is None or first.is_empty():
        return second
    if second is None or second.is_empty():
        return first
    def join(a: str | None, b: str | None) -> str | None:
        return " ".join(x for x in (a, b) if x) or None

    return Feedback(right=join(first.right, second.right), wrong=join(first.wrong, second.wrong),
                    by_answer=first.by_answer or second.by_answer, always=join(first.always, second.always))
