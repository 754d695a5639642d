"""The task taxonomy as data: the 18 ToM booklet task types and how they are reported.

Every other part of CoMMET (validation, generators, reports, studies) reads tasks from
here, so a new task or a renamed category is a one-line change. The list follows
``shared/spec/tasks.md``, which supersedes the provisional list of the foundation issue.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The seven ATOMS mental states (Beaudoin et al. 2020) plus the booklet's moral reasoning.
MENTAL_STATES: tuple[str, ...] = (
    "belief",
    "desire",
    "emotion",
    "intention",
    "knowledge",
    "percept",
    "non_literal_communication",
    "moral",
)

#: Reporting categories, in the column order of the paper's Tables 1 and 2.
CATEGORIES: tuple[str, ...] = (
    "Belief",
    "Emotion",
    "Intention",
    "Desire",
    "Percept",
    "Belief_Emotion",
    "Belief_Desire",
    "NLCE",
    "NLC",
    "MBK",
)


@dataclass(frozen=True)
class Task:
    """One booklet task type: its id, a readable name, where it is reported and what it probes."""

    id: str
    name: str
    category: str
    mental_states: tuple[str, ...]
    description: str
    feedback: str  # "", "answer-keyed", "right/wrong" or both: what kind of feedback the task uses
    picture: str  # "no", "often", "yes", "sometimes", "cue may be in the picture"
    #: Category used when the StoryTurn is image-dependent (NLCE becomes NLC when the cue is only in the picture).
    image_category: str | None = None

    def category_for(self, image_dependent: bool) -> str:
        """The reporting category of a StoryTurn of this task."""
        return (self.image_category or self.category) if image_dependent else self.category


TASKS: tuple[Task, ...] = (
    Task("common_desire", "common desire", "Desire", ("desire",),
         "the participant picks one of two things; a character likes the same one; which will the character pick?",
         "answer-keyed", "no"),
    Task("implicit_false_belief", "implicit false belief", "Belief", ("belief", "intention"),
         "a character leaves an object in one place; it is moved while they are away; what will they do next, and why?",
         "", "no"),
    Task("diverse_desire", "diverse desire", "Desire", ("desire",),
         "as common desire, but the character likes the other one", "answer-keyed", "no"),
    Task("diverse_belief", "diverse belief", "Belief", ("belief",),
         "the participant guesses where a lost thing is; the character thinks it is in the other place; "
         "where will they look? then: it was not there, where is it really?",
         "answer-keyed, right/wrong", "no"),
    Task("reference_easy", "reference, easy", "Percept", ("percept", "intention"),
         "a speaker says 'I want that one' and can see only one of two identical things; which does she mean, "
         "how do you know?", "", "often"),
    Task("false_belief_location", "false belief, reality known", "Belief", ("belief", "knowledge"),
         "an object is moved while its owner is away; where will they look, why, and where is it really?",
         "", "no"),
    Task("moral_false_belief", "moral judgement under false belief", "MBK", ("belief", "emotion", "moral"),
         "an accidental harm caused by a false belief; where will she look, why, how does the other feel, "
         "is she naughty, should she be in trouble, why?", "", "sometimes"),
    Task("expectation_false_belief", "false belief from expectation (contents)", "Belief_Emotion",
         ("belief", "emotion", "desire"),
         "a familiar container holds something unexpected today; what did the parent really pack, what does "
         "the child think is inside, why, and what does he want?", "", "no"),
    Task("reference_hard_referent", "reference, hard: mistaken referent", "Intention",
         ("intention", "belief", "percept"),
         "the speaker names a thing by a feature that the listener maps to something else; which will the "
         "listener give, why, what did the speaker really want, how did you know?", "right/wrong", "yes"),
    Task("non_sarcasm", "sarcasm control (sincere)", "NLCE", ("non_literal_communication", "emotion", "desire"),
         "a character gets what they asked for and says 'Mmm, my favourite'; why did they say it, are they "
         "happy or sad?", "", "cue may be in the picture", image_category="NLC"),
    Task("reference_hard_perspective", "reference, hard: size and position", "Percept",
         ("percept", "belief", "intention"),
         "three things of different sizes; the listener cannot see the biggest from where they stand; which "
         "will they pick, why, which did the child want, how did you know?", "right/wrong", "yes"),
    Task("interpretation", "interpretation (unambiguous clue)", "Percept", ("percept", "knowledge"),
         "a character must pick a clue that lets another identify the right thing; which clue is better, why?",
         "right/wrong", "often"),
    Task("emotion_reminder", "emotion from past experience", "Emotion", ("emotion", "knowledge"),
         "something bad happened with a thing before; it comes back looking friendly; how will they feel, why, "
         "will they sit near or far, why?", "", "no"),
    Task("true_belief_action", "action explanation with true belief", "Intention",
         ("intention", "belief", "knowledge"),
         "things are moved and the move is announced to everyone; where is it, where will she go, why?",
         "right/wrong", "no"),
    Task("moral_true_belief", "moral judgement under true belief (intent to harm)", "MBK",
         ("intention", "emotion", "moral", "knowledge"),
         "a character knowingly takes another's thing; why is the other crying, is she naughty, in trouble, "
         "still in trouble after the harm is undone?", "right/wrong", "sometimes"),
    Task("lie_vs_false_statement", "deception versus false belief", "MBK",
         ("belief", "knowledge", "emotion", "moral"),
         "one character lies; a second repeats the falsehood believing it; is each lying, why, how does the "
         "victim feel, was the first lying even after the falsehood later became true?", "right/wrong",
         "sometimes"),
    Task("second_order_belief_desire", "second-order belief-desire", "Belief_Desire",
         ("belief", "desire", "emotion"),
         "a child changes her request but the parent did not hear; what does the parent think she wants, why "
         "does the parent say sorry, what did she want, what did she get, why is she surprised?",
         "right/wrong", "no"),
    Task("sarcasm", "sarcasm", "NLCE", ("non_literal_communication", "emotion", "desire"),
         "a character gets what they did not want and says 'Mmm, my favourite' sarcastically; why did they "
         "say it, are they happy or sad?", "", "cue may be in the picture", image_category="NLC"),
)

TASKS_BY_ID: dict[str, Task] = {task.id: task for task in TASKS}


def get_task(task_id: str) -> Task:
    """Look a task up by id; a KeyError names the known ids."""
    try:
        return TASKS_BY_ID[task_id]
    except KeyError:
        raise KeyError(f"unknown task {task_id!r}; known tasks: {', '.join(TASKS_BY_ID)}") from None


def taxonomy_dict() -> list[dict[str, object]]:
    """The taxonomy as plain data, written into each dataset's metadata file."""
    return [
        {
            "id": t.id,
            "name": t.name,
            "category": t.category,
            "image_category": t.image_category or t.category,
            "mental_states": list(t.mental_states),
        }
        for t in TASKS
    ]
