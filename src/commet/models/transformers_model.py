"""``hf:PATH_OR_ID``: a local transformers model, batched across the stories in flight.

The engine runs one coroutine per story and calls :meth:`Model.generate` once per turn.
:class:`MicroBatcher` collects the calls that arrive within a short window (option
``batch_wait_ms``, default 10) up to ``max_batch`` (default 16), groups them by sampling
settings, and runs each group as ONE left-padded ``model.generate`` in a single worker
thread (so the event loop stays free and batches never overlap on the device). Calls that
arrive while a batch runs form the next batch at once, without a new window.

Models:

* causal LMs (``AutoModelForCausalLM`` + ``AutoTokenizer`` and its chat template);
* image-text-to-text models (``AutoModelForImageTextToText`` + ``AutoProcessor``), chosen
  when the config has a ``vision_config`` or with ``kind=vision``. Pictures are given to the
  processor as PIL images in the order they appear in the conversation (one flat list for
  the batch), and a prompt whose chat template already starts with BOS is tokenized without
  a second one. tests/test_models_hf_vision.py runs this path on a tiny random Llava. A
  text-only model asked about a picture fails that call with
  ``ModelCallError(kind="unsupported_input")`` rather than silently dropping it.

Decoding is greedy when ``temperature == 0``; otherwise sampling with ``temperature`` /
``top_p``, seeded per batch with ``seed`` when given (a seed then fixes the batch, not the
single call, so sampled runs are only reproducible with the same batch composition).

Never downloads by default: weights are loaded with ``local_files_only=True`` (a local
directory, or a hub id already in the local cache). ``download=1`` allows fetching a hub
id, except when ``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE`` is set.

Options: ``device`` (default ``cuda`` when available, else ``cpu``), ``device_map`` (e.g.
``auto`` to spread over GPUs), ``dtype`` (``auto``, ``bfloat16``, ``float16``, ``float32``),
``kind`` (``causal`` / ``vision``), ``max_batch``, ``batch_wait_ms``, ``revision``,
``trust_remote_code`` (default off), ``download``. ``identity()`` holds the model name, a
fingerprint of its files (or the hub commit), ``dtype`` and ``kind``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import io
import os
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar, cast

from commet.extras import install_command
from commet.models import base

T = TypeVar("T")
R = TypeVar("R")


# ----------------------------------------------------------------------------- micro-batcher


@dataclass
class _Pending(Generic[T, R]):
    item: T
    future: asyncio.Future[R]
    enqueued: float


@dataclass
class BatchStats:
    batches: int = 0
    sizes: list[int] = field(default_factory=list)

    @property
    def items(self) -> int:
        return sum(self.sizes)


class MicroBatcher(Generic[T, R]):
    """Collect concurrent ``submit`` calls into batches run by ``runner`` in one worker thread.

    ``runner(items)`` is synchronous and returns one result per item, in order; a result
    that is an ``Exception`` is raised to that item's caller only. Items are grouped by
    ``key(item)``; a batch holds items of one key, at most ``max_batch`` of them. A batch
    starts when it is full or when its oldest item has waited ``wait_s``.
    """

    def __init__(self, runner: Callable[[list[T]], Sequence[R | Exception]], *, max_batch: int = 16,
                 wait_s: float = 0.01, key: Callable[[T], Hashable] | None = None, name: str = "batch"):
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        self.runner = runner
        self.max_batch = max_batch
        self.wait_s = max(0.0, wait_s)
        self.key = key or (lambda item: None)
        self.stats = BatchStats()
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"commet-{name}")
        self._pending: list[_Pending[T, R]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._worker: asyncio.Task[None] | None = None

    async def submit(self, item: T) -> R:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # first use, or a new event loop (tests)
            self._loop, self._wake, self._worker, self._pending = loop, asyncio.Event(), None, []
        future: asyncio.Future[R] = loop.create_future()
        self._pending.append(_Pending(item, future, loop.time()))
        assert self._wake is not None
        self._wake.set()
        if self._worker is None or self._worker.done():
            self._worker = loop.create_task(self._work())
        return await future

    def _take(self) -> list[_Pending[T, R]]:
        self._pending = [p for p in self._pending if not p.future.done()]
        if not self._pending:
            return []
        key = self.key(self._pending[0].item)
        batch: list[_Pending[T, R]] = []
        rest: list[_Pending[T, R]] = []
        for pending in self._pending:
            if len(batch) < self.max_batch and self.key(pending.item) == key:
                batch.append(pending)
            else:
                rest.append(pending)
        self._pending = rest
        return batch

    async def _work(self) -> None:
        loop = asyncio.get_running_loop()
        assert self._wake is not None
        while self._pending:
            # collection window, measured from the oldest waiting item
            deadline = self._pending[0].enqueued + self.wait_s
            while len(self._pending) < self.max_batch:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                self._wake.clear()
                try:
                    await asyncio.wait_for(self._wake.wait(), remaining)
                except asyncio.TimeoutError:
                    break
            batch = self._take()
            if not batch:
                continue
            self.stats.batches += 1
            self.stats.sizes.append(len(batch))
            try:
                results = await loop.run_in_executor(self._executor, self.runner, [p.item for p in batch])
                if len(results) != len(batch):
                    raise RuntimeError(f"batch runner returned {len(results)} results for {len(batch)} items")
            except Exception as exc:  # noqa: BLE001 - the whole batch failed
                for pending in batch:
                    if not pending.future.done():
                        pending.future.set_exception(exc)
                continue
            for pending, result in zip(batch, results, strict=True):
                if pending.future.done():
                    continue
                if isinstance(result, Exception):
                    pending.future.set_exception(result)
                else:
                    pending.future.set_result(result)

    def close(self) -> None:
        if self._worker is not None and not self._worker.done():
            self._worker.cancel()
        self._executor.shutdown(wait=False, cancel_futures=True)


def _one_line(exc: BaseException) -> str:
    """A library's error message (transformers' run over several lines) as one line of the refusal."""
    return " ".join(str(exc).split())


def option_int(options: Mapping[str, str], key: str, default: int) -> int:
    raw = options.get(key)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise base.ModelSpecError(f"option {key}={raw!r} must be an integer") from None


def option_bool(options: Mapping[str, str], key: str, default: bool = False) -> bool:
    raw = options.get(key)
    if raw is None or raw == "":
        return default
    return raw.lower() in ("1", "true", "yes", "on")


def offline_env() -> bool:
    return any(os.environ.get(v, "").lower() in ("1", "true", "yes", "on")
               for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def files_fingerprint(path: Path) -> str:
    """Hash of a local model directory: small config/tokenizer files by content, weights by name and size."""
    digest = hashlib.sha256()
    # linked files are read (a Hub cache's snapshot links its files to blobs), linked folders are not walked into:
    # a link back up (``ln -s . again``) would make the walk endless
    found = [Path(folder, name) for folder, _, names in os.walk(path, followlinks=False) for name in names]
    for file in sorted(p for p in found if p.is_file()):
        rel = file.relative_to(path).as_posix()
        if rel.startswith("."):
            continue
        digest.update(rel.encode())
        size = file.stat().st_size
        if file.suffix in (".json", ".jinja", ".txt", ".model") and size < 5_000_000:
            digest.update(file.read_bytes())
        else:
            digest.update(str(size).encode())
    return digest.hexdigest()[:16]


# ----------------------------------------------------------------------------- the model


HF_OPTIONS = frozenset({"device", "device_map", "dtype", "kind", "max_batch", "batch_wait_ms", "revision",
                        "trust_remote_code", "download"})


def to_chat(messages: Sequence[base.Message], *, vision: bool) -> list[dict[str, Any]]:
    """Conversation for a chat template: plain strings for text models, typed parts for processors."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if not vision:
            if message.images:
                raise base.ModelCallError("this model is text-only and the turn carries a picture "
                                          "(run without images or use an image-text-to-text model)",
                                          kind="unsupported_input")
            out.append({"role": message.role, "content": message.text_content})
            continue
        out.append({"role": message.role, "content": message.blocks(lambda image: {"type": "image"}, base.text_block)})
    return out


