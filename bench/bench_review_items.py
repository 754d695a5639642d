"""How fast the review app's busy pages answer with a realistic store (540 items, three reviewers).

    python bench/bench_review_items.py [--items 540] [--repeat 5]

Builds ``--items`` StoryTurns (three turns, one picture each) in a dataset folder, imports them into
a fresh review store with three reviewers, gives every item a few checks and decisions, and times
the items page (first page, a filter, the last page), an item page, "next open item for me", the
statistics page and the CSV export through the ASGI app (starlette's TestClient), best of
``--repeat``. Prints milliseconds per page and the HTML size.
"""

from __future__ import annotations

import argparse
import io
import re
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient
from PIL import Image

from commet.apps.review.app import create_app
from commet.apps.review.db import CRITERION_KEYS, CheckInput, ReviewDB
from commet.format import Dataset, StoryTurn, Turn
from commet.sources import load_dataset

PASSWORD = "bench password"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=540)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), (90, 120, 200)).save(buffer, format="PNG")
    stories = [StoryTurn(id=f"item-{i:04d}", task="reference_hard_perspective", category="Percept",
                         image_dependent=True, turns=[
                             Turn(story="Three boats float in the bath.", question="Which boat can Tom see?",
                                  answers=["The small one"], image=f"p{i}.png"),
                             Turn(story="Mia asks for the biggest boat.", question="Which will Tom pass?",
                                  answers=["The middle one"]),
                             Turn(question="Why that one?", answers=["Because it is the biggest he can see"])])
               for i in range(args.items)]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Dataset(stories, images={f"p{i}.png": buffer.getvalue() for i in range(args.items)},
                         name="bench").save(Path(tmp) / "ds")
        store = ReviewDB(Path(tmp) / "review.sqlite")
        users = [store.add_user(name, PASSWORD) for name in ("alice", "bob", "carol")]
        store.import_dataset(load_dataset(folder))
        for i, item_id in enumerate(store.item_ids()):
            picture = next(iter(store.current_pictures(item_id).values()))
            for user in users[: i % 4]:
                store.decide(item_id, user, "accept", checks={picture.id: CheckInput(dict.fromkeys(CRITERION_KEYS,
                                                                                                    True))})
        client = TestClient(create_app(folder, store))
        token = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text).group(1)
        client.post("/login", data={"csrf": token, "name": "carol", "password": PASSWORD})
        pages = ["/", "/?status=mine", "/?q=item-05", "/?page=11", "/items/item-0270", "/next?after=item-0270",
                 "/stats", "/export/items.csv"]
        print(f"{args.items} items, 3 reviewers; best of {args.repeat}")
        for path in pages:
            best, size = float("inf"), 0
            for _ in range(args.repeat):
                start = time.perf_counter()
                response = client.get(path, follow_redirects=False)
                best = min(best, time.perf_counter() - start)
                size = len(response.content)
            print(f"  {path:28s} {best * 1000:8.1f} ms  {size / 1024:8.1f} KiB  (HTTP {response.status_code})")


if __name__ == "__main__":
    main()
