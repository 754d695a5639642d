"""``vllm:PATH_OR_ID``: vLLM's offline engine (``vllm.LLM``), batched across the stories in flight.

Every story's next turn that arrives within a short window (``batch_wait_ms``, default 20)
joins one ``LLM.chat(conversations, sampling_params=[...], use_tqdm=False)`` call, run in a
worker thread by the same :class:`~commet.models.transformers_model.MicroBatcher` the transformers
backend uses (each call carries its own ``SamplingParams``, so mixed settings share a batch).
Prefix caching is on by default (``enable_prefix_caching=True``): turn k+1 of a story
re-sends turn k's prompt, so its KV cache is reused. Pictures are passed the way vLLM's
chat API takes them, as OpenAI-style ``image_url`` parts with ``data:`` URLs.

Options passed through to ``vllm.LLM``: ``tensor_parallel_size``, ``pipeline_parallel_size``,
``distributed_executor_backend`` (e.g. ``ray`` for multi-node), ``dtype``,
``max_model_len``, ``gpu_memory_utilization``, ``enable_prefix_caching`` (default 1),
``enforce_eager``, ``quantization``, ``revision``, ``seed``, ``trust_remote_code`` and
``max_images`` (-> ``limit_mm_per_prompt={"image": N}``). Batching: ``max_batch``
(default 256), ``batch_wait_ms``. Downloads: off unless ``download=1`` (a hub id that is
not a local path then runs with ``HF_HUB_OFFLINE=1`` set in the process environment, as
vLLM has no ``local_files_only`` switch).

TESTING NOTE: vLLM is not installed in the development environment and there is no GPU,
so the unit tests cover only what does not need vLLM: option parsing into ``LLM``
keyword arguments, ``SamplingParams`` arguments, message conversion, the install hint
when vLLM is missing, and the batching path against a stand-in ``vllm`` module that
records its calls. The real engine has not been exercised by these tests.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from commet.extras import install_command
from commet.models import base
from commet.models.openai_compat import to_openai_messages
from commet.models.transformers_model import (
    MicroBatcher,
    files_fingerprint,
    offline_env,
    option_bool,
    option_int,
)

INT_OPTIONS = ("tensor_parallel_size", "pipeline_parallel_size", "max_model_len", "seed")
FLOAT_OPTIONS = ("gpu_memory_utilization",)
BOOL_OPTIONS = ("enable_prefix_caching", "enforce_eager", "trust_remote_code")
STR_OPTIONS = ("distributed_executor_backend", "dtype", "quantization", "revision")
OTHER_OPTIONS = ("max_images", "max_batch", "batch_wait_ms", "download")
VLLM_OPTIONS = frozenset(INT_OPTIONS + FLOAT_OPTIONS + BOOL_OPTIONS + STR_OPTIONS + OTHER_OPTIONS)
#: options that can change the generated text, so they are part of identity()
OUTPUT_OPTIONS = ("dtype", "quantization", "revision", "max_model_len", "seed")

def install_hint() -> str:
    """What to do when vLLM cannot be imported, with the install line for how CoMMET was installed."""
    return (f"the vllm provider needs vLLM on a CUDA machine: {install_command('vllm')} "
            "(or use hf:PATH for transformers, or openai:NAME?base_url=... against `vllm serve`)")


def engine_kwargs(name: str, options: Mapping[str, str]) -> dict[str, Any]:
    """Keyword arguments for ``vllm.LLM`` from a spec's options."""
    base.refuse_unknown_options("vllm", options, VLLM_OPTIONS)
    kwargs: dict[str, Any] = {"model": name, "enable_prefix_caching": True}
    for key in INT_OPTIONS:
        if options.get(key):
            kwargs[key] = option_int(options, key, 0)
    for key in FLOAT_OPTIONS:
        if options.get(key):
            try:
                kwargs[key] = float(options[key])
            except ValueError:
                raise base.ModelSpecError(f"option {key}={options[key]!r} must be a number") from None
    for key in BOOL_OPTIONS:
        if options.get(key):
            kwargs[key] = option_bool(options, key)
    for key in STR_OPTIONS:
        if options.get(key):
            kwargs[key] = options[key]
    if kwargs.get("distributed_executor_backend") not in (None, "ray", "mp", "uni", "external_launcher"):
        raise base.ModelSpecError("vllm: distributed_executor_backend must be ray, mp, uni or external_launcher")
    if options.get("max_images"):
        kwargs["limit_mm_per_prompt"] = {"image": option_int(options, "max_images", 1)}
    return kwargs


