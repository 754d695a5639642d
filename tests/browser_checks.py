"""Checks every page of the web-app tests gets in Chromium: no sideways scroll, no serious axe-core violation.

axe-core comes from the npm registry (``npm install --no-save axe-core@4``; scripts/test.sh installs it)
and is injected from ``node_modules/axe-core/axe.min.js``; pages are opened with ``bypass_csp`` so the
injected script may run under the apps' ``script-src 'self'`` policy.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page

AXE = Path(__file__).resolve().parent.parent / "node_modules" / "axe-core" / "axe.min.js"
VIEWPORTS = {"desktop": {"width": 1400, "height": 900}, "phone": {"width": 390, "height": 844}}
BLOCKING = ("serious", "critical")


def axe_violations(page: Page) -> list[dict[str, object]]:
    """axe-core's serious and critical violations on the page as it is now."""
    if not AXE.is_file():
        pytest.fail(f"axe-core is missing at {AXE}: run `npm install --no-save axe-core@4` (scripts/test.sh does)")
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    found = page.evaluate("""async () => (await axe.run(document, {resultTypes: ['violations']})).violations
        .map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))""")
    return [v for v in found if v["impact"] in BLOCKING]


def check_page(page: Page, seen: set[str] | None = None) -> None:
    """The document is no wider than the window, and axe-core finds nothing serious or critical.

    ``seen`` (page kinds already checked, by path without ids) keeps repeated pages from being checked twice."""
    kind = page.evaluate("location.pathname.replace(/\\/[^/]*\\d[^/]*/g, '/N')")
    if seen is not None:
        if kind in seen:
            return
        seen.add(kind)
    width = page.evaluate("Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)")
    viewport = page.viewport_size["width"] if page.viewport_size else 0
    assert width <= viewport, f"{page.url}: the page is {width} px wide in a {viewport} px window"
    violations = axe_violations(page)
    assert violations == [], f"{page.url}: axe-core: {violations}"
