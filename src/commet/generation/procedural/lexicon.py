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
#: Grown-ups drawn older (grey hair, glasses).
GRANDPARENTS: frozenset[str] = frozenset({"Grandma", "Grandpa"})

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
    # clothing only: never the colour of a thing or a place, so no shirt matches an item asked about
    "teal": (0, 128, 128),
    "navy": (36, 45, 100),
    "grey": (128, 128, 128),
    "maroon": (120, 25, 45),
    "olive": (110, 120, 30),
    "white": (245, 245, 240),
}
#: Colours used for things that must be told apart by colour (brown is kept for furniture).
THING_COLOURS: tuple[str, ...] = ("red", "blue", "green", "yellow", "orange", "purple", "pink")

#: Shirt colours: a palette of their own (see above).
SHIRT_COLOURS: tuple[str, ...] = ("teal", "navy", "grey", "maroon", "olive", "white")

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
    ("bedroom", (236, 226, 250), (175, 140, 110)),
    ("hallway", (245, 240, 225), (160, 120, 90)),
    ("art room", (255, 245, 215), (190, 185, 180)),
    ("library", (230, 225, 205), (150, 110, 80)),
    ("dining room", (240, 230, 215), (170, 125, 90)),
)

# --- scenario pools: the settings, reasons and actions that make a task's skeletons differ --------------------------

#: Openings of a choice between two things.
OCCASIONS: tuple[str, ...] = (
    "It is snack time", "It is a rainy afternoon", "It is picnic day", "It is the last day of school",
    "Grandma has come to visit", "It is the class party", "It is a lazy Sunday", "It is the day after the fair",
    "The family is on a camping trip", "It is the first warm day of spring", "It is a birthday party",
    "It is a trip to the beach",
)
#: When something gets lost.
LOST_WHEN: tuple[str, ...] = (
    "just before school", "before the bus comes", "on a busy morning", "after the party", "before bedtime",
    "when it is time to go to the park", "after cleaning day", "before swimming class", "on the way out",
    "after the visitors leave", "before the trip to Grandpa's", "at the end of play time",
)
#: Prizes on a teacher's desk (drawn as stars) and why they were won.
PRIZES: tuple[str, ...] = ("sticker", "star badge", "gold star", "star pin", "shiny star")
PRIZE_REASONS: tuple[str, ...] = (
    "who won the spelling game", "who read ten books", "who helped tidy the reading corner", "who won the race",
    "who was kind to a new classmate", "who drew the best poster", "who learned a long poem", "who fixed the class clock",
    "who won the quiz", "who looked after the class plant",
)
#: Occasions for a present.
GIFT_OCCASIONS: tuple[str, ...] = (
    "for {det} birthday", "as a prize for {det} swimming badge", "for the long car trip", "for the holidays",
    "for being brave at the dentist", "for {det} first day at the new school", "as a thank-you for helping",
    "for the end of the school year", "for the weekend at Grandpa's", "for the rainy days ahead",
)