class HFModel(base.Model):
    free = True  # no paid call

    def __init__(self, name: str, options: Mapping[str, str]):
        base.refuse_unknown_options("hf", options, HF_OPTIONS)
        if not name:
            raise base.ModelSpecError("hf: a model path or hub id is required (hf:PATH_OR_ID)")
        try:
            import torch
            import transformers
        except ImportError as exc:
            raise base.ModelSpecError(f"hf provider needs torch and transformers: {install_command('hf')} "
                                      f"({exc})") from None
        self._torch = torch
        self.name = name
        self.options = dict(options)
        self.spec = f"hf:{name}"
        path = Path(name).expanduser()
        self.local_path = path.resolve() if path.exists() else None
        local_only = self.local_path is not None or offline_env() or not option_bool(options, "download")
        source = str(self.local_path) if self.local_path else name
        common: dict[str, Any] = {"local_files_only": local_only,
                                  "trust_remote_code": option_bool(options, "trust_remote_code")}
        if options.get("revision"):
            common["revision"] = options["revision"]
        try:
            config = transformers.AutoConfig.from_pretrained(source, **common)
        except (OSError, ValueError) as exc:
            hint = " (downloads are off: pass a local directory, or ?download=1 for a hub id)" if local_only else ""
            raise base.UnknownModelError(f"hf: cannot load {name!r}{hint}: {_one_line(exc)}") from None
        kind = options.get("kind") or ("vision" if getattr(config, "vision_config", None) is not None else "causal")
        if kind not in ("causal", "vision"):
            raise base.ModelSpecError("hf: kind must be causal or vision")
        self.kind = kind
        self.dtype_name = options.get("dtype", "auto")
        dtype: Any = "auto" if self.dtype_name == "auto" else getattr(torch, self.dtype_name, None)
        if dtype is None:
            raise base.ModelSpecError(f"hf: unknown dtype {self.dtype_name!r}")
        load: dict[str, Any] = {**common, "dtype": dtype}
        if options.get("device_map"):
            load["device_map"] = options["device_map"]
        try:
            if kind == "vision":
                self.processor = transformers.AutoProcessor.from_pretrained(source, **common)
                self.tokenizer = self.processor.tokenizer
                self.model = transformers.AutoModelForImageTextToText.from_pretrained(source, **load)
            else:
                self.processor = None
                self.tokenizer = transformers.AutoTokenizer.from_pretrained(source, **common)
                self.model = transformers.AutoModelForCausalLM.from_pretrained(source, **load)
        except (OSError, ValueError) as exc:
            raise base.UnknownModelError(f"hf: cannot load {name!r}: {_one_line(exc)}") from None
        if not options.get("device_map"):
            device = options.get("device") or ("cuda" if torch.cuda.is_available() else "cpu")
            # transformers decorates .to with functools.wraps; typeshed's _Wrapped is no descriptor, so mypy
            # does not bind self and reads the device as the model argument: typed as the torch module it is
            cast(torch.nn.Module, self.model).to(device)
        self.model.eval()
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        if getattr(self.tokenizer, "chat_template", None) is None and not (
                self.processor is not None and getattr(self.processor, "chat_template", None)):
            raise base.ModelSpecError(f"hf: {name!r} has no chat template; CoMMET needs a chat model")
        eos = self.model.generation_config.eos_token_id
        if eos is None:
            eos = self.tokenizer.eos_token_id
        self.eos_ids = set(eos if isinstance(eos, list) else [eos]) - {None}
        self.fingerprint = (files_fingerprint(self.local_path) if self.local_path and self.local_path.is_dir()
                            else getattr(config, "_commit_hash", None) or options.get("revision") or "unknown")
        self.batcher: MicroBatcher[base.ModelRequest, base.ModelResponse] = MicroBatcher(
            self._run_batch, max_batch=option_int(options, "max_batch", 16),
            wait_s=option_int(options, "batch_wait_ms", 10) / 1000.0,
            key=lambda request: request.settings, name="hf")

    def identity(self) -> dict[str, object]:
        return {"spec": self.spec, "provider": "hf", "model": self.name, "weights": self.fingerprint,
                "dtype": self.dtype_name, "kind": self.kind}

    async def generate(self, request: base.ModelRequest) -> base.ModelResponse:
        to_chat(request.messages, vision=self.kind == "vision")  # fail fast on unsupported input
        try:
            return await self.batcher.submit(request)
        except base.ModelCallError:
            raise
        except Exception as exc:  # noqa: BLE001 - a failed batch is this call's failure
            raise base.ModelCallError(f"{self.spec}: generation failed: {type(exc).__name__}: {exc}",
                                      kind="generation_error") from exc

    # -- runs in the worker thread

    def _encode(self, requests: list[base.ModelRequest]) -> Any:
        vision = self.kind == "vision"
        conversations = [to_chat(r.messages, vision=vision) for r in requests]
        if not vision:
            prompts = [self.tokenizer.apply_chat_template(c, tokenize=False, add_generation_prompt=True)
                       for c in conversations]
            return self.tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        from PIL import Image

        assert self.processor is not None
        prompts = [self.processor.apply_chat_template(c, tokenize=False, add_generation_prompt=True)
                   for c in conversations]
        images = [[Image.open(io.BytesIO(p.data)).convert("RGB") for m in r.messages for p in m.images]
                  for r in requests]
        kwargs: dict[str, Any] = {"text": prompts, "return_tensors": "pt", "padding": True}
        bos = self.tokenizer.bos_token
        if bos and all(prompt.startswith(bos) for prompt in prompts):
            # the chat template already wrote BOS: do not let the tokenizer add a second one
            # (what ProcessorMixin.apply_chat_template(tokenize=True) does too)
            kwargs["add_special_tokens"] = False
        if any(images):
            kwargs["images"] = [img for row in images for img in row]
        return self.processor(**kwargs)

    def _run_batch(self, requests: list[base.ModelRequest]) -> list[base.ModelResponse | Exception]:
        torch = self._torch
        settings = requests[0].settings
        inputs = self._encode(requests).to(self.model.device)
        config = self.model.generation_config.__class__.from_dict(self.model.generation_config.to_dict())
        config.max_new_tokens = settings.max_tokens
        config.pad_token_id = self.tokenizer.pad_token_id
        if settings.temperature > 0:
            config.do_sample = True
            config.temperature = settings.temperature
            config.top_p = settings.top_p if settings.top_p is not None else 1.0
            config.top_k = None
            if settings.seed is not None:
                torch.manual_seed(settings.seed)
        else:
            config.do_sample = False
            config.temperature = None
            config.top_p = None
            config.top_k = None
        with torch.inference_mode():
            output = self.model.generate(**inputs, generation_config=config)
        prompt_len = inputs["input_ids"].shape[1]
        input_counts = inputs["attention_mask"].sum(dim=1).tolist()
        results: list[base.ModelResponse | Exception] = []
        for row, count in zip(output[:, prompt_len:].tolist(), input_counts, strict=True):
            tokens: list[int] = []
            finish = "length"
            for token in row:
                if token in self.eos_ids:
                    finish = "stop"
                    tokens.append(token)
                    break
                tokens.append(token)
            text_tokens = tokens[:-1] if finish == "stop" else tokens
            text = self.tokenizer.decode(text_tokens, skip_special_tokens=True)
            results.append(base.ModelResponse(text=text, usage=base.Usage(int(count), len(tokens)),
                                              finish_reason=finish))
        return results

    async def aclose(self) -> None:
        self.batcher.close()


def create(name: str, options: dict[str, str]) -> HFModel:
    return HFModel(name, options)
