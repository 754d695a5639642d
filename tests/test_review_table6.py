"""Review as the paper ran it (issue 20, point 9): Table 6 counts images under the most prominent error the
reviewer chose, and the two later reviewers review blind to each other's verdicts.

A crafted store of four items and three reviewers; every expected figure below is computed by hand
in the comments, then compared with the store and with the statistics page served over HTTP.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from commet.apps.review.app import create_app
from commet.apps.review.db import CRITERION_KEYS, CheckInput, ReviewDB, ReviewError, StaleRevision
from commet.format import Dataset, StoryTurn, Turn
from tests.llm_gen_servers import small_png

PASSWORD = "table six password"


def checks(failed: dict[str, bool] | tuple[str, ...] = ()) -> dict[str, bool]:
    return {key: key not in failed for key in CRITERION_KEYS}


@pytest.fixture
def crafted(tmp_path: Path) -> tuple[ReviewDB, dict[str, int], Path]:
    def item(item_id: str, images: list[str]) -> StoryTurn:
        return StoryTurn(id=item_id, task="reference_hard_perspective", category="Percept", image_dependent=True,
                         turns=[Turn(story=f"Scene {i}.", question="Which one can Tom see?", answers=["The small one"],
                                     image=image) for i, image in enumerate(images)])
    items = [item("A", ["a1.png", "a2.png"]), item("B", ["b1.png"]), item("C", ["c1.png"]), item("D", ["d1.png"])]
    images = {name: small_png((40 * i, 90, 120), (32, 24)) for i, name in enumerate(
        ["a1.png", "a2.png", "b1.png", "c1.png", "d1.png"])}
    folder = Dataset(items, images=images, name="crafted").save(tmp_path / "dataset")
    store = ReviewDB(tmp_path / "review.sqlite")
    users = {name: store.add_user(name, PASSWORD) for name in ("r1", "r2", "r3")}
    from commet.sources import load_dataset

    store.import_dataset(load_dataset(folder))
    pic = {f"{img}@{p.version}": p.id for it in "ABCD" for img, p in store.current_pictures(it).items()}
    r1, r2, r3 = users["r1"], users["r2"], users["r3"]
    # 1. r1 fails three criteria of a1 v1 and names "clues" the most prominent (not the first in Table 6's order)
    store.record_checks(pic["a1.png@1"], r1, checks(("text_artifacts", "spatial", "clues")), prominent="clues")
    # 2. r1 fails a2 v1 on duplication only (prominent by itself) ...
    store.record_checks(pic["a2.png@1"], r1, checks(("duplication",)))
    # 3. ... regenerates a1 (v2 passes) and changes their mind on a2 (no standing failure of r1 on a2)
    pic["a1.png@2"] = store.add_version("A", "a1.png", small_png((1, 2, 3), (32, 24)), source="regenerated", user_id=r1)
    store.record_checks(pic["a1.png@2"], r1, checks())
    store.record_checks(pic["a2.png@1"], r1, checks())
    # 4. r2 fails a2 v1 on narrative and spatial, naming spatial
    store.record_checks(pic["a2.png@1"], r2, checks(("narrative", "spatial")), prominent="spatial")
    # 5. r3 fails only the regenerated a1 v2, on narrative
    store.record_checks(pic["a1.png@2"], r3, checks(("narrative",)))
    # 6. b1 v1: r2 first (text artifacts + duplication, naming duplication), then r3 (text artifacts)
    store.record_checks(pic["b1.png@1"], r2, checks(("text_artifacts", "duplication")), prominent="duplication")
    store.record_checks(pic["b1.png@1"], r3, checks(("text_artifacts",)))
    # 7. c1 v1: r3 first (spatial), then r1 (clues)
    store.record_checks(pic["c1.png@1"], r3, checks(("spatial",)))
    store.record_checks(pic["c1.png@1"], r1, checks(("clues",)))
    # 8. b1 is replaced; all three pass v2 and accept: B is final (its v1 errors still count for Table 6)
    pic["b1.png@2"] = store.add_version("B", "b1.png", small_png((9, 9, 9), (32, 24)), source="upload", user_id=r2)
    for user in (r1, r2, r3):
        store.decide("B", user, "accept", checks={pic["b1.png@2"]: CheckInput(checks())})
    return store, pic, folder


def test_table6_counts_images_under_the_chosen_prominent_error(crafted: tuple[ReviewDB, dict[str, int], Path]) -> None:
    store, _, _ = crafted
    assert store.status("B").final and not store.status("A").final
    columns = {c.title: c for c in store.table6()}
    zero = dict.fromkeys(CRITERION_KEYS, 0)
    # All images: a1 -> r1 first, chose clues; a2 -> r1's failure withdrawn, so r2: spatial; b1 -> r2: duplication;
    # c1 -> r3 first: spatial; d1 never erroneous.  4 images: spatial 2 (50 %), clues 1, duplication 1 (25 % each)
    assert columns["All images"].counts == {**zero, "clues": 1, "spatial": 2, "duplication": 1}
    assert columns["All images"].images == 4 and columns["All images"].percent("spatial") == 50.0
    # r1: a1 (v1, clues), c1 (clues); a2 withdrawn; b1 only passed
    assert columns["r1"].counts == {**zero, "clues": 2}
    # r2: a2 (spatial), b1 (duplication)
    assert columns["r2"].counts == {**zero, "spatial": 1, "duplication": 1}
    # r3: a1 first erroneous at v2 (narrative), b1 (text artifacts), c1 (spatial)
    assert columns["r3"].counts == {**zero, "narrative": 1, "text_artifacts": 1, "spatial": 1}
    # by final state: B is final (b1: duplication); A and C are not (a1 clues, a2 spatial, c1 spatial)
    assert columns["Final items"].counts == {**zero, "duplication": 1}
    assert columns["Not final"].counts == {**zero, "clues": 1, "spatial": 2}
    assert all(c.unclassified == 0 for c in columns.values())


def test_the_statistics_page_shows_the_same_table(crafted: tuple[ReviewDB, dict[str, int], Path]) -> None:
    store, _, folder = crafted
    client = TestClient(create_app(folder, store))
    token = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text).group(1)
    client.post("/login", data={"csrf": token, "name": "r2", "password": PASSWORD})
    html = client.get("/stats").text
    header = re.findall(r'<th scope="col" class="num">([^<]+)</th>', html)
    assert header == ["All images", "r1", "r2", "r3", "Final items", "Not final"]

    def row(key: str) -> list[str]:
        cells = re.search(rf'<tr data-key="{key}">(.*?)</tr>', html, re.S).group(1)
        return re.findall(r'<td class="num">(\d+) <small>\(([\d.]+)%\)</small></td>', cells)

    assert row("spatial") == [("2", "50.0"), ("0", "0.0"), ("1", "50.0"), ("1", "33.3"), ("0", "0.0"), ("2", "66.7")]
    assert row("clues") == [("1", "25.0"), ("2", "100.0"), ("0", "0.0"), ("0", "0.0"), ("0", "0.0"), ("1", "33.3")]
    assert row("text_artifacts") == [("0", "0.0"), ("0", "0.0"), ("0", "0.0"), ("1", "33.3"), ("0", "0.0"),
                                     ("0", "0.0")]
    assert "4 of 5 image(s) erroneous; 2 revised" in html


def test_an_image_with_several_failures_and_no_choice_is_unclassified_not_guessed(
        crafted: tuple[ReviewDB, dict[str, int], Path]) -> None:
    store, pic, folder = crafted
    r1 = dict((n, i) for i, n in store.users())["r1"]
    store.record_checks(pic["d1.png@1"], r1, checks(("spatial", "narrative")))
    assert store.needs_prominent(pic["d1.png@1"], r1)
    columns = {c.title: c for c in store.table6()}
    assert columns["r1"].unclassified == 1 and columns["r1"].counts["spatial"] == 0
    # the statistics page counts it alike everywhere: in the total row, the unclassified row and the line below
    client = TestClient(create_app(folder, store))
    token = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text).group(1)  # type: ignore[union-attr]
    client.post("/login", data={"csrf": token, "name": "r1", "password": PASSWORD})
    html = client.get("/stats").text
    total = re.search(r"<tfoot><tr><th[^>]*>Erroneous images</th><td class=\"num\">(\d+)</td>", html)
    unclassified = re.search(r'<tr data-key="unclassified">.*?<td class="num">(\d+) <small>\(([\d.]+)%\)', html, re.S)
    assert total is not None and unclassified is not None
    assert (total.group(1), unclassified.groups()) == ("5", ("1", "20.0"))  # d1 of 5 erroneous images
    assert "5 of 5 image(s) erroneous (1\n    without a most prominent error chosen yet)" in html
    store.record_checks(pic["d1.png@1"], r1, {}, prominent="narrative")
    assert {c.title: c for c in store.table6()}["r1"].counts["narrative"] == 1


def test_the_second_and_third_reviewer_review_blind_to_each_other(crafted: tuple[ReviewDB, dict[str, int], Path]) -> None:
    store, pic, folder = crafted
    ids = dict((n, i) for i, n in store.users())
    store.record_checks(pic["c1.png@1"], ids["r1"], checks())  # r1 corrects their verdict and accepts C first
    store.decide("C", ids["r1"], "accept")
    store.decide("C", ids["r2"], "reject", "the tap hides the wrong boat")
    status = store.status("C")
    assert status.stage == "independent review"
    assert not status.blind_for("r1") and not status.blind_for("r2") and status.blind_for("r3")
    client = TestClient(create_app(folder, store))
    token = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text).group(1)
    client.post("/login", data={"csrf": token, "name": "r3", "password": PASSWORD})
    page = client.get("/items/C").text
    assert 'id="blind"' in page and "awaiting your verdict" in page
    assert "the tap hides the wrong boat" not in page and "✓ r1" not in page and "rejected by" not in page
    assert "✗ r3" in page  # their own verdicts stay visible
    assert client.get("/disagreements").text.count("/items/C") == 0
    store.decide("C", ids["r3"], "reject")
    page = client.get("/items/C").text
    assert "the tap hides the wrong boat" in page and "rejected by r2, r3" in page


def test_an_accept_needs_all_five_passed_checks_and_no_pending_regeneration(
        crafted: tuple[ReviewDB, dict[str, int], Path]) -> None:
    store, pic, _ = crafted
    ids = dict((n, i) for i, n in store.users())
    d1 = pic["d1.png@1"]
    with pytest.raises(ReviewError, match="check d1.png v1 against all five criteria"):
        store.decide("D", ids["r1"], "accept", checks={d1: CheckInput({"spatial": True})})
    assert store.checks_by(d1, ids["r1"]) == {"spatial": True}  # what the refused accept carried is kept
    store.mark_for_regeneration(d1, ids["r2"], "the boy is missing")
    with pytest.raises(ReviewError, match="d1.png is marked for regeneration by r2"):
        store.decide("D", ids["r1"], "accept", checks={d1: CheckInput(checks())})
    assert store.withdraw_regeneration(d1, ids["r2"]) == 1
    store.decide("D", ids["r1"], "accept")
    assert store.status("D").accepts == ["r1"]
    revision = store.status("D").revision
    with pytest.raises(StaleRevision) as stale:
        store.decide("D", ids["r2"], "accept", seen_revision=revision - 1)
    assert stale.value.current == revision and store.status("D").accepts == ["r1"]


def test_the_statistics_are_blinded_as_the_item_pages(crafted: tuple[ReviewDB, dict[str, int], Path]) -> None:
    """A reviewer who has not given their verdict on an item under independent review does not learn the other
    reviewers' filings or checks on it from /stats (by category, per reviewer, in Table 6, in the status counts);
    once they have, the page shows what the command line's figures (no viewer) show."""
    store, pic, folder = crafted
    ids = dict((n, i) for i, n in store.users())
    store.record_checks(pic["c1.png@1"], ids["r1"], checks())
    store.decide("C", ids["r1"], "accept")
    store.record_checks(pic["c1.png@1"], ids["r2"], checks(("narrative",)))  # r2's failure, on the current picture
    store.file_error("C", ids["r2"], "reveals_answer", "the question gives it away")
    assert store.status("C").blind_for("r3")
    everything, blind = store.stats(), store.stats("r3")
    filed = {key: n for key, _, n in everything["filed"]}  # type: ignore[attr-defined]
    filed_blind = {key: n for key, _, n in blind["filed"]}  # type: ignore[attr-defined]
    assert filed["reveals_answer"] == 1 and filed_blind["reveals_answer"] == 0
    assert filed["narrative"] == filed_blind["narrative"] + 1  # r2's failed check is a filing too
    assert everything["reviewers"]["r2"]["errors"] == blind["reviewers"]["r2"]["errors"] + 2  # type: ignore[index]
    assert everything["reviewers"]["r3"] == blind["reviewers"]["r3"]  # one's own figures are never hidden
    columns = {c.title: c for c in store.table6()}
    seen = {c.title: c for c in store.table6("r3")}
    assert columns["r2"].counts["narrative"] == 1 and seen["r2"].counts["narrative"] == 0
    assert seen["r3"].counts == columns["r3"].counts
    assert blind["statuses"]["awaiting"] == 1  # type: ignore[index]
    assert blind["statuses"].get("review", 0) == everything["statuses"]["review"] - 1  # type: ignore[attr-defined,index]
    client = TestClient(create_app(folder, store))
    token = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text).group(1)  # type: ignore[union-attr]
    client.post("/login", data={"csrf": token, "name": "r3", "password": PASSWORD})
    html = client.get("/stats").text
    assert re.search(r"<th scope=\"row\">Story text reveals the answer</th><td class=\"num\">0</td>", html)
    assert 'id="awaiting"' in html
    store.decide("C", ids["r3"], "reject")
    assert store.stats("r3") == store.stats()
    html = client.get("/stats").text
    assert re.search(r"<th scope=\"row\">Story text reveals the answer</th><td class=\"num\">1</td>", html)
    assert 'id="awaiting"' not in html
