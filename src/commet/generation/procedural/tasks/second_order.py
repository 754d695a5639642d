"""Second-order belief and desire: the paper's Figure 1.

A child asks for one toy, then, as one grown-up steps out to the car, calls out a change of mind:
the grown-up still inside hears it, the one outside does not (a noise outside). One of the two
later goes to the shop, where one of the two toys is sold out: the shopper buys the other and,
back home, says sorry for not getting the one the child wanted. The test item sends the one who
did not hear (the booklet's item: the shopper still thinks the child wants the first toy, buys the
second, and the child, who thinks her change was heard, does not expect it and is surprised); the
control sends the one who heard (the shopper buys the first toy, as the child feared: no
surprise). Both are told with the same words; what the shopper bought is never said, only shown,
so "what did she get?" follows from what the shopper thinks. The story never states what the
child thinks the shopper heard. The two requests are told with the same words, each naming only its own
toy, and the change of mind in a sentence that names none: only the order of the requests says which toy
the child wants now.
"""

from __future__ import annotations

from commet.format.model import Rubric
from commet.generation.procedural import lexicon as lex
from commet.generation.procedural.builder import Cast, StoryBuilder, an, cap, right_wrong
from commet.generation.procedural.tasks.common import fill
from commet.generation.procedural.world import Place, Thing, World

#: The shop window: both toys, in either order, and nothing about which one is asked for.
WINDOW = (
    "{occasion_cap}, {c.name} may have a toy from {g1.name} and {g2.name}; in the shop window there are {t1} and "
    "{t2}.",
    "{c.name} has seen {t1} and {t2} in the shop window, and {g1.name} and {g2.name} have promised one of them "
    "{occasion}.",
    "{occasion_cap}, {g1.name} and {g2.name} will buy {c.name} a toy. The shop window has {t1} and {t2}.",
    "{c.name} cannot stop talking about the two toys in the shop window, {t1} and {t2}; {g1.name} and {g2.name} "
    "will get one {occasion}.",
    "In the shop window there are {t1} and {t2}, and {g1.name} and {g2.name} will get {c.name} one of them "
    "{occasion}.",
)
#: Both requests, the first and the change of mind, are drawn from these same words, each naming only its own
#: toy: no word marks a request as the first or the later one; only the order they are told in does.
REQUESTS = ("'Can I have {x}, please?'", "'I want {x}!'", "'Please get me {x}!'", "'{X}, please!'",
            "'I would like {x}!'", "'Get me {x}, please!'", "'I wish for {x}!'")
