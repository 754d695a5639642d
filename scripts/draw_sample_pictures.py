"""Draw the pictures of the bundled sample dataset (src/commet/data/sample/images/).

Every picture is drawn programmatically with Pillow from a handful of small, flat shapes,
so it is deterministic, tiny and free of text. Each picture shows exactly the people and
things its story names, each once, placed as the story says. In the image-dependent
stories the picture carries the fact the question needs (which thing a bush or a haystack
hides, where the glasses lie now, whether a face smiles or frowns) and the story text
does not say it.

Run ``python scripts/draw_sample_pictures.py [FOLDER]`` to draw them again (the StoryTurns
themselves are hand-edited data in src/commet/data/sample/storyturns.jsonl).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path

from PIL import Image, ImageDraw

WIDTH, HEIGHT = 512, 384
GROUND = 300  # y of the ground line in every scene
OUTLINE = (60, 50, 45)

SKY = (186, 222, 245)
GRASS = (132, 190, 102)
SAND = (238, 214, 160)
WALL = (250, 240, 220)
FLOOR = (200, 160, 120)

SKIN = {"light": (248, 214, 186), "medium": (214, 160, 116), "dark": (141, 95, 64)}
HAIR = {
    "black": (40, 35, 35),
    "brown": (110, 70, 40),
    "blond": (230, 196, 110),
    "grey": (180, 180, 180),
    "red": (190, 90, 40),
}
COLOUR = {
    "red": (214, 58, 52),
    "green": (70, 160, 80),
    "blue": (66, 120, 210),
    "yellow": (244, 200, 60),
    "pink": (240, 140, 180),
    "orange": (240, 140, 40),
    "purple": (140, 90, 190),
    "white": (255, 255, 255),
    "brown": (150, 100, 60),
    "beige": (225, 205, 160),
    "grey": (150, 150, 150),
}

Draw = ImageDraw.ImageDraw


# --------------------------------------------------------------------------- scenes


def canvas(scene: str) -> tuple[Image.Image, Draw]:
    """A blank picture: ``outdoor`` (sky and grass), ``beach`` (sky and sand) or ``indoor`` (wall and floor)."""
    top, bottom = {"outdoor": (SKY, GRASS), "beach": (SKY, SAND), "indoor": (WALL, FLOOR)}[scene]
    image = Image.new("RGB", (WIDTH, HEIGHT), top)
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, GROUND, WIDTH, HEIGHT), fill=bottom)
    return image, draw


# --------------------------------------------------------------------------- people


def person(
    d: Draw,
    x: int,
    feet: int = GROUND,
    height: int = 170,
    *,
    shirt: str = "blue",
    hair: str = "brown",
    skin: str = "light",
    mood: str = "neutral",
    long_hair: bool = False,
    headphones: bool = False,
    sitting: bool = False,
) -> None:
    """A standing (or sitting) person whose feet are at (x, feet); ``mood`` is smile, frown or neutral."""
    r = int(height * 0.14)
    head_y = feet - height + r
    torso_top = head_y + r + 2
    torso_bottom = torso_top + int(height * 0.40)
    shirt_rgb = COLOUR[shirt]
    if sitting:  # legs forward, as if sitting on a fence or a bench
        d.line((x - 8, torso_bottom, x + 22, torso_bottom, x + 22, feet), fill=(70, 70, 120), width=7)
        d.line((x + 6, torso_bottom, x + 36, torso_bottom, x + 36, feet), fill=(70, 70, 120), width=7)
    else:
        d.line((x - 9, torso_bottom, x - 12, feet), fill=(70, 70, 120), width=8)
        d.line((x + 9, torso_bottom, x + 12, feet), fill=(70, 70, 120), width=8)
    half = int(height * 0.13)
    d.polygon(
        [
            (x - half + 4, torso_top),
            (x + half - 4, torso_top),
            (x + half, torso_bottom),
            (x - half, torso_bottom),
        ],
        fill=shirt_rgb,
        outline=OUTLINE,
    )
    arm_end = torso_top + int(height * 0.30)
    d.line((x - half + 4, torso_top + 4, x - half - 12, arm_end), fill=shirt_rgb, width=7)
    d.line((x + half - 4, torso_top + 4, x + half + 12, arm_end), fill=shirt_rgb, width=7)
    if long_hair:
        d.rectangle((x - r - 3, head_y, x + r + 3, head_y + int(r * 1.5)), fill=HAIR[hair])
    face(d, x, head_y, r, skin=skin, hair=hair, mood=mood)
    if headphones:
        d.arc(
            (x - r - 4, head_y - r - 6, x + r + 4, head_y + r), start=180, end=360, fill=(30, 30, 30), width=4
        )
        for side in (-1, 1):
            cx = x + side * (r + 2)
            d.ellipse((cx - 6, head_y - 8, cx + 6, head_y + 10), fill=(30, 30, 30))


def face(
    d: Draw, x: int, y: int, r: int, *, skin: str = "light", hair: str = "brown", mood: str = "neutral"
) -> None:
    """A round face centred on (x, y) with radius r: smiling, frowning or neutral."""
    d.ellipse((x - r, y - r, x + r, y + r), fill=SKIN[skin], outline=OUTLINE, width=max(1, r // 12))
    d.chord((x - r, y - r, x + r, y + r // 3), start=180, end=360, fill=HAIR[hair])
    eye_y = y + r // 6
    eye = max(2, r // 7)
    for side in (-1, 1):
        ex = x + side * r // 3
        d.ellipse((ex - eye, eye_y - eye, ex + eye, eye_y + eye), fill=(30, 30, 30))
    mouth_w = r // 2
    if mood == "smile":
        d.arc(
            (x - mouth_w, y + r // 6, x + mouth_w, y + r // 6 + mouth_w * 3 // 2),
            start=20,
            end=160,
            fill=(150, 40, 40),
            width=max(2, r // 9),
        )
    elif mood == "frown":
        top = y + r // 2 + r // 10
        d.arc(
            (x - mouth_w, top, x + mouth_w, top + mouth_w * 3 // 2),
            start=200,
            end=340,
            fill=(150, 40, 40),
            width=max(2, r // 9),
        )
        for side in (-1, 1):  # eyebrows slanting down towards the nose
            ex = x + side * r // 3
            d.line(
                (ex - side * eye * 2, eye_y - eye * 3, ex + side * eye * 2, eye_y - eye * 5),
                fill=(30, 30, 30),
                width=max(2, r // 12),
            )
    else:
        d.line(
            (x - mouth_w // 2, y + r // 2, x + mouth_w // 2, y + r // 2),
            fill=(150, 40, 40),
            width=max(2, r // 10),
        )


# --------------------------------------------------------------------------- furniture and places


def table(d: Draw, left: int, right: int, top: int, feet: int = GROUND) -> None:
    d.rectangle((left, top, right, top + 10), fill=COLOUR["brown"], outline=OUTLINE)
    for lx in (left + 8, right - 16):
        d.rectangle((lx, top + 10, lx + 8, feet), fill=COLOUR["brown"], outline=OUTLINE)


def shelf(d: Draw, left: int, right: int, top: int, feet: int = GROUND) -> None:
    """A low open shelf: a board on two sides."""
    d.rectangle((left, top, right, top + 8), fill=(170, 120, 80), outline=OUTLINE)
    d.rectangle((left, top, left + 8, feet), fill=(170, 120, 80), outline=OUTLINE)
    d.rectangle((right - 8, top, right, feet), fill=(170, 120, 80), outline=OUTLINE)


def wall_shelf(d: Draw, left: int, right: int, y: int) -> None:
    d.rectangle((left, y, right, y + 8), fill=(170, 120, 80), outline=OUTLINE)


def box(d: Draw, x: int, bottom: int, w: int, h: int, colour: str, *, open_top: bool = False) -> None:
    """A box standing at (x .. x+w, bottom); open boxes show a dark inside at the top."""
    d.rectangle((x, bottom - h, x + w, bottom), fill=COLOUR[colour], outline=OUTLINE, width=2)
    if open_top:
        d.polygon(
            [(x, bottom - h), (x + w, bottom - h), (x + w - 8, bottom - h - 10), (x + 8, bottom - h - 10)],
            fill=(70, 60, 50),
            outline=OUTLINE,
        )
    else:
        d.line((x, bottom - h + 12, x + w, bottom - h + 12), fill=OUTLINE, width=2)


def basket(d: Draw, cx: int, bottom: int, w: int, colour: str) -> None:
    h = w * 2 // 3
    d.polygon(
        [
            (cx - w // 2, bottom - h),
            (cx + w // 2, bottom - h),
            (cx + w // 2 - 10, bottom),
            (cx - w // 2 + 10, bottom),
        ],
        fill=COLOUR[colour],
        outline=OUTLINE,
    )
    for k in range(1, 4):
        y = bottom - h + k * h // 4
        d.line((cx - w // 2 + 3, y, cx + w // 2 - 3, y), fill=OUTLINE, width=1)


def door(d: Draw, x: int, feet: int = GROUND) -> None:
    d.rectangle((x, feet - 200, x + 90, feet), fill=(160, 110, 70), outline=OUTLINE, width=3)
    d.ellipse((x + 70, feet - 105, x + 80, feet - 95), fill=COLOUR["yellow"], outline=OUTLINE)


def window(d: Draw, left: int, top: int, w: int, h: int) -> None:
    d.rectangle((left, top, left + w, top + h), fill=SKY, outline=(255, 255, 255), width=8)
    d.line((left + w // 2, top, left + w // 2, top + h), fill=(255, 255, 255), width=6)
    d.rectangle((left - 10, top + h, left + w + 10, top + h + 12), fill=(255, 255, 255), outline=OUTLINE)


def tree(d: Draw, x: int, feet: int = GROUND, height: int = 230) -> None:
    d.rectangle((x - 12, feet - height // 2, x + 12, feet), fill=(120, 80, 45), outline=OUTLINE)
    d.ellipse((x - 70, feet - height, x + 70, feet - height // 2 + 20), fill=(60, 140, 60), outline=OUTLINE)


def bush(d: Draw, cx: int, feet: int = GROUND, w: int = 120, h: int = 110) -> None:
    """A dense bush: it hides what is behind it from whoever stands on the other side."""
    for dx, dy, rx in ((-w // 4, 0, w // 3), (w // 4, 0, w // 3), (0, -h // 3, w // 3)):
        d.ellipse(
            (cx + dx - rx, feet - h + h // 3 + dy - rx // 2, cx + dx + rx, feet),
            fill=(40, 120, 50),
            outline=OUTLINE,
        )


def haystack(d: Draw, cx: int, feet: int = GROUND, w: int = 110, h: int = 140) -> None:
    d.rounded_rectangle(
        (cx - w // 2, feet - h, cx + w // 2, feet), radius=30, fill=(226, 190, 90), outline=OUTLINE, width=2
    )
    for k in range(1, 6):
        x = cx - w // 2 + k * w // 6
        d.line((x, feet - h + 10, x - 6, feet - 6), fill=(190, 150, 60), width=2)


def fence(d: Draw, left: int, right: int, feet: int = GROUND, height: int = 80) -> None:
    for x in range(left, right, 22):
        d.rectangle((x, feet - height, x + 12, feet), fill=(240, 240, 240), outline=OUTLINE)
    d.rectangle(
        (left - 4, feet - height + 15, right, feet - height + 24), fill=(240, 240, 240), outline=OUTLINE
    )


def rock(d: Draw, cx: int, feet: int = GROUND, w: int = 130, h: int = 130) -> None:
    d.polygon(
        [
            (cx - w // 2, feet),
            (cx - w // 2 + 10, feet - h * 2 // 3),
            (cx - 10, feet - h),
            (cx + w // 2 - 15, feet - h + 20),
            (cx + w // 2, feet),
        ],
        fill=(140, 140, 150),
        outline=OUTLINE,
    )


def sign(d: Draw, cx: int, feet: int = GROUND, w: int = 90, h: int = 190) -> None:
    """A tall blank board on two posts (no writing)."""
    d.rectangle((cx - w // 2 + 10, feet - 40, cx - w // 2 + 18, feet), fill=(120, 80, 45))
    d.rectangle((cx + w // 2 - 18, feet - 40, cx + w // 2 - 10, feet), fill=(120, 80, 45))
    d.rectangle(
        (cx - w // 2, feet - h, cx + w // 2, feet - 40), fill=(250, 170, 70), outline=OUTLINE, width=3
    )


def flower_pot(d: Draw, cx: int, feet: int = GROUND) -> None:
    d.polygon(
        [(cx - 20, feet - 40), (cx + 20, feet - 40), (cx + 14, feet), (cx - 14, feet)],
        fill=(200, 100, 60),
        outline=OUTLINE,
    )
    d.line((cx, feet - 40, cx, feet - 70), fill=(40, 120, 50), width=4)
    d.ellipse((cx - 12, feet - 84, cx + 12, feet - 62), fill=COLOUR["pink"], outline=OUTLINE)


# --------------------------------------------------------------------------- things


def ball(d: Draw, cx: int, feet: int, r: int, colour: str) -> None:
    d.ellipse((cx - r, feet - 2 * r, cx + r, feet), fill=COLOUR[colour], outline=OUTLINE, width=2)
    d.arc(
        (cx - r + 4, feet - 2 * r + 4, cx + r - 4, feet - 4),
        start=200,
        end=260,
        fill=(255, 255, 255),
        width=3,
    )


def pumpkin(d: Draw, cx: int, feet: int, r: int) -> None:
    d.ellipse((cx - r, feet - int(1.6 * r), cx + r, feet), fill=COLOUR["orange"], outline=OUTLINE, width=2)
    d.ellipse((cx - r // 3, feet - int(1.6 * r), cx + r // 3, feet), outline=OUTLINE, width=2)
    d.rectangle((cx - 3, feet - int(1.6 * r) - 10, cx + 3, feet - int(1.6 * r) + 2), fill=(80, 120, 40))


def shell(d: Draw, cx: int, feet: int, r: int) -> None:
    """A scallop shell of radius r lying on the ground: a ribbed fan above a small hinge."""
    hinge = feet - max(3, r // 5)
    d.pieslice(
        (cx - r, hinge - r, cx + r, hinge + r),
        start=180,
        end=360,
        fill=(250, 200, 190),
        outline=OUTLINE,
        width=2,
    )
    for k in range(1, 6):
        angle = math.pi + k * math.pi / 6
        d.line(
            (cx, hinge, cx + int(r * math.cos(angle)), hinge + int(r * math.sin(angle))),
            fill=OUTLINE,
            width=1,
        )
    d.polygon(
        [(cx - r // 3, feet), (cx + r // 3, feet), (cx + r // 6, hinge), (cx - r // 6, hinge)],
        fill=(250, 200, 190),
        outline=OUTLINE,
    )


def balloon(d: Draw, cx: int, top: int, r: int, colour: str, string_to: int = GROUND) -> None:
    d.line((cx, top + int(2.4 * r), cx, string_to), fill=OUTLINE, width=1)
    d.ellipse((cx - r, top, cx + r, top + int(2.4 * r)), fill=COLOUR[colour], outline=OUTLINE, width=2)


def heart_balloon(d: Draw, cx: int, top: int, size: int, colour: str, string_to: tuple[int, int]) -> None:
    """A heart-shaped balloon whose string ends at the point ``string_to`` (a hand)."""
    d.line((cx, top + size + size // 2, *string_to), fill=OUTLINE, width=1)
    half = size // 2
    d.ellipse((cx - size, top, cx, top + size), fill=COLOUR[colour])
    d.ellipse((cx, top, cx + size, top + size), fill=COLOUR[colour])
    d.polygon(
        [(cx - size + 2, top + half + 6), (cx + size - 2, top + half + 6), (cx, top + size + half + 6)],
        fill=COLOUR[colour],
    )


def mug(d: Draw, x: int, bottom: int, colour: str, *, steam: bool = False) -> None:
    d.rectangle((x, bottom - 40, x + 34, bottom), fill=COLOUR[colour], outline=OUTLINE, width=2)
    d.arc((x + 24, bottom - 32, x + 48, bottom - 10), start=270, end=90, fill=OUTLINE, width=4)
    if steam:
        for k in range(3):
            sx = x + 6 + k * 11
            d.arc(
                (sx - 6, bottom - 76, sx + 6, bottom - 58), start=90, end=270, fill=(150, 150, 150), width=2
            )
            d.arc(
                (sx - 6, bottom - 60, sx + 6, bottom - 44), start=270, end=90, fill=(150, 150, 150), width=2
            )


def cup(d: Draw, x: int, bottom: int, colour: str, *, spots: bool = False) -> None:
    d.polygon(
        [(x, bottom - 44), (x + 44, bottom - 44), (x + 38, bottom), (x + 6, bottom)],
        fill=COLOUR[colour],
        outline=OUTLINE,
    )
    if spots:
        for sx, sy in ((10, 34), (24, 24), (31, 36), (15, 14), (30, 10)):
            d.ellipse((x + sx - 3, bottom - sy - 3, x + sx + 3, bottom - sy + 3), fill=(255, 255, 255))


def glasses(d: Draw, x: int, bottom: int) -> None:
    for lx in (x, x + 26):
        d.ellipse((lx, bottom - 18, lx + 20, bottom - 2), outline=(30, 30, 30), width=3)
    d.line((x + 20, bottom - 11, x + 26, bottom - 11), fill=(30, 30, 30), width=3)


def cat(d: Draw, x: int, bottom: int) -> None:
    """A sitting cat, about 60 pixels tall, facing the viewer."""
    grey = (120, 120, 130)
    d.ellipse((x - 22, bottom - 40, x + 22, bottom), fill=grey, outline=OUTLINE)
    d.ellipse((x - 16, bottom - 64, x + 16, bottom - 34), fill=grey, outline=OUTLINE)
    d.polygon(
        [(x - 15, bottom - 56), (x - 12, bottom - 72), (x - 3, bottom - 62)], fill=grey, outline=OUTLINE
    )
    d.polygon(
        [(x + 15, bottom - 56), (x + 12, bottom - 72), (x + 3, bottom - 62)], fill=grey, outline=OUTLINE
    )
    for side in (-1, 1):
        d.ellipse((x + side * 7 - 2, bottom - 52, x + side * 7 + 2, bottom - 48), fill=(30, 30, 30))
    d.arc((x + 12, bottom - 30, x + 40, bottom - 2), start=270, end=90, fill=grey, width=5)


def teddy(d: Draw, cx: int, bottom: int, size: int = 50) -> None:
    fur = (170, 110, 60)
    r = size // 3
    d.ellipse((cx - r, bottom - 2 * r, cx + r, bottom), fill=fur, outline=OUTLINE)
    hr = int(r * 0.8)
    hy = bottom - 2 * r - hr + 4
    for side in (-1, 1):
        d.ellipse(
            (cx + side * hr - 7, hy - hr - 2, cx + side * hr + 7, hy - hr + 12), fill=fur, outline=OUTLINE
        )
    d.ellipse((cx - hr, hy - hr, cx + hr, hy + hr), fill=fur, outline=OUTLINE)
    for side in (-1, 1):
        d.ellipse((cx + side * hr // 2 - 2, hy - 4, cx + side * hr // 2 + 2, hy), fill=(30, 30, 30))
    d.ellipse((cx - 3, hy + 2, cx + 3, hy + 7), fill=(30, 30, 30))


def toy_car(d: Draw, x: int, bottom: int, colour: str = "yellow") -> None:
    d.rectangle((x, bottom - 18, x + 50, bottom - 6), fill=COLOUR[colour], outline=OUTLINE)
    d.rectangle((x + 12, bottom - 30, x + 36, bottom - 18), fill=COLOUR[colour], outline=OUTLINE)
    for wx in (x + 12, x + 38):
        d.ellipse((wx - 7, bottom - 13, wx + 7, bottom + 1), fill=(30, 30, 30))


def kite(d: Draw, cx: int, cy: int, size: int, colour: str) -> None:
    d.polygon(
        [(cx, cy - size), (cx + size * 2 // 3, cy), (cx, cy + size + size // 2), (cx - size * 2 // 3, cy)],
        fill=COLOUR[colour],
        outline=OUTLINE,
    )
    d.line(
        (cx, cy + size + size // 2, cx + 10, cy + size * 2 + 10, cx - 6, cy + size * 2 + 30),
        fill=OUTLINE,
        width=2,
    )


def toy_boat(d: Draw, cx: int, bottom: int, colour: str) -> None:
    d.polygon(
        [(cx - 40, bottom - 22), (cx + 40, bottom - 22), (cx + 28, bottom), (cx - 28, bottom)],
        fill=COLOUR[colour],
        outline=OUTLINE,
    )
    d.line((cx, bottom - 22, cx, bottom - 80), fill=OUTLINE, width=3)
    d.polygon(
        [(cx + 2, bottom - 78), (cx + 36, bottom - 30), (cx + 2, bottom - 30)],
        fill=(255, 255, 255),
        outline=OUTLINE,
    )


def ice_lolly(d: Draw, cx: int, bottom: int) -> None:
    d.rectangle((cx - 3, bottom - 24, cx + 3, bottom), fill=(220, 190, 140), outline=OUTLINE)
    d.rounded_rectangle(
        (cx - 16, bottom - 80, cx + 16, bottom - 22), radius=14, fill=COLOUR["pink"], outline=OUTLINE
    )


def popcorn(d: Draw, cx: int, bottom: int) -> None:
    d.polygon(
        [(cx - 26, bottom - 60), (cx + 26, bottom - 60), (cx + 18, bottom), (cx - 18, bottom)],
        fill=(255, 255, 255),
        outline=OUTLINE,
    )
    for sx in (-14, 2):
        d.polygon(
            [
                (cx + sx, bottom - 60),
                (cx + sx + 10, bottom - 60),
                (cx + sx + 8, bottom),
                (cx + sx + 2, bottom),
            ],
            fill=COLOUR["red"],
        )
    for px, py in ((-18, 66), (-4, 72), (10, 68), (20, 64), (2, 62)):
        d.ellipse(
            (cx + px - 9, bottom - py - 9, cx + px + 9, bottom - py + 9),
            fill=(255, 248, 210),
            outline=OUTLINE,
        )


def sandcastle(d: Draw, cx: int, feet: int = GROUND) -> None:
    sand = (220, 185, 110)
    d.rectangle((cx - 60, feet - 60, cx + 60, feet), fill=sand, outline=OUTLINE)
    for tx in (cx - 60, cx + 30):
        d.rectangle((tx, feet - 95, tx + 30, feet - 60), fill=sand, outline=OUTLINE)
    d.rectangle((cx - 15, feet - 80, cx + 15, feet - 60), fill=sand, outline=OUTLINE)


def pie(d: Draw, cx: int, bottom: int) -> None:
    d.pieslice(
        (cx - 40, bottom - 34, cx + 40, bottom + 20),
        start=180,
        end=360,
        fill=(220, 160, 80),
        outline=OUTLINE,
        width=2,
    )
    d.rectangle((cx - 42, bottom - 8, cx + 42, bottom), fill=(200, 200, 210), outline=OUTLINE)
    for k in (-20, 0, 20):
        d.line((cx + k - 5, bottom - 22, cx + k + 5, bottom - 16), fill=OUTLINE, width=2)


def pancakes(d: Draw, cx: int, bottom: int) -> None:
    d.ellipse((cx - 60, bottom - 14, cx + 60, bottom + 6), fill=(255, 255, 255), outline=OUTLINE)
    for k in range(4):
        y = bottom - 8 - k * 10
        d.ellipse((cx - 44, y - 10, cx + 44, y + 6), fill=(226, 170, 90), outline=OUTLINE)
    d.rectangle((cx - 10, bottom - 52, cx + 10, bottom - 44), fill=(255, 240, 150), outline=OUTLINE)


def bowl(d: Draw, cx: int, bottom: int, food: str) -> None:
    """A bowl of ``food`` colour (porridge, soup ...), seen from the side."""
    d.ellipse((cx - 56, bottom - 54, cx + 56, bottom - 34), fill=COLOUR[food], outline=OUTLINE)
    d.chord(
        (cx - 56, bottom - 74, cx + 56, bottom),
        start=0,
        end=180,
        fill=(120, 170, 220),
        outline=OUTLINE,
        width=2,
    )


# --------------------------------------------------------------------------- the pictures, one function each


def common_desire_1(d: Draw) -> None:
    """Kofi in the park with a red kite and a blue boat."""
    person(d, 90, height=140, shirt="yellow", hair="black", skin="dark", mood="smile")
    kite(d, 260, 200, 40, "red")
    toy_boat(d, 400, GROUND + 20, "blue")


def diverse_desire_1(d: Draw) -> None:
    """Lena at the fair with a pink ice lolly and a bag of popcorn on a table."""
    person(d, 90, height=140, shirt="purple", hair="blond", mood="smile", long_hair=True)
    table(d, 210, 470, 220)
    ice_lolly(d, 280, 220)
    popcorn(d, 400, 220)


def false_belief_location_1(d: Draw) -> None:
    """Hugo puts his toy car into the open red box; the blue box stands beside it."""
    person(d, 100, height=150, shirt="green", hair="brown", mood="neutral")
    box(d, 200, GROUND, 110, 80, "red", open_top=True)
    toy_car(d, 230, GROUND - 84, "yellow")
    box(d, 350, GROUND, 110, 80, "blue")


def reference_easy_1(d: Draw) -> None:
    """Toy shop: Nina faces a low shelf with a teddy; a tall box stands between her and the second teddy."""
    person(d, 60, height=130, shirt="pink", hair="black", skin="medium", long_hair=True)
    shelf(d, 150, 250, 250)
    teddy(d, 200, 250, 54)
    box(d, 290, GROUND, 60, 190, "yellow")
    teddy(d, 400, GROUND, 54)
    person(d, 470, height=180, shirt="grey", hair="grey")


def reference_easy_2(d: Draw) -> None:
    """Garden: Amara, a tree with a ball at its foot, a bush, a ball by the flower pot, and Jon.

    The bush stands between Amara and the ball by the flower pot: she cannot see that one.
    """
    person(d, 55, height=125, shirt="orange", hair="black", skin="dark", long_hair=True)
    tree(d, 170, height=230)
    ball(d, 215, GROUND, 17, "yellow")
    bush(d, 305, w=120, h=120)
    ball(d, 395, GROUND, 17, "yellow")
    flower_pot(d, 435)
    person(d, 485, height=160, shirt="blue", hair="black", skin="dark")


def moral_false_belief_2(d: Draw) -> None:
    """Ada's red ball lies in the green basket; the blue basket is empty."""
    person(d, 90, height=140, shirt="yellow", hair="red", mood="smile", long_hair=True)
    basket(d, 250, GROUND, 100, "green")
    ball(d, 250, GROUND - 60, 22, "red")
    basket(d, 400, GROUND, 100, "blue")


