"""Write what is derived from the table of built-in plug-ins (src/commet/builtin_plugins.py) into
README.md, or check that it is there and that pyproject.toml agrees with the table.

Why: a provider is declared once, in the table; README's tables of models and of extras are copies
that must not drift. pyproject.toml declares no entry point for CoMMET's own plug-ins (the table
registers them; an entry point there would be a second registration), and the extras'
requirements stay in it (their lower bounds are checked by scripts/floors.py): this checks that
the extras there are the table's.

    python scripts/sync_builtins.py           # rewrite README's derived tables
    python scripts/sync_builtins.py --check   # print what differs; exit 1 when anything does

tests/test_builtin_plugins.py runs the check.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from commet.builtin_plugins import EXTRAS, PROVIDERS, Extra, Provider  # noqa: E402

#: README's two derived tables, found by their header rows
MODELS_HEADER = "| spec | what |"
EXTRAS_HEADER = "| feature | extra |"
#: the entry-point groups of plug-ins, which CoMMET's own pyproject.toml leaves to third parties
GROUPS = ("commet.models", "commet.judges")


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
    project = tomllib.loads(pyproject)["project"]
    declared = project.get("entry-points", {})
    found += [f"pyproject.toml: entry point {name!r} in {group}: CoMMET's own plug-ins are registered by "
              "src/commet/builtin_plugins.py alone; remove it" for group in GROUPS for name in declared.get(group, {})]
    names = {e.name for e in extras}
    optional = set(project.get("optional-dependencies", {}))
    found += [f"pyproject.toml: extra {name!r} is not in the table" for name in sorted(optional - names)]
    found += [f"pyproject.toml: the table's extra {name!r} is missing" for name in sorted(names - optional)]
    found += [f"builtin_plugins: provider {p.name!r} needs extra {p.extra!r}, which the table does not list"
              for p in providers if p.extra is not None and p.extra not in names]
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
    for problem in remaining:  # what only a hand can fix: pyproject.toml's extras and entry points
        print(problem)
    return 1 if remaining else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
