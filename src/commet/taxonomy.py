"""The task taxonomy as data: the 18 ToM booklet task types and how they are reported.

Every other part of CoMMET (validation, generators, reports, studies) reads tasks from
here, so a new task or a renamed category is a one-line change. The list follows
``shared/spec/tasks.md``, which supersedes the provisional list of the foundation issue.
"""

from __future__ import annotations

from dataclasses import dataclass

from commet.errors import CommetError

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
    #: Further categories a StoryTurn of this task may be reported under (declared taxonomies only).
    other_categories: tuple[str, ...] = ()

    def category_for(self, image_dependent: bool) -> str:
        """The reporting category of a StoryTurn of this task."""
        return (self.image_category or self.category) if image_dependent else self.category

    @property
    def categories(self) -> tuple[str, ...]:
        """Every category a StoryTurn of this task may carry, the default first."""
        return tuple(dict.fromkeys((self.category, self.image_category or self.category, *self.other_categories)))


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


class TaxonomyError(CommetError, ValueError):
    """A declared taxonomy that cannot be used; ``field`` is the dotted path inside ``dataset.json``."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(message)


_TASK_KEYS = ("categories", "image_category", "name", "description", "mental_states", "feedback", "picture")


@dataclass(frozen=True)
class Taxonomy:
    """The tasks, categories and mental states a dataset is checked and reported against.

    Why: benchmarks other than the booklet (ToMi, BigToM, ...) have their own tasks. A dataset
    declares them in ``dataset.json`` (``tasks``, optional ``categories`` and ``mental_states``;
    docs/storyturn.md, "Declared tasks and categories"); without a declaration it is :data:`BOOKLET`.
    ``categories`` is also the order ``commet stats`` lists them in.
    """

    tasks: tuple[Task, ...]
    categories: tuple[str, ...]
    mental_states: tuple[str, ...]
    declared: bool = False

    def task(self, task_id: str) -> Task | None:
        return next((t for t in self.tasks if t.id == task_id), None)

    @property
    def task_ids(self) -> tuple[str, ...]:
        return tuple(t.id for t in self.tasks)

    def to_json(self) -> dict[str, object]:
        """The declaration as written into ``dataset.json`` (read back by :meth:`from_json`)."""
        tasks: dict[str, dict[str, object]] = {}
        for t in self.tasks:
            entry: dict[str, object] = {"name": t.name, "categories": [t.category, *t.other_categories]}
            if t.image_category and t.image_category != t.category:
                entry["image_category"] = t.image_category
            entry.update({"mental_states": list(t.mental_states), "description": t.description})
            entry.update({k: v for k, v in (("feedback", t.feedback), ("picture", t.picture)) if v})
            tasks[t.id] = entry
        return {"categories": list(self.categories), "mental_states": list(self.mental_states), "tasks": tasks}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Taxonomy:
        """The taxonomy a ``dataset.json`` object declares, or :data:`BOOKLET` when it has no ``tasks`` key.

        A task entry may be ``{}`` for a booklet task id (the booklet's definition is used).
        Raises :class:`TaxonomyError` naming the offending field.
        """
        declared = data.get("tasks")
        if declared is None:
            return BOOKLET
        if not isinstance(declared, dict) or not declared:
            raise TaxonomyError("tasks", "must be a non-empty object {task id: {\"categories\": [...], ...}}")
        tasks = [_declared_task(str(task_id), entry) for task_id, entry in declared.items()]
        used = list(dict.fromkeys(c for t in tasks for c in t.categories))
        categories = _string_list(data, "categories", "categories") if "categories" in data else used
        for t in tasks:
            missing = [c for c in t.categories if c not in categories]
            if missing:
                raise TaxonomyError(f"tasks.{t.id}.categories",
                                    f"category {missing[0]!r} is not among the declared categories")
        states = (_string_list(data, "mental_states", "mental_states") if "mental_states" in data
                  else list(dict.fromkeys([*MENTAL_STATES, *(s for t in tasks for s in t.mental_states)])))
        for t in tasks:
            unknown = [s for s in t.mental_states if s not in states]
            if unknown:
                raise TaxonomyError(f"tasks.{t.id}.mental_states",
                                    f"mental state {unknown[0]!r} is not among the declared mental_states")
        return cls(tuple(tasks), tuple(categories), tuple(states), declared=True)


def _string_list(data: dict[str, object], key: str, field: str, *, empty_ok: bool = False) -> list[str]:
    value = data.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise TaxonomyError(field, "must be a list of non-empty strings")
    if not value and not empty_ok:
        raise TaxonomyError(field, "must not be empty")
    return list(dict.fromkeys(value))


def _declared_task(task_id: str, entry: object) -> Task:
    field = f"tasks.{task_id}"
    if not task_id.strip():
        raise TaxonomyError("tasks", "a task id is empty")
    if not isinstance(entry, dict):
        raise TaxonomyError(field, "must be an object with at least \"categories\"")
    unknown = sorted(set(entry) - set(_TASK_KEYS))
    if unknown:
        raise TaxonomyError(f"{field}.{unknown[0]}", f"unknown key (allowed: {', '.join(_TASK_KEYS)})")
    if not entry and task_id in TASKS_BY_ID:
        return TASKS_BY_ID[task_id]
    if "categories" not in entry:
        raise TaxonomyError(f"{field}.categories", "required: the categories this task is reported under")
    categories = _string_list(entry, "categories", f"{field}.categories")
    texts: dict[str, str] = {}
    for key in ("image_category", "name", "description", "feedback", "picture"):
        value = entry.get(key)
        if value is not None and not isinstance(value, str):
            raise TaxonomyError(f"{field}.{key}", "must be a string")
        texts[key] = value or ""
    states = (_string_list(entry, "mental_states", f"{field}.mental_states", empty_ok=True)
              if "mental_states" in entry else [])
    return Task(task_id, texts["name"] or task_id, categories[0], tuple(states), texts["description"],
                texts["feedback"], texts["picture"], texts["image_category"] or None, tuple(categories[1:]))


#: The 18 booklet tasks: the taxonomy of every dataset that declares none.
BOOKLET = Taxonomy(TASKS, CATEGORIES, MENTAL_STATES)
