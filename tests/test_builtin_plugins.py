"""The one table of built-in providers, judge kinds and extras, and everything derived from it.

At run time the registry, the missing-module advice and the prices are computed from the table;
when the package is built, its extras and their requirements (hatch_build.py, the build hook
pyproject.toml names instead of a table of extras); README.md holds written copies of its models and
extras, which scripts/sync_builtins.py checks and writes. Each copy edited alone (and the table
edited alone) must make the check fail.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from collections.abc import Mapping
from functools import cache
from importlib import import_module
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from commet import builtin_plugins as table
from commet import extras, plugins
from commet.extras import install_command
from commet.models import pricing
from commet.models.base import UnknownModelError
from commet.models.registry import create_model

ROOT = Path(__file__).resolve().parent.parent


def load_script(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sync = load_script("sync_builtins", ROOT / "scripts" / "sync_builtins.py")
PYPROJECT = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_pyproject_and_readme_say_what_the_table_says() -> None:
    assert sync.problems(PYPROJECT, README) == []


def test_the_run_time_copies_are_the_table() -> None:
    assert plugins.BUILT_IN["commet.models"] == {p.name: p.factory for p in table.PROVIDERS}
    assert plugins.BUILT_IN["commet.models"]["openai"] == "commet.models.openai_compat:create"
    assert {"baseline", "replay", "openai", "anthropic", "google", "hf", "vllm"} <= set(plugins.BUILT_IN["commet.models"])
    assert plugins.BUILT_IN["commet.judges"] == {k.name: k.factory for k in table.JUDGE_KINDS}
    assert {"rules", "cascade", "panel", "llm-only"} <= set(plugins.BUILT_IN["commet.judges"])
    modules = [module for extra in table.EXTRAS for module in extra.modules]
    assert len(modules) == len(set(modules)), "a module names one extra to install"
    assert extras.EXTRA_OF_MODULE["aiohttp"] == "openai" and extras.EXTRA_OF_MODULE["inspect_ai"] == "inspect"
    assert {p.name: dict(p.prices) for p in table.PROVIDERS if p.prices} == pricing.PRICES
    assert pricing.lookup("google", "gemini-2.5-pro") == (1.25, 10.00)


def test_every_table_entry_is_well_formed() -> None:
    names = [p.name for p in table.PROVIDERS] + [k.name for k in table.JUDGE_KINDS] + [e.name for e in table.EXTRAS]
    assert all(re.fullmatch(r"[a-z][a-z0-9-]*", name) for name in names)
    assert len({p.name for p in table.PROVIDERS}) == len(table.PROVIDERS)
    for provider in table.PROVIDERS:
        assert provider.readme, provider.name
        assert all(spec.startswith(f"`{provider.name}:") for spec, _ in provider.readme), provider.name
        for model, (price_in, price_out) in provider.prices.items():
            assert model == model.lower() and 0 <= price_in <= price_out, (provider.name, model)
    for kind in table.JUDGE_KINDS:
        assert kind.usage == kind.name or kind.usage.startswith(f"{kind.name}:"), kind
    extra_names = {e.name for e in table.EXTRAS}
    for extra in table.EXTRAS:
        assert extra.requires, extra.name
        for line in extra.requires:
            requirement = Requirement(line)
            if requirement.name == "commet-bench":  # another extra of CoMMET's, at this very version
                assert requirement.extras <= extra_names and not str(requirement.specifier), line
            else:  # scripts/floors.py pins each at its lower bound
                assert any(s.operator == ">=" for s in requirement.specifier), line


@pytest.mark.parametrize("target", [p.factory for p in table.PROVIDERS] + [k.factory for k in table.JUDGE_KINDS])
def test_every_factory_exists(target: str) -> None:
    module, _, attribute = target.partition(":")
    assert callable(getattr(import_module(module), attribute))


def requirement_names(extra: str, optional: dict[str, list[str]]) -> set[str]:
    """The distributions an extra installs: its requirements, the extras of CoMMET it names, and the
    requirements an extra of another package adds (``openai[aiohttp]`` installs aiohttp)."""
    names: set[str] = set()
    for line in optional[extra]:
        requirement = Requirement(line)
        if canonicalize_name(requirement.name) == "commet-bench":
            for nested in requirement.extras:
                names |= requirement_names(nested, optional)
            continue
        names.add(canonicalize_name(requirement.name))
        for sub_extra in requirement.extras:
            try:
                nested_lines = requires(requirement.name) or []
            except PackageNotFoundError:
                continue
            names |= {canonicalize_name(Requirement(r).name) for r in nested_lines
                      if Requirement(r).marker is not None and Requirement(r).marker.evaluate({"extra": sub_extra})}
    return names


@cache
def installed_modules() -> Mapping[str, list[str]]:
    return packages_distributions()


@pytest.mark.parametrize("extra", [e for e in table.EXTRAS if e.modules], ids=lambda e: e.name)
def test_each_extra_installs_the_modules_it_is_named_for(extra: table.Extra) -> None:
    """The advice "pip install 'commet-bench[X]'" for a missing module must install that module: a
    distribution that provides it (read from what is installed here) is among X's requirements."""
    installs = requirement_names(extra.name, table.requirements())
    providers = installed_modules()
    for module in extra.modules:
        found = {canonicalize_name(d) for d in providers.get(module, [])} or {canonicalize_name(module)}
        assert found & installs, (extra.name, module, sorted(installs))


