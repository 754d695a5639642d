"""The local diffusers picture backend, on a tiny random-weight Stable Diffusion pipeline built in the test.

Nothing is downloaded: the pipeline (UNet, VAE, CLIP text encoder, a CLIP tokenizer from a
hand-written vocabulary, a DDIM scheduler) is made from configs with random weights, saved with
``save_pretrained`` and loaded back through ``diffusers:<folder>``, with the Hub offline and any
connection that leaves the machine refused.
"""

from __future__ import annotations

import io
import json
import socket
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import diffusers  # noqa: F401 - the test extra must provide it
import pytest
import torch
import transformers  # noqa: F401 - the test extra must provide it
from PIL import Image
from typer.testing import CliRunner

from commet.cli import app  # noqa: E402
from commet.format import validate_dataset  # noqa: E402
from commet.format.validate import has_errors  # noqa: E402
from commet.generation.llm import create_image_model  # noqa: E402
from commet.models.base import ModelCallError, ModelSpecError, UnknownModelError  # noqa: E402
from commet.sources import load_dataset
from tests.fakeservers import FakeServer, openai_reply  # noqa: E402
from tests.llm_gen_servers import small_png  # noqa: E402
from tests.test_generate_llm import EXEMPLAR, GOOD  # noqa: E402

PROMPT = "A girl sits on a rug; a red kite lies on her left, a wooden train on her right. No text."


def _loopback(address: Any) -> bool:
    host = address[0] if isinstance(address, tuple) else ""
    return host in ("127.0.0.1", "::1", "localhost")


@pytest.fixture(scope="module")
def offline() -> Iterator[None]:
    """The Hub in offline mode and every connection off this machine refused (the fake chat server is local)."""
    real_connect = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address):
            raise OSError(f"test is offline: refused a connection to {address!r}")
        return real_connect(self, address)

    from huggingface_hub import constants

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setattr(constants, "HF_HUB_OFFLINE", True)  # read once at import, which came earlier
        patch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
        patch.setattr(socket.socket, "connect", connect)
        yield


def _tiny_tokenizer(folder: Path) -> Any:
    """A CLIP tokenizer over single letters (no merges), built from files written here."""
    from transformers import CLIPTokenizer

    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1, "!": 2}
    for char in string.ascii_lowercase + string.digits + ".,;:'?":
        vocab[char] = len(vocab)
        vocab[char + "</w>"] = len(vocab)
    folder.mkdir(parents=True)
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    return CLIPTokenizer(vocab_file=str(folder / "vocab.json"), merges_file=str(folder / "merges.txt"),
                         model_max_length=77, pad_token="!")


