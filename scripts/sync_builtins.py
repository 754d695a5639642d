"""Write what is derived from the table of built-in plug-ins (src/commet/builtin_plugins.py) into
README.md, or check that it is there and that pyproject.toml agrees with the table.

Why: a provider is declared once, in the table; README's tables of models and of extras are copies
that must not drift. pyproject.toml declares no entry point for CoMMET's own plug-ins (the table
registers them; an entry point there would be a second registration) and no extra: it declares
``optional-dependencies`` dynamic and names the build hook (hatch_build.py) that writes the
table's extras and their requirements into the package's metadata. This checks both.

    python scripts/sync_builtins.py           # rewrite README's derived tables
    python scripts/sync_builtins.py --check   # print what differs; exit 1 when anything does

tests/test_builtin_plugins.py runs the check.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from commet.builtin_plugins import EXTRAS, PROVIDERS, Extra, Provider, included_extras  # noqa: E402

#: README's two derived tables, found by their header rows
MODELS_HEADER = "| spec | what |"
EXTRAS_HEADER = "| feature | extra |"
#: the entry-point groups of plug-ins, which CoMMET's own pyproject.toml leaves to third parties
GROUPS = ("commet.models", "commet.judges")
#: the build hook that sets the extras from the table ([tool.hatch.metadata.hooks.custom]'s path)
BUILD_HOOK = "hatch_build.py"


def models_table(providers: Sequence[Provider]) -> list[str]:
    return [MODELS_HEADER, "|---|---|", *(f"| {spec} | {what} |" for p in providers for spec, what in p.readme)]


def extras_table(extras: Sequence[Extra]) -> list[str]:
    return [EXTRAS_HEADER, "|---|---|", *(f"| {e.feature} | `{e.name}`{' ' + e.note if e.note else ''} |"
                                        for e in extras if e.feature is not None)]


def _block(lines: list[str], header: str) -> tuple[int, int] | None:
    """Where the block that starts with ``header`` is, (its first line, one past its last), or None: a
    Markdown table ends at its first line that is not a row."""
    if header not in lines:
        return None
    start = lines.index(header)
    ends = (i for i in range(start + 1, len(lines)) if not lines[i].startswith("|"))
    return start, next(ends, len(lines))


def problems(pyproject: str, readme: str, providers: Sequence[Provider] = PROVIDERS,
             extras: Sequence[Extra] = EXTRAS) -> list[str]:
    """Every way pyproject.toml's and README.md's text differ from the table (empty: in step)."""
    found: list[str] = []
    document = tomllib.loads(pyproject)
    project = document["project"]
    declared = project.get("entry-points", {})
    found += [f"pyproject.toml: entry point {name!r} in {group}: CoMMET's own plug-ins are registered by "
              "src/commet/builtin_plugins.py alone; remove it" for group in GROUPS for name in declared.get(group, {})]
    found += _extras_problems(project, document.get("tool", {}))
    names = {e.name for e in extras}
    found += [f"builtin_plugins: provider {p.name!r} needs extra {p.extra!r}, which the table does not list"
              for p in providers if p.extra is not None and p.extra not in names]
    found += [f"builtin_plugins: extra {e.name!r} requires nothing" for e in extras if not e.requires]
    found += [f"builtin_plugins: extra {e.name!r} includes commet-bench[{nested}], which the table does not list"
              for e in extras for r in e.requires for nested in included_extras(r, project["name"])
              if nested not in names]
    lines = readme.splitlines()
    for title, table in (("models", models_table(providers)), ("extras", extras_table(extras))):
        where = _block(lines, table[0])
        if where is None:
            found.append(f"README.md: no {title} table (a line {table[0]!r})")
        elif lines[where[0]:where[1]] != table:
            have_rows, want_rows = lines[where[0]:where[1]], table
            differ = next((i for i, (a, b) in enumerate(zip(have_rows, want_rows, strict=False)) if a != b),
                          min(len(have_rows), len(want_rows)))
            found.append(f"README.md:{where[0] + differ + 1}: the {title} table differs from the table "
                         f"(README has {have_rows[differ] if differ < len(have_rows) else 'no row'!r}, "
                         f"expected {want_rows[differ] if differ < len(want_rows) else 'no row'!r})")
    return found


def _extras_problems(project: dict[str, Any], tool: dict[str, Any]) -> list[str]:
    """The extras come from the table through the build hook: pyproject.toml has no static table of them."""
    found: list[str] = []
    if "optional-dependencies" in project:
        found.append("pyproject.toml: [project.optional-dependencies] is the table's: each extra and its "
                     "requirements are an Extra row of src/commet/builtin_plugins.py; remove it")
    if "optional-dependencies" not in project.get("dynamic", []):
        found.append("pyproject.toml: [project] dynamic does not name 'optional-dependencies' (the build hook "
                     f"{BUILD_HOOK} sets them from the table)")
    hook = tool.get("hatch", {}).get("metadata", {}).get("hooks", {}).get("custom")
    if hook is None or hook.get("path", BUILD_HOOK) != BUILD_HOOK:
        found.append(f"pyproject.toml: no [tool.hatch.metadata.hooks.custom] with path = {BUILD_HOOK!r} (the build "
                     "hook that writes the table's extras into the package's metadata)")
    return found


def synced(readme: str) -> str:
    """README.md's text with the derived tables written from the table."""
    out = readme.split("\n")
    for table in (models_table(PROVIDERS), extras_table(EXTRAS)):
        where = _block(out, table[0])
        if where is None:
            raise SystemExit(f"README.md has no table whose header is {table[0]!r}: add one where it belongs")
        out[where[0]:where[1]] = table
    return "\n".join(out)


def main(argv: list[str], root: Path = ROOT) -> int:
    pyproject_path, readme_path = root / "pyproject.toml", root / "README.md"
    pyproject, readme = pyproject_path.read_text(encoding="utf-8"), readme_path.read_text(encoding="utf-8")
    if "--check" in argv:
        found = problems(pyproject, readme)
        for problem in found:
            print(problem)
        return 1 if found else 0
    new_readme = synced(readme)
    if new_readme != readme:
        readme_path.write_text(new_readme, encoding="utf-8")
        print(f"wrote {readme_path.name}")
    remaining = problems(pyproject, new_readme)
    for problem in remaining:  # what only a hand can fix: pyproject.toml, the table's own references
        print(problem)
    return 1 if remaining else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
