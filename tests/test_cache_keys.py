"""Cache keys never change by accident: a stored run's calls and judgments are found again only if a request
gets the key it got when it was stored.

The fingerprints are put together from each message's own canonical JSON (made once per message); these
tests hold them to the definition, ``json.dumps(fingerprint, sort_keys=True)``, over random conversations,
and pin the keys of a fixed request to the digests CoMMET has written since before that change."""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from commet.judges.base import JudgeRequest
from commet.judges.llm import LLMJudge
from commet.models.base import GenerationSettings, ImagePart, Message, ModelRequest, TextPart
from commet.models.openai_compat import OpenAIChatModel

PICTURE = ImagePart(b"\x89PNG fake bytes", "image/png", "kitchen.png")
REQUEST = ModelRequest((Message.text("system", "Answer briefly."),
                        Message("user", (TextPart("Where is the ball? — “ünïcødé” 中文"), PICTURE)),
                        Message.text("assistant", "In the basket."), Message.text("user", "And now?")),
                       GenerationSettings(temperature=0.7, seed=3, top_p=0.9))
JUDGE_REQUEST = JudgeRequest(story_id="s-1", task="unexpected_location", turn=1, context=("Where?\nReply: basket",),
                             story="Sally leaves.", question="Where will Sally look?", expected=("basket",),
                             response="The basket.", images=(PICTURE,))
#: the keys CoMMET wrote for these requests before fingerprints were put together per message, and since
MODEL_KEY = "03132e48e337bfe24946902a96c5e684ae56cf1a424db63a35d0311da0acb177"
JUDGMENT_KEY = "a083cc3bcb8a9c4fb8e29f8c61f29c93375bf17e964fbb8054bde63ca10d3a07"
TEXTS = ["", "a", 'quote " and \\ backslash', "line\nbreak\ttab", "\u2028", "ünïcødé", "中文", "😀", "\x00\x1f", "{}[]"]


@pytest.fixture()
def models(monkeypatch: pytest.MonkeyPatch) -> tuple[OpenAIChatModel, LLMJudge]:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    candidate = OpenAIChatModel("cand", {"base_url": "http://127.0.0.1:9/v1", "image_detail": "low"})
    return candidate, LLMJudge(OpenAIChatModel("judge", {"base_url": "http://127.0.0.1:9/v1"}))


def test_a_stored_runs_keys_are_found_again(models: tuple[OpenAIChatModel, LLMJudge]) -> None:
    candidate, judge = models
    assert candidate.cache_key(REQUEST) == MODEL_KEY
    assert judge.cache_key(JUDGE_REQUEST) == JUDGMENT_KEY


def random_request(rng: random.Random) -> ModelRequest:
    messages = []
    for _ in range(rng.randint(0, 6)):
        parts: list[TextPart | ImagePart] = []
        for _ in range(rng.randint(1, 3)):
            if rng.random() < 0.3:
                parts.append(ImagePart(rng.randbytes(rng.randint(0, 9)), rng.choice(["image/png", 'image/"x"']),
                                       rng.choice(TEXTS)))
            else:
                parts.append(TextPart("".join(rng.choices(TEXTS, k=rng.randint(0, 4)))))
        messages.append(Message(rng.choice(["system", "user", "assistant"]), tuple(parts)))
    settings = GenerationSettings(temperature=rng.choice([0.0, 0.7, 1.0]), max_tokens=rng.randint(1, 4096),
                                  seed=rng.choice([None, 0, 7]), top_p=rng.choice([None, 0.5, 1.0]))
    return ModelRequest(tuple(messages), settings)


def test_fingerprints_and_keys_are_the_canonical_json_of_the_request(
        models: tuple[OpenAIChatModel, LLMJudge]) -> None:
    candidate, _ = models
    rng = random.Random(20261204)
    for _ in range(500):
        request = random_request(rng)
        canonical = json.dumps(request.fingerprint(), sort_keys=True)
        assert request.fingerprint_json == canonical
        expected = json.dumps({"model": candidate.identity(), "request": request.fingerprint()}, sort_keys=True)
        assert candidate.cache_key(request) == hashlib.sha256(expected.encode()).hexdigest()


def test_a_message_shared_by_two_conversations_keys_each_by_its_own_content(
        models: tuple[OpenAIChatModel, LLMJudge]) -> None:
    """A message's JSON is made once and kept on it; the same object in another conversation, or at another
    place, still gives each request the key of its own content."""
    candidate, _ = models
    shared = Message.text("user", "Where is the ball?")
    one = ModelRequest((shared,))
    two = ModelRequest((Message.text("system", "Be brief."), shared, Message.text("assistant", "Basket."), shared))
    for request in (one, two, one):
        expected = json.dumps({"model": candidate.identity(), "request": request.fingerprint()}, sort_keys=True)
        assert candidate.cache_key(request) == hashlib.sha256(expected.encode()).hexdigest()
    assert candidate.cache_key(one) != candidate.cache_key(two)
