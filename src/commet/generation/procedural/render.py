"""Scenes from world states, and pictures from scenes (Pillow shapes only, never any text).

:func:`compose` lays a :class:`~commet.generation.procedural.world.World` out as a plain
JSON-able scene: every present agent, place, thing and occluder once, with its pixel
bounding box, and which things are hidden (inside a closed container or a pocket) and by
what. :func:`draw` paints exactly that scene and, alongside, an id mask telling which
entity each pixel belongs to, so tests can check the picture against the scene.

Scenes are data: the bundled sample's pictures are hand-written scene files
(``commet/data/sample/scenes/*.json``) drawn by this same renderer. They use a few
optional keys the procedural generator never writes: outdoor rooms (``park``, ``field``,
``fair``, ``beach``), ``"decor": false`` (no window on the wall), agents with ``"pose"``
(``sitting`` or ``portrait``, a big head and shoulders) and ``"headphones"``, and the
extra kinds in :data:`SCENE_KINDS` (drawn by :mod:`.shapes`). A scene may mark its ``sees`` as told by its story
(``"sight": "story"``) where a flat picture cannot show who sees what; the renderer ignores it.
"""

from __future__ import annotations

import io

from PIL import Image

from commet.generation.procedural.lexicon import COLOURS, ROOMS
from commet.generation.procedural.shapes import (
    RGB,
    SCENE_KINDS,
    SS,
    Box,
    Entity,
    Pen,
    Scene,
    darker,
    draw_occluder,
    draw_place,
    draw_thing,
)
from commet.generation.procedural.world import SLOT, WIDTH, World

__all__ = ["HEIGHT", "SCENE_KINDS", "WIDTH", "compose", "draw", "draw_picture", "mask_ids", "png_bytes"]

HEIGHT = 480
#: Pixels per world x unit, whatever the picture's width (a wider picture shows more of the room, not a bigger one).
UNIT = WIDTH - 100
HORIZON = 300
GROUND = 440  # where feet and furniture stand

SKIN: tuple[RGB, ...] = ((255, 220, 185), (236, 188, 150), (198, 140, 100), (141, 95, 65))
HAIR: tuple[RGB, ...] = ((70, 45, 30), (30, 30, 35), (200, 150, 70), (150, 70, 40))
GREY_HAIR: RGB = (205, 205, 210)  # grandparents
OCCLUDER_RGB: dict[str, RGB] = {"folding screen": (170, 205, 235), "big plant": (60, 140, 80),
                                "tall cupboard": (120, 150, 170)}
PLACE_SIZE: dict[str, tuple[int, int]] = {
    "table": (130, 82), "shelf": (120, 110), "box": (92, 64), "basket": (92, 56), "toy chest": (104, 74),
    "bag": (70, 82), "lunchbox": (84, 52), "door": (62, 170),
}
OCCLUDER_SIZE: dict[str, tuple[int, int]] = {"folding screen": (76, 215), "big plant": (84, 215),
                                             "tall cupboard": (84, 230)}
OUTDOOR = frozenset({"garden", "park", "field", "fair", "beach"})
THING_BASE = 46
SIZE_SCALE = {1: 0.62, 2: 0.85, 3: 1.15}


def px(x: float) -> float:
    """World x (0..1) to picture x in pixels."""
    return 50 + x * UNIT


def _rgb(name: str) -> list[int]:
    return list(COLOURS[name])


def _round(box: Box) -> list[float]:
    return [round(v, 1) for v in box]


