"""Automatic checks for the defects the paper found in LLM-generated StoryTurns (section 3.2.2).

* ``feedback_same_turn`` -- feedback placed in the same turn as the answer it reacts to
  (feedback on the first turn, feedback keyed by the turn's own answers, or "If right" /
  "That's right" text inside story, question or answer fields);
* ``reveals_answer`` -- story text shown before a question that states its answer with the
  question's own predicate (a belief stated as the premise of a false-belief story, a desire
  stated before "which will she pick?", and feedback are not leaks), or an explanation that
  is restated almost word for word;
* ``other_task`` -- an item that belongs to another task (declared task differs, the
  branch structure of an answer-keyed task is missing, or the cues of the task's minimal-pair
  twin outweigh its own, e.g. a "non-sarcasm" story whose speaker is unhappy).

These are heuristics that point a reviewer at likely problems; they do not replace review.
Structural certainties are errors, textual cues are warnings.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Literal

from commet.format.model import StoryTurn

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class LintFinding:
    code: str
    turn: int | None
    field: str | None
    message: str
    severity: Severity = "warning"

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    def __str__(self) -> str:
        turn = "-" if self.turn is None else self.turn
        return f"turn={turn} field={self.field or '-'}: {self.severity}: [{self.code}] {self.message}"


_CONDITIONAL = re.compile(r"(?i)\bif (?:you |the child |they )?(?:said|answered|picked|chose|guessed)\b"
                          r"|\bif (?:right|wrong|correct|incorrect)\b|\bif the (?:previous )?answer (?:is|was)\b")
_PRAISE = re.compile(r"(?i)\b(?:that'?s|that is|you'?re|you are) (?:right|correct|not right|wrong)\b"
                     r"|\bwell done\b|\bgood job\b|\bgreat guess\b|\bcorrect!")
_PREDICATES: dict[str, re.Pattern[str]] = {
    "belief": re.compile(r"(?i)\b(?:thinks?|thought|believes?|believed|is sure|was sure)\b"),
    "know": re.compile(r"(?i)\b(?:knows?|knew)\b"),
    "want": re.compile(r"(?i)\b(?:wants?|wanted|wishes|wished)\b"),
    "feel": re.compile(r"(?i)\b(?:feels?|felt)\b"),
    "look": re.compile(r"(?i)\b(?:look(?:s|ed|ing)?|search(?:es|ed)?)\b"),
    "choose": re.compile(r"(?i)\b(?:picks?|picked|chooses?|chose|takes?|took|decides?|decided)\b"),
    "like": re.compile(r"(?i)\b(?:likes?|liked|prefers?|preferred|loves?|loved)\b"),
    "mean": re.compile(r"(?i)\b(?:means?|meant)\b"),
    "future": re.compile(r"(?i)\b(?:will|is going to|are going to|'ll)\b"),
}
_EXPLAINS = re.compile(r"(?i)\b(?:because|that is why|that's why|so that|the reason)\b")
_STOP = frozenset({
    "a", "an", "the", "and", "or", "but", "to", "of", "in", "on", "at", "for", "with", "is", "was", "are", "were",
    "be", "been", "it", "its", "this", "that", "he", "she", "they", "him", "her", "them", "his", "hers", "their",
    "you", "we", "my", "your", "our", "so", "because", "not", "do", "does", "did", "has", "have", "had", "as", "by",
    "from",
})
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9' ]+", " ", text.lower()).split())


def _has_phrase(haystack: str, needle: str) -> bool:
    return bool(needle) and re.search(rf"(?<![a-z0-9']){re.escape(needle)}(?![a-z0-9'])", haystack) is not None


def _content_words(text: str) -> set[str]:
    return {w for w in _norm(text).split() if w not in _STOP and len(w) > 2}


def _feedback_texts(storyturn: StoryTurn, k: int) -> list[str]:
    fb = storyturn.turns[k].feedback
    if fb is None:
        return []
    return [t for t in (fb.always, fb.right, fb.wrong, *(e.text for e in fb.by_answer)) if t]


def lint_feedback_placement(storyturn: StoryTurn) -> list[LintFinding]:
    findings: list[LintFinding] = []
    for k, turn in enumerate(storyturn.turns):
        fb = turn.feedback
        if k == 0 and fb is not None and not fb.is_empty():
            findings.append(LintFinding("feedback_same_turn", 0, "feedback", "feedback on the first turn: feedback "
                                        "reacts to the previous answer, so it belongs to the next turn", "error"))
        if fb is not None and fb.by_answer:
            own = {_norm(a) for a in turn.answers}
            previous = {_norm(a) for a in storyturn.turns[k - 1].answers} if k > 0 else set()
            keys = {_norm(e.answer) for e in fb.by_answer}
            if keys <= own and not keys <= previous:
                findings.append(LintFinding("feedback_same_turn", k, "feedback", "feedback is keyed by this turn's "
                                            "own answers: move it to the next turn", "error"))
        for field, text in (("story", turn.story), ("question", turn.question), ("answer", " ".join(turn.answers))):
            if _CONDITIONAL.search(text):
                findings.append(LintFinding("feedback_same_turn", k, field, "conditional feedback written into the "
                                            f"{field} text; it belongs in the feedback field of the next turn",
                                            "error"))
            elif _PRAISE.search(text):
                findings.append(LintFinding("feedback_same_turn", k, field, f"the {field} text reacts to an answer "
                                            "(\"that's right\", \"well done\"); it is shown whatever was answered"))
    return findings


def _predicates(text: str) -> set[str]:
    """The mental-state or action predicates a text uses (``belief``, ``look``, ``choose`` ...).

    The future auxiliary counts only when no other predicate is there ("Where will Ana look?" asks
    about looking, "Which boat will Tom pass?" about what he will do)."""
    found = {group for group, pattern in _PREDICATES.items() if pattern.search(text)}
    return found - {"future"} if len(found) > 1 else found


def lint_reveals(storyturn: StoryTurn) -> list[LintFinding]:
    """Story text that states a question's answer before the question is asked (a leak).

    A leak is the answer said with the question's own predicate ("Ana will look in the basket"
    before "Where will Ana look?"), in this turn's story or any earlier one, or an explanation
    the story already gives almost word for word as an explanation ("because ...", or with the
    question's predicate). Not leaks: a premise stated with another
    predicate (a false-belief story says what Ana *thinks* and asks where she will *look*; a
    desire story says what Sam *likes* and asks what he will *pick*), text that offers the
    options, and feedback, which reacts to the previous answer by design."""
    findings: list[LintFinding] = []
    earlier_sentences: list[tuple[int, str]] = []
    for k, turn in enumerate(storyturn.turns):
        earlier_sentences.extend((k, s) for s in _SENTENCE.split(turn.story) if s.strip())
        asked = _predicates(turn.question)
        for answer in turn.answers:
            norm = _norm(answer)
            words = _content_words(answer)
            if len(words) >= 4:
                for _, sentence in earlier_sentences:
                    overlap = len(words & _content_words(sentence)) / len(words)
                    explains = _EXPLAINS.search(sentence) or asked & _predicates(sentence)
                    if overlap >= 0.75 and explains:
                        findings.append(LintFinding("reveals_answer", k, "story", f"the story already says the "
                                                    f"explanation {answer!r} ({sentence.strip()[:80]!r})"))
                        break
                continue
            if not asked:
                continue  # without the question's predicate a stated fact cannot be told from a premise
            for at, sentence in earlier_sentences:
                flat = _norm(sentence)
                offers_options = " or " in f" {flat} " or sum(_has_phrase(flat, _norm(a)) for a in turn.answers) > 1
                if _has_phrase(flat, norm) and asked & _predicates(sentence) and not offers_options:
                    where = "this turn's story" if at == k else f"the story of turn {at + 1}"
                    findings.append(LintFinding("reveals_answer", k, "story", f"{where} states the answer "
                                                f"{answer!r} before the question asks it: {sentence.strip()[:100]!r}"))
                    break
    return findings


#: Cues of each task in a minimal pair or near pair, matched against the story's text and answers.
_TASK_CUES: dict[str, re.Pattern[str]] = {
    "sarcasm": re.compile(r"(?i)sarcas|roll(?:s|ed)? (?:his|her|their) eyes|flat voice|did(?:n'?t| not) want|"
                          r"hates?\b|dislikes?|\byuck\b|disappoint|frown|\bsad\b|\bupset\b|not (?:really )?mean|"
                          r"\bgroan|\bsigh"),
    "non_sarcasm": re.compile(r"(?i)exactly what|just what|asked for|\bloves?\b|smil|\bhappy\b|\bglad\b|delight|"
                              r"really (?:likes|liked|means|meant)|\bexcited"),
    "moral_true_belief": re.compile(r"(?i)on purpose|knowingly|\bknew\b|meant to|without asking|snatch|grabb|"
                                    r"wanted to (?:take|break|hurt|keep)"),
    "moral_false_belief": re.compile(r"(?i)did(?:n'?t| not) know|by accident|accidental|by mistake|mistook|"
                                     r"thought (?:it|that|this) was|did(?:n'?t| not) mean"),
    "common_desire": re.compile(r"(?i)\bsame\b|\btoo\b|also likes|just like you"),
    "diverse_desire": re.compile(r"(?i)\bother (?:one|snack|toy|thing)|different|not the same"),
    "false_belief_location": re.compile(r"(?i)while .{0,40}(?:away|outside|gone|not looking|asleep)|"
                                        r"did(?:n'?t| not) see|without .{0,20} (?:seeing|knowing)"),
    "true_belief_action": re.compile(r"(?i)announc|told everyone|tells everyone|everyone (?:saw|heard|knows)|"
                                     r"watch(?:es|ed|ing) .{0,30}mov"),
}
_TWINS = {"sarcasm": "non_sarcasm", "non_sarcasm": "sarcasm", "moral_true_belief": "moral_false_belief",
          "moral_false_belief": "moral_true_belief", "common_desire": "diverse_desire",
          "diverse_desire": "common_desire", "false_belief_location": "true_belief_action",
          "true_belief_action": "false_belief_location"}
_ANSWER_KEYED = ("common_desire", "diverse_desire", "diverse_belief")


def _desire_order(storyturn: StoryTurn) -> str | None:
    """``common_desire`` when later branch answers repeat the first order, ``diverse_desire`` when reversed."""
    branches = [[_norm(a) for a in t.answers] for t in storyturn.turns if t.is_branch_point]
    if len(branches) < 2 or len(branches[0]) != 2 or set(branches[0]) != set(branches[1]):
        return None
    return "common_desire" if branches[0] == branches[1] else "diverse_desire"


def lint_task(storyturn: StoryTurn, declared_task: str | None = None) -> list[LintFinding]:
    findings: list[LintFinding] = []
    task = storyturn.task
    if declared_task and declared_task != task:
        findings.append(LintFinding("other_task", None, "task", f"the generator labelled this item "
                                    f"{declared_task!r}, not {task!r}", "error"))
    if task in _ANSWER_KEYED and not any(t.is_branch_point for t in storyturn.turns):
        findings.append(LintFinding("other_task", None, "answer", f"{task} needs an answer-keyed branch point "
                                    "(the participant's own pick), but no turn has branch answers", "error"))
    if task in ("common_desire", "diverse_desire"):
        order = _desire_order(storyturn)
        if order is not None and order != task:
            findings.append(LintFinding("other_task", None, "answer", f"the branch answers follow the pattern of "
                                        f"{order} (the character likes the "
                                        f"{'same' if order == 'common_desire' else 'other'} thing)", "error"))
            return findings
    twin = _TWINS.get(task)
    if twin is not None:
        text = " ".join(f"{t.story} {' '.join(_feedback_texts(storyturn, k))} {' '.join(t.answers)}"
                        for k, t in enumerate(storyturn.turns))
        own = len(_TASK_CUES[task].findall(text))
        other = len(_TASK_CUES[twin].findall(text))
        if other >= 2 and other > own:
            findings.append(LintFinding("other_task", None, "task", f"reads like {twin} rather than {task} "
                                        f"({other} cues of {twin}, {own} of {task})"))
    return findings


def lint_storyturn(storyturn: StoryTurn, declared_task: str | None = None) -> list[LintFinding]:
    """Every finding for one generated StoryTurn."""
    return [*lint_feedback_placement(storyturn), *lint_reveals(storyturn), *lint_task(storyturn, declared_task)]
