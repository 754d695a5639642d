"""Feelings: an emotion from a remembered experience, and sincere versus sarcastic remarks.

* emotion_reminder: last week, at one place, one animal did something bad to the child and
  another something nice; today the child meets one of them again, looking friendly. The test
  item brings back the one that did something bad (the booklet's item); the control the nice
  one. Both deeds are told in every story, so only which animal comes back decides.
* sarcasm / non_sarcasm: two children ask for different snacks; a grown-up brings two of the
  same. The one asked about says "Mmm, my favourite!". It is sarcasm when the snack is the
  other child's (the sarcasm task's test item) and sincere when it is the one asked for (the
  non_sarcasm test item); each task has the other as its control, so the pair's members with
  the same index differ in that one fact. The snack served is one draw, the same in every cell: which
  child asked for it is what the cell changes, so the picture's food never does. In text the cue is
  each child's face, told with the same words whichever child makes it; in the image-dependent
  variant the snack and the faces are only in the picture.
"""

from __future__ import annotations

from commet.generation.procedural import lexicon as lex
from commet.generation.procedural.builder import Cast, StoryBuilder, an, right_wrong
from commet.generation.procedural.tasks.common import fill
from commet.generation.procedural.world import Place, Thing, World

#: Places where animals are met, and the animals met there: (noun, a bad deed, a nice deed).
HABITATS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "farm": (("goose", "chased {obj} and pecked {det} shoe", "ate bread gently from {det} hand"),
             ("goat", "butted {obj} over into the mud", "let {obj} stroke its soft ears"),
             ("pony", "stepped hard on {det} foot", "let {obj} ride on its back"),
             ("rooster", "flew at {obj} and pecked {det} knee", "followed {obj} around like a friend"),
             ("donkey", "kicked over {det} bucket and made {obj} fall", "carried {det} bag up the hill")),
    "pond": (("swan", "hissed and chased {obj} off the path", "swam right up to say hello to {obj}"),
             ("goose", "chased {obj} and pecked {det} shoe", "ate bread gently from {det} hand"),
             ("duck", "nipped {det} finger hard", "waddled after {obj} and quacked happily"),
             ("frog", "jumped on {det} face and made {obj} fall in the mud", "sat on {det} hand very still")),
    "park": (("dog", "jumped up and knocked {det} ice cream to the ground", "fetched {det} ball and licked {det} hand"),
             ("squirrel", "bit {det} finger when {sub} held out a nut", "took a nut from {det} hand very gently"),
             ("pigeon", "flew into {det} face and scared {obj}", "sat on {det} bench and cooed")),
    "petting zoo": (("rabbit", "kicked {obj} hard with its back legs", "hopped onto {det} lap and fell asleep"),
                    ("goat", "butted {obj} over into the mud", "let {obj} stroke its soft ears"),
                    ("hamster", "nipped {det} thumb when {sub} held it", "ran happily across {det} hands"),
                    ("lamb", "trod on {det} toes and made {obj} cry", "drank milk from {det} bottle")),
    "stables": (("horse", "snapped at {det} arm over the fence", "nuzzled {det} hair softly"),
                ("pony", "stepped hard on {det} foot", "let {obj} ride on its back"),
                ("cat", "scratched {det} hand when {sub} tried to pet it", "curled up on {det} lap and purred")),
}
LOOKS_FRIENDLY = ("looking calm and friendly", "looking as friendly as can be", "looking gentle and sleepy",
                  "looking quiet and kind", "waiting there calmly")
MEMORY = (
    "Last week at the {place}, the {a1} {d1}, and the {a2} {d2}.",
    "{c.name} remembers last week at the {place}: the {a1} {d1}, and the {a2} {d2}.",
    "When {c.name} went to the {place} last week, the {a1} {d1}; the {a2}, though, {d2}.",
    "Last week, at the {place}, two animals did things to {c.name}: the {a1} {d1}, and the {a2} {d2}.",
    "{c.name} still thinks about last week at the {place}, when the {a1} {d1} and the {a2} {d2}.",
)
TODAY = (
    "Today {c.name} goes to the {place} again, and there is the same {a}, {looks}.",
    "Today {c.name} is back at the {place}, and the same {a} is there, {looks}.",
    "This morning {c.name} visits the {place} again and meets the same {a}, {looks}.",
    "Back at the {place} today, {c.name} sees the very same {a}, {looks}.",
    "Today at the {place}, {c.name} comes across the same {a} once more, {looks}.",
)
FEEL = ("How does {c.name} feel when {c.sub} sees the {a}", "How does {c.name} feel about seeing the {a} again",
        "When {c.name} sees the {a}, how does {c.sub} feel")
WHY = ("Why?", "Why does {c.name} feel that way?", "What makes {c.name} feel like that?")
SIT = ("Where will {c.name} sit", "Where will {c.name} choose to sit", "Where does {c.name} want to sit")
WHY_SIT = ("Why will {c.name} sit there?", "Why does {c.name} sit there?", "What makes {c.name} sit there?")