@pytest.fixture(scope="module")
def tiny_pipeline(tmp_path_factory: pytest.TempPathFactory, offline: None) -> Path:
    """A random-weight StableDiffusionPipeline of a few thousand parameters, saved to a folder."""
    from diffusers import AutoencoderKL, DDIMScheduler, StableDiffusionPipeline, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel

    root = tmp_path_factory.mktemp("tiny-sd")
    tokenizer = _tiny_tokenizer(root / "vocab")
    torch.manual_seed(0)
    unet = UNet2DConditionModel(
        block_out_channels=(4, 8), layers_per_block=1, sample_size=8, in_channels=4, out_channels=4,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"), up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        cross_attention_dim=8, norm_num_groups=2, attention_head_dim=2)
    vae = AutoencoderKL(
        block_out_channels=(4, 8), in_channels=3, out_channels=3, latent_channels=4, norm_num_groups=2,
        down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2, sample_size=16)
    text_encoder = CLIPTextModel(CLIPTextConfig(
        bos_token_id=0, eos_token_id=1, pad_token_id=2, vocab_size=len(tokenizer), hidden_size=8,
        intermediate_size=16, num_attention_heads=2, num_hidden_layers=2, max_position_embeddings=77,
        projection_dim=8))
    scheduler = DDIMScheduler(beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear", clip_sample=False,
                              set_alpha_to_one=False, steps_offset=1)
    pipe = StableDiffusionPipeline(unet=unet, vae=vae, text_encoder=text_encoder, tokenizer=tokenizer,
                                   scheduler=scheduler, safety_checker=None, feature_extractor=None,
                                   requires_safety_checker=False)
    folder = root / "pipeline"
    pipe.save_pretrained(folder)
    return folder


def _png_size(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as image:
        assert image.format == "PNG"
        image.load()
        return image.size


async def test_a_local_pipeline_draws_deterministic_pngs(tiny_pipeline: Path) -> None:
    painter = create_image_model(f"diffusers:{tiny_pipeline}?device=cpu&steps=2&size=48x32&seed=3")
    assert painter.spec == f"diffusers:{tiny_pipeline}"
    first = await painter.generate(PROMPT)
    again = await painter.generate(PROMPT)
    other = await painter.generate("A boy holds a blue cup.")
    await painter.aclose()
    assert _png_size(first) == (48, 32)  # width x height as asked, not the pipeline's default
    assert first == again  # same seed, same prompt: the same bytes
    assert other != first  # the prompt reaches the pipeline

    reseeded = create_image_model(f"diffusers:{tiny_pipeline}?device=cpu&steps=2&size=48x32&seed=4&guidance=2.5")
    assert _png_size(await reseeded.generate(PROMPT)) == (48, 32)  # guidance > 1: classifier-free guidance runs
    assert await reseeded.generate(PROMPT) != first
    await reseeded.aclose()


@pytest.mark.filterwarnings("ignore:The `local_dir_use_symlinks` argument:UserWarning")
async def test_pipeline_errors_are_one_line(tiny_pipeline: Path, tmp_path: Path) -> None:
    odd = create_image_model(f"diffusers:{tiny_pipeline}?device=cpu&steps=1&size=30x30")
    with pytest.raises(ModelCallError, match="the pipeline failed") as failure:
        await odd.generate(PROMPT)  # Stable Diffusion needs sizes divisible by 8
    assert failure.value.kind == "pipeline_error"
    await odd.aclose()
    with pytest.raises(UnknownModelError, match="cannot load the pipeline"):
        create_image_model(f"diffusers:{tmp_path}")  # an empty folder: no model_index.json
    with pytest.raises(UnknownModelError, match="cannot load the pipeline"):
        create_image_model("diffusers:nobody/not-a-cached-model")  # offline and not in the cache
    for bad, message in (("steps=two", "steps='two'"), ("size=64", "WIDTHxHEIGHT"), ("dtype=int8", "dtype"),
                         ("scheduler=x", "unknown option")):
        with pytest.raises(ModelSpecError, match=message):
            create_image_model(f"diffusers:{tiny_pipeline}?{bad}")


def test_generate_llm_cli_with_a_diffusers_painter(tiny_pipeline: Path, tmp_path: Path) -> None:
    source = tmp_path / "src.jsonl"
    source.write_text(json.dumps(EXEMPLAR) + "\n")
    exemplars = load_dataset(source)
    exemplars.images["snack_table_1.png"] = small_png()
    exemplars.save(tmp_path / "exemplars")
    out = tmp_path / "generated"
    with FakeServer("openai", lambda r: openai_reply(json.dumps(GOOD))) as chat:
        result = CliRunner().invoke(app, [
            "generate", "llm", "--model", f"openai:m?base_url={chat.url}/v1",
            "--image-model", f"diffusers:{tiny_pipeline}?device=cpu&steps=1&size=64x64&seed=0",
            "--task", "diverse_desire", "--count", "2", "--out", str(out),
            "--exemplars", str(tmp_path / "exemplars")])
    assert result.exit_code == 0, result.output
    assert len(chat.requests) == 2
    dataset = load_dataset(out)
    assert [st.id for st in dataset] == ["llm-diverse_desire-0001", "llm-diverse_desire-0002"]
    assert not has_errors(validate_dataset(dataset))
    pictures = sorted((out / "images").iterdir())
    assert [p.name for p in pictures] == ["llm-diverse_desire-0001_1.png", "llm-diverse_desire-0002_1.png"]
    assert all(_png_size(p.read_bytes()) == (64, 64) for p in pictures)
    assert pictures[0].read_bytes() == pictures[1].read_bytes()  # same prompt and seed: the same picture
    first = dataset.get("llm-diverse_desire-0001")
    assert first.meta["generator"]["image_model"] == f"diffusers:{tiny_pipeline}"
    assert first.turns[0].image == "llm-diverse_desire-0001_1.png"
