"""The OpenAI-compatible request body is built without passing each picture, or each message of a conversation,
through the JSON encoder again, and is byte for byte what ``json.dumps(build_params(request), ensure_ascii=False)``
gives."""

from __future__ import annotations

import io
import json

import pytest
from PIL import Image

from commet.models.base import GenerationSettings, ImagePart, Message, ModelCallError, ModelRequest, TextPart
from commet.models.openai_compat import OpenAIChatModel


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
        assert model.request_body(request) == expected


def test_each_picture_is_encoded_once_however_often_it_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    from commet.models import base

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    model = OpenAIChatModel("cand", {"base_url": "http://127.0.0.1:9/v1"})
    messages = conversation()
    encoded: list[int] = []
    real = base.b64encode
    monkeypatch.setattr(base, "b64encode", lambda data: encoded.append(len(data)) or real(data))
    bodies = [model.request_body(ModelRequest(messages[:turns])) for turns in (2, 4, 6)]
    assert [body.count(b"data:image/png;base64,") for body in bodies] == [1, 3, 3]
    assert len(encoded) == 2  # the red picture and the blue one, once each


def test_a_media_type_that_needs_escaping_is_escaped_as_the_encoder_would(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    model = OpenAIChatModel("cand", {"base_url": "http://127.0.0.1:9/v1"})
    odd = ImagePart(b"\x89PNG\r\n", 'image/x-"odd"\\é', "odd")
    request = ModelRequest((Message("user", (TextPart("Look."), odd)),))
    expected = json.dumps(model.build_params(request), ensure_ascii=False).encode()
    assert model.request_body(request) == expected


def test_each_message_is_encoded_once_however_often_it_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    from commet.models import openai_compat

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    model = OpenAIChatModel("cand", {"base_url": "http://127.0.0.1:9/v1"})
    encoded: list[object] = []
    real = openai_compat.message_body_json
    monkeypatch.setattr(openai_compat, "message_body_json",
                        lambda message, index, detail: encoded.append(message) or real(message, index, detail))
    messages = conversation()
    for turns in range(1, len(messages) + 1):
        request = ModelRequest(messages[:turns])
        assert model.request_body(request) == json.dumps(model.build_params(request), ensure_ascii=False).encode()
    assert encoded == list(messages)  # the body: each message once, whatever the number of turns that send it


def test_the_same_message_at_another_place_gets_its_own_pictures(monkeypatch: pytest.MonkeyPatch) -> None:
    """A message's marks name its place in the conversation: the same message later in another conversation,
    or two equal messages, each carry the right pictures."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    model = OpenAIChatModel("cand", {"base_url": "http://127.0.0.1:9/v1"})
    red, blue = picture((200, 0, 0)), picture((0, 0, 200))
    shown = Message("user", (TextPart("Look."), red))
    for messages in [(shown,), (Message("user", (blue,)), shown), (shown, Message.text("assistant", "Red."), shown),
                     (Message("user", (blue, TextPart("and"), red)),)]:
        request = ModelRequest(messages)
        assert model.request_body(request) == json.dumps(model.build_params(request), ensure_ascii=False).encode()


def test_a_picture_outside_a_user_message_is_refused_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    model = OpenAIChatModel("cand", {"base_url": "http://127.0.0.1:9/v1"})
    request = ModelRequest((Message("assistant", (picture((1, 2, 3)),)),))
    for _ in range(2):
        with pytest.raises(ModelCallError, match="only supported in user messages"):
            model.request_body(request)


def test_the_fields_around_the_messages_follow_each_requests_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The body's other fields are encoded once per settings object and kept: requests with other settings,
    alternately, with equal settings in another object, and with settings made after many others were
    dropped, each get their own fields."""
    import gc

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    model = OpenAIChatModel("cand", {"base_url": "http://127.0.0.1:9/v1"})
    messages = conversation()[:2]
    settings = [GenerationSettings(), GenerationSettings(temperature=0.7, seed=3), GenerationSettings(top_p=0.5),
                GenerationSettings(temperature=0.7, seed=3)]
    for _ in range(2):
        for each in settings:
            request = ModelRequest(messages, each)
            assert model.request_body(request) == json.dumps(model.build_params(request), ensure_ascii=False).encode()
    for i in range(200):  # objects made and dropped: a new one may take a dropped one's id
        request = ModelRequest(messages, GenerationSettings(max_tokens=1 + i % 7))
        assert model.request_body(request) == json.dumps(model.build_params(request), ensure_ascii=False).encode()
        del request
        gc.collect(0)
    assert len(model._body_ends) <= 64


@pytest.mark.parametrize("text", ["", "\x00\x1f\x7f", "\u2028\u2029", '{"role": "x"}', "é" * 50])
@pytest.mark.parametrize("role", ["system", "user", "assistant"])
def test_a_text_message_is_written_as_the_encoder_writes_it(monkeypatch: pytest.MonkeyPatch, role: str,
                                                              text: str) -> None:
    """A message of one text (written without the encoder) and one of two texts (through it): the encoder's bytes."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    model = OpenAIChatModel("cand", {"base_url": "http://127.0.0.1:9/v1"})
    for message in (Message.text(role, text), Message(role, (TextPart(text), TextPart("and")))):  # type: ignore[arg-type]
        request = ModelRequest((message,))
        expected = json.dumps(model.build_params(request), ensure_ascii=False).encode()
        assert model.request_body(request) == expected
