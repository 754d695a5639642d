"""The shapes pictures are made of: places, things, their features and screens (Pillow only, never text).

:class:`Pen` draws each shape on the picture and, with the current entity's id, on an id
mask, so tests can tell which entity each pixel belongs to. :mod:`.render` lays scenes out
and calls these functions; the hand-written sample scenes use the extra kinds in
:data:`SCENE_KINDS`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from PIL import Image, ImageDraw

SS = 2  # supersampling factor: drawn at twice the size, then smoothed down

Box = tuple[float, float, float, float]
RGB = tuple[int, int, int]
#: A scene, and one of its agents, places, things or occluders, as JSON data (the keys
#: :func:`~commet.generation.procedural.render.compose` writes; scene files are read as they are).
Scene = dict[str, Any]
Entity = dict[str, Any]

OUTLINE: RGB = (60, 50, 60)

#: Kinds only hand-written scenes (the bundled sample) use, beside the generator's lexicon.
SCENE_KINDS: dict[str, tuple[str, ...]] = {
    "places": ("tree", "flower pot", "wall shelf", "tabletop", "window", "door", "fence", "gate", "sandcastle"),
    "objects": ("kite", "boat", "ice lolly", "popcorn", "pumpkin", "shell", "mug", "glasses", "cat", "pie",
                "pancakes", "bowl", "heart balloon"),
    "occluders": ("bush", "haystack", "rock", "sign", "tall box"),
}


class _NoDraw:
    """Stands in for the mask's drawing context when no mask is wanted: every call does nothing."""

    def __getattr__(self, name: str) -> Callable[..., None]:
        return lambda *args, **kwargs: None


class Pen:
    """Draws every shape on the picture and, with the current entity's id, on the mask."""

    def __init__(self, size: tuple[int, int], background: RGB, with_mask: bool = True) -> None:
        self.image = Image.new("RGB", (size[0] * SS, size[1] * SS), background)
        self.mask = Image.new("L", self.image.size, 0) if with_mask else None
        self._img = ImageDraw.Draw(self.image)
        self._mask = ImageDraw.Draw(self.mask) if self.mask is not None else _NoDraw()
        self.value = 0

    @staticmethod
    def _s(box: Box | list[float]) -> list[float]:
        return [v * SS for v in box]

    def rect(self, box: Box, fill: RGB, radius: float = 0, outline: RGB | None = OUTLINE, width: float = 2) -> None:
        b = self._s(box)
        self._img.rounded_rectangle(b, radius * SS, fill=fill, outline=outline, width=int(width * SS))
        self._mask.rounded_rectangle(b, radius * SS, fill=self.value)

    def ellipse(self, box: Box, fill: RGB, outline: RGB | None = OUTLINE, width: float = 2) -> None:
        b = self._s(box)
        self._img.ellipse(b, fill=fill, outline=outline, width=int(width * SS))
        self._mask.ellipse(b, fill=self.value)

    def polygon(self, points: list[tuple[float, float]], fill: RGB, outline: RGB | None = OUTLINE) -> None:
        p = [(x * SS, y * SS) for x, y in points]
        self._img.polygon(p, fill=fill, outline=outline, width=2 * SS)
        self._mask.polygon(p, fill=self.value)

    def line(self, points: list[tuple[float, float]], fill: RGB, width: float = 2) -> None:
        p = [(x * SS, y * SS) for x, y in points]
        self._img.line(p, fill=fill, width=int(width * SS), joint="curve")
        self._mask.line(p, fill=self.value, width=int(width * SS))

    def arc(self, box: Box, start: float, end: float, fill: RGB, width: float = 2) -> None:
        self._img.arc(self._s(box), start, end, fill=fill, width=int(width * SS))
        self._mask.arc(self._s(box), start, end, fill=self.value, width=int(width * SS))

    def background(self, box: Box, fill: RGB) -> None:
        """Scenery that belongs to no entity (mask stays 0)."""
        self._img.rectangle(self._s(box), fill=fill)


def darker(rgb: RGB | list[int], f: float = 0.7) -> RGB:
    return (int(rgb[0] * f), int(rgb[1] * f), int(rgb[2] * f))


def lighter(rgb: RGB | list[int], f: float = 0.55) -> RGB:
    return (int(rgb[0] + (255 - rgb[0]) * f), int(rgb[1] + (255 - rgb[1]) * f), int(rgb[2] + (255 - rgb[2]) * f))


