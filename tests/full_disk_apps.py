"""Both web apps on a disk that fills up (run by tests/test_web_probes.py inside ``unshare -rm``).

``python -m tests.full_disk_apps DISK WORK``: mounts a 2 MiB tmpfs on DISK, puts the review store and the study
store there (the datasets stay in WORK), serves both apps on 127.0.0.1, fills the disk, then edits an item, signs
in, and answers a study question; frees the disk and checks that both apps work again and both stores are whole.
Prints one JSON object of what it saw.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from contextlib import suppress
from pathlib import Path

import httpx

from commet.apps.review.app import create_app as review_app
from commet.apps.review.db import ReviewDB
from commet.apps.study.app import create_app as study_app
from commet.apps.study.build import build_study
from commet.apps.study.db import StudyDB
from commet.format import Dataset, StoryTurn, Turn
from tests.review_server import PASSWORD, REVIEWERS, serving, write_dataset


def csrf_of(html: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', html)
    assert match, html[:500]
    return match.group(1)


def seen(response: httpx.Response) -> dict[str, object]:
    return {"status": response.status_code, "text": response.text, "retry": response.headers.get("retry-after"),
            "csp": "content-security-policy" in response.headers}


def main(disk: Path, work: Path) -> None:
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)], check=True)
    review = ReviewDB(disk / "review.sqlite")
    for name in REVIEWERS:
        review.add_user(name, PASSWORD)
    turn = Turn(story="Ana leaves.", question="Where will she look, the box or the bag?", answers=["Box"])
    folder = Dataset([StoryTurn(id="s-1", task="false_belief_location", category="Belief", turns=[turn, turn])],
                     name="tiny").save(work / "study-ds")
    study = build_study(folder, work / "study.json", questionnaires=1)
    db = StudyDB(disk / "study.sqlite", study.digest())
    token = db.create_participants([0])[0]
    db.close()
    out: dict[str, object] = {}
    with serving(review_app(write_dataset(work / "review-ds"), review)) as base, \
            serving(study_app(work / "study.json", disk / "study.sqlite", judge="rules")) as study_base, \
            httpx.Client(base_url=base) as alice, httpx.Client(base_url=base) as bob, \
            httpx.Client(base_url=study_base) as participant:
        alice.post("/login", data={"csrf": csrf_of(alice.get("/login").text), "name": "alice", "password": PASSWORD})
        page = alice.get("/items/rh-1").text
        revision = re.search(r'name="revision" value="(\d+)"', page)
        bob_csrf = csrf_of(bob.get("/login").text)
        participant.post(f"/p/{token}/consent", data={"csrf": csrf_of(participant.get(f"/p/{token}").text),
                                                      "adult": "yes"})
        question = participant.get(f"/p/{token}").text
        with open(disk / "filler", "wb") as filler, suppress(OSError):
            while True:
                filler.write(b"\0" * 65536)
                filler.flush()
        out["edit"] = seen(alice.post("/items/rh-1/edit", data={
            "csrf": csrf_of(page), "revision": revision.group(1) if revision else "1", "turn": "0",
            "story": "A long new story. " * 4000, "question": "Which boat?", "answers": "The big one"}))
        out["sign_in"] = seen(bob.post("/login", data={"csrf": bob_csrf, "name": "bob", "password": PASSWORD}))
        out["answer"] = seen(participant.post(f"/p/{token}/answer", data={
            "csrf": csrf_of(question), "story": re.search(r'name="story" value="(\d+)"', question).group(1),  # type: ignore[union-attr]
            "turn": "0", "response": "The box. " * 200}))
        (disk / "filler").unlink()
        out["after"] = [alice.get("/items/rh-1").status_code, participant.get(f"/p/{token}").status_code,
                        bob.post("/login", data={"csrf": bob_csrf, "name": "bob", "password": PASSWORD}).status_code]
    out["whole"] = [sqlite3.connect(disk / name).execute("PRAGMA integrity_check").fetchone()[0]
                    for name in ("review.sqlite", "study.sqlite")]
    print(json.dumps(out))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
