"""Moral judgement with false and with true belief (the booklet's minimal pair).

Two papers that look just the same go in two boxes, one child's each. A grown-up tidying up
(no intent against anyone) swaps them round while one child is out and the other sees it. The
child who owns the first box then spoils the paper in it: by mistake when she was the one out
(false belief: moral_false_belief's test item) or knowingly when she saw the swap (true belief:
moral_true_belief's test item). Each task has the other as its control, told with the same
words (the two children swapped between the slots "is out" and "sees it"), and the pair's
members with one index differ in that one fact. The image-dependent variant leaves who was in
the room to the picture.
"""

from __future__ import annotations

from commet.format.model import Rubric
from commet.generation.procedural import lexicon as lex
from commet.generation.procedural.builder import Cast, StoryBuilder, right_wrong
from commet.generation.procedural.tasks.common import (
    TIDY_REASONS,
    away_and_stays,
    fill,
    lead_order,
    leaving,
    two_containers,
)
from commet.generation.procedural.world import Agent, Place, Thing, World

#: Papers that look the same: (the actor's, the victim's, what the victim's is called when made anew, the harm,
#: the harm done, how the paper looks after it).
HARMS: tuple[tuple[str, str, str, str, str, str], ...] = (
    ("craft card", "birthday card for {det} grandma", "card", "cuts it into little pieces", "cut it into pieces",
     "cut"),
    ("spare paper", "letter to {det} pen friend", "letter", "folds it into a paper plane", "folded it into a plane",
     "folded"),
    ("practice sheet", "best painting", "painting", "paints thick blue paint all over it", "painted over it",
     "painted"),
    ("scrap card", "invitation to {det} party", "invitation", "scribbles all over it to test the pens",
     "scribbled all over it", "scribbled"),
    ("old worksheet", "certificate from school", "certificate", "crumples it up into a ball", "crumpled it up",
     "crumpled"),
    ("drawing paper", "drawing of {det} family", "drawing", "glues glitter all over it", "covered it in glue",
     "glitter"),
    ("paper for snowflakes", "poem for the class book", "poem", "cuts snowflake holes into it", "cut holes into it",
     "holes"),
    ("scrap paper", "picture for {det} dad", "picture", "crumples it up into a ball", "crumpled it up", "crumpled"),
)
PUTS = (
    "{c1.name} puts {c1.det} {w1} in {p1}, and {c2.name} puts {c2.det} {w2} in {p2}; the two look just the same, "
    "the same size and the same {colour} colour.",
    "{c1.name} keeps {c1.det} {w1} in {p1} and {c2.name} keeps {c2.det} {w2} in {p2}. They look exactly alike: "
    "both {colour}, both the same size.",
    "{c1.name}'s {w1} goes in {p1}, {c2.name}'s {w2} in {p2}; you could not tell them apart, the same size and the "
    "same {colour}.",
    "First {c1.name} puts {c1.det} {w1} in {p1}, then {c2.name} puts {c2.det} {w2} in {p2}. The two are the same "
    "{colour} and the same size.",
    "{c1.name} tucks {c1.det} {w1} into {p1}, and {c2.name} tucks {c2.det} {w2} into {p2}; both are {colour} and "
    "just the same size.",
)
#: The swap, naming no child (who is away and who stays is told just before, see ``away_and_stays``).
SWAP = (
    "Then {h.name} tidies up {why} and swaps the two papers round; the child who stayed sees it happen.",
    "Now {h.name} comes in {why} and puts each paper where the other one was, in full view of the child who stayed.",
    "{h.name} uses the time to tidy up {why} and swaps the two papers over, while the child who stayed watches.",
    "{h.name} mixes the papers up {why}, so that each ends up in the other's place; the child who stayed sees it all.",
    "Then {h.name}, {why}, takes out the two papers and puts each back where the other was, and the child who stayed "
    "watches.",
)
#: The picture variant's swap, told sentence for sentence as ``SWAP_PICTURE_BACK`` (the same frame index): where the
#: undone story tells the swap both see, this one tells something the grown-up does that both see, so that the two
#: have as many sentences and pronouns whatever the frame (counts a reader of sizes would otherwise read the fact off).
SWAP_PICTURE = (
    "{a.name} wears {a_shirt} top and {v.name} {v_shirt} one. {h.name} waters all the flowers while both watch. Then one "
    "of the two goes out for a while, and {h.name} tidies up {why} and swaps the two papers round. The picture shows "
    "who is in the room then.",
    "{a.name} is in {a_shirt} top, {v.name} in {v_shirt} one. With both of them watching, {h.name} opens a window "
    "wide. One of them leaves the room for a bit; meanwhile {h.name}, {why}, takes them out and puts each paper where "
    "the other was. The picture shows who stayed.",
    "{a.name} has {a_shirt} top on and {v.name} {v_shirt} one. Both see {h.name} sweep up some crumbs. Later one of "
    "the two steps out, and {h.name} swaps the two papers over {why}, moving them one at a time. The picture shows "
    "who is there while {h.sub} does it.",
    "{a.name} wears {a_shirt} top; {v.name} wears {v_shirt} one. {h.name} folds up a blanket, and both children see "
    "it. Then one of them goes out for a while, and {h.name} mixes the papers up {why}. Who is in the room then is in "
    "the picture.",
    "{a.name}'s top is {a_col} and {v.name}'s is {v_col}. Both watch {h.name} hang some pictures up on the wall. "
    "While one of the two is out, {h.name} tidies up {why}, picks up the two papers and swaps them round; the "
    "picture shows who is in the room.",
)
#: The swap both children see, in the stories where it is later undone (``n1`` and ``n2`` in the story's lead order).
SWAP_SEEN = (
    "Then {h.name} tidies up {why} and swaps the two papers round; {n1.name} and {n2.name} both see it happen.",
    "Now {h.name} comes in {why} and puts each paper where the other one was, in full view of both {n1.name} and "
    "{n2.name}.",
    "{h.name} uses the time to tidy up {why} and swaps the two papers over, while {n1.name} and {n2.name} both watch.",
    "{h.name} mixes the papers up {why}, so that each ends up in the other's place; {n1.name} and {n2.name} both see "
    "it all.",
    "Then {h.name}, {why}, takes out the two papers and puts each back where the other was, and {n1.name} and "
    "{n2.name} both watch.",
)
#: Something the grown-up does that both children see, in the stories where the swap is not undone: it names the
#: grown-up and both children just where the swap both see does, so that who is named next to whom does not tell
#: whether the papers were swapped back.
SEEN = (
    "Then {h.name} comes in and waters each of the flowers, while {n1.name} and {n2.name} both watch.",
    "{h.name} opens a window to let some fresh air in, and {n1.name} and {n2.name} both see it.",
    "{h.name} sweeps up a few crumbs, in full view of both {n1.name} and {n2.name}.",
    "Then {h.name} hangs two pictures on the wall by the window; {n1.name} and {n2.name} both see it happen.",
    "{h.name} folds up a blanket neatly, while {n1.name} and {n2.name} both watch.",
)
#: The swap undone while one child is away, naming no child.
SWAP_BACK = (
    "Then {h.name} thinks again and swaps the two papers back, while the child who stayed watches.",
    "{h.name} thinks better of it and puts each paper back, and the child who stayed sees it.",
    "{h.name} swaps the papers back again, in full view of the child who stayed.",
    "After a while {h.name} puts the two papers back as before; the child who stayed sees it happen.",
    "Then {h.name} quickly undoes the swap, while the child who stayed watches.",
)
SWAP_PICTURE_BACK = (
    "{a.name} wears {a_shirt} top and {v.name} {v_shirt} one. {h.name} tidies up {why} and swaps the two papers "
    "round while both watch. Then one of the two goes out for a while, and {h.name} swaps the papers back. The "
    "picture shows who is in the room then.",
    "{a.name} is in {a_shirt} top, {v.name} in {v_shirt} one. With both of them watching, {h.name}, {why}, puts each "
    "paper where the other was. One of them leaves the room for a bit; meanwhile {h.name} puts them back where each one was "
    "before. The picture shows who stayed.",
    "{a.name} has {a_shirt} top on and {v.name} {v_shirt} one. Both see {h.name} swap the two papers over {why}. "
    "Later one of the two steps out, and {h.name} quietly swaps them back again, one paper after the "
    "other. The picture shows who is there while {h.sub} "
    "does it.",
    "{a.name} wears {a_shirt} top; {v.name} wears {v_shirt} one. {h.name} mixes the papers up {why}, and both "
    "children see it. Then one of them goes out for a while, and {h.name} quickly undoes the swap. Who is in the room then "
    "is in the picture.",
    "{a.name}'s top is {a_col} and {v.name}'s is {v_col}. Both watch {h.name} tidy up {why} and swap the papers "
    "round. While one of the two is out, {h.name} picks up both papers one by one and "
    "swaps them back; the picture shows who is in the room.",
)
LATER = (
    "Later, while {v.name} is out at play, {a.name} wants {a.det} {w1}.",
    "Later on, with {v.name} out at play, {a.name} goes to get {a.det} {w1}.",
    "Later, when {v.name} has gone out to play, {a.name} needs {a.det} {w1}.",
    "A while later {v.name} is out playing, and {a.name} wants {a.det} {w1}.",
    "Later, {v.name} goes out to play, and {a.name} would like {a.det} {w1}.",
)
DEED = (
    "{a.name} opens {opened}, takes out the paper inside and {does}.",
    "{a.name} goes to {opened}, takes the paper out and {does}.",
    "{a.name} takes the paper from {opened} and {does}.",
    "Out of {opened} comes the paper, and {a.name} {does}.",
    "{a.name} reaches into {opened}, pulls out the paper and {does}.",
)
FINDS = (
    "It was {v.name}'s {w2}! {v.name} comes back and sees it.",
    "But that was {v.name}'s {w2}. When {v.name} comes back, {v.sub} sees it.",
    "It was {v.name}'s {w2}, and {v.name}, coming back in, sees what happened.",
    "That paper was {v.name}'s {w2}. Soon {v.name} is back and sees it.",
    "It was {v.name}'s {w2}! Back from play, {v.name} sees it.",
)
CRIES = (
    "It was {v.name}'s {w2}! {v.name} comes back, sees it and starts to cry.",
    "But that was {v.name}'s {w2}. {v.name} comes back, sees it and bursts into tears.",
    "It was {v.name}'s {w2}. Coming back in, {v.name} sees it and cries.",
    "That paper was {v.name}'s {w2}! {v.name} is back, sees it and starts crying.",
    "It was {v.name}'s {w2}, and when {v.name} comes back and sees it, {v.sub} cries.",
)
UNDONE = (
    "{h.name} helps {v.name} make a new {short}, and {v.name} is happy again.",
    "{h.name} and {v.name} make a new {short} together, and {v.name} smiles again.",
    "With {h.name}'s help, {v.name} makes a brand-new {short} and cheers up.",
    "{v.name} makes a new {short} with {h.name}, and soon {v.sub} is happy again.",
    "{h.name} sits down with {v.name} to make a new {short}; {v.name} is happy again.",
)
LOOK = ("{a.name} wants {a.det} {w1}. Where will {a.sub} look for it", "Where will {a.name} look for {a.det} {w1}",
        "Where will {a.name} search for {a.det} {w1}")