def compose(world: World, variant: int = 0) -> Scene:
    """The scene of the world's current state, as JSON-able data (pixel boxes, hiding, sight)."""
    room = next(r for r in ROOMS if r[0] == world.room)
    scene: Scene = {"width": world.width, "height": HEIGHT, "room": world.room,
                                "wall": list(room[1]), "floor": list(room[2]), "variant": variant}
    agents, places, objects, occluders = [], [], [], []
    boxes: dict[str, Box] = {}
    for index, agent in enumerate(world.agents.values()):
        if not agent.present:
            continue
        w, h = (78.0, 236.0) if agent.adult else (66.0, 176.0)
        box: Box = (px(agent.x) - w / 2, GROUND - h, px(agent.x) + w / 2, GROUND)
        boxes[agent.id] = box
        agents.append({"id": agent.id, "name": agent.name, "adult": agent.adult, "shirt": agent.shirt,
                       "rgb": _rgb(agent.shirt), "expression": agent.expression, "bbox": _round(box),
                       "skin": list(SKIN[(index + variant) % len(SKIN)]),
                       "hair": list(GREY_HAIR if agent.old else HAIR[(index * 3 + variant) % len(HAIR)]),
                       "long_hair": agent.pronoun == "she", "old": agent.old})
    for place in world.places.values():
        if not place.drawn:
            continue
        w, h = (float(side) for side in PLACE_SIZE[place.kind])
        n = len(_ever_on(world, place.id))  # furniture keeps its size from picture to picture
        if not place.closed:
            w = max(w, n * SLOT * UNIT + 30)
        box = (px(place.x) - w / 2, GROUND - 6 - h, px(place.x) + w / 2, GROUND - 6)
        boxes[place.id] = box
        places.append({"id": place.id, "kind": place.kind, "colour": place.colour, "rgb": _rgb(place.colour),
                       "closed": place.closed, "bbox": _round(box)})
    offstage = []
    for thing in world.things.values():
        hider = world.hidden_by(thing.id)
        holder = thing.location
        if holder not in boxes:  # off stage, or carried by someone who is out of the room
            offstage.append(thing.id)
            continue
        side = THING_BASE * SIZE_SCALE[thing.size]
        hb = boxes[holder]
        if hider is not None:  # inside: centred low in the container, or at the hip of the agent
            side = min(side, (hb[2] - hb[0]) * 0.55, (hb[3] - hb[1]) * 0.55)
            cx = (hb[0] + hb[2]) / 2
            bottom = hb[3] - 8 if holder in world.places else hb[1] + (hb[3] - hb[1]) * 0.5
            side = min(side, 26) if holder in world.agents else side
        elif holder in world.agents:  # held in the hand: centred on it, so it covers the whole hand
            side = min(side, 34)
            aw, ah = hb[2] - hb[0], hb[3] - hb[1]
            cx = (hb[0] + hb[2]) / 2 + aw * 0.42
            bottom = hb[1] + ah * 0.56 + aw * 0.09 + side / 2
        else:
            cx = px(world.thing_x(thing.id))
            bottom = hb[1] + (12 if world.places[holder].kind in ("basket", "box", "toy chest") else 0)
        box = (cx - side / 2, bottom - side, cx + side / 2, bottom)
        objects.append({"id": thing.id, "kind": thing.kind.shape, "noun": thing.noun, "colour": thing.colour,
                        "rgb": _rgb(thing.colour), "size": thing.size, "feature": thing.feature,
                        "location": holder, "bbox": _round(box), "visible": hider is None, "hidden_by": hider})
        if thing.feature_colour:  # a shade of the named colour, so that no thing's own colour is drawn on another
            objects[-1].update(feature_colour=thing.feature_colour,
                               feature_rgb=[int(c * 0.9) for c in COLOURS[thing.feature_colour]])
        if thing.state:
            objects[-1]["state"] = thing.state
    for occ in world.occluders.values():
        w, h = OCCLUDER_SIZE[occ.kind]
        box = (px(occ.x) - w / 2, GROUND - h, px(occ.x) + w / 2, GROUND)
        occluders.append({"id": occ.id, "kind": occ.kind, "rgb": list(OCCLUDER_RGB[occ.kind]), "bbox": _round(box)})
    scene.update(agents=agents, places=places, objects=objects, occluders=occluders, offstage=offstage,
                 absent=[a.id for a in world.agents.values() if not a.present],
                 sees={a.id: world.visible_things(a.id) for a in world.agents.values() if a.present})
    return scene


def _ever_on(world: World, place_id: str) -> set[str]:
    """The things that are, were at the start or were ever put on a place."""
    return {t.id for t in world.things.values() if t.location == place_id or world.start.get(t.id) == place_id} | {
        e.thing for e in world.events if e.dst == place_id and e.thing is not None}


def mask_ids(scene: Scene) -> dict[str, int]:
    """The id-mask value of each drawn entity (1, 2, ...; 0 is the background)."""
    ids: list[str] = []
    for key in ("agents", "places", "objects", "occluders"):
        ids.extend(e["id"] for e in scene[key])
    return {entity_id: k + 1 for k, entity_id in enumerate(ids)}


def _width(scene: Scene) -> int:
    """The picture's width: the scene's own (a task that needs more room draws a wider picture), else the usual."""
    width = scene.get("width", WIDTH)
    return int(width) if isinstance(width, (int, float)) else WIDTH


def _draw_background(pen: Pen, scene: Scene) -> None:
    wall, floor = tuple(scene["wall"]), tuple(scene["floor"])
    width = _width(scene)
    pen.background((0, 0, width, HORIZON), wall)
    pen.background((0, HORIZON, width, HEIGHT), floor)
    if scene["room"] in OUTDOOR:
        pen._img.ellipse(pen._s((540, 30, 600, 90)), fill=(255, 225, 90))
        for cx in (120, 330):
            pen._img.ellipse(pen._s((cx, 50, cx + 90, 80)), fill=(255, 255, 255))
        if scene["room"] == "beach":  # the sea on the horizon
            pen.background((0, HORIZON - 30, width, HORIZON), (90, 160, 215))
        else:
            pen.background((0, HORIZON - 40, width, HORIZON), (110, 175, 95))
        return
    if not scene.get("decor", True):
        return
    pen.background((0, HORIZON - 8, width, HORIZON), darker(wall, 0.85))
    wx = 90 + (scene["variant"] % 3) * 180
    pen._img.rounded_rectangle(pen._s((wx, 40, wx + 120, 140)), 6 * SS, fill=(200, 230, 250),
                               outline=(255, 255, 255), width=6 * SS)
    pen._img.line(pen._s((wx + 60, 40, wx + 60, 140)), fill=(255, 255, 255), width=4 * SS)


