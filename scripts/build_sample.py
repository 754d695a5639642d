"""Build the bundled sample dataset: ``src/commet/data/sample/``.

The stories are written here as Python data (original text in the style of the ToM
booklet: short sentences for children; every name, object and picture is our own). The
script draws the pictures (``draw_sample_pictures.py``), builds the StoryTurns with the
canonical model and writes ``storyturns.jsonl``, ``dataset.json`` and ``images/``.

    python scripts/build_sample.py [FOLDER]

It is deterministic: running it again reproduces the sample byte for byte.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from draw_sample_pictures import PICTURES, draw_all  # noqa: E402

from commet.format.dataset import IMAGES_DIR, Dataset  # noqa: E402
from commet.format.model import AnswerFeedback, Feedback, StoryTurn, Turn  # noqa: E402
from commet.format.validate import has_errors, validate_dataset  # noqa: E402
from commet.taxonomy import TASKS, get_task  # noqa: E402

DEFAULT_FOLDER = Path(__file__).resolve().parents[1] / "src" / "commet" / "data" / "sample"

DESCRIPTION = (
    "A small, original sample of CoMMET StoryTurns: at least two for each of the 18 ToM booklet task "
    "types, multi-turn, with answer-keyed and right/wrong feedback, branch points, text-complete stories "
    "(some with illustrative pictures) and image-dependent stories whose needed fact is only in the "
    "picture. Pictures are drawn programmatically (scripts/draw_sample_pictures.py)."
)


def T(
    question: str,
    answers: str | list[str],
    story: str = "",
    *,
    image: str | None = None,
    right: str | None = None,
    wrong: str | None = None,
    by_answer: dict[str, str] | None = None,
) -> Turn:
    """One turn. ``answers`` is one expected answer or a list of branch answers; ``by_answer`` maps
    each of the previous turn's branch answers to the feedback shown after it."""
    feedback = None
    if right or wrong or by_answer:
        feedback = Feedback(
            right=right,
            wrong=wrong,
            by_answer=[AnswerFeedback(answer=a, text=t) for a, t in (by_answer or {}).items()],
        )
    return Turn(
        story=story,
        feedback=feedback,
        question=question,
        image=image,
        answers=[answers] if isinstance(answers, str) else list(answers),
    )


def picture(task: str, number: int, turn: int) -> str:
    """The image id of a picture drawn by draw_sample_pictures.py (its file name)."""
    name = f"sample-{task}-{number}-{turn}"
    if name not in PICTURES:
        raise KeyError(f"no picture is drawn for {name}")
    return name + ".png"


def S(
    task: str, number: int, turns: list[Turn], *, image_dependent: bool = False, note: str = ""
) -> StoryTurn:
    """One StoryTurn of ``task``; category and mental states come from the taxonomy."""
    spec = get_task(task)
    return StoryTurn(
        id=f"sample-{task}-{number}",
        task=task,
        category=spec.category_for(image_dependent),
        mental_states=list(spec.mental_states),
        image_dependent=image_dependent,
        source="sample",
        turns=turns,
        meta={"note": note} if note else {},
    )


# --------------------------------------------------------------------------- desire


def common_desire() -> list[StoryTurn]:
    return [
        S(
            "common_desire",
            1,
            [
                T(
                    "Which toy do you like best, the kite or the boat?",
                    ["The kite", "The boat"],
                    "This is Kofi. Kofi is at the park. He can play with one toy today. "
                    "There is a red kite, and there is a blue boat.",
                    image=picture("common_desire", 1, 0),
                ),
                T(
                    "So which toy will Kofi pick, the kite or the boat?",
                    ["The kite", "The boat"],
                    "Kofi likes the same toy that you like best.",
                    by_answer={
                        "The kite": "You like the kite? Kites are fun!",
                        "The boat": "You like the boat? Boats are fun!",
                    },
                ),
            ],
        ),
        S(
            "common_desire",
            2,
            [
                T(
                    "Which jar of paint do you like best, the green paint or the purple paint?",
                    ["The green paint", "The purple paint"],
                    "It is art time at school. Aisha wants to paint a picture. "
                    "On the table there is a jar of green paint and a jar of purple paint.",
                ),
                T(
                    "So which paint will Aisha use, the green paint or the purple paint?",
                    ["The green paint", "The purple paint"],
                    "Guess what? Aisha likes the very same colour as you.",
                    by_answer={
                        "The green paint": "Green? What a nice colour.",
                        "The purple paint": "Purple? What a nice colour.",
                    },
                ),
            ],
        ),
        S(
            "common_desire",
            3,
            [
                T(
                    "Which story do you like best, the story about pirates or the story about fairies?",
                    ["Pirates", "Fairies"],
                    "It is bedtime. Dad has two story books for Ollie. "
                    "One book is about pirates. The other book is about fairies.",
                ),
                T(
                    "Dad can read one book tonight. Which book will Ollie ask for, the pirate book or the fairy book?",
                    ["The pirate book", "The fairy book"],
                    "Ollie likes the same kind of story that you like.",
                    by_answer={
                        "Pirates": "You like pirate stories? They are exciting!",
                        "Fairies": "You like fairy stories? They are magical!",
                    },
                ),
            ],
        ),
    ]


