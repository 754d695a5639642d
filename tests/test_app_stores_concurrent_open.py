"""The web apps' stores opened by several processes at the same instant (``review serve`` and ``review add-user``
on a new file, two study servers): every opener gets the whole store, none a refusal or "database is locked".

Before their setup ran in one transaction, an opener could see another's half-made tables and refuse the file as
"not a review store", two openers could both migrate, and the session table's journal-mode switch could answer
"database is locked" without waiting.
"""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

OPENERS = 6
FILES = 10


def _open(kind: str, path: Path, barrier, answers) -> None:  # noqa: ANN001 - multiprocessing objects
    try:
        barrier.wait()
        if kind == "review":
            from commet.apps.review.db import ReviewDB

            ReviewDB(path)
        elif kind == "study":
            from commet.apps.study.db import StudyDB

            StudyDB(path, "digest").close()
        else:
            from commet.apps.web import Sessions

            Sessions(path)
        answers.put("")
    except Exception as exc:  # noqa: BLE001 - the test reports whatever an opener met
        answers.put(f"{type(exc).__name__}: {exc}")


@pytest.mark.parametrize("kind", ["review", "study", "sessions"])
def test_a_new_store_opened_by_several_processes_at_once_opens_for_all(kind: str, tmp_path: Path) -> None:
    import commet.apps.review.db
    import commet.apps.study.db  # noqa: F401 - imported before forking, so the openers start at once

    context = multiprocessing.get_context("fork")
    failures = []
    for number in range(FILES):
        path = tmp_path / f"store{number}.sqlite"
        barrier, answers = context.Barrier(OPENERS), context.Queue()
        openers = [context.Process(target=_open, args=(kind, path, barrier, answers)) for _ in range(OPENERS)]
        for opener in openers:
            opener.start()
        failures += [answer for answer in (answers.get(timeout=60) for _ in openers) if answer]
        for opener in openers:
            opener.join(10)
    assert failures == []
