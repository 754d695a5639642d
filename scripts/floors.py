"""Print a pip constraints file pinning every direct dependency to its declared lower bound.

Why: pip has no ``--resolution=lowest-direct``; pinning each ``name>=X`` of the base
dependencies and of the chosen extras to ``name==X`` and letting pip resolve the rest gives
the same install, which proves the lower bounds really work. The base dependencies are read from
pyproject.toml, the extras' from the table of built-in plug-ins (src/commet/builtin_plugins.py,
loaded by hatch_build.py without the ``commet`` package: the floors job runs this before anything
is installed).

    python scripts/floors.py openai,datasets,reports > constraints.txt
    python scripts/floors.py inspect --only-extras > constraints.txt   # inspect-ai at its floor, the rest resolved
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hatch_build import load_table  # noqa: E402

REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*([^;]*?)\s*(?:;\s*(.*))?$")


def floors(extras: list[str], *, only_extras: bool = False) -> dict[str, str]:
    """``{name: floor}`` for the base dependencies and ``extras`` (``commet-bench[...]`` references followed);
    ``only_extras``: the extras' own dependencies alone (an extra whose packages need newer base ones)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    table = load_table(ROOT)
    optional = table.requirements()
    requirements = [] if only_extras else list(project["dependencies"])
    todo, seen = list(extras), set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        if extra not in optional:
            raise SystemExit(f"floors: unknown extra {extra!r} (known: {', '.join(optional)})")
        seen.add(extra)
        requirements += optional[extra]
        for requirement in optional[extra]:
            todo += table.included_extras(requirement, project["name"])
    pins: dict[str, str] = {}
    for requirement in requirements:
        match = REQUIREMENT.match(requirement)
        if match is None:
            raise SystemExit(f"floors: cannot read requirement {requirement!r}")
        name, specifier, marker = match.groups()
        if name == project["name"] or (marker and not _marker_holds(marker)):
            continue
        floor = re.search(r">=\s*([0-9][^,\s]*)", specifier)
        if floor is None:
            raise SystemExit(f"floors: {requirement!r} has no lower bound")
        pins[name.lower()] = max(pins.get(name.lower(), floor.group(1)), floor.group(1), key=_version_key)
    return pins


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


def _marker_holds(marker: str) -> bool:
    """The only markers used in the requirements: ``python_version<'3.11'`` and the like."""
    match = re.fullmatch(r"python_version\s*(<|>=)\s*['\"](\d+)\.(\d+)['\"]", marker.strip())
    if match is None:
        raise SystemExit(f"floors: unsupported marker {marker!r}")
    version = (int(match.group(2)), int(match.group(3)))
    return sys.version_info[:2] < version if match.group(1) == "<" else sys.version_info[:2] >= version


def main() -> None:
    arguments = [a for a in sys.argv[1:] if a != "--only-extras"]
    extras = [e for e in (arguments[0] if arguments else "").split(",") if e]
    for name, version in sorted(floors(extras, only_extras="--only-extras" in sys.argv[1:]).items()):
        print(f"{name}=={version}")


if __name__ == "__main__":
    main()
