"""Rate limiter (with a fake clock), retry policy bounds, pricing and the image policy."""

from __future__ import annotations

import asyncio
import hashlib
import io
import random

import pytest
from PIL import Image

from commet.models import pricing
from commet.models.base import CallErrorKind, ModelCallError, Usage
from commet.models.images import prepare_image
from commet.models.ratelimit import RateLimiter
from commet.models.retry import RetryPolicy


class FakeClock:
    """Time only moves when someone sleeps; sleeping yields to the loop once."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        await asyncio.sleep(0)


async def test_rpm_limiter_spaces_requests_evenly_and_fairly():
    clock = FakeClock()
    limiter = RateLimiter(rpm=60, clock=clock, sleep=clock.sleep)  # one per second, burst 1
    order: list[tuple[int, float]] = []

    async def worker(i: int) -> None:
        await limiter.acquire()
        order.append((i, clock.now))

    await asyncio.gather(*(worker(i) for i in range(5)))
    assert [i for i, _ in order] == [0, 1, 2, 3, 4]  # FIFO
    assert [t for _, t in order] == pytest.approx([0.0, 1.0, 2.0, 3.0, 4.0])


async def test_tpm_limiter_waits_for_tokens_and_settles():
    clock = FakeClock()
    limiter = RateLimiter(tpm=6000, clock=clock, sleep=clock.sleep)  # 100 tokens/s, bucket 100
    await limiter.acquire(100)
    assert clock.now == 0.0
    await limiter.acquire(50)  # needs 50 more tokens: half a second
    assert clock.now == pytest.approx(0.5)
    limiter.settle(estimated=50, actual=10)  # 40 tokens refunded
    await limiter.acquire(40)
    assert clock.now == pytest.approx(0.5)
    await limiter.acquire(1000)  # bigger than the bucket: waits for a full bucket then overdraws
    assert clock.now == pytest.approx(1.5)
    await limiter.acquire(1)
    assert clock.now == pytest.approx(1.5 + 9.01)


async def test_combined_limits_take_the_slower():
    clock = FakeClock()
    limiter = RateLimiter(rpm=600, tpm=600, clock=clock, sleep=clock.sleep)  # 10 req/s, 10 tok/s
    for _ in range(3):
        await limiter.acquire(10)
    assert clock.now == pytest.approx(2.0)  # tokens are the bottleneck


async def test_retry_policy_backoff_is_bounded_full_jitter():
    policy = RetryPolicy(backoff_base=1.0, backoff_max=8.0, rng=random.Random(0))
    for attempt in range(1, 10):
        ceiling = min(8.0, 2 ** (attempt - 1))
        assert all(0.0 <= policy.backoff(attempt) <= ceiling for _ in range(50))


async def test_retry_policy_wraps_unknown_errors_without_retry():
    policy = RetryPolicy(max_attempts=5, sleep=lambda s: asyncio.sleep(0))
    calls = 0

    async def boom():
        nonlocal calls
        calls += 1
        raise ValueError("sk-abcdefghijk1234 is wrong")

    with pytest.raises(ModelCallError) as caught:
        await policy.run(boom)
    assert calls == 1 and caught.value.kind == "error" and "sk-abcdefghijk1234" not in str(caught.value)


async def test_a_final_failure_says_how_many_attempts_were_made():
    policy = RetryPolicy(max_attempts=3, backoff_base=0.0, sleep=lambda s: asyncio.sleep(0))

    async def overloaded():
        raise ModelCallError("HTTP 503", kind="http_503", status=503, retryable=True)

    async def refused():
        raise ModelCallError("HTTP 400", kind="http_400", status=400)

    with pytest.raises(ModelCallError) as caught:
        await policy.run(overloaded)
    assert (caught.value.attempts, caught.value.kind, caught.value.status) == (3, "http_503", 503)
    assert caught.value.family is CallErrorKind.http
    assert "(after 3 attempts)" in str(caught.value)
    with pytest.raises(ModelCallError) as caught:
        await policy.run(refused)
    assert caught.value.attempts == 1 and not caught.value.retryable


def test_a_call_error_kind_is_typed_and_its_label_is_as_stored():
    assert ModelCallError("x", kind="refusal").family is CallErrorKind.refusal
    assert ModelCallError("x", kind=CallErrorKind.rate_limit, status=429).kind == "rate_limit"
    http = ModelCallError("x", kind="http_404")
    assert (http.family, http.status, http.kind) == (CallErrorKind.http, 404, "http_404")
    assert ModelCallError("x", kind=CallErrorKind.http, status=502).kind == "http_502"
    with pytest.raises(ValueError, match="unknown model call error kind 'oops'"):
        ModelCallError("x", kind="oops")
    with pytest.raises(ValueError, match="needs its status"):
        ModelCallError("x", kind=CallErrorKind.http)


def test_pricing_lookup_is_exact_or_a_dated_snapshot():
    assert pricing.lookup("openai", "gpt-4o-2024-08-06") == (2.50, 10.00)
    assert pricing.lookup("openai", "gpt-4o-mini-2024-07-18") == (0.15, 0.60)
    assert pricing.lookup("anthropic", "claude-3-5-haiku-latest") == (0.80, 4.00)
    # no borrowing a neighbour's price: an unlisted model has none
    assert pricing.lookup("anthropic", "claude-opus-4-7") is None
    assert pricing.lookup("openai", "gpt-5.4") is None
    assert pricing.lookup("openai", "gpt-4o-audio-preview") is None
    assert pricing.lookup("openai", "gpt-4o-mini") == (0.15, 0.60)
    assert pricing.lookup("anthropic", "claude-sonnet-4-5-20250929") == (3.00, 15.00)
    assert pricing.lookup("google", "gemini-2.5-flash-lite") == (0.10, 0.40)
    assert pricing.lookup("openai", "my-local-llama") is None
    price = pricing.price_for("openai", "x", {"base_url": "http://h", "price_in": "1", "price_out": "2"})
    assert pricing.cost(price, Usage(1_000_000, 500_000)) == pytest.approx(2.0)


def _png(size: tuple[int, int], mode: str = "RGB") -> bytes:
    image = Image.new(mode, size)
    rng = random.Random(1)
    image.putdata([tuple(rng.randrange(256) for _ in mode) if len(mode) > 1 else rng.randrange(256)
                   for _ in range(size[0] * size[1])])
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def test_prepare_image_downscales_and_is_deterministic():
    data = _png((300, 150))
    first, mime = prepare_image(data, max_side=100)
    second, _ = prepare_image(data, max_side=100)
    assert mime == "image/png" and first == second
    assert Image.open(io.BytesIO(first)).size == (100, 50)
    small, _ = prepare_image(data, max_side=1024)
    assert Image.open(io.BytesIO(small)).size == (300, 150)
    assert hashlib.sha256(small).hexdigest() == hashlib.sha256(prepare_image(data)[0]).hexdigest()


def test_prepare_image_jpeg_flattens_alpha_and_rejects_unknown_format():
    data = _png((40, 20), mode="RGBA")
    out, mime = prepare_image(data, fmt="jpeg", max_side=20)
    assert mime == "image/jpeg"
    image = Image.open(io.BytesIO(out))
    assert image.format == "JPEG" and image.mode == "RGB" and image.size == (20, 10)
    assert prepare_image(data, fmt="jpeg", max_side=20)[0] == out
    with pytest.raises(ValueError):
        prepare_image(data, fmt="tiff")


def test_prepare_image_applies_exif_orientation():
    image = Image.new("RGB", (40, 20), (200, 10, 10))
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 degrees on display
    out = io.BytesIO()
    image.save(out, format="JPEG", exif=exif.tobytes())
    prepared, _ = prepare_image(out.getvalue())
    assert Image.open(io.BytesIO(prepared)).size == (20, 40)


async def test_each_attempt_times_out_at_its_own_deadline_however_many_run_at_once():
    """Attempts started one after another under one policy's timeout, some that hang and some that answer: each
    hanging one fails as a timeout after its own timeout (not another's), the answering ones are never cut short."""
    policy = RetryPolicy(max_attempts=1, timeout=0.5)
    loop = asyncio.get_running_loop()

    async def attempt(delay: float, hangs: bool) -> tuple[str, float]:
        await asyncio.sleep(delay)
        started = loop.time()

        async def call() -> str:
            await asyncio.sleep(10 if hangs else 0.02)
            return "answer"

        try:
            result, _ = await policy.run(call)
        except ModelCallError as exc:
            return exc.kind, loop.time() - started
        return result, loop.time() - started

    outcomes = await asyncio.gather(*(attempt(0.05 * i, hangs=i % 3 != 1) for i in range(9)))
    for i, (outcome, took) in enumerate(outcomes):
        if i % 3 == 1:
            assert outcome == "answer" and took < 0.5
        else:  # not at the first attempt's deadline (up to 0.4 s earlier), nor left hanging
            assert outcome == "timeout" and 0.49 <= took < 0.85, (i, took)


async def test_a_cancellation_from_outside_stays_a_cancellation_under_the_timeout():
    policy = RetryPolicy(max_attempts=3, timeout=5.0)

    async def hang() -> None:
        await asyncio.sleep(10)

    task = asyncio.ensure_future(policy.run(hang))
    await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    result, attempts = await policy.run(lambda: asyncio.sleep(0, "after"))  # the policy goes on as before
    assert (result, attempts) == ("after", 1)


def test_one_policy_times_out_on_every_loop_it_runs_on():
    """A model's policy used by one asyncio.run after another (a test, a notebook): each loop gets its timeouts."""
    policy = RetryPolicy(max_attempts=1, timeout=0.05)

    async def hang() -> None:
        await asyncio.sleep(10)

    for _ in range(2):
        with pytest.raises(ModelCallError) as caught:
            asyncio.run(policy.run(hang))
        assert caught.value.kind == "timeout"
