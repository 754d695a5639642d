"""Judge specs, parsed in one place, and judge kinds registered as plug-ins.

The grammar:

* ``rules``: the rules judge alone;
* ``MODEL_SPEC`` (``openai:gpt-4o``, ...): the rules judge, then an LLM judge for what it leaves
  undecided (a cascade);
* ``panel:A,B,C``: the rules judge, then a majority vote of A, B and C (model specs or ``rules``);
* ``llm-only:SPEC``: the same without the rules judge in front (``llm-only:openai:gpt-4o``,
  ``llm-only:panel:A,B,C``), what judge-comparison studies want;
* ``KIND:REST`` for a judge kind a package registers in the ``commet.judges`` entry-point group:
  ``create(rest: str) -> Judge``. A registered kind wins over a model provider of the same name.
"""

from __future__ import annotations

import re

from commet.judges.base import Judge, UnknownJudgeError
from commet.judges.cascade import CascadeJudge
from commet.judges.llm import llm_judge
from commet.judges.panel import PanelJudge
from commet.judges.rules import RulesJudge
from commet.models.base import UnknownModelError, did_you_mean
from commet.models.errors import redact
from commet.plugins import load_plugin, plugin_names

LLM_ONLY = "llm-only:"
PANEL = "panel:"
#: a comma that starts the next panel member: ``rules`` or ``provider:``, not a URL's ``http://`` (a
#: member's ``base_url`` may list several endpoints, comma-separated)
PANEL_MEMBER_BREAK = re.compile(r",(?=\s*(?:rules\s*(?:,|$)|[A-Za-z][\w-]*:(?!//)))")
#: the entry-point group third-party judge kinds register in
GROUP = "commet.judges"


def create_judge(spec: str) -> Judge:
    """Build a judge from its spec; raises UnknownJudgeError with one clear line."""
    spec = spec.strip()
    if spec == "rules":
        return RulesJudge()
    if spec.startswith(LLM_ONLY):
        return _bare(spec[len(LLM_ONLY):])
    kind, sep, rest = spec.partition(":")
    if sep and kind in plugin_names(GROUP):
        return _plugin(kind, rest)
    if not sep:
        raise UnknownJudgeError(f"unknown judge {spec!r}{did_you_mean(spec, ['rules'])}: use 'rules', a model "
                                "spec such as openai:gpt-4o, llm-only:SPEC, or panel:SPEC,SPEC,SPEC")
    return CascadeJudge(_bare(spec))


def _bare(spec: str) -> Judge:
    """A judge with no rules in front: a panel or an LLM judge."""
    if spec.startswith(PANEL):
        specs = [s.strip() for s in PANEL_MEMBER_BREAK.split(spec[len(PANEL):]) if s.strip()]
        return PanelJudge([RulesJudge() if s == "rules" else _llm(s.removeprefix(LLM_ONLY)) for s in specs])
    return _llm(spec)


def _llm(spec: str) -> Judge:
    try:
        return llm_judge(spec)
    except UnknownModelError as exc:
        # the cause tells a missing key from a bad spec; a key pasted into the spec is not repeated
        raise UnknownJudgeError(f"judge {redact(spec)!r}: {exc}") from exc


def _plugin(kind: str, rest: str) -> Judge:
    try:
        factory = load_plugin(GROUP, kind)
    except ImportError as exc:
        raise UnknownJudgeError(f"judge kind {kind!r} is not available: {exc}") from None
    judge = factory(rest)
    if not isinstance(judge, Judge):
        raise UnknownJudgeError(f"judge kind {kind!r} did not build a Judge (got {type(judge).__name__})")
    return judge
