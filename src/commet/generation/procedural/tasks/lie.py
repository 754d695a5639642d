"""Deception versus a false statement: the paper's Table 13 sticker item.

A prize lies on the teacher's desk; the teacher steps out. One of two children (the speaker and
another child) goes out to get a book; the other takes the prize and hides it. One of two
children (the owner and a classmate) stands at the door and sees it; the other is out in the
playground. The teacher asks the speaker, who says the wind must have blown it away; later the
other child tells the owner the same. In the booklet's test item the speaker took it (a lie),
the other child repeats it believing it (a false statement, not a lie) and the owner, who saw
nothing, thinks it is lost (sad). In the control the other child took it: the speaker's guess is
honest, the other child lies, and the owner, who saw it, knows it is safe. Both cells are told
with the same words, the characters swapped between the slots; every yes/no answer is balanced
by them. At the end the claim comes true: was the first statement a lie when it was said?
"""

from __future__ import annotations

from commet.format.model import Rubric
from commet.generation.procedural import lexicon as lex
from commet.generation.procedural.builder import Cast, StoryBuilder, an, right_wrong
from commet.generation.procedural.world import Place, Thing, World

READY = (
    "{t.name} has {a_prize} ready for {v.name}, {reason}; it lies on the desk.",
    "On {t.name}'s desk lies {a_prize}, a prize for {v.name}, {reason}.",
    "{t.name} puts {a_prize} on the desk for {v.name}, {reason}.",
    "There is {a_prize} on the desk: {t.name} is giving it to {v.name}, {reason}.",
    "{v.name}, {reason}, is to get {a_prize}; {t.name} leaves it on the desk.",
)
STEPS_OUT = (
    "{t.name} steps out to fetch the register.", "{t.name} goes out to the office for a moment.",
    "{t.name} leaves the room to make a phone call.", "{t.name} pops out to the staff room.",
    "{t.name} goes next door to borrow some chalk.",
)
TAKES = (
    "{p.name} goes out to get a book, and {q.name} takes the {prize} and hides it in a pocket.",
    "While {p.name} is out getting a book, {q.name} slips the {prize} into a pocket.",
    "{p.name} runs off to the library, and {q.name} takes the {prize} and puts it in a pocket.",
    "As soon as {p.name} has gone out for a book, {q.name} grabs the {prize} and hides it in a pocket.",
    "{p.name} leaves to fetch a book; meanwhile {q.name} pockets the {prize}.",
)
#: The same, the taker named first (which of the two a sentence names first is a balanced nuisance choice).
TAKES_TAKER_FIRST = (
    "{q.name} waits until {p.name} goes out to get a book, then takes the {prize} and hides it in a pocket.",
    "{q.name} slips the {prize} into a pocket while {p.name} is out getting a book.",
    "{q.name} stays behind when {p.name} runs off to the library, takes the {prize} and puts it in a pocket.",
    "As soon as {p.name} has gone out for a book, {q.name} grabs the {prize} and hides it in a pocket.",
    "{q.name} pockets the {prize} the moment {p.name} leaves to fetch a book.",
)
TAKES_PICTURE = (
    "{s.name} wears {s_shirt} top and {o.name} {o_shirt} one. One of the two goes out to get a book, and the other "
    "takes the {prize} and hides it in a pocket; the picture shows who stayed.",
    "{s.name} is in {s_shirt} top, {o.name} in {o_shirt} one. One of them leaves for the library; the one who stays "
    "pockets the {prize}. The picture shows who stayed.",
    "{s.name} has {s_shirt} top on and {o.name} {o_shirt} one. While one of them is out getting a book, the other "
    "slips the {prize} into a pocket: the picture shows which one.",
    "{s.name} wears {s_shirt} top; {o.name} wears {o_shirt} one. One goes out for a book, the other grabs the "
    "{prize} and hides it. Who stayed is in the picture.",
    "{s.name}'s top is {s_col} and {o.name}'s is {o_col}. One of the two fetches a book, and the other hides the "
    "{prize} in a pocket; the picture shows who stayed.",
)
#: Who sees the prize taken, without naming the taker again (each slot is named once in every cell).
SEES = (
    "{w1.name}, standing at the door, sees who takes it; {w2.name} is out in the playground and sees nothing.",
    "From the door, {w1.name} sees it happen; {w2.name} is outside on the swings and misses it.",
    "{w1.name} is just coming in at the door and sees the whole thing, but {w2.name} is still out in the "
    "playground.",
    "At the door, {w1.name} watches it all; {w2.name}, out in the playground, sees none of it.",
    "{w1.name} sees it all from the door; {w2.name} is away in the playground.",
)
SEES_OUT_FIRST = (
    "{w2.name} is out in the playground and sees nothing, but {w1.name}, standing at the door, sees who takes it.",
    "{w2.name} is outside on the swings and misses it; from the door, {w1.name} sees it happen.",
    "{w2.name} is still out in the playground, but {w1.name} is just coming in at the door and sees the whole "
    "thing.",
    "Out in the playground, {w2.name} sees none of it; at the door, {w1.name} watches it all.",
    "{w2.name} is away in the playground; {w1.name} sees it all from the door.",
)
SEES_PICTURE = (
    "{v.name} and {c.name}: one of them is standing at the door, the other is out in the playground. The picture "
    "shows which.",
    "One of {v.name} and {c.name} is at the door and the other outside; the picture shows who is at the door.",
    "Either {v.name} or {c.name} stands at the door while the other plays outside; the picture shows which.",
    "At the door stands {v.name} or {c.name}, the other being out in the playground: see the picture.",
    "{v.name} and {c.name} are not both there: one is at the door, one in the playground, as the picture shows.",
)
ASKS = (
    "Back at the desk, {t.name} finds it bare and asks {s.name}, 'What happened to the {prize}?' {s.name} answers, "
    "'{excuse}'",
    "When {t.name} comes back, the {prize} is gone. '{s.name}, where is the {prize}?' {s.name} says, '{excuse}'",
    "{t.name} returns, sees the empty desk and turns to {s.name}: 'Where did the {prize} go?' '{excuse}' says "
    "{s.name}.",
    "Back in the room, {t.name} asks {s.name} about the missing {prize}, and {s.name} replies, '{excuse}'",
    "{t.name} comes back to an empty desk and asks {s.name} what happened. '{excuse}' answers {s.name}.",
)
REPEATS = (
    "At the end of the day {v.name} asks about the prize, and {o.name} says, 'Bad news. {excuse}'",
    "Later {v.name} comes for the prize. {o.name} tells {v.obj}, 'Sorry, {excuse_low}'",
    "When {v.name} asks where the prize is, {o.name} answers, '{excuse}'",
    "At home time {v.name} wants the prize, and {o.name} says to {v.obj}, 'It is gone. {excuse}'",
    "{v.name} asks {o.name} about the prize later, and {o.name} says, '{excuse}'",
)
#: The end, told without naming who took it (both cells name everyone equally often).
REAL_LOSS = (
    "Feeling guilty, the one who took it slips the {prize} back onto the desk, but {later}, so this time it really "
    "is lost.",
    "Feeling bad, the child who took it puts the {prize} back on the desk; then {later}, and now it really is gone.",
    "Whoever took it secretly returns the {prize} to the desk. Just then {later}: this time it is truly lost.",
    "Later the {prize} is put back on the desk by the one who took it, but {later}, and it really is lost now.",
    "The one who took the {prize} puts it back on the desk, feeling guilty; sadly, {later}, so now it really is "
    "gone.",
)
#: (what the speaker claims happened, a later event that makes it come true).
EXCUSES: tuple[tuple[str, str], ...] = (
    ("The wind must have blown it out of the window.", "a big gust of wind blows it out of the open window"),
    ("The class cat must have carried it off.", "the class cat jumps up, grabs it and runs outside with it"),
    ("It must have fallen in the bin, and the bin was emptied.",
     "it slips off the desk into the bin just as the bin is taken out and emptied"),
    ("A bird must have flown in and taken it.", "a bird flies in through the window, picks it up and flies away"),
    ("The cleaner must have swept it away.", "the cleaner comes in, sweeps the desk and carries it away"),
)
LYING = ("Is {s.name} lying?", "Is {s.name} telling a lie?", "Is what {s.name} says a lie?")
KNOWS = ("Does {x.name} know where the {prize} really is?", "Does {x.name} know where the {prize} is right now?",
         "Does {x.name} know who has the {prize}?")