def draw_place(pen: Pen, p: Entity) -> None:
    x0, y0, x1, y1 = p["bbox"]
    rgb, kind = tuple(p["rgb"]), p["kind"]
    w, h = x1 - x0, y1 - y0
    if kind == "table":
        pen.rect((x0, y0, x1, y0 + 14), rgb, radius=4)
        for lx in (x0 + 10, x1 - 22):
            pen.rect((lx, y0 + 12, lx + 12, y1 + 6), darker(rgb, 0.85), radius=2)
    elif kind == "shelf":
        pen.rect((x0, y0, x1, y1 + 6), rgb, radius=3)
        pen.rect((x0 + 8, y0 + 14, x1 - 8, y1 - 6), lighter(rgb, 0.4), radius=2)
        pen.rect((x0 + 8, y0 + h * 0.55, x1 - 8, y0 + h * 0.55 + 8), rgb, radius=1)
    elif kind == "basket":
        pen.rect((x0, y0, x1, y1), rgb, radius=10)
        for k in range(1, 4):
            yy = y0 + k * h / 4
            pen.line([(x0 + 6, yy), (x1 - 6, yy)], darker(rgb), width=2)
    elif kind == "bag":
        pen.polygon([(x0 + 6, y0 + 16), (x1 - 6, y0 + 16), (x1, y1), (x0, y1)], rgb)
        pen.arc((x0 + w * 0.28, y0, x1 - w * 0.28, y0 + 36), 180, 360, darker(rgb), width=4)  # ends in the body
    elif kind == "lunchbox":
        pen.arc((x0 + w * 0.3, y0, x1 - w * 0.3, y0 + 24), 180, 360, darker(rgb, 0.6), width=4)
        pen.rect((x0 + 4, y0 + 20, x1 - 4, y1), rgb, radius=6)
        pen.rect((x0, y0 + 10, x1, y0 + 24), darker(rgb, 0.85), radius=4)
    elif kind == "toy chest":  # a domed lid, two metal bands and a lock
        pen.rect((x0, y0 + 18, x1, y1), rgb, radius=4)
        pen.ellipse((x0, y0 - 6, x1, y0 + 36), darker(rgb, 0.85))
        pen.rect((x0, y0 + 16, x1, y0 + 24), darker(rgb, 0.7), radius=1)
        for bx in (x0 + w * 0.18, x1 - w * 0.18 - 8):
            pen.rect((bx, y0 + 2, bx + 8, y1), (150, 150, 160), radius=1, outline=None)
        pen.rect((x0 + w * 0.44, y0 + 20, x1 - w * 0.44, y0 + 34), (235, 200, 80), radius=2)
    elif kind in SCENE_KINDS["places"]:
        _draw_scene_place(pen, kind, (x0, y0, x1, y1), rgb)
    elif kind != "box":  # a hand-written scene may misspell a kind: say so rather than draw a box
        raise ValueError(f"no drawing for place kind {kind!r}")
    else:  # box: a cardboard-style box with open flaps folded down and a strip of tape
        pen.rect((x0, y0 + 12, x1, y1), rgb, radius=2)
        pen.polygon([(x0, y0 + 12), (x0 + w * 0.5, y0 + 12), (x0 + w * 0.42, y0 + 2), (x0 - 8, y0 + 2)],
                    darker(rgb, 0.85))
        pen.polygon([(x0 + w * 0.5, y0 + 12), (x1, y0 + 12), (x1 + 8, y0 + 2), (x0 + w * 0.58, y0 + 2)],
                    darker(rgb, 0.85))
        pen.rect((x0 + w * 0.44, y0 + 12, x1 - w * 0.44, y0 + h * 0.6), (225, 205, 150), radius=0, outline=None)


def _star(cx: float, cy: float, r: float) -> list[tuple[float, float]]:
    return [(cx + (r if k % 2 == 0 else r * 0.45) * math.cos(math.pi / 2 + k * math.pi / 5),
             cy - (r if k % 2 == 0 else r * 0.45) * math.sin(math.pi / 2 + k * math.pi / 5)) for k in range(10)]


