"""The StoryTurn's semantics, free of I/O: feedback selection, user messages and branch rules.

spec sections 3 to 5. Kept pure so that the engine, the human-study app and re-judging
all compose turns and apply branches in exactly one way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from commet.conditions import FeedbackCondition, UndecidedFeedback
from commet.format.model import Feedback, StoryTurn, Turn
from commet.judges.base import JudgeRequest, Verdict
from commet.models.base import ImagePart
from commet.store.settings import PAPER_CORRECTNESS_TEXTS, CorrectnessTexts
from commet.text import fold, normalize

#: feedback kinds of a turn that follows an undecided answer (left out of Tables 3 and 14)
STOPPED_UNDECIDED = "stopped-undecided"
SKIPPED_UNDECIDED = "skipped-undecided"


@dataclass(frozen=True)
class PreviousOutcome:
    """How the previous turn went: what feedback of the next turn reacts to."""

    correct: bool | None  # None: undecided or failed
    branch: int | None
    answers: tuple[str, ...]


def choose_feedback(feedback: Feedback | None, previous: PreviousOutcome | None, condition: FeedbackCondition, *,
                    undecided: UndecidedFeedback,
                    texts: CorrectnessTexts = PAPER_CORRECTNESS_TEXTS) -> tuple[str, str]:
    """The feedback text for a turn and which kind was chosen (recorded per turn).

    Story facts stay in every condition (the paper applies its controls "wherever
    applicable"): the unconditional part (``always``) and answer-keyed text, which tells what
    follows from the answer given. Only right/wrong feedback is replaced by the correctness
    texts (``correctness``) or dropped (``none``). When the text depends on a previous answer
    that is undecided, ``undecided`` decides; the kind then ends in ``-undecided``.
    """
    if feedback is None or feedback.is_empty() or previous is None:
        return "", "none"
    always = [feedback.always] if feedback.always else []
    evaluative = bool(feedback.right or feedback.wrong) and condition is not FeedbackCondition.none
    if previous.correct is None and (evaluative or feedback.by_answer):
        if undecided is UndecidedFeedback.STOP:
            return "", STOPPED_UNDECIDED
        if undecided is UndecidedFeedback.SKIP:
            return " ".join(always), SKIPPED_UNDECIDED
    right = previous.correct is True
    suffix = "" if previous.correct is not None else "-undecided"
    keyed = None
    if right and previous.branch is not None and feedback.by_answer:
        given = normalize(previous.answers[previous.branch])
        keyed = next((fb for fb in feedback.by_answer if normalize(fb.answer) == given), None)
    if keyed is not None:
        return " ".join([*always, keyed.text]), f"answer:{keyed.answer}"
    if evaluative and condition is FeedbackCondition.correctness:
        return " ".join([*always, texts.right if right else texts.wrong]), (
            "correctness-right" if right else "correctness-wrong" + suffix)
    if evaluative and right and feedback.right:
        return " ".join([*always, feedback.right]), "right"
    if evaluative and not right and feedback.wrong:
        return " ".join([*always, feedback.wrong]), "wrong" + suffix
    return " ".join(always), "always" if always else "none"


@dataclass(frozen=True)
class TurnOpening:
    """How a turn opens: the feedback chosen, its kind, and the user message built from them."""

    feedback: str
    feedback_kind: str
    message: str
    #: the feedback part of ``message``, as a judge is told it (:func:`shown_feedback` of the message)
    shown_feedback: str


def open_turn(turn: Turn, previous: PreviousOutcome | None, condition: FeedbackCondition, *,
              undecided: UndecidedFeedback, texts: CorrectnessTexts = PAPER_CORRECTNESS_TEXTS) -> TurnOpening | None:
    """The turn's feedback and user message, or None where the story stops at an undecided answer.

    The engine, the inspect task and the human study all open turns here, so a volunteer meets
    exactly the conversation a model with the same answers meets, stop included.
    """
    text, kind = choose_feedback(turn.feedback, previous, condition, undecided=undecided, texts=texts)
    if kind == STOPPED_UNDECIDED:
        return None
    feedback, rest = text.strip(), user_text("", turn)  # user_text(text, turn) is the two, each made once
    return TurnOpening(text, kind, f"{feedback}\n\n{rest}" if feedback and rest else feedback or rest,
                       feedback if rest else "")


def options_text(turn: Turn) -> str:
    """The turn's options as shown under the question, unless the question already shows every one."""
    if not turn.options:
        return ""
    question = fold(turn.question)
    if all(fold(option.text) in question for option in turn.options):
        return ""
    return "\n".join(f"{option.label}. {option.text}" if option.label else f"- {option.text}"
                     for option in turn.options)


def user_text(feedback_text: str, turn: Turn) -> str:
    """One turn's user message: feedback, then story, then question and its options (spec section 5)."""
    pieces = (feedback_text.strip(), turn.story.strip(), turn.question.strip(), options_text(turn))
    return "\n\n".join([piece for piece in pieces if piece])


def shown_feedback(sent: str, turn: Turn) -> str:
    """The feedback part of a stored user message (what :func:`user_text` put before the story)."""
    rest = user_text("", turn)
    return sent[: -len(rest)].strip() if rest and sent.endswith(rest) else ""


def judge_request(storyturn: StoryTurn, k: int, sent: str, reply: str, earlier: Sequence[tuple[str, str]],
                  images: Sequence[ImagePart] = (), *, feedback: str | None = None) -> JudgeRequest:
    """What a judge sees of turn ``k``: everything the answerer saw, feedback labelled as feedback.

    ``sent`` is the turn's user message (:func:`user_text`); ``earlier`` pairs each earlier
    turn's message with its reply; ``images`` are the pictures the judge may look at. The
    engine, re-judging and the human study all build their requests here, so every judge is
    asked the same thing. The request never depends on earlier verdicts (branch rules are
    applied after judging), so a story's turns can be judged in any order. ``feedback`` is
    :func:`shown_feedback` of ``sent`` where the caller has it (:attr:`TurnOpening.shown_feedback`). A turn
    without options passes its judge-only candidates (``Turn.candidates``) as unlabelled options marked not
    shown, so that the rules judge decides a reply naming another candidate wrong.
    """
    turn = storyturn.turns[k]
    options = tuple((o.label, o.text) for o in turn.options) or tuple((None, c) for c in turn.candidates)
    rubric = (turn.rubric.key_inference, tuple(turn.rubric.false_inferences)) if turn.rubric else None
    return JudgeRequest(story_id=storyturn.id, task=storyturn.task, turn=k,
                        context=tuple([f"{message}\nReply: {answer}" for message, answer in earlier]),
                        story=turn.story, question=turn.question, expected=tuple(turn.answers), response=reply,
                        options=options, options_shown=bool(turn.options) or not turn.candidates, rubric=rubric,
                        feedback=shown_feedback(sent, turn) if feedback is None else feedback, images=tuple(images))


@dataclass(frozen=True)
class TurnScore:
    correct: bool | None
    branch: int | None  # branch the reply matched (None when none)
    active_branch: int | None  # the story's active branch after this turn
    reason: str


def apply_branch_rules(turn: Turn, verdict: Verdict, active_branch: int | None) -> TurnScore:
    """Turn a judge's verdict into the turn's score under the story's branch (spec section 3).

    At a branch point any answer is right until a branch is fixed; then only the active
    branch's answer is. A reply matching another branch is wrong.
    """
    branch = verdict.branch
    if verdict.outcome == "correct" and branch is None and len(turn.answers) == 1:
        branch = 0
    if verdict.outcome != "correct":
        return TurnScore(verdict.correct, branch, active_branch, verdict.rationale)
    if not turn.is_branch_point:
        return TurnScore(True, branch, active_branch, verdict.rationale)
    if branch is None:
        return TurnScore(None, None, active_branch, "judge said correct but named no branch at a branch point")
    if active_branch is None:
        return TurnScore(True, branch, branch, verdict.rationale)
    if branch == active_branch:
        return TurnScore(True, branch, active_branch, verdict.rationale)
    return TurnScore(False, branch, active_branch,
                     f"reply matches branch {branch} ({turn.answers[branch]!r}) but the story is on branch "
                     f"{active_branch} ({turn.answers[active_branch]!r})")
