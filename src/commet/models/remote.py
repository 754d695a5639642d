"""What every remote provider shares: options, API key lookup, retry policy, rate limiter, prices.

Chat models (:class:`RemoteModel`) and picture models (``commet.generation.llm.images``) are
built on :class:`RemoteService`, so both refuse unknown options, find keys the same way and
honour ``rpm``, ``timeout`` and the retry options alike.
"""

from __future__ import annotations

import importlib
import os
import re
from abc import abstractmethod
from collections.abc import Mapping
from functools import cached_property, partial
from types import ModuleType

from commet.extras import install_command
from commet.models import pricing
from commet.models.base import (
    MissingKeyError,
    Model,
    ModelRequest,
    ModelResponse,
    ModelSpecError,
    Usage,
    unknown_options,
)
from commet.models.endpoints import split_base_urls
from commet.models.ratelimit import estimate_tokens, limiter_from_options
from commet.models.retry import RetryPolicy


def _importable(module: str) -> bool:
    """Whether ``module`` is installed, found without importing it (``import openai`` alone costs a second
    of CPU, and the direct transport never needs it)."""
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


#: Options every remote provider understands (they never change outputs, so not in identity()).
TRANSPORT_OPTIONS = frozenset({"max_attempts", "timeout", "backoff_base", "backoff_max", "rpm", "tpm",
                               "api_key_env", "price_in", "price_out"})


#: query parameters that carry a credential (``?key=`` of Google, ``?api-key=``, ``?token=``, ...)
_CREDENTIAL_PARAMETERS = frozenset({"key", "apikey", "api_key", "api-key", "token", "access_token", "secret",
                                    "password", "sig", "signature"})
#: an API key standing as a word of a URL's path or query (OpenAI's and Anthropic's ``sk-...``, Google's ``AIza...``);
#: a host name is never read for it ("my-desk-server", "risk-model" are names, not keys)
_KEY_SHAPED = re.compile(r"(?<![A-Za-z0-9])(?:sk-[A-Za-z0-9_\-]{16,}|AIza[0-9A-Za-z_\-]{30,})")


def _credential_in_url(url: str) -> bool:
    """Whether a base_url carries a credential (user info, a credential parameter, a key in its path or query): it
    would be stored with the run and shown in reports, so it is refused."""
    from urllib.parse import parse_qsl, unquote, urlsplit

    parts = urlsplit(url)
    return ("@" in parts.netloc
            or _KEY_SHAPED.search(unquote(f"{parts.path}?{parts.query}#{parts.fragment}")) is not None
            or any(name.lower() in _CREDENTIAL_PARAMETERS for name, _ in parse_qsl(parts.query, keep_blank_values=True)))


def resolve_api_key(provider: str, options: Mapping[str, str], default_envs: tuple[str, ...],
                    base_url: str | None) -> str:
    """The key from ``?api_key_env=NAME`` or the provider's usual variables; never from the spec itself."""
    envs = (options["api_key_env"],) if options.get("api_key_env") else default_envs
    for env in envs:
        value = os.environ.get(env)
        if value:
            return value
    if base_url:
        return "not-needed"  # local servers (vLLM, Ollama, LM Studio) ignore the key
    raise MissingKeyError(f"{provider}: no API key: set the environment variable "
                            f"{' or '.join(envs)} (or choose another with ?api_key_env=NAME)")