def diverse_desire() -> list[StoryTurn]:
    return [
        S(
            "diverse_desire",
            1,
            [
                T(
                    "Which treat do you like best, the ice lolly or the popcorn?",
                    ["The ice lolly", "The popcorn"],
                    "This is Lena. Lena is at the summer fair. She may have one treat. "
                    "There is a pink ice lolly, and there is a bag of popcorn.",
                    image=picture("diverse_desire", 1, 0),
                ),
                T(
                    "So which treat will Lena choose, the ice lolly or the popcorn?",
                    ["The popcorn", "The ice lolly"],
                    "But Lena does not like that one. She likes the other treat better.",
                    by_answer={
                        "The ice lolly": "The ice lolly? That sounds yummy.",
                        "The popcorn": "The popcorn? That sounds yummy.",
                    },
                ),
            ],
        ),
        S(
            "diverse_desire",
            2,
            [
                T(
                    "Which book do you like best, the book about dinosaurs or the book about space?",
                    ["The dinosaur book", "The space book"],
                    "Omar is at the library. He can take one book home. "
                    "One book is about dinosaurs. The other book is about space.",
                ),
                T(
                    "So which book will Omar take home, the dinosaur book or the space book?",
                    ["The space book", "The dinosaur book"],
                    "Omar likes a different book from the one you like.",
                    by_answer={
                        "The dinosaur book": "You like dinosaurs? That is a good book.",
                        "The space book": "You like space? That is a good book.",
                    },
                ),
            ],
        ),
        S(
            "diverse_desire",
            3,
            [
                T(
                    "Which pet do you like best, the goldfish or the hamster?",
                    ["The goldfish", "The hamster"],
                    "Ines and her mum are at the pet shop. Ines can take one pet home. "
                    "There is a little orange goldfish, and there is a fluffy hamster.",
                ),
                T(
                    "So which pet will Ines take home, the goldfish or the hamster?",
                    ["The hamster", "The goldfish"],
                    "Ines likes the other pet best, not the one you picked.",
                    by_answer={
                        "The goldfish": "The goldfish? It is very pretty.",
                        "The hamster": "The hamster? It is very soft.",
                    },
                ),
                T(
                    "Now Ines needs a home for her new pet. What will she buy, a fish tank or a hamster cage?",
                    ["A hamster cage", "A fish tank"],
                    right="That's right. Ines picks the pet that she likes best.",
                    wrong="Remember, Ines likes the other pet, not the one you picked.",
                ),
            ],
        ),
    ]


# --------------------------------------------------------------------------- belief


def diverse_belief() -> list[StoryTurn]:
    return [
        S(
            "diverse_belief",
            1,
            [
                T(
                    "Where do you think the puppy is, in the shed or under the porch?",
                    ["In the shed", "Under the porch"],
                    "This is Ravi. Ravi's puppy, Pip, is lost! Pip might be hiding in the shed. "
                    "Pip might be hiding under the porch.",
                ),
                T(
                    "So where will Ravi look for Pip, in the shed or under the porch?",
                    ["Under the porch", "In the shed"],
                    "Ravi thinks Pip is in the other place, not the place you picked.",
                    by_answer={
                        "In the shed": "In the shed? That is a good guess.",
                        "Under the porch": "Under the porch? That is a good guess.",
                    },
                ),
                T(
                    "Where is Pip really, in the shed or under the porch?",
                    ["In the shed", "Under the porch"],
                    "Ravi looks in the place he thinks. But Pip is not there!",
                    right="That's right. Ravi looks where he thinks Pip is.",
                    wrong="Remember, Ravi thinks Pip is in the other place, so he looks there first.",
                ),
            ],
        ),
        S(
            "diverse_belief",
            2,
            [
                T(
                    "Where do you think the mitten is, in the school bag or in the car?",
                    ["In the school bag", "In the car"],
                    "It is a cold day. Elsa has lost one red mitten. Maybe it is in her school bag. "
                    "Maybe it is in the car.",
                ),
                T(
                    "So where will Elsa look for her mitten, in the school bag or in the car?",
                    ["In the car", "In the school bag"],
                    "Elsa does not think so. She thinks her mitten is in the other place.",
                    by_answer={
                        "In the school bag": "In the school bag? Maybe!",
                        "In the car": "In the car? Maybe!",
                    },
                ),
                T(
                    "Where is the mitten really, in the school bag or in the car?",
                    ["In the school bag", "In the car"],
                    "Elsa looks where she thinks the mitten is. It is not there.",
                    right="That's right. Elsa looks in the place where she thinks the mitten is.",
                    wrong="Remember, Elsa thinks the mitten is in the other place, so she looks there.",
                ),
                T("How does Elsa feel when the mitten is not where she looked, happy or sad?", "Sad"),
            ],
        ),
    ]


def implicit_false_belief() -> list[StoryTurn]:
    return [
        S(
            "implicit_false_belief",
            1,
            [
                T(
                    "Jonah wants his football. Where will he go to get it, the shed or the garage?",
                    "The shed",
                    "Jonah plays football in the garden. Then he puts his football in the shed and goes inside for "
                    "lunch. While Jonah is eating, his sister Bea takes the football out of the shed and puts it in "
                    "the garage. Jonah does not see her. After lunch, Jonah runs back out to play.",
                ),
                T(
                    "Why will Jonah go there?",
                    "Because he left his football in the shed and he did not see Bea move it to the garage.",
                ),
                T("Will Jonah find his football there?", "No"),
            ],
        ),
        S(
            "implicit_false_belief",
            2,
            [
                T(
                    "What will Yuki do first to get her pencils, look on the table or open the drawer?",
                    "Look on the table",
                    "Yuki is drawing at the kitchen table. She leaves her pencil case on the table and goes to brush "
                    "her teeth. Dad tidies up. He puts the pencil case in the drawer. Yuki is upstairs and does not "
                    "see. Now Yuki comes back to finish her drawing.",
                ),
                T(
                    "Why will she do that?",
                    "Because she thinks her pencil case is still on the table where she left it. "
                    "She does not know Dad put it in the drawer.",
                ),
            ],
        ),
    ]