LYING_WHY = ("Is {o.name} lying? Why or why not?", "Is {o.name} telling a lie? Why or why not?",
             "Is what {o.name} says a lie? Why or why not?")
FEEL = ("How does {v.name} feel about the {prize}", "How does {v.name} feel now about the prize",
        "How is {v.name} feeling about the {prize}")
WHY_FEEL = ("The {prize} is safe in a pocket. Why does {v.name} feel that way?",
            "The {prize} is really in a pocket, not lost. Why does {v.name} feel like that?",
            "The {prize} is safe in a child's pocket. What makes {v.name} feel that way?")
BACK_THEN = ("Think back to what {s.name} told {t.name}. Was that a lie? Why or why not?",
             "When {s.name} answered {t.name} earlier, was {s.sub} lying? Why or why not?",
             "Was {s.name} lying when {s.sub} answered {t.name}? Why or why not?")


def lie_vs_false_statement(b: StoryBuilder, image_dependent: bool) -> None:
    cast = Cast(b)
    w = World(b.pick("room", ("classroom", "art room", "library")))
    teacher = cast.adult(0.88, teacher=True)
    (speaker, other), (victim, mate) = cast.pair(0.29, 0.69), cast.pair(0.16, 0.16)  # spots balanced below
    door = Place("door", "door", "brown", 0.04, name="the door")
    desk = Place("desk", "table", "brown", 0.5, name="the desk")
    outside = Place("outside", "offstage", "brown", 2.0, name="outside")
    prize_word = b.pick("prize", lex.PRIZES)
    prize = Thing("prize", lex.STICKER, b.pick("colour: the prize", ("yellow", "orange", "pink", "green")), desk.id, owner=victim.id,
                  noun_override=prize_word)
    victim.desires.append(prize.id)
    lies = b.role(b.cell("speaker took it", 2) == 1, "the other child took it: the speaker guesses honestly, the other lies")
    (p, q), (w1, w2) = ((other, speaker), (mate, victim)) if lies else ((speaker, other), (victim, mate))
    b.seat("speaker and other", [speaker, other], (0.29, 0.69))  # no spot tells the taker: only the shirts do
    mate.present, mate.at = w1 is mate, "" if w1 is mate else "playground"  # the classmate: at the door or out
    for item in (teacher, speaker, other, victim, mate, door, desk, outside, prize):
        w.add(item)
    excuse, later = b.pick("excuse", EXCUSES)
    slots = {"t": teacher, "s": speaker, "o": other, "v": victim, "c": mate, "p": p, "q": q, "w1": w1, "w2": w2,
             "prize": prize_word, "a_prize": an(prize.describe()), "reason": b.pick("prize reason", lex.PRIZE_REASONS),
             "excuse": excuse, "excuse_low": excuse[0].lower() + excuse[1:], "later": later,
             "s_shirt": an(speaker.shirt), "o_shirt": an(other.shirt), "s_col": speaker.shirt,
             "o_col": other.shirt}
    text = [b.frame("ready", READY).format(**slots), b.frame("steps out", STEPS_OUT).format(**slots)]
    if image_dependent:
        text += [b.frame("takes", TAKES_PICTURE).format(**slots), b.frame("sees", SEES_PICTURE).format(**slots)]
    else:
        taker_first, out_first = b.flip("taker named first"), b.flip("child out named first")
        text += [b.frame("takes", TAKES_TAKER_FIRST if taker_first else TAKES).format(**slots),
                 b.frame("sees", SEES_OUT_FIRST if out_first else SEES).format(**slots)]
    text.append(b.frame("asks", ASKS).format(**slots))
    w.leave(teacher.id, "office")
    w.leave(p.id, "library")
    if w2 is victim:
        w.leave(victim.id, "playground")
    w.hold(q.id, prize.id)
    image = b.picture(w)  # who is in the room when it goes: the taker, and whoever stands at the door
    w.take(q.id, prize.id)
    if w1 is mate:
        w.leave(mate.id, "home")
    w.enter(p.id)
    if not victim.present:
        w.enter(victim.id)
    w.enter(teacher.id)
    if not lies:
        w.guess(speaker.id, prize.id, outside.id)  # sees the empty desk and the open window: an honest guess
    said = w.say_where(speaker.id, prize.id, outside.id)
    knows = w.belief(speaker.id, prize.id) == prize.location
    b.yes_no("speaker lying", b.wording(LYING).format(**slots), w.is_lie(said), story=" ".join(text), image=image)
    b.yes_no("speaker knows", b.wording(KNOWS).format(x=speaker, **slots), knows,
             feedback=right_wrong("That's right.", f"Think about what {speaker.name} knew when speaking."))
    repeat = w.say_where(other.id, prize.id, outside.id)
    other_lies = w.is_lie(repeat)
    b.yes_no("other lying", b.wording(LYING_WHY).format(**slots), other_lies,
             why=(f"Because {other.sub} took it {other.refl}, so {other.sub} knows where it is." if other_lies else
                  f"Because {other.sub} does not know {speaker.name} has it; {other.sub} believes what "
                  f"{speaker.name} said."),
             rubric=Rubric(key_inference=(f"{other.name} took it and says otherwise, so it is a lie." if other_lies else
                                          f"{other.name} believes what {speaker.name} said, so it is a false "
                                          "statement, not a lie."),
                           false_inferences=["saying something false is always lying" if not other_lies else
                                             "it is not a lie because it was said to a friend",
                                             f"{other.name} knows {speaker.name} has it" if not other_lies else
                                             f"{other.name} believes the {prize_word} is outside"]),
             story=b.frame("repeats", REPEATS).format(**slots), image=b.picture(w),
             feedback=right_wrong("That's right.", "Think again about who took it."))
    b.yes_no("other knows", b.wording(KNOWS).format(x=other, **slots), w.belief(other.id, prize.id) == prize.location)
    lost = w.believes_lost(victim.id, prize.id)
    feeling = "sad" if lost else "fine"
    b.choose("owner feels", b.wording(FEEL).format(**slots), ["sad", "fine"], feeling,
             feedback=right_wrong("That's right.", f"Think about what {other.name} knows."))
    b.why("why feels", b.wording(WHY_FEEL).format(**slots),
          (f"Because {victim.sub} thinks the {prize_word} is lost for good." if lost else
           f"Because {victim.sub} saw {q.name} take it, so {victim.sub} knows it is not lost."),
          (f"{victim.name} believes what {other.name} said, so {victim.sub} thinks it is gone." if lost else
           f"{victim.name} saw who took it, so {victim.sub} knows it is safe."),
          [f"{victim.name} knows where the {prize_word} is" if lost else f"{victim.name} thinks the {prize_word} is lost",
           f"{victim.name} feels what is true, not what {victim.sub} believes"],
          feedback=right_wrong("That's right.", f"Think about what {victim.name} saw."))
    w.put(q.id, prize.id, desk.id)
    w.put("chance", prize.id, outside.id, kind="move")
    q.expression = "sad"
    b.yes_no("earlier lie", b.wording(BACK_THEN).format(**slots), w.is_lie(said),
             why=(f"Because when {speaker.sub} said it, the {prize_word} was really in {speaker.det} pocket." if lies
                  else f"Because {speaker.sub} believed it when {speaker.sub} said it."),
             rubric=Rubric(key_inference="A lie depends on what the speaker believed when speaking: " + (
                 f"{speaker.name} knew the {prize_word} was in {speaker.det} pocket." if lies else
                 f"{speaker.name} believed what {speaker.sub} said."),
                 false_inferences=["it came true later, so it was not a lie" if lies else
                                   "it was false when said, so it was a lie"]),
             story=b.frame("real loss", REAL_LOSS).format(**slots), image=b.picture(w),
             feedback=right_wrong("That's right.", f"Remember what {victim.name} saw."))
    b.facts.update(log=w.record(), speaker=speaker.name, taker=q.name, first_statement_lie=w.is_lie(said),
                   second_statement_lie=other_lies, victim_thinks_lost=lost, witness=w1.id)
