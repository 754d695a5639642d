"""Shared fixtures: small datasets written to disk the way users write them."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from PIL import Image

# No terminal size from the shell that started the tests: GNU readline, which pytest imports, puts the terminal's
# size (80 x 24 where there is none) into the process's C environment, which os.environ does not show but every
# child inherits: pytest-xdist's workers then saw COLUMNS=80 and laid the CLI's output out to 80 columns, unlike
# the same tests run in one process. Each test that needs a width sets COLUMNS itself.
for _size in ("COLUMNS", "LINES"):
    os.environ.pop(_size, None)
    os.unsetenv(_size)

#: Debian's chromium, started the way this project's browser tests start it.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def launch_chromium(playwright):  # noqa: ANN001, ANN201 - playwright's sync API objects
    """A headless Debian chromium through playwright (never a downloaded browser)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


DIVERSE_DESIRE = {
    "id": "dd-1",
    "task": "diverse_desire",
    "category": "Desire",
    "image_dependent": False,
    "storyturn": [
        "Meet Kim. It is snack time! There is a ripe pear and a warm cookie. | | Which snack do you like best, "
        "the pear or the cookie? | snack:table:1 | Pear; Cookie",
        "Kim likes the other snack better. | If the previous answer is Pear: So Kim likes the cookie.; "
        "If the previous answer is Cookie: So Kim likes the pear. | So which snack will Kim pick, the pear or "
        "the cookie? | | Cookie; Pear",
    ],
}

FALSE_BELIEF = {
    "id": "fb-1",
    "task": "false_belief_location",
    "category": "Belief",
    "image_dependent": False,
    "storyturn": [
        "Ana puts her ball in the basket and goes outside. Ben moves the ball to the box. | | Where will Ana look "
        "for her ball, the basket or the box? | | The basket",
        " | If right: Yes, she did not see Ben move it.; If wrong: Remember, Ana was outside when Ben moved it. | "
        "Is the ball in the basket now? | | No",
        " | | Where is the ball really, the basket or the box? | | The box",
    ],
}


def write_png(path: Path, colour: tuple[int, int, int] = (200, 80, 60)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (64, 48), colour).save(path)
    return path


@pytest.fixture
def pipe_dataset(tmp_path: Path) -> Path:
    """A dataset folder in pipe records (JSONL) with one picture whose id uses ':' and its file '_'."""
    folder = tmp_path / "ds"
    write_png(folder / "images" / "snack_table_1.png")
    with (folder / "stories.jsonl").open("w") as out:
        for record in (DIVERSE_DESIRE, FALSE_BELIEF):
            out.write(json.dumps(record) + "\n")
    return folder / "stories.jsonl"


@pytest.fixture
def replay_file(tmp_path: Path):
    def write(replies: dict[str, list[str]], name: str = "replies.json") -> Path:
        path = tmp_path / name
        path.write_text(json.dumps(replies))
        return path

    return write