class RemoteService:
    """What every remote provider's client shares, chat or picture: options, key, policy, limiter, price.

    Subclasses set ``provider`` and ``default_key_envs``; ``kind`` names what a missing name is
    (a model, an image model) in the error. Construction reports every missing prerequisite at once.
    """

    provider: str = ""
    kind: str = "model"
    default_key_envs: tuple[str, ...] = ()
    #: options that change outputs and so belong in identity(); the rest are transport
    output_options: frozenset[str] = frozenset()
    #: provider-specific options that do not change outputs
    transport_options: frozenset[str] = frozenset()
    #: shared options this kind of service refuses, with why (e.g. token prices for a per-picture price)
    refused_options: Mapping[str, str] = {}
    #: whether ``base_url`` may name several endpoints (:mod:`commet.models.endpoints`)
    many_endpoints: bool = False
    #: the SDK module the provider needs (its extra has the provider's name)
    sdk_module: str = ""

    def __init__(self, name: str, options: Mapping[str, str]):
        if not name:
            raise ModelSpecError(f"{self.provider}: a{'n' if self.kind[0] in 'aeiou' else ''} {self.kind} "
                                 f"name is required ({self.provider}:MODEL)")
        self.name = name
        self.options = dict(options)
        self.base_urls = split_base_urls(self.options.get("base_url"))
        self.base_url = self.base_urls[0] if self.base_urls else None
        self.api_key = self._check_prerequisites()
        self.spec = f"{self.provider}:{name}"
        self.policy = RetryPolicy.from_options(self.options, secrets=(self.api_key,) if self.api_key else ())
        self.limiter = limiter_from_options(self.options, key=self.rate_key)
        self.price = pricing.price_for(self.provider, name, self.options)

    @property
    def rate_key(self) -> str:
        """The name of this model's shared rate budget: provider, model and endpoint (never a key)."""
        return f"{self.spec}@{self.endpoints_identity or 'default'}"

    @property
    def endpoints_identity(self) -> str | None:
        """The endpoint(s) as recorded: one base_url, or the sorted list (its order changes nothing)."""
        return ",".join(sorted(self.base_urls)) if len(self.base_urls) > 1 else self.base_url

    def sdk(self, module: str = "") -> ModuleType:
        """The provider's SDK (``sdk_module``) or one of its modules. Its presence is checked with the other
        prerequisites, so this fails only where the SDK itself breaks on import."""
        try:
            return importlib.import_module(module or self.sdk_module)
        except ImportError as exc:  # pragma: no cover
            raise ModelSpecError(f"{self.provider} provider needs the SDK: {install_command(self.provider)} "
                                 f"({exc})") from None

    def _resolve_key(self) -> str | None:
        return resolve_api_key(self.provider, self.options, self.default_key_envs, self.base_url)

    def _check_prerequisites(self) -> str | None:
        """The API key; every missing prerequisite (options, key, SDK) reported at once, in one line."""
        known = (TRANSPORT_OPTIONS - set(self.refused_options)) | self.output_options | self.transport_options \
            | {"base_url"}
        problems = [p for p in (unknown_options(self.provider, self.options, known),) if p]
        problems += [f"{self.provider}: option {name} {why}" for name, why in self.refused_options.items()
                     if name in self.options]
        if _KEY_SHAPED.search(self.name):  # a key pasted as the model name would be stored in the run's name
            problems.append(f"{self.provider}: the {self.kind} name looks like an API key; put keys in an environment "
                            "variable (option api_key_env)")
        if any(_credential_in_url(url) for url in self.base_urls):
            problems.append(f"{self.provider}: put credentials in an environment variable (option api_key_env), "
                            "not in base_url")
        if len(self.base_urls) > 1 and not self.many_endpoints:
            problems.append(f"{self.provider}: several base_url endpoints are supported by openai: "
                            "(OpenAI-compatible servers) only")
        key: str | None = None
        missing_key: MissingKeyError | None = None
        try:
            key = self._resolve_key()
        except MissingKeyError as exc:
            missing_key = exc
            problems.append(str(exc))
        except ModelSpecError as exc:
            problems.append(str(exc))
        if self.sdk_module and not _importable(self.sdk_module):
            problems.append(f"{self.provider}: the SDK ({self.sdk_module}) is not installed: "
                            f"{install_command(self.provider)}")
        if len(problems) > 1:
            prefix = f"{self.provider}: "
            raise ModelSpecError(f"{prefix}{len(problems)} problems: "
                                 + "; ".join(p.removeprefix(prefix) for p in problems))
        if missing_key is not None and problems == [str(missing_key)]:
            raise missing_key  # the key alone: it may be set where the spec is used (a study's server)
        if problems:
            raise ModelSpecError(problems[0])
        return key


class RemoteModel(RemoteService, Model):
    """A chat model behind an HTTP API.

    Subclasses set ``provider`` and ``default_key_envs`` and implement :meth:`_call`, which
    makes ONE attempt and returns a ModelResponse (raising the SDK's exception or a
    ModelCallError on failure).
    """

    def identity(self) -> dict[str, object]:
        ident: dict[str, object] = {"spec": self.spec, "provider": self.provider, "model": self.name}
        if self.base_url:
            ident["base_url"] = self.endpoints_identity
        for key in sorted(self.output_options):
            if key in self.options:
                ident[key] = self.options[key]
        return ident

    @cached_property
    def _fixed_identity_json(self) -> str:
        return super().identity_json()

    def identity_json(self) -> str:
        """Made once: a remote model's identity (name, endpoints, output options) is fixed when it is made."""
        return self._fixed_identity_json

    def estimated_cost(self, usage: Usage) -> float | None:
        return pricing.cost(self.price, usage)

    @abstractmethod
    async def _call(self, request: ModelRequest) -> ModelResponse:
        """One attempt, no retries."""

    async def generate(self, request: ModelRequest) -> ModelResponse:
        estimate = estimate_tokens(request) if self.limiter is not None else 0
        response, attempts = await self.policy.run(partial(self._call, request), limiter=self.limiter,
                                                   tokens=estimate, what=self.spec)
        if self.limiter is not None:
            self.limiter.settle(estimate, response.usage.input_tokens + response.usage.output_tokens)
        response.attempts = attempts
        return response
