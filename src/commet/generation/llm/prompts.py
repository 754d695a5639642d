"""The one-shot generation prompt, the JSON contract of the reply, and picture prompts.

The paper (section 3.2.2) gives the generator one booklet StoryTurn of the task as its only
example and then draws a picture for each StoryTurn "based on selected segments of the
story". Here the example is shown in the same JSON shape the model must answer in, and the
model itself selects the segment: every turn that should carry a picture names the
excerpt of its story that the picture shows and describes the scene.
"""

from __future__ import annotations

import json

from commet.format.model import Feedback, StoryTurn
from commet.taxonomy import Task

PROMPT_VERSION = "llm-gen-1"

SYSTEM_PROMPT = """\
You write test items for a Theory of Mind benchmark for language models, modelled on the \
Theory of Mind booklet task for children. Each item is a StoryTurn: a short story told across \
several conversational turns, with one question per turn.

Each turn has:
- "story": narrative text shown in this turn (may be empty);
- "feedback": text shown at the START of this turn that reacts to how the PREVIOUS turn's \
question was answered, or null. Use {"right": "...", "wrong": "..."} or \
{"by_answer": {"<an answer of the previous turn>": "...", ...}}. The first turn never has \
feedback. Never put feedback about a question in the same turn as that question, in the \
story text or in the answers: it always goes into the feedback field of the NEXT turn;
- "question": the question asked in this turn;
- "answers": the expected answer(s). More than one answer makes the turn a branch point \
(any one is right, and it fixes which answer is expected at later branch points, at the \
same position); all branch points of a story have the same number of answers;
- "picture": null, or {"segment": "<an exact excerpt of this turn's story that the picture \
shows>", "scene": "<what the picture shows: characters, objects and where each one is>"}.

Rules:
- Keep to the task you are given; do not drift into a neighbouring task.
- Never state the expected answer (or the mental state it depends on) in the story text: \
the reader must infer it.
- Use new characters, names, objects and settings; write for young children; no text in pictures.
- Reply with ONE JSON object and nothing else, in exactly the shape of the example."""


def feedback_json(feedback: Feedback | None) -> dict[str, object] | None:
    """Feedback in the reply's JSON shape (``by_answer`` as an answer -> text mapping)."""
    if feedback is None or feedback.is_empty():
        return None
    out: dict[str, object] = {}
    for key in ("always", "right", "wrong"):
        value = getattr(feedback, key)
        if value is not None:
            out[key] = value
    if feedback.by_answer:
        out["by_answer"] = {entry.answer: entry.text for entry in feedback.by_answer}
    return out


def exemplar_json(storyturn: StoryTurn) -> dict[str, object]:
    """An exemplar StoryTurn in the reply's JSON shape, pictures included as segment + scene."""
    scenes = storyturn.meta.get("image_scenes")
    scenes = scenes if isinstance(scenes, dict) else {}
    turns = []
    for turn in storyturn.turns:
        picture = None
        if turn.image:
            picture = {"segment": turn.story, "scene": str(scenes.get(turn.image, turn.story))}
        turns.append({"story": turn.story, "feedback": feedback_json(turn.feedback), "question": turn.question,
                      "answers": list(turn.answers), "picture": picture})
    return {"task": storyturn.task, "image_dependent": storyturn.image_dependent,
            "mental_states": list(storyturn.mental_states), "turns": turns}


def variant_instruction(task: Task, variant: str) -> str:
    if variant == "image-dependent":
        return ("Make it IMAGE-DEPENDENT: set \"image_dependent\": true, and put a fact needed for at least one "
                "answer ONLY in a picture's scene, never in the story text.")
    if variant == "text-complete":
        return ("Make it TEXT-COMPLETE: set \"image_dependent\": false; the text alone must be enough to answer "
                "every question. Pictures, if any, only illustrate and must not reveal any answer.")
    return f"Pictures for this task: {task.picture}. Set \"image_dependent\" truthfully."


def user_prompt(task: Task, exemplar: StoryTurn, *, variant: str, number: int, count: int) -> str:
    """The one-shot request for StoryTurn ``number`` of ``count``."""
    example = json.dumps(exemplar_json(exemplar), indent=2, ensure_ascii=False)
    return (f"Task id: {task.id} ({task.name}).\nWhat it tests and its shape: {task.description}\n"
            f"Feedback/branches used by this task: {task.feedback or 'none'}.\n"
            f"Reporting category: {task.category}. Mental states probed: {', '.join(task.mental_states)}.\n\n"
            f"Here is one example StoryTurn of this task:\n{example}\n\n"
            f"Write a NEW StoryTurn of the same task (number {number} of {count}: make it different from the "
            f"example and from other numbers; vary the names, objects and setting). "
            f"{variant_instruction(task, variant)}\nAnswer with the JSON object only.")


def repair_prompt(error: str) -> str:
    return (f"That reply could not be used: {error}\n"
            "Reply again with the corrected StoryTurn as ONE JSON object, nothing else.")


def image_prompt(storyturn: StoryTurn, turn_index: int, segment: str, scene: str) -> str:
    """The picture prompt for one turn, built from the story segment the generator selected."""
    turn = storyturn.turns[turn_index]
    lines = [
        "A simple, warm children's picture-book illustration.",
        f"Scene: {scene.strip()}",
        f"It illustrates this moment of the story: \"{segment.strip()}\"",
        "Draw every character and object exactly once, placed exactly as described (left/right, in front "
        "of/behind, inside/outside).",
        "Absolutely no text, letters, numbers, labels, signs or speech bubbles anywhere in the picture.",
        "Add nothing that the story does not mention.",
    ]
    if not storyturn.image_dependent:
        lines.append(f"The picture must not give away the answer to the question \"{turn.question.strip()}\".")
    return "\n".join(lines)
