"""The judge interface: decide whether one reply matches one turn's expected answer(s).

A judge only says whether the reply matches, and WHICH expected answer (branch) it
matched. The engine applies the story's branch rules (spec section 3) on top, so every
judge, from rules to LLM panels, shares one semantics.
"""

from __future__ import annotations

import asyncio
import json
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal, TypeGuard, get_args

from commet.errors import CommetError
from commet.models.base import ImagePart, Usage, canonical_json, json_key
from commet.sources.inputs import valid_text

Outcome = Literal["correct", "incorrect", "undecided"]
#: every outcome a judge can give
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)


def is_outcome(value: object) -> TypeGuard[Outcome]:
    """Whether a value read back (a stored verdict, a panel member's record) is an outcome a judge can give."""
    return value in OUTCOMES


@dataclass(frozen=True)
class JudgeRequest:
    """Everything a judge may look at: the story so far, the question, expected answers, the reply."""

    story_id: str
    task: str
    turn: int
    context: tuple[str, ...]  # earlier turns as "story / question / reply" texts, oldest first
    story: str
    question: str
    expected: tuple[str, ...]
    response: str
    options: tuple[tuple[str | None, str], ...] = ()  # (label, text) of the choices shown, if any
    #: False when ``options`` are the turn's judge-only candidates (``Turn.candidates``): the closed set the
    #: answer is one of, which the answerer was not shown
    options_shown: bool = True
    rubric: tuple[str, tuple[str, ...]] | None = None  # (key inference, false inferences) for an explanation
    feedback: str = ""  # the feedback shown at the start of this turn (not story text)
    images: tuple[ImagePart, ...] = ()  # pictures the judge may look at (the run showed them)

    def fingerprint(self) -> dict[str, object]:
        """What the verdict depends on; the newer fields only when set, so older keys stay valid."""
        data: dict[str, object] = {
            "story_id": self.story_id, "task": self.task, "turn": self.turn, "context": list(self.context),
            "story": self.story, "question": self.question, "expected": list(self.expected),
            "response": self.response}
        if self.options:
            data["options"] = [list(option) for option in self.options]
            if not self.options_shown:
                data["options_shown"] = False
        if self.rubric is not None:
            data["rubric"] = [self.rubric[0], list(self.rubric[1])]
        if self.feedback:
            data["feedback"] = self.feedback
        if self.images:
            data["images"] = [image.sha256 for image in self.images]
        return data

    @cached_property
    def fingerprint_json(self) -> str:
        """The fingerprint as canonical JSON, made once: the cache key and the store's row share it."""
        return canonical_json(self.fingerprint())


#: the details keys under which the typed spend and failure fields are stored in the judgment cache's JSON
#: (the stored form is unchanged since before they were fields: caches written earlier read back the same)
STORED_FIELDS = ("usage", "cost_usd", "error", "error_kind")


