"""The model interface: one async call per conversation turn.

A provider implements :class:`Model` in its own module and is named in
:mod:`commet.models.registry`; the engine never changes for a new provider. Batching
backends (transformers, vLLM) collect concurrent ``generate`` calls into batches inside
the model, so the engine stays one-story-one-coroutine.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from abc import ABC, abstractmethod
from base64 import b64encode
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property, lru_cache
from typing import Literal, TypedDict, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from commet.errors import CommetError
from commet.sources.inputs import valid_text

#: ``json.dumps(value, sort_keys=True)``, the canonical JSON of fingerprints and cache keys, without making an
#: encoder at each call
canonical_json = json.JSONEncoder(sort_keys=True).encode
#: one string as that encoder writes it (the function it calls for every string)
_ascii_json = json.encoder.encode_basestring_ascii


@dataclass(frozen=True)
class TextPart:
    text: str


@dataclass(frozen=True)
class ImagePart:
    """Picture bytes as sent to every provider (the run's image policy already applied)."""

    data: bytes
    mime: str
    image_id: str

    @cached_property
    def sha256(self) -> str:
        """Hashed once: every later turn's request carries the same picture again."""
        return hashlib.sha256(self.data).hexdigest()

    @cached_property
    def base64(self) -> str:
        """Encoded once, for the same reason (data URLs, JSON bodies)."""
        return b64encode(self.data).decode("ascii")


Part = TextPart | ImagePart
Block = TypeVar("Block")


@dataclass(frozen=True)
class Message:
    role: Literal["system", "user", "assistant"]
    parts: tuple[Part, ...]
    #: what providers made of this message for a request, by a key of their own, made once: each later turn of a
    #: conversation sends the message again (not part of the message's value)
    encodings: dict[Hashable, str] = field(default_factory=dict, init=False, repr=False, compare=False)

    @classmethod
    def text(cls, role: Literal["system", "user", "assistant"], text: str) -> Message:
        return cls(role, (TextPart(text),))

    @property
    def text_content(self) -> str:
        return "\n\n".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def images(self) -> list[ImagePart]:
        return [p for p in self.parts if isinstance(p, ImagePart)]

    def blocks(self, image: Callable[[ImagePart], Block], text: Callable[[str], Block]) -> list[Block]:
        """The parts in order as a provider's content blocks: every wire format keeps the order of pictures
        and text, and differs only in how one picture or one text is written."""
        return [image(part) if isinstance(part, ImagePart) else text(part.text) for part in self.parts]

    def fingerprint(self) -> dict[str, object]:
        """JSON-able form with pictures replaced by their hashes (what the store keeps)."""
        return {
            "role": self.role,
            "parts": [
                {"text": p.text} if isinstance(p, TextPart) else {"image": p.image_id, "sha256": p.sha256, "mime": p.mime}
                for p in self.parts
            ],
        }

    @cached_property
    def fingerprint_json(self) -> str:
        """The fingerprint as canonical JSON, made once: each later turn's request holds this message again."""
        parts = self.parts
        if len(parts) == 1 and isinstance(parts[0], TextPart):  # most messages: as the encoder writes them
            return f'{{"parts": [{{"text": {_ascii_json(parts[0].text)}}}], "role": {_ascii_json(self.role)}}}'
        return canonical_json(self.fingerprint())



def text_block(text: str) -> dict[str, object]:
    """A text content block as the OpenAI and Anthropic APIs and chat templates write it."""
    return {"type": "text", "text": text}


class GenerationSettings(BaseModel):
    """Sampling settings, recorded with every run and part of every call's cache key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float = Field(default=0.0, ge=0.0, allow_inf_nan=False)
    max_tokens: int = Field(default=512, ge=1)
    seed: int | None = None
    top_p: float | None = Field(default=None, gt=0.0, le=1.0, allow_inf_nan=False)

    @classmethod
    def checked(cls, **values: object) -> GenerationSettings:
        """Settings from loose values (a command line, a sweep file); a bad one is a :class:`SettingError`
        naming it ("max_tokens: Input should be greater than or equal to 1, not 0")."""
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            error = exc.errors()[0]
            raise SettingError(".".join(str(part) for part in error["loc"]),
                               f"{error['msg']}, not {error['input']!r}") from None


class SettingError(CommetError, ValueError):
    """One refused setting: which (``field``, as the settings name it) and why; reads ``field: reason``."""

    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


class RequestTags(TypedDict, total=False):
    """Where a call comes from; replay and baseline models read it, the cache key does not."""

    story_id: str
    turn: int


@dataclass(frozen=True)
class ModelRequest:
    messages: tuple[Message, ...]
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    #: Where the call comes from. Not part of the cache key; replay models read it.
    tags: RequestTags = field(default_factory=RequestTags, compare=False, hash=False)

    def fingerprint(self) -> dict[str, object]:
        return {"messages": [m.fingerprint() for m in self.messages], "settings": self.settings.model_dump()}

    @cached_property
    def fingerprint_json(self) -> str:
        """The fingerprint as canonical JSON (``json.dumps(self.fingerprint(), sort_keys=True)``), made once:
        the cache key and the store's row share it. It is put together from each message's own JSON,
        made once per message, so a conversation's earlier turns are not serialised again at every turn."""
        return canonical_object(messages=f"[{', '.join([m.fingerprint_json for m in self.messages])}]",
                                settings=_settings_json(self.settings))


@lru_cache(maxsize=64)
def _settings_json(settings: GenerationSettings) -> str:
    """A run's few settings objects as canonical JSON, each made once."""
    return canonical_json(settings.model_dump())


@lru_cache(maxsize=256)
def _name_json(name: str) -> str:
    return json.dumps(name)


def canonical_object(**fields_json: str) -> str:
    """The canonical JSON object (``json.dumps(..., sort_keys=True)``) whose fields hold the given canonical JSON
    texts (filled into a template made once per set of field names: every call's cache key passes here)."""
    return _object_template(tuple(fields_json)).format_map(fields_json)


@lru_cache(maxsize=64)
def _object_template(names: tuple[str, ...]) -> str:
    """``{"a": {a}, "b": {b}}`` for ``str.format_map``: the names sorted, as JSON, braces of the JSON doubled."""
    def literal(text: str) -> str:
        return text.replace("{", "{{").replace("}", "}}")

    if not all(name.isidentifier() for name in names):
        raise ValueError(f"field names must be identifiers: {names}")
    fields = ", ".join(f"{literal(_name_json(name))}: {{{name}}}" for name in sorted(names))
    return f"{{{{{fields}}}}}"


def json_key(**fields_json: str) -> str:
    """sha256 of the canonical JSON object whose fields hold the given (already canonical) JSON texts.

    The same digest as ``json.dumps({name: value, ...}, sort_keys=True)`` of the decoded
    values, without serialising a long conversation a second time.
    """
    return hashlib.sha256(canonical_object(**fields_json).encode()).hexdigest()


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens)


