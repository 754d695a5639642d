"""One generator per booklet task type (``GENERATORS``: task id -> function), by task family.

Each generator builds a :class:`~commet.generation.procedural.world.World`, plays the story's
events on it, takes pictures of the states the turns show, and reads every expected answer,
branch answer and feedback text off the world: the agent's belief (not reality) in
false-belief tasks, what the listener can see in perspective tasks, whether a statement
contradicted the speaker's own belief in the lying task, and so on. Each StoryTurn says whether
it is the booklet's test item or a control (``meta["item"]``), and the controls are told with
the test item's words (see :mod:`.common`), so no single word tells them apart.
"""

from __future__ import annotations

from collections.abc import Callable

from commet.generation.procedural.builder import StoryBuilder
from commet.generation.procedural.tasks.belief import (
    expectation_false_belief,
    false_belief_location,
    implicit_false_belief,
    true_belief_action,
)
from commet.generation.procedural.tasks.desire import common_desire, diverse_belief, diverse_desire
from commet.generation.procedural.tasks.feeling import emotion_reminder, non_sarcasm, sarcasm
from commet.generation.procedural.tasks.lie import lie_vs_false_statement
from commet.generation.procedural.tasks.moral import moral_false_belief, moral_true_belief
from commet.generation.procedural.tasks.reference import (
    interpretation,
    reference_easy,
    reference_hard_perspective,
    reference_hard_referent,
)
from commet.generation.procedural.tasks.second_order import second_order_belief_desire

__all__ = ["GENERATORS", "IMAGE_DEPENDENT_TASKS", "PAIRS", "Generator", "StoryBuilder"]

Generator = Callable[[StoryBuilder, bool], None]

#: Task id -> generator; the keys are exactly the taxonomy's 18 task ids.
GENERATORS: dict[str, Generator] = {
    "common_desire": common_desire,
    "implicit_false_belief": implicit_false_belief,
    "diverse_desire": diverse_desire,
    "diverse_belief": diverse_belief,
    "reference_easy": reference_easy,
    "false_belief_location": false_belief_location,
    "moral_false_belief": moral_false_belief,
    "expectation_false_belief": expectation_false_belief,
    "reference_hard_referent": reference_hard_referent,
    "non_sarcasm": non_sarcasm,
    "reference_hard_perspective": reference_hard_perspective,
    "interpretation": interpretation,
    "emotion_reminder": emotion_reminder,
    "true_belief_action": true_belief_action,
    "moral_true_belief": moral_true_belief,
    "lie_vs_false_statement": lie_vs_false_statement,
    "second_order_belief_desire": second_order_belief_desire,
    "sarcasm": sarcasm,
}

#: Tasks with an image-dependent variant (the fact the questions need is only in the picture). Their
#: categories are the paper's Table 2 columns: Percept (reference_easy, reference_hard_perspective,
#: interpretation), Intention (reference_hard_referent), MBK (the moral pair and lie_vs_false_statement:
#: the picture shows who was in the room) and NLC (the sarcasm pair). Desire tasks have none.
IMAGE_DEPENDENT_TASKS: frozenset[str] = frozenset({
    "reference_easy", "reference_hard_referent", "reference_hard_perspective", "interpretation", "sarcasm",
    "non_sarcasm", "moral_false_belief", "moral_true_belief", "lie_vs_false_statement",
})

#: Minimal pairs share their random draws (same names, things, places) and differ in one fact.
PAIRS: dict[str, str] = {"sarcasm": "non_sarcasm", "non_sarcasm": "sarcasm",
                         "moral_false_belief": "moral_true_belief", "moral_true_belief": "moral_false_belief"}