def _kitchen_table(d: Draw) -> None:
    table(d, 110, 440, 230)


def reference_hard_referent_1_before(d: Draw) -> None:
    """Grandma Edith's tea steams in the red mug; her glasses lie next to it; the green mug is empty."""
    person(d, 55, height=175, shirt="purple", hair="grey", long_hair=True)
    _kitchen_table(d)
    glasses(d, 140, 230)
    mug(d, 200, 230, "red", steam=True)
    mug(d, 335, 230, "green")


def reference_hard_referent_1_after(d: Draw) -> None:
    """The cat has pushed the glasses next to the green mug; Kit stands at the door and did not see."""
    _kitchen_table(d)
    mug(d, 200, 230, "red", steam=True)
    mug(d, 335, 230, "green")
    glasses(d, 390, 230)
    cat(d, 280, 230)
    person(d, 480, height=140, shirt="green", hair="brown")


def _child_close_up(
    d: Draw, mood: str, food: Callable[[Draw], None], *, shirt: str, hair: str, skin: str, long_hair: bool
) -> None:
    """A big face above a table so that the expression is easy to read."""
    d.rectangle((150, 250, 362, 384), fill=COLOUR[shirt], outline=OUTLINE)
    if long_hair:
        d.rectangle((176, 60, 336, 230), fill=HAIR[hair])
    face(d, 256, 150, 90, skin=skin, hair=hair, mood=mood)
    d.rectangle((0, 300, WIDTH, HEIGHT), fill=COLOUR["brown"], outline=OUTLINE)
    food(d)


