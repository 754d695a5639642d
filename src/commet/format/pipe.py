"""The paper's pipe format, both ways (spec section 2).

A turn is ``story | feedback | question | image | answer``; a StoryTurn is a list of such
strings. Real files are messy, so the reader:

* splits on ``|`` outside double quotes (straight or curly), falling back to a plain split
  when quotes are unbalanced, and strips whitespace around every field;
* parses feedback written as ``If right: ...; If wrong: ...`` or
  ``If the previous answer is A: ...; If the previous answer is B: ...``;
* decides whether semicolons in an answer separate BRANCHES or sit inside one explanation
  from the story's structure (see :func:`decide_branches`), never from the character alone,
  and reports what stays ambiguous as a warning.

Image ids are kept as written; :class:`commet.format.dataset.Dataset` resolves them to files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pydantic import ValidationError

from commet.format.model import AnswerFeedback, Feedback, Option, StoryTurn, Turn
from commet.format.problems import FormatError, Problem
from commet.text import labelled_options

FIELDS = ("story", "feedback", "question", "image", "answer")
_QUOTE_PAIRS = {'"': '"', "\u201c": "\u201d"}


def split_outside_quotes(text: str, sep: str) -> list[str]:
    """Split ``text`` on ``sep`` where it is not inside a double-quoted span."""
    parts: list[str] = []
    current: list[str] = []
    closing: str | None = None
    for char in text:
        if closing is not None:
            if char == closing:
                closing = None
        elif char in _QUOTE_PAIRS:
            closing = _QUOTE_PAIRS[char]
        elif char == sep:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    if closing is not None:  # unbalanced quotes: the quote-aware split is meaningless
        return text.split(sep)
    return parts


_PRINTED_SEPARATOR = re.compile(r'["\u201d]\s*,\s*["\u201c]')


def printed_turns(text: str) -> list[str] | None:
    """The turn strings of a StoryTurn as the paper prints it (Table 13), or None when it is not that.

    The paper prints a StoryTurn as quoted turns separated by commas, ``"turn", "turn"``, with
    quotes inside the story text left unescaped, so it is not JSON. A separator ``", "`` is taken
    as the end of a turn only where the text before it holds a whole turn (four ``|``), so a quoted
    remark inside a story ("...," she said, "...") stays in its turn.
    """
    body = text.strip()
    if body.startswith("[") and body.endswith("]"):
        body = body[1:-1].strip()
    if len(body) < 2 or body[0] not in "\"\u201c" or body[-1] not in "\"\u201d":
        return None
    body = body[1:-1]
    turns: list[str] = []
    current = ""
    start = 0
    for match in _PRINTED_SEPARATOR.finditer(body):
        candidate = current + body[start:match.start()]
        if candidate.count("|") == len(FIELDS) - 1:
            turns.append(candidate)
            current = ""
        else:
            current = candidate + body[match.start():match.end()]
        start = match.end()
    turns.append(current + body[start:])
    return turns if all(turn.count("|") == len(FIELDS) - 1 for turn in turns) else None


def split_turn_fields(text: str) -> list[str] | None:
    """The five stripped fields of one pipe turn, or None when they cannot be found."""
    for fields in (split_outside_quotes(text, "|"), text.split("|")):
        if len(fields) == len(FIELDS):
            return [f.strip() for f in fields]
    return None


#: (the answer starts with a non-blank: blanks before it that either side could take made a long run of them
#: quadratic)
_FEEDBACK_MARKER = re.compile(
    r"(?i)(?:^|(?<=[\s;.!?]))if\s+(?:"
    r"(?P<rw>right|wrong|correct|incorrect)"
    r"|(?:the\s+)?(?:previous\s+)?(?:answer|choice)\s+(?:is|was)\s+(?P<ans>[^:;\s][^:;]{0,79}?)"
    r")\s*:"
)


#: a marker where a branch marker starts (text start, after ';' or a sentence end) that lacks its colon:
#: "If wrong Remember ..." would glue one branch's text onto another's
_MARKER_WITHOUT_COLON = re.compile(
    r"(?i)(?:^|(?<=[;.!?]))[ \t]*(?P<marker>if\s+(?:(?:right|wrong|correct|incorrect)\b(?![ \t]*:)"
    r"|(?:the\s+)?previous\s+(?:answer|choice)\s+(?:is|was)\b(?![^:;]{0,80}:)))"
)


def _missing_colon(text: str) -> str | None:
    """The first branch marker in ``text`` written without its colon, or None."""
    match = _MARKER_WITHOUT_COLON.search(text)
    return match.group("marker") if match else None


def parse_feedback(text: str) -> Feedback | None:
    """Structured feedback from its pipe text; unconditional text becomes ``always``.

    Raises ValueError where the text cannot be read for sure: a branch given twice (``If right: A;
    If right: B``, or one previous answer keyed twice, as written or in another case), which would
    drop or shadow one of the texts, and a branch marker without its colon, which would glue one
    branch's text onto another's.
    """
    text = text.strip()
    if not text:
        return None
    matches = list(_FEEDBACK_MARKER.finditer(text))
    feedback = Feedback()
    head = text[: matches[0].start()] if matches else text
    head = head.strip().rstrip(";").strip()
    if head:
        feedback.always = head
    keyed: dict[str, str] = {}
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        body = text[match.end() : end].strip().rstrip(";").strip()
        if match.group("rw"):
            kind = "right" if match.group("rw").lower() in ("right", "correct") else "wrong"
            if getattr(feedback, kind) is not None:
                raise ValueError(f"'If {kind}' is given twice ({getattr(feedback, kind)[:40]!r} and {body[:40]!r}): "
                                 "one of the texts would be dropped")
            setattr(feedback, kind, body)
        else:
            answer = match.group("ans").strip().strip("\"'\u201c\u201d").strip()
            key = _norm(answer)
            if key in keyed:
                also = "" if keyed[key] == answer else f" (also as {keyed[key]!r})"
                raise ValueError(f"feedback for the previous answer {answer!r} is given twice{also}: "
                                 "which text to show would be a guess")
            keyed[key] = answer
            feedback.by_answer.append(AnswerFeedback(answer=answer, text=body))
    for part in (head, *(text[m.end():] for m in matches)):
        marker = _missing_colon(part)
        if marker is not None:
            write = f"{marker}: ..." if "previous" not in marker.lower() else f"{marker} ANSWER: ..."
            raise ValueError(f"feedback marker {marker!r} without its colon: write '{write}' (read as it is, "
                             "its text would be glued onto another branch's)")
    return feedback


def format_feedback(feedback: Feedback | None) -> str:
    """The pipe text of structured feedback (inverse of :func:`parse_feedback`)."""
    if feedback is None or feedback.is_empty():
        return ""
    pieces: list[str] = []
    if feedback.always:
        pieces.append(feedback.always)
    if feedback.right is not None:
        pieces.append(f"If right: {feedback.right}")
    if feedback.wrong is not None:
        pieces.append(f"If wrong: {feedback.wrong}")
    pieces.extend(f"If the previous answer is {fb.answer}: {fb.text}" for fb in feedback.by_answer)
    return "; ".join(pieces)


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9 ]+", "", text.lower()).strip()


def _looks_like_branch(part: str) -> bool:
    """A part that could be an answer of its own: it does not continue a sentence ("because ...", "she ...")."""
    return bool(part) and not part[0].islower() and not part.lower().startswith("because")


def _looks_like_option(part: str) -> bool:
    return _looks_like_branch(part) and len(part.split()) <= 5


@dataclass
class BranchDecision:
    """Answers per turn after deciding what each semicolon means, plus what stayed ambiguous."""

    answers: list[list[str]]
    notes: list[tuple[int, str]] = field(default_factory=list)  # (turn, message) warnings


def decide_branches(raw_answers: list[str], questions: list[str], feedbacks: list[Feedback | None]) -> BranchDecision:
    """Decide, for a whole story, which semicolons separate branches.

    A turn's semicolon-separated parts are branches when they look like short options and the
    story corroborates it: the next turn's feedback is keyed by those answers, another turn
    has the same number of option-like parts, or the question names the options. Parts that
    continue a sentence (lower-case start, "because ...") are one explanatory answer.
    """
    parts = [[p.strip() for p in split_outside_quotes(a, ";") if p.strip()] for a in raw_answers]
    option_like = {k: len(p) > 1 and all(_looks_like_option(x) for x in p) for k, p in enumerate(parts)}
    branch_like = {k: len(p) > 1 and all(_looks_like_branch(x) for x in p) for k, p in enumerate(parts)}
    count_votes: dict[int, int] = {}  # how many turns have this many branch-like parts
    for k, p in enumerate(parts):
        if branch_like[k]:
            count_votes[len(p)] = count_votes.get(len(p), 0) + 1

    decision = BranchDecision(answers=[])
    for k, p in enumerate(parts):
        if len(p) <= 1:
            decision.answers.append([raw_answers[k].strip()] if raw_answers[k].strip() else [])
            continue
        next_feedback = feedbacks[k + 1] if k + 1 < len(feedbacks) else None
        keyed = {_norm(fb.answer) for fb in next_feedback.by_answer} if next_feedback else set()
        keyed_match = bool(keyed) and {_norm(x) for x in p} <= keyed
        named_in_question = all(_norm(x) and _norm(x) in _norm(questions[k]) for x in p)
        shared_count = count_votes.get(len(p), 0) >= 2
        if keyed_match or (option_like[k] and (shared_count or named_in_question)):
            decision.answers.append(p)
        elif option_like[k]:
            decision.answers.append(p)
            decision.notes.append((k, f"treated {len(p)} semicolon-separated parts as branches, but no other "
                                      "turn, feedback or the question corroborates it"))
        elif branch_like[k] and shared_count:  # long options, but another turn's branches line up with them
            decision.answers.append(p)
        else:
            decision.answers.append([raw_answers[k].strip()])
            if branch_like[k]:
                decision.notes.append((k, f"{len(p)} semicolon-separated parts, some longer than five words, read "
                                          "as one answer: no other turn or feedback lines up with them as branches; "
                                          "check whether they were meant as branches"))
            elif all(_looks_like_option(x) for x in p[1:]) and not p[0].lower().startswith("because"):
                decision.notes.append((k, "semicolons read as part of one explanatory answer; check whether "
                                          "they were meant as branches"))
    return decision


@dataclass
class RawStoryTurn:
    """A StoryTurn as found in a pipe file: its turn strings and whatever record fields came with it."""

    turns: list[str]
    id: str | None = None
    task: str | None = None
    category: str | None = None
    image_dependent: bool | None = None
    mental_states: list[str] | None = None
    source: str | None = None
    #: the StoryTurn's own metadata (notes, scene files), which no turn string holds
    meta: dict[str, object] | None = None
    line: int | None = None
    #: per turn, the canonical fields the pipe string cannot hold (options, candidates, rubric, meta), as in a pipe
    #: record
    turn_extras: list[dict[str, object]] | None = None


#: Turn fields a pipe record carries beside the turn strings, so that a pipe round trip loses nothing
TURN_EXTRAS = ("options", "candidates", "rubric", "meta")


def options_in_question(question: str) -> list[Option]:
    """Labelled options written in the question ("A. x B. y", "(a) x (b) y", one per line), if any."""
    found = labelled_options(question)
    return [Option(label=label, text=text) for label, text in found[1]] if found else []


def parse_storyturn(raw: RawStoryTurn, *, file: str, default_id: str) -> tuple[StoryTurn, list[Problem]]:
    """Parse one pipe StoryTurn. Raises FormatError on a malformed turn; returns warnings."""
    from commet.taxonomy import TASKS_BY_ID

    story_id = raw.id or default_id
    problems: list[Problem] = []
    rows: list[list[str]] = []
    for k, text in enumerate(raw.turns):
        if not isinstance(text, str):
            raise FormatError([Problem(file, raw.line, story_id, k, None, f"turn must be a string, got {type(text).__name__}")])
        fields = split_turn_fields(text)
        if fields is None:
            count = len(text.split("|"))
            raise FormatError([Problem(file, raw.line, story_id, k, None,
                                       f"expected 5 fields (story | feedback | question | image | answer) "
                                       f"separated by '|', found {count}")])
        rows.append(fields)
    if not rows:
        raise FormatError([Problem(file, raw.line, story_id, None, "turns", "a StoryTurn needs at least one turn")])

    feedbacks: list[Feedback | None] = []
    for k, row in enumerate(rows):
        try:
            feedbacks.append(parse_feedback(row[1]))
        except ValueError as exc:  # pydantic validation of an odd feedback
            raise FormatError([Problem(file, raw.line, story_id, k, "feedback", str(exc).splitlines()[0])]) from None
    decision = decide_branches([r[4] for r in rows], [r[2] for r in rows], feedbacks)
    problems.extend(Problem(file, raw.line, story_id, k, "answer", msg, "warning") for k, msg in decision.notes)

    turns: list[Turn] = []
    for k, row in enumerate(rows):
        if not row[2]:
            raise FormatError([Problem(file, raw.line, story_id, k, "question", "empty question")])
        if not decision.answers[k]:
            raise FormatError([Problem(file, raw.line, story_id, k, "answer", "empty answer")])
        extras = (raw.turn_extras[k] if raw.turn_extras and k < len(raw.turn_extras) else None) or {}
        if not isinstance(extras, dict) or set(extras) - set(TURN_EXTRAS):
            raise FormatError([Problem(file, raw.line, story_id, k, "turn_extras",
                                       f"must be an object with only {', '.join(TURN_EXTRAS)}")])
        try:
            turns.append(Turn.model_validate({
                "story": row[0], "feedback": feedbacks[k], "question": row[2], "image": row[3] or None,
                "answers": decision.answers[k], "options": options_in_question(row[2]), **extras}))
        except ValidationError as exc:
            error = exc.errors()[0]
            field = ".".join(str(x) for x in error["loc"]) or "turn_extras"
            raise FormatError([Problem(file, raw.line, story_id, k, field, error["msg"])]) from None

    task = raw.task or "unknown"
    known = TASKS_BY_ID.get(task)
    image_dependent = bool(raw.image_dependent)
    category = raw.category or (known.category_for(image_dependent) if known else "unknown")
    mental_states = raw.mental_states if raw.mental_states is not None else (list(known.mental_states) if known else [])
    storyturn = StoryTurn(id=story_id, task=task, category=category, mental_states=mental_states,
                          image_dependent=image_dependent, source=raw.source or "pipe", turns=turns,
                          meta=raw.meta or {})
    return storyturn, problems


def format_turn(turn: Turn) -> str:
    """One turn as a pipe string."""
    return " | ".join([turn.story, format_feedback(turn.feedback), turn.question, turn.image or "",
                       "; ".join(turn.answers)])


def to_pipe(storyturn: StoryTurn) -> list[str]:
    """A StoryTurn as the paper's list of pipe strings."""
    return [format_turn(turn) for turn in storyturn.turns]