BROKEN_PYPROJECT = [
    ("[project.entry-points.inspect_ai]\n", '[project.entry-points."commet.models"]\nvllm = '
     '"commet.models.vllm_offline:create"\n\n[project.entry-points.inspect_ai]\n', "entry point 'vllm' in commet.models"),
    ("[project.entry-points.inspect_ai]\n", '[project.entry-points."commet.judges"]\necho = "echo:create"\n\n'
     "[project.entry-points.inspect_ai]\n", "entry point 'echo' in commet.judges"),
    # the extras written back into pyproject.toml (as before the table held them), beside the dynamic ones
    ("[project.scripts]\n", '[project.optional-dependencies]\ninspect = ["inspect-ai>=0.3.285"]\n\n[project.scripts]\n',
     "[project.optional-dependencies] is the table's"),
    ('dynamic = ["version", "optional-dependencies"]\n', 'dynamic = ["version"]\n',
     "dynamic does not name 'optional-dependencies'"),
    ('dynamic = ["version", "optional-dependencies"]\n', 'dynamic = []\n', "dynamic does not name 'optional-dependencies'"),
    ('[tool.hatch.metadata.hooks.custom]\npath = "hatch_build.py"\n', "", "no [tool.hatch.metadata.hooks.custom]"),
    ('path = "hatch_build.py"\n', 'path = "build_hook.py"\n', "no [tool.hatch.metadata.hooks.custom]"),
]


@pytest.mark.parametrize(("old", "new", "problem"), BROKEN_PYPROJECT, ids=[b[2] for b in BROKEN_PYPROJECT])
def test_pyproject_edited_alone_fails_the_check(old: str, new: str, problem: str) -> None:
    assert old in PYPROJECT
    found = sync.problems(PYPROJECT.replace(old, new, 1), README)
    assert len(found) == 1 and problem in found[0], found


BROKEN_README = [
    ("| `google:MODEL` | the official `google-genai` SDK |\n", "", "the models table differs"),
    ("the official `anthropic` SDK", "the official `anthropic` SDK, and more", "the models table differs"),
    ("| `vllm:` models | `vllm` (GPU) |", "| `vllm:` models | `vllm` |", "the extras table differs"),
    ("| the inspect_ai task | `inspect` |\n", "| the inspect_ai task | `inspect` |\n| a new thing | `new` |\n",
     "the extras table differs"),
    ("| spec | what |", "| spec | description |", "no models table"),
]


@pytest.mark.parametrize(("old", "new", "problem"), BROKEN_README, ids=[f"{b[2]}-{i}" for i, b in enumerate(BROKEN_README)])
def test_readme_edited_alone_fails_the_check(old: str, new: str, problem: str) -> None:
    assert old in README
    broken = README.replace(old, new, 1)
    found = sync.problems(PYPROJECT, broken)
    assert len(found) == 1 and problem in found[0], found
    if "differs" in problem:  # located at the first row that differs
        row = next(i for i, (a, b) in enumerate(zip(broken.splitlines(), README.splitlines(), strict=False)) if a != b)
        assert found[0].startswith(f"README.md:{row + 1}: "), found


