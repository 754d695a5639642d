"""Picture backends for generated StoryTurns and for regeneration in the review app.

An image spec looks like a model spec, ``provider:name?option=value&...``:

* ``openai:gpt-image-1`` -- the OpenAI Images API (``images.generate``), picture returned as
  ``b64_json``. Options: ``base_url``, ``api_key_env`` (default ``OPENAI_API_KEY``), ``size``
  (default ``1024x1024``), ``quality``, ``response_format`` (default ``b64_json`` for
  ``dall-e-*`` models; gpt-image models always answer in base64 and reject the parameter).
* ``google:gemini-2.5-flash-image`` -- Gemini image generation through ``google-genai``
  (``generate_content`` with the IMAGE response modality; the picture comes back as inline
  data). Options: ``base_url``, ``api_key_env`` (default ``GEMINI_API_KEY`` then
  ``GOOGLE_API_KEY``), ``aspect_ratio`` (e.g. ``4:3``).
* ``diffusers:stabilityai/sd-turbo`` or ``diffusers:/path/to/pipeline`` -- a local text-to-image
  diffusers pipeline (extra ``commet-bench[diffusers]``, imported lazily), loaded with
  ``AutoPipelineForText2Image``; a folder written by ``save_pretrained`` is loaded with
  ``local_files_only`` (never the network), and so is a hub id unless ``download=1`` (then the
  local cache is tried first by diffusers itself). Options: ``device`` (default ``cuda``, then ``mps``,
  then ``cpu``), ``dtype`` (``float16``/``bfloat16``/``float32``; default ``float16`` on CUDA,
  else ``float32``), ``steps`` (default 4), ``guidance`` (default 0.0), ``size`` (``WxH``; default
  the pipeline's own), ``seed`` (a fixed seed gives the same picture for the same prompt; the
  noise is drawn on the CPU so it does not depend on the device).

Remote backends stand on the chat models' remote base (:class:`commet.models.remote.RemoteService`)
and share each provider's key variables, SDK and client set-up with its chat model
(:class:`~commet.models.openai_compat.OpenAIService`, :class:`~commet.models.google_model.GoogleService`)
and the model specs' grammar (:func:`commet.models.registry.split_spec`): the same retry/timeout
policy (options ``timeout``, ``max_attempts``, ``backoff_base``, ``backoff_max``),
requests-per-minute limit (``rpm``, shared across processes like a chat model's) and key lookup
(``api_key_env``); ``tpm``, ``price_in`` and ``price_out`` are refused (pictures are limited and
priced per picture). Every backend returns PNG bytes re-encoded with Pillow, so a reply that is
not a real picture fails loudly.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import importlib.util
import io
import os
from abc import ABC, abstractmethod
from typing import Any

from PIL import Image, UnidentifiedImageError

from commet.extras import install_command
from commet.models.base import ModelCallError, ModelSpecError, UnknownModelError, did_you_mean
from commet.models.google_model import GoogleService
from commet.models.openai_compat import OpenAIService
from commet.models.registry import split_spec
from commet.models.remote import RemoteService

IMAGE_PROVIDERS = ("openai", "google", "diffusers")


def to_png(data: bytes) -> bytes:
    """``data`` decoded and re-encoded as PNG; a ModelCallError when it is not a picture."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            converted = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise ModelCallError(f"the image backend returned something that is not a picture ({exc})",
                             kind="bad_image") from None
    out = io.BytesIO()
    converted.save(out, format="PNG")
    return out.getvalue()


class ImageModel(ABC):
    """Turns one prompt into one picture (PNG bytes)."""

    spec: str

    @abstractmethod
    async def generate(self, prompt: str) -> bytes:
        """One picture for ``prompt``; raises ModelCallError on a final failure."""

    async def aclose(self) -> None:
        """Release clients and pipelines."""


class _RemoteImageModel(RemoteService, ImageModel):
    """A picture API on the chat models' remote base: the same option checks, key lookup, retry
    policy and ``rpm`` limit. Token budgets and token prices are refused: a picture's cost and
    limits are counted per picture, and the API's usage figures do not say it."""

    kind = "image model"
    refused_options = {
        "tpm": "does not apply to picture models (their limits count pictures: use rpm)",
        "price_in": "does not apply to picture models (they are priced per picture, not per token)",
        "price_out": "does not apply to picture models (they are priced per picture, not per token)",
    }

    @abstractmethod
    async def _call(self, prompt: str) -> bytes:
        """One attempt, no retries."""

    async def generate(self, prompt: str) -> bytes:
        data, _ = await self.policy.run(lambda: self._call(prompt), limiter=self.limiter, what=self.spec)
        return to_png(data)


