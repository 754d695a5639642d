"""Judge specs, parsed in one place; judge kinds are plug-ins, CoMMET's own included.

The grammar:

* ``rules``: the rules judge alone;
* ``MODEL_SPEC`` (``openai:gpt-4o``, ...): the rules judge, then an LLM judge for what it leaves
  undecided (a cascade; ``cascade:MODEL_SPEC`` says so explicitly);
* ``panel:A,B,C``: the rules judge, then a majority vote of A, B and C (model specs or ``rules``);
* ``llm-only:SPEC``: the same without the rules judge in front (``llm-only:openai:gpt-4o``,
  ``llm-only:panel:A,B,C``), what judge-comparison studies want;
* ``KIND:REST`` for a judge kind a package registers in the ``commet.judges`` entry-point group:
  ``create(rest: str) -> Judge``. A registered kind wins over a model provider of the same name.

The built-in kinds (rules, cascade, panel, llm-only) are registered the same way, from
:mod:`commet.builtin_plugins`; their factories are in :mod:`commet.judges.kinds`.
"""

from __future__ import annotations

from commet.builtin_plugins import JUDGE_KINDS
from commet.judges.base import Judge, UnknownJudgeError
from commet.models.base import did_you_mean
from commet.models.errors import redact
from commet.plugins import JUDGES, load_plugin, plugin_names

#: the entry-point group judge kinds register in
GROUP = JUDGES
#: how each built-in kind is written (``rules``: no argument; ``panel:SPEC,SPEC,SPEC``, ...)
USAGE = {kind.name: kind.usage for kind in JUDGE_KINDS}
#: the kind a spec with no registered kind in front is: a model spec behind the rules judge
MODEL_SPEC_KIND = "cascade"


def create_judge(spec: str) -> Judge:
    """Build a judge from its spec; raises UnknownJudgeError with one clear line."""
    spec = spec.strip()
    kind, sep, rest = spec.partition(":")
    kinds = plugin_names(GROUP)
    if kind in kinds:
        takes_argument = ":" in USAGE.get(kind, ":")  # a third party's kind is always KIND:REST
        if takes_argument and not sep:
            raise UnknownJudgeError(f"judge {spec!r} needs an argument: {USAGE.get(kind, kind + ':...')}")
        if sep and not takes_argument:
            raise UnknownJudgeError(f"judge {kind!r} takes no argument: write {USAGE[kind]}, not {redact(spec)!r}")
        return _build(kind, rest)
    if not sep:
        usages = [USAGE.get(name, f"{name}:...") for name in kinds]
        forms = [*(repr(u) for u in usages if ":" not in u), "a model spec such as openai:gpt-4o",
                 *(u for u in usages if ":" in u)]
        raise UnknownJudgeError(f"unknown judge {spec!r}{did_you_mean(spec, kinds)}: use "
                                f"{', '.join(forms[:-1])} or {forms[-1]}")
    return _build(MODEL_SPEC_KIND, spec)


def _build(kind: str, rest: str) -> Judge:
    try:
        factory = load_plugin(GROUP, kind)
    except ImportError as exc:
        raise UnknownJudgeError(f"judge kind {kind!r} is not available: {exc}") from None
    judge = factory(rest)
    if not isinstance(judge, Judge):
        raise UnknownJudgeError(f"judge kind {kind!r} did not build a Judge (got {type(judge).__name__})")
    return judge