#: The test files that take seconds a test (real processes, headless Chromium, tiny models, simulations), longest
#: first: each took 10 s or more of the suite's 1,130 s on the shared 2-core machine (2026-12-07, load 6 to 12),
#: 77 % of the time in 34 of 140 files. They are marked ``slow`` (``-m "not slow"`` for a quick local loop; CI runs
#: every test) and run first, so that scripts/test.sh's parallel workers, handed whole files in this order, start on
#: the long files and end together on the short ones.
SLOW_FILES = (
    "test_bad_input_refusals.py", "test_review_app.py", "test_study_volunteer.py", "test_regex_linear.py",
    "test_procedural_properties.py", "test_cli_runs.py", "test_cli_api.py", "test_procedural_audit.py",
    "test_report_browser.py", "test_scale_processes.py", "test_inspect_task.py", "test_cli_run_ids.py",
    "test_web_hardening.py", "test_procedural.py", "test_web_audit.py", "test_app_stores_concurrent_open.py",
    "test_failures_at_once.py", "test_malformed_input.py", "test_web_proxy_and_hosts.py", "test_study_panel.py",
    "test_importers_replay.py", "test_calibration_e2e.py", "test_hub_datasets.py", "test_disk_full.py",
    "test_reports_html.py", "test_review_security.py", "test_judge_probes.py", "test_store_read_only.py",
    "test_optional_extras.py", "test_paper_tables.py", "test_calibration_labelling.py", "test_models_remote.py",
    "test_link_loops.py", "test_sigterm.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests of SLOW_FILES ``slow`` and put them first, longest file first, each file whole and in its
    own order: scripts/test.sh hands whole files to its workers in this order (``--dist loadfile
    --no-loadscope-reorder``), so no long file is left to run alone at the end."""
    missing = [name for name in SLOW_FILES if not (Path(__file__).parent / name).is_file()]
    if missing:  # a renamed or removed file: its new name belongs in the list
        raise pytest.UsageError(f"tests/conftest.py: SLOW_FILES names no test file {', '.join(missing)}")
    rank = {name: index for index, name in enumerate(SLOW_FILES)}
    for item in items:
        if item.path.name in rank:
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


#: the cache folder's environment variable (commet.format.content_cache)
CACHE_VARIABLE = "COMMET_CACHE_DIR"
#: the session's cache folder and the variable's value before the session
_SESSION_CACHE = pytest.StashKey[tuple[str, "str | None"]]()


def pytest_configure(config: pytest.Config) -> None:
    """A cache folder for the whole session, set before the test modules are imported: what a module's or the
    session's fixtures make, and the commands of a test module whose environment was copied at import (``ENV =
    {**os.environ, ...}``), are cached there, never in the user's cache folder. (Each test then gets a folder of
    its own, :func:`_content_cache`.)"""
    folder = tempfile.mkdtemp(prefix="commet-test-cache-")
    config.stash[_SESSION_CACHE] = (folder, os.environ.get(CACHE_VARIABLE))
    os.environ[CACHE_VARIABLE] = folder


def pytest_unconfigure(config: pytest.Config) -> None:
    folder, before = config.stash[_SESSION_CACHE]
    if before is None:
        os.environ.pop(CACHE_VARIABLE, None)
    else:
        os.environ[CACHE_VARIABLE] = before
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(autouse=True)
def _content_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Prepared pictures cached in an empty folder of each test's own (commands the test starts too), and this
    process's prepared pictures forgotten: never the user's cache folder, and no test sees what another one made."""
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path_factory.mktemp("commet-cache")))
    import commet.models.images as images

    monkeypatch.setattr(images, "_MADE", images._Made())


#: a reply the rules judge leaves undecided whatever the question (a hedge between the options)
UNDECIDED_REPLY = "Hard to say, it could be either."


def mixed_outcome_replies(dataset) -> dict[str, list[str]]:  # noqa: ANN001 - a commet Dataset
    """Replay replies for every StoryTurn of ``dataset`` that give every story outcome under the rules judge: by
    position, right throughout; an undecided last answer (an undecided story); an undecided first answer of a
    story with later turns (stopped at it); a wrong first answer (a yes/no flipped, else "Yes." to a question that
    is not yes/no) and then an undecided one (stopped after a wrong answer). Not every story has each shape: those
    that do not are answered right. StoryTurns that open alike (a minimal pair told apart by its pictures) get the
    same replies, so that a model keyed by the conversation's text so far (inspect's mock) can replay them."""
    from collections import Counter

    opening = Counter((st.turns[0].story, st.turns[0].question) for st in dataset)  # the text a model reads
    replies: dict[str, list[str]] = {}
    for index, st in enumerate(dataset):
        answers = [turn.answers[0] for turn in st.turns]
        shape, first = index % 4, answers[0].strip(" .").lower()
        if opening[(st.turns[0].story, st.turns[0].question)] > 1:  # a pair told apart by its pictures alone
            answers = [UNDECIDED_REPLY] * len(answers)
        elif shape == 1:
            answers[-1] = UNDECIDED_REPLY
        elif shape == 2 and len(answers) > 1:
            answers[0] = UNDECIDED_REPLY
        elif shape == 3 and len(answers) > 2 and not st.turns[0].is_branch_point:
            answers[0] = {"yes": "No.", "no": "Yes."}.get(first, "Yes.")
            answers[1] = UNDECIDED_REPLY
        replies[st.id] = answers
    return replies