def false_belief_location() -> list[StoryTurn]:
    return [
        S(
            "false_belief_location",
            1,
            [
                T(
                    "Where will Hugo look for his car, in the red box or in the blue box?",
                    "In the red box",
                    "This is Hugo. Hugo puts his yellow toy car in the red box. Then he goes outside to play. "
                    "While Hugo is outside, Mum tidies the room. She takes the car out of the red box and puts it in "
                    "the blue box. Now Hugo comes back inside. He wants his car.",
                    image=picture("false_belief_location", 1, 0),
                ),
                T(
                    "Why will he look there?",
                    "Because he put his car in the red box and he did not see Mum move it.",
                ),
                T("Where is the car really, in the red box or in the blue box?", "In the blue box"),
            ],
        ),
        S(
            "false_belief_location",
            2,
            [
                T(
                    "Where will Rosa look for her shell, in the cupboard or in the drawer?",
                    "In the cupboard",
                    "Rosa found a pretty shell at the beach. At home she puts it in the cupboard, and then she goes to "
                    "bed. In the morning her cousin Dario wants to look at the shell. He takes it out of the cupboard, "
                    "and when he is finished he puts it in the drawer. Rosa is still asleep. Later, Rosa wants to show "
                    "her shell to her friend.",
                ),
                T(
                    "Why will Rosa look there?",
                    "Because she put the shell in the cupboard and she was asleep when Dario moved it.",
                ),
                T("Where is the shell really, in the cupboard or in the drawer?", "In the drawer"),
            ],
        ),
    ]


def expectation_false_belief() -> list[StoryTurn]:
    return [
        S(
            "expectation_false_belief",
            1,
            [
                T(
                    "Did Mateo see what Dad put in the lunchbox today?",
                    "No",
                    "Every school day, Mateo's dad makes him a cheese sandwich and puts it in his blue lunchbox. "
                    "Mateo loves cheese sandwiches. Today the cheese is all gone, so Dad puts a bowl of pasta in the "
                    "lunchbox instead. Dad closes the lid. Mateo is putting on his shoes in the hall.",
                ),
                T("What did Dad really put in the lunchbox today?", "Pasta"),
                T(
                    "At lunch time, before he opens it, what does Mateo think is in his lunchbox?",
                    "A cheese sandwich",
                ),
                T(
                    "Why does he think that?",
                    "Because Dad always puts a cheese sandwich in it, and Mateo did not see Dad pack pasta today.",
                ),
                T(
                    "How does Mateo feel before he opens the lunchbox, happy or sad?",
                    "Happy",
                    "Mateo picks up his lunchbox. He is very hungry.",
                ),
                T("What does Mateo want to find in his lunchbox?", "A cheese sandwich"),
            ],
        ),
        S(
            "expectation_false_belief",
            2,
            [
                T(
                    "What is really inside the tin today, crayons or marbles?",
                    "Marbles",
                    "Hana has a round tin with a picture of crayons on the lid. Hana always keeps her crayons in it. "
                    "This morning her little brother took the crayons out to play with, and he filled the tin with "
                    "his marbles. Hana was at school and did not see.",
                ),
                T(
                    "Before she opens it, what will Hana think is inside the tin, crayons or marbles?",
                    "Crayons",
                    "Hana comes home from school. She wants to draw a rainbow.",
                ),
                T(
                    "Why will she think that?",
                    "Because she always keeps her crayons in the tin and she did not see her brother change them "
                    "for marbles.",
                ),
                T(
                    "Is Hana happy or sad when she opens the tin?",
                    "Sad",
                    "Hana opens the tin and looks inside.",
                ),
            ],
        ),
    ]


# --------------------------------------------------------------------------- reference and perspective


def reference_easy() -> list[StoryTurn]:
    return [
        S(
            "reference_easy",
            1,
            [
                T(
                    "Which teddy does Nina want, the teddy on the low shelf or the teddy behind the box?",
                    "The teddy on the low shelf",
                    "Nina and her grandad are in the toy shop. There are two teddies that look just the same. "
                    "One teddy sits on a low shelf right in front of Nina. The other teddy is on the floor behind a "
                    "tall box, so Nina cannot see it. Grandad can see both. Nina points and says, 'I want that one!'",
                    image=picture("reference_easy", 1, 0),
                ),
                T(
                    "How do you know?",
                    "Because Nina can only see the teddy on the low shelf. She cannot see the one behind the box, "
                    "so she cannot mean that one.",
                ),
            ],
        ),
        S(
            "reference_easy",
            2,
            [
                T(
                    "Which ball does Amara mean, the ball by the tree or the ball by the flower pot?",
                    "The ball by the tree",
                    "Look at the picture. Amara and her big brother Jon are in the garden. There is a tree, a big bush "
                    "and a flower pot. There are two yellow balls that look just the same: one is by the tree, one is "
                    "by the flower pot. Jon can see both balls. Amara calls, 'Jon, can you throw me that ball?'",
                    image=picture("reference_easy", 2, 0),
                ),
                T(
                    "How do you know?",
                    "Because the bush is between Amara and the ball by the flower pot, so Amara can only see the ball "
                    "by the tree.",
                ),
            ],
            image_dependent=True,
            note="The picture shows that the bush hides the ball by the flower pot from Amara.",
        ),
        S(
            "reference_easy",
            3,
            [
                T(
                    "Which umbrella does Mum mean, the umbrella in the hall or the umbrella in the kitchen?",
                    "The umbrella in the hall",
                    "It is raining. Abby and Mum are getting ready to go out. There are two green umbrellas that look "
                    "just the same. One hangs on a hook in the hall, right next to Mum. The other hangs in the kitchen, "
                    "round the corner, where Mum cannot see it. Abby can see both. Mum says, 'Abby, pass me that "
                    "umbrella, please.'",
                ),
                T(
                    "How do you know?",
                    "Because Mum can only see the umbrella in the hall. She cannot see the one in the kitchen.",
                ),
            ],
        ),
    ]