WHY_LOOK = ("Why will {a.sub} look there?", "Why does {a.name} look there?", "What makes {a.name} look there?")
FEEL = ("How does {v.name} feel?", "How is {v.name} feeling now?", "How does {v.name} feel when {v.sub} sees it?")
NAUGHTY = ("Is {a.name} naughty?", "Was {a.name} naughty?", "Is {a.name} being naughty?")
TROUBLE = ("Should {a.name} be in trouble?", "Should {a.name} get into trouble?", "Should {a.name} be told off?")
WHY = ("Why?", "Why do you think so?", "What makes you say that?")
#: The reality check asks after either paper (balanced): each child's paper is named from its own pool (the
#: actor's is spare, the victim's precious), so always asking after one would let "the box next to the precious
#: paper's name" answer it without following the swap.
OWN_NOW = ("Where is {a.name}'s own {w1} now", "Where is {a.name}'s {w1} now", "Where can {a.name}'s {w1} be found now")
THEIRS_NOW = ("Where is {v.name}'s {w2} now", "Where can {v.name}'s {w2} be found now",
              "Where has {v.name}'s {w2} ended up")
SAW = ("Did {a.name} see {h.name} swap the papers?", "Did {a.name} watch {h.name} swap the two papers?",
       "Was {a.name} there to see {h.name} swap the papers?")
