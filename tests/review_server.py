"""The review app on a free 127.0.0.1 port (uvicorn in a background thread) over a small dataset."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn

from commet.apps.review.app import create_app
from commet.apps.review.db import ReviewDB
from commet.apps.signin import LoginThrottle
from commet.generation.llm.images import ImageModel
from tests.browser_checks import DESKTOP, PHONE, check_page
from tests.llm_gen_servers import small_png

PASSWORD = "correct horse battery"
REVIEWERS = ("alice", "bob", "carol")
XSS = "<script>window.pwned = 1</script><img src=x onerror=\"window.pwned = 2\">"

PERSPECTIVE = {
    "id": "rh-1", "task": "reference_hard_perspective", "category": "Percept", "image_dependent": True,
    "source": "test", "mental_states": ["percept"],
    "turns": [
        {"story": "Three boats float in the bath: a big one, a middle one and a small one. Tom sits at the end "
                  "of the bath.", "question": "Which boat can Tom not see from where he sits?", "image": "bath.png",
         "answers": ["The big one"]},
        {"story": "Mia says: 'Tom, pass me the biggest boat!'", "question": "Which boat will Tom pass?",
         "feedback": {"right": "Yes, well spotted.", "wrong": "Look again at what Tom can see."},
         "answers": ["The middle one"]},
    ],
}
SCRIPTED = {
    "id": "xss-1", "task": "false_belief_location", "category": "Belief", "source": "test",
    "turns": [{"story": "Ana hides a note. " + XSS, "question": "Where will Ana look for it?",
               "answers": ["The drawer"]}],
}


def write_dataset(folder: Path) -> Path:
    (folder / "images").mkdir(parents=True)
    (folder / "images" / "bath.png").write_bytes(small_png((40, 120, 200), (320, 240)))
    (folder / "storyturns.jsonl").write_text("".join(json.dumps(st) + "\n" for st in (PERSPECTIVE, SCRIPTED)))
    (folder / "secret.txt").write_text("outside images/")
    return folder


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def running_app(tmp_path: Path, image_model: ImageModel | None = None,
                login_throttle: LoginThrottle | None = None) -> Iterator[tuple[str, Path]]:
    """Yield (base URL, store path) with three reviewers, the app served by uvicorn in a thread."""
    dataset = write_dataset(tmp_path / "dataset")
    db_path = tmp_path / "review.sqlite"
    store = ReviewDB(db_path)
    for name in REVIEWERS:
        store.add_user(name, PASSWORD)
    app = create_app(dataset, store, image_model=image_model, max_upload_bytes=256 * 1024, login_throttle=login_throttle)
    with serving(app) as base:
        yield base, db_path


@contextmanager
def serving(app: object) -> Iterator[str]:
    """Yield the base URL of ``app`` (an ASGI app) served by uvicorn on 127.0.0.1 in a thread."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",  # type: ignore[arg-type]
                                           lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the app did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


#: The two window sizes every browser test of the review app runs at.
VIEWPORTS = {"desktop": DESKTOP, "phone": PHONE}


def check(page, seen: set[str] | None = None) -> None:  # noqa: ANN001 - playwright Page
    """check_page (no sideways scroll, no serious axe finding) once per kind of page (path without ids) in ``seen``."""
    kind = page.evaluate("location.pathname.replace(/\\/[^/]*\\d[^/]*/g, '/N')")
    if seen is not None:
        if kind in seen:
            return
        seen.add(kind)
    check_page(page, f"{kind} at {page.viewport_size['width']} px")