@dataclass
class ModelResponse:
    """A model's reply, made valid text here, at the model boundary, whatever the provider.

    A reply may hold lone surrogates (a JSON ``"\\ud800"`` from a server, a replay file): code
    points that are not text, which the store, the next request and the terminal cannot encode.
    They are replaced by U+FFFD; ``replaced`` says how many (the engine reports it per call).
    """

    text: str
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    attempts: int = 1
    #: code points of the reply (and finish reason) that were not valid Unicode, replaced by U+FFFD
    replaced: int = 0

    def __post_init__(self) -> None:
        self.text, in_text = valid_text(self.text)
        in_reason = 0
        if self.finish_reason is not None:
            self.finish_reason, in_reason = valid_text(self.finish_reason)
        self.replaced += in_text + in_reason


class CallErrorKind(str, Enum):
    """What kind of failure ended a model call. ``http`` is any other HTTP status: its label carries the
    status (``http_404``), as stored and printed."""

    rate_limit = "rate_limit"  # HTTP 429
    auth = "auth"  # HTTP 401 / 403
    http = "http"
    timeout = "timeout"
    connection = "connection"
    tls = "tls"  # the server's certificate is not trusted
    bad_response = "bad_response"  # a body that is not what the API promises
    bad_request = "bad_request"  # a request this provider cannot send (e.g. a picture where none may go)
    empty_response = "empty_response"
    refusal = "refusal"  # a content refusal or safety block
    unsupported_input = "unsupported_input"  # e.g. a picture for a text-only local model
    bad_image = "bad_image"  # a picture API returned something that is not a picture
    replay_missing = "replay_missing"  # a replay file has no answer for this turn
    generation_error = "generation_error"  # a local model's generation failed
    pipeline_error = "pipeline_error"
    error = "error"  # anything else