class OpenAIImageModel(OpenAIService, _RemoteImageModel):
    output_options = frozenset({"size", "quality", "response_format"})

    def __init__(self, name: str, options: dict[str, str]):
        super().__init__(name, options)
        import openai

        self._client = openai.AsyncOpenAI(api_key=self.api_key, base_url=self.base_url, max_retries=0,
                                          timeout=self.policy.timeout)

    async def _call(self, prompt: str) -> bytes:
        params: dict[str, Any] = {"model": self.name, "prompt": prompt, "n": 1,
                                  "size": self.options.get("size", "1024x1024")}
        if self.options.get("quality"):
            params["quality"] = self.options["quality"]
        response_format = self.options.get("response_format", "b64_json" if self.name.startswith("dall-e") else "")
        if response_format:
            params["response_format"] = response_format
        result = await self._client.images.generate(**params)
        if not result.data or not result.data[0].b64_json:
            raise ModelCallError("the Images API returned no b64_json picture", kind="empty_response")
        try:
            return base64.b64decode(result.data[0].b64_json, validate=True)
        except binascii.Error:
            raise ModelCallError("the Images API returned invalid base64", kind="bad_image") from None

    async def aclose(self) -> None:
        await self._client.close()


class GeminiImageModel(GoogleService, _RemoteImageModel):
    output_options = frozenset({"aspect_ratio"})
    transport_options = frozenset({"api_version"})

    async def _call(self, prompt: str) -> bytes:
        config: dict[str, Any] = {"response_modalities": ["TEXT", "IMAGE"]}
        if self.options.get("aspect_ratio"):
            config["image_config"] = self._types.ImageConfig(aspect_ratio=self.options["aspect_ratio"])
        response = await self._client.aio.models.generate_content(
            model=self.name, contents=prompt, config=self._types.GenerateContentConfig(**config))
        texts: list[str] = []
        for candidate in response.candidates or []:
            for part in (candidate.content.parts if candidate.content and candidate.content.parts else []):
                data = part.inline_data.data if part.inline_data is not None else None
                if isinstance(data, bytes) and data:
                    return data
                if part.text:
                    texts.append(part.text)
        said = f"; it said: {' '.join(texts)[:200]}" if texts else ""
        raise ModelCallError(f"Gemini returned no picture{said}", kind="empty_response")


DIFFUSERS_OPTIONS = frozenset({"download", "device", "dtype", "steps", "guidance", "seed", "size"})
DIFFUSERS_DTYPES = ("float16", "bfloat16", "float32")


def _option(options: dict[str, str], key: str, kind: type, default: Any) -> Any:
    raw = options.get(key, "")
    if raw == "":
        return default
    try:
        return kind(raw)
    except ValueError:
        raise ModelSpecError(f"diffusers images: option {key}={raw!r} is not a valid {kind.__name__}") from None


def _size(raw: str) -> tuple[int, int] | None:
    if not raw:
        return None
    width, sep, height = raw.lower().partition("x")
    if not (sep and width.isdigit() and height.isdigit() and int(width) > 0 and int(height) > 0):
        raise ModelSpecError(f"diffusers images: size={raw!r} must look like WIDTHxHEIGHT, e.g. 512x512")
    return int(width), int(height)


