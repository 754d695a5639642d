"""The StoryTurn's semantics, free of I/O: feedback selection, user messages and branch rules.

spec sections 3 to 5. Kept pure so that the engine, the human-study app and re-judging
all compose turns and apply branches in exactly one way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from commet.format.model import Feedback, StoryTurn, Turn
from commet.judges.base import JudgeRequest, Verdict
from commet.text import normalize

FeedbackCondition = Literal["original", "correctness", "none"]

#: Correctness-only feedback (paper, Appendix I).
CORRECT_TEXT = "That's right."
INCORRECT_TEXT = "That's not right."

DEFAULT_SYSTEM_PROMPT = (
    "You will read a short story told over several turns, with a picture in some turns. "
    "Answer each question about the story briefly and directly. When a question asks why, "
    "give the reason in one sentence."
)


@dataclass(frozen=True)
class PreviousOutcome:
    """How the previous turn went: what feedback of the next turn reacts to."""

    correct: bool | None  # None: undecided or failed
    branch: int | None
    answers: tuple[str, ...]


def choose_feedback(feedback: Feedback | None, previous: PreviousOutcome | None,
                    condition: FeedbackCondition) -> tuple[str, str]:
    """The feedback text for a turn and which kind was chosen (recorded per turn).

    An undecided previous answer gets the 'wrong' text: a corrective hint is the cautious
    choice when nobody could confirm the answer (kind is then ``wrong-undecided``).
    """
    if feedback is None or feedback.is_empty() or previous is None or condition == "none":
        return "", "none"
    right = previous.correct is True
    suffix = "" if previous.correct is not None else "-undecided"
    if condition == "correctness":
        return (CORRECT_TEXT, "correctness-right") if right else (INCORRECT_TEXT, "correctness-wrong" + suffix)
    pieces: list[str] = [feedback.always] if feedback.always else []
    kind = "always" if feedback.always else "none"
    keyed = None
    if right and previous.branch is not None and feedback.by_answer:
        given = normalize(previous.answers[previous.branch])
        keyed = next((fb for fb in feedback.by_answer if normalize(fb.answer) == given), None)
    if keyed is not None:
        pieces.append(keyed.text)
        kind = f"answer:{keyed.answer}"
    elif right and feedback.right:
        pieces.append(feedback.right)
        kind = "right"
    elif not right and feedback.wrong:
        pieces.append(feedback.wrong)
        kind = "wrong" + suffix
    return " ".join(pieces), kind


def user_text(feedback_text: str, turn: Turn) -> str:
    """One turn's user message: feedback, then story, then question (spec section 5)."""
    return "\n\n".join(piece for piece in (feedback_text.strip(), turn.story.strip(), turn.question.strip()) if piece)


def judge_request(storyturn: StoryTurn, k: int, sent: str, reply: str, earlier: Sequence[tuple[str, str]],
                  active_branch: int | None) -> JudgeRequest:
    """What a judge sees of turn ``k``: everything the answerer saw, feedback included.

    ``sent`` is the turn's user message (:func:`user_text`); ``earlier`` pairs each earlier
    turn's message with its reply. The engine, re-judging and the human study all build
    their requests here, so every judge is asked the same thing.
    """
    turn = storyturn.turns[k]
    question = turn.question.strip()
    shown = sent[: -len(question)].strip() if question and sent.endswith(question) else turn.story
    return JudgeRequest(story_id=storyturn.id, task=storyturn.task, turn=k,
                        context=tuple(f"{message}\nReply: {answer}" for message, answer in earlier),
                        story=shown, question=turn.question, expected=tuple(turn.answers), response=reply,
                        active_branch=active_branch)


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