def nlc_pair_soup(mood: str) -> Callable[[Draw], None]:
    """Lucy and her bowl of soup; only the face (smile or frown) differs between the pair."""

    def draw(d: Draw) -> None:
        _child_close_up(
            d,
            mood,
            lambda dd: bowl(dd, 256, 372, "orange"),
            shirt="pink",
            hair="brown",
            skin="light",
            long_hair=True,
        )

    return draw


def nlc_text_pair(mood: str) -> Callable[[Draw], None]:
    """Tariq at breakfast: smiling over pancakes (sincere) or frowning over porridge (sarcastic)."""

    def draw(d: Draw) -> None:
        food = (
            (lambda dd: pancakes(dd, 256, 366))
            if mood == "smile"
            else (lambda dd: bowl(dd, 256, 372, "beige"))
        )
        _child_close_up(d, mood, food, shirt="green", hair="black", skin="medium", long_hair=False)

    return draw


def reference_hard_perspective_1(d: Draw) -> None:
    """Pumpkin field: Aunt June by the gate (left); a haystack hides the big pumpkin from her;
    Milo sits on the fence on the right and sees all three."""
    d.rectangle((18, GROUND - 100, 26, GROUND), fill=(120, 80, 45))  # gate post
    d.rectangle((26, GROUND - 90, 70, GROUND - 20), outline=(120, 80, 45), width=5)  # gate
    person(d, 95, height=175, shirt="red", hair="brown", long_hair=True)
    pumpkin(d, 170, GROUND, 18)
    pumpkin(d, 240, GROUND, 30)
    haystack(d, 325, w=90, h=150)
    pumpkin(d, 412, GROUND, 44)
    fence(d, 462, 512, GROUND, 90)
    person(d, 474, feet=GROUND - 84, height=120, shirt="blue", hair="blond", mood="smile", sitting=True)


