"""The canonical StoryTurn model (shared/spec/storyturn.md, sections 1 to 4).

Feedback and branches are structured fields here, never strings to be re-parsed: the
pipe format of the paper is only an import/export syntax (see :mod:`commet.format.pipe`).

Each model builds its validator when it first validates (``defer_build``), not at import: a run on a
dataset kept validated (:mod:`commet.sources.validation_cache`) gets its StoryTurns without validating
any, and building the six validators was about 5 % of the instructions of ``commet eval``'s start.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator


class AnswerFeedback(BaseModel):
    """Feedback shown when the previous turn was answered with one particular branch answer."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    answer: str = Field(description="The previous turn's expected answer this text belongs to, as written there.")
    text: str


class Feedback(BaseModel):
    """Text shown at the START of a turn, chosen by how the previous turn's question was answered.

    ``right``/``wrong`` is the booklet's "If right: ...; If wrong: ..." form; ``by_answer`` is
    "If the previous answer is A: ...; If the previous answer is B: ..."; ``always`` is
    unconditional text. An answer-keyed turn falls back to ``wrong`` when the previous answer
    matched no branch.
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)

    right: str | None = None
    wrong: str | None = None
    by_answer: list[AnswerFeedback] = Field(default_factory=list)
    always: str | None = None

    def is_empty(self) -> bool:
        return not (self.right or self.wrong or self.by_answer or self.always)


class Option(BaseModel):
    """One choice shown to the respondent (spec section 7): its text and an optional label (A, B, 1, ...).

    Options are not branches: branches are alternative expected answers, options are what the
    question offers. A reply may name an option by its label ("B", "(b)", "Option B") or its text.
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)

    label: str | None = Field(default=None, description="Label shown before the option, such as A, b or 1.")
    text: str = Field(min_length=1)

    @field_validator("label")
    @classmethod
    def _blank_label_is_none(cls, value: str | None) -> str | None:
        return value.strip() or None if value is not None else None


class Rubric(BaseModel):
    """What a right explanation must say and must not say (paper, Appendix C): for LLM judges and people."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    key_inference: str = Field(min_length=1, description="The inference a right answer must contain.")
    false_inferences: list[str] = Field(default_factory=list,
                                        description="Inferences that make an answer wrong when it states them.")


class Turn(BaseModel):
    """One turn of a StoryTurn: feedback, story, question, optional picture, expected answer(s)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    story: str = ""
    feedback: Feedback | None = None
    question: str
    image: str | None = Field(default=None, description="Image id; resolved against the dataset's images/ folder.")
    answers: list[str] = Field(
        min_length=1,
        description="Expected answer(s). More than one makes this turn a branch point: any one is right "
        "and the one given fixes the story's active branch.",
    )

    options: list[Option] = Field(default_factory=list,
                                  description="The choices shown with the question, if any (not branches).")
    candidates: list[str] = Field(
        default_factory=list,
        description="For judging only, never shown: the closed set an open answer is one of (the story's "
        "containers or places, as the original benchmark scores it). A reply naming another candidate is wrong.")
    rubric: Rubric | None = Field(default=None, description="Grading guidance for an explanation answer.")
    meta: dict[str, object] = Field(default_factory=dict,
                                    description="Per-turn metadata (question type, order of belief, ...).")

    @field_validator("image")
    @classmethod
    def _empty_image_is_none(cls, value: str | None) -> str | None:
        return value.strip() or None if value is not None else None

    @property
    def is_branch_point(self) -> bool:
        return len(self.answers) > 1


class StoryTurn(BaseModel):
    """A short story told across several turns, with one question per turn."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str = Field(min_length=1)
    task: str
    category: str
    mental_states: list[str] = Field(default_factory=list)
    image_dependent: bool = False
    source: str = "unknown"
    turns: list[Turn] = Field(min_length=1)
    meta: dict[str, object] = Field(default_factory=dict, description="Free-form extras (scene files, notes).")

    @property
    def images(self) -> list[str]:
        return [t.image for t in self.turns if t.image]


def storyturn_json_schema() -> dict[str, object]:
    """The published JSON Schema of one canonical JSONL line."""
    schema = StoryTurn.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://commet-bench.org/schema/storyturn-1.json"
    return schema
