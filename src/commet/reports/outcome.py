"""How one StoryTurn of a run came out, decided once and read by every table, badge and transcript.

Story accuracy counts a StoryTurn right only when every turn was judged right. A single
undecided answer makes the result unknown until it is decided, and a story that stopped at an
undecided answer (``--undecided-feedback stop``) never asked its later questions; but one answer
judged wrong decides the story, whatever the others turn out to be. So:

========== ======================================================== ====================
outcome    when                                                     story accuracy
========== ======================================================== ====================
right      finished, every answer judged right                      right
wrong      some answer judged wrong (finished or stopped)           wrong
undecided  finished, none wrong, some undecided                     the range: wrong..right
stopped    stopped at an undecided answer, none wrong before it     the range: wrong..right
not scored a call failed for good: the conversation did not finish  left out
========== ======================================================== ====================
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum

from commet.store.records import StoryStatus


class StoryOutcome(str, Enum):
    """A StoryTurn's result in a run (stored as its value in the HTML report's data)."""

    right = "right"
    wrong = "wrong"
    undecided = "undecided"
    stopped = "stopped"
    not_scored = "not scored"

    def __str__(self) -> str:
        return self.value

    @property
    def scored(self) -> bool:
        """Counted in story accuracy (its denominator)."""
        return self is not StoryOutcome.not_scored

    @property
    def in_range(self) -> bool:
        """Counted wrong in the lower figure of a range and right in the upper one (it hinges on undecided answers)."""
        return self in (StoryOutcome.undecided, StoryOutcome.stopped)

    @property
    def right_if_undecided_right(self) -> bool:
        """Right in the upper figure: right, or right should every undecided answer be right."""
        return self is StoryOutcome.right or self.in_range

    @property
    def meaning(self) -> str:
        """One line for a reader: what the outcome says about the story."""
        return OUTCOME_MEANINGS[self]


OUTCOME_MEANINGS = {
    StoryOutcome.right: "every answer judged right",
    StoryOutcome.wrong: "an answer judged wrong",
    StoryOutcome.undecided: "no answer wrong, some undecided: right or wrong once they are decided",
    StoryOutcome.stopped: "stopped at an undecided answer, none wrong before: right or wrong once it is decided",
    StoryOutcome.not_scored: "a call failed: left out of every accuracy",
}


def story_outcome(status: StoryStatus, turns: Iterable[bool | None], stored_correct: bool | None = None) -> StoryOutcome:
    """The outcome of a StoryTurn that ended with ``status``, from the scores of its answered turns in order
    (True right, False wrong, None undecided). ``stored_correct`` (the story's own stored verdict) decides
    only a finished story without stored turns."""
    if status is StoryStatus.failed:
        return StoryOutcome.not_scored
    scores = list(turns)
    if any(score is False for score in scores):
        return StoryOutcome.wrong
    if status is StoryStatus.stopped:
        return StoryOutcome.stopped
    if any(score is None for score in scores):
        return StoryOutcome.undecided
    if scores:
        return StoryOutcome.right
    if stored_correct is None:
        return StoryOutcome.undecided
    return StoryOutcome.right if stored_correct else StoryOutcome.wrong