def draw_thing(pen: Pen, o: Entity) -> None:
    x0, y0, x1, y1 = o["bbox"]
    w, h = x1 - x0, y1 - y0
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    rgb, shape = tuple(o["rgb"]), o["kind"]
    white = (255, 255, 255)
    if shape == "ball":
        pen.ellipse((x0, y0, x1, y1), rgb)
        pen.arc((x0 + w * 0.15, y0 + h * 0.15, x1 - w * 0.15, y1 - h * 0.15), 200, 250, white, width=3)
    elif shape == "cup":
        pen.polygon([(x0 + w * 0.05, y0 + h * 0.1), (x1 - w * 0.25, y0 + h * 0.1), (x1 - w * 0.32, y1),
                     (x0 + w * 0.12, y1)], rgb)
        pen.arc((x1 - w * 0.55, y0 + h * 0.3, x1 - w * 0.02, y0 + h * 0.75), 270, 90, rgb,  # handle joins the cup
                width=max(3, w * 0.1))
    elif shape == "car":
        line = 1 if w < 40 else 2
        pen.rect((x0 + w * 0.2, y0 + h * 0.2, x1 - w * 0.2, y0 + h * 0.6), rgb, radius=5, width=line)
        pen.rect((x0 + w * 0.32, y0 + h * 0.3, x1 - w * 0.32, y0 + h * 0.45), (200, 230, 250), radius=2,
                 outline=None)
        pen.rect((x0, y0 + h * 0.45, x1, y1 - h * 0.1), rgb, radius=5, width=line)
        for wx in (x0 + w * 0.25, x1 - w * 0.25):
            pen.ellipse((wx - h * 0.12, y1 - h * 0.24, wx + h * 0.12, y1), (40, 40, 40), outline=None)
    elif shape == "teddy":
        for ex in (x0 + w * 0.18, x1 - w * 0.18):
            pen.ellipse((ex - w * 0.12, y0, ex + w * 0.12, y0 + h * 0.22), rgb)
        pen.ellipse((x0 + w * 0.12, y0 + h * 0.45, x1 - w * 0.12, y1), rgb)
        pen.ellipse((x0 + w * 0.2, y0 + h * 0.05, x1 - w * 0.2, y0 + h * 0.55), rgb)
        for ex in (cx - w * 0.1, cx + w * 0.1):
            pen.ellipse((ex - 1.5, y0 + h * 0.25, ex + 1.5, y0 + h * 0.25 + 3), (30, 30, 30), outline=None)
    elif shape == "duck":
        pen.ellipse((x0, y0 + h * 0.4, x1, y1), rgb)
        pen.ellipse((x0 + w * 0.42, y0 + h * 0.05, x1 - w * 0.05, y0 + h * 0.55), rgb)
        pen.polygon([(x1 - w * 0.08, y0 + h * 0.28), (x1 + w * 0.08, y0 + h * 0.33), (x1 - w * 0.08, y0 + h * 0.4)],
                    (250, 150, 40), outline=None)
        pen.ellipse((x1 - w * 0.25, y0 + h * 0.2, x1 - w * 0.2, y0 + h * 0.25), (30, 30, 30), outline=None)
    elif shape == "book":
        pen.rect((x0, y0 + h * 0.15, x1, y1), rgb, radius=3)
        pen.rect((x0 + w * 0.1, y0 + h * 0.15, x0 + w * 0.22, y1), darker(rgb), radius=1, outline=None)
    elif shape == "apple":
        pen.ellipse((x0 + w * 0.05, y0 + h * 0.18, x1 - w * 0.05, y1), rgb)
        pen.line([(cx, y0 + h * 0.22), (cx + w * 0.05, y0)], (100, 70, 40), width=3)
        pen.ellipse((cx + w * 0.05, y0 + h * 0.02, cx + w * 0.3, y0 + h * 0.14), (70, 150, 60), outline=None)
    elif shape == "cookie":
        pen.ellipse((x0, y0 + h * 0.2, x1, y1 - h * 0.05), rgb)
        for dx, dy in ((0.3, 0.45), (0.6, 0.4), (0.45, 0.7), (0.7, 0.68)):
            pen.ellipse((x0 + w * dx - 2.5, y0 + h * dy - 2.5, x0 + w * dx + 2.5, y0 + h * dy + 2.5),
                        (70, 40, 20), outline=None)
    elif shape == "cupcake":
        pen.polygon([(x0 + w * 0.12, y0 + h * 0.5), (x1 - w * 0.12, y0 + h * 0.5), (x1 - w * 0.22, y1),
                     (x0 + w * 0.22, y1)], (235, 215, 170))
        pen.ellipse((x0 + w * 0.02, y0 + h * 0.05, x1 - w * 0.02, y0 + h * 0.62), rgb)
    elif shape == "sandwich":  # seen from the side: a thick filling between two slices of bread, lettuce on top
        crust, lettuce = (185, 130, 70), (120, 200, 90)
        pen.rect((x0, y1 - h * 0.24, x1, y1), (236, 212, 160), radius=4, outline=crust)
        pen.rect((x0 + 1, y1 - h * 0.6, x1 - 1, y1 - h * 0.22), rgb, radius=2)
        pen.polygon([(x0 - 2, y1 - h * 0.56)] + [(x0 + w * k / 6, y1 - h * (0.66 if k % 2 else 0.56))
                                                 for k in range(7)] + [(x1 + 2, y1 - h * 0.56)], lettuce, outline=None)
        pen.rect((x0, y0 + h * 0.1, x1, y1 - h * 0.62), (245, 225, 175), radius=7, outline=crust)
    elif shape == "banana":  # a curved crescent with brown tips
        outer = [(cx + w * 0.5 * math.cos(a), y0 + h * 0.05 + h * 0.85 * math.sin(a))
                 for a in (math.radians(d) for d in range(15, 166, 15))]
        inner = [(cx + w * 0.36 * math.cos(a), y0 + h * 0.05 + h * 0.5 * math.sin(a))
                 for a in (math.radians(d) for d in range(165, 14, -15))]
        pen.polygon(outer + inner, rgb)
        for px_, py_ in (outer[0], outer[-1]):
            pen.ellipse((px_ - 3, py_ - 3, px_ + 3, py_ + 3), (110, 80, 40), outline=None)
    elif shape == "jelly":
        pen.rect((x0, y1 - h * 0.25, x1, y1), (235, 235, 240), radius=4)
        pen.polygon([(x0 + w * 0.12, y1 - h * 0.25), (x0 + w * 0.22, y0 + h * 0.15), (x1 - w * 0.22, y0 + h * 0.15),
                     (x1 - w * 0.12, y1 - h * 0.25)], rgb)
    elif shape == "hat":
        pen.ellipse((x0, y1 - h * 0.3, x1, y1), rgb)
        pen.rect((x0 + w * 0.2, y0 + h * 0.2, x1 - w * 0.2, y1 - h * 0.15), rgb, radius=8)
    elif shape == "card" and o.get("state"):
        _draw_spoiled_card(pen, o["state"], (x0, y0, x1, y1), rgb)
    elif shape == "card":
        pen.rect((x0 + w * 0.1, y0, x1 - w * 0.1, y1), rgb, radius=2)
        pen.ellipse((cx - w * 0.12, cy - h * 0.1, cx + w * 0.12, cy + h * 0.12), white, outline=None)
    elif shape == "sticker":
        pen.polygon(_star(cx, cy, w / 2), rgb)
    elif shape == "balloon":
        pen.line([(cx, y0 + h * 0.65), (cx + 3, y1)], (90, 90, 90), width=1.5)
        pen.ellipse((x0 + w * 0.15, y0, x1 - w * 0.15, y0 + h * 0.7), rgb)
    elif shape in SCENE_KINDS["objects"]:
        _draw_scene_thing(pen, shape, (x0, y0, x1, y1), rgb, o.get("feature"))
    else:
        raise ValueError(f"no drawing for shape {shape!r}")
    _draw_feature(pen, o, rgb)


