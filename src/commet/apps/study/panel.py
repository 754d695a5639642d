"""Participants sent by a recruiting panel: the ids a panel adds to the study's link, and the link to give it.

Prolific adds ``PROLIFIC_PID``, ``STUDY_ID`` and ``SESSION_ID``; an MTurk survey-link HIT appends
``workerId``, ``hitId`` and ``assignmentId``; any other panel can add ``pid``. The ids are pseudonyms the
panel made: they are stored with the participant (to pay them and match the panel's records), exported,
and shown to nobody else.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from urllib.parse import urlencode

from commet.errors import CommetError

#: new participants a minute through the panel link from one client address (a lab or a university NAT: raise it)
JOINS_PER_ADDRESS = 30
#: participants with panel ids the study takes by default (``study serve --max-panel-participants``)
MAX_PANEL_PARTICIPANTS = 2000


class Ending(str, Enum):
    """How a participant's study ended, each with its own panel code (a panel pays and counts them differently)."""

    completed = "completed"  # every story answered (or ended at an undecided answer, as a model's)
    withdrew = "withdrew"  # declined on the consent page, or stopped part way
    screened_out = "screened_out"  # could not confirm the consent page's statement (e.g. being an adult)


@dataclass(frozen=True)
class PanelIds:
    """The ids a panel puts in the link: its name, the participant's id, and (where it has them) study and session."""

    panel: str
    pid: str
    study: str | None = None
    session: str | None = None


class PanelKind(str, Enum):
    prolific = "prolific"
    mturk = "mturk"
    generic = "generic"


@dataclass(frozen=True)
class PanelParameters:
    """The URL parameters a panel names its ids with (``None``: the panel has no such id)."""

    pid: str
    study: str | None
    session: str | None
    #: what ``study links --panel`` puts after the entry link (the panel fills it in; the MTurk HIT appends its own)
    template: Mapping[str, str]


PANELS = {
    PanelKind.prolific: PanelParameters("PROLIFIC_PID", "STUDY_ID", "SESSION_ID", {
        "PROLIFIC_PID": "{{%PROLIFIC_PID%}}", "STUDY_ID": "{{%STUDY_ID%}}", "SESSION_ID": "{{%SESSION_ID%}}"}),
    PanelKind.mturk: PanelParameters("workerId", "hitId", "assignmentId", {}),
    PanelKind.generic: PanelParameters("pid", None, None, {"pid": "PARTICIPANT_ID"}),
}
#: MTurk's assignment id while a worker only previews the HIT: nobody to enrol yet
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
#: a panel id: letters, digits and ``_.-`` (Prolific's are 24 hex digits, MTurk's about 14 capitals and digits)
PANEL_ID = re.compile(r"[A-Za-z0-9_.-]{1,100}")


class PanelIdError(CommetError, ValueError):
    """A panel id in the link that is not one (too long, or characters no panel uses)."""


def panel_ids(query: Mapping[str, str]) -> PanelIds | None:
    """The panel ids in a link's query (the first panel whose participant parameter is there), or None. A panel
    that always sends a session id (Prolific's SESSION_ID, MTurk's assignmentId) must send it: a re-entry is bound
    to it, and an id alone, which others can see, would let anyone take a participant's place."""
    for kind, names in PANELS.items():
        pid = query.get(names.pid)
        if pid is None:
            continue
        values = {"pid": pid, "study": query.get(names.study) if names.study else None,
                  "session": query.get(names.session) if names.session else None}
        for name, value in values.items():
            if value is not None and not PANEL_ID.fullmatch(value):
                raise PanelIdError(f"the {kind.value} {name} id in this link is not valid")
        if names.session is not None and not values["session"]:
            raise PanelIdError(f"this {kind.value} link has no {names.session}")
        return PanelIds(kind.value, pid, values["study"], values["session"])
    return None


def previewing(query: Mapping[str, str]) -> bool:
    """Whether MTurk shows the HIT to a worker who has not accepted it yet."""
    return query.get(PANELS[PanelKind.mturk].session or "") == MTURK_PREVIEW


#: a study file's panel name, as ``study build --panel`` writes it, and the panel's kind
PANEL_NAMES = {"Prolific": PanelKind.prolific, "MTurk": PanelKind.mturk}


def kind_of(name: str) -> PanelKind:
    """The kind of a study's panel by its name (any other panel sends ``pid``)."""
    return PANEL_NAMES.get(name, PanelKind.generic)


def entry_link(base_url: str, key: str, kind: PanelKind) -> str:
    """The one link to give the panel: each participant it sends gets their own questionnaire from it."""
    template = PANELS[kind].template
    query = urlencode(template, safe="{}%") if template else ""
    return f"{base_url.rstrip('/')}/join/{key}" + (f"?{query}" if query else "")