def _draw_agent(pen: Pen, a: Entity) -> None:
    x0, y0, x1, y1 = a["bbox"]
    w, h = x1 - x0, y1 - y0
    cx = (x0 + x1) / 2
    skin, hair, shirt = tuple(a["skin"]), tuple(a["hair"]), tuple(a["rgb"])
    pose = a.get("pose", "standing")
    if pose == "portrait":  # head and shoulders filling the box, so that the face is easy to read
        head = h * 0.62
        pen.rect((x0, y0 + head * 0.92, x1, y1), shirt, radius=w * 0.2)
        _draw_head(pen, a, cx, y0, head, skin, hair)
        return
    head = h * 0.25
    legs_top = y0 + h * 0.70
    if pose == "sitting":  # thighs forward (to the right), shins hanging down, as on a fence or a bench
        pen.rect((cx - w * 0.3, legs_top - 4, cx + w * 0.62, legs_top + w * 0.24), (70, 80, 120), radius=3)
        pen.rect((cx + w * 0.4, legs_top, cx + w * 0.62, y1 - 8), (70, 80, 120), radius=3)
        pen.ellipse((cx + w * 0.36, y1 - 12, cx + w * 0.72, y1), (50, 40, 40), outline=None)
    else:  # legs and shoes
        for side in (-1, 1):
            lx = cx + side * w * 0.2
            pen.rect((lx - w * 0.1, legs_top - 4, lx + w * 0.1, y1 - 8), (70, 80, 120), radius=3)
            pen.ellipse((lx - w * 0.16, y1 - 12, lx + w * 0.14, y1), (50, 40, 40), outline=None)
    # arms, then body (the shirt is the largest area of the figure)
    for side in (-1, 1):
        ax = cx + side * w * 0.42
        pen.rect((ax - w * 0.09, y0 + head + h * 0.04, ax + w * 0.09, y0 + head + h * 0.33), shirt, radius=5)
        pen.ellipse((ax - w * 0.09, y0 + head + h * 0.31, ax + w * 0.09, y0 + head + h * 0.31 + w * 0.18), skin)
    pen.rect((x0 + w * 0.12, y0 + head + h * 0.02, x1 - w * 0.12, legs_top + 2), shirt, radius=10)
    _draw_head(pen, a, cx, y0 + 2, head, skin, hair)


