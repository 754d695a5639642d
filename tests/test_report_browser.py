"""The HTML report in headless Chromium at 1400x900 and 390x844 (issues 19 and 34).

Runs record where their dataset was read from; the report embeds the pictures from there
without ``--dataset``, finds the dataset again by content hash and says clearly when it is gone.
In the browser every table fits the window (as it is, transposed, or one small table per row),
notices wrap, nothing scrolls the page sideways, plots stay readable at phone width, and the
transcripts filter and sort by run, task, category, outcome and turn, page by page, each badge
counted as the tables count it; axe-core finds nothing serious or critical.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import playwright.sync_api as playwright_api
import pytest
from playwright.sync_api import expect
from typer.testing import CliRunner

from commet.cli import app as cli
from commet.engine import EvalSettings, evaluate_async
from commet.reports.transcripts import unpacked
from commet.store import Store
from tests.browser_checks import DESKTOP, PHONE, check_page
from tests.conftest import launch_chromium
from tests.test_report_outcomes import CASES, add_outcome_run
from tests.test_study_web import write_dataset

SHOTS = os.environ.get("COMMET_SCREENSHOTS")
expect.set_options(timeout=20_000)  # the machine running the suite may be busy


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two baseline runs (pictures on and off) of a three-StoryTurn dataset read from a folder on disk, one of
    the bundled sample (41 StoryTurns: more than a page of transcripts) and the replay run of every outcome."""
    root = tmp_path_factory.mktemp("report")
    dataset = write_dataset(root / "ds")

    async def fill() -> None:
        for images in ("on", "off"):
            # default run names: long ones, as users get them (tables, notices and filters must still fit a phone)
            await evaluate_async("baseline:first-option", str(dataset), judge="rules", db=root / "s.sqlite",
                                 settings=EvalSettings(images=images))
        await evaluate_async("baseline:random-option", "sample", judge="rules", db=root / "s.sqlite",
                             settings=EvalSettings(images="off"))

    asyncio.run(fill())
    add_outcome_run(root, root / "s.sqlite")
    return root / "s.sqlite"


def html(store_path: Path, out: Path, *extra: str) -> str:
    result = CliRunner().invoke(cli, ["report", "--db", str(store_path), "--format", "html", "--out", str(out),
                                      "--resamples", "100", *extra])
    assert result.exit_code == 0, result.output
    return out.read_text()


def report_data(page: str) -> dict[str, object]:
    """The transcripts' data embedded in a report page, unpacked as the page's script does."""
    found = re.search(r'<script type="application/octet-stream" id="transcript-data">([^<]*)</script>', page)
    assert found is not None
    return unpacked(found.group(1))


def pictures_notes(page: str) -> str:
    return " ".join(run["note"] for run in report_data(page)["runs"])  # type: ignore[attr-defined, index]


def test_runs_record_their_dataset_and_the_report_finds_it(store_path: Path, tmp_path: Path) -> None:
    folder = store_path.parent / "ds"
    with Store(store_path) as store:
        assert str(folder.resolve()) in {r.settings.dataset_path for r in store.runs()}
    text = html(store_path, tmp_path / "r.html")
    assert len(report_data(text)["pictures"]) == 2  # type: ignore[arg-type]  # snack.png and muffins.png, once each
    assert pictures_notes(text).count("(recorded with the run)") == 1  # the run with pictures on; "off" showed none

    moved = tmp_path / "elsewhere"
    shutil.move(folder, moved)
    try:
        gone = html(store_path, tmp_path / "gone.html")
        assert report_data(gone)["pictures"] == {}
        assert "was not found (recorded at " in pictures_notes(gone)
        assert "Pass --dataset DIR to embed them." in pictures_notes(gone)
        given = html(store_path, tmp_path / "given.html", "--dataset", str(moved))
        assert len(report_data(given)["pictures"]) == 2  # type: ignore[arg-type]
        assert "Pictures from the dataset given with --dataset" in pictures_notes(given)
        edited = shutil.copytree(moved, tmp_path / "edited")
        (edited / "images" / "snack.png").write_bytes((edited / "images" / "muffins.png").read_bytes())
        changed = html(store_path, tmp_path / "changed.html", "--dataset", str(edited))
        # a picture whose bytes differ from the ones the run showed is not embedded in its place
        assert len(report_data(changed)["pictures"]) == 1  # type: ignore[arg-type]
        assert "1 picture(s) of this run were not found there" in pictures_notes(changed)
    finally:
        shutil.move(moved, folder)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with playwright_api.sync_playwright() as p:
        chromium = launch_chromium(p)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def report_file(store_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("page")
    write_dataset(root / "fresh")  # the same content as the run's dataset, found by --dataset
    html(store_path, root / "report.html", "--dataset", str(root / "fresh"))
    return root / "report.html"


def visible_widths(page) -> list[tuple[str, int, int]]:  # noqa: ANN001 - playwright Page
    """(table, width of the layout shown, room it has) for every table block of the page."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('.fit')).map(block => {
        const shown = Array.from(block.querySelectorAll(':scope > .scroll > table, :scope > .alt table'))
            .filter(t => t.offsetParent !== null);
        return [block.dataset.table || 'runs', Math.max(...shown.map(t => t.getBoundingClientRect().width)),
                block.clientWidth];
    })""")


