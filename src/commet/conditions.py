"""The conditions a run is made under, spelled once: which pictures are shown, which feedback is
given, what happens after an answer nobody could judge, and which pictures a judge sees; and how its
calibration sample is drawn.

They live in the lowest layer so that every layer (the store's typed run settings, the engine,
the command line, the study app, reports, the inspect task) uses the same enums. Their values are
the strings the command line takes and the store records.
"""

from __future__ import annotations

from enum import Enum


class _Choice(str, Enum):
    """A string-valued choice that prints as its value (in run names, tables and messages)."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


class ImagePolicy(_Choice):
    """Which turns show their pictures: all (``on``), none (``off``), or only the turns of image-dependent
    StoryTurns (``needed``: the paper's third condition, Table 3 and Appendix D)."""

    on = "on"
    off = "off"
    needed = "needed"

    def shows_pictures(self, image_dependent: bool) -> bool:
        """Whether a StoryTurn's turns show their pictures under this policy."""
        return self is ImagePolicy.on or (self is ImagePolicy.needed and image_dependent)


class FeedbackCondition(_Choice):
    """Which feedback a turn gives (paper, Section 4 and Appendix I): the StoryTurn's own (``original``),
    only whether the previous answer was right (``correctness``; story facts stay), or none (``none``;
    story facts stay)."""

    original = "original"
    correctness = "correctness"
    none = "none"


class UndecidedFeedback(_Choice):
    """What a turn's feedback does when it depends on a previous answer nobody could judge (spec section 7).

    ``stop`` (the default) ends the story there, not scored: no later answer rests on feedback
    that may be wrong, and the story shows up in the report's range until a judge decides it.
    ``skip`` shows only the unconditional part and goes on; ``wrong`` sends the "wrong" text
    (the behaviour before this policy existed, kept for comparison with older runs).
    """

    STOP = "stop"
    SKIP = "skip"
    WRONG = "wrong"


class JudgeImages(_Choice):
    """Which StoryTurns' pictures an LLM judge sees (only ever pictures the answerer was shown)."""

    NEEDED = "needed"  # image-dependent StoryTurns: the answer rests on the picture
    ON = "on"
    OFF = "off"


class Design(_Choice):
    """How a calibration sample's StoryTurns are chosen (``commet calibrate --design``, recorded with the sample):
    shared among the strata (``proportional``, or ``optimal``: where the judge's error is,
    :mod:`commet.reports.design`), or ``active``, each with a probability that grows with the judge's uncertainty
    about it (:mod:`commet.reports.active`)."""

    proportional = "proportional"
    optimal = "optimal"
    active = "active"
