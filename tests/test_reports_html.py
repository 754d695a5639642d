"""The HTML report opens in headless Chromium with its plots, pictures and escaped transcripts."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commet.cli import app
from tests.conftest import launch_chromium
from tests.test_report_browser import report_data
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
    assert "<script>alert(" not in text and text.count('class="plot"') >= 4
    data = report_data(text)  # the transcripts travel as data: the story text is there, never as markup
    assert any(XSS in t for t in data["texts"])  # type: ignore[union-attr]


def test_missing_reports_extra_is_one_line_from_the_python_api(store_path: Path) -> None:  # noqa: F811
    """``commet.report(format="html")`` without jinja2 raises one line naming the extra, not a bare import error."""
    script = ("import sys; sys.modules['jinja2'] = None\n"
              "import commet\n"
              "try:\n"
              f"    commet.report({str(store_path)!r}, format='html')\n"
              "except Exception as exc:\n"
              "    print(type(exc).__name__, exc, sep='|')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    kind, message = done.stdout.strip().split("|")
    assert kind == "MissingExtraError" and "\n" not in message and "[reports]'" in message and "pip install " in message, done


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
            page.wait_for_selector("html[data-transcripts=ready]")
            widths = page.eval_on_selector_all("img.plot", "els => els.map(e => e.naturalWidth)")
            assert len(widths) >= 4 and all(w > 0 for w in widths)
            page.select_option("#f-run", label="r1-on")
            page.fill("#f-id", "tc1")
            story = page.locator("#story-list details.story").first
            story.locator("summary").click()
            story.locator(".turn").first.wait_for()  # its turns are drawn when it opens (the toggle event)
            assert "Where will Ana look for her ball" in story.inner_text()
            assert XSS in story.inner_text()  # shown as text, never run
            assert "Remember, Ana was outside." in story.inner_text()
            assert page.locator("#story-list details.story").count() == 1  # r1-off's and r1-corr's tc1 are filtered out
            page.fill("#f-id", "id1")
            page.locator("#story-list details.story summary").first.click()
            page.wait_for_function("() => { const found = [...document.querySelectorAll('#story-list img')]; "
                                   "return found.length > 0 && found.every(e => e.complete && e.naturalWidth > 0); }")
            assert page.evaluate("typeof window.pwned") == "undefined"
        finally:
            browser.close()
    assert dialogs == []
    assert all(url.startswith(("file:", "data:")) for url in requests)


def test_plots_are_drawn_here_when_the_plotting_process_fails(store_path: Path, tmp_path: Path,  # noqa: F811
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The plots are drawn by other processes, a share each, while the transcripts are packed; if they fail,
    the report process draws them itself (and would raise what went wrong), in the page's order."""
    from commet.reports import plots
    from commet.reports.analyses import Bootstrap, build_report
    from commet.reports.html import plots_meanwhile
    from commet.store import Store

    parent, real = os.getpid(), plots.draw

    def fails_elsewhere(drawers):  # noqa: ANN001, ANN202
        if os.getpid() != parent:
            (tmp_path / "tried").write_text("in the plotting process")
            raise RuntimeError("drawing failed")
        return real(drawers)

    monkeypatch.setattr(plots, "draw", fails_elsewhere)
    with Store(store_path) as store:
        report = build_report(store, store.runs(), bootstrap=Bootstrap(resamples=50))
    # (a second process draws them on Linux from a process with one thread; the suite may have left idle ones)
    monkeypatch.setattr("commet.reports.meanwhile.threading.active_count", lambda: 1)
    drawn = plots_meanwhile(report)()
    assert (tmp_path / "tried").is_file()
    assert len(drawn) >= 4 and all(png.startswith(b"\x89PNG") for _, png in drawn)
    assert [title for title, _ in drawn] == [title for title, _ in plots.all_plots(report)]


def test_plot_shares_keep_the_page_order() -> None:
    """Each plotting process draws neighbouring plots, none draws nothing, and together they draw each plot once."""
    from commet.reports.html import _shares

    drawers = [(str(n), lambda: None) for n in range(5)]
    assert [[title for title, _ in share] for share in _shares(drawers, 2)] == [["0", "1"], ["2", "3", "4"]]
    for parts in range(1, 8):
        shares = _shares(drawers[:3], parts)
        assert all(shares) and [d for share in shares for d in share] == drawers[:3]
    assert _shares([], 2) == []