def _turn_extras(turn: Turn) -> dict[str, object]:
    """The canonical fields of a turn that its pipe string does not already say."""
    extras = turn.model_dump(include=set(TURN_EXTRAS), exclude_defaults=True)
    if extras.get("options") == [o.model_dump(exclude_defaults=True) for o in options_in_question(turn.question)]:
        del extras["options"]
    return extras


def to_pipe_record(storyturn: StoryTurn) -> dict[str, object]:
    """A pipe record that keeps every StoryTurn-level field, so nothing is lost on the way back."""
    record: dict[str, object] = {
        "id": storyturn.id,
        "task": storyturn.task,
        "category": storyturn.category,
        "image_dependent": storyturn.image_dependent,
        "mental_states": storyturn.mental_states,
        "source": storyturn.source,
        "storyturn": to_pipe(storyturn),
    }
    if storyturn.meta:
        record["meta"] = storyturn.meta
    extras = [_turn_extras(turn) for turn in storyturn.turns]
    if any(extras):
        record["turn_extras"] = extras
    return record


@dataclass(frozen=True)
class PipeLoss:
    """What of a StoryTurn its pipe record would not give back: the turn (None: the StoryTurn), field and why."""

    turn: int | None
    field: str
    why: str


def pipe_loss(storyturn: StoryTurn) -> PipeLoss | None:
    """Where the pipe record of ``storyturn`` would read back as something else, or None when it reads back the
    same. Why: the pipe format has no escape (a ``|`` outside double quotes ends a field, ``; If wrong:`` in a
    feedback text starts another branch, a ``;`` in an answer may split it into branches), so a writer that does
    not read its record back can write a file that loads wrong, or not at all."""
    record = to_pipe_record(storyturn)
    raw = RawStoryTurn(turns=list(to_pipe(storyturn)), id=storyturn.id, task=storyturn.task,
                       category=storyturn.category, image_dependent=storyturn.image_dependent,
                       mental_states=storyturn.mental_states, source=storyturn.source, meta=storyturn.meta or None,
                       turn_extras=[_turn_extras(turn) for turn in storyturn.turns] if "turn_extras" in record else None)
    try:
        back, _ = parse_storyturn(raw, file="", default_id=storyturn.id)
    except FormatError as exc:
        problem = exc.problems[0]
        return PipeLoss(problem.turn, problem.field or _field_with_bar(storyturn, problem.turn),
                        f"its pipe string would not read back: {problem.message}")
    for name in StoryTurn.model_fields:
        if name != "turns" and getattr(storyturn, name) != getattr(back, name):
            return PipeLoss(None, name, f"its pipe record would read back {name} as {_shown(getattr(back, name))} "
                                        f"instead of {_shown(getattr(storyturn, name))}")
    for k, (turn, again) in enumerate(zip(storyturn.turns, back.turns, strict=True)):
        for name in Turn.model_fields:
            if getattr(turn, name) != getattr(again, name):
                said = "; holds '|', which the pipe format puts between fields" if "|" in str(getattr(turn, name)) \
                    else ""
                return PipeLoss(k, name, f"the pipe format cannot hold this {name} as it is{said}: it would read "
                                         f"back as {_shown(getattr(again, name))} instead of "
                                         f"{_shown(getattr(turn, name))}")
    return None


def _field_with_bar(storyturn: StoryTurn, turn: int | None) -> str:
    """The field of a turn whose ``|`` breaks its pipe string ("-" when none is found)."""
    if turn is None or not 0 <= turn < len(storyturn.turns):
        return "-"
    told = storyturn.turns[turn]
    fields = [told.story, format_feedback(told.feedback), told.question, told.image or "", "; ".join(told.answers)]
    return next((name for name, text in zip(FIELDS, fields, strict=True) if "|" in text), "-")


def _shown(value: object) -> str:
    text = value.model_dump_json(exclude_defaults=True) if isinstance(value, Feedback) else repr(value)
    return text if len(text) <= 120 else text[:117] + "..."