#: After its quoted words, every request is tagged alike (so that the words after each toy are drawn alike), naming
#: no one (so that the child is named in the same places whichever order the requests are told in); the first request
#: told afterwards takes the past form of the same index, as many words long.
#: Each tag has a verb of its own, so that no one word (such as "came") is in every story told afterwards.
ASKED = ("comes the cry.", "goes the shout.", "rings out the call.", "is the plea.", "bursts out the wish.")
ASKED_BEFORE = ("came the cry.", "went the shout.", "rang out the call.", "was the plea.", "burst out the wish.")
STEPS_OUT = (
    "Then {p.name} steps out to the car to fetch the shopping bags, and {q.name} stays in the hall.",
    "Then {p.name} goes out to the car for a moment, while {q.name} stays inside.",
    "Then {p.name} goes outside to put something in the car; {q.name} stays in the hall.",
    "Then {p.name} heads out to the car to find the keys, and {q.name} waits inside.",
    "Then {p.name} walks out to the car to get an umbrella, while {q.name} stays in the hall.",
)
#: Each request is told in a lead-in, its quoted words and a tag (``ASKED``). In the order it happened, the first request and the
#: change of mind draw two different lead-ins of ``LEAD_INS`` (so the words around the two toys are drawn alike);
#: told afterwards (a balanced choice: told in the order it happened, the child's wish now would always be the request
#: told last, whatever the reader follows), the first request's lead-in is the ``EARLIER`` one of the same index, as
#: many words long, no pronoun in either. The first request always follows a sentence that names the child
#: (``UNDECIDED``), so the story's length, sentences and people are the same either way: a reader that could tell the
#: two orders apart by length (a threshold on the characters: 55 to 60 %) could join it with the order of mention.
UNDECIDED = (
    "{c.name} cannot decide at first.", "{c.name} looks at the two toys for a long time.",
    "{c.name} takes a long look.", "{c.name} stares at the window.", "{c.name} points at the window.",
)
LEAD_INS = (
    "Loud enough for all in the hall, the words go like this:",
    "Out it comes, loud and clear, in a sing-song voice:",
    "The words tumble out all in a rush:",
    "A shout rings out all through the house, like this:",
    "With a big smile and a hop, the words are:",
)
EARLIER = (
    "Before that, in front of both grown-ups, the wish had been this:",
    "The first wish, said while the two grown-ups listened, went:",
    "Until then, with everyone there, the words were:",
    "A minute earlier, with everybody listening, it sounded like this:",
    "At the start, for all in the hall to hear:",
)
#: The same two sentences with the one who stays named first (which comes first is a balanced nuisance choice).
STEPS_OUT_STAYS_FIRST = (
    "Then {q.name} stays in the hall, and {p.name} steps out to the car to fetch the shopping bags.",
    "Then {q.name} stays inside, while {p.name} goes out to the car for a moment.",
    "Then {q.name} stays in the hall; {p.name} goes outside to put something in the car.",
    "Then {q.name} waits inside, and {p.name} heads out to the car to find the keys.",
    "Then {q.name} stays in the hall, while {p.name} walks out to the car to get an umbrella.",
)
HEARS_OUT_FIRST = (
    "{p.name}, outside, does not hear it, because {noise}; {q.name}, in the hall, does.",
    "{p.name}, out by the car, does not hear it ({noise}), but {q.name} hears it from the hall.",
    "Outside, {p.name} hears nothing, because {noise}; inside, {q.name} hears every word.",
    "{p.name} is outside and does not hear it, as {noise}, while {q.name} is in the hall and does.",
    "{p.name}, outside, misses it because {noise}; {q.name}, still inside, hears it clearly.",
)
#: The change of mind, in a sentence that names no toy.
CHANGES = ("Just then {c.name} changes {c.det} mind.", "A moment later, {c.name} changes {c.det} mind.",
           "Then {c.name} has second thoughts about {c.det} wish.", "Suddenly {c.name} would rather have the other toy.",
           "Right then {c.name} decides on the other toy after all.", "Now {c.name} wants the other toy instead.")
HEARS = (
    "{q.name}, in the hall, hears it; {p.name}, outside, does not, because {noise}.",
    "{q.name} hears it from the hall, but {p.name}, out by the car, does not: {noise}.",
    "Inside, {q.name} hears every word; outside, {p.name} hears nothing, because {noise}.",
    "{q.name} is in the hall and hears it, while {p.name} is outside and does not, as {noise}.",
    "{q.name}, still inside, hears it clearly; {p.name}, outside, misses it because {noise}.",
)
NOISES = ("the car engine is running", "a lorry is rumbling past", "the neighbour's lawnmower is roaring",
          "the neighbour's dog is barking", "the wind is howling", "the car radio is on", "a car alarm is going off",
          "the rain is drumming on the car roof")
GOES = ("A little later, {s.name} goes to the shop.", "Later, {s.name} drives to the shop.",
        "Then {s.name} goes off to the shop.", "After that, {s.name} sets off for the shop.",
        "Soon {s.name} is on the way to the shop.")
