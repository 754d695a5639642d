"""The booklet's structure per task, as data: what its test item is, the questions it asks in order, and
the controls that stand beside it.

Why: a task's accuracy measures the booklet item it is named after only if its test items ask
that item's questions, in that order, with that feedback. ``docs/tasks.md`` prints this table and
the tests check both the generated test items and the page against it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    """One question of the item: what it asks (``turn.meta["asks"]``), its type, and the feedback before it
    (``""`` none, ``"right/wrong"``, or ``"by answer"``: keyed to the previous answer)."""

    asks: str
    kind: str
    feedback: str = ""


@dataclass(frozen=True)
class Item:
    """The booklet item a task follows: its test item, its questions, and the controls generated beside it."""

    test: str
    steps: tuple[Step, ...]
    controls: tuple[str, ...] = ()


C, YN, W, OPEN = "choice", "yes/no", "why", "open"
RW, BY = "right/wrong", "by answer"

BOOKLET: dict[str, Item] = {
    "common_desire": Item("the child picks one of two things; the character likes the same one",
                          (Step("your pick", C), Step("their pick", C, BY))),
    "diverse_desire": Item("the child picks one of two things; the character likes the other one",
                           (Step("your pick", C), Step("their pick", C, BY))),
    "diverse_belief": Item("the child guesses where a lost thing is; the character thinks it is in the other place "
                           "and does not find it there",
                           (Step("your guess", C), Step("their look", C, BY), Step("reality", C, RW))),
    "reference_easy": Item("'I want that one': the speaker sees only one of two identical things",
                           (Step("meaning", C), Step("how know", W))),
    "false_belief_location": Item("the owner's toy is moved (or, in half, moved back) while the owner is away",
                                  (Step("look", C), Step("why look", W), Step("reality", C)),
                                  ("true belief: the owner stays and sees the last swap",)),
    "implicit_false_belief": Item("the owner's toy is moved (or, in half, moved back) while the owner is away; what will the owner do?",
                                  (Step("next", OPEN), Step("why next", W)),
                                  ("true belief: the owner stays and sees the last swap",)),
    "moral_false_belief": Item("the actor, who was away when the papers were swapped, spoils the other child's "
                               "paper by mistake",
                               (Step("look", C), Step("why look", W), Step("feels", OPEN), Step("naughty", YN),
                                Step("trouble", YN), Step("why", W, RW)),
                               ("the actor saw the swap",)),
    "expectation_false_belief": Item("a lunchbox that always holds one food is packed with another (or, in half, "
                                     "put right after a mix-up the child saw) while the child is away",
                                     (Step("reality", C), Step("thinks", C), Step("why thinks", W), Step("wants", C),
                                      Step("feels", C)),
                                     ("true belief: the child watches the last packing",)),
    "reference_hard_referent": Item("'the one next to the cup': speaker and listener each see a different cup",
                                    (Step("listener gives", C), Step("why gives", W),
                                     Step("speaker wants", C, RW), Step("how knew", W, RW)),
                                    ("both see the same landmark: the listener understands",)),
    "non_sarcasm": Item("the child gets the snack asked for and says 'Mmm, my favourite!' sincerely",
                        (Step("why says", W), Step("feels", C)),
                        ("sarcastic: the child got what the other child asked for",)),
    "reference_hard_perspective": Item("three sizes; the one asked for is hidden from the listener",
                                       (Step("listener gives", C), Step("why gives", W),
                                        Step("speaker wants", C, RW), Step("how knew", W, RW)),
                                       ("speaker blocked from the asked-for size",
                                        "nobody blocked from the asked-for size")),
    "interpretation": Item("which clue tells the listener exactly which thing the child wants?",
                           (Step("can tell", YN), Step("why tell", W, RW), Step("better clue", C),
                            Step("why better", W, RW))),
    "emotion_reminder": Item("an animal that did something bad last week comes back looking friendly",
                             (Step("feels", C), Step("why feels", W), Step("sits", C), Step("why sits", W, RW)),
                             ("the animal that was nice comes back",)),
    "true_belief_action": Item("things are swapped round (or, in half, swapped back after a swap everyone saw) and the child hears it announced",
                               (Step("reality", C), Step("go", C, RW), Step("why go", W, RW)),
                               ("the child misses the announcement",)),
    "moral_true_belief": Item("the actor, who saw the papers being swapped, spoils the other child's paper knowingly",
                              (Step("reality", C), Step("saw swap", YN, RW), Step("why crying", W, RW),
                               Step("naughty", YN), Step("trouble", YN), Step("still trouble", YN, RW)),
                              ("the actor was away",)),
    "lie_vs_false_statement": Item("the speaker took the prize and lies; the other child repeats it believing it; "
                                   "the owner, who saw nothing, thinks it is lost",
                                   (Step("speaker lying", YN), Step("speaker knows", YN, RW),
                                    Step("other lying", YN, RW), Step("other knows", YN), Step("owner feels", C, RW),
                                    Step("why feels", W, RW), Step("earlier lie", YN, RW)),
                                   ("the other child took it: the speaker guesses honestly, the other lies",)),
    "second_order_belief_desire": Item("the child changes her request; the grown-up who goes to the shop did not "
                                       "hear it",
                                       (Step("shopper thinks", C), Step("why sorry", W, RW),
                                        Step("child wants", C, RW), Step("child got", C, RW),
                                        Step("surprised", YN, RW)),
                                       ("the grown-up who heard the change goes to the shop",)),
    "sarcasm": Item("the child gets the other child's snack and says 'Mmm, my favourite!' sarcastically",
                    (Step("why says", W), Step("feels", C)),
                    ("sincere: the child got what was asked for",)),
}


def feedback_kind(feedback: object) -> str:
    """The kind of a turn's feedback, in :class:`Step`'s terms."""
    if feedback is None:
        return ""
    if getattr(feedback, "by_answer", None):
        return BY
    return RW if getattr(feedback, "right", None) or getattr(feedback, "wrong", None) else ""


def _step(step: Step) -> str:
    extra = f"; feedback {step.feedback}" if step.feedback else ""
    return f"{step.asks} ({step.kind}{extra})"


def booklet_table() -> list[str]:
    """The table ``docs/tasks.md`` prints: per task, its test item, its questions in order, and its controls."""
    rows = ["| task | test item (the booklet's) | questions, in order | controls beside it |", "|---|---|---|---|"]
    for task, item in BOOKLET.items():
        rows.append(f"| {task} | {item.test} | {' → '.join(_step(s) for s in item.steps)} | "
                    f"{'; '.join(item.controls) or '-'} |")
    return rows