def test_the_table_edited_alone_fails_the_check() -> None:
    new = table.Provider("not-yet", "commet.models.not_yet:create", "not-yet", (("`not-yet:TEXT`", "says TEXT"),))
    found = sync.problems(PYPROJECT, README, providers=(*table.PROVIDERS, new))
    assert any("provider 'not-yet' needs extra 'not-yet'" in p for p in found)
    assert any("the models table differs" in p for p in found)
    found = sync.problems(PYPROJECT, README, extras=(*table.EXTRAS, table.Extra("not-yet", ("not_yet",), "a thing",
                                                                               requires=("not-yet>=1.0",))))
    assert len(found) == 1 and "the extras table differs" in found[0], found
    found = sync.problems(PYPROJECT, README, extras=(*table.EXTRAS, table.Extra("not-yet", (), None, requires=())))
    assert found == ["builtin_plugins: extra 'not-yet' requires nothing"]
    found = sync.problems(PYPROJECT, README, extras=(*table.EXTRAS, table.Extra(
        "not-yet", (), None, requires=("commet-bench[hf, gpu]", "commet-bench [web]"))))
    assert found == ["builtin_plugins: extra 'not-yet' includes commet-bench[gpu], which the table does not list"]


def test_a_provider_is_registered_by_the_table_alone() -> None:
    """pyproject.toml holds no entry point of CoMMET's own, and the built-ins are there all the same."""
    declared = sync.tomllib.loads(PYPROJECT)["project"].get("entry-points", {})
    assert not set(declared) & set(sync.GROUPS), declared
    assert plugins.plugin_names(plugins.MODELS)[:len(table.PROVIDERS)] == [p.name for p in table.PROVIDERS]
    assert plugins.plugin_names(plugins.JUDGES)[:len(table.JUDGE_KINDS)] == [k.name for k in table.JUDGE_KINDS]


#: run in a Python with no site-packages (-I -S): neither CoMMET, nor its dependencies, nor hatchling
BARE_HOOK = """
import json, sys
sys.path.insert(0, sys.argv[1])
import hatch_build
extras = hatch_build.optional_dependencies()
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("commet", "pydantic", "hatchling", "_commet_builtin_plugins_table"))
print(json.dumps({"extras": extras, "loaded": loaded, "hook": hasattr(hatch_build, "ExtrasFromTable")}))
"""


