"""hf vision path: a tiny random-weight Llava built in the test, loaded through ``hf:<path>`` offline.

The checkpoint (CLIP vision tower + Llama text model, hidden size 32, 2 layers each, 32x32
pictures in 16x16 patches, so 4 image tokens) is saved with a processor made locally: a
character-level tokenizer built with ``tokenizers`` that knows the ``<image>`` token and
adds BOS, a CLIP image processor constructed from arguments and a hand-written chat template
that places ``<image>`` where the picture is in the conversation. A two-turn StoryTurn with
a picture then runs end to end through the engine.
"""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest
import torch
import transformers
import transformers.models.llava  # noqa: F401 - the test extra must provide it

from commet.engine import EvalSettings, evaluate_async
from commet.format.dataset import Dataset
from commet.format.model import Feedback, StoryTurn, Turn
from commet.models.base import GenerationSettings, ImagePart, Message, ModelRequest, TextPart
from commet.models.registry import create_model
from commet.store import Store

SPECIALS = ["<pad>", "<s>", "</s>", "<unk>", "<image>", "<|system|>", "<|user|>", "<|assistant|>"]
IMAGE_TOKEN_ID = SPECIALS.index("<image>")
BOS_ID = SPECIALS.index("<s>")
IMAGE_TOKENS = 4  # (32 / 16) ** 2 patches; the CLS feature is dropped ("default" strategy)
TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for p in m['content'] %}"
    "{% if p['type'] == 'image' %}<image>{% else %}{{ p['text'] }}{% endif %}{% endfor %}{% endif %}"
    "</s>{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
