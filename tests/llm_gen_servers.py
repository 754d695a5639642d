"""Image-API wire formats on top of :mod:`fakeservers` (OpenAI images/generations, Gemini inline images)."""

from __future__ import annotations

import base64
import io

from PIL import Image, ImageDraw

from tests.fakeservers import Reply


def small_png(colour: tuple[int, int, int] = (90, 160, 220), size: tuple[int, int] = (96, 72)) -> bytes:
    """A real small PNG with a shape on it (so it can be told apart from a blank one)."""
    image = Image.new("RGB", size, (250, 246, 236))
    ImageDraw.Draw(image).ellipse((size[0] // 4, size[1] // 4, size[0] * 3 // 4, size[1] * 3 // 4), fill=colour)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def openai_image_reply(png: bytes) -> Reply:
    """``POST /v1/images/generations`` answered with ``b64_json``."""
    return Reply(body={"created": 0, "data": [{"b64_json": base64.b64encode(png).decode(), "revised_prompt": None}]})


def gemini_image_reply(png: bytes, text: str = "Here is the picture.") -> Reply:
    """``POST /v1beta/models/M:generateContent`` answered with a text part and an inline PNG."""
    return Reply(body={
        "candidates": [{"content": {"role": "model", "parts": [
            {"text": text}, {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(png).decode()}}]},
            "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 1290, "totalTokenCount": 1300},
    })
