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

#: Why a character leaves the room, and what they are doing while away: (leaves, while away).
LEAVES: tuple[tuple[str, str], ...] = (
    ("goes outside to play", "outside"), ("goes to brush {det} teeth", "brushing {det} teeth"),
    ("runs to answer the door", "at the door"), ("goes to get a drink of water", "getting a drink"),
    ("goes to feed the cat", "feeding the cat"), ("goes upstairs to find {det} shoes", "upstairs"),
    ("goes to wash {det} hands", "washing {det} hands"), ("goes out to water the flowers", "in the garden"),
    ("goes to the bathroom", "in the bathroom"), ("runs off to watch a cartoon", "watching the cartoon"),
    ("goes to help carry the shopping in", "helping with the shopping"), ("goes to take a nap", "napping"),
)
#: Why someone moves a thing (no intent against its owner).
MOVE_REASONS: tuple[str, ...] = (
    "to make room for a puzzle", "while tidying up", "to wipe the floor under it", "so the baby cannot reach it",
    "to keep it away from the puppy", "to sort the toys", "while looking for a pencil", "to clear space for a game",
    "because it was in the way", "while sweeping", "to make space for the laundry", "to dust the shelves",
)
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
#: What a child wants a thing for.
WANTS_FOR: tuple[str, ...] = (
    "for show-and-tell", "to put in {det} bag", "for a game", "for {det} tea party", "to show {det} friend",
    "for the puppet show", "to take to bed", "for the photo", "for the race", "to paint it", "for the picnic",
    "to give to {det} baby brother",
)
#: Moments for a snack that is served.
MEALTIMES: tuple[str, ...] = (
    "after football practice", "at breakfast", "after a long walk", "when {sub} gets home from school",
    "at the picnic", "on a rainy afternoon", "after swimming", "at the fair", "after the school play",
    "before the long car ride", "at the beach", "after helping in the garden",
)
#: (positive words, negative words) a child may say about a snack.
PRAISE: tuple[str, ...] = ("Mmm, my favourite!", "Oh wow, yummy!", "Yes, just what I wanted!", "Mmm, lovely!")
COMPLAINT: tuple[str, ...] = ("Oh no, not that again!", "Yuck, how awful!", "Ugh, what a terrible snack!",
                              "Oh dear, how horrible!")
#: Animals met before: (noun, a bad memory, a good memory, how it looks today).
ANIMALS: tuple[tuple[str, str, str, str], ...] = (
    ("dog", "jumped up and knocked {det} ice cream onto the ground", "fetched {det} ball and licked {det} hand",
     "wearing a pretty bow and wagging its tail"),
    ("goose", "chased {obj} around the pond and pecked {det} shoe", "ate bread from {det} hand very gently",
     "sitting quietly with a little flower by it"),
    ("cat", "scratched {det} hand when {sub} tried to pet it", "curled up on {det} lap and purred",
     "purring softly on a fluffy blanket"),
    ("pony", "stepped on {det} foot at the farm", "let {obj} ride on its back around the field",
     "wearing ribbons in its mane"),
    ("parrot", "bit {det} finger and screeched in {det} ear", "learned to say {det} name",
     "sitting calmly on its perch"),
    ("goat", "butted {obj} over into the mud", "ate grass from {det} hand and let {obj} stroke it",
     "standing still with a bell round its neck"),
    ("rabbit", "kicked {obj} hard with its back legs", "hopped onto {det} lap and fell asleep",
     "nibbling a carrot in the sun"),
    ("rooster", "flew at {obj} and pecked {det} knee", "followed {obj} around like a friend",
     "standing proudly on the fence"),
    ("hamster", "nipped {det} thumb when {sub} held it", "ran happily across {det} hands",
     "sleeping in a little heap of straw"),
    ("horse", "snapped at {det} arm over the fence", "nuzzled {det} hair softly",
     "eating hay and swishing its tail"),
    ("swan", "hissed and chased {obj} off the path", "swam right up to say hello to {obj}",
     "gliding calmly on the water"),
    ("donkey", "kicked over {det} bucket and made {obj} fall", "carried {det} bag all the way up the hill",
     "dozing in the shade"),
)
#: Where the animal is met: (this time, last time).
MEETINGS: tuple[str, ...] = ("park", "farm", "pond", "petting zoo", "neighbour's garden", "fair", "riverside",
                             "beach", "camp site", "school garden", "zoo", "stables")
