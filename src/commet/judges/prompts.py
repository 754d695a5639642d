"""The LLM judge's prompt, versioned, and the strict parser of its JSON verdict.

The version is part of every LLM judge's name (``llm:openai:gpt-4o@judge-v2``), so it is
stored with every judgment and is part of the judgment cache key: changing the prompt's
wording means bumping :data:`PROMPT_VERSION`, which makes old cached verdicts unused.

The grading rule follows the paper (Appendix C) and the spec (section 6): an open "why"
answer is correct when it contains the expected inference and avoids the false one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from commet.errors import CommetError
from commet.judges.base import JudgeRequest

PROMPT_VERSION = "judge-v2"

SYSTEM_PROMPT = """\
You grade answers for a Theory of Mind benchmark. A model read a short story told over several \
turns and answered one question per turn. You decide whether ONE answer is correct by comparing \
it with the expected answer written by the benchmark's authors.

Rules:
1. Judge meaning, not wording: paraphrases, synonyms and extra polite words are fine.
2. A short answer (a choice, a place, a person, a feeling, yes or no) is correct when it commits \
to the expected answer. An answer that hedges, names several options, or contradicts itself is incorrect. \
When options are listed, an answer may name one by its letter or its text.
3. A "why" answer, or the explanation after a yes/no, is correct when it contains the expected \
inference (the key reason: who knows, saw, heard, believes, wants or intends what) and avoids the \
false inference (for example, crediting a character with knowledge they cannot have). A reason that \
is true but misses the key point is incorrect. Leaving out minor details is fine.
4. When a grading rubric is given, follow it: the answer must contain the key inference, and it is \
incorrect if it states any of the listed false inferences.
5. When a yes/no answer is expected with a reason, both the yes/no and the reason must be right.
6. When several expected answers are listed, this is a branch point: any ONE of them is correct, \
and you say which one the answer gives. An answer that gives more than one of them is incorrect.
7. Feedback is what the answerer was told about its previous answer at the start of the turn; it is \
not part of the question. Pictures, when attached, are the ones the answerer saw.
8. Grade against the expected answer, not against your own reading of the story.

Worked examples:
- Question: "Why is Leo surprised?" Expected: "Because he did not expect the robot." Rubric: key \
inference "Leo did not expect a robot"; false inference "Leo knew his mother had not heard him". \
Answer: "He thought he would get a ball, not a robot." -> {"verdict": "correct", "matched_answer": 1, \
"reason": "It says Leo expected something else, so the robot was unexpected."}
- Same question. Answer: "Because he knew his mom did not hear him change his wish." -> \
{"verdict": "incorrect", "matched_answer": null, "reason": "It states the listed false inference."}
- Question: "Where will Sally look for her ball, in the basket or in the box?" Expected: "In the \
basket". Answer: "In the basket, or maybe the box." -> {"verdict": "incorrect", "matched_answer": null, \
"reason": "The answer hedges between two options."}

Reply with ONLY a JSON object, no other text:
{"verdict": "correct" or "incorrect", "matched_answer": the number of the expected answer the \
answer gives (1, 2, ...) or null, "reason": "one sentence"}"""

RETRY_PROMPT = "That reply was not a valid verdict ({error}). Reply again with ONLY the JSON object."

_FENCE = "```"
#: ``json.loads`` of a reply, without its keyword checks at every verdict
_decode = json.JSONDecoder().decode


def _unfenced(body: str) -> str:
    """A stripped reply without a markdown code fence around it (```json ... ```), read without a pattern: one
    with a lazy group after optional blanks took seconds on a reply of a fence and thousands of line breaks."""
    if len(body) >= 2 * len(_FENCE) and body.startswith(_FENCE) and body.endswith(_FENCE):
        inner = body[len(_FENCE):-len(_FENCE)]
        return inner.removeprefix("json").strip()
    return body


def user_prompt(request: JudgeRequest) -> str:
    """The user message: the story so far, this turn's feedback, story and question, expected answers, the answer."""
    earlier = "\n\n".join(request.context) if request.context else "(none: this is the first turn)"
    expected = "\n".join([f"{i}. {answer}" for i, answer in enumerate(request.expected, start=1)])
    several = ("\nSeveral expected answers: any one of them is correct; say which one the answer gives."
               if len(request.expected) > 1 else "")
    sections = [f"Earlier turns of the story (with the model's answers):\n{earlier}"]
    if request.feedback.strip():
        sections.append(f"Feedback shown at the start of this turn (about the previous answer):\n"
                        f"{request.feedback.strip()}")
    sections.append(f"This turn's story text:\n{request.story.strip() or '(none)'}")
    sections.append(f"Question:\n{request.question.strip()}")
    if request.options:
        heading = ("Options shown:" if request.options_shown else
                   "The expected answer is one of these (not shown to the answerer; another one is wrong):")
        sections.append(heading + "\n" + "\n".join(f"{label}. {text}" if label else f"- {text}"
                                                     for label, text in request.options))
    sections.append(f"Expected answer(s):\n{expected}{several}")
    if request.rubric is not None:
        key, false = request.rubric
        rubric = f"Key inference the answer must contain: {key}"
        if false:
            rubric += "\nFalse inferences that make the answer incorrect:\n" + "\n".join(f"- {f}" for f in false)
        sections.append(f"Grading rubric:\n{rubric}")
    if request.images:
        sections.append(f"Pictures the answerer saw: {len(request.images)} attached, in order.")
    sections.append(f"Answer to grade:\n<<<\n{request.response.strip()}\n>>>")
    return "\n\n".join(sections)


class VerdictParseError(CommetError, ValueError):
    """The judge's reply is not a valid verdict object."""


@dataclass(frozen=True)
class ParsedVerdict:
    correct: bool
    branch: int | None  # 0-based index into the expected answers
    reason: str


def parse_verdict(text: str, n_expected: int) -> ParsedVerdict:
    """Parse a reply strictly: one JSON object (optionally in a ```json fence) with the three fields."""
    body = _unfenced(text.strip())
    try:
        data = _decode(body)
    except json.JSONDecodeError as exc:
        raise VerdictParseError(f"not JSON: {exc.msg} at character {exc.pos}") from None
    except (ValueError, RecursionError):  # a number of 5,000 digits, brackets nested 100,000 deep
        raise VerdictParseError("not a JSON object this judge reads (a number too long or nesting too deep)") from None
    if not isinstance(data, dict):
        raise VerdictParseError("not a JSON object")
    missing = [key for key in ("verdict", "matched_answer", "reason") if key not in data]
    if missing:
        raise VerdictParseError(f"missing field(s) {', '.join(missing)}")
    verdict, matched, reason = data["verdict"], data["matched_answer"], data["reason"]
    if verdict not in ("correct", "incorrect"):
        raise VerdictParseError('"verdict" must be "correct" or "incorrect"')
    if not isinstance(reason, str) or not reason.strip():
        raise VerdictParseError('"reason" must be a non-empty string')
    if matched is not None and (isinstance(matched, bool) or not isinstance(matched, int)
                                or not 1 <= matched <= n_expected):
        raise VerdictParseError(f'"matched_answer" must be null or a number from 1 to {n_expected}')
    if verdict == "incorrect":
        return ParsedVerdict(False, None, reason.strip())
    if matched is None:
        if n_expected > 1:
            raise VerdictParseError('a correct answer at a branch point needs "matched_answer"')
        matched = 1
    return ParsedVerdict(True, matched - 1, reason.strip())
