"""FANToM (Kim et al., 2023): ``fantom_v1.json``, information asymmetry in conversations.

The file is a JSON list of conversation sets; each has ``set_id``, ``short_context`` and
``full_context`` (the conversation), a ``factQA``, ``beliefQAs`` (``question``,
``correct_answer``, ``wrong_answer``, ``tom_type``, ``question_type``), an
``answerabilityQA_list`` and ``infoAccessibilityQA_list`` (lists of characters who know, and
who do not), and ``answerabilityQAs_binary`` / ``infoAccessibilityQAs_binary`` (yes/no). The
questions are asked as the authors' ``eval_fantom.py`` asks them: the belief questions in
their multiple-choice form (the free-form form needs an embedding model to score), the list
and binary questions with their ``Target:`` / ``Information:`` lines. ``no:long`` answers count
as ``no``. The list questions carry a rubric naming who must and who must not be listed.
"""

from __future__ import annotations

import random
from pathlib import Path

from commet.format.model import Option, Rubric
from commet.sources.importers import base

TASK = base.declared_task("fantom", "FANToM", "Belief", ("belief", "knowledge"),
                          "who knows what in a multi-party conversation that some characters missed parts of")


def variant(source: Path, options: base.ImportOptions) -> str:
    """The context: the short and the full conversations are two datasets (``fantom-short-...``)."""
    return options.context


def read(source: Path, options: base.ImportOptions) -> list[base.SourceStory]:
    if options.context not in ("short", "full"):
        raise base.source_error(source, None, "context",
                                f"FANToM has 'short' and 'full' contexts, not {options.context!r}")
    document = base.read_json(source)
    if not isinstance(document, list):
        raise base.source_error(source, 1, None, "expected a JSON list of conversation sets")
    lines = base.key_lines(base.read_text(source), "set_id", len(document))
    stories: list[base.SourceStory] = []
    for index, record in enumerate(document):
        line = lines[index]
        if not isinstance(record, dict):
            raise base.source_error(source, line, f"[{index}]", "expected a conversation set object")
        set_id = str(record.get("set_id") or index)
        reader = _SetReader(source, line, set_id, record)
        context = reader.text(f"{options.context}_context")
        questions = reader.questions(options.context)
        stories.append(base.SourceStory(key=set_id, task=TASK, story=context, questions=questions, line=line,
                                        meta={"set_id": set_id, "context": options.context}))
    return stories


class _SetReader:
    """Reads one conversation set's questions, failing with the set's location."""

    def __init__(self, file: Path, line: int | None, set_id: str, record: dict[str, object]):
        self.file, self.line, self.set_id, self.record = file, line, set_id, record

    def fail(self, field: str, message: str) -> Exception:
        return base.source_error(self.file, self.line, field, message, story=self.set_id)

    def text(self, field: str, item: object = None) -> str:
        holder = self.record if item is None else item
        value = holder.get(field) if isinstance(holder, dict) else None
        if not isinstance(value, str) or not value.strip():
            raise self.fail(field, "missing or empty")
        return value.strip()

    def item(self, field: str) -> dict[str, object] | None:
        value = self.record.get(field)
        if value is not None and not isinstance(value, dict):
            raise self.fail(field, "expected an object")
        return value

    def items(self, field: str) -> list[dict[str, object]]:
        value = self.record.get(field) or []
        if not isinstance(value, list) or not all(isinstance(x, dict) for x in value):
            raise self.fail(field, "expected a list of question objects")
        return value

    def questions(self, context: str) -> list[base.SourceQuestion]:
        """The set's questions. With the short context, a yes/no question answered ``no:long`` is left out, as the
        authors' ``eval_fantom.py`` does: its "no" holds for the full conversation, which the short one is not."""
        out: list[base.SourceQuestion] = []
        fact = self.item("factQA")
        fact_q = fact_a = ""
        if fact is not None:
            fact_q, fact_a = self.text("question", fact), self.text("correct_answer", fact)
            out.append(base.SourceQuestion(text=fact_q, answer=fact_a, line=self.line,
                                           meta={"question_type": "fact", "order": 0}))
        for k, belief in enumerate(self.items("beliefQAs")):
            out.append(self.belief_choice(belief, k))
        for field, prefix in (("answerabilityQA_list", f"Target: {fact_q}"),
                              ("infoAccessibilityQA_list", f"Information: {fact_q} {fact_a}")):
            listed = self.item(field)
            if listed is not None:
                out.append(self.list_question(listed, field, prefix))
        for field, prefix in (("answerabilityQAs_binary", f"Target: {fact_q}"),
                              ("infoAccessibilityQAs_binary", f"Information: {fact_q} {fact_a}")):
            for binary in self.items(field):
                if context == "short" and str(binary.get("correct_answer", "")).strip().lower() == "no:long":
                    continue
                out.append(self.binary(binary, field, prefix))
        if not out:
            raise self.fail("beliefQAs", "a conversation set without questions")
        return out

    def belief_choice(self, belief: dict[str, object], k: int) -> base.SourceQuestion:
        right, wrong = self.text("correct_answer", belief), self.text("wrong_answer", belief)
        pair = [right, wrong]
        random.Random(f"{self.set_id}-{k}").shuffle(pair)  # the authors shuffle; fixed here per item
        options = [Option(label="a", text=pair[0]), Option(label="b", text=pair[1])]
        listed = "\n".join(f"({o.label}) {o.text}" for o in options)
        kind = str(belief.get("question_type") or "tom:belief")
        tom_type = str(belief.get("tom_type") or "")
        return base.with_answer_label(base.SourceQuestion(
            text=f"{self.text('question', belief)}\n{listed}\n\nChoose an answer from above:", answer=right,
            line=self.line, options=options,
            meta={"question_type": "belief:multiple-choice", "fantom_type": kind + ":multiple-choice",
                  "tom_type": tom_type, "order": 2 if tom_type.startswith("second") else 1,
                  "missed_info_accessibility": belief.get("missed_info_accessibility")}))

    def list_question(self, listed: dict[str, object], field: str, prefix: str) -> base.SourceQuestion:
        know, not_know = listed.get("correct_answer"), listed.get("wrong_answer") or []
        if not isinstance(know, list) or not know or not isinstance(not_know, list):
            raise self.fail(f"{field}.correct_answer", "expected lists of character names")
        rubric = Rubric(key_inference=f"names every one of: {', '.join(map(str, know))}",
                        false_inferences=[f"names {name}" for name in not_know])
        kind = "answerability:list" if field.startswith("answerability") else "info_accessibility:list"
        return base.SourceQuestion(text=f"{prefix}\nQuestion: {self.text('question', listed)}",
                                   answer=", ".join(map(str, know)), line=self.line, rubric=rubric,
                                   meta={"question_type": kind, "order": 1, "unaware": [str(n) for n in not_know]})

    def binary(self, binary: dict[str, object], field: str, prefix: str) -> base.SourceQuestion:
        answer = self.text("correct_answer", binary).split(":")[0].lower()
        if answer not in ("yes", "no"):
            raise self.fail(f"{field}.correct_answer", f"expected yes or no, not {answer!r}")
        kind = "answerability:binary" if field.startswith("answerability") else "info_accessibility:binary"
        return base.SourceQuestion(text=f"{prefix}\nQuestion: {self.text('question', binary)} Answer yes or no.",
                                   answer=answer, line=self.line, options=[Option(text="yes"), Option(text="no")],
                                   meta={"question_type": kind, "order": 1})