SAW_BACK = ("Did {a.name} see {h.name} swap the papers back?", "Did {a.name} watch {h.name} put the papers back?",
            "Was {a.name} there to see {h.name} swap the papers back?")
CRYING = ("Why is {v.name} crying?", "Why does {v.name} cry?", "What makes {v.name} cry?")
STILL = ("Should {a.name} still be in trouble? Why or why not?", "Should {a.name} still be told off? Why or why not?",
         "Is {a.name} still in trouble? Why or why not?")


def _moral(b: StoryBuilder, image_dependent: bool, true_belief: bool) -> None:
    cast = Cast(b)
    w = World(b.pick("room", ("classroom", "playroom", "living room", "art room", "bedroom")))
    actor, victim = cast.pair(0.06, 0.2)
    helper = cast.adult(0.9)
    for agent in (actor, victim, helper):
        w.add(agent)
    # the cell (whether the actor knew) crossed with whether the swap is undone: both children see the swap, then one
    # is away while it is swapped back, so where each paper ends up (the reality check's answer) is no fixed
    # function of the story
    knowing, back = b.crossed_cell("knowing", 2, "the swap is undone")
    knew = (knowing == 1) != true_belief  # the pair's members with one index always differ in this fact
    b.seat("actor and victim", [actor, victim], (0.06, 0.2))  # no spot tells who saw the swap: only the shirts do
    first, second = two_containers(b, w, (0.42, 0.62))
    own_word, victim_word, short, does, did, state = b.pick("harm", HARMS)
    victim_word = fill(victim_word, victim)
    colour = b.pick("colour: the papers", ("yellow", "blue", "green", "pink"))
    w.add(Place("hands", "offstage", "brown", -5.0, name="in hand"))
    own = Thing("own", lex.CARD, colour, "hands", owner=actor.id, noun_override=own_word)
    theirs = Thing("theirs", lex.CARD, colour, "hands", owner=victim.id, noun_override=victim_word)
    w.add(own)
    w.add(theirs)
    b.role(knew == true_belief, "the actor saw the swap" if not true_belief else "the actor was away")
    p, q = (victim, actor) if knew else (actor, victim)
    _, away, to = leaving(b, p)  # "while she is away" tells the leaving: each slot is named once
    why = b.pick("tidy reason", TIDY_REASONS)
    names = lead_order(b, (actor, victim))  # who is named first, in every sentence that names both
    (c1, w1, p1), (c2, w2, p2) = b.arrange("puts", [(actor, own_word, first), (victim, victim_word, second)])
    slots = {"a": actor, "v": victim, "h": helper, "p": p, "q": q, "w1": own_word, "w2": victim_word,
             "p1": first.name, "p2": second.name, "away": away, "why": why, "short": short, "does": does,
             "a_shirt": f"a{'n' if actor.shirt[0] in 'aeiou' else ''} {actor.shirt}",
             "v_shirt": f"a{'n' if victim.shirt[0] in 'aeiou' else ''} {victim.shirt}",
             "a_col": actor.shirt, "v_col": victim.shirt}
    text = [f"{names[0].name}, {names[1].name} and {helper.name} are in the {w.room}.",
            b.frame("puts", PUTS).format(c1=c1, c2=c2, w1=w1, w2=w2, p1=p1.name, p2=p2.name, colour=colour)]
    if image_dependent:
        text.append(b.frame("swap", SWAP_PICTURE_BACK if back else SWAP_PICTURE).format(**slots))
    elif back:
        text += [b.frame("swap", SWAP_SEEN).format(n1=names[0], n2=names[1], **slots),
                 away_and_stays(b, p, q, away, lead=names[0]), b.frame("seen or back", SWAP_BACK).format(**slots)]
    else:
        text += [b.frame("seen or back", SEEN).format(n1=names[0], n2=names[1], **slots),
                 away_and_stays(b, p, q, away, lead=names[0]), b.frame("swap", SWAP).format(**slots)]
    text.append(b.frame("later", LATER).format(**slots))
    story = " ".join(text)
    w.put(actor.id, own.id, first.id)
    w.put(victim.id, theirs.id, second.id)
    w.walk(helper.id, 0.8)
    if back:  # the swap both children see
        w.hold(helper.id, own.id)
        w.put(helper.id, theirs.id, first.id, kind="move")
        w.put(helper.id, own.id, second.id, kind="move")
    w.leave(p.id, to)
    # the (last) swap, half done: the actor's paper in the helper's hand; who is in the room shows who knows
    w.hold(helper.id, own.id)
    w.put(helper.id, theirs.id, second.id if back else first.id, kind="move")
    swap_picture = b.picture(w)
    w.put(helper.id, own.id, first.id if back else second.id, kind="move")
    after_swap = {own.id: w.place_name(own.location), theirs.id: w.place_name(theirs.location)}
    opened = second if back else first  # where the victim's paper is now, and the actor's was when last seen there
    slots["opened"] = opened.name
    w.walk(helper.id, 0.9)
    if not knew:
        w.enter(actor.id)
    w.leave(victim.id, "outside")  # out at play (already out when she was the one away)
    harm = w.harm(actor.id, theirs.id, state)
    assert harm.knowing == knew and theirs.location == opened.id
    w.hold(actor.id, theirs.id)  # the spoiled paper, out of the box, in the actor's hand
    w.enter(victim.id)
    victim.expression = "crying"
    deed = b.frame("deed", DEED).format(**slots)
    places = [f"in {first.name}", f"in {second.name}"]
    naughty = w.naughty(harm)
    if not true_belief:  # moral_false_belief, the booklet's order
        b.choose("look", b.wording(LOOK).format(**slots), places, f"in {w.place_name(w.belief(actor.id, own.id))}",
                 story=story, image=swap_picture)
        reason, key_inference, wrong = _reason(actor, helper, own_word, (first, second), knew, back)
        b.why("why look", b.wording(WHY_LOOK).format(**slots), reason, key_inference,
              [wrong if knew else f"{actor.name} wants to spoil {victim.name}'s {victim_word}",
               "the papers look different"])
        # the victim's feeling is no belief to infer: the story says the victim cries (and the picture shows it), in
        # every cell alike. The booklet asks it to check the story was followed; it is marked a control, so that
        # the audit never gates on it (a reader that answers "sad" unread is right by design), and a story is
        # right only if it is answered right too (it can lower a story's score, never raise it)
        b.turn("feels", b.wording(FEEL).format(**slots), "sad",
               story=f"{deed} {b.frame('finds', FINDS).format(**slots)}", image=b.picture(w),
               control="comprehension: the story says the victim cries")
    else:  # moral_true_belief
        asked = own if b.flip("reality asks after") else theirs
        b.choose("reality", b.wording(OWN_NOW if asked is own else THEIRS_NOW).format(**slots), places,
                 f"in {after_swap[asked.id]}", story=story, image=swap_picture)
        b.yes_no("saw swap", b.wording(SAW_BACK if back else SAW).format(**slots), knew,
                 feedback=right_wrong("That's right.", f"Not quite: {actor.name}'s {own_word} is in "
                                      f"{after_swap[own.id]} now."))
        # who saw the (last) swap, the two named in the story's lead order (never the one who saw it first)
        swapped = "swapped them back" if back else "swapped them"
        slot = (f"{q.name} was in the room when {helper.name} {swapped}, and {p.name} was {away}."
                if names[0] is q else f"{p.name} was {away} when {helper.name} {swapped}, and {q.name} was in the room.")
        b.why("why crying", b.wording(CRYING).format(**slots),
              f"Because {actor.name} took {victim.det} {victim_word} and {did}.",
              f"{actor.name} spoiled {victim.name}'s {victim_word}, which {victim.name} cared about.",
              [f"{victim.name} spoiled it {victim.refl}", f"{victim.name} lost {victim.det} {victim_word}"],
              story=f"{deed} {b.frame('cries', CRIES).format(**slots)}", image=b.picture(w),
              feedback=right_wrong(f"Yes: {slot}", f"Look again: {slot}"))
    b.yes_no("naughty", b.wording(NAUGHTY).format(**slots), naughty)
    b.yes_no("trouble", b.wording(TROUBLE).format(**slots), naughty)
    know_why = (f"{actor.sub} knew it was {victim.name}'s {victim_word} and spoiled it anyway" if knew else
                f"{actor.sub} thought it was {actor.det} own {own_word}; {actor.sub} did not know {victim.name}'s "
                f"{victim_word} was in {opened.name}")
    key = (f"{actor.name} knew whose paper it was, so spoiling it was on purpose." if knew else
           f"{actor.name} did not know it was {victim.name}'s {victim_word}: it was an accident.")
    false = ([f"{actor.name} did it by accident", f"it is fine because it looked like {actor.own}"] if knew else
             [f"{actor.name} did it on purpose", f"{actor.name} should be punished because the paper was spoiled"])
    trouble_feedback = right_wrong("That's right.", f"Think about what {actor.name} knew.")
    if true_belief:
        w.add(Thing("new", lex.CARD, colour, victim.id, owner=victim.id, noun_override=f"new {short}", in_hand=True))
        victim.expression = "happy"
        b.yes_no("still trouble", b.wording(STILL).format(**slots), naughty, why=f"Because {know_why}.",
                 rubric=Rubric(key_inference=key, false_inferences=false), story=b.frame("undone", UNDONE).format(**slots), image=b.picture(w),
                 feedback=trouble_feedback)
    else:
        b.why("why", b.wording(WHY), f"Because {know_why}.", key, false, feedback=trouble_feedback)
    b.facts.update(log=w.record(), actor=actor.name, victim=victim.name, actor_knew=harm.knowing, naughty=naughty,
                   away=p.id, saw=q.id, swapped_back=back)


