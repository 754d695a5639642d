"""Providers and judges as plug-ins: a package declares them in its metadata (entry points) and
CoMMET finds them, with no edit to CoMMET. The package is a real distribution on sys.path."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from commet import plugins
from commet.engine import evaluate_async
from commet.judges import UnknownJudgeError, create_judge
from commet.models.base import UnknownModelError
from commet.models.registry import create_model
from commet.store import Store

PLUGIN = '''
from commet.judges.base import Judge, Verdict
from commet.models.base import Model, ModelResponse


class Echo(Model):
    """Answers every question with the first expected-looking word it was configured with."""

    free = True

    def __init__(self, name, options):
        self.reply = name
        self.spec = f"echo:{name}"

    async def generate(self, request):
        return ModelResponse(text=self.reply)


def create_model(name, options):
    return Echo(name, options)


class Always(Judge):
    cacheable = False

    def __init__(self, outcome):
        self.outcome = outcome
        self.name = f"always:{outcome}"

    async def judge(self, request):
        return Verdict(self.outcome, 0 if self.outcome == "correct" else None, "plug-in", self.name)


def create_judge(rest):
    return Always(rest)


def not_a_model(name, options):
    return object()
'''


@pytest.fixture
def plugin_distribution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    (tmp_path / "echo_plugin.py").write_text(PLUGIN, encoding="utf-8")
    info = tmp_path / "echo_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: echo-plugin\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[commet.models]\necho = echo_plugin:create_model\nbroken = echo_plugin:not_a_model\n"
        "missing = no_such_module:create\n\n[commet.judges]\nalways = echo_plugin:create_judge\n",
        encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    plugins.refresh()
    yield
    sys.modules.pop("echo_plugin", None)
    plugins.refresh()


def test_core_providers_are_not_entry_points_yet_are_listed() -> None:
    """As installed here: CoMMET's metadata declares none of its own plug-ins (the table registers them,
    tests/test_builtin_plugins.py), and the registry lists every one."""
    from importlib.metadata import entry_points

    declared = {ep.name: ep.value for ep in entry_points(group="commet.models")}
    assert not [value for value in declared.values() if value.startswith("commet.")], declared
    assert {"baseline", "replay", "openai", "anthropic", "google", "hf", "vllm"} <= set(plugins.plugin_names(plugins.MODELS))


def test_an_entry_point_into_commet_itself_is_read_from_the_table(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """An editable install made before a module was renamed lists CoMMET's own provider under its old path:
    the table, which the running code matches, decides; a third party's entry point still wins."""
    info = tmp_path / "stale-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: stale\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[commet.models]\nreplay = commet.models.renamed_away:create\n"
                                           "baseline = echo_plugin:create_model\n", encoding="utf-8")
    (tmp_path / "echo_plugin.py").write_text(PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    plugins.refresh()
    try:
        assert plugins.load_plugin(plugins.MODELS, "replay").__module__ == "commet.models.replay"
        assert plugins.load_plugin(plugins.MODELS, "baseline").__module__ == "echo_plugin"
    finally:
        sys.modules.pop("echo_plugin", None)
        plugins.refresh()


async def test_a_third_party_provider_and_judge_run_a_real_evaluation(plugin_distribution, tmp_path: Path) -> None:
    model = create_model("echo:Pear")
    assert model.spec == "echo:Pear"
    judge = create_judge("always:correct")
    assert judge.name == "always:correct"
    summary = await evaluate_async("echo:Pear", "sample", judge="always:correct", db=tmp_path / "p.sqlite",
                                   run="plug", settings=None)
    with Store(tmp_path / "p.sqlite") as store:
        run = store.get_run("plug")
        assert run is not None and run.model == "echo:Pear" and run.judge == "always:correct"
        turns = store.turn_rows(run.id)
    assert turns and all(t.response == "Pear" and t.correct is True for t in turns)
    assert summary.progress.questions == len(turns)


def test_bad_plug_ins_fail_with_one_clear_line(plugin_distribution) -> None:
    with pytest.raises(UnknownModelError, match="did not build a Model"):
        create_model("broken:x")
    with pytest.raises(UnknownModelError, match="provider 'missing' is not available") as caught:
        create_model("missing:x")
    assert "commet-bench" not in str(caught.value)  # a third party's module: no extra of CoMMET installs it
    with pytest.raises(UnknownModelError, match="unknown model provider 'nope'"):
        create_model("nope:x")
    with pytest.raises(UnknownJudgeError, match="unknown judge 'rulez'"):
        create_judge("rulez")
