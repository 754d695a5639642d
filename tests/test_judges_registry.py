"""Judge specs: the built-in kinds are registered plug-ins like providers, under the same grammar.

The LLM judges here stand on replay models (a real file, no network); what they would answer is
not asked, only what was built.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commet import plugins
from commet.judges import RulesJudge, UnknownJudgeError, create_judge
from commet.judges.cascade import CascadeJudge
from commet.judges.llm import LLMJudge
from commet.judges.panel import PanelJudge
from commet.models.base import MissingKeyError, ModelSpecError


@pytest.fixture
def replay(tmp_path: Path) -> str:
    path = tmp_path / "judge.json"
    path.write_text(json.dumps({}), encoding="utf-8")
    return f"replay:{path}"


def test_the_built_in_kinds_are_registered_in_the_judges_group() -> None:
    assert {"rules", "cascade", "panel", "llm-only"} <= set(plugins.plugin_names(plugins.JUDGES))


def test_each_built_in_kind_builds_its_judge(replay: str) -> None:
    assert isinstance(create_judge("rules"), RulesJudge)
    assert isinstance(create_judge("  rules "), RulesJudge)
    cascade = create_judge(replay)
    assert isinstance(cascade, CascadeJudge) and isinstance(cascade.fallback, LLMJudge)
    assert cascade.name.startswith("rules+llm:replay:judge.json@")
    assert create_judge(f"cascade:{replay}").name == cascade.name
    bare = create_judge(f"llm-only:{replay}")
    assert isinstance(bare, LLMJudge) and bare.name == cascade.fallback.name
    panel = create_judge(f"panel:{replay},rules")
    assert isinstance(panel, CascadeJudge) and isinstance(panel.fallback, PanelJudge)
    assert [type(m) for m in panel.fallback.members] == [LLMJudge, RulesJudge]
    alone = create_judge(f"llm-only:panel:{replay},rules")
    assert isinstance(alone, PanelJudge) and alone.name == panel.fallback.name
    assert create_judge(f"cascade:panel:{replay},rules").name == panel.name


@pytest.mark.parametrize(("spec", "message"), [
    ("rules:strict", "judge 'rules' takes no argument: write rules, not 'rules:strict'"),
    ("rules:", "judge 'rules' takes no argument"),
    ("rules:sk-abcdefghijklmnopqrstuvwxyz0123456789", "not 'rules:***'"),  # a pasted key is not repeated
    ("panel", "judge 'panel' needs an argument: panel:SPEC,SPEC,SPEC"),
    ("llm-only", "judge 'llm-only' needs an argument: llm-only:SPEC"),
    ("rulez", "unknown judge 'rulez' (did you mean 'rules'?): use 'rules', a model spec such as openai:gpt-4o, "
              "cascade:SPEC, panel:SPEC,SPEC,SPEC or llm-only:SPEC"),
    ("panle", "unknown judge 'panle' (did you mean 'panel'?)"),
    ("nosuch:model", "judge 'nosuch:model': unknown model provider 'nosuch'"),
    ("cascade:nosuch:model", "judge 'nosuch:model': unknown model provider 'nosuch'"),
    ("panel:rules", "a panel needs at least two members"),
    ("llm-only:openai:gpt-4o?base_url=http://127.0.0.1:9/v1&tmeout=3", "unknown option(s) 'tmeout'"),
])
def test_bad_judge_specs_fail_with_one_line(spec: str, message: str) -> None:
    with pytest.raises(UnknownJudgeError) as caught:
        create_judge(spec)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_bad_model_spec_inside_a_judge_keeps_its_cause(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI tells a key missing here (the server may have it) from a bad spec by the cause."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(UnknownJudgeError) as caught:
        create_judge("openai:gpt-4o")
    assert isinstance(caught.value.__cause__, MissingKeyError)
    with pytest.raises(UnknownJudgeError) as caught:
        create_judge("openai:gpt-4o?detail=x")
    assert isinstance(caught.value.__cause__, ModelSpecError)
