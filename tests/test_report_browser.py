"""The HTML report stands alone (issue 19, point 4), checked in headless Chromium at 1400x900 and 390x844.

Runs record where their dataset was read from; the report embeds the pictures from there
without ``--dataset``, finds the dataset again by content hash, says clearly when it is gone,
keeps every table in its own focusable scroll region, draws plots readable at phone width,
and axe-core finds nothing serious or critical.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import playwright.sync_api as playwright_api
import pytest
from typer.testing import CliRunner

from commet.cli import app as cli
from commet.engine import EvalSettings, evaluate_async
from commet.store import Store
from tests.browser_checks import DESKTOP, PHONE, check_page
from tests.conftest import launch_chromium
from tests.test_study_web import write_dataset

SHOTS = os.environ.get("COMMET_SCREENSHOTS")


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two baseline runs (pictures on and off) of a three-StoryTurn dataset read from a folder on disk."""
    root = tmp_path_factory.mktemp("report")
    dataset = write_dataset(root / "ds")

    async def fill() -> None:
        for images in ("on", "off"):
            # default run names: long ones, as users get them (the run filter must still fit a phone)
            await evaluate_async("baseline:first-option", str(dataset), judge="rules", db=root / "s.sqlite",
                                 settings=EvalSettings(images=images))

    asyncio.run(fill())
    return root / "s.sqlite"


def html(store_path: Path, out: Path, *extra: str) -> str:
    result = CliRunner().invoke(cli, ["report", "--db", str(store_path), "--format", "html", "--out", str(out),
                                      "--resamples", "100", *extra])
    assert result.exit_code == 0, result.output
    return out.read_text()


def test_runs_record_their_dataset_and_the_report_finds_it(store_path: Path, tmp_path: Path) -> None:
    folder = store_path.parent / "ds"
    with Store(store_path) as store:
        assert {r.settings.dataset_path for r in store.runs()} == {str(folder.resolve())}
    text = html(store_path, tmp_path / "r.html")
    assert text.count("data:image/jpeg;base64,") == 2  # snack.png and muffins.png, each embedded once
    assert text.count("(recorded with the run)") == 1  # the run with pictures on; "off" showed none

    moved = tmp_path / "elsewhere"
    shutil.move(folder, moved)
    try:
        gone = html(store_path, tmp_path / "gone.html")
        assert "data:image/jpeg" not in gone
        assert "was not found (recorded at " in gone and "Pass --dataset DIR to embed them." in gone
        given = html(store_path, tmp_path / "given.html", "--dataset", str(moved))
        assert given.count("data:image/jpeg;base64,") == 2 and "Pictures from the dataset given with --dataset" in given
        edited = shutil.copytree(moved, tmp_path / "edited")
        (edited / "images" / "snack.png").write_bytes((edited / "images" / "muffins.png").read_bytes())
        changed = html(store_path, tmp_path / "changed.html", "--dataset", str(edited))
        # a picture whose bytes differ from the ones the run showed is not embedded in its place
        assert changed.count("data:image/jpeg;base64,") == 1
        assert "1 picture(s) of this run were not found there" in changed
    finally:
        shutil.move(moved, folder)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with playwright_api.sync_playwright() as p:
        chromium = launch_chromium(p)
        yield chromium
        chromium.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_report_in_chromium(store_path: Path, tmp_path: Path, browser, viewport: dict[str, int]) -> None:  # noqa: ANN001
    write_dataset(tmp_path / "fresh")  # the same content as the run's dataset, found by --dataset
    out = tmp_path / "report.html"
    html(store_path, out, "--dataset", str(tmp_path / "fresh"))
    page = browser.new_page(viewport=viewport)
    page.goto(out.as_uri())
    assert page.locator("main").count() == 1 and page.locator("header nav").count() == 1
    regions = page.locator("div.scroll")
    assert regions.count() >= 5
    for i in range(regions.count()):
        region = regions.nth(i)
        assert region.get_attribute("tabindex") == "0" and region.get_attribute("role") == "region"
        assert region.get_attribute("aria-label")
    heights = page.eval_on_selector_all("img.plot", "els => els.map(e => e.getBoundingClientRect().height)")
    widths = page.eval_on_selector_all("img.plot", "els => els.map(e => e.getBoundingClientRect().width / e.naturalWidth)")
    assert len(heights) >= 3 and min(heights) >= 150, heights  # readable: at least 80% of the drawn size
    assert min(widths) >= 0.79, widths
    name = "phone" if viewport == PHONE else "desktop"
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"report-{name}.png"))
    page.locator("details.story").first.locator("summary").click()
    pictures = page.eval_on_selector_all("img[data-image]", "els => els.map(e => e.naturalWidth)")
    assert pictures and all(w > 0 for w in pictures)
    check_page(page, f"report ({viewport['width']})")
    if SHOTS:
        page.locator("details.story").first.scroll_into_view_if_needed()
        page.screenshot(path=str(Path(SHOTS) / f"report-transcript-{name}.png"))
    page.close()
