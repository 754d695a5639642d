"""Remote providers against real local HTTP servers speaking each provider's wire format."""

from __future__ import annotations

import base64
import datetime
import email.utils
import gc
import ipaddress
import ssl
import time
import warnings
from pathlib import Path

import pytest

from commet.models.base import (
    GenerationSettings,
    ImagePart,
    Message,
    ModelCallError,
    ModelRequest,
    ModelSpecError,
    TextPart,
    Usage,
)
from commet.models.errors import parse_retry_after, redact
from commet.models.registry import create_model
from tests.fakeservers import FakeServer, Reply, anthropic_reply, error_reply, google_reply, openai_reply

KEY = "sk-test-SUPERSECRET-0123456789abcdef"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def request(settings: GenerationSettings | None = None) -> ModelRequest:
    return ModelRequest(
        messages=(
            Message.text("system", "You are a child in a story."),
            Message("user", (TextPart("Meet Sam."), ImagePart(PNG, "image/png", "img01"),
                             TextPart("Which snack do you like best?"))),
            Message.text("assistant", "Apple"),
            Message.text("user", "So which snack will Sam pick?"),
        ),
        settings=settings or GenerationSettings(temperature=0.0, max_tokens=64, seed=7, top_p=0.9),
    )


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    for env in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(env, KEY)


class Sleeps(list):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def fast(model) -> Sleeps:
    """Record the policy's back-off sleeps instead of sleeping."""
    sleeps = Sleeps()
    model.policy.sleep = sleeps
    return sleeps


# ----------------------------------------------------------------------------- openai


@pytest.fixture(params=["direct", "sdk"])
def transport(request) -> str:
    """Every OpenAI behaviour holds for both transports (aiohttp with the SDK's headers, or the SDK)."""
    return request.param


