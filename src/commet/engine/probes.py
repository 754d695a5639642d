"""Judge bias probes: the same stored answers asked again in a form that must not change the verdict.

* ``position``: the options the answerer was shown, and a branch point's expected answers, in the
  reverse order (each option keeps its label, so a reply naming "B" still names the same text);
  an answer with fewer than two of either has nothing to reorder and is not probed.
* ``length``: the reply padded with neutral text before and after (:data:`PADDING`), which says
  nothing about the story.

A fair judge gives the same verdict (outcome, and the same expected answer at a branch point,
mapped back through the new order) to both, up to its own inconsistency: a judge that samples its
reply can change its verdict when merely asked again. So the probe asks each answer three times:
as the run asked it (from the store's judgment cache when the judge has given it before), again in
the same form, and in the probe's form. The flips of the re-asked verdict measure the noise; the
bias is the probe's flips beyond it (:func:`bias_test`: McNemar's exact test on the answers where
only one of the two changed, which are equally likely either way for a fair judge however noisy it
is). The probe draws a seeded sample of a run's answered turns and builds each judge request exactly
as the run and ``commet rejudge`` do (the story so far, the feedback shown, the pictures the judge
may see); nothing is written to the store.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass, replace
from enum import Enum
from fractions import Fraction
from math import comb, sqrt
from statistics import NormalDist

from commet.conditions import JudgeImages
from commet.engine.conversation import judge_request
from commet.engine.pictures import PictureCache
from commet.engine.rejudge import source_settings
from commet.format.dataset import Dataset
from commet.judges.base import Judge, JudgeRequest, Verdict
from commet.models.base import ImagePart
from commet.store.records import TurnRecord
from commet.store.sqlite import RunRecord, Store

#: neutral text around a reply for the length probe: no claim about the story, no hedge, no option named
PADDING = ("Let me think about the story and the question before I answer. ",
           " That is my answer, and I have kept it short and to the point as the question asked.")


class Probe(str, Enum):
    position = "position"
    length = "length"


@dataclass(frozen=True)
class ProbeItem:
    """One answer of the run: the judge request as the run asked it and the probe's version of it."""

    story_id: str
    turn: int
    original: JudgeRequest
    probed: JudgeRequest
    #: index in the probed request's expected answers -> index in the original's (None: the same order)
    back: tuple[int, ...] | None = None


@dataclass(frozen=True)
class ProbeOutcome:
    item: ProbeItem
    before: Verdict  # as the run asked it
    after: Verdict  # the probe's form
    again: Verdict  # asked again in the run's form: the judge's own inconsistency

    @property
    def after_branch(self) -> int | None:
        """The probed verdict's branch, as an index into the original's expected answers."""
        branch = self.after.branch
        return self.item.back[branch] if branch is not None and self.item.back is not None else branch

    @property
    def flipped(self) -> bool:
        """The verdict changed: another outcome, or (both correct at a branch point) another expected answer."""
        return self._differs(self.after, self.after_branch)

    @property
    def reflipped(self) -> bool:
        """Asked again unchanged, the judge gave another verdict (its noise)."""
        return self._differs(self.again, self.again.branch)

    def _differs(self, other: Verdict, branch: int | None) -> bool:
        if self.before.outcome != other.outcome:
            return True
        return (self.before.outcome == "correct" and len(self.item.original.expected) > 1
                and self.before.branch != branch)


@dataclass(frozen=True)
class BiasTest:
    """The probe's flips beyond the judge's noise: the excess flip rate (probed minus re-asked, 0..1) with a 95%
    interval, and McNemar's exact one-sided p of "no more flips than asking again" on the discordant answers."""

    excess: float
    low: float
    high: float
    p_value: float
    level: float = 0.05

    @property
    def flagged(self) -> bool:
        return self.p_value < self.level


def bias_test(probe_flips: int, noise_flips: int, both: int, answers: int) -> BiasTest:
    """:class:`BiasTest` from the answers whose probed verdict flipped, whose re-asked one did, both, of ``answers``.

    Only the answers where exactly one of the two flipped tell them apart; for a fair judge (the probed form is
    just another asking) each such answer is the probe's with probability 1/2, however noisy the judge: the p-value
    is the binomial tail (exact, one-sided). The interval is the paired difference of proportions' (Wald, as
    McNemar's)."""
    only_probe, only_again = probe_flips - both, noise_flips - both
    discordant = only_probe + only_again
    tail = sum(comb(discordant, k) for k in range(only_probe, discordant + 1))
    p_value = float(Fraction(tail, 2 ** discordant)) if discordant else 1.0
    n = max(answers, 1)
    excess = (only_probe - only_again) / n
    half = NormalDist().inv_cdf(0.975) * sqrt(max(discordant - (only_probe - only_again) ** 2 / n, 0.0)) / n
    return BiasTest(excess, max(-1.0, excess - half), min(1.0, excess + half), p_value)


