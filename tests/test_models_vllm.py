"""vllm: the parts that need no vLLM (vLLM is not installed here and there is no GPU).

Option parsing, SamplingParams arguments, message conversion, the install hint, and the
batching path against a stand-in ``vllm`` module that records its calls.
"""

from __future__ import annotations

import asyncio
import re
import sys
import types
from dataclasses import dataclass

import pytest

from commet.models.base import (
    GenerationSettings,
    ImagePart,
    Message,
    ModelRequest,
    ModelSpecError,
    TextPart,
)
from commet.models.registry import create_model
from commet.models.vllm_offline import engine_kwargs, sampling_kwargs, to_vllm_messages


def test_engine_kwargs_pass_parallelism_through():
    kwargs = engine_kwargs("org/model", {"tensor_parallel_size": "4", "pipeline_parallel_size": "2",
                                         "distributed_executor_backend": "ray", "gpu_memory_utilization": "0.85",
                                         "max_model_len": "8192", "max_images": "4", "enforce_eager": "1"})
    assert kwargs == {"model": "org/model", "enable_prefix_caching": True, "tensor_parallel_size": 4,
                      "pipeline_parallel_size": 2, "distributed_executor_backend": "ray",
                      "gpu_memory_utilization": 0.85, "max_model_len": 8192, "enforce_eager": True,
                      "limit_mm_per_prompt": {"image": 4}}
    assert engine_kwargs("m", {"enable_prefix_caching": "0"})["enable_prefix_caching"] is False
    with pytest.raises(ModelSpecError, match="unknown option"):
        engine_kwargs("m", {"tensor_paralel_size": "2"})
    with pytest.raises(ModelSpecError, match="must be an integer"):
        engine_kwargs("m", {"tensor_parallel_size": "two"})
    with pytest.raises(ModelSpecError, match="distributed_executor_backend"):
        engine_kwargs("m", {"distributed_executor_backend": "slurm"})


def test_sampling_kwargs():
    assert sampling_kwargs(GenerationSettings()) == {"temperature": 0.0, "max_tokens": 512, "top_p": 1.0}
    assert sampling_kwargs(GenerationSettings(temperature=0.7, top_p=0.9, seed=3, max_tokens=5)) == {
        "temperature": 0.7, "max_tokens": 5, "top_p": 0.9, "seed": 3}


def test_message_conversion_uses_data_urls():
    messages = (Message.text("system", "S"),
                Message("user", (ImagePart(b"\x89PNG", "image/png", "i1"), TextPart("Q?"))))
    converted = to_vllm_messages(messages)
    assert converted[0] == {"role": "system", "content": "S"}
    assert converted[1]["content"][0] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw=="}}
    assert converted[1]["content"][1] == {"type": "text", "text": "Q?"}


def test_missing_vllm_gives_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm -> ImportError
    from commet.extras import install_command

    with pytest.raises(ModelSpecError, match=re.escape(install_command("vllm"))):  # as CoMMET was installed
        create_model("vllm:some/model")


@dataclass
class _Completion:
    text: str
    token_ids: list[int]
    finish_reason: str


@dataclass
class _Output:
    prompt_token_ids: list[int]
    outputs: list[_Completion]


def _fake_vllm() -> types.ModuleType:
    module = types.ModuleType("vllm")

    class SamplingParams:
        def __init__(self, **kwargs):
            self.kwargs = kwargs

    class LLM:
        instances: list = []

        def __init__(self, **kwargs):
            self.kwargs = kwargs
            self.calls: list = []
            LLM.instances.append(self)

        def chat(self, conversations, sampling_params, use_tqdm, add_generation_prompt):
            assert use_tqdm is False and add_generation_prompt is True
            assert len(conversations) == len(sampling_params)
            self.calls.append((conversations, sampling_params))
            return [_Output([1] * len(c[-1]["content"]),
                            [_Completion(f"echo {c[-1]['content']}", [5, 6], "stop")]) for c in conversations]

    module.SamplingParams = SamplingParams
    module.LLM = LLM
    return module


async def test_batching_path_with_a_stand_in_engine(monkeypatch, tmp_path):
    fake = _fake_vllm()
    monkeypatch.setitem(sys.modules, "vllm", fake)
    (tmp_path / "config.json").write_text("{}")
    model = create_model(f"vllm:{tmp_path}?tensor_parallel_size=2&batch_wait_ms=50")
    (llm,) = fake.LLM.instances
    assert llm.kwargs["tensor_parallel_size"] == 2 and llm.kwargs["enable_prefix_caching"] is True
    requests = [ModelRequest(messages=(Message.text("user", f"q{i}"),),
                             settings=GenerationSettings(temperature=0.1 * i)) for i in range(5)]
    responses = await asyncio.gather(*(model.generate(r) for r in requests))
    assert [r.text for r in responses] == [f"echo q{i}" for i in range(5)]
    assert responses[0].usage.input_tokens == 2 and responses[0].usage.output_tokens == 2
    assert len(llm.calls) == 1  # one engine step for all five stories, mixed settings included
    assert [p.kwargs["temperature"] for p in llm.calls[0][1]] == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.4])
    assert model.identity()["provider"] == "vllm"
    await model.aclose()