SETTINGS = GenerationSettings(temperature=0.0, max_tokens=6)


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """A 32-wide model runs several times faster on one thread than on a contended pool."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def tiny_vlm_dir(tmp_path_factory) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import (
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
        PreTrainedTokenizerFast,
    )

    try:  # transformers 5 without torchvision: the PIL backend, without the fallback warning
        from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil as ImageProcessor
    except ImportError:  # pragma: no cover - older transformers
        from transformers import CLIPImageProcessor as ImageProcessor

    vocab = {token: i for i, token in enumerate(SPECIALS + [chr(c) for c in range(32, 127)])}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    backend.decoder = decoders.Fuse()
    backend.add_special_tokens(SPECIALS)
    # the tokenizer adds BOS by itself, as Llama's does: the template's BOS must not be doubled
    backend.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B",
                                                           special_tokens=[("<s>", BOS_ID)])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>",
                                        pad_token="<pad>", unk_token="<unk>")
    image_processor = ImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    processor = LlavaProcessor(image_processor=image_processor, tokenizer=tokenizer, patch_size=16,
                               vision_feature_select_strategy="default", chat_template=TEMPLATE,
                               image_token="<image>", num_additional_image_tokens=1)
    vision = CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                              image_size=32, patch_size=16, projection_dim=32)
    text = LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                       num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048,
                       bos_token_id=BOS_ID, eos_token_id=2, pad_token_id=0)
    config = LlavaConfig(vision_config=vision, text_config=text, image_token_index=IMAGE_TOKEN_ID,
                         image_seq_length=IMAGE_TOKENS, vision_feature_layer=-2,
                         vision_feature_select_strategy="default")
    torch.manual_seed(0)
    model = LlavaForConditionalGeneration(config)
    path = tmp_path_factory.mktemp("tiny-llava")
    model.save_pretrained(path)
    processor.save_pretrained(path)
    return path


def png(colour: tuple[int, int, int], size: tuple[int, int] = (48, 40)) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, format="PNG")
    return out.getvalue()


class Inputs:
    """What transformers_model.py passed to each ``generate`` (prompt ids, pixel values) and what the vision tower saw."""

    def __init__(self, model: Any) -> None:
        self.calls: list[dict[str, Any]] = []
        self.tower: list[Any] = []
        generate = model.generate

        def recording_generate(**kwargs: Any) -> Any:
            pixels = kwargs.get("pixel_values")
            self.calls.append({"input_ids": kwargs["input_ids"].detach().clone(),
                               "pixels": None if pixels is None else pixels.detach().clone()})
            return generate(**kwargs)

        model.generate = recording_generate
        inner = getattr(model, "model", model)
        tower = getattr(inner, "vision_tower", None) or getattr(model, "vision_tower", None)
        assert tower is not None
        tower.register_forward_pre_hook(self._tower_hook, with_kwargs=True)

    def _tower_hook(self, module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        pixels = args[0] if args else kwargs["pixel_values"]
        self.tower.append(pixels.detach().clone())


def load(path: Path, monkeypatch) -> tuple[Any, Inputs]:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = create_model(f"hf:{path}?device=cpu&dtype=float32&batch_wait_ms=30")
    return model, Inputs(model.model)


def dataset() -> Dataset:
    story = StoryTurn(id="kite", task="visual_perception", category="Percept", image_dependent=True, turns=[
        Turn(story="Look at the picture.", question="What colour is the kite, red or blue?", image="kite",
             answers=["Red"]),
        Turn(story="Tom holds the string.", question="Who flies the kite, Tom or Mia?", answers=["Tom"],
             feedback=Feedback(right="Yes, it is red.", wrong="Look again: the kite is red.")),
    ])
    return Dataset([story], name="vision", images={"kite": png((220, 30, 30))})


async def test_two_turn_story_with_a_picture_runs_end_to_end(tiny_vlm_dir, tmp_path, monkeypatch):
    model, inputs = load(tiny_vlm_dir, monkeypatch)
    assert model.kind == "vision" and model.identity()["kind"] == "vision"
    settings = EvalSettings(images="on", generation=SETTINGS, image_max_side=64,
                            undecided_feedback="wrong")  # a random model: every turn asked all the same
    results = []
    try:
        for db in (tmp_path / "a.sqlite", tmp_path / "b.sqlite"):
            summary = await evaluate_async(model, dataset(), judge="rules", db=db, run="r", settings=settings)
            assert summary.run.status == "done" and summary.progress.errors == 0
            assert summary.call_counts["model_calls"] == 2 and summary.call_counts["model_errors"] == 0
            with Store(db) as store:
                record = store.get_run("r")
                assert record is not None
                turns = [r.columns() for r in store.turn_rows(record.id)]
                (story,) = store.story_rows(record.id)
                usage = store.usage(record.id)
            assert story.status == "done"
            results.append(turns)
    finally:
        await model.aclose()

    # two scored turns per run, and the picture recorded with the first
    for turns in results:
        assert [t["turn"] for t in turns] == [0, 1]
        for t in turns:
            assert t["error_kind"] is None and t["response"] is not None and t["outcome"] is not None
            assert t["model_key"]
        assert [i["id"] for i in json.loads(turns[0]["images_json"])] == ["kite"]
    assert usage["input_tokens"] > 2 * IMAGE_TOKENS

    # the picture reached the model on both turns (the second turn's conversation still holds it):
    # pixel values of one 32x32 picture, and exactly 4 image tokens and one BOS in the prompt
    assert len(inputs.calls) == 4  # 2 turns x 2 runs
    assert len(inputs.tower) == 4
    assert all(torch.equal(t, c["pixels"]) for t, c in zip(inputs.tower, inputs.calls, strict=True))
    for call in inputs.calls:
        assert call["pixels"] is not None and tuple(call["pixels"].shape) == (1, 3, 32, 32)
        ids = call["input_ids"]
        assert int((ids == IMAGE_TOKEN_ID).sum()) == IMAGE_TOKENS
        assert int((ids == BOS_ID).sum()) == 1 and int(ids[0, 0]) == BOS_ID
    assert torch.equal(inputs.calls[0]["pixels"], inputs.calls[1]["pixels"])
    # the second turn's prompt extends the first: same picture tokens, then reply and the new turn
    first, second = inputs.calls[0]["input_ids"][0], inputs.calls[1]["input_ids"][0]
    assert second.shape[0] > first.shape[0] and torch.equal(second[: first.shape[0]], first)

    # greedy: the two runs give the same outputs
    compared = ("prompt", "response", "outcome", "correct", "branch", "feedback_kind")
    assert [{c: t[c] for c in compared} for t in results[0]] == [{c: t[c] for c in compared} for t in results[1]]


def picture_request(colour: tuple[int, int, int]) -> ModelRequest:
    return ModelRequest((
        Message.text("system", "Answer briefly."),
        Message("user", (TextPart("Look."), ImagePart(png(colour), "image/png", "pic"), TextPart("Which colour?"))),
    ), settings=SETTINGS)


async def test_batched_vision_calls_match_single_calls(tiny_vlm_dir, monkeypatch):
    model, inputs = load(tiny_vlm_dir, monkeypatch)
    text_only = ModelRequest((Message.text("user", "No picture in this much longer question, is there?"),),
                             settings=SETTINGS)
    requests = [picture_request((220, 30, 30)), text_only, picture_request((20, 30, 220))]
    try:
        batched = await asyncio.gather(*(model.generate(r) for r in requests))
        assert model.batcher.stats.sizes == [3]
        alone = [await model.generate(r) for r in requests]
    finally:
        await model.aclose()
    assert [r.text for r in batched] == [r.text for r in alone]
    assert [r.usage.input_tokens for r in batched] == [r.usage.input_tokens for r in alone]
    # the batch carried both pictures, in order, and left padding kept each row's prompt intact
    batch = inputs.calls[0]
    assert tuple(batch["pixels"].shape) == (2, 3, 32, 32)
    assert torch.equal(batch["pixels"][0], inputs.calls[1]["pixels"][0])
    assert torch.equal(batch["pixels"][1], inputs.calls[3]["pixels"][0])
    assert [int((row == IMAGE_TOKEN_ID).sum()) for row in batch["input_ids"]] == [IMAGE_TOKENS, 0, IMAGE_TOKENS]
    assert inputs.calls[2]["pixels"] is None
    assert [tuple(t.shape[:1]) for t in inputs.tower] == [(2,), (1,), (1,)]  # the text-only call ran no tower