def reference_hard_referent() -> list[StoryTurn]:
    return [
        S(
            "reference_hard_referent",
            1,
            [
                T(
                    "Which mug has Grandma's tea in it, the red mug or the green mug?",
                    "The red mug",
                    "Look at the picture. Grandma Edith has two mugs on the kitchen table, a red mug and a green mug. "
                    "She makes a cup of tea in one of them and puts her glasses next to it. Then she goes out to the "
                    "garden to water the flowers.",
                    image=picture("reference_hard_referent", 1, 0),
                ),
                T(
                    "Which mug will Kit bring, the red mug or the green mug?",
                    "The green mug",
                    "While Grandma is outside, the cat jumps on the table and pushes her glasses along the table. "
                    "Then Kit comes into the kitchen. Kit did not see the cat. Grandma calls from the garden: "
                    "'Kit, please bring me the mug next to my glasses!'",
                    image=picture("reference_hard_referent", 1, 1),
                ),
                T(
                    "Why does Kit bring that mug?",
                    "Because the glasses are next to the green mug now, and Kit did not see the cat move them.",
                    right="That's right. Kit brings the green mug.",
                    wrong="Look again: Kit brings the green mug.",
                ),
                T("Which mug did Grandma really want, the red mug or the green mug?", "The red mug"),
                T(
                    "How do you know?",
                    "Because her tea is in the red mug. She thinks her glasses are still next to it, since she did not "
                    "see the cat push them.",
                    right="That's right. Grandma wanted the red mug with her tea in it.",
                    wrong="Remember, Grandma's tea is in the red mug. She wanted that one.",
                ),
            ],
            image_dependent=True,
            note="Which mug holds the tea and where the glasses lie before and after are shown only in the pictures.",
        ),
        S(
            "reference_hard_referent",
            2,
            [
                T(
                    "Which book will Dad bring, the whale book or the train book?",
                    "The train book",
                    "Lucas has two books on his shelf, a book about whales and a book about trains. He always keeps "
                    "his toy rabbit sitting on top of the whale book. Lucas goes to have a bath. While he is gone, his "
                    "little sister Ivy plays with the rabbit, and then she puts it on top of the train book. Dad comes "
                    "in to tidy up. He did not see Ivy. Lucas calls from the bath: 'Dad, please bring me the book with "
                    "my rabbit on it!'",
                ),
                T(
                    "Why does Dad bring that book?",
                    "Because the rabbit is on the train book now, and Dad did not see Ivy move it.",
                    right="That's right. Dad brings the train book.",
                    wrong="Actually, Dad brings the train book.",
                ),
                T("Which book did Lucas really want, the whale book or the train book?", "The whale book"),
                T(
                    "How do you know?",
                    "Because Lucas always keeps his rabbit on the whale book, and he thinks it is still there. "
                    "He did not see Ivy move it.",
                    right="That's right. Lucas wanted the whale book.",
                    wrong="Remember, Lucas keeps his rabbit on the whale book. He wanted the whale book.",
                ),
            ],
        ),
    ]


def reference_hard_perspective() -> list[StoryTurn]:
    size_question = "the small one, the middle-sized one or the big one?"
    return [
        S(
            "reference_hard_perspective",
            1,
            [
                T(
                    f"Which pumpkin will Aunt June pick, {size_question}",
                    "The middle-sized one",
                    "Look at the picture. Milo and Aunt June are at the pumpkin patch. There are three pumpkins: a small "
                    "one, a middle-sized one and a big one. There is a big haystack in the field too. Milo sits up on "
                    "the fence. Aunt June stands by the gate. Milo shouts, 'Aunt June, please get me the biggest "
                    "pumpkin!'",
                    image=picture("reference_hard_perspective", 1, 0),
                ),
                T(
                    "Why does she pick that one?",
                    "Because the haystack hides the big pumpkin from Aunt June, so the middle-sized one is the biggest "
                    "pumpkin she can see.",
                    right="That's right. Aunt June picks the middle-sized pumpkin.",
                    wrong="Actually, Aunt June picks the middle-sized pumpkin.",
                ),
                T(f"Which pumpkin did Milo really want, {size_question}", "The big one"),
                T(
                    "How do you know?",
                    "Because Milo can see all three pumpkins from the fence, and the big one by the fence is the "
                    "biggest.",
                    right="That's right. Milo wanted the big pumpkin.",
                    wrong="Actually, Milo wanted the big pumpkin.",
                ),
            ],
            image_dependent=True,
            note="Only the picture shows that the haystack hides the big pumpkin from Aunt June.",
        ),
        S(
            "reference_hard_perspective",
            2,
            [
                T(
                    f"Which balloon will Dad buy, {size_question}",
                    "The middle-sized one",
                    "Nora and her dad are at the balloon stall. There are three balloons: a small green one, a "
                    "middle-sized yellow one and a big red one. The big red balloon is tied behind a tall sign, so Dad, "
                    "who stands at the front, cannot see it. Nora stands at the side and can see all three. Nora says, "
                    "'Dad, can I have the biggest balloon?'",
                    image=picture("reference_hard_perspective", 2, 0),
                ),
                T(
                    "Why does Dad buy that one?",
                    "Because the sign hides the big balloon from Dad, so he thinks the middle-sized one is the biggest.",
                    right="That's right. Dad buys the middle-sized yellow balloon.",
                    wrong="Actually, Dad buys the middle-sized yellow balloon.",
                ),
                T(f"Which balloon did Nora really want, {size_question}", "The big one"),
                T(
                    "How do you know?",
                    "Because Nora can see all three balloons, and the big red one is the biggest.",
                    right="That's right. Nora wanted the big red balloon.",
                    wrong="Actually, Nora wanted the big red balloon.",
                ),
            ],
        ),
        S(
            "reference_hard_perspective",
            3,
            [
                T(
                    f"Which shell will Dad pick up, {size_question}",
                    "The middle-sized one",
                    "Look at the picture. Zoe and her dad are at the beach. There are three shells on the sand: a small "
                    "one, a middle-sized one and a big one. There is a tall rock on the beach too. Zoe calls to Dad, "
                    "'Please bring me the biggest shell for my bucket!'",
                    image=picture("reference_hard_perspective", 3, 0),
                ),
                T(
                    "Why does he pick that one?",
                    "Because the rock hides the big shell from Dad, so the middle-sized one is the biggest shell he can "
                    "see.",
                    right="That's right. Dad picks up the middle-sized shell.",
                    wrong="Actually, Dad picks up the middle-sized shell.",
                ),
                T(f"Which shell did Zoe really want, {size_question}", "The big one"),
                T(
                    "How do you know?",
                    "Because Zoe is standing right by the big shell and can see all three, and it is the biggest.",
                    right="That's right. Zoe wanted the big shell.",
                    wrong="Actually, Zoe wanted the big shell.",
                ),
            ],
            image_dependent=True,
            note="Only the picture shows that the rock hides the big shell from Dad.",
        ),
    ]


