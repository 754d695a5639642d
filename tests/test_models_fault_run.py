"""Whole engine runs against each provider's wire format with faults injected on the wire.

A fake server answers every question deterministically from the request (the reply is looked
up by the question text in the last user message; the picture question is answered right only
when the picture arrived), so a run can be compared turn by turn with a run that saw no fault.
Faults are scripted per question, on its first attempt(s): 429 with ``Retry-After``, 500, a
hang past the call's timeout, a body cut short of its ``Content-Length`` and a well-framed but
cut JSON body. The faulty run must finish with every story scored, give exactly the turn
results of the clean run, and record in the store how many attempts each faulted call took.
"""

from __future__ import annotations

import io
import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from commet.engine import EvalSettings, evaluate_async
from commet.format.dataset import Dataset
from commet.format.model import AnswerFeedback, Feedback, StoryTurn, Turn
from commet.store import Store
from tests.fakeservers import (
    FakeServer,
    RecordedRequest,
    Reply,
    anthropic_reply,
    error_reply,
    google_reply,
    openai_reply,
)

KEY = "sk-fault-run-0123456789abcdef"
TIMEOUT = 1.0  # generous: a slow but healthy call must never time out here
RETRY_AFTER = 0.3

Q_SNACK = "Which snack do you like best, the pear or the cookie?"
Q_PICK = "So which snack will Kim pick, the pear or the cookie?"
Q_LOOK = "Where will Ana look for her ball, the basket or the box?"
Q_NOW = "Is the ball in the basket now?"
Q_REALLY = "Where is the ball really, the basket or the box?"
Q_KITE = "What colour is the kite in the picture, red or blue?"
Q_WHO = "Who flies the kite, Tom or Mia?"
Q_OPEN = "Is the lid of the box open?"
Q_THINK = "What does Lee think is inside the box, crayons or candles?"
Q_PUT = "Where did Max put the chocolate, the green cupboard or the blue cupboard?"
Q_MAX = "Where will Max look for the chocolate, the green cupboard or the blue cupboard?"
Q_FEEL = "Does Pat feel happy or sad?"
Q_FIND = "Does Pat want to find his dog?"

#: The fake model's replies, by question (some are wrong on purpose, so feedback differs).
ANSWERS = {
    Q_SNACK: "I like the pear.",
    Q_PICK: "Kim will pick the cookie.",
    Q_LOOK: "The box.",  # wrong: Ana did not see the ball moved
    Q_NOW: "No.",
    Q_REALLY: "The box.",
    Q_WHO: "Tom.",
    Q_OPEN: "No, it is not open.",
    Q_THINK: "Crayons.",
    Q_PUT: "The green cupboard.",
    Q_MAX: "The blue cupboard.",  # wrong
    Q_FEEL: "Happy.",  # wrong
    Q_FIND: "Yes.",
}
KITE_SEEN, KITE_UNSEEN = "It is red.", "I cannot see a picture, so blue?"


def kite_png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (32, 24), (220, 30, 30)).save(out, format="PNG")
    return out.getvalue()


def dataset() -> Dataset:
    def st(sid: str, task: str, category: str, *turns: Turn, image_dependent: bool = False) -> StoryTurn:
        return StoryTurn(id=sid, task=task, category=category, turns=list(turns), image_dependent=image_dependent)

    right_wrong = Feedback(right="Yes, that's it.", wrong="Remember what happened.")
    stories = [
        st("dd", "diverse_desire", "Desire",
           Turn(story="Meet Kim. There is a pear and a cookie.", question=Q_SNACK, answers=["Pear", "Cookie"]),
           Turn(story="Kim likes the other snack better.", question=Q_PICK, answers=["Cookie", "Pear"],
                feedback=Feedback(by_answer=[AnswerFeedback(answer="Pear", text="So Kim likes the cookie."),
                                             AnswerFeedback(answer="Cookie", text="So Kim likes the pear.")]))),
        st("fb", "false_belief_location", "Belief",
           Turn(story="Ana puts her ball in the basket and goes out. Ben moves it to the box.", question=Q_LOOK,
                answers=["The basket"]),
           Turn(question=Q_NOW, answers=["No"], feedback=right_wrong),
           Turn(question=Q_REALLY, answers=["The box"])),
        st("pic", "visual_perception", "Percept",
           Turn(story="Look at the picture.", question=Q_KITE, image="kite", answers=["Red"]),
           Turn(story="Tom is holding the string.", question=Q_WHO, answers=["Tom"], feedback=right_wrong),
           image_dependent=True),
        st("ct", "false_belief_content", "Belief",
           Turn(story="Lee finds a crayon box. Candles are inside.", question=Q_OPEN, answers=["No"]),
           Turn(question=Q_THINK, answers=["Crayons"], feedback=right_wrong)),
        st("mx", "false_belief_location", "Belief",
           Turn(story="Max puts his chocolate in the green cupboard and leaves.", question=Q_PUT,
                answers=["The green cupboard"]),
           Turn(story="His mother moves it to the blue cupboard.", question=Q_MAX,
                answers=["The green cupboard"], feedback=right_wrong)),
        st("em", "emotion", "Emotion",
           Turn(story="Pat lost his dog.", question=Q_FEEL, answers=["Sad"]),
           Turn(question=Q_FIND, answers=["Yes"], feedback=Feedback(right="Yes.", wrong="Pat is sad, not happy."))),
    ]
    return Dataset(stories, name="fault-run", images={"kite": kite_png()})


