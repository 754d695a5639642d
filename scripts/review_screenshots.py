"""Take the screenshots of docs/review.md with headless Chromium (the system's, via playwright).

    python scripts/review_screenshots.py [--out docs/review]

Builds a small demo dataset (pictures drawn with Pillow), seeds a review store with three
reviewers and some review work, serves the app with uvicorn in a thread on a free port and
photographs each page. Nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import io
import json
import socket
import tempfile
import threading
import time
from pathlib import Path

import uvicorn
from PIL import Image, ImageDraw
from playwright.sync_api import sync_playwright

from commet.apps.review.app import create_app
from commet.apps.review.db import ReviewDB

PASSWORD = "demo password"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def draw_bath(*, stray_label: bool) -> bytes:
    """Three boats in a bath seen from above; the first version has a stray label (a Table 6 error)."""
    image = Image.new("RGB", (640, 440), (250, 246, 236))
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle((60, 70, 580, 390), radius=120, fill=(236, 240, 245), outline=(150, 160, 175), width=6)
    draw.rounded_rectangle((90, 100, 550, 360), radius=100, fill=(170, 215, 240))
    for x, y, w, colour in ((150, 190, 130, (214, 69, 65)), (330, 215, 90, (242, 176, 53)), (460, 230, 55, (88, 160, 90))):
        draw.polygon([(x, y), (x + w, y), (x + w - w // 5, y + w // 3), (x + w // 5, y + w // 3)], fill=colour)
        draw.line((x + w // 2, y, x + w // 2, y - w // 2), fill=(90, 70, 50), width=4)
        draw.polygon([(x + w // 2, y - w // 2), (x + w // 2, y - 6), (x + w // 2 + w // 3, y - 10)], fill=(255, 255, 255))
    draw.ellipse((555, 170, 635, 250), fill=(245, 205, 170))  # Tom's head at the end of the bath
    draw.ellipse((578, 200, 588, 210), fill=(40, 40, 40))
    if stray_label:
        draw.rectangle((250, 20, 420, 55), fill=(255, 255, 255), outline=(40, 40, 40))
        draw.text((262, 28), "BOATS 3 BIG", fill=(40, 40, 40))
    return _png(image)


def draw_ice_cream() -> bytes:
    image = Image.new("RGB", (640, 440), (236, 244, 250))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 330, 640, 440), fill=(200, 225, 190))
    draw.ellipse((250, 90, 370, 210), fill=(245, 205, 170))
    draw.arc((280, 150, 340, 190), start=200, end=340, fill=(80, 40, 40), width=4)  # a frown
    draw.rectangle((265, 210, 355, 330), fill=(120, 100, 200))
    draw.polygon([(400, 230), (440, 230), (420, 300)], fill=(215, 170, 110))
    draw.ellipse((395, 190, 445, 240), fill=(150, 220, 180))
    return _png(image)


STORIES = [
    {"id": "perspective-01", "task": "reference_hard_perspective", "category": "Percept", "image_dependent": True,
     "source": "llm:google:gemini-3-pro", "mental_states": ["percept", "belief", "intention"],
     "meta": {"image_prompts": {"bath.png": "A simple children's picture-book illustration. Scene: three boats "
                                            "of different sizes in a bath; a boy sits at the end. No text."}},
     "turns": [
         {"story": "Three boats float in the bath: a big one, a middle one and a small one. Tom sits at the end of "
                   "the bath, and the tap hides the big boat from him.", "image": "bath.png",
          "question": "Which boats can Tom see from where he sits?", "answers": ["The middle one and the small one"]},
         {"story": "Mia says: 'Tom, pass me the biggest boat!' Tom thinks the middle one is the biggest.",
          "feedback": {"right": "Yes, the tap is in the way.", "wrong": "Look again: the tap hides one boat."},
          "question": "Which boat will Tom pass to Mia?", "answers": ["The middle one"]},
         {"story": "", "question": "Why will he pass that one?",
          "answers": ["Because it is the biggest boat he can see"]},
     ]},
    {"id": "sarcasm-07", "task": "sarcasm", "category": "NLC", "image_dependent": True,
     "source": "llm:google:gemini-3-pro", "mental_states": ["non_literal_communication", "emotion"],
     "turns": [
         {"story": "Lena asked for strawberry ice cream. Her dad comes back with mint. Lena looks at it and says: "
                   "'Mmm, my favourite.'", "image": "ice.png", "question": "Why did Lena say that?",
          "answers": ["She did not mean it; she wanted strawberry"]},
         {"story": "", "question": "Is Lena happy or sad?", "answers": ["Sad"]},
     ]},
    {"id": "desire-03", "task": "diverse_desire", "category": "Desire", "source": "llm:google:gemini-3-pro",
     "mental_states": ["desire"],
     "turns": [
         {"story": "Meet Sam. It is snack time! There is a shiny red apple and a yummy chocolate bar.",
          "question": "Which snack do you like best, the apple or the chocolate?", "answers": ["Apple", "Chocolate"]},
         {"story": "You do? That is great! But look, Sam likes the other snack better.",
          "question": "So which snack will Sam pick, the apple or the chocolate?", "answers": ["Chocolate", "Apple"]},
     ]},
]


def build(folder: Path) -> tuple[Path, ReviewDB]:
    """The demo dataset and a store with three reviewers and some review work done."""
    dataset = folder / "dataset"
    (dataset / "images").mkdir(parents=True)
    (dataset / "images" / "bath.png").write_bytes(draw_bath(stray_label=True))
    (dataset / "images" / "ice.png").write_bytes(draw_ice_cream())
    (dataset / "storyturns.jsonl").write_text("".join(json.dumps(st) + "\n" for st in STORIES))
    store = ReviewDB(folder / "review.sqlite")
    users = {name: store.add_user(name, PASSWORD) for name in ("alice", "bob", "carol")}
    from commet.sources import load_dataset

    store.import_dataset(load_dataset(dataset))
    st, _ = store.item("perspective-01")
    old = st.turns[0].question
    st.turns[0].question = "Which boats can Tom see from where he sits? Which one can he not see?"
    store.save_edit("perspective-01", users["alice"], [(0, "question", old, st.turns[0].question)], st)
    first = store.current_pictures("perspective-01")["bath.png"]
    store.record_checks(first.id, users["alice"], {"text_artifacts": False, "spatial": True, "narrative": True,
                                                  "duplication": True, "clues": True}, "a label above the bath")
    store.mark_for_regeneration(first.id, users["alice"], "remove the label")
    second = store.add_version("perspective-01", "bath.png", draw_bath(stray_label=False), source="regenerated",
                               user_id=users["alice"], prompt=first.prompt, model="google:gemini-2.5-flash-image")
    for name in ("alice", "bob"):
        store.record_checks(second, users[name], {key: True for key in ("text_artifacts", "spatial", "narrative",
                                                                         "duplication", "clues")}, "")
        store.decide("perspective-01", users[name], "accept", "")
    ice = store.current_pictures("sarcasm-07")["ice.png"]
    store.record_checks(ice.id, users["bob"], {"narrative": False, "duplication": True}, "dad is missing")
    store.record_checks(ice.id, users["carol"], {key: True for key in ("text_artifacts", "spatial", "narrative",
                                                                         "duplication", "clues")}, "")
    store.decide("sarcasm-07", users["carol"], "accept", "")
    store.decide("sarcasm-07", users["bob"], "reject", "dad is missing from the picture")
    for name in ("alice", "bob", "carol"):
        store.decide("desire-03", users[name], "accept", "")
    return dataset, store


def users_by_name(store: ReviewDB) -> dict[str, int]:
    return {name: uid for uid, name in store.users()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "docs" / "review")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        dataset, store = build(Path(tmp))
        app = create_app(dataset, store)
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.02)
        base = f"http://127.0.0.1:{port}"
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
                page = browser.new_context(base_url=base, viewport={"width": 1400, "height": 900}).new_page()
                page.set_viewport_size({"width": 1400, "height": 520})
                page.goto("/login")
                page.screenshot(path=str(args.out / "login.png"))
                page.fill("input[name=name]", "bob")
                page.fill("input[name=password]", PASSWORD)
                page.click("main button[type=submit]")
                page.wait_for_url(f"{base}/")
                page.screenshot(path=str(args.out / "items.png"))
                page.set_viewport_size({"width": 1400, "height": 900})
                page.goto("/items/perspective-01")
                page.click("#turn-1 summary:has-text('Edit this turn')")
                page.screenshot(path=str(args.out / "item.png"), full_page=True)
                page.goto(f"/items/perspective-01/versions/{store.current_pictures('perspective-01')['bath.png'].id}")
                page.screenshot(path=str(args.out / "versions.png"), full_page=True)
                page.set_viewport_size({"width": 1400, "height": 520})
                page.goto("/disagreements")
                page.screenshot(path=str(args.out / "disagreements.png"))
                page.set_viewport_size({"width": 1400, "height": 900})
                page.goto("/stats")
                page.screenshot(path=str(args.out / "stats.png"), full_page=True)
                page.goto("/export")
                page.screenshot(path=str(args.out / "export.png"))
                # an accept refused: the reason beside the buttons, the note kept
                page.goto("/items/sarcasm-07")
                page.fill("#verdict input[name=note]", "the picture tells the story well")
                page.locator("#accept").scroll_into_view_if_needed()
                page.click("#accept")
                page.wait_for_selector("#decide .flash.refused")
                page.wait_for_load_state("load")
                page.screenshot(path=str(args.out / "refused.png"))
                # two reviewers change the same sentence: the conflict page shows both changes word by word
                stale = store.item("sarcasm-07")[1]
                page.goto("/items/sarcasm-07")
                st, _ = store.item("sarcasm-07")
                old = st.turns[0].story
                st.turns[0].story = old.replace("comes back with mint", "brings mint and a spoon")
                store.save_edit("sarcasm-07", users_by_name(store)["alice"], [(0, "story", old, st.turns[0].story)],
                                st, seen_revision=stale)
                page.click("#turn-1 summary:has-text('Edit this turn')")
                page.fill("#turn-1 textarea[name=story]", old.replace("asked for strawberry", "wanted strawberry"))
                page.fill("#turn-1 textarea[name=question]", "Why did Lena say 'my favourite'?")
                page.click("#turn-1 button:has-text('Save turn 1')")
                page.screenshot(path=str(args.out / "conflict.png"), full_page=True)
                page.set_viewport_size({"width": 390, "height": 844})
                page.goto("/")
                page.screenshot(path=str(args.out / "items-phone.png"))
                page.goto("/items/perspective-01")
                page.screenshot(path=str(args.out / "item-phone.png"), full_page=True)
                page.goto("/items/sarcasm-07")
                page.locator("#accept").scroll_into_view_if_needed()
                page.click("#accept")
                page.wait_for_selector("#decide .flash.refused")
                page.wait_for_load_state("load")
                page.screenshot(path=str(args.out / "refused-phone.png"))
                browser.close()
        finally:
            server.should_exit = True
            thread.join(timeout=10)
    print(f"screenshots written to {args.out}")


if __name__ == "__main__":
    main()