def interpretation() -> list[StoryTurn]:
    return [
        S(
            "interpretation",
            1,
            [
                T(
                    "Which clue should Ana give, 'the red hat' or 'the hat with a star'?",
                    "The hat with a star",
                    "Ana's brother Teo is going to fetch her hat from the pegs by the door. There are three hats on the "
                    "pegs: a red hat with a star, a red hat with a stripe and a blue hat with a stripe. Ana wants the "
                    "red hat with a star. She wants Teo to bring the right one the first time.",
                ),
                T(
                    "Why is that the better clue?",
                    "Because there are two red hats, so 'the red hat' could mean either one. Only one hat has a star, "
                    "so Teo will know which one to bring.",
                    right="That's right. 'The hat with a star' is the better clue.",
                    wrong="Actually, 'the hat with a star' is the better clue.",
                ),
            ],
        ),
        S(
            "interpretation",
            2,
            [
                T(
                    "Which clue should Gran give, 'the red cup' or 'the cup with spots'?",
                    "The red cup",
                    "Look at the picture. Gran has some cups on a shelf. Gran's favourite cup is red with white spots. "
                    "Gran's hands are full, so she asks her granddaughter Mei to get it. Gran wants to give Mei a "
                    "clue that will make her pick the right cup.",
                    image=picture("interpretation", 2, 0),
                ),
                T(
                    "Why is that the better clue?",
                    "Because two cups have spots, but only one cup is red, so Mei will know which cup to get.",
                    right="That's right. 'The red cup' is the better clue.",
                    wrong="Look again at the shelf: 'the red cup' is the better clue.",
                ),
            ],
            image_dependent=True,
            note="Only the picture shows that two cups have spots and only one cup is red.",
        ),
        S(
            "interpretation",
            3,
            [
                T(
                    "Which clue should Priya give, 'the robot at the end on my left' or 'the robot at the end by the "
                    "window'?",
                    "The robot at the end by the window",
                    "Priya and Max stand on two sides of a long table, looking at each other. On the table there are "
                    "five toy robots in a row. The end of the row on Priya's left is next to the window. Priya wants "
                    "the robot at that end, and she asks Max to pass it to her.",
                ),
                T(
                    "Why is that the better clue?",
                    "Because Max faces Priya, so his left is on her right side. The window is in the same place for "
                    "both of them, so Max will pick the right robot.",
                    right="That's right. 'The robot at the end by the window' is the better clue.",
                    wrong="Actually, 'the robot at the end by the window' is the better clue.",
                ),
                T(
                    "If Priya says 'the robot at the end on my left' and Max uses his own left, which robot will he "
                    "pass, the robot by the window or the robot at the other end?",
                    "The robot at the other end",
                ),
            ],
        ),
    ]


# --------------------------------------------------------------------------- emotion and intention


def emotion_reminder() -> list[StoryTurn]:
    return [
        S(
            "emotion_reminder",
            1,
            [
                T(
                    "How does Jade feel when she sees the goat, happy or scared?",
                    "Scared",
                    "Last summer Jade went to the farm. A goat ran at her and butted her, and she fell down in the mud. "
                    "Today Jade visits the farm again. The same goat is in the field. It is chewing grass. It looks "
                    "calm and friendly.",
                ),
                T(
                    "Why does she feel that way?",
                    "Because last time this goat butted her and she fell over. She remembers it.",
                ),
                T(
                    "At lunch, will Jade sit near the goat's field or far from the goat's field?",
                    "Far from the goat's field",
                    "It is time for a picnic. There is a bench near the goat's field and a bench far away.",
                ),
                T("Why?", "Because she is scared the goat will butt her again."),
            ],
        ),
        S(
            "emotion_reminder",
            2,
            [
                T(
                    "How does Arlo feel when he sees Biscuit, happy or scared?",
                    "Scared",
                    "Arlo went to play at his friend Sami's house. Sami's big dog, Biscuit, jumped on Arlo, knocked him "
                    "over and ate his sandwich. Today Arlo goes to Sami's house again. Biscuit is lying on a blanket, "
                    "wagging his tail.",
                ),
                T(
                    "Why does he feel that way?",
                    "Because Biscuit jumped on him and knocked him over the last time he came.",
                ),
                T(
                    "Will Arlo sit near Biscuit or far from Biscuit?",
                    "Far from Biscuit",
                    "Sami says, 'Let's sit down and eat our snack.'",
                ),
                T("Why?", "Because he is afraid Biscuit will knock him over and eat his snack again."),
            ],
        ),
    ]