def _draw_feature(pen: Pen, o: Entity, rgb: RGB) -> None:
    """A thing's feature, in its own colour when the story names one (``feature_rgb``), then edged in the outline
    colour so that it shows on a thing of the same colour (a red duck with a red bow)."""
    x0, y0, x1, y1 = o["bbox"]
    w, h = x1 - x0, y1 - y0
    feature = o.get("feature")
    own = tuple(o["feature_rgb"]) if o.get("feature_rgb") else None
    edge = OUTLINE if own else None
    if feature == "sunglasses":
        yy = y0 + h * 0.22
        pen.rect((x1 - w * 0.5, yy - 3, x1 - w * 0.02, yy + 4), own or (20, 20, 20), radius=2, outline=edge)
    elif feature == "bow":
        bx, by = x0 + w * 0.65, y0 + h * 0.05
        pen.polygon([(bx, by), (bx - 8, by - 6), (bx - 8, by + 6)], own or (250, 250, 250))
        pen.polygon([(bx, by), (bx + 8, by - 6), (bx + 8, by + 6)], own or (250, 250, 250))
    elif feature == "stripes":
        for k in (0.35, 0.55, 0.75):
            stripe = [(x0 + w * 0.2, y0 + h * k), (x1 - w * 0.2, y0 + h * k)]
            if edge:
                pen.line(stripe, edge, width=5)
            pen.line(stripe, own or (255, 255, 255), width=3)
    elif feature == "dots":
        for dx, dy in ((0.35, 0.4), (0.62, 0.35), (0.5, 0.62), (0.3, 0.8), (0.7, 0.8)):
            pen.ellipse((x0 + w * dx - 2.5, y0 + h * dy - 2.5, x0 + w * dx + 2.5, y0 + h * dy + 2.5),
                        own or lighter(rgb), outline=edge, width=1)