def test_the_build_hook_reads_the_table_where_nothing_is_installed(tmp_path: Path) -> None:
    """A build (and scripts/floors.py, before its venv has anything) runs without CoMMET's dependencies: the
    hook loads the table by its path and leaves nothing behind, and the file imports without hatchling."""
    result = subprocess.run([sys.executable, "-I", "-S", "-c", BARE_HOOK, str(ROOT)], capture_output=True,
                            text=True, timeout=60, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    bare = json.loads(result.stdout)
    assert bare["extras"] == table.requirements() == {e.name: list(e.requires) for e in table.EXTRAS}
    assert list(bare["extras"]) == [e.name for e in table.EXTRAS]
    assert bare["loaded"] == [] and bare["hook"] is False


def _flattened(extras: Mapping[str, list[str]], extra: str) -> set[str]:
    """An extra's requirements with the extras of CoMMET it includes replaced by theirs, as a wheel lists them."""
    found: set[str] = set()
    for line in extras[extra]:
        requirement = Requirement(line)
        if requirement.name == "commet-bench":
            found |= {r for nested in requirement.extras for r in _flattened(extras, nested)}
        else:
            found.add(str(requirement))
    return found


def test_hatchling_takes_the_extras_from_the_table() -> None:
    """What the wheel's metadata says: hatchling reads pyproject.toml, runs the hook it names, and ends with
    the table's extras (CoMMET's own extras included in place). Without hatchling installed,
    test_the_build_hook_reads_the_table_where_nothing_is_installed still proves the hook's half."""
    pytest.importorskip("hatchling", reason="hatchling, the build backend, is not installed (scripts/test.sh "
                                            "installs it)")
    from hatchling.metadata.core import ProjectMetadata
    from hatchling.plugin.manager import PluginManager

    hook = load_script("hatch_build", ROOT / "hatch_build.py")
    metadata: dict[str, object] = {"name": "commet-bench"}
    hook.ExtrasFromTable(str(ROOT), {}).update(metadata)
    assert metadata == {"name": "commet-bench", "optional-dependencies": table.requirements()}
    built = ProjectMetadata(str(ROOT), PluginManager()).core.optional_dependencies
    wanted = table.requirements()
    assert {name: set(lines) for name, lines in built.items()} == {name: _flattened(wanted, name) for name in wanted}
    assert "torch>=2.4" in built["diffusers"] and "openai[aiohttp]>=2.16" in built["test"]


def test_floors_reads_the_extras_from_the_table(tmp_path: Path) -> None:
    """scripts/floors.py pins an extra's requirements (and those of the extras it includes) at their lower
    bounds, in a Python where nothing is installed, as the floors job first runs it."""
    result = subprocess.run([sys.executable, "-I", "-S", str(ROOT / "scripts" / "floors.py"), "diffusers",
                             "--only-extras"], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    wanted = {Requirement(line) for line in _flattened(table.requirements(), "diffusers")}
    assert result.stdout.splitlines() == sorted(f"{r.name}=={next(iter(r.specifier)).version}" for r in wanted)
    assert "torch==2.4" in result.stdout.splitlines()


def test_the_script_writes_the_derived_parts_and_nothing_else(tmp_path: Path) -> None:
    """A README with the derived tables broken is written back to exactly the one in the repository (and
    pyproject.toml, which holds nothing derived, is left alone)."""
    broken_readme = README.replace("| `hf:PATH_OR_ID` |", "| `hf:PATH` |").replace(
        "| HTML reports and plots | `reports` |\n", "")
    (tmp_path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (tmp_path / "README.md").write_text(broken_readme, encoding="utf-8")
    assert sync.main(["--check"], root=tmp_path) == 1
    assert sync.main([], root=tmp_path) == 0
    assert (tmp_path / "pyproject.toml").read_text(encoding="utf-8") == PYPROJECT
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == README
    assert sync.main(["--check"], root=tmp_path) == 0


def test_the_script_runs_as_a_command(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "sync_builtins.py"), "--check"],
                            capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert result.returncode == 0 and result.stdout == "", result.stdout + result.stderr


def test_a_provider_module_is_imported_only_when_a_spec_names_it() -> None:
    code = ("import sys\n"
            "from commet.models.registry import create_model\n"
            "from commet.judges.registry import create_judge\n"
            "create_model('baseline:first-option'); create_judge('rules')\n"
            "print(sorted(m for m in sys.modules if m.startswith(('commet.models.', 'commet.judges.', 'openai', "
            "'anthropic', 'google', 'torch', 'transformers', 'vllm'))))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                            env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    loaded = set(eval(result.stdout))  # noqa: S307 - our own printed list
    assert "commet.models.baseline" in loaded and "commet.judges.kinds" in loaded
    assert not loaded & {"commet.models.openai_compat", "commet.models.anthropic_model", "commet.models.google_model",
                         "commet.models.transformers_model", "commet.models.vllm_offline", "commet.judges.llm",
                         "openai", "anthropic", "torch", "transformers", "vllm"}, loaded


def test_a_provider_whose_module_cannot_be_imported_names_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """The extra comes from the table (hf's module needs the hf extra), not from the provider's name."""
    # as if the module itself failed to import
    monkeypatch.setitem(sys.modules, "commet.models.transformers_model", None)
    with pytest.raises(UnknownModelError) as caught:
        create_model("hf:some/model")
    assert str(caught.value).startswith("provider 'hf' is not available: ")
    assert str(caught.value).endswith(f"Install the extra: {install_command('hf')}")
    assert "\n" not in str(caught.value)