def true_belief_action() -> list[StoryTurn]:
    return [
        S(
            "true_belief_action",
            1,
            [
                T(
                    "Where are the paint pots now, in the art room or in the library?",
                    "In the library",
                    "At Nia's school the paint pots are always kept in the art room. Today Mr Diaz carries the paint "
                    "pots to the library. He tells the whole class, 'Listen, everyone! The paint pots are in the "
                    "library now.' Nia is listening.",
                ),
                T(
                    "Where will Nia go to get the paint, the art room or the library?",
                    "The library",
                    "After lunch Nia wants to paint a picture of her cat.",
                    right="That's right. The paint pots are in the library now.",
                    wrong="Remember, Mr Diaz moved the paint pots to the library.",
                ),
                T(
                    "Why will she go there?",
                    "Because she heard Mr Diaz say the paint pots are in the library now, so she knows where they are.",
                    right="That's right. Nia goes to the library.",
                    wrong="Actually, Nia goes to the library.",
                ),
            ],
        ),
        S(
            "true_belief_action",
            2,
            [
                T(
                    "Where is Fluff's food bowl now, in the kitchen or on the porch?",
                    "On the porch",
                    "Fluff the cat always eats from a bowl in the kitchen. Today Mum moves the bowl out to the porch. "
                    "At dinner she tells everyone, 'Fluff's bowl is on the porch now.' Gus hears her.",
                ),
                T(
                    "Where will Gus go to feed Fluff, the kitchen or the porch?",
                    "The porch",
                    "The next morning it is Gus's turn to feed Fluff.",
                    right="That's right. The bowl is on the porch now.",
                    wrong="Remember, Mum moved the bowl to the porch.",
                ),
                T(
                    "Why will he go there?",
                    "Because Mum told everyone the bowl is on the porch now, and Gus heard her.",
                    right="That's right. Gus goes to the porch.",
                    wrong="Actually, Gus goes to the porch.",
                ),
            ],
        ),
    ]


# --------------------------------------------------------------------------- moral reasoning


def moral_false_belief() -> list[StoryTurn]:
    return [
        S(
            "moral_false_belief",
            1,
            [
                T(
                    "Where will Zara look for her grapes, on the top shelf or in the fridge?",
                    "On the top shelf",
                    "Zara brings a bag of grapes to school and puts it on the top shelf. Then she goes out to play. "
                    "While Zara is outside, the teacher puts Zara's grapes in the fridge to keep them cold. Then Finn "
                    "puts his own bag of grapes on the top shelf. The two bags look just the same. At snack time Zara "
                    "comes back in.",
                ),
                T(
                    "Why will she look there?",
                    "Because she put her grapes on the top shelf and she did not see the teacher move them.",
                ),
                T(
                    "How does Finn feel, happy or sad?",
                    "Sad",
                    "Zara takes the bag from the top shelf and eats all the grapes. Then Finn comes in. His bag is "
                    "empty.",
                ),
                T("Is Zara naughty?", "No"),
                T("Should Zara be in trouble?", "No"),
                T("Why?", "Because she thought the grapes were her own. She did not know they were Finn's."),
            ],
        ),
        S(
            "moral_false_belief",
            2,
            [
                T(
                    "Which basket did Ada put her ball in, the green basket or the blue basket?",
                    "The green basket",
                    "Look at the picture. Ada has a red ball. She puts it in one of the two baskets in the garden, and "
                    "then she runs inside for lunch.",
                    image=picture("moral_false_belief", 2, 0),
                ),
                T(
                    "Where will Ada look for her ball, in the green basket or in the blue basket?",
                    "In the green basket",
                    "While Ada is inside, Grandpa takes Ada's ball into the house. Then Ben puts his own red ball in "
                    "the same basket where Ada left hers. The two balls look just the same. Ada comes back out to "
                    "play.",
                ),
                T(
                    "Why will she look there?",
                    "Because she put her ball in the green basket and she did not see Grandpa take it away.",
                ),
                T(
                    "How does Ben feel, happy or sad?",
                    "Sad",
                    "Ada takes the ball and kicks it high over the fence. It is gone. Ben comes out to get his ball.",
                ),
                T("Is Ada naughty?", "No"),
                T(
                    "Should Ada be in trouble? Why?",
                    "No. Because she thought it was her own ball. She did not know it was Ben's.",
                ),
            ],
            image_dependent=True,
            note="Only the picture shows which basket Ada put her ball in.",
        ),
    ]


def moral_true_belief() -> list[StoryTurn]:
    return [
        S(
            "moral_true_belief",
            1,
            [
                T(
                    "Whose shell is on top of the castle, Elsie's or Kai's?",
                    "Kai's",
                    "Elsie and Kai are at the beach. Kai builds a sandcastle. He puts a shiny shell that he found on "
                    "top of it. Then he goes to the sea to fill his bucket.",
                    image=picture("moral_true_belief", 1, 0),
                ),
                T(
                    "Did Elsie know the shell was Kai's?",
                    "Yes",
                    "Elsie saw Kai find the shell. She takes it off the castle and hides it in her pocket. Kai comes "
                    "back and starts to cry.",
                    right="That's right. It is Kai's shell.",
                    wrong="Actually, it is Kai's shell. He found it.",
                ),
                T("Why is Kai crying?", "Because his shell is gone. Elsie took it and hid it."),
                T("Is Elsie naughty?", "Yes"),
                T("Should Elsie be in trouble?", "Yes"),
                T(
                    "Should Elsie still be in trouble?",
                    "Yes",
                    "Elsie's dad sees the shell in her pocket. He makes her give it back. Kai puts the shell on his "
                    "castle again and stops crying.",
                ),
                T(
                    "Why?",
                    "Because she took Kai's shell on purpose, even though she gave it back later.",
                    right="That's right. Elsie should still be in trouble.",
                    wrong="Actually, Elsie should still be in trouble.",
                ),
            ],
        ),
        S(
            "moral_true_belief",
            2,
            [
                T(
                    "Whose crayon is it, Ruby's or Hamid's?",
                    "Hamid's",
                    "Ruby and Hamid are colouring. Hamid has a new gold crayon. Ruby does not have one. Hamid puts his "
                    "gold crayon down and goes to wash his hands.",
                ),
                T(
                    "Did Ruby know whose crayon it was?",
                    "Yes",
                    "Ruby knows it is Hamid's crayon. She takes it and puts it in her own pencil case. Hamid comes "
                    "back and cannot find it. He starts to cry.",
                    right="That's right. It is Hamid's crayon.",
                    wrong="Actually, it is Hamid's crayon. It is new.",
                ),
                T("Why is Hamid crying?", "Because his new gold crayon is gone. Ruby took it."),
                T("Is Ruby naughty?", "Yes"),
                T("Should Ruby be in trouble?", "Yes"),
                T(
                    "Should Ruby still be in trouble?",
                    "Yes",
                    "The teacher finds the gold crayon in Ruby's pencil case. She gives it back to Hamid, and Hamid is "
                    "happy again.",
                ),
                T(
                    "Why?",
                    "Because Ruby took Hamid's crayon on purpose, even though he got it back.",
                    right="That's right. Ruby should still be in trouble.",
                    wrong="Actually, Ruby should still be in trouble.",
                ),
            ],
        ),
    ]


