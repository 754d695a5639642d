"""Every error CoMMET defines has one root, CommetError, and the tree in docs/architecture.md is the code's.

The classes are found by importing every module of the package, so a new error class that
forgets the root, or the documentation, fails here with what to do.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from functools import cache
from pathlib import Path

import pytest

import commet
from commet.errors import CommetError

ROOT = Path(__file__).resolve().parent.parent
#: a tree line: the drawing, the class, its built-in bases in brackets
TREE_LINE = re.compile(r"^(?P<indent>[│├└─ ]*)(?P<name>[A-Z]\w*)(?: \((?P<bases>[\w, ]+)\))?(?:\s|$)")


@cache
def defined_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class defined in a module of the package, by name (names are unique)."""
    found: dict[str, type[BaseException]] = {}
    for module_info in pkgutil.walk_packages(commet.__path__, "commet."):
        if module_info.name.endswith("__main__"):  # runs the command
            continue
        module = importlib.import_module(module_info.name)
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module.__name__:
                assert name not in found, f"two error classes named {name}"
                found[name] = value
    return found


def documented_tree() -> dict[str, tuple[str | None, set[str]]]:
    """name -> (parent in the tree, built-in bases in brackets), from docs/architecture.md's Errors section."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = text.split("## Errors", 1)[1].split("```", 2)[1]
    tree: dict[str, tuple[str | None, set[str]]] = {}
    stack: list[str] = []
    for line in block.strip("\n").splitlines():
        match = TREE_LINE.match(line)
        assert match, f"docs/architecture.md: cannot read the tree line {line!r}"
        depth = len(match["indent"]) // 4
        del stack[depth:]
        tree[match["name"]] = (stack[-1] if stack else None,
                               {b.strip() for b in (match["bases"] or "").split(",") if b.strip()})
        stack.append(match["name"])
    return tree


def test_every_error_class_has_the_root() -> None:
    rootless = sorted(f"{cls.__module__}.{name}" for name, cls in defined_exceptions().items()
                      if not issubclass(cls, CommetError))
    assert rootless == [], ("derive these from commet.errors.CommetError (keeping their built-in base) and "
                            f"add them to the tree in docs/architecture.md: {rootless}")


def test_the_documented_tree_is_the_code() -> None:
    classes = defined_exceptions()
    tree = documented_tree()
    assert sorted(set(classes) - set(tree)) == [], "add these to the tree in docs/architecture.md"
    assert sorted(set(tree) - set(classes)) == [], "the tree in docs/architecture.md names classes that do not exist"
    for name, (parent, built_in) in tree.items():
        cls = classes[name]
        nearest = next((base.__name__ for base in cls.__mro__[1:] if issubclass(base, CommetError)), None)
        assert nearest == parent, f"{name}: the tree says it is a {parent}, the code a {nearest}"
        assert {b.__name__ for b in cls.__bases__ if not issubclass(b, CommetError)} == built_in, name


@pytest.mark.parametrize(("name", "caught_as"), [
    ("StoreError", ValueError), ("MergeError", ValueError), ("LabelError", ValueError), ("RunLookupError", KeyError),
    ("FormatError", ValueError), ("DatasetRefused", ValueError), ("UnknownModelError", ValueError),
    ("MissingKeyError", ValueError), ("UnknownJudgeError", ValueError), ("MissingExtraError", RuntimeError),
    ("WorkerError", RuntimeError), ("RunConflictError", ValueError), ("ModelCallError", Exception),
])
def test_what_was_caught_before_the_root_still_is(name: str, caught_as: type[BaseException]) -> None:
    assert issubclass(defined_exceptions()[name], caught_as)


def test_the_families_named_in_the_issue() -> None:
    from commet.models.base import MissingKeyError, ModelSpecError, UnknownModelError
    from commet.store.errors import StoreError
    from commet.store.labels import LabelError
    from commet.store.merge import MergeError

    assert issubclass(MergeError, StoreError) and issubclass(LabelError, StoreError)
    assert issubclass(UnknownModelError, ModelSpecError) and issubclass(MissingKeyError, ModelSpecError)
    assert not issubclass(ModelSpecError, UnknownModelError)
    assert commet.CommetError is CommetError


def test_the_package_is_marked_typed_and_shipped_so() -> None:
    """PEP 561: py.typed inside the package; hatch ships every file of the package folder it is given."""
    assert (Path(commet.__file__).parent / "py.typed").is_file()
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'\[tool\.hatch\.build\.targets\.wheel\]\npackages = \["src/commet"\]', text)
    assert "py.typed" not in text.split("[tool.hatch", 1)[1].split("[tool.importlinter]")[0]  # never excluded
