"""The key of each table a report may hold, spelled once.

A key names a table wherever a user meets it: ``commet report --table KEY``, the files of a CSV
report (``KEY.csv``), the HTML report's anchors (``#table-KEY``) and docs/reproducing-the-paper.md
(``tests/test_report_sections.py`` keeps that list in step). Tables made per value have a key
made from it: one per StoryTurn source (:func:`source_key`), one per ``--by`` key (:func:`by_key`).
"""

from __future__ import annotations

import re
from enum import Enum


class SectionKey(str, Enum):
    """The tables of ``commet report``, in the order the report shows them."""

    #: the paper's Table 1: story accuracy per category on the text-complete subset
    TEXT_COMPLETE = "text-complete"
    #: the paper's Table 2: the same on the image-dependent subset
    IMAGE_DEPENDENT = "image-dependent"
    #: story and question accuracy, undecided and unscored answers per run (not a paper table)
    SUMMARY = "summary"
    #: the paper's Table 3: feedback effectiveness
    FEEDBACK = "feedback"
    #: the paper's Table 14: original versus correctness-only feedback
    FEEDBACK_CONDITIONS = "feedback-conditions"
    #: question accuracy by turn index
    TURNS = "turns"
    #: the most common wrong answers per task and expected answer
    WRONG_ANSWERS = "wrong-answers"
    #: judged beside judge-corrected accuracy (runs with a calibration sample)
    CALIBRATION = "calibration"
    #: each judge against the people on the calibration sample
    JUDGE_CALIBRATION = "judge-calibration"
    #: the calibration sample per stratum (``commet calibrate``)
    CALIBRATION_SAMPLE = "calibration-sample"
    #: judge-corrected differences between two runs with a paired sample (``commet calibrate --pair``)
    CORRECTED_DIFFERENCES = "corrected-differences"

    def __str__(self) -> str:  # a key is written (file names, anchors, messages) as its value
        return self.value


#: the two subsets of the paper's Tables 1 and 2, in their order; each one's table is keyed by its name
SUBSET_KEYS = (SectionKey.TEXT_COMPLETE, SectionKey.IMAGE_DEPENDENT)
#: the subsets' names ("text-complete", "image-dependent"), as StoryTurns are counted in them
SUBSETS: tuple[str, ...] = tuple(key.value for key in SUBSET_KEYS)
#: the start of the key of a table per StoryTurn source (the paper's Tables 11 and 12 for the booklet)
SOURCE_PREFIX = "source-"
#: the start of the key of a ``--by KEY`` table
BY_PREFIX = "by-"


def source_key(source: str) -> str:
    """The key of the table of StoryTurns from ``source`` ("source-" and its name in lower case, dashed)."""
    return SOURCE_PREFIX + (re.sub(r"[^a-z0-9]+", "-", source.lower()).strip("-") or "none")


def by_key(key: str) -> str:
    """The key of the table grouped by the metadata key or field ``key``."""
    return BY_PREFIX + key
