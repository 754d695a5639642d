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
not scored a call failed for good (the model's, or a judge's)          left out
========== ======================================================== ====================

:class:`RunCounts` is every figure a run's outputs print about its StoryTurns (stories, stopped,
undecided, not scored, failed calls), counted once by :func:`count_run`: eval's and finish's lines,
the report's tables and notices, the HTML report, ``commet calibrate`` and the inspect task all read
them from there, so no two outputs of one run can disagree.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
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
    StoryOutcome.not_scored: "a call failed for good, or never started: left out of every accuracy",
}


def story_outcome(status: StoryStatus, turns: Iterable[bool | None], stored_correct: bool | None = None, *,
                  failed_calls: int = 0) -> StoryOutcome:
    """The outcome of a StoryTurn that ended with ``status``, from the scores of its answered turns in order
    (True right, False wrong, None undecided). ``stored_correct`` (the story's own stored verdict) decides
    only a finished story without stored turns. ``failed_calls``: its calls that failed for good; a judge
    that failed leaves a finished story not scored (a rerun retries it), not undecided."""
    if status is StoryStatus.failed or failed_calls:
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


@dataclass(frozen=True)
class StoryTally:
    """What :func:`count_run` reads of one StoryTurn that has a row in the run."""

    status: StoryStatus
    outcome: StoryOutcome
    #: answers left undecided (by a judge's verdict, not by a failed judge)
    undecided_answers: int = 0
    #: calls that failed for good in it (a model call without reply, a judge without verdict)
    failed_calls: int = 0


@dataclass(frozen=True)
class RunCounts:
    """Every count a run's outputs print about its StoryTurns, from one place (:func:`count_run`)."""

    #: StoryTurns the run covers (started or not)
    stories: int
    #: StoryTurns per outcome, over those with a row in the run
    outcomes: dict[StoryOutcome, int]
    #: conversations that ended at an undecided answer (``--undecided-feedback stop``) with none wrong before: their
    #: outcome is ``stopped`` (in the range until their remaining questions are asked)
    stopped: int
    #: conversations that ended at an undecided answer after one judged wrong: their outcome is ``wrong``
    stopped_after_wrong: int
    #: answers left undecided in scored StoryTurns
    undecided_answers: int
    #: calls that failed for good (each leaves a turn without a reply or without a verdict)
    failed_calls: int

    def of(self, outcome: StoryOutcome) -> int:
        return self.outcomes.get(outcome, 0)

    @property
    def scored(self) -> int:
        """The denominator of story accuracy: StoryTurns finished or stopped at an undecided answer."""
        return sum(n for outcome, n in self.outcomes.items() if outcome.scored)

    @property
    def not_scored(self) -> int:
        """StoryTurns left out of every accuracy: a call failed for good, or never started (a stopped run)."""
        return self.stories - self.scored

    @property
    def failed(self) -> int:
        """StoryTurns with a call that failed for good."""
        return self.of(StoryOutcome.not_scored)

    @property
    def not_started(self) -> int:
        return self.not_scored - self.failed

    @property
    def hinging(self) -> int:
        """Scored StoryTurns whose verdict hinges on undecided answers or unasked questions (shown as a range)."""
        return self.of(StoryOutcome.undecided) + self.of(StoryOutcome.stopped)

    @property
    def complete(self) -> bool:
        """Every StoryTurn was scored: none failed, none left to start."""
        return self.not_scored == 0

    def not_scored_words(self) -> str:
        """"N of M StoryTurns not scored (F with a failed call, S not started)", the parts that are not 0."""
        parts = [f"{self.failed} with a call that failed for good" if self.failed else "",
                 f"{self.not_started} not started" if self.not_started else ""]
        detail = ", ".join(p for p in parts if p)
        return f"{self.not_scored} of {self.stories} StoryTurns not scored" + (f" ({detail})" if detail else "")


def count_run(stories: Iterable[StoryTally], planned: int | None = None) -> RunCounts:
    """The counts of a run whose StoryTurns with a row are ``stories``, out of ``planned`` (default: as many as
    there are rows; a run that stopped early has fewer rows than StoryTurns)."""
    outcomes: Counter[StoryOutcome] = Counter()
    stopped = stopped_after_wrong = undecided = failed_calls = rows = 0
    for story in stories:
        rows += 1
        outcomes[story.outcome] += 1
        failed_calls += story.failed_calls
        if story.outcome.scored:
            undecided += story.undecided_answers
        stopped += story.outcome is StoryOutcome.stopped
        stopped_after_wrong += story.status is StoryStatus.stopped and story.outcome is StoryOutcome.wrong
    return RunCounts(max(rows, planned or 0), dict(outcomes), stopped, stopped_after_wrong, undecided, failed_calls)