SOLD_OUT = (
    "At the shop, one of the two, {t1} or {t2}, is sold out, so {s.name} buys the other one.",
    "The shop has only one of the two left, {t1} or {t2}, and {s.name} buys that one.",
    "Of {t1} and {t2}, the shop has just one left; {s.name} buys it.",
    "At the shop, {s.name} finds that either {t1} or {t2} is gone, and buys the one that is there.",
    "Only one of the two, {t1} or {t2}, is still in the shop, so that is the one {s.name} buys.",
)
SORRY = (
    "Back home, {s.name} gives {c.name} a bag and says, 'I am sorry, I could not get the one you wanted.'",
    "When {s.name} comes home, {s.sub} hands {c.name} a bag: 'Sorry, they did not have the one you wanted.'",
    "{s.name} comes back with a bag for {c.name} and says, 'I'm sorry, the one you wanted was sold out.'",
    "Home again, {s.name} gives {c.name} a bag. 'I am so sorry,' {s.sub} says, 'yours was sold out.'",
    "{s.name} returns with a bag and tells {c.name}, 'Sorry, I couldn't get the one you asked for.'",
)
OPENS = ("{c.name} opens the bag and takes out what is inside.", "{c.name} opens the bag and looks inside.",
         "{c.name} takes the toy out of the bag.", "{c.name} pulls the toy out of the bag.",
         "{c.name} unwraps what is in the bag.")
THINKS = ("What does {s.name} think {c.name} wants", "Which toy does {s.name} think {c.name} wants",
          "What does {s.name} believe {c.name} wants")
SORRY_WHY = ("Why does {s.name} say sorry?", "Why does {s.name} apologise to {c.name}?",
             "What makes {s.name} say sorry?")
WANTS = ("What does {c.name} want now", "Which toy does {c.name} want now", "What would {c.name} like now")
GOT = ("What did {c.name} get", "Which toy did {c.name} get", "What was in the bag")
SURPRISED = ("Is {c.name} surprised? Why or why not?", "Is {c.name} surprised by what is in the bag? Why or why not?",
             "Does the toy surprise {c.name}? Why or why not?")


