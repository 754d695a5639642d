"""Every package src/ imports is declared (pyproject.toml's base dependencies, or an extra's requirements in the
table of built-in plug-ins, src/commet/builtin_plugins.py), and every declared one is used.

Imports are read from the source (lazy ones inside functions too, the names given to
``require``/``import_module`` and the providers' ``sdk_module``), mapped to the distributions that provide them. The floors job
(scripts/floors.sh) then installs each declared dependency at its lower bound and runs the tests.
"""

from __future__ import annotations

import ast
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

from commet.builtin_plugins import requirements

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
#: the standard library's from Python 3.11 (imported only there; tomli is declared for 3.10)
STDLIB_FROM_311 = {"tomllib"}
#: declared, used without being imported by name
USED_INDIRECTLY = {"python-multipart": "FastAPI reads the review and study apps' forms with it",
                   "itsdangerous": "Starlette's session middleware signs the apps' cookies with it"}


def _name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert match is not None, requirement
    return re.sub(r"[-_.]+", "-", match.group(1)).lower()


def declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = {_name(r) for r in project["dependencies"]}
    for extra, required in requirements().items():
        if extra != "test":
            names |= {_name(r) for r in required}
    return names - {_name(project["name"])}


def imported_modules() -> dict[str, str]:
    """Top-level module -> a file importing it, for every module src/commet imports that is not its own or stdlib."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "src" / "commet").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) and \
                    isinstance(node.args[0].value, str) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
                    "require", "_require", "import_module"):
                names = [node.args[0].value]
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and any(
                    isinstance(t, ast.Name) and t.id == "sdk_module" for t in node.targets):
                names = [str(node.value.value)]  # a remote provider's SDK, imported by models.remote
            for name in names:
                top = name.split(".")[0]
                if top != "commet" and top not in sys.stdlib_module_names and top not in STDLIB_FROM_311:
                    found.setdefault(top, str(path.relative_to(ROOT)))
    return found


def test_every_package_src_imports_is_declared() -> None:
    providers = packages_distributions()
    wanted = declared()
    undeclared = {module: where for module, where in imported_modules().items()
                  if not {_name(d) for d in providers.get(module, [module])} & wanted}
    assert not undeclared, f"imported by src/ but declared neither in pyproject.toml nor by an extra: {undeclared}"


def test_every_declared_package_is_imported_by_src() -> None:
    providers = packages_distributions()
    used = {_name(d) for module in imported_modules() for d in providers.get(module, [module])}
    unused = declared() - used - set(USED_INDIRECTLY)
    assert not unused, f"declared (pyproject.toml or an extra) but never imported by src/: {sorted(unused)}"
    assert "httpx" not in declared() and {"aiohttp", "certifi", "huggingface-hub", "pyyaml", "tomli"} <= declared()