@dataclass
class Verdict:
    outcome: Outcome
    branch: int | None = None  # index into expected of the answer the reply matched
    rationale: str = ""
    judge: str = ""  # who judged: "rules", "openai:gpt-4o@judge-v2", "human:alice", ...
    details: dict[str, object] = field(default_factory=dict)  # free-form extras: panel members' verdicts, attempts
    #: tokens the judgment cost; None for a free judge (the rules), whose judgments cost nothing
    usage: Usage | None = None
    #: estimated USD of ``usage``; None while ``usage`` is set means the judge model's price is unknown
    cost_usd: float | None = None
    #: why the judge call failed for good (the verdict is then undecided, counted as a failure, never cached)
    error: str | None = None
    #: the failure's kind as the run's failure list counts it: "judge_http_503", "judge_unparseable", "judge_panel"
    error_kind: str | None = None

    def __post_init__(self) -> None:
        # a rationale parsed from a judge model's JSON may hold lone surrogates ("\\ud800"): made valid text,
        # counted in the details
        self.rationale, replaced = valid_text(self.rationale)
        if replaced:
            before = self.details.get("replaced_code_points", 0)
            self.details = {**self.details, "replaced_code_points": (before if isinstance(before, int) else 0) + replaced}

    @property
    def correct(self) -> bool | None:
        return None if self.outcome == "undecided" else self.outcome == "correct"

    def spent(self) -> tuple[int, int, float | None]:
        """(input tokens, output tokens, estimated USD or None when unknown): what this judgment cost."""
        if self.usage is None:
            return 0, 0, 0.0
        return self.usage.input_tokens, self.usage.output_tokens, self.cost_usd

    def stored_details(self) -> dict[str, object]:
        """The details as the judgment cache stores them: the extras plus the typed fields under their keys."""
        stored = dict(self.details)
        if self.usage is not None:
            stored["usage"] = {"input_tokens": self.usage.input_tokens, "output_tokens": self.usage.output_tokens}
            stored["cost_usd"] = self.cost_usd
        if self.error is not None:
            stored["error"] = self.error
        if self.error_kind is not None:
            stored["error_kind"] = self.error_kind
        return stored

    @classmethod
    def from_stored(cls, outcome: Outcome, branch: int | None, rationale: str, judge: str,
                    details: dict[str, object]) -> Verdict:
        """A verdict from the judgment cache's columns: the typed fields taken back out of the details JSON."""
        extras = {key: value for key, value in details.items() if key not in STORED_FIELDS}
        usage, cost = _stored_spend(details)
        error, kind = details.get("error"), details.get("error_kind")
        return cls(outcome, branch, rationale, judge, extras, usage, cost,
                   None if error is None else str(error), None if kind is None else str(kind))


def _stored_spend(details: dict[str, object]) -> tuple[Usage | None, float | None]:
    """(usage, cost) from stored details: tokens a number each, a cost a number or null (unknown price)."""
    if "usage" not in details and "cost_usd" not in details:
        return None, None
    raw, cost = details.get("usage"), details.get("cost_usd")
    tokens: dict[str, object] = raw if isinstance(raw, dict) else {}

    def count(name: str) -> int:
        value = tokens.get(name, 0)
        return int(value) if isinstance(value, (int, float)) else 0

    usage = Usage(count("input_tokens"), count("output_tokens"))
    return usage, float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None


class Judge(ABC):
    """Decides replies. ``name`` identifies judge and prompt version in the store."""

    name: str
    #: Whether verdicts are stored in the judgment cache (an LLM judge's are; the free rules judge's are not).
    cacheable: bool = True
    #: Whether its verdicts can depend on the pictures of a request; False (the rules): the engine gives it none,
    #: so no picture is decoded or encoded for it.
    reads_pictures: bool = True

    def cache_key(self, request: JudgeRequest) -> str:
        return json_key(judge=json.dumps(self.name), request=request.fingerprint_json)

    @abstractmethod
    async def judge(self, request: JudgeRequest) -> Verdict:
        """Judge one reply."""

    def price_known(self) -> bool:
        """Whether this judge's calls can be priced (free judges can; a spend limit needs it)."""
        return True

    async def aclose(self) -> None:
        """Release clients."""

    async def __aenter__(self) -> Judge:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


#: a reply longer than this is judged by a synchronous judge in a worker thread, off the event loop (about
#: 0.4 microseconds of rules judging per character: 2,000 characters are under a millisecond on the loop)
OFF_LOOP_CHARS = 2_000


async def decided_off_the_loop(decide: Callable[[JudgeRequest], Verdict], request: JudgeRequest) -> Verdict:
    """A synchronous judge's decision: on the loop for a short reply, in a worker thread for a long one.

    Why: the engine has many conversations in flight on one event loop; judging a 100 KB reply in
    place takes about 40 ms (a 1 MB one 0.4 s), all of which every other conversation waits for.
    In a thread, the loop runs between the judge's steps. Short replies, nearly all of them, stay
    on the loop: a thread hop costs more than judging them.
    """
    if len(request.response) <= OFF_LOOP_CHARS:
        return decide(request)
    return await asyncio.to_thread(decide, request)


class UnknownJudgeError(CommetError, ValueError):
    """A judge spec that cannot be built."""


def decided_by(judges: Iterable[str | None]) -> dict[str, int]:
    """How many judgments each judge made (from ``Verdict.judge`` or the turns' ``judge`` column)."""
    return dict(Counter(j or "?" for j in judges).most_common())
