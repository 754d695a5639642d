"""Models: the interface, the spec registry, baselines, replay and the providers."""

from commet.models.base import (
    CallErrorKind,
    GenerationSettings,
    ImagePart,
    Message,
    Model,
    ModelCallError,
    ModelRequest,
    ModelResponse,
    ModelSpecError,
    TextPart,
    UnknownModelError,
    Usage,
)
from commet.models.registry import create_model, parse_spec

__all__ = [
    "CallErrorKind", "GenerationSettings", "ImagePart", "Message", "Model", "ModelCallError", "ModelRequest", "ModelResponse",
    "ModelSpecError", "TextPart", "UnknownModelError", "Usage", "create_model", "parse_spec",
]