def shown_outcomes(page) -> list[str]:  # noqa: ANN001
    return page.eval_on_selector_all("#story-list details.story", "els => els.map(e => e.dataset.outcome)")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_report_in_chromium(report_file: Path, browser, viewport: dict[str, int]) -> None:  # noqa: ANN001
    name = "phone" if viewport == PHONE else "desktop"
    page = browser.new_page(viewport=viewport)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(report_file.as_uri())
    expect(page.locator("html[data-transcripts=ready]")).to_have_count(1)
    assert page.locator("main").count() == 1 and page.locator("header nav").count() == 1
    regions = page.locator("div.scroll")
    assert regions.count() >= 6
    for i in range(regions.count()):
        region = regions.nth(i)
        assert region.get_attribute("tabindex") == "0" and region.get_attribute("role") == "region"
        assert region.get_attribute("aria-label")

    # every table fits: as it is, transposed or one small table per row, never clipped; no "scroll" cue needed
    for table, width, room in visible_widths(page):
        assert width <= room + 1, (table, width, room)
    assert page.locator(".scroll-hint:visible").count() == 0
    layouts = page.eval_on_selector_all(".fit", "els => els.map(e => (e.dataset.table || 'runs') + ' ' + e.className)")
    table1 = next(layout for layout in layouts if layout.startswith("text-complete "))
    # Table 1 (15 columns, 4 runs) is too wide as it is: transposed on a laptop, a table per run on a phone
    assert ("as-transposed" if name == "desktop" else "as-cards") in table1, layouts
    for notice in page.locator(".notice").all():  # long run names in notices wrap
        assert notice.evaluate("e => e.scrollWidth <= e.clientWidth + 1")
    if name == "desktop":  # a run name takes at most two lines wherever a table names it (five before)
        lines = page.evaluate("""() => Array.from(document.querySelectorAll(
                '.fit tbody th[scope=row], .fit .alt.transposed li, .fit caption'))
            .filter(e => e.offsetParent !== null && /@/.test(e.textContent))
            .map(e => { const range = document.createRange(); range.selectNodeContents(e);
                        return new Set(Array.from(range.getClientRects()).map(r => Math.round(r.top))).size; })""")
        assert lines and max(lines) <= 2, lines

    heights = page.eval_on_selector_all("img.plot", "els => els.map(e => e.getBoundingClientRect().height)")
    widths = page.eval_on_selector_all("img.plot", "els => els.map(e => e.getBoundingClientRect().width / e.naturalWidth)")
    assert len(heights) >= 3 and min(heights) >= 150, heights  # readable: at least 80% of the drawn size
    assert min(widths) >= 0.79, widths
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"report-{name}.png"))
    check_page(page, f"report ({viewport['width']})")

    # transcripts: 3 + 3 + 41 + 6 StoryTurns, 50 a page
    expect(page.locator("#shown")).to_have_text("StoryTurns 1–50 of 53")
    page.click("#next")
    expect(page.locator("#shown")).to_have_text("StoryTurns 51–53 of 53")
    page.click("#prev")
    # a count of the runs table opens exactly those StoryTurns, badged as counted
    outcome_run = 3
    for outcome in dict.fromkeys(case[1] for case in CASES.values()):
        count = sum(case[1] is outcome for case in CASES.values())
        link = page.locator(f"a.count[data-run='{outcome_run}'][data-outcome='{outcome.value}']:visible").first
        assert link.inner_text() == str(count)
        link.click()
        expect(page.locator("#shown")).to_have_text(f"StoryTurns 1–{count} of {count} shown (53 in all)")
        assert shown_outcomes(page) == [outcome.value] * count
        colour = page.locator("#story-list .badge").first.evaluate("e => getComputedStyle(e).backgroundColor")
        assert colour not in ("rgba(0, 0, 0, 0)", "transparent"), outcome  # every outcome's badge is coloured
    # filters: run, task, category, outcome, first turn not right, story id; sort by any of them
    page.select_option("#f-outcome", label="not right")
    expect(page.locator("#shown")).to_contain_text("of 5 shown")
    page.select_option("#f-turn", label="turn 1")
    expect(page.locator("#shown")).to_contain_text("of 3 shown")  # wrong, stopped, wrong then stopped
    assert sorted(shown_outcomes(page)) == ["stopped", "wrong", "wrong"]
    page.select_option("#f-turn", label="any")
    page.select_option("#sort", label="outcome")
    page.select_option("#order", label="descending")
    expect(page.locator("#story-list details.story").first).to_have_attribute("data-outcome", "not scored")
    assert shown_outcomes(page) == ["not scored", "stopped", "undecided", "wrong", "wrong"]
    page.click("#f-clear")
    expect(page.locator("#shown")).to_have_text("StoryTurns 1–50 of 53")
    page.select_option("#f-task", label="reference_hard_perspective")
    page.select_option("#f-category", label="Percept")
    expect(page.locator("#shown")).to_contain_text("shown (53 in all)")
    assert page.eval_on_selector_all("#story-list .facts", "els => els.every(e => e.textContent.includes("
                                     "'reference_hard_perspective · Percept'))")
    page.click("#f-clear")
    page.fill("#f-id", "wrong-then")
    expect(page.locator("#shown")).to_have_text("StoryTurns 1–1 of 1 shown (53 in all)")
    story = page.locator("#story-list details.story").first
    expect(story).to_have_attribute("data-outcome", "wrong")  # stopped after a wrong answer: wrong, not undecided
    story.locator("summary").focus()
    page.keyboard.press("Enter")  # keyboard: a story opens from its summary
    expect(story.locator(".turn")).to_have_count(2)
    expect(story.locator(".turn .badge")).to_have_text(["wrong", "undecided"])
    assert "Remember, Ana was outside." in story.inner_text()

    # a story with a picture draws it from the embedded data
    page.click("#f-clear")
    page.select_option("#f-run", index=1)
    page.fill("#f-id", "muffin")
    page.locator("#story-list details.story summary").first.click()
    page.wait_for_function("() => { const found = [...document.querySelectorAll('#story-list img')]; "
                           "return found.length > 0 && found.every(e => e.complete && e.naturalWidth > 0); }")
    check_page(page, f"report with a story open ({viewport['width']})")
    if SHOTS:
        page.locator("#transcripts").scroll_into_view_if_needed()
        page.screenshot(path=str(Path(SHOTS) / f"report-transcript-{name}.png"))
    assert errors == []
    page.close()


