"""LLM construction pipeline (paper, section 3.2.2): one-shot StoryTurn generation, pictures, defect lint."""

from commet.generation.llm.images import ImageModel, create_image_model
from commet.generation.llm.lint import LintFinding, lint_storyturn
from commet.generation.llm.pipeline import (
    GeneratedItem,
    GenerationError,
    GenerationOptions,
    GenerationReport,
    choose_exemplar,
    generate_storyturns,
    write_generated,
)

__all__ = [
    "GeneratedItem", "GenerationError", "GenerationOptions", "GenerationReport", "ImageModel", "LintFinding",
    "choose_exemplar", "create_image_model", "generate_storyturns", "lint_storyturn", "write_generated",
]