_HTTP_LABEL = re.compile(r"http_(\d{3})")


class ModelCallError(CommetError):
    """A call that failed for good (after retries): recorded per call, never scored as a wrong answer.

    ``family`` is the typed kind; ``kind`` its label as stored and printed (``http_404`` for an HTTP
    status without a family of its own). ``attempts``: tries made before this final failure.
    """

    def __init__(self, message: str, *, kind: CallErrorKind | str = CallErrorKind.error, status: int | None = None,
                 retryable: bool = False, attempts: int = 1):
        super().__init__(valid_text(message)[0])  # a server's error text may hold lone surrogates too
        http = _HTTP_LABEL.fullmatch(kind) if isinstance(kind, str) else None
        if http is not None:
            self.family, status = CallErrorKind.http, status or int(http.group(1))
        else:
            try:
                self.family = CallErrorKind(kind)
            except ValueError:
                raise ValueError(f"unknown model call error kind {kind!r}; one of "
                                 f"{', '.join(k.value for k in CallErrorKind)} or http_NNN") from None
        if self.family is CallErrorKind.http and status is None:
            raise ValueError("an http model call error needs its status")
        self.status = status
        self.retryable = retryable
        self.attempts = attempts

    @property
    def kind(self) -> str:
        """The kind's label: the family's name, or ``http_NNN``."""
        return f"http_{self.status}" if self.family is CallErrorKind.http else self.family.value


class ModelSpecError(CommetError, ValueError):
    """A model (or picture model) spec that cannot be used here: its grammar, an option or its value, a
    missing SDK or key. The family of :class:`UnknownModelError` and :class:`MissingKeyError`."""


class UnknownModelError(ModelSpecError):
    """A spec that names no known provider, baseline, model or file, or a provider that cannot be loaded."""


class MissingKeyError(ModelSpecError):
    """A remote model whose API key is not in the environment here (it may be where the spec is used)."""


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices``, or nothing when none is close."""
    close = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_options(provider: str, options: Mapping[str, str], known: Iterable[str]) -> str | None:
    """The problem with options a provider does not know, each with its closest known option; or None."""
    known = sorted(set(known))
    unknown = sorted(set(options) - set(known))
    if not unknown:
        return None
    named = ", ".join(f"{name!r}{did_you_mean(name, known)}" for name in unknown)
    return f"{provider}: unknown option(s) {named}; known: {', '.join(known) or 'none'}"


def refuse_unknown_options(provider: str, options: Mapping[str, str], known: Iterable[str]) -> None:
    """Every provider refuses options it would otherwise ignore silently."""
    problem = unknown_options(provider, options, known)
    if problem is not None:
        raise ModelSpecError(problem)


class Model(ABC):
    """A chat model. ``spec`` is its ``provider:name`` string without secrets."""

    spec: str
    #: runs on this machine or needs no call at all (baselines, replay, transformers, vLLM): costs nothing
    free: bool = False
    #: whether its answers can depend on the pictures of a request; False (the baselines): the engine sends it
    #: none, so no picture is decoded or encoded for it (:class:`commet.engine.pictures.PictureCache`)
    reads_pictures: bool = True

    def identity(self) -> dict[str, object]:
        """What makes two instances give the same answer to the same request (part of the cache key).

        Never includes API keys.
        """
        return {"spec": self.spec}

    def identity_json(self) -> str:
        """:meth:`identity` as canonical JSON (part of every call's cache key)."""
        return canonical_json(self.identity())

    def cache_key(self, request: ModelRequest) -> str:
        return json_key(model=self.identity_json(), request=request.fingerprint_json)

    @abstractmethod
    async def generate(self, request: ModelRequest) -> ModelResponse:
        """Answer the conversation in ``request``; raise :class:`ModelCallError` on a final failure."""

    def estimated_cost(self, usage: Usage) -> float | None:
        """Estimated US dollars for ``usage``: 0 for a free model, None when the price is unknown."""
        return 0.0 if self.free else None

    def price_known(self) -> bool:
        """Whether :meth:`estimated_cost` gives a figure (a spend limit needs one)."""
        return self.estimated_cost(Usage()) is not None

    async def aclose(self) -> None:
        """Release clients, engines and pools."""

    async def __aenter__(self) -> Model:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