# ----------------------------------------------------------------------------- the fake provider


def last_user_text_and_image(style: str, body: dict[str, Any]) -> tuple[str, bool]:
    """The last user message's text, and whether any message of the request carries a picture."""
    if style == "google":
        contents = body["contents"]
        user = [c for c in contents if c.get("role") == "user"][-1]
        text = "".join(p.get("text", "") for p in user["parts"])
        image = any("inlineData" in p or "inline_data" in p for c in contents for p in c["parts"])
        return text, image
    messages = body["messages"]
    user = [m for m in messages if m["role"] == "user"][-1]
    content = user["content"]
    text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
    picture = "image_url" if style == "openai" else "image"
    image = any(isinstance(m["content"], list) and any(b.get("type") == picture for b in m["content"])
                for m in messages)
    return text, image


def answer(style: str, request: RecordedRequest) -> str:
    text, image = last_user_text_and_image(style, request.json)
    if Q_KITE in text:
        return KITE_SEEN if image else KITE_UNSEEN
    matches = [q for q in ANSWERS if q in text]
    assert len(matches) == 1, f"no single known question in {text!r}"
    return ANSWERS[matches[0]]


def success(style: str, text: str) -> Reply:
    return {"openai": openai_reply, "anthropic": anthropic_reply, "google": google_reply}[style](text)