def reference_hard_perspective_2(d: Draw) -> None:
    """Balloon stall: Dad on the left, a small and a middle-sized balloon, a tall sign, the big balloon
    behind the sign, Nora on the right."""
    person(d, 60, height=180, shirt="blue", hair="black")
    balloon(d, 150, 170, 14, "green")
    balloon(d, 215, 130, 24, "yellow")
    sign(d, 300, w=70, h=230)
    balloon(d, 390, 70, 40, "red")
    person(d, 470, height=125, shirt="pink", hair="brown", long_hair=True, mood="smile")


def reference_hard_perspective_3(d: Draw) -> None:
    """Beach: Zoe (left) by the big shell; a rock hides the big shell from Dad (right); a middle-sized
    and a small shell lie in the open."""
    person(d, 45, height=125, shirt="yellow", hair="red", long_hair=True, mood="smile")
    shell(d, 115, GROUND, 30)
    rock(d, 200, w=90, h=150)
    shell(d, 290, GROUND, 20)
    shell(d, 370, GROUND, 11)
    person(d, 460, height=180, shirt="green", hair="brown")


def interpretation_2(d: Draw) -> None:
    """Three cups on a shelf: a blue cup with spots, a red cup with spots, a plain yellow cup."""
    person(d, 60, height=175, shirt="purple", hair="grey", long_hair=True)
    person(d, 450, height=125, shirt="orange", hair="blond", long_hair=True)
    wall_shelf(d, 150, 380, 160)
    cup(d, 170, 160, "blue", spots=True)
    cup(d, 245, 160, "red", spots=True)
    cup(d, 320, 160, "yellow")