def emotion_reminder(b: StoryBuilder, image_dependent: bool) -> None:
    cast = Cast(b)
    place = b.pick("place", sorted(HABITATS))
    w = World("garden")
    child = cast.child(0.3)
    w.add(child)
    bad, good = b.sample("animals", HABITATS[place], 2)
    test = b.role(b.cell("bad one back", 2) == 1, "the animal that was nice comes back")
    back = bad if test else good
    w.past_harm(f"the {bad[0]}", child.id, fill(bad[1], child), where=place)
    w.past_kindness(f"the {good[0]}", child.id, fill(good[2], child), where=place)
    first, second = b.arrange("memory", [(bad[0], fill(bad[1], child)), (good[0], fill(good[2], child))])
    slots = {"c": child, "place": place, "a": back[0]}
    story = " ".join([
        b.frame("memory", MEMORY).format(a1=first[0], d1=first[1], a2=second[0], d2=second[1], **slots),
        b.frame("today", TODAY).format(looks=b.pick("friendly looks", LOOKS_FRIENDLY), **slots),
    ])
    feeling = w.feeling_toward(child.id, f"the {back[0]}")
    did = fill(back[1] if test else back[2], child)
    b.choose("feels", b.wording(FEEL).format(**slots), ["happy", "scared"], feeling, story=story)
    b.why("why feels", b.wording(WHY).format(**slots), f"Because last week the {back[0]} {did}.",
          f"{child.name} remembers what the {back[0]} did last week" + (
              ", and is afraid it will happen again." if test else ", and liked it."),
          ["how the animal looks today decides the feeling",
           f"{child.name} is thinking of the other animal"])
    near_far = "far from it" if feeling == "scared" else "near it"
    b.choose("sits", b.wording(SIT).format(**slots), ["near it", "far from it"], near_far)
    b.why("why sits", b.wording(WHY_SIT).format(**slots),
          f"Because {child.sub} is afraid the {back[0]} will hurt {child.obj} again." if test
          else f"Because {child.sub} likes the {back[0]}.",
          f"{child.name} is {'afraid of' if test else 'fond of'} the {back[0]} because of what it did last week.",
          ["the animal looks friendly, so the child is not afraid" if test else "all animals are scary"],
          feedback=right_wrong("That's right.", f"Think about what happened at the {place} last week."))
    b.facts.update(log=w.record(), animal=back[0], remembers_harm=test, feeling=feeling, place=place)


# --- sarcasm and its sincere control --------------------------------------------------------

ASKS = (
    "{when}, {c1.name} asks {pa.name} for {f1}, and {c2.name} asks for {f2}.",
    "{when}, {c1.name} would like {f1} and {c2.name} would like {f2}, so they ask {pa.name}.",
    "{when}, {pa.name} asks what the children want: {c1.name} says {f1}, and {c2.name} says {f2}.",
    "{when}, {c1.name} begs {pa.name} for {f1}; {c2.name} begs for {f2}.",
    "{when}, {c1.name} tells {pa.name} {c1.sub} wants {f1}, and {c2.name} wants {f2}.",
)
BRINGS = (
    "{pa.name} comes back with two {s}, one for each of them.",
    "{pa.name} brings two plates, each with {a_s}.",
    "A little later {pa.name} puts {a_s} in front of each child.",
    "{pa.name} sets down two plates with {a_s} on each.",
    "Soon {pa.name} returns with {a_s} for each of them.",
)
BRINGS_PICTURE = (
    "{pa.name} comes back with two plates of the same snack, one for each of them.",
    "{pa.name} brings two plates with the same snack on each.",
    "A little later {pa.name} puts the same snack in front of each child.",
    "{pa.name} sets down two plates with the same snack on each.",
    "Soon {pa.name} returns with the same snack for each of them.",
)
#: The two children's faces: a smile and a frown, each told by a clause of its own, so that either child can be
#: named first whatever face they make (the order is a balanced nuisance choice, never the key).
SMILES = ("{g.name} grins", "{g.name} breaks into a big smile", "{g.name} smiles from ear to ear", "{g.name} beams",
          "{g.name} grins widely")
FROWNS = ("{f.name} frowns", "{f.name} scowls", "{f.name} pulls a face", "{f.name} frowns crossly",
          "{f.name} wrinkles {f.det} nose")
JOINS = ("{one}, and {two}.", "{one}, while {two}.", "{one}; {two}.", "{one}, but {two}.", "{one}, and {two} at once.")
SAYS = (
    "{c.name} looks at {c.det} plate and says, '{remark}'", "{c.name} says, '{remark}'",
    "Then {c.name} says, '{remark}'", "{c.name} looks up and says, '{remark}'",
    "'{remark}' says {c.name}.",
)
REMARKS = ("Mmm, my favourite!", "Oh wow, yummy!", "Yes, just what I wanted!", "Mmm, lovely!",
           "Oh, how wonderful!", "Great, my favourite snack!")
