"""hf: a tiny random-weight Llama built in the test, loaded through ``hf:<path>``; no network."""

from __future__ import annotations

import asyncio

import pytest
import torch

from commet.models.base import GenerationSettings, ImagePart, Message, ModelCallError, ModelRequest, TextPart
from commet.models.registry import create_model
from commet.models.transformers_model import MicroBatcher

SPECIALS = ["<pad>", "<s>", "</s>", "<unk>", "<|system|>", "<|user|>", "<|assistant|>"]
TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}</s>{% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>{% endif %}")


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab = {token: i for i, token in enumerate(SPECIALS + [chr(c) for c in range(32, 127)])}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    backend.decoder = decoders.Fuse()
    backend.add_special_tokens(SPECIALS)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>",
                                        pad_token="<pad>", unk_token="<unk>")
    tokenizer.chat_template = TEMPLATE
    config = LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                         bos_token_id=1, eos_token_id=2, pad_token_id=0)
    torch.manual_seed(0)
    model = LlamaForCausalLM(config)
    path = tmp_path_factory.mktemp("tiny-llama")
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def conversation(i: int) -> ModelRequest:
    return ModelRequest(
        messages=(Message.text("system", "Answer briefly."),
                  Message.text("user", f"Story {i}: " + "which snack? " * (i % 3 + 1))),
        settings=GenerationSettings(temperature=0.0, max_tokens=8),
    )


async def test_hf_batches_concurrent_calls_and_is_deterministic(tiny_model_dir, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = create_model(f"hf:{tiny_model_dir}?device=cpu&max_batch=8&batch_wait_ms=50&dtype=float32")
    requests = [conversation(i) for i in range(6)]
    first = await asyncio.gather(*(model.generate(r) for r in requests))
    assert model.batcher.stats.batches == 1 and model.batcher.stats.sizes == [6]
    second = await asyncio.gather(*(model.generate(r) for r in requests))
    assert [r.text for r in first] == [r.text for r in second]
    assert model.batcher.stats.batches == 2
    for response in first:
        assert response.finish_reason in ("stop", "length")
        assert 0 < response.usage.output_tokens <= 8
        assert response.usage.input_tokens > 10
    # different prompts were padded on the left and still got their own token counts
    assert len({r.usage.input_tokens for r in first}) == 3
    # a single unbatched call with the same prompt agrees with its batched answer (greedy)
    alone = await model.generate(requests[0])
    assert alone.text == first[0].text
    ident = model.identity()
    assert ident["provider"] == "hf" and ident["kind"] == "causal" and len(ident["weights"]) == 16
    await model.aclose()


async def test_hf_rejects_pictures_for_text_only_models(tiny_model_dir):
    model = create_model(f"hf:{tiny_model_dir}?device=cpu")
    request = ModelRequest(messages=(Message("user", (TextPart("look"), ImagePart(b"x", "image/png", "i"))),))
    with pytest.raises(ModelCallError) as caught:
        await model.generate(request)
    assert caught.value.kind == "unsupported_input"
    await model.aclose()


def test_hf_missing_model_is_a_clear_error(tmp_path):
    from commet.models.base import UnknownModelError

    with pytest.raises(UnknownModelError, match="cannot load"):
        create_model("hf:no-such-org/no-such-model-xyz")


async def test_micro_batcher_groups_by_key_and_respects_max_batch():
    seen: list[list[tuple[str, int]]] = []

    def runner(items):
        seen.append(list(items))
        return [ValueError("bad") if n == 3 else n * 10 for _, n in items]

    batcher = MicroBatcher(runner, max_batch=2, wait_s=0.05, key=lambda item: item[0])
    items = [("a", 1), ("b", 2), ("a", 3), ("a", 4), ("b", 5)]
    results = await asyncio.gather(*(batcher.submit(i) for i in items), return_exceptions=True)
    assert results[:2] == [10, 20] and isinstance(results[2], ValueError) and results[3:] == [40, 50]
    assert [len(b) for b in seen] == [2, 2, 1]
    assert all(len({k for k, _ in b}) == 1 for b in seen)
    assert batcher.stats.items == 5
    batcher.close()