def faults(style: str) -> dict[str, list[Reply]]:
    """What each faulted question's first attempts get, in order; then the right answer."""
    good = json.dumps(success(style, "The box.").body).encode()
    return {
        Q_PICK: [error_reply(429, "slow down", headers={"Retry-After": str(RETRY_AFTER)}, style=style)],
        Q_LOOK: [error_reply(500, "boom", style=style)],
        Q_KITE: [Reply(hang=True)],  # the picture turn: the picture is sent again on the retry
        Q_THINK: [Reply(body=success(style, "Crayons.").body, truncate=17)],  # Content-Length says more
        Q_PUT: [Reply(body=good[: len(good) // 2])],  # a well-framed, cut JSON document
        Q_FEEL: [error_reply(503, "overloaded", style=style), Reply(hang=True)],
    }


class Provider:
    """Deterministic answers, plus the scripted faults when ``with_faults``."""

    def __init__(self, style: str, *, with_faults: bool):
        self.style = style
        self.plan = faults(style) if with_faults else {}
        self.seen: Counter[str] = Counter()
        self.arrivals: dict[str, list[float]] = {}
        self.lock = threading.Lock()

    def __call__(self, request: RecordedRequest) -> Reply:
        text, _ = last_user_text_and_image(self.style, request.json)
        question = next((q for q in [Q_KITE, *ANSWERS] if q in text), text)
        with self.lock:
            attempt = self.seen[question]
            self.seen[question] += 1
            self.arrivals.setdefault(question, []).append(request.started)
        scripted = self.plan.get(question, [])
        if attempt < len(scripted):
            return scripted[attempt]
        return success(self.style, answer(self.style, request))


#: (story, turn) -> attempts its call needs in the faulty run
EXPECTED_ATTEMPTS = {("dd", 1): 2, ("fb", 0): 2, ("pic", 0): 2, ("ct", 1): 2, ("mx", 0): 2, ("em", 0): 3}


def spec(style: str, server: FakeServer, transport: str | None = None) -> str:
    base = f"{server.url}/v1" if style == "openai" else server.url
    extra = f"&transport={transport}" if transport else ""
    return (f"{style}:fake-model?base_url={base}&timeout={TIMEOUT}&backoff_base=0.01&backoff_max=0.05"
            f"&max_attempts=4{extra}")


async def run(style: str, db: Path, *, with_faults: bool,
              transport: str | None = None) -> tuple[Any, Provider, FakeServer]:
    provider = Provider(style, with_faults=with_faults)
    with FakeServer(style, responder=provider) as server:
        summary = await evaluate_async(spec(style, server, transport), dataset(), judge="rules", db=db, run="r",
                                       settings=EvalSettings(images="on", image_max_side=64,
                                                             undecided_feedback="wrong"),  # every turn asked
                                       concurrency=6)
    return summary, provider, server


def stored(db: Path) -> tuple[dict[tuple[str, int], dict[str, Any]], list[dict[str, Any]], dict[tuple[str, int], int]]:
    with Store(db) as store:
        record = store.get_run("r")
        assert record is not None and record.status == "done"
        turns = {(r.story_id, r.turn): r.columns() for r in store.turn_rows(record.id)}
        stories = [r.columns() for r in store.story_rows(record.id)]
        attempts = {(r["story_id"], r["turn"]): r["attempts"] for r in store.db.execute(
            "SELECT t.story_id, t.turn, m.attempts FROM turns t JOIN model_calls m ON m.key = t.model_key "
            "WHERE t.run_id = ?", (record.id,))}
        log_errors = store.db.execute("SELECT COUNT(*) FROM call_log WHERE run_id = ? AND error IS NOT NULL",
                                      (record.id,)).fetchone()[0]
    assert log_errors == 0
    return turns, stories, attempts


COMPARED = ("prompt", "images_json", "response", "outcome", "correct", "branch", "active_branch", "feedback_kind")


@pytest.mark.parametrize(("style", "transport"),
                         [("openai", "direct"), ("openai", "sdk"), ("anthropic", None), ("google", None)])
async def test_run_with_faults_equals_run_without(style: str, transport: str | None, tmp_path: Path,
                                                  monkeypatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv({"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY",
                        "google": "GEMINI_API_KEY"}[style], KEY)

    clean, clean_provider, clean_server = await run(style, tmp_path / "clean.sqlite", with_faults=False,
                                                    transport=transport)
    faulty, provider, server = await run(style, tmp_path / "faulty.sqlite", with_faults=True, transport=transport)

    data = dataset()
    n_turns = sum(len(s.turns) for s in data)
    for summary in (clean, faulty):
        assert summary.run.status == "done"
        assert summary.progress.errors == 0 and summary.progress.stories_done == len(data)
        assert summary.call_counts["model_calls"] == n_turns and summary.call_counts["model_errors"] == 0

    clean_turns, clean_stories, clean_attempts = stored(tmp_path / "clean.sqlite")
    turns, stories, attempts = stored(tmp_path / "faulty.sqlite")

    # every story finished and scored; every turn answered and judged
    assert len(stories) == len(data) and all(s["status"] == "done" and s["correct"] is not None for s in stories)
    assert len(turns) == n_turns
    for row in turns.values():
        assert row["error_kind"] is None and row["error"] is None
        assert row["response"] is not None and row["correct"] is not None

    # the faulty run's turn results are exactly the clean run's
    assert set(turns) == set(clean_turns)
    for key in clean_turns:
        assert {c: turns[key][c] for c in COMPARED} == {c: clean_turns[key][c] for c in COMPARED}, key

    # ... and they are not trivial: the picture arrived, feedback followed right, wrong and answer branches
    assert turns[("pic", 0)]["response"] == KITE_SEEN and turns[("pic", 0)]["correct"] == 1
    assert json.loads(turns[("pic", 0)]["images_json"])[0]["id"] == "kite"
    assert {row["correct"] for row in turns.values()} == {0, 1}
    kinds = {row["feedback_kind"] for row in turns.values()}
    assert {"answer:Pear", "right", "wrong", "none"} <= kinds
    assert turns[("dd", 1)]["branch"] == 0 and turns[("dd", 1)]["active_branch"] == 0

    # attempts recorded per call: > 1 exactly where faults were injected
    assert clean_attempts == dict.fromkeys(clean_turns, 1)
    assert attempts == {key: EXPECTED_ATTEMPTS.get(key, 1) for key in turns}
    questions = {(s.id, k): t.question for s in data for k, t in enumerate(s.turns)}
    assert {key: provider.seen[questions[key]] for key in turns} == attempts  # the store agrees with the wire
    extra = sum(n - 1 for n in EXPECTED_ATTEMPTS.values())
    assert len(clean_server.requests) == n_turns and len(server.requests) == n_turns + extra
    assert provider.seen[Q_KITE] == 2 and clean_provider.seen[Q_KITE] == 1

    # Retry-After was honoured before the retry; the hung attempt was abandoned after the timeout
    first, second = provider.arrivals[Q_PICK]
    assert second - first >= RETRY_AFTER - 0.02
    first, second = provider.arrivals[Q_KITE]
    # arrivals are stamped when the headers were read (the body, a picture, may be read much later on a loaded
    # machine), the margin stays wide; a call abandoned early (no timeout) would retry after the 0.01-0.05 s back-off
    assert second - first >= TIMEOUT * 0.5


def test_cut_bodies_are_classified_retryable() -> None:
    """The two cut-body faults above, as the retry policy classifies them (both were final failures before)."""
    from commet.models.errors import classify

    error, _ = classify(json.JSONDecodeError("Unterminated string", '{"content": [{"te', 15))
    assert (error.kind, error.retryable) == ("bad_response", True)
    import aiohttp
    error, _ = classify(aiohttp.ClientPayloadError("Response payload is not completed"))
    assert (error.kind, error.retryable) == ("connection", True)