def _reason(actor: Agent, helper: Agent, word: str, places: tuple[Place, Place], knew: bool, back: bool
            ) -> tuple[str, str, str]:
    """Why the actor looks where they do (the answer), the rubric's key inference and its false inference: what the
    actor saw of the swap (and of the swap back, in the stories that undo it)."""
    a, h, first, second = actor, helper.name, places[0].name, places[1].name
    if back and knew:
        seen = f"saw {h} swap the papers and swap them back"
        return (f"Because {a.sub} {seen}, so {a.sub} knows {a.det} paper is back in {first}.",
                f"{a.name} {seen}, so {a.sub} knows {a.det} {word} is back in {first}.",
                f"{a.name} thinks it is still in {second}")
    if back:
        seen = f"saw {h} swap the papers but did not see {h} swap them back"
        return (f"Because {a.sub} {seen}, so {a.sub} thinks {a.det} paper is still in {second}.",
                f"{a.name} {seen}, so {a.sub} thinks {a.det} {word} is still in {second}.", "")
    if knew:
        return (f"Because {a.sub} saw {h} swap the papers, so {a.sub} knows {a.det} paper is in {second} now.",
                f"{a.name} saw {h} swap the papers, so {a.sub} knows {a.det} {word} is in {second}.",
                f"{a.name} thinks it is still in {first}")
    return (f"Because {a.sub} put it in {first} and did not see {h} swap the papers, so {a.sub} thinks it is still "
            f"there.", f"{a.name} did not see {h} swap the papers, so {a.sub} thinks {a.det} {word} is still in {first}.",
            "")


def moral_false_belief(b: StoryBuilder, image_dependent: bool) -> None:
    _moral(b, image_dependent, true_belief=False)


def moral_true_belief(b: StoryBuilder, image_dependent: bool) -> None:
    _moral(b, image_dependent, true_belief=True)