def moral_true_belief_1(d: Draw) -> None:
    """Beach: Kai's sandcastle with a shell on top; Elsie and Kai nearby."""
    person(d, 80, height=135, shirt="pink", hair="blond", long_hair=True)
    sandcastle(d, 260)
    shell(d, 260, GROUND - 80, 12)
    person(d, 430, height=140, shirt="blue", hair="black", skin="medium", mood="smile")


def lie_vs_false_statement_1(d: Draw) -> None:
    """Aunt Pearl's pie cools on the windowsill; Aunt Pearl stands beside the window."""
    window(d, 200, 70, 200, 150)
    pie(d, 300, 220)
    person(d, 100, height=175, shirt="green", hair="brown", long_hair=True, mood="smile")


def second_order_belief_desire_1(d: Draw) -> None:
    """Dad, headphones on, at the door; Nadia calls to him."""
    door(d, 380)
    person(d, 340, height=180, shirt="blue", hair="brown", headphones=True)
    person(d, 110, height=125, shirt="yellow", hair="black", skin="dark", long_hair=True)


def second_order_belief_desire_1_gift(d: Draw) -> None:
    """Dad gives Nadia a heart balloon."""
    person(d, 330, height=180, shirt="blue", hair="brown")
    person(d, 170, height=125, shirt="yellow", hair="black", skin="dark", long_hair=True)
    heart_balloon(d, 262, 60, 40, "red", string_to=(295, 226))


