"""The direct transport's URL and headers, computed without importing the SDK, equal the SDK client's own."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from commet.models.openai_compat import OpenAIChatModel, plain_base_url, sdk_target
from commet.models.registry import create_model
from tests.fakeservers import FakeServer

KEY = "sk-test-target-0123456789"
ENVS = ("OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID")


def sdk_client_target(base_url: str | None) -> tuple[str, list[tuple[str, str]]]:
    """What the SDK itself would use (asked inside a running loop, as the direct transport asks)."""
    import openai

    client = openai.AsyncOpenAI(api_key=KEY, base_url=base_url, max_retries=0)
    headers = {**client.default_headers, **client.auth_headers}
    return str(client._prepare_url("/chat/completions")), [(k, v) for k, v in headers.items() if isinstance(v, str)]


@pytest.mark.parametrize(("base_url", "env"), [
    (None, {}),
    (None, {"OPENAI_ORG_ID": "org-1", "OPENAI_PROJECT_ID": "proj-1"}),
    (None, {"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"}),
    (None, {"OPENAI_ORG_ID": ""}),
    ("http://127.0.0.1:8000/v1", {"OPENAI_BASE_URL": "http://elsewhere.invalid/v1", "OPENAI_PROJECT_ID": "p"}),
    ("http://localhost:30000/v1/", {}),
    ("https://models.example.org", {}),
    ("https://gateway.example.org:8443/openai/deployments/x-y_z~1/v1", {"OPENAI_ORG_ID": "org-2"}),
])
async def test_computed_target_equals_the_sdk_clients(monkeypatch, base_url, env) -> None:
    for name in ENVS:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    target = sdk_target(KEY, base_url)
    assert target is not None
    url, headers = sdk_client_target(base_url)
    assert target.url == url
    assert list(target.headers.items()) == headers  # same names, values and order


@pytest.mark.parametrize("url", ["http://LOCALHOST:8000/v1", "http://h:80/v1", "https://h:443/v1", "http://h/a/../v1",
                                 "http://h/v1//", "http://h/v1?api-version=1", "http://user@h/v1", "http://h/v 1",
                                 "http://h:0800/v1", "http://[::1]:8000/v1", "ftp://h/v1"])
def test_base_urls_the_sdk_would_rewrite_are_left_to_the_sdk(url) -> None:
    assert not plain_base_url(url)
    assert sdk_target(KEY, url) is None


async def test_a_base_url_the_sdk_rewrites_goes_through_the_sdk_client(monkeypatch) -> None:
    """Upper-case host: the SDK normalises it; the model asks the SDK client and still reaches the server."""
    from tests.test_models_remote import request

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeServer("openai") as server:
        port = server.url.rsplit(":", 1)[1]
        model = create_model(f"openai:gpt-test?base_url=http://LOCALHOST:{port}/v1&transport=direct")
        assert isinstance(model, OpenAIChatModel) and model._client is not None
        assert model._direct is not None and model._direct.url == f"http://localhost:{port}/v1/chat/completions"
        response = await model.generate(request())
        await model.aclose()
    assert response.text == "Apple"
    (sent,) = server.requests
    assert sent.path == "/v1/chat/completions" and sent.headers["authorization"] == f"Bearer {KEY}"


def test_direct_transport_never_imports_the_sdk() -> None:
    """A whole call (model and LLM judge built, one request answered) in a fresh process: no ``openai`` module."""
    with FakeServer("openai") as server:
        script = textwrap.dedent(f"""
            import asyncio, sys
            from commet.models.base import GenerationSettings, Message, ModelRequest
            from commet.models.registry import create_model
            from commet.judges.registry import create_judge

            async def main():
                model = create_model("openai:cand?base_url={server.url}/v1")
                judge = create_judge("llm-only:openai:judge?base_url={server.url}/v1")
                reply = await model.generate(ModelRequest((Message.text("user", "Which?"),), GenerationSettings()))
                await model.aclose()
                await judge.aclose()
                return reply.text

            text = asyncio.run(main())
            print(text, sorted(m for m in sys.modules if m == "openai" or m.startswith("openai.")))
        """)
        src = str(Path(__file__).resolve().parents[1] / "src")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")])),
               "OPENAI_API_KEY": KEY}
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["Apple", "[]"]
    assert len(server.requests) == 1