def lie_vs_false_statement() -> list[StoryTurn]:
    return [
        S(
            "lie_vs_false_statement",
            1,
            [
                T(
                    "Is Felix lying?",
                    "Yes",
                    "Aunt Pearl bakes a pie for Lola's birthday. She puts it on the windowsill to cool and goes out to "
                    "the garden. While she is gone, Felix sneaks in and hides the pie in the cupboard. When Aunt Pearl "
                    "comes back, the windowsill is empty. She asks Felix, 'Where did the pie go?' Felix says, 'A big "
                    "bird flew down and ate it.'",
                    image=picture("lie_vs_false_statement", 1, 0),
                ),
                T(
                    "Did a bird really eat the pie?",
                    "No",
                    right="That's right. Felix is lying.",
                    wrong="Actually, Felix is lying. He hid the pie himself.",
                ),
                T(
                    "Is Aunt Pearl lying?",
                    "No",
                    "Lola comes in and asks, 'Where is my birthday pie?' Aunt Pearl sighs and says, 'I am so sorry, "
                    "Lola. A big bird ate it.'",
                ),
                T(
                    "Why?",
                    "Because she believes what Felix told her. She thinks a bird really ate the pie.",
                    right="That's right. Aunt Pearl is not lying.",
                    wrong="Actually, Aunt Pearl is not lying. She believes Felix.",
                ),
                T("How does Lola feel, happy or sad?", "Sad"),
                T(
                    "The pie is safe in the cupboard. Why is Lola sad?",
                    "Because she does not know the pie is in the cupboard. She thinks a bird ate it.",
                ),
                T(
                    "Was Felix lying when he told Aunt Pearl that a bird ate the pie? Why?",
                    "Yes. Because when he said it, the pie was hidden in the cupboard and he knew it.",
                    "Felix feels bad. He puts the pie back on the windowsill. Just then a big crow flies down and "
                    "really eats the pie!",
                ),
            ],
        ),
        S(
            "lie_vs_false_statement",
            2,
            [
                T(
                    "Is Jasper lying?",
                    "Yes",
                    "Ms Patel has a new football for break time. She leaves it by the classroom door. Jasper hides the "
                    "football in his bag. Ms Patel asks, 'Jasper, have you seen the new football?' Jasper says, 'The "
                    "big kids took it to the top field.'",
                ),
                T(
                    "Is Ms Patel lying?",
                    "No",
                    "At break, Noor asks Ms Patel, 'Can we play with the new football?' Ms Patel says, 'I am sorry, "
                    "Noor. The big kids took it to the top field.'",
                    right="That's right. Jasper is lying. The football is in his bag.",
                    wrong="Actually, Jasper is lying. He hid the football in his bag.",
                ),
                T(
                    "Why?",
                    "Because she believes what Jasper told her. She thinks the big kids really took the football.",
                ),
                T(
                    "How does Noor feel, happy or sad?",
                    "Sad",
                    right="That's right. Ms Patel is not lying. She believes Jasper.",
                    wrong="Actually, Ms Patel is not lying. She believes Jasper.",
                ),
                T(
                    "Was Jasper lying when he said the big kids took the football? Why?",
                    "Yes. Because when he said it, the football was in his bag and he knew it.",
                    "After break, Jasper puts the football back by the door. Then some big kids see it, pick it up "
                    "and take it to the top field.",
                ),
            ],
        ),
    ]


# --------------------------------------------------------------------------- second order and non-literal


def second_order_belief_desire() -> list[StoryTurn]:
    return [
        S(
            "second_order_belief_desire",
            1,
            [
                T(
                    "What kind of balloon does Dad think Nadia wants, a star balloon or a heart balloon?",
                    "A star balloon",
                    "It is Nadia's birthday tomorrow. Dad is going to the shop. Nadia says, 'Dad, please get me a "
                    "balloon shaped like a star!' Dad puts on his headphones and walks to the door. Then Nadia changes "
                    "her mind. She calls, 'Actually, I want a heart one!' But Dad has his headphones on. He does not "
                    "hear her.",
                    image=picture("second_order_belief_desire", 1, 0),
                ),
                T(
                    "Why does Dad say sorry?",
                    "Because he thinks Nadia wants a star balloon and he could not get one.",
                    "At the shop, the star balloons are all sold out. So Dad buys a red heart balloon. At home he gives "
                    "it to Nadia and says, 'I am sorry, Nadia. They did not have any star balloons.'",
                    image=picture("second_order_belief_desire", 1, 1),
                    right="That's right. Dad thinks Nadia still wants a star balloon.",
                    wrong="Remember, Dad did not hear Nadia change her mind, so he still thinks she wants a star balloon.",
                ),
                T(
                    "What kind of balloon did Nadia want, a star balloon or a heart balloon?",
                    "A heart balloon",
                ),
                T("What kind of balloon did Nadia get?", "A heart balloon"),
                T(
                    "Why is Nadia surprised that Dad says sorry?",
                    "Because she got the heart balloon she asked for. She thinks Dad heard her change her mind, so she "
                    "does not know why he is sorry.",
                    "Nadia looks at Dad with a puzzled face.",
                ),
            ],
        ),
        S(
            "second_order_belief_desire",
            2,
            [
                T(
                    "What book does Gran think Rafa wants, a book about sharks or a book about castles?",
                    "A book about sharks",
                    "Gran is going to the library. Rafa says, 'Gran, please get me a book about the sea with lots of "
                    "sharks in it!' Gran goes to the car. Then Rafa changes his mind. He opens the window and shouts, "
                    "'Gran, I want one about castles now!' But the car engine is very loud. Gran does not hear him.",
                ),
                T(
                    "Why does Gran say sorry?",
                    "Because she thinks Rafa wants a shark book and she could not get one for him.",
                    "At the library, all the shark books are gone. So Gran gets a book about castles. At home she gives "
                    "it to Rafa and says, 'I am sorry, Rafa. There were no shark books left.'",
                    right="That's right. Gran thinks Rafa still wants a shark book.",
                    wrong="Remember, Gran did not hear Rafa change his mind, so she still thinks he wants a shark "
                    "book.",
                ),
                T(
                    "What book did Rafa want, a book about sharks or a book about castles?",
                    "A book about castles",
                ),
                T("What book did Rafa get?", "A book about castles"),
                T(
                    "Why is Rafa surprised that Gran says sorry?",
                    "Because he got the castle book he asked for. He thinks Gran heard him change his mind, so he does "
                    "not know why she is sorry.",
                    "Rafa scratches his head.",
                ),
            ],
        ),
    ]


