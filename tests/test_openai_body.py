"""The OpenAI-compatible request body is built without passing each picture through the JSON encoder
again, and is byte for byte what ``json.dumps(build_params(request), ensure_ascii=False)`` gives."""

from __future__ import annotations

import functools
import io
import json

import pytest
from PIL import Image

from commet.models.base import GenerationSettings, ImagePart, Message, ModelRequest, TextPart
from commet.models.openai_compat import OpenAIChatModel, json_body


def picture(colour: tuple[int, int, int], size: tuple[int, int] = (40, 30)) -> ImagePart:
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, format="PNG")
    return ImagePart(out.getvalue(), "image/png", f"pic-{colour[0]}")


def conversation() -> tuple[Message, ...]:
    red, blue = picture((200, 0, 0)), picture((0, 0, 200), (64, 48))
    return (
        Message.text("system", 'System "quoted", a\\backslash, a tab\tand a new\nline.'),
        Message("user", (TextPart("Where is the ball? — “curly” ünïcødé 中文"), red)),
        Message.text("assistant", "In the basket."),
        # text that looks like the stand-in of a picture, without its nonce, stays text
        Message("user", (red, TextPart('"commet-picture-0" and commet-picture-1'), blue, TextPart("And now?"))),
        Message.text("assistant", "😀"),
        Message.text("user", "No picture this time."),
    )


@pytest.mark.parametrize("options", [
    {"base_url": "http://127.0.0.1:9/v1"},
    {"base_url": "http://127.0.0.1:9/v1", "image_detail": "low", "reasoning_effort": "high",
     "token_param": "max_completion_tokens"},
])
@pytest.mark.parametrize("settings", [GenerationSettings(), GenerationSettings(temperature=0.7, seed=3, top_p=0.9)])
def test_the_body_is_the_json_encoders_to_the_byte(monkeypatch: pytest.MonkeyPatch, options: dict[str, str],
                                                   settings: GenerationSettings) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    model = OpenAIChatModel("cand", options)
    for turns in range(1, len(conversation()) + 1):
        request = ModelRequest(conversation()[:turns], settings)
        expected = json.dumps(model.build_params(request), ensure_ascii=False).encode()
        assert json_body(functools.partial(model.build_params, request)) == expected


def test_each_picture_is_encoded_once_however_often_it_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    from commet.models import base

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    model = OpenAIChatModel("cand", {"base_url": "http://127.0.0.1:9/v1"})
    messages = conversation()
    encoded: list[int] = []
    real = base.b64encode
    monkeypatch.setattr(base, "b64encode", lambda data: encoded.append(len(data)) or real(data))
    bodies = [json_body(functools.partial(model.build_params, ModelRequest(messages[:turns]))) for turns in (2, 4, 6)]
    assert [body.count(b"data:image/png;base64,") for body in bodies] == [1, 3, 3]
    assert len(encoded) == 2  # the red picture and the blue one, once each


def test_a_media_type_that_needs_escaping_is_escaped_as_the_encoder_would(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    model = OpenAIChatModel("cand", {"base_url": "http://127.0.0.1:9/v1"})
    odd = ImagePart(b"\x89PNG\r\n", 'image/x-"odd"\\é', "odd")
    request = ModelRequest((Message("user", (TextPart("Look."), odd)),))
    expected = json.dumps(model.build_params(request), ensure_ascii=False).encode()
    assert json_body(functools.partial(model.build_params, request)) == expected
