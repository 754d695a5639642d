"""Judge specs: ``rules``, any model spec (an LLM judge behind the rules, as a cascade),
``panel:SPEC,SPEC,SPEC`` (majority vote). LLM judges and panels live in their own modules."""

from __future__ import annotations

import importlib

from commet.judges.base import Judge, UnknownJudgeError
from commet.judges.rules import RulesJudge
from commet.models.base import did_you_mean

#: judge kind -> "module:create"; ``create(spec: str) -> Judge``.
JUDGE_KINDS: dict[str, str] = {
    "panel": "commet.judges.panel:create",
    "llm": "commet.judges.llm:create",
}


def create_judge(spec: str) -> Judge:
    """Build a judge from its spec; raises UnknownJudgeError with one clear line."""
    spec = spec.strip()
    if spec == "rules":
        return RulesJudge()
    kind = "panel" if spec.startswith("panel:") else "llm"
    if ":" not in spec:
        hint = did_you_mean(spec, ["rules"])
        raise UnknownJudgeError(f"unknown judge {spec!r}{hint}: use 'rules', a model spec such as openai:gpt-4o, "
                                "or panel:SPEC,SPEC,SPEC")
    module_name, _, factory = JUDGE_KINDS[kind].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UnknownJudgeError(f"judge {spec!r} is not available: {exc}") from None
    return getattr(module, factory)(spec)