#: file stem -> (scene, drawing function). File names match the turn's image id plus ".png".
PICTURES: dict[str, tuple[str, Callable[[Draw], None]]] = {
    "sample-common_desire-1-0": ("outdoor", common_desire_1),
    "sample-diverse_desire-1-0": ("outdoor", diverse_desire_1),
    "sample-false_belief_location-1-0": ("indoor", false_belief_location_1),
    "sample-reference_easy-1-0": ("indoor", reference_easy_1),
    "sample-reference_easy-2-0": ("outdoor", reference_easy_2),
    "sample-moral_false_belief-2-0": ("outdoor", moral_false_belief_2),
    "sample-reference_hard_referent-1-0": ("indoor", reference_hard_referent_1_before),
    "sample-reference_hard_referent-1-1": ("indoor", reference_hard_referent_1_after),
    "sample-non_sarcasm-1-0": ("indoor", nlc_text_pair("smile")),
    "sample-sarcasm-1-0": ("indoor", nlc_text_pair("frown")),
    "sample-non_sarcasm-2-0": ("indoor", nlc_pair_soup("smile")),
    "sample-sarcasm-2-0": ("indoor", nlc_pair_soup("frown")),
    "sample-reference_hard_perspective-1-0": ("outdoor", reference_hard_perspective_1),
    "sample-reference_hard_perspective-2-0": ("outdoor", reference_hard_perspective_2),
    "sample-reference_hard_perspective-3-0": ("beach", reference_hard_perspective_3),
    "sample-interpretation-2-0": ("indoor", interpretation_2),
    "sample-moral_true_belief-1-0": ("beach", moral_true_belief_1),
    "sample-lie_vs_false_statement-1-0": ("indoor", lie_vs_false_statement_1),
    "sample-second_order_belief_desire-1-0": ("indoor", second_order_belief_desire_1),
    "sample-second_order_belief_desire-1-1": ("indoor", second_order_belief_desire_1_gift),
}


def render(name: str) -> Image.Image:
    scene, draw_fn = PICTURES[name]
    image, draw = canvas(scene)
    draw_fn(draw)
    return image


def draw_all(folder: str | Path) -> list[Path]:
    """Draw every picture into ``folder`` as small palette PNGs; returns the written paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in PICTURES:
        path = folder / f"{name}.png"
        # A fixed 48-colour palette keeps files small; no dithering keeps the output deterministic.
        render(name).quantize(colors=48, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
            path, format="PNG", optimize=True
        )
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    default = Path(__file__).resolve().parents[1] / "src" / "commet" / "data" / "sample" / "images"
    folder = Path(argv[1]) if len(argv) > 1 else default
    for path in draw_all(folder):
        print(f"{path}  {path.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
