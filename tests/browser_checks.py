"""Checks every browser test makes of a page: no sideways scrolling and no serious axe-core finding.

axe-core comes from the npm registry into a git-ignored folder (``scripts/test.sh`` runs
``npm install --prefix .node axe-core``). It is evaluated in the page through the DevTools
protocol, which a page's Content-Security-Policy does not block, so the apps are checked with
their real headers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
AXE_JS = ROOT / ".node" / "node_modules" / "axe-core" / "axe.min.js"
#: The two viewports of the issue: a laptop and a phone.
DESKTOP = {"width": 1400, "height": 900}
PHONE = {"width": 390, "height": 844}
BLOCKING_IMPACTS = ("serious", "critical")


def axe_source() -> str:
    if not AXE_JS.is_file():
        pytest.fail(f"axe-core is missing at {AXE_JS}; run `npm install --prefix .node axe-core` (scripts/test.sh does)")
    return AXE_JS.read_text(encoding="utf-8")


def axe_violations(page, impacts: tuple[str, ...] = BLOCKING_IMPACTS) -> list[str]:  # noqa: ANN001 - playwright Page
    """axe-core's violations of the given impacts on the page as it is now, one line each."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(axe_source())
    found = page.evaluate("""async () => {
        const result = await axe.run(document, {resultTypes: ["violations"]});
        return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                             targets: v.nodes.slice(0, 3).map(n => n.target.join(" "))}));
    }""")
    return [f"{v['impact']}: {v['id']} ({v['help']}) at {', '.join(v['targets'])}" for v in found
            if v["impact"] in impacts]


def sideways_overflow(page) -> int:  # noqa: ANN001
    """How many CSS pixels the document is wider than the viewport (0 when it fits)."""
    width = page.evaluate("Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)")
    return max(0, width - page.viewport_size["width"])


def check_page(page, label: str, *, axe: bool = True) -> None:  # noqa: ANN001
    """Assert the page fits the viewport's width and (unless ``axe`` is False) axe-core finds nothing serious."""
    page.wait_for_load_state()
    overflow = sideways_overflow(page)
    assert overflow == 0, f"{label}: the page is {overflow} px wider than the {page.viewport_size['width']} px viewport"
    if not axe:
        return
    violations = axe_violations(page)
    assert violations == [], f"{label}: " + "; ".join(violations)