WHY_SAY = ("Why did {c.name} say, '{remark}'?", "Why does {c.name} say '{remark}'?",
           "What did {c.name} mean by '{remark}'?")
HOW_FEEL = ("How does {c.name} feel", "How is {c.name} feeling", "How does {c.name} feel about the snack")
MEALTIMES = ("After football practice", "At breakfast", "After a long walk", "When they get home from school",
             "At the picnic", "On a rainy afternoon", "After swimming", "At the fair", "After the school play",
             "Before the long car ride", "At the beach", "After helping in the garden")


def _sarcasm(b: StoryBuilder, image_dependent: bool, sincere: bool) -> None:
    cast = Cast(b)
    w = World(b.pick("room", ("kitchen", "dining room", "living room")))
    child, sib = cast.pair(0.14, 0.3)  # spots reassigned below, balanced within the item's cell
    parent = cast.adult(0.86)
    kinds = b.sample("snacks", lex.SNACKS, 2)
    w.add(Place("table", "table", "brown", 0.58, name="the table"))
    w.add(Place("counter", "offstage", "brown", -5.0, name="the counter"))
    for item in (child, sib, parent):
        w.add(item)
    gets_wanted = (b.cell("gets wanted", 2) == 1) != sincere  # the pair's members with one index differ in this one fact
    test = b.role(gets_wanted == sincere, "sincere: the child got what was asked for" if not sincere else
                  "sarcastic: the child got what the other child asked for")
    b.seat("children", [child, sib], (0.14, 0.3))  # the one asked about is the leftmost as often as not
    # what is served is one draw, the same in every cell (so the picture's food, plates and colours are too); what
    # each child asked for follows the cell: the asked child's wish is the served snack where the child gets it
    served, spare = kinds
    wanted, other = (served, spare) if gets_wanted else (spare, served)
    w.request(child.id, wanted.noun)
    w.request(sib.id, other.noun)
    plates = [Thing("food", served, b.pick("colour: the first plate", served.colours), "counter"),
              Thing("food2", served, b.pick("colour: the second plate", served.colours), "counter")]
    for thing in plates:
        w.add(thing)
        w.put(parent.id, thing.id, "table")
    happy_child, sad_child = (child, sib) if gets_wanted else (sib, child)
    happy_child.expression, sad_child.expression = "happy", "cross"
    feeling = w.feeling_about(child.id, served.noun)
    remark = b.pick("remark", REMARKS)
    c1, c2 = b.arrange("asks", [child, sib])
    want = {child.id: an(wanted.noun), sib.id: an(other.noun)}
    smile = b.frame("smile", SMILES).format(g=happy_child)
    frown = b.frame("frown", FROWNS).format(f=sad_child)
    one, two = b.arrange("faces", [smile, frown])  # who is named first is balanced; each face stays with its child
    slots = {"c": child, "pa": parent, "remark": remark, "s": served.plural, "a_s": an(served.noun)}
    text = [b.frame("asks", ASKS).format(when=b.pick("mealtime", MEALTIMES), c1=c1, c2=c2, f1=want[c1.id], f2=want[c2.id],
                                         **slots)]
    if image_dependent:
        text.append(b.frame("brings", BRINGS_PICTURE).format(**slots))
    else:
        text.append(b.frame("brings", BRINGS).format(**slots))
        text.append(b.frame("faces", JOINS).format(one=one, two=two))
    text.append(b.frame("says", SAYS).format(**slots))
    sarcastic = not gets_wanted
    if sarcastic:
        why = (f"Because {child.sub} is being sarcastic: {child.sub} wanted {an(wanted.noun)}, not "
               f"{an(served.noun)}, so {child.sub} means the opposite of what the words say.")
    else:
        why = f"Because {child.sub} got the {wanted.noun} {child.sub} asked for and really likes it."
    b.why("why says", b.wording(WHY_SAY).format(**slots), why,
          f"{child.name} got {'not ' if sarcastic else ''}what {child.sub} asked for and "
          f"{'means the opposite of what the words say' if sarcastic else 'means what the words say'}.",
          [f"{child.name} " + ("means it" if sarcastic else "is joking"),
           f"{child.name} is {'happy' if sarcastic else 'sad'}"], story=" ".join(text), image=b.picture(w))
    b.choose("feels", b.wording(HOW_FEEL).format(**slots), ["happy", "sad"], feeling)
    b.facts.update(log=w.record(), asked_for=wanted.noun, got=served.noun, sarcastic=sarcastic, remark=remark,
                   feeling=feeling, test=test)


def sarcasm(b: StoryBuilder, image_dependent: bool) -> None:
    _sarcasm(b, image_dependent, sincere=False)


def non_sarcasm(b: StoryBuilder, image_dependent: bool) -> None:
    _sarcasm(b, image_dependent, sincere=True)