def _draw_head(pen: Pen, a: Entity, cx: float, top: float, head: float, skin: RGB, hair: RGB) -> None:
    """Head, hair and face; the face's details grow with heads bigger than a standing adult's."""
    k = max(1.0, head / 60)
    hx0, hy0, hx1, hy1 = cx - head * 0.5, top, cx + head * 0.5, top + head + 2
    if a["long_hair"]:
        pen.rect((hx0 - 4 * k, hy0 + head * 0.2, hx1 + 4 * k, hy1 + head * 0.25), hair, radius=8 * k, outline=None)
    pen.ellipse((hx0, hy0, hx1, hy1), skin)
    pen.arc((hx0, hy0, hx1, hy1 - head * 0.2), 180, 360, hair, width=head * 0.18)
    eye_y = hy0 + head * 0.5
    for side in (-1, 1):
        ex = cx + side * head * 0.2
        pen.ellipse((ex - 2.5 * k, eye_y - 2.5 * k, ex + 2.5 * k, eye_y + 2.5 * k), (40, 30, 30), outline=None)
    mouth = (cx - head * 0.2, hy0 + head * 0.62, cx + head * 0.2, hy0 + head * 0.86)
    lip = 2.5 * k
    expression = a["expression"]
    if expression == "happy":
        pen.arc((mouth[0], mouth[1] - head * 0.12, mouth[2], mouth[3]), 20, 160, (150, 40, 40), width=lip)
    elif expression == "crying":  # a turned-down mouth and tears running from both eyes
        pen.arc((mouth[0], mouth[1] + head * 0.05, mouth[2], mouth[3] + head * 0.2), 200, 340, (150, 40, 40),
                width=lip)
        for side in (-1, 1):
            ex = cx + side * head * 0.2
            for drop in (0, 1):
                ty = eye_y + (5 + 9 * drop) * k
                pen.ellipse((ex - 2.5 * k, ty, ex + 2.5 * k, ty + 7 * k), (120, 190, 250), outline=None)
    elif expression in ("sad", "cross"):
        pen.arc((mouth[0], mouth[1] + head * 0.05, mouth[2], mouth[3] + head * 0.2), 200, 340, (150, 40, 40),
                width=lip)
        if expression == "cross":
            for side in (-1, 1):
                ex = cx + side * head * 0.2
                pen.line([(ex - side * 5 * k, eye_y - 9 * k), (ex + side * 5 * k, eye_y - 5 * k)], (40, 30, 30),
                         width=lip)
        else:
            pen.ellipse((cx + head * 0.2 - 2 * k, eye_y + 4 * k, cx + head * 0.2 + 3 * k, eye_y + 11 * k),
                        (120, 190, 250), outline=None)
    elif expression == "scared":
        pen.ellipse((cx - 4 * k, mouth[1], cx + 4 * k, mouth[3]), (120, 40, 40), outline=None)
        for side in (-1, 1):
            ex = cx + side * head * 0.2
            pen.arc((ex - 5 * k, eye_y - 12 * k, ex + 5 * k, eye_y - 4 * k), 200, 340, (40, 30, 30), width=2 * k)
    else:
        pen.line([(mouth[0] + 2 * k, mouth[1] + 5 * k), (mouth[2] - 2 * k, mouth[1] + 5 * k)], (150, 40, 40),
                 width=lip)
    if a.get("old"):  # glasses: two round rims and a bridge
        for side in (-1, 1):
            ex = cx + side * head * 0.2
            pen.arc((ex - 6 * k, eye_y - 6 * k, ex + 6 * k, eye_y + 6 * k), 0, 360, (60, 60, 70), width=1.5 * k)
        pen.line([(cx - head * 0.2 + 6 * k, eye_y), (cx + head * 0.2 - 6 * k, eye_y)], (60, 60, 70), width=1.5 * k)
    if a.get("headphones"):  # a band over the head and a cup on each ear
        pen.arc((hx0 - 5, hy0 - 6, hx1 + 5, hy1), 180, 360, (30, 30, 30), width=4)
        for side in (-1, 1):
            ex = cx + side * (head * 0.5 + 1)
            pen.ellipse((ex - 6, eye_y - 12, ex + 6, eye_y + 8), (30, 30, 30), outline=None)


def draw(scene: Scene) -> tuple[Image.Image, Image.Image]:
    """Paint a scene; returns the picture and its id mask (values from :func:`mask_ids`), both full size."""
    image, mask = _paint(scene, with_mask=True)
    assert mask is not None
    return image, mask


def draw_picture(scene: Scene) -> Image.Image:
    """Paint a scene without its id mask (what dataset generation needs; the picture is the same as :func:`draw`'s)."""
    return _paint(scene, with_mask=False)[0]


def _paint(scene: Scene, with_mask: bool) -> tuple[Image.Image, Image.Image | None]:
    width = _width(scene)
    pen = Pen((width, HEIGHT), tuple(scene["wall"]), with_mask)
    _draw_background(pen, scene)
    ids = mask_ids(scene)
    hidden = [o for o in scene["objects"] if not o["visible"]]
    visible = [o for o in scene["objects"] if o["visible"]]
    for thing in hidden:  # drawn first so that the container or body in front really covers them
        pen.value = ids[thing["id"]]
        draw_thing(pen, thing)
    for place in scene["places"]:
        pen.value = ids[place["id"]]
        draw_place(pen, place)
    for agent in scene["agents"]:
        pen.value = ids[agent["id"]]
        _draw_agent(pen, agent)
    for thing in visible:
        pen.value = ids[thing["id"]]
        draw_thing(pen, thing)
    for occ in scene["occluders"]:
        pen.value = ids[occ["id"]]
        draw_occluder(pen, occ)
    image = pen.image.reduce(SS)  # box-average each SS x SS block: smooth edges
    mask = pen.mask.resize((width, HEIGHT), Image.Resampling.NEAREST) if pen.mask is not None else None
    return image, mask


def png_bytes(image: Image.Image, colours: int | None = None) -> bytes:
    """PNG bytes with no metadata, so the same picture always gives the same bytes.

    Compression level 3 encodes about twice as fast as the default 6, for files about a third bigger
    (flat cartoon pictures stay near 12 kB). With ``colours`` the picture is first reduced to a palette
    of that many colours (median cut, no dithering, so still deterministic) and compressed as far as
    it goes: the bundled sample's pictures take about a fifth of the room that way.
    """
    out = io.BytesIO()
    if colours is None:
        image.save(out, format="PNG", optimize=False, compress_level=3)
    else:
        image.quantize(colors=colours, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
            out, format="PNG", optimize=True)
    return out.getvalue()
