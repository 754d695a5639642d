"""The HTML report opens in headless Chromium with its plots, pictures and escaped transcripts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.cli import app
from tests.conftest import launch_chromium
from tests.test_reports_analyses import XSS, store_path  # noqa: F401 - fixture


@pytest.fixture(scope="module")
def html_report(store_path: Path) -> Path:  # noqa: F811
    out = store_path.parent / "report.html"
    result = CliRunner().invoke(app, ["report", "--db", str(store_path), "--format", "html", "--out", str(out),
                                      "--dataset", str(store_path.parent / "toy"), "--resamples", "200"])
    assert result.exit_code == 0, result.output
    return out


def test_html_is_self_contained_and_escaped(html_report: Path) -> None:
    text = html_report.read_text()
    assert not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", text)
    assert XSS not in text and "&lt;script&gt;alert(" in text
    assert text.count('class="plot"') >= 4


def test_html_opens_in_chromium_with_plots_and_transcripts(html_report: Path) -> None:
    from playwright import sync_api

    dialogs: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            page = browser.new_page()
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            requests: list[str] = []
            page.on("request", lambda r: requests.append(r.url))
            page.goto(html_report.as_uri())
            page.wait_for_load_state("load")
            widths = page.eval_on_selector_all("img.plot", "els => els.map(e => e.naturalWidth)")
            assert len(widths) >= 4 and all(w > 0 for w in widths)
            page.select_option("#run-filter", label="r1-on")
            story = page.locator("section.run-transcripts[data-run='0'] details.story").first
            story.locator("summary").click()
            assert "Where will Ana look for her ball" in story.inner_text()
            assert XSS in story.inner_text()  # shown as text, never run
            assert "Remember, Ana was outside." in page.locator("section.run-transcripts[data-run='0']").inner_text()
            pictures = page.eval_on_selector_all("img[data-image]", "els => els.map(e => e.naturalWidth)")
            assert pictures and all(w > 0 for w in pictures)
            assert page.locator("section.run-transcripts[data-run='1']").is_hidden()
        finally:
            browser.close()
    assert dialogs == []
    assert all(url.startswith(("file:", "data:")) for url in requests)