#: Identical-looking papers: (what it is for the actor, what it is for the victim, the harm, the harm done).
HARMS: tuple[tuple[str, str, str, str], ...] = (
    ("craft card", "birthday card for {det} grandma", "cuts it into little pieces for a craft",
     "cut it into little pieces"),
    ("spare paper", "letter to {det} pen friend", "folds it into a paper plane and throws it", "folded it into a plane"),
    ("practice sheet", "best painting", "paints over it with thick blue paint", "painted over it"),
    ("scrap card", "invitation to {det} party", "scribbles all over it to test the pens", "scribbled all over it"),
    ("old worksheet", "certificate from school", "crumples it up to stuff a pillow fort", "crumpled it up"),
    ("drawing paper", "drawing of {det} family", "glues glitter all over it", "covered it in glue"),
    ("paper for snowflakes", "poem for the class book", "cuts snowflake holes into it", "cut holes into it"),
    ("paper for a hat", "picture {sub} made for {det} dad", "folds it into a paper hat", "folded it into a hat"),
)
#: Helpers who tidy (moving things with no intent against anyone).
TIDY_REASONS: tuple[str, ...] = (
    "because it is tidy-up time", "to make room on the shelf", "so the little ones cannot reach them",
    "to sort the papers", "while cleaning the room", "to make space for the new books", "while looking for the glue",
    "because the window was open", "to keep the papers flat", "before the visitors come",
)
#: Prizes on a teacher's desk (drawn as stars) and why they were won.
PRIZES: tuple[str, ...] = ("sticker", "star badge", "gold star", "star pin", "shiny star")
PRIZE_REASONS: tuple[str, ...] = (
    "who won the spelling game", "who read ten books", "who helped tidy the reading corner", "who won the race",
    "who was kind to a new classmate", "who drew the best poster", "who learned a long poem", "who fixed the class clock",
    "who won the quiz", "who looked after the class plant",
)
#: (what the speaker claims happened to the thing, a later event that makes it come true).
EXCUSES: tuple[tuple[str, str], ...] = (
    ("The wind must have blown it out of the window.",
     "a big gust of wind blows it out of the open window"),
    ("The class cat must have carried it off.", "the class cat jumps up, grabs it and runs off outside with it"),
    ("It must have fallen in the bin, and the bin was emptied.",
     "it slips off the desk into the bin just as the bin is taken out and emptied"),
    ("A bird must have flown in and taken it.", "a bird flies in through the window, picks it up and flies away"),
    ("The cleaner must have swept it away.", "the cleaner comes in, sweeps the desk and carries it away"),
)
#: Occasions for a present, and why a request is not heard.
GIFT_OCCASIONS: tuple[str, ...] = (
    "for {det} birthday", "as a prize for {det} swimming badge", "for the long car trip", "for the holidays",
    "for being brave at the dentist", "for {det} first day at the new school", "as a thank-you for helping",
    "for the end of the school year", "for the weekend at Grandpa's", "for the rainy days ahead",
)
NOT_HEARD: tuple[tuple[str, str], ...] = (
    ("just as the car door slams shut", "the car door slammed"),
    ("while the car engine roars", "the engine was too loud"),
    ("as the front door bangs shut", "the door banged shut"),
    ("while the vacuum cleaner is running next door", "the vacuum cleaner was too loud"),
    ("just as a noisy truck drives past", "the truck was too loud"),
    ("while the dog barks loudly", "the dog was barking"),
    ("as the garage door rattles down", "the garage door was too loud"),
    ("while the rain drums on the roof", "the rain was too loud"),
    ("as the train announcement booms", "the announcement was too loud"),
    ("while the radio is playing loudly", "the radio was too loud"),
)
#: Why a lunchbox is packed, and reasons a child may be tired of a food.
LUNCH_OCCASIONS: tuple[str, ...] = (
    "for school", "for the school trip", "for the picnic", "for the long walk", "for swimming day",
    "for the museum visit", "for football camp", "for the train ride", "for the farm visit", "for sports day",
)
TIRED_OF: tuple[str, ...] = (
    "has had one every day for weeks and is tired of them", "thinks they are boring now",
    "says they taste like cardboard", "wishes for something different", "is fed up with them",
)