def test_a_resized_window_lays_the_tables_out_again(report_file: Path, browser) -> None:  # noqa: ANN001
    page = browser.new_page(viewport=PHONE)
    page.goto(report_file.as_uri())
    block = page.locator(".fit[data-table='summary']")
    expect(block).to_have_class(re.compile(r"\bas-cards\b"))
    page.set_viewport_size(DESKTOP)
    expect(block).not_to_have_class(re.compile(r"\bas-cards\b"))
    for table, width, room in visible_widths(page):
        assert width <= room + 1, (table, width, room)
    page.close()


@pytest.mark.parametrize("width", [320, 390])
def test_a_phone_sees_the_headline_first_and_nothing_scrolls_the_page_sideways(report_file: Path, browser,
                                                                               width: int) -> None:  # noqa: ANN001
    """Issue 45, point 7: at 320 and 390 px the page never scrolls sideways (long run names, notices, commands),
    the first screen holds each run's headline figures before any notice, and every plot's legend is drawn
    under it from its left edge, so a plot that scrolls in its frame shows its legend without scrolling."""
    page = browser.new_page(viewport={"width": width, "height": 700})
    page.goto(report_file.as_uri())
    expect(page.locator("html[data-transcripts=ready]")).to_have_count(1)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    first = page.evaluate("() => document.querySelector('main').firstElementChild.id || "
                          "document.querySelector('main').firstElementChild.className")
    assert first == "headline", first
    figures = page.locator(".headline dd.num").first
    assert figures.bounding_box()["y"] + figures.bounding_box()["height"] <= 700  # on the first screen
    assert page.locator(".headline li").count() == 4  # one per run
    notice = page.locator(".notice").first.bounding_box()
    assert notice["y"] > page.locator(".headline").bounding_box()["y"]
    for command in page.locator(".notice .command").all():  # a command wraps only at spaces and after a "/"
        assert command.evaluate("e => e.scrollWidth <= e.clientWidth + 1")
        assert "-\n-" not in command.inner_text() and "--" in command.inner_text()
    page.close()