def _draw_spoiled_card(pen: Pen, state: str, box: Box, rgb: RGB) -> None:
    """A paper after a harm (one connected shape, never a colour of the palette but its own): cut, folded,
    painted over, scribbled on, crumpled, covered in glitter, or full of holes."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    ink = (40, 40, 60)
    if state == "crumpled":  # a lumpy ball with creases
        pen.polygon([(cx, y0 + h * 0.2), (x1 - w * 0.15, y0 + h * 0.35), (x1 - w * 0.1, cy + h * 0.15),
                     (cx + w * 0.2, y1 - h * 0.05), (x0 + w * 0.2, y1 - h * 0.1), (x0 + w * 0.1, cy),
                     (x0 + w * 0.25, y0 + h * 0.3)], rgb)
        pen.line([(x0 + w * 0.3, cy - 2), (cx, cy + 4), (x1 - w * 0.25, cy - 3)], darker(rgb, 0.6), width=2)
        return
    if state == "folded":  # a paper plane
        pen.polygon([(x0, cy + h * 0.1), (x1, y0 + h * 0.25), (cx, y1 - h * 0.1)], rgb)
        pen.line([(x0 + 3, cy + h * 0.1), (x1 - 3, y0 + h * 0.27)], darker(rgb, 0.6), width=2)
        return
    pen.rect((x0 + w * 0.1, y0, x1 - w * 0.1, y1), rgb, radius=2)
    if state == "cut":  # torn into strips still hanging together: zigzag cuts
        for k in (0.35, 0.65):
            xs = x0 + w * k
            pen.line([(xs, y0 + 2), (xs + 4, y0 + h * 0.3), (xs - 4, y0 + h * 0.55), (xs + 3, y0 + h * 0.8)],
                     (250, 250, 250), width=2)
    elif state == "painted":  # thick paint over most of it
        pen.ellipse((x0 + w * 0.25, y0 + h * 0.15, x1 - w * 0.25, y0 + h * 0.6), (30, 60, 170), outline=None)
    elif state == "scribbled":
        pen.line([(x0 + w * 0.2, y0 + h * 0.2), (x1 - w * 0.2, y0 + h * 0.35), (x0 + w * 0.2, y0 + h * 0.5),
                  (x1 - w * 0.2, y0 + h * 0.65), (x0 + w * 0.25, y0 + h * 0.8)], ink, width=2)
    elif state == "glitter":
        for dx, dy in ((0.3, 0.2), (0.6, 0.3), (0.45, 0.5), (0.3, 0.7), (0.65, 0.75), (0.5, 0.88)):
            pen.ellipse((x0 + w * dx - 2, y0 + h * dy - 2, x0 + w * dx + 2, y0 + h * dy + 2), (230, 230, 180),
                        outline=None)
    elif state == "holes":  # snowflake holes: small white stars cut out of it
        for dx, dy in ((0.35, 0.3), (0.65, 0.45), (0.4, 0.72)):
            pen.polygon(_star(x0 + w * dx, y0 + h * dy, w * 0.1), (250, 250, 250), outline=None)


def draw_occluder(pen: Pen, o: Entity) -> None:
    x0, y0, x1, y1 = o["bbox"]
    w, h = x1 - x0, y1 - y0
    rgb = tuple(o["rgb"])
    if o["kind"] == "big plant":
        pen.polygon([(x0 + w * 0.22, y1 - h * 0.22), (x1 - w * 0.22, y1 - h * 0.22), (x1 - w * 0.3, y1),
                     (x0 + w * 0.3, y1)], (200, 110, 70))
        for lx0, ly0, lx1, ly1 in ((0, 0.0, 1, 0.45), (0, 0.3, 0.7, 0.8), (0.3, 0.3, 1, 0.8), (0.1, 0.1, 0.9, 0.6)):
            pen.ellipse((x0 + w * lx0, y0 + h * ly0, x0 + w * lx1, y0 + h * ly1), rgb)
    elif o["kind"] == "folding screen":
        panel = w / 3
        for k in range(3):
            pen.rect((x0 + k * panel, y0 + (6 if k == 1 else 0), x0 + (k + 1) * panel, y1 - 6), rgb, radius=3)
        for k in range(3):
            pen.line([(x0 + k * panel + panel / 2, y1 - 6), (x0 + k * panel + panel / 2, y1)], OUTLINE, width=3)
    elif o["kind"] in SCENE_KINDS["occluders"]:
        _draw_scene_occluder(pen, o["kind"], (x0, y0, x1, y1), rgb)
    elif o["kind"] != "tall cupboard":
        raise ValueError(f"no drawing for occluder kind {o['kind']!r}")
    else:
        pen.rect((x0, y0, x1, y1), rgb, radius=4)
        pen.line([((x0 + x1) / 2, y0 + 8), ((x0 + x1) / 2, y1 - 8)], darker(rgb), width=2)


def _half_ellipse(box: Box, top: bool = True, n: int = 16) -> list[tuple[float, float]]:
    """The points of the upper (or lower) half of the ellipse in ``box``, left to right."""
    x0, y0, x1, y1 = box
    cx, cy, rx, ry = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2, (y1 - y0) / 2
    sign = -1 if top else 1
    return [(cx - rx * math.cos(math.pi * k / n), cy + sign * ry * math.sin(math.pi * k / n)) for k in range(n + 1)]


def _draw_scene_place(pen: Pen, kind: str, box: Box, rgb: RGB) -> None:
    """Landmarks and furniture of the hand-written sample scenes."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    cx = (x0 + x1) / 2
    if kind == "tree":
        pen.rect((cx - w * 0.09, y0 + h * 0.45, cx + w * 0.09, y1), (120, 80, 45), radius=2)
        pen.ellipse((x0, y0, x1, y0 + h * 0.6), rgb)
    elif kind == "flower pot":
        pen.polygon([(x0, y1 - h * 0.45), (x1, y1 - h * 0.45), (x1 - w * 0.15, y1), (x0 + w * 0.15, y1)],
                    (200, 100, 60))
        pen.line([(cx, y1 - h * 0.45), (cx, y0 + h * 0.2)], (40, 120, 50), width=4)
        pen.ellipse((cx - w * 0.3, y0, cx + w * 0.3, y0 + h * 0.28), rgb)
    elif kind in ("wall shelf", "tabletop"):
        pen.rect((x0, y0, x1, y1), rgb, radius=2)
    elif kind == "window":  # a window with a white sill along its foot (things stand on the sill)
        pen.rect((x0 + 12, y0, x1 - 12, y1 - 14), (200, 230, 250), radius=4, outline=(255, 255, 255), width=8)
        pen.line([(cx, y0 + 4), (cx, y1 - 18)], (255, 255, 255), width=6)
        pen.rect((x0, y1 - 14, x1, y1), (255, 255, 255), radius=2)
    elif kind == "door":
        pen.rect((x0, y0, x1, y1), rgb, radius=3, width=3)
        pen.ellipse((x1 - w * 0.25, y0 + h * 0.48, x1 - w * 0.13, y0 + h * 0.48 + w * 0.12), (244, 200, 60))
    elif kind == "fence":
        for px_ in range(int(x0), int(x1) - 10, 26):
            pen.rect((px_, y0, px_ + 14, y1), rgb, radius=2)
        pen.rect((x0 - 4, y0 + h * 0.18, x1, y0 + h * 0.3), rgb, radius=1)
    elif kind == "gate":
        pen.rect((x0, y0, x0 + 10, y1), darker(rgb), radius=1)
        for yy in (y0 + h * 0.15, y0 + h * 0.5, y0 + h * 0.8):
            pen.rect((x0 + 10, yy, x1, yy + 7), rgb, radius=1)
        pen.rect((x1 - 7, y0 + h * 0.15, x1, y0 + h * 0.8 + 7), rgb, radius=1)
    else:  # sandcastle: a wall with two towers and a dark gateway
        pen.rect((x0, y0 + h * 0.38, x1, y1), rgb, radius=2)
        for tx in (x0, x1 - w * 0.25):
            pen.rect((tx, y0, tx + w * 0.25, y0 + h * 0.4), rgb, radius=2)
        pen.rect((cx - w * 0.1, y1 - h * 0.32, cx + w * 0.1, y1), darker(rgb, 0.6), radius=2)


