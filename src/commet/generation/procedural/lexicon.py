"""Words and palettes the procedural generator draws from: names, colours, things, places, rooms.

Every entry that can appear in a picture also names how it is drawn (``shape``), so the
renderer and the story text always agree about what a thing is.
"""

from __future__ import annotations

from dataclasses import dataclass

GIRLS: tuple[str, ...] = ("Mia", "Ana", "Zoe", "Lily", "Aisha", "Nora", "Priya", "Emma", "Sofia", "Hana", "Ruby", "Maya")
BOYS: tuple[str, ...] = ("Leo", "Sam", "Omar", "Ben", "Kai", "Tom", "Ravi", "Jack", "Luis", "Finn", "Noah", "Yuki")
#: Grown-ups: (name, pronoun).
ADULTS: tuple[tuple[str, str], ...] = (
    ("Mom", "she"), ("Dad", "he"), ("Grandma", "she"), ("Grandpa", "he"), ("Aunt Rosa", "she"), ("Uncle Jon", "he"),
)
TEACHERS: tuple[tuple[str, str], ...] = (("Mrs. Green", "she"), ("Mr. Brown", "he"), ("Ms. Rivera", "she"),
                                         ("Mr. Okafor", "he"))

#: Colour names and their RGB fill; all far apart so a picture's colours name things unambiguously.
COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (220, 50, 47),
    "blue": (38, 110, 220),
    "green": (60, 170, 70),
    "yellow": (245, 200, 40),
    "orange": (245, 130, 30),
    "purple": (140, 80, 190),
    "pink": (240, 120, 180),
    "brown": (140, 90, 50),
}
#: Colours used for things that must be told apart by colour (brown is kept for furniture).
THING_COLOURS: tuple[str, ...] = ("red", "blue", "green", "yellow", "orange", "purple", "pink")

SIZE_WORDS: dict[int, str] = {1: "small", 2: "middle-sized", 3: "big"}


@dataclass(frozen=True)
class Kind:
    """A kind of thing: its noun, plural, how it is drawn and the colours it comes in."""

    noun: str
    plural: str
    shape: str
    colours: tuple[str, ...] = THING_COLOURS


TOYS: tuple[Kind, ...] = (
    Kind("ball", "balls", "ball"), Kind("toy car", "toy cars", "car"), Kind("teddy bear", "teddy bears", "teddy"),
    Kind("rubber duck", "rubber ducks", "duck"), Kind("book", "books", "book"), Kind("cup", "cups", "cup"),
)
SNACKS: tuple[Kind, ...] = (
    Kind("apple", "apples", "apple", ("red", "green", "yellow")), Kind("cookie", "cookies", "cookie", ("brown",)),
    Kind("cupcake", "cupcakes", "cupcake", ("pink", "purple", "blue")),
    Kind("sandwich", "sandwiches", "sandwich", ("yellow", "orange")),
    Kind("banana", "bananas", "banana", ("yellow",)),
)
HATS = Kind("hat", "hats", "hat")
CARD = Kind("card", "cards", "card")
JELLY = Kind("jelly", "jellies", "jelly", ("red", "green", "orange", "purple"))
STICKER = Kind("sticker", "stickers", "sticker")
BALLOON = Kind("balloon", "balloons", "balloon")
DUCK = Kind("rubber duck", "rubber ducks", "duck")

#: Closed containers (their lid hides what is inside) and open furniture things stand on.
CONTAINERS: tuple[str, ...] = ("box", "basket", "toy chest")
SURFACES: tuple[str, ...] = ("table", "shelf")
#: Screens that block a line of sight.
OCCLUDERS: tuple[str, ...] = ("folding screen", "big plant", "tall cupboard")

#: Rooms: (name, wall colour, floor colour).
ROOMS: tuple[tuple[str, tuple[int, int, int], tuple[int, int, int]], ...] = (
    ("kitchen", (250, 236, 200), (205, 170, 125)),
    ("living room", (214, 234, 248), (190, 150, 110)),
    ("classroom", (232, 245, 220), (200, 190, 170)),
    ("playroom", (250, 222, 230), (180, 200, 220)),
    ("garden", (190, 225, 250), (140, 200, 110)),
)

#: Pets that may have caused trouble before (emotion from past experience): (noun, what it did, friendly look).
PAST_TROUBLES: tuple[tuple[str, str, str], ...] = (
    ("dog", "jumped up and knocked {pos} ice cream onto the ground", "wearing a pretty bow and wagging its tail"),
    ("goose", "chased {obj} around the pond and pecked {pos} shoe", "sitting quietly with a little flower by it"),
    ("cat", "scratched {pos} hand when {sub} tried to pet it", "purring softly on a fluffy blanket"),
    ("pony", "stepped on {pos} foot at the farm", "wearing ribbons in its mane"),
)

#: Paper things that may be harmed: (the actor's own paper, the victim's paper, what the actor does, did).
HARMS: tuple[tuple[str, str, str, str], ...] = (
    ("scrap paper", "birthday card", "cuts it into little pieces for a craft", "cut it into little pieces"),
    ("old paper", "letter", "folds it into a paper plane", "folded it into a paper plane"),
    ("drawing paper", "painting", "paints over it with thick blue paint", "painted over it"),
)
