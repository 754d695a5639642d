"""Two reviewers editing one item (issue 34, point 1): the word diff, the three-way merge, and the server keeping
a refused form's text without any script (the browser tests in test_review_app.py cover the page with one)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from commet.apps.review.app import create_app
from commet.apps.review.db import ReviewDB
from commet.apps.review.merge import FieldMerge, merge_fields, values_at, word_diff
from tests.review_server import PASSWORD, write_dataset


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("The tap hides the big one.", "The tap hides the middle one.",
     [("same", "The tap hides the "), ("del", "big"), ("ins", "middle"), ("same", " one.")]),
    ("Three boats. The tap hides it.", "Three boats. A sponge hides it.",  # one change, not two around a space
     [("same", "Three boats. "), ("del", "The tap"), ("ins", "A sponge"), ("same", " hides it.")]),
    ("same text", "same text", [("same", "same text")]),
    ("", "all new", [("ins", "all new")]),
    ("all gone", "", [("del", "all gone")]),
    ("one\ntwo", "one\nthree", [("same", "one\n"), ("del", "two"), ("ins", "three")]),
    ("a b", "a  b", [("same", "a"), ("del", " "), ("ins", "  "), ("same", "b")]),  # spacing is a change too
])
def test_word_diff(old: str, new: str, expected: list[tuple[str, str]]) -> None:
    pieces = word_diff(old, new)
    assert pieces == expected
    assert "".join(text for kind, text in pieces if kind != "ins") == old
    assert "".join(text for kind, text in pieces if kind != "del") == new


def test_three_way_merge_asks_only_when_both_changed_one_field_differently() -> None:
    base = {(0, "story"): "s", (0, "question"): "q", (0, "answers"): "a", (0, "feedback"): "f"}
    current = {**base, (0, "story"): "s by them", (0, "answers"): "a by both"}
    sent = {**base, (0, "question"): "q by me", (0, "story"): "s by me", (0, "answers"): "a by both"}
    merged = {m.key[1]: m for m in merge_fields(base, current, sent)}
    assert [name for name, m in merged.items() if m.conflict] == ["story"]
    assert {name: m.value for name, m in merged.items()} == {
        "story": "s by me", "question": "q by me", "answers": "a by both", "feedback": "f"}
    assert FieldMerge((None, "image_dependent"), "", "", "").label == "image dependent"


def test_values_at_a_revision_come_from_the_first_edit_since() -> None:
    current = {(0, "story"): "third", (1, "question"): "q"}
    since = [{"turn": 0, "field": "story", "old": "first", "new": "second"},
             {"turn": None, "field": "picture a.png", "old": "v1", "new": "v2"},
             {"turn": 0, "field": "story", "old": "second", "new": "third"}]
    assert values_at(current, since) == {(0, "story"): "first", (1, "question"): "q"}


def csrf(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found is not None
    return found.group(1)


@pytest.fixture
def client(tmp_path: Path) -> tuple[TestClient, ReviewDB]:
    store = ReviewDB(tmp_path / "review.sqlite")
    for name in ("alice", "bob"):
        store.add_user(name, PASSWORD)
    web = TestClient(create_app(write_dataset(tmp_path / "dataset"), store))
    web.post("/login", data={"csrf": csrf(web.get("/login").text), "name": "alice", "password": PASSWORD})
    return web, store


def test_a_refused_form_comes_back_with_its_text_and_reason_beside_it(client: tuple[TestClient, ReviewDB]) -> None:
    web, _ = client
    page = web.get("/items/rh-1").text
    sent = web.post("/items/rh-1/decision", data={"csrf": csrf(page), "revision": "1", "decision": "accept",
                                                 "note": "label <b>on</b> the tub", "note_1": "see the tap",
                                                 "c_1_spatial": "fail"}, follow_redirects=True)
    decide = re.search(r'<section class="card" id="decide">(.*?)</section>', sent.text, re.S)
    assert decide is not None
    assert re.search(r'<p class="flash refused" id="said" role="alert">Not accepted: check bath.png v1', decide.group(1))
    assert 'name="note" maxlength="2000" value="label &lt;b&gt;on&lt;/b&gt; the tub"' in decide.group(1)
    assert 'name="note_1" maxlength="2000" value="see the tap"' in sent.text
    assert re.search(r'name="c_1_spatial" value="fail"[^>]*checked', sent.text)
    assert '<main id="main">\n<p class="flash' not in sent.text  # not on top of the page, far from the buttons
    again = web.get("/items/rh-1").text  # shown once: a reload is a fresh page
    assert "refused" not in again and 'value="see the tap"' not in again

    edit = web.post("/items/rh-1/edit", data={"csrf": csrf(again), "revision": "1", "turn": "1", "story": "New story.",
                                             "question": "Q?", "feedback": "", "answers": " "}, follow_redirects=True)
    turn = re.search(r'<section class="card turn" id="turn-2">(.*?)</section>', edit.text, re.S)
    assert turn is not None and '<details class="edit" open>' in turn.group(1)
    assert ">New story.</textarea>" in turn.group(1) and "needs at least one expected answer" in turn.group(1)


def test_edits_to_different_fields_of_the_item_merge(client: tuple[TestClient, ReviewDB]) -> None:
    web, store = client
    page = web.get("/items/rh-1").text
    token = csrf(page)
    # another reviewer turns the item into a text-complete one (revision 2) while this page shows revision 1
    st, _ = store.item("rh-1")
    bob = dict((name, uid) for uid, name in store.users())["bob"]
    store.save_edit("rh-1", bob, [(None, "image_dependent", "True", "False")],
                    st.model_copy(update={"image_dependent": False}), seen_revision=1)
    saved = web.post("/items/rh-1/meta", data={"csrf": token, "revision": "1", "task": "reference_easy",
                                               "image_dependent": "on"}, follow_redirects=True)
    # the task is this reviewer's change; image-dependent was changed only by bob, and his value stays
    assert ("Task and variant saved (revision 3). Merged with bob&#39;s change to image dependent (revision 2), "
            "saved since you opened it.") in saved.text
    st, revision = store.item("rh-1")
    assert (st.task, st.image_dependent, revision) == ("reference_easy", False, 3)
    # both change the task: asked, nothing saved
    store.save_edit("rh-1", bob, [(None, "task", "reference_easy", "reference_hard_perspective")],
                    st.model_copy(update={"task": "reference_hard_perspective"}), seen_revision=3)
    refused = web.post("/items/rh-1/meta", data={"csrf": token, "revision": "3", "task": "false_belief_location"})
    assert refused.status_code == 409 and "Changed by both of you" in refused.text
    assert "<del>reference_easy</del><ins>reference_hard_perspective</ins>" in refused.text
    assert store.item("rh-1")[0].task == "reference_hard_perspective"
