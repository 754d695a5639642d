"""The built-in judge kinds, each a plug-in factory ``create(rest) -> Judge`` like a third party's.

Registered in :mod:`commet.builtin_plugins` (entry-point group ``commet.judges``);
:func:`commet.judges.registry.create_judge` reads the spec's ``KIND:`` and calls the factory with
the rest. A model spec with no kind in front is a cascade (``openai:gpt-4o`` = ``cascade:openai:gpt-4o``).
LLM judges are imported only when a spec names a model, the rules judge (its lexicons and patterns) only when
a spec uses it.
"""

from __future__ import annotations

import re

from commet.judges.base import Judge, UnknownJudgeError
from commet.judges.panel import PanelJudge
from commet.models.base import ModelSpecError
from commet.models.errors import redact

LLM_ONLY = "llm-only:"
PANEL = "panel:"
#: a comma that starts the next panel member: ``rules`` or ``provider:``, not a URL's ``http://`` (a
#: member's ``base_url`` may list several endpoints, comma-separated)
PANEL_MEMBER_BREAK = re.compile(r",(?=\s*(?:rules\s*(?:,|$)|[A-Za-z][\w-]*:(?!//)))")


def create_rules(rest: str) -> Judge:
    """``rules``: the rules judge alone (the registry refuses ``rules:...``, so ``rest`` is empty)."""
    from commet.judges.rules import RulesJudge

    return RulesJudge()


def create_cascade(rest: str) -> Judge:
    """``cascade:SPEC``: the rules judge, then SPEC (an LLM judge or a panel) for what it leaves undecided."""
    from commet.judges.cascade import CascadeJudge

    return CascadeJudge(bare(rest))


def create_panel(rest: str) -> Judge:
    """``panel:A,B,C``: the rules judge, then a majority vote of A, B and C."""
    return create_cascade(PANEL + rest)


def create_llm_only(rest: str) -> Judge:
    """``llm-only:SPEC``: SPEC (an LLM judge or a panel) with no rules judge in front."""
    return bare(rest)


def bare(spec: str) -> Judge:
    """A judge with no rules in front: a panel (members: model specs or ``rules``) or an LLM judge."""
    if spec.startswith(PANEL):
        specs = [s.strip() for s in PANEL_MEMBER_BREAK.split(spec[len(PANEL):]) if s.strip()]
        return PanelJudge([create_rules("") if s == "rules" else _llm(s.removeprefix(LLM_ONLY)) for s in specs])
    return _llm(spec)


def _llm(spec: str) -> Judge:
    from commet.judges.llm import llm_judge

    try:
        return llm_judge(spec)
    except ModelSpecError as exc:
        # the cause tells a missing key from a bad spec; a key pasted into the spec is not repeated
        raise UnknownJudgeError(f"judge {redact(spec)!r}: {exc}") from exc