class DiffusersImageModel(ImageModel):
    """A local text-to-image pipeline (``pip install 'commet-bench[diffusers]'``)."""

    def __init__(self, name: str, options: dict[str, str]):
        if not name:
            raise ModelSpecError("diffusers: a pipeline is required (diffusers:HUB_ID or diffusers:/path/to/folder)")
        unknown = set(options) - DIFFUSERS_OPTIONS
        if unknown:
            raise ModelSpecError(f"diffusers images: unknown option(s) {', '.join(sorted(unknown))}")
        self._steps = _option(options, "steps", int, 4)
        self._guidance = _option(options, "guidance", float, 0.0)
        self._seed = _option(options, "seed", int, None)
        self._size = _size(options.get("size", ""))
        if self._steps < 1:
            raise ModelSpecError("diffusers images: steps must be at least 1")
        dtype_name = options.get("dtype", "")
        if dtype_name and dtype_name not in DIFFUSERS_DTYPES:
            raise ModelSpecError(f"diffusers images: dtype must be one of {', '.join(DIFFUSERS_DTYPES)}")
        missing = [module for module in ("diffusers", "transformers", "torch")
                   if importlib.util.find_spec(module) is None]
        if missing:
            raise ModelSpecError("the diffusers image backend needs the optional packages: pip install "
                                 f"diffusers transformers torch, or {install_command('diffusers')} "
                                 f"(missing: {', '.join(missing)})")
        import torch
        from diffusers import AutoPipelineForText2Image
        from diffusers.utils import deprecation_utils

        device = options.get("device") or _default_device(torch)
        dtype = getattr(torch, dtype_name) if dtype_name else (
            torch.float16 if device.startswith("cuda") else torch.float32)
        local = os.path.isdir(os.path.expanduser(name))
        path = os.path.expanduser(name) if local else name
        # diffusers renamed from_pretrained's torch_dtype to dtype (the old name still works, with a warning)
        dtype_key = "dtype" if hasattr(deprecation_utils, "_resolve_dtype") else "torch_dtype"
        # like hf: models, a hub id is only fetched with download=1; otherwise only the local cache
        local_only = local or options.get("download", "").lower() not in ("1", "true", "yes")
        try:
            pipe = AutoPipelineForText2Image.from_pretrained(path, local_files_only=local_only, **{dtype_key: dtype})
            pipe = pipe.to(device)
        except Exception as exc:  # missing files, unknown pipeline class, bad device...
            raise UnknownModelError(f"diffusers images: cannot load the pipeline {name!r} on {device}: "
                                    f"{type(exc).__name__}: {exc}") from None
        pipe.set_progress_bar_config(disable=True)
        self._torch = torch
        self._pipe: Any = pipe
        self._device = device
        self._lock = asyncio.Lock()
        self.spec = f"diffusers:{name}"

    def _run(self, prompt: str) -> bytes:
        params: dict[str, Any] = {"prompt": prompt, "num_inference_steps": self._steps,
                                  "guidance_scale": self._guidance, "output_type": "pil"}
        if self._size is not None:
            params["width"], params["height"] = self._size
        if self._seed is not None:
            # drawn on the CPU: the same seed gives the same noise whatever the device
            params["generator"] = self._torch.Generator(device="cpu").manual_seed(self._seed)
        try:
            images = self._pipe(**params).images
        except Exception as exc:  # bad size, out of memory...: one failed picture, not a crash
            raise ModelCallError(f"{self.spec}: the pipeline failed: {type(exc).__name__}: {exc}",
                                 kind="pipeline_error") from None
        if not images:
            raise ModelCallError(f"{self.spec}: the pipeline returned no picture", kind="empty_response")
        out = io.BytesIO()
        images[0].save(out, format="PNG")
        return out.getvalue()

    async def generate(self, prompt: str) -> bytes:
        async with self._lock:  # one pipeline, one picture at a time
            return to_png(await asyncio.to_thread(self._run, prompt))

    async def aclose(self) -> None:
        pipe, self._pipe = self._pipe, None
        del pipe
        if self._device.startswith("cuda") and self._torch.cuda.is_available():
            self._torch.cuda.empty_cache()


def _default_device(torch: Any) -> str:
    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return "mps"
    return "cpu"


def create_image_model(spec: str) -> ImageModel:
    """Build a picture backend from ``provider:name?options``; UnknownModelError with one clear line."""
    parsed = split_spec(spec, IMAGE_PROVIDERS, what="image model")
    if parsed.provider == "openai":
        return OpenAIImageModel(parsed.name, parsed.options)
    if parsed.provider == "google":
        return GeminiImageModel(parsed.name, parsed.options)
    if parsed.provider == "diffusers":
        return DiffusersImageModel(parsed.name, parsed.options)
    hint = did_you_mean(parsed.provider, IMAGE_PROVIDERS)
    raise UnknownModelError(f"unknown image provider {parsed.provider!r}{hint} in {spec!r} "
                            f"(known: {', '.join(IMAGE_PROVIDERS)})")
