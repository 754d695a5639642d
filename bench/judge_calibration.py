"""Measure a judge on the labelled sets: its decided share and its precision on what it decides.

Twenty-one sets, labelled by hand with the verdict a careful person gives:

* tests/data/judge_calibration.jsonl: answers to questions of the bundled sample (and, at
  branch turns, the story's active branch); the judge sees the story so far (earlier turns
  answered as expected);
* tests/data/rules_judge_labelled.jsonl: self-contained replies (question, options, expected
  answers) of every hard kind: hedges, contrasts, self-corrections, idioms, rhetorical
  questions, negated options, letters, Chinese and Japanese, long replies;
* tests/data/rules_judge_audit.jsonl: 222 more self-contained replies written to break the rules
  judge (negative questions, option labels that disagree with option text, words pointing away
  from an option, options inside each other, several labels, options in another role, "I don't
  know"), some labelled ``unclear``: a careful person cannot tell right from wrong, so a judge must
  leave them undecided (a decided verdict on one counts as wrong);
* tests/data/rules_judge_realistic.jsonl: 428 replies written the way chat models answer (answer
  lines after reasoning, chain of thought that names the wrong option first, markdown, polite
  preambles, long explanations, Spanish, German, French, Japanese and Chinese by label and by
  option text, belief phrasings, feelings, yes/no with an explanation, "why" questions);
* tests/data/rules_judge_adversarial.jsonl: 326 replies of the kinds that once made the judge wrong
  (strike-through, crosses and ticks, question marks of other scripts, emoji, shrugs, sarcasm,
  labels after dashes, arrows, middle dots and invisible characters, several labels, people in
  another role, copies of the question, conclusions taken back), most labelled ``unclear``;
* tests/data/rules_judge_redteam_realistic.jsonl and rules_judge_redteam_adversarial.jsonl: 451 and
  349 replies written blind to the judge's code after its rewrite, as an independent reviewer would
  (questions of the 18 sample tasks and of ToMi, ToMBench, OpenToM and BigToM with candidates, labels
  and rubrics; replies in the styles of five chat models and in five languages; self-corrections,
  conditionals, negations, hedges, sarcasm, tables, code, HTML, LaTeX, invisible and bidi characters,
  homoglyphs, full-width letters, copies of the question, empty-looking replies);
  rules_judge_redteam_probes.jsonl holds the replies found by probing after its code was read (number
  labels that are also numbers of an option, sums, emoticons, two answers that disagree, ...);
* tests/data/rules_judge_v4_realistic.jsonl, rules_judge_v4_adversarial.jsonl and
  rules_judge_v4_candidates.jsonl (issue 42): 293, 171 and 91 replies written blind to the judge's code in
  styles no earlier set used (JSON and XML answers, \\boxed{}, think blocks and "Reasoning:" sections, yes/no
  idioms and elliptic answers, feelings by idiom, answers by description, labels followed by words of seven
  languages, option texts in six more scripts, bare yes/no to why/how/what questions, ToMi's judge-only
  candidates under both protocols); rules_judge_v4_probes.jsonl the edges of the v4 rules found after;
  rules_judge_v4_followup.jsonl the classes a held-out set still found on v4 (a label with another option's
  text, yes/no with a restating or reasoning clause, trailing yes/no, elliptic answers, an option in a sentence
  with a modal verb, a negated option then the key, emoji after the answer), labelled before the judge ran.
* tests/data/rules_judge_v5_tails.jsonl and rules_judge_v5_blind.jsonl: 973 replies of a probe that found the
  judge accepting whatever followed an answer unless a listed word spoiled it (retractions such as "Reverse
  that.", sarcasm tags, someone else's answer line, a belief given to someone else after the answer, option
  letters that are words of the story), and 610 replies written after the fix, blind to the code (answers
  given to someone else by ", says Sam", ", per Sam", ", selon son père"; retractions before and after the
  answer in five languages; letters that are places). Each row may give its story apart from its question.
* tests/data/rules_judge_v5_blind2.jsonl: 586 more replies written blind after it (multi-turn replies that refer
  back, unmarked chains of thought, letters and numbers that collide with labels, second-order questions answered
  at the first order, homoglyphs and zero-width characters, replies in other languages); rows may give the earlier
  turns (``context``).
* tests/data/rules_judge_v6_blind.jsonl: 859 replies written blind to the judge's code and to the earlier sets
  (reasoning-model output, \\boxed{} and <answer> tags, tables, JSON fences, conditionals, probability splits,
  options inside each other, numeric options, yes/no idioms, eleven languages, emoji, later corrections, echoes,
  refusals); rules_judge_v6_blind2.jsonl more replies of yet other styles, written after its fix without tuning.
* tests/data/rules_judge_v7_blind.jsonl: 901 replies written blind to the judge's code and to the earlier sets, as
  model families write them on the 18 tasks (headings, typos, hedged prose, Chinese mixed in, bold answers, story
  quotes, earlier turns and feedback referred to, why answers, beliefs stated without yes or no, feelings by
  synonym, characters where a place is asked); rules_judge_v7_probes.jsonl the yes or no run on into its clause
  ("No she does") found by probing after.
* tests/data/rules_judge_v8_blind.jsonl: 697 replies written blind to the judge's code, on StoryTurns of the sample
  and of the procedural generator, in styles no earlier set used (chat-template tokens, the second person, letters,
  postscripts, "hardly", "far from", "anything but", "not only", the former and the latter, diffs, logic notation,
  passive voice, quoted thoughts, truncated replies, repetition loops, answers for another character).

The story's branch rules are applied to each verdict, exactly as in a run. The rules judge's
contract is 0 wrong decided verdicts on all twenty-one. Each set's line gives wrong / decided / undecided; the
last line the rules judge's speed (replies per second, the longest reply's time, a reply of the most
characters it reads). For the realistic set the decided share is
printed per kind, with the share of right answers to questions that are not "why" questions.
``--through-eval`` scores the self-contained sets the way independent sets are scored: each reply
becomes a one-turn StoryTurn (question, options, answers), a replay model gives the reply and
``commet.evaluate`` runs the judge, the engine's path (options, feedback, the judge's request).

    python bench/judge_calibration.py                       # the rules judge
    python bench/judge_calibration.py --through-eval        # the same, through commet.evaluate
    python bench/judge_calibration.py --judge openai:gpt-4o # rules + LLM cascade
    python bench/judge_calibration.py --judge llm-only:google:gemini-2.5-pro --show-errors

Decided share: the cases the judge decides (not undecided). Precision: the share of decided
cases where it agrees with the label. False positives: wrong answers marked right; false
negatives: right answers marked wrong.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from commet.engine.conversation import apply_branch_rules
from commet.format.dataset import Dataset
from commet.format.model import Rubric, Turn
from commet.judges import Judge, JudgeRequest, create_judge
from commet.judges.rules import decide
from commet.judges.rules.marks import MAX_REPLY_CHARS
from commet.sources import load_dataset

CALIBRATION = Path(__file__).resolve().parent.parent / "tests" / "data" / "judge_calibration.jsonl"
LABELLED = CALIBRATION.with_name("rules_judge_labelled.jsonl")
AUDIT = CALIBRATION.with_name("rules_judge_audit.jsonl")
REALISTIC = CALIBRATION.with_name("rules_judge_realistic.jsonl")
ADVERSARIAL = CALIBRATION.with_name("rules_judge_adversarial.jsonl")
REDTEAM_REALISTIC = CALIBRATION.with_name("rules_judge_redteam_realistic.jsonl")
REDTEAM_ADVERSARIAL = CALIBRATION.with_name("rules_judge_redteam_adversarial.jsonl")
REDTEAM_PROBES = CALIBRATION.with_name("rules_judge_redteam_probes.jsonl")
V4_REALISTIC = CALIBRATION.with_name("rules_judge_v4_realistic.jsonl")
V4_ADVERSARIAL = CALIBRATION.with_name("rules_judge_v4_adversarial.jsonl")
V4_CANDIDATES = CALIBRATION.with_name("rules_judge_v4_candidates.jsonl")
V4_PROBES = CALIBRATION.with_name("rules_judge_v4_probes.jsonl")
V4_FOLLOWUP = CALIBRATION.with_name("rules_judge_v4_followup.jsonl")
V5_TAILS = CALIBRATION.with_name("rules_judge_v5_tails.jsonl")
V5_BLIND = CALIBRATION.with_name("rules_judge_v5_blind.jsonl")
V5_BLIND_2 = CALIBRATION.with_name("rules_judge_v5_blind2.jsonl")
V6_BLIND = CALIBRATION.with_name("rules_judge_v6_blind.jsonl")
V6_BLIND_2 = CALIBRATION.with_name("rules_judge_v6_blind2.jsonl")
V7_BLIND = CALIBRATION.with_name("rules_judge_v7_blind.jsonl")
V7_PROBES = CALIBRATION.with_name("rules_judge_v7_probes.jsonl")
V8_BLIND = CALIBRATION.with_name("rules_judge_v8_blind.jsonl")
SELF_CONTAINED = (LABELLED, AUDIT, REALISTIC, ADVERSARIAL, REDTEAM_REALISTIC, REDTEAM_ADVERSARIAL, REDTEAM_PROBES,
                  V4_REALISTIC, V4_ADVERSARIAL, V4_CANDIDATES, V4_PROBES, V4_FOLLOWUP, V5_TAILS, V5_BLIND,
                  V5_BLIND_2, V6_BLIND, V6_BLIND_2, V7_BLIND, V7_PROBES, V8_BLIND)
#: how a "why" question opens, in the six languages of the sets (its answers are explanations)
WHY = ("why", "por qué", "porque", "warum", "wieso", "weshalb", "pourquoi", "なぜ", "どうして", "为什么", "為什麼")


@dataclass(frozen=True)
class Case:
    story_id: str
    turn: int
    response: str
    label: str
    note: str
    active_branch: int | None = None
    #: a self-contained case (the labelled replies set) carries its own question, answers and options
    question: str | None = None
    expected: tuple[str, ...] = ()
    options: tuple[tuple[str | None, str], ...] = ()
    rubric: tuple[str, tuple[str, ...]] | None = None  # (key inference, false inferences) of a "why" question
    #: the turn's judge-only closed answer set (``Turn.candidates``), never shown to the answerer
    candidates: tuple[str, ...] = ()
    #: the protocol the question is asked under ("conversation" or "independent"), where the row says
    protocol: str | None = None
    #: the turn's story, apart from its question, where the row gives one (else it is in the question or absent)
    story: str = ""
    #: earlier turns as the judge sees them ("Story: ...\nQuestion: ...\nReply: ..."), where the row gives them
    context: tuple[str, ...] = ()


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
        agree = sum(o.case.label != "unclear" and o.correct == (o.case.label == "correct") for o in decided)
        return agree / len(decided) if decided else None

    @property
    def false_positives(self) -> list[Outcome]:
        return [o for o in self.decided if o.correct and o.case.label == "incorrect"]

    @property
    def false_negatives(self) -> list[Outcome]:
        return [o for o in self.decided if not o.correct and o.case.label == "correct"]

    @property
    def decided_unclear(self) -> list[Outcome]:
        """Decided verdicts on cases a careful person cannot decide: wrong whichever way they go."""
        return [o for o in self.decided if o.case.label == "unclear"]

    @property
    def wrong(self) -> list[Outcome]:
        return self.false_positives + self.false_negatives + self.decided_unclear


def load_cases(path: Path = CALIBRATION) -> list[Case]:
    return [Case(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load_labelled(path: Path = LABELLED) -> list[Case]:
    """The self-contained labelled replies, one case per row (``note`` is the row's kind)."""
    cases = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if line.strip():
            row = json.loads(line)
            rubric = row.get("rubric")
            cases.append(Case(story_id="labelled", turn=i, response=row["response"], label=row["label"],
                              note=row["kind"], active_branch=row.get("active_branch"), question=row["question"],
                              expected=tuple(row["expected"]),
                              options=tuple((label, text) for label, text in row.get("options", [])),
                              rubric=(rubric["key_inference"], tuple(rubric.get("false_inferences", [])))
                              if rubric else None, candidates=tuple(row.get("candidates", [])),
                              protocol=row.get("protocol"), story=row.get("story", ""),
                              context=tuple(row.get("context", ()))))
    return cases


def _rubric(case: Case) -> Rubric | None:
    return Rubric(key_inference=case.rubric[0], false_inferences=list(case.rubric[1])) if case.rubric else None


def _turn(case: Case, dataset: Dataset) -> Turn:
    if case.question is not None:
        return Turn(story=case.story, question=case.question, answers=list(case.expected), rubric=_rubric(case),
                    candidates=list(case.candidates))
    return dataset.get(case.story_id).turns[case.turn]


def request_for(case: Case, dataset: Dataset) -> JudgeRequest:
    """The judge's view of a case: earlier turns answered as expected (on the case's branch)."""
    if case.question is not None:
        options = case.options or tuple((None, candidate) for candidate in case.candidates)
        return JudgeRequest(story_id=case.story_id, task="labelled", turn=case.turn, context=case.context,
                            story=case.story,
                            question=case.question, expected=case.expected, response=case.response,
                            options=options, options_shown=bool(case.options) or not case.candidates,
                            rubric=case.rubric)
    storyturn = dataset.get(case.story_id)
    context = []
    for earlier in storyturn.turns[: case.turn]:
        answers = earlier.answers
        reply = answers[case.active_branch] if case.active_branch is not None and len(answers) > 1 else answers[0]
        context.append(f"Story: {earlier.story}\nQuestion: {earlier.question}\nReply: {reply}")
    turn = storyturn.turns[case.turn]
    rubric = (turn.rubric.key_inference, tuple(turn.rubric.false_inferences)) if turn.rubric else None
    return JudgeRequest(story_id=case.story_id, task=storyturn.task, turn=case.turn, context=tuple(context),
                        story=turn.story, question=turn.question, expected=tuple(turn.answers),
                        response=case.response, options=tuple((o.label, o.text) for o in turn.options),
                        rubric=rubric)


async def measure(judge: Judge, cases: list[Case], dataset: Dataset, *, concurrency: int = 8) -> Figures:
    """Judge every case (``concurrency`` at a time) and score it under the story's branch rules."""
    limit = asyncio.Semaphore(concurrency)

    async def one(case: Case) -> Outcome:
        async with limit:
            verdict = await judge.judge(request_for(case, dataset))
        score = apply_branch_rules(_turn(case, dataset), verdict, case.active_branch)
        return Outcome(case, score.correct, verdict.judge or judge.name, score.reason)

    return Figures(list(await asyncio.gather(*(one(c) for c in cases))))


async def measure_through_eval(judge_spec: str, cases: list[Case], db: Path) -> Figures:
    """Score self-contained cases through ``commet.evaluate``: one StoryTurn per case (its question, options and
    answers), a replay model that gives the case's reply, the judge run by the engine. A case on an active branch
    gets a first turn, the same question answered with that branch's answer, which fixes the branch."""
    from commet.engine import evaluate_async
    from commet.format.model import Option, StoryTurn
    from commet.store import Store

    storyturns, replies = [], {}
    for i, case in enumerate(cases):
        turn = Turn(story=case.story, question=case.question or "", answers=list(case.expected), rubric=_rubric(case),
                    options=[Option(label=label, text=text) for label, text in case.options],
                    candidates=list(case.candidates))
        turns = [turn] if case.active_branch is None else [turn.model_copy(), turn]
        storyturns.append(StoryTurn(id=f"case-{i}", task="false_belief_location", category="Belief",
                                    source="calibration", turns=turns,
                                    meta={"protocol": case.protocol} if case.protocol else {}))
        given = [] if case.active_branch is None else [case.expected[case.active_branch]]
        replies[f"case-{i}"] = [*given, case.response]
    replay = db.with_suffix(".replies.json")
    replay.write_text(json.dumps(replies), encoding="utf-8")
    summary = await evaluate_async(f"replay:{replay}", Dataset(storyturns=storyturns), judge=judge_spec, db=db)
    with Store(db) as store:
        rows = {(row.story_id, row.turn): row for row in store.turn_rows(summary.run.id)}
    outcomes = []
    for i, case in enumerate(cases):
        row = rows[(f"case-{i}", 0 if case.active_branch is None else 1)]
        outcomes.append(Outcome(case, row.correct, row.judge or judge_spec, row.rationale or ""))
    return Figures(outcomes)


def is_why(case: Case) -> bool:
    """Whether the case's question asks why (its answer is an explanation)."""
    question = (case.question or "").casefold().lstrip("¿¡ ")
    return question.startswith(WHY)


def by_kind(figures: Figures) -> str:
    """The decided share and the wrong verdicts per kind of reply, and the share of decided right answers to
    questions that are not "why" questions."""
    kinds: dict[str, list[Outcome]] = {}
    for outcome in figures.outcomes:
        kinds.setdefault(outcome.case.note, []).append(outcome)
    wrong = {id(o) for o in figures.wrong}
    lines = [f"  {'kind':<22} {'replies':>7} {'decided':>8} {'share':>6} {'wrong':>5}"]
    for kind, outcomes in sorted(kinds.items()):
        decided = sum(o.correct is not None for o in outcomes)
        lines.append(f"  {kind:<22} {len(outcomes):>7} {decided:>8} {100 * decided / len(outcomes):>5.0f}% "
                     f"{sum(id(o) in wrong for o in outcomes):>5}")
    right = [o for o in figures.outcomes if o.case.label == "correct" and not is_why(o.case)]
    decided = sum(o.correct is not None for o in right)
    if right:
        lines.append(f"  right answers to questions other than 'why': {decided} of {len(right)} decided "
                     f"({100 * decided / len(right):.1f}%)")
    return "\n".join(lines)


@dataclass(frozen=True)
class Speed:
    """How fast the rules judge decides: every reply of the sets once, timed one by one."""

    replies: int
    seconds: float
    longest_chars: int  # the longest reply of the sets
    longest_ms: float  # the time it took
    slowest_ms: float  # the slowest reply, whichever it is
    limit_ms: float  # a reply of MAX_REPLY_CHARS characters (the most the judge reads), made of the sets' replies

    def line(self) -> str:
        return (f"rules judge speed: {self.replies} replies in {self.seconds:.2f} s "
                f"({self.replies / self.seconds:,.0f} replies per second); the longest reply ({self.longest_chars:,} "
                f"characters) took {self.longest_ms:.1f} ms, the slowest {self.slowest_ms:.1f} ms, a reply of "
                f"{MAX_REPLY_CHARS:,} characters {self.limit_ms:.1f} ms")


def rules_speed(sets: dict[str, list[Case]], dataset: Dataset, *, repeats: int = 3) -> Speed:
    """Time :func:`commet.judges.rules.decide` on every reply of the sets on this thread: the rate from one pass
    over them all; each reply's own time as the best of ``repeats`` (a shared machine's pauses are not the
    judge's)."""
    requests = [request_for(case, dataset) for cases in sets.values() for case in cases]
    decide(requests[0])  # the word lists are read once per process: not part of any reply's time
    start = time.perf_counter()
    for request in requests:
        decide(request)
    total = time.perf_counter() - start

    def best(request: JudgeRequest) -> float:
        times = []
        for _ in range(repeats):
            began = time.perf_counter()
            decide(request)
            times.append(time.perf_counter() - began)
        return min(times)

    times = [best(request) for request in requests]
    longest = max(range(len(requests)), key=lambda i: len(requests[i].response))
    filler = "\n".join(r.response for r in requests)[:MAX_REPLY_CHARS]
    limit = best(JudgeRequest(**{**requests[longest].__dict__, "response": filler}))
    return Speed(len(requests), total, len(requests[longest].response), 1000 * times[longest],
                 1000 * max(times), 1000 * limit)


def summary(name: str, figures: Figures) -> str:
    accuracy = "-" if figures.accuracy is None else f"{100 * figures.accuracy:.1f}%"
    decided_by: dict[str, int] = {}
    for outcome in figures.outcomes:
        decided_by[outcome.judge] = decided_by.get(outcome.judge, 0) + 1
    undecided = len(figures.outcomes) - len(figures.decided)
    return (f"{name}: {len(figures.outcomes)} cases: wrong {len(figures.wrong)}, decided {len(figures.decided)}, "
            f"undecided {undecided} (decided share {100 * figures.coverage:.1f}%), precision {accuracy}, "
            f"false positives {len(figures.false_positives)}, false negatives {len(figures.false_negatives)}, "
            f"decided where unclear {len(figures.decided_unclear)}; "
            f"decided by {decided_by}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judge", default="rules", help="judge spec (default: rules)")
    parser.add_argument("--cases", type=Path, default=None,
                        help="one sample-based case file (default: every labelled set)")
    parser.add_argument("--labelled", type=Path, action="append", default=None,
                        help="a self-contained labelled set (question, expected, options, response, label, kind) "
                             "to measure instead of the bundled ones (repeatable)")
    parser.add_argument("--through-eval", action="store_true",
                        help="score the self-contained sets through commet.evaluate with a replay model")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--show-errors", action="store_true", help="list every case the judge got wrong")
    args = parser.parse_args()
    judge = create_judge(args.judge)
    if args.cases:
        sets = {args.cases.name: load_cases(args.cases)}
    elif args.labelled:
        sets = {path.name: load_labelled(path) for path in args.labelled}
    else:
        sets = {CALIBRATION.name: load_cases(CALIBRATION)} | {path.name: load_labelled(path) for path in SELF_CONTAINED}
    sample = load_dataset("sample")
    try:
        with tempfile.TemporaryDirectory(prefix="commet-calibration-") as folder:
            for set_name, cases in sets.items():
                self_contained = all(case.question is not None for case in cases)
                if args.through_eval and self_contained:
                    figures = await measure_through_eval(args.judge, cases, Path(folder) / f"{set_name}.sqlite")
                    name = f"{judge.name} through commet.evaluate"
                else:
                    figures = await measure(judge, cases, sample, concurrency=args.concurrency)
                    name = judge.name
                print(f"[{set_name}] " + summary(name, figures))
                if self_contained and any(case.label == "correct" for case in cases):
                    print(by_kind(figures))
                if args.show_errors:
                    for outcome in figures.wrong:
                        case = outcome.case
                        where = case.question or f"{case.story_id} turn {case.turn}"
                        print(f"  {where} [{case.label}, {case.note}] {case.response!r}: judged "
                              f"{'correct' if outcome.correct else 'incorrect'} by {outcome.judge} "
                              f"({outcome.rationale})")
        print(rules_speed(sets, sample).line())
    finally:
        await judge.aclose()


if __name__ == "__main__":
    asyncio.run(main())
