"""Smaller defects of the review app (issue 45, point 8): ``review export`` with nothing final, an accept an edit
left behind (radio buttons a finger can hit on a phone: tests/test_calibration_labelling.py)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from commet.apps.review.db import ReviewDB
from commet.apps.review.services import ItemView, TextEdits
from commet.cli import app as cli
from commet.sources import load_dataset
from tests.review_server import PASSWORD, write_dataset


def test_export_with_no_item_final_writes_nothing_and_says_why(tmp_path: Path) -> None:
    store = ReviewDB(tmp_path / "review.sqlite")
    store.import_dataset(load_dataset(write_dataset(tmp_path / "ds")))
    alice = store.add_user("alice", PASSWORD)
    store.decide("xss-1", alice, "accept")  # one accept of three
    result = CliRunner().invoke(cli, ["review", "export", "--db", str(tmp_path / "review.sqlite"), "--out",
                                      str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert "no item is final yet, so nothing was written" in result.output
    assert "(2 items, 1 with an accept)" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()
    assert "Exit codes: 0 written and valid; 1 written, but the folder does not validate" in CliRunner().invoke(
        cli, ["review", "export", "--help"], terminal_width=200).output


def test_an_edit_tells_its_author_that_their_accept_no_longer_counts(tmp_path: Path) -> None:
    store = ReviewDB(tmp_path / "review.sqlite")
    store.import_dataset(load_dataset(write_dataset(tmp_path / "ds")))
    alice, bob = store.add_user("alice", PASSWORD), store.add_user("bob", PASSWORD)
    st, revision = store.item("xss-1")
    store.decide("xss-1", alice, "accept", seen_revision=revision)
    store.decide("xss-1", bob, "accept", seen_revision=revision)
    assert store.status("xss-1").accepts == ["alice", "bob"]
    turn = st.turns[0]
    sent = {(0, "story"): "Ana hides a note in the drawer.", (0, "feedback"): "", (0, "question"): turn.question,
            (0, "answers"): "\n".join(turn.answers)}
    saved = TextEdits(store).save_turn("xss-1", 0, alice, revision, sent)
    assert f"Your accept was for revision {revision} and no longer counts: accept revision {revision + 1}" in \
        saved.message
    assert store.status("xss-1").accepts == []
    st, now = store.item("xss-1")
    view = ItemView(store, None)
    assert view.item("xss-1", st, now, alice, "alice").values["outdated_accept"] == revision
    assert view.item("xss-1", st, now, bob, "bob").values["outdated_accept"] == revision
    store.decide("xss-1", alice, "accept", seen_revision=now)  # accepted again: nothing outdated
    assert view.item("xss-1", st, now, alice, "alice").values["outdated_accept"] is None
    # an edit by someone who had not accepted says nothing of accepts
    carol = store.add_user("carol", PASSWORD)
    again = TextEdits(store).save_turn("xss-1", 0, carol, now, {**sent, (0, "story"): "Ana hides a note."})
    assert "accept" not in again.message


def test_export_over_the_dataset_under_review_is_refused_and_touches_nothing(tmp_path: Path) -> None:
    """Before: the export replaced the reviewed dataset's StoryTurns with the final ones only, so the items not final
    yet (and, as a dataset written over another leaves none of its pictures, their pictures) were gone."""
    dataset = write_dataset(tmp_path / "ds")
    store = ReviewDB(tmp_path / "review.sqlite")
    store.import_dataset(load_dataset(dataset))
    users = [store.add_user(name, PASSWORD) for name in ("alice", "bob", "carol")]
    for user in users:  # one item final, the other not
        store.decide("xss-1", user, "accept")
    before = {p.relative_to(dataset): p.read_bytes() for p in dataset.rglob("*") if p.is_file()}
    result = CliRunner().invoke(cli, ["review", "export", "--db", str(tmp_path / "review.sqlite"), "--out",
                                      str(dataset), "--dataset", str(dataset)])
    assert result.exit_code == 2, result.output
    assert "is the dataset under review; export to another folder" in result.output
    assert {p.relative_to(dataset): p.read_bytes() for p in dataset.rglob("*") if p.is_file()} == before
    elsewhere = CliRunner().invoke(cli, ["review", "export", "--db", str(tmp_path / "review.sqlite"), "--out",
                                         str(tmp_path / "out"), "--dataset", str(dataset)])
    assert elsewhere.exit_code == 0 and "exported 1 final StoryTurn(s)" in elsewhere.output, elsewhere.output