def second_order_belief_desire(b: StoryBuilder, image_dependent: bool) -> None:
    cast = Cast(b)
    w = World(b.pick("room", ("living room", "hallway", "kitchen")))
    child, g1, g2 = cast.child(0.12), cast.adult(0.62), cast.adult(0.86)
    first_kind, second_kind = b.sample("toys", lex.TOYS, 2)
    shop = Place("shop", "offstage", "brown", 3.0, name="the shop")
    bag = Place("bag", "bag", b.pick("colour: the bag", ("orange", "blue", "green", "pink")), 0.36, closed=True, name="the bag",
                away=True)
    first = Thing("gift1", first_kind, b.pick("colour: the first toy", first_kind.colours), shop.id)
    second = Thing("gift2", second_kind, b.pick("colour: the second toy", second_kind.colours), shop.id)
    for item in (child, g1, g2, shop, bag, first, second):
        w.add(item)
    test = b.role(b.cell("shopper missed it", 2) == 1, "the grown-up who heard the change goes to the shop")
    b.seat("grown-ups", [g1, g2], (0.62, 0.86))  # no spot tells which grown-up steps out
    p, q = b.arrange("who steps out", [g1, g2])
    shopper = p if test else q
    occasion = fill(b.pick("occasion", lex.GIFT_OCCASIONS), child)
    told = b.arrange("toys", [an(first.noun), an(second.noun)])
    at_shop = b.arrange("at the shop", [an(first.noun), an(second.noun)])
    slots = {"c": child, "g1": g1, "g2": g2, "p": p, "q": q, "s": shopper, "occasion": occasion,
             "occasion_cap": cap(occasion)}

    def said(x: str, before: bool = False) -> str:
        words = b.pick(f"request: {x}", REQUESTS).format(x=x, X=cap(x))
        tag = b.pick(f"request: {x}: tag", range(len(ASKED)))
        return f"{words} {(ASKED_BEFORE if before else ASKED)[tag]}"

    stays_first = b.flip("the one who stays named first")  # in both sentences that name the two grown-ups
    told_later = b.flip("the first request told afterwards")
    leads = b.sample("frame: request lead-ins", range(len(LEAD_INS)), 2)  # the first request's (or EARLIER's), the second's
    text = [b.frame("window", WINDOW).format(t1=told[0], t2=told[1], **slots),
            b.frame("undecided", UNDECIDED).format(**slots),
            *([] if told_later else [f"{LEAD_INS[leads[0]]} {said(an(first.noun))}"]),
            b.frame("steps out", STEPS_OUT_STAYS_FIRST if stays_first
                    else STEPS_OUT).format(**slots),
            b.frame("changes", CHANGES).format(**slots), f"{LEAD_INS[leads[1]]} {said(an(second.noun))}",
            b.frame("hears", HEARS if stays_first
                    else HEARS_OUT_FIRST).format(noise=b.pick("noise", NOISES), **slots),
            *([f"{EARLIER[leads[0]]} {said(an(first.noun), before=True)}"] if told_later else []),
            b.frame("goes", GOES).format(**slots),
            b.frame("sold out", SOLD_OUT).format(t1=at_shop[0], t2=at_shop[1], **slots),
            b.frame("sorry", SORRY).format(**slots)]
    w.request(child.id, first.noun)
    w.leave(p.id, "car")
    w.request(child.id, second.noun)
    image = b.picture(w)  # the change of mind: the one outside is not in the room
    w.enter(p.id)
    thinks = shopper.thinks_wants[child.id]
    bought = next(t for t in (first, second) if t.noun != thinks)  # the one the shopper thinks is wanted is sold out
    w.leave(shopper.id, "shop")
    w.put(shopper.id, bought.id, bag.id)
    bag.away = False
    w.enter(shopper.id)
    got = w.contents(bag.id)[0].noun
    toys = [an(first.noun), an(second.noun)]
    b.choose("shopper thinks", b.wording(THINKS).format(**slots), toys, an(thinks), story=" ".join(text),
             image=image)
    b.why("why sorry", b.wording(SORRY_WHY).format(**slots),
          f"Because {shopper.name} thinks {child.name} wants {an(thinks)}, and {shopper.sub} could not get it.",
          (f"{shopper.name} did not hear the change, so {shopper.sub} still thinks {child.name} wants {an(thinks)}."
           if test else
           f"{shopper.name} heard the change, so {shopper.sub} knows {child.name} wants {an(thinks)} now."),
          [f"{shopper.name} knows {child.name} wants {an(got)}", f"{shopper.name} got nothing"],
          feedback=right_wrong("That's right.", f"Remember who heard {child.name} change {child.det} mind."))
    b.choose("child wants", b.wording(WANTS).format(**slots), toys, an(child.desires[-1]),
             feedback=right_wrong("That's right.", f"Think about why {shopper.name} says sorry."))
    w.hold(child.id, bought.id)  # out of the bag: everyone sees it
    b.choose("child got", b.wording(GOT).format(**slots), toys, an(got), image=b.picture(w),
             story=b.frame("opens", OPENS).format(**slots),
             feedback=right_wrong("That's right.", f"Actually, {child.name} wants {an(child.desires[-1])} now."))
    surprised = got == child.desires[-1]  # she heard 'sorry' and expected not to get the toy she asked for last
    b.yes_no("surprised", b.wording(SURPRISED).format(**slots), surprised,
             why=(f"Because {child.sub} thought {shopper.name} knew {child.sub} wanted {an(got)}, so after the sorry "
                  f"{child.sub} did not expect to get {an(got)}." if surprised else
                  f"Because after the sorry {child.sub} expected not to get {an(child.desires[-1])}, and {child.sub} "
                  "did not."),
             rubric=Rubric(
                 key_inference=(f"{child.name} did not expect to get {an(got)}: {child.sub} thought {shopper.name} "
                                f"knew about the change, so the sorry meant it could not be found." if surprised else
                                f"{child.name} thought {shopper.name} knew about the change, so the sorry told "
                                f"{child.obj} {shopper.sub} could not get {an(child.desires[-1])}, and {child.sub} "
                                "did not."),
                 false_inferences=[f"{child.name} knows {shopper.name} did not hear {child.obj}",
                                   f"{child.name} did not want {an(got)}" if surprised else
                                   f"{child.name} got {an(child.desires[-1])}"]),
             feedback=right_wrong("That's right.", "Look at what came out of the bag."))
    b.facts.update(log=w.record(), parent_thinks=thinks, child_wants=child.desires[-1], got=got, shopper=shopper.id,
                   heard=q.id, missed=p.id)