async def test_openai_success_wire_format(transport):
    with FakeServer("openai") as server:
        model = create_model(f"openai:gpt-test?base_url={server.url}/v1&transport={transport}")
        response = await model.generate(request())
        await model.aclose()
    assert response.text == "Apple"
    assert response.usage == Usage(11, 3)
    assert response.finish_reason == "stop" and response.attempts == 1
    (sent,) = server.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    body = sent.json
    assert body["model"] == "gpt-test"
    assert body["messages"][0] == {"role": "system", "content": "You are a child in a story."}
    parts = body["messages"][1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url", "text"]
    assert parts[1]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert body["messages"][2] == {"role": "assistant", "content": "Apple"}
    assert body["messages"][3] == {"role": "user", "content": "So which snack will Sam pick?"}
    assert body["temperature"] == 0.0 and body["max_tokens"] == 64 and body["seed"] == 7 and body["top_p"] == 0.9


async def test_openai_official_endpoint_uses_max_completion_tokens_and_image_detail(transport):
    with FakeServer("openai") as server:
        model = create_model(f"openai:gpt-test?base_url={server.url}/v1&transport={transport}&token_param=max_completion_tokens"
                             "&image_detail=low")
        await model.generate(request())
        await model.aclose()
    body = server.requests[0].json
    assert body["max_completion_tokens"] == 64 and "max_tokens" not in body
    assert body["messages"][1]["content"][1]["image_url"]["detail"] == "low"


async def test_openai_retries_429_with_retry_after_then_500_then_succeeds(transport):
    with FakeServer("openai") as server:
        server.queue(error_reply(429, "slow down", headers={"Retry-After": "2"}), error_reply(500, "boom"))
        model = create_model(f"openai:gpt-test?base_url={server.url}/v1&transport={transport}&backoff_base=0.5&backoff_max=4")
        sleeps = fast(model)
        response = await model.generate(request())
        await model.aclose()
    assert len(server.requests) == 3
    assert response.attempts == 3 and response.text == "Apple"
    assert sleeps[0] == 2.0  # Retry-After honoured
    assert 0.0 <= sleeps[1] <= 1.0  # full jitter, second attempt: [0, 0.5 * 2]


async def test_openai_retry_after_ms_is_honoured(transport):
    with FakeServer("openai") as server:
        server.queue(error_reply(429, headers={"retry-after-ms": "250"}))
        model = create_model(f"openai:gpt-test?base_url={server.url}/v1&transport={transport}")
        sleeps = fast(model)
        response = await model.generate(request())
        await model.aclose()
    assert sleeps == [0.25] and response.attempts == 2


@pytest.mark.parametrize(("status", "kind"), [(401, "auth"), (400, "http_400"), (403, "auth"), (404, "http_404")])
async def test_openai_client_errors_are_not_retried_and_never_leak_the_key(status, kind, transport):
    with FakeServer("openai") as server:
        server.queue(error_reply(status, f"Incorrect API key provided: {KEY}"))
        model = create_model(f"openai:gpt-test?base_url={server.url}/v1&transport={transport}")
        sleeps = fast(model)
        with pytest.raises(ModelCallError) as caught:
            await model.generate(request())
        await model.aclose()
    assert len(server.requests) == 1 and sleeps == []
    error = caught.value
    assert error.kind == kind and error.status == status and error.retryable is False
    assert KEY not in str(error) and "SUPERSECRET" not in str(error)
    assert error.__cause__ is None and error.__suppress_context__


async def test_openai_gives_up_after_max_attempts(transport):
    with FakeServer("openai", responder=lambda r: error_reply(503, "overloaded")) as server:
        model = create_model(f"openai:gpt-test?base_url={server.url}/v1&transport={transport}&max_attempts=3")
        sleeps = fast(model)
        with pytest.raises(ModelCallError) as caught:
            await model.generate(request())
        await model.aclose()
    assert len(server.requests) == 3 and len(sleeps) == 2
    assert caught.value.kind == "http_503" and caught.value.retryable is True
    assert "after 3 attempts" in str(caught.value)


async def test_openai_timeout_is_retried_then_fails(transport):
    # a timeout of 0.5 s: long enough for a loaded machine's server thread to take each attempt's request (at 0.2 s
    # a second attempt could time out before the server had read it), far below the 2 s the server holds a reply
    with FakeServer("openai", responder=lambda r: Reply(body=openai_reply().body, delay=2.0)) as server:
        model = create_model(f"openai:gpt-test?base_url={server.url}/v1&transport={transport}&timeout=0.5&max_attempts=2")
        fast(model)
        started = time.monotonic()
        with pytest.raises(ModelCallError) as caught:
            await model.generate(request())
        elapsed = time.monotonic() - started
        await model.aclose()
    assert caught.value.kind == "timeout"
    assert len(server.requests) == 2
    assert elapsed < 1.8  # two timeouts, not a reply


async def test_openai_connection_error_is_retried(transport):
    with FakeServer("openai") as server:
        url = server.url
    model = create_model(f"openai:gpt-test?base_url={url}/v1&max_attempts=2&transport={transport}")  # server is gone
    sleeps = fast(model)
    with pytest.raises(ModelCallError) as caught:
        await model.generate(request())
    await model.aclose()
    assert caught.value.kind in ("connection", "timeout") and len(sleeps) == 1


async def test_openai_content_filter_is_a_refusal(transport):
    with FakeServer("openai") as server:
        server.queue(openai_reply("", finish_reason="content_filter"))
        model = create_model(f"openai:gpt-test?base_url={server.url}/v1&transport={transport}")
        with pytest.raises(ModelCallError) as caught:
            await model.generate(request())
        await model.aclose()
    assert caught.value.kind == "refusal" and not caught.value.retryable and len(server.requests) == 1


#: headers that differ per request or per HTTP library, not per client configuration
PER_REQUEST_HEADERS = {"host", "content-length", "accept-encoding", "connection", "x-stainless-retry-count",
                       "x-stainless-read-timeout"}


async def test_openai_transports_send_the_same_request(monkeypatch):
    """The direct transport sends the bytes and the SDK client's headers that ``client.post`` sends."""
    monkeypatch.setenv("OPENAI_ORG_ID", "org-commet")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-commet")
    sent = {}
    for transport in ("sdk", "direct"):
        with FakeServer("openai") as server:
            model = create_model(f"openai:gpt-test?base_url={server.url}/v1&transport={transport}")
            await model.generate(request())
            await model.aclose()
        (sent[transport],) = server.requests
    sdk, direct = sent["sdk"], sent["direct"]
    assert (direct.method, direct.path, direct.raw) == (sdk.method, sdk.path, sdk.raw)
    assert sdk.headers["openai-organization"] == "org-commet" and sdk.headers["openai-project"] == "proj-commet"
    assert sdk.headers["authorization"] == f"Bearer {KEY}" and "x-stainless-lang" in sdk.headers

    def config(headers: dict[str, str]) -> dict[str, str]:
        return {k: v for k, v in headers.items() if k not in PER_REQUEST_HEADERS}

    assert config(direct.headers) == config(sdk.headers)


async def test_openai_direct_transport_goes_through_the_environment_proxy(monkeypatch):
    """``HTTP_PROXY`` is honoured (the proxy here is a recording server); ``NO_PROXY`` bypasses it."""
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    with FakeServer("openai") as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        model = create_model("openai:gpt-test?base_url=http://models.invalid/v1&transport=direct&max_attempts=1")
        response = await model.generate(request())
        await model.aclose()
        monkeypatch.setenv("NO_PROXY", "models.invalid")
        bypass = create_model("openai:gpt-test?base_url=http://models.invalid/v1&transport=direct")
        assert bypass._direct.proxy is None
        await bypass.aclose()
    assert response.text == "Apple"
    (sent,) = proxy.requests
    assert sent.path == "http://models.invalid/v1/chat/completions"  # absolute form: a request to a proxy
    assert sent.headers["authorization"] == f"Bearer {KEY}"


def self_signed_tls(folder: Path) -> tuple[Path, ssl.SSLContext]:
    """A certificate for 127.0.0.1 made here (no network), and a server context that presents it."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "commet test CA")])
    now = datetime.datetime.now(datetime.timezone.utc)
    ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(ski, critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski), critical=False)
            .sign(key, hashes.SHA256()))
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    return cert_file, context


async def test_openai_https_verifies_the_server_against_ssl_cert_file(transport, tmp_path, monkeypatch):
    """An unknown certificate is refused at once (kind "tls", no retry); SSL_CERT_FILE trusts it."""
    cert_file, context = self_signed_tls(tmp_path)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    with FakeServer("openai", tls=context) as server:
        assert server.url.startswith("https://")
        spec = f"openai:gpt-test?base_url={server.url}/v1&transport={transport}&max_attempts=3"
        untrusting = create_model(spec)
        sleeps = fast(untrusting)
        with pytest.raises(ModelCallError) as caught:
            await untrusting.generate(request())
        await untrusting.aclose()
        assert caught.value.kind == "tls" and not caught.value.retryable and sleeps == []
        assert "SSL_CERT_FILE" in str(caught.value) and server.requests == []
        monkeypatch.setenv("SSL_CERT_FILE", str(cert_file))
        trusting = create_model(spec)
        response = await trusting.generate(request())
        await trusting.aclose()
    assert response.text == "Apple" and len(server.requests) == 1


def test_openai_transport_option_is_checked():
    with pytest.raises(ModelSpecError, match="transport must be direct or sdk"):
        create_model("openai:gpt-test?base_url=http://127.0.0.1:9/v1&transport=curl")


def test_openai_identity_and_cost_never_hold_the_key(monkeypatch):
    model = create_model("openai:gpt-4o-mini-2024-07-18?image_detail=high&rpm=100")
    ident = model.identity()
    assert ident["model"] == "gpt-4o-mini-2024-07-18" and ident["image_detail"] == "high"
    assert "rpm" not in ident  # transport options do not change outputs
    assert KEY not in repr(ident) and KEY not in model.spec
    assert model.estimated_cost(Usage(1_000_000, 1_000_000)) == pytest.approx(0.75)
    local = create_model("openai:llama?base_url=http://127.0.0.1:9/v1")
    assert local.identity()["base_url"] == "http://127.0.0.1:9/v1"
    assert local.estimated_cost(Usage(10, 10)) is None


def test_missing_key_and_bad_options_are_clear(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ModelSpecError, match="OPENAI_API_KEY"):
        create_model("openai:gpt-4o")
    monkeypatch.setenv("MY_KEY", KEY)
    assert create_model("openai:gpt-4o?api_key_env=MY_KEY").api_key == KEY
    with pytest.raises(ModelSpecError, match="unknown option"):
        create_model("openai:gpt-4o?api_key_env=MY_KEY&temprature=1")
    with pytest.raises(ModelSpecError, match="credentials"):
        create_model("openai:gpt-4o?api_key_env=MY_KEY&base_url=http://user:pw@host/v1")


# ----------------------------------------------------------------------------- anthropic


async def test_anthropic_success_wire_format():
    with FakeServer("anthropic") as server:
        model = create_model(f"anthropic:claude-test?base_url={server.url}")
        response = await model.generate(request())
        await model.aclose()
    assert response.text == "Apple" and response.usage == Usage(12, 4) and response.finish_reason == "end_turn"
    (sent,) = server.requests
    assert sent.path == "/v1/messages"
    assert KEY in (sent.headers.get("x-api-key", "") + sent.headers.get("authorization", ""))
    body = sent.json
    assert body["system"] == "You are a child in a story."
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    blocks = body["messages"][0]["content"]
    assert [b["type"] for b in blocks] == ["text", "image", "text"]
    assert blocks[1]["source"] == {"type": "base64", "media_type": "image/png",
                                   "data": base64.b64encode(PNG).decode()}
    assert body["max_tokens"] == 64
    assert "temperature" not in body  # the default API version refuses sampling parameters
    assert model.identity()["sampling"] == "provider-default"


async def test_anthropic_old_api_version_sends_sampling():
    with FakeServer("anthropic") as server:
        model = create_model(f"anthropic:claude-test?base_url={server.url}&api_version=2023-06-01")
        await model.generate(request())
        await model.aclose()
    sent = server.requests[0]
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.json["temperature"] == 0.0 and sent.json["top_p"] == 0.9


async def test_anthropic_overloaded_is_retried_and_refusal_is_not():
    with FakeServer("anthropic") as server:
        server.queue(error_reply(529, "overloaded", style="anthropic"))
        model = create_model(f"anthropic:claude-test?base_url={server.url}")
        sleeps = fast(model)
        response = await model.generate(request())
        assert response.attempts == 2 and len(sleeps) == 1
        server.queue(anthropic_reply("", stop_reason="refusal"))
        with pytest.raises(ModelCallError) as caught:
            await model.generate(request())
        await model.aclose()
    assert caught.value.kind == "refusal" and len(server.requests) == 3


async def test_anthropic_401_not_retried():
    with FakeServer("anthropic") as server:
        server.queue(error_reply(401, f"invalid x-api-key {KEY}", style="anthropic"))
        model = create_model(f"anthropic:claude-test?base_url={server.url}")
        with pytest.raises(ModelCallError) as caught:
            await model.generate(request())
        await model.aclose()
    assert caught.value.kind == "auth" and len(server.requests) == 1 and KEY not in str(caught.value)


# ----------------------------------------------------------------------------- google


async def test_google_success_wire_format():
    with FakeServer("google") as server:
        model = create_model(f"google:gemini-test?base_url={server.url}")
        response = await model.generate(request())
        await model.aclose()
    assert response.text == "Apple" and response.usage == Usage(13, 5) and response.finish_reason == "stop"
    (sent,) = server.requests
    assert sent.path.endswith("/models/gemini-test:generateContent")
    assert sent.headers["x-goog-api-key"] == KEY
    body = sent.json
    assert body["systemInstruction"]["parts"][0]["text"] == "You are a child in a story."
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]
    parts = body["contents"][0]["parts"]
    assert parts[0] == {"text": "Meet Sam."}
    inline = parts[1]["inlineData"]
    assert inline["data"] == base64.b64encode(PNG).decode()
    assert (inline.get("mimeType") or inline.get("mime_type")) == "image/png"
    config = body["generationConfig"]
    assert config["temperature"] == 0.0 and config["maxOutputTokens"] == 64
    assert config["seed"] == 7 and config["topP"] == 0.9


async def test_google_retry_and_errors():
    with FakeServer("google") as server:
        server.queue(error_reply(429, "quota", headers={"Retry-After": "3"}, style="google"))
        model = create_model(f"google:gemini-test?base_url={server.url}")
        sleeps = fast(model)
        assert (await model.generate(request())).attempts == 2
        assert sleeps == [3.0]
        server.queue(error_reply(400, "bad", style="google"))
        with pytest.raises(ModelCallError) as caught:
            await model.generate(request())
        assert caught.value.kind == "http_400" and not caught.value.retryable
        server.queue(google_reply(block_reason="SAFETY"))
        with pytest.raises(ModelCallError, match="block") as caught:
            await model.generate(request())
        assert caught.value.kind == "refusal"
        server.queue(google_reply("", finish_reason="SAFETY"))
        with pytest.raises(ModelCallError) as caught:
            await model.generate(request())
        assert caught.value.kind == "refusal"
        await model.aclose()
    assert len(server.requests) == 5


# ----------------------------------------------------------------------------- helpers


def test_parse_retry_after_forms():
    assert parse_retry_after({"Retry-After": "7"}) == 7.0
    assert parse_retry_after({"retry-after-ms": "1500", "Retry-After": "9"}) == 1.5
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after({"Retry-After": date}, now=now) == pytest.approx(30.0)
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after(None) is None


def test_redact_catches_a_key_echoed_in_part_and_leaves_ordinary_text_alone() -> None:
    """A provider echoing part of the key in its own format (the review's "Regeneration failed" message shows it)
    loses it: any run of 6+ of the key's characters, or 4+ of them after a word naming a key."""
    key = "sk-proj-Q7vR2mLx9TbW4nZc8HkP3sJd"
    for echoed, fragment in (("invalid credentials (key=P3sJd... no: key=8HkP3sJd)", "8HkP3sJd"),
                             ("Unauthorized: token ...3sJd expired", "3sJd"),
                             ('{"error": "api_key \'…kP3sJd\' revoked"}', "kP3sJd"),
                             ("prefix Lx9TbW4n seen", "Lx9TbW4n")):
        assert fragment not in redact(echoed, [key]), echoed
    ordinary = ("HTTP 401 from provider (openai): Incorrect API key provided. Request 4nZ req_12345 at 2024-05-01; "
                "the key ending 3sJd is not shown by us; see https://platform.openai.com/account/api-keys")
    assert redact(ordinary, [key]) == ordinary


def test_redact():
    assert "SUPERSECRET" not in redact(f"bad key {KEY}", [KEY])
    assert "sk-proj-abcdef123" not in redact("Incorrect API key provided: sk-proj-abcdef123***wxyz")
    assert "AIzaSyA1234567890" not in redact("key=AIzaSyA1234567890abcdef")


def test_eval_reports_tokens_and_estimated_cost(tmp_path, pipe_dataset):
    from typer.testing import CliRunner

    from commet.cli import app

    gc.collect()  # earlier tests' garbage is collected now, not counted against this run
    with FakeServer("openai") as server, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        spec = f"openai:gpt-test?base_url={server.url}/v1&price_in=2&price_out=10"  # replies: 11 in, 3 out
        result = CliRunner().invoke(app, ["eval", "--model", spec, "--dataset", str(pipe_dataset),
                                          "--db", str(tmp_path / "s.sqlite"), "--quiet",
                                          "--undecided-feedback", "wrong"])  # every turn asked
        gc.collect()
    assert result.exit_code == 0, result.output
    # the clients are closed in the event loop that used them: no connection is left to the collector
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []
    calls = len(server.requests)
    assert calls == 5
    cost = (calls * 11 * 2 + calls * 3 * 10) / 1_000_000
    assert f"tokens: {calls * 11} in, {calls * 3} out, estimated cost ${cost:.4f}" in result.output