def non_sarcasm() -> list[StoryTurn]:
    return [
        S(
            "non_sarcasm",
            1,
            [
                T(
                    "Why does Tariq say 'Mmm, my favourite'?",
                    "Because he really likes pancakes and he got what he asked for.",
                    "Tariq asks his mum for pancakes for breakfast. Mum makes a big stack of pancakes. Tariq smiles a "
                    "big smile and says, 'Mmm, my favourite!'",
                    image=picture("non_sarcasm", 1, 0),
                ),
                T("Is Tariq happy or sad?", "Happy"),
            ],
            note="Minimal pair with sample-sarcasm-1.",
        ),
        S(
            "non_sarcasm",
            2,
            [
                T(
                    "Why does Lucy say 'Mmm, my favourite'?",
                    "Because she really likes soup and she is glad to get it.",
                    "Look at the picture. Lucy sits down for dinner. Dad puts a bowl of soup in front of her. Lucy looks "
                    "at the soup and says, 'Mmm, my favourite.'",
                    image=picture("non_sarcasm", 2, 0),
                ),
                T("Is Lucy happy or sad?", "Happy"),
            ],
            image_dependent=True,
            note="Minimal pair with sample-sarcasm-2: same text, only Lucy's smiling face in the picture differs.",
        ),
    ]


def sarcasm() -> list[StoryTurn]:
    return [
        S(
            "sarcasm",
            1,
            [
                T(
                    "Why does Tariq say 'Mmm, my favourite'?",
                    "Because he does not like porridge. He is joking, he means the opposite.",
                    "Tariq asks his mum for pancakes for breakfast. But there are no eggs, so Mum makes porridge. "
                    "Tariq does not like porridge at all. He frowns, rolls his eyes and says in a grumpy voice, "
                    "'Mmm, my favourite.'",
                    image=picture("sarcasm", 1, 0),
                ),
                T("Is Tariq happy or sad?", "Sad"),
            ],
            note="Minimal pair with sample-non_sarcasm-1.",
        ),
        S(
            "sarcasm",
            2,
            [
                T(
                    "Why does Lucy say 'Mmm, my favourite'?",
                    "Because she does not like soup. She is joking, she means the opposite.",
                    "Look at the picture. Lucy sits down for dinner. Dad puts a bowl of soup in front of her. Lucy looks "
                    "at the soup and says, 'Mmm, my favourite.'",
                    image=picture("sarcasm", 2, 0),
                ),
                T("Is Lucy happy or sad?", "Sad"),
            ],
            image_dependent=True,
            note="Minimal pair with sample-non_sarcasm-2: same text, only Lucy's frowning face in the picture differs.",
        ),
    ]


def build() -> list[StoryTurn]:
    """Every sample StoryTurn, grouped by task in taxonomy order."""
    groups = [
        common_desire(),
        implicit_false_belief(),
        diverse_desire(),
        diverse_belief(),
        reference_easy(),
        false_belief_location(),
        moral_false_belief(),
        expectation_false_belief(),
        reference_hard_referent(),
        non_sarcasm(),
        reference_hard_perspective(),
        interpretation(),
        emotion_reminder(),
        true_belief_action(),
        moral_true_belief(),
        lie_vs_false_statement(),
        second_order_belief_desire(),
        sarcasm(),
    ]
    storyturns = [st for group in groups for st in group]
    order = {task.id: k for k, task in enumerate(TASKS)}
    return sorted(storyturns, key=lambda st: (order[st.task], st.id))


def write(folder: Path) -> Dataset:
    """Draw the pictures, then write the dataset folder; raises if the sample does not validate."""
    images = folder / IMAGES_DIR
    images.mkdir(parents=True, exist_ok=True)
    for old in images.glob("sample-*.png"):
        old.unlink()
    draw_all(images)
    dataset = Dataset(
        storyturns=build(),
        name="commet-sample",
        version="1.0",
        licence="CC-BY-4.0",
        description=DESCRIPTION,
        root=folder,
    )
    used = {name for st in dataset.storyturns for name in st.images}
    unused = sorted(p.name for p in images.glob("*.png") if p.name not in used)
    if unused:
        raise SystemExit(f"pictures drawn but not used by any story: {unused}")
    problems = validate_dataset(dataset)
    for problem in problems:
        print(problem)
    if has_errors(problems):
        raise SystemExit("the sample does not validate")
    dataset.save(folder)
    return dataset


def main(argv: list[str]) -> int:
    folder = Path(argv[1]) if len(argv) > 1 else DEFAULT_FOLDER
    dataset = write(folder)
    n_images = len({name for st in dataset.storyturns for name in st.images})
    n_dep = sum(st.image_dependent for st in dataset.storyturns)
    print(f"wrote {len(dataset)} StoryTurns ({n_dep} image-dependent) and {n_images} pictures to {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