def _draw_scene_thing(pen: Pen, shape: str, box: Box, rgb: RGB, feature: object) -> None:
    """Things of the hand-written sample scenes."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    white = (255, 255, 255)
    if shape == "kite":  # a diamond on a wavy tail
        pen.line([(cx, y0 + h * 0.62), (cx + w * 0.2, y0 + h * 0.8), (cx - w * 0.1, y1)], OUTLINE, width=2)
        pen.polygon([(cx, y0), (x1, y0 + h * 0.25), (cx, y0 + h * 0.62), (x0, y0 + h * 0.25)], rgb)
        pen.line([(cx, y0 + 3), (cx, y0 + h * 0.6)], darker(rgb), width=2)
    elif shape == "boat":  # a toy sailing boat
        pen.line([(cx, y1 - h * 0.3), (cx, y0)], OUTLINE, width=3)
        pen.polygon([(cx + 2, y0 + 3), (x1 - w * 0.08, y1 - h * 0.38), (cx + 2, y1 - h * 0.38)], white)
        pen.polygon([(x0, y1 - h * 0.3), (x1, y1 - h * 0.3), (x1 - w * 0.15, y1), (x0 + w * 0.15, y1)], rgb)
    elif shape == "ice lolly":
        pen.rect((cx - w * 0.1, y1 - h * 0.32, cx + w * 0.1, y1), (220, 190, 140), radius=1)
        pen.rect((x0, y0, x1, y1 - h * 0.28), rgb, radius=w * 0.45)
    elif shape == "popcorn":  # a striped tub with popped corn on top
        for kx, ky in ((0.15, 0.1), (0.4, 0.0), (0.65, 0.06), (0.85, 0.14), (0.5, 0.12)):
            pen.ellipse((x0 + w * (kx - 0.17), y0 + h * ky, x0 + w * (kx + 0.17), y0 + h * (ky + 0.24)),
                        (255, 248, 210))
        pen.polygon([(x0, y0 + h * 0.25), (x1, y0 + h * 0.25), (x1 - w * 0.15, y1), (x0 + w * 0.15, y1)], white)
        for sx in (0.22, 0.52):
            pen.polygon([(x0 + w * sx, y0 + h * 0.26), (x0 + w * (sx + 0.18), y0 + h * 0.26),
                         (x0 + w * (sx + 0.15), y1 - 1), (x0 + w * (sx + 0.05), y1 - 1)], rgb, outline=None)
    elif shape == "pumpkin":
        pen.rect((cx - w * 0.05, y0, cx + w * 0.05, y0 + h * 0.2), (80, 120, 40), radius=1, outline=None)
        pen.ellipse((x0, y0 + h * 0.12, x1, y1), rgb)
        pen.ellipse((cx - w * 0.18, y0 + h * 0.12, cx + w * 0.18, y1), rgb)
    elif shape == "shell":  # a ribbed scallop fan on a small hinge
        hinge = y1 - h * 0.22
        pen.polygon([(cx - w * 0.16, y1), (cx + w * 0.16, y1), (cx + w * 0.08, hinge), (cx - w * 0.08, hinge)], rgb)
        pen.polygon(_half_ellipse((x0, y0, x1, hinge + (hinge - y0))) + [(cx, hinge)], rgb)
        for k in range(1, 6):
            angle = math.pi + k * math.pi / 6
            pen.line([(cx, hinge), (cx + w * 0.5 * math.cos(angle), hinge + (hinge - y0) * math.sin(angle))],
                     OUTLINE, width=1)
    elif shape == "mug":  # with steam rising from it when the feature is "steam"
        top = y0 + h * 0.45 if feature == "steam" else y0
        mw = w * 0.72
        pen.arc((x0 + mw * 0.7, top + (y1 - top) * 0.18, x1, y1 - (y1 - top) * 0.25), 270, 90, OUTLINE, width=4)
        pen.rect((x0, top, x0 + mw, y1), rgb, radius=3)
        if feature == "steam":
            for k in range(3):
                sx = x0 + mw * (0.2 + 0.3 * k)
                pen.arc((sx - 6, y0, sx + 6, y0 + h * 0.22), 90, 270, (150, 150, 150), width=2)
                pen.arc((sx - 6, y0 + h * 0.2, sx + 6, y0 + h * 0.4), 270, 90, (150, 150, 150), width=2)
    elif shape == "glasses":  # two round lenses and a bridge
        lens = w * 0.42
        for lx in (x0, x1 - lens):
            pen.arc((lx, y0, lx + lens, y1), 0, 360, rgb, width=3)
        pen.line([(x0 + lens, cy), (x1 - lens, cy)], rgb, width=3)
    elif shape == "cat":  # a cat sitting, facing the viewer
        pen.ellipse((x0 + w * 0.1, y0 + h * 0.38, x1 - w * 0.1, y1), rgb)
        pen.line([(x1 - w * 0.15, y1 - 4), (x1 + w * 0.1, y1 - h * 0.3)], rgb, width=5)
        for side in (-1, 1):
            ex = cx + side * w * 0.2
            pen.polygon([(ex - w * 0.13, y0 + h * 0.14), (ex + side * w * 0.04, y0), (ex + w * 0.13, y0 + h * 0.14)],
                        rgb)
        pen.ellipse((cx - w * 0.32, y0 + h * 0.06, cx + w * 0.32, y0 + h * 0.5), rgb)
        for side in (-1, 1):
            ex = cx + side * w * 0.13
            pen.ellipse((ex - 2.5, y0 + h * 0.22, ex + 2.5, y0 + h * 0.22 + 5), (30, 30, 30), outline=None)
        pen.ellipse((cx - 3, y0 + h * 0.32, cx + 3, y0 + h * 0.32 + 5), (30, 30, 30), outline=None)
    elif shape == "pie":  # a golden dome with three slits on a dish
        pen.polygon(_half_ellipse((x0 + 2, y0, x1 - 2, y1 - h * 0.2 + (y1 - h * 0.2 - y0))), rgb)
        pen.rect((x0, y1 - h * 0.2, x1, y1), (200, 200, 210), radius=2)
        for slit in (-0.25, 0.0, 0.25):
            pen.line([(cx + w * slit - 5, y0 + h * 0.35), (cx + w * slit + 5, y0 + h * 0.5)], OUTLINE, width=2)
    elif shape == "pancakes":  # a stack on a plate with a pat of butter
        pen.ellipse((x0, y1 - h * 0.3, x1, y1), white)
        for k in range(4):
            yy = y1 - h * 0.2 - k * h * 0.16
            pen.ellipse((x0 + w * 0.12, yy - h * 0.22, x1 - w * 0.12, yy), rgb)
        pen.rect((cx - w * 0.08, y0, cx + w * 0.08, y0 + h * 0.14), (255, 240, 150), radius=2)
    elif shape == "bowl":  # seen from the side: the food (the thing's colour) in a blue bowl
        pen.ellipse((x0, y0, x1, y0 + h * 0.3), rgb)
        pen.polygon(_half_ellipse((x0, y0 + h * 0.15 - (y1 - y0 - h * 0.15), x1, y1), top=False),
                    (120, 170, 220))
    else:  # heart balloon: the string ends at the foot of the box (a hand)
        size = w / 2
        pen.line([(cx, y0 + size * 1.5), (cx + w * 0.3, y1)], OUTLINE, width=1.5)
        pen.ellipse((x0, y0, cx + 2, y0 + size), rgb, outline=None)
        pen.ellipse((cx - 2, y0, x1, y0 + size), rgb, outline=None)
        pen.polygon([(x0 + 2, y0 + size * 0.62), (x1 - 2, y0 + size * 0.62), (cx, y0 + size * 1.5)], rgb,
                    outline=None)


def _draw_scene_occluder(pen: Pen, kind: str, box: Box, rgb: RGB) -> None:
    """Things in the hand-written sample scenes that hide what is behind them from someone."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    cx = (x0 + x1) / 2
    if kind == "bush":
        for lx0, ly0, lx1 in ((0, 0.3, 0.62), (0.38, 0.3, 1), (0.18, 0, 0.82)):
            pen.ellipse((x0 + w * lx0, y0 + h * ly0, x0 + w * lx1, y1), rgb)
    elif kind == "haystack":
        pen.rect((x0, y0, x1, y1), rgb, radius=w * 0.3)
        for k in range(1, 6):
            xx = x0 + k * w / 6
            pen.line([(xx, y0 + 12), (xx - 6, y1 - 8)], darker(rgb, 0.85), width=2)
    elif kind == "rock":
        pen.polygon([(x0, y1), (x0 + w * 0.08, y0 + h * 0.33), (cx - w * 0.08, y0), (x1 - w * 0.12, y0 + h * 0.14),
                     (x1, y1)], rgb)
    elif kind == "sign":  # a tall blank board on two posts (no writing)
        for px_ in (x0 + w * 0.14, x1 - w * 0.14 - 9):
            pen.rect((px_, y1 - h * 0.2, px_ + 9, y1), (120, 80, 45), radius=1)
        pen.rect((x0, y0, x1, y1 - h * 0.18), rgb, radius=3, width=3)
    else:  # tall box, closed
        pen.rect((x0, y0, x1, y1), rgb, radius=2)
        pen.line([(x0, y0 + 14), (x1, y0 + 14)], OUTLINE, width=2)