def reordered(request: JudgeRequest) -> tuple[JudgeRequest, tuple[int, ...] | None] | None:
    """The request with its options (label and text together) and its expected answers in reverse order, and the
    map back from new to old expected indices; None when neither has two items to reorder."""
    options, expected = request.options, request.expected
    if len(options) < 2 and len(expected) < 2:
        return None
    back = tuple(range(len(expected) - 1, -1, -1)) if len(expected) > 1 else None
    return replace(request, options=tuple(reversed(options)), expected=tuple(reversed(expected))), back


def padded(request: JudgeRequest) -> JudgeRequest:
    return replace(request, response=PADDING[0] + request.response.strip() + PADDING[1])


def order_key(seed: int, story_id: str, turn: int) -> str:
    return hashlib.sha256(f"{seed}:{story_id}:{turn}".encode()).hexdigest()


def probe_items(store: Store, run: RunRecord, dataset: Dataset, probe: Probe, *, sample: int,
                seed: int) -> tuple[list[ProbeItem], int]:
    """A seeded sample of ``sample`` of the run's answered turns that the probe can change, and how many of the
    run's answered turns it cannot (position: fewer than two options and expected answers)."""
    settings = source_settings(run)
    pictures = PictureCache(dataset, max_side=settings.image_max_side, fmt=settings.image_format)
    by_story: dict[str, list[TurnRecord]] = {}
    for row in store.turn_rows(run.id):
        by_story.setdefault(row.story_id, []).append(row)
    candidates: list[ProbeItem] = []
    unchangeable = 0
    try:
        for story_id, rows in by_story.items():
            storyturn = dataset.get(story_id)
            policy = settings.judge_images
            with_pictures = policy is JudgeImages.ON or policy is JudgeImages.NEEDED and storyturn.image_dependent
            earlier: list[tuple[str, str]] = []
            shown: list[ImagePart] = []
            for row in sorted(rows, key=lambda r: r.turn):
                if with_pictures:
                    shown.extend(pictures.part(image["id"]) for image in row.images)
                if row.response is None:
                    continue
                request = judge_request(storyturn, row.turn, row.prompt, row.response, earlier, shown)
                earlier.append((row.prompt, row.response))
                if probe is Probe.length:
                    candidates.append(ProbeItem(story_id, row.turn, request, padded(request)))
                    continue
                changed = reordered(request)
                if changed is None:
                    unchangeable += 1
                else:
                    candidates.append(ProbeItem(story_id, row.turn, request, changed[0], changed[1]))
    finally:
        pictures.close()
    candidates.sort(key=lambda item: order_key(seed, item.story_id, item.turn))
    return candidates[:sample], unchangeable


@dataclass
class ProbeResult:
    judge: str
    outcomes: list[ProbeOutcome]
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = 0.0

    @property
    def flips(self) -> int:
        return sum(o.flipped for o in self.outcomes)

    @property
    def noise_flips(self) -> int:
        return sum(o.reflipped for o in self.outcomes)

    def bias(self) -> BiasTest:
        return bias_test(self.flips, self.noise_flips, sum(o.flipped and o.reflipped for o in self.outcomes),
                         len(self.outcomes))


async def run_probe(store: Store, items: list[ProbeItem], judge: Judge, *, concurrency: int = 16) -> ProbeResult:
    """Ask ``judge`` every item as the run asked it (from the judgment cache when it is there), again unchanged
    (never from the cache: the judge's own inconsistency) and in the probe's form."""
    gate = asyncio.Semaphore(max(1, concurrency))
    result = ProbeResult(judge.name, [])

    async def ask(request: JudgeRequest, cached_ok: bool) -> Verdict:
        if cached_ok and judge.cacheable:
            stored = store.cached_judgment(judge.cache_key(request))
            if stored is not None:
                return stored.verdict()
        async with gate:
            verdict = await judge.judge(request)
        tokens_in, tokens_out, cost = verdict.spent()
        result.input_tokens += tokens_in
        result.output_tokens += tokens_out
        result.cost = None if cost is None or result.cost is None else result.cost + cost
        return verdict

    async def one(item: ProbeItem) -> ProbeOutcome:
        before = await ask(item.original, True)  # first: the verdict the other two are compared with
        after, again = await asyncio.gather(ask(item.probed, False), ask(item.original, False))
        return ProbeOutcome(item, before, after, again)

    result.outcomes = list(await asyncio.gather(*(one(item) for item in items)))
    return result


def member_verdicts(verdict: Verdict, back: tuple[int, ...] | None = None) -> dict[str, str]:
    """A panel's members' verdicts (member -> outcome, with the expected answer's number when correct), the number
    mapped through ``back`` (a probed request's order back to the original's)."""
    members = verdict.details.get("members") if verdict.details else None
    found: dict[str, str] = {}
    for record in members if isinstance(members, list) else []:
        if isinstance(record, dict):
            branch = record.get("branch")
            outcome = str(record.get("outcome"))
            if isinstance(branch, int) and back is not None:
                branch = back[branch]
            found[str(record.get("judge"))] = outcome + (f" ({branch + 1})" if outcome == "correct" and
                                                         isinstance(branch, int) else "")
    return found