def sampling_kwargs(settings: base.GenerationSettings) -> dict[str, Any]:
    """Keyword arguments for ``vllm.SamplingParams`` (temperature 0 is greedy in vLLM)."""
    kwargs: dict[str, Any] = {"temperature": settings.temperature, "max_tokens": settings.max_tokens,
                              "top_p": settings.top_p if settings.top_p is not None else 1.0}
    if settings.seed is not None:
        kwargs["seed"] = settings.seed
    return kwargs


def to_vllm_messages(messages: Sequence[base.Message]) -> list[dict[str, Any]]:
    """OpenAI-style chat messages, which ``LLM.chat`` accepts (pictures as data URLs)."""
    return to_openai_messages(messages)


class VLLMModel(base.Model):
    free = True  # no paid call

    def __init__(self, name: str, options: Mapping[str, str]):
        if not name:
            raise base.ModelSpecError("vllm: a model path or hub id is required (vllm:PATH_OR_ID)")
        self.name = name
        self.options = dict(options)
        self.spec = f"vllm:{name}"
        kwargs = engine_kwargs(name, options)
        try:
            vllm = importlib.import_module("vllm")
        except ImportError as exc:
            raise base.ModelSpecError(f"{install_hint()} ({exc})") from None
        self._vllm = vllm
        path = Path(name).expanduser()
        self.local_path = path.resolve() if path.exists() else None
        if self.local_path is not None:
            kwargs["model"] = str(self.local_path)
        elif not option_bool(options, "download") and not offline_env():
            os.environ["HF_HUB_OFFLINE"] = "1"
        self.engine_args = kwargs
        self.llm = vllm.LLM(**kwargs)
        self.fingerprint = (files_fingerprint(self.local_path) if self.local_path and self.local_path.is_dir()
                            else options.get("revision") or "unknown")
        self.batcher: MicroBatcher[base.ModelRequest, base.ModelResponse] = MicroBatcher(
            self._run_batch, max_batch=option_int(options, "max_batch", 256),
            wait_s=option_int(options, "batch_wait_ms", 20) / 1000.0, name="vllm")

    def identity(self) -> dict[str, object]:
        ident: dict[str, object] = {"spec": self.spec, "provider": "vllm", "model": self.name,
                                    "weights": self.fingerprint}
        for key in OUTPUT_OPTIONS:
            if self.options.get(key):
                ident[key] = self.options[key]
        return ident

    async def generate(self, request: base.ModelRequest) -> base.ModelResponse:
        try:
            return await self.batcher.submit(request)
        except base.ModelCallError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise base.ModelCallError(f"{self.spec}: generation failed: {type(exc).__name__}: {exc}",
                                      kind="generation_error") from exc

    def _run_batch(self, requests: list[base.ModelRequest]) -> list[base.ModelResponse | Exception]:
        conversations = [to_vllm_messages(r.messages) for r in requests]
        params = [self._vllm.SamplingParams(**sampling_kwargs(r.settings)) for r in requests]
        outputs = self.llm.chat(conversations, sampling_params=params, use_tqdm=False,
                                add_generation_prompt=True)
        results: list[base.ModelResponse | Exception] = []
        for output in outputs:
            completion = output.outputs[0]
            usage = base.Usage(len(output.prompt_token_ids or []), len(completion.token_ids or []))
            results.append(base.ModelResponse(text=completion.text, usage=usage,
                                              finish_reason=completion.finish_reason))
        return results

    async def aclose(self) -> None:
        self.batcher.close()


def create(name: str, options: dict[str, str]) -> VLLMModel:
    return VLLMModel(name, options)
