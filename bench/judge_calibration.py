"""Measure a judge on the labelled calibration set (tests/data/judge_calibration.jsonl).

Each case is one answer to a question of the bundled sample, with the verdict a careful
person gives (and, at branch turns, the story's active branch). The judge sees the story
so far (earlier turns answered as expected), and the story's branch rules are applied to
its verdict, exactly as in a run.

    python bench/judge_calibration.py                       # the rules judge
    python bench/judge_calibration.py --judge openai:gpt-4o # rules + LLM cascade
    python bench/judge_calibration.py --judge llm-only:google:gemini-2.5-pro --show-errors

Coverage: the share of cases the judge decides (not undecided). Accuracy: the share of
decided cases where it agrees with the label. False positives: wrong answers marked right.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path

from commet.engine.conversation import apply_branch_rules
from commet.format import load_dataset
from commet.format.dataset import Dataset
from commet.judges import Judge, JudgeRequest, create_judge

CALIBRATION = Path(__file__).resolve().parent.parent / "tests" / "data" / "judge_calibration.jsonl"


@dataclass(frozen=True)
class Case:
    story_id: str
    turn: int
    response: str
    label: str
    note: str
    active_branch: int | None = None


@dataclass
class Outcome:
    case: Case
    correct: bool | None  # the judge's score after branch rules; None when undecided
    judge: str
    rationale: str


@dataclass
class Figures:
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def decided(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.correct is not None]

    @property
    def coverage(self) -> float:
        return len(self.decided) / len(self.outcomes) if self.outcomes else 0.0

    @property
    def accuracy(self) -> float | None:
        decided = self.decided
        return sum(o.correct == (o.case.label == "correct") for o in decided) / len(decided) if decided else None

    @property
    def false_positives(self) -> list[Outcome]:
        return [o for o in self.decided if o.correct and o.case.label == "incorrect"]

    @property
    def false_negatives(self) -> list[Outcome]:
        return [o for o in self.decided if not o.correct and o.case.label == "correct"]


def load_cases(path: Path = CALIBRATION) -> list[Case]:
    return [Case(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def request_for(case: Case, dataset: Dataset) -> JudgeRequest:
    """The judge's view of a case: earlier turns answered as expected (on the case's branch)."""
    storyturn = dataset.get(case.story_id)
    context = []
    for earlier in storyturn.turns[: case.turn]:
        answers = earlier.answers
        reply = answers[case.active_branch] if case.active_branch is not None and len(answers) > 1 else answers[0]
        context.append(f"Story: {earlier.story}\nQuestion: {earlier.question}\nReply: {reply}")
    turn = storyturn.turns[case.turn]
    return JudgeRequest(story_id=case.story_id, task=storyturn.task, turn=case.turn, context=tuple(context),
                        story=turn.story, question=turn.question, expected=tuple(turn.answers),
                        response=case.response, active_branch=case.active_branch)


async def measure(judge: Judge, cases: list[Case], dataset: Dataset, *, concurrency: int = 8) -> Figures:
    """Judge every case (``concurrency`` at a time) and score it under the story's branch rules."""
    limit = asyncio.Semaphore(concurrency)

    async def one(case: Case) -> Outcome:
        async with limit:
            verdict = await judge.judge(request_for(case, dataset))
        turn = dataset.get(case.story_id).turns[case.turn]
        score = apply_branch_rules(turn, verdict, case.active_branch)
        return Outcome(case, score.correct, verdict.judge or judge.name, score.reason)

    return Figures(list(await asyncio.gather(*(one(c) for c in cases))))


def summary(name: str, figures: Figures) -> str:
    accuracy = "-" if figures.accuracy is None else f"{100 * figures.accuracy:.1f}%"
    decided_by: dict[str, int] = {}
    for outcome in figures.outcomes:
        decided_by[outcome.judge] = decided_by.get(outcome.judge, 0) + 1
    return (f"{name}: {len(figures.outcomes)} cases, coverage {100 * figures.coverage:.1f}% "
            f"({len(figures.decided)} decided), accuracy on decided {accuracy}, "
            f"false positives {len(figures.false_positives)}, false negatives {len(figures.false_negatives)}; "
            f"decided by {decided_by}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judge", default="rules", help="judge spec (default: rules)")
    parser.add_argument("--cases", type=Path, default=CALIBRATION)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--show-errors", action="store_true", help="list every case the judge got wrong")
    args = parser.parse_args()
    judge = create_judge(args.judge)
    try:
        figures = await measure(judge, load_cases(args.cases), load_dataset("sample"), concurrency=args.concurrency)
    finally:
        await judge.aclose()
    print(summary(judge.name, figures))
    if args.show_errors:
        for outcome in figures.false_positives + figures.false_negatives:
            case = outcome.case
            print(f"  {case.story_id} turn {case.turn} [{case.label}, {case.note}] {case.response!r}: "
                  f"judged {'correct' if outcome.correct else 'incorrect'} by {outcome.judge} ({outcome.rationale})")


if __name__ == "__main__":
    asyncio.run(main())
