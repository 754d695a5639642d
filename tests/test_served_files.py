"""Every route of both web apps that answers with a file serves only what it exists for (issue 44, point 1).

Real uvicorn servers on 127.0.0.1, raw HTTP (paths on the wire exactly as written). The dataset folder
holds the review store itself, the dataset file, a secret, a picture the dataset does not reference,
links out of and inside the folder, and a ``.png`` that is not a picture; the dataset names some of these
as its pictures. Only real pictures the dataset references come back, through
:func:`commet.apps.files.confined_bytes`, on every route: the review app's ``/images/``,
``/calibration/picture`` and ``/static/``, the study app's participant pictures and ``/static/``.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from fastapi import HTTPException

from commet.apps.files import confined_bytes
from commet.apps.review.app import create_app as review_app
from commet.apps.review.db import ReviewDB
from commet.apps.study.app import create_app as study_app
from commet.apps.study.build import build_study, load_study
from commet.apps.study.db import StudyDB
from tests.llm_gen_servers import small_png
from tests.review_server import PASSWORD, serving
from tests.test_review_security import csrf_of

BATH = small_png((40, 120, 200), (32, 24))
#: what the dataset names as pictures: one real picture, then files that must never be served
NAMED = ["bath.png", "out.png", "inner.png", "fake.png", "review.sqlite", "storyturns.jsonl", "secret.txt",
         "images/../storyturns.jsonl", "/etc/passwd"]
SECRETS = (b"SQLite format", b"top secret", b"false_belief", b"root:", b"outside the folder")


def raw(base: str, path: str, cookie: str = "") -> tuple[int, dict[str, str], bytes]:
    host, port = base.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    connection.request("GET", path, headers={"Cookie": cookie} if cookie else {})
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, body


def hostile_folder(folder: Path) -> Path:
    """A dataset folder naming NAMED as its pictures, with the traps NAMED points at."""
    (folder / "images").mkdir(parents=True)
    (folder.parent / "outside").mkdir()
    (folder.parent / "outside" / "out.png").write_bytes(small_png((1, 2, 3), (8, 8)))
    (folder.parent / "outside" / "note.txt").write_text("outside the folder")
    (folder / "images" / "bath.png").write_bytes(BATH)
    (folder / "images" / "unreferenced.png").write_bytes(small_png((9, 9, 9), (8, 8)))
    os.symlink("../../outside/out.png", folder / "images" / "out.png")
    os.symlink("bath.png", folder / "images" / "inner.png")
    (folder / "images" / "fake.png").write_text('{"answers": ["false_belief"]}')
    (folder / "images" / "secret.txt").write_text("top secret")
    (folder / "secret.txt").write_text("top secret")
    turns = [{"story": "Ana hides a ball.", "question": "Where is it?", "answers": ["box"], "image": name}
             for name in NAMED]
    storyturn = {"id": "p-1", "task": "false_belief_location", "category": "Belief", "source": "t", "turns": turns}
    (folder / "storyturns.jsonl").write_text(json.dumps(storyturn) + "\n")
    return folder


@pytest.fixture(scope="module")
def review(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """The review app (calibration pages on) over the hostile folder, its store kept inside that folder."""
    folder = hostile_folder(tmp_path_factory.mktemp("served") / "ds")
    store = ReviewDB(folder / "review.sqlite")
    store.add_user("alice", PASSWORD)
    with serving(review_app(folder, store, results=folder.parent / "results.sqlite")) as base:
        status, headers, body = raw(base, "/login")
        cookie = headers["set-cookie"].split(";")[0]
        with httpx.Client(base_url=base, follow_redirects=False, headers={"Cookie": cookie}) as client:
            response = client.post("/login", data={"csrf": csrf_of(body.decode()), "name": "alice",
                                                   "password": PASSWORD})
            assert response.status_code == 303
            signed = response.headers["set-cookie"].split(";")[0]
        yield base, signed


def refused(base: str, path: str, cookie: str) -> None:
    status, _, body = raw(base, path, cookie)
    assert status == 404, (path, status)
    assert not any(secret in body for secret in SECRETS), path


def test_review_app_serves_only_referenced_pictures(review: tuple[str, str]) -> None:
    base, cookie = review
    for path in ("/images/bath.png", "/calibration/picture?id=bath.png"):
        status, headers, body = raw(base, path, cookie)
        assert (status, headers["content-type"], body) == (200, "image/png", BATH), path
        assert raw(base, path)[0] == 303, "no picture without a session"
    hostile = [name for name in NAMED if name != "bath.png"] + [
        "unreferenced.png", "images/bath.png", "images/unreferenced.png", "../review.sqlite", "review.sqlite-wal",
        "dataset.json", "images/secret.txt", "./bath.png", "images//bath.png", "bath.png\x00", " bath.png",
        "..\\storyturns.jsonl", str(Path.cwd() / "pyproject.toml"), "file:///etc/passwd", "%2e%2e/storyturns.jsonl"]
    for name in hostile:
        refused(base, "/calibration/picture?id=" + quote(name, safe=""), cookie)
        if not name.startswith("/"):
            refused(base, "/images/" + quote(name, safe="/"), cookie)
            refused(base, "/images/" + quote(name, safe=""), cookie)
    for path in ("/images/../review.sqlite", "/images/%2e%2e/review.sqlite", "/images/..%2fstoryturns.jsonl",
                 "/images/%2e%2e%2f%2e%2e%2foutside/note.txt", "/images//etc/passwd", "/static/../pages.py",
                 "/static/..%2fpages.py", "/static/%2e%2e%2fapp.py", "/calibration/picture?id=",
                 "/calibration/picture?id=bath.png&id=review.sqlite"):
        status, _, body = raw(base, path, cookie)
        assert status in (400, 404) or body == BATH, path
        assert not any(secret in body for secret in SECRETS) and b"import" not in body, path


def test_review_app_static_files_are_only_its_own_assets(review: tuple[str, str]) -> None:
    base, _ = review
    status, headers, body = raw(base, "/static/review.css")
    assert status == 200 and headers["content-type"].startswith("text/css") and body
    assert raw(base, "/static/review.js")[0] == 200
    for name in ("pages.py", "..", ".", "", "%2e%2e%2fpages.py", "review.css%00", "REVIEW.CSS"):
        status, _, body = raw(base, f"/static/{name}")
        assert status == 404 and b"import" not in body, name


def test_study_app_serves_only_the_current_turns_pictures(tmp_path: Path) -> None:
    folder = tmp_path / "ds"
    (folder / "images").mkdir(parents=True)
    (folder / "images" / "bath.png").write_bytes(BATH)
    (folder / "images" / "second.png").write_bytes(small_png((1, 200, 3), (16, 16)))
    turns = [{"story": "Ana hides a ball.", "question": "Where is it?", "answers": ["box"], "image": name}
             for name in ("bath.png", "second.png")]
    (folder / "storyturns.jsonl").write_text(json.dumps(
        {"id": "p-1", "task": "false_belief_location", "category": "Belief", "source": "t", "turns": turns}) + "\n")
    build_study(folder, tmp_path / "study.json", questionnaires=1)
    db = StudyDB(tmp_path / "study.sqlite", load_study(tmp_path / "study.json")[0].digest())
    token = db.create_participants([0])[0]
    app = study_app(tmp_path / "study.json", tmp_path / "study.sqlite", judge="rules")
    with serving(app) as base:
        with httpx.Client(base_url=base, follow_redirects=False) as client:
            csrf = csrf_of(client.get(f"/p/{token}").text)
            assert client.post(f"/p/{token}/consent", data={"csrf": csrf, "adult": "yes"}).status_code == 303
        status, headers, body = raw(base, f"/p/{token}/image/1/0")
        assert (status, headers["content-type"], body) == (200, "image/png", BATH)
        # the folder changes under the running app: the second picture becomes the study's store, then a link
        # to it, then a link out of the folder, then a .png holding text; none of them is served
        second = folder / "images" / "second.png"
        for swap in ("store", "link-in", "link-out", "text"):
            second.unlink()
            if swap == "store":
                shutil.copyfile(tmp_path / "study.sqlite", second)
            elif swap == "link-in":
                shutil.copyfile(tmp_path / "study.sqlite", folder / "store-copy.sqlite")
                os.symlink("../store-copy.sqlite", second)
            elif swap == "link-out":
                os.symlink("../../study.sqlite", second)
            else:
                second.write_text("top secret")
            refused(base, f"/p/{token}/image/1/1", "")
        for path in ("/p/x/image/1/0", f"/p/{token}/image/1/2", f"/p/{token}/image/2/0",
                     f"/p/{token}/image/1/-1", "/static/../app.py", "/static/%2e%2e%2fapp.py", "/static/pages.py"):
            status, _, body = raw(base, path)
            assert status in (400, 404) and b"import" not in body and body != BATH, path
        assert raw(base, "/static/study.css")[0] == 200
    db.close()


def test_confined_bytes_refuses_every_way_out(tmp_path: Path) -> None:
    """The one function on its own: only a listed regular file below the root, no link anywhere on the way."""
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.png").write_bytes(b"A")
    (tmp_path / "outside.png").write_bytes(b"O")
    os.symlink(root / "sub", root / "linked")
    os.symlink("../outside.png", root / "sub" / "out.png")
    os.mkfifo(root / "sub" / "fifo.png")
    (root / "sub" / "big.png").write_bytes(b"x" * 100)
    allowed = {"sub/a.png", "linked/a.png", "sub/out.png", "sub/fifo.png", "sub/big.png", "sub", "../outside.png",
               str(tmp_path / "outside.png"), "sub/../sub/a.png", "sub//a.png", "sub/missing.png"}
    assert confined_bytes(root, "sub/a.png", allowed, max_bytes=10) == b"A"
    for name in sorted(allowed - {"sub/a.png"}) + ["sub/a.png\x00", "other.png"]:
        with pytest.raises(HTTPException) as refusal:
            confined_bytes(root, name, allowed | {name}, max_bytes=10)
        assert refusal.value.status_code == 404, name
    with pytest.raises(HTTPException):
        confined_bytes(root, "sub/a.png", {"other"}, max_bytes=10)
